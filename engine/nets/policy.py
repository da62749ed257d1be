"""The move-prediction (policy) network: a convolutional net over every point of any board size,
with a pass output, in numpy (inference, and the reference gradient that the trainer's numpy
backend and the tests use). Trained by engine/training/policytrain.py.

Architectures (the `kind` of the weight file's architecture record):
- `sn2008`, Sutskever & Nair 2008 (section 3, Figure 2): one hidden convolutional layer of
  `hidden` kernels of `kernel` x `kernel` applied with the same weights to each of the t + 1
  boards of the `sn2008` feature set, logistic units, then a 5x5 convolution from all boards'
  hidden maps to one output map, softmax over the points. The hidden units have a bias per kernel
  and, as the paper's (its Figure 3: "15 19 x 19 images"), one per kernel and point of a
  `position_bias` x `position_bias` map (0: none). On another board size a point takes the bias
  of the map's point at the same distance from the nearest edges (edge_map()), so corners stay
  corners and one net plays every size.
- `conv`: a stack of convolutions with ReLU (the first `first_kernel` wide, the rest 3x3,
  `channels` each), then a 1x1 convolution to the output map (Clark & Storkey 2015, Maddison et
  al. 2015 in small).
- `res`: the same stack with a shortcut around each pair of 3x3 layers after the first (He et
  al. 2016): layer l = 2, 4, ... adds the input of layer l - 1 before its ReLU, so `layers` is odd.
  The second layer of each pair starts at zero and the first at 1/sqrt(pairs) of the usual spread
  (Zhang, Dauphin & Ma 2019, "Fixup"): a new net passes its first layer's maps through every pair,
  and trains without normalization layers, whose statistics the play-time pass would not have.
All give the pass move a logit from the mean of the last hidden layer over the board (one weight
per map and a bias), so the softmax covers every point and pass.

Activations are NHWC (batch, row, col, channel) inside; convolutions are im2col products, whose
weight layout (out, in, k, k) is also PyTorch's, so the trainer's tensors map one to one.

Weight files are the project's .npz form (engine/nets/weights.py): `params` float32, the tensors
flattened in the order the architecture record lists them, and `metadata` with the architecture
(kind, sizes, tensor names and shapes), the feature set and its version, validated on load.

Reading order: PolicyNet.forward(), then backward(), then save_policy() / load_policy().
"""
import datetime
import hashlib
import json
import math
import os
from pathlib import Path

import numpy as np

from engine.nets.policy_features import feature_set as policy_feature_set
from engine.nets.weights import (FORMAT_NAME, FORMAT_VERSION, WeightFileError, _decode_metadata,
                                 _validate_params, read_npz)

ARCHITECTURE_NAME = "policy"
KINDS = ("sn2008", "conv", "res")
# the judging net's trunk (engine/nets/judge.py) is a res stack with heads of its own
RESIDUAL = ("res", "judge")
STACKS = ("conv",) + RESIDUAL  # the kinds that are a stack of convolutions with ReLU
OUTPUT_KERNEL = 5       # the paper's hidden-to-output kernels


def _im2col(x, k):
    """(B, H, W, C) -> (B*H*W, k*k*C): every point's k x k window (row, column, channel order),
    zero outside the board. Copied window offset by window offset: whole rows of channels at a
    time, which is several times faster than a strided view's reshape."""
    batch, height, width, channels = x.shape
    if k == 1:                  # every point's window is the point itself
        return x.reshape(batch * height * width, channels)
    pad = k // 2
    padded = np.zeros((batch, height + 2 * pad, width + 2 * pad, channels), x.dtype)
    padded[:, pad:pad + height, pad:pad + width] = x
    cols = np.empty((batch, height, width, k, k, channels), x.dtype)
    for i in range(k):
        for j in range(k):
            cols[:, :, :, i, j, :] = padded[:, i:i + height, j:j + width, :]
    return cols.reshape(batch * height * width, k * k * channels)


def _weight_matrix(w):
    """(out, in, k, k) weights as the (k*k*in, out) matrix that multiplies _im2col's columns."""
    return w.transpose(2, 3, 1, 0).reshape(-1, w.shape[0])


def convolution(x, w, b):
    """Same-size convolution of NHWC x with w (out, in, k, k) and b (out,). Returns the output
    and the columns (kept for the backward pass)."""
    cols = _im2col(x, w.shape[-1])
    out = cols @ _weight_matrix(w)
    out += b
    return out.reshape(*x.shape[:3], w.shape[0]), cols


def _conv_backward(dout, cols, x_shape, w):
    """Gradients (dx, dw, db) of convolution() from dout (B, H, W, out)."""
    batch, height, width, channels = x_shape
    out_channels, k = w.shape[0], w.shape[-1]
    pad = k // 2
    flat = dout.reshape(-1, out_channels)
    dw = (cols.T @ flat).reshape(k, k, channels, out_channels).transpose(3, 2, 0, 1)
    db = flat.sum(axis=0)
    dcols = (flat @ _weight_matrix(w).T).reshape(batch, height, width, k, k, channels)
    dpadded = np.zeros((batch, height + 2 * pad, width + 2 * pad, channels), dtype=dout.dtype)
    for i in range(k):
        for j in range(k):
            dpadded[:, i:i + height, j:j + width, :] += dcols[:, :, :, i, j, :]
    return dpadded[:, pad:pad + height, pad:pad + width, :], np.ascontiguousarray(dw), db


def edge_map(size, map_size):
    """For each line 0..size-1 of a board, the line of a map_size board at the same distance from
    the nearer edge (the middle line for lines further in than the map reaches)."""
    half = (map_size - 1) // 2
    lines = np.arange(size)
    from_far_edge = size - 1 - lines
    return np.where(lines <= from_far_edge, np.minimum(lines, half),
                    map_size - 1 - np.minimum(from_far_edge, half))


def position_bias(bias_map, size):
    """(size, size, hidden) biases of a board from a (hidden, P, P) map (edge_map())."""
    index = edge_map(size, bias_map.shape[-1])
    return bias_map[:, index][:, :, index].transpose(1, 2, 0)


class _Forgotten(dict):
    """forward()'s cache when no backward() follows: it keeps nothing, so each layer's im2col
    columns are freed when the next layer starts. Holding all of them made the allocator hand out
    fresh pages on every call, which cost more than the convolutions themselves."""

    def __setitem__(self, key, value):
        pass


def shortcuts(architecture):
    """{layer: the earlier layer whose output it adds before its ReLU} (empty for plain stacks)."""
    if architecture["kind"] not in RESIDUAL:
        return {}
    return {layer: layer - 2 for layer in range(2, architecture["layers"], 2)}


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def tensor_shapes(architecture, input_planes):
    """[(name, shape)] of an architecture's parameters, in the order of the flat params."""
    kind = architecture["kind"]
    if kind == "sn2008":
        hidden, kernel, boards = architecture["hidden"], architecture["kernel"], architecture["boards"]
        planes = input_planes // boards
        maps = hidden * boards
        positional = architecture.get("position_bias", 0)
        return [("hidden.w", (hidden, planes, kernel, kernel)), ("hidden.b", (hidden,))] + \
            ([("hidden.map", (hidden, positional, positional))] if positional else []) + \
            [("output.w", (1, maps, OUTPUT_KERNEL, OUTPUT_KERNEL)), ("output.b", (1,)),
             ("pass.w", (maps,)), ("pass.b", (1,))]
    if kind in STACKS:
        channels, layers = architecture["channels"], architecture["layers"]
        if kind in RESIDUAL and (layers < 3 or layers % 2 == 0):
            raise ValueError(f"a res net has an odd number of layers, at least 3 (the first, then "
                             f"pairs with a shortcut), not {layers}")
        shapes, planes = [], input_planes
        for layer in range(layers):
            kernel = architecture["first_kernel"] if layer == 0 else 3
            shapes += [(f"conv{layer}.w", (channels, planes, kernel, kernel)), (f"conv{layer}.b", (channels,))]
            planes = channels
        return shapes + [("output.w", (1, channels, 1, 1)), ("output.b", (1,)),
                         ("pass.w", (channels,)), ("pass.b", (1,))]
    raise ValueError(f"unknown policy architecture kind {kind!r}; known: {KINDS}")


class PolicyNet:
    """A policy network: architecture record, feature set and parameters (float32 arrays)."""
    architecture_name = ARCHITECTURE_NAME

    def __init__(self, architecture, feature_set, params=None, seed=0):
        self.architecture = dict(architecture, name=self.architecture_name)
        self.feature_set = policy_feature_set(feature_set)
        if self.architecture["kind"] == "sn2008" and self.feature_set.planes % self.architecture["boards"]:
            raise ValueError(f"feature set {feature_set!r} does not split into "
                             f"{self.architecture['boards']} boards")
        self.shapes = self._tensor_shapes()
        self.params = params if params is not None else self._initial(seed)

    def _tensor_shapes(self):
        if self.architecture["kind"] not in KINDS:
            raise ValueError(f"unknown policy architecture kind {self.architecture['kind']!r}; "
                             f"known: {KINDS}")
        return tensor_shapes(self.architecture, self.feature_set.planes)

    @staticmethod
    def join(outputs):
        """One batch's outputs from its parts' (the forward passes run in chunks)."""
        return np.concatenate(outputs)

    def _initial(self, seed):
        """He-style random weights for the ReLU stack, Glorot-style for the logistic layer; zero
        biases and a zero output layer for sn2008 (a uniform start, as a softmax likes)."""
        rng = np.random.default_rng(seed)
        kind, params = self.architecture["kind"], {}
        ends = {f"conv{layer}.w" for layer in shortcuts(self.architecture)}
        starts = {f"conv{layer - 1}.w" for layer in shortcuts(self.architecture)}
        for name, shape in self.shapes:
            if name.endswith(".b") or name.startswith("pass") or name in ends:
                params[name] = np.zeros(shape, np.float32)
            else:
                fan_in = int(np.prod(shape[1:]))
                gain = 2.0 if kind in STACKS else 1.0
                if name in starts:
                    gain /= len(starts)     # Fixup: the spread over sqrt(pairs)
                params[name] = (rng.standard_normal(shape) * math.sqrt(gain / fan_in)).astype(np.float32)
        return params

    @property
    def num_params(self):
        return sum(int(np.prod(shape)) for _, shape in self.shapes)

    def forward(self, planes, keep=False):
        """Logits (B, S*S + 1), the points row by row then pass, of feature planes
        (B, planes, S, S). keep: also return what backward() needs."""
        if not keep and len(planes) > 1:
            # one position at a time: its im2col columns stay small enough for the allocator to
            # reuse, where a batch's fresh pages cost more than the batched products save
            return self.join([self.forward(planes[i:i + 1]) for i in range(len(planes))])
        x = np.ascontiguousarray(np.moveaxis(planes.astype(np.float32, copy=False), 1, -1))
        batch, size = x.shape[0], x.shape[1]
        p, cache = self.params, {} if keep else _Forgotten()
        cache["input_shape"] = x.shape
        if self.architecture["kind"] == "sn2008":
            boards = self.architecture["boards"]
            per_board = x.reshape(batch, size, size, boards, -1).transpose(0, 3, 1, 2, 4)
            per_board = np.ascontiguousarray(per_board).reshape(batch * boards, size, size, -1)
            pre, cache["hidden.cols"] = convolution(per_board, p["hidden.w"], p["hidden.b"])
            if "hidden.map" in p:
                pre += position_bias(p["hidden.map"], size)
            h = _sigmoid(pre)
            cache["hidden.out"] = h
            hidden = h.reshape(batch, boards, size, size, -1).transpose(0, 2, 3, 1, 4).reshape(batch, size, size, -1)
            hidden = np.ascontiguousarray(hidden)
        else:
            hidden, outputs, adds = x, [], shortcuts(self.architecture)
            for layer in range(self.architecture["layers"]):
                pre, cache[f"conv{layer}.cols"] = convolution(hidden, p[f"conv{layer}.w"], p[f"conv{layer}.b"])
                cache[f"conv{layer}.in_shape"] = hidden.shape
                if layer in adds:
                    pre += outputs[adds[layer]]
                hidden = np.maximum(pre, 0.0)
                outputs.append(hidden)
                cache[f"conv{layer}.out"] = hidden
        logits = self.heads(hidden, cache)
        return (logits, cache) if keep else logits

    def heads(self, hidden, cache=None):
        """Logits (B, S*S + 1) from the last hidden layer (B, S, S, maps): a 1x1 (sn2008: 5x5)
        convolution for the points, and pass from the layer's mean over the board."""
        p, cache = self.params, _Forgotten() if cache is None else cache
        batch, size = hidden.shape[0], hidden.shape[1]
        points, cache["output.cols"] = convolution(hidden, p["output.w"], p["output.b"])
        cache["last_hidden_shape"] = hidden.shape
        pooled = hidden.mean(axis=(1, 2))
        cache["pooled"] = pooled
        pass_logit = pooled @ p["pass.w"] + p["pass.b"]
        return np.concatenate([points.reshape(batch, size * size), pass_logit[:, None]], axis=1)

    def backward(self, cache, dlogits):
        """Gradients {name: array} of the loss whose gradient with respect to the logits is
        dlogits, through the forward pass that made cache."""
        p, grads = self.params, {}
        batch, size = dlogits.shape[0], cache["last_hidden_shape"][1]
        hidden_shape = cache["last_hidden_shape"]
        dpass = dlogits[:, -1]
        grads["pass.w"] = cache["pooled"].T @ dpass
        grads["pass.b"] = np.array([dpass.sum()], np.float32)
        dpoints = dlogits[:, :-1].reshape(batch, size, size, 1)
        dhidden, grads["output.w"], grads["output.b"] = _conv_backward(
            dpoints, cache["output.cols"], hidden_shape, p["output.w"])
        dhidden = dhidden + (dpass[:, None] * p["pass.w"][None, :] / (size * size))[:, None, None, :]
        if self.architecture["kind"] == "sn2008":
            boards = self.architecture["boards"]
            dh = dhidden.reshape(batch, size, size, boards, -1).transpose(0, 3, 1, 2, 4)
            dh = np.ascontiguousarray(dh).reshape(batch * boards, size, size, -1)
            h = cache["hidden.out"]
            dpre = dh * h * (1.0 - h)
            per_board_shape = (batch * boards, size, size, self.params["hidden.w"].shape[1])
            _, grads["hidden.w"], grads["hidden.b"] = _conv_backward(
                dpre, cache["hidden.cols"], per_board_shape, p["hidden.w"])
            if "hidden.map" in p:
                per_point = dpre.sum(axis=0).transpose(2, 0, 1)
                if size == p["hidden.map"].shape[-1]:
                    grads["hidden.map"] = per_point
                else:
                    index = edge_map(size, p["hidden.map"].shape[-1])
                    grads["hidden.map"] = np.zeros_like(p["hidden.map"])
                    np.add.at(grads["hidden.map"], (slice(None), index[:, None], index[None, :]),
                              per_point)
        else:
            adds, through_shortcuts = shortcuts(self.architecture), {}
            for layer in reversed(range(self.architecture["layers"])):
                if layer in through_shortcuts:
                    dhidden = dhidden + through_shortcuts.pop(layer)
                dpre = dhidden * (cache[f"conv{layer}.out"] > 0)
                if layer in adds:
                    through_shortcuts[adds[layer]] = dpre
                dhidden, grads[f"conv{layer}.w"], grads[f"conv{layer}.b"] = _conv_backward(
                    dpre, cache[f"conv{layer}.cols"], cache[f"conv{layer}.in_shape"], p[f"conv{layer}.w"])
        return {name: grad.astype(np.float32, copy=False) for name, grad in grads.items()}

    def with_params(self, params):
        """The same architecture and features with other parameters (a dict like self.params)."""
        return type(self)(self.architecture, self.feature_set.name, params=params)

    def flat_params(self):
        return np.concatenate([self.params[name].ravel() for name, _ in self.shapes]).astype(np.float32)

    def set_flat_params(self, flat):
        offset, params = 0, {}
        for name, shape in self.shapes:
            count = int(np.prod(shape))
            params[name] = np.asarray(flat[offset:offset + count], np.float32).reshape(shape).copy()
            offset += count
        self.params = params


def softmax(logits, legal=None):
    """Probabilities over the last axis; legal (bool, same shape) zeroes what is not legal."""
    logits = np.asarray(logits, np.float64)
    if legal is not None:
        logits = np.where(legal, logits, -np.inf)
    top = logits.max(axis=-1, keepdims=True)
    exp = np.exp(logits - top)
    return exp / exp.sum(axis=-1, keepdims=True)


def played_ranks(logits, moves):
    """(ranks, log-probabilities) of the moves played among logits (B, moves): rank 0 is the
    net's top move."""
    logits = np.asarray(logits, np.float64)
    rows = np.arange(len(moves))
    log_probabilities = np.log(np.maximum(softmax(logits)[rows, moves], 1e-30))
    return (logits > logits[rows, moves][:, None]).sum(axis=1), log_probabilities


def save_policy(path, net, board_size, games_trained, positions_trained, trainer=None, created=None):
    """Writes net to path atomically (a temporary file renamed over it)."""
    params = net.flat_params()
    architecture = dict(net.architecture, tensors=[[name, list(shape)] for name, shape in net.shapes],
                        num_params=net.num_params)
    metadata = {
        "format": FORMAT_NAME, "format_version": FORMAT_VERSION, "architecture": architecture,
        "feature_set": {"name": net.feature_set.name, "version": net.feature_set.version},
        "board_size": int(board_size), "games_trained": int(games_trained),
        "positions_trained": int(positions_trained), "trainer": trainer or {},
        "created": created or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "params_sha256": hashlib.sha256(params.tobytes()).hexdigest(),
    }
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp.npz")
    np.savez_compressed(temporary, params=params,
                        metadata=np.frombuffer(json.dumps(metadata).encode("utf-8"), dtype=np.uint8))
    os.replace(temporary, path)


def is_policy_file(metadata):
    return metadata.get("architecture", {}).get("name") == ARCHITECTURE_NAME


def load_policy(path):
    """(PolicyNet, metadata) from a weight file; WeightFileError naming the file for one that is
    missing, damaged, not a policy net, or whose parameters do not fit its architecture."""
    return load_net(path, PolicyNet, "a value net goes to --weights")


def load_net(path, net_class, elsewhere):
    """(net, metadata) of a weight file of net_class (PolicyNet or a subclass); WeightFileError
    naming the file for one that is missing, damaged, of another architecture (elsewhere: where
    such a file goes instead), or whose parameters do not fit its architecture."""
    arrays = read_npz(path, WeightFileError)
    for required in ("params", "metadata"):
        if required not in arrays:
            raise WeightFileError(path, f"missing array {required!r} (has {sorted(arrays)})")
    metadata = _decode_metadata(path, arrays["metadata"])
    architecture = metadata["architecture"]
    if architecture.get("name") != net_class.architecture_name:
        raise WeightFileError(path, f"not a {net_class.architecture_name} network (architecture "
                                    f"{architecture.get('name')!r}); {elsewhere}")
    feature = metadata["feature_set"]
    try:
        spec = policy_feature_set(feature.get("name"))
        if feature.get("version") != spec.version:
            raise ValueError(f"feature set {spec.name!r} version {feature.get('version')!r}; this "
                             f"kosumi computes version {spec.version}")
        net = net_class({k: v for k, v in architecture.items() if k not in ("tensors", "num_params")},
                        spec.name, params={})
    except (ValueError, KeyError, TypeError) as error:
        raise WeightFileError(path, f"unusable architecture or feature set: {error}") from None
    recorded = [[name, list(shape)] for name, shape in net.shapes]
    if architecture.get("tensors") != recorded:
        raise WeightFileError(path, f"tensor list {architecture.get('tensors')!r} does not match the "
                                    f"architecture's {recorded!r}")
    params = arrays["params"]
    _validate_params(path, params, metadata, net, dtype=np.float32)
    net.set_flat_params(params)
    return net, metadata
