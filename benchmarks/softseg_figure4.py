"""Draws issue 16's Figure-4-style curve (Enzenberger 2003, Figure 4: average score and wins
against GNU Go over the training games) from the measured points in softseg_figure4_9x9.csv.

    python benchmarks/softseg_figure4.py [--points CSV] [--out PNG]

The runs' own curves (loss, game length, and the evaluations since the history travels with the
weights) are `kosumi-train plot`'s; this one holds every test of the runs, also those whose logs
a lost machine took."""
import argparse
import csv
from pathlib import Path

HERE = Path(__file__).resolve().parent
# What the paper reports (section 4.2, against GNU Go 3.0): (games, average score, its input).
PAPER_POINTS = [(10000, -5.0, "preprocessed"), (40000, -25.0, "raw")]


def read_points(path):
    """{(run, opponent): [(games, wins, average_score, stderr or None)]}, sorted by games."""
    try:
        with open(path, newline="") as handle:
            lines = [line for line in handle if not line.startswith("#")]
    except OSError as error:
        raise SystemExit(f"{path}: cannot read the points: {error.strerror}") from None
    curves = {}
    for number, row in enumerate(csv.DictReader(lines), start=1):
        try:
            point = (int(row["games"]), int(row["wins"]), float(row["average_score"]),
                     float(row["stderr"]) if row["stderr"] else None)
        except (KeyError, TypeError, ValueError) as error:
            raise SystemExit(f"{path}: data row {number} is malformed: {error}") from None
        curves.setdefault((row["run"], row["opponent"]), []).append(point)
    if not curves:
        raise SystemExit(f"{path}: no points")
    return {key: sorted(points) for key, points in curves.items()}


def draw(curves, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = sorted({run for run, _ in curves})
    opponents = sorted({opponent for _, opponent in curves}, reverse=True)   # level 10 first
    figure, (score_axis, wins_axis) = plt.subplots(2, 1, figsize=(8, 8), sharex=True)
    for (run, opponent), points in sorted(curves.items()):
        games = [p[0] for p in points]
        style = ["o-", "s--"][opponents.index(opponent) % 2]
        colour = f"C{runs.index(run)}"
        label = f"{run} input vs GNU Go 3.8 {opponent.replace('gnugo-', 'level ')}"
        errors = [p[3] if p[3] is not None else 0.0 for p in points]
        score_axis.errorbar(games, [p[2] for p in points], yerr=errors, fmt=style, capsize=3,
                            color=colour, label=label)
        wins_axis.plot(games, [p[1] for p in points], style, color=colour, label=label)
    for games, score, run in PAPER_POINTS:
        colour = f"C{runs.index(run)}" if run in runs else "black"
        score_axis.plot([games], [score], "*", markersize=14, color=colour,
                        markeredgecolor="black", label=f"the paper's {run} net (vs GNU Go 3.0)")
    score_axis.axhline(0.0, color="black", linewidth=0.5)
    score_axis.set_ylabel("average score (points; ± one standard error)")
    wins_axis.set_ylabel("wins of 100")
    wins_axis.set_ylim(bottom=0)
    wins_axis.set_xlabel("self-play games trained")
    for axis in (score_axis, wins_axis):
        axis.grid(alpha=0.3)
        axis.legend(fontsize="small")
    figure.suptitle("NeuroGo's test of the 9x9 soft-segmentation runs (issue 16, Figure 4)")
    figure.tight_layout()
    figure.savefig(out, dpi=100)
    plt.close(figure)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=Path, default=HERE / "softseg_figure4_9x9.csv")
    parser.add_argument("--out", type=Path, default=HERE / "softseg_figure4_9x9.png")
    args = parser.parse_args(argv)
    draw(read_points(args.points), args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
