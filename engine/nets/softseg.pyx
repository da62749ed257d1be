# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""NeuroGo 3's soft-segmentation network (Enzenberger 2003, section 2), kosumi's second evaluator:
`SoftSegNetwork`, the network callers construct, and the names they use.

The network is four modules, each below the next:
  softseg_layout.pxd      the lattice, the 3x3 fields, the point types and the 21 output columns
  softseg_pathfinder.pyx  the global connectivity (section 2.5): Dijkstra from every point, and
                          its repair for 1-ply successors
  softseg_forward.pyx     SoftSegForward: the parameters, the inputs and the forward pass, whole
                          or incremental for successors (sections 2.2-2.6)
  softseg.pyx             SoftSegNetwork(SoftSegForward): the training, backward() and the
                          Python calls of the trainer (this module)
beside softseg_targets.pyx, the rich reinforcement signal the training targets come from (section
2.1). This module also gives their public names, so that `softseg.X` reaches all of them.

Reading order: softseg_forward.pyx (SoftSegForward.forward_all()), then backward() here, then
loss_and_gradient(), train_position() and train_game(); softseg_targets.pyx for the targets.

Choices where the paper leaves room: 3.1 the connectivity is not differentiated (the paper: "did
not take part in the backpropagation"): the evaluation layer's error reaches the second hidden and
simple-eye units, the local-connection units learn from their own targets only. The others are
in the docstrings of the modules above.

A SoftSegNetwork keeps its activations in per-object buffers: use one per thread.
"""

import numpy as np

from libc.math cimport log
from libc.stdlib cimport malloc, free
from libc.string cimport memset, memcpy

from engine.nets.softseg_layout cimport (NUM_TYPES, NUM_FIELDS, NUM_SOFTSEG_OUTPUTS, OUT_EYE,
                                         OUT_LOCAL, OUT_EVAL, field_dx, field_dy)
from engine.nets.softseg_forward cimport SS_MAX_LEVEL2
from engine.nets.softseg_targets cimport swap_outputs
from engine.rules.types cimport MAX_LOCS

from engine.nets.softseg_forward import (DEFAULT_HIDDEN1, DEFAULT_HIDDEN2, DEFAULT_INIT_SCALE,
                                         DEFAULT_INTERVALS, FEATURE_SETS, RAW, RAW_VERSION,
                                         feature_set_features, feature_set_version)
from engine.nets.softseg_pathfinder import DEFAULT_CUTOFF, pathfinder_reference
from engine.nets.softseg_targets import (all_alive, events_of, eyes_and_components, own_eyes,
                                         rich_signal, swap_frame, swap_frame_events,
                                         swap_frame_mask)

# ---------------------------------------------------------------------------------------------
# Names and constants for Python code (softseg_layout.pxd)

FIELD_VECTORS = tuple((field_dx(f), field_dy(f)) for f in range(NUM_FIELDS))   # (east, north)
TYPE_NAMES = ("empty corner", "empty edge next to corner", "other empty edge",
              "empty diagonal from corner", "other empty second line", "empty line 3+",
              "black stone", "white stone")
NUM_OUTPUT_COLUMNS = NUM_SOFTSEG_OUTPUTS
OUTPUT_EYE = OUT_EYE
OUTPUT_LOCAL = OUT_LOCAL
OUTPUT_EVAL = OUT_EVAL


cdef inline double cross_entropy(double y, double t) noexcept nogil:
    if y < 1e-12:
        y = 1e-12
    elif y > 1.0 - 1e-12:
        y = 1.0 - 1e-12
    return -(t * log(y) + (1.0 - t) * log(1.0 - y))


cdef class SoftSegNetwork(SoftSegForward):
    """NeuroGo 3's network: SoftSegForward's forward pass (its arguments: feature_set, hidden1,
    hidden2, intervals, cutoff) and its training."""

    def __cinit__(self, *args, **kwargs):
        # SoftSegForward.__cinit__ has run with the same arguments: the sizes are set
        self.d_h1 = <double *> malloc(MAX_LOCS * self.hidden1 * sizeof(double))
        self.d_level2 = <double *> malloc(MAX_LOCS * self.num_level2 * sizeof(double))
        if self.d_h1 == NULL or self.d_level2 == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.d_h1)
        free(self.d_level2)

    def __reduce__(self):
        """Networks pickle by their sizes and parameters (e.g. a search thread's copy)."""
        return _rebuild, (self.feature_set, self.hidden1, self.hidden2, self.num_intervals,
                          self.cutoff, self.get_params())

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
        cdef const int *reach_loc = self.paths.reach_loc
        cdef const int *reach_interval = self.paths.reach_interval
        cdef const int *reach_count = self.paths.reach_count
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
                stop = first + reach_count[c * N + i]
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
                stop = first + reach_count[c * N + i]
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


def _rebuild(feature_set, hidden1, hidden2, intervals, cutoff, params):
    network = SoftSegNetwork(feature_set, hidden1, hidden2, intervals, cutoff)
    network.set_params(params)
    return network
