"""`kosumi-train plot`: a run's training curves to PNG (loss, game length, evaluation win rates
and margins over games trained), from its run directory or from the history a weight file
carries (engine/training/history.py); several runs overlaid to compare them.

Reading order: `plot_runs()`; `_read_run_log()` is what it reads of each run.
"""
from pathlib import Path

import numpy as np

from engine.nets import weights as weight_files
from engine.training.evaluation import KOSUMI_PROTOCOL
from engine.training.history import HISTORY_BLOCK, RunHistory
from engine.training.rundir import EVALS_FILE, LOG_FILE, read_jsonl

def plot_run(run_dir, out=None, window=200):
    """Loss, game length, and evaluation win rates and margins over games trained, as one PNG."""
    return plot_runs([run_dir], out, window)


def _read_run_log(source):
    """What a plot draws of a run directory or a weight file kosumi-train wrote: the game lines
    (none in a weight file), the evaluation lines, and the history's blocks of HISTORY_BLOCK
    games (RunHistory) that the games do not cover: those of the net a run directory started
    from, or all of a weight file's."""
    if source.is_file():
        try:
            _, metadata = weight_files.load_weights(source)
        except weight_files.WeightFileError as error:
            raise SystemExit(f"kosumi-train plot: {error}") from None
        history = metadata["trainer"].get("history")
        if history is not None:
            try:
                RunHistory().merge(history)          # refuses a malformed one
            except ValueError as error:
                raise SystemExit(f"kosumi-train plot: {source}: {error}") from None
        if not history or not history["blocks"]:
            raise SystemExit(f"kosumi-train plot: {source} holds no training history (written "
                             f"by an older kosumi-train, or not by kosumi-train)")
        return [], history["evals"], history["blocks"]
    lines = read_jsonl(source / LOG_FILE) + read_jsonl(source / EVALS_FILE)
    game_lines = [r for r in lines if r.get("type") == "game"]
    inherited = next((r["history"] for r in lines if r.get("type") == "start" and
                      "history" in r), {"blocks": [], "evals": []})
    if not game_lines and not inherited["blocks"]:
        raise SystemExit(f"kosumi-train plot: {source / LOG_FILE} has no games yet")
    return (game_lines, inherited["evals"] + [r for r in lines if r.get("type") == "eval"],
            inherited["blocks"])


def plot_runs(run_dirs, out=None, window=200):
    """The curves of one run, or of several overlaid to compare them (one colour per run, one
    line style per evaluation opponent); a run is its directory or a weight file kosumi-train
    wrote (the history it carries). The PNG goes to out, by default the (first) run directory's
    training.png, or NAME-training.png here for a weight file NAME.npz."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run_dirs = [Path(run_dir) for run_dir in run_dirs]
    runs = [(run_dir, *_read_run_log(run_dir)) for run_dir in run_dirs]
    single = len(runs) == 1
    opponents = sorted({_curve_label(r) for _, _, evals, _ in runs for r in evals})
    styles = ["o-", "s--", "^:", "d-."]
    figure, axes = plt.subplots(4, 1, figsize=(8, 12), sharex=True)
    for run_index, (run_dir, game_lines, eval_lines, blocks) in enumerate(runs):
        name = run_dir.stem if run_dir.is_file() else run_dir.name
        if blocks:          # the history the weights carried: a mean per block
            ends = [first + games - 1 for first, games, *_ in blocks]
            block_losses = [np.nan if loss is None else loss for _, _, loss, _, _ in blocks]
            block_lengths = [length for *_, length in blocks]
            label = f"{name}, from the weights"
            if single:
                label = f"mean of {HISTORY_BLOCK} games" + (", from the weights" if game_lines
                                                            else "")
            for axis, values in ((axes[0], block_losses), (axes[1], block_lengths)):
                axis.plot(ends, values, color=f"C{run_index}", alpha=0.6 if game_lines else 1.0,
                          label=label)
        if game_lines:
            numbers = np.array([r["game"] for r in game_lines])
            losses = np.array([np.nan if r["loss"] is None else r["loss"] for r in game_lines])
            lengths = np.array([r["length"] for r in game_lines], dtype=float)
            for axis, values in ((axes[0], losses), (axes[1], lengths)):
                if single:      # one run: every game too, under its running mean
                    axis.plot(numbers, values, ".", markersize=1, alpha=0.3, color="grey")
                axis.plot(numbers, _rolling_mean(values, window), color=f"C{run_index}",
                          label=f"mean of {window} games" if single else name)
        for opponent_index, opponent_name in enumerate(opponents):
            points = sorted((r for r in eval_lines if _curve_label(r) == opponent_name),
                            key=lambda r: r["game"])
            if not points:
                continue
            colour = f"C{opponent_index + 1}" if single else f"C{run_index}"
            style = "o-" if single else styles[opponent_index % len(styles)]
            label = f"vs {opponent_name}" if single else f"{name} vs {opponent_name}"
            x = [r["game"] for r in points]
            y = [r["win_rate"] for r in points]
            low = [r["win_rate"] - r["win_rate_95"][0] for r in points]
            high = [r["win_rate_95"][1] - r["win_rate"] for r in points]
            axes[2].errorbar(x, y, yerr=[low, high], fmt=style, capsize=3, color=colour,
                             label=f"{label} (95% Wilson)")
            margins = [(r["game"], r["mean_margin"]) for r in points if r["mean_margin"] is not None]
            if margins:
                axes[3].plot(*zip(*margins), style, color=colour, label=label)
    axes[0].set_ylabel("cross-entropy per output")
    axes[1].set_ylabel("game length (moves)")
    axes[2].set_ylim(-0.02, 1.02)
    axes[2].axhline(0.5, color="black", linewidth=0.5)
    axes[2].set_ylabel("win rate")
    axes[3].axhline(0.0, color="black", linewidth=0.5)
    axes[3].set_ylabel("mean margin (points)")
    axes[3].set_xlabel("games trained")
    for axis in axes:
        axis.grid(alpha=0.3)
    for axis in axes[:2]:
        axis.legend(loc="upper right")
    if opponents:       # where the points leave room: weak nets sit at the bottom, strong at the top
        for axis in axes[2:]:
            axis.legend(loc="best", fontsize="small")
    figure.suptitle("kosumi-train: " + ", ".join(run_dir.name for run_dir in run_dirs))
    figure.tight_layout()
    if out is None:
        out = Path(f"{run_dirs[0].stem}-training.png") if run_dirs[0].is_file() else \
            run_dirs[0] / "training.png"
    out = Path(out)
    figure.savefig(out, dpi=100)
    plt.close(figure)
    return out


def _curve_label(eval_line):
    """An evaluation curve's opponent, with the protocol when it is not kosumi's."""
    protocol = eval_line.get("protocol", KOSUMI_PROTOCOL)
    return eval_line["opponent"] + ("" if protocol == KOSUMI_PROTOCOL else f", {protocol} protocol")


def _rolling_mean(values, window):
    result = np.full(len(values), np.nan)
    for i in range(len(values)):
        chunk = values[max(0, i - window + 1):i + 1]
        chunk = chunk[~np.isnan(chunk)]
        if len(chunk):
            result[i] = chunk.mean()
    return result
