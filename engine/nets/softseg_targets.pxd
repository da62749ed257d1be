# The soft-segmentation network's training targets (engine/nets/softseg_targets.pyx): what the
# network's training (softseg.pyx) cimports.

cdef void swap_outputs(const double *values, double *swapped, int num_locs) noexcept nogil
# swap_frame() of outputs or targets (num_locs x 21, softseg_layout.pxd's columns) into swapped
