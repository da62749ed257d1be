# The ladder reader: the C layout and the contracts of engine/tactics/ladder.pyx.
#
# A read plays and undoes on the board it is given (with the board's journal on and its reading
# mode, see Board.reading) and leaves it exactly as it found it. The ko point at the root is the
# board's: a caller that wants it ignored (the nets' features do) clears board.ko_loc around the
# read. One reader per thread: it is scratch.
#
# Footprints (for the nets' incremental features, engine/nets/features.pyx): while `recording`
# is set, a read adds to footprint[0..footprint_len) every point whose change could change its
# result: the points it reads, less the liberties of chains that have three or more (see
# footprint_reader_chain()) and of the defender's chains next to an escape seen with four or more
# (see footprint_reader_area()). begin_footprint() empties the list; the caller may add points of
# its own with footprint_point() / footprint_chain() / footprint_area().

from libc.string cimport memset
from engine.rules.board cimport Board
from engine.rules.types cimport MAX_LOCS

cdef enum:
    MAX_LADDER_DEPTH = 100       # moves read; a ladder still unresolved there counts as escaped
    MAX_LADDER_NODES = 5000      # positions read, likewise (real ladders read tens to hundreds)
    MAX_ESCAPES = 64             # escape moves of one ladder node (liberties + ataried attackers)


cdef class LadderReader:
    cdef int size
    cdef int neighbour[4]                    # +1, -1, +stride, -stride (prepare())
    # the read under way
    cdef int ladder_stone, ladder_defender, ladder_attacker, ladder_nodes
    cdef bint ladder_exhausted
    cdef int known_attacker_result           # -1, or the block's attacker-first result (set by a
                                             # caller that has just read it: the defender-first
                                             # read of a two-liberty block reuses it)
    cdef int known_liberties                 # -1, or how many of ladder_libs the next
                                             # attacker_captures() takes as its block's
    cdef int ladder_libs[MAX_LOCS]
    cdef unsigned int escape_mark[MAX_LOCS]  # surely_escapes()'s liberty marks
    cdef unsigned int escape_epoch
    cdef bint escape_wide                    # surely_escapes() counted four or more (recording)
    cdef unsigned int walk_mark[MAX_LOCS]    # walk_ladder_block()'s marks
    cdef unsigned int walk_epoch
    cdef readonly long long reads_made, nodes_visited   # statistics (benchmarks, tests)
    # the footprint of the reads made while recording
    cdef bint recording
    cdef unsigned int footprint_mark[MAX_LOCS]
    cdef unsigned int footprint_epoch
    cdef int *footprint
    cdef int footprint_len, footprint_cap

    cdef void prepare(self, int size)
    # Before reading on a board of size (cheap when the size is the last one).
    cdef bint read(self, Board board, int stone, bint attacker_first) noexcept nogil
    # Whether the block at stone (a stone of it) is captured in a ladder, the attacker moving
    # first or the defender. Plays and undoes on board.

    # footprints
    cdef void begin_footprint(self) noexcept nogil
    cdef void footprint_point(self, int p) noexcept nogil
    cdef void footprint_chain(self, Board board, int p) noexcept nogil
    cdef void footprint_area(self, Board board, int p) noexcept nogil
    cdef void footprint_reader_chain(self, Board board, int p) noexcept nogil
    cdef void footprint_reader_area(self, Board board, int p, int whole_colour,
                                    bint whole_liberties) noexcept nogil

    # internals
    cdef inline unsigned int new_walk_epoch(self) noexcept nogil:
        # A fresh mark for walk_mark (a wrapped counter clears the marks first); inline from here
        # because the reader takes one per block walk.
        self.walk_epoch += 1
        if self.walk_epoch == 0:
            memset(self.walk_mark, 0, sizeof(self.walk_mark))
            self.walk_epoch = 1
        return self.walk_epoch

    cdef int walk_ladder_block(self, Board board, int *heads, int *stones,
                               int *num_heads) noexcept nogil
    cdef bint extends_block_alone(self, Board board, int x) noexcept nogil
    cdef int extended_liberties(self, Board board, int x, const int *before,
                                int num_before) noexcept nogil
    cdef bint attacker_captures(self, Board board, int depth) noexcept nogil
    cdef bint defender_loses(self, Board board, int depth) noexcept nogil
    cdef bint surely_escapes(self, Board board, int x, int filled, const int *ladder_libs,
                             int num_ladder_libs) noexcept nogil
    cdef bint count_escaped_nodes(self, int count) noexcept nogil
