# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The fast board. Reading order: play_move() and undo_move() first, then the queries below them.

Rules beyond simple ko (superko, passes ending the game, scoring) live in engine/rules/game.py.
See board.pxd for the data layout and the contracts of every cdef method.
"""

cimport cython
from libc.stdio cimport fprintf, stderr
from libc.stdlib cimport abort, malloc, realloc, free
from libc.string cimport memcpy

from engine.rules.types cimport (EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE, WALL as C_WALL,
                           PASS_LOC, NO_LOC as NO_LOC_, MIN_SIZE, MAX_SIZE, MAX_LOCS)

EMPTY = C_EMPTY
BLACK = C_BLACK
WHITE = C_WHITE
WALL = C_WALL
PASS = PASS_LOC
NO_LOC = NO_LOC_  # Python name of the "no point" value

# Journal room reserved before each move: a bound on the entries one move writes (see
# Board._reserve_journal).
cdef enum:
    JOURNAL_ROOM_BASE = 128
    JOURNAL_ROOM_PER_POINT = 24

REASON_TEXT = {ILLEGAL_OCCUPIED: "occupied", ILLEGAL_SUICIDE: "suicide", ILLEGAL_KO: "ko"}


class IllegalMove(ValueError):
    """A move the rules refuse; .reason is "occupied", "suicide", "ko" or "superko"."""

    def __init__(self, reason, message=None):
        super().__init__(message or f"illegal move ({reason})")
        self.reason = reason

    def __reduce__(self):
        # rebuilt from its own arguments, so the message survives the trip from a worker process
        return type(self), (self.reason, str(self))


def opponent(int colour):
    return 3 - colour


# Zobrist keys: a fixed-seed table built once per process (splitmix64), so hashes are reproducible.
cdef hash_t ZOBRIST[3][MAX_LOCS]


cdef hash_t _splitmix64(hash_t *state) noexcept nogil:
    state[0] += 0x9E3779B97F4A7C15ULL
    cdef hash_t z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef void _init_zobrist():
    cdef hash_t seed = 0x6B6F73756D69ULL  # "kosumi"
    cdef int c, p
    for c in range(3):
        for p in range(MAX_LOCS):
            ZOBRIST[c][p] = _splitmix64(&seed) if c != C_EMPTY else 0

_init_zobrist()


cdef void *grown(void *block, size_t size) noexcept nogil:
    # The undo buffers only grow with a game's length (well under a megabyte on 19x19); running
    # out of memory inside the nogil hot path cannot be reported, and carrying on would corrupt
    # the board, so it is fatal.
    cdef void *bigger = realloc(block, size)
    if bigger == NULL:
        fprintf(stderr, b"kosumi: out of memory growing the board's undo buffers\n")
        abort()
    return bigger


cdef class Board:

    def __cinit__(self, int size=9):
        if size < MIN_SIZE or size > MAX_SIZE:
            raise ValueError(f"board size {size} is outside {MIN_SIZE}..{MAX_SIZE}")
        self.journal_cap = 1024
        self.moves_cap = 64
        self.captured_cap = 256
        self.journal = <JournalEntry *> malloc(self.journal_cap * sizeof(JournalEntry))
        self.moves = <MoveRecord *> malloc(self.moves_cap * sizeof(MoveRecord))
        self.captured_log = <int *> malloc(self.captured_cap * sizeof(int))
        if self.journal == NULL or self.moves == NULL or self.captured_log == NULL:
            raise MemoryError()
        self._reset(size)

    def __dealloc__(self):
        free(self.journal)
        free(self.moves)
        free(self.captured_log)

    cdef void _reset_arrays(self, int size):
        cdef int p, row, col
        self.size = size
        self.stride = size + 2
        self.num_locs = self.stride * self.stride
        self.num_empty = 0
        for p in range(MAX_LOCS):
            self.colour[p] = C_WALL
            self.chain_head[p] = NO_LOC_
            self.next_in_chain[p] = NO_LOC_
            self.chain_size[p] = 0
            self.pseudo_libs[p] = 0
            self.lib_sum[p] = 0
            self.lib_sum_sq[p] = 0
            self.empty_index[p] = -1
            self.mark[p] = 0
        for row in range(size):
            for col in range(size):
                p = (row + 1) * self.stride + col + 1
                self.colour[p] = C_EMPTY
                self.empty_index[p] = self.num_empty
                self.empty_list[self.num_empty] = p
                self.num_empty += 1
        self.neighbour_offset[0] = 1
        self.neighbour_offset[1] = -1
        self.neighbour_offset[2] = self.stride
        self.neighbour_offset[3] = -self.stride
        self.diagonal_offset[0] = self.stride + 1
        self.diagonal_offset[1] = self.stride - 1
        self.diagonal_offset[2] = -self.stride + 1
        self.diagonal_offset[3] = -self.stride - 1
        self.ko_loc = NO_LOC_
        self.ko_colour = C_EMPTY
        self.captured_by[0] = self.captured_by[1] = self.captured_by[2] = 0
        self.zobrist = 0
        self.mark_epoch = 0
        self.recording = True
        self.reading = False
        self.journal_len = 0
        self.num_moves = 0
        self.captured_len = 0
        self.rng_state = 0x2545F4914F6CDD1DULL

    def _reset(self, int size):
        self._reset_arrays(size)

    # ------------------------------------------------------------------ hot path

    cdef inline void _set(self, int *address, int value) noexcept nogil:
        # Room was reserved by _reserve_journal() (one check per move, not per write); a write
        # that changes nothing needs no undo entry (ko_loc staying NO_LOC, a new stone's zero
        # counters), so it is skipped.
        cdef JournalEntry *entry
        if address[0] == value:
            return
        if self.recording:
            entry = self.journal + self.journal_len
            entry.address = address
            entry.old_value = address[0]
            self.journal_len += 1
        address[0] = value

    cdef inline void _reserve_journal(self) noexcept nogil:
        # One move writes at most about 100 + 18 * (stones merged or captured) entries (see
        # _place_stone, _merge_chains, _remove_chain); JOURNAL_ROOM_PER_POINT per point of the
        # board bounds that with room to spare.
        cdef int needed = self.journal_len + JOURNAL_ROOM_BASE + JOURNAL_ROOM_PER_POINT * self.size * self.size
        if needed > self.journal_cap:
            while self.journal_cap < needed:
                self.journal_cap *= 2
            self.journal = <JournalEntry *> grown(self.journal, self.journal_cap * sizeof(JournalEntry))

    cdef inline void _log_liberty_counters(self, loc_t head) noexcept nogil:
        # The three counters of an edge change always (lib > 0): journal them without _set's
        # no-op test, in one go.
        cdef JournalEntry *entry
        if self.recording:
            entry = self.journal + self.journal_len
            entry[0].address = &self.pseudo_libs[head]
            entry[0].old_value = self.pseudo_libs[head]
            entry[1].address = &self.lib_sum[head]
            entry[1].old_value = self.lib_sum[head]
            entry[2].address = &self.lib_sum_sq[head]
            entry[2].old_value = self.lib_sum_sq[head]
            self.journal_len += 3

    cdef inline void _add_liberty_edge(self, loc_t head, loc_t lib) noexcept nogil:
        self._log_liberty_counters(head)
        self.pseudo_libs[head] += 1
        self.lib_sum[head] += lib
        self.lib_sum_sq[head] += lib * lib

    cdef inline void _remove_liberty_edge(self, loc_t head, loc_t lib) noexcept nogil:
        self._log_liberty_counters(head)
        self.pseudo_libs[head] -= 1
        self.lib_sum[head] -= lib
        self.lib_sum_sq[head] -= lib * lib

    cdef inline void _remove_from_empty(self, loc_t p) noexcept nogil:
        cdef int i = self.empty_index[p]
        cdef loc_t last = self.empty_list[self.num_empty - 1]
        self._set(&self.empty_list[i], last)
        self._set(&self.empty_index[last], i)
        self._set(&self.empty_index[p], -1)
        self._set(&self.num_empty, self.num_empty - 1)

    cdef inline void _add_to_empty(self, loc_t p) noexcept nogil:
        self._set(&self.empty_list[self.num_empty], p)
        self._set(&self.empty_index[p], self.num_empty)
        self._set(&self.num_empty, self.num_empty + 1)

    cdef bint would_capture(self, loc_t p, int colour) noexcept nogil:
        cdef int i, c
        cdef loc_t q
        for i in range(4):
            q = p + self.neighbour_offset[i]
            c = self.colour[q]
            if c == 3 - colour and self.in_atari(self.chain_head[q]):
                return True
        return False

    cdef void _merge_chains(self, loc_t keep, loc_t absorb) noexcept nogil:
        """Relabel the chain headed by absorb into the chain headed by keep and splice the rings."""
        cdef loc_t q = absorb
        while True:
            self._set(&self.chain_head[q], keep)
            q = self.next_in_chain[q]
            if q == absorb:
                break
        cdef loc_t keep_next = self.next_in_chain[keep]
        self._set(&self.next_in_chain[keep], self.next_in_chain[absorb])
        self._set(&self.next_in_chain[absorb], keep_next)
        self._set(&self.chain_size[keep], self.chain_size[keep] + self.chain_size[absorb])
        self._set(&self.pseudo_libs[keep], self.pseudo_libs[keep] + self.pseudo_libs[absorb])
        self._set(&self.lib_sum[keep], self.lib_sum[keep] + self.lib_sum[absorb])
        self._set(&self.lib_sum_sq[keep], self.lib_sum_sq[keep] + self.lib_sum_sq[absorb])

    cdef int _remove_chain(self, loc_t head) noexcept nogil:
        """Take the chain off the board (capture); neighbouring chains gain the liberties."""
        cdef int removed = 0, i, stone_colour = self.colour[head]
        cdef loc_t q = head, r, next_q
        while True:
            next_q = self.next_in_chain[q]
            self._set(&self.colour[q], C_EMPTY)
            if not self.reading:
                self.zobrist ^= ZOBRIST[stone_colour][q]
                self._add_to_empty(q)
            if self.captured_len == self.captured_cap:
                self.captured_cap *= 2
                self.captured_log = <int *> grown(self.captured_log, self.captured_cap * sizeof(int))
            self.captured_log[self.captured_len] = q
            self.captured_len += 1
            removed += 1
            q = next_q
            if q == head:
                break
        # Second pass: every former stone is now an empty point adjacent to other chains.
        for i in range(removed):
            q = self.captured_log[self.captured_len - removed + i]
            self._set(&self.chain_head[q], NO_LOC_)
            self._set(&self.next_in_chain[q], NO_LOC_)
            for r in range(4):
                next_q = q + self.neighbour_offset[r]
                if self.colour[next_q] == C_BLACK or self.colour[next_q] == C_WHITE:
                    self._add_liberty_edge(self.chain_head[next_q], q)
        self._set(&self.chain_size[head], 0)
        self._set(&self.pseudo_libs[head], 0)
        self._set(&self.lib_sum[head], 0)
        self._set(&self.lib_sum_sq[head], 0)
        return removed

    cdef loc_t _place_stone(self, loc_t p, int colour) noexcept nogil:
        """Put a stone on the empty point p, update the neighbours' liberties and merge it with
        friendly chains (the larger chain keeps its head). Returns the head of its chain.
        Captures are the caller's business."""
        cdef int i, c, edges = 0, edge_sum = 0, edge_sum_sq = 0
        cdef loc_t q, head, own_head
        self._set(&self.colour[p], colour)
        if not self.reading:
            self.zobrist ^= ZOBRIST[colour][p]
            self._remove_from_empty(p)
        for i in range(4):
            q = p + self.neighbour_offset[i]
            c = self.colour[q]
            if c == C_EMPTY:
                edges += 1
                edge_sum += q
                edge_sum_sq += q * q
            elif c != C_WALL:
                self._remove_liberty_edge(self.chain_head[q], p)
        own_head = NO_LOC_
        for i in range(4):
            q = p + self.neighbour_offset[i]
            if self.colour[q] == colour:
                head = self.chain_head[q]
                if own_head == NO_LOC_:
                    # Join the first friendly chain directly: what _merge_chains(head, p) does
                    # with p a one-stone chain (p goes right after the head in the ring), without
                    # making that chain first. p's own counters are never read again.
                    self._set(&self.chain_head[p], head)
                    self._set(&self.next_in_chain[p], self.next_in_chain[head])
                    self._set(&self.next_in_chain[head], p)
                    self._set(&self.chain_size[head], self.chain_size[head] + 1)
                    self._log_liberty_counters(head)
                    self.pseudo_libs[head] += edges
                    self.lib_sum[head] += edge_sum
                    self.lib_sum_sq[head] += edge_sum_sq
                    own_head = head
                elif head == own_head:
                    continue
                elif self.chain_size[head] >= self.chain_size[own_head]:
                    self._merge_chains(head, own_head)
                    own_head = head
                else:
                    self._merge_chains(own_head, head)
        if own_head == NO_LOC_:
            # A chain of its own: its counters written (and journaled) once, not edge by edge.
            self._set(&self.chain_head[p], p)
            self._set(&self.next_in_chain[p], p)
            self._set(&self.chain_size[p], 1)
            self._set(&self.pseudo_libs[p], edges)
            self._set(&self.lib_sum[p], edge_sum)
            self._set(&self.lib_sum_sq[p], edge_sum_sq)
            own_head = p
        return own_head

    cdef void play_move(self, loc_t p, int colour, bint allow_suicide) noexcept nogil:
        cdef int i, c, captured = 0, opp = 3 - colour
        cdef loc_t q, head, own_head, captured_point = NO_LOC_
        if self.num_moves == self.moves_cap:
            self.moves_cap *= 2
            self.moves = <MoveRecord *> grown(self.moves, self.moves_cap * sizeof(MoveRecord))
        self.moves[self.num_moves].loc = p
        self.moves[self.num_moves].colour = colour
        self.moves[self.num_moves].journal_start = self.journal_len
        self.moves[self.num_moves].old_hash = self.zobrist
        self.moves[self.num_moves].captured_start = self.captured_len
        self.num_moves += 1
        self._reserve_journal()
        if p == PASS_LOC:
            self._set(&self.ko_loc, NO_LOC_)
            return
        own_head = self._place_stone(p, colour)
        # Capture opponent chains left without liberties.
        for i in range(4):
            q = p + self.neighbour_offset[i]
            if self.colour[q] == opp and self.pseudo_libs[self.chain_head[q]] == 0:
                if captured == 0:
                    captured_point = q
                captured += self._remove_chain(self.chain_head[q])
        if captured == 0 and self.pseudo_libs[own_head] == 0:
            # Suicide, only reached when allowed: the mover's own chain is captured.
            self._set(&self.captured_by[opp], self.captured_by[opp] + self._remove_chain(own_head))
            self._set(&self.ko_loc, NO_LOC_)
            return
        if not self.reading:
            self._set(&self.captured_by[colour], self.captured_by[colour] + captured)
        # Simple ko: one stone captured by a lone stone that now has that point as its only liberty.
        if captured == 1 and self.chain_size[own_head] == 1 and self.pseudo_libs[own_head] == 1:
            self._set(&self.ko_loc, captured_point)
            self._set(&self.ko_colour, opp)
        else:
            self._set(&self.ko_loc, NO_LOC_)

    cdef void undo_move(self) noexcept nogil:
        self.num_moves -= 1
        cdef MoveRecord *record = &self.moves[self.num_moves]
        cdef JournalEntry *entry = self.journal + self.journal_len
        cdef JournalEntry *start = self.journal + record.journal_start
        # Restores may write into this object's own fields (num_empty, ko_loc): walk with locals.
        while entry != start:
            entry -= 1
            entry.address[0] = entry.old_value
        self.journal_len = record.journal_start
        self.zobrist = record.old_hash
        self.captured_len = record.captured_start

    cdef int last_move_captured(self, int **stones) noexcept nogil:
        cdef int start = self.moves[self.num_moves - 1].captured_start
        stones[0] = self.captured_log + start
        return self.captured_len - start

    # ------------------------------------------------------------------ queries (nogil)

    cdef unsigned int new_mark_epoch(self) noexcept nogil:
        cdef int p
        self.mark_epoch += 1
        if self.mark_epoch == 0:  # wrapped: clear once every 2^32 queries
            for p in range(MAX_LOCS):
                self.mark[p] = 0
            self.mark_epoch = 1
        return self.mark_epoch

    cdef int chain_liberties_into(self, loc_t p, int *out) noexcept nogil:
        cdef unsigned int epoch = self.new_mark_epoch()
        cdef int count = 0, i
        cdef loc_t head = self.chain_head[p], q = head, r
        while True:
            for i in range(4):
                r = q + self.neighbour_offset[i]
                if self.colour[r] == C_EMPTY and self.mark[r] != epoch:
                    self.mark[r] = epoch
                    if out != NULL:
                        out[count] = r
                    count += 1
            q = self.next_in_chain[q]
            if q == head:
                break
        return count

    cdef int chain_liberty_count(self, loc_t p) noexcept nogil:
        return self.chain_liberties_into(p, NULL)

    cdef int liberties_if_played_fast(self, loc_t p, int colour) noexcept nogil:
        cdef int count
        if self.illegal_reason(p, colour) != LEGAL:
            return 0
        cdef bint was_recording = self.recording
        self.recording = True
        self.play_move(p, colour, False)
        count = self.chain_liberty_count(p)
        self.undo_move()
        self.recording = was_recording
        return count

    cdef bint is_eye_fast(self, loc_t p, int colour) noexcept nogil:
        cdef int i, c, opponent_diagonals = 0, wall_diagonals = 0
        if self.colour[p] != C_EMPTY:
            return False
        for i in range(4):
            c = self.colour[p + self.neighbour_offset[i]]
            if c != colour and c != C_WALL:
                return False
        for i in range(4):
            c = self.colour[p + self.diagonal_offset[i]]
            if c == C_WALL:
                wall_diagonals += 1
            elif c == 3 - colour:
                opponent_diagonals += 1
        # A false eye: on the edge or in the corner one opposing diagonal suffices, inside two.
        if wall_diagonals > 0:
            return opponent_diagonals == 0
        return opponent_diagonals < 2

    cdef unsigned long long next_random(self) noexcept nogil:
        # xorshift64*: fast, good enough for playouts and tie-breaking.
        self.rng_state ^= self.rng_state >> 12
        self.rng_state ^= self.rng_state << 25
        self.rng_state ^= self.rng_state >> 27
        return self.rng_state * 0x2545F4914F6CDD1DULL

    cdef int random_playout(self, int colour, int max_moves) noexcept nogil:
        """Uniform random moves, never into own eyes, until two passes or max_moves. Not journaled:
        the board is left in the final position with the undo history of before the playout."""
        cdef int moves = 0, passes = 0, start, i, n
        cdef loc_t p
        cdef bint was_recording = self.recording
        cdef bint played
        self.recording = False
        while passes < 2 and moves < max_moves:
            n = self.num_empty
            played = False
            if n > 0:
                start = <int> (self.next_random() % <unsigned long long> n)
                for i in range(n):
                    p = self.empty_list[(start + i) % n]
                    if not self.is_eye_fast(p, colour) and self.illegal_reason(p, colour) == LEGAL:
                        self._play_unrecorded(p, colour)
                        played = True
                        break
            if played:
                passes = 0
            else:
                self.ko_loc = NO_LOC_
                passes += 1
            colour = 3 - colour
            moves += 1
        self.recording = was_recording
        return moves

    cdef void _play_unrecorded(self, loc_t p, int colour) noexcept nogil:
        # play_move without a move record: used only by playouts, which never undo.
        self.play_move(p, colour, False)
        self.num_moves -= 1
        self.captured_len = self.moves[self.num_moves].captured_start

    # ------------------------------------------------------------------ Python API

    cdef hash_t hash_after(self, loc_t p, int colour) noexcept nogil:
        cdef int i
        cdef loc_t q
        cdef hash_t h
        cdef bint was_recording = self.recording
        for i in range(4):
            q = p + self.neighbour_offset[i]
            if self.colour[q] == 3 - colour and self.in_atari(self.chain_head[q]):
                self.recording = True
                self.play_move(p, colour, False)
                h = self.zobrist
                self.undo_move()
                self.recording = was_recording
                return h
        return self.zobrist ^ ZOBRIST[colour][p]

    cdef void copy_position_from(self, Board other) noexcept nogil:
        # Only the points in use are copied: a 9x9 board is 121 of the 729 slots.
        cdef size_t used = other.num_locs * sizeof(int)
        memcpy(self.colour, other.colour, used)
        memcpy(self.chain_head, other.chain_head, used)
        memcpy(self.next_in_chain, other.next_in_chain, used)
        memcpy(self.chain_size, other.chain_size, used)
        memcpy(self.pseudo_libs, other.pseudo_libs, used)
        memcpy(self.lib_sum, other.lib_sum, used)
        memcpy(self.lib_sum_sq, other.lib_sum_sq, used)
        memcpy(self.empty_list, other.empty_list, other.num_empty * sizeof(int))
        memcpy(self.empty_index, other.empty_index, used)
        self.num_empty = other.num_empty
        self.ko_loc = other.ko_loc
        self.ko_colour = other.ko_colour
        self.captured_by[1] = other.captured_by[1]
        self.captured_by[2] = other.captured_by[2]
        self.zobrist = other.zobrist
        self.num_moves = 0
        self.journal_len = 0
        self.captured_len = 0
        self.recording = False

    cpdef Board copy(self):
        """The same position with an empty undo history."""
        cdef Board other = Board.__new__(Board, self.size)
        other.copy_position_from(self)
        other.recording = True
        other.rng_state = self.rng_state
        return other

    cdef void _check_point(self, loc_t p) except *:
        if p == PASS_LOC:
            return
        if p < 0 or p >= self.num_locs or self.colour[p] == C_WALL:
            raise ValueError(f"point {p} is not on the {self.size}x{self.size} board")

    cdef void _check_colour(self, int colour) except *:
        if colour != C_BLACK and colour != C_WHITE:
            raise ValueError(f"colour must be BLACK (1) or WHITE (2), not {colour}")

    cpdef void play(self, loc_t p, int colour, bint allow_suicide=False) except *:
        """Play p (or PASS) for colour; raises IllegalMove("occupied"/"suicide"/"ko")."""
        self._check_colour(colour)
        self._check_point(p)
        cdef int reason = LEGAL
        if p != PASS_LOC:
            reason = self.illegal_reason(p, colour)
            if reason == ILLEGAL_SUICIDE and allow_suicide:
                reason = LEGAL
        if reason != LEGAL:
            raise IllegalMove(REASON_TEXT[reason])
        self.play_move(p, colour, allow_suicide)

    cpdef void undo(self) except *:
        """Take back the last move (exactly, LIFO); IndexError when there is none."""
        if self.num_moves == 0:
            raise IndexError("cannot undo")
        self.undo_move()

    cpdef bint is_legal(self, loc_t p, int colour, bint allow_suicide=False):
        """Legal under simple ko (superko is engine.rules.game's business); pass is always legal."""
        if p == PASS_LOC:
            return True
        self._check_colour(colour)
        self._check_point(p)
        cdef int reason = self.illegal_reason(p, colour)
        return reason == LEGAL or (reason == ILLEGAL_SUICIDE and allow_suicide)

    cpdef list legal_moves(self, int colour, bint allow_suicide=False):
        """On-board points legal for colour (simple ko), in increasing loc order; no pass."""
        self._check_colour(colour)
        cdef list moves = []
        cdef int reason
        cdef loc_t p
        for p in range(self.num_locs):
            if self.colour[p] == C_EMPTY:
                reason = self.illegal_reason(p, colour)
                if reason == LEGAL or (reason == ILLEGAL_SUICIDE and allow_suicide):
                    moves.append(p)
        return moves

    cpdef int get(self, loc_t p):
        if p < 0 or p >= self.num_locs:
            raise ValueError(f"point {p} is outside the padded {self.size}x{self.size} board")
        return self.colour[p]

    cpdef loc_t loc(self, int row, int col):
        if not (0 <= row < self.size and 0 <= col < self.size):
            raise ValueError(f"({row}, {col}) is off the {self.size}x{self.size} board")
        return (row + 1) * self.stride + col + 1

    def row_col(self, loc_t p):
        self._check_point(p)
        return p // self.stride - 1, p % self.stride - 1

    def points(self):
        """Every on-board loc, top row first."""
        return [(row + 1) * self.stride + col + 1
                for row in range(self.size) for col in range(self.size)]

    def stones(self, int colour):
        self._check_colour(colour)
        return [p for p in self.points() if self.colour[p] == colour]

    cpdef bint is_eye(self, loc_t p, int colour):
        self._check_colour(colour)
        self._check_point(p)
        return p != PASS_LOC and self.is_eye_fast(p, colour)

    cdef void _check_stone(self, loc_t p) except *:
        self._check_point(p)
        if p == PASS_LOC or (self.colour[p] != C_BLACK and self.colour[p] != C_WHITE):
            raise ValueError(f"no stone at point {p}")

    cpdef int liberty_count(self, loc_t p):
        """True number of liberties of the chain holding p."""
        self._check_stone(p)
        return self.chain_liberty_count(p)

    cpdef list liberties(self, loc_t p):
        self._check_stone(p)
        cdef int out[MAX_LOCS]
        cdef int n = self.chain_liberties_into(p, out)
        cdef list found = [out[i] for i in range(n)]
        found.sort()
        return found

    cpdef list chain(self, loc_t p):
        """The stones of the chain holding p, sorted."""
        self._check_stone(p)
        cdef list stones = []
        cdef loc_t q = p
        while True:
            stones.append(q)
            q = self.next_in_chain[q]
            if q == p:
                break
        return sorted(stones)

    cpdef int liberties_if_played(self, loc_t p, int colour):
        """True liberties of the chain colour would make by playing p (captures included); 0 if illegal."""
        self._check_colour(colour)
        self._check_point(p)
        if p == PASS_LOC:
            return 0
        return self.liberties_if_played_fast(p, colour)

    def playout(self, int colour, int max_moves=1000, seed=None):
        """Uniform random playout from this position (never filling own eyes) until two passes or
        max_moves; returns the number of moves. The position is left as the playout ended it and
        cannot be undone past; play it on a copy()."""
        self._check_colour(colour)
        if seed is not None:
            self.rng_state = (<unsigned long long> seed) * 0x9E3779B97F4A7C15ULL | 1
        with nogil:
            moves = self.random_playout(colour, max_moves)
        # The playout's moves were not recorded, so earlier undo records no longer describe the board.
        self.num_moves = 0
        self.journal_len = 0
        self.captured_len = 0
        return moves

    @property
    def hash(self):
        """64-bit Zobrist hash of the stones (not of the side to move or ko)."""
        return self.zobrist

    @property
    def empty_points(self):
        """Points with no stone (kept as the board changes)."""
        return self.num_empty

    @property
    def move_count(self):
        """Moves that undo() can take back."""
        return self.num_moves

    def captures(self, int colour):
        """Stones captured by colour so far."""
        self._check_colour(colour)
        return self.captured_by[colour]

    def check_consistency(self):
        """Rebuild chains, liberties, empty list and hash from the stones; AssertionError on any
        difference with the incrementally maintained state."""
        cdef int p, q, i, c
        cdef hash_t expected_hash = 0
        seen = {}
        for p in range(self.num_locs):
            row, col = p // self.stride - 1, p % self.stride - 1
            on_board = 0 <= row < self.size and 0 <= col < self.size
            c = self.colour[p]
            assert (c == C_WALL) != on_board, f"wall/board mismatch at {p}"
            if c == C_BLACK or c == C_WHITE:
                expected_hash ^= ZOBRIST[c][p]
        assert expected_hash == self.zobrist, "hash differs from the stones"
        empties = [p for p in range(self.num_locs) if self.colour[p] == C_EMPTY]
        assert self.num_empty == len(empties), "empty count wrong"
        assert sorted(self.empty_list[i] for i in range(self.num_empty)) == empties, "empty list wrong"
        for i in range(self.num_empty):
            assert self.empty_index[self.empty_list[i]] == i, "empty index wrong"
        for p in range(self.num_locs):
            c = self.colour[p]
            if (c != C_BLACK and c != C_WHITE) or p in seen:
                continue
            # Flood fill the chain from p.
            stones, stack = {p}, [p]
            while stack:
                q = stack.pop()
                for i in range(4):
                    r = q + self.neighbour_offset[i]
                    if self.colour[r] == c and r not in stones:
                        stones.add(r)
                        stack.append(r)
            head = self.chain_head[p]
            ring, q = set(), head
            for _ in range(len(stones) + 1):
                ring.add(q)
                q = self.next_in_chain[q]
                if q == head:
                    break
            assert q == head and ring == stones, f"chain ring of {p} wrong"
            edges = [(s, s + self.neighbour_offset[i]) for s in stones for i in range(4)
                     if self.colour[s + self.neighbour_offset[i]] == C_EMPTY]
            assert edges, f"chain at {p} has no liberties on the board"
            for s in stones:
                assert self.chain_head[s] == head, f"chain head of {s} wrong"
                seen[s] = head
            assert self.chain_size[head] == len(stones), f"chain size at {p} wrong"
            assert self.pseudo_libs[head] == len(edges), f"pseudo-liberties at {p} wrong"
            assert self.lib_sum[head] == sum(e[1] for e in edges), f"liberty sum at {p} wrong"
            assert self.lib_sum_sq[head] == sum(e[1] * e[1] for e in edges), f"liberty squares at {p} wrong"
        if self.ko_loc != NO_LOC_:
            assert self.colour[self.ko_loc] == C_EMPTY, "ko point occupied"

    # ------------------------------------------------------------------ ASCII

    @classmethod
    @cython.wraparound(True)
    @cython.boundscheck(True)
    def from_ascii(cls, text):
        """Board from a diagram: X black, O white, . or + empty; coordinate labels and spaces ignored."""
        rows = []
        for line in text.strip("\n").splitlines():
            tokens = line.split()
            if not tokens:
                continue
            if tokens[0].upper() == "A" and all(len(t) == 1 and t.isalpha() for t in tokens):
                continue  # column header
            if tokens[0].isdigit():
                tokens = tokens[1:]
            if tokens and tokens[-1].isdigit():
                tokens = tokens[:-1]
            cells = "".join(tokens)
            if not cells:
                continue
            bad = set(cells) - set("XO.+")
            if bad:
                raise ValueError(f"unexpected characters {''.join(sorted(bad))!r} in diagram row {line!r}")
            rows.append(cells)
        size = len(rows)
        if any(len(r) != size for r in rows):
            raise ValueError(f"diagram is not square: {size} rows of lengths {[len(r) for r in rows]}")
        cdef Board board = cls(size)
        for row, cells in enumerate(rows):
            for col, ch in enumerate(cells):
                if ch in "XO":
                    board._place_setup(board.loc(row, col), C_BLACK if ch == "X" else C_WHITE)
        board.num_moves = 0
        board.journal_len = 0
        board.captured_len = 0
        for p in board.points():
            if board.get(p) != C_EMPTY and board.liberty_count(p) == 0:
                raise ValueError(f"diagram has a chain without liberties at {board.row_col(p)}")
        return board

    def _place_setup(self, loc_t p, int colour):
        """Setup stone: placed even if it has no liberty yet (diagrams are filled in any order);
        a chain that ends with no liberty when the diagram is complete is an error of the diagram."""
        self._reserve_journal()
        self._place_stone(p, colour)

    def __str__(self):
        from engine.rules.coords import GTP_COLUMNS
        header = "   " + " ".join(GTP_COLUMNS[c] for c in range(self.size))
        lines = [header]
        symbols = {C_EMPTY: ".", C_BLACK: "X", C_WHITE: "O"}
        for row in range(self.size):
            number = self.size - row
            cells = " ".join(symbols[self.colour[(row + 1) * self.stride + col + 1]]
                             for col in range(self.size))
            lines.append(f"{number:2d} {cells} {number:d}")
        lines.append(header)
        return "\n".join(lines)

    def __repr__(self):
        return f"<Board {self.size}x{self.size} hash={self.zobrist:016x}>\n{self}"

    def __reduce__(self):
        return (_board_from_state, (self.size, str(self), self.ko_loc, self.ko_colour,
                                    self.captured_by[1], self.captured_by[2]))


def _board_from_state(size, diagram, ko_loc, ko_colour, captures_black, captures_white):
    cdef Board board = Board.from_ascii(diagram)
    board.ko_loc = ko_loc
    board.ko_colour = ko_colour
    board.captured_by[1] = captures_black
    board.captured_by[2] = captures_white
    return board


def play_undo_pairs(Board board, int colour, int rounds):
    """Benchmark kernel: play and undo every legal move of colour, rounds times, through the same
    nogil path the evaluator's 1-ply loop uses. Returns the number of play+undo pairs made."""
    cdef int r, i, pairs = 0
    cdef loc_t p
    with nogil:
        for r in range(rounds):
            for i in range(board.num_empty):
                p = board.empty_list[i]
                if board.is_legal_fast(p, colour):
                    board.play_move(p, colour, False)
                    board.undo_move()
                    pairs += 1
    return pairs
