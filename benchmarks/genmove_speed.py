"""genmove latency: kosumi over whole self-play games, and kosumi against GNU Go 3.8 (level 10)
on the same positions, as a ratio. Both engines are timed the same way: a GTP `genmove` round
trip through pipes to `python gtp_server.py` and `gnugo --mode gtp`.

    python benchmarks/genmove_speed.py [--sizes 9 19] [--games 2] [--positions 12]
                                       [--weights PATH | --evaluator uniform]

1. Self-play: kosumi plays --games whole games per size (to two passes, or 2 x points moves);
   every genmove's round trip is timed. This is the latency a user sees in a game (the
   evaluator's cache is warm: one new evaluation per position).
2. Same positions: --positions positions spread evenly over those games are set up in both
   engines (clear_board, then the game's moves with `play`) and each engine is timed on one
   genmove there. kosumi evaluates the replayed game from its start on that first genmove (a cold
   cache); GNU Go reads as it always does. The ratio is GNU Go's time over kosumi's.

Targets (issue 4): kosumi >= 100x faster than GNU Go level 10 on 9x9, >= 50x on 19x19.
Without --weights the engine's 1-ply default (weights/softseg_9x9.npz) is used; if it is missing, say
--weights PATH or --evaluator uniform (the table says which evaluator ran). Results go to
RESULTS.md by hand, with the command that produced them.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from engine.tools.gtp_client import GtpClient, find_gnugo  # noqa: E402

KOMI = {9: 7.0, 19: 7.5}    # CGOS komi; other sizes use 7.0


def timed(client, command, timeout=600):
    start = time.perf_counter()
    reply = client.send(command, timeout=timeout)
    return reply, time.perf_counter() - start


def self_play(kosumi, size, games):
    """Whole games of kosumi against itself: (list of move lists, list of genmove seconds)."""
    records, latencies = [], []
    for _ in range(games):
        for command in (f"boardsize {size}", "clear_board", f"komi {KOMI.get(size, 7.0)}"):
            kosumi.send(command)
        moves, passes, colour = [], 0, "b"
        while passes < 2 and len(moves) < 2 * size * size:
            vertex, seconds = timed(kosumi, f"genmove {colour}")
            latencies.append(seconds)
            if vertex.lower() == "resign":
                break
            moves.append((colour, vertex))
            passes = passes + 1 if vertex.lower() == "pass" else 0
            colour = "w" if colour == "b" else "b"
        records.append(moves)
    return records, latencies


def sample_positions(records, count):
    """count (moves so far, colour to move) pairs spread evenly over all the games' positions."""
    positions = [(moves[:i], "b" if i % 2 == 0 else "w")
                 for moves in records for i in range(len(moves))]
    if len(positions) <= count:
        return positions
    step = len(positions) / count
    return [positions[int(i * step)] for i in range(count)]


def time_on_positions(client, size, positions):
    seconds = []
    for moves, colour in positions:
        for command in (f"boardsize {size}", "clear_board", f"komi {KOMI.get(size, 7.0)}"):
            client.send(command)
        for mover, vertex in moves:
            client.send(f"play {mover} {vertex}")
        _, elapsed = timed(client, f"genmove {colour}")
        seconds.append(elapsed)
    return seconds


def describe(seconds):
    return f"{statistics.mean(seconds) * 1000:.1f} ms mean, {statistics.median(seconds) * 1000:.1f} ms median"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[9, 19])
    parser.add_argument("--games", type=int, default=2, help="self-play games per size")
    parser.add_argument("--positions", type=int, default=12,
                        help="positions per size timed in both engines")
    parser.add_argument("--gnugo-level", type=int, default=10)
    parser.add_argument("--weights", help="kosumi's weight file (default: the engine's 1-ply default)")
    parser.add_argument("--evaluator", choices=("net", "uniform"), default="net")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    gnugo_path = find_gnugo()
    if gnugo_path is None:
        sys.exit("GNU Go is not installed (apt-get install gnugo)")
    kosumi_command = [sys.executable, "gtp_server.py", "--seed", str(args.seed), "--no-resign",
                      "--evaluator", args.evaluator]
    if args.weights:
        kosumi_command += ["--weights", args.weights]
    gnugo_command = [gnugo_path, "--mode", "gtp", "--level", str(args.gnugo_level),
                     "--chinese-rules", "--seed", str(args.seed)]
    evaluator = "uniform evaluator" if args.evaluator == "uniform" else \
        f"net {args.weights or 'weights/softseg_9x9.npz'}"

    rows = []
    for size in args.sizes:
        with GtpClient(kosumi_command, cwd=REPO, stderr=sys.stderr) as kosumi, \
                GtpClient(gnugo_command) as gnugo:
            records, game_latencies = self_play(kosumi, size, args.games)
            positions = sample_positions(records, args.positions)
            ours = time_on_positions(kosumi, size, positions)
            theirs = time_on_positions(gnugo, size, positions)
        moves = sum(len(r) for r in records)
        ratio_mean = statistics.mean(theirs) / statistics.mean(ours)
        ratio_median = statistics.median(theirs) / statistics.median(ours)
        print(f"{size}x{size}: self-play {moves} moves in {args.games} games: {describe(game_latencies)}")
        print(f"{size}x{size}: same {len(positions)} positions: kosumi {describe(ours)}; "
              f"GNU Go level {args.gnugo_level} {describe(theirs)}; "
              f"ratio {ratio_mean:.0f}x (means), {ratio_median:.0f}x (medians)", flush=True)
        rows.append((size, moves, game_latencies, positions, ours, theirs, ratio_mean, ratio_median))

    print()
    print(f"kosumi ({evaluator}) genmove round trip vs GNU Go 3.8 level {args.gnugo_level}:")
    print()
    print("| board | self-play genmove (mean / median) | same positions: kosumi | GNU Go | ratio (means / medians) |")
    print("|---|---|---|---|---|")
    for size, moves, game_latencies, positions, ours, theirs, ratio_mean, ratio_median in rows:
        print(f"| {size}x{size} | {statistics.mean(game_latencies) * 1000:.1f} / "
              f"{statistics.median(game_latencies) * 1000:.1f} ms ({moves} moves) | "
              f"{statistics.mean(ours) * 1000:.1f} ms | {statistics.mean(theirs) * 1000:.0f} ms | "
              f"{ratio_mean:.0f}x / {ratio_median:.0f}x ({len(positions)} positions) |")


if __name__ == "__main__":
    main()
