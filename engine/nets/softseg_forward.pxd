# NeuroGo 3's soft-segmentation network (Enzenberger 2003, section 2): the C layout and the
# contracts of its forward pass, engine/nets/softseg_forward.pyx. The lattice, fields, point types
# and output columns are softseg_layout.pxd's; the global connectivity is the Pathfinder's
# (softseg_pathfinder.pxd); the training is SoftSegNetwork's (softseg.pxd), a subclass.
#
# Layers per point: input (num_inputs, multi-hot: active[p][0..num_active[p])), first hidden
# (hidden1), the "second level" (num_level2 = hidden2 + 2 + 18: the second hidden layer, the two
# simple-eye units (own, opponent colour), the 18 local-connection units: colour c (0 own, 1
# opponent) to field f at index hidden2 + 2 + 9c + f), and the evaluation unit (alive for Black).
# The second level takes receptive fields from the first hidden layer; the global connectivity
# (the connectivity pathfinder) comes from the local-connection units; the evaluation layer takes
# the second hidden and simple-eye units (num_selected = hidden2 + 2) of every point by
# connectivity-based weight selection.
#
# Free parameters (the flat float64 vector of get_params()/set_params(), in this order):
#   w1  [type p][type p'][field][num_inputs][hidden1]        input -> first hidden
#   b1  [type p][hidden1]
#   w2  [type p][type p'][field][hidden1][num_level2]        first hidden -> second level
#   b2  [type p][num_level2]
#   wv  [colour][type p][type p'][interval][num_selected]    connectivity-based weight selection
#   bv  [type p]
#
# Outputs (forward(), the trained units) per point: softseg_layout.pxd's 21 columns.
#
# Every cdef method is final: the subclass calls them, none overrides them, and so calls inside
# this module are direct (and inlined) as in a final class.

cimport cython

from engine.rules.board cimport Board
from engine.nets.features cimport BoardFeatures
from engine.nets.softseg_layout cimport NUM_FIELDS
from engine.nets.softseg_pathfinder cimport Pathfinder
from engine.rules.types cimport MAX_LOCS

cdef enum:
    SS_MAX_ACTIVE = 24            # active inputs per cell at most
    SS_MAX_HIDDEN1 = 64
    SS_MAX_LEVEL2 = 84            # hidden2 <= 64, + 20


cdef class SoftSegForward:
    cdef readonly str feature_set
    cdef readonly int num_inputs, hidden1, hidden2, num_level2, num_selected, num_intervals
    cdef readonly double cutoff
    cdef readonly int num_params, max_active
    cdef readonly long long params_version
    cdef readonly int w1_start, b1_start, w2_start, b2_start, wv_start, bv_start
    cdef public bint freeze_connectivity     # forward() keeps the previous connectivity (tests)
    cdef object _params                      # float64 (num_params,)
    cdef double *params
    # input mapping: per board feature, the cell kind it applies to (0 empty, 1 own stone,
    # 2 opponent stone), its slot per side to move, its first input within its kind
    cdef BoardFeatures board_features        # None for the raw input
    cdef int num_board_features
    cdef int feature_cell[SS_MAX_ACTIVE * 2]
    cdef int feature_slot[2][SS_MAX_ACTIVE * 2]
    cdef int feature_offset[SS_MAX_ACTIVE * 2]
    # the position (prepare() sets the size)
    cdef int size, stride, num_locs, num_cells
    cdef int offsets[NUM_FIELDS]
    cdef int cells[MAX_LOCS]
    cdef int cell_index[MAX_LOCS]            # loc -> index into cells, -1 off the board
    cdef int geometry_type[MAX_LOCS]         # the empty-point type of each on-board loc
    cdef int types[MAX_LOCS]
    cdef int active[MAX_LOCS][SS_MAX_ACTIVE]
    cdef int num_active[MAX_LOCS]
    cdef double *h1                          # [MAX_LOCS][hidden1]
    cdef double *level2                      # [MAX_LOCS][num_level2]
    cdef double evaluation[MAX_LOCS]
    cdef Pathfinder paths                    # the global connectivity: its reach slots
    cdef double slot_sum[2 * MAX_LOCS]       # per reach slot, its input to the evaluation unit
    # successors (forward_base / forward_successor / restore_base): the base position's inputs,
    # layers and evaluation inputs, and what a successor changed
    cdef int base_types[MAX_LOCS]
    cdef int base_active[MAX_LOCS][SS_MAX_ACTIVE]
    cdef int base_num_active[MAX_LOCS]
    cdef double *base_h1
    cdef double *base_level2
    cdef double base_slot_sum[2 * MAX_LOCS]
    cdef signed char slot_state[2 * MAX_LOCS]   # UNTOUCHED, REPAIRED or REDONE (softseg_forward.pyx)
    cdef double slot_delta[2 * MAX_LOCS]     # a repaired slot's change of its input
    cdef int changed_units[MAX_LOCS]         # the points whose type or selected units changed
    cdef int num_changed_units
    cdef unsigned int entry_stamp[MAX_LOCS]  # edit_stamp where a repair edited the point's entry
    cdef unsigned int edit_stamp
    cdef unsigned int mark_epoch
    cdef unsigned int h1_mark[MAX_LOCS]
    cdef unsigned int level2_mark[MAX_LOCS]
    cdef int changed_inputs[MAX_LOCS]
    cdef int num_changed_inputs
    cdef int dirty_h1[MAX_LOCS]
    cdef int num_dirty_h1
    cdef int dirty_level2[MAX_LOCS]
    cdef int num_dirty_level2

    @cython.final
    cdef int prepare(self, int size) except -1
    # sets the board size (lattice, cells, point geometry, buffers); a no-op for the same size
    @cython.final
    cdef int encode_base(self, Board board, int to_move, bint record) except -1
    # types[] and active[] of board with to_move as Black; record: ladder footprints for
    # successors (features.pxd)
    @cython.final
    cdef int _load_encoded(self, object encoded) except -1
    @cython.final
    cdef int _prepare_for_locs(self, int num_locs) except -1
    @cython.final
    cdef int load_cells(self, const int *encoded) except -1
    # types[] and active[] from one encoded position (num_locs rows of 1 + max_active; checked)
    @cython.final
    cdef void outputs_into(self, double *outputs, bint swap) noexcept nogil
    # the outputs into the on-board rows of outputs (num_locs x 21), swap: in the other frame
    @cython.final
    cdef object _encoded(self)
    @cython.final
    cdef object _outputs(self)
    @cython.final
    cdef void set_types(self, Board board, int to_move) noexcept nogil
    @cython.final
    cdef void inputs_from_slots(self, int p, int to_move, const signed char *slots) noexcept nogil
    @cython.final
    cdef void hidden_cell(self, int p) noexcept nogil
    @cython.final
    cdef void level2_cell(self, int p) noexcept nogil
    @cython.final
    cdef void forward_local(self) noexcept nogil
    # first hidden and second level of every cell from types[] and active[]
    @cython.final
    cdef void forward_evaluation(self) noexcept nogil
    @cython.final
    cdef const double *selection_weights(self, int c, int tp) noexcept nogil
    @cython.final
    cdef double slot_total(self, int slot) noexcept nogil
    @cython.final
    cdef inline double selected_term(self, const double *weights, int q, int k,
                                     bint base) noexcept nogil
    @cython.final
    cdef void set_evaluation(self, int i) noexcept nogil
    @cython.final
    cdef double repair_delta(self, int slot) noexcept nogil
    @cython.final
    cdef double units_delta(self, int slot, const double *weights,
                            unsigned int stamp) noexcept nogil
    @cython.final
    cdef double forward_all(self) noexcept nogil
    @cython.final
    cdef double forward_base(self) noexcept nogil
    @cython.final
    cdef void restore_base(self) noexcept nogil
    @cython.final
    cdef double forward_successor(self, Board board, int move, int to_move) noexcept nogil
    # the whole forward pass; returns the sum of the evaluation layer
