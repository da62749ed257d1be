# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Monte-Carlo tree search with RAVE (Gelly & Silver, "Monte-Carlo tree search and rapid action
value estimation in computer Go", AIJ 2011), on a flat array of nodes (tree.pxd).

Reading order: `TreeSearch._simulate()` is one simulation (descend with `_select()`, expand with
`_expand()`, ask the evaluator with `_apply_prior()`, play out with engine/search/playout.pyx, back up); `run()` repeats it under a budget
of simulations and seconds; `set_root()` / `advance()` start a search or keep the subtree of the
moves played since the last one.

Selection (MC-RAVE with the minimum-MSE schedule): a child's value is
    (1 - b) * Q + b * Q_rave,   b = n_rave / (n + n_rave + n * n_rave / rave_equivalence)
where Q and Q_rave include the prior as equivalent experience (prior_visits games at the prior's
win rate, added to both), plus an optional UCB term exploration * sqrt(ln N / n).

Priors. Every child starts with even_prior_visits games at 50%, and (knowledge_prior_visits > 0)
games at the win rate of a few rules of thumb, as Fuego's default prior knowledge and MoGo's
"handcrafted heuristic" give them: a capture or an escape from atari that leaves two liberties 1.0,
a self-atari 0.0, a move whose 3x3 neighbourhood is in the playouts' pattern table 0.6, a move on
the first or second line far from every stone (the opening's wasted moves) 0.1 or 0.3, on boards of
LARGE_BOARD lines and more one on the third or fourth line far from every stone (where openings are
played, and which 19x19 playouts hardly tell apart from the edges) 0.7, anything else 0.4, and the
pass 0.0 (a pass has to earn its visits). On those boards the tree also leaves out the moves on the
first and second line with no stone within distance 3: 19x19 playouts rate them higher than the
third and fourth lines (on the empty board RAVE's mean is 0.494 on the second line against 0.483 on
the third and fourth, over some 18,000 RAVE games each), and tens of thousands of simulations
outweigh any prior, so a 10 s search opened on the second line. With an evaluator, once a node has
net_prior_threshold visits (the root at once), `prior_function(path_moves, colour)`
(engine/play/search_player.py) returns for every point and pass the evaluator's win probability of
the move for the mover and its selection probability, and optionally the games each child's prior
counts (a move predictor's prior weighs its likely moves more); each child's prior becomes those
games (else net_prior_visits) at that win rate, and the node remembers the evaluator's value of
the position (None: no value), which is
mixed into the result of every simulation that passes through it (the deepest such node): result =
(1 - value_weight) * playout + value_weight * value.

Results are Black wins (1), losses (0) or jigo (0.5) by the Tromp-Taylor count of the playout's
final position with komi. A simulation whose path ends with two passes plays out from there all
the same: a referee (GNU Go, CSA*) removes dead stones before counting, and the playout is how the
tree removes them, so a pass is never worth more than the count with the dead stones taken off.
Only positional superko is checked in the tree; playouts use simple ko.
"""

import numpy as np

from libc.math cimport log, sqrt, INFINITY
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memset
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from engine.search.rootstate cimport move_flags, sorted_contains, sorted_hashes
from engine.rules.board cimport Board, hash_t, LEGAL
from engine.rules.types cimport EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE
from engine.rules.types cimport loc_t, MAX_LOCS, PASS_LOC, NO_LOC
from engine.search.playout cimport (PlayoutPolicy, ReplyMemory, make_policy, play_out,
                                     area_margin, next_random, pattern_index, make_ladder_reader)
from engine.tactics.selfatari cimport liberties_after


DEF MAX_DEPTH = 1000            # a path deeper than this stops descending (path[] holds 1024)
DEF STOP_CHECK_EVERY = 16       # simulations between two looks at whether the leader is safe
DEF LARGE_BOARD = 15            # lines from which the knowledge prior favours the empty 3rd and 4th lines

LARGE_BOARD_LINES = LARGE_BOARD  # (for Python: the search player's large-board defaults)
DEFAULT_MAX_NODES = 1_000_000   # about 80 MB of nodes; past it the search stops growing
DEFAULT_EXPAND_THRESHOLD = 2    # visits before a leaf gets children (Pachi expands at 2)
DEFAULT_RAVE_EQUIVALENCE = 3000.0  # where tree and RAVE statistics weigh the same (Pachi's 3000)
DEFAULT_EVEN_PRIOR = 10.0       # games at 50% per child without an evaluator (michi, Pachi: ~10)
DEFAULT_KNOWLEDGE_PRIOR = 0.0   # games at the rules of thumb's win rate per child (0: none)
DEFAULT_NET_PRIOR = 20.0        # games at the evaluator's win rate per child
DEFAULT_NET_PRIOR_THRESHOLD = 8  # visits before a node asks the evaluator (the root: at once); an
                                 # evaluator call costs tens of playouts, so only nodes that the
                                 # search comes back to get one
DEFAULT_VALUE_WEIGHT = 0.0      # the evaluator's value in each result (0: playouts only)


cdef inline double now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef class TreeSearch:
    """One search tree. Parameters: max_nodes (the node budget), expand_threshold, the RAVE
    equivalence, the UCB exploration constant, the even and the evaluator's prior (in games),
    value_weight, the playout policy's patterns and tactics (on/off) and its set of tactics
    (playout_tactics: one of engine/search/playout.pyx's PLAYOUT_TACTICS), last_good_reply (the
    playouts also play the replies that won this tree's last simulations: playout.ReplyMemory,
    kept while the tree is reused), and the
    seed of the simulations' random numbers (with one thread and the same seed a search repeats
    exactly)."""

    def __cinit__(self):
        self.nodes = NULL
        self.seen = NULL
        self.root_filter = NULL
        self.ownership_sum = NULL
        self.sequence = NULL

    def __init__(self, int size, double komi=7.0, *, int max_nodes=DEFAULT_MAX_NODES,
                 int expand_threshold=DEFAULT_EXPAND_THRESHOLD,
                 double rave_equivalence=DEFAULT_RAVE_EQUIVALENCE, double exploration=0.0,
                 double even_prior_visits=DEFAULT_EVEN_PRIOR,
                 double knowledge_prior_visits=DEFAULT_KNOWLEDGE_PRIOR,
                 double net_prior_visits=DEFAULT_NET_PRIOR,
                 int net_prior_threshold=DEFAULT_NET_PRIOR_THRESHOLD,
                 double value_weight=DEFAULT_VALUE_WEIGHT, bint patterns=True,
                 bint tactics=True, str playout_tactics="mogo", bint last_good_reply=False,
                 seed=0):
        if max_nodes < 2:
            raise ValueError(f"max_nodes must be at least 2, not {max_nodes}")
        if expand_threshold < 0 or rave_equivalence <= 0 or exploration < 0 or \
                even_prior_visits < 0 or knowledge_prior_visits < 0 or net_prior_visits < 0 or \
                net_prior_threshold < 0 or \
                not 0 <= value_weight <= 1:
            raise ValueError("search parameters out of range")
        self.size = size
        self.komi = komi
        self.max_nodes = max_nodes
        self.expand_threshold = expand_threshold
        self.rave_equivalence = rave_equivalence
        self.exploration = exploration
        self.even_prior_visits = even_prior_visits
        self.knowledge_prior_visits = knowledge_prior_visits
        self.net_prior_visits = net_prior_visits
        self.net_prior_threshold = net_prior_threshold
        self.value_weight = value_weight
        self.policy = make_policy(patterns, tactics, playout_tactics, size)
        self.playout_tactics = playout_tactics
        self.ladder_reader = make_ladder_reader(&self.policy, size)
        self.replies = None
        if last_good_reply:
            self.replies = ReplyMemory(Board(size).num_locs)
            self.sequence = <loc_t *> malloc((MAX_DEPTH + 1 + self.policy.max_moves) *
                                             sizeof(loc_t))
            if self.sequence == NULL:
                raise MemoryError()
        self.rng = (<unsigned long long> seed) * 0x9E3779B97F4A7C15ULL + 0x6B6F73756D69ULL
        self.root_board = Board(size)
        self.work = Board(size)
        self.capacity = 0
        self.num_nodes = 0
        self.ownership_sum = <double *> malloc(MAX_LOCS * sizeof(double))
        if self.ownership_sum == NULL:
            raise MemoryError()
        self.prior_function = None
        self.set_root(Board(size), C_BLACK)

    def __dealloc__(self):
        free(self.root_filter)
        free(self.nodes)
        free(self.seen)
        free(self.ownership_sum)
        free(self.sequence)

    # --- the root ---------------------------------------------------------------------------

    def set_root(self, Board board not None, int colour, seen_hashes=(), last_move=None,
                 int passes=0):
        """Start a new tree at board (copied) with colour to move. seen_hashes: the stones hashes
        of the game's earlier positions (positional superko); last_move: the game's last move
        (a loc, PASS, or None); passes: consecutive passes that ended the game so far."""
        if board.size != self.size:
            raise ValueError(f"the tree is for {self.size}x{self.size}, not {board.size}x{board.size}")
        if colour != C_BLACK and colour != C_WHITE:
            raise ValueError(f"bad colour {colour!r}")
        self.root_board = board.copy()
        self.root_colour = colour
        self.root_last_move = NO_LOC if last_move is None else last_move
        self.root_passes = passes
        self._set_seen(seen_hashes)
        self.num_nodes = 0
        if self._grow(1) < 0:
            raise MemoryError()
        self._init_node(0, NO_LOC, -1, board.hash)
        self.num_nodes = 1
        self._clear_root_statistics()
        if self.replies is not None:
            self.replies.clear()

    cdef void _set_seen(self, seen_hashes) except *:
        free(self.seen)
        self.seen = NULL
        self.seen = sorted_hashes(seen_hashes, &self.num_seen)

    cdef void _init_node(self, int index, loc_t move, int parent, hash_t h) noexcept nogil:
        cdef Node *n = &self.nodes[index]
        memset(n, 0, sizeof(Node))
        n.move = move
        n.parent = parent
        n.first_child = -1
        n.prior = -1
        n.net_black_win = -1
        n.hash = h

    def _clear_root_statistics(self):
        memset(self.ownership_sum, 0, MAX_LOCS * sizeof(double))
        self.playouts = 0

    def advance(self, moves, Board board not None, seen_hashes=(), int passes=0):
        """Keep the subtree reached by `moves` (locs or PASS, from the root) as the new root, at
        the position board; False (and a fresh tree) if the tree does not hold that line."""
        cdef int node = 0, child, i
        colour = self.root_colour
        for move in moves:
            found = -1
            if self.nodes[node].first_child >= 0:
                for i in range(self.nodes[node].num_children):
                    child = self.nodes[node].first_child + i
                    if self.nodes[child].move == move:
                        found = child
                        break
            colour = 3 - colour
            if found < 0:
                # the mover at board is the root's colour after all the moves, not after the
                # ones the tree held (a GoGui user may play several moves before genmove)
                to_move = self.root_colour if len(moves) % 2 == 0 else 3 - self.root_colour
                self.set_root(board, to_move, seen_hashes, moves[len(moves) - 1], passes)
                return False
            node = found
        if node != 0:
            self._reroot(node)
        self.root_board = board.copy()
        self.root_colour = colour
        if moves:
            self.root_last_move = moves[len(moves) - 1]
        self.root_passes = passes
        self._set_seen(seen_hashes)
        if moves:
            self._clear_root_statistics()
        return True

    cdef void _reroot(self, int new_root):
        """Copy the subtree of new_root to the front of a fresh array (breadth first, children
        kept contiguous)."""
        cdef Node *old = self.nodes
        cdef int old_count = self.num_nodes
        cdef Node *fresh = <Node *> malloc(self.capacity * sizeof(Node))
        cdef int *source = <int *> malloc(self.capacity * sizeof(int))
        cdef int head = 0, tail = 1, i, k
        cdef Node *n
        if fresh == NULL or source == NULL:
            free(fresh)
            free(source)
            raise MemoryError()
        fresh[0] = old[new_root]
        fresh[0].parent = -1
        fresh[0].move = NO_LOC
        source[0] = new_root
        while head < tail:
            n = &fresh[head]
            if n.first_child >= 0:
                k = n.first_child
                n.first_child = tail
                for i in range(n.num_children):
                    fresh[tail + i] = old[k + i]
                    fresh[tail + i].parent = head
                    source[tail + i] = k + i
                tail += n.num_children
            head += 1
        free(old)
        free(source)
        self.nodes = fresh
        self.num_nodes = tail

    cdef int _grow(self, int extra) noexcept nogil:
        """Room for `extra` more nodes within the budget: 0, or -1 if it cannot be had."""
        cdef int wanted = self.num_nodes + extra, new_capacity
        cdef Node *bigger
        if wanted > self.max_nodes:
            return -1
        if wanted <= self.capacity:
            return 0
        new_capacity = max(wanted, min(self.max_nodes, max(1024, 2 * self.capacity)))
        bigger = <Node *> realloc(self.nodes, new_capacity * sizeof(Node))
        if bigger == NULL:
            return -1
        self.nodes = bigger
        self.capacity = new_capacity
        return 0

    def set_root_filter(self, permitted):
        """Restrict the root's moves (GTP analysis `avoid`/`allow`): an array of num_locs + 1
        flags (the last one: pass), or None for no restriction. Deeper moves are not restricted."""
        free(self.root_filter)
        self.root_filter = NULL
        if permitted is not None:
            self.root_filter = move_flags(permitted, self.root_board.num_locs + 1)

    def set_prior_function(self, function):
        """function(path_moves, colour) -> (win, probability, black_win) or None (no evaluator):
        win and probability are float arrays of num_locs + 1 (the last entry: pass) for the
        mover; black_win the evaluator's win probability of the position for Black."""
        self.prior_function = function

    # --- one simulation ---------------------------------------------------------------------

    cdef bint _superko_repeat(self, hash_t h, int node) noexcept nogil:
        if sorted_contains(self.seen, self.num_seen, h):
            return True
        while node >= 0:
            if self.nodes[node].hash == h:
                return True
            node = self.nodes[node].parent
        return False

    cdef int _expand(self, int node, int colour, int depth) noexcept nogil:
        """Give node its children (the legal moves of self.work, colour to move, own eyes left
        out, on large boards the wasted edge moves too; and pass), each with the even and the
        knowledge prior. 0, or -1 if the budget is spent."""
        cdef int count = 0, i, first
        cdef bint large = self.size >= LARGE_BOARD
        cdef loc_t p
        cdef hash_t h
        cdef loc_t moves[MAX_LOCS]
        cdef hash_t hashes[MAX_LOCS]
        cdef Node *child
        for i in range(self.work.num_empty):
            p = self.work.empty_list[i]
            if self.work.illegal_reason(p, colour) != LEGAL or self.work.is_eye_fast(p, colour):
                continue
            # (never all moves: the third-line point beside a wasted move is empty all round)
            if large and self._wasted_edge_move(p):
                continue
            h = self.work.hash_after(p, colour)
            if self._superko_repeat(h, node):
                continue
            moves[count] = p
            hashes[count] = h
            count += 1
        moves[count] = PASS_LOC
        hashes[count] = self.work.zobrist
        count += 1
        if self._grow(count) < 0:
            return -1
        first = self.num_nodes
        for i in range(count):
            self._init_node(first + i, moves[i], node, hashes[i])
            child = &self.nodes[first + i]
            child.prior_visits = self.even_prior_visits
            child.prior_wins = 0.5 * self.even_prior_visits
            if self.knowledge_prior_visits > 0:
                child.prior_visits += self.knowledge_prior_visits
                child.prior_wins += self.knowledge_prior_visits * self._knowledge(moves[i], colour)
        self.nodes[node].first_child = first
        self.nodes[node].num_children = count
        self.nodes[node].visits_at_expansion = self.nodes[node].visits
        self.num_nodes += count
        return 0

    cdef int _apply_prior(self, int node, int first, int count, int colour, int depth) except -1:
        """The evaluator's prior for the children first .. first + count - 1 of node; an
        exception is kept for run() to raise, and the search stops."""
        cdef double[::1] win, probability, visits = None
        cdef int i, index, d
        cdef Node *child
        self.nodes[node].prior_asked = True
        try:
            path = [self.nodes[self.path[d]].move for d in range(1, depth + 1)]
            answer = self.prior_function(path, colour)
            if answer is None:
                return 0
            if len(answer) == 4:
                win, probability, black_win, visits = answer
            else:
                win, probability, black_win = answer
            for i in range(count):
                child = &self.nodes[first + i]
                index = self.work.num_locs if child.move == PASS_LOC else child.move
                child.prior_visits = self.net_prior_visits if visits is None else visits[index]
                child.prior_wins = child.prior_visits * win[index]
                child.prior = probability[index]
            if black_win is not None:
                self.nodes[node].net_black_win = black_win
        except BaseException as error:
            self.prior_error = error
            self.prior_failed = True
        return 0

    cdef int _select(self, int node) noexcept nogil:
        """The child with the best MC-RAVE value (ties: the first; children are in no order the
        board would favour only by the empty list's order, so the first is as good as any)."""
        cdef Node *parent = &self.nodes[node]
        cdef Node *c
        cdef int i, best = parent.first_child
        cdef double n, w, rn, rw, q, beta, value, best_value = -INFINITY
        cdef double log_parent = log(parent.visits + 1.0)
        for i in range(parent.num_children):
            c = &self.nodes[parent.first_child + i]
            if node == 0 and self.root_filter != NULL and \
                    not self.root_filter[self.work.num_locs if c.move == PASS_LOC else c.move]:
                continue
            n = c.visits + c.prior_visits
            w = c.wins + c.prior_wins
            rn = c.amaf_visits + c.prior_visits
            rw = c.amaf_wins + c.prior_wins
            if n > 0:
                q = w / n
                if rn > 0:
                    beta = rn / (rn + n + rn * n / self.rave_equivalence)
                    value = (1.0 - beta) * q + beta * (rw / rn)
                else:
                    value = q
                if self.exploration > 0:
                    value += self.exploration * sqrt(log_parent / n)
            elif rn > 0:
                value = rw / rn
            else:
                value = 1.0 + (next_random(&self.rng) >> 11) * (1.0 / 9007199254740992.0) * 1e-6
            if value > best_value:
                best_value = value
                best = parent.first_child + i
        return best

    cdef double _knowledge(self, loc_t p, int colour) noexcept nogil:
        """The rules of thumb's win rate for colour playing p on self.work (module docstring)."""
        cdef int i, c, line
        cdef bint rescues = False
        cdef loc_t q
        if p == PASS_LOC:
            return 0.0
        for i in range(4):
            q = p + self.work.neighbour_offset[i]
            c = self.work.colour[q]
            if c == 3 - colour and self.work.in_atari(self.work.chain_head[q]):
                return 1.0                                  # a capture
            if c == colour and self.work.in_atari(self.work.chain_head[q]):
                rescues = True
        if liberties_after(self.work, p, colour, 2) < 2:
            return 0.0                                      # a self-atari
        if rescues:
            return 1.0                                      # an escape to two liberties
        if self.policy.pattern_table[pattern_index(self.work, p, colour)]:
            return 0.6
        line = self._line(p)
        if (line <= 1 or (line <= 3 and self.size >= LARGE_BOARD)) and not self._stone_near(p):
            return 0.1 if line == 0 else (0.3 if line == 1 else 0.7)
        return 0.4

    cdef int _line(self, loc_t p) noexcept nogil:
        """p's line from the edge, 0 for the first."""
        cdef int row = p // self.work.stride - 1, col = p % self.work.stride - 1
        return min(min(row, col), min(self.size - 1 - row, self.size - 1 - col))

    cdef bint _stone_near(self, loc_t p) noexcept nogil:
        """A stone of either colour within Manhattan distance 3 of p on self.work."""
        cdef int dr, dc, size = self.size
        cdef int row = p // self.work.stride - 1, col = p % self.work.stride - 1
        for dr in range(-3, 4):
            for dc in range(abs(dr) - 3, 4 - abs(dr)):
                if 0 <= row + dr < size and 0 <= col + dc < size and \
                        self.work.colour[p + dr * self.work.stride + dc] != C_EMPTY:
                    return True
        return False

    cdef bint _wasted_edge_move(self, loc_t p) noexcept nogil:
        """A move on the first or second line with no stone within distance 3: on large boards
        the tree leaves it out (module docstring)."""
        return self._line(p) <= 1 and not self._stone_near(p)

    cdef int _simulate(self) noexcept nogil:
        """One simulation. Returns its depth in the tree, or -1 if the prior function failed."""
        cdef int node = 0, depth = 0, colour = self.root_colour, passes = self.root_passes
        cdef int child, d, i, to_move, value_node = -1, playout_moves
        cdef loc_t move, last_move = self.root_last_move
        cdef double margin, result, black_result
        cdef Node *n
        cdef Node *c
        self.work.copy_position_from(self.root_board)
        memset(self.first_colour, 0, self.work.num_locs * sizeof(int))
        self.path[0] = 0
        while True:
            if self.nodes[node].net_black_win >= 0:
                value_node = node
            if passes >= 2 or depth >= MAX_DEPTH:
                break
            if self.nodes[node].first_child < 0:
                if node != 0 and self.nodes[node].visits < self.expand_threshold:
                    break
                if self._expand(node, colour, depth) < 0:
                    break
            if self.prior_function is not None and not self.nodes[node].prior_asked and \
                    (node == 0 or self.nodes[node].visits >= self.net_prior_threshold):
                with gil:
                    self._apply_prior(node, self.nodes[node].first_child,
                                      self.nodes[node].num_children, colour, depth)
                if self.prior_failed:
                    return -1
                if self.nodes[node].net_black_win >= 0:
                    value_node = node
            child = self._select(node)
            move = self.nodes[child].move
            if move == PASS_LOC:
                passes += 1
                self.work.ko_loc = NO_LOC
            else:
                passes = 0
                self.work._play_unrecorded(move, colour)
                if self.first_colour[move] == 0:
                    self.first_colour[move] = colour
                    self.first_depth[move] = depth
            depth += 1
            self.path[depth] = child
            node = child
            last_move = move
            colour = 3 - colour
        # moves past the tree count for RAVE at every depth of the path. After two passes play
        # goes on too (see the module docstring), with both sides free to move again.
        playout_moves = self._play_out_recording(colour, NO_LOC if passes >= 2 else last_move,
                                                 depth)
        margin = area_margin(self.work, self.komi, self.owner)
        black_result = 1.0 if margin > 0 else (0.0 if margin < 0 else 0.5)
        if self.replies is not None:
            for d in range(depth):
                self.sequence[d] = self.nodes[self.path[d + 1]].move
            # (the move before the root's last one is not known: a pass or no move's slot)
            self.replies.learn(self.sequence, depth + playout_moves, self.root_colour, NO_LOC,
                               self.root_last_move,
                               C_BLACK if margin > 0 else (C_WHITE if margin < 0 else 0))
        if value_node >= 0 and self.value_weight > 0:
            black_result = (1.0 - self.value_weight) * black_result + \
                self.value_weight * self.nodes[value_node].net_black_win
        # back up; a node's statistics are for the player who made its move, the opposite of
        # the colour to move at it
        to_move = self.root_colour
        for d in range(depth + 1):
            n = &self.nodes[self.path[d]]
            n.visits += 1
            n.score_sum += margin
            if d > 0:
                n.wins += black_result if to_move == C_WHITE else 1.0 - black_result
            # RAVE: the children of path[d] whose move the player to move there played first,
            # at depth d or later
            if n.first_child >= 0:
                for i in range(n.num_children):
                    c = &self.nodes[n.first_child + i]
                    move = c.move
                    if move >= 0 and self.first_colour[move] == to_move and \
                            self.first_depth[move] >= d:
                        c.amaf_visits += 1
                        c.amaf_wins += black_result if to_move == C_BLACK else 1.0 - black_result
            to_move = 3 - to_move
        for i in range(self.work.num_locs):
            self.ownership_sum[i] += self.owner[i]
        self.playouts += 1
        return depth

    cdef int _play_out_recording(self, int colour, loc_t last_move, int depth) noexcept nogil:
        """The playout from self.work after a tree path of `depth` moves (the moves go to
        self.sequence after the path's when the replies are kept); the moves it played."""
        cdef int i
        cdef loc_t move_before = NO_LOC
        # play_out records first players with depth unknown: mark the points it will fill
        for i in range(self.work.num_locs):
            if self.first_colour[i] == 0:
                self.first_depth[i] = depth
        if depth >= 2:
            move_before = self.nodes[self.path[depth - 1]].move
        elif depth == 1:
            move_before = self.root_last_move
        return play_out(self.work, colour, last_move, move_before, &self.policy,
                        self.ladder_reader, self.replies, &self.rng, self.first_colour,
                        NULL if self.sequence == NULL else &self.sequence[depth])

    # --- the budget -------------------------------------------------------------------------

    def run(self, long max_simulations, double max_seconds=INFINITY, bint stop_early=True):
        """Simulate until max_simulations, max_seconds, or (stop_early) until the most visited
        root move can no longer be overtaken within the simulations left. Returns the number
        of simulations made."""
        cdef long done = 0, left
        cdef double started = now(), deadline = started + max_seconds, elapsed
        cdef int first_visits, second_visits
        cdef bint failed = False
        self.prior_error = None
        self.prior_failed = False
        with nogil:
            while done < max_simulations:
                if self._simulate() < 0:
                    failed = True
                    break
                done += 1
                # the clock after every simulation: one that expands a node may wait for a
                # slow prior (milliseconds), and a player nearly out of time has no 16 to spare
                elapsed = now() - started
                if elapsed >= max_seconds:
                    break
                if done % STOP_CHECK_EVERY == 0:
                    if stop_early and done >= 64 and elapsed > 0:
                        left = max_simulations - done
                        if max_seconds < INFINITY:
                            left = min(left, <long> (done * (max_seconds - elapsed) / elapsed) + 1)
                        self._top_two_visits(&first_visits, &second_visits)
                        if first_visits - second_visits > left:
                            break
        if failed:
            error, self.prior_error, self.prior_failed = self.prior_error, None, False
            raise error
        return done

    cdef void _top_two_visits(self, int *first, int *second) noexcept nogil:
        cdef Node *root = &self.nodes[0]
        cdef int i, v
        first[0] = 0
        second[0] = 0
        if root.first_child < 0:
            return
        for i in range(root.num_children):
            v = self.nodes[root.first_child + i].visits
            if v > first[0]:
                second[0] = first[0]
                first[0] = v
            elif v > second[0]:
                second[0] = v

    # --- reading the tree ---------------------------------------------------------------------

    def root_children(self):
        """The root's moves, most visited first: list of dicts with move, visits, winrate (for
        the player to move at the root; the prior's when unvisited), score_lead (points, same
        side), prior (the evaluator's probability or None), rave_visits."""
        cdef Node root = self.nodes[0]
        cdef Node c
        cdef int i
        children = []
        if root.first_child < 0:
            return children
        sign = 1.0 if self.root_colour == C_BLACK else -1.0
        for i in range(root.num_children):
            c = self.nodes[root.first_child + i]
            if c.visits > 0:
                winrate = c.wins / c.visits
                score = sign * c.score_sum / c.visits
            else:
                winrate = c.prior_wins / c.prior_visits if c.prior_visits > 0 else 0.5
                score = float("nan")
            children.append({"move": c.move, "visits": c.visits, "winrate": winrate,
                             "score_lead": score, "prior": None if c.prior < 0 else c.prior,
                             "rave_visits": c.amaf_visits, "index": root.first_child + i})
        children.sort(key=lambda entry: (-entry["visits"], -entry["winrate"]))
        return children

    def principal_variation(self, int node, int max_length=20):
        """The moves from node (an index from root_children) down the most visited children."""
        line = [self.nodes[node].move]
        while len(line) < max_length and self.nodes[node].first_child >= 0:
            best, best_visits = -1, 0
            for i in range(self.nodes[node].num_children):
                child = self.nodes[node].first_child + i
                if self.nodes[child].visits > best_visits:
                    best, best_visits = child, self.nodes[child].visits
            if best < 0:
                break
            node = best
            line.append(self.nodes[node].move)
        return line

    @property
    def root_visits(self):
        return self.nodes[0].visits

    @property
    def root_winrate(self):
        """Win rate of the player to move at the root, over the simulations so far (0.5 if none)."""
        cdef Node *root = &self.nodes[0]
        cdef Node *c
        cdef int i
        cdef double black_wins = 0, total = 0
        if root.first_child < 0:
            return 0.5
        for i in range(root.num_children):
            c = &self.nodes[root.first_child + i]
            total += c.visits
            black_wins += c.wins if self.root_colour == C_BLACK else c.visits - c.wins
        if total == 0:
            return 0.5
        return black_wins / total if self.root_colour == C_BLACK else 1.0 - black_wins / total

    def ownership(self):
        """Mean final owner per point over the simulations since set_root (+1 Black), (num_locs,)."""
        result = np.zeros(self.root_board.num_locs)
        if self.playouts:
            for i in range(self.root_board.num_locs):
                result[i] = self.ownership_sum[i] / self.playouts
        return result

    def node(self, int index):
        """One node's fields as a dict (tests, debugging)."""
        if not 0 <= index < self.num_nodes:
            raise IndexError(index)
        return dict(self.nodes[index])

    def check_invariants(self):
        """AssertionError unless every expanded node's visits are its visits at expansion plus
        its children's, RAVE counts are within the parent's visits, and wins within visits."""
        for index in range(self.num_nodes):
            n = self.node(index)
            assert 0 <= n["wins"] <= n["visits"], (index, n)
            if n["first_child"] < 0:
                continue
            assert n["first_child"] + n["num_children"] <= self.num_nodes, index
            children = [self.node(n["first_child"] + i) for i in range(n["num_children"])]
            assert n["visits"] == n["visits_at_expansion"] + sum(c["visits"] for c in children), (index, n)
            for c in children:
                assert c["parent"] == index
                assert 0 <= c["amaf_visits"] <= n["visits"] - n["visits_at_expansion"], (index, c)
                assert 0 <= c["amaf_wins"] <= c["amaf_visits"]
            moves = [c["move"] for c in children]
            assert len(set(moves)) == len(moves) and moves[len(moves) - 1] == PASS_LOC, index
