"""Policy network speed: one position's move probabilities at play (encode, features, forward),
and training throughput of the numpy and torch backends side by side.

    python benchmarks/policy_speed.py [--weights FILE ...] [--sizes 19 9] [--repeats N] [--symmetries 2 8]
                                      [--precisions fp32 bf16]
    python benchmarks/policy_speed.py --train --data DATA_DIR [--weights FILE ...] [--seconds S]

Inference (target: <= 5 ms a 19x19 position on one core): rows for each --weights file, or for
fresh nets of the architectures the notebook compares (docs/notebook/policy.md). Columns:
  encode    the position record (engine/nets/policy_inputs.pyx: liberties, ladders, captures)
  features  the feature planes (numpy)
  im2col    the net's own forward pass (PolicyNet.forward: im2col convolutions; the trainer's
            numpy backend and its evaluation)
  forward   the forward pass at play (engine/nets/winograd.py: Winograd convolutions for conv
            nets, the same pass as im2col for sn2008)
  batched   the forward pass at play over a batch of 64 positions, per position (what `policy
            eval` and averaging over the symmetries pay)
  total     MovePredictor.probabilities on a fresh position (no cache): what the search's prior
            pays a node
  total xN  the same averaged over N symmetries (--symmetries, default 2 and 8): what the
            policy player pays a move (8 unless told)
Rows for each of --precisions, the forward pass's products (--policy-precision; default fp32, and
bf16 where the processor has AVX-512 BF16; elsewhere bf16 is emulated, slowly). Times are the
median of --repeats positions from a replayed 19x19 game, one BLAS thread (OPENBLAS_NUM_THREADS=1
is set here before numpy loads).

--train: positions a second of each backend on the same batches of a policy data directory
(--data), in the settings' batch size, for the nets of the --weights files (default: the sn2008
net and the 8x48 conv net): numpy, then torch with one thread and with two, in float32 with
its own convolutions and with Winograd's (conv nets; --convolutions), and in bfloat16
(--precision bf16; left out on a CPU that only emulates it). numpy and torch take the same
steps (tests/unit/training/test_policy_training.py), so their ratio is the speed-up; bfloat16
takes steps in nearly the same direction.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import itertools  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from engine.nets.policy import STACKS, PolicyNet, load_policy  # noqa: E402
from engine.nets.policy_features import features  # noqa: E402
from engine.nets.predictor import MovePredictor  # noqa: E402
from engine.nets.winograd import PRECISIONS, precision_of  # noqa: E402
from engine.nets.winograd_products import HAS_BF16  # noqa: E402
from engine.rules.game import SYMMETRIES, GameState, Rules  # noqa: E402

ARCHITECTURES = [
    ("sn2008 k9", {"kind": "sn2008", "hidden": 15, "kernel": 9, "boards": 5}, "sn2008"),
    ("conv 6x32", {"kind": "conv", "channels": 32, "layers": 6, "first_kernel": 5}, "rich"),
    ("conv 6x48", {"kind": "conv", "channels": 48, "layers": 6, "first_kernel": 5}, "rich"),
    ("conv 8x48", {"kind": "conv", "channels": 48, "layers": 8, "first_kernel": 5}, "rich"),
    ("conv 6x64", {"kind": "conv", "channels": 64, "layers": 6, "first_kernel": 5}, "rich"),
    ("conv 8x64", {"kind": "conv", "channels": 64, "layers": 8, "first_kernel": 5}, "rich"),
    ("conv 10x64", {"kind": "conv", "channels": 64, "layers": 10, "first_kernel": 5}, "rich"),
    ("conv 12x48", {"kind": "conv", "channels": 48, "layers": 12, "first_kernel": 5}, "rich"),
    ("res 13x64", {"kind": "res", "channels": 64, "layers": 13, "first_kernel": 5}, "rich"),
    ("res 13x80", {"kind": "res", "channels": 80, "layers": 13, "first_kernel": 5}, "rich"),
]


BATCH = 64          # positions in the batched column


def positions(size, count, seed=1):
    """Game states along a random game (moves on empty points, no captures needed)."""
    rng = np.random.default_rng(seed)
    game = GameState(size, Rules())
    states = []
    while len(states) < count:
        legal = game.legal_moves()
        if not legal or len(game.history) > size * size // 2:
            game = GameState(size, Rules())
            continue
        game.play(legal[int(rng.integers(len(legal)))])
        if len(game.history) > 20:
            states.append(game.copy())
    return states


def timed(function, repeats):
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return float(np.median(times)) * 1000


def inference(nets, sizes, repeats, averaged, precisions):
    print(f"{'net':24} {'size':>4} {'params':>8} {'encode':>8} {'features':>9} {'im2col':>8} "
          f"{'forward':>8} {'batched':>8} {'total':>8}" + "".join(f" {f'total x{n}':>9}" for n in averaged)
          + "  (ms)")
    for (name, net), size, precision in itertools.product(nets, sizes, precisions):
        states = positions(size, repeats)
        predictor = MovePredictor(net, precision=precision)
        if precision_of(predictor.forward) != precision:
            continue            # a net without a Winograd pass has only float32's
        records = [predictor.records(state, state.to_move) for state in states]
        planes = [features(net.feature_set.name, r[None], np.array([s.to_move]))
                  for r, s in zip(records, states)]
        it = iter(states)
        encode = timed(lambda: predictor.records(next(it), 1), repeats)
        it = iter(zip(records, states))
        feature = timed(lambda: features(net.feature_set.name, next(it)[0][None], np.array([1])), repeats)
        it = iter(planes)
        im2col = timed(lambda: net.forward(next(it)), repeats)
        it = iter(planes)
        forward = timed(lambda: predictor.forward(next(it)), repeats)
        batch = np.concatenate([planes[i % len(planes)] for i in range(BATCH)])
        batched = timed(lambda: predictor.forward(batch), 3) / BATCH

        def fresh_positions(predictor):
            remaining = iter(states)

            def one():
                predictor.cache.clear()
                predictor.probabilities(next(remaining))
            return one
        total = timed(fresh_positions(predictor), repeats)
        symmetric = [timed(fresh_positions(predictor.twin(n)), repeats) for n in averaged]
        label = f"{name} {precision}"
        print(f"{label:24} {size:>4} {net.num_params:>8} {encode:8.2f} {feature:9.2f} "
              f"{im2col:8.2f} {forward:8.2f} {batched:8.2f} {total:8.2f}"
              + "".join(f" {t:9.2f}" for t in symmetric))


def training_backends(kind):
    """(backend, threads, precision, convolutions) of each column the --train table measures."""
    from engine.training.policybackends import native_bf16, torch_available
    backends = [("numpy", None, "fp32", "direct")]
    if torch_available():
        import torch
        kinds = [("fp32", "direct")] + [("fp32", "winograd")] * (kind in STACKS) + \
            [("bf16", "direct")] * native_bf16(torch)
        backends += [("torch", threads, precision, convolutions)
                     for precision, convolutions in kinds for threads in (1, 2)]
    return backends


def training(data, nets, seconds):
    from engine.training.policydata import PolicyDataset
    from engine.training.policybackends import make_backend
    from engine.training.policytrain import PolicySettings
    dataset = PolicyDataset([data])
    rng = np.random.default_rng(0)
    print(f"{'net':26} {'backend':26} {'positions/s':>12}")
    for name, net in nets:
        architecture = net.architecture
        settings = PolicySettings(kind=architecture["kind"], feature_set=net.feature_set.name)
        batches = [dataset.batch(net.feature_set.name, rng.integers(0, dataset.positions, settings.batch_size))
                   for _ in range(4)]
        for backend_name, threads, precision, convolutions in training_backends(architecture["kind"]):
            fresh = PolicyNet(architecture, net.feature_set.name, {k: v.copy() for k, v in net.params.items()})
            backend = make_backend(backend_name, fresh, settings, threads, precision, convolutions)
            done, started = 0, time.perf_counter()
            while time.perf_counter() - started < seconds:
                planes, moves = batches[done % len(batches)]
                backend.step(planes, moves, 0.001)
                done += 1
            rate = done * settings.batch_size / (time.perf_counter() - started)
            label = backend_name + (f" x{threads} {precision} {convolutions}" if threads else "")
            print(f"{name:26} {label:26} {rate:12.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weights", nargs="*", default=[])
    parser.add_argument("--sizes", nargs="+", type=int, default=[19, 9])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--symmetries", nargs="*", type=int, default=[2, SYMMETRIES],
                        choices=range(2, SYMMETRIES + 1), metavar="N")
    parser.add_argument("--precisions", nargs="+", choices=PRECISIONS,
                        default=["fp32", "bf16"] if HAS_BF16 else ["fp32"])
    parser.add_argument("--train", action="store_true")
    parser.add_argument("--data", help="a policy data directory (kosumi-train policy data)")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    if args.train and not args.data:
        parser.error("--train needs --data DATA_DIR (kosumi-train policy data makes one)")
    fresh = (ARCHITECTURES[0], ARCHITECTURES[3]) if args.train else ARCHITECTURES
    nets = [(os.path.basename(path), load_policy(path)[0]) for path in args.weights] or \
        [(name, PolicyNet(architecture, feature_set)) for name, architecture, feature_set in fresh]
    if args.train:
        training(args.data, nets, args.seconds)
    else:
        inference(nets, args.sizes, args.repeats, args.symmetries, args.precisions)


if __name__ == "__main__":
    main()
