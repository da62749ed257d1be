"""The policy trainer's backends: the same net (engine/nets/policy.py's parameter layout) and the
same SGD with momentum, in numpy or in PyTorch; each keeps the weights' moving average beside them.

- `numpy`: PolicyNet.forward/backward. Always available; the tests train with it.
- `torch`: an optional extra (`pip install -e '.[train]'`), chosen by default when it imports,
  because it trains many times faster on the same cores (measured in the notebook,
  docs/notebook/policy.md); its step may take the stacks' convolutions by Winograd
  (engine/training/policywinograd.py). Inference never needs it.

A backend: step(planes, moves, rate, targets) -> (loss, top1); start_average() (from the state's
average, else from the weights; `average` is None until then) and update_average(decay) after a
step; logits(planes, averaged)
and export(averaged) -> PolicyNet, of the weights or their average; state() and load_state(arrays)
for the run's state.npz.
"""
import contextlib
import sys

import numpy as np

from engine.nets.policy import STACKS, edge_map, shortcuts, softmax
from engine.nets.winograd import PRECISIONS


class NumpyBackend:
    """SGD with momentum on PolicyNet's own gradient."""
    name = "numpy"

    def __init__(self, net, settings):
        self.net, self.settings = net, settings
        self.velocity = {name: np.zeros_like(value) for name, value in net.params.items()}
        self.average = None

    def step(self, planes, moves, rate, targets=None):
        logits, cache = self.net.forward(planes, keep=True)
        probabilities = softmax(logits)
        rows = np.arange(len(moves))
        loss = float(-np.log(np.maximum(probabilities[rows, moves], 1e-30)).mean())
        top1 = float((logits.argmax(axis=1) == moves).mean())
        dlogits = probabilities.astype(np.float32)
        if targets is None:
            dlogits[rows, moves] -= 1.0
        else:
            dlogits -= targets
        dlogits /= len(moves)
        grads = self.net.backward(cache, dlogits)
        for name, grad in grads.items():
            if self.settings.weight_decay:
                grad = grad + self.settings.weight_decay * self.net.params[name]
            self.velocity[name] = self.settings.momentum * self.velocity[name] - rate * grad
            self.net.params[name] = self.net.params[name] + self.velocity[name]
        return loss, top1

    def start_average(self):
        if self.average is None:
            self.average = {name: value.copy() for name, value in self.net.params.items()}

    def update_average(self, decay):
        for name, value in self.net.params.items():
            self.average[name] += np.float32(1.0 - decay) * (value - self.average[name])

    def logits(self, planes, averaged=False):
        return self.export(averaged).forward(planes)

    def export(self, averaged=False):
        if not averaged:
            return self.net
        return self.net.with_params({name: value.copy() for name, value in self.average.items()})

    def state(self):
        kinds = {"velocity": self.velocity, "average": self.average or {}}
        return {f"{kind}/{name}": value for kind, arrays in kinds.items() for name, value in arrays.items()}

    def load_state(self, arrays):
        for name in self.velocity:
            self.velocity[name] = arrays[f"velocity/{name}"].astype(np.float32)
        if self.settings.average_decay and all(f"average/{name}" in arrays for name in self.velocity):
            self.average = {name: arrays[f"average/{name}"].astype(np.float32) for name in self.velocity}


CONVOLUTIONS = ("auto", "winograd", "direct")


def use_winograd(convolutions, precision, kind):
    """Whether the torch step takes its convolutions by Winograd (engine/training/policywinograd.py)
    or torch's own: `auto` takes Winograd for a conv net in float32, where it is the faster."""
    if convolutions not in CONVOLUTIONS:
        raise ValueError(f"convolutions {convolutions!r}: choose from {', '.join(CONVOLUTIONS)}")
    if convolutions == "winograd" and (precision != "fp32" or kind not in STACKS):
        raise ValueError(f"Winograd convolutions are for conv and res nets in fp32, not a {kind} net "
                         f"in {precision}: take --convolutions direct")
    return convolutions == "winograd" or (convolutions == "auto" and precision == "fp32" and kind in STACKS)


def native_bf16(torch):
    """Whether oneDNN runs bfloat16 natively on this CPU (AVX-512 BF16 or AMX): elsewhere it
    emulates it, and a bf16 step of the 10 x 64 net took 15 times a float32 one (AVX2 only)."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):   # an older or a newer torch without the query
        return torch.backends.cpu.get_cpu_capability() not in ("DEFAULT", "VSX", "ZVECTOR", "AVX2")


class TorchBackend:
    """The same net and SGD in PyTorch, on the CPU.

    precision "bf16" runs the training step's convolutions in bfloat16 under autocast (the
    weights, their momentum and the loss stay float32): CPUs with AVX-512 BF16 take these steps
    much faster. Evaluation stays float32, so held-out numbers do not depend on it.
    convolutions: see use_winograd(); Winograd's layers take as many threads as torch."""
    name = "torch"

    def __init__(self, net, settings, threads=None, precision="fp32", convolutions="auto"):
        import torch
        self.torch = torch
        if threads:
            torch.set_num_threads(threads)
        if precision not in PRECISIONS:
            raise ValueError(f"precision {precision!r}: choose from {', '.join(PRECISIONS)}")
        if precision == "bf16" and not native_bf16(torch):
            print(f"kosumi-train policy: warning: this CPU has no native bfloat16 (torch finds "
                  f"{torch.backends.cpu.get_cpu_capability()}); --precision bf16 is emulated "
                  f"there, many times slower than fp32", file=sys.stderr)
        self.precision = precision
        self.net, self.settings = net, settings
        self.winograd = use_winograd(convolutions, precision, net.architecture["kind"])
        self.passes = contextlib.nullcontext      # what the forward and backward passes run in
        if self.winograd:
            from engine.training.policywinograd import KERNELS, WinogradLayer, WinogradStep
            step = WinogradStep(torch.get_num_threads())
            kernels = [net.params[f"conv{layer}.w"].shape[-1] for layer in range(net.architecture["layers"])]
            self.winograd_layers = [WinogradLayer(r, layer, step) if r in KERNELS else None
                                    for layer, r in enumerate(kernels)]
            self.passes = step.one_blas_thread
        # oneDNN's CPU convolutions run faster on channels-last memory than on the default
        # layout; the Sutskever & Nair net reshapes its boards and keeps the default.
        self.channels_last = net.architecture["kind"] in STACKS
        self.params = {name: torch.nn.Parameter(self._layout(torch.from_numpy(value.copy())))
                       for name, value in net.params.items()}
        self.optimizer = torch.optim.SGD(list(self.params.values()), lr=0.1,
                                         momentum=settings.momentum, weight_decay=settings.weight_decay)
        self.average = None

    def _layout(self, tensor):
        if self.channels_last and tensor.dim() == 4:
            return tensor.contiguous(memory_format=self.torch.channels_last)
        return tensor

    def _forward(self, planes, p):
        """The logits of the net with parameters p (self.params or self.average)."""
        return self._policy_logits(self._trunk(planes, p), p)

    def _trunk(self, planes, p):
        """The last hidden maps (B, C, S, S) of the net with parameters p."""
        torch, functional = self.torch, self.torch.nn.functional
        architecture = self.net.architecture
        x = self._layout(torch.from_numpy(planes))
        batch, _, size, _ = x.shape
        if architecture["kind"] == "sn2008":
            boards = architecture["boards"]
            per_board = x.reshape(batch * boards, -1, size, size)
            pre = functional.conv2d(per_board, p["hidden.w"], p["hidden.b"],
                                    padding=architecture["kernel"] // 2)
            if "hidden.map" in p:
                index = torch.from_numpy(edge_map(size, p["hidden.map"].shape[-1]))
                pre = pre + p["hidden.map"][:, index][:, :, index][None]
            hidden = torch.sigmoid(pre)
            hidden = hidden.reshape(batch, -1, size, size)
        else:
            hidden, outputs, adds = x, [], shortcuts(architecture)
            for layer in range(architecture["layers"]):
                weight, bias = p[f"conv{layer}.w"], p[f"conv{layer}.b"]
                shortcut = outputs[adds[layer]] if layer in adds else None
                fast = self.winograd and self.winograd_layers[layer]
                if fast:
                    # the transforms take NHWC, which is channels-last memory: no copy either way
                    nhwc = None if shortcut is None else shortcut.permute(0, 2, 3, 1).contiguous()
                    hidden = fast(hidden.permute(0, 2, 3, 1).contiguous(), weight, bias, nhwc).permute(0, 3, 1, 2)
                else:
                    pre = functional.conv2d(hidden, weight, bias, padding=weight.shape[-1] // 2)
                    hidden = torch.relu(pre if shortcut is None else pre + shortcut)
                outputs.append(hidden)
        return hidden

    def _policy_logits(self, hidden, p):
        """(B, S*S + 1): the points' 1x1 (sn2008: 5x5) convolution, pass from the maps' mean."""
        torch, functional = self.torch, self.torch.nn.functional
        batch, _, size, _ = hidden.shape
        points = functional.conv2d(hidden, p["output.w"], p["output.b"],
                                   padding=p["output.w"].shape[-1] // 2).reshape(batch, size * size)
        pass_logit = hidden.mean(dim=(2, 3)) @ p["pass.w"] + p["pass.b"]
        return torch.cat([points, pass_logit[:, None]], dim=1)

    def step(self, planes, moves, rate, targets=None, **extra):
        """One update; (the move's loss, top-1). extra: what a subclass's _extra_objective takes
        (the judging net's targets)."""
        torch = self.torch
        optimizers = self._optimizers_at(rate)
        with self.passes():
            bfloat16 = torch.autocast("cpu", dtype=torch.bfloat16) if self.precision == "bf16" \
                else contextlib.nullcontext()
            with bfloat16:
                outputs = self._outputs(planes, self.params)
            logits = outputs[0].float()
            played = torch.from_numpy(moves)
            loss = torch.nn.functional.cross_entropy(logits, played)
            objective = loss if targets is None else \
                torch.nn.functional.cross_entropy(logits, torch.from_numpy(targets))
            objective = objective + self._extra_objective(outputs, len(moves), **extra)
            for optimizer in optimizers:
                optimizer.zero_grad()
            objective.backward()
            for optimizer in optimizers:
                optimizer.step()
        top1 = float((logits.argmax(dim=1) == played).float().mean())
        return float(loss.detach()), top1

    def _optimizers_at(self, rate):
        """The optimizers of a step, their rates set for it."""
        for group in self.optimizer.param_groups:
            group["lr"] = rate
        return [self.optimizer]

    def _outputs(self, planes, p):
        """What a step's losses read, the move's logits first."""
        return (self._forward(planes, p),)

    def _extra_objective(self, outputs, batch):
        """Losses beside the move's (none for a policy net)."""
        return 0.0

    def start_average(self):
        if self.average is None:
            self.average = {name: param.detach().clone() for name, param in self.params.items()}

    def update_average(self, decay):
        with self.torch.no_grad():
            for name, param in self.params.items():
                self.average[name].lerp_(param, 1.0 - decay)

    def logits(self, planes, averaged=False):
        with self.torch.no_grad(), self.passes():
            return self._forward(planes, self.average if averaged else self.params).numpy()

    def export(self, averaged=False):
        params = {name: value.detach().numpy().copy()
                  for name, value in (self.average if averaged else self.params).items()}
        if averaged:
            return self.net.with_params(params)
        self.net.params = params
        return self.net

    def state(self):
        state = {f"velocity/{name}": self.optimizer.state[param]["momentum_buffer"].numpy().copy()
                 for name, param in self.params.items()
                 if param in self.optimizer.state and "momentum_buffer" in self.optimizer.state[param]}
        for name, value in (self.average or {}).items():
            state[f"average/{name}"] = value.numpy().copy()
        return state

    def load_state(self, arrays):
        for name, param in self.params.items():
            key = f"velocity/{name}"
            if key in arrays:
                velocity = self.torch.from_numpy(arrays[key].copy())
                self.optimizer.state[param]["momentum_buffer"] = self._layout(velocity)
        if self.settings.average_decay and all(f"average/{name}" in arrays for name in self.params):
            self.average = {name: self._layout(self.torch.from_numpy(arrays[f"average/{name}"].copy()))
                            for name in self.params}


def torch_available():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def make_backend(name, net, settings, threads=None, precision="fp32", convolutions="auto"):
    if name == "auto":
        name = "torch" if torch_available() else "numpy"
    if name == "torch":
        if not torch_available():
            raise ValueError("backend torch: PyTorch is not installed (pip install -e '.[train]')")
        return TorchBackend(net, settings, threads, precision, convolutions)
    if name == "numpy":
        if precision != "fp32":
            raise ValueError(f"precision {precision}: only the torch backend has it")
        if convolutions == "winograd":
            raise ValueError("convolutions winograd: only the torch backend has them")
        return NumpyBackend(net, settings)
    raise ValueError(f"unknown backend {name!r}: choose auto, torch or numpy")
