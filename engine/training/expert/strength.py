"""The strength of a run's nets against fixed opponents (`kosumi-train selfplay eval`): each a
match of kosumi's PUCT search over the net at a fixed number of visits a move (so that the
numbers do not depend on the machine) against GNU Go at a level, or against another net of the
run, with GNU Go as the referee, colours alternating at the run's komi. Each match's line goes
to strength.jsonl, which `history` describes and plots beside the nets.

A match already begun under evals/ is resumed, not played again (engine/tools/match.py).
"""
import json
import shlex
from pathlib import Path

from engine.tools.gtp_client import find_gnugo
from engine.training.evaluation import engine_command, gnugo_command
from engine.training.expert.run import NETS, net_name
from engine.training.rundir import read_jsonl, write_atomic

STRENGTH = "strength.jsonl"
EVALS = "evals"


def opponent_command(run, label, visits, gnugo):
    """The GTP command of an opponent label: gnugo-LEVEL or net-N (a net of the run)."""
    kind, _, number = label.partition("-")
    if not number.isdigit() or kind not in ("gnugo", "net"):
        raise ValueError(f"opponent {label!r}: gnugo-LEVEL or net-N")
    if kind == "gnugo":
        if gnugo is None:
            raise ValueError("GNU Go is not installed (apt-get install gnugo)")
        return gnugo_command(gnugo, int(number))
    return net_command(run, int(number), visits, seed=2)


def net_command(run, number, visits, seed=1):
    path = run.dir / NETS / net_name(number)
    if not path.is_file():
        raise ValueError(f"{run.dir}: no net {number} (the rejected ones are not kept)")
    return engine_command(path, run.settings.size, seed,
                          ["--search", "mcts", "--playouts", str(visits), "--policy-precision",
                           "bf16", "--komi", repr(run.selfplay.komi)])


def measure(run, number, opponent, games, visits):
    """Net `number` against `opponent` (a label) for `games` games; its strength.jsonl line."""
    from engine.tools.match import MatchAborted, MatchConfig, read_match, run_match
    gnugo = find_gnugo()
    command = net_command(run, number, visits)
    against = opponent_command(run, opponent, visits, gnugo)
    out_dir = run.dir / EVALS / f"net{number:05d}-vs-{opponent}-{visits}v"
    referee = shlex.join([gnugo, "--mode", "gtp", "--chinese-rules"]) if gnugo else None
    finished = None
    if (out_dir / "match.json").exists():
        _, config, finished = read_match(out_dir)
        if config.games != games:
            raise ValueError(f"{out_dir} holds a match of {config.games} games, not {games}")
    config = MatchConfig(size=run.settings.size, komi=run.selfplay.komi, games=games)
    try:
        summary = run_match(command, against, config, str(out_dir), referee_command=referee,
                            finished=finished)
    except MatchAborted as error:
        raise ValueError(f"net {number} against {opponent}: {error}") from None
    times = {entry["net"]: entry["time"] for entry in run.history()}
    line = {"net": number, "opponent": opponent, "visits": visits, "games": summary["games"],
            "wins": summary["engines"]["A"]["wins"], "draws": summary["draws"],
            "win_rate": summary["win_rate_a"], "win_rate_95": summary["win_rate_a_95"],
            "mean_margin": summary["mean_margin_a"], "time": times.get(number)}
    # a match measured again (resumed, or asked for twice) replaces its line
    lines = [entry for entry in strengths(run)
             if (entry["net"], entry["opponent"], entry["visits"]) != (number, opponent, visits)]
    lines.append(line)
    write_atomic(run.dir / STRENGTH, "".join(json.dumps(entry) + "\n" for entry in lines))
    return line


def strengths(run):
    return read_jsonl(Path(run.dir) / STRENGTH)


def describe_strength(line):
    low, high = line["win_rate_95"] or (0.0, 1.0)
    margin = "none counted" if line["mean_margin"] is None else f"{line['mean_margin']:+.1f}"
    return (f"net {line['net']} vs {line['opponent']} at {line['visits']} visits: "
            f"{line['wins']}/{line['games']} ({100 * line['win_rate']:.1f}%, 95% "
            f"{100 * low:.1f}-{100 * high:.1f}%), mean margin {margin}")
