"""Speed of NeuroGo 1996's network over units (engine/nets/unitnet.pyx): a whole 1-ply move on 9x9
and 19x19, and training games a second, on one core.

    python benchmarks/unitgraph_speed.py [--weights FILE] [--repeats N] [--sizes 9 19]
                                         [--hidden 12] [--games 20]

Issue 45's targets, one core: a 1-ply move in <= 20 ms on 9x9 and <= 300 ms on 19x19; training
>= 2 games a second. Columns of the 1-ply table (middle-game positions of eval_speed.py: a third
of the points played at random):
  full eval     UnitGraphNetwork.evaluate_board (graph, features, forward, Benson)
  1-ply net     UnitGraphNetwork.successor_values: every legal successor, incremental
  1-ply eval    UnitGraphEvaluator.successor_values: what the 1-ply player pays a move
  1-ply full    every successor by a full rebuild (successor_values_full)
  features      the board-feature share of 1-ply net (BoardFeatures.one_ply)
  1-ply cpu     1-ply net in this process's CPU time (a loaded machine's wall times are longer)
  units/dirty   units of the position; per successor, the mean of units whose edges were rebuilt
Training: a fresh `kosumi-train --arch unitgraph` run of --games games of --size (the net's
sizes), one worker, in this process: games a second of wall time and of this process's CPU time
(the latter is what one free core gives on a busy machine).
"""
import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from engine.nets import unitnet  # noqa: E402
from engine.nets import weights as weight_files  # noqa: E402
from engine.nets.evaluator import UnitGraphEvaluator  # noqa: E402
from engine.nets.features import BoardFeatures  # noqa: E402
from engine.nets.unitgraph import UnitGraph  # noqa: E402
from engine.training.rundir import LOG_FILE, read_jsonl  # noqa: E402
from engine.training.recipes import UNITGRAPH_LEARNING_RATE, UNITGRAPH_RECENT_GAMES  # noqa: E402
from engine.training.settings import TrainSettings  # noqa: E402
from engine.training.trainer import Trainer  # noqa: E402

from eval_speed import best_time, middle_game  # noqa: E402


def measure(network, size, repeats):
    state = middle_game(size)
    board = state.board.copy()
    mover = state.to_move
    moves = state.legal_moves()
    evaluator = UnitGraphEvaluator(network, cache_size=1)
    features = BoardFeatures()
    graph = UnitGraph(network.max_distance)
    graph.load(board, 3 - mover)
    units = len(graph.units())
    dirty = []
    for move in moves[:50]:
        rebuilt, _ = graph.load_successor(board, 3 - mover, move)
        board.undo()
        dirty.append(len(rebuilt))
    row = {
        "full eval": best_time(lambda: network.evaluate_board(board, mover), repeats),
        "1-ply net": best_time(lambda: network.successor_values(board, mover, moves), repeats),
        "1-ply eval": best_time(lambda: evaluator.successor_values(state), repeats),
        "1-ply full": best_time(lambda: network.successor_values_full(board, mover, moves),
                                max(1, repeats // 2)),
        "features": best_time(lambda: features.one_ply(board, mover, moves), repeats),
        "1-ply cpu": cpu_time(lambda: network.successor_values(board, mover, moves)),
    }
    return row, len(moves), units, float(np.mean(dirty))


def cpu_time(function, min_seconds=0.5):
    """This process's CPU seconds per call (what one free core would take on a busy machine)."""
    calls, start = 0, time.process_time()
    while time.process_time() - start < min_seconds:
        function()
        calls += 1
    return (time.process_time() - start) / calls


def training_speed(hidden, max_distance, games, size):
    """A fresh `kosumi-train --arch unitgraph` run of games in a temporary directory, in this
    process: (games/s of wall time, games/s of CPU time, mean moves a game)."""
    settings = TrainSettings(size=size, arch="unitgraph", procedure="neurogo", shortcut_games=0,
                             feature_set="units", learning_rate=UNITGRAPH_LEARNING_RATE,
                             weight_decay=1.0, recent_games=UNITGRAPH_RECENT_GAMES,
                             unitgraph_hidden=hidden, unitgraph_distance=max_distance,
                             init_scale=unitnet.DEFAULT_INIT_SCALE, seed=1)
    with tempfile.TemporaryDirectory() as directory:
        trainer = Trainer.create(Path(directory) / "run", settings)
        wall, cpu = time.perf_counter(), time.process_time()
        trainer.run(games=games, workers=1, checkpoint_every=0, progress=False)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        trainer.close()
        lengths = [line["length"] for line in read_jsonl(Path(directory) / "run" / LOG_FILE)
                   if line.get("type") == "game"]
    return games / wall, games / cpu, float(np.mean(lengths))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weights", help="a unitgraph weight file (default: a fresh net)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[9, 19])
    parser.add_argument("--hidden", type=int, default=12)
    parser.add_argument("--games", type=int, default=20, help="training games (0: none)")
    parser.add_argument("--size", type=int, default=9, help="board size of the training games")
    args = parser.parse_args(argv)
    if args.weights:
        network, _ = weight_files.load_weights(args.weights)
    else:
        network = weight_files.new_unitgraph_network(1, hidden=args.hidden)
    print(f"unitgraph net: hidden {network.hidden}, max distance {network.max_distance}, "
          f"{network.num_params} parameters; load average {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} cores")
    columns = ["full eval", "1-ply net", "1-ply eval", "1-ply full", "features", "1-ply cpu"]
    print(f"{'size':>4} {'moves':>5} " + " ".join(f"{c:>11}" for c in columns) +
          f" {'units/dirty':>12}")
    for size in args.sizes:
        row, moves, units, dirty = measure(network, size, args.repeats)
        print(f"{size:>4} {moves:>5} " + " ".join(f"{1000 * row[c]:>8.2f} ms" for c in columns) +
              f" {units:>5}/{dirty:>5.1f}")
    if args.games:
        wall, cpu, length = training_speed(network.hidden, network.max_distance, args.games,
                                           args.size)
        print(f"training {args.size}x{args.size}: {wall:.2f} games/s wall, {cpu:.2f} games/s of "
              f"CPU time, {length:.0f} moves a game ({args.games} games)")


if __name__ == "__main__":
    main()
