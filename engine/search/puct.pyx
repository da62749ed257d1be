# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""PUCT search over a net that judges positions (AlphaGo Zero's and KataGo's search): no
playouts; every new node is evaluated once by the net, whose move probabilities become its
children's priors and whose value and score are backed up the path. Nodes live in a flat array
(puct.pxd), as in engine/search/tree.pyx, whose interface this one shares (set_root, advance,
set_root_filter, run, root_children, principal_variation, ownership), so the search player
(engine/play/search_player.py) drives either.

Reading order: `run()` gathers a batch of leaves with `_descend()` (virtual losses keep the
descents of one batch apart), asks the evaluation function for all of them at once, then
`_expand()`s each leaf and `_back_up()`s its value.

Selection (KataGo's PUCT): at a node whose children have been visited N times in all (visits
plus the virtual losses of descents under way), the child maximising
    Q + c(N) * P * sqrt(N + 0.01) / (1 + n),    c(N) = exploration + exploration_log * log((N + 500) / 500)
where P is the net's probability of the move, n its visits, and Q its mean utility for the player
to move (a descent under way counts as a loss). An unvisited child's Q is the first-play urgency:
the parent's mean utility minus fpu_reduction * sqrt(the priors of the children visited), so
that a node is searched narrowly where the policy is sure and widely where it is not.

Utility, on [0, 1] for the player to move: (1 - score_utility) * win + score_utility *
(1/2 + atan(lead / score_scale) / pi), KataGo's mix of the chance to win and a bounded bonus for
the lead, which keeps a won (or lost) game's moves apart by their points.

Playouts (playout_weight or playout_lead_weight > 0, AlphaGo's mix): a leaf's chance to win is
then (1 - playout_weight) times the net's and playout_weight times the result of one playout from
it (engine/search/playout.pyx, MoGo's policy, the Tromp-Taylor count), and its lead likewise
mixed with the playout's margin by playout_lead_weight: the playouts count what the net misjudges
late in a game, for a fraction of a net's pass, but one playout's margin swings by tens of points
where the net's lead moves smoothly.

Two passes end the game: the count (Tromp-Taylor, area with komi, on the board as it stands)
decides, so the search captures dead stones before it passes, as a referee that counts the board
as it stands wants, and passes early only when the dead stones are no longer there to count.

The evaluation function: function(paths, colours) -> (priors, win, score, ownership) for a batch
of positions, each reached from the root by `paths[i]` (locs or PASS) with colours[i] to move:
priors (B, num_locs + 1) float64 (by loc; the last column the pass; illegal moves ignored, the
rest renormalised), win and score (B,) for the side to move, ownership (B, num_locs) +1 Black,
or None. An exception it raises is re-raised by run() with the tree as it was before the batch.
"""

import numpy as np

from libc.math cimport atan, log, sqrt, INFINITY, M_PI
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memset
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from engine.search.rootstate cimport move_flags, sorted_contains, sorted_hashes
from engine.rules.board cimport Board, hash_t, LEGAL
from engine.rules.types cimport BLACK as C_BLACK, WHITE as C_WHITE
from engine.rules.types cimport loc_t, MAX_LOCS, PASS_LOC, NO_LOC
from engine.search.playout cimport (area_margin, make_ladder_reader, make_policy, play_out)


DEF MAX_DEPTH = 1000            # a path deeper than this stops descending (path[] holds 1024)
DEF PATH_SLOTS = MAX_DEPTH + 1
DEF EXPLORATION_BASE = 500.0    # KataGo's cpuctExplorationBase

DEFAULT_EXPLORATION = 0.5       # KataGo's cpuctExploration 1.0, on its [-1, 1] utility
DEFAULT_EXPLORATION_LOG = 0.225  # its cpuctExplorationLog 0.45, likewise halved
DEFAULT_FPU_REDUCTION = 0.1     # its fpuReductionMax 0.2, halved
DEFAULT_SCORE_UTILITY = 0.1     # the lead's share of the utility
DEFAULT_BATCH_SIZE = 1          # leaves evaluated together
MAX_BATCH_SIZE = 256

# _descend()'s outcomes
DEF LEAF = 0                    # a new position, pending, in the batch
DEF DONE = 1                    # a terminal or unexpandable node: its value backed up already
DEF COLLISION = 2               # a node pending in this batch: the descent is taken back


cdef inline double now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


def default_score_scale(int size):
    """Points of lead that earn half the score bonus (atan(1) of its pi/2): half the board's width,
    so a point weighs as much on 9x9 as 2.1 points on 19x19."""
    return 0.5 * size


cdef class PuctSearch:
    """One PUCT tree. Parameters: max_nodes (the node budget: past it leaves are evaluated but
    get no children), exploration and exploration_log (c(N) above), fpu_reduction,
    score_utility and score_scale (None: default_score_scale(size)), batch_size (leaves per call
    of the evaluation function), playout_weight, playout_lead_weight and the playouts' tactics
    and seed. The search
    is deterministic: the same evaluations (and seed) give the same tree."""

    def __cinit__(self):
        self.nodes = NULL
        self.seen = NULL
        self.root_filter = NULL
        self.ownership_sum = NULL
        self.batch_paths = NULL
        self.batch_depths = NULL

    def __init__(self, int size, double komi=7.0, *, int max_nodes=1_000_000,
                 double exploration=DEFAULT_EXPLORATION,
                 double exploration_log=DEFAULT_EXPLORATION_LOG,
                 double fpu_reduction=DEFAULT_FPU_REDUCTION,
                 double score_utility=DEFAULT_SCORE_UTILITY, score_scale=None,
                 int batch_size=DEFAULT_BATCH_SIZE, double playout_weight=0.0,
                 double playout_lead_weight=0.0, str playout_tactics="mogo", seed=0):
        scale = default_score_scale(size) if score_scale is None else float(score_scale)
        if max_nodes < 2:
            raise ValueError(f"max_nodes must be at least 2, not {max_nodes}")
        if not 1 <= batch_size <= MAX_BATCH_SIZE:
            raise ValueError(f"batch_size must be from 1 to {MAX_BATCH_SIZE}, not {batch_size}")
        if exploration < 0 or exploration_log < 0 or fpu_reduction < 0 or \
                not 0 <= score_utility <= 1 or not scale > 0 or not 0 <= playout_weight <= 1 \
                or not 0 <= playout_lead_weight <= 1:
            raise ValueError("search parameters out of range")
        self.size = size
        self.komi = komi
        self.max_nodes = max_nodes
        self.exploration = exploration
        self.exploration_log = exploration_log
        self.fpu_reduction = fpu_reduction
        self.score_utility = score_utility
        self.score_scale = scale
        self.batch_size = batch_size
        self.playout_weight = playout_weight
        self.playout_lead_weight = playout_lead_weight
        self.policy = make_policy(True, True, playout_tactics, size)
        self.ladder_reader = make_ladder_reader(&self.policy, size)
        self.rng = (<unsigned long long> seed) * 0x9E3779B97F4A7C15ULL + 0x6B6F73756D69ULL
        self.batch_paths = <int *> malloc(batch_size * PATH_SLOTS * sizeof(int))
        self.batch_depths = <int *> malloc(batch_size * sizeof(int))
        self.ownership_sum = <double *> malloc(MAX_LOCS * sizeof(double))
        if self.batch_paths == NULL or self.batch_depths == NULL or self.ownership_sum == NULL:
            raise MemoryError()
        self.root_board = Board(size)
        self.work = Board(size)
        self.capacity = 0
        self.num_nodes = 0
        self.evaluation_function = None
        self.set_root(Board(size), C_BLACK)

    def __dealloc__(self):
        free(self.nodes)
        free(self.seen)
        free(self.root_filter)
        free(self.ownership_sum)
        free(self.batch_paths)
        free(self.batch_depths)

    # --- the root (as tree.pyx's) -------------------------------------------------------------

    def set_root(self, Board board not None, int colour, seen_hashes=(), last_move=None,
                 int passes=0):
        """Start a new tree at board (copied) with colour to move. seen_hashes: the stones hashes
        of the game's earlier positions (positional superko); last_move: the game's last move
        (kept for the interface; the net sees the game's moves through the evaluation
        function); passes: consecutive passes before the root."""
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

    cdef void _set_seen(self, seen_hashes) except *:
        free(self.seen)
        self.seen = NULL
        self.seen = sorted_hashes(seen_hashes, &self.num_seen)

    cdef void _init_node(self, int index, loc_t move, int parent, hash_t h) noexcept nogil:
        cdef PuctNode *n = &self.nodes[index]
        memset(n, 0, sizeof(PuctNode))
        n.move = move
        n.parent = parent
        n.first_child = -1
        n.state = UNEVALUATED
        n.hash = h

    def _clear_root_statistics(self):
        memset(self.ownership_sum, 0, MAX_LOCS * sizeof(double))
        self.evaluations = 0
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
            if found < 0 or self.nodes[found].state == TERMINAL:
                # (a game analysed on after two passes is no longer over)
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

    cdef void _reroot(self, int new_root) except *:
        """Copy the subtree of new_root to the front of a fresh array (breadth first, children
        kept contiguous)."""
        cdef PuctNode *old = self.nodes
        cdef PuctNode *fresh = <PuctNode *> malloc(self.capacity * sizeof(PuctNode))
        cdef int head = 0, tail = 1, i, k
        cdef PuctNode *n
        if fresh == NULL:
            raise MemoryError()
        fresh[0] = old[new_root]
        fresh[0].parent = -1
        fresh[0].move = NO_LOC
        while head < tail:
            n = &fresh[head]
            if n.first_child >= 0:
                k = n.first_child
                n.first_child = tail
                for i in range(n.num_children):
                    fresh[tail + i] = old[k + i]
                    fresh[tail + i].parent = head
                tail += n.num_children
            head += 1
        free(old)
        self.nodes = fresh
        self.num_nodes = tail

    cdef int _grow(self, int extra) noexcept nogil:
        """Room for `extra` more nodes within the budget: 0, or -1 if it cannot be had."""
        cdef int wanted = self.num_nodes + extra, new_capacity
        cdef PuctNode *bigger
        if wanted > self.max_nodes:
            return -1
        if wanted <= self.capacity:
            return 0
        new_capacity = max(wanted, min(self.max_nodes, max(1024, 2 * self.capacity)))
        bigger = <PuctNode *> realloc(self.nodes, new_capacity * sizeof(PuctNode))
        if bigger == NULL:
            return -1
        self.nodes = bigger
        self.capacity = new_capacity
        return 0

    def set_root_filter(self, permitted):
        """Restrict the root's moves (GTP analysis `avoid`/`allow`): an array of num_locs + 1
        flags (the last one: pass), or None for no restriction."""
        free(self.root_filter)
        self.root_filter = NULL
        if permitted is not None:
            self.root_filter = move_flags(permitted, self.root_board.num_locs + 1)

    def mix_root_priors(self, double[::1] noise, double fraction):
        """Self-play's exploration (AlphaZero's root noise): each root child's prior becomes
        (1 - fraction) * prior + fraction * noise[i], noise in root_children()'s index order
        (the root's children as expanded, pass last) and summing to one. The root must have its
        children (a first visit made)."""
        cdef PuctNode *root = &self.nodes[0]
        cdef int i
        if root.first_child < 0:
            raise ValueError("the root has no children yet: visit it once first")
        if noise.shape[0] != root.num_children or not 0.0 <= fraction <= 1.0:
            raise ValueError(f"root noise: {root.num_children} values and a fraction in [0, 1] "
                             f"wanted, not {noise.shape[0]} and {fraction}")
        for i in range(root.num_children):
            self.nodes[root.first_child + i].prior = \
                (1.0 - fraction) * self.nodes[root.first_child + i].prior + fraction * noise[i]

    @property
    def root_child_count(self):
        """How many moves the root has (0 before its first visit)."""
        return max(self.nodes[0].num_children, 0) if self.nodes[0].first_child >= 0 else 0

    def set_evaluation_function(self, function):
        """The net's judgement of a batch of positions (module docstring)."""
        self.evaluation_function = function

    # --- descents -----------------------------------------------------------------------------

    cdef bint _superko_repeat(self, hash_t h, int node) noexcept nogil:
        if sorted_contains(self.seen, self.num_seen, h):
            return True
        while node >= 0:
            if self.nodes[node].hash == h:
                return True
            node = self.nodes[node].parent
        return False

    cdef double _utility(self, double win, double score) noexcept nogil:
        """The utility of a chance to win and a lead, both for the same player (module docstring)."""
        return (1.0 - self.score_utility) * win + \
            self.score_utility * (0.5 + atan(score / self.score_scale) / M_PI)

    cdef int _select(self, int node) noexcept nogil:
        """The child with the highest PUCT value (module docstring); the first on ties."""
        cdef PuctNode *parent = &self.nodes[node]
        cdef PuctNode *c
        cdef int i, best = parent.first_child, weight
        cdef double total = 0.0, visited_prior = 0.0, parent_q, fpu, scale, q, value
        cdef double best_value = -INFINITY
        for i in range(parent.num_children):
            c = &self.nodes[parent.first_child + i]
            weight = c.visits + c.virtual
            if weight > 0:
                total += weight
                visited_prior += c.prior
        parent_q = 1.0 - parent.utility_sum / parent.visits if parent.visits > 0 else 0.5
        fpu = parent_q - self.fpu_reduction * sqrt(visited_prior)
        scale = (self.exploration + self.exploration_log *
                 log((total + EXPLORATION_BASE) / EXPLORATION_BASE)) * sqrt(total + 0.01)
        for i in range(parent.num_children):
            c = &self.nodes[parent.first_child + i]
            if node == 0 and self.root_filter != NULL and \
                    not self.root_filter[self.work.num_locs if c.move == PASS_LOC else c.move]:
                continue
            weight = c.visits + c.virtual
            q = c.utility_sum / weight if weight > 0 else fpu
            value = q + scale * c.prior / (1.0 + weight)
            if value > best_value:
                best_value = value
                best = parent.first_child + i
        return best

    cdef int _descend(self, int slot) noexcept nogil:
        """One descent from the root, a virtual loss on every node it passes, its path kept in
        the batch's slot: LEAF, DONE or COLLISION (above)."""
        cdef int *path = &self.batch_paths[slot * PATH_SLOTS]
        cdef int node = 0, depth = 0, colour = self.root_colour, passes = self.root_passes
        cdef int child, i
        cdef double margin
        cdef PuctNode *n
        self.work.copy_position_from(self.root_board)
        path[0] = 0
        self.nodes[0].virtual += 1
        while True:
            n = &self.nodes[node]
            if n.state == PENDING:
                self._undo_virtual(path, depth)
                return COLLISION
            if n.state == UNEVALUATED:
                n.state = PENDING
                self.batch_depths[slot] = depth
                return LEAF
            if n.state == TERMINAL or n.first_child < 0 or depth >= MAX_DEPTH:
                self._back_up(path, depth, n.black_win, n.black_score)
                return DONE
            child = self._select(node)
            if self.nodes[child].move == PASS_LOC:
                passes += 1
                self.work.ko_loc = NO_LOC
            else:
                passes = 0
                self.work._play_unrecorded(self.nodes[child].move, colour)
            depth += 1
            path[depth] = child
            node = child
            colour = 3 - colour
            self.nodes[child].virtual += 1
            if passes >= 2 and self.nodes[child].state == UNEVALUATED:
                margin = area_margin(self.work, self.komi, self.owner)
                self.nodes[child].state = TERMINAL
                self.nodes[child].black_win = 1.0 if margin > 0 else (0.0 if margin < 0 else 0.5)
                self.nodes[child].black_score = margin
                for i in range(self.work.num_locs):
                    self.ownership_sum[i] += self.owner[i]
                self.evaluations += 1

    cdef void _undo_virtual(self, int *path, int depth) noexcept nogil:
        cdef int d
        for d in range(depth + 1):
            self.nodes[path[d]].virtual -= 1

    cdef void _back_up(self, int *path, int depth, double black_win, double black_score) noexcept nogil:
        """A value for Black, into every node of the path from the side of its mover; the
        descent's virtual losses taken back."""
        cdef int d
        cdef double win
        cdef PuctNode *n
        for d in range(depth + 1):
            n = &self.nodes[path[d]]
            # the root's mover is the root colour's opponent; then the colours alternate
            if (d % 2 == 1) == (self.root_colour == C_BLACK):
                win = black_win
                n.utility_sum += self._utility(black_win, black_score)
            else:
                win = 1.0 - black_win
                n.utility_sum += self._utility(1.0 - black_win, -black_score)
            n.win_sum += win
            n.score_sum += black_score
            n.visits += 1
            n.virtual -= 1
        self.playouts += 1

    cdef void _replay(self, int *path, int depth) noexcept nogil:
        """self.work at the end of path: the root's position and the path's moves."""
        cdef int d, colour = self.root_colour
        cdef loc_t move
        self.work.copy_position_from(self.root_board)
        for d in range(1, depth + 1):
            move = self.nodes[path[d]].move
            if move == PASS_LOC:
                self.work.ko_loc = NO_LOC
            else:
                self.work._play_unrecorded(move, colour)
            colour = 3 - colour

    cdef int _expand(self, int node, int colour, int depth, double[::1] priors) noexcept nogil:
        """Give node (at self.work, colour to move) its children: the legal moves but own eyes
        and superko repeats, and pass, with the net's priors renormalised over them. 0, or -1
        if the budget is spent."""
        cdef int count = 0, i, first
        cdef loc_t p
        cdef hash_t h
        cdef double total = 0.0
        cdef loc_t moves[MAX_LOCS]
        cdef hash_t hashes[MAX_LOCS]
        cdef PuctNode *child
        for i in range(self.work.num_empty):
            p = self.work.empty_list[i]
            if self.work.illegal_reason(p, colour) != LEGAL or self.work.is_eye_fast(p, colour):
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
            p = self.work.num_locs if moves[i] == PASS_LOC else moves[i]
            total += max(priors[p], 0.0)
        for i in range(count):
            self._init_node(first + i, moves[i], node, hashes[i])
            child = &self.nodes[first + i]
            p = self.work.num_locs if moves[i] == PASS_LOC else moves[i]
            child.prior = max(priors[p], 0.0) / total if total > 0 else 1.0 / count
        self.nodes[node].first_child = first
        self.nodes[node].num_children = count
        self.num_nodes += count
        return 0

    # --- the budget -----------------------------------------------------------------------------

    def run(self, long max_visits, double max_seconds=INFINITY, bint stop_early=True):
        """Visit until max_visits, max_seconds, or (stop_early) until the most visited root move
        can no longer be overtaken within the visits left. Returns the visits made (each a
        value backed up: a net evaluation, or a terminal or unexpandable node's own value)."""
        cdef long done = 0, left
        cdef int count, attempts, outcome, want, first_visits, second_visits
        cdef double started = now(), elapsed
        if self.evaluation_function is None:
            raise RuntimeError("the PUCT search needs an evaluation function")
        while done < max_visits:
            want = <int> min(<long> self.batch_size, max_visits - done)
            count = 0
            attempts = 0
            with nogil:
                while count < want and attempts < self.batch_size and done + count < max_visits:
                    attempts += 1
                    outcome = self._descend(count)
                    if outcome == COLLISION:
                        break
                    if outcome == DONE:
                        done += 1
                    else:
                        count += 1
            if count:
                self._evaluate_batch(count)
                done += count
            elapsed = now() - started
            if elapsed >= max_seconds:
                break
            if stop_early and done >= 16:
                left = max_visits - done
                if max_seconds < INFINITY and elapsed > 0:
                    left = min(left, <long> (done * (max_seconds - elapsed) / elapsed) + 1)
                self._top_two_visits(&first_visits, &second_visits)
                if first_visits - second_visits > left:
                    break
        return done

    def _evaluate_batch(self, int count):
        """Ask the evaluation function about the batch's leaves, expand and back up each."""
        cdef int slot, depth, d, colour, i, node
        cdef int *path
        cdef double[:, ::1] priors
        cdef double[::1] win, score
        cdef double[:, ::1] ownership = None
        cdef double black_win, black_score, margin
        paths, colours = [], []
        for slot in range(count):
            path = &self.batch_paths[slot * PATH_SLOTS]
            depth = self.batch_depths[slot]
            paths.append([self.nodes[path[d]].move for d in range(1, depth + 1)])
            colours.append(self.root_colour if depth % 2 == 0 else 3 - self.root_colour)
        try:
            answer = self.evaluation_function(paths, colours)
            priors = np.ascontiguousarray(answer[0], dtype=np.float64)
            win = np.ascontiguousarray(answer[1], dtype=np.float64)
            score = np.ascontiguousarray(answer[2], dtype=np.float64)
            if answer[3] is not None:
                ownership = np.ascontiguousarray(answer[3], dtype=np.float64)
            if priors.shape[0] != count or priors.shape[1] != self.work.num_locs + 1 or \
                    win.shape[0] != count or score.shape[0] != count or \
                    (ownership is not None and (ownership.shape[0] != count or
                                                ownership.shape[1] != self.work.num_locs)):
                raise ValueError("the evaluation function's answer does not fit the batch")
        except BaseException:
            for slot in range(count):        # the tree as it was before the batch
                path = &self.batch_paths[slot * PATH_SLOTS]
                depth = self.batch_depths[slot]
                self.nodes[path[depth]].state = UNEVALUATED
                self._undo_virtual(path, depth)
            raise
        for slot in range(count):
            path = &self.batch_paths[slot * PATH_SLOTS]
            depth = self.batch_depths[slot]
            node = path[depth]
            colour = colours[slot]
            black_win = win[slot] if colour == C_BLACK else 1.0 - win[slot]
            black_score = score[slot] if colour == C_BLACK else -score[slot]
            self._replay(path, depth)
            self._expand(node, colour, depth, priors[slot])
            if self.playout_weight > 0 or self.playout_lead_weight > 0:
                with nogil:
                    margin = self._play_out(path, depth, colour)
                black_win = (1.0 - self.playout_weight) * black_win + self.playout_weight * \
                    (1.0 if margin > 0 else (0.0 if margin < 0 else 0.5))
                black_score = (1.0 - self.playout_lead_weight) * black_score + \
                    self.playout_lead_weight * margin
            self.nodes[node].black_win = black_win
            self.nodes[node].black_score = black_score
            self.nodes[node].state = EVALUATED
            if ownership is not None:
                for i in range(self.work.num_locs):
                    self.ownership_sum[i] += ownership[slot, i]
                self.evaluations += 1
            self._back_up(path, depth, black_win, black_score)

    cdef double _play_out(self, int *path, int depth, int colour) noexcept nogil:
        """Black's margin at the end of a playout from self.work, the position at the end of
        path with colour to move (self.work is left at the playout's end)."""
        cdef loc_t last_move = self.root_last_move, move_before = NO_LOC
        if depth >= 1:
            last_move = self.nodes[path[depth]].move
            move_before = self.nodes[path[depth - 1]].move if depth >= 2 else self.root_last_move
        play_out(self.work, colour, last_move, move_before, &self.policy, self.ladder_reader,
                 None, &self.rng, NULL, NULL)
        return area_margin(self.work, self.komi, self.owner)

    cdef void _top_two_visits(self, int *first, int *second) noexcept nogil:
        cdef PuctNode *root = &self.nodes[0]
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

    # --- reading the tree (as tree.pyx's) -----------------------------------------------------

    def root_children(self):
        """The root's moves, most visited first: list of dicts with move, visits, winrate and
        score_lead (for the player to move at the root; an unvisited move: the root's win rate
        and nan), prior (the net's probability), rave_visits (0: no RAVE here), index."""
        cdef PuctNode root = self.nodes[0]
        cdef PuctNode c
        cdef int i
        children = []
        if root.first_child < 0:
            return children
        sign = 1.0 if self.root_colour == C_BLACK else -1.0
        root_winrate = self.root_winrate
        for i in range(root.num_children):
            c = self.nodes[root.first_child + i]
            if c.visits > 0:
                winrate = c.win_sum / c.visits
                score = sign * c.score_sum / c.visits
            else:
                winrate, score = root_winrate, float("nan")
            children.append({"move": c.move, "visits": c.visits, "winrate": winrate,
                             "score_lead": score, "prior": c.prior, "rave_visits": 0,
                             "index": root.first_child + i})
        children.sort(key=lambda entry: (-entry["visits"], -entry["prior"]))
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
        """The chance to win of the player to move at the root: the mean of every value backed up
        through the root (0.5 before the first)."""
        cdef PuctNode *root = &self.nodes[0]
        if root.visits == 0:
            return 0.5
        return 1.0 - root.win_sum / root.visits

    @property
    def root_score_lead(self):
        """The lead of the player to move at the root, likewise (nan before the first)."""
        cdef PuctNode *root = &self.nodes[0]
        if root.visits == 0:
            return float("nan")
        sign = 1.0 if self.root_colour == C_BLACK else -1.0
        return sign * root.score_sum / root.visits

    def ownership(self):
        """Mean final owner per point (+1 Black) over the positions evaluated since the root was
        set (the net's ownership, or the count's at a game's end), (num_locs,)."""
        result = np.zeros(self.root_board.num_locs)
        if self.evaluations:
            for i in range(self.root_board.num_locs):
                result[i] = self.ownership_sum[i] / self.evaluations
        return result

    def node(self, int index):
        """One node's fields as a dict (tests, debugging)."""
        if not 0 <= index < self.num_nodes:
            raise IndexError(index)
        return dict(self.nodes[index])

    def check_invariants(self):
        """AssertionError unless every expanded node's visits are one (its own evaluation) plus
        its children's, no virtual loss is left, sums lie within the visits, and the children's
        priors add up to one."""
        for index in range(self.num_nodes):
            n = self.node(index)
            assert n["virtual"] == 0, (index, n)
            assert -1e-9 <= n["win_sum"] <= n["visits"] + 1e-9, (index, n)
            assert -1e-9 <= n["utility_sum"] <= n["visits"] + 1e-9, (index, n)
            if n["first_child"] < 0:
                continue
            assert n["first_child"] + n["num_children"] <= self.num_nodes, index
            children = [self.node(n["first_child"] + i) for i in range(n["num_children"])]
            assert n["visits"] == 1 + sum(c["visits"] for c in children), (index, n)
            assert abs(sum(c["prior"] for c in children) - 1.0) < 1e-4, index
            for c in children:
                assert c["parent"] == index
            moves = [c["move"] for c in children]
            assert len(set(moves)) == len(moves) and moves[len(moves) - 1] == PASS_LOC, index
