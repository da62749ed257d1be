"""Strength table from kosumi-match directories: games pooled per row (several matches of the same
configuration, e.g. run in different sessions with different seeds), engine A's win rate with its
95% Wilson interval, and A's mean margin over the games scored by two passes. A game that repeats
an earlier one of its row (the same moves up to the board's symmetry, as kosumi-match finds them
within one match) is counted, and named below the table with the row's distinct games: two
matches of deterministic engines started in the same second, or resumed at once, can replay each
other's games (GNU Go seeds its randomness from the clock).

    python benchmarks/strength_table.py \\
        --row "no prior|1000|runs/noprior1000" --row "no prior|3000|runs/noprior-a,runs/noprior-b" \\
        --row "net prior|3000|runs/prior-a" --plot benchmarks/mcts_vs_gnugo10.png

A row is "label|x|dir,dir,...": x (a number, e.g. playouts per move, or empty) places the row on
the plot; rows with the same label form one line. The games are read
from the SGF files kosumi-match writes as it goes (PB/PW name the engines A and B, RE the
result), so an interrupted match counts with the games it finished.
"""
import argparse
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sgfmill import sgf  # noqa: E402

from engine.tools.match_summary import symmetry_key, wilson_interval  # noqa: E402

LABEL = re.compile(r"\((A|B)\)\s*$")


def game_results(directory):
    """(a_points, a_margin or None, resigned, forfeited, key) per finished game of a match
    directory; forfeited: ended by a forfeit (a crash, hang, illegal move or time loss); key: its
    symmetry_key, the same for games that repeat each other."""
    results = []
    for path in sorted(Path(directory).glob("game-*.sgf")):
        game = sgf.Sgf_game.from_bytes(path.read_bytes())
        root = game.get_root()
        black = LABEL.search(root.get("PB")).group(1)
        key = symmetry_key(black, [node.get_move() for node in game.get_main_sequence()[1:]],
                           game.get_size())
        result = root.get("RE") if root.has_property("RE") else ""
        if result in ("0", "Draw", "Jigo"):
            results.append((0.5, 0.0, False, False, key))
            continue
        match = re.fullmatch(r"([BW])\+(.*)", result)
        if not match:
            continue                                  # no result: not a finished game
        winner_is_a = (match.group(1) == "B") == (black == "A")
        margin = None
        try:
            margin = float(match.group(2))
        except ValueError:
            pass                                      # R (resignation), T (time), F (forfeit)
        results.append((1.0 if winner_is_a else 0.0,
                        None if margin is None else (margin if winner_is_a else -margin),
                        match.group(2).startswith("R"), match.group(2)[:1] in ("F", "T"), key))
    return results


def row_summary(directories, drop_forfeits=False):
    """The row's counts; with drop_forfeits, games ended by a forfeit are left out (counted in
    "forfeits" either way)."""
    games = [g for d in directories for g in game_results(d)]
    forfeits = sum(g[3] for g in games)
    if drop_forfeits:
        games = [g for g in games if not g[3]]
    points = sum(g[0] for g in games)
    margins = [g[1] for g in games if g[1] is not None]
    low, high = wilson_interval(points, len(games)) if games else (0.0, 0.0)
    distinct, keys = [], set()
    for game in games:
        if game[4] not in keys:
            keys.add(game[4])
            distinct.append(game)
    distinct_points = sum(g[0] for g in distinct)
    return {"games": len(games), "wins": sum(g[0] == 1.0 for g in games),
            "draws": sum(g[0] == 0.5 for g in games), "points": points,
            "rate": points / len(games) if games else float("nan"), "low": low, "high": high,
            "mean_margin": sum(margins) / len(margins) if margins else float("nan"),
            "scored": len(margins), "resignations": sum(g[2] for g in games),
            "forfeits": forfeits, "distinct": len(distinct), "distinct_points": distinct_points,
            "distinct_interval": wilson_interval(distinct_points, len(distinct))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--row", action="append", required=True, metavar="LABEL|X|DIRS")
    parser.add_argument("--plot", metavar="PNG", help="win rate against x, one line per label")
    parser.add_argument("--drop-forfeits", action="store_true",
                        help="leave out the games ended by a forfeit (e.g. an engine that "
                             "crashed): they count as results by default, as in tournaments")
    args = parser.parse_args()
    rows = []
    for spec in args.row:
        label, x, dirs = spec.split("|")
        summary = row_summary([d for d in dirs.split(",") if d], args.drop_forfeits)
        rows.append((label, float(x) if x else None, summary))
    print("| configuration | games | A wins / draws | win rate (95%) | mean margin (scored games) "
          "| resigned |")
    print("|---|---|---|---|---|---|")
    for label, _, s in rows:
        margin = f"{s['mean_margin']:+.1f}" if s["scored"] else "–"
        print(f"| {label} | {s['games']} | {s['wins']} / {s['draws']} | {100 * s['rate']:.1f}% "
              f"({100 * s['low']:.1f}–{100 * s['high']:.1f}%) | {margin} ({s['scored']}) "
              f"| {s['resignations']} |")
    for label, _, s in rows:
        if s["forfeits"]:
            print(f"\n{label}: {s['forfeits']} game(s) ended by a forfeit, "
                  f"{'left out' if args.drop_forfeits else 'counted above'} "
                  f"(the SGFs' comments say who forfeited and why)")
        repeats = s["games"] - s["distinct"]
        if repeats:
            low, high = s["distinct_interval"]
            print(f"\n{label}: {repeats} game(s) repeat an earlier one of the row; over the "
                  f"{s['distinct']} distinct games A scored {s['distinct_points']:g}, "
                  f"{100 * s['distinct_points'] / s['distinct']:.1f}% ({100 * low:.1f}–{100 * high:.1f}%)")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        lines = {}
        for label, x, s in rows:
            if x is not None and s["games"]:
                lines.setdefault(label, []).append((x, s))
        figure, axes = plt.subplots(figsize=(7, 4.5))
        for name, points in lines.items():
            points.sort(key=lambda item: item[0])
            xs = [p[0] for p in points]
            rates = [100 * p[1]["rate"] for p in points]
            errors = [[100 * (p[1]["rate"] - p[1]["low"]) for p in points],
                      [100 * (p[1]["high"] - p[1]["rate"]) for p in points]]
            axes.errorbar(xs, rates, yerr=errors, marker="o", capsize=4, label=name)
        axes.axhline(50, color="grey", linewidth=0.8, linestyle=":")
        axes.set_xscale("log")
        axes.set_xlabel("simulations per move")
        axes.set_ylabel("win rate against GNU Go (%), 95% interval")
        axes.set_ylim(0, 100)
        axes.legend()
        figure.tight_layout()
        figure.savefig(args.plot, dpi=100)


if __name__ == "__main__":
    main()
