# The fast board: stones, chains, pseudo-liberties, captures, simple ko, Zobrist hash, play/undo.
# It knows no game rules beyond that: superko, history, passes and scoring live in engine/rules/game.py.
#
# Contracts
# - Points are flat indices into the padded (size+2)^2 array (see types.pxd); the border holds WALL.
# - Chains: chain_head[p] is the head of the chain holding stone p; next_in_chain[] is a circular
#   ring through the chain's stones. Per-chain counters are valid at the head only.
# - Liberties are counted as pseudo-liberties (one per stone-to-empty-point adjacency) with the sum
#   and the sum of squares of those points, so "exactly one distinct liberty" is exact:
#   libs * sum_sq == sum * sum. True counts come from chain_liberty_count() on demand.
# - Every write made by play_move() goes through a journal, so undo_move() restores the board
#   exactly, in LIFO order. copy() gives a board with the same position and an empty undo history.

from engine.rules.types cimport loc_t, MAX_LOCS, EMPTY as C_EMPTY, WALL as C_WALL

# Reasons returned by illegal_reason(); the Python boundary turns them into IllegalMove texts.
cdef enum:
    LEGAL = 0
    ILLEGAL_OCCUPIED = 1
    ILLEGAL_SUICIDE = 2
    ILLEGAL_KO = 3

ctypedef unsigned long long hash_t

cdef struct JournalEntry:
    int *address
    int old_value

cdef struct MoveRecord:
    loc_t loc               # PASS_LOC for a pass
    int colour
    int journal_start       # journal length before the move
    hash_t old_hash
    int captured_start      # index into captured_log where this move's captured stones begin

cdef class Board:
    cdef readonly int size
    cdef readonly int stride                 # size + 2
    cdef readonly int num_locs               # stride * stride
    cdef int colour[MAX_LOCS]                # EMPTY / BLACK / WHITE / WALL
    cdef int chain_head[MAX_LOCS]
    cdef int next_in_chain[MAX_LOCS]
    cdef int chain_size[MAX_LOCS]            # stones, at the head
    cdef int pseudo_libs[MAX_LOCS]           # stone-empty adjacencies, at the head
    cdef int lib_sum[MAX_LOCS]               # sum of those empty points, at the head
    cdef int lib_sum_sq[MAX_LOCS]            # sum of their squares, at the head
    cdef int empty_list[MAX_LOCS]            # the empty points, unordered
    cdef int empty_index[MAX_LOCS]           # position of an empty point in empty_list
    cdef int num_empty
    cdef readonly int ko_loc                 # point the side to move may not retake, or NO_LOC
    cdef int ko_colour                       # the colour barred from ko_loc
    cdef int captured_by[3]                  # stones captured BY black [1] and white [2]
    cdef hash_t zobrist
    cdef int neighbour_offset[4]
    cdef int diagonal_offset[4]
    # undo machinery
    cdef bint recording                      # journal writes (off only in throw-away playouts)
    cdef bint reading                        # moves that are only read and undone (the ladder
                                             # reader): they leave the empty list, the hash and
                                             # the capture counts as they were, which undo then
                                             # finds unchanged; set it only around such moves
    cdef JournalEntry *journal
    cdef int journal_len, journal_cap
    cdef MoveRecord *moves
    cdef int num_moves, moves_cap
    cdef int *captured_log                   # stones removed by each recorded move, in order
    cdef int captured_len, captured_cap
    # scratch for marking points without clearing arrays
    cdef unsigned int mark[MAX_LOCS]
    cdef unsigned int mark_epoch
    cdef unsigned long long rng_state        # xorshift state for playouts

    # --- hot path (nogil, no checks beyond what is stated) ---
    cdef inline void _set(self, int *address, int value) noexcept nogil
    cdef bint would_capture(self, loc_t p, int colour) noexcept nogil
    # Defined here, not in board.pyx, so the modules that cimport Board (the ladder reader) inline
    # them instead of calling through the vtable.
    cdef inline int illegal_reason(self, loc_t p, int colour) noexcept nogil:
        # 0 if legal under simple ko with suicide forbidden, else ILLEGAL_OCCUPIED/SUICIDE/KO.
        cdef int i, c
        cdef loc_t q
        if self.colour[p] != C_EMPTY:
            return ILLEGAL_OCCUPIED
        if p == self.ko_loc and colour == self.ko_colour:
            return ILLEGAL_KO
        for i in range(4):
            q = p + self.neighbour_offset[i]
            c = self.colour[q]
            if c == C_EMPTY:
                return LEGAL
            if c == colour:
                if not self.in_atari(self.chain_head[q]):
                    return LEGAL
            elif c != C_WALL and self.in_atari(self.chain_head[q]):
                return LEGAL  # captures: its only liberty is p
        return ILLEGAL_SUICIDE

    cdef inline bint is_legal_fast(self, loc_t p, int colour) noexcept nogil:
        return self.illegal_reason(p, colour) == LEGAL

    cdef inline bint in_atari(self, loc_t head) noexcept nogil:   # exactly one distinct liberty
        cdef long long n = self.pseudo_libs[head]
        cdef long long s = self.lib_sum[head]
        return n > 0 and n * <long long> self.lib_sum_sq[head] == s * s

    cdef inline loc_t atari_liberty(self, loc_t head) noexcept nogil:  # (assumes in_atari)
        return self.lib_sum[head] // self.pseudo_libs[head]

    cdef void play_move(self, loc_t p, int colour, bint allow_suicide) noexcept nogil
    # Plays p (or PASS_LOC) for colour. Assumes the move is legal (or a suicide with allow_suicide).
    cdef void undo_move(self) noexcept nogil                   # LIFO; assumes num_moves > 0
    cdef int last_move_captured(self, int **stones) noexcept nogil
    # Stones captured by the last recorded move (pointer into the log) and their number.
    cdef bint is_eye_fast(self, loc_t p, int colour) noexcept nogil
    cdef int chain_liberty_count(self, loc_t p) noexcept nogil  # true count; p holds a stone
    cdef int chain_liberties_into(self, loc_t p, int *out) noexcept nogil  # true liberties -> out
    cdef int liberties_if_played_fast(self, loc_t p, int colour) noexcept nogil
    cdef unsigned int new_mark_epoch(self) noexcept nogil
    cdef unsigned long long next_random(self) noexcept nogil
    cdef int random_playout(self, int colour, int max_moves) noexcept nogil
    cdef hash_t hash_after(self, loc_t p, int colour) noexcept nogil
    # The stones hash after colour plays the legal move p (superko checks without playing when
    # p captures nothing).
    cdef void copy_position_from(self, Board other) noexcept nogil
    # The position of other (same size): stones, chains, liberties, empty list, ko, captures and
    # hash; the undo history emptied and recording off, as playouts want. The random state stays.
    cdef inline void _reserve_journal(self) noexcept nogil  # room for one move's writes
    # internals of play_move / setup
    cdef void _reset_arrays(self, int size)
    cdef void _log_liberty_counters(self, loc_t head) noexcept nogil
    cdef void _add_liberty_edge(self, loc_t head, loc_t lib) noexcept nogil
    cdef void _remove_liberty_edge(self, loc_t head, loc_t lib) noexcept nogil
    cdef void _remove_from_empty(self, loc_t p) noexcept nogil
    cdef void _add_to_empty(self, loc_t p) noexcept nogil
    cdef void _merge_chains(self, loc_t keep, loc_t absorb) noexcept nogil
    cdef int _remove_chain(self, loc_t head) noexcept nogil
    cdef loc_t _place_stone(self, loc_t p, int colour) noexcept nogil
    cdef void _play_unrecorded(self, loc_t p, int colour) noexcept nogil
    cdef void _check_point(self, loc_t p) except *
    cdef void _check_colour(self, int colour) except *
    cdef void _check_stone(self, loc_t p) except *

    # --- Python API (see board.pyx for docstrings) ---
    cpdef Board copy(self)
    cpdef void play(self, loc_t p, int colour, bint allow_suicide=*) except *
    cpdef void undo(self) except *
    cpdef bint is_legal(self, loc_t p, int colour, bint allow_suicide=*)
    cpdef list legal_moves(self, int colour, bint allow_suicide=*)
    cpdef int get(self, loc_t p)
    cpdef loc_t loc(self, int row, int col)
    cpdef bint is_eye(self, loc_t p, int colour)
    cpdef int liberty_count(self, loc_t p)
    cpdef list liberties(self, loc_t p)
    cpdef list chain(self, loc_t p)
    cpdef int liberties_if_played(self, loc_t p, int colour)
