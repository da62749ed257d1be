"""The torch training step's 3x3 and 5x5 convolutions as Winograd's minimal filtering F(4x4, r x r),
the same arithmetic as the play-time pass (engine/nets/winograd.py), with its gradient.

A layer is the block transforms of engine/nets/winograd_tiles.pyx around one small matrix product
for each point of the transformed block; the backward pass runs the transforms' adjoints around
the products' gradients. The products go to numpy's BLAS, which on AMD processors runs these
tall, narrow products several times faster than torch's batched product; the kernels'
transform G w G^T stays in torch, so the weights' gradient comes through autograd. Run the
passes inside WinogradStep.one_blas_thread().

Activations are NHWC tensors (batch, row, col, maps), contiguous: the transforms read and write
them as they are. Every layer is followed by its ReLU, fused into the output transform with a res
net's shortcut.
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from threadpoolctl import ThreadpoolController

from engine.nets.winograd import POINTS, TILE, Scratch, transform
from engine.nets.winograd_tiles import (adjoint_inputs, adjoint_outputs, transform_inputs,
                                        transform_outputs)

KERNELS = tuple(POINTS)     # the kernel sizes with a transform; other layers take torch's own


class WinogradStep:
    """What a net's Winograd layers share: the temporaries every layer uses in turn, and the
    threads that share out each transform (by positions) and each set of products (by points of
    the block), with the BLAS held to one thread of its own: its idle threads spin for a while
    after each product, on the cores the next transform wants."""

    def __init__(self, threads):
        self.scratch = Scratch()
        self.threads = max(1, threads)
        self.pool = ThreadPoolExecutor(self.threads) if self.threads > 1 else None
        self.blas = ThreadpoolController()

    def one_blas_thread(self):
        """A context for the steps: the BLAS on one thread."""
        return self.blas.limit(limits=1, user_api="blas")

    def each_part(self, count, work):
        """work(start, stop) over `threads` parts of range(count), in the threads."""
        n = min(self.threads, count)
        parts = [(count * i // n, count * (i + 1) // n) for i in range(n)]
        if self.pool is None or len(parts) == 1:
            for start, stop in parts:
                work(start, stop)
        else:
            for future in [self.pool.submit(work, start, stop) for start, stop in parts]:
                future.result()


class WinogradLayer:
    """One layer's F(4x4, r x r): G as a torch tensor, the block transforms, and the arrays the
    step writes. A step's arrays are kept for the next step, since fresh pages of these sizes
    cost as much as the products: `saved` holds what this layer's backward pass reads, the
    step's scratch the temporaries every layer uses in turn. So a layer's output is valid until
    the next pass through this net."""

    def __init__(self, r, index, step):
        self.transform = transform(r)
        self.g = torch.from_numpy(self.transform.g.astype(np.float32))
        self.index, self.saved, self.step = index, Scratch(), step

    def kernels(self, weight):
        """(out, in, r, r) weights as (window^2, in, out) transformed kernels, differentiably."""
        out_maps, in_maps = weight.shape[0], weight.shape[1]
        u = torch.einsum("ai,okij,bj->abko", self.g, weight, self.g)
        return u.reshape(self.transform.window ** 2, in_maps, out_maps).contiguous()

    def __call__(self, x, weight, bias, shortcut=None):
        """max(0, same-size convolution of x (B, S, S, in) with weight (out, in, r, r) + bias
        [+ shortcut, an earlier layer's output (B, S, S, out)])."""
        return _WinogradConvolution.apply(x, self.kernels(weight), bias, shortcut, self)


def _blocks(start, stop, size):
    """The blocks of positions start..stop of a batch (all of them: 0, batch), on a board of `size`."""
    per_position = (-(-size // TILE)) ** 2
    return slice(start * per_position, stop * per_position)


class _WinogradConvolution(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, kernels, bias, shortcut, layer):
        t, step, (batch, size, _, channels), maps = layer.transform, layer.step, x.shape, kernels.shape[2]
        x, kernels_array, bias = x.detach().numpy(), kernels.detach().numpy(), bias.detach().numpy()
        added = None if shortcut is None else shortcut.detach().numpy()
        windows = layer.saved.array("windows", (t.window ** 2, _blocks(0, batch, size).stop, channels))
        products = step.scratch.array("products", windows.shape[:2] + (maps,))
        out = layer.saved.array("out", (batch, size, size, maps))
        step.each_part(batch, lambda start, stop: transform_inputs(
            x[start:stop], t.bt, t.r // 2, windows[:, _blocks(start, stop, size)]))
        step.each_part(len(windows), lambda start, stop: np.matmul(
            windows[start:stop], kernels_array[start:stop], out=products[start:stop]))
        step.each_part(batch, lambda start, stop: transform_outputs(
            products[:, _blocks(start, stop, size)], t.at, bias, out[start:stop],
            shortcut=None if added is None else added[start:stop]))
        ctx.layer, ctx.windows, ctx.out = layer, windows, out
        ctx.save_for_backward(kernels)
        return torch.from_numpy(out)

    @staticmethod
    def backward(ctx, grad):
        (kernels,), layer, windows, out = ctx.saved_tensors, ctx.layer, ctx.windows, ctx.out
        t, step, (batch, size) = layer.transform, layer.step, out.shape[:2]
        grad = grad.numpy()
        grad_pre = step.scratch.array("grad_pre", out.shape)
        grad_products = step.scratch.array("grad_products", windows.shape[:2] + (out.shape[3],))

        def outputs(start, stop):
            np.multiply(grad[start:stop], out[start:stop] > 0, out=grad_pre[start:stop])
            adjoint_outputs(grad_pre[start:stop], t.at, grad_products[:, _blocks(start, stop, size)])
        step.each_part(batch, outputs)
        grad_kernels = np.empty(windows.shape[:1] + (windows.shape[2], out.shape[3]), np.float32)
        step.each_part(len(windows), lambda start, stop: np.matmul(
            windows[start:stop].transpose(0, 2, 1), grad_products[start:stop], out=grad_kernels[start:stop]))
        grad_bias = torch.from_numpy(grad_pre.sum(axis=(0, 1, 2)))
        # the shortcut's gradient outlives this call, and grad_pre is the next layer's scratch
        grad_shortcut = torch.from_numpy(grad_pre.copy()) if ctx.needs_input_grad[3] else None
        grad_x = None
        if ctx.needs_input_grad[0]:
            grad_windows = step.scratch.array("grad_windows", windows.shape)
            kernels_t = kernels.numpy().transpose(0, 2, 1)
            step.each_part(len(windows), lambda start, stop: np.matmul(
                grad_products[start:stop], kernels_t[start:stop], out=grad_windows[start:stop]))
            # two arrays in turn: this layer's incoming gradient is the one above's grad_x
            grad_x = step.scratch.array(f"grad_x{layer.index % 2}", out.shape[:3] + (windows.shape[2],))
            step.each_part(batch, lambda start, stop: adjoint_inputs(
                grad_windows[:, _blocks(start, stop, size)], t.bt, t.r // 2, grad_x[start:stop]))
            grad_x = torch.from_numpy(grad_x)
        return grad_x, torch.from_numpy(grad_kernels), grad_bias, grad_shortcut, None
