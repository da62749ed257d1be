"""The conv and res policy nets' forward pass at play, with its convolutions as Winograd's minimal
filtering F(4x4, r x r) (Lavin & Gray 2016): each 4x4 block of outputs comes from a
(r + 3) x (r + 3) block of inputs with (r + 3)^2 products a map pair, against 16 r^2 for im2col
(36 against 144 for a 3x3 layer, 64 against 400 for the 5x5 first layer). A layer is then one
small matrix product for each point of the transformed block (engine/nets/winograd_products.pyx),
between the block transforms of engine/nets/winograd_tiles.pyx, both in C; a res net's shortcuts
are added in the output transform. The heads stay PolicyNet's own (engine/nets/policy.py).

The transforms are built from their interpolation points (Toom-Cook): A^T and G from the points,
B^T solved so that the three give the convolution exactly. The transformed kernels are computed
once, when the forward pass is made: it belongs to a net whose weights no longer change (a
player's or an evaluation's), not to a training run. The logits equal PolicyNet.forward's to
float32 rounding. In bfloat16 (precision "bf16", engine/nets/winograd_products.pyx) the products'
operands are rounded to bfloat16: the transforms magnify that rounding, several times more than in
a direct convolution, and the shipped net's logits move by about a tenth.
"""
import functools
import math
import threading

import numpy as np

from engine.nets.policy import STACKS, convolution, shortcuts
from engine.nets.winograd_products import (pack_bfloat16, point_products,
                                           point_products_bfloat16)
from engine.nets.winograd_tiles import transform_inputs, transform_outputs

TILE = 4                # outputs a block side
CHUNK = 8               # positions a pass: all of a move's symmetries at once (larger products)
# interpolation points (and infinity) for F(4, 3) and F(4, 5): small, so float32 stays exact enough
POINTS = {3: (0, 1, -1, 2, -2), 5: (0, 1, -1, 2, -2, 0.5, -0.5)}
PRECISIONS = ("fp32", "bf16")


class Transform:
    """F(TILE x TILE, r x r) for one kernel size r: (r + TILE - 1)^2 products a block."""

    def __init__(self, r):
        m, n, points = TILE, TILE + r - 1, POINTS[r]
        at, g = np.zeros((m, n)), np.zeros((n, r))
        for k, a in enumerate(points):
            at[:, k] = [a ** i for i in range(m)]
            g[k] = [a ** j / np.prod([a - b for b in points if b != a]) for j in range(r)]
        at[m - 1, n - 1] = g[n - 1, r - 1] = 1.0
        # B^T from y_i = sum_j g_j d_(i+j) for every i, j: sum_k A^T[i,k] G[k,j] B^T[k,l] = [l = i + j]
        system, wanted = np.zeros((m, r, n, n, n)), np.zeros((m, r, n))
        for i in range(m):
            for j in range(r):
                wanted[i, j, i + j] = 1.0
                for l in range(n):
                    system[i, j, l, :, l] = at[i] * g[:, j]
        bt = np.linalg.lstsq(system.reshape(m * r * n, n * n), wanted.ravel(), rcond=None)[0].reshape(n, n)
        self.r, self.window, self.g = r, n, g
        self.bt, self.at = bt.astype(np.float32), at.astype(np.float32)

    def kernels(self, w, precision="fp32"):
        """(out, in, r, r) kernels as (window^2, in, out): G w G^T for each map pair; in bf16
        packed for point_products_bfloat16."""
        u = np.einsum("ai,okij,bj->abko", self.g, w.astype(np.float64), self.g)
        u = np.ascontiguousarray(u.reshape(self.window ** 2, w.shape[1], w.shape[0]).astype(np.float32))
        return pack_bfloat16(u) if precision == "bf16" else u

    def convolve(self, x, kernels, bias, scratch, name, shortcut=None):
        """max(0, same-size convolution + bias [+ shortcut]) of NHWC x (B, S, S, in) with
        kernels() (float32, or bf16's packed uint16: bfloat16 products) and bias (maps,), into the
        scratch array called `name` (B, S, S, maps), which it returns."""
        batch, size, _, channels = x.shape
        blocks, maps = batch * (-(-size // TILE)) ** 2, len(bias)
        windows = scratch.array("windows", (self.window ** 2, blocks, channels))
        transform_inputs(x, self.bt, self.r // 2, windows)
        products = scratch.array("products", (self.window ** 2, blocks, maps))
        (point_products_bfloat16 if kernels.dtype == np.uint16 else point_products)(windows, kernels, products)
        result = scratch.array(name, (batch, size, size, maps))
        transform_outputs(products, self.at, bias, result, shortcut=shortcut)
        return result


class Scratch(threading.local):
    """A thread's arrays, kept from call to call by name: a layer's fresh pages cost more than its
    products (the search's threads each take their own). An array of a name is the front of the
    largest one asked for so far, so its contents last until the name is asked for again."""

    def __init__(self):
        self.arrays = {}

    def array(self, name, shape):
        size = math.prod(shape)
        kept = self.arrays.get(name)
        if kept is None or kept.size < size:
            kept = self.arrays[name] = np.empty(size, np.float32)
        return kept[:size].reshape(shape)


@functools.lru_cache(maxsize=None)
def transform(r):
    return Transform(r)


class WinogradForward:
    """net.forward for a conv or res PolicyNet (or the judging net, a res trunk) whose weights stay
    as they are: the net's heads (a policy net's logits (B, S*S + 1)) of feature planes
    (B, planes, S, S), its products in `precision` (PRECISIONS)."""

    def __init__(self, net, precision="fp32"):
        if net.architecture["kind"] not in STACKS:
            raise ValueError(f"Winograd convolutions are for conv and res nets (and the judging net), not "
                             f"{net.architecture['kind']!r}")
        if precision not in PRECISIONS:
            raise ValueError(f"precision {precision!r}: choose from {', '.join(PRECISIONS)}")
        self.net, self.precision, self.shortcuts = net, precision, shortcuts(net.architecture)
        self.layers = []
        for layer in range(net.architecture["layers"]):
            w, bias = net.params[f"conv{layer}.w"], net.params[f"conv{layer}.b"]
            fast = transform(w.shape[-1]) if w.shape[-1] in POINTS else None
            self.layers.append((fast, fast.kernels(w, precision) if fast else w,
                                np.ascontiguousarray(bias, np.float32)))
        self.scratch = Scratch()

    def __call__(self, planes):
        if len(planes) > CHUNK:
            return self.net.join([self(planes[i:i + CHUNK]) for i in range(0, len(planes), CHUNK)])
        hidden = np.ascontiguousarray(np.moveaxis(planes.astype(np.float32, copy=False), 1, -1))
        outputs = []
        for layer, (fast, kernels, bias) in enumerate(self.layers):
            shortcut = outputs[self.shortcuts[layer]] if layer in self.shortcuts else None
            if fast:
                # three arrays in turn: a layer reads the outputs of the two layers before it
                hidden = fast.convolve(hidden, kernels, bias, self.scratch, f"hidden{layer % 3}", shortcut)
            else:
                pre = convolution(hidden, kernels, bias)[0]
                hidden = np.maximum(pre if shortcut is None else pre + shortcut, 0.0)
            outputs.append(hidden)
        return self.net.heads(hidden)


def play_forward(net, precision="fp32"):
    """The fastest forward pass of a net that will not change: Winograd for conv and res nets,
    their products in `precision` (PRECISIONS; other nets' passes are float32's)."""
    return WinogradForward(net, precision) if net.architecture["kind"] in STACKS else net.forward


def precision_of(forward):
    """The precision of a play_forward() pass: a Winograd pass's own, fp32 for other nets'."""
    return forward.precision if isinstance(forward, WinogradForward) else "fp32"
