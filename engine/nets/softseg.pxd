# NeuroGo 3's soft-segmentation network (Enzenberger 2003, section 2): the C layout and the
# contracts of engine/nets/softseg.pyx.
#
# Lattice. Arrays are indexed by loc on the padded (size+2)^2 lattice of engine/rules/types.pxd; only
# on-board cells (cells[0..num_cells)) carry activations, border cells stay zero.
#
# Fields. The 3x3 window of a point p lists its points in one order (Figure 3's field index):
#   0 O (0,0)  1 E (1,0)  2 N (0,1)  3 W (-1,0)  4 S (0,-1)  5 NE (1,1)  6 NW (-1,1)  7 SW (-1,-1)
#   8 SE (1,-1), as (east, north) vectors; loc of field f = p + offsets[f].
#
# Point types (Figure 2), in the frame where the side to move is Black:
#   0 empty corner, 1 empty edge next to a corner, 2 other empty edge, 3 empty point diagonal from a
#   corner, 4 other empty second-line point, 5 empty point on line 3 or higher, 6 black (own)
#   stone, 7 white (opponent) stone; -1 off the board.
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
# Outputs (forward(), the trained units) per point, NUM_SOFTSEG_OUTPUTS = 21 columns:
#   0, 1 simple eye own / opponent; 2 + 9c + f local connection of colour c to field f;
#   20 evaluation (alive for the side to move).

cimport cython

from engine.rules.board cimport Board
from engine.nets.features cimport BoardFeatures
from engine.rules.types cimport MAX_LOCS

cdef enum:
    NUM_TYPES = 8
    NUM_FIELDS = 9
    NUM_LOCAL = 18                # local connection units per point (2 colours x 9 fields)
    NUM_SOFTSEG_OUTPUTS = 21
    OUT_EYE = 0
    OUT_LOCAL = 2
    OUT_EVAL = 20
    SS_MAX_ACTIVE = 24            # active inputs per cell at most
    SS_MAX_HIDDEN1 = 64
    SS_MAX_LEVEL2 = 84            # hidden2 <= 64, + 20
    SS_MAX_INTERVALS = 64
    INTERVAL_TABLE_SIZE = 1024    # interval_of()'s table (softseg.pyx): costs 0 .. 4 (values down to 0.018)
    INTERVAL_TABLE_SCALE = 256    # entries per unit of cost
    SS_MAX_WORDS = 12            # 64-bit words of a bitset over the cells (MAX_LOCS / 64 + 1)


@cython.final                     # no subclasses: its methods are called directly, and inlined
cdef class SoftSegNetwork:
    cdef readonly str feature_set
    cdef readonly int num_inputs, hidden1, hidden2, num_level2, num_selected, num_intervals
    cdef readonly double cutoff
    cdef double cost_limit                   # -log(cutoff): the dearest path kept
    cdef readonly int num_params, max_active
    cdef readonly long long params_version
    cdef readonly int w1_start, b1_start, w2_start, b2_start, wv_start, bv_start
    cdef public bint freeze_connectivity     # forward() keeps the previous connectivity (tests)
    cdef readonly long long searches_made    # pathfinder searches (one source, one colour) so far
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
    cdef double slot_sum[2 * MAX_LOCS]       # per reach slot, its input to the evaluation unit
    # the global connectivity: per colour c and source cell i, the reached points in the slot
    # s = c * num_cells + i: reach_loc/reach_cost/reach_interval[s * num_cells ..][0..reach_count[s])
    cdef int reach_count[2 * MAX_LOCS]
    cdef int *reach_loc
    cdef int *reach_interval
    cdef double *reach_cost                  # -log of the connection value
    cdef int reach_capacity
    cdef double interval_cost[SS_MAX_INTERVALS]   # -log(k / intervals): interval k's lower bound
    cdef int interval_table[INTERVAL_TABLE_SIZE]  # interval at cost index / INTERVAL_TABLE_SCALE
    # pathfinder scratch. Steps per colour and point, cheapest first (a search stops scanning a
    # point's steps at the first that leaves the cut-off), and per field (field_cost, UNREACHED
    # where there is no step; field 0 the self-connection's cost) for the repair's look at a
    # point's predecessors. Between searches dist[] is UNREACHED, listed[] NOT_LISTED and the
    # bucket queue empty everywhere, so a search clears only what it touched.
    cdef int step_to[2][MAX_LOCS][8]
    cdef double step_cost[2][MAX_LOCS][8]    # -log(local connection) >= 0
    cdef int num_steps[2][MAX_LOCS]
    cdef double field_cost[2][MAX_LOCS][NUM_FIELDS]
    cdef double dist[MAX_LOCS]
    cdef int parent[MAX_LOCS]                # the point dist[] came from (base searches)
    cdef signed char listed[MAX_LOCS]        # NOT_LISTED, or in visited[] and CLEAN / AFFECTED
    cdef int visited[MAX_LOCS]
    cdef int num_visited
    cdef int path_scratch[MAX_LOCS]
    cdef int first_child[MAX_LOCS]           # the search's tree (order_parents_first())
    cdef int next_sibling[MAX_LOCS]
    cdef int base_entry[MAX_LOCS]            # a repair: each loaded point's entry in its slot
    cdef int *bucket_head                    # per bucket, its first entry (-1: empty)
    cdef unsigned long long *occupied        # per bucket, a bit: whether it holds entries
    cdef int *entry_loc
    cdef int *entry_next
    cdef double *entry_cost
    cdef int entry_capacity
    cdef int num_entries                     # entries used by the search under way
    cdef int live_entries                    # entries still queued
    # successors (forward_base / forward_successor / restore_base): the base position's inputs,
    # layers and connectivity, per colour and point the bitset of the searches (source cells)
    # that expanded it, and what a successor changed
    cdef int base_types[MAX_LOCS]
    cdef int base_active[MAX_LOCS][SS_MAX_ACTIVE]
    cdef int base_num_active[MAX_LOCS]
    cdef double *base_h1
    cdef double *base_level2
    cdef int *base_reach_loc
    cdef int *base_reach_interval
    cdef double *base_reach_cost
    cdef int *base_reach_parent              # the point each reached point's best path came from
    cdef int base_reach_count[2 * MAX_LOCS]
    cdef double base_slot_sum[2 * MAX_LOCS]
    cdef signed char *base_interval_at       # [slot][loc]: the point's interval there, -1 none
    cdef signed char slot_state[2 * MAX_LOCS]   # UNTOUCHED, REPAIRED or REDONE (softseg.pyx)
    cdef double slot_delta[2 * MAX_LOCS]     # a repaired slot's change of its input
    cdef int changed_units[MAX_LOCS]         # the points whose type or selected units changed
    cdef int num_changed_units
    cdef unsigned int entry_stamp[MAX_LOCS]  # edit_stamp where a repair edited the point's entry
    cdef unsigned int edit_stamp
    cdef unsigned long long *visitors        # [2][MAX_LOCS][visitor_words]
    cdef int visitor_words
    cdef unsigned long long dirty_bits[2 * SS_MAX_WORDS]
    cdef bint steps_changed[2][MAX_LOCS]     # the successor's steps of the point differ
    cdef int base_step_to[2][MAX_LOCS][8]    # the base position's steps
    cdef double base_step_cost[2][MAX_LOCS][8]
    cdef int base_num_steps[2][MAX_LOCS]
    cdef double base_field_cost[2][MAX_LOCS][NUM_FIELDS]
    cdef unsigned int mark_epoch
    cdef unsigned int h1_mark[MAX_LOCS]
    cdef unsigned int level2_mark[MAX_LOCS]
    cdef int changed_inputs[MAX_LOCS]
    cdef int num_changed_inputs
    cdef int dirty_h1[MAX_LOCS]
    cdef int num_dirty_h1
    cdef int dirty_level2[MAX_LOCS]
    cdef int num_dirty_level2
    cdef int dirty_sources[2 * MAX_LOCS]
    cdef int num_dirty_sources
    # backward scratch
    cdef double *d_level2                    # [MAX_LOCS][num_level2]
    cdef double *d_h1                        # [MAX_LOCS][hidden1]
    cdef double d_eval[MAX_LOCS]

    cdef int prepare(self, int size) except -1
    # sets the board size (lattice, cells, point geometry, buffers); a no-op for the same size
    cdef int encode_base(self, Board board, int to_move, bint record) except -1
    # types[] and active[] of board with to_move as Black; record: ladder footprints for
    # successors (features.pxd)
    cdef int _load_encoded(self, object encoded) except -1
    cdef int _prepare_for_locs(self, int num_locs) except -1
    cdef int load_cells(self, const int *encoded) except -1
    # types[] and active[] from one encoded position (num_locs rows of 1 + max_active; checked)
    cdef void outputs_into(self, double *outputs, bint swap) noexcept nogil
    # the outputs into the on-board rows of outputs (num_locs x 21), swap: in the other frame
    cdef object _encoded(self)
    cdef object _outputs(self)
    cdef void set_types(self, Board board, int to_move) noexcept nogil
    cdef void inputs_from_slots(self, int p, int to_move, const signed char *slots) noexcept nogil
    cdef void hidden_cell(self, int p) noexcept nogil
    cdef void level2_cell(self, int p) noexcept nogil
    cdef void forward_local(self) noexcept nogil
    # first hidden and second level of every cell from types[] and active[]
    cdef void set_steps(self, int c, int p) noexcept nogil
    cdef void search(self, int c, int i, bint record) noexcept nogil
    cdef void repair(self, int c, int i) noexcept nogil
    cdef void queue_point(self, int x) noexcept nogil
    cdef void run_queue(self, int c) noexcept nogil
    cdef void write_reach(self, int c, int i, bint record) noexcept nogil
    cdef void write_repaired(self, int c, int i, int num_loaded) noexcept nogil
    cdef inline void set_entry(self, int e, int x, double cost) noexcept nogil
    cdef void order_parents_first(self) noexcept nogil
    cdef void pathfinder(self) noexcept nogil
    cdef void grow_entries(self) noexcept nogil
    # the reach lists from the local-connection units (Dijkstra on -log, cut off below cutoff)
    cdef void forward_evaluation(self) noexcept nogil
    cdef const double *selection_weights(self, int c, int tp) noexcept nogil
    cdef double slot_total(self, int slot) noexcept nogil
    cdef double selected_term(self, const double *weights, int q, int k, bint base) noexcept nogil
    cdef void set_evaluation(self, int i) noexcept nogil
    cdef void change_entry(self, int e, double cost, const double *weights,
                           double *delta) noexcept nogil
    cdef void remove_entry(self, int e, const double *weights, double *delta) noexcept nogil
    cdef void add_entry(self, int e, int x, double cost, const double *weights,
                        double *delta) noexcept nogil
    cdef double units_delta(self, int slot, const double *weights,
                            unsigned int stamp) noexcept nogil
    cdef double forward_all(self) noexcept nogil
    cdef double forward_base(self) noexcept nogil
    cdef void restore_base(self) noexcept nogil
    cdef double forward_successor(self, Board board, int move, int to_move) noexcept nogil
    # the whole forward pass; returns the sum of the evaluation layer
    cdef double backward(self, const double *targets, const unsigned char *mask, double *dest,
                         double scale) noexcept nogil
    # after a forward pass: dest += scale * d(loss)/d(params) (dest may be the parameters
    # themselves: every layer's deltas are taken before its weights change); returns the loss
