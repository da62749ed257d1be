# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The ladder reader: whether a block is captured in a ladder, read by play and undo on the board.

Reading order: read() (one read), then attacker_captures() and defender_loses(), which call each
other a move deeper each time, then the shortcuts they take (surely_escapes(), extends_block_alone()
with extended_liberties()), and last the footprints (what a read depended on, for the nets'
incremental features). ladder_captured() is the Python entry point.

The reading (Fuego's GoLadder, Pachi's tactics/ladder.c in spirit): the attacker plays only
ataris, at the block's liberties; the defender extends at its liberty or captures an attacking
block in atari, and with two liberties may also play elsewhere (then the attacker moves first).
A block with three or more liberties is never captured in a ladder. Up to MAX_LADDER_DEPTH moves
and MAX_LADDER_NODES positions are read; a ladder still unresolved then counts as escaped. The
reference is the plain Python reader in tests/unit/tactics/ladder_oracle.py, which test_ladder.py
beside it checks this one against on many positions: the same results, the same node budget. This reader sees an
escape to three or more liberties without playing it (surely_escapes()), and walks a long block
once per node (walk_ladder_block()), which is where its speed comes from.

Users: the nets' input features (engine/nets/features.pyx: a point or block "captured in a
ladder", incremental through the footprints), the playouts' ladder check on escapes
(engine/search/playout.pyx, "fuego-ladders") and the dead-stone check of the final count
(engine/scoring/deadstones.py, through ladder_captured()).
"""
from libc.stdlib cimport malloc, realloc, free, abort
from libc.string cimport memset

from engine.rules.board cimport Board
from engine.rules.types cimport EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE, WALL as C_WALL


cdef class LadderReader:
    """Reads ladders on boards of one size at a time (prepare()). Not thread-safe: one per thread."""

    def __cinit__(self):
        self.size = 0
        self.known_attacker_result = -1
        self.known_liberties = -1
        self.escape_epoch = 0
        self.walk_epoch = 0
        self.footprint_epoch = 0
        self.footprint_len = 0
        self.footprint_cap = 1024
        self.footprint = <int *> malloc(self.footprint_cap * sizeof(int))
        if self.footprint == NULL:
            raise MemoryError()
        memset(self.escape_mark, 0, sizeof(self.escape_mark))
        memset(self.walk_mark, 0, sizeof(self.walk_mark))
        memset(self.footprint_mark, 0, sizeof(self.footprint_mark))

    def __dealloc__(self):
        free(self.footprint)

    cdef void prepare(self, int size):
        if self.size == size:
            return
        self.size = size
        self.neighbour[0] = 1
        self.neighbour[1] = -1
        self.neighbour[2] = size + 2
        self.neighbour[3] = -(size + 2)

    # ------------------------------------------------------------------ reading

    cdef bint read(self, Board board, int stone, bint attacker_first) noexcept nogil:
        """Whether the block at stone is captured in a ladder (the module docstring's reading).
        Plays and undoes on board."""
        cdef bint result, was_recording = board.recording, was_reading = board.reading
        self.ladder_stone = stone
        self.ladder_defender = board.colour[stone]
        self.ladder_attacker = 3 - self.ladder_defender
        self.ladder_nodes = 0
        self.ladder_exhausted = False
        self.reads_made += 1
        board.recording = True
        board.reading = True          # every move is undone: no empty list, hash or counts
        if attacker_first:
            result = self.attacker_captures(board, 0)
        else:
            result = self.defender_loses(board, 0)
        board.recording = was_recording
        board.reading = was_reading
        self.nodes_visited += self.ladder_nodes
        return result and not self.ladder_exhausted

    cdef bint surely_escapes(self, Board board, int x, int filled, const int *ladder_libs,
                             int num_ladder_libs) noexcept nogil:
        """Whether the ladder's block, after its defender plays at the empty point x (with filled,
        when >= 0, taken as an attacker's stone), surely has three or more liberties: a lower
        bound that leaves out what captures would add, so True is exact and False means "play it
        out". False when x does not join the ladder's block (a capture elsewhere).
        ladder_libs[0..num_ladder_libs): the block's liberties, known to the caller, so the
        block itself (often long) is not walked.
        It reads x's area, with the defender's chains there whole. Saves the play and undo of the
        escapes that end a ladder, which are most of a ladder read's moves.
        While recording a footprint it counts on to four: escape_wide tells the footprint
        whether the answer survives any one move (footprint_reader_area)."""
        cdef int i, j, r, t, q, head, count = 0, num_heads = 0
        cdef int ladder_head = board.chain_head[self.ladder_stone]
        cdef int heads[4]
        cdef bint seen, joins = False
        cdef unsigned int epoch
        cdef int enough = 4 if self.recording else 3
        self.escape_wide = False
        for i in range(4):
            r = x + self.neighbour[i]
            if board.colour[r] == self.ladder_defender and board.chain_head[r] == ladder_head:
                joins = True
        if not joins:
            return False
        self.escape_epoch += 1
        if self.escape_epoch == 0:
            memset(self.escape_mark, 0, sizeof(self.escape_mark))
            self.escape_epoch = 1
        epoch = self.escape_epoch
        self.escape_mark[x] = epoch
        if filled >= 0:
            self.escape_mark[filled] = epoch
        for i in range(num_ladder_libs):
            if self.escape_mark[ladder_libs[i]] != epoch:
                self.escape_mark[ladder_libs[i]] = epoch
                count += 1
        for i in range(4):
            r = x + self.neighbour[i]
            if board.colour[r] == C_EMPTY and self.escape_mark[r] != epoch:
                self.escape_mark[r] = epoch
                count += 1
        if count >= enough:
            self.escape_wide = count >= 4
            return True
        for i in range(4):
            r = x + self.neighbour[i]
            if board.colour[r] != self.ladder_defender:
                continue
            head = board.chain_head[r]
            seen = head == ladder_head
            for j in range(num_heads):
                if heads[j] == head:
                    seen = True
                    break
            if seen:
                continue
            heads[num_heads] = head
            num_heads += 1
            q = head
            while True:
                for j in range(4):
                    t = q + self.neighbour[j]
                    if board.colour[t] == C_EMPTY and self.escape_mark[t] != epoch:
                        self.escape_mark[t] = epoch
                        count += 1
                        if count >= enough:
                            self.escape_wide = count >= 4
                            return True
                q = board.next_in_chain[q]
                if q == head:
                    break
        return count >= 3

    cdef bint count_escaped_nodes(self, int count) noexcept nogil:
        """Count the nodes the played-out reading would have visited for an escape seen by
        surely_escapes(), so the node budget runs out exactly where it would (False then)."""
        self.ladder_nodes += count
        if self.ladder_nodes > MAX_LADDER_NODES:
            self.ladder_exhausted = True
            return False
        return True

    cdef int walk_ladder_block(self, Board board, int *heads, int *stones,
                               int *num_heads) noexcept nogil:
        """The ladder block's liberties into ladder_libs (in Board.chain_liberties_into's order),
        returning their number; with heads, also the adjacent attacking chains in the order the
        walk meets them, at most MAX_ESCAPES: their heads, the first stone met of each into
        stones, their number into num_heads. One walk of the block serves both."""
        cdef int head = board.chain_head[self.ladder_stone], q = head, r, c, k, i
        cdef int n = 0, found = 0, attacker = self.ladder_attacker
        cdef unsigned int epoch
        epoch = self.new_walk_epoch()
        while True:
            for i in range(4):
                r = q + self.neighbour[i]
                c = board.colour[r]
                if c == C_EMPTY:
                    if self.walk_mark[r] != epoch:      # liberties and heads never share a point
                        self.walk_mark[r] = epoch
                        self.ladder_libs[n] = r
                        n += 1
                elif c == attacker and heads != NULL:
                    k = board.chain_head[r]
                    if self.walk_mark[k] != epoch and found < MAX_ESCAPES:
                        self.walk_mark[k] = epoch
                        heads[found] = k
                        stones[found] = r
                        found += 1
            q = board.next_in_chain[q]
            if q == head:
                break
        if heads != NULL:
            num_heads[0] = found
        return n

    cdef bint extends_block_alone(self, Board board, int x) noexcept nogil:
        """Whether the defender playing at x joins no chain but the ladder's block and captures
        nothing (then extended_liberties() gives the block's liberties after it)."""
        cdef int i, r, head = board.chain_head[self.ladder_stone]
        cdef bint joins = False
        for i in range(4):
            r = x + self.neighbour[i]
            if board.colour[r] == self.ladder_defender:
                if board.chain_head[r] != head:
                    return False
                joins = True
            elif board.colour[r] == self.ladder_attacker and board.in_atari(board.chain_head[r]):
                return False
        return joins

    cdef int extended_liberties(self, Board board, int x, const int *before,
                                int num_before) noexcept nogil:
        """The block's liberties into ladder_libs, in walk_ladder_block()'s order, after the
        defender extended at x (extends_block_alone()), from before[0..num_before), the block's
        liberties in that order before the move: without the walk of a long block. The board
        spliced x into the block's ring right after the head, so the walk meets the head's
        liberties first, then x's, then the others in their old order."""
        cdef int head = board.chain_head[self.ladder_stone], n = 0, i, r
        cdef unsigned int epoch
        epoch = self.new_walk_epoch()
        for i in range(4):
            r = head + self.neighbour[i]
            if board.colour[r] == C_EMPTY and self.walk_mark[r] != epoch:
                self.walk_mark[r] = epoch
                self.ladder_libs[n] = r
                n += 1
        for i in range(4):
            r = x + self.neighbour[i]
            if board.colour[r] == C_EMPTY and self.walk_mark[r] != epoch:
                self.walk_mark[r] = epoch
                self.ladder_libs[n] = r
                n += 1
        for i in range(num_before):
            r = before[i]
            if r != x and self.walk_mark[r] != epoch:
                self.walk_mark[r] = epoch
                self.ladder_libs[n] = r
                n += 1
        return n

    cdef bint attacker_captures(self, Board board, int depth) noexcept nogil:
        cdef int n, i, j, q, lib, other
        cdef int libs[2]
        cdef bint captured, captures_nothing, sure
        n = self.known_liberties      # ladder_libs, when the caller knows them, else -1
        self.known_liberties = -1
        self.ladder_nodes += 1
        if self.ladder_nodes > MAX_LADDER_NODES:
            self.ladder_exhausted = True
            return False
        if self.recording:
            self.footprint_chain(board, self.ladder_stone)
        if n < 0:
            n = self.walk_ladder_block(board, NULL, NULL, NULL)
        if n == 1:
            if self.recording:
                self.footprint_reader_area(board, self.ladder_libs[0], C_EMPTY, True)
            return board.is_legal_fast(self.ladder_libs[0], self.ladder_attacker)
        if n > 2 or depth >= MAX_LADDER_DEPTH:
            return False
        libs[0] = self.ladder_libs[0]
        libs[1] = self.ladder_libs[1]
        for i in range(2):
            lib = libs[i]
            other = libs[1 - i]
            if self.recording:
                self.footprint_reader_area(board, lib, C_EMPTY, True)
            if not board.is_legal_fast(lib, self.ladder_attacker):
                continue
            # An atari that captures nothing leaves the defender the other liberty alone (and
            # no ko); when extending there surely gives three liberties, the defender's node
            # ends at once (at its depth limit even before): nothing to play.
            captures_nothing = True
            for j in range(4):
                q = lib + self.neighbour[j]
                if board.colour[q] == self.ladder_defender and board.in_atari(board.chain_head[q]):
                    captures_nothing = False
                    break
            if captures_nothing:
                sure = self.surely_escapes(board, other, lib, libs, 2)
                if self.recording:
                    self.footprint_reader_area(board, other, self.ladder_defender,
                                               not (sure and self.escape_wide))
                if sure:
                    if not self.count_escaped_nodes(1 if depth + 1 >= MAX_LADDER_DEPTH else 2):
                        return False
                    continue
            board.play_move(lib, self.ladder_attacker, False)
            captured = self.defender_loses(board, depth + 1)
            board.undo_move()
            if self.ladder_exhausted:
                return False
            if captured:
                return True
        return False

    cdef bint defender_loses(self, Board board, int depth) noexcept nogil:
        cdef int n, i, j, k, lib, num_moves, num_checked = 0
        cdef int moves[MAX_ESCAPES]
        cdef int checked[MAX_ESCAPES]           # adjacent attacking chains (heads), first seen first
        cdef int checked_stone[MAX_ESCAPES]     # and the stone of each next to the block
        cdef bint captured, known, sure, simple
        self.ladder_nodes += 1
        if self.ladder_nodes > MAX_LADDER_NODES:
            self.ladder_exhausted = True
            return False
        if self.recording:
            self.footprint_chain(board, self.ladder_stone)
        n = self.walk_ladder_block(board, checked, checked_stone, &num_checked)
        if n > 2 or depth >= MAX_LADDER_DEPTH:
            return False
        for i in range(n):
            moves[i] = self.ladder_libs[i]
        num_moves = n
        if n == 2:
            # The defender may play elsewhere: this is the attacker-first read of the same block,
            # which at the root a caller reading both ways may have just made.
            if depth == 0 and self.known_attacker_result >= 0:
                captured = self.known_attacker_result == 1
            else:
                self.known_liberties = n      # the same position: ladder_libs still holds them
                captured = self.attacker_captures(board, depth)
            if self.ladder_exhausted or not captured:
                return False
        # Escapes: the liberties, then the last liberty of every adjacent attacking block in atari
        # (the blocks found by the walk above; the attacker-first read in between restored the
        # board exactly).
        for i in range(num_checked):
            k = checked[i]
            if self.recording:
                self.footprint_reader_chain(board, checked_stone[i])
            if board.in_atari(k):
                lib = board.atari_liberty(k)
                known = False
                for j in range(num_moves):
                    if moves[j] == lib:
                        known = True
                        break
                if not known and num_moves < MAX_ESCAPES:
                    moves[num_moves] = lib
                    num_moves += 1
        for i in range(num_moves):
            if not board.is_legal_fast(moves[i], self.ladder_defender):
                if self.recording:
                    self.footprint_reader_area(board, moves[i], self.ladder_defender, True)
                continue
            sure = self.surely_escapes(board, moves[i], -1, moves, n)
            if self.recording:
                self.footprint_reader_area(board, moves[i], self.ladder_defender,
                                           not (sure and self.escape_wide))
            if sure:
                self.count_escaped_nodes(1)     # the attacker's node sees three liberties
                return False
            simple = self.extends_block_alone(board, moves[i])
            board.play_move(moves[i], self.ladder_defender, False)
            if simple:
                self.known_liberties = self.extended_liberties(board, moves[i], moves, n)
            captured = self.attacker_captures(board, depth + 1)
            board.undo_move()
            if self.ladder_exhausted:
                return False
            if not captured:
                return False
        return True

    # ------------------------------------------------------------------ footprints

    cdef void begin_footprint(self) noexcept nogil:
        """Empties the footprint (recording itself is the caller's switch)."""
        self.footprint_len = 0
        self.footprint_epoch += 1
        if self.footprint_epoch == 0:
            memset(self.footprint_mark, 0, sizeof(self.footprint_mark))
            self.footprint_epoch = 1

    cdef void footprint_point(self, int p) noexcept nogil:
        cdef int *bigger
        if self.footprint_mark[p] == self.footprint_epoch:
            return
        self.footprint_mark[p] = self.footprint_epoch
        if self.footprint_len == self.footprint_cap:
            bigger = <int *> realloc(self.footprint, 2 * self.footprint_cap * sizeof(int))
            if bigger == NULL:
                abort()      # a lost footprint would silently give wrong successor features
            self.footprint = bigger
            self.footprint_cap *= 2
        self.footprint[self.footprint_len] = p
        self.footprint_len += 1

    cdef void footprint_chain(self, Board board, int p) noexcept nogil:
        """A chain's stones and their neighbours: all that its liberties depend on."""
        cdef int head = board.chain_head[p], q = head, i, r
        while True:
            self.footprint_point(q)
            for i in range(4):
                r = q + self.neighbour[i]
                if board.colour[r] != C_WALL:
                    self.footprint_point(r)
            q = board.next_in_chain[q]
            if q == head:
                break

    cdef void footprint_area(self, Board board, int p) noexcept nogil:
        """What playing (or testing the legality of) a stone at p reads."""
        cdef int i, q, c
        self.footprint_point(p)
        for i in range(4):
            q = p + self.neighbour[i]
            c = board.colour[q]
            if c == C_EMPTY:
                self.footprint_point(q)
            elif c == C_BLACK or c == C_WHITE:
                self.footprint_chain(board, q)

    cdef void footprint_reader_chain(self, Board board, int p) noexcept nogil:
        """What the ladder reader reads of the chain at p, next to its block or to a move: the
        stone, and the chain's stones and neighbours only when it has at most two liberties. A
        chain with three or more liberties stays out of atari after any single move elsewhere
        (a move fills one liberty; captures and merges only add), so its being out of atari, all
        the reader asks of it, holds in every successor whose move is not already a recorded
        point; and its stones then matter only through the reader's own later footprints."""
        self.footprint_point(p)
        if board.chain_liberty_count(p) <= 2:
            self.footprint_chain(board, p)

    cdef void footprint_reader_area(self, Board board, int p, int whole_colour,
                                    bint whole_liberties) noexcept nogil:
        """footprint_area() for a move the ladder reader tries (see footprint_reader_chain):
        adjacent chains of whole_colour (surely_escapes() counts their liberties) whole, or
        without their liberties when whole_liberties is False: when surely_escapes() counted four
        or more, one move on any of them still leaves three (a stone fills one point, captures
        only add liberties), so its answer, and the escape's legality, cannot change; their
        stones stay, a capture of them being the one change that is not a stone placed."""
        cdef int i, q, c, head
        self.footprint_point(p)
        for i in range(4):
            q = p + self.neighbour[i]
            c = board.colour[q]
            if c == C_EMPTY:
                self.footprint_point(q)
            elif c == whole_colour:
                if whole_liberties:
                    self.footprint_chain(board, q)
                else:
                    head = board.chain_head[q]
                    q = head
                    while True:
                        self.footprint_point(q)
                        q = board.next_in_chain[q]
                        if q == head:
                            break
            elif c == C_BLACK or c == C_WHITE:
                self.footprint_reader_chain(board, q)


def ladder_captured(Board board, int loc, bint attacker_moves_first=True):
    """Whether the block at loc is captured in a ladder (the module docstring's reading), the
    attacker moving first, or the defender with attacker_moves_first=False. The ko point at the
    root is the board's. The board is played on and restored exactly (stones, ko, hash, undo
    history)."""
    if board.get(loc) not in (C_BLACK, C_WHITE):
        raise ValueError(f"no stone at point {loc}")
    cdef LadderReader reader = LadderReader()
    reader.prepare(board.size)
    return bool(reader.read(board, loc, attacker_moves_first))
