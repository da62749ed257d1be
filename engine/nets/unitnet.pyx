# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""NeuroGo's network over units (Enzenberger 1996), kosumi's third evaluator: one input, hidden and
output group of neurons per unit of the graph that engine/nets/unitgraph.pyx draws, connected
along its edges with one weight set per relation and pair of unit kinds.

Reading order: UnitGraphNetwork.forward_all() (hidden_unit(), output_unit(), system_total()),
backward() (training), forward_successor() (1-ply: only what the move changed), then the Python
API (evaluate_board, successor_values, loss_and_gradient, train_game).

The layers, per unit a of kind t(a) (empty, own string, opposing string) with incoming edges
(b, r) (source unit, relation):
    hidden[a] = sigmoid(b1[t(a)] + sum over edges of W1[r][t(a)][t(b)] . inputs[b])   (hidden units)
    output[a] = sigmoid(b2[t(a)] + sum over edges of w2[r][t(a)][t(b)] . hidden[b])  (one unit)
The output is the probability that the side to move owns the unit's points at the end; Benson's
verdict (1 or 0) replaces it where there is one (the system's output). Every point of a string
takes its string's output; the value is the expected area margin for the side to move,
2 * (sum over points of the system's output) - points.

Free parameters (the flat float64 vector of get_params()/set_params(), in this order):
    W1  [relation][kind a][kind b][input][hidden]
    b1  [kind a][hidden]
    w2  [relation][kind a][kind b][hidden]
    b2  [kind a]

Choices where the paper leaves room:
- the loss is the cross-entropy of each point's output against its target, summed over the
  points, so a string's error is its unit's times its number of stones, as the paper asks ("all
  errors in the evaluation of a string unit are multiplied with its number of stones"); units
  that Benson decides have no error (their output is not the net's).
- sums over a unit's edges, not means: the paper adds a weight's changes over its occurrences, and
  the number of related units is information (a string with many empty points around it).
- TD(0) played backwards with an update after each position (train_game()); a position's target
  is the following position's system output, in the frame of the side to move, as in NeuroGo 3's
  implementation in engine/nets/softseg.pyx (the following pass, computed before its own update).

A UnitGraphNetwork keeps its activations in per-object buffers: use one per thread.
"""

import numpy as np

from libc.math cimport exp, log
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset

from engine.rules.board cimport Board
from engine.nets.unitgraph cimport UnitGraph, NUM_UNIT_KINDS, UG_NUM_INPUTS
from engine.rules.types cimport BLACK as C_BLACK, WHITE as C_WHITE, MAX_LOCS
from engine.nets.unitgraph import (DEFAULT_FEATURE_SET, DEFAULT_MAX_DISTANCE, FEATURE_SETS,
                                   MAX_DISTANCE)

DEFAULT_HIDDEN = 12           # per unit; the paper tried 3 to 24 (Figure 3)
DEFAULT_INIT_SCALE = 0.05     # a unit sums some tens of edges of several inputs: small weights
                              # keep the sigmoids in their sensitive range at the start
cdef enum:
    MAX_HIDDEN = 64
MAX_HIDDEN_UNITS = MAX_HIDDEN


cdef inline double sigmoid(double x) noexcept nogil:
    return 1.0 / (1.0 + exp(-x))


cdef inline double cross_entropy(double y, double t) noexcept nogil:
    if y < 1e-12:
        y = 1e-12
    elif y > 1.0 - 1e-12:
        y = 1.0 - 1e-12
    return -(t * log(y) + (1.0 - t) * log(1.0 - y))


def feature_set_version(name):
    if name not in FEATURE_SETS:
        raise ValueError(f"unknown unit feature set {name!r}; known: {sorted(FEATURE_SETS)}")
    return FEATURE_SETS[name]


cdef class UnitGraphNetwork:
    """The network; sizes are configuration (hidden units per unit, the largest distance Dn)."""
    cdef readonly str feature_set
    cdef readonly int hidden, max_distance, num_relations, num_inputs, num_params
    cdef readonly long long params_version
    cdef readonly int w1_start, b1_start, w2_start, b2_start
    cdef readonly UnitGraph graph
    cdef object _params
    cdef double *params
    cdef double *hidden_act              # [MAX_LOCS][hidden], per anchor
    cdef double *base_hidden
    cdef double *d_hidden
    cdef double output[MAX_LOCS]         # per anchor, the net's output (before Benson)
    cdef double base_output[MAX_LOCS]
    cdef double d_output[MAX_LOCS]
    cdef double target_sum[MAX_LOCS]
    cdef int target_count[MAX_LOCS]
    cdef unsigned int mark_epoch
    cdef unsigned int hidden_mark[MAX_LOCS]
    cdef unsigned int output_mark[MAX_LOCS]
    cdef int hidden_list[MAX_LOCS]
    cdef int output_list[MAX_LOCS]
    cdef int num_hidden_list, num_output_list
    cdef UnitGraphNetwork _twin          # sharing_twin(): full passes of suicides

    def __cinit__(self, str feature_set=DEFAULT_FEATURE_SET, int hidden=DEFAULT_HIDDEN,
                  int max_distance=DEFAULT_MAX_DISTANCE):
        self.hidden_act = NULL
        self.base_hidden = NULL
        self.d_hidden = NULL
        if feature_set not in FEATURE_SETS:
            raise ValueError(f"unknown unit feature set {feature_set!r}; known: "
                             f"{sorted(FEATURE_SETS)}")
        if not 1 <= hidden <= MAX_HIDDEN:
            raise ValueError(f"hidden must be 1..{MAX_HIDDEN}, not {hidden}")
        self.graph = UnitGraph(max_distance)
        self.feature_set = feature_set
        self.hidden = hidden
        self.max_distance = max_distance
        self.num_relations = self.graph.num_relations
        self.num_inputs = UG_NUM_INPUTS
        cdef int pairs = self.num_relations * NUM_UNIT_KINDS * NUM_UNIT_KINDS
        self.w1_start = 0
        self.b1_start = pairs * self.num_inputs * hidden
        self.w2_start = self.b1_start + NUM_UNIT_KINDS * hidden
        self.b2_start = self.w2_start + pairs * hidden
        self.num_params = self.b2_start + NUM_UNIT_KINDS
        self._params = np.zeros(self.num_params)
        cdef double[::1] view = self._params
        self.params = &view[0]
        self.params_version = 0
        self.hidden_act = <double *> malloc(MAX_LOCS * hidden * sizeof(double))
        self.base_hidden = <double *> malloc(MAX_LOCS * hidden * sizeof(double))
        self.d_hidden = <double *> malloc(MAX_LOCS * hidden * sizeof(double))
        if self.hidden_act == NULL or self.base_hidden == NULL or self.d_hidden == NULL:
            raise MemoryError()
        memset(self.hidden_act, 0, MAX_LOCS * hidden * sizeof(double))
        memset(self.hidden_mark, 0, sizeof(self.hidden_mark))
        memset(self.output_mark, 0, sizeof(self.output_mark))
        self.mark_epoch = 0

    def __dealloc__(self):
        free(self.hidden_act)
        free(self.base_hidden)
        free(self.d_hidden)

    def __reduce__(self):
        return _rebuild, (self.feature_set, self.hidden, self.max_distance, self.get_params())

    # ----------------------------------------------------------------- parameters

    @property
    def sizes(self):
        return {"hidden": self.hidden, "max_distance": self.max_distance}

    @property
    def num_outputs(self):
        return 1

    def get_params(self):
        return self._params.copy()

    def set_params(self, params):
        params = np.asarray(params, dtype=np.float64)
        if params.shape != (self.num_params,):
            raise ValueError(f"expected {self.num_params} parameters, got shape {params.shape}")
        self._params[:] = params
        self.params_version += 1

    def parameter_blocks(self):
        """{name: (start, stop, shape)} of the flat parameter vector (the module docstring)."""
        pairs = (self.num_relations, NUM_UNIT_KINDS, NUM_UNIT_KINDS)
        return {
            "W1": (self.w1_start, self.b1_start, pairs + (self.num_inputs, self.hidden)),
            "b1": (self.b1_start, self.w2_start, (NUM_UNIT_KINDS, self.hidden)),
            "w2": (self.w2_start, self.b2_start, pairs + (self.hidden,)),
            "b2": (self.b2_start, self.num_params, (NUM_UNIT_KINDS,)),
        }

    def decay(self, double factor):
        self._params *= factor
        self.params_version += 1

    # ----------------------------------------------------------------- forward

    cdef void hidden_unit(self, int a) noexcept nogil:
        cdef int H = self.hidden, NIN = self.num_inputs, ta = self.graph.kind[a], e, b, k, h
        cdef int stop = self.graph.edge_start[a] + self.graph.edge_count[a]
        cdef double total[MAX_HIDDEN]
        cdef const double *weights
        cdef const double *row
        cdef double *out = self.hidden_act + a * H
        memcpy(total, self.params + self.b1_start + ta * H, H * sizeof(double))
        for e in range(self.graph.edge_start[a], stop):
            b = self.graph.edge_source[e]
            weights = self.params + self.w1_start + \
                ((self.graph.edge_relation[e] * NUM_UNIT_KINDS + ta) * NUM_UNIT_KINDS + self.graph.kind[b]) * NIN * H
            for k in range(self.graph.num_active[b]):
                row = weights + self.graph.active[b][k] * H
                for h in range(H):
                    total[h] += row[h]
        for h in range(H):
            out[h] = sigmoid(total[h])

    cdef void output_unit(self, int a) noexcept nogil:
        cdef int H = self.hidden, ta = self.graph.kind[a], e, b, h
        cdef int stop = self.graph.edge_start[a] + self.graph.edge_count[a]
        cdef double total = self.params[self.b2_start + ta]
        cdef const double *weights
        cdef const double *source
        for e in range(self.graph.edge_start[a], stop):
            b = self.graph.edge_source[e]
            weights = self.params + self.w2_start + \
                ((self.graph.edge_relation[e] * NUM_UNIT_KINDS + ta) * NUM_UNIT_KINDS + self.graph.kind[b]) * H
            source = self.hidden_act + b * H
            for h in range(H):
                total += weights[h] * source[h]
        self.output[a] = sigmoid(total)

    cdef inline double system_output(self, int a) noexcept nogil:
        cdef double verdict = self.graph.override[a]
        return verdict if verdict >= 0.0 else self.output[a]

    cdef double system_total(self) noexcept nogil:
        """The sum of the system's outputs over the points (in loc order, as every pass)."""
        cdef double total = 0.0
        cdef int i
        for i in range(self.graph.num_cells):
            total += self.system_output(self.graph.anchor_of[self.graph.cells[i]])
        return total

    cdef double forward_all(self) noexcept nogil:
        """The whole network on the current graph; the sum of the system's outputs."""
        cdef int i, a
        for i in range(self.graph.num_cells):
            a = self.graph.cells[i]
            if self.graph.anchor_of[a] == a:
                self.hidden_unit(a)
        for i in range(self.graph.num_cells):
            a = self.graph.cells[i]
            if self.graph.anchor_of[a] == a:
                self.output_unit(a)
        return self.system_total()

    cdef double forward_base(self) noexcept nogil:
        cdef double total = self.forward_all()
        memcpy(self.base_hidden, self.hidden_act, self.graph.num_locs * self.hidden * sizeof(double))
        memcpy(self.base_output, self.output, self.graph.num_locs * sizeof(double))
        return total

    cdef void list_unit(self, int a, unsigned int *marks, int *units, int *count) noexcept nogil:
        if marks[a] != self.mark_epoch:
            marks[a] = self.mark_epoch
            units[count[0]] = a
            count[0] += 1

    cdef double forward_successor(self, Board board, int move) noexcept nogil:
        """board has just played move on the base (forward_base()): the successor's sum of the
        system's outputs, the hidden units redone where a unit's edges or a source's inputs
        changed, the outputs where a unit's edges or a source's hidden units changed (relations
        are symmetric, so a unit's sources are the units it feeds). Bit for bit a full pass:
        every unit's sums are taken in its edge order, which a rebuild does not change."""
        cdef int i, e, a
        self.graph.successor(board, move)
        self.mark_epoch += 1
        if self.mark_epoch == 0:
            memset(self.hidden_mark, 0, sizeof(self.hidden_mark))
            memset(self.output_mark, 0, sizeof(self.output_mark))
            self.mark_epoch = 1
        self.num_hidden_list = 0
        self.num_output_list = 0
        for i in range(self.graph.num_dirty_edges):
            self.list_unit(self.graph.dirty_edges[i], self.hidden_mark, self.hidden_list,
                           &self.num_hidden_list)
        for i in range(self.graph.num_changed_inputs):
            a = self.graph.changed_inputs[i]
            for e in range(self.graph.edge_start[a], self.graph.edge_start[a] + self.graph.edge_count[a]):
                self.list_unit(self.graph.edge_source[e], self.hidden_mark, self.hidden_list,
                               &self.num_hidden_list)
        for i in range(self.num_hidden_list):
            a = self.hidden_list[i]
            self.hidden_unit(a)
            for e in range(self.graph.edge_start[a], self.graph.edge_start[a] + self.graph.edge_count[a]):
                self.list_unit(self.graph.edge_source[e], self.output_mark, self.output_list,
                               &self.num_output_list)
        for i in range(self.num_output_list):
            self.output_unit(self.output_list[i])
        return self.system_total()

    cdef void restore_base(self) noexcept nogil:
        cdef int i, a, H = self.hidden
        for i in range(self.num_hidden_list):
            a = self.hidden_list[i]
            memcpy(self.hidden_act + a * H, self.base_hidden + a * H, H * sizeof(double))
        for i in range(self.num_output_list):
            a = self.output_list[i]
            self.output[a] = self.base_output[a]
        self.num_hidden_list = 0
        self.num_output_list = 0
        self.graph.restore_base()

    # ----------------------------------------------------------------- backward

    cdef double backward(self, const double *targets, const unsigned char *mask, double *dest,
                         double scale) noexcept nogil:
        """After forward_all(): dest += scale * d(loss)/d(params), the loss the summed
        cross-entropy of every masked point's output against its target (per loc, the frame's
        probability that the side to move owns the point); points of units Benson decides have
        none. dest may be the parameters: every delta is taken before a weight changes."""
        cdef int H = self.hidden, NIN = self.num_inputs, i, p, a, b, e, k, h, ta, stop
        cdef double loss = 0.0, delta
        cdef double *dh
        cdef const double *weights
        cdef const double *source
        cdef double *grad
        for i in range(self.graph.num_cells):
            a = self.graph.cells[i]
            self.target_sum[a] = 0.0
            self.target_count[a] = 0
        for i in range(self.graph.num_cells):
            p = self.graph.cells[i]
            a = self.graph.anchor_of[p]
            if not mask[p] or self.graph.override[a] >= 0.0:
                continue
            self.target_sum[a] += targets[p]
            self.target_count[a] += 1
            loss += cross_entropy(self.output[a], targets[p])
        memset(self.d_hidden, 0, self.graph.num_locs * H * sizeof(double))
        # the output deltas (sigmoid with cross-entropy: output - target, per point) and, through
        # w2 as it stands, the hidden units' error
        for i in range(self.graph.num_cells):
            a = self.graph.cells[i]
            if self.graph.anchor_of[a] != a:
                continue
            self.d_output[a] = self.target_count[a] * self.output[a] - self.target_sum[a]
            delta = self.d_output[a]
            if delta == 0.0:
                continue
            ta = self.graph.kind[a]
            stop = self.graph.edge_start[a] + self.graph.edge_count[a]
            for e in range(self.graph.edge_start[a], stop):
                b = self.graph.edge_source[e]
                weights = self.params + self.w2_start + \
                    ((self.graph.edge_relation[e] * NUM_UNIT_KINDS + ta) * NUM_UNIT_KINDS + self.graph.kind[b]) * H
                dh = self.d_hidden + b * H
                for h in range(H):
                    dh[h] += delta * weights[h]
        for i in range(self.graph.num_cells):
            a = self.graph.cells[i]
            if self.graph.anchor_of[a] != a:
                continue
            dh = self.d_hidden + a * H
            source = self.hidden_act + a * H
            for h in range(H):
                dh[h] *= source[h] * (1.0 - source[h])
        # the updates
        for i in range(self.graph.num_cells):
            a = self.graph.cells[i]
            if self.graph.anchor_of[a] != a:
                continue
            ta = self.graph.kind[a]
            stop = self.graph.edge_start[a] + self.graph.edge_count[a]
            delta = scale * self.d_output[a]
            if delta != 0.0:
                dest[self.b2_start + ta] += delta
                for e in range(self.graph.edge_start[a], stop):
                    b = self.graph.edge_source[e]
                    grad = dest + self.w2_start + \
                        ((self.graph.edge_relation[e] * NUM_UNIT_KINDS + ta) * NUM_UNIT_KINDS + self.graph.kind[b]) * H
                    source = self.hidden_act + b * H
                    for h in range(H):
                        grad[h] += delta * source[h]
            dh = self.d_hidden + a * H
            grad = dest + self.b1_start + ta * H
            for h in range(H):
                grad[h] += scale * dh[h]
            for e in range(self.graph.edge_start[a], stop):
                b = self.graph.edge_source[e]
                weights = dest + self.w1_start + \
                    ((self.graph.edge_relation[e] * NUM_UNIT_KINDS + ta) * NUM_UNIT_KINDS + self.graph.kind[b]) * NIN * H
                for k in range(self.graph.num_active[b]):
                    grad = <double *> weights + self.graph.active[b][k] * H
                    for h in range(H):
                        grad[h] += scale * dh[h]
        return loss

    cdef void system_outputs_into(self, double *values, bint swap) noexcept nogil:
        """Per on-board loc the system's output (swap: 1 - it, the other side's frame)."""
        cdef int i, p
        cdef double y
        for i in range(self.graph.num_cells):
            p = self.graph.cells[i]
            y = self.system_output(self.graph.anchor_of[p])
            values[p] = 1.0 - y if swap else y

    # ----------------------------------------------------------------- Python API

    def evaluate_board(self, Board board, int to_move):
        """(ownership, decided, total): per loc the probability that to_move owns the point at
        the end (0 off the board), whether Benson decided it, and the sum of the former over the
        points (the expected points of to_move; the area margin is 2 * total - points)."""
        _check_colour(to_move)
        self.graph.build(board, to_move, False)
        cdef double total
        with nogil:
            total = self.forward_all()
        ownership = np.zeros(board.num_locs)
        decided = np.zeros(board.num_locs, dtype=bool)
        cdef double[::1] view = ownership
        with nogil:
            self.system_outputs_into(&view[0], False)
        cdef int i, p
        for i in range(self.graph.num_cells):
            p = self.graph.cells[i]
            decided[p] = self.graph.override[self.graph.anchor_of[p]] >= 0.0
        return ownership, decided, total

    def unit_anchors(self):
        """Per loc, the anchor of its unit in the last graph built (-1 off the board): which
        points the network took as one unit."""
        anchors = np.full(self.graph.num_locs, -1, dtype=np.int32)
        cdef int i, p
        for i in range(self.graph.num_cells):
            p = self.graph.cells[i]
            anchors[p] = self.graph.anchor_of[p]
        return anchors

    def _checked_moves(self, Board board, int mover, moves, bint allow_suicide):
        _check_colour(mover)
        points = np.ascontiguousarray(moves, dtype=np.intc)
        for move in points:
            if not board.is_legal(move, mover, allow_suicide):
                raise ValueError(f"move {move} is illegal for colour {mover}")
        return points

    def successor_values(self, Board board, int mover, moves, bint allow_suicide=False):
        """(pass value, values): for each move (legal for mover), the expected area margin of
        the position after it for mover, komi excluded; the same after a pass. Each successor is
        the base position's pass with only what the move changed redone (forward_successor());
        a suicide (when allow_suicide) leaves no stone to grow a unit from and is rebuilt whole
        by a twin sharing the parameters. board is restored exactly."""
        cdef int[::1] points = self._checked_moves(board, mover, moves, allow_suicide)
        cdef int i, move, opponent = 3 - mover
        cdef int num_cells = board.size * board.size
        values = np.empty(points.shape[0])
        cdef double[::1] out = values
        cdef double total, pass_total
        suicides = np.zeros(points.shape[0], dtype=np.uint8)
        cdef unsigned char[::1] suicide = suicides
        if allow_suicide:
            for i in range(points.shape[0]):
                suicide[i] = not board.is_legal(points[i], mover, False)
        self.graph.build(board, opponent, True)
        with nogil:
            pass_total = self.forward_base()
            for i in range(points.shape[0]):
                if suicide[i]:
                    continue
                move = points[i]
                board.play_move(move, mover, allow_suicide)
                total = self.forward_successor(board, move)
                out[i] = num_cells - 2.0 * total
                self.restore_base()
                board.undo_move()
        for i in np.flatnonzero(suicides):
            board.play_move(points[i], mover, True)
            out[i] = num_cells - 2.0 * self.sharing_twin().full_total(board, opponent)
            board.undo_move()
        return num_cells - 2.0 * pass_total, values

    cdef UnitGraphNetwork sharing_twin(self):
        """A network of the same sizes reading these very parameters, with its own buffers."""
        if self._twin is None:
            self._twin = UnitGraphNetwork(self.feature_set, self.hidden, self.max_distance)
            self._twin._params = self._params
            self._twin.params = self.params
        return self._twin

    def full_total(self, Board board, int to_move):
        """The sum of the system's outputs of board by a full build and pass."""
        self.graph.build(board, to_move, False)
        return self.forward_all()

    def successor_values_full(self, Board board, int mover, moves, bint allow_suicide=False):
        """successor_values() by a full build and pass of every successor (the reference the
        tests and benchmarks hold the incremental one to)."""
        cdef int[::1] points = self._checked_moves(board, mover, moves, allow_suicide)
        cdef int i, opponent = 3 - mover
        cdef int num_cells = board.size * board.size
        values = np.empty(points.shape[0])
        self.graph.build(board, opponent, False)
        pass_total = self.forward_all()
        for i in range(points.shape[0]):
            board.play_move(points[i], mover, allow_suicide)
            self.graph.build(board, opponent, False)
            values[i] = num_cells - 2.0 * self.forward_all()
            board.undo_move()
        return num_cells - 2.0 * pass_total, values

    def _targets(self, Board board, targets, mask):
        targets = np.ascontiguousarray(targets, dtype=np.float64)
        mask = np.ascontiguousarray(mask, dtype=np.uint8)
        if targets.shape != (board.num_locs,) or mask.shape != (board.num_locs,):
            raise ValueError(f"targets and mask must have shape ({board.num_locs},), not "
                             f"{targets.shape} and {mask.shape}")
        return targets, mask

    def loss_and_gradient(self, Board board, int to_move, targets, mask, grad):
        """The summed cross-entropy of board's masked points (targets per loc: the probability
        that to_move owns the point) and its gradient added into grad (float64, num_params)."""
        _check_colour(to_move)
        targets, mask = self._targets(board, targets, mask)
        if not isinstance(grad, np.ndarray) or grad.dtype != np.float64 or \
                grad.shape != (self.num_params,) or not grad.flags.c_contiguous:
            raise ValueError(f"grad must be a contiguous float64 array of {self.num_params}")
        cdef double[::1] g = grad
        cdef double[::1] t = targets
        cdef unsigned char[::1] m = mask
        cdef double loss
        self.graph.build(board, to_move, False)
        with nogil:
            self.forward_all()
            loss = self.backward(&t[0], &m[0], &g[0], 1.0)
        return loss

    def train_game(self, moves, black_to_move, trained, observed, final_targets, final_mask,
                   double rate, int size):
        """TD(0) over one game played backwards (the paper's "the position is scored and played
        backwards"): moves (T, 2) int (colour, loc; PASS -1) from the empty board of size; each
        trained position takes one step of size rate towards the following position's system
        output (real-Black frame: the probability that Black owns each point), overridden where
        the signal observed there says (observed: int8 (T, num_locs), 0 or 1, -1 where none; or
        None), the final ownership (final_targets, final_mask per loc) at the end; an untrained
        position is only evaluated. Returns (summed loss, trained point entries)."""
        moves = np.ascontiguousarray(moves, dtype=np.int64)
        if moves.ndim != 2 or moves.shape[1] != 2:
            raise ValueError(f"moves must have shape (T, 2), not {moves.shape}")
        cdef int T = moves.shape[0], t
        board = Board(size)
        cdef Board game_board = board
        following, mask = self._targets(game_board, final_targets, final_mask)
        following = following.copy()
        black = np.asarray(black_to_move, dtype=bool)
        train = np.asarray(trained, dtype=bool)
        if black.shape != (T,) or train.shape != (T,):
            raise ValueError(f"black_to_move and trained must have {T} entries")
        events = None
        if observed is not None:
            events = np.asarray(observed, dtype=np.int8)
            if events.shape != (T, game_board.num_locs):
                raise ValueError(f"observed must have shape ({T}, {game_board.num_locs})")
        for t in range(T):
            game_board.play(int(moves[t, 1]), int(moves[t, 0]))
        targets = np.empty(game_board.num_locs)
        prediction = np.zeros(game_board.num_locs)
        cdef double[::1] target_view = targets
        cdef double[::1] prediction_view = prediction
        cdef unsigned char[::1] mask_view = mask
        cdef double loss = 0.0
        cdef long long entries = 0, entries_per_position = int(mask.sum())
        cdef bint black_moves, trains
        for t in range(T - 1, -1, -1):
            game_board.undo()
            black_moves = black[t]
            trains = train[t]
            if trains:
                np.copyto(targets, following if black_moves else 1.0 - following)
            self.graph.build(game_board, C_BLACK if black_moves else C_WHITE, False)
            with nogil:
                self.forward_all()
                self.system_outputs_into(&prediction_view[0], not black_moves)
                if trains:
                    loss += self.backward(&target_view[0], &mask_view[0], self.params, -rate)
                    entries += entries_per_position
            if trains:
                self.params_version += 1
            np.copyto(following, prediction)
            if events is not None:
                present = events[t] >= 0
                following[present] = events[t][present]
        return loss, entries


def _rebuild(feature_set, hidden, max_distance, params):
    network = UnitGraphNetwork(feature_set, hidden, max_distance)
    network.set_params(params)
    return network


def _check_colour(int colour):
    if colour != C_BLACK and colour != C_WHITE:
        raise ValueError(f"colour must be BLACK (1) or WHITE (2), not {colour}")
