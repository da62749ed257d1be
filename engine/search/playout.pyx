# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Playouts: MoGo's policy on the fast board, and the Tromp-Taylor count that ends them.

Reading order: `choose_move()` is the policy, `play_out()` the loop, `area_margin()` the count.

The policy, in order (the first step with a candidate decides, among its candidates at random):
1. escape: a chain of the mover next to the last move is in atari: capture one of the chains in
   atari around it, or extend at its liberty if that leaves it two liberties or more;
2. capture: an opponent chain at or next to the last move is in atari: take it;
3. patterns: an empty neighbour of the last move whose 3x3 neighbourhood is in the pattern table
   (engine/search/patterns.py);
4. a uniformly random move.
Every move is legal, fills no own eye and puts no chain of two or more stones in atari (single
stones may be thrown in: that is how eyes are destroyed); a player with no such move passes, and
two passes end the playout.
"""
import numpy as np

from engine.rules.board cimport Board, LEGAL
from engine.rules.types cimport EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE, WALL as C_WALL
from engine.rules.types cimport loc_t, MAX_LOCS, PASS_LOC, NO_LOC

from engine.search.patterns import pattern_table

DEF MAX_CANDIDATES = 64


cdef unsigned long long next_random(unsigned long long *state) noexcept nogil:
    # xorshift64*: fast, and every search thread has its own state
    state[0] ^= state[0] >> 12
    state[0] ^= state[0] << 25
    state[0] ^= state[0] >> 27
    return state[0] * 0x2545F4914F6CDD1DULL


cdef inline int random_below(unsigned long long *rng, int n) noexcept nogil:
    return <int> ((next_random(rng) >> 11) % <unsigned long long> n)


cdef int pattern_index(Board board, loc_t p, int colour) noexcept nogil:
    """patterns.py's index of p's neighbourhood for colour to move."""
    cdef int stride = board.stride, i, c, code, index = 0
    cdef int offsets[8]
    cdef loc_t q
    offsets[0] = -stride      # N, E, S, W, NE, SE, SW, NW: patterns.NEIGHBOUR_ORDER
    offsets[1] = 1
    offsets[2] = stride
    offsets[3] = -1
    offsets[4] = -stride + 1
    offsets[5] = stride + 1
    offsets[6] = stride - 1
    offsets[7] = -stride - 1
    for i in range(8):
        q = p + offsets[i]
        c = board.colour[q]
        if c == C_EMPTY:
            code = 0
        elif c == colour:
            code = 1
        elif c == C_WALL:
            code = 3
        else:
            code = 2
        index |= code << (2 * i)
        if i < 4 and (code == 1 or code == 2) and board.in_atari(board.chain_head[q]):
            index |= 1 << (16 + i)
    return index


cdef int liberties_after(Board board, loc_t p, int colour, int enough) noexcept nogil:
    """Distinct liberties of colour's chain at the empty point p if colour played there, counted
    up to `enough` (a capture counts as enough: it frees at least the captured point)."""
    cdef unsigned int epoch = board.new_mark_epoch()
    cdef int i, j, count = 0, c
    cdef loc_t q, head, stone, r
    board.mark[p] = epoch
    for i in range(4):
        q = p + board.neighbour_offset[i]
        c = board.colour[q]
        if c == C_EMPTY:
            if board.mark[q] != epoch:
                board.mark[q] = epoch
                count += 1
        elif c == 3 - colour:
            if board.in_atari(board.chain_head[q]):
                return enough
    if count >= enough:
        return count
    for i in range(4):
        q = p + board.neighbour_offset[i]
        if board.colour[q] != colour:
            continue
        head = board.chain_head[q]
        stone = head
        while True:
            for j in range(4):
                r = stone + board.neighbour_offset[j]
                if board.colour[r] == C_EMPTY and board.mark[r] != epoch:
                    board.mark[r] = epoch
                    count += 1
                    if count >= enough:
                        return count
            stone = board.next_in_chain[stone]
            if stone == head:
                break
    return count


cdef bint is_bad_self_atari(Board board, loc_t p, int colour) noexcept nogil:
    """Playing p would leave a chain of two or more stones with one liberty (or none)."""
    cdef int i
    cdef bint joins = False
    for i in range(4):
        if board.colour[p + board.neighbour_offset[i]] == colour:
            joins = True
            break
    if not joins:
        return False
    return liberties_after(board, p, colour, 2) < 2


cdef inline bint playable(Board board, loc_t p, int colour) noexcept nogil:
    return board.colour[p] == C_EMPTY and board.illegal_reason(p, colour) == LEGAL \
        and not board.is_eye_fast(p, colour) and not is_bad_self_atari(board, p, colour)


cdef inline int add_candidate(loc_t *candidates, int n, loc_t p) noexcept nogil:
    cdef int i
    for i in range(n):
        if candidates[i] == p:
            return n
    if n < MAX_CANDIDATES:
        candidates[n] = p
        n += 1
    return n


cdef int escape_moves(Board board, int colour, loc_t last_move, loc_t *candidates) noexcept nogil:
    """Step 1: saving moves for the mover's chains in atari next to the last move."""
    cdef int n = 0, i, j, k
    cdef loc_t q, head, stone, r, liberty
    for i in range(4):
        q = last_move + board.neighbour_offset[i]
        if board.colour[q] != colour:
            continue
        head = board.chain_head[q]
        if not board.in_atari(head):
            continue
        # capture a chain in atari that touches it
        stone = head
        while True:
            for j in range(4):
                r = stone + board.neighbour_offset[j]
                if board.colour[r] == 3 - colour and board.in_atari(board.chain_head[r]):
                    liberty = board.atari_liberty(board.chain_head[r])
                    if board.illegal_reason(liberty, colour) == LEGAL:
                        n = add_candidate(candidates, n, liberty)
            stone = board.next_in_chain[stone]
            if stone == head:
                break
        # or extend, if that gives two liberties
        liberty = board.atari_liberty(head)
        if board.illegal_reason(liberty, colour) == LEGAL and \
                liberties_after(board, liberty, colour, 2) >= 2:
            n = add_candidate(candidates, n, liberty)
    return n


cdef int capture_moves(Board board, int colour, loc_t last_move, loc_t *candidates) noexcept nogil:
    """Step 2: opponent chains in atari at or around the last move (its 8 neighbours)."""
    cdef int n = 0, i
    cdef loc_t q, liberty
    cdef int offsets[9]
    offsets[8] = 0
    for i in range(4):
        offsets[i] = board.neighbour_offset[i]
        offsets[4 + i] = board.diagonal_offset[i]
    for i in range(9):
        q = last_move + offsets[i]
        if board.colour[q] == 3 - colour and board.in_atari(board.chain_head[q]):
            liberty = board.atari_liberty(board.chain_head[q])
            if board.illegal_reason(liberty, colour) == LEGAL:
                n = add_candidate(candidates, n, liberty)
    return n


cdef int pattern_moves(Board board, int colour, loc_t last_move, const PlayoutPolicy *policy,
                       loc_t *candidates) noexcept nogil:
    """Step 3: empty neighbours of the last move that match a pattern."""
    cdef int n = 0, i
    cdef loc_t q
    for i in range(8):
        q = last_move + (board.neighbour_offset[i] if i < 4 else board.diagonal_offset[i - 4])
        if board.colour[q] == C_EMPTY and policy.pattern_table[pattern_index(board, q, colour)] \
                and playable(board, q, colour):
            candidates[n] = q
            n += 1
    return n


cdef loc_t choose_move(Board board, int colour, loc_t last_move, const PlayoutPolicy *policy,
                       unsigned long long *rng) noexcept nogil:
    """The policy's move for colour (module docstring), or PASS_LOC."""
    cdef loc_t candidates[MAX_CANDIDATES]
    cdef int n, i, start, num_empty
    cdef loc_t p
    if last_move >= 0:
        if policy.use_tactics:
            n = escape_moves(board, colour, last_move, candidates)
            if n == 0:
                n = capture_moves(board, colour, last_move, candidates)
            if n > 0:
                return candidates[random_below(rng, n)]
        if policy.use_patterns:
            n = pattern_moves(board, colour, last_move, policy, candidates)
            if n > 0:
                return candidates[random_below(rng, n)]
    num_empty = board.num_empty
    if num_empty == 0:
        return PASS_LOC
    i = random_below(rng, num_empty)
    for start in range(num_empty):       # every empty point once, from a random one on
        p = board.empty_list[i]
        if playable(board, p, colour):
            return p
        i += 1
        if i == num_empty:
            i = 0
    return PASS_LOC


cdef int play_out(Board board, int colour, loc_t last_move, const PlayoutPolicy *policy,
                  unsigned long long *rng, int *first_player) noexcept nogil:
    """Play the policy for both sides from colour to move until two passes or policy.max_moves.
    last_move: the previous move (PASS_LOC or NO_LOC if none). Returns the moves played."""
    cdef int moves = 0, passes = 0
    cdef loc_t p
    if last_move == PASS_LOC:
        passes = 1
    while passes < 2 and moves < policy.max_moves:
        p = choose_move(board, colour, last_move, policy, rng)
        if p == PASS_LOC:
            passes += 1
            board.ko_loc = NO_LOC
        else:
            passes = 0
            board._play_unrecorded(p, colour)
            if first_player != NULL and first_player[p] == 0:
                first_player[p] = colour
        last_move = p
        colour = 3 - colour
        moves += 1
    return moves


cdef double area_margin(Board board, double komi, signed char *owner) noexcept nogil:
    """Tromp-Taylor area count, Black minus White minus komi: stones, and empty regions that
    reach stones of one colour only. owner (if given) gets +1 / -1 / 0 per point."""
    cdef int stack[MAX_LOCS]
    cdef int region[MAX_LOCS]
    cdef unsigned int epoch = board.new_mark_epoch()
    cdef int row, col, i, top, size_of_region, reaches, c, k
    cdef loc_t p, q, r
    cdef double margin = -komi
    cdef signed char value
    for row in range(board.size):
        for col in range(board.size):
            p = (row + 1) * board.stride + col + 1
            c = board.colour[p]
            if c == C_BLACK or c == C_WHITE:
                value = 1 if c == C_BLACK else -1
                margin += value
                if owner != NULL:
                    owner[p] = value
                continue
            if board.mark[p] == epoch:
                continue
            # flood the empty region, noting which colours it reaches (bit 1 black, bit 2 white)
            board.mark[p] = epoch
            stack[0] = p
            top = 1
            size_of_region = 0
            reaches = 0
            while top > 0:
                top -= 1
                q = stack[top]
                region[size_of_region] = q
                size_of_region += 1
                for i in range(4):
                    r = q + board.neighbour_offset[i]
                    c = board.colour[r]
                    if c == C_EMPTY:
                        if board.mark[r] != epoch:
                            board.mark[r] = epoch
                            stack[top] = r
                            top += 1
                    elif c != C_WALL:
                        reaches |= c
            value = 1 if reaches == C_BLACK else (-1 if reaches == C_WHITE else 0)
            margin += value * size_of_region
            if owner != NULL:
                for k in range(size_of_region):
                    owner[region[k]] = value
    return margin


# --- Python API: for tests and benchmarks ----------------------------------------------------

cdef class PolicyTable:
    """Keeps the pattern table alive for the C structs that point into it."""
    cdef readonly object table
    cdef const unsigned char[::1] view

    def __cinit__(self):
        self.table = pattern_table()
        self.view = self.table


cdef PolicyTable _TABLE = PolicyTable()


cdef PlayoutPolicy make_policy(bint use_patterns, bint use_tactics, int size):
    cdef PlayoutPolicy policy
    policy.pattern_table = &_TABLE.view[0]
    policy.use_patterns = use_patterns
    policy.use_tactics = use_tactics
    policy.max_moves = 3 * size * size
    return policy


def policy_move(Board board, int colour, last_move=None, seed=1, bint patterns=True,
                bint tactics=True):
    """The policy's move for colour (a loc or PASS_LOC); last_move None: no previous move."""
    cdef PlayoutPolicy policy = make_policy(patterns, tactics, board.size)
    cdef unsigned long long rng = <unsigned long long> seed * 0x9E3779B97F4A7C15ULL + 1
    return choose_move(board, colour, NO_LOC if last_move is None else last_move, &policy, &rng)


def policy_moves(Board board, int colour, last_move=None, samples=200, seed=1,
                 bint patterns=True, bint tactics=True):
    """The set of moves the policy chose in `samples` draws (the board is not changed)."""
    cdef PlayoutPolicy policy = make_policy(patterns, tactics, board.size)
    cdef unsigned long long rng = <unsigned long long> seed * 0x9E3779B97F4A7C15ULL + 1
    cdef loc_t last = NO_LOC if last_move is None else last_move
    return {choose_move(board, colour, last, &policy, &rng) for _ in range(samples)}


def playout_score(Board board, int colour, last_move=None, double komi=7.0, seed=1,
                  bint patterns=True, bint tactics=True):
    """Play one playout on a copy of board; (Black's area margin, ownership array, moves)."""
    cdef Board work = Board(board.size)
    cdef PlayoutPolicy policy = make_policy(patterns, tactics, board.size)
    cdef unsigned long long rng = <unsigned long long> seed * 0x9E3779B97F4A7C15ULL + 1
    owner = np.zeros(board.num_locs, dtype=np.int8)
    cdef signed char[::1] owner_view = owner
    work.copy_position_from(board)
    moves = play_out(work, colour, NO_LOC if last_move is None else last_move, &policy, &rng, NULL)
    return area_margin(work, komi, &owner_view[0]), owner, moves


def area_count(Board board, double komi=0.0):
    """Tromp-Taylor area margin for Black (stones and one-colour empty regions) minus komi."""
    return area_margin(board, komi, NULL)


def playouts_per_second(Board board, int colour, int count, seed=1, bint patterns=True,
                        bint tactics=True):
    """count playouts from board (not changed); (seconds, mean moves per playout)."""
    import time
    cdef Board work = Board(board.size)
    cdef PlayoutPolicy policy = make_policy(patterns, tactics, board.size)
    cdef unsigned long long rng = <unsigned long long> seed * 0x9E3779B97F4A7C15ULL + 1
    cdef long total = 0
    cdef int i
    started = time.perf_counter()
    with nogil:
        for i in range(count):
            work.copy_position_from(board)
            total += play_out(work, colour, NO_LOC, &policy, &rng, NULL)
            area_margin(work, 0.0, NULL)
    return time.perf_counter() - started, total / max(count, 1)
