"""A larger policy net from a trained one that predicts the same moves (Chen, Goodfellow & Shlens
2016, "Net2Net"; Leela Zero's training scripts grew its nets the same way): a new run then starts
from what the smaller net knows instead of from random weights, which on these two cores is the
difference between hours and days.

- Wider (`channels`): each new map of a hidden layer copies an existing map of that layer (its
  kernels and bias), and each of the next layer's weights from the copied map is split among its
  copies in random shares, so the next layer sees the same sums. The shares differ weight by
  weight, so the copies' kernels get different gradients and learn apart at once. Equal shares
  would give them equal gradients, and a little noise on their kernels (`noise` times the
  layer's weight spread; none by default) tells them apart only slowly (docs/notebook/policy.md).
- Deeper (`layers`): new 3x3 layers that pass their input through (the centre tap an identity,
  zero elsewhere), inserted evenly between the existing hidden layers. Their input comes out of
  a ReLU, so ReLU(identity) changes nothing.

Only `conv` nets grow; without noise the grown net's logits equal the original's.
"""
import numpy as np

from engine.nets.policy import PolicyNet

NOISE = 0.0         # a new map's kernel noise, times its layer's weight spread


def grown(net, layers=None, channels=None, noise=NOISE, seed=0):
    """A new PolicyNet of `layers` hidden layers of `channels` maps (default: as net's), no
    fewer than net's."""
    architecture = net.architecture
    if architecture["kind"] != "conv":
        raise ValueError(f"only conv policy nets grow, not {architecture['kind']!r}")
    layers = architecture["layers"] if layers is None else layers
    channels = architecture["channels"] if channels is None else channels
    if layers < architecture["layers"] or channels < architecture["channels"]:
        raise ValueError(f"a net grows only: it has {architecture['layers']} layers of "
                         f"{architecture['channels']} maps, asked for {layers} of {channels}")
    rng = np.random.default_rng(seed)
    params = {name: value.copy() for name, value in net.params.items()}   # the grown net's own
    params = _wider(params, architecture["layers"], channels, noise, rng)
    params = _deeper(params, architecture["layers"], layers)
    return PolicyNet(dict(architecture, layers=layers, channels=channels), net.feature_set.name, params)


def _wider(params, layers, channels, noise, rng):
    old = params["conv0.w"].shape[0]          # every hidden layer has as many maps
    if channels == old:
        return params
    for layer in range(layers):
        w, b = params[f"conv{layer}.w"], params[f"conv{layer}.b"]
        source = np.concatenate([np.arange(old), rng.integers(0, old, channels - old)])
        wide = w[source]
        wide[old:] += noise * float(w.std()) * rng.standard_normal(wide[old:].shape).astype(np.float32)
        params[f"conv{layer}.w"], params[f"conv{layer}.b"] = wide, b[source]
        # every consumer of this layer's maps: the next layer, or the output and pass heads
        consumers = [f"conv{layer + 1}.w"] if layer + 1 < layers else ["output.w", "pass.w"]
        for name in consumers:
            axis = 1 if params[name].ndim == 4 else 0        # the axis of this layer's maps
            params[name] = np.take(params[name], source, axis) * _shares(source, axis, params[name].shape, rng)
    return params


def _shares(source, axis, shape, rng):
    """Random positive shares, for the weights of a consumer of shape `shape` taken from the maps
    `source` along `axis`, that add up to 1 over the copies of each map, weight by weight."""
    wide = list(shape)
    wide[axis] = len(source)
    draws = rng.uniform(0.1, 1.0, wide)
    totals = np.zeros(shape)
    np.add.at(totals, (slice(None),) * axis + (source,), draws)
    return (draws / np.take(totals, source, axis)).astype(np.float32)


def _deeper(params, layers, wanted):
    """Identity layers inserted evenly after the hidden layers 0 .. layers - 1."""
    added = wanted - layers
    if not added:
        return params
    # evenly spread; where there are more new layers than old, some follow the same layer
    slots = [min(max(round((n + 1) * layers / (added + 1)) - 1, 0), layers - 1) for n in range(added)]
    channels = params["conv0.w"].shape[0]
    identity = np.zeros((channels, channels, 3, 3), np.float32)
    identity[np.arange(channels), np.arange(channels), 1, 1] = 1.0
    result, new = {}, 0
    for layer in range(layers):
        result[f"conv{new}.w"], result[f"conv{new}.b"] = params[f"conv{layer}.w"], params[f"conv{layer}.b"]
        new += 1
        for _ in range(slots.count(layer)):
            result[f"conv{new}.w"], result[f"conv{new}.b"] = identity.copy(), np.zeros(channels, np.float32)
            new += 1
    for name in ("output.w", "output.b", "pass.w", "pass.b"):
        result[name] = params[name]
    return result
