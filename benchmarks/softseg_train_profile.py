"""A deterministic 9x9 soft-segmentation training game for callgrind: the instructions of one game's
self-play and of the learning after it (NeuroGo's replay of the 10 most recent games), with the
shipped net in its steady state (9 recent games already played).

    python benchmarks/softseg_train_profile.py prepare [--weights W] STORE   # once, any build
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=_operator_call \\
        $PY benchmarks/softseg_train_profile.py play STORE
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=_operator_call \\
        $PY benchmarks/softseg_train_profile.py learn STORE

prepare plays the 9 recent games (generator seed 11) and the profiled game (seed 7) and stores
them (pickle) in STORE; play replays the profiled game's self-play, learn the learning after it
(Trainer._apply). The measured phase runs inside operator.call, whose C function (_operator_call)
is callgrind's toggle: PROGRAM TOTALS is the phase's instructions. Both print a digest (game
length, loss, parameter sum) to check that two builds did the same work. PY: the interpreter
itself, not a pyenv shim.
"""
import argparse
import hashlib
import operator
import pickle
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.training import learning, train                         # noqa: E402
from engine.nets import weights as weight_files                  # noqa: E402

DEFAULT_WEIGHTS = Path(__file__).resolve().parent.parent / "weights" / "softseg_9x9.npz"


def settings_for(weights):
    metadata = weight_files.load_weights(weights)[1]
    sizes = metadata["architecture"]
    return train.TrainSettings(size=9, seed=1, arch="softseg", procedure="neurogo",
                               shortcut_games=0, rich_signal=True, weight_decay=1.0,
                               learning_rate=train.SOFTSEG_LEARNING_RATE,
                               feature_set=metadata["feature_set"]["name"],
                               softseg_hidden=(sizes["hidden1"], sizes["hidden2"]),
                               softseg_intervals=sizes["intervals"])


def make_trainer(directory, weights, recent):
    trainer = train.Trainer.create(Path(directory) / "run", settings_for(weights))
    network, _ = weight_files.load_weights(weights)
    trainer.network.set_params(network.get_params())
    for game in recent:
        trainer.recent.append(game)
    return trainer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("prepare", "play", "learn"))
    parser.add_argument("store")
    parser.add_argument("--weights", default=str(DEFAULT_WEIGHTS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        if args.mode == "prepare":
            trainer = make_trainer(directory, args.weights, [])
            rng = np.random.default_rng(11)
            recent = [learning.play_training_game(trainer.network, trainer.settings, "all", rng)[0]
                      for _ in range(9)]
            trainer.close()
            trainer = make_trainer(directory + "/next", args.weights, recent)
            game = learning.play_training_game(trainer.network, trainer.settings, "all",
                                               np.random.default_rng(7))[0]
            trainer.close()
            Path(args.store).write_bytes(pickle.dumps({"weights": args.weights, "recent": recent,
                                                       "game": game}))
            return
        stored = pickle.loads(Path(args.store).read_bytes())
        trainer = make_trainer(directory, stored["weights"], stored["recent"])
        if args.mode == "play":
            game = operator.call(lambda: learning.play_training_game(
                trainer.network, trainer.settings, "all", np.random.default_rng(7))[0])
            print("length", game.summary["length"], "inputs",
                  hashlib.md5(game.inputs.tobytes()).hexdigest())
        else:
            mean_loss = operator.call(lambda: trainer._apply(stored["game"], None, 0.0, 0))
            print("loss %.12f" % mean_loss,
                  "parameter sum %.15e" % trainer.network.get_params().sum())
        trainer.close()


if __name__ == "__main__":
    main()
