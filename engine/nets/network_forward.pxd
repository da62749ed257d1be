# Blair's Internal Symmetry Network (ISN): the C layout and the contracts of its forward pass,
# engine/nets/network_forward.pyx; its training is Network's (network.pxd), a subclass.
#
# Lattice. Every array is indexed by loc on the padded (size+2)^2 lattice of engine/rules/types.pxd, which
# is exactly the paper's extended lattice: the on-board cells plus a one-point border. Border cells
# carry the off-board input and hidden units fixed at zero; only on-board cells have outputs.
#
# Offsets. The 3x3 receptive field is listed in one fixed order, as (east, north) vectors:
#   0 O (0,0)  1 E (1,0)  2 N (0,1)  3 W (-1,0)  4 S (0,-1)  5 NE (1,1)  6 NW (-1,1)  7 SW (-1,-1)
#   8 SE (1,-1); on the lattice, offset (a, b) is loc + a - b * stride (row 0 is the top line).
#
# Hidden units. Per cell: num_trivial T, num_symmetric S, num_diagonal D, num_chiral C units, then
# num_faithful F pairs (F1, F2 adjacent), in that order: num_hidden = T + S + D + C + 2F.
#
# Inputs. A feature set (engine/nets/features.pyx) fixes num_inputs. isn14 is one-hot: inputs[cell] is
# the one active input. A multi-hot set (neurogo) gives each cell a list of active inputs
# (active[cell][0..num_active)), the first always its isn14 input, the others board features.
#
# Outputs. num_outputs = NUM_OUTPUTS (the seven territory outputs, which alone give values and the
# recurrence), plus NUM_RICH_OUTPUTS with rich_signal (NeuroGo's eyes, connections, live points).
#
# Free parameters (the flat float64 vector of get_params()/set_params(), in this order):
#   shortcut  [num_outputs][num_inputs][3]      input->output, per offset orbit (O, EWNS, diagonals)
#   output    [num_outputs][num_features]       hidden->output, one weight per (output, feature)
#   input     [num_features][num_inputs]        input->hidden, one weight per (feature, input)
#   biases    [num_outputs] then [num_trivial]  only when explicit_biases (see Network.__init__)
# A "feature" is one basis vector of the equivariant 3x3 kernels of one hidden unit (or F pair),
# found by group averaging (equivariant_basis()): T has 3 (centre, edge ring, corner ring), S 1, D 1,
# C 0, an F pair 2. With T=4, S=2, D=2, C=0, F=2 there are 20 features, and 14 inputs and 7 outputs
# give 294 + 140 + 280 = 714 parameters, the paper's count. The dense 3x3 kernels are expanded from
# the vector by set_params(); dense_kernels() returns them for inspection.
#
# Play API (Python level; engine/nets/evaluator.py is its user):
#   Network.evaluate_board(board, to_move, weights, c, s) -> outputs, inputs, rewards, total
#   Network.successor_values(board, mover, weights, moves, c, s, allow_suicide)
#                                                -> (pass value, values), incremental
#   Network.successor_values_full(...)           the same by full evaluations (reference)
#
# Training API (Python level, see the docstrings in network.pyx and network_targets.pyx):
#   Network.forward(inputs)                      -> outputs (num_locs, 7)
#   Network.loss_and_gradient(inputs, targets, mask, grad) -> summed cross-entropy; adds its
#                                                   gradient into grad (caller-owned, float64)
#   Network.get_params() / set_params(v) / decay(factor) / params_version / parameter_blocks()
#   Network.encode(board, to_move, weights)       -> the inputs of a board position: (num_locs,)
#                                                   for isn14, (num_locs, max_active) padded with
#                                                   -1 for a multi-hot set (forward() takes both)
#   liberty_weights(outputs, to_move)             -> recurrence weights for the next position
#   final_targets(board, c, to_move)              -> Table IV targets and mask
#   rich_targets(board, to_move)                  -> the rich signal's targets and mask (outputs
#                                                   7.. of a rich_signal network)
#   swap_colours(outputs) / swap_colours_mask(mask)  frame change between the two sides to move

from engine.rules.board cimport Board
from engine.nets.features cimport BoardFeatures, NUM_SLOTS
from engine.rules.types cimport MAX_LOCS

cdef enum:
    NUM_OUTPUTS = 7
    NUM_OFFSETS = 9
    NUM_WINDOW = 25          # the 5x5 window an input change can reach (inputs -> hidden -> outputs)
    NUM_CLASSES = 6          # liberty classes C1..C6
    MAX_HIDDEN = 256
    MAX_FEATURES = 1024
    MAX_ACTIVE = 32          # active inputs per cell of a multi-hot feature set
    NUM_RICH_OUTPUTS = 10    # the rich reinforcement signal's outputs (RICH_OUTPUT_NAMES)
    MAX_OUTPUTS = 17         # NUM_OUTPUTS + NUM_RICH_OUTPUTS

# The seven outputs per point (Table III/IV), in the frame where the side to move is Black.
cdef enum:
    OUT_Z_EMPTY = 0          # Z+   white gaining territory
    OUT_Z_WHITE = 1          # Z o  white avoiding capture
    OUT_Z_BLACK = 2          # Z .  white effecting capture
    OUT_A_EMPTY_WHITE = 3    # A+o  white making an eye
    OUT_A_EMPTY_BLACK = 4    # A+.  black making an eye
    OUT_A_WHITE = 5          # A o  white stone captured, leading to black eye
    OUT_A_BLACK = 6          # A .  black stone captured, leading to white eye

# The isn14 feature set (version 1): one active input per cell.
cdef enum:
    INPUT_WHITE = 0          # 0..5: white stone of liberty class C1..C6
    INPUT_BLACK = 6          # 6..11: black stone of class C1..C6
    INPUT_EMPTY = 12
    INPUT_OFF_BOARD = 13
    ISN14_INPUTS = 14

# Recurrence weights: per point, 4 doubles in REAL colours (independent of the frame):
#   [z for black chains, a for black chains, z for white chains, a for white chains]
# A chain's class comes from the sums of its colour's z and a over its liberties (liberty_class()).
cdef enum:
    WEIGHT_BLACK_Z = 0
    WEIGHT_BLACK_A = 1
    WEIGHT_WHITE_Z = 2
    WEIGHT_WHITE_A = 3
    WEIGHTS_PER_POINT = 4


cdef class Activations:
    # One position's activations on the lattice, plus the scratch of incremental evaluation.
    # Allocated for MAX_LOCS cells, so one object serves every board size; prepare() sets the size.
    cdef int num_hidden, num_features, num_pool_entries
    cdef int size, stride, num_locs, num_cells
    cdef int offsets[NUM_OFFSETS]            # lattice offsets of the 3x3 field, in the order above
    cdef int window[NUM_WINDOW]              # lattice offsets of the 5x5 window
    cdef int neighbours[4]
    cdef int *pool_delta                     # per pooling entry: hidden[] offset from cell*num_hidden
    cdef int cells[MAX_LOCS]                 # the on-board locs
    cdef char on_board[MAX_LOCS]
    cdef int inputs[MAX_LOCS]                # active input per cell
    cdef int cell_state[MAX_LOCS]            # EMPTY, or the stone's frame colour (BLACK = to move)
    cdef double *hidden                      # [MAX_LOCS][num_hidden], zero on the border
    cdef double *pooled                      # [MAX_LOCS][num_features]
    cdef double *pre                         # [MAX_LOCS][num_outputs] output pre-activations
    cdef double *outputs                     # [MAX_LOCS][num_outputs], zero on the border
    cdef double rewards[MAX_LOCS]            # expected reward per point for the frame's White
    cdef double total                        # sum of rewards
    # scratch: epoch marks (a cell is marked when mark == epoch), change logs, chain classes
    cdef unsigned int epoch
    cdef unsigned int hidden_mark[MAX_LOCS]
    cdef unsigned int output_mark[MAX_LOCS]
    cdef unsigned int chain_mark[MAX_LOCS]
    cdef int class_of_head[MAX_LOCS]
    cdef int liberties[MAX_LOCS]
    cdef int changed_cells[MAX_LOCS]
    cdef int changed_old_input[MAX_LOCS]
    cdef int changed_old_state[MAX_LOCS]
    cdef int hidden_cells[MAX_LOCS]
    cdef double *saved_hidden                # [MAX_LOCS][num_hidden]
    # the active inputs of each cell (the first is the isn14 input, which inputs[] also holds):
    # always with a multi-hot set, in 1-ply also with a one-hot one; and their change log
    cdef int *active                         # [MAX_LOCS][MAX_ACTIVE]
    cdef int num_active[MAX_LOCS]
    cdef int *changed_old_active             # [MAX_LOCS][MAX_ACTIVE]
    cdef int changed_old_num_active[MAX_LOCS]
    cdef int active_changed[MAX_LOCS]        # cells whose active inputs changed
    cdef int changed_order[MAX_LOCS]         # indices into active_changed, by point
    cdef unsigned int candidate_mark[MAX_LOCS]
    # 1-ply successors (every feature set): per cell, the sums over its 3x3 field of the active
    # inputs' rows of the hidden table (num_hidden: the hidden units' pre-activations, bias
    # aside) and of the territory outputs' shortcut table (NUM_OUTPUTS), kept up to date input by
    # input, so a successor's work follows the inputs that change, not those a cell has; NULL
    # when the object was made without them (Activations(..., field_sums=True))
    cdef int sums_width                      # num_hidden + NUM_OUTPUTS
    cdef double *field_sums                  # [MAX_LOCS][sums_width]
    cdef double *saved_field_sums            # [MAX_LOCS][sums_width], change log (hidden_cells)
    cdef int num_saved                       # cells in hidden_cells/saved_hidden/saved_field_sums

    cdef unsigned int next_epoch(self) noexcept nogil


cdef class NetworkForward:
    cdef readonly int num_inputs, num_hidden, num_features, num_params, num_pool_entries
    cdef readonly int num_trivial, num_symmetric, num_diagonal, num_chiral, num_faithful
    cdef readonly bint explicit_biases
    cdef readonly bint multi_hot             # the feature set is not one-hot (active lists)
    cdef readonly bint rich_signal           # outputs 7.. predict the rich signal (network.pyx)
    cdef readonly int num_outputs            # NUM_OUTPUTS, + NUM_RICH_OUTPUTS with rich_signal
    cdef readonly int max_active             # active inputs per cell at most (1 when one-hot)
    cdef BoardFeatures board_features        # None when one-hot
    # the set's board features in input order: the cell kind each applies to (0 empty, 1 own
    # stone, 2 opponent stone), the slot it reads per side to move, its first input
    cdef int num_board_features
    cdef int feature_cell[MAX_ACTIVE]
    cdef int feature_slot[2][MAX_ACTIVE]     # [side to move - 1][feature]
    cdef int feature_offset[MAX_ACTIVE]
    cdef readonly str feature_set
    cdef readonly int shortcut_start, output_start, input_start, bias_start
    cdef readonly long long params_version   # incremented by every change of the parameters
    cdef readonly tuple feature_types        # per feature, the hidden type ("T".."F") it belongs to
    cdef object _features                    # per feature, its [(offset, hidden unit, sign)] entries
    cdef object _params                      # float64 (num_params,), private: use get/set_params
    cdef object _tables                      # the numpy arrays behind the pointers below
    # expanded kernels (rebuilt by set_params)
    cdef double *hidden_table                # [NUM_OFFSETS][num_inputs][num_hidden]
    cdef double *shortcut_table              # [NUM_OFFSETS][num_inputs][NUM_OUTPUTS]
    cdef double *input_rows                  # [NUM_OFFSETS][num_inputs][num_hidden + NUM_OUTPUTS]:
                                             # hidden_table's row, then shortcut_table's first 7
    cdef double *output_weights              # [num_features][NUM_OUTPUTS]
    cdef double *pool_output                 # [NUM_OUTPUTS][num_pool_entries]: pool_sign[e] times
                                             # output_weights of entry e's feature (one output
                                             # straight from the hidden units)
    cdef double *hidden_bias                 # [num_hidden] (non-zero only for T units)
    cdef double *output_bias                 # [NUM_OUTPUTS]
    # pooling: feature f sums pool_sign[e] * hidden unit pool_hidden[e] at offset pool_offset[e]
    # over e in pool_start[f] .. pool_start[f+1]-1
    cdef int *pool_start
    cdef int *pool_offset
    cdef int *pool_hidden
    cdef double *pool_sign
    cdef int orbit_of_offset[NUM_OFFSETS]    # 0 centre, 1 edge neighbours, 2 diagonals
    cdef Activations scratch                 # for the Python-level single-position calls
    cdef Activations base                    # the unchanged position of successor evaluation

    # --- hot path (nogil; act must have been prepare()d for the board size) ---
    cdef void prepare(self, Activations act, int size) noexcept nogil
    cdef void hidden_cell(self, Activations act, int p) noexcept nogil
    cdef void pooled_features(self, Activations act, int p, double *pooled) noexcept nogil
    # The pooled hidden features around cell p (num_features entries), the output units' inputs.
    cdef void output_cell(self, Activations act, int p, double *pooled, double *pre,
                          double *y) noexcept nogil
    # All num_outputs outputs of cell p (pooled: its num_features pooled features); pre and y
    # have num_outputs entries.
    cdef void forward_all(self, Activations act, double c, double s) noexcept nogil
    # Full forward pass from act.inputs/act.cell_state; fills hidden, pooled, outputs, rewards, total.
    cdef int chain_class(self, Activations act, Board board, int p,
                         const double *weights) noexcept nogil
    cdef void encode_board(self, Activations act, Board board, int to_move,
                           const double *weights) noexcept nogil
    # isn14 inputs of the board with to_move presented as Black; classes from weights.
    cdef void encode_multi_hot(self, Activations act, Board board, int to_move,
                               const double *weights, bint record) noexcept nogil
    # encode_board() plus the board features and the active lists; record: remember what the
    # successors of this position need (board_features.compute_all's ladder footprints).
    cdef int cell_inputs(self, Activations act, int p, int to_move, const signed char *slots,
                         int *out) noexcept nogil
    # The active inputs of cell p from its isn14 input (act.inputs[p]) and its feature slots.
    cdef int changed_isn14_cells(self, Activations act, Board board, int move, int mover,
                                 const double *weights, unsigned int epoch) noexcept nogil
    cdef double successor_delta(self, Activations act, Board board, int move, int mover,
                                const double *weights, double c, double s) noexcept nogil
    # act holds the evaluated position before the move, encoded in the successor's frame (with a
    # multi-hot set by encode_multi_hot(record=True)), its active lists filled and
    # cell_field_sums() of every on-board cell (act made with field_sums); board has just played
    # move for mover. Returns successor total - act.total; act is left unchanged.
    cdef void cell_field_sums(self, Activations act, int p) noexcept nogil
    # act.field_sums of cell p from the active inputs of its 3x3 field.
    cdef void add_input_change(self, Activations act, int q, const int *old_active, int num_old,
                               const int *new_active, int num_new) noexcept nogil
    # Cell q's active inputs change: the field sums of the cells that see q follow (saved first).
    cdef void hidden_cell_summed(self, Activations act, int p) noexcept nogil
    # hidden_cell() from act.field_sums.
    cdef double output_reward_summed(self, Activations act, int p, double c, double s) noexcept nogil
    # point_reward() of cell p's territory outputs, computed from act.field_sums and act.hidden.


cdef int liberty_class(double z_sum, double a_sum) noexcept nogil
cdef double point_reward(const double *y, int state, double c, double s) noexcept nogil
cdef double *double_pointer(arr) except NULL
# raw pointer into a C-contiguous float64 array; the caller keeps the array alive
