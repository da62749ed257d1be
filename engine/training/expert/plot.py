"""The history of an expert-iteration run (run.py's history.jsonl) as a picture: against the
run's hours, the games played, each new net's gate score (accepted or not), the self-play games'
Black wins and length, and the nets' win rates against fixed opponents (strength.py)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

from engine.training.expert.strength import strengths  # noqa: E402


def plot_history(run, out):
    """Writes the plot to out; returns out."""
    history = run.history()
    hours = [entry["time"] / 3600 for entry in history]
    figure, (games, gate, games_stats, strength) = plt.subplots(4, 1, figsize=(8, 12), sharex=True)
    games.plot(hours, [entry["games"] for entry in history], marker=".")
    games.set_ylabel("self-play games")
    gated = [(hour, entry) for hour, entry in zip(hours, history) if "gate_games" in entry]
    for accepted, marker in ((True, "o"), (False, "x")):
        points = [(hour, entry["gate_wins"] / entry["gate_games"]) for hour, entry in gated
                  if entry["accepted"] == accepted]
        if points:
            gate.scatter(*zip(*points), marker=marker, label="accepted" if accepted else "rejected")
    gate.set_ylim(0, 1)
    gate.set_ylabel("gate: new net's share")
    if gated:
        gate.axhline(run.settings.gate_threshold, color="grey", linestyle=":")
        gate.legend()
    else:
        gate.text(0.5, 0.5, "no gate: every net taken", transform=gate.transAxes, ha="center")
    stats = [(hour, entry) for hour, entry in zip(hours, history) if "mean_moves" in entry]
    if stats:
        games_stats.plot([hour for hour, _ in stats], [e["black_win_share"] for _, e in stats],
                         marker=".")
        length = games_stats.twinx()
        length.plot([hour for hour, _ in stats], [e["mean_moves"] for _, e in stats],
                    marker=".", color="tab:orange")
        length.set_ylabel("moves a game")
        games_stats.legend(games_stats.get_lines() + length.get_lines(),
                           ["Black's share of the wins", "moves a game"], loc="lower left")
    games_stats.set_ylim(0, 1)
    games_stats.set_ylabel("Black's share of the wins")
    lines = strengths(run)
    for opponent in sorted({line["opponent"] for line in lines}):
        points = sorted((line["time"] / 3600, line["win_rate"], line["win_rate_95"] or (0, 1))
                        for line in lines if line["opponent"] == opponent and line["time"] is not None)
        if points:
            hours_, rates, intervals = zip(*points)
            errors = [[rate - low for rate, (low, _) in zip(rates, intervals)],
                      [high - rate for rate, (_, high) in zip(rates, intervals)]]
            strength.errorbar(hours_, rates, yerr=errors, marker="o", capsize=3,
                              label=f"against {opponent}")
    strength.set_ylim(0, 1)
    strength.set_ylabel("win rate (95% interval)")
    if lines:
        strength.legend()
    strength.set_xlabel("hours")
    figure.suptitle(f"self-play run {run.dir.name}: {len(history) - 1} nets")
    figure.tight_layout()
    figure.savefig(out, dpi=90)
    plt.close(figure)
    return out
