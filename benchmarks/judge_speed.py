"""The judging net's speed: all four heads of one position (encode, features, the komi plane, the
forward pass at play), one core.

    python benchmarks/judge_speed.py [--weights JUDGE.npz] [--sizes 19 9] [--repeats 200]
                                     [--precisions fp32 bf16] [--symmetries 1 2]

Target: <= 5 ms a 19x19 position, <= 1.5 ms a 9x9 one. Without --weights, a judging net grown
from the shipped policy net (weights/policy_19x19.npz: its trunk, new heads) stands in: the heads'
sizes, not their weights, decide the time. Positions are policy_speed.py's (random legal moves,
from the 21st); the median of --repeats. One BLAS thread (set here before numpy loads).
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from engine.nets.judge import JudgeNet, judge_planes, load_judge, symmetric_judgement  # noqa: E402
from engine.nets.policy import load_policy  # noqa: E402
from engine.nets.policy_features import features  # noqa: E402
from engine.nets.policy_inputs import PositionEncoder, new_record  # noqa: E402
from engine.nets.weights import shipped_weights_path  # noqa: E402
from engine.nets.winograd import PRECISIONS, play_forward  # noqa: E402
from policy_speed import positions  # noqa: E402  (this folder: the same random games)


def judge_time(net, size, repeats, precision, symmetries):
    forward, encoder = play_forward(net, precision), PositionEncoder()
    times = []
    for state in positions(size, repeats):
        board, colour = state.board, state.to_move
        start = time.perf_counter()
        record = new_record(size)
        encoder.encode(board, colour, [], record)
        planes = features(net.feature_set.name, record[None, None], np.array([colour], np.uint8))
        symmetric_judgement(forward, judge_planes(planes, np.array([7.0 if colour == 2 else -7.0])), symmetries)
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weights", default=None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[19, 9])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16"], choices=PRECISIONS)
    parser.add_argument("--symmetries", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    if args.weights:
        net, _ = load_judge(args.weights)
        name = args.weights
    else:
        policy, _ = load_policy(shipped_weights_path("policy_19x19.npz"))
        net = JudgeNet.from_policy(policy, head_channels=32, value_hidden=64)
        name = "grown from policy_19x19.npz"
    a = net.architecture
    print(f"{name}: {a['layers']} x {a['channels']}, heads {a['head_channels']} maps, "
          f"{a['value_hidden']} hidden; median of {args.repeats} positions, ms")
    for size in args.sizes:
        for precision in args.precisions:
            for symmetries in args.symmetries:
                print(f"  {size}x{size} {precision} {symmetries} symmetr{'y' if symmetries == 1 else 'ies'}: "
                      f"{judge_time(net, size, args.repeats, precision, symmetries):.2f}", flush=True)


if __name__ == "__main__":
    main()
