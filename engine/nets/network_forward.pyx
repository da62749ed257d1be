# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Blair's Internal Symmetry Network (2008), its forward pass: the parameters and their weight
tying, the full evaluation and the incremental one of 1-ply successors. Network (network.pyx), the
class callers construct, adds the training; the tied kernels come from network_symmetry.py, the
targets and the recurrence weights from network_targets.pyx.

Reading order: NetworkForward.__init__ (the parameter layout, see also network_forward.pxd),
hidden_cell()/output_cell()/forward_all() (the forward pass), encode_board() (the isn14 inputs and
the implicit recurrence), encode_multi_hot() (the board features of multi-hot feature sets),
successor_delta() (the incremental 1-ply evaluation, one path for every feature set).

The network (paper, section III). A cell per point of the extended lattice; each on-board cell has
hidden units of the D8 irreducible types T, S, D, C, F (F two-dimensional), each border cell the
off-board input and zero hidden units. Hidden = tanh(sum over the 3x3 field of input weights),
output = sigmoid(shortcut from the 3x3 inputs + the 3x3 hidden units). The 3x3 kernels are tied
so that rotating or reflecting the board permutes the outputs exactly.

Biases. With a one-hot input set (isn14: exactly one active input per cell) a bias is redundant:
adding b to an output's bias is the same as adding b to its centre shortcut weights from all 14
inputs, and likewise for a T unit's bias and its centre input weights. The paper's 714 free
parameters therefore have no explicit biases, and neither does this network for one-hot feature
sets. Only T units could have a bias at all (S, D, C and F units change sign under some symmetry).
A feature set that is not one-hot gets explicit output and T biases (FeatureSet.one_hot).

Feature sets. isn14 is the paper's one-hot input. neurogo adds NeuroGo 3's preprocessed features
(Table 1), multi-hot: a cell's active inputs are listed (Activations.active), each adding its
weight row, in ascending input order. All board features are rotation-invariant facts of the
position, so the network stays exactly equivariant. In 1-ply evaluation, engine/nets/features.pyx
recomputes only what a move can change, ladders included (their footprints).

Colours. The network always sees the side to move as Black (as NeuroGo does), so the same
position with the colours swapped and the other side to move gives identical inputs. In this frame
the paper's "white" is the player who has just moved: rewards are positive for that player.

Recurrence. A chain's liberty class comes from the previous evaluation's outputs (recurrence
weights, liberty_weights()); what the first position of a game uses, and how positions without an
evaluated predecessor are handled, is engine/nets/evaluator.py's business (see its docstring).

A network keeps its activations in per-object buffers: use one per thread.
"""

from collections import namedtuple

import numpy as np

from libc.math cimport exp
from libc.stdlib cimport malloc, free
from libc.string cimport memset, memcpy

from engine.rules.board cimport Board
from engine.nets.features cimport BoardFeatures, NO_VALUE
from engine.nets.features import FEATURE_SET_SPECS, FEATURES, set_layout, slot_of
from engine.nets.network_symmetry import HIDDEN_TYPES, OFFSET_ORBITS, equivariant_basis
from engine.rules.types cimport (EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE, WALL as C_WALL,
                           MAX_LOCS, MIN_SIZE, MAX_SIZE)

# ---------------------------------------------------------------------------------------------
# Names and constants for Python code

OUTPUT_NAMES = ("Z+", "Zo", "Z.", "A+o", "A+.", "Ao", "A.")
N_OUTPUTS = NUM_OUTPUTS
# The rich reinforcement signal (Network(rich_signal=True), outputs N_OUTPUTS..): per point and
# frame colour (black = the side to move), in Black/White pairs. See rich_targets().
RICH_OUTPUT_NAMES = ("eye_black", "eye_white", "connected_self_black", "connected_self_white",
                     "connected_edges_black", "connected_edges_white", "connected_corners_black",
                     "connected_corners_white", "alive_black", "alive_white")
N_RICH_OUTPUTS = NUM_RICH_OUTPUTS
assert len(RICH_OUTPUT_NAMES) == NUM_RICH_OUTPUTS
N_CLASSES = NUM_CLASSES
INPUT_WHITE_C1 = INPUT_WHITE
INPUT_BLACK_C1 = INPUT_BLACK
INPUT_EMPTY_POINT = INPUT_EMPTY
INPUT_OFF_BOARD_POINT = INPUT_OFF_BOARD

# Columns of the recurrence weights (num_locs, 4), in real colours (see network_forward.pxd).
LIBERTY_WEIGHT_COLUMNS = {"black_z": WEIGHT_BLACK_Z, "black_a": WEIGHT_BLACK_A,
                          "white_z": WEIGHT_WHITE_Z, "white_a": WEIGHT_WHITE_A}

# The recurrence prior, for a position whose predecessor was never evaluated (see
# prior_liberty_weights): every liberty is an undecided point (z = 0.5) that is not an eye (a = 0),
# so classes go by liberty count alone: one liberty C1, two C2, three or more C3.
PRIOR_LIBERTY_Z = 0.5
PRIOR_LIBERTY_A = 0.0

# Colour swap of the seven outputs (frame change): Z+ -> 1-Z+, Zo <-> 1-Z., A+o <-> A+., Ao <-> A.
SWAP_PERMUTATION = np.array([0, 2, 1, 4, 3, 6, 5])
SWAP_COMPLEMENT = np.array([True, True, True, False, False, False, False])

FeatureSet = namedtuple("FeatureSet", "name version num_inputs one_hot description")
# The registered feature sets (engine/nets/features.pyx): every one starts with the isn14 inputs, so
# input 0..13 mean the same in all of them; the others add multi-hot board features.
FEATURE_SETS = {name: FeatureSet(name, set_layout(name).version, set_layout(name).num_inputs,
                                 set_layout(name).one_hot, spec.description)
                for name, spec in FEATURE_SET_SPECS.items()}
assert FEATURE_SETS["isn14"].num_inputs == ISN14_INPUTS and FEATURE_SETS["isn14"].one_hot

# ---------------------------------------------------------------------------------------------
# Small nogil helpers

cdef double CLASS_LOW = 0.75      # the paper's class thresholds (section IV.B)
cdef double CLASS_HIGH = 1.5
CLASS_THRESHOLDS = (CLASS_LOW, CLASS_HIGH)


cdef int liberty_class(double z_sum, double a_sum) noexcept nogil:
    """Class index 0..5 (C1..C6) from the sums over a chain's liberties (paper, section IV.B)."""
    if a_sum < CLASS_LOW:
        if z_sum < CLASS_LOW:
            return 0
        if z_sum < CLASS_HIGH:
            return 1
        return 2
    if a_sum < CLASS_HIGH:
        if z_sum < CLASS_HIGH:
            return 3
        return 4
    return 5


cdef double point_reward(const double *y, int state, double c, double s) noexcept nogil:
    """Expected reward of one point for the frame's White (Tables I-III): R^s = s R^1 + (1-s) R^0,
    state being the point's current content in the frame (EMPTY, WHITE or BLACK)."""
    cdef double r1, r0
    if state == C_EMPTY:
        r1 = 2.0 * y[OUT_Z_EMPTY] - 1.0
        r0 = y[OUT_A_EMPTY_WHITE] - y[OUT_A_EMPTY_BLACK]
    elif state == C_WHITE:
        r1 = (2.0 + c) * y[OUT_Z_WHITE] - (1.0 + c)
        r0 = c * (y[OUT_Z_WHITE] - 1.0) - y[OUT_A_WHITE]
    else:
        r1 = (2.0 + c) * y[OUT_Z_BLACK] - 1.0
        r0 = c * y[OUT_Z_BLACK] + y[OUT_A_BLACK]
    return s * r1 + (1.0 - s) * r0


cdef inline int set_cell(Activations act, int p, int new_input, int new_state,
                         int num_changed) noexcept nogil:
    """Overwrite a cell's input, logging the old value for restoration; returns the log length."""
    if act.inputs[p] == new_input and act.cell_state[p] == new_state:
        return num_changed
    act.changed_cells[num_changed] = p
    act.changed_old_input[num_changed] = act.inputs[p]
    act.changed_old_state[num_changed] = act.cell_state[p]
    act.inputs[p] = new_input
    act.cell_state[p] = new_state
    return num_changed + 1


# ---------------------------------------------------------------------------------------------

cdef class Activations:

    def __cinit__(self, int num_hidden, int num_features, int num_pool_entries,
                  bint field_sums=False):
        self.num_hidden = num_hidden
        self.num_features = num_features
        self.num_pool_entries = num_pool_entries
        self.size = 0
        self.epoch = 0
        self.pool_delta = <int *> malloc(max(num_pool_entries, 1) * sizeof(int))
        self.hidden = <double *> malloc(MAX_LOCS * max(num_hidden, 1) * sizeof(double))
        self.pooled = <double *> malloc(MAX_LOCS * max(num_features, 1) * sizeof(double))
        self.pre = <double *> malloc(MAX_LOCS * MAX_OUTPUTS * sizeof(double))
        self.outputs = <double *> malloc(MAX_LOCS * MAX_OUTPUTS * sizeof(double))
        self.saved_hidden = <double *> malloc(MAX_LOCS * max(num_hidden, 1) * sizeof(double))
        self.active = <int *> malloc(MAX_LOCS * MAX_ACTIVE * sizeof(int))
        self.changed_old_active = <int *> malloc(MAX_LOCS * MAX_ACTIVE * sizeof(int))
        if (self.pool_delta == NULL or self.hidden == NULL or self.pooled == NULL or self.pre == NULL
                or self.outputs == NULL or self.saved_hidden == NULL or self.active == NULL
                or self.changed_old_active == NULL):
            raise MemoryError()
        self.sums_width = num_hidden + NUM_OUTPUTS
        self.field_sums = self.saved_field_sums = NULL
        if field_sums:
            self.field_sums = <double *> malloc(MAX_LOCS * self.sums_width * sizeof(double))
            self.saved_field_sums = <double *> malloc(MAX_LOCS * self.sums_width * sizeof(double))
            if self.field_sums == NULL or self.saved_field_sums == NULL:
                raise MemoryError()
        memset(self.num_active, 0, sizeof(self.num_active))
        memset(self.candidate_mark, 0, sizeof(self.candidate_mark))
        memset(self.hidden_mark, 0, sizeof(self.hidden_mark))
        memset(self.output_mark, 0, sizeof(self.output_mark))
        memset(self.chain_mark, 0, sizeof(self.chain_mark))

    def __dealloc__(self):
        free(self.pool_delta)
        free(self.hidden)
        free(self.pooled)
        free(self.pre)
        free(self.outputs)
        free(self.saved_hidden)
        free(self.active)
        free(self.changed_old_active)
        free(self.field_sums)
        free(self.saved_field_sums)

    cdef unsigned int next_epoch(self) noexcept nogil:
        self.epoch += 1
        if self.epoch == 0:  # wrapped after 2^32 uses: clear the marks once
            memset(self.hidden_mark, 0, sizeof(self.hidden_mark))
            memset(self.output_mark, 0, sizeof(self.output_mark))
            memset(self.chain_mark, 0, sizeof(self.chain_mark))
            memset(self.candidate_mark, 0, sizeof(self.candidate_mark))
            self.epoch = 1
        return self.epoch


cdef double *double_pointer(arr) except NULL:
    """Raw pointer into a C-contiguous float64 array; the caller keeps the array alive."""
    cdef double[::1] flat = arr.reshape(-1)
    return &flat[0]


cdef int *int_pointer(arr) except NULL:
    cdef int[::1] flat = arr.reshape(-1)
    return &flat[0]


cdef class NetworkForward:
    """The Internal Symmetry Network without its training (Network, network.pyx, adds it:
    construct that). Its arguments are Network's."""

    def __init__(self, str feature_set="isn14", int trivial=4, int symmetric=2, int diagonal=2,
                 int chiral=0, int faithful=2, explicit_biases=None, bint rich_signal=False):
        if feature_set not in FEATURE_SETS:
            raise ValueError(f"unknown feature set {feature_set!r}; known: {sorted(FEATURE_SETS)}")
        counts = {"T": trivial, "S": symmetric, "D": diagonal, "C": chiral, "F": faithful}
        for name, count in counts.items():
            if count < 0:
                raise ValueError(f"hidden unit count for {name} must be >= 0, not {count}")
        spec = FEATURE_SETS[feature_set]
        self.feature_set = feature_set
        self.num_inputs = spec.num_inputs
        # Explicit biases follow from the feature set; the override exists for experiments and tests.
        self.explicit_biases = (not spec.one_hot) if explicit_biases is None else bool(explicit_biases)
        self._set_up_features(feature_set)
        # The rich reinforcement signal (NeuroGo 3, section 2.1): RICH_OUTPUT_NAMES after the
        # seven territory outputs, trained like them; values still come from the seven alone.
        self.rich_signal = rich_signal
        self.num_outputs = NUM_OUTPUTS + (NUM_RICH_OUTPUTS if rich_signal else 0)
        self.num_trivial, self.num_symmetric, self.num_diagonal = trivial, symmetric, diagonal
        self.num_chiral, self.num_faithful = chiral, faithful
        self.num_hidden = trivial + symmetric + diagonal + chiral + 2 * faithful
        if self.num_hidden > MAX_HIDDEN:
            raise ValueError(f"{self.num_hidden} hidden units per cell is more than {MAX_HIDDEN}")

        # Features: one per (hidden unit or F pair, equivariant basis kernel).
        features = []          # list of [(offset index, hidden unit, sign)]
        feature_types = []
        unit = 0
        for hidden_type in HIDDEN_TYPES:
            basis = equivariant_basis(hidden_type)
            dim = 2 if hidden_type == "F" else 1
            for _ in range(counts[hidden_type]):
                for kernel in basis:
                    features.append([(k, unit + d, int(kernel[k, d]))
                                     for k in range(NUM_OFFSETS) for d in range(dim)
                                     if kernel[k, d] != 0])
                    feature_types.append(hidden_type)
                unit += dim
        self.num_features = len(features)
        if self.num_features > MAX_FEATURES:
            raise ValueError(f"{self.num_features} features is more than {MAX_FEATURES}")
        self.num_pool_entries = sum(len(entries) for entries in features)

        ni, nf, nh = self.num_inputs, self.num_features, self.num_hidden
        self.shortcut_start = 0
        self.output_start = self.num_outputs * ni * 3
        self.input_start = self.output_start + self.num_outputs * nf
        self.bias_start = self.input_start + nf * ni
        self.num_params = self.bias_start + ((self.num_outputs + trivial) if self.explicit_biases else 0)

        pool_start = np.zeros(nf + 1, dtype=np.intc)
        pool_offset, pool_hidden, pool_sign = [], [], []
        for f, entries in enumerate(features):
            pool_start[f + 1] = pool_start[f] + len(entries)
            for k, h, sign in entries:
                pool_offset.append(k)
                pool_hidden.append(h)
                pool_sign.append(float(sign))
        tables = {
            "hidden": np.zeros((NUM_OFFSETS, ni, max(nh, 1))),
            "shortcut": np.zeros((NUM_OFFSETS, ni, self.num_outputs)),
            "input_rows": np.zeros((NUM_OFFSETS, ni, nh + NUM_OUTPUTS)),
            "output": np.zeros((max(nf, 1), self.num_outputs)),
            "pool_output": np.zeros((NUM_OUTPUTS, max(self.num_pool_entries, 1))),
            "hidden_bias": np.zeros(max(nh, 1)),
            "output_bias": np.zeros(self.num_outputs),
            "pool_start": pool_start,
            "pool_offset": np.array(pool_offset + [0], dtype=np.intc),
            "pool_hidden": np.array(pool_hidden + [0], dtype=np.intc),
            "pool_sign": np.array(pool_sign + [0.0]),
        }
        self._tables = tables
        self._features = features
        self.feature_types = tuple(feature_types)
        self.hidden_table = double_pointer(tables["hidden"])
        self.shortcut_table = double_pointer(tables["shortcut"])
        self.input_rows = double_pointer(tables["input_rows"])
        self.output_weights = double_pointer(tables["output"])
        self.pool_output = double_pointer(tables["pool_output"])
        self.hidden_bias = double_pointer(tables["hidden_bias"])
        self.output_bias = double_pointer(tables["output_bias"])
        self.pool_sign = double_pointer(tables["pool_sign"])
        self.pool_start = int_pointer(tables["pool_start"])
        self.pool_offset = int_pointer(tables["pool_offset"])
        self.pool_hidden = int_pointer(tables["pool_hidden"])
        for k in range(NUM_OFFSETS):
            self.orbit_of_offset[k] = OFFSET_ORBITS[k]
        self.scratch = Activations(nh, nf, self.num_pool_entries)
        self.base = Activations(nh, nf, self.num_pool_entries, True)
        self._params = np.zeros(self.num_params)
        self._expand()

    def _set_up_features(self, str feature_set):
        """The board features of a multi-hot set and the table mapping their slots to inputs."""
        layout = set_layout(feature_set)
        self.multi_hot = not layout.one_hot
        self.max_active = layout.max_active
        if self.max_active > MAX_ACTIVE:
            raise ValueError(f"feature set {feature_set} has {self.max_active} features; at most "
                             f"{MAX_ACTIVE} are supported")
        cdef int own, j = 0
        self.board_features = BoardFeatures(layout.needs) if self.multi_hot else None
        cells = {"empty_own": 0, "empty_opponent": 0, "own_stone": 1, "opponent_stone": 2}
        for name, offset in layout.offsets.items():     # in input order
            feature = FEATURES[name]
            if feature.slot is None:
                continue
            self.feature_cell[j] = cells[feature.points]
            self.feature_offset[j] = offset
            for own in range(2):
                self.feature_slot[own][j] = slot_of(feature, own + C_BLACK)
            j += 1
        self.num_board_features = j

    # ----------------------------------------------------------------- parameters

    @property
    def hidden_counts(self):
        return {"T": self.num_trivial, "S": self.num_symmetric, "D": self.num_diagonal,
                "C": self.num_chiral, "F": self.num_faithful}

    def get_params(self):
        """A copy of the flat parameter vector (float64, layout in network_forward.pxd)."""
        return self._params.copy()

    def set_params(self, params):
        """Replace the parameters (any float array of num_params finite values) and rebuild the
        expanded kernels the forward pass uses."""
        vector = np.asarray(params, dtype=np.float64)
        if vector.shape != (self.num_params,):
            raise ValueError(f"expected {self.num_params} parameters, got shape {vector.shape}")
        if not np.all(np.isfinite(vector)):
            raise ValueError("parameters contain NaN or infinity")
        self._params[...] = vector
        self._expand()

    def decay(self, double factor):
        """Weight decay: multiply every parameter by factor (the paper: 0.99999 per game)."""
        if not 0.0 < factor <= 1.0:
            raise ValueError(f"decay factor must be in (0, 1], not {factor}")
        self._params *= factor
        self._expand()

    def parameter_blocks(self):
        """{name: (start, stop, shape)} of the blocks of the parameter vector."""
        blocks = {
            "shortcut": (self.shortcut_start, self.output_start,
                         (self.num_outputs, self.num_inputs, 3)),
            "output": (self.output_start, self.input_start, (self.num_outputs, self.num_features)),
            "input": (self.input_start, self.bias_start, (self.num_features, self.num_inputs)),
        }
        if self.explicit_biases:
            blocks["output_bias"] = (self.bias_start, self.bias_start + self.num_outputs,
                                     (self.num_outputs,))
            blocks["trivial_bias"] = (self.bias_start + self.num_outputs, self.num_params,
                                      (self.num_trivial,))
        return blocks

    def _expand(self):
        """Rebuild the dense 3x3 kernels from the free parameters (in place: pointers stay valid)."""
        self.params_version += 1     # lets evaluators drop evaluations made with older parameters
        blocks = self.parameter_blocks()
        p = self._params
        def block(name):
            start, stop, shape = blocks[name]
            return p[start:stop].reshape(shape)
        tables = self._tables
        orbits = np.array(OFFSET_ORBITS)
        tables["shortcut"][...] = block("shortcut")[:, :, orbits].transpose(2, 1, 0)
        if self.num_features:
            tables["output"][...] = block("output").T
            pool_feature = np.repeat(np.arange(self.num_features), np.diff(tables["pool_start"]))
            tables["pool_output"][...] = (tables["output"][pool_feature, :NUM_OUTPUTS].T
                                          * tables["pool_sign"][:self.num_pool_entries])
            hidden = tables["hidden"]
            hidden[...] = 0.0
            # every pool entry (feature f, offset k, hidden unit h, sign) adds sign * inputs[f] to
            # hidden[k, :, h], in the entries' order (the trainer rebuilds this at every step)
            entries = slice(0, self.num_pool_entries)
            np.add.at(hidden.transpose(0, 2, 1),
                      (tables["pool_offset"][entries], tables["pool_hidden"][entries]),
                      tables["pool_sign"][entries, None] * block("input")[pool_feature])
        nh = self.num_hidden
        tables["input_rows"][:, :, :nh] = tables["hidden"][:, :, :nh]
        tables["input_rows"][:, :, nh:] = tables["shortcut"][:, :, :NUM_OUTPUTS]
        tables["hidden_bias"][...] = 0.0
        tables["output_bias"][...] = 0.0
        if self.explicit_biases:
            tables["output_bias"][...] = block("output_bias")
            tables["hidden_bias"][:self.num_trivial] = block("trivial_bias")

    def dense_kernels(self):
        """The expanded kernels, indexed by offset in OFFSET_NAMES order:
        input_hidden [9][inputs][hidden], input_output [9][inputs][7], hidden_output [9][hidden][7],
        where offset nu connects the output (or hidden) cell x to the cell x + nu."""
        nh = self.num_hidden
        hidden_output = np.zeros((NUM_OFFSETS, max(nh, 1), self.num_outputs))
        output = self._tables["output"]
        for f, entries in enumerate(self._features):
            for k, h, sign in entries:
                hidden_output[k, h] += sign * output[f]
        return {"input_hidden": self._tables["hidden"][:, :, :nh].copy(),
                "input_output": self._tables["shortcut"].copy(),
                "hidden_output": hidden_output[:, :nh].copy(),
                "hidden_bias": self._tables["hidden_bias"][:nh].copy(),
                "output_bias": self._tables["output_bias"].copy()}

    # ----------------------------------------------------------------- forward pass (nogil)

    cdef void prepare(self, Activations act, int size) noexcept nogil:
        cdef int stride = size + 2, k, a, b, e, row, col, n = 0
        if act.size == size:
            return
        act.size = size
        act.stride = stride
        act.num_locs = stride * stride
        # OFFSET_VECTORS as lattice offsets: east is +1, north is -stride.
        act.offsets[0] = 0
        act.offsets[1] = 1
        act.offsets[2] = -stride
        act.offsets[3] = -1
        act.offsets[4] = stride
        act.offsets[5] = 1 - stride
        act.offsets[6] = -1 - stride
        act.offsets[7] = -1 + stride
        act.offsets[8] = 1 + stride
        k = 0
        for b in range(-2, 3):
            for a in range(-2, 3):
                act.window[k] = a + b * stride
                k += 1
        act.neighbours[0] = 1
        act.neighbours[1] = -1
        act.neighbours[2] = stride
        act.neighbours[3] = -stride
        for e in range(self.num_pool_entries):
            act.pool_delta[e] = act.offsets[self.pool_offset[e]] * self.num_hidden + self.pool_hidden[e]
        memset(act.on_board, 0, sizeof(act.on_board))
        for row in range(size):
            for col in range(size):
                act.cells[n] = (row + 1) * stride + col + 1
                act.on_board[act.cells[n]] = 1
                n += 1
        act.num_cells = n

    cdef void hidden_cell(self, Activations act, int p) noexcept nogil:
        cdef int nh = self.num_hidden, ni = self.num_inputs, k, h, a, q
        cdef double *out = act.hidden + p * nh
        cdef const double *row
        cdef const int *cell_active
        for h in range(nh):
            out[h] = self.hidden_bias[h]
        if self.multi_hot:
            for k in range(NUM_OFFSETS):
                q = p + act.offsets[k]
                cell_active = act.active + q * MAX_ACTIVE
                for a in range(act.num_active[q]):
                    row = self.hidden_table + (k * ni + cell_active[a]) * nh
                    for h in range(nh):
                        out[h] += row[h]
        else:
            for k in range(NUM_OFFSETS):
                row = self.hidden_table + (k * ni + act.inputs[p + act.offsets[k]]) * nh
                for h in range(nh):
                    out[h] += row[h]
        for h in range(nh):
            # tanh written through exp: glibc's tanh costs about three exps, and this form is
            # within 1e-16 of it in absolute terms (the only terms that matter in the sums).
            out[h] = 1.0 - 2.0 / (exp(2.0 * out[h]) + 1.0)

    cdef void pooled_features(self, Activations act, int p, double *pooled) noexcept nogil:
        cdef const double *cell_hidden = act.hidden + p * self.num_hidden
        cdef double acc
        cdef int f, e
        for f in range(self.num_features):
            acc = 0.0
            for e in range(self.pool_start[f], self.pool_start[f + 1]):
                acc += self.pool_sign[e] * cell_hidden[act.pool_delta[e]]
            pooled[f] = acc

    cdef void output_cell(self, Activations act, int p, double *pooled, double *pre,
                          double *y) noexcept nogil:
        cdef int ni = self.num_inputs, nf = self.num_features, k, o, f, no = self.num_outputs
        cdef const double *row
        cdef int a, q
        cdef const int *cell_active
        for o in range(no):
            pre[o] = self.output_bias[o]
        if self.multi_hot:
            for k in range(NUM_OFFSETS):
                q = p + act.offsets[k]
                cell_active = act.active + q * MAX_ACTIVE
                for a in range(act.num_active[q]):
                    row = self.shortcut_table + (k * ni + cell_active[a]) * no
                    for o in range(no):
                        pre[o] += row[o]
        else:
            for k in range(NUM_OFFSETS):
                row = self.shortcut_table + (k * ni + act.inputs[p + act.offsets[k]]) * no
                for o in range(no):
                    pre[o] += row[o]
        self.pooled_features(act, p, pooled)
        for f in range(nf):
            row = self.output_weights + f * no
            for o in range(no):
                pre[o] += pooled[f] * row[o]
        for o in range(no):
            y[o] = 1.0 / (1.0 + exp(-pre[o]))

    cdef void forward_all(self, Activations act, double c, double s) noexcept nogil:
        cdef int i, p, nh = self.num_hidden, nf = self.num_features, no = self.num_outputs
        cdef double total = 0.0, r
        memset(act.hidden, 0, act.num_locs * nh * sizeof(double))
        memset(act.outputs, 0, act.num_locs * no * sizeof(double))
        memset(act.pre, 0, act.num_locs * no * sizeof(double))
        memset(act.rewards, 0, act.num_locs * sizeof(double))
        for i in range(act.num_cells):
            self.hidden_cell(act, act.cells[i])
        for i in range(act.num_cells):
            p = act.cells[i]
            self.output_cell(act, p, act.pooled + p * nf, act.pre + p * no,
                             act.outputs + p * no)
            r = point_reward(act.outputs + p * no, act.cell_state[p], c, s)
            act.rewards[p] = r
            total += r
        act.total = total

    # ----------------------------------------------------------------- successors: field sums

    cdef void cell_field_sums(self, Activations act, int p) noexcept nogil:
        # From input_rows, the hidden and shortcut rows side by side: one contiguous row per
        # (offset, input), summed over p's 3x3 field (offsets outer, each cell's inputs inner).
        cdef int ni = self.num_inputs, width = act.sums_width, k, a, j, q
        cdef double *out = act.field_sums + p * width
        cdef const int *cell_active
        cdef const double *row
        for j in range(width):
            out[j] = 0.0
        for k in range(NUM_OFFSETS):
            q = p + act.offsets[k]
            cell_active = act.active + q * MAX_ACTIVE
            for a in range(act.num_active[q]):
                row = self.input_rows + (k * ni + cell_active[a]) * width
                for j in range(width):
                    out[j] += row[j]

    cdef void add_input_change(self, Activations act, int q, const int *old_active, int num_old,
                               const int *new_active, int num_new) noexcept nogil:
        # Cell q's active inputs went from old_active to new_active (both ascending): each cell
        # whose 3x3 field holds q (p = q - offset k, seeing q through kernel k) adds the rows of
        # the inputs q gained and takes away those of the inputs it lost. Such a cell's field
        # sums and hidden units are saved first (hidden_cells, hidden_mark: restored after the
        # successor).
        cdef int ni = self.num_inputs, width = act.sums_width, nh = self.num_hidden
        cdef int k, p, i, j, j_old = 0, j_new = 0, num_gained = 0, num_lost = 0
        cdef int gained[MAX_ACTIVE]
        cdef int lost[MAX_ACTIVE]
        cdef double *out
        cdef const double *row
        cdef unsigned int epoch = act.epoch
        while j_old < num_old or j_new < num_new:      # the two lists' difference, once
            if j_new == num_new or (j_old < num_old and old_active[j_old] < new_active[j_new]):
                lost[num_lost] = old_active[j_old]
                num_lost += 1
                j_old += 1
            elif j_old == num_old or new_active[j_new] < old_active[j_old]:
                gained[num_gained] = new_active[j_new]
                num_gained += 1
                j_new += 1
            else:
                j_old += 1
                j_new += 1
        for k in range(NUM_OFFSETS):
            p = q - act.offsets[k]
            if not act.on_board[p]:
                continue
            if act.hidden_mark[p] != epoch:
                act.hidden_mark[p] = epoch
                i = act.num_saved
                memcpy(act.saved_hidden + i * nh, act.hidden + p * nh, nh * sizeof(double))
                memcpy(act.saved_field_sums + i * width, act.field_sums + p * width,
                       width * sizeof(double))
                act.hidden_cells[i] = p
                act.num_saved += 1
            out = act.field_sums + p * width
            for i in range(num_lost):
                row = self.input_rows + (k * ni + lost[i]) * width
                for j in range(width):
                    out[j] -= row[j]
            for i in range(num_gained):
                row = self.input_rows + (k * ni + gained[i]) * width
                for j in range(width):
                    out[j] += row[j]

    cdef void hidden_cell_summed(self, Activations act, int p) noexcept nogil:
        cdef int nh = self.num_hidden, h
        cdef double *out = act.hidden + p * nh
        cdef const double *field = act.field_sums + p * act.sums_width
        for h in range(nh):          # tanh, as hidden_cell()
            out[h] = 1.0 - 2.0 / (exp(2.0 * (self.hidden_bias[h] + field[h])) + 1.0)

    cdef double output_reward_summed(self, Activations act, int p, double c, double s) noexcept nogil:
        # Only the outputs point_reward() reads for this cell's state are computed: Z and A of its
        # content, and with s == 1 (the default) Z alone, (1 - s) then zeroing the A terms. The
        # shortcut comes from the field sums: another order of the same terms as output_cell(),
        # equal to it within rounding.
        cdef int nh = self.num_hidden, no = self.num_outputs, width = act.sums_width, o, f, i, e
        cdef int state = act.cell_state[p], num_needed
        cdef const double *cell_hidden = act.hidden + p * nh
        cdef const double *row
        cdef int needed[3]
        cdef double total
        cdef double pooled[MAX_FEATURES]
        cdef double y[NUM_OUTPUTS]
        if state == C_EMPTY:
            needed[0], needed[1], needed[2] = OUT_Z_EMPTY, OUT_A_EMPTY_WHITE, OUT_A_EMPTY_BLACK
            num_needed = 3
        elif state == C_WHITE:
            needed[0], needed[1] = OUT_Z_WHITE, OUT_A_WHITE
            num_needed = 2
        else:
            needed[0], needed[1] = OUT_Z_BLACK, OUT_A_BLACK
            num_needed = 2
        if s == 1.0:
            num_needed = 1
        for o in range(NUM_OUTPUTS):
            y[o] = 0.0                    # finite, for the terms that s == 1 multiplies by zero
        if num_needed == 1:
            # One output: straight from the hidden units through pool_output, without the pooled
            # features in between (fewer terms than pooling all of them for one output).
            o = needed[0]
            total = self.output_bias[o] + act.field_sums[p * width + nh + o]
            row = self.pool_output + o * self.num_pool_entries
            for e in range(self.num_pool_entries):
                total += row[e] * cell_hidden[act.pool_delta[e]]
            y[o] = 1.0 / (1.0 + exp(-total))
            return point_reward(y, state, c, s)
        self.pooled_features(act, p, pooled)
        for i in range(num_needed):
            o = needed[i]
            total = self.output_bias[o] + act.field_sums[p * width + nh + o]
            for f in range(self.num_features):
                total += pooled[f] * self.output_weights[f * no + o]
            y[o] = 1.0 / (1.0 + exp(-total))
        return point_reward(y, state, c, s)

    # ----------------------------------------------------------------- inputs from a board (isn14)

    cdef int chain_class(self, Activations act, Board board, int p,
                         const double *weights) noexcept nogil:
        cdef int n = board.chain_liberties_into(p, act.liberties), j
        cdef int k = WEIGHT_BLACK_Z if board.colour[p] == C_BLACK else WEIGHT_WHITE_Z
        cdef double z_sum = 0.0, a_sum = 0.0
        cdef const double *w
        for j in range(n):
            w = weights + act.liberties[j] * WEIGHTS_PER_POINT + k
            z_sum += w[0]
            a_sum += w[1]
        return liberty_class(z_sum, a_sum)

    cdef void encode_board(self, Activations act, Board board, int to_move,
                           const double *weights) noexcept nogil:
        cdef unsigned int epoch = act.next_epoch()
        cdef int p, colour, head, cls
        for p in range(act.num_locs):
            if not act.on_board[p]:
                act.inputs[p] = INPUT_OFF_BOARD
                act.cell_state[p] = C_EMPTY
                continue
            colour = board.colour[p]
            if colour == C_EMPTY:
                act.inputs[p] = INPUT_EMPTY
                act.cell_state[p] = C_EMPTY
                continue
            head = board.chain_head[p]
            if act.chain_mark[head] != epoch:
                act.chain_mark[head] = epoch
                act.class_of_head[head] = self.chain_class(act, board, head, weights)
            cls = act.class_of_head[head]
            if colour == to_move:
                act.inputs[p] = INPUT_BLACK + cls
                act.cell_state[p] = C_BLACK
            else:
                act.inputs[p] = INPUT_WHITE + cls
                act.cell_state[p] = C_WHITE

    cdef int cell_inputs(self, Activations act, int p, int to_move, const signed char *slots,
                         int *out) noexcept nogil:
        cdef int n = 1, j, cell, value, state = act.cell_state[p]
        cdef const int *slot_index = &self.feature_slot[to_move - C_BLACK][0]
        out[0] = act.inputs[p]
        if not act.on_board[p]:
            return n
        cell = 0 if state == C_EMPTY else (1 if state == C_BLACK else 2)
        for j in range(self.num_board_features):     # ascending inputs: a canonical order
            if self.feature_cell[j] == cell:
                value = slots[slot_index[j]]
                if value != NO_VALUE:
                    out[n] = self.feature_offset[j] + value
                    n += 1
        return n

    cdef void encode_multi_hot(self, Activations act, Board board, int to_move,
                               const double *weights, bint record) noexcept nogil:
        cdef int p
        self.encode_board(act, board, to_move, weights)
        self.board_features.compute_all(board, record)
        for p in range(act.num_locs):
            act.num_active[p] = self.cell_inputs(act, p, to_move, self.board_features.value[p],
                                                 act.active + p * MAX_ACTIVE)

    # ----------------------------------------------------------------- incremental successors

    cdef int changed_isn14_cells(self, Activations act, Board board, int move, int mover,
                                 const double *weights, unsigned int epoch) noexcept nogil:
        # Step 1 of successor_delta(): set the new isn14 input of the points whose colour
        # changed (the move, the captured stones, or the mover's own chain after an allowed
        # suicide) and of every chain that contains or touches one of them (only those can have
        # a different liberty set, so a different class), logging the old ones (set_cell).
        # Returns the number of cells logged.
        cdef int *captured
        cdef int num_captured = board.last_move_captured(&captured)
        cdef int frame_black = 3 - mover      # the successor's side to move
        cdef int num_changed = 0
        cdef int j, t, q, r, colour, head, cls, new_input, new_state, stone
        for j in range(-1, num_captured):
            q = move if j < 0 else captured[j]
            for t in range(5):
                r = q if t == 0 else q + act.neighbours[t - 1]
                colour = board.colour[r]
                if colour == C_EMPTY:
                    if t == 0:
                        num_changed = set_cell(act, r, INPUT_EMPTY, C_EMPTY, num_changed)
                elif colour == C_BLACK or colour == C_WHITE:
                    head = board.chain_head[r]
                    if act.chain_mark[head] == epoch:
                        continue
                    act.chain_mark[head] = epoch
                    cls = self.chain_class(act, board, head, weights)
                    if colour == frame_black:
                        new_input = INPUT_BLACK + cls
                        new_state = C_BLACK
                    else:
                        new_input = INPUT_WHITE + cls
                        new_state = C_WHITE
                    stone = head
                    while True:
                        num_changed = set_cell(act, stone, new_input, new_state, num_changed)
                        stone = board.next_in_chain[stone]
                        if stone == head:
                            break
        return num_changed

    cdef double successor_delta(self, Activations act, Board board, int move, int mover,
                                const double *weights, double c, double s) noexcept nogil:
        # 1. The isn14 inputs (changed_isn14_cells, logged by set_cell), then, for a multi-hot
        #    set, the board features of the successor (engine/nets/features.pyx: the cells the move
        #    can change, ladders included).
        cdef unsigned int epoch = act.next_epoch()
        cdef int frame_black = 3 - mover      # the successor's side to move
        cdef int num_changed = 0, num_active_changed = 0
        cdef int nh = self.num_hidden, width = act.sums_width
        cdef int j, k, q, r, n, a
        cdef bint differs
        cdef double delta = 0.0
        cdef int fresh[MAX_ACTIVE]
        cdef int *cell_active
        cdef int num_overlay = 0
        num_changed = self.changed_isn14_cells(act, board, move, mover, weights, epoch)
        if self.multi_hot:
            self.board_features.successor(board, move)
            num_overlay = self.board_features.num_overlay
        # 2. The active inputs of every cell whose isn14 input or features may have changed; the
        #    field sums of the cells that see a changed one follow (add_input_change).
        act.num_saved = 0
        for j in range(num_changed + num_overlay):
            if j < num_changed:
                q = act.changed_cells[j]
            else:
                q = self.board_features.overlay_cells[j - num_changed]
            if act.candidate_mark[q] == epoch:
                continue
            act.candidate_mark[q] = epoch
            n = self.cell_inputs(act, q, frame_black,
                                 self.board_features.cell_values(q) if self.multi_hot else NULL,
                                 fresh)
            cell_active = act.active + q * MAX_ACTIVE
            differs = n != act.num_active[q]
            if not differs:
                for a in range(n):
                    if fresh[a] != cell_active[a]:
                        differs = True
                        break
            if not differs:
                continue
            memcpy(act.changed_old_active + num_active_changed * MAX_ACTIVE, cell_active,
                   act.num_active[q] * sizeof(int))
            act.changed_old_num_active[num_active_changed] = act.num_active[q]
            # kept in point order (insertion): the sums below then add up in an order fixed by
            # the position, not by how its chains were built, so a position and its colour swap
            # give the same values to the bit
            k = num_active_changed
            while k > 0 and act.active_changed[act.changed_order[k - 1]] > q:
                act.changed_order[k] = act.changed_order[k - 1]
                k -= 1
            act.changed_order[k] = num_active_changed
            act.active_changed[num_active_changed] = q
            num_active_changed += 1
            memcpy(cell_active, fresh, n * sizeof(int))
            act.num_active[q] = n
        if num_active_changed > 0:
            for j in range(num_active_changed):
                a = act.changed_order[j]
                q = act.active_changed[a]
                self.add_input_change(act, q, act.changed_old_active + a * MAX_ACTIVE,
                                      act.changed_old_num_active[a], act.active + q * MAX_ACTIVE,
                                      act.num_active[q])
            # 3. Hidden units that see a changed input (3x3): the cells add_input_change() saved.
            for j in range(act.num_saved):
                self.hidden_cell_summed(act, act.hidden_cells[j])
            # 4. Outputs within the 5x5 window of a changed input.
            for j in range(num_active_changed):
                q = act.active_changed[act.changed_order[j]]
                for k in range(NUM_WINDOW):
                    r = q + act.window[k]
                    if (r < 0 or r >= act.num_locs or not act.on_board[r]
                            or act.output_mark[r] == epoch):
                        continue
                    act.output_mark[r] = epoch
                    delta += self.output_reward_summed(act, r, c, s) - act.rewards[r]
        # 5. Restore the position before the move.
        for j in range(act.num_saved):
            r = act.hidden_cells[j]
            memcpy(act.hidden + r * nh, act.saved_hidden + j * nh, nh * sizeof(double))
            memcpy(act.field_sums + r * width, act.saved_field_sums + j * width,
                   width * sizeof(double))
        for j in range(num_active_changed - 1, -1, -1):
            q = act.active_changed[j]
            memcpy(act.active + q * MAX_ACTIVE, act.changed_old_active + j * MAX_ACTIVE,
                   act.changed_old_num_active[j] * sizeof(int))
            act.num_active[q] = act.changed_old_num_active[j]
        for j in range(num_changed - 1, -1, -1):
            q = act.changed_cells[j]
            act.inputs[q] = act.changed_old_input[j]
            act.cell_state[q] = act.changed_old_state[j]
        return delta

    # ----------------------------------------------------------------- Python API: boards

    def _weights_array(self, Board board, weights):
        w = np.ascontiguousarray(weights, dtype=np.float64)
        if w.shape != (board.num_locs, WEIGHTS_PER_POINT):
            raise ValueError(f"recurrence weights must have shape ({board.num_locs}, "
                             f"{WEIGHTS_PER_POINT}), got {w.shape}")
        return w

    def _check_board_inputs(self, int to_move):
        if to_move != C_BLACK and to_move != C_WHITE:
            raise ValueError(f"colour must be BLACK (1) or WHITE (2), not {to_move}")

    def encode(self, Board board, int to_move, weights):
        """The inputs of board with to_move presented as Black, each chain's liberty class taken
        from the recurrence weights (see liberty_weights): for isn14 an array (num_locs,), for a
        multi-hot set (num_locs, max_active) active inputs padded with -1 (as forward() takes)."""
        self._check_board_inputs(to_move)
        w = self._weights_array(board, weights)
        cdef const double[:, ::1] w_view = w
        act = self.scratch
        self.prepare(act, board.size)
        if self.multi_hot:
            self.board_features.prepare(board.size)
            self.encode_multi_hot(act, board, to_move, &w_view[0, 0], False)
        else:
            self.encode_board(act, board, to_move, &w_view[0, 0])
        return self._inputs_array(act)

    def evaluate_board(self, Board board, int to_move, weights, double c=0.0, double s=1.0):
        """Full evaluation of board with to_move to play: (outputs (num_locs, 7), inputs
        (num_locs,), rewards (num_locs,), total). Rewards and total are for the player NOT to move
        (the frame's White), komi excluded, under scoring parameters c and s."""
        self._check_board_inputs(to_move)
        w = self._weights_array(board, weights)
        cdef const double[:, ::1] w_view = w
        act = self.scratch
        self.prepare(act, board.size)
        if self.multi_hot:
            self.board_features.prepare(board.size)
        with nogil:
            if self.multi_hot:
                self.encode_multi_hot(act, board, to_move, &w_view[0, 0], False)
            else:
                self.encode_board(act, board, to_move, &w_view[0, 0])
            self.forward_all(act, c, s)
        cdef double[::1] rewards = <double[:act.num_locs]> act.rewards
        return (self._outputs_array(act), self._inputs_array(act), np.array(rewards, copy=True),
                act.total)

    def _moves_array(self, Board board, int mover, moves, bint allow_suicide):
        m = np.ascontiguousarray(moves, dtype=np.intc)
        if m.ndim != 1:
            raise ValueError("moves must be a 1-D sequence of points")
        cdef int[::1] view = m
        cdef int i
        for i in range(view.shape[0]):
            if view[i] < 0 or view[i] >= board.num_locs or board.colour[view[i]] == C_WALL:
                raise ValueError(f"move {view[i]} is not an on-board point (pass is not a move here)")
            if not board.is_legal(view[i], mover, allow_suicide):
                raise ValueError(f"move {view[i]} is illegal for colour {mover}")
        return m

    def successor_values(self, Board board, int mover, weights, moves, double c=0.0, double s=1.0,
                         bint allow_suicide=False):
        """Values of the positions after each of moves (on-board points, legal for mover under
        simple ko) and after a pass, for mover, komi excluded: (pass_value, values). weights are
        the recurrence weights of the current position's own evaluation (liberty_weights), which
        is the previous evaluation of every successor. Incremental: only the cells whose inputs a
        move changes, and their 5x5 output neighbourhood, are recomputed. board is played on and
        restored exactly."""
        self._check_board_inputs(mover)
        w = self._weights_array(board, weights)
        m = self._moves_array(board, mover, moves, allow_suicide)
        cdef const double[:, ::1] w_view = w
        cdef const int[::1] m_view = m
        values = np.empty(len(m))
        cdef double[::1] out = values
        cdef int i, n = m_view.shape[0]
        cdef Activations act = self.base
        cdef const double *w_ptr = &w_view[0, 0]
        cdef double base_total
        self.prepare(act, board.size)
        if self.multi_hot:
            self.board_features.prepare(board.size)
        with nogil:
            # The unchanged position, seen from the successors' side to move, is the pass successor.
            if self.multi_hot:
                self.encode_multi_hot(act, board, 3 - mover, w_ptr, True)
            else:
                self.encode_board(act, board, 3 - mover, w_ptr)
                for i in range(act.num_locs):     # the one active input of a one-hot set
                    act.active[i * MAX_ACTIVE] = act.inputs[i]
                    act.num_active[i] = 1
            for i in range(act.num_cells):
                self.cell_field_sums(act, act.cells[i])
            self.forward_all(act, c, s)
            base_total = act.total
            for i in range(n):
                board.play_move(m_view[i], mover, allow_suicide)
                out[i] = base_total + self.successor_delta(act, board, m_view[i], mover, w_ptr, c, s)
                board.undo_move()
        return base_total, values

    def successor_values_full(self, Board board, int mover, weights, moves, double c=0.0,
                              double s=1.0, bint allow_suicide=False):
        """successor_values() computed by a full evaluation of every successor (the reference the
        incremental path is tested and benchmarked against)."""
        self._check_board_inputs(mover)
        w = self._weights_array(board, weights)
        m = self._moves_array(board, mover, moves, allow_suicide)
        cdef const double[:, ::1] w_view = w
        cdef const int[::1] m_view = m
        values = np.empty(len(m))
        cdef double[::1] out = values
        cdef int i, n = m_view.shape[0]
        cdef Activations act = self.base
        cdef const double *w_ptr = &w_view[0, 0]
        cdef double pass_total
        self.prepare(act, board.size)
        if self.multi_hot:
            self.board_features.prepare(board.size)
        with nogil:
            if self.multi_hot:
                self.encode_multi_hot(act, board, 3 - mover, w_ptr, False)
            else:
                self.encode_board(act, board, 3 - mover, w_ptr)
            self.forward_all(act, c, s)
            pass_total = act.total
            for i in range(n):
                board.play_move(m_view[i], mover, allow_suicide)
                if self.multi_hot:
                    self.encode_multi_hot(act, board, 3 - mover, w_ptr, False)
                else:
                    self.encode_board(act, board, 3 - mover, w_ptr)
                self.forward_all(act, c, s)
                out[i] = act.total
                board.undo_move()
        return pass_total, values
