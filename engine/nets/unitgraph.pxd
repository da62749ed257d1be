# NeuroGo's unit graph (Enzenberger 1996): the C layout and the contracts of
# engine/nets/unitgraph.pyx, which engine/nets/unitnet.pyx (the network over it) reads directly.
#
# Units. The position is seen with the side to move as Black ("own"). Every string and every
# empty point is one unit, named by its anchor: the empty point itself, or the string's chain head
# on the board (board.pxd). Arrays "per anchor" are indexed by that loc; kind[] is -1 at every loc
# that is not an anchor. anchor_of[p] is the unit holding the on-board point p; the units are the
# locs p with anchor_of[p] == p, visited in increasing loc order everywhere.
#
# Relations (the relation expert), most important first; a pair of units has at most one, the
# most important that holds, the same both ways:
#   REL_SAME      a unit and itself
#   REL_GROUP     two strings of one group (below)
#   REL_ADJACENT  distance 1: a point of one is next to a point of the other
#   REL_ADJACENT + n - 1   distance n = 2 .. max_distance (the paper's Dn): the shortest path from
#                 a point of one to a point of the other whose points in between are all empty
#                 has n steps
# Groups: two strings of one colour are linked when they share two liberties, or share one where
# the opponent's stone would be captured in a ladder or could not be played at all (suicide); a
# group is a class of the transitive closure of the links.
#
# Edges. Unit a's incoming edges are edge_source/edge_relation[edge_start[a] ..][0..edge_count[a]),
# in this order: itself (SAME), its group's other strings by increasing anchor (GROUP), then the
# units found by a breadth-first search from a's points through empty points, in the order found.
# The network's weights depend on the relation and on the kinds of both units.
#
# Inputs (the feature expert, feature set "units"): per unit a multi-hot list active[a][0..
# num_active[a]) of input indices; index k means one thing on an empty point (E_* below) and
# another on a string (S_*): the unit's kind selects the weights. Slots come from the board
# features of engine/nets/features.pyx (BoardFeatures), incrementally in successors.
#
# Benson (the external expert): override[a] is 1 when the side to move owns unit a for sure
# (a pass-alive string of its own, a point of a region it makes safe, or an opposing string
# inside one), 0 when the opponent does, -1 otherwise.
#
# Successors (build(board, to_move, True) on the position, then per move: play it on the board,
# successor(board, move), read, restore_base(), undo the move): successor() leaves the current
# arrays describing the position after the move, and lists what changed: the units whose edges
# were rebuilt (dirty_edges: within max_distance of a changed point, or whose group changed, or
# new), the units whose inputs changed (changed_inputs; new units included). Everything else is
# exactly as the base has it, which is what makes the network's incremental pass equal a full one.

from engine.rules.board cimport Board
from engine.nets.features cimport BoardFeatures
from engine.rules.types cimport MAX_LOCS

cdef enum:
    UNIT_EMPTY = 0
    UNIT_OWN = 1
    UNIT_OPPONENT = 2
    NUM_UNIT_KINDS = 3
    REL_SAME = 0
    REL_GROUP = 1
    REL_ADJACENT = 2
    UG_MAX_DISTANCE = 6
    UG_MAX_RELATIONS = 8          # 2 + UG_MAX_DISTANCE
    UG_MAX_ACTIVE = 24
    # inputs of an empty point
    E_PRESENT = 0                 # every unit: lets a relation's weights count units
    E_LINE = 1                    # 1..4: on the first, second, third, fourth or higher line
    E_OWN_LIBERTY = 5             # next to an own stone
    E_OPPONENT_LIBERTY = 6        # next to an opposing stone
    E_OWN_ATARI_LIBERTY = 7       # the liberty of an own string in atari
    E_OPPONENT_ATARI_LIBERTY = 8
    E_LIBERTIES_OWN = 9           # 9..14: 0 (suicide), 1, 2, 3, 4, >4 liberties if own plays here
    E_LIBERTIES_OPPONENT = 15     # 15..20: the same for the opponent
    E_LADDER_OWN = 21             # an own stone here is captured in a ladder
    E_LADDER_OPPONENT = 22
    E_EYE_OWN = 23                # single-point eye (the board's rule)
    E_EYE_OPPONENT = 24
    E_EYE_MOVES_OWN = 25          # 25..27: 1, 2, >2 own moves make it an eye
    E_EYE_MOVES_OPPONENT = 28     # 28..30
    E_PONNUKI_OWN = 31
    E_PONNUKI_OPPONENT = 32
    E_ATARI_IF_OWN = 33           # own move here puts an opposing string in atari
    E_LINK_OWN = 34               # link point of an own jump or knight's move pattern
    E_LINK_OPPONENT = 35
    NUM_EMPTY_INPUTS = 36
    # inputs of a string (own or opposing: the kind says which)
    S_PRESENT = 0
    S_LIBERTIES = 1               # 1..4: 1, 2, 3, >3 liberties
    S_STONES = 5                  # 5..9: 1, 2, 3, 4, >4 stones
    S_PON = 10                    # 10..17: PON estimate buckets (features.pxd SLOT_PON)
    S_LADDER_ATTACKER_FIRST = 18  # captured in a ladder if the other colour moves first
    S_LADDER_DEFENDER_FIRST = 19  # captured in a ladder even if its own colour moves first
    NUM_STRING_INPUTS = 20
    UG_NUM_INPUTS = 36            # max of the two


cdef class UnitGraph:
    cdef readonly int max_distance, num_relations
    cdef readonly int size, stride, num_locs, num_cells, to_move
    cdef int cells[MAX_LOCS]
    cdef int line_bucket[MAX_LOCS]          # 0..3: first, second, third, fourth or higher line
    cdef int neighbour[4]
    cdef BoardFeatures features
    # the current graph (the base position, or the successor being evaluated)
    cdef int anchor_of[MAX_LOCS]
    cdef signed char kind[MAX_LOCS]         # per anchor: UNIT_*, -1 not an anchor
    cdef int unit_size[MAX_LOCS]            # per anchor: its points
    cdef signed char active[MAX_LOCS][UG_MAX_ACTIVE]
    cdef int num_active[MAX_LOCS]
    cdef int edge_start[MAX_LOCS]
    cdef int edge_count[MAX_LOCS]
    cdef int *edge_source
    cdef signed char *edge_relation
    cdef int edge_capacity, edges_used
    cdef double override[MAX_LOCS]          # per anchor: 1, 0, or -1 (no verdict)
    cdef int group_of[MAX_LOCS]             # per string anchor: its group; -1 otherwise
    cdef int group_start[MAX_LOCS]
    cdef int group_count[MAX_LOCS]
    cdef int group_members[MAX_LOCS]        # anchors, by group, increasing within a group
    cdef int num_groups
    # the base position's copies (restore_base() copies them back)
    cdef int base_anchor_of[MAX_LOCS]
    cdef signed char base_kind[MAX_LOCS]
    cdef int base_unit_size[MAX_LOCS]
    cdef signed char base_active[MAX_LOCS][UG_MAX_ACTIVE]
    cdef int base_num_active[MAX_LOCS]
    cdef int base_edge_start[MAX_LOCS]
    cdef int base_edge_count[MAX_LOCS]
    cdef int base_edges_used
    cdef double base_override[MAX_LOCS]
    cdef int base_group_of[MAX_LOCS]
    cdef int base_group_start[MAX_LOCS]
    cdef int base_group_count[MAX_LOCS]
    cdef int base_group_members[MAX_LOCS]
    cdef int base_num_groups
    # what a successor changed
    cdef readonly int num_dirty_edges, num_changed_inputs
    cdef int dirty_edges[MAX_LOCS]
    cdef int changed_inputs[MAX_LOCS]
    cdef int input_touched[MAX_LOCS]        # anchors whose active[] a successor wrote
    cdef int num_input_touched
    # scratch: marks by epoch, queues
    cdef unsigned int epoch
    cdef unsigned int successor_epoch       # dirty_mark / new_mark's, apart from the BFS marks
    cdef unsigned int point_mark[MAX_LOCS]
    cdef unsigned int unit_mark[MAX_LOCS]
    cdef unsigned int dirty_mark[MAX_LOCS]
    cdef unsigned int new_mark[MAX_LOCS]
    cdef int queue[MAX_LOCS]
    cdef int queue_depth[MAX_LOCS]
    cdef int parent[MAX_LOCS]               # union-find over string anchors
    cdef int shared_count[MAX_LOCS]
    cdef int shared_point[MAX_LOCS]
    cdef int touched[MAX_LOCS]
    # Benson scratch
    cdef int region_of[MAX_LOCS]
    cdef int region_points[MAX_LOCS]
    cdef int region_start[MAX_LOCS]
    cdef int region_size[MAX_LOCS]
    cdef int region_empty[MAX_LOCS]
    cdef int region_first_pair[MAX_LOCS]    # a region's pairs are contiguous
    cdef int region_end_pair[MAX_LOCS]
    cdef bint region_live[MAX_LOCS]
    cdef int pair_region[4 * MAX_LOCS]
    cdef int pair_chain[4 * MAX_LOCS]
    cdef int pair_count[4 * MAX_LOCS]
    cdef int pair_index[MAX_LOCS]
    cdef bint chain_alive[MAX_LOCS]
    cdef int vital_count[MAX_LOCS]

    cdef int prepare(self, int size) except -1
    # sets the board size (lattice, lines, feature buffers); a no-op for the same size
    cdef int build(self, Board board, int to_move, bint record) except -1
    # the whole graph of board with to_move as own, saved as the base; record: ladder footprints
    # and base copies for successor()
    cdef void successor(self, Board board, int move) noexcept nogil
    # board has just played move (not a pass) for the colour that is not to_move, on the base
    # position: the current arrays become the successor's, with dirty_edges and changed_inputs
    cdef void restore_base(self) noexcept nogil
    cdef void save_base(self) noexcept nogil
    cdef void mark_dirty(self, int a) noexcept nogil
    cdef unsigned int next_epoch(self) noexcept nogil
    cdef void ensure_edges(self, int room) noexcept nogil
    cdef void build_edges(self, Board board, int a) noexcept nogil
    cdef void compute_groups(self, Board board) noexcept nogil
    cdef int unit_inputs(self, Board board, int a, signed char *out) noexcept nogil
    cdef void compute_benson(self, Board board) noexcept nogil
    cdef void benson_colour(self, Board board, int colour, double value) noexcept nogil
