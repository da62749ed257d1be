"""Evaluator speed: full evaluations, and one whole 1-ply move (every legal successor), incremental
against full, on 9x9 and 19x19 middle-game positions.

    python benchmarks/eval_speed.py [--weights FILE] [--repeats N] [--sizes 9 19]
                                    [--feature-sets isn14 neurogo neurogo_lite]

Targets (issue 3, default net, one core): all successors of a 9x9 middle-game position in <= 1 ms,
of a 19x19 one in <= 10 ms; incremental >= 5x faster than full on 19x19. Issue 6: the neurogo
feature set costs at most 2x isn14 per 1-ply move. One row per board size and feature set (fresh
nets of each set, or the one net of --weights). Columns:
  full eval     one full network evaluation of the position (encode + forward)
  1-ply net     Network.successor_values: every legal successor, incremental (the network's part)
  1-ply eval    NetworkEvaluator.successor_values: the same plus the superko-filtered move list
                (GameState.legal_moves) and the Python around it: what the player pays per move
  1-ply full    every successor by a full evaluation (Network.successor_values_full)
  legal_moves   GameState.legal_moves alone
  features      the board-feature share of 1-ply net (BoardFeatures.one_ply: the base position's
                features and ladder footprints, then each successor's changes); 0 for isn14
  per move      1-ply net / moves: one successor's cost
  x isn14       1-ply net against the isn14 row of the same size
  rest x isn14  1-ply net minus features (the network's own share) against the isn14 row
Times are the best of --repeats runs (each run loops for about 0.2 s). On a shared, noisy machine
instruction counts are the reproducible measure: --calls N only makes N 1-ply moves (the "1-ply
net" column's call) per size and set, untimed, for callgrind to count:
    valgrind --tool=callgrind --collect-atstart=no \
        --toggle-collect='__pyx_pf_*Network_*successor_values' \
        python benchmarks/eval_speed.py --sizes 9 --feature-sets neurogo --calls 3
then callgrind_annotate's PROGRAM TOTALS / N is one 1-ply move's instructions.

--arch softseg measures NeuroGo 3's soft-segmentation network instead (engine/nets/softseg.pyx;
fresh nets of its input sets neurogo, neurogo_lite, raw, or a softseg --weights file). Issue 16's
targets, one core: a whole 1-ply move on 9x9 <= 20 ms, on 19x19 <= 300 ms. Columns:
  full eval     SoftSegNetwork.evaluate_board (encode + forward, pathfinder included)
  1-ply net     SoftSegNetwork.successor_values: every legal successor (the values of full
                evaluations; local layers, searches and evaluation layer updated from the
                position's, features incremental)
  1-ply eval    SoftSegEvaluator.successor_values: what the player pays per move
  no pathfinder 1-ply net with the connectivity frozen (no searches nor repairs: the
                pathfinder's share is the difference)
  reach         connection pairs at or above the cut-off per point and colour (the pathfinder's
                and the weight selection's work grow with it; a fresh net's are near the board)
For callgrind: --toggle-collect='__pyx_pf_*SoftSegNetwork_*successor_values'.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from engine.rules.board import BLACK, WHITE  # noqa: E402
from engine.nets.evaluator import NetworkEvaluator  # noqa: E402
from engine.nets.features import BoardFeatures, set_layout  # noqa: E402
from engine.rules.game import GameState  # noqa: E402
from engine.nets import weights as weight_files  # noqa: E402
from engine.nets.network import FEATURE_SETS  # noqa: E402
from engine.nets import softseg  # noqa: E402
from engine.nets.evaluator import SoftSegEvaluator  # noqa: E402

FILL_FRACTION = 0.35    # a middle game: about a third of the points played
POSITION_SEED = 2024


def middle_game(size, seed=POSITION_SEED):
    """A reproducible position: random legal moves, never into a single-point eye of one's own,
    until FILL_FRACTION of the points have been played."""
    rng = np.random.default_rng(seed)
    state = GameState(size)
    for _ in range(int(FILL_FRACTION * size * size)):
        moves = [m for m in state.legal_moves() if not state.board.is_eye(m, state.to_move)]
        if not moves:
            break
        state.play(moves[rng.integers(len(moves))])
    return state


def best_time(function, repeats, min_seconds=0.2):
    """Best per-call seconds over repeats runs of enough calls to last min_seconds."""
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            function()
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds / 4:
            break
        calls *= 2
    calls = max(1, int(calls * min_seconds / max(elapsed, 1e-9)))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            function()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def one_ply_moves(network, size, calls):
    """calls untimed 1-ply moves (Network.successor_values) of the middle-game position."""
    state = middle_game(size)
    if isinstance(network, softseg.SoftSegNetwork):
        moves = np.array(state.legal_moves(), dtype=np.intc)
        for _ in range(calls):
            network.successor_values(state.board, state.to_move, moves)
        return
    evaluator = NetworkEvaluator(network)
    evaluator.evaluate(state)
    weights = evaluator._position(state).weights
    moves = np.array(state.legal_moves(), dtype=np.intc)
    for _ in range(calls):
        network.successor_values(state.board, state.to_move, weights, moves)


def measure(network, size, repeats):
    state = middle_game(size)
    evaluator = NetworkEvaluator(network)
    evaluator.evaluate(state)                     # the recurrence: evaluate the game up to here
    position = evaluator._position(state)
    moves = np.array(state.legal_moves(), dtype=np.intc)
    board = state.board.copy()
    mover = state.to_move
    full_eval = best_time(lambda: network.evaluate_board(board, mover, position.weights), repeats)
    net_1ply = best_time(lambda: network.successor_values(board, mover, position.weights, moves),
                         repeats)
    eval_1ply = best_time(lambda: evaluator.successor_values(state), repeats)
    full_1ply = best_time(lambda: network.successor_values_full(board, mover, position.weights, moves),
                          repeats)
    legal = best_time(lambda: state.legal_moves(), repeats)
    layout = set_layout(network.feature_set)
    features = 0.0
    if not layout.one_hot:
        computer = BoardFeatures(layout.needs)
        features = best_time(lambda: computer.one_ply(board, mover, moves), repeats)
    incremental, reference = (network.successor_values(board, mover, position.weights, moves),
                              network.successor_values_full(board, mover, position.weights, moves))
    agreement = np.max(np.abs(incremental[1] - reference[1])) if len(moves) else 0.0
    stones = len(board.stones(BLACK)) + len(board.stones(WHITE))
    return {"size": size, "stones": stones, "moves": len(moves), "full_eval": full_eval,
            "net_1ply": net_1ply, "eval_1ply": eval_1ply, "full_1ply": full_1ply, "legal": legal,
            "features": features, "agreement": agreement}


def measure_softseg(network, size, repeats):
    state = middle_game(size)
    moves = np.array(state.legal_moves(), dtype=np.intc)
    board = state.board.copy()
    mover = state.to_move
    evaluator = SoftSegEvaluator(network)
    full_eval = best_time(lambda: network.evaluate_board(board, mover), repeats)
    net_1ply = best_time(lambda: network.successor_values(board, mover, moves), repeats)
    eval_1ply = best_time(lambda: evaluator.successor_values(state), repeats)
    network.evaluate_board(board, mover)
    reach = (network.connectivity() > 0).sum() / (2 * size * size)
    network.freeze_connectivity = True
    try:
        frozen = best_time(lambda: network.successor_values(board, mover, moves), repeats)
    finally:
        network.freeze_connectivity = False
    stones = len(board.stones(BLACK)) + len(board.stones(WHITE))
    return {"size": size, "stones": stones, "moves": len(moves), "full_eval": full_eval,
            "net_1ply": net_1ply, "eval_1ply": eval_1ply, "frozen": frozen, "reach": reach}


def main_softseg(args):
    if args.weights:
        networks = [weight_files.load_weights(args.weights)[0]]
        source = args.weights
    else:
        names = [n for n in args.feature_sets if n in softseg.FEATURE_SETS] or ["neurogo"]
        networks = [weight_files.new_softseg_network(args.seed, name) for name in names]
        source = f"fresh soft-segmentation nets, seed {args.seed}"
    if args.calls:
        for size in args.sizes:
            for network in networks:
                one_ply_moves(network, size, args.calls)
        return
    print(f"network: {source}; " + ", ".join(f"{n.feature_set} {n.num_params} parameters"
                                             for n in networks) + f"; best of {args.repeats}")
    print(f"{'size':>4} {'set':>12} {'stones':>6} {'moves':>5} {'full eval':>10} {'1-ply net':>10} "
          f"{'1-ply eval':>10} {'no pathfinder':>13} {'per move':>9} {'reach':>6}")
    for size in args.sizes:
        for network in networks:
            r = measure_softseg(network, size, args.repeats)
            print(f"{r['size']:>4} {network.feature_set:>12} {r['stones']:>6} {r['moves']:>5} "
                  f"{r['full_eval'] * 1e3:>8.3f}ms {r['net_1ply'] * 1e3:>8.2f}ms "
                  f"{r['eval_1ply'] * 1e3:>8.2f}ms {r['frozen'] * 1e3:>11.2f}ms "
                  f"{r['net_1ply'] / max(r['moves'], 1) * 1e3:>7.3f}ms {r['reach']:>6.1f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", help="weight file (default: fresh nets from --seed)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the fresh nets")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[9, 19])
    parser.add_argument("--feature-sets", nargs="+", default=["isn14", "neurogo", "neurogo_lite"],
                        choices=sorted(set(FEATURE_SETS) | set(softseg.FEATURE_SETS)),
                        help="fresh nets of these input sets")
    parser.add_argument("--arch", choices=("isn", "softseg"), default="isn",
                        help="the architecture measured (a --weights file says its own)")
    parser.add_argument("--calls", type=int, default=0,
                        help="only make this many untimed 1-ply moves per size and set "
                             "(for callgrind)")
    args = parser.parse_args(argv)
    if args.weights and weight_files.load_weights(args.weights)[1]["architecture"]["name"] == "softseg":
        args.arch = "softseg"
    if args.arch == "softseg":
        return main_softseg(args)
    if args.weights:
        network, _ = weight_files.load_weights(args.weights)
        networks = [network]
        source = args.weights
    else:
        networks = [weight_files.new_network(args.seed, feature_set=name)
                    for name in args.feature_sets]
        source = f"fresh nets, seed {args.seed}"
    if args.calls:
        for size in args.sizes:
            for network in networks:
                one_ply_moves(network, size, args.calls)
        return
    print(f"network: {source}; " + ", ".join(f"{n.feature_set} {n.num_params} parameters"
                                             for n in networks) + f"; best of {args.repeats}")
    header = (f"{'size':>4} {'set':>8} {'stones':>6} {'moves':>5} {'full eval':>10} "
              f"{'1-ply net':>10} {'1-ply eval':>10} {'1-ply full':>10} {'speedup':>7} "
              f"{'legal_moves':>11} {'max |diff|':>10} {'features':>9} {'per move':>9} {'x isn14':>7} "
              f"{'rest x isn14':>12}")
    print(header)
    for size in args.sizes:
        isn14_time = None
        for network in networks:
            r = measure(network, size, args.repeats)
            if network.feature_set == "isn14":
                isn14_time = r["net_1ply"]
            ratio = f"{r['net_1ply'] / isn14_time:>6.2f}x" if isn14_time else f"{'-':>7}"
            rest = (f"{(r['net_1ply'] - r['features']) / isn14_time:>11.2f}x" if isn14_time
                    else f"{'-':>12}")
            print(f"{r['size']:>4} {network.feature_set:>8} {r['stones']:>6} {r['moves']:>5} "
                  f"{r['full_eval'] * 1e6:>8.1f}us "
                  f"{r['net_1ply'] * 1e3:>8.3f}ms {r['eval_1ply'] * 1e3:>8.3f}ms "
                  f"{r['full_1ply'] * 1e3:>8.3f}ms {r['full_1ply'] / r['net_1ply']:>6.1f}x "
                  f"{r['legal'] * 1e3:>9.3f}ms {r['agreement']:>10.1e} "
                  f"{r['features'] * 1e3:>7.3f}ms "
                  f"{r['net_1ply'] / max(r['moves'], 1) * 1e6:>7.2f}us {ratio} {rest}")


if __name__ == "__main__":
    main()
