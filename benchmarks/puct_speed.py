"""The PUCT search's speed over a judging net: visits and net evaluations a second on 9x9 and
19x19, from the empty board and a middle-game position, by threads, batch size and precision.

    python benchmarks/puct_speed.py                                  # 9x9 and 19x19, 1 and 2 threads
    python benchmarks/puct_speed.py --sizes 19 --threads 1 --batches 1,8 --precisions fp32,bf16
    python benchmarks/puct_speed.py --weights weights/judge_19x19_run.npz --seconds 5

Rows are measured one after another in the same process, so their ratios are comparable; run it
on an otherwise idle machine and say what else was running. Each row searches a fresh tree for
--seconds with no early stop; a visit is a value backed up (a net evaluation, or a line ended by
two passes), an evaluation a position the net judged (the cache's hits are not counted).
"""
import argparse
import itertools
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")    # as the engine plays (engine/gtp/__init__.py)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from engine.play.search_player import SearchPlayer, load_prior_evaluator  # noqa: E402
from engine.rules.game import GameState, Rules  # noqa: E402
from search_speed import middle_game  # noqa: E402

DEFAULT_WEIGHTS = "weights/judge_19x19_run.npz"


def rows(weights, sizes, seconds, threads_list, batches, precisions):
    evaluators = {precision: load_prior_evaluator(weights, precision) for precision in precisions}
    for size in sizes:
        for start, game in (("empty board", GameState(size, Rules(komi=7.0))),
                            ("move 40", middle_game(size))):
            for precision, threads, batch in itertools.product(precisions, threads_list, batches):
                evaluator = evaluators[precision].twin()
                player = SearchPlayer(evaluator, tree="puct", playouts=None,
                                      time_per_move=seconds, threads=threads, puct_batch=batch,
                                      reuse_tree=False, max_nodes=4_000_000, seed=1)
                player.search(game, game.to_move, max_playouts=8)     # the twins, warmed up
                counted = [player._thread_evaluators[i].evaluations for i in range(threads)]
                started = time.perf_counter()
                analysis = player.search(game, game.to_move)
                elapsed = time.perf_counter() - started
                evaluations = sum(player._thread_evaluators[i].evaluations - counted[i]
                                  for i in range(threads))
                print(f"| {size}x{size} | {start}, {precision}, {threads} thread"
                      f"{'s' if threads > 1 else ''}, batch {batch} | "
                      f"{analysis.simulations / elapsed:,.0f} visits/s | "
                      f"{evaluations / elapsed:,.0f} evaluations/s | "
                      f"{analysis.simulations} visits in {elapsed:.2f} s |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", default=DEFAULT_WEIGHTS, help="a judging net (default: %(default)s)")
    parser.add_argument("--sizes", default="9,19")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds a row (default: %(default)g)")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--batches", default="1,8", help="leaves a batch, comma-separated")
    parser.add_argument("--precisions", default="bf16", help="of fp32,bf16, comma-separated")
    args = parser.parse_args()
    precisions = args.precisions.split(",")
    if set(precisions) - {"fp32", "bf16"}:
        parser.error(f"--precisions takes fp32 and bf16, comma-separated, not {args.precisions}")
    try:
        numbers = [[int(n) for n in text.split(",")] for text in (args.sizes, args.threads, args.batches)]
    except ValueError:
        parser.error("--sizes, --threads and --batches take integers, comma-separated")
    sizes, threads_list, batches = numbers
    print("| board | search | visits | net | notes |\n|---|---|---|---|---|")
    rows(args.weights, sizes, args.seconds, threads_list, batches, precisions)


if __name__ == "__main__":
    main()
