# Board features for the evaluator's inputs (NeuroGo 3, Table 1): the C layout and the contracts of
# engine/nets/features.pyx.
#
# Slots. Every point has NUM_SLOTS small integers, each a plane index within one feature or
# NO_VALUE, computed in REAL colours (a feature set maps them into the side-to-move frame, see
# FEATURES in features.pyx). Empty-point slots come in Black/White pairs (the Black slot, then
# the White slot); block slots describe the block holding the point, whatever its colour.
#
# Incremental use (the 1-ply hot path): compute(board, True) on the position before the moves,
# then for each successor play the move on the board, successor(board, move) (fills the overlay:
# the cells whose slots differ or may differ, with their successor values), read them, undo the
# move. The base values are never modified by successor(). Ladder reads (engine/tactics/ladder.pyx)
# record, in the base, their footprints: every point whose change could change their result, so
# a successor re-reads exactly the ladders whose footprint holds a point the move changed: ladder
# status can change far from the move.

from engine.rules.board cimport Board
from engine.rules.types cimport MAX_LOCS
from engine.tactics.ladder cimport LadderReader

cdef enum:
    NO_VALUE = -1
    # empty points (Black slot, White slot = Black slot + 1)
    SLOT_LIBERTIES_BLACK = 0     # 0..5: 0, 1, 2, 3, 4, >4 liberties if that colour plays here
    SLOT_LADDER_BLACK = 2        # 0: that colour playing here is captured in a ladder
    SLOT_EYE_BLACK = 4           # 0: single-point eye of that colour (the board's eye rule)
    SLOT_EYE_MOVES_BLACK = 6     # 0, 1, 2: 1, 2, >2 moves of that colour make it an eye
    SLOT_PONNUKI_BLACK = 8       # 0: the centre of that colour's ponnuki
    SLOT_ATARI_BLACK = 10        # 0: that colour playing here puts an opposing block in atari
    SLOT_LINK_BLACK = 12         # 0: between two stones of that colour in a link pattern
    # occupied points: the block holding the point
    SLOT_PON = 14                # 0..7: PON estimate < -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, >= 4.5
    SLOT_LADDER_ATTACKER_FIRST = 15   # 0: captured in a ladder if the opponent moves first
    SLOT_LADDER_DEFENDER_FIRST = 16   # 0: captured in a ladder if the block's colour moves first
    SLOT_BLOCK_LIBERTIES = 17    # 0..3: 1, 2, 3, >3 liberties
    SLOT_BLOCK_STONES = 18       # 0..4: 1, 2, 3, 4, >4 stones
    NUM_SLOTS = 19
    NUM_EMPTY_SLOTS = 14         # slots 0..13 belong to empty points, 14..18 to stones

# What a feature set needs computed (the rest stays NO_VALUE, and is not paid for).
cdef enum:
    NEED_TACTICS = 1             # liberties if played, atari if played
    NEED_POINT_LADDERS = 2       # captured in a ladder if playing here (two ladder reads a point)
    NEED_EYES = 4                # eye, eye moves, ponnuki
    NEED_LINKS = 8
    NEED_BLOCKS = 16             # PON, block liberties and stones
    NEED_BLOCK_LADDERS = 32      # a block captured in a ladder, either side first
    NEED_ALL = 63


cdef class BoardFeatures:
    cdef readonly int needs                  # NEED_* bits
    cdef int size, stride, num_locs
    cdef int neighbour[4]
    cdef int diagonal[4]
    # link patterns, one orientation per unordered pair of stones: the other stone at
    # (link_dx, link_dy) from the first, the link points at (link_point_dx/dy) from it
    cdef int link_dx[12]
    cdef int link_dy[12]
    cdef int link_point_dx[12][4]
    cdef int link_point_dy[12][4]
    cdef int link_count[12]
    cdef int link_offset[12]                 # the same as lattice offsets (prepare())
    cdef int link_point_offset[12][4]
    cdef int row_of[MAX_LOCS]                # loc // stride and loc % stride (prepare())
    cdef int col_of[MAX_LOCS]
    cdef int num_links
    cdef int band_dx[64]                     # (dx, dy) of the points whose change can change
    cdef int band_dy[64]                     # a point's link slots
    cdef int num_band
    cdef int diamond_dx[13]                  # (dx, dy) within Manhattan distance 2: the points
    cdef int diamond_dy[13]                  # whose change can change a block's PON
    cdef signed char value[MAX_LOCS][NUM_SLOTS]     # the base position
    cdef signed char overlay[MAX_LOCS][NUM_SLOTS]   # successor values of the overlay cells
    cdef int overlay_cells[MAX_LOCS]
    cdef readonly int num_overlay
    cdef unsigned int overlay_mark[MAX_LOCS]        # == epoch: the cell is in the overlay
    cdef unsigned int epoch
    cdef unsigned int block_mark[MAX_LOCS]          # per chain head, this epoch
    cdef unsigned int touched_mark[MAX_LOCS]        # per chain head: touches a changed point
    cdef unsigned int dirty_mark[MAX_LOCS]          # per chain head: a ladder footprint was hit
    cdef unsigned int tactics_mark[MAX_LOCS]
    cdef unsigned int pattern_mark[MAX_LOCS]
    cdef unsigned int link_mark[MAX_LOCS]
    cdef int block_list[MAX_LOCS]
    cdef int touched_list[MAX_LOCS]
    cdef int tactics_list[MAX_LOCS]
    cdef int pattern_list[MAX_LOCS]
    cdef int link_list[MAX_LOCS]
    cdef int scratch[MAX_LOCS]
    cdef unsigned int scratch_mark[MAX_LOCS]
    cdef unsigned int scratch_epoch
    # base ladder results per chain head (bit 0 attacker first, bit 1 defender first)
    cdef signed char base_block_ladder[MAX_LOCS]
    cdef readonly LadderReader ladders       # the ladder reads (and their footprints)
    # the footprints of the base position's ladder reads, indexed: per point a linked list of
    # query ids
    cdef bint record_queries                 # compute_all(record=True) is running
    cdef bint in_base                        # compute_all is running (else successor)
    cdef int first_entry[MAX_LOCS]
    cdef int *entry_query
    cdef int *entry_next
    cdef int num_entries, entries_cap
    cdef int *query_point                    # >= 0: a block (a stone of it); < 0: -1 - empty point
    cdef int num_queries, queries_cap

    cdef void prepare(self, int size)
    cdef void compute_all(self, Board board, bint record) noexcept nogil
    # Base values of every point of board; record: remember ladder footprints for successor().
    cdef void successor(self, Board board, int move) noexcept nogil
    # board has just played move (not a pass) on the base position (compute_all(board, True)):
    # fills overlay_cells[0..num_overlay) and overlay[] with every cell that may have changed.
    cdef const signed char *cell_values(self, int p) noexcept nogil
    # The successor's slots of p after successor() (the overlay, or the base when not in it).

    # internals
    cdef void point_tactics(self, Board board, int p, signed char *slots) noexcept nogil
    cdef int lone_stone_tactics(self, Board board, int p, int colour, bint *atari) noexcept nogil
    cdef void point_patterns(self, Board board, int p, signed char *slots) noexcept nogil
    cdef void point_links(self, Board board, int p, signed char *slots) noexcept nogil
    cdef void block_values(self, Board board, int head, bint reuse_ladders,
                           signed char *slots) noexcept nogil
    cdef void begin_query(self) noexcept nogil
    cdef void end_query(self, int query_point) noexcept nogil
    cdef signed char *overlay_cell(self, int p) noexcept nogil
    cdef inline int shifted(self, int p, int dx, int dy) noexcept nogil
    cdef void _clear_marks(self) noexcept nogil
