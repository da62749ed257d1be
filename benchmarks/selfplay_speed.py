"""Self-play throughput of expert iteration (`kosumi-train selfplay`): games an hour of K local
worker processes and of K Ray actors on a local Ray, the same settings and net, measured one
after the other in rounds (local, Ray, local, Ray, ...) so that a change of load falls on both.

    python benchmarks/selfplay_speed.py                               # 9x9, 2 workers, 3 rounds of 3 minutes
    python benchmarks/selfplay_speed.py --workers 1 --rounds 2 --seconds 120
    python benchmarks/selfplay_speed.py --pools local                 # local workers only

Each measure starts the pool in a fresh run directory, waits until every worker has written a
chunk (so that starting the processes or actors is not counted), then counts the games of the
chunks written in the next --seconds. A game is SelfPlaySettings' default self-play game; the
learner does not run. Run it on an otherwise idle machine and say what else was running.
"""
import argparse
import dataclasses
import os
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from engine.nets.judge import load_judge  # noqa: E402
from engine.training.expert.games import SelfPlaySettings  # noqa: E402
from engine.training.expert.pool import Driver, LocalPool, RayPool  # noqa: E402
from engine.training.expert.run import ExpertRun, ExpertSettings  # noqa: E402

DEFAULT_WEIGHTS = "weights/judge_19x19_run.npz"


def games_an_hour(pool_name, weights, size, workers, seconds, chunk_games):
    with tempfile.TemporaryDirectory() as directory:
        run = ExpertRun.create(os.path.join(directory, "run"), load_judge(weights)[0],
                               ExpertSettings(size=size, chunk_games=chunk_games),
                               SelfPlaySettings(), {})
        options = (dataclasses.asdict(run.selfplay), size, chunk_games)
        pool = RayPool(options, workers, "local") if pool_name == "ray" else LocalPool(options, workers)
        driver = Driver(run, pool, workers, log=lambda text: print(text, file=sys.stderr))
        driver.start()
        try:
            while len({path.name.split("-")[2] for path, _ in run.chunks()}) < workers:
                time.sleep(0.5)
            before, started = run.games(), time.monotonic()
            time.sleep(seconds)
            games, elapsed = run.games() - before, time.monotonic() - started
        finally:
            driver.stop()
        if pool_name == "ray":
            import ray
            ray.shutdown()
        return games * 3600 / elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weights", default=DEFAULT_WEIGHTS)
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chunk-games", type=int, default=2)
    parser.add_argument("--pools", default="local,ray")
    args = parser.parse_args()
    pools = args.pools.split(",")
    totals = {name: [] for name in pools}
    for round_number in range(1, args.rounds + 1):
        for name in pools:
            rate = games_an_hour(name, args.weights, args.size, args.workers, args.seconds,
                                 args.chunk_games)
            totals[name].append(rate)
            print(f"round {round_number}: {name:5s} {args.workers} workers: {rate:6.0f} games/h",
                  flush=True)
    for name, rates in totals.items():
        print(f"{name:5s} {args.workers} workers, {args.size}x{args.size}: mean {sum(rates) / len(rates):.0f} "
              f"games/h over {len(rates)} rounds of {args.seconds:.0f} s")
    if len(pools) == 2:
        first, second = (sum(totals[name]) / len(totals[name]) for name in pools)
        print(f"{pools[1]} / {pools[0]}: {second / first:.3f}")


if __name__ == "__main__":
    main()
