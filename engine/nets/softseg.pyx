# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""NeuroGo 3's soft-segmentation network (Enzenberger 2003, section 2), kosumi's second evaluator.

Reading order: SoftSegNetwork.forward_all() (forward_local(): receptive fields with weight sets
chosen by point type; pathfinder(): the global connectivity; forward_evaluation(): connectivity-
based weight selection), backward() (training), then the Python API (evaluate_board,
successor_values, forward, loss_and_gradient, train_position, train_game) and rich_signal()
(the targets).
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
  (forward_successor()): only the layers within reach of the inputs the move changes are redone;
  a search that expanded a point whose local connections changed is repaired from the position's
  (repair(): only the points whose best path crossed a changed point are searched again, to the
  same doubles), or redone when its source's own steps changed; the evaluation layer's input
  from each search changes only by the entries the repair edited and the points whose units
  changed. The sums of the evaluation layer come in another order than a full pass's, so the
  values agree with full evaluations to rounding (about 1e-15 relative).
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
from libc.stdlib cimport malloc, calloc, realloc, free, abort
from libc.string cimport memset, memcpy, memcmp

cdef extern from *:
    int count_trailing_zeros "__builtin_ctzll" (unsigned long long bits) noexcept nogil

from engine.rules.board cimport Board
from engine.nets.features cimport BoardFeatures, NO_VALUE, NEED_EYES
from engine.nets.features import FEATURE_SET_SPECS, FEATURES, slot_of
from engine.rules.types cimport (EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE,
                                 WALL as C_WALL, MAX_LOCS, MIN_SIZE, MAX_SIZE)

# ---------------------------------------------------------------------------------------------
# Names and constants for Python code

FIELD_VECTORS = ((0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1))
cdef int FIELD_DX[NUM_FIELDS]      # FIELD_VECTORS for nogil code
cdef int FIELD_DY[NUM_FIELDS]
for _field, (_dx, _dy) in enumerate(FIELD_VECTORS):
    FIELD_DX[_field] = _dx
    FIELD_DY[_field] = _dy
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
# Frame change: the colour columns swap, the evaluation complements (alive for the other side).
_SWAP_COLUMNS = np.array([1, 0] + [OUT_LOCAL + NUM_FIELDS + f for f in range(NUM_FIELDS)]
                         + [OUT_LOCAL + f for f in range(NUM_FIELDS)] + [OUT_EVAL])
cdef int SWAP_COLUMN[NUM_SOFTSEG_OUTPUTS]          # _SWAP_COLUMNS for nogil code
for _column, _source in enumerate(_SWAP_COLUMNS):
    SWAP_COLUMN[_column] = _source


cdef void swap_outputs(const double *values, double *swapped, int num_locs) noexcept nogil:
    # swap_frame() of values (num_locs x 21) into swapped
    cdef int p, k
    for p in range(num_locs):
        for k in range(NUM_SOFTSEG_OUTPUTS):
            swapped[k] = values[SWAP_COLUMN[k]]
        swapped[OUT_EVAL] = 1.0 - swapped[OUT_EVAL]
        values += NUM_SOFTSEG_OUTPUTS
        swapped += NUM_SOFTSEG_OUTPUTS


cdef double PATH_QUANTUM = 64.0    # the pathfinder's buckets per unit of -log(value): a coarser
                                   # quantum makes longer bucket lists to keep in order; the
                                   # empty buckets are skipped by their bitmap
cdef double UNREACHED = 1e300    # dist[] of a point no path has reached (within the cut-off)
cdef enum:                       # listed[]: whether a point is in the search's visited[] and,
    NOT_LISTED = 0               # during a repair, whether its base path is still valid
    CLEAN = 1
    AFFECTED = 2
cdef enum:                       # slot_state[]: what a successor did to a reach slot
    UNTOUCHED = 0
    REPAIRED = 1
    REDONE = 2
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


cdef inline void insert_in_order(int *bucket_head, int *entry_next, const double *entry_cost,
                                 unsigned long long *occupied, int bucket, int n) noexcept nogil:
    # entry n into its bucket's list after the entries that cost no more: the points then come
    # out of the queue cheapest first. Without it a bucket is a stack, and where strong
    # connections (costs near 0) crowd a bucket, points come out before their best path and are
    # expanded again (about 3 times each in the positions of trained 9x9 games)
    cdef int previous = -1, e = bucket_head[bucket]
    cdef double cost = entry_cost[n]
    while e >= 0 and entry_cost[e] <= cost:
        previous = e
        e = entry_next[e]
    entry_next[n] = e
    if previous < 0:
        bucket_head[bucket] = n
        occupied[bucket >> 6] |= 1ULL << (bucket & 63)
    else:
        entry_next[previous] = n


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
        self.occupied = NULL
        self.base_reach_parent = NULL
        self.base_interval_at = NULL
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
        self.cost_limit = -log(cutoff) + 1e-12
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
        cdef int num_buckets
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
        num_buckets = <int> (-log(cutoff) * PATH_QUANTUM) + 4
        self.bucket_head = <int *> malloc(num_buckets * sizeof(int))
        self.occupied = <unsigned long long *> calloc(num_buckets // 64 + 2, sizeof(unsigned long long))
        if (self.h1 == NULL or self.d_h1 == NULL or self.level2 == NULL or self.d_level2 == NULL
                or self.base_h1 == NULL or self.base_level2 == NULL
                or self.entry_loc == NULL or self.entry_next == NULL
                or self.entry_cost == NULL or self.bucket_head == NULL or self.occupied == NULL):
            raise MemoryError()
        for k in range(1, intervals):
            self.interval_cost[k] = -log(<double> k / intervals)
        for k in range(INTERVAL_TABLE_SIZE):       # the interval at the table entry's low end
            self.interval_table[k] = min(int(exp(-k / INTERVAL_TABLE_SCALE) * intervals),
                                         intervals - 1)
        self.reach_capacity = 0
        for k in range(num_buckets):
            self.bucket_head[k] = -1
        for k in range(MAX_LOCS):
            self.dist[k] = UNREACHED
            self.listed[k] = NOT_LISTED
        memset(self.steps_changed, 0, sizeof(self.steps_changed))
        memset(self.slot_state, 0, sizeof(self.slot_state))
        memset(self.entry_stamp, 0, sizeof(self.entry_stamp))
        self.edit_stamp = 0
        self.num_entries = 0
        self.live_entries = 0
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
        free(self.base_reach_parent)
        free(self.base_interval_at)
        free(self.reach_loc)
        free(self.reach_interval)
        free(self.reach_cost)
        free(self.entry_loc)
        free(self.entry_next)
        free(self.entry_cost)
        free(self.bucket_head)
        free(self.occupied)

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
            self.base_reach_parent = <int *> realloc(self.base_reach_parent, needed * sizeof(int))
            self.base_interval_at = <signed char *> realloc(self.base_interval_at,
                                                            2 * self.num_cells * self.num_locs)
            if (self.reach_loc == NULL or self.reach_interval == NULL or self.reach_cost == NULL
                    or self.base_reach_loc == NULL or self.base_reach_interval == NULL
                    or self.base_reach_cost == NULL or self.base_reach_parent == NULL
                    or self.base_interval_at == NULL):
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
        # the first hidden units of cell p from the inputs of its window (summed in a local
        # array, which nothing else can alias, so that the compiler vectorises the sums)
        cdef int f, a, k, q, tq, tp = self.types[p]
        cdef int H1 = self.hidden1, NIN = self.num_inputs
        cdef double total[SS_MAX_HIDDEN1]
        cdef double *h = self.h1 + p * H1
        cdef const double *row
        cdef const double *base
        memcpy(total, self.params + self.b1_start + tp * H1, H1 * sizeof(double))
        for f in range(NUM_FIELDS):
            q = p + self.offsets[f]
            tq = self.types[q]
            if tq < 0:
                continue
            base = self.params + self.w1_start + ((tp * NUM_TYPES + tq) * NUM_FIELDS + f) * NIN * H1
            for a in range(self.num_active[q]):
                row = base + self.active[q][a] * H1
                for k in range(H1):
                    total[k] += row[k]
        for k in range(H1):
            h[k] = sigmoid(total[k])

    cdef void level2_cell(self, int p) noexcept nogil:
        # the second-level units of cell p from the first hidden units of its window (summed in
        # a local array, as hidden_cell())
        cdef int f, k, u, q, tq, tp = self.types[p]
        cdef int H1 = self.hidden1, L2 = self.num_level2
        cdef double total[SS_MAX_LEVEL2]
        cdef double *out = self.level2 + p * L2
        cdef const double *row
        cdef const double *hq
        cdef const double *base
        cdef double x
        memcpy(total, self.params + self.b2_start + tp * L2, L2 * sizeof(double))
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
                    total[u] += x * row[u]
        for u in range(L2):
            out[u] = sigmoid(total[u])

    cdef void forward_local(self) noexcept nogil:
        cdef int i
        for i in range(self.num_cells):
            self.hidden_cell(self.cells[i])
        for i in range(self.num_cells):
            self.level2_cell(self.cells[i])

    cdef void set_steps(self, int c, int p) noexcept nogil:
        # the steps a path of colour c may take from p: window neighbours on the board whose
        # local connection is at or above the cut-off, at cost -log value, cheapest first (ties
        # in field order); and the cost of p's self-connection unit
        cdef int f, k, n = 0, L2 = self.num_level2
        cdef int unit = self.hidden2 + 2 + NUM_FIELDS * c
        cdef int *step_to = self.step_to[c][p]
        cdef double *step_cost = self.step_cost[c][p]
        cdef double local, cost
        local = self.level2[p * L2 + unit]
        self.field_cost[c][p][0] = -log(local) if local >= self.cutoff else UNREACHED
        for f in range(1, NUM_FIELDS):
            local = self.level2[p * L2 + unit + f]
            if self.types[p + self.offsets[f]] < 0 or local < self.cutoff:
                self.field_cost[c][p][f] = UNREACHED
                continue
            cost = -log(local)
            self.field_cost[c][p][f] = cost
            k = n
            while k > 0 and step_cost[k - 1] > cost:
                step_cost[k] = step_cost[k - 1]
                step_to[k] = step_to[k - 1]
                k -= 1
            step_cost[k] = cost
            step_to[k] = p + self.offsets[f]
            n += 1
        self.num_steps[c][p] = n

    cdef void queue_point(self, int x) noexcept nogil:
        # queue x at its current distance (the bucket of its quantised cost)
        cdef int bucket = <int> (self.dist[x] * PATH_QUANTUM)
        cdef int n = self.num_entries
        if n == self.entry_capacity:
            self.grow_entries()
        self.entry_loc[n] = x
        self.entry_cost[n] = self.dist[x]
        insert_in_order(self.bucket_head, self.entry_next, self.entry_cost, self.occupied, bucket, n)
        self.num_entries = n + 1
        self.live_entries += 1

    cdef void run_queue(self, int c) noexcept nogil:
        # Colour c's Dijkstra from the queued points over the steps, with a bucket queue on costs
        # quantised to 1/PATH_QUANTUM whose buckets are kept in cost order (insert_in_order()):
        # the points come out cheapest first, so each is expanded once, at its exact best path
        # (no point can improve after it: steps cost >= 0, and so do their floating-point sums);
        # pruned at the cut-off. Points reached for the first time are appended to visited[];
        # the queue is left empty.
        cdef int k, x, y, b = 0, word, entry, stop, n = self.num_entries
        cdef int live = self.live_entries, capacity = self.entry_capacity
        cdef double limit = self.cost_limit, d, nd
        cdef double *dist = self.dist
        cdef int *parent = self.parent
        cdef signed char *listed = self.listed
        cdef int *bucket_head = self.bucket_head
        cdef unsigned long long *occupied = self.occupied
        cdef unsigned long long bits
        cdef int *entry_loc = self.entry_loc
        cdef int *entry_next = self.entry_next
        cdef double *entry_cost = self.entry_cost
        cdef const int *step_to = &self.step_to[c][0][0]
        cdef const double *step_cost = &self.step_cost[c][0][0]
        cdef const int *num_steps = self.num_steps[c]
        while live > 0:
            entry = bucket_head[b]
            if entry < 0:                 # b is spent: on to the first occupied bucket after it
                word = b >> 6
                occupied[word] &= ~(1ULL << (b & 63))
                bits = occupied[word] & (~0ULL << (b & 63))
                while bits == 0:
                    word += 1
                    bits = occupied[word]
                b = (word << 6) + count_trailing_zeros(bits)
                continue
            bucket_head[b] = entry_next[entry]
            live -= 1
            x = entry_loc[entry]
            d = entry_cost[entry]
            if d > dist[x]:               # stale: x was reached more cheaply since
                continue
            stop = x * 8 + num_steps[x]
            for k in range(x * 8, stop):
                nd = d + step_cost[k]
                if nd > limit:            # and so are the dearer steps after it
                    break
                y = step_to[k]
                if nd >= dist[y]:
                    continue
                if listed[y] == NOT_LISTED:
                    listed[y] = CLEAN
                    self.visited[self.num_visited] = y
                    self.num_visited += 1
                dist[y] = nd
                parent[y] = x
                if n == capacity:
                    self.num_entries = n
                    self.grow_entries()
                    capacity = self.entry_capacity
                    entry_loc = self.entry_loc
                    entry_next = self.entry_next
                    entry_cost = self.entry_cost
                entry_loc[n] = y
                entry_cost[n] = nd
                insert_in_order(bucket_head, entry_next, entry_cost, occupied,
                                <int> (nd * PATH_QUANTUM), n)
                n += 1
                live += 1
        occupied[b >> 6] &= ~(1ULL << (b & 63))
        self.num_entries = n
        self.live_entries = 0

    cdef void search(self, int c, int i, bint record) noexcept nogil:
        # Colour c's connection values from cell i into its reach slot, from scratch.
        # record: the base position's search (write_reach()).
        cdef int p = self.cells[i]
        self.searches_made += 1
        self.dist[p] = 0.0
        self.parent[p] = -1
        self.listed[p] = CLEAN
        self.visited[0] = p
        self.num_visited = 1
        self.num_entries = 0
        self.live_entries = 0
        self.queue_point(p)
        self.run_queue(c)
        self.write_reach(c, i, record)

    cdef void repair(self, int c, int i) noexcept nogil:
        # Colour c's search from cell i for a successor, from the base position's (the source's
        # own steps unchanged): a point whose base path never leaves a point with changed steps
        # (CLEAN) keeps its base cost, which the successor can only lower; the others (AFFECTED)
        # start from their best step out of a clean point; then the Dijkstra runs from them and
        # from the clean points whose steps changed. It ends where a search from scratch would:
        # every point's cost is the exact best path (the same sums, so the same doubles).
        cdef int k, e, f, x, y, q, num_affected = 0, num_loaded
        cdef int p = self.cells[i], slot = c * self.num_cells + i
        cdef int *affected = self.path_scratch
        cdef int first = slot * self.num_cells, stop = first + self.base_reach_count[slot]
        cdef double limit = self.cost_limit, best, nd
        cdef double *dist = self.dist
        cdef signed char *listed = self.listed
        cdef const bint *steps_changed = self.steps_changed[c]
        self.searches_made += 1
        dist[p] = 0.0
        listed[p] = CLEAN
        self.visited[0] = p
        self.num_visited = 1
        self.num_entries = 0
        self.live_entries = 0
        # the base's points, parents first (write_reach()), classified as they come
        for e in range(first, stop):
            x = self.base_reach_loc[e]
            if x == p:                    # the self entry, not a path
                continue
            y = self.base_reach_parent[e]
            dist[x] = self.base_reach_cost[e]
            self.base_entry[x] = e
            self.visited[self.num_visited] = x
            self.num_visited += 1
            if listed[y] == CLEAN and not steps_changed[y]:
                listed[x] = CLEAN
                if steps_changed[x]:
                    self.queue_point(x)
            else:
                listed[x] = AFFECTED
                affected[num_affected] = x
                num_affected += 1
        for k in range(num_affected):
            q = affected[k]
            best = UNREACHED
            for f in range(1, NUM_FIELDS):
                x = q - self.offsets[f]
                if listed[x] == CLEAN:
                    nd = dist[x] + self.field_cost[c][x][f]
                    if nd < best:
                        best = nd
            dist[q] = best
            if best <= limit:
                self.queue_point(q)
        num_loaded = self.num_visited
        self.run_queue(c)
        self.write_repaired(c, i, num_loaded)

    cdef void write_repaired(self, int c, int i, int num_loaded) noexcept nogil:
        # A repair's reach slot, edited in place: restore_base() has left the base's entries
        # there, so only the points whose cost changed, those lost (now beyond the cut-off) and
        # those found (visited[num_loaded..]) are written, and the self entry if it changed;
        # the scratch cleared for the next search. The evaluation input of the slot changes by
        # the terms of the entries whose interval changed, and (units_delta()) of the points
        # whose type or units changed: slot_delta[].
        cdef int k, x, e, p = self.cells[i], slot = c * self.num_cells + i
        cdef int first = slot * self.num_cells, stop = first + self.reach_count[slot]
        cdef int lost = 0
        cdef double limit = self.cost_limit, cost = self.field_cost[c][p][0], delta = 0.0
        cdef const double *weights = self.selection_weights(c, self.base_types[p])
        self.edit_stamp += 1
        if self.edit_stamp == 0:
            memset(self.entry_stamp, 0, sizeof(self.entry_stamp))
            self.edit_stamp = 1
        if stop > first and self.reach_loc[first] == p:       # the base's self entry
            if cost == UNREACHED:
                self.remove_entry(first, weights, &delta)
                lost += 1
            elif cost != self.reach_cost[first]:
                self.change_entry(first, cost, weights, &delta)
        elif cost != UNREACHED:
            self.add_entry(stop, p, cost, weights, &delta)
            stop += 1
        for k in range(1, self.num_visited):
            x = self.visited[k]
            cost = self.dist[x]
            self.dist[x] = UNREACHED
            self.listed[x] = NOT_LISTED
            if k < num_loaded:
                e = self.base_entry[x]
                if cost > limit:
                    self.remove_entry(e, weights, &delta)
                    lost += 1
                elif cost != self.reach_cost[e]:
                    self.change_entry(e, cost, weights, &delta)
            elif cost <= limit:
                self.add_entry(stop, x, cost, weights, &delta)
                stop += 1
        self.dist[p] = UNREACHED
        self.listed[p] = NOT_LISTED
        if lost:                          # close the gaps
            e = first
            for k in range(first, stop):
                if self.reach_loc[k] >= 0:
                    self.reach_loc[e] = self.reach_loc[k]
                    self.reach_cost[e] = self.reach_cost[k]
                    self.reach_interval[e] = self.reach_interval[k]
                    e += 1
            stop = e
        self.reach_count[slot] = stop - first
        self.slot_delta[slot] = delta + self.units_delta(slot, weights, self.edit_stamp)

    cdef void change_entry(self, int e, double cost, const double *weights,
                           double *delta) noexcept nogil:
        # entry e's point at a new cost: if its interval changes, so does its term
        cdef int x = self.reach_loc[e], old_interval = self.reach_interval[e]
        self.set_entry(e, x, cost)
        if self.reach_interval[e] != old_interval:
            delta[0] += self.selected_term(weights, x, self.reach_interval[e], False) \
                - self.selected_term(weights, x, old_interval, True)
            self.entry_stamp[x] = self.edit_stamp

    cdef void remove_entry(self, int e, const double *weights, double *delta) noexcept nogil:
        # entry e's point lost: its base term goes (the gap is closed afterwards)
        cdef int x = self.reach_loc[e]
        delta[0] -= self.selected_term(weights, x, self.reach_interval[e], True)
        self.entry_stamp[x] = self.edit_stamp
        self.reach_loc[e] = -1

    cdef void add_entry(self, int e, int x, double cost, const double *weights,
                        double *delta) noexcept nogil:
        self.set_entry(e, x, cost)
        delta[0] += self.selected_term(weights, x, self.reach_interval[e], False)
        self.entry_stamp[x] = self.edit_stamp

    cdef double units_delta(self, int slot, const double *weights,
                            unsigned int stamp) noexcept nogil:
        # the change of a slot's evaluation input from the points whose type or selected units
        # changed, at their base interval in the slot, but those whose entry was edited (their
        # entry_stamp is stamp; 0 for none)
        cdef int k, q, interval
        cdef double delta = 0.0
        cdef const signed char *base_interval = self.base_interval_at + slot * self.num_locs
        for k in range(self.num_changed_units):
            q = self.changed_units[k]
            interval = base_interval[q]
            if interval < 0 or (stamp != 0 and self.entry_stamp[q] == stamp):
                continue
            delta += self.selected_term(weights, q, interval, False) \
                - self.selected_term(weights, q, interval, True)
        return delta

    cdef inline void set_entry(self, int e, int x, double cost) noexcept nogil:
        self.reach_loc[e] = x
        self.reach_cost[e] = cost
        self.reach_interval[e] = interval_of(self.interval_table, self.interval_cost,
                                             self.num_intervals, cost)

    cdef void write_reach(self, int c, int i, bint record) noexcept nogil:
        # The finished search's reach slot: the source's self-connection unit, then every
        # visited point within the cut-off; the scratch cleared for the next search. record:
        # also the base paths' parents, and i in the visitor sets of the points reached.
        cdef int k, x, e, p = self.cells[i], slot = c * self.num_cells + i
        cdef double cost = self.field_cost[c][p][0]
        cdef unsigned long long bit = 1ULL << (i & 63)
        cdef int word = i >> 6, words = self.visitor_words
        e = slot * self.num_cells
        if record:
            self.order_parents_first()
        if cost != UNREACHED:             # p to itself: its self-connection unit
            self.set_entry(e, p, cost)
            e += 1
        for k in range(self.num_visited):
            x = self.visited[k]
            cost = self.dist[x]
            self.dist[x] = UNREACHED
            self.listed[x] = NOT_LISTED
            if record:
                self.visitors[(c * MAX_LOCS + x) * words + word] |= bit
            if k == 0:                    # the source (its self entry is above)
                continue
            if record:
                self.base_reach_parent[e] = self.parent[x]
            self.set_entry(e, x, cost)
            e += 1
        self.reach_count[slot] = e - slot * self.num_cells

    cdef void order_parents_first(self) noexcept nogil:
        # visited[] in breadth-first order of the search's tree (parent[]), so that every point
        # comes after its parent: a repair then classifies the base's points in one pass
        cdef int k, x, y, head = 0, tail = 1, n = self.num_visited
        cdef int *first_child = self.first_child
        cdef int *next_sibling = self.next_sibling
        cdef int *order = self.path_scratch
        for k in range(n):
            first_child[self.visited[k]] = -1
        for k in range(1, n):
            x = self.visited[k]
            next_sibling[x] = first_child[self.parent[x]]
            first_child[self.parent[x]] = x
        order[0] = self.visited[0]
        while head < tail:
            y = first_child[order[head]]
            head += 1
            while y >= 0:
                order[tail] = y
                tail += 1
                y = next_sibling[y]
        memcpy(self.visited, order, n * sizeof(int))

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

    cdef const double *selection_weights(self, int c, int tp) noexcept nogil:
        # wv[c][tp]: the weights a point of type tp selects for colour c's connections
        return self.params + self.wv_start + (c * NUM_TYPES + tp) * NUM_TYPES * self.num_intervals \
            * self.num_selected

    cdef double slot_total(self, int slot) noexcept nogil:
        # the evaluation unit's input from one reach slot: every reached point's selected units
        # by the weights of its type and interval
        cdef int e, u, c = slot // self.num_cells, N = self.num_cells
        cdef int L2 = self.num_level2, S = self.num_selected, NI = self.num_intervals
        cdef int first = slot * N, stop = first + self.reach_count[slot]
        cdef const int *types = self.types
        cdef const int *reach_loc = self.reach_loc
        cdef const int *reach_interval = self.reach_interval
        cdef const double *weights = self.selection_weights(c, types[self.cells[slot - c * N]])
        cdef const double *w
        cdef const double *a
        cdef double z = 0.0
        for e in range(first, stop):
            w = weights + (types[reach_loc[e]] * NI + reach_interval[e]) * S
            a = self.level2 + reach_loc[e] * L2
            for u in range(S):
                z += w[u] * a[u]
        return z

    cdef double selected_term(self, const double *weights, int q, int k, bint base) noexcept nogil:
        # one reached point q's share in interval k (base: with the base position's type and
        # units)
        cdef int u, S = self.num_selected
        cdef int tq = self.base_types[q] if base else self.types[q]
        cdef const double *a = (self.base_level2 if base else self.level2) + q * self.num_level2
        cdef const double *w = weights + (tq * self.num_intervals + k) * S
        cdef double z = 0.0
        for u in range(S):
            z += w[u] * a[u]
        return z

    cdef void forward_evaluation(self) noexcept nogil:
        cdef int i, N = self.num_cells
        for i in range(2 * N):
            self.slot_sum[i] = self.slot_total(i)
        for i in range(N):
            self.set_evaluation(i)

    cdef void set_evaluation(self, int i) noexcept nogil:
        cdef int p = self.cells[i]
        self.evaluation[p] = sigmoid(self.params[self.bv_start + self.types[p]]
                                     + self.slot_sum[i] + self.slot_sum[self.num_cells + i])

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
        # share: its inputs, layers and connectivity, per point the searches that expanded it,
        # per reach slot its evaluation input and the interval of each point in it
        cdef int i, c, p, slot, e
        cdef double total = 0.0
        self.forward_local()
        memset(self.visitors, 0, 2 * MAX_LOCS * self.visitor_words * sizeof(unsigned long long))
        for c in range(2):
            for i in range(self.num_cells):
                self.set_steps(c, self.cells[i])
            if not self.freeze_connectivity:
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
        memcpy(self.base_slot_sum, self.slot_sum, 2 * self.num_cells * sizeof(double))
        memset(self.base_interval_at, -1, 2 * self.num_cells * self.num_locs)
        for slot in range(2 * self.num_cells):
            for e in range(slot * self.num_cells, slot * self.num_cells + self.reach_count[slot]):
                self.base_interval_at[slot * self.num_locs + self.reach_loc[e]] = \
                    <signed char> self.reach_interval[e]
        memcpy(self.base_step_to, self.step_to, sizeof(self.step_to))
        memcpy(self.base_step_cost, self.step_cost, sizeof(self.step_cost))
        memcpy(self.base_num_steps, self.num_steps, sizeof(self.num_steps))
        memcpy(self.base_field_cost, self.field_cost, sizeof(self.field_cost))
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
                self.num_steps[c][p] = self.base_num_steps[c][p]
                memcpy(self.step_to[c][p], self.base_step_to[c][p], 8 * sizeof(int))
                memcpy(self.step_cost[c][p], self.base_step_cost[c][p], 8 * sizeof(double))
                memcpy(self.field_cost[c][p], self.base_field_cost[c][p],
                       NUM_FIELDS * sizeof(double))
                self.steps_changed[c][p] = False
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
        # of theirs; a search that expanded a point whose steps changed is repaired (otherwise
        # it would find exactly what it found), or redone if its source's steps changed, and
        # the evaluation layer's inputs are updated (step 4).
        # The state is the successor's until the next forward_successor() or restore_base().
        cdef int k, i, f, p, q, c, w, slot, unit
        cdef int L2 = self.num_level2, H1 = self.hidden1, words = self.visitor_words
        cdef int first_unit = self.hidden2 + 2
        cdef bint differs
        cdef double total = 0.0
        cdef unsigned long long bits
        self.restore_base()
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
        # the second level within the windows of those; a changed input's type also changes
        # the weights of its own window's second level, and its point is among the dirty
        # first hidden units (field 0 is the point itself), so that window is covered
        for k in range(self.num_dirty_h1):
            p = self.dirty_h1[k]
            for f in range(NUM_FIELDS):
                q = p + self.offsets[f]
                if self.types[q] >= 0 and self.level2_mark[q] != self.mark_epoch:
                    self.level2_mark[q] = self.mark_epoch
                    self.dirty_level2[self.num_dirty_level2] = q
                    self.num_dirty_level2 += 1
        for k in range(self.num_dirty_level2):
            self.level2_cell(self.dirty_level2[k])
        self.num_changed_units = 0
        for k in range(self.num_dirty_level2):
            p = self.dirty_level2[k]
            if self.types[p] != self.base_types[p] or \
                    memcmp(self.level2 + p * L2, self.base_level2 + p * L2,
                           self.num_selected * sizeof(double)) != 0:
                self.changed_units[self.num_changed_units] = p
                self.num_changed_units += 1
        # 3. the searches that expanded a point whose steps changed, and those whose source's
        # self value changed: repaired from the base's (repair()), or redone when the source's
        # own steps changed (none with the connectivity frozen)
        for w in range(2 * words):
            self.dirty_bits[w] = 0
        for k in range(self.num_dirty_level2):
            p = self.dirty_level2[k]
            for c in range(2):
                unit = p * L2 + first_unit + NUM_FIELDS * c
                for f in range(1, NUM_FIELDS):
                    if self.level2[unit + f] != self.base_level2[unit + f]:
                        self.steps_changed[c][p] = True
                        break
                if self.steps_changed[c][p]:
                    self.set_steps(c, p)
                    for w in range(words):
                        self.dirty_bits[c * words + w] |= self.visitors[(c * MAX_LOCS + p) * words + w]
                elif self.level2[unit] != self.base_level2[unit]:
                    self.set_steps(c, p)      # the self value only: p's own search
                    i = self.cell_index[p]
                    self.dirty_bits[c * words + (i >> 6)] |= 1ULL << (i & 63)
        if self.freeze_connectivity:
            memset(self.dirty_bits, 0, sizeof(self.dirty_bits))
        for c in range(2):
            for w in range(words):
                bits = self.dirty_bits[c * words + w]
                while bits:
                    i = w * 64 + count_trailing_zeros(bits)
                    bits &= bits - 1
                    slot = c * self.num_cells + i
                    self.dirty_sources[self.num_dirty_sources] = slot
                    self.num_dirty_sources += 1
                    if self.steps_changed[c][self.cells[i]]:
                        self.search(c, i, False)
                        self.slot_state[slot] = REDONE
                    else:
                        self.repair(c, i)
                        self.slot_state[slot] = REPAIRED
        # 4. the evaluation layer: a slot's input from the base's, changed by what the repair
        # edited and the points whose units changed; whole where the search was redone or the
        # source's type (its weights) changed
        for slot in range(2 * self.num_cells):
            p = self.cells[slot % self.num_cells]
            if self.slot_state[slot] == REDONE or self.types[p] != self.base_types[p]:
                self.slot_sum[slot] = self.slot_total(slot)
            elif self.slot_state[slot] == REPAIRED:
                self.slot_sum[slot] = self.base_slot_sum[slot] + self.slot_delta[slot]
            else:
                self.slot_sum[slot] = self.base_slot_sum[slot] + self.units_delta(
                    slot, self.selection_weights(slot // self.num_cells, self.types[p]), 0)
            self.slot_state[slot] = UNTOUCHED
        for i in range(self.num_cells):
            self.set_evaluation(i)
            total += self.evaluation[self.cells[i]]
        return total

    # ----------------------------------------------------------------- backward

    cdef double backward(self, const double *targets, const unsigned char *mask, double *dest,
                         double scale) noexcept nogil:
        cdef int i, c, e, u, f, k, a, p, q, tp, tq, stop, column, first
        cdef int H1 = self.hidden1, L2 = self.num_level2, S = self.num_selected
        cdef int NI = self.num_intervals, NIN = self.num_inputs, H2 = self.hidden2
        cdef double loss = 0.0, y, t, de, g, s, x
        cdef double delta[SS_MAX_LEVEL2]
        cdef int N = self.num_cells
        cdef const int *types = self.types
        cdef const int *reach_loc = self.reach_loc
        cdef const int *reach_interval = self.reach_interval
        cdef const double *weights
        cdef double *weight_dest
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
                weights = self.params + self.wv_start + (c * NUM_TYPES + tp) * NUM_TYPES * NI * S
                first = (c * N + i) * N
                stop = first + self.reach_count[c * N + i]
                for e in range(first, stop):
                    q = reach_loc[e]
                    w = weights + (types[q] * NI + reach_interval[e]) * S
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
                weight_dest = dest + self.wv_start + (c * NUM_TYPES + tp) * NUM_TYPES * NI * S
                first = (c * N + i) * N
                stop = first + self.reach_count[c * N + i]
                for e in range(first, stop):
                    q = reach_loc[e]
                    wd = weight_dest + (types[q] * NI + reach_interval[e]) * S
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
            # the deltas in a local array, which dest cannot alias: the compiler vectorises
            memcpy(delta, self.d_level2 + p * L2, L2 * sizeof(double))
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
                        wd[u] += x * delta[u]
            wd = dest + self.b2_start + tp * L2
            for u in range(L2):
                wd[u] += scale * delta[u]
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
        self._prepare_for_locs(encoded.shape[0])
        cdef int[:, ::1] view = np.ascontiguousarray(encoded, dtype=np.int32)
        return self.load_cells(&view[0, 0])

    cdef int _prepare_for_locs(self, int num_locs) except -1:
        cdef int size = <int> round(num_locs ** 0.5) - 2
        if (size + 2) * (size + 2) != num_locs:
            raise ValueError(f"{num_locs} locations is not a padded square board")
        return self.prepare(size)

    cdef int load_cells(self, const int *encoded) except -1:
        # types[] and active[] from one encoded position (num_locs rows of 1 + max_active)
        cdef int i, p, a, n, t, x, width = 1 + self.max_active
        cdef const int *row
        for i in range(self.num_cells):
            p = self.cells[i]
            row = encoded + p * width
            t = row[0]
            if not 0 <= t < NUM_TYPES:
                raise ValueError(f"encoded position: point {p} has type {t}")
            self.types[p] = t
            n = 0
            for a in range(self.max_active):
                x = row[1 + a]
                if x < 0:
                    break
                if x >= self.num_inputs:
                    raise ValueError(f"encoded position: point {p} has input {x}")
                self.active[p][n] = x
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

    cdef void outputs_into(self, double *outputs, bint swap) noexcept nogil:
        # the last forward pass's outputs of the on-board rows of outputs (num_locs x 21; the
        # others untouched), as _outputs(), or swap_frame() of them
        cdef int i, p, u
        cdef double *row
        cdef double *units
        for i in range(self.num_cells):
            p = self.cells[i]
            row = outputs + p * NUM_SOFTSEG_OUTPUTS
            units = self.level2 + p * self.num_level2 + self.hidden2
            if swap:
                for u in range(OUT_EVAL):
                    row[u] = units[SWAP_COLUMN[u]]
                row[OUT_EVAL] = 1.0 - self.evaluation[p]
            else:
                memcpy(row, units, OUT_EVAL * sizeof(double))
                row[OUT_EVAL] = self.evaluation[p]

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
        computed from the position's (forward_successor(): the values of full evaluations, to
        rounding); its features come incrementally from the position's
        (engine/nets/features.pyx). board is restored exactly."""
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

    def train_game(self, inputs, black_to_move, trained, observed, final_targets, final_mask,
                   double rate):
        """NeuroGo's TD(0) replay of one game (engine/training/trainer.py: Trainer's
        _train_recent_games()): backward from its end, each trained position takes one step of
        size rate (train_position()) towards the following position's prediction, in the
        real-Black frame the output of the forward pass the following step was computed from,
        overridden by the signal observed there (observed: int8 (T, num_locs, 21), -1 where
        none; or None), the final signal (final_targets, final_mask) at the end; an untrained
        position is only evaluated. Returns (summed loss, the number of trained output entries)."""
        inputs = np.ascontiguousarray(inputs, dtype=np.int32)
        if inputs.ndim != 3 or inputs.shape[2] != 1 + self.max_active:
            raise ValueError(f"inputs must have shape (T, num_locs, {1 + self.max_active}), not "
                             f"{inputs.shape}")
        cdef int T = inputs.shape[0], num_locs = inputs.shape[1]
        self._prepare_for_locs(num_locs)
        following, final_mask = self._check_targets(final_targets, final_mask)
        following = following.copy()          # the real-Black frame's next prediction
        cdef unsigned char[::1] black = np.ascontiguousarray(black_to_move, dtype=np.uint8)
        cdef unsigned char[::1] train = np.ascontiguousarray(trained, dtype=np.uint8)
        if black.shape[0] != T or train.shape[0] != T:
            raise ValueError(f"black_to_move and trained must have {T} entries")
        cdef signed char[:, :, ::1] events = None
        cdef bint has_events = observed is not None
        if has_events:
            events = np.ascontiguousarray(observed, dtype=np.int8)
            if events.shape[0] != T or events.shape[1] != num_locs or \
                    events.shape[2] != NUM_SOFTSEG_OUTPUTS:
                raise ValueError(f"observed must have shape ({T}, {num_locs}, 21)")
        swapped_mask = np.ascontiguousarray(swap_frame_mask(final_mask))
        targets = np.empty_like(following)
        cdef int[:, :, ::1] positions = inputs
        cdef double[:, ::1] next_view = following
        cdef double[:, ::1] target_view = targets
        cdef unsigned char[:, ::1] mask_view = final_mask
        cdef unsigned char[:, ::1] swapped_view = swapped_mask
        cdef int t, p, k, size = num_locs * NUM_SOFTSEG_OUTPUTS
        cdef double loss = 0.0
        cdef long long entries = 0, entries_per_position = int(final_mask.sum())
        cdef double *next_prediction = &next_view[0, 0]
        cdef const signed char *event
        for t in range(T - 1, -1, -1):
            self.load_cells(&positions[t, 0, 0])
            with nogil:
                if train[t]:
                    if black[t]:
                        memcpy(&target_view[0, 0], next_prediction, size * sizeof(double))
                    else:
                        swap_outputs(next_prediction, &target_view[0, 0], num_locs)
                self.forward_all()
                self.outputs_into(next_prediction, not black[t])
                if train[t]:
                    loss += self.backward(&target_view[0, 0],
                                          &mask_view[0, 0] if black[t] else &swapped_view[0, 0],
                                          self.params, -rate)
                    entries += entries_per_position
                if has_events:
                    event = &events[t, 0, 0]
                    for k in range(size):
                        if event[k] >= 0:
                            next_prediction[k] = event[k]
            if train[t]:
                self.params_version += 1
        return loss, entries

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

cdef int eyes_and_labels(Board board, int colour, unsigned char *eye, int *label,
                         int *scratch) noexcept nogil:
    # Section 2.1's single-point eyes of colour (eye[loc]: an empty point whose neighbours are
    # all stones of one block, or of two blocks that share another such point) and colour's
    # connection components (label[loc]: the 4-connected sets of its stones and eyes, numbered in
    # loc order; -1 outside). Returns the number of components. scratch: 4 * MAX_LOCS ints.
    cdef int num_locs = board.num_locs, p, q, i, j, n, count = 0, top, num_pairs = 0
    cdef int heads[4]
    cdef int *pair_low = scratch              # the two blocks around a two-block candidate
    cdef int *pair_high = scratch + MAX_LOCS
    cdef int *pair_point = scratch + 2 * MAX_LOCS
    cdef int *stack = scratch + 3 * MAX_LOCS
    cdef bint candidate
    for p in range(num_locs):
        eye[p] = False
        label[p] = -1
    for p in range(num_locs):
        if board.colour[p] != C_EMPTY:
            continue
        n = 0
        candidate = True
        for i in range(4):
            q = p + board.neighbour_offset[i]
            if board.colour[q] == C_WALL:
                continue
            if board.colour[q] != colour:
                candidate = False
                break
            for j in range(n):
                if heads[j] == board.chain_head[q]:
                    break
            else:
                heads[n] = board.chain_head[q]
                n += 1
        if not candidate:
            continue
        if n == 1:
            eye[p] = True
        elif n == 2:
            pair_low[num_pairs] = min(heads[0], heads[1])
            pair_high[num_pairs] = max(heads[0], heads[1])
            pair_point[num_pairs] = p
            num_pairs += 1
    for i in range(num_pairs):                # two blocks sharing another two-block point
        for j in range(num_pairs):
            if j != i and pair_low[j] == pair_low[i] and pair_high[j] == pair_high[i]:
                eye[pair_point[i]] = True
                break
    for p in range(num_locs):
        if label[p] >= 0 or not (board.colour[p] == colour or eye[p]):
            continue
        label[p] = count
        stack[0] = p
        top = 1
        while top > 0:
            top -= 1
            q = stack[top]
            for i in range(4):
                j = q + board.neighbour_offset[i]
                if label[j] < 0 and (board.colour[j] == colour or eye[j]):
                    label[j] = count
                    stack[top] = j
                    top += 1
        count += 1
    return count


cdef void area_owners(Board board, int to_move, double *owner, int *scratch) noexcept nogil:
    # owner[loc] per on-board point: 1 if to_move's area (its stone, or an empty region bordered
    # by its stones alone), 0 if the other's, 0.5 if neutral (Tromp-Taylor). scratch: 2 * MAX_LOCS
    cdef int num_locs = board.num_locs, p, q, x, i, top, size, borders, colour
    cdef int *region = scratch
    cdef int *seen = scratch + MAX_LOCS
    cdef double value
    for p in range(num_locs):
        seen[p] = False
    for p in range(num_locs):
        colour = board.colour[p]
        if colour == C_WALL or seen[p]:
            continue
        if colour != C_EMPTY:
            owner[p] = 1.0 if colour == to_move else 0.0
            continue
        seen[p] = True
        region[0] = p
        size = 1
        top = 0
        borders = 0                           # bit colour: a stone of colour borders the region
        while top < size:
            x = region[top]
            top += 1
            for i in range(4):
                q = x + board.neighbour_offset[i]
                colour = board.colour[q]
                if colour == C_EMPTY and not seen[q]:
                    seen[q] = True
                    region[size] = q
                    size += 1
                elif colour == C_BLACK or colour == C_WHITE:
                    borders |= 1 << colour
        if borders == 1 << to_move:
            value = 1.0
        elif borders == 1 << (3 - to_move):
            value = 0.0
        else:
            value = 0.5
        for i in range(size):
            owner[region[i]] = value


def eyes_and_components(Board board, int colour):
    """(eye, component): per loc, whether it is a single-point eye of colour as section 2.1
    defines it (an empty point whose neighbours are all stones of one block, or of two blocks
    that share another such point), and the label of colour's connection component (the
    4-connected sets of colour's stones and eyes, numbered in loc order; -1 outside)."""
    _check_colour(colour)
    cdef unsigned char eye_at[MAX_LOCS]
    cdef int label_at[MAX_LOCS]
    cdef int scratch[4 * MAX_LOCS]
    cdef int p, num_locs = board.num_locs
    eyes_and_labels(board, colour, eye_at, label_at, scratch)
    eye = np.zeros(num_locs, dtype=bool)
    label = np.empty(num_locs, dtype=np.int64)
    cdef unsigned char[::1] eye_view = eye.view(np.uint8)
    cdef long long[::1] label_view = label
    for p in range(num_locs):
        eye_view[p] = eye_at[p]
        label_view[p] = label_at[p]
    return eye, label


cdef void fill_rich_signal(Board board, int to_move, bint final, double *targets,
                           unsigned char *mask, int *scratch) noexcept nogil:
    # rich_signal() into zeroed targets and mask (num_locs x NUM_SOFTSEG_OUTPUTS); scratch:
    # 4 * MAX_LOCS ints
    cdef int num_locs = board.num_locs, p, q, c, f, k, colour, column, count
    cdef unsigned char eye[MAX_LOCS]
    cdef int label[MAX_LOCS]
    cdef int eyes_in[MAX_LOCS]                # per component, its eyes
    cdef unsigned char alive[2][MAX_LOCS]
    cdef int offsets[NUM_FIELDS]
    cdef double owner[MAX_LOCS]
    cdef double *row
    cdef unsigned char *row_mask
    for f in range(NUM_FIELDS):
        offsets[f] = FIELD_DX[f] - FIELD_DY[f] * board.stride
    for c in range(2):
        colour = to_move if c == 0 else 3 - to_move
        count = eyes_and_labels(board, colour, eye, label, scratch)
        for k in range(count):
            eyes_in[k] = 0
        for p in range(num_locs):
            alive[c][p] = False
            if eye[p]:
                eyes_in[label[p]] += 1
        for p in range(num_locs):
            if board.colour[p] == C_WALL:
                continue
            row = targets + p * NUM_SOFTSEG_OUTPUTS
            row_mask = mask + p * NUM_SOFTSEG_OUTPUTS
            if eye[p]:
                row[OUT_EYE + c] = 1.0
                row_mask[OUT_EYE + c] = True
            elif final:
                row_mask[OUT_EYE + c] = True
            for f in range(NUM_FIELDS):
                q = p + offsets[f]
                if board.colour[q] == C_WALL:
                    continue
                column = OUT_LOCAL + NUM_FIELDS * c + f
                if label[p] >= 0 and label[q] == label[p]:
                    row[column] = 1.0
                    row_mask[column] = True
                elif final:
                    row_mask[column] = True
            if label[p] >= 0 and eyes_in[label[p]] >= 2:
                alive[c][p] = True
    if final:
        area_owners(board, to_move, owner, scratch)
    for p in range(num_locs):
        if board.colour[p] == C_WALL:
            continue
        row = targets + p * NUM_SOFTSEG_OUTPUTS
        row_mask = mask + p * NUM_SOFTSEG_OUTPUTS
        if alive[0][p]:
            row[OUT_EVAL] = 1.0
            row_mask[OUT_EVAL] = True
        elif alive[1][p]:
            row_mask[OUT_EVAL] = True
        elif final:
            row[OUT_EVAL] = owner[p]
            row_mask[OUT_EVAL] = True


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
    targets = np.zeros((board.num_locs, NUM_SOFTSEG_OUTPUTS))
    mask = np.zeros((board.num_locs, NUM_SOFTSEG_OUTPUTS), dtype=bool)
    cdef double[:, ::1] target_view = targets
    cdef unsigned char[:, ::1] mask_view = mask.view(np.uint8)
    cdef int scratch[4 * MAX_LOCS]
    fill_rich_signal(board, to_move, final, &target_view[0, 0], &mask_view[0, 0], scratch)
    return targets, mask


def all_alive(Board board):
    """Whether every point of board is alive for one colour (section 2.1: only then may a
    training game pass)."""
    targets, mask = rich_signal(board, C_BLACK, False)
    return bool(mask[board.points(), OUT_EVAL].all())


def own_eyes(Board board, int colour):
    """The single-point eyes of colour (section 2.1's definition), as a boolean array per loc."""
    return eyes_and_components(board, colour)[0]


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
