"""The 1-ply player's whole move, as the engine plays it (its analysis, the rules about passing,
the draw), one core, each position's move with an empty cache.

    python benchmarks/one_ply_speed.py [--sizes 9 19] [--repeats 10] [-- ENGINE OPTIONS]

The engine is built from gtp_server.py's options (none: the defaults, the judging nets by board
size averaged over the 8 symmetries; `-- --weights weights/softseg_9x9.npz` the soft-segmentation
net). Positions are policy_speed.py's (random legal moves, from the 21st); the median of --repeats
moves. One BLAS thread (set here before numpy loads).
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

from engine.gtp.main import build_engine, build_parser  # noqa: E402
from policy_speed import positions  # noqa: E402  (this folder: the same random games)


def move_seconds(engine, size, repeats):
    net = getattr(engine.evaluator, "inner", engine.evaluator)    # under the symmetric average
    times = []
    for state in positions(size, repeats):
        if hasattr(net, "clear_cache"):
            net.clear_cache()
        start = time.perf_counter()
        engine.player.choose(state, state.to_move, dry_run=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[9, 19])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("engine_options", nargs="*", help="gtp_server.py's options, after --")
    args = parser.parse_args()
    engine = build_engine(build_parser().parse_args(["--seed", "1", *args.engine_options]))
    print(f"1-ply move, {' '.join(args.engine_options) or 'the defaults'}; median of "
          f"{args.repeats} positions")
    for size in args.sizes:
        print(f"  {size}x{size}: {move_seconds(engine, size, args.repeats):.3f} s", flush=True)


if __name__ == "__main__":
    main()
