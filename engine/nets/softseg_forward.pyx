# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""NeuroGo 3's soft-segmentation network (Enzenberger 2003, section 2), kosumi's second evaluator:
its parameters, inputs and forward pass. Its training (backward) is SoftSegNetwork's, the
subclass in softseg.pyx, which is what callers use.

Reading order: SoftSegForward.forward_all() (forward_local(): receptive fields with weight sets
chosen by point type; the Pathfinder of softseg_pathfinder.pyx: the global connectivity;
forward_evaluation(): connectivity-based weight selection), then forward_successor() (1-ply),
then the Python API (encode, forward, evaluate_board, successor_values).
The C layout and the parameter order are in softseg_forward.pxd.

Choices where the paper leaves room (section numbers are the paper's):
- 2.2 inputs: Table 1's features come from a kosumi feature set (`neurogo`, `neurogo_lite`, without
  its isn14 stone classes, which belong to Blair's recurrence), or one constant input (`raw`, the
  paper's raw-board experiment). Empty points and stones have their own inputs: input j means a
  different feature on an empty point, an own stone and an opponent stone, and the point type
  (which says which of the three a point is) selects the weights.
- 2.4 field(p, p') is the offset of p' in p's 3x3 window (nine fields); off-board points of a
  window have no neurons and contribute nothing.
- 2.5 the connectivity: softseg_pathfinder.pyx.
- 1-ply: each successor is a whole forward pass in effect, computed from the position's
  (forward_successor()): only the layers within reach of the inputs the move changes are redone;
  the searches that expanded a point whose local connections changed are repaired or redone
  (the Pathfinder); the evaluation layer's input from each search changes only by the entries
  the repair edited and the points whose units changed. The sums of the evaluation layer come in
  another order than a full pass's, so the values agree with full evaluations to rounding (about
  1e-15 relative).
- 2.6 the selection weights are separate per colour: w[c][type(p)][type(p')][interval][unit].
- value: the sum of the evaluation layer is the expected number of points alive for the side to
  move, so the expected area margin is 2 * sum - points (komi apart).

A network keeps its activations in per-object buffers: use one per thread.
"""

import numpy as np

from libc.math cimport exp
from libc.stdlib cimport malloc, free
from libc.string cimport memset, memcpy, memcmp

from engine.rules.board cimport Board
from engine.nets.features cimport BoardFeatures, NO_VALUE
from engine.nets.features import FEATURE_SET_SPECS, FEATURES, slot_of
from engine.nets.softseg_layout cimport (NUM_TYPES, NUM_FIELDS, NUM_LOCAL, NUM_SOFTSEG_OUTPUTS,
                                         OUT_EVAL, board_cells, field_offset, swap_column)
from engine.nets.softseg_pathfinder cimport Pathfinder
from engine.nets.softseg_pathfinder import DEFAULT_CUTOFF
from engine.nets.softseg_targets import check_colour
from engine.rules.types cimport (EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE,
                                 MAX_LOCS, MIN_SIZE, MAX_SIZE)

DEFAULT_HIDDEN1 = 8             # the paper's sizes (section 4.1)
DEFAULT_HIDDEN2 = 2
DEFAULT_INTERVALS = 8           # section 2.6
DEFAULT_INIT_SCALE = 0.1
cdef int SWAP_COLUMN[NUM_SOFTSEG_OUTPUTS]          # swap_column() as a table, for outputs_into()
for _column in range(NUM_SOFTSEG_OUTPUTS):
    SWAP_COLUMN[_column] = swap_column(_column)
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


cdef inline double sigmoid(double x) noexcept nogil:
    return 1.0 / (1.0 + exp(-x))


cdef class SoftSegForward:
    """NeuroGo 3's network without its training (SoftSegNetwork in softseg.pyx adds it: construct
    that). Sizes are configuration; the defaults are the paper's."""

    def __cinit__(self, str feature_set="neurogo", int hidden1=DEFAULT_HIDDEN1,
                  int hidden2=DEFAULT_HIDDEN2, int intervals=DEFAULT_INTERVALS,
                  double cutoff=DEFAULT_CUTOFF):
        self.h1 = NULL
        self.level2 = NULL
        self.base_h1 = NULL
        self.base_level2 = NULL
        if feature_set not in FEATURE_SETS:
            raise ValueError(f"unknown soft-segmentation input set {feature_set!r}; known: "
                             f"{FEATURE_SETS}")
        if not 1 <= hidden1 <= SS_MAX_HIDDEN1:
            raise ValueError(f"hidden1 must be 1..{SS_MAX_HIDDEN1}, not {hidden1}")
        if not 0 <= hidden2 <= SS_MAX_LEVEL2 - 20:
            raise ValueError(f"hidden2 must be 0..{SS_MAX_LEVEL2 - 20}, not {hidden2}")
        self.paths = Pathfinder(cutoff, intervals)      # which checks them
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
        self.h1 = <double *> malloc(MAX_LOCS * hidden1 * sizeof(double))
        self.level2 = <double *> malloc(MAX_LOCS * self.num_level2 * sizeof(double))
        self.base_h1 = <double *> malloc(MAX_LOCS * hidden1 * sizeof(double))
        self.base_level2 = <double *> malloc(MAX_LOCS * self.num_level2 * sizeof(double))
        if (self.h1 == NULL or self.level2 == NULL or self.base_h1 == NULL
                or self.base_level2 == NULL):
            raise MemoryError()
        memset(self.slot_state, 0, sizeof(self.slot_state))
        memset(self.entry_stamp, 0, sizeof(self.entry_stamp))
        self.edit_stamp = 0
        memset(self.h1_mark, 0, sizeof(self.h1_mark))
        memset(self.level2_mark, 0, sizeof(self.level2_mark))
        self.mark_epoch = 0
        self.num_changed_inputs = 0
        self.num_dirty_h1 = 0
        self.num_dirty_level2 = 0
        self.size = 0
        self.prepare(9)

    def __dealloc__(self):
        free(self.h1)
        free(self.level2)
        free(self.base_h1)
        free(self.base_level2)

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
        """{name: (start, stop, shape)} of the flat parameter vector (softseg_forward.pxd)."""
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

    @property
    def searches_made(self):
        """The pathfinder's searches (one source, one colour) so far."""
        return self.paths.searches_made

    # ----------------------------------------------------------------- the board

    cdef int prepare(self, int size) except -1:
        cdef int p, i, row, col, lr, lc, low, high
        if size == self.size:
            return 0
        if not MIN_SIZE <= size <= MAX_SIZE:
            raise ValueError(f"board size must be {MIN_SIZE}..{MAX_SIZE}, not {size}")
        self.paths.prepare(size)
        self.size = size
        self.stride = size + 2
        self.num_locs = self.stride * self.stride
        for i in range(NUM_FIELDS):
            self.offsets[i] = field_offset(i, self.stride)
        self.num_cells = board_cells(size, self.cells, self.cell_index, self.num_locs)
        for p in range(self.num_locs):
            self.types[p] = -1
            self.geometry_type[p] = -1
            self.num_active[p] = 0
        for p in range(MAX_LOCS):
            self.evaluation[p] = 0.0
        memset(self.h1, 0, MAX_LOCS * self.hidden1 * sizeof(double))
        memset(self.level2, 0, MAX_LOCS * self.num_level2 * sizeof(double))
        for i in range(self.num_cells):
            p = self.cells[i]
            row, col = i // size, i % size
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

    cdef const double *selection_weights(self, int c, int tp) noexcept nogil:
        # wv[c][tp]: the weights a point of type tp selects for colour c's connections
        return self.params + self.wv_start + (c * NUM_TYPES + tp) * NUM_TYPES * self.num_intervals \
            * self.num_selected

    cdef double slot_total(self, int slot) noexcept nogil:
        # the evaluation unit's input from one reach slot: every reached point's selected units
        # by the weights of its type and interval
        cdef int e, u, c = slot // self.num_cells, N = self.num_cells
        cdef int L2 = self.num_level2, S = self.num_selected, NI = self.num_intervals
        cdef int first = slot * N, stop = first + self.paths.reach_count[slot]
        cdef const int *types = self.types
        cdef const int *reach_loc = self.paths.reach_loc
        cdef const int *reach_interval = self.paths.reach_interval
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

    cdef inline double selected_term(self, const double *weights, int q, int k,
                                     bint base) noexcept nogil:
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

    cdef double repair_delta(self, int slot) noexcept nogil:
        # the change of a repaired slot's evaluation input: the terms of the entries whose
        # interval the repair changed (the Pathfinder's edits, in order), and (units_delta()) of
        # the points whose type or units changed
        cdef int k, x, c = slot // self.num_cells
        cdef int before, after
        cdef double delta = 0.0
        cdef const double *weights = self.selection_weights(
            c, self.base_types[self.cells[slot - c * self.num_cells]])
        cdef const int *edit_loc = self.paths.edit_loc
        cdef const signed char *edit_before = self.paths.edit_before
        cdef const signed char *edit_after = self.paths.edit_after
        self.edit_stamp += 1
        if self.edit_stamp == 0:
            memset(self.entry_stamp, 0, sizeof(self.entry_stamp))
            self.edit_stamp = 1
        for k in range(self.paths.num_edits):
            x = edit_loc[k]
            before = edit_before[k]
            after = edit_after[k]
            if before < 0:                # found
                delta += self.selected_term(weights, x, after, False)
            elif after < 0:               # lost
                delta -= self.selected_term(weights, x, before, True)
            else:
                delta += self.selected_term(weights, x, after, False) \
                    - self.selected_term(weights, x, before, True)
            self.entry_stamp[x] = self.edit_stamp
        return delta + self.units_delta(slot, weights, self.edit_stamp)

    cdef double units_delta(self, int slot, const double *weights,
                            unsigned int stamp) noexcept nogil:
        # the change of a slot's evaluation input from the points whose type or selected units
        # changed, at their base interval in the slot, but those whose entry was edited (their
        # entry_stamp is stamp; 0 for none)
        cdef int k, q, interval
        cdef double delta = 0.0
        cdef const signed char *base_interval = self.paths.base_interval_at + slot * self.num_locs
        for k in range(self.num_changed_units):
            q = self.changed_units[k]
            interval = base_interval[q]
            if interval < 0 or (stamp != 0 and self.entry_stamp[q] == stamp):
                continue
            delta += self.selected_term(weights, q, interval, False) \
                - self.selected_term(weights, q, interval, True)
        return delta

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
            self.paths.set_all_steps(self.level2, self.num_level2, self.hidden2 + 2)
            self.paths.search_all(False)
        self.forward_evaluation()
        for i in range(self.num_cells):
            total += self.evaluation[self.cells[i]]
        return total

    # ----------------------------------------------------------------- successors

    cdef double forward_base(self) noexcept nogil:
        # forward_all() of the position the successors are made from, remembering what they
        # share: its inputs, layers and connectivity (the Pathfinder's base), per reach slot its
        # evaluation input
        cdef int i, p
        cdef double total = 0.0
        self.forward_local()
        self.paths.clear_visitors()
        self.paths.set_all_steps(self.level2, self.num_level2, self.hidden2 + 2)
        if not self.freeze_connectivity:
            self.paths.search_all(True)
        self.paths.save_base()
        self.forward_evaluation()
        for i in range(self.num_cells):
            p = self.cells[i]
            total += self.evaluation[p]
            self.base_types[p] = self.types[p]
            self.base_num_active[p] = self.num_active[p]
            memcpy(self.base_active[p], self.active[p], self.num_active[p] * sizeof(int))
        memcpy(self.base_h1, self.h1, self.num_locs * self.hidden1 * sizeof(double))
        memcpy(self.base_level2, self.level2, self.num_locs * self.num_level2 * sizeof(double))
        memcpy(self.base_slot_sum, self.slot_sum, 2 * self.num_cells * sizeof(double))
        self.num_dirty_h1 = 0
        self.num_dirty_level2 = 0
        return total

    cdef void restore_base(self) noexcept nogil:
        # undo what forward_successor() changed: the base position's state again
        cdef int k, p
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
        self.num_dirty_level2 = 0
        self.paths.restore_base()

    cdef double forward_successor(self, Board board, int move, int to_move) noexcept nogil:
        # board has just played move on the forward_base() position (to_move the side to move
        # after it, as there). The inputs that changed (the move, captures, the features'
        # overlay) make the first hidden units of their windows dirty, those the second level's
        # of theirs; a search that expanded a point whose steps changed is repaired (otherwise
        # it would find exactly what it found), or redone if its source's steps changed, and
        # the evaluation layer's inputs are updated (step 4).
        # The state is the successor's until the next forward_successor() or restore_base().
        cdef int k, i, f, p, q, c, slot, unit
        cdef int L2 = self.num_level2, H1 = self.hidden1
        cdef int first_unit = self.hidden2 + 2
        cdef bint differs, steps_differ
        cdef double total = 0.0
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
        # self value changed: repaired from the base's, or redone when the source's own steps
        # changed (Pathfinder.update_slot(); none with the connectivity frozen)
        self.paths.clear_dirty()
        for k in range(self.num_dirty_level2):
            p = self.dirty_level2[k]
            for c in range(2):
                unit = p * L2 + first_unit + NUM_FIELDS * c
                steps_differ = False
                for f in range(1, NUM_FIELDS):
                    if self.level2[unit + f] != self.base_level2[unit + f]:
                        steps_differ = True
                        break
                if steps_differ:
                    self.paths.mark_steps(c, p, self.level2 + unit)
                elif self.level2[unit] != self.base_level2[unit]:
                    self.paths.mark_self(c, p, self.level2 + unit)     # p's own search only
        if self.freeze_connectivity:
            self.paths.clear_dirty()
        slot = self.paths.next_dirty_slot()
        while slot >= 0:
            if self.paths.update_slot(slot):
                self.slot_delta[slot] = self.repair_delta(slot)
                self.slot_state[slot] = REPAIRED
            else:
                self.slot_state[slot] = REDONE
            slot = self.paths.next_dirty_slot()
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
        check_colour(to_move)
        self.encode_base(board, to_move, False)
        return self._encoded()

    def forward(self, encoded):
        """Outputs (num_locs, 21) of an encoded position (softseg_layout.pxd's columns)."""
        self._load_encoded(encoded)
        with nogil:
            self.forward_all()
        return self._outputs()

    def evaluate_board(self, Board board, int to_move):
        """(outputs, encoded inputs, total): total is the sum of the evaluation layer, the expected
        number of points alive for to_move."""
        check_colour(to_move)
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
        check_colour(mover)
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

    def connectivity(self):
        """The last forward pass's global connectivity: (2, num_locs, num_locs), [colour][p][q]
        the connection value of p to q (0 below the cut-off); colour 0 is the side to move."""
        return self.paths.connectivity()

    def level2_activations(self):
        """The last forward pass's second-level units (num_locs, num_level2), for tests."""
        result = np.zeros((self.num_locs, self.num_level2))
        cdef int i, u, p
        for i in range(self.num_cells):
            p = self.cells[i]
            for u in range(self.num_level2):
                result[p, u] = self.level2[p * self.num_level2 + u]
        return result
