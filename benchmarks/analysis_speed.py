"""`kosumi analysis` speed: a whole 19x19 game analysed turn by turn, as KaTrain asks when it
loads an SGF (one query per turn, ownership, per-move ownership and policy asked for, BLACK's
perspective, priority -100), through the real process on pipes.

    python benchmarks/analysis_speed.py                     # 250 moves, 100 visits, 2 workers
    python benchmarks/analysis_speed.py --visits 500 --workers 1 --moves 120
    python benchmarks/analysis_speed.py --engine-option=--evaluator --engine-option=uniform

The game is 250 moves of the playout policy (MoGo's tactics, a fixed seed): the same game every
run. The clock runs from the first query written to the last final answer read; the load
average before and after says what else was running.
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from engine.rules.coords import format_vertex  # noqa: E402
from engine.rules.game import GameState, Rules  # noqa: E402
from engine.rules.board import PASS  # noqa: E402
from engine.search import playout  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def policy_game(size, moves, seed=7):
    """[["B", "Q16"], ...]: `moves` moves of the playout policy (a pass where it has none)."""
    game = GameState(size, Rules(komi=6.5))
    record = []
    for i in range(moves):
        move = playout.policy_move(game.board, game.to_move, seed=seed * 1000 + i)
        if move < 0 or not game.is_legal(move):
            move = PASS
        record.append(["BW"[game.to_move - 1], format_vertex(move, size)])
        game.play(move)
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=250)
    parser.add_argument("--size", type=int, default=19)
    parser.add_argument("--visits", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--engine-option", action="append", default=[],
                        help="another option for `kosumi analysis` (repeat it)")
    args = parser.parse_args()
    moves = policy_game(args.size, args.moves)
    queries = [{"id": f"turn{turn}", "moves": moves[:turn], "analyzeTurns": [turn],
                "rules": "chinese", "komi": 6.5, "boardXSize": args.size,
                "boardYSize": args.size, "maxVisits": args.visits, "priority": -100,
                "includeOwnership": True, "includeMovesOwnership": True, "includePolicy": True,
                "initialStones": [], "initialPlayer": "B", "reportDuringSearchEvery": 1.0,
                "overrideSettings": {"reportAnalysisWinratesAs": "BLACK", "wideRootNoise": 0.04,
                                     "maxTime": 8.0}}
               for turn in range(len(moves) + 1)]
    load_before = os.getloadavg()
    engine = subprocess.Popen([sys.executable, os.path.join(REPO, "gtp_server.py"), "analysis",
                               "--workers", str(args.workers), *args.engine_option],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, cwd=REPO)
    engine.stdin.write(b'{"id":"ready","action":"query_version"}\n')
    engine.stdin.flush()
    json.loads(engine.stdout.readline())
    started = time.perf_counter()

    def send():   # as KaTrain does, from a thread of its own while the answers are read
        engine.stdin.write("".join(json.dumps(q) + "\n" for q in queries).encode())
        engine.stdin.close()

    threading.Thread(target=send, daemon=True).start()
    visits, errors = [], 0
    for line in engine.stdout:
        answer = json.loads(line)
        errors += "error" in answer
        if answer.get("isDuringSearch") is False:
            visits.append(answer["rootInfo"]["visits"])
    seconds = time.perf_counter() - started
    engine.wait()
    print(f"{len(visits)} positions of a {args.moves}-move {args.size}x{args.size} game, "
          f"maxVisits {args.visits}, {args.workers} workers: {seconds:.1f} s "
          f"({seconds / len(visits) * 1000:.0f} ms a position), mean visits "
          f"{sum(visits) / len(visits):.0f}, errors {errors}; load average "
          f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
