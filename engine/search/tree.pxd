# The search tree of engine/search/tree.pyx: nodes in one flat array of C structs.
#
# Contracts
# - nodes[0] is the root: the position set by set_root(), colour root_colour to move. A node
#   stands for the move that led to it; its statistics are from the side of the player who made
#   that move (`wins`, `amaf_wins`, `prior_wins` in [0, visits]).
# - Children of a node are contiguous: nodes[first_child .. first_child + num_children - 1];
#   first_child is -1 until the node is expanded. Every child move is legal under positional
#   superko (the game's earlier positions and the positions on the path); PASS is always a child.
# - For an expanded node: visits == visits_at_expansion + sum of its children's visits.
# - The array grows up to max_nodes; past that the search goes on without expanding.

from engine.tactics.ladder cimport LadderReader
from engine.rules.board cimport Board, hash_t
from engine.rules.types cimport loc_t, MAX_LOCS
from engine.search.playout cimport PlayoutPolicy, ReplyMemory

cdef struct Node:
    loc_t move                 # the move that led here (PASS_LOC for a pass; root: NO_LOC)
    int parent                 # -1 at the root
    int first_child            # -1: not expanded
    int num_children
    int visits                 # simulations through this node
    int visits_at_expansion
    double wins                # for the player who made `move` (ties count a half)
    double score_sum           # Black's area margin summed over those simulations
    int amaf_visits            # RAVE: simulations from the parent in which `move` was played
    double amaf_wins           #   first by the player to move at the parent
    float prior_visits         # equivalent experience (Gelly & Silver): counted in both the
    float prior_wins           #   node's and its RAVE statistics
    float prior                # the evaluator's selection probability of `move`, or -1
    float net_black_win        # the evaluator's win probability for Black here, or -1
    bint prior_asked           # the prior function was called for this node's children
    hash_t hash                # stones after `move`

cdef class TreeSearch:
    cdef Node *nodes
    cdef readonly int num_nodes
    cdef int capacity                    # allocated
    cdef readonly int max_nodes          # the node budget
    cdef readonly int size
    cdef Board root_board
    cdef Board work                      # the board a simulation plays on
    cdef readonly int root_colour
    cdef loc_t root_last_move            # the game's last move (the playout policy looks at it)
    cdef int root_passes                 # consecutive passes before the root
    cdef hash_t *seen                    # the game's earlier positions, sorted (superko)
    cdef int num_seen
    cdef PlayoutPolicy policy
    cdef readonly str playout_tactics    # the policy's set of tactics, by name
    cdef LadderReader ladder_reader      # its ladder reader (fuego tactics), else None
    cdef readonly ReplyMemory replies    # last good replies (last_good_reply), else None
    cdef loc_t *sequence                 # one simulation's moves, tree and playout (replies)
    cdef unsigned long long rng
    cdef readonly double komi
    # parameters (see tree.pyx's TreeSearch docstring)
    cdef readonly int expand_threshold
    cdef readonly double rave_equivalence
    cdef readonly double exploration
    cdef readonly double even_prior_visits
    cdef readonly double knowledge_prior_visits
    cdef readonly double net_prior_visits
    cdef readonly int net_prior_threshold
    cdef readonly double value_weight
    cdef object prior_function
    cdef unsigned char *root_filter      # NULL, or 1 per point (pass last) the root may play
    cdef object prior_error              # an exception raised by prior_function, re-raised by run()
    cdef bint prior_failed               # (the flag the nogil loop reads)
    # one simulation's scratch
    cdef int path[1024]
    cdef int first_colour[MAX_LOCS]      # colour that first played a point in this simulation
    cdef int first_depth[MAX_LOCS]       #   and at which depth (tree depth, or past the tree)
    cdef signed char owner[MAX_LOCS]
    cdef double *ownership_sum
    cdef readonly long playouts          # simulations since set_root()

    cdef void _init_node(self, int index, loc_t move, int parent, hash_t h) noexcept nogil
    cdef void _reroot(self, int new_root) except *
    cdef void _set_seen(self, seen_hashes) except *
    cdef int _grow(self, int extra) noexcept nogil
    cdef int _apply_prior(self, int node, int first, int count, int colour, int depth) except -1
    cdef int _play_out_recording(self, int colour, loc_t last_move, int depth) noexcept nogil
    cdef void _top_two_visits(self, int *first, int *second) noexcept nogil
    cdef bint _superko_repeat(self, hash_t h, int node) noexcept nogil
    cdef double _knowledge(self, loc_t p, int colour) noexcept nogil
    cdef int _line(self, loc_t p) noexcept nogil
    cdef bint _stone_near(self, loc_t p) noexcept nogil
    cdef bint _wasted_edge_move(self, loc_t p) noexcept nogil
    cdef int _expand(self, int node, int colour, int depth) noexcept nogil
    cdef int _select(self, int node) noexcept nogil
    cdef int _simulate(self) noexcept nogil
