"""The conv policy net's forward pass at play, with its convolutions as Winograd's minimal
filtering F(4x4, r x r) (Lavin & Gray 2016): each 4x4 block of outputs comes from a
(r + 3) x (r + 3) block of inputs with (r + 3)^2 products a map pair, against 16 r^2 for im2col
(36 against 144 for a 3x3 layer, 64 against 400 for the 5x5 first layer). A layer is then one
small matrix product for each point of the transformed block, plus cheap transforms. The heads
stay PolicyNet's own (engine/nets/policy.py).

The transforms are built from their interpolation points (Toom-Cook): A^T and G from the points,
B^T solved so that the three give the convolution exactly. The transformed kernels are computed
once, when the forward pass is made: it belongs to a net whose weights no longer change (a
player's or an evaluation's), not to a training run. The logits equal PolicyNet.forward's to
float32 rounding.
"""
import functools

import numpy as np

from engine.nets.policy import convolution

TILE = 4                # outputs a block side
CHUNK = 2               # positions a pass: larger batches cost more a position (fresh pages for their
                        # blocks, as with im2col in PolicyNet.forward), smaller ones more calls
# interpolation points (and infinity) for F(4, 3) and F(4, 5): small, so float32 stays exact enough
POINTS = {3: (0, 1, -1, 2, -2), 5: (0, 1, -1, 2, -2, 0.5, -0.5)}


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
        # both sides of a block at once, over its points row by row
        self.inputs = np.kron(bt, bt).astype(np.float32)
        self.outputs = np.kron(at, at).astype(np.float32)

    def kernels(self, w):
        """(out, in, r, r) kernels as (window^2, in, out): G w G^T for each map pair."""
        u = np.einsum("ai,okij,bj->abko", self.g, w.astype(np.float64), self.g)
        return np.ascontiguousarray(u.reshape(self.window ** 2, w.shape[1], w.shape[0]).astype(np.float32))

    def convolve(self, x, kernels, bias):
        """Same-size convolution of NHWC x (B, S, S, in) with kernels() and bias (out,):
        (B, S, S, out)."""
        batch, size, _, channels = x.shape
        n, pad, blocks = self.window, self.r // 2, -(-size // TILE)
        padded = np.zeros((batch, TILE * blocks + n - TILE, TILE * blocks + n - TILE, channels), np.float32)
        padded[:, pad:pad + size, pad:pad + size] = x
        sb, sr, sc, sm = padded.strides
        windows = np.lib.stride_tricks.as_strided(
            padded, (n, n, batch, blocks, blocks, channels), (sr, sc, sb, TILE * sr, TILE * sc, sm),
            writeable=False)
        transformed = (self.inputs @ windows.reshape(n * n, -1)).reshape(n * n, -1, channels)
        products = np.matmul(transformed, kernels)
        out = kernels.shape[-1]
        blocks_out = (self.outputs @ products.reshape(n * n, -1)).reshape(
            TILE, TILE, batch, blocks, blocks, out)
        full = blocks_out.transpose(2, 3, 0, 4, 1, 5).reshape(batch, TILE * blocks, TILE * blocks, out)
        return full[:, :size, :size] + bias


@functools.lru_cache(maxsize=None)
def transform(r):
    return Transform(r)


class WinogradForward:
    """net.forward for a conv PolicyNet whose weights stay as they are: logits (B, S*S + 1) of
    feature planes (B, planes, S, S)."""

    def __init__(self, net):
        if net.architecture["kind"] != "conv":
            raise ValueError(f"Winograd convolutions are for conv nets, not {net.architecture['kind']!r}")
        self.net = net
        self.layers = []
        for layer in range(net.architecture["layers"]):
            w = net.params[f"conv{layer}.w"]
            fast = transform(w.shape[-1]) if w.shape[-1] in POINTS else None
            self.layers.append((fast, fast.kernels(w) if fast else None))

    def __call__(self, planes):
        if len(planes) > CHUNK:
            return np.concatenate([self(planes[i:i + CHUNK]) for i in range(0, len(planes), CHUNK)])
        p = self.net.params
        hidden = np.ascontiguousarray(np.moveaxis(planes.astype(np.float32, copy=False), 1, -1))
        for layer, (fast, kernels) in enumerate(self.layers):
            bias = p[f"conv{layer}.b"]
            if fast:
                pre = fast.convolve(hidden, kernels, bias)
            else:
                pre, _ = convolution(hidden, p[f"conv{layer}.w"], bias)
            hidden = np.maximum(pre, 0.0)
        return self.net.heads(hidden)


def play_forward(net):
    """The fastest forward pass of a net that will not change: Winograd for conv nets."""
    return WinogradForward(net) if net.architecture["kind"] == "conv" else net.forward
