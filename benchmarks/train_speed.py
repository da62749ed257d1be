"""Training throughput: self-play + learning games per second per core (issue 5; target >= 20 on
9x9 with the default net, Blair's 2008 CPU did about 2; issue 16, --arch softseg: >= 1 on 9x9).

    python benchmarks/train_speed.py [--size 9] [--games 300] [--weights PATH] [--workers 1,2]
                                     [--arch softseg]

--arch softseg (or a softseg --weights file): NeuroGo 3's network under NeuroGo's procedure (the
only one it trains with): self-play, then the replay of the 10 most recent games by TD(0); the
learning column is that replay (it grows over the first 10 games, so give --games well above 10).

One core: the trainer's own loop (engine.training.trainer.Trainer.run, in-process, Blair's procedure with the
default settings after the shortcut phase), timed from the first to the last game; the self-play
and learning parts are timed separately on the same games. With several workers, the same loop
with K self-play processes (total games/s, and per core). Game length decides the speed, so the
table shows it; an untrained net plays other games than a trained one (--weights).
"""
import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.training import learning, train                         # noqa: E402
from engine.training.selfplay import play_game                      # noqa: E402
from engine.training.settings import new_network                    # noqa: E402
from engine.nets import weights as weight_files                  # noqa: E402


ARCH = "isn"          # --arch


def settings_for(size, weights_path):
    """The trainer's default settings, with the weight file's net (inputs, hidden units, rich
    outputs) when one is given, so that its parameters fit."""
    metadata = weight_files.load_weights(weights_path)[1] if weights_path else None
    if ARCH == "softseg" or (metadata and metadata["architecture"]["name"] == "softseg"):
        sizes = metadata["architecture"] if metadata else {"hidden1": 8, "hidden2": 2, "intervals": 8}
        return train.TrainSettings(size=size, seed=1, arch="softseg", procedure="neurogo",
                                   shortcut_games=0, rich_signal=True, weight_decay=1.0,
                                   learning_rate=train.SOFTSEG_LEARNING_RATE,
                                   feature_set=metadata["feature_set"]["name"] if metadata else "neurogo",
                                   softseg_hidden=(sizes["hidden1"], sizes["hidden2"]),
                                   softseg_intervals=sizes["intervals"])
    if not weights_path:
        return train.TrainSettings(size=size, shortcut_games=0, seed=1)
    architecture = metadata["architecture"]
    return train.TrainSettings(size=size, shortcut_games=0, seed=1,
                               hidden=tuple(architecture["hidden"][t] for t in "TSDCF"),
                               feature_set=metadata["feature_set"]["name"],
                               rich_signal=bool(architecture.get("rich_signal", False)))


def make_trainer(directory, size, weights_path):
    trainer = train.Trainer.create(directory, settings_for(size, weights_path))
    if weights_path:
        network, _ = weight_files.load_weights(weights_path)
        trainer.network.set_params(network.get_params())
    return trainer


def split_timing(size, games, weights_path):
    """(self-play seconds, learning seconds, mean length) over games, one process."""
    settings = settings_for(size, weights_path)
    if settings.arch == "softseg":
        return split_timing_neurogo(size, games, weights_path)
    network = (weight_files.load_weights(weights_path)[0] if weights_path
               else new_network(settings))
    rng = np.random.default_rng(2)
    play_seconds = learn_seconds = 0.0
    lengths = []
    for _ in range(games):
        start = time.perf_counter()
        record = play_game(network, settings.selfplay_config("all"), rng)
        middle = time.perf_counter()
        game = learning.TrainingGame.from_record(record, settings, middle - start)
        learning.game_gradient(network, game, settings.lam, record.outputs)
        end = time.perf_counter()
        play_seconds += middle - start
        learn_seconds += end - middle
        lengths.append(record.length)
    return play_seconds, learn_seconds, float(np.mean(lengths))


def split_timing_neurogo(size, games, weights_path):
    """split_timing() for NeuroGo's procedure: the learning is the trainer's replay of the recent
    games after each one (Trainer._apply)."""
    with tempfile.TemporaryDirectory() as directory:
        trainer = make_trainer(Path(directory) / "run", size, weights_path)
        rng = np.random.default_rng(2)
        play_seconds = learn_seconds = 0.0
        lengths = []
        for _ in range(games):
            start = time.perf_counter()
            game, grad, loss, entries = learning.play_training_game(trainer.network,
                                                                    trainer.settings, "all", rng)
            middle = time.perf_counter()
            trainer._apply(game, grad, loss, entries)
            end = time.perf_counter()
            play_seconds += middle - start
            learn_seconds += end - middle
            lengths.append(game.summary["length"])
        trainer.close()
    return play_seconds, learn_seconds, float(np.mean(lengths))


def loop_rate(size, games, weights_path, workers):
    with tempfile.TemporaryDirectory() as directory:
        trainer = make_trainer(Path(directory) / "run", size, weights_path)
        start = time.perf_counter()
        trainer.run(games=games, workers=workers, checkpoint_every=0, progress=False)
        seconds = time.perf_counter() - start
        lengths = [line["length"] for line in
                   map(__import__("json").loads, (Path(directory) / "run" / "log.jsonl")
                       .read_text().splitlines())]
    return games / seconds, float(np.mean(lengths))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--weights", help="weight file to play with (default: a fresh net)")
    parser.add_argument("--workers", default="1", help="comma-separated worker counts (default 1)")
    parser.add_argument("--arch", choices=("isn", "softseg"), default="isn",
                        help="the architecture trained (a --weights file says its own)")
    args = parser.parse_args()
    global ARCH
    ARCH = args.arch
    worker_counts = [int(w) for w in args.workers.split(",")]

    play, learn, length = split_timing(args.size, args.games, args.weights)
    per_game = (play + learn) / args.games
    print(f"command: python benchmarks/train_speed.py --size {args.size} --games {args.games}"
          + (f" --weights {args.weights}" if args.weights else "") + f" --workers {args.workers}"
          + (f" --arch {args.arch}" if args.arch != "isn" else ""))
    print(f"machine: {os.cpu_count()} cores; net: "
          f"{'trained ' + args.weights if args.weights else 'fresh (untrained)'}; {args.size}x{args.size}")
    print()
    print(f"{'measure':<44}{'value':>12}")
    print(f"{'mean game length (moves)':<44}{length:>12.1f}")
    print(f"{'self-play ms per game':<44}{1000 * play / args.games:>12.2f}")
    print(f"{'learning (TD targets + gradient) ms per game':<44}{1000 * learn / args.games:>12.2f}")
    print(f"{'games/s, one core (play + learn)':<44}{1 / per_game:>12.1f}")
    for workers in worker_counts:
        rate, loop_length = loop_rate(args.size, args.games, args.weights, workers)
        label = f"trainer loop, {workers} worker(s): games/s"
        print(f"{label:<44}{rate:>12.1f}")
        label = f"  per core (length {loop_length:.0f})"
        print(f"{label:<44}{rate / min(workers, os.cpu_count() or 1):>12.1f}")


if __name__ == "__main__":
    main()
