# The PUCT search of engine/search/puct.pyx: nodes in one flat array of C structs.
#
# Contracts
# - nodes[0] is the root: the position set by set_root(), colour root_colour to move. A node
#   stands for the move that led to it; its sums are from the side of the player who made that
#   move (utility_sum, win_sum in [0, visits]); score_sum is Black's lead, summed.
# - Children of a node are contiguous: nodes[first_child .. first_child + num_children - 1];
#   first_child is -1 until the node's evaluation has come back. Every child move is legal under
#   positional superko; PASS is always a child.
# - For an expanded node: visits == 1 + the sum of its children's visits (its own evaluation,
#   then every visit through a child). Between two searches no node holds a virtual loss.

from engine.rules.board cimport Board, hash_t
from engine.rules.types cimport loc_t, MAX_LOCS
from engine.search.playout cimport PlayoutPolicy
from engine.tactics.ladder cimport LadderReader

cdef enum NodeState:
    UNEVALUATED = 0        # a child no descent has reached yet
    PENDING = 1            # in the batch waiting for the evaluator
    EVALUATED = 2          # the net's numbers are in; children unless the budget was spent
    TERMINAL = 3           # two passes: the count decides

cdef struct PuctNode:
    loc_t move             # the move that led here (PASS_LOC for a pass; root: NO_LOC)
    int parent             # -1 at the root
    int first_child        # -1: not expanded
    int num_children
    int visits             # values backed up through this node
    int virtual            # descents under way through it (each counts as a loss meanwhile)
    double utility_sum     # for the player who made `move`: the values the search maximises
    double win_sum         #   and their chance-to-win part alone
    double score_sum       # Black's lead in points
    float prior            # the net's probability of `move` at the parent
    float black_win        # this position's own value (the net's or the count's), for Black,
    float black_score      #   backed up again when a descent ends here without expanding
    unsigned char state    # NodeState
    hash_t hash            # stones after `move`

cdef class PuctSearch:
    cdef PuctNode *nodes
    cdef readonly int num_nodes
    cdef int capacity
    cdef readonly int max_nodes
    cdef readonly int size
    cdef Board root_board
    cdef Board work
    cdef readonly int root_colour
    cdef loc_t root_last_move
    cdef int root_passes
    cdef hash_t *seen
    cdef int num_seen
    cdef unsigned char *root_filter
    cdef readonly double komi
    # parameters (PuctSearch's docstring)
    cdef readonly double exploration
    cdef readonly double exploration_log
    cdef readonly double fpu_reduction
    cdef readonly double score_utility
    cdef readonly double score_scale
    cdef readonly int batch_size
    cdef readonly double playout_weight
    cdef readonly double playout_lead_weight
    cdef PlayoutPolicy policy            # the playouts' (either weight > 0)
    cdef LadderReader ladder_reader
    cdef unsigned long long rng
    cdef object evaluation_function
    # a batch's leaves: their paths of node indices, and depths
    cdef int *batch_paths
    cdef int *batch_depths
    cdef int path[1024]
    cdef signed char owner[MAX_LOCS]
    cdef double *ownership_sum
    cdef readonly long evaluations      # values backed up into ownership_sum since the root was set
    cdef readonly long playouts         # visits since set_root() (the analysis's "simulations")

    cdef void _init_node(self, int index, loc_t move, int parent, hash_t h) noexcept nogil
    cdef void _reroot(self, int new_root) except *
    cdef void _set_seen(self, seen_hashes) except *
    cdef int _grow(self, int extra) noexcept nogil
    cdef bint _superko_repeat(self, hash_t h, int node) noexcept nogil
    cdef void _replay(self, int *path, int depth) noexcept nogil
    cdef int _expand(self, int node, int colour, int depth, double[::1] priors) noexcept nogil
    cdef int _select(self, int node) noexcept nogil
    cdef double _utility(self, double win, double score) noexcept nogil
    cdef int _descend(self, int slot) noexcept nogil
    cdef void _back_up(self, int *path, int depth, double black_win, double black_score) noexcept nogil
    cdef void _undo_virtual(self, int *path, int depth) noexcept nogil
    cdef void _top_two_visits(self, int *first, int *second) noexcept nogil
    cdef double _play_out(self, int *path, int depth, int colour) noexcept nogil
