# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""NeuroGo 3's soft-segmentation network (Enzenberger 2003, section 2), kosumi's second evaluator.

Reading order: SoftSegNetwork.forward_all() (forward_local(): receptive fields with weight sets
chosen by point type; pathfinder(): the global connectivity; forward_evaluation(): connectivity-
based weight selection), backward() (training), then the Python API (evaluate_board,
successor_values, forward, loss_and_gradient, train_position) and rich_signal() (the targets).
The C layout and the parameter order are in softseg.pxd.

Choices where the paper leaves room (section numbers are the paper's):
- 2.2 inputs: Table 1's features come from a kosumi feature set (`neurogo`, `neurogo_lite`, without
  its isn14 stone classes, which belong to Blair's recurrence), or one constant input (`raw`, the
  paper's raw-board experiment). Empty points and stones have their own inputs: input j means a
  different feature on an empty point, an own stone and an opponent stone, and the point type
  (which says which of the three a point is) selects the weights.
- 2.4 field(p, p') is the offset of p' in p's 3x3 window (nine fields); off-board points of a
  window have no neurons and contribute nothing.
- 2.5 the connection value of p to itself is its local self-connection unit; of p to any other
  point, the best product over paths of 3x3 steps of the local-connection units of the points the
  steps leave (a window neighbour's direct unit is the one-step path). Dijkstra on -log values
  (a bucket queue), from every point, pruned at the 0.1 cut-off (footnote 2): a path whose
  product falls below it can only fall further, so every pair at or above it is exact.
- 1-ply: each successor is a whole forward pass in effect, computed from the position's
  (forward_successor()): only the layers within reach of the inputs the move changes, and only
  the searches that expanded a point whose local connections changed, are redone.
- 2.6 the interval of a connection value v is floor(v * intervals) (the last includes 1); the
  selection weights are separate per colour: w[c][type(p)][type(p')][interval][unit].
- 3.1 the connectivity is not differentiated (the paper: "did not take part in the
  backpropagation"): the evaluation layer's error reaches the second hidden and simple-eye units,
  the local-connection units learn from their own targets only.
- value: the sum of the evaluation layer is the expected number of points alive for the side to
  move, so the expected area margin is 2 * sum - points (komi apart).

A SoftSegNetwork keeps its activations in per-object buffers: use one per thread.
"""

import numpy as np

from libc.math cimport exp, log
from libc.stdlib cimport malloc, realloc, free, abort
from libc.string cimport memset, memcpy

from engine.rules.board cimport Board
from engine.nets.features cimport BoardFeatures, NO_VALUE, NEED_EYES
from engine.nets.features import FEATURE_SET_SPECS, FEATURES, slot_of
from engine.rules.types cimport (EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE,
                                 WALL as C_WALL, MAX_LOCS, MIN_SIZE, MAX_SIZE)

# ---------------------------------------------------------------------------------------------
# Names and constants for Python code

FIELD_VECTORS = ((0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1))
TYPE_NAMES = ("empty corner", "empty edge next to corner", "other empty edge",
              "empty diagonal from corner", "other empty second line", "empty line 3+",
              "black stone", "white stone")
NUM_OUTPUT_COLUMNS = NUM_SOFTSEG_OUTPUTS
OUTPUT_EYE = OUT_EYE
OUTPUT_LOCAL = OUT_LOCAL
OUTPUT_EVAL = OUT_EVAL
DEFAULT_HIDDEN1 = 8             # the paper's sizes (section 4.1)
DEFAULT_HIDDEN2 = 2
DEFAULT_INTERVALS = 8           # section 2.6
DEFAULT_CUTOFF = 0.1            # section 2.6, footnote 2
DEFAULT_INIT_SCALE = 0.1
cdef double PATH_QUANTUM = 32.0  # the pathfinder's buckets per unit of -log(value): a coarser
                                 # quantum re-expands more points, a finer one scans more buckets
# The input sets: Table 1 from a kosumi feature set (its board features), or the raw board.
RAW = "raw"
RAW_VERSION = 1
FEATURE_SETS = (RAW, "neurogo", "neurogo_lite")


def feature_set_version(name):
    if name == RAW:
        return RAW_VERSION
    if name not in FEATURE_SETS:
        raise ValueError(f"unknown soft-segmentation input set {name!r}; known: {FEATURE_SETS}")
    return FEATURE_SET_SPECS[name].version


def _input_layout(name):
    """(features, num_inputs, max_active, needs): per board feature of the set (stone_class left
    out) its cell kind (0 empty, 1 own stone, 2 opponent stone), slot per own colour, offset."""
    if name == RAW:
        return [], 1, 1, 0
    kinds = {"empty_own": 0, "empty_opponent": 0, "own_stone": 1, "opponent_stone": 2}
    position = [0, 0, 0]
    count = [0, 0, 0]
    features, needs = [], 0
    for feature_name in feature_set_features(name):
        feature = FEATURES[feature_name]
        kind = kinds[feature.points]
        features.append((kind, slot_of(feature, C_BLACK), slot_of(feature, C_WHITE), position[kind]))
        position[kind] += feature.planes
        count[kind] += 1
        needs |= feature.needs
    return features, max(position), max(count), needs


def feature_set_features(name):
    return [f for f in FEATURE_SET_SPECS[name].features if f != "stone_class"]


cdef inline int interval_of(const int *table, const double *bounds, int intervals,
                            double cost) noexcept nogil:
    # floor(value * intervals) of value = exp(-cost): the table on the quantised cost gives it
    # but near an interval bound, which the bounds' own costs (-log(k / intervals), decreasing
    # in k) settle
    cdef int index = <int> (cost * INTERVAL_TABLE_SCALE)
    cdef int k
    if index >= INTERVAL_TABLE_SIZE:
        index = INTERVAL_TABLE_SIZE - 1
    k = table[index]
    while k + 1 < intervals and cost <= bounds[k + 1]:
        k += 1
    while k > 0 and cost > bounds[k]:
        k -= 1
    return k


cdef inline double sigmoid(double x) noexcept nogil:
    return 1.0 / (1.0 + exp(-x))


cdef inline double cross_entropy(double y, double t) noexcept nogil:
    if y < 1e-12:
        y = 1e-12
    elif y > 1.0 - 1e-12:
        y = 1.0 - 1e-12
    return -(t * log(y) + (1.0 - t) * log(1.0 - y))


cdef class SoftSegNetwork:
    """NeuroGo 3's network. Sizes are configuration; the defaults are the paper's."""

    def __cinit__(self, str feature_set="neurogo", int hidden1=DEFAULT_HIDDEN1,
                  int hidden2=DEFAULT_HIDDEN2, int intervals=DEFAULT_INTERVALS,
                  double cutoff=DEFAULT_CUTOFF):
        self.h1 = NULL
        self.level2 = NULL
        self.d_level2 = NULL
        self.d_h1 = NULL
        self.visitors = NULL
        self.base_h1 = NULL
        self.base_level2 = NULL
        self.base_reach_loc = NULL
        self.base_reach_interval = NULL
        self.base_reach_cost = NULL
        self.reach_loc = NULL
        self.reach_interval = NULL
        self.reach_cost = NULL
        self.entry_loc = NULL
        self.entry_next = NULL
        self.entry_cost = NULL
        self.bucket_head = NULL
        if feature_set not in FEATURE_SETS:
            raise ValueError(f"unknown soft-segmentation input set {feature_set!r}; known: "
                             f"{FEATURE_SETS}")
        if not 1 <= hidden1 <= SS_MAX_HIDDEN1:
            raise ValueError(f"hidden1 must be 1..{SS_MAX_HIDDEN1}, not {hidden1}")
        if not 0 <= hidden2 <= SS_MAX_LEVEL2 - 20:
            raise ValueError(f"hidden2 must be 0..{SS_MAX_LEVEL2 - 20}, not {hidden2}")
        if not 1 <= intervals <= SS_MAX_INTERVALS:
            raise ValueError(f"intervals must be 1..{SS_MAX_INTERVALS}, not {intervals}")
        if not 0.0 < cutoff < 1.0:
            raise ValueError(f"cutoff must be in (0, 1), not {cutoff}")
        self.feature_set = feature_set
        self.hidden1 = hidden1
        self.hidden2 = hidden2
        self.num_level2 = hidden2 + 2 + NUM_LOCAL
        self.num_selected = hidden2 + 2
        self.num_intervals = intervals
        self.cutoff = cutoff
        features, num_inputs, max_active, needs = _input_layout(feature_set)
        if max_active > SS_MAX_ACTIVE or len(features) > 2 * SS_MAX_ACTIVE:
            raise ValueError(f"input set {feature_set!r} has too many features")
        self.num_inputs = num_inputs
        self.max_active = max_active
        self.num_board_features = len(features)
        for j, (kind, black_slot, white_slot, offset) in enumerate(features):
            self.feature_cell[j] = kind
            self.feature_slot[0][j] = black_slot
            self.feature_slot[1][j] = white_slot
            self.feature_offset[j] = offset
        self.board_features = BoardFeatures(needs) if features else None
        cdef int pairs = NUM_TYPES * NUM_TYPES * NUM_FIELDS
        self.w1_start = 0
        self.b1_start = self.w1_start + pairs * num_inputs * hidden1
        self.w2_start = self.b1_start + NUM_TYPES * hidden1
        self.b2_start = self.w2_start + pairs * hidden1 * self.num_level2
        self.wv_start = self.b2_start + NUM_TYPES * self.num_level2
        self.bv_start = self.wv_start + 2 * NUM_TYPES * NUM_TYPES * intervals * self.num_selected
        self.num_params = self.bv_start + NUM_TYPES
        self._params = np.zeros(self.num_params)
        cdef double[::1] view = self._params
        self.params = &view[0]
        self.params_version = 0
        self.freeze_connectivity = False
        self.searches_made = 0
        self.h1 = <double *> malloc(MAX_LOCS * hidden1 * sizeof(double))
        self.d_h1 = <double *> malloc(MAX_LOCS * hidden1 * sizeof(double))
        self.level2 = <double *> malloc(MAX_LOCS * self.num_level2 * sizeof(double))
        self.d_level2 = <double *> malloc(MAX_LOCS * self.num_level2 * sizeof(double))
        self.base_h1 = <double *> malloc(MAX_LOCS * hidden1 * sizeof(double))
        self.base_level2 = <double *> malloc(MAX_LOCS * self.num_level2 * sizeof(double))
        self.entry_capacity = 16 * MAX_LOCS
        self.entry_loc = <int *> malloc(self.entry_capacity * sizeof(int))
        self.entry_next = <int *> malloc(self.entry_capacity * sizeof(int))
        self.entry_cost = <double *> malloc(self.entry_capacity * sizeof(double))
        self.bucket_head = <int *> malloc((<int> (-log(cutoff) * PATH_QUANTUM) + 4) * sizeof(int))
        if (self.h1 == NULL or self.d_h1 == NULL or self.level2 == NULL or self.d_level2 == NULL
                or self.base_h1 == NULL or self.base_level2 == NULL
                or self.entry_loc == NULL or self.entry_next == NULL
                or self.entry_cost == NULL or self.bucket_head == NULL):
            raise MemoryError()
        for k in range(1, intervals):
            self.interval_cost[k] = -log(<double> k / intervals)
        for k in range(INTERVAL_TABLE_SIZE):       # the interval at the table entry's low end
            self.interval_table[k] = min(int(exp(-k / INTERVAL_TABLE_SCALE) * intervals),
                                         intervals - 1)
        self.reach_capacity = 0
        self.epoch = 0
        memset(self.dist_mark, 0, sizeof(self.dist_mark))
        memset(self.h1_mark, 0, sizeof(self.h1_mark))
        memset(self.level2_mark, 0, sizeof(self.level2_mark))
        self.mark_epoch = 0
        self.num_changed_inputs = 0
        self.num_dirty_h1 = 0
        self.num_dirty_level2 = 0
        self.num_dirty_sources = 0
        self.visitor_words = 0
        self.size = 0
        self.prepare(9)

    def __dealloc__(self):
        free(self.h1)
        free(self.d_h1)
        free(self.level2)
        free(self.d_level2)
        free(self.visitors)
        free(self.base_h1)
        free(self.base_level2)
        free(self.base_reach_loc)
        free(self.base_reach_interval)
        free(self.base_reach_cost)
        free(self.reach_loc)
        free(self.reach_interval)
        free(self.reach_cost)
        free(self.entry_loc)
        free(self.entry_next)
        free(self.entry_cost)
        free(self.bucket_head)

    # ----------------------------------------------------------------- parameters

    @property
    def sizes(self):
        return {"hidden1": self.hidden1, "hidden2": self.hidden2, "intervals": self.num_intervals,
                "cutoff": self.cutoff}

    @property
    def num_outputs(self):
        return NUM_SOFTSEG_OUTPUTS

    @property
    def input_width(self):
        """Columns of an encoded position: the point type, then the active inputs."""
        return 1 + self.max_active

    def get_params(self):
        return self._params.copy()

    def set_params(self, params):
        params = np.asarray(params, dtype=np.float64)
        if params.shape != (self.num_params,):
            raise ValueError(f"expected {self.num_params} parameters, got shape {params.shape}")
        self._params[:] = params
        self.params_version += 1

    def parameter_blocks(self):
        """{name: (start, stop, shape)} of the flat parameter vector (softseg.pxd)."""
        pairs = (NUM_TYPES, NUM_TYPES, NUM_FIELDS)
        return {
            "w1": (self.w1_start, self.b1_start, pairs + (self.num_inputs, self.hidden1)),
            "b1": (self.b1_start, self.w2_start, (NUM_TYPES, self.hidden1)),
            "w2": (self.w2_start, self.b2_start, pairs + (self.hidden1, self.num_level2)),
            "b2": (self.b2_start, self.wv_start, (NUM_TYPES, self.num_level2)),
            "wv": (self.wv_start, self.bv_start, (2, NUM_TYPES, NUM_TYPES, self.num_intervals,
                                                  self.num_selected)),
            "bv": (self.bv_start, self.num_params, (NUM_TYPES,)),
        }

    def decay(self, double factor):
        self._params *= factor
        self.params_version += 1

    # ----------------------------------------------------------------- the board

    cdef int prepare(self, int size) except -1:
        cdef int p, row, col, i, lr, lc, low, high
        if size == self.size:
            return 0
        if not MIN_SIZE <= size <= MAX_SIZE:
            raise ValueError(f"board size must be {MIN_SIZE}..{MAX_SIZE}, not {size}")
        self.size = size
        self.stride = size + 2
        self.num_locs = self.stride * self.stride
        for i in range(NUM_FIELDS):
            self.offsets[i] = FIELD_VECTORS[i][0] - FIELD_VECTORS[i][1] * self.stride
        self.num_cells = 0
        for p in range(self.num_locs):
            self.cell_index[p] = -1
            self.types[p] = -1
            self.geometry_type[p] = -1
            self.num_active[p] = 0
        for p in range(MAX_LOCS):
            self.evaluation[p] = 0.0
        memset(self.h1, 0, MAX_LOCS * self.hidden1 * sizeof(double))
        memset(self.level2, 0, MAX_LOCS * self.num_level2 * sizeof(double))
        for row in range(size):
            for col in range(size):
                p = (row + 1) * self.stride + col + 1
                self.cell_index[p] = self.num_cells
                self.cells[self.num_cells] = p
                self.num_cells += 1
                lr = min(row, size - 1 - row)
                lc = min(col, size - 1 - col)
                low, high = min(lr, lc), max(lr, lc)
                if low == 0 and high == 0:
                    self.geometry_type[p] = 0
                elif low == 0 and high == 1:
                    self.geometry_type[p] = 1
                elif low == 0:
                    self.geometry_type[p] = 2
                elif low == 1 and high == 1:
                    self.geometry_type[p] = 3
                elif low == 1:
                    self.geometry_type[p] = 4
                else:
                    self.geometry_type[p] = 5
        cdef int needed = 2 * self.num_cells * self.num_cells
        if needed > self.reach_capacity:
            self.reach_loc = <int *> realloc(self.reach_loc, needed * sizeof(int))
            self.reach_interval = <int *> realloc(self.reach_interval, needed * sizeof(int))
            self.reach_cost = <double *> realloc(self.reach_cost, needed * sizeof(double))
            self.base_reach_loc = <int *> realloc(self.base_reach_loc, needed * sizeof(int))
            self.base_reach_interval = <int *> realloc(self.base_reach_interval, needed * sizeof(int))
            self.base_reach_cost = <double *> realloc(self.base_reach_cost, needed * sizeof(double))
            if (self.reach_loc == NULL or self.reach_interval == NULL or self.reach_cost == NULL
                    or self.base_reach_loc == NULL or self.base_reach_interval == NULL
                    or self.base_reach_cost == NULL):
                raise MemoryError()
            self.reach_capacity = needed
        self.visitor_words = (self.num_cells + 63) // 64
        self.visitors = <unsigned long long *> realloc(
            self.visitors, 2 * MAX_LOCS * self.visitor_words * sizeof(unsigned long long))
        if self.visitors == NULL:
            raise MemoryError()
        for i in range(2 * self.num_cells):
            self.reach_count[i] = 0
        if self.board_features is not None:
            self.board_features.prepare(size)
        return 0

    cdef void set_types(self, Board board, int to_move) noexcept nogil:
        cdef int i, p, colour
        for i in range(self.num_cells):
            p = self.cells[i]
            colour = board.colour[p]
            if colour == C_EMPTY:
                self.types[p] = self.geometry_type[p]
            elif colour == to_move:
                self.types[p] = 6
            else:
                self.types[p] = 7

    cdef void inputs_from_slots(self, int p, int to_move, const signed char *slots) noexcept nogil:
        cdef int j, kind, value, n = 0, t = self.types[p]
        cdef int own = to_move - C_BLACK
        if self.board_features is None:
            self.active[p][0] = 0
            self.num_active[p] = 1
            return
        kind = 0 if t < 6 else (1 if t == 6 else 2)
        for j in range(self.num_board_features):
            if self.feature_cell[j] == kind:
                value = slots[self.feature_slot[own][j]]
                if value != NO_VALUE:
                    self.active[p][n] = self.feature_offset[j] + value
                    n += 1
        self.num_active[p] = n

    cdef int encode_base(self, Board board, int to_move, bint record) except -1:
        """types[] and active[] of board with to_move as Black (features computed afresh)."""
        cdef int i, p
        self.prepare(board.size)
        self.set_types(board, to_move)
        if self.board_features is not None:
            self.board_features.compute_all(board, record)
        for i in range(self.num_cells):
            p = self.cells[i]
            if self.board_features is None:
                self.inputs_from_slots(p, to_move, NULL)
            else:
                self.inputs_from_slots(p, to_move, self.board_features.value[p])
        return 0

    # ----------------------------------------------------------------- forward

    cdef void hidden_cell(self, int p) noexcept nogil:
        # the first hidden units of cell p from the inputs of its window
        cdef int f, a, k, q, tq, tp = self.types[p]
        cdef int H1 = self.hidden1, NIN = self.num_inputs
        cdef double *h = self.h1 + p * H1
        cdef const double *row
        cdef const double *base
        memcpy(h, self.params + self.b1_start + tp * H1, H1 * sizeof(double))
        for f in range(NUM_FIELDS):
            q = p + self.offsets[f]
            tq = self.types[q]
            if tq < 0:
                continue
            base = self.params + self.w1_start + ((tp * NUM_TYPES + tq) * NUM_FIELDS + f) * NIN * H1
            for a in range(self.num_active[q]):
                row = base + self.active[q][a] * H1
                for k in range(H1):
                    h[k] += row[k]
        for k in range(H1):
            h[k] = sigmoid(h[k])

    cdef void level2_cell(self, int p) noexcept nogil:
        # the second-level units of cell p from the first hidden units of its window
        cdef int f, k, u, q, tq, tp = self.types[p]
        cdef int H1 = self.hidden1, L2 = self.num_level2
        cdef double *out = self.level2 + p * L2
        cdef const double *row
        cdef const double *hq
        cdef const double *base
        cdef double x
        memcpy(out, self.params + self.b2_start + tp * L2, L2 * sizeof(double))
        for f in range(NUM_FIELDS):
            q = p + self.offsets[f]
            tq = self.types[q]
            if tq < 0:
                continue
            base = self.params + self.w2_start + ((tp * NUM_TYPES + tq) * NUM_FIELDS + f) * H1 * L2
            hq = self.h1 + q * H1
            for k in range(H1):
                x = hq[k]
                row = base + k * L2
                for u in range(L2):
                    out[u] += x * row[u]
        for u in range(L2):
            out[u] = sigmoid(out[u])

    cdef void forward_local(self) noexcept nogil:
        cdef int i
        for i in range(self.num_cells):
            self.hidden_cell(self.cells[i])
        for i in range(self.num_cells):
            self.level2_cell(self.cells[i])

    cdef void set_steps(self, int c, int p) noexcept nogil:
        # the steps a path of colour c may take from p: window neighbours on the board whose
        # local connection is at or above the cut-off, at cost -log value
        cdef int f, n = 0, L2 = self.num_level2
        cdef int unit = self.hidden2 + 2 + NUM_FIELDS * c
        cdef double local
        for f in range(1, NUM_FIELDS):
            local = self.level2[p * L2 + unit + f]
            if self.types[p + self.offsets[f]] >= 0 and local >= self.cutoff:
                self.step_to[c][p][n] = p + self.offsets[f]
                self.step_cost[c][p][n] = -log(local)
                n += 1
        self.num_steps[c][p] = n

    cdef void search(self, int c, int i, bint record) noexcept nogil:
        # Colour c's connection values from cell i into its reach slot: a Dijkstra over the
        # steps with a bucket queue on costs quantised to 1/PATH_QUANTUM (label-correcting: a
        # point whose exact cost improves after it was expanded is expanded again, so the result
        # is the exact best product; the quantum only orders the work), pruned at the cut-off.
        # record: mark i in the visitor sets of the points the search expands.
        cdef int k, p, x, y, n, b, e, entry, live, num_visited, bucket, slot
        cdef int num_buckets = <int> ((-log(self.cutoff) + 1e-12) * PATH_QUANTUM) + 2
        cdef double limit = -log(self.cutoff) + 1e-12, local, d, nd, cost
        cdef unsigned long long bit = 1ULL << (i & 63)
        cdef int word = i >> 6, words = self.visitor_words
        slot = c * self.num_cells + i
        e = slot * self.num_cells
        p = self.cells[i]
        self.searches_made += 1
        local = self.level2[p * self.num_level2 + self.hidden2 + 2 + NUM_FIELDS * c]
        if local >= self.cutoff:          # p to itself: its self-connection unit
            self.reach_loc[e] = p
            self.reach_cost[e] = -log(local)
            self.reach_interval[e] = interval_of(self.interval_table, self.interval_cost,
                                                 self.num_intervals, -log(local))
            e += 1
        self.epoch += 1
        if self.epoch == 0:
            memset(self.dist_mark, 0, sizeof(self.dist_mark))
            self.epoch = 1
        for b in range(num_buckets):
            self.bucket_head[b] = -1
        self.dist[p] = 0.0
        self.dist_mark[p] = self.epoch
        self.visited[0] = p
        num_visited = 1
        self.entry_loc[0] = p
        self.entry_cost[0] = 0.0
        self.entry_next[0] = -1
        self.bucket_head[0] = 0
        n = 1                              # entries used
        live = 1
        b = 0
        while live > 0:
            entry = self.bucket_head[b]
            if entry < 0:
                b += 1
                continue
            self.bucket_head[b] = self.entry_next[entry]
            live -= 1
            x = self.entry_loc[entry]
            d = self.entry_cost[entry]
            if d > self.dist[x]:          # stale: x was reached more cheaply since
                continue
            for k in range(self.num_steps[c][x]):
                nd = d + self.step_cost[c][x][k]
                if nd > limit:
                    continue
                y = self.step_to[c][x][k]
                if self.dist_mark[y] == self.epoch:
                    if self.dist[y] <= nd:
                        continue
                else:
                    self.dist_mark[y] = self.epoch
                    self.visited[num_visited] = y
                    num_visited += 1
                self.dist[y] = nd
                if n == self.entry_capacity:
                    self.grow_entries()
                bucket = <int> (nd * PATH_QUANTUM)
                self.entry_loc[n] = y
                self.entry_cost[n] = nd
                self.entry_next[n] = self.bucket_head[bucket]
                self.bucket_head[bucket] = n
                n += 1
                live += 1
        for k in range(num_visited):
            x = self.visited[k]
            if record:
                self.visitors[(c * MAX_LOCS + x) * words + word] |= bit
            if k == 0:
                continue
            cost = self.dist[x]
            self.reach_loc[e] = x
            self.reach_cost[e] = cost
            self.reach_interval[e] = interval_of(self.interval_table, self.interval_cost,
                                                 self.num_intervals, cost)
            e += 1
        self.reach_count[slot] = e - slot * self.num_cells

    cdef void pathfinder(self) noexcept nogil:
        # The global connectivity of both colours from every point.
        cdef int c, i
        for c in range(2):
            for i in range(self.num_cells):
                self.set_steps(c, self.cells[i])
            for i in range(self.num_cells):
                self.search(c, i, False)

    cdef void grow_entries(self) noexcept nogil:
        cdef int capacity = 2 * self.entry_capacity
        self.entry_loc = <int *> realloc(self.entry_loc, capacity * sizeof(int))
        self.entry_next = <int *> realloc(self.entry_next, capacity * sizeof(int))
        self.entry_cost = <double *> realloc(self.entry_cost, capacity * sizeof(double))
        if self.entry_loc == NULL or self.entry_next == NULL or self.entry_cost == NULL:
            abort()
        self.entry_capacity = capacity

    cdef void forward_evaluation(self) noexcept nogil:
        cdef int i, c, e, u, p, q, tp, stop, first
        cdef int L2 = self.num_level2, S = self.num_selected, NI = self.num_intervals
        cdef const double *w
        cdef const double *a
        cdef double z
        for i in range(self.num_cells):
            p = self.cells[i]
            tp = self.types[p]
            z = self.params[self.bv_start + tp]
            for c in range(2):
                first = (c * self.num_cells + i) * self.num_cells
                stop = first + self.reach_count[c * self.num_cells + i]
                for e in range(first, stop):
                    q = self.reach_loc[e]
                    w = self.params + self.wv_start + (((c * NUM_TYPES + tp) * NUM_TYPES
                                                        + self.types[q]) * NI
                                                       + self.reach_interval[e]) * S
                    a = self.level2 + q * L2
                    for u in range(S):
                        z += w[u] * a[u]
            self.evaluation[p] = sigmoid(z)

    cdef double forward_all(self) noexcept nogil:
        cdef int i
        cdef double total = 0.0
        self.forward_local()
        if not self.freeze_connectivity:
            self.pathfinder()
        self.forward_evaluation()
        for i in range(self.num_cells):
            total += self.evaluation[self.cells[i]]
        return total

    # ----------------------------------------------------------------- successors

    cdef double forward_base(self) noexcept nogil:
        # forward_all() of the position the successors are made from, remembering what they
        # share: its inputs, layers and connectivity, and per point the searches that expanded it
        cdef int i, c, p
        cdef double total = 0.0
        self.forward_local()
        memset(self.visitors, 0, 2 * MAX_LOCS * self.visitor_words * sizeof(unsigned long long))
        for c in range(2):
            for i in range(self.num_cells):
                self.set_steps(c, self.cells[i])
            for i in range(self.num_cells):
                self.search(c, i, True)
        self.forward_evaluation()
        for i in range(self.num_cells):
            p = self.cells[i]
            total += self.evaluation[p]
            self.base_types[p] = self.types[p]
            self.base_num_active[p] = self.num_active[p]
            memcpy(self.base_active[p], self.active[p], self.num_active[p] * sizeof(int))
        memcpy(self.base_h1, self.h1, self.num_locs * self.hidden1 * sizeof(double))
        memcpy(self.base_level2, self.level2, self.num_locs * self.num_level2 * sizeof(double))
        memcpy(self.base_reach_loc, self.reach_loc, 2 * self.num_cells * self.num_cells * sizeof(int))
        memcpy(self.base_reach_interval, self.reach_interval,
               2 * self.num_cells * self.num_cells * sizeof(int))
        memcpy(self.base_reach_cost, self.reach_cost,
               2 * self.num_cells * self.num_cells * sizeof(double))
        memcpy(self.base_reach_count, self.reach_count, 2 * self.num_cells * sizeof(int))
        self.num_dirty_h1 = 0
        self.num_dirty_level2 = 0
        self.num_dirty_sources = 0
        return total

    cdef void restore_base(self) noexcept nogil:
        # undo what forward_successor() changed: the base position's state again
        cdef int k, p, c, slot, start, count
        for k in range(self.num_changed_inputs):
            p = self.changed_inputs[k]
            self.types[p] = self.base_types[p]
            self.num_active[p] = self.base_num_active[p]
            memcpy(self.active[p], self.base_active[p], self.base_num_active[p] * sizeof(int))
        self.num_changed_inputs = 0
        for k in range(self.num_dirty_h1):
            p = self.dirty_h1[k]
            memcpy(self.h1 + p * self.hidden1, self.base_h1 + p * self.hidden1,
                   self.hidden1 * sizeof(double))
        self.num_dirty_h1 = 0
        for k in range(self.num_dirty_level2):
            p = self.dirty_level2[k]
            memcpy(self.level2 + p * self.num_level2, self.base_level2 + p * self.num_level2,
                   self.num_level2 * sizeof(double))
            for c in range(2):
                self.set_steps(c, p)
        self.num_dirty_level2 = 0
        for k in range(self.num_dirty_sources):
            slot = self.dirty_sources[k]
            start = slot * self.num_cells
            count = self.base_reach_count[slot]
            memcpy(self.reach_loc + start, self.base_reach_loc + start, count * sizeof(int))
            memcpy(self.reach_interval + start, self.base_reach_interval + start, count * sizeof(int))
            memcpy(self.reach_cost + start, self.base_reach_cost + start, count * sizeof(double))
            self.reach_count[slot] = count
        self.num_dirty_sources = 0

    cdef double forward_successor(self, Board board, int move, int to_move) noexcept nogil:
        # board has just played move on the forward_base() position (to_move the side to move
        # after it, as there). The inputs that changed (the move, captures, the features'
        # overlay) make the first hidden units of their windows dirty, those the second level's
        # of theirs; a search is redone when it expanded a point whose steps changed (otherwise
        # it would find exactly what it found), and the evaluation layer is recomputed whole.
        # The state is the successor's until the next forward_successor() or restore_base().
        cdef int k, i, j, f, p, q, c, w, slot, kind, n
        cdef int L2 = self.num_level2, H1 = self.hidden1, words = self.visitor_words
        cdef int first_unit = self.hidden2 + 2
        cdef bint differs
        cdef double total = 0.0
        cdef unsigned long long bits
        self.restore_base()
        self.epoch += 1
        if self.epoch == 0:
            memset(self.dist_mark, 0, sizeof(self.dist_mark))
            self.epoch = 1
        # 1. the inputs: every point whose type or active inputs differ from the base
        self.set_types(board, to_move)
        if self.board_features is not None:
            self.board_features.successor(board, move)
        for i in range(self.num_cells):
            p = self.cells[i]
            if self.board_features is None:
                self.inputs_from_slots(p, to_move, NULL)
            else:
                self.inputs_from_slots(p, to_move, self.board_features.cell_values(p))
            differs = self.types[p] != self.base_types[p] or \
                self.num_active[p] != self.base_num_active[p]
            if not differs:
                for k in range(self.num_active[p]):
                    if self.active[p][k] != self.base_active[p][k]:
                        differs = True
                        break
            if differs:
                self.changed_inputs[self.num_changed_inputs] = p
                self.num_changed_inputs += 1
            else:
                self.types[p] = self.base_types[p]
        # 2. first hidden units within the windows of the changed inputs
        self.mark_epoch += 1
        if self.mark_epoch == 0:
            memset(self.h1_mark, 0, sizeof(self.h1_mark))
            memset(self.level2_mark, 0, sizeof(self.level2_mark))
            self.mark_epoch = 1
        for k in range(self.num_changed_inputs):
            p = self.changed_inputs[k]
            for f in range(NUM_FIELDS):
                q = p + self.offsets[f]
                if self.types[q] >= 0 and self.h1_mark[q] != self.mark_epoch:
                    self.h1_mark[q] = self.mark_epoch
                    self.dirty_h1[self.num_dirty_h1] = q
                    self.num_dirty_h1 += 1
        for k in range(self.num_dirty_h1):
            self.hidden_cell(self.dirty_h1[k])
        for k in range(self.num_dirty_h1):
            p = self.dirty_h1[k]
            for f in range(NUM_FIELDS):
                q = p + self.offsets[f]
                if self.types[q] >= 0 and self.level2_mark[q] != self.mark_epoch:
                    self.level2_mark[q] = self.mark_epoch
                    self.dirty_level2[self.num_dirty_level2] = q
                    self.num_dirty_level2 += 1
        # changed inputs also change the second level of their own windows through the types
        for k in range(self.num_changed_inputs):
            p = self.changed_inputs[k]
            for f in range(NUM_FIELDS):
                q = p + self.offsets[f]
                if self.types[q] >= 0 and self.level2_mark[q] != self.mark_epoch:
                    self.level2_mark[q] = self.mark_epoch
                    self.dirty_level2[self.num_dirty_level2] = q
                    self.num_dirty_level2 += 1
        for k in range(self.num_dirty_level2):
            self.level2_cell(self.dirty_level2[k])
        # 3. the searches that expanded a point whose steps (or self value) changed
        for w in range(2 * words):
            self.dirty_bits[w] = 0
        for k in range(self.num_dirty_level2):
            p = self.dirty_level2[k]
            for c in range(2):
                differs = False
                for f in range(NUM_FIELDS):
                    if self.level2[p * L2 + first_unit + NUM_FIELDS * c + f] != \
                            self.base_level2[p * L2 + first_unit + NUM_FIELDS * c + f]:
                        differs = True
                        break
                if differs:
                    self.set_steps(c, p)
                    for w in range(words):
                        self.dirty_bits[c * words + w] |= self.visitors[(c * MAX_LOCS + p) * words + w]
                    # the point's own search uses its self value even when it expands nothing
                    i = self.cell_index[p]
                    self.dirty_bits[c * words + (i >> 6)] |= 1ULL << (i & 63)
        for c in range(2):
            for w in range(words):
                bits = self.dirty_bits[c * words + w]
                while bits:
                    j = 0
                    while not (bits >> j) & 1ULL:
                        j += 1
                    bits &= bits - 1
                    i = w * 64 + j
                    slot = c * self.num_cells + i
                    self.dirty_sources[self.num_dirty_sources] = slot
                    self.num_dirty_sources += 1
                    self.search(c, i, False)
        # 4. the evaluation layer
        self.forward_evaluation()
        for i in range(self.num_cells):
            total += self.evaluation[self.cells[i]]
        return total

    # ----------------------------------------------------------------- backward

    cdef double backward(self, const double *targets, const unsigned char *mask, double *dest,
                         double scale) noexcept nogil:
        cdef int i, c, e, u, f, k, a, p, q, tp, tq, stop, column, first
        cdef int H1 = self.hidden1, L2 = self.num_level2, S = self.num_selected
        cdef int NI = self.num_intervals, NIN = self.num_inputs, H2 = self.hidden2
        cdef double loss = 0.0, y, t, de, g, s, x
        cdef const double *w
        cdef const double *act
        cdef const double *row
        cdef double *dq
        cdef double *wd
        cdef double *d
        cdef double *dh
        cdef const double *hq
        cdef double *base_dest
        cdef const double *base
        for i in range(self.num_cells):
            p = self.cells[i]
            memset(self.d_level2 + p * L2, 0, L2 * sizeof(double))
            memset(self.d_h1 + p * H1, 0, H1 * sizeof(double))
            self.d_eval[p] = 0.0
            if mask[p * NUM_SOFTSEG_OUTPUTS + OUT_EVAL]:
                y = self.evaluation[p]
                t = targets[p * NUM_SOFTSEG_OUTPUTS + OUT_EVAL]
                loss += cross_entropy(y, t)
                self.d_eval[p] = y - t
        # evaluation layer: deltas of the selected units first, then its weights
        for i in range(self.num_cells):
            p = self.cells[i]
            de = self.d_eval[p]
            if de == 0.0:
                continue
            tp = self.types[p]
            for c in range(2):
                first = (c * self.num_cells + i) * self.num_cells
                stop = first + self.reach_count[c * self.num_cells + i]
                for e in range(first, stop):
                    q = self.reach_loc[e]
                    w = self.params + self.wv_start + (((c * NUM_TYPES + tp) * NUM_TYPES
                                                        + self.types[q]) * NI
                                                       + self.reach_interval[e]) * S
                    dq = self.d_level2 + q * L2
                    for u in range(S):
                        dq[u] += de * w[u]
        for i in range(self.num_cells):
            p = self.cells[i]
            de = self.d_eval[p]
            if de == 0.0:
                continue
            tp = self.types[p]
            g = scale * de
            for c in range(2):
                first = (c * self.num_cells + i) * self.num_cells
                stop = first + self.reach_count[c * self.num_cells + i]
                for e in range(first, stop):
                    q = self.reach_loc[e]
                    wd = dest + self.wv_start + (((c * NUM_TYPES + tp) * NUM_TYPES
                                                  + self.types[q]) * NI
                                                 + self.reach_interval[e]) * S
                    act = self.level2 + q * L2
                    for u in range(S):
                        wd[u] += g * act[u]
            dest[self.bv_start + tp] += g
        # second level: pre-activation deltas (the eye and local units also have targets)
        for i in range(self.num_cells):
            p = self.cells[i]
            act = self.level2 + p * L2
            d = self.d_level2 + p * L2
            for u in range(L2):
                y = act[u]
                g = d[u] * y * (1.0 - y)
                if u >= H2:
                    column = u - H2           # outputs 0..19: eyes, then local connections
                    if mask[p * NUM_SOFTSEG_OUTPUTS + column]:
                        t = targets[p * NUM_SOFTSEG_OUTPUTS + column]
                        loss += cross_entropy(y, t)
                        g += y - t
                d[u] = g
        for i in range(self.num_cells):
            p = self.cells[i]
            tp = self.types[p]
            d = self.d_level2 + p * L2
            for f in range(NUM_FIELDS):
                q = p + self.offsets[f]
                tq = self.types[q]
                if tq < 0:
                    continue
                base = self.params + self.w2_start + ((tp * NUM_TYPES + tq) * NUM_FIELDS + f) * H1 * L2
                dh = self.d_h1 + q * H1
                for k in range(H1):
                    row = base + k * L2
                    s = 0.0
                    for u in range(L2):
                        s += d[u] * row[u]
                    dh[k] += s
        for i in range(self.num_cells):
            p = self.cells[i]
            tp = self.types[p]
            d = self.d_level2 + p * L2
            for f in range(NUM_FIELDS):
                q = p + self.offsets[f]
                tq = self.types[q]
                if tq < 0:
                    continue
                base_dest = dest + self.w2_start + ((tp * NUM_TYPES + tq) * NUM_FIELDS + f) * H1 * L2
                hq = self.h1 + q * H1
                for k in range(H1):
                    x = scale * hq[k]
                    wd = base_dest + k * L2
                    for u in range(L2):
                        wd[u] += x * d[u]
            wd = dest + self.b2_start + tp * L2
            for u in range(L2):
                wd[u] += scale * d[u]
        # first hidden layer
        for i in range(self.num_cells):
            p = self.cells[i]
            hq = self.h1 + p * H1
            dh = self.d_h1 + p * H1
            for k in range(H1):
                dh[k] *= scale * hq[k] * (1.0 - hq[k])
        for i in range(self.num_cells):
            p = self.cells[i]
            tp = self.types[p]
            dh = self.d_h1 + p * H1
            for f in range(NUM_FIELDS):
                q = p + self.offsets[f]
                tq = self.types[q]
                if tq < 0:
                    continue
                base_dest = dest + self.w1_start + ((tp * NUM_TYPES + tq) * NUM_FIELDS + f) * NIN * H1
                for a in range(self.num_active[q]):
                    wd = base_dest + self.active[q][a] * H1
                    for k in range(H1):
                        wd[k] += dh[k]
            wd = dest + self.b1_start + tp * H1
            for k in range(H1):
                wd[k] += dh[k]
        return loss

    # ----------------------------------------------------------------- Python API

    cdef object _encoded(self):
        """The current position as an int32 array (num_locs, 1 + max_active): type, active inputs."""
        cdef int i, p, a
        encoded = np.full((self.num_locs, 1 + self.max_active), -1, dtype=np.int32)
        cdef int[:, ::1] view = encoded
        for i in range(self.num_cells):
            p = self.cells[i]
            view[p, 0] = self.types[p]
            for a in range(self.num_active[p]):
                view[p, 1 + a] = self.active[p][a]
        return encoded

    cdef int _load_encoded(self, object encoded) except -1:
        encoded = np.asarray(encoded)
        if encoded.ndim != 2 or encoded.shape[1] != 1 + self.max_active:
            raise ValueError(f"encoded position must have shape (num_locs, {1 + self.max_active}), "
                             f"not {encoded.shape}")
        cdef int num_locs = encoded.shape[0]
        cdef int size = <int> round(num_locs ** 0.5) - 2
        if (size + 2) * (size + 2) != num_locs:
            raise ValueError(f"{num_locs} locations is not a padded square board")
        self.prepare(size)
        cdef int[:, ::1] view = np.ascontiguousarray(encoded, dtype=np.int32)
        cdef int i, p, a, n, t
        for i in range(self.num_cells):
            p = self.cells[i]
            t = view[p, 0]
            if not 0 <= t < NUM_TYPES:
                raise ValueError(f"encoded position: point {p} has type {t}")
            self.types[p] = t
            n = 0
            for a in range(self.max_active):
                if view[p, 1 + a] < 0:
                    break
                if view[p, 1 + a] >= self.num_inputs:
                    raise ValueError(f"encoded position: point {p} has input {view[p, 1 + a]}")
                self.active[p][n] = view[p, 1 + a]
                n += 1
            self.num_active[p] = n
        return 0

    cdef object _outputs(self):
        cdef int i, p, u
        outputs = np.zeros((self.num_locs, NUM_SOFTSEG_OUTPUTS))
        cdef double[:, ::1] view = outputs
        for i in range(self.num_cells):
            p = self.cells[i]
            for u in range(NUM_SOFTSEG_OUTPUTS - 1):
                view[p, u] = self.level2[p * self.num_level2 + self.hidden2 + u]
            view[p, OUT_EVAL] = self.evaluation[p]
        return outputs

    def encode(self, Board board, int to_move):
        """The inputs of board with to_move presented as Black (forward()'s format)."""
        _check_colour(to_move)
        self.encode_base(board, to_move, False)
        return self._encoded()

    def forward(self, encoded):
        """Outputs (num_locs, 21) of an encoded position (softseg.pxd's output columns)."""
        self._load_encoded(encoded)
        with nogil:
            self.forward_all()
        return self._outputs()

    def evaluate_board(self, Board board, int to_move):
        """(outputs, encoded inputs, total): total is the sum of the evaluation layer, the expected
        number of points alive for to_move."""
        _check_colour(to_move)
        self.encode_base(board, to_move, False)
        cdef double total
        with nogil:
            total = self.forward_all()
        return self._outputs(), self._encoded(), total

    def successor_values(self, Board board, int mover, moves, bint allow_suicide=False):
        """(pass value, values): for each move (legal for mover), the expected area margin of
        the position after it for mover, komi excluded; the same after a pass. Each successor is
        evaluated whole (the pathfinder spans the board); its features come incrementally from
        the position's (engine/nets/features.pyx). board is restored exactly."""
        _check_colour(mover)
        cdef int[::1] points = np.ascontiguousarray(moves, dtype=np.intc)
        cdef int i, j, p, move, opponent = 3 - mover
        for i in range(points.shape[0]):
            if not board.is_legal(points[i], mover, allow_suicide):
                raise ValueError(f"move {points[i]} is illegal for colour {mover}")
        values = np.empty(points.shape[0])
        cdef double[::1] out = values
        cdef double total, pass_total
        self.encode_base(board, opponent, True)
        with nogil:
            pass_total = self.forward_base()
            for i in range(points.shape[0]):
                move = points[i]
                board.play_move(move, mover, allow_suicide)
                total = self.forward_successor(board, move, opponent)
                out[i] = self.num_cells - 2.0 * total
                board.undo_move()
            self.restore_base()
        return self.num_cells - 2.0 * pass_total, values

    def _check_targets(self, targets, mask):
        targets = np.ascontiguousarray(targets, dtype=np.float64)
        mask = np.ascontiguousarray(mask, dtype=np.uint8)
        shape = (self.num_locs, NUM_SOFTSEG_OUTPUTS)
        if targets.shape != shape or mask.shape != shape:
            raise ValueError(f"targets and mask must have shape {shape}, not {targets.shape} "
                             f"and {mask.shape}")
        return targets, mask

    def loss_and_gradient(self, encoded, targets, mask, grad):
        """Summed cross-entropy of the masked outputs of an encoded position against targets
        (num_locs, 21); adds its gradient into grad (float64, num_params). The connectivity is
        held fixed (it is not differentiated)."""
        self._load_encoded(encoded)
        targets, mask = self._check_targets(targets, mask)
        if not isinstance(grad, np.ndarray) or grad.dtype != np.float64 or \
                grad.shape != (self.num_params,) or not grad.flags.c_contiguous:
            raise ValueError(f"grad must be a contiguous float64 array of {self.num_params}")
        cdef double[::1] g = grad
        cdef double[:, ::1] t = targets
        cdef unsigned char[:, ::1] m = mask
        cdef double loss
        with nogil:
            self.forward_all()
            loss = self.backward(&t[0, 0], &m[0, 0], &g[0], 1.0)
        return loss

    def train_position(self, encoded, targets, mask, double rate):
        """One gradient step of size rate on one position (NeuroGo's immediate update), done in
        place on the weights the position touches. Returns (loss, outputs) of the forward pass
        the step was computed from (before the step)."""
        self._load_encoded(encoded)
        targets, mask = self._check_targets(targets, mask)
        cdef double[:, ::1] t = targets
        cdef unsigned char[:, ::1] m = mask
        cdef double loss
        with nogil:
            self.forward_all()
        outputs = self._outputs()
        with nogil:
            loss = self.backward(&t[0, 0], &m[0, 0], self.params, -rate)
        self.params_version += 1
        return loss, outputs

    def connectivity(self):
        """The last forward pass's global connectivity: (2, num_locs, num_locs), [colour][p][q]
        the connection value of p to q (0 below the cut-off); colour 0 is the side to move."""
        result = np.zeros((2, self.num_locs, self.num_locs))
        cdef int c, i, e, first
        for c in range(2):
            for i in range(self.num_cells):
                first = (c * self.num_cells + i) * self.num_cells
                for e in range(first, first + self.reach_count[c * self.num_cells + i]):
                    result[c, self.cells[i], self.reach_loc[e]] = exp(-self.reach_cost[e])
        return result

    def _pathfinder_on(self, local, int size):
        """pathfinder() on given local connections (num_locs, 2, 9) (pathfinder_reference)."""
        self.prepare(size)
        local = np.asarray(local, dtype=np.float64)
        if local.shape != (self.num_locs, 2, NUM_FIELDS):
            raise ValueError(f"local connections must have shape ({self.num_locs}, 2, 9)")
        cdef int i, p, c, f
        for i in range(self.num_cells):
            p = self.cells[i]
            self.types[p] = 5
            for c in range(2):
                for f in range(NUM_FIELDS):
                    self.level2[p * self.num_level2 + self.hidden2 + 2 + NUM_FIELDS * c + f] = local[p, c, f]
        self.pathfinder()
        return self.connectivity()

    def level2_activations(self):
        """The last forward pass's second-level units (num_locs, num_level2), for tests."""
        result = np.zeros((self.num_locs, self.num_level2))
        cdef int i, u, p
        for i in range(self.num_cells):
            p = self.cells[i]
            for u in range(self.num_level2):
                result[p, u] = self.level2[p * self.num_level2 + u]
        return result


def _check_colour(int colour):
    if colour != C_BLACK and colour != C_WHITE:
        raise ValueError(f"colour must be BLACK (1) or WHITE (2), not {colour}")


def pathfinder_reference(local, int size, double cutoff=DEFAULT_CUTOFF):
    """The pathfinder alone on given local connections (num_locs, 2, 9), for tests: returns the
    connectivity (2, num_locs, num_locs) as SoftSegNetwork computes it."""
    network = SoftSegNetwork(RAW, 1, 0, 8, cutoff)
    return network._pathfinder_on(np.asarray(local, dtype=np.float64), size)


# ---------------------------------------------------------------------------------------------
# The rich reinforcement signal (section 2.1)

def eyes_and_components(Board board, int colour):
    """(eye, component): per loc, whether it is a single-point eye of colour as section 2.1
    defines it (an empty point whose neighbours are all stones of one block, or of two blocks
    that share another such point), and the label of colour's connection component (the
    4-connected sets of colour's stones and eyes; -1 outside)."""
    cdef int num_locs = board.num_locs, stride = board.stride, p, q, k, n
    eye = np.zeros(num_locs, dtype=bool)
    pairs = {}
    candidates = []
    for p in board.points():
        if board.colour[p] != C_EMPTY:
            continue
        heads = set()
        n = 0
        for q in (p + 1, p - 1, p + stride, p - stride):
            if board.colour[q] == C_WALL:
                continue
            if board.colour[q] != colour:
                heads = None
                break
            heads.add(board.chain_head[q])
        if heads is None:
            continue
        if len(heads) == 1:
            eye[p] = True
        elif len(heads) == 2:
            key = tuple(sorted(heads))
            pairs.setdefault(key, []).append(p)
    for points in pairs.values():
        if len(points) >= 2:               # two blocks sharing another single-point eye
            eye[points] = True
    label = np.full(num_locs, -1, dtype=np.int64)
    count = 0
    for start in board.points():
        if label[start] >= 0 or not (board.colour[start] == colour or eye[start]):
            continue
        label[start] = count
        stack = [start]
        while stack:
            p = stack.pop()
            for q in (p + 1, p - 1, p + stride, p - stride):
                if label[q] < 0 and (board.colour[q] == colour or eye[q]):
                    label[q] = count
                    stack.append(q)
        count += 1
    return eye, label


def rich_signal(Board board, int to_move=C_BLACK, bint final=False):
    """The reinforcement signal observed on board, in the frame where to_move is Black:
    (targets (num_locs, 21), mask (num_locs, 21) bool), columns as the outputs (softseg.pxd).
    Observed (final False): only the events present — a single-point eye, a connection of a
    point to a point of its 3x3 window (itself included), a live point (connected to two eyes;
    target 1 alive for to_move, 0 alive for the other) — are masked in, with target 1 (0 for
    the other colour's live points). Final: every on-board output has a target: eyes and
    connections present or not; a point alive for neither colour (a game ended by superko or
    the move cap) takes its area owner (1, 0, or 0.5 when neutral)."""
    _check_colour(to_move)
    cdef int num_locs = board.num_locs, stride = board.stride, p, f, c, q
    targets = np.zeros((num_locs, NUM_SOFTSEG_OUTPUTS))
    mask = np.zeros((num_locs, NUM_SOFTSEG_OUTPUTS), dtype=bool)
    points = board.points()
    offsets = [dx - dy * stride for dx, dy in FIELD_VECTORS]
    alive = np.zeros((2, num_locs), dtype=bool)
    for c, colour in enumerate((to_move, 3 - to_move)):
        eye, label = eyes_and_components(board, colour)
        eyes_in = np.bincount(label[eye], minlength=max(int(label.max()) + 1, 1)) \
            if eye.any() else np.zeros(max(int(label.max()) + 1, 1), dtype=np.int64)
        for p in points:
            if eye[p]:
                targets[p, OUT_EYE + c] = 1.0
                mask[p, OUT_EYE + c] = True
            elif final:
                mask[p, OUT_EYE + c] = True
            for f in range(NUM_FIELDS):
                q = p + offsets[f]
                if board.colour[q] == C_WALL:
                    continue
                column = OUT_LOCAL + NUM_FIELDS * c + f
                if label[p] >= 0 and label[q] == label[p]:
                    targets[p, column] = 1.0
                    mask[p, column] = True
                elif final:
                    mask[p, column] = True
            if label[p] >= 0 and eyes_in[label[p]] >= 2:
                alive[c, p] = True
    for p in points:
        if alive[0, p]:
            targets[p, OUT_EVAL] = 1.0
            mask[p, OUT_EVAL] = True
        elif alive[1, p]:
            mask[p, OUT_EVAL] = True
        elif final:
            targets[p, OUT_EVAL] = _area_owner(board, p, to_move)
            mask[p, OUT_EVAL] = True
    return targets, mask


def _area_owner(Board board, int p, int to_move):
    """1 if p is to_move's area (stone, or empty region bordered by to_move alone), 0 if the
    other's, 0.5 if neutral (Tromp-Taylor)."""
    if board.colour[p] != C_EMPTY:
        return 1.0 if board.colour[p] == to_move else 0.0
    cdef int stride = board.stride, q
    seen = {p}
    stack = [p]
    borders = set()
    while stack:
        x = stack.pop()
        for q in (x + 1, x - 1, x + stride, x - stride):
            colour = board.colour[q]
            if colour == C_EMPTY and q not in seen:
                seen.add(q)
                stack.append(q)
            elif colour == C_BLACK or colour == C_WHITE:
                borders.add(colour)
    if borders == {to_move}:
        return 1.0
    if borders == {3 - to_move}:
        return 0.0
    return 0.5


def all_alive(Board board):
    """Whether every point of board is alive for one colour (section 2.1: only then may a
    training game pass)."""
    targets, mask = rich_signal(board, C_BLACK, False)
    return bool(mask[board.points(), OUT_EVAL].all())


def own_eyes(Board board, int colour):
    """The single-point eyes of colour (section 2.1's definition), as a boolean array per loc."""
    return eyes_and_components(board, colour)[0]


# Frame change: the colour columns swap, the evaluation complements (alive for the other side).
_SWAP_COLUMNS = np.array([1, 0] + [OUT_LOCAL + NUM_FIELDS + f for f in range(NUM_FIELDS)]
                         + [OUT_LOCAL + f for f in range(NUM_FIELDS)] + [OUT_EVAL])


def swap_frame(values):
    """Outputs or targets (..., 21) seen from the other side to move (a new array)."""
    values = np.asarray(values, dtype=np.float64)
    swapped = values[..., _SWAP_COLUMNS]
    swapped[..., OUT_EVAL] = 1.0 - swapped[..., OUT_EVAL]
    return swapped


def swap_frame_mask(mask):
    return np.asarray(mask)[..., _SWAP_COLUMNS]


def swap_frame_events(events):
    """Observed events int8 (..., 21), -1 where none, seen from the other side to move."""
    events = np.asarray(events)
    swapped = events[..., _SWAP_COLUMNS].copy()
    column = swapped[..., OUT_EVAL]
    swapped[..., OUT_EVAL] = np.where(column >= 0, 1 - column, column)
    return swapped


def events_of(Board board):
    """The observed signal of board in the real-Black frame, as int8 (num_locs, 21): the target
    where an event is present, -1 elsewhere (compact storage for the trainer)."""
    targets, mask = rich_signal(board, C_BLACK, False)
    events = np.where(mask, targets, -1).astype(np.int8)
    return events
