"""The conv policy net's forward pass at play, with its 3x3 layers as Winograd convolutions
F(4x4, 3x3) (Lavin & Gray 2016): each 4x4 block of outputs comes from a 6x6 block of inputs
with 36 products a map pair instead of 144, so a layer is 36 small matrix products (one for each
point of the transformed block) plus cheap transforms, a third of im2col's arithmetic. The first
(5x5) layer and the heads stay PolicyNet's own (engine/nets/policy.py).

The transformed kernels are computed once, when the forward pass is made: it belongs to a net
whose weights no longer change (a player's or an evaluation's), not to a training run. The
logits equal PolicyNet.forward's to float32 rounding.
"""
import numpy as np

from engine.nets.policy import convolution

TILE = 4                # outputs a block side
WINDOW = TILE + 2       # inputs a block side
CHUNK = 8               # positions a batch: the 8 symmetries of one position in one pass

# Lavin & Gray's F(4x4, 3x3): input transform B^T, kernel transform G, output transform A^T
_BT = np.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
                [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]], np.float64)
_G = np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
               [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]], np.float64)
_AT = np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0],
                [0, 1, -1, 8, -8, 1]], np.float64)
# both sides of a block at once: (36, 36) and (16, 36) over the block's points row by row
_INPUT = np.kron(_BT, _BT).astype(np.float32)
_OUTPUT = np.kron(_AT, _AT).astype(np.float32)


def kernel_transform(w):
    """(out, in, 3, 3) kernels as (36, in, out): G w G^T for each map pair."""
    u = np.einsum("ai,okij,bj->abko", _G, w.astype(np.float64), _G)
    return np.ascontiguousarray(u.reshape(WINDOW * WINDOW, w.shape[1], w.shape[0]).astype(np.float32))


def conv3x3(x, kernels, bias):
    """Same-size 3x3 convolution of NHWC x (B, S, S, in) with kernel_transform()ed kernels and
    bias (out,): (B, S, S, out)."""
    batch, size, _, channels = x.shape
    blocks = -(-size // TILE)
    padded = np.zeros((batch, TILE * blocks + 2, TILE * blocks + 2, channels), np.float32)
    padded[:, 1:1 + size, 1:1 + size] = x
    sb, sr, sc, sm = padded.strides
    windows = np.lib.stride_tricks.as_strided(
        padded, (WINDOW, WINDOW, batch, blocks, blocks, channels),
        (sr, sc, sb, TILE * sr, TILE * sc, sm), writeable=False)
    transformed = (_INPUT @ windows.reshape(WINDOW * WINDOW, -1)).reshape(WINDOW * WINDOW, -1, channels)
    products = np.matmul(transformed, kernels)
    out = kernels.shape[-1]
    blocks_out = (_OUTPUT @ products.reshape(WINDOW * WINDOW, -1)).reshape(
        TILE, TILE, batch, blocks, blocks, out)
    full = blocks_out.transpose(2, 3, 0, 4, 1, 5).reshape(batch, TILE * blocks, TILE * blocks, out)
    return full[:, :size, :size] + bias


class WinogradForward:
    """net.forward for a conv PolicyNet whose weights stay as they are: logits (B, S*S + 1) of
    feature planes (B, planes, S, S)."""

    def __init__(self, net):
        if net.architecture["kind"] != "conv":
            raise ValueError(f"Winograd convolutions are for conv nets, not {net.architecture['kind']!r}")
        self.net = net
        self.kernels = {layer: kernel_transform(net.params[f"conv{layer}.w"])
                        for layer in range(net.architecture["layers"])
                        if net.params[f"conv{layer}.w"].shape[-1] == 3}

    def __call__(self, planes):
        if len(planes) > CHUNK:
            return np.concatenate([self(planes[i:i + CHUNK]) for i in range(0, len(planes), CHUNK)])
        p = self.net.params
        hidden = np.ascontiguousarray(np.moveaxis(planes.astype(np.float32, copy=False), 1, -1))
        for layer in range(self.net.architecture["layers"]):
            bias = p[f"conv{layer}.b"]
            if layer in self.kernels:
                pre = conv3x3(hidden, self.kernels[layer], bias)
            else:
                pre, _ = convolution(hidden, p[f"conv{layer}.w"], bias)
            hidden = np.maximum(pre, 0.0)
        return self.net.heads(hidden)


def play_forward(net):
    """The fastest forward pass of a net that will not change: Winograd for conv nets."""
    return WinogradForward(net) if net.architecture["kind"] == "conv" else net.forward
