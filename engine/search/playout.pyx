# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Playouts: MoGo's policy on the fast board, and the Tromp-Taylor count that ends them.

Reading order: `choose_move()` is the policy, `play_out()` the loop, `area_margin()` the count.

The policy, in order (the first step with a candidate decides, among its candidates at random).
Three sets of tactics (PLAYOUT_TACTICS): "mogo" is MoGo's policy as Gelly & Silver and Pachi's
"moggy" play it; "fuego" adds the steps marked [fuego], which Fuego's playouts have and MoGo's
lacks, for the cutting fights and capturing races that MoGo's playouts lose; "fuego-ladders"
adds Pachi's ladder check on escapes [ladders] to those, which reads ladders and costs more.
1. escape: a chain of the mover next to the last move is in atari: capture one of the chains in
   atari around it, or extend at its liberty if that leaves it two liberties or more;
   [fuego] an extension to only two liberties is left out when a capture saves the chain;
   [ladders] ... or when the ladder reader (engine/tactics/ladder.pyx) then catches the chain;
2. capture: an opponent chain at or next to the last move is in atari: take it;
3. [fuego] low liberties (Fuego's "LowLib" step, which wins capturing races): chains with
   exactly two liberties. The last move's chain: atari it at a liberty where the mover's stone
   keeps two liberties, if extending at its other liberty would not give it three (then it can
   only run by capturing, or is caught); the mover's chains next to the last move: a liberty
   that gives three liberties or more, or the capture of an opponent chain in atari next to it;
4. [fuego] nakade: an empty neighbour of the last move in an eye space of exactly three empty
   points (straight or bent) that only the opponent's stones and the edge surround: its middle;
5. [replies] with a ReplyMemory (the tree's `--last-good-reply`): the reply that last won a
   simulation to the last two moves, else to the last move (LGRF-2, then LGRF-1: ReplyMemory);
   (steps 1-6 need a last move on the board: after a pass or at the start, the random move)
6. patterns: an empty neighbour of the last move whose 3x3 neighbourhood is in the pattern table
   (engine/search/patterns.py);
7. a uniformly random move;
and [fuego] Fuego's self-atari correction of a pattern or random move: a lone stone put in atari
without capturing anything moves to its one liberty, when a stone there keeps two liberties.
Every move is legal, fills no own eye and puts no chain of two or more stones in atari (single
stones may be thrown in: that is how eyes are destroyed); a player with no such move passes, and
two passes end the playout. With "mogo" the random numbers drawn are those of the policy before
"fuego" existed, so fixed-seed results do not change.
"""
import numpy as np

cimport cython
from libc.stdlib cimport malloc, free

from engine.rules.board cimport Board, LEGAL
from engine.rules.types cimport EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE, WALL as C_WALL
from engine.rules.types cimport loc_t, MAX_LOCS, PASS_LOC, NO_LOC
from engine.tactics.nakade cimport nakade_point
from engine.tactics.selfatari cimport liberties_after, is_bad_self_atari

from engine.search.patterns import pattern_table

DEF MAX_CANDIDATES = 64
DEF LADDER_MOST_STONES = 6   # a larger chain in atari is in a race, not a ladder, and reading it
                             # walks it at every node: late in a playout, chains of dozens

PLAYOUT_TACTICS = ("mogo", "fuego", "fuego-ladders")   # the module docstring's sets of tactics


cdef unsigned long long next_random(unsigned long long *state) noexcept nogil:
    # xorshift64*: fast, and every search thread has its own state
    state[0] ^= state[0] >> 12
    state[0] ^= state[0] << 25
    state[0] ^= state[0] >> 27
    return state[0] * 0x2545F4914F6CDD1DULL


cdef inline int random_below(unsigned long long *rng, int n) noexcept nogil:
    return <int> ((next_random(rng) >> 11) % <unsigned long long> n)


@cython.final
cdef class ReplyMemory:
    """Last good reply with forgetting (Baier & Drake, "The Power of Forgetting: Improving the
    Last-Good-Reply Policy in Monte Carlo Go", 2010): for each colour, the move that last won a
    simulation as the reply to the previous two moves (LGRF-2) and to the previous move (LGRF-1).
    After every simulation each move of it, in the tree and in the playout, is stored as the
    mover's reply if the mover won, and forgotten if it was the stored reply and the mover lost.
    So the playouts learn the local answers that work in the position being searched (the fights
    a fixed policy misjudges) and drop them as soon as they stop working. Passes are never
    stored as replies; a pass or the game's start is a previous move like any other (one more
    slot), though the policy, like its other steps about the last move, asks for a reply only
    after a move on the board. One per tree: it is the scratch of one thread."""

    def __cinit__(self, int num_locs):
        self.slots = num_locs + 1
        self.reply1 = <loc_t *> malloc(2 * self.slots * sizeof(loc_t))
        self.reply2 = <loc_t *> malloc(2 * self.slots * self.slots * sizeof(loc_t))
        if self.reply1 == NULL or self.reply2 == NULL:
            raise MemoryError()
        self.clear()

    def __dealloc__(self):
        free(self.reply1)
        free(self.reply2)

    cdef void clear(self) noexcept nogil:
        cdef long i
        for i in range(2 * self.slots):
            self.reply1[i] = NO_LOC
        for i in range(2 * self.slots * self.slots):
            self.reply2[i] = NO_LOC

    cdef int _slot(self, loc_t move) noexcept nogil:
        return move if move >= 0 else self.slots - 1

    cdef long _index1(self, int colour, loc_t previous) noexcept nogil:
        return (colour - 1) * self.slots + self._slot(previous)

    cdef long _index2(self, int colour, loc_t before, loc_t previous) noexcept nogil:
        return ((colour - 1) * self.slots + self._slot(before)) * self.slots + \
            self._slot(previous)

    cdef loc_t reply_to_two(self, int colour, loc_t before, loc_t previous) noexcept nogil:
        return self.reply2[self._index2(colour, before, previous)]

    cdef loc_t reply_to_one(self, int colour, loc_t previous) noexcept nogil:
        return self.reply1[self._index1(colour, previous)]

    cdef void learn(self, const loc_t *moves, int count, int colour, loc_t before,
                    loc_t previous, int winner) noexcept nogil:
        """moves[0 .. count - 1]: a simulation's moves, colour first, after the moves before
        and previous; winner: the colour that won it (0: a draw, nothing is learnt)."""
        cdef int i
        cdef long one, two
        cdef loc_t move
        if winner == 0:
            return
        for i in range(count):
            move = moves[i]
            if move >= 0:
                one = self._index1(colour, previous)
                two = self._index2(colour, before, previous)
                if colour == winner:
                    self.reply1[one] = move
                    self.reply2[two] = move
                else:
                    if self.reply1[one] == move:
                        self.reply1[one] = NO_LOC
                    if self.reply2[two] == move:
                        self.reply2[two] = NO_LOC
            before = previous
            previous = move
            colour = 3 - colour

    def reply(self, int colour, before, previous):
        """(LGRF-2 reply, LGRF-1 reply) for colour after the moves before, previous (locs, PASS
        or None); NO_LOC where none is stored. For tests."""
        cdef loc_t b = NO_LOC if before is None else before
        cdef loc_t p = NO_LOC if previous is None else previous
        return self.reply_to_two(colour, b, p), self.reply_to_one(colour, p)

    def learn_moves(self, moves, int colour, before, previous, int winner):
        """learn() from a Python list of moves (tests)."""
        cdef loc_t buffer[MAX_LOCS]
        cdef int i, count = min(len(moves), MAX_LOCS)
        for i in range(count):
            buffer[i] = moves[i]
        self.learn(buffer, count, colour, NO_LOC if before is None else before,
                   NO_LOC if previous is None else previous, winner)


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


cdef int add_captures_next_to(Board board, loc_t head, int colour, loc_t *candidates,
                              int n) noexcept nogil:
    """Adds the captures of the opponent chains in atari that touch colour's chain at head."""
    cdef int j
    cdef loc_t stone = head, r, liberty
    while True:
        for j in range(4):
            r = stone + board.neighbour_offset[j]
            if board.colour[r] == 3 - colour and board.in_atari(board.chain_head[r]):
                liberty = board.atari_liberty(board.chain_head[r])
                if board.illegal_reason(liberty, colour) == LEGAL:
                    n = add_candidate(candidates, n, liberty)
        stone = board.next_in_chain[stone]
        if stone == head:
            return n


cdef int chains_next_to(Board board, loc_t p, int colour, loc_t *heads) noexcept nogil:
    """The heads of colour's chains next to p, each once (a chain may touch p twice), in the
    neighbours' order; returns how many (at most four)."""
    cdef int n = 0, i, j
    cdef loc_t q, head
    cdef bint seen
    for i in range(4):
        q = p + board.neighbour_offset[i]
        if board.colour[q] != colour:
            continue
        head = board.chain_head[q]
        seen = False
        for j in range(n):
            seen = seen or heads[j] == head
        if not seen:
            heads[n] = head
            n += 1
    return n


cdef bint extension_caught_in_ladder(Board board, loc_t liberty, int colour,
                                     LadderReader ladders) noexcept nogil:
    """Whether colour's chain, extended at liberty (its last one), is then captured in a ladder
    with the opponent to move. Plays and undoes on board, leaving it as it was."""
    cdef bint was_recording = board.recording, was_reading = board.reading, caught
    board.recording = True
    board.reading = True          # undone at once: the empty list, hash and counts can stay
    board.play_move(liberty, colour, False)
    caught = ladders.read(board, liberty, True)
    board.undo_move()
    board.recording = was_recording
    board.reading = was_reading
    return caught


cdef int escape_moves(Board board, int colour, loc_t last_move, const PlayoutPolicy *policy,
                      LadderReader ladders, loc_t *candidates,
                      loc_t *ladder_caught) noexcept nogil:
    """Step 1: saving moves for the mover's chains in atari next to the last move. [ladders] An
    extension left out because the ladder reader catches it goes to ladder_caught[0] (the
    last one, if several), which the pattern step leaves out too: its atari shapes match it."""
    cdef int n = 0, i, num_chains, before, liberties
    cdef loc_t head, liberty
    cdef loc_t heads[4]
    num_chains = chains_next_to(board, last_move, colour, heads)
    for i in range(num_chains):
        head = heads[i]
        if not board.in_atari(head):
            continue
        before = n
        n = add_captures_next_to(board, head, colour, candidates, n)
        # or extend, if that gives two liberties
        liberty = board.atari_liberty(head)
        if board.illegal_reason(liberty, colour) != LEGAL:
            continue
        if not policy.fuego_tactics:
            if liberties_after(board, liberty, colour, 2) >= 2:
                n = add_candidate(candidates, n, liberty)
            continue
        # (a capture next to the liberty counts as three: liberties_after's "enough")
        liberties = liberties_after(board, liberty, colour, 3)
        if liberties >= 3:
            n = add_candidate(candidates, n, liberty)
        elif liberties == 2 and n == before:
            if policy.read_ladders and board.chain_size[head] <= LADDER_MOST_STONES and \
                    extension_caught_in_ladder(board, liberty, colour, ladders):
                ladder_caught[0] = liberty
            else:
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


cdef int liberties_up_to_three(Board board, loc_t head, loc_t *liberties) noexcept nogil:
    """The distinct liberties of the chain at head counted up to three, the first two of them
    into liberties[0..1]. (Two remembered liberties are their own marks.)"""
    cdef int count = 0, i
    cdef loc_t stone = head, r
    # A point touches at most four stones of the chain, and no more than it has: past twice that
    # many stone-liberty edges there are three liberties or more, without a walk.
    if board.pseudo_libs[head] > 2 * min(4, board.chain_size[head]):
        return 3
    while True:
        for i in range(4):
            r = stone + board.neighbour_offset[i]
            if board.colour[r] == C_EMPTY and (count == 0 or r != liberties[0]) and \
                    (count < 2 or r != liberties[1]):
                if count == 2:
                    return 3
                liberties[count] = r
                count += 1
        stone = board.next_in_chain[stone]
        if stone == head:
            return count


cdef int low_liberty_moves(Board board, int colour, loc_t last_move,
                           loc_t *candidates) noexcept nogil:
    """Step 3 [fuego]: the liberties of two-liberty chains at or next to the last move."""
    cdef int n = 0, i, k, num_chains, opponent = 3 - colour
    cdef loc_t liberties[2]
    cdef loc_t heads[4]
    cdef loc_t head, liberty, other
    if board.colour[last_move] == opponent:
        if liberties_up_to_three(board, board.chain_head[last_move], liberties) == 2:
            for k in range(2):
                liberty = liberties[k]
                other = liberties[1 - k]
                # the extension's count includes `liberty`, which the atari fills: < 4 is < 3
                if board.illegal_reason(liberty, colour) == LEGAL and \
                        liberties_after(board, liberty, colour, 2) >= 2 and \
                        liberties_after(board, other, opponent, 4) < 4:
                    n = add_candidate(candidates, n, liberty)
    num_chains = chains_next_to(board, last_move, colour, heads)
    for i in range(num_chains):
        head = heads[i]
        if liberties_up_to_three(board, head, liberties) != 2:
            continue
        for k in range(2):
            liberty = liberties[k]
            if board.illegal_reason(liberty, colour) == LEGAL and \
                    not board.is_eye_fast(liberty, colour) and \
                    liberties_after(board, liberty, colour, 3) >= 3:
                n = add_candidate(candidates, n, liberty)
        n = add_captures_next_to(board, head, colour, candidates, n)
    return n


cdef int nakade_moves(Board board, int colour, loc_t last_move, loc_t *candidates) noexcept nogil:
    """Step 4 [fuego]: the middle point of a three-point eye space of the opponent's next to the
    last move (engine/tactics/nakade.pyx)."""
    cdef int n = 0, i, empty_neighbours = 0
    cdef loc_t q, middle
    for i in range(4):
        empty_neighbours += board.colour[last_move + board.neighbour_offset[i]] == C_EMPTY
    if empty_neighbours > 2:
        return 0      # a stone with three empty neighbours stands in open ground (this
                      # saves the floods; a three-point space beside it is then left out)
    for i in range(4):
        q = last_move + board.neighbour_offset[i]
        if board.colour[q] != C_EMPTY:
            continue
        middle = nakade_point(board, q, colour)
        if middle != NO_LOC and playable(board, middle, colour):
            n = add_candidate(candidates, n, middle)
    return n


cdef loc_t self_atari_corrected(Board board, loc_t p, int colour) noexcept nogil:
    """[fuego] p, or its one liberty when p, a playable move, is a lone stone's self-atari that
    captures nothing and a stone at the liberty would keep two liberties (Fuego's correction:
    the self-atari only gives the opponent a stone, the liberty may be the point both want).
    Throw-ins into eyes stay: there the liberty is a self-atari too."""
    cdef int i, c, empties = 0
    cdef loc_t q, liberty = NO_LOC
    for i in range(4):
        q = p + board.neighbour_offset[i]
        c = board.colour[q]
        if c == C_EMPTY:
            empties += 1
            if empties == 2:
                return p          # the common case: not a self-atari
            liberty = q
        elif c == colour:
            return p              # joins a chain (playable() saw to self-ataris of chains)
        elif c != C_WALL and board.in_atari(board.chain_head[q]):
            return p              # captures
    if empties == 1 and playable(board, liberty, colour) and \
            liberties_after(board, liberty, colour, 2) >= 2:
        return liberty
    return p


cdef int pattern_moves(Board board, int colour, loc_t last_move, const PlayoutPolicy *policy,
                       loc_t excluded, loc_t *candidates) noexcept nogil:
    """Step 5: empty neighbours of the last move that match a pattern, other than excluded."""
    cdef int n = 0, i
    cdef loc_t q
    for i in range(8):
        q = last_move + (board.neighbour_offset[i] if i < 4 else board.diagonal_offset[i - 4])
        if board.colour[q] == C_EMPTY and policy.pattern_table[pattern_index(board, q, colour)] \
                and q != excluded and playable(board, q, colour):
            candidates[n] = q
            n += 1
    return n


cdef loc_t choose_move(Board board, int colour, loc_t last_move, loc_t move_before,
                       const PlayoutPolicy *policy, LadderReader ladders, ReplyMemory replies,
                       unsigned long long *rng) noexcept nogil:
    """The policy's move for colour (module docstring), or PASS_LOC. move_before: the move
    before last_move (the replies' LGRF-2 key)."""
    cdef loc_t candidates[MAX_CANDIDATES]
    cdef int n, i, start, num_empty
    cdef loc_t p, ladder_caught = NO_LOC
    if last_move >= 0:
        if policy.use_tactics:
            n = escape_moves(board, colour, last_move, policy, ladders, candidates, &ladder_caught)
            if n == 0:
                n = capture_moves(board, colour, last_move, candidates)
            if n == 0 and policy.fuego_tactics:
                n = low_liberty_moves(board, colour, last_move, candidates)
                if n == 0:
                    n = nakade_moves(board, colour, last_move, candidates)
            if n > 0:
                return candidates[random_below(rng, n)]
        if replies is not None:
            p = replies.reply_to_two(colour, move_before, last_move)
            if p >= 0 and playable(board, p, colour):
                return p
            p = replies.reply_to_one(colour, last_move)
            if p >= 0 and playable(board, p, colour):
                return p
        if policy.use_patterns:
            n = pattern_moves(board, colour, last_move, policy, ladder_caught, candidates)
            if n > 0:
                p = candidates[random_below(rng, n)]
                return self_atari_corrected(board, p, colour) if policy.fuego_tactics else p
    num_empty = board.num_empty
    if num_empty == 0:
        return PASS_LOC
    i = random_below(rng, num_empty)
    for start in range(num_empty):       # every empty point once, from a random one on
        p = board.empty_list[i]
        if playable(board, p, colour):
            return self_atari_corrected(board, p, colour) if policy.fuego_tactics else p
        i += 1
        if i == num_empty:
            i = 0
    return PASS_LOC


cdef int play_out(Board board, int colour, loc_t last_move, loc_t move_before,
                  const PlayoutPolicy *policy, LadderReader ladders, ReplyMemory replies,
                  unsigned long long *rng, int *first_player, loc_t *record) noexcept nogil:
    """Play the policy for both sides from colour to move until two passes or policy.max_moves.
    last_move, move_before: the previous two moves (PASS_LOC, or NO_LOC if none). record (if
    given, room for policy.max_moves) gets the moves played, passes too. Returns their count."""
    cdef int moves = 0, passes = 0
    cdef loc_t p
    if last_move == PASS_LOC:
        passes = 1
    while passes < 2 and moves < policy.max_moves:
        p = choose_move(board, colour, last_move, move_before, policy, ladders, replies, rng)
        if record != NULL:
            record[moves] = p
        if p == PASS_LOC:
            passes += 1
            board.ko_loc = NO_LOC
        else:
            passes = 0
            board._play_unrecorded(p, colour)
            if first_player != NULL and first_player[p] == 0:
                first_player[p] = colour
        move_before = last_move
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


cdef PlayoutPolicy make_policy(bint use_patterns, bint use_tactics, str playout_tactics,
                               int size) except *:
    cdef PlayoutPolicy policy
    if playout_tactics not in PLAYOUT_TACTICS:
        raise ValueError(f"playout tactics must be one of {', '.join(PLAYOUT_TACTICS)}, "
                         f"not {playout_tactics!r}")
    policy.pattern_table = &_TABLE.view[0]
    policy.use_patterns = use_patterns
    policy.use_tactics = use_tactics
    policy.fuego_tactics = use_tactics and playout_tactics != "mogo"
    policy.read_ladders = use_tactics and playout_tactics == "fuego-ladders"
    policy.max_moves = 3 * size * size
    return policy


cdef LadderReader make_ladder_reader(const PlayoutPolicy *policy, int size):
    cdef LadderReader reader
    if not policy.read_ladders:
        return None
    reader = LadderReader()
    reader.prepare(size)
    return reader


cdef class _PolicyRun:
    """A policy and its ladder reader for the Python API below, with a seeded random state."""
    cdef PlayoutPolicy policy
    cdef LadderReader ladders
    cdef unsigned long long rng

    def __cinit__(self, int size, bint patterns, bint tactics, str playout_tactics, seed):
        self.policy = make_policy(patterns, tactics, playout_tactics, size)
        self.ladders = make_ladder_reader(&self.policy, size)
        self.rng = <unsigned long long> seed * 0x9E3779B97F4A7C15ULL + 1


def policy_move(Board board, int colour, last_move=None, seed=1, bint patterns=True,
                bint tactics=True, str playout_tactics="mogo", ReplyMemory replies=None,
                move_before=None):
    """The policy's move for colour (a loc or PASS_LOC); last_move None: no previous move;
    replies, move_before: the reply step's memory and the move before last_move."""
    cdef _PolicyRun run = _PolicyRun(board.size, patterns, tactics, playout_tactics, seed)
    return choose_move(board, colour, NO_LOC if last_move is None else last_move,
                       NO_LOC if move_before is None else move_before, &run.policy, run.ladders,
                       replies, &run.rng)


def policy_moves(Board board, int colour, last_move=None, samples=200, seed=1,
                 bint patterns=True, bint tactics=True, str playout_tactics="mogo",
                 ReplyMemory replies=None, move_before=None):
    """The set of moves the policy chose in `samples` draws (the board is not changed)."""
    cdef _PolicyRun run = _PolicyRun(board.size, patterns, tactics, playout_tactics, seed)
    cdef loc_t last = NO_LOC if last_move is None else last_move
    cdef loc_t before = NO_LOC if move_before is None else move_before
    return {choose_move(board, colour, last, before, &run.policy, run.ladders, replies,
                        &run.rng)
            for _ in range(samples)}


def playout_score(Board board, int colour, last_move=None, double komi=7.0, seed=1,
                  bint patterns=True, bint tactics=True, str playout_tactics="mogo"):
    """Play one playout on a copy of board; (Black's area margin, ownership array, moves)."""
    cdef Board work = Board(board.size)
    cdef _PolicyRun run = _PolicyRun(board.size, patterns, tactics, playout_tactics, seed)
    owner = np.zeros(board.num_locs, dtype=np.int8)
    cdef signed char[::1] owner_view = owner
    work.copy_position_from(board)
    moves = play_out(work, colour, NO_LOC if last_move is None else last_move, NO_LOC,
                     &run.policy, run.ladders, None, &run.rng, NULL, NULL)
    return area_margin(work, komi, &owner_view[0]), owner, moves


def mean_ownership(Board board, int playouts, seed=1, bint patterns=True, bint tactics=True,
                   str playout_tactics="mogo"):
    """Mean final owner of every loc over `playouts` playouts from board (not changed), Black and
    White moving first in turn: a float64 array by loc, +1 Black's in every playout, -1
    White's, 0 off the board. The same seed gives the same array."""
    cdef Board work = Board(board.size)
    cdef _PolicyRun run = _PolicyRun(board.size, patterns, tactics, playout_tactics, seed)
    total = np.zeros(board.num_locs, dtype=np.float64)
    owner = np.zeros(board.num_locs, dtype=np.int8)
    cdef double[::1] total_view = total
    cdef signed char[::1] owner_view = owner
    cdef int i, p
    cdef int locs = board.num_locs
    with nogil:
        for i in range(playouts):
            work.copy_position_from(board)
            play_out(work, C_BLACK if i % 2 == 0 else C_WHITE, NO_LOC, NO_LOC, &run.policy,
                     run.ladders, None, &run.rng, NULL, NULL)
            area_margin(work, 0.0, &owner_view[0])     # the owners only: komi is moot
            for p in range(locs):
                total_view[p] += owner_view[p]
    if playouts > 0:
        total /= playouts
    return total


def area_count(Board board, double komi=0.0):
    """Tromp-Taylor area margin for Black (stones and one-colour empty regions) minus komi."""
    return area_margin(board, komi, NULL)


def playouts_per_second(Board board, int colour, int count, seed=1, bint patterns=True,
                        bint tactics=True, str playout_tactics="mogo"):
    """count playouts from board (not changed); (seconds, mean moves per playout)."""
    import time
    cdef Board work = Board(board.size)
    cdef _PolicyRun run = _PolicyRun(board.size, patterns, tactics, playout_tactics, seed)
    cdef long total = 0
    cdef int i
    started = time.perf_counter()
    with nogil:
        for i in range(count):
            work.copy_position_from(board)
            total += play_out(work, colour, NO_LOC, NO_LOC, &run.policy, run.ladders, None,
                              &run.rng, NULL, NULL)
            area_margin(work, 0.0, NULL)
    return time.perf_counter() - started, total / max(count, 1)
