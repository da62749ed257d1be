# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Blair's Internal Symmetry Network (2008), the default evaluator's network: `Network`, the class
callers construct, and the names they use.

The network is three modules and a helper, each below the next:
  network_symmetry.py   the 3x3 field, D8 and the equivariant kernels of the weight tying
  network_forward.pyx   NetworkForward: the parameters, the inputs (isn14 and the multi-hot sets,
                        the implicit recurrence), the forward pass, whole or incremental for
                        1-ply successors, and the play API (evaluate_board, successor_values)
  network_targets.pyx   the recurrence weights, rewards and the training targets (Table IV, the
                        rich signal), at numpy level
  network.pyx           Network(NetworkForward): the training, backward() and the trainer's calls
                        on encoded inputs (forward, loss, loss_and_gradient) (this module)
This module also gives the public names of the others, so that `network.X` reaches all of them.
engine/nets/evaluator.py wraps the network behind the Evaluator interface; engine/nets/weights.py
reads and writes the parameter vector; engine/nets/features.pyx registers the feature sets and
computes NeuroGo's board features.

Reading order: network_forward.pyx, then backward() here, then loss_and_gradient();
network_targets.pyx for the targets.

Rich signal (NeuroGo 3, section 2.1; Network(rich_signal=True)). RICH_OUTPUT_NAMES follow the
seven territory outputs: single-point eyes, connections (self, edge and corner neighbours as D8
orbits) and live points per frame colour, trained by TD from rich_targets(). They only shape the
hidden units: values, rewards and the recurrence use the seven territory outputs alone, and the
1-ply hot path computes only those.

A Network keeps its activations in per-object buffers: use one Network per thread.
"""

import numpy as np

from libc.math cimport exp, log1p
from libc.string cimport memset

from engine.nets.network_forward cimport (Activations, NetworkForward, NUM_OFFSETS, MAX_ACTIVE,
                                          MAX_OUTPUTS, INPUT_OFF_BOARD, INPUT_EMPTY, INPUT_BLACK,
                                          double_pointer)
from engine.rules.types cimport (EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE, MAX_LOCS,
                                 MIN_SIZE, MAX_SIZE)

from engine.nets.network_forward import (CLASS_THRESHOLDS, FEATURE_SETS, FeatureSet,
                                         INPUT_BLACK_C1, INPUT_EMPTY_POINT, INPUT_OFF_BOARD_POINT,
                                         INPUT_WHITE_C1, LIBERTY_WEIGHT_COLUMNS, N_CLASSES,
                                         N_OUTPUTS, N_RICH_OUTPUTS, OUTPUT_NAMES, PRIOR_LIBERTY_A,
                                         PRIOR_LIBERTY_Z, RICH_OUTPUT_NAMES, SWAP_COMPLEMENT,
                                         SWAP_PERMUTATION)
from engine.nets.network_symmetry import (HIDDEN_TYPES, OFFSET_NAMES, OFFSET_ORBITS,
                                          OFFSET_VECTORS, equivariant_basis, symmetry_group)
from engine.nets.network_targets import (classify, final_status, final_targets, liberty_weights,
                                         point_rewards, prior_liberty_weights, rich_targets,
                                         swap_colours, swap_colours_mask, swap_rich_colours,
                                         target_table)


cdef inline double softplus(double z) noexcept nogil:
    if z > 0:
        return z + log1p(exp(-z))
    return log1p(exp(z))



cdef class Network(NetworkForward):
    """The Internal Symmetry Network. Network(feature_set="isn14", trivial=4, symmetric=2,
    diagonal=2, chiral=0, faithful=2) is the paper's network with 714 free parameters, all zero:
    set them with set_params() (engine/nets/weights.py makes random or saved ones)."""

    def __init__(self, str feature_set="isn14", int trivial=4, int symmetric=2, int diagonal=2,
                 int chiral=0, int faithful=2, explicit_biases=None, bint rich_signal=False):
        NetworkForward.__init__(self, feature_set, trivial, symmetric, diagonal, chiral, faithful,
                                explicit_biases, rich_signal)
        ni, nf, nh, no = self.num_inputs, self.num_features, self.num_hidden, self.num_outputs
        gradients = {
            "grad_hidden_table": np.zeros((NUM_OFFSETS, ni, max(nh, 1))),
            "grad_shortcut_table": np.zeros((NUM_OFFSETS, ni, no)),
            "grad_output": np.zeros((max(nf, 1), no)),
            "grad_hidden_bias": np.zeros(max(nh, 1)),
            "grad_output_bias": np.zeros(no),
            "grad_hidden": np.zeros((MAX_LOCS, max(nh, 1))),
        }
        self._tables.update(gradients)
        self.grad_hidden_table = double_pointer(gradients["grad_hidden_table"])
        self.grad_shortcut_table = double_pointer(gradients["grad_shortcut_table"])
        self.grad_output_weights = double_pointer(gradients["grad_output"])
        self.grad_hidden_bias = double_pointer(gradients["grad_hidden_bias"])
        self.grad_output_bias = double_pointer(gradients["grad_output_bias"])
        self.grad_hidden = double_pointer(gradients["grad_hidden"])

    def __reduce__(self):
        """Networks pickle by architecture and parameters (e.g. to self-play worker processes)."""
        return (_rebuild_network, (self.feature_set, self.num_trivial, self.num_symmetric,
                                   self.num_diagonal, self.num_chiral, self.num_faithful,
                                   bool(self.explicit_biases), self.get_params(),
                                   bool(self.rich_signal)))

    # ----------------------------------------------------------------- backward pass (nogil)

    cdef double backward(self, Activations act, const double *targets,
                         const unsigned char *mask, double *grad) noexcept nogil:
        cdef int ni = self.num_inputs, nh = self.num_hidden, nf = self.num_features
        cdef int i, p, o, k, f, e, h, input_index, orbit, q, a, no = self.num_outputs
        cdef double loss = 0.0, acc, z, t, g
        cdef double delta[MAX_OUTPUTS]
        cdef const double *y
        cdef const double *cell_pooled
        cdef double *cell_grad_hidden
        cdef double *row
        cdef bint any_target
        # Loss: masked cross-entropy per output, written through the pre-activation for stability;
        # its derivative with respect to the pre-activation is y - t.
        if grad == NULL:
            for i in range(act.num_cells):
                p = act.cells[i]
                for o in range(no):
                    if mask[p * no + o]:
                        z = act.pre[p * no + o]
                        loss += softplus(z) - targets[p * no + o] * z
            return loss
        memset(self.grad_hidden_table, 0, NUM_OFFSETS * ni * nh * sizeof(double))
        memset(self.grad_shortcut_table, 0, NUM_OFFSETS * ni * no * sizeof(double))
        memset(self.grad_output_weights, 0, nf * no * sizeof(double))
        memset(self.grad_hidden_bias, 0, nh * sizeof(double))
        memset(self.grad_output_bias, 0, no * sizeof(double))
        memset(self.grad_hidden, 0, act.num_locs * nh * sizeof(double))
        for i in range(act.num_cells):
            p = act.cells[i]
            y = act.outputs + p * no
            any_target = False
            for o in range(no):
                if mask[p * no + o]:
                    t = targets[p * no + o]
                    z = act.pre[p * no + o]
                    loss += softplus(z) - t * z
                    delta[o] = y[o] - t
                    any_target = True
                else:
                    delta[o] = 0.0
            if not any_target:
                continue
            for o in range(no):
                self.grad_output_bias[o] += delta[o]
            for k in range(NUM_OFFSETS):
                q = p + act.offsets[k]
                for a in range(act.num_active[q] if self.multi_hot else 1):
                    input_index = act.active[q * MAX_ACTIVE + a] if self.multi_hot else act.inputs[q]
                    row = self.grad_shortcut_table + (k * ni + input_index) * no
                    for o in range(no):
                        row[o] += delta[o]
            cell_pooled = act.pooled + p * nf
            cell_grad_hidden = self.grad_hidden + p * nh
            for f in range(nf):
                row = self.grad_output_weights + f * no
                acc = 0.0
                for o in range(no):
                    row[o] += cell_pooled[f] * delta[o]
                    acc += self.output_weights[f * no + o] * delta[o]
                for e in range(self.pool_start[f], self.pool_start[f + 1]):
                    cell_grad_hidden[act.pool_delta[e]] += self.pool_sign[e] * acc
        # Through tanh into the input->hidden table (border hidden units are constant zero).
        for i in range(act.num_cells):
            p = act.cells[i]
            cell_grad_hidden = self.grad_hidden + p * nh
            for h in range(nh):
                g = act.hidden[p * nh + h]
                cell_grad_hidden[h] *= 1.0 - g * g
                self.grad_hidden_bias[h] += cell_grad_hidden[h]
            for k in range(NUM_OFFSETS):
                q = p + act.offsets[k]
                for a in range(act.num_active[q] if self.multi_hot else 1):
                    input_index = act.active[q * MAX_ACTIVE + a] if self.multi_hot else act.inputs[q]
                    row = self.grad_hidden_table + (k * ni + input_index) * nh
                    for h in range(nh):
                        row[h] += cell_grad_hidden[h]
        # Contract the dense-kernel gradients onto the free parameters (the transpose of _expand).
        for k in range(NUM_OFFSETS):
            orbit = self.orbit_of_offset[k]
            for input_index in range(ni):
                for o in range(no):
                    grad[self.shortcut_start + (o * ni + input_index) * 3 + orbit] += \
                        self.grad_shortcut_table[(k * ni + input_index) * no + o]
        for f in range(nf):
            for o in range(no):
                grad[self.output_start + o * nf + f] += self.grad_output_weights[f * no + o]
            for e in range(self.pool_start[f], self.pool_start[f + 1]):
                k = self.pool_offset[e]
                h = self.pool_hidden[e]
                for input_index in range(ni):
                    grad[self.input_start + f * ni + input_index] += \
                        self.pool_sign[e] * self.grad_hidden_table[(k * ni + input_index) * nh + h]
        if self.explicit_biases:
            for o in range(no):
                grad[self.bias_start + o] += self.grad_output_bias[o]
            for h in range(self.num_trivial):
                grad[self.bias_start + no + h] += self.grad_hidden_bias[h]
        return loss

    # ----------------------------------------------------------------- Python API: raw inputs

    def _load_inputs(self, Activations act, inputs):
        """Validate a raw input array (one active input index per lattice cell, or for a multi-hot
        set a row of active inputs per cell padded with -1) and load it."""
        values = np.asarray(inputs)
        if self.multi_hot:
            return self._load_active_inputs(act, values)
        if values.ndim != 1 or not np.issubdtype(values.dtype, np.integer):
            raise ValueError(f"inputs must be a 1-D integer array, got {values.dtype} "
                             f"shape {values.shape}")
        stride = int(round(len(values) ** 0.5))
        size = stride - 2
        if stride * stride != len(values) or not MIN_SIZE <= size <= MAX_SIZE:
            raise ValueError(f"inputs has {len(values)} cells: not a padded board of size "
                             f"{MIN_SIZE}..{MAX_SIZE}")
        if len(values) and (values.min() < 0 or values.max() >= self.num_inputs):
            raise ValueError(f"input indices must be in 0..{self.num_inputs - 1}")
        self.prepare(act, size)
        cdef int[::1] cells = np.ascontiguousarray(values, dtype=np.intc)
        cdef int p, v
        for p in range(act.num_locs):
            v = cells[p]
            if act.on_board[p] == (v == INPUT_OFF_BOARD) and self.feature_set == "isn14":
                raise ValueError(f"cell {p}: the off-board input must be active exactly on the border")
            act.inputs[p] = v
            if self.feature_set != "isn14" or v >= INPUT_EMPTY:
                act.cell_state[p] = C_EMPTY
            elif v >= INPUT_BLACK:
                act.cell_state[p] = C_BLACK
            else:
                act.cell_state[p] = C_WHITE
        return size

    def _load_active_inputs(self, Activations act, values):
        if values.ndim != 2 or not np.issubdtype(values.dtype, np.integer):
            raise ValueError(f"inputs of the multi-hot set {self.feature_set} must be a 2-D "
                             f"integer array (cells, active inputs padded with -1), got "
                             f"{values.dtype} shape {values.shape}")
        if not 1 <= values.shape[1] <= MAX_ACTIVE:
            raise ValueError(f"inputs must have 1..{MAX_ACTIVE} columns, not {values.shape[1]}")
        stride = int(round(len(values) ** 0.5))
        size = stride - 2
        if stride * stride != len(values) or not MIN_SIZE <= size <= MAX_SIZE:
            raise ValueError(f"inputs has {len(values)} cells: not a padded board of size "
                             f"{MIN_SIZE}..{MAX_SIZE}")
        stones = values[:, 0]
        if stones.min() < 0 or stones.max() > INPUT_OFF_BOARD:
            raise ValueError(f"the first input of every cell must be an isn14 input "
                             f"0..{INPUT_OFF_BOARD}")
        rest = values[:, 1:]
        if np.any((rest != -1) & ((rest <= INPUT_OFF_BOARD) | (rest >= self.num_inputs))):
            raise ValueError(f"further inputs must be -1 (none) or in "
                             f"{INPUT_OFF_BOARD + 1}..{self.num_inputs - 1}")
        self.prepare(act, size)
        on_board = np.array([act.on_board[p] for p in range(act.num_locs)], dtype=bool)
        if np.any(on_board == (stones == INPUT_OFF_BOARD)):
            raise ValueError("the off-board input must be active exactly on the border")
        if np.any(~on_board & np.any(rest != -1, axis=1)):
            raise ValueError("border cells have no inputs but the off-board one")
        cdef int[:, ::1] cells = np.ascontiguousarray(values, dtype=np.intc)
        cdef int p, a, v, n, width = values.shape[1]
        for p in range(act.num_locs):
            v = cells[p, 0]
            act.inputs[p] = v
            act.cell_state[p] = (C_EMPTY if v >= INPUT_EMPTY else
                                 C_BLACK if v >= INPUT_BLACK else C_WHITE)
            n = 0
            for a in range(width):
                if cells[p, a] >= 0:
                    act.active[p * MAX_ACTIVE + n] = cells[p, a]
                    n += 1
            act.num_active[p] = n
        return size

    def _inputs_array(self, Activations act):
        """The inputs of act as forward() takes them: (num_locs,) one-hot, or for a multi-hot set
        (num_locs, max_active) active inputs padded with -1."""
        cdef int[::1] view = <int[:act.num_locs]> act.inputs
        if not self.multi_hot:
            return np.array(view, copy=True)
        result = np.full((act.num_locs, self.max_active), -1, dtype=np.intc)
        cdef int[:, ::1] out = result
        cdef int p, a
        for p in range(act.num_locs):
            for a in range(act.num_active[p]):
                out[p, a] = act.active[p * MAX_ACTIVE + a]
        return result

    def _outputs_array(self, Activations act):
        cdef double[:, ::1] view = <double[:act.num_locs, :self.num_outputs]> act.outputs
        return np.array(view, copy=True)

    def forward(self, inputs, want_hidden=False):
        """Outputs (num_locs, 7) of the network for a raw input array: one active input index per
        cell of the padded lattice (for isn14: 0..5 white C1..C6, 6..11 black C1..C6, 12 empty,
        13 off-board, side to move as Black). Off-board rows are zero. With want_hidden, also the
        hidden activations (num_locs, num_hidden)."""
        act = self.scratch
        self._load_inputs(act, inputs)
        with nogil:
            self.forward_all(act, 0.0, 1.0)
        outputs = self._outputs_array(act)
        if not want_hidden:
            return outputs
        cdef double[:, ::1] hidden = <double[:act.num_locs, :max(self.num_hidden, 1)]> act.hidden
        return outputs, np.array(hidden, copy=True)[:, :self.num_hidden]

    def _targets_and_mask(self, Activations act, targets, mask):
        t = np.ascontiguousarray(targets, dtype=np.float64)
        m = np.ascontiguousarray(mask, dtype=np.uint8)
        shape = (act.num_locs, self.num_outputs)
        if t.shape != shape or m.shape != shape:
            raise ValueError(f"targets and mask must have shape {shape}, got {t.shape} and {m.shape}")
        if np.any(m.astype(bool) & ~((t >= 0.0) & (t <= 1.0))):
            raise ValueError("targets must be in [0, 1] wherever the mask is set")
        return t, m

    def loss(self, inputs, targets, mask):
        """Summed cross-entropy of the outputs against targets (num_locs, 7) in [0, 1], counting
        only entries where mask (num_locs, 7) is true (Table IV's blanks are false)."""
        act = self.scratch
        self._load_inputs(act, inputs)
        t, m = self._targets_and_mask(act, targets, mask)
        cdef const double[:, ::1] t_view = t
        cdef const unsigned char[:, ::1] m_view = m
        cdef double result
        with nogil:
            self.forward_all(act, 0.0, 1.0)
            result = self.backward(act, &t_view[0, 0], &m_view[0, 0], NULL)
        return result

    def loss_and_gradient(self, inputs, targets, mask, grad):
        """Forward and backward pass: returns the loss of loss() and ADDS its gradient with respect
        to the parameter vector into grad (float64, shape (num_params,), caller-owned, so
        gradients of many positions can be accumulated before one update)."""
        act = self.scratch
        self._load_inputs(act, inputs)
        t, m = self._targets_and_mask(act, targets, mask)
        if not (isinstance(grad, np.ndarray) and grad.dtype == np.float64
                and grad.shape == (self.num_params,) and grad.flags.c_contiguous):
            raise ValueError(f"grad must be a C-contiguous float64 array of shape ({self.num_params},)")
        cdef double[::1] g_view = grad
        cdef const double[:, ::1] t_view = t
        cdef const unsigned char[:, ::1] m_view = m
        cdef double result
        with nogil:
            self.forward_all(act, 0.0, 1.0)
            result = self.backward(act, &t_view[0, 0], &m_view[0, 0], &g_view[0])
        return result


def _rebuild_network(feature_set, trivial, symmetric, diagonal, chiral, faithful, explicit_biases,
                     params, rich_signal=False):
    network = Network(feature_set, trivial, symmetric, diagonal, chiral, faithful, explicit_biases,
                      rich_signal)
    network.set_params(params)
    return network
