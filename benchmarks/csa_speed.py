"""CSA* speed: milliseconds to score one finished board (features, the 4-step cascade, both
counts), one core. The issue's target: a 19x19 board in at most 20 ms.

    python benchmarks/csa_speed.py [--seconds 3] [--data RECORDS.jsonl] [--review]

Boards: the final positions of a record file of engine/training/scoredata.py when --data is
given (the first 20 of each size), else a seeded random "finished" board per size (a uniform
random playout that never fills its own eyes, played to two passes: every point settled).
--review times the whole of what final_score does: CSA* and the tree search's count
(csa.search_count), which the pass decisions go without. Run it on an idle machine; results go
to RESULTS.md by hand, with this command.
"""
import argparse
import time

from engine.rules.board import BLACK, Board
from engine.scoring import csa


def playout_board(size, seed):
    board = Board(size)
    board.playout(BLACK, max_moves=size * size * 4, seed=seed)
    return board


def boards_from(path, size):
    from engine.training.csatrain import board_of
    from engine.training.scoredata import read_records
    return [board_of(r) for r in read_records(path)
            if not r.get("abandoned") and r["size"] == size][:20]


def milliseconds_per_board(boards, seconds, review=False):
    classifier = csa.classifier_for(boards[0].size)
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        csa.analyse(boards[count % len(boards)], 7.5, classifier, review=review)
        count += 1
    return 1000 * (time.perf_counter() - start) / count


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--data", default=None)
    parser.add_argument("--review", action="store_true",
                        help="with the tree search's count, as final_score does")
    args = parser.parse_args()
    for size in (9, 19):
        boards = boards_from(args.data, size) if args.data else []
        boards = boards or [playout_board(size, seed) for seed in range(5)]
        milliseconds = milliseconds_per_board(boards, args.seconds, args.review)
        print(f"{size}x{size}: {milliseconds:.1f} ms per board "
              f"({len(boards)} boards)")


if __name__ == "__main__":
    main()
