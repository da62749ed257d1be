"""How well unit-graph nets (engine/nets/unitnet.pyx) predict the end of games they never saw: the
cross-entropy of every fourth position's ownership against the final board's, on a fixed set of
self-play games. A learning curve that does not depend on the nets' own play (the TD loss of a
run compares a net with itself).

    python benchmarks/unitgraph_heldout.py make --weights NET.npz --games 30 --seed 777 --out G.npz
    python benchmarks/unitgraph_heldout.py eval --data G.npz NET.npz [NET.npz ...]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from engine.nets import weights as weight_files  # noqa: E402
from engine.rules.board import BLACK, Board  # noqa: E402
from engine.training.learning import final_targets_of  # noqa: E402
from engine.training.selfplay import play_unitgraph_game  # noqa: E402
from engine.training.settings import TrainSettings  # noqa: E402

EVERY = 4        # positions apart: neighbours say nearly the same


def make(weights, games, seed, size):
    network, _ = weight_files.load_weights(weights)
    settings = TrainSettings(size=size, arch="unitgraph", procedure="neurogo", shortcut_games=0,
                             feature_set="units", weight_decay=1.0, recent_games=1)
    rng = np.random.default_rng(seed)
    arrays = {"size": np.array(size), "count": np.array(games)}
    for i in range(games):
        record = play_unitgraph_game(network, settings.selfplay_config("all"), rng)
        targets, mask = final_targets_of(record.final_board, settings)
        arrays[f"{i}_moves"], arrays[f"{i}_targets"], arrays[f"{i}_mask"] = \
            record.inputs, targets, mask
    return arrays


def heldout_loss(network, data):
    total, count = 0.0, 0
    for i in range(int(data["count"])):
        moves, targets = data[f"{i}_moves"], data[f"{i}_targets"]
        mask = data[f"{i}_mask"].astype(bool)
        board = Board(int(data["size"]))
        for t, (colour, move) in enumerate(moves):
            if t and t % EVERY == 0:
                owned, _, _ = network.evaluate_board(board, int(colour))
                black = np.clip(owned if colour == BLACK else 1.0 - owned, 1e-6, 1 - 1e-6)
                total -= float((targets[mask] * np.log(black[mask]) +
                                (1 - targets[mask]) * np.log(1 - black[mask])).sum())
                count += int(mask.sum())
            board.play(int(move), int(colour))
    return total / count


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    maker = commands.add_parser("make", help="play the held-out games")
    maker.add_argument("--weights", required=True)
    maker.add_argument("--games", type=int, default=30)
    maker.add_argument("--seed", type=int, default=777)
    maker.add_argument("--size", type=int, default=9)
    maker.add_argument("--out", required=True)
    evaluator = commands.add_parser("eval", help="the nets' loss on them")
    evaluator.add_argument("--data", required=True)
    evaluator.add_argument("nets", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "make":
        np.savez_compressed(args.out, **make(args.weights, args.games, args.seed, args.size))
        return
    with np.load(args.data, allow_pickle=False) as archive:
        data = {name: archive[name] for name in archive.files}
    for path in args.nets:
        network, metadata = weight_files.load_weights(path)
        print(f"{path}: {metadata['games_trained']} games, held-out loss "
              f"{heldout_loss(network, data):.4f}")


if __name__ == "__main__":
    main()
