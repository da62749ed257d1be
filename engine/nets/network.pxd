# Blair's Internal Symmetry Network (ISN) as callers use it: the forward pass of
# network_forward.pxd (its layout, parameters and contracts) and its training, engine/nets/network.pyx.

from engine.nets.network_forward cimport Activations, NetworkForward


cdef class Network(NetworkForward):
    # gradient scratch (numpy arrays in _tables)
    cdef double *grad_hidden_table
    cdef double *grad_shortcut_table
    cdef double *grad_output_weights
    cdef double *grad_hidden_bias
    cdef double *grad_output_bias
    cdef double *grad_hidden                 # [MAX_LOCS][num_hidden]

    cdef double backward(self, Activations act, const double *targets,
                         const unsigned char *mask, double *grad) noexcept nogil
    # act holds a forward pass; adds d(loss)/d(params) into grad and returns the loss.
