"""Ray's overhead and the learner's ceiling (issue 17): kosumi-train's games/s with the local pool
and with Ray actors on the same settings, and the numbers of the scaling model in docs/notebook/ray.md.

    python benchmarks/ray_speed.py [--size 9] [--games 400] [--warmup 40] [--rounds 3]
                                   [--workers 1,2] [--games-per-call 1,8] [--weights PATH]
                                   [--arch softseg] [--procedure neurogo]

Throughput: each round runs the trainer's loop (Trainer.run) once per worker count with the local
pool and once with Ray actors per games-per-call count (kosumi-train --ray-games-per-call),
interleaved (local 1, Ray 1 at 1 game a call, Ray 1 at 8, local 2, ...), on the same settings
(those of benchmarks/train_speed.py: Blair's procedure after the shortcut phase, or NeuroGo's
for --arch softseg; --procedure neurogo trains the ISN by NeuroGo's). Games/s are timed from the
end of the --warmup games (the pool starting, Ray's actors importing kosumi) to the last game;
the table has each configuration's median over the rounds and Ray's ratio to the local pool.
One worker of the local pool plays in the learner's process, as `kosumi-train --workers 1` does.
One local Ray, started once as `kosumi-train --ray` starts it, serves every Ray run.

Scaling model: the learner's cost per game in the driver, timed on games played beforehand:
unpickling a game's result (what both pools receive) and learning from it (Trainer._apply); the
driver's busy time per game in each Ray run (everything but waiting for games: apply, logging and
Ray's own work, which a call's games share); the bytes of a weight version (what ray.put
publishes) and of a result.
"""
import argparse
import dataclasses
import json
import os
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ray                                                           # noqa: E402

import train_speed                                                   # noqa: E402
from engine.nets import weights as weight_files                     # noqa: E402
from engine.training import raypool, train                          # noqa: E402
from engine.training.workers import SelfPlayWorker                  # noqa: E402


def make_trainer(directory, settings, weights_path):
    trainer = train.Trainer.create(directory, settings)
    if weights_path:
        network, _ = weight_files.load_weights(weights_path)
        trainer.network.set_params(network.get_params())
    return trainer


class RecordedRayPool(raypool.RayPool):
    """Ray's pool, remembered, so that its learner-waiting time can be read during the run."""
    made = []

    def __init__(self, *args):
        super().__init__(*args)
        RecordedRayPool.made.append(self)


def timed_run(settings, weights_path, workers, games, warmup, ray_address, games_per_call):
    """(games/s after the warm-up, mean game length, and with Ray the driver's seconds per game
    not spent waiting for games: learning, logging and Ray's own work) of one trainer loop."""
    RecordedRayPool.made.clear()
    with tempfile.TemporaryDirectory() as directory:
        trainer = make_trainer(Path(directory) / "run", settings, weights_path)
        stamps = []             # (time, seconds the Ray pool had waited) after each game learned
        apply = trainer._apply

        def apply_and_stamp(*args):
            mean_loss = apply(*args)
            pools = RecordedRayPool.made
            stamps.append((time.perf_counter(), pools[0].waited if pools else 0.0))
            return mean_loss

        trainer._apply = apply_and_stamp
        trainer.run(games=warmup + games, workers=workers, checkpoint_every=0, progress=False,
                    ray_address=ray_address, ray_games_per_call=games_per_call)
        trainer.close()
        lengths = [json.loads(line)["length"] for line in
                   (Path(directory) / "run" / "log.jsonl").read_text().splitlines()
                   if json.loads(line)["type"] == "game"]
    (start, waited_at_start), (end, waited_at_end) = stamps[warmup - 1], stamps[-1]
    busy = ((end - start) - (waited_at_end - waited_at_start)) / games if ray_address else None
    return games / (end - start), float(np.mean(lengths)), busy


def learner_costs(settings, weights_path, games):
    """Per game: a worker's seconds to play it (with the gradient, for Blair's procedure); in the
    driver, seconds to unpickle its result as an actor sends it and to learn from it; the bytes of
    that result and of a weight version."""
    with tempfile.TemporaryDirectory() as directory:
        trainer = make_trainer(Path(directory) / "run", settings, weights_path)
        player = SelfPlayWorker(settings.to_json(), np.random.SeedSequence(2))
        player.network.set_params(trainer.network.get_params())
        start = time.perf_counter()
        results = [player.play("all") for _ in range(games)]
        play = (time.perf_counter() - start) / games
        messages = [pickle.dumps(raypool.what_the_learner_reads(result), protocol=5)
                    for result in results]
        start = time.perf_counter()
        received = [pickle.loads(message) for message in messages]
        unpickle = (time.perf_counter() - start) / games
        # NeuroGo's replay grows over the first recent_games games: time the ones after
        for result in received[:settings.recent_games]:
            trainer._apply(*result)
        timed = received[settings.recent_games:]
        start = time.perf_counter()
        for result in timed:
            trainer._apply(*result)
        apply = (time.perf_counter() - start) / len(timed)
        weights = trainer.network.get_params()
        trainer.close()
    return (play, unpickle, apply, float(np.mean([len(m) for m in messages])), weights.nbytes,
            weights.size)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--games", type=int, default=400, help="timed games per run (default 400)")
    parser.add_argument("--warmup", type=int, default=40,
                        help="games per run before the clock starts (default 40)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts (default 1,2)")
    parser.add_argument("--games-per-call", default=f"1,{raypool.RAY_GAMES_PER_CALL}",
                        help=f"comma-separated games per Ray actor call, each timed "
                             f"(default 1,{raypool.RAY_GAMES_PER_CALL}: one against kosumi-train's "
                             f"default)")
    parser.add_argument("--weights", help="weight file to play with (default: a fresh net)")
    parser.add_argument("--arch", choices=("isn", "softseg"), default="isn",
                        help="the architecture trained (a --weights file says its own)")
    parser.add_argument("--procedure", choices=("blair", "neurogo"),
                        help="the ISN's training procedure (default blair; softseg: neurogo)")
    parser.add_argument("--learner-games", type=int, default=100,
                        help="games the learner's costs are timed on (default 100)")
    args = parser.parse_args()
    if args.warmup < 1 or args.games < 1 or args.learner_games <= 10:
        parser.error("--warmup and --games must be at least 1, --learner-games above 10")
    train_speed.ARCH = args.arch
    settings = train_speed.settings_for(args.size, args.weights)
    if args.procedure and args.procedure != settings.procedure:
        settings = dataclasses.replace(settings, procedure=args.procedure, lam=None)
    worker_counts = [int(w) for w in args.workers.split(",")]
    call_sizes = [int(k) for k in args.games_per_call.split(",")]
    if min(call_sizes) < 1:
        parser.error("--games-per-call: every count must be at least 1")
    raypool.RayPool = RecordedRayPool           # Trainer.run() imports it from there
    # (pool, games per call: None for the local pool), in the order each round runs them
    pools = [("local", None)] + [("ray", k) for k in call_sizes]

    ray.init(address="local", include_dashboard=False, log_to_driver=False)
    rates = {(pool, k, workers): [] for workers in worker_counts for pool, k in pools}
    lengths, busy_per_game = [], {}
    try:
        for _ in range(args.rounds):
            for workers in worker_counts:
                for pool, k in pools:
                    rate, length, busy = timed_run(settings, args.weights, workers, args.games,
                                                   args.warmup, "local" if pool == "ray" else None,
                                                   k or 1)
                    rates[pool, k, workers].append(rate)
                    lengths.append(length)
                    if busy is not None:
                        busy_per_game.setdefault((k, workers), []).append(busy)
    finally:
        ray.shutdown()
    play, unpickle, apply, result_bytes, weight_bytes, parameters = learner_costs(
        settings, args.weights, args.learner_games)

    print(f"command: python benchmarks/ray_speed.py --size {args.size} --games {args.games} "
          f"--warmup {args.warmup} --rounds {args.rounds} --workers {args.workers} "
          f"--games-per-call {args.games_per_call}"
          + (f" --weights {args.weights}" if args.weights else "")
          + (f" --arch {args.arch}" if args.arch != "isn" else "")
          + (f" --procedure {args.procedure}" if args.procedure else "")
          + f" --learner-games {args.learner_games}")
    print(f"machine: {os.cpu_count()} cores; Ray {ray.__version__}; {args.size}x{args.size}, "
          f"{settings.arch}, {settings.feature_set}, procedure {settings.procedure}; net "
          f"{args.weights or 'fresh (untrained)'}; mean game length {np.mean(lengths):.1f}")
    print()
    print(f"{'workers':<10}{'games/call':>12}{'local pool g/s':>16}{'Ray actors g/s':>16}"
          f"{'Ray / local':>13}{'driver ms/game (Ray)':>22}")
    for workers in worker_counts:
        local = statistics.median(rates["local", None, workers])
        for k in call_sizes:
            on_ray = statistics.median(rates["ray", k, workers])
            busy = statistics.median(busy_per_game[k, workers])
            print(f"{workers:<10}{k:>12}{local:>16.1f}{on_ray:>16.1f}{on_ray / local:>13.3f}"
                  f"{1000 * busy:>22.3f}")
    print(f"(each: median of {args.rounds} rounds; every run's games/s: "
          + "; ".join(f"{'local' if k is None else f'Ray at {k} a call'} {w}: "
                      + ", ".join(f"{r:.1f}" for r in rates[pool, k, w])
                      for w in worker_counts for pool, k in pools) + ")")
    print()
    per_worker = 1 / play
    print(f"{'per game':<52}{'value':>14}")
    print(f"{'a worker plays it (ms)':<52}{1000 * play:>14.3f}")
    print(f"{'unpickle a result (ms)':<52}{1000 * unpickle:>14.3f}")
    print(f"{'learn from it, Trainer._apply (ms)':<52}{1000 * apply:>14.3f}")
    print(f"{'learner updates/s (unpickle + apply)':<52}{1 / (unpickle + apply):>14.0f}")
    print(f"{'result size, as an actor sends it (kB)':<52}{result_bytes / 1000:>14.1f}")
    print(f"{'weight version: parameters':<52}{parameters:>14d}")
    print(f"{'weight version: bytes (kB)':<52}{weight_bytes / 1000:>14.1f}")
    print(f"{'workers the learner keeps up with (updates/s / g/s of one)':<52}"
          f"{1 / (unpickle + apply) / per_worker:>14.1f}")
    # Ray's own work per game in the driver comes on top; the run with the most actors publishes
    # a weight version least often, as a cluster does
    most = max(worker_counts)
    for k in call_sizes:
        label = f"  with the driver under Ray ({most} actors, {k} games/call)"
        print(f"{label:<52}{1 / statistics.median(busy_per_game[k, most]) / per_worker:>14.1f}")


if __name__ == "__main__":
    main()
