# NeuroGo 3's soft-segmentation network (Enzenberger 2003, section 2) as callers use it: the
# forward pass of softseg_forward.pxd (its layout, parameters and contracts) and its training,
# engine/nets/softseg.pyx.

cimport cython

from engine.nets.softseg_forward cimport SoftSegForward
from engine.rules.types cimport MAX_LOCS


@cython.final                     # no subclasses: its methods are called directly
cdef class SoftSegNetwork(SoftSegForward):
    # backward scratch
    cdef double *d_level2                    # [MAX_LOCS][num_level2]
    cdef double *d_h1                        # [MAX_LOCS][hidden1]
    cdef double d_eval[MAX_LOCS]

    cdef double backward(self, const double *targets, const unsigned char *mask, double *dest,
                         double scale) noexcept nogil
    # after a forward pass: dest += scale * d(loss)/d(params) (dest may be the parameters
    # themselves: every layer's deltas are taken before its weights change); returns the loss
