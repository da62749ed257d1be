"""Evaluation matches of a run's checkpoints: `match_checkpoint()` (one match, by
engine/tools/match.py), `evaluate_checkpoints()` (`kosumi-train eval`), and
`BackgroundEvaluations` (--eval-in-background: the trainer's matches in a process of their own).
The trainer (engine/training/trainer.py) decides when to evaluate and against whom.

Evaluation matches use engine/tools/match.py with GNU Go (--chinese-rules) as the referee when it is
installed: weak nets stop with dead stones on the board, which the match tool alone would count as
alive when the engines disagree about them.
"""
import json
import multiprocessing
import os
import shlex
import shutil
import signal
import sys
from pathlib import Path

from engine.tools.gtp_client import find_gnugo
from engine.training.rundir import CHECKPOINTS, EVALS_FILE, SETTINGS_FILE, read_jsonl, timestamp
from engine.training.settings import TrainSettings

# Evaluation protocols. kosumi's: the run's komi, colours alternating, the engine's own play
# settings. NeuroGo's test (Enzenberger 2003, section 3.2): the net always Black, komi 5.5, every
# move Gibbs-sampled at T = 0.33 over the paper's score (half the area margin: beta = 1 / 0.66
# per point of margin), no resigning, games that repeat another up to rotation and mirroring
# counted once.
KOSUMI_PROTOCOL = "kosumi"
NEUROGO_PROTOCOL = "neurogo"
PROTOCOLS = (KOSUMI_PROTOCOL, NEUROGO_PROTOCOL)
NEUROGO_KOMI = 5.5
NEUROGO_BETA = 1.0 / (2 * 0.33)
NEUROGO_OPPONENTS = ("gnugo-10", "gnugo-1")
NEUROGO_GAMES = 100


def match_checkpoint(run_dir, name, label, games, settings, opponent_checkpoint=None,
                     protocol=KOSUMI_PROTOCOL):
    """Play checkpoint `name` of run_dir against an opponent: label "gnugo-N" (GNU Go level N) or
    any label with opponent_checkpoint (another checkpoint of the run), under `protocol` (one of
    PROTOCOLS). Returns the eval log line (win rate with its 95% Wilson interval, over the
    distinct games under the NeuroGo protocol), or None if the match could not be played."""
    from engine.tools.match import MatchConfig, MatchAborted, run_match   # heavy: only when used
    run_dir = Path(run_dir)
    if label.startswith("gnugo-"):
        gnugo = find_gnugo()
        if gnugo is None:
            print("kosumi-train: GNU Go is not installed; no match against it", file=sys.stderr)
            return None
        opponent = gnugo_command(gnugo, int(label.split("-", 1)[1]))
    else:
        opponent = engine_command(run_dir / CHECKPOINTS / opponent_checkpoint / "weights.npz",
                                  settings.size, seed=2)
    neurogo = protocol == NEUROGO_PROTOCOL
    out_dir = run_dir / "evals" / (f"{name}-{label}" + ("-neurogo" if neurogo else ""))
    if out_dir.exists():
        shutil.rmtree(out_dir)
    if neurogo:
        config = MatchConfig(size=settings.size, komi=NEUROGO_KOMI, games=games, alternate=False)
        # every game played out: the average score is over all of them, as the paper's; the
        # net alone, as the paper played it
        player_options = ["--beta", repr(NEUROGO_BETA), "--no-resign", "--symmetries", "1"]
    else:
        config = MatchConfig(size=settings.size, komi=settings.komi, games=games)
        player_options = []
    # Weak nets stop with dead stones on the board; GNU Go judges them (the match tool alone
    # would count every stone alive when the engines disagree).
    gnugo = find_gnugo()
    referee = shlex.join([gnugo, "--mode", "gtp", "--chinese-rules"]) if gnugo else None
    try:
        summary = run_match(engine_command(run_dir / CHECKPOINTS / name / "weights.npz",
                                           settings.size, seed=1, options=player_options),
                            opponent, config, out_dir, referee_command=referee)
    except MatchAborted as error:
        print(f"kosumi-train: evaluation against {label} failed: {error}", file=sys.stderr)
        return None
    line = {"type": "eval", "game": int(name), "opponent": label, "referee": referee,
            "opponent_checkpoint": opponent_checkpoint, "protocol": protocol}
    if neurogo:      # the paper counts a game that repeats another (up to symmetry) once
        distinct = summary["distinct"]
        line.update(games=distinct["games"], games_played=summary["games"],
                    wins=distinct["wins_a"], draws=distinct["draws"],
                    win_rate=distinct["win_rate_a"], mean_margin=distinct["mean_margin_a"],
                    win_rate_95=distinct["win_rate_a_95"] or [0.0, 1.0])
    else:
        line.update(games=summary["games"], wins=summary["engines"]["A"]["wins"],
                    draws=summary["draws"], win_rate=summary["win_rate_a"],
                    mean_margin=summary["mean_margin_a"],
                    win_rate_95=summary["win_rate_a_95"] or [0.0, 1.0])
    return line


def _opponent_checkpoint(run_dir, label):
    """The checkpoint name an evaluation opponent label stands for (None for GNU Go)."""
    if label.startswith("gnugo-"):
        if not label[len("gnugo-"):].isdigit():
            raise SystemExit(f"kosumi-train eval: bad opponent {label!r} (gnugo-LEVEL)")
        return None
    if label == "initial":
        return initial_checkpoint(run_dir)
    if label.startswith("checkpoint-") and label[len("checkpoint-"):].isdigit():
        name = f"{int(label[len('checkpoint-'):]):09d}"
        if not (Path(run_dir) / CHECKPOINTS / name).is_dir():
            raise SystemExit(f"kosumi-train eval: no checkpoint {name} in {run_dir}")
        return name
    raise SystemExit(f"kosumi-train eval: unknown opponent {label!r} "
                     f"(initial, checkpoint-N or gnugo-LEVEL)")


def initial_checkpoint(run_dir):
    """The name of the run's first checkpoint: its untrained net, or the net it started from
    (--from-weights)."""
    return min(p.name for p in (Path(run_dir) / CHECKPOINTS).iterdir() if p.name.isdigit())


def evaluate_checkpoints(run_dir, names, opponents, games, protocol=KOSUMI_PROTOCOL):
    """Offline evaluation (`kosumi-train eval`): each checkpoint in names against each opponent
    ("initial" = the run's first checkpoint, "checkpoint-N", "gnugo-LEVEL") under `protocol`; lines
    appended to RUN_DIR/evals.jsonl, which the plot reads with the log. Does not disturb a run in
    progress."""
    run_dir = Path(run_dir)
    settings = TrainSettings.from_json(json.loads((run_dir / SETTINGS_FILE).read_text()))
    pairs = [(label, _opponent_checkpoint(run_dir, label)) for label in opponents]
    return [line for name in names
            for line in _record_evaluations(run_dir, name, pairs, games, settings, protocol)]


def _record_evaluations(run_dir, name, opponents, games, settings, protocol):
    """Checkpoint `name` against each (label, checkpoint name or None) of opponents: each match's
    line appended to evals.jsonl as soon as it ends, and summed up on stderr."""
    lines = []
    with open(Path(run_dir) / EVALS_FILE, "a") as stream:
        for label, checkpoint_name in opponents:
            line = match_checkpoint(run_dir, name, label, games, settings, checkpoint_name,
                                    protocol)
            if line is None:
                continue
            stream.write(json.dumps(line) + "\n")
            stream.flush()
            lines.append(line)
            print(_evaluation_summary(name, line), file=sys.stderr)
    return lines


def _evaluation_summary(name, line):
    low, high = line["win_rate_95"]
    distinct = f" distinct of {line['games_played']}" if "games_played" in line else ""
    return (f"{name} vs {line['opponent']} ({line.get('protocol', KOSUMI_PROTOCOL)} protocol): "
            f"{line['wins']}/{line['games']}{distinct} wins "
            f"({100 * line['win_rate']:.0f}%, 95% {100 * low:.0f}-{100 * high:.0f}%), "
            f"mean margin {line['mean_margin']}")


def engine_command(weights_path, size, seed, options=()):
    """The GTP command line of kosumi playing with a weight file (for matches), with more
    options of the engine: the source tree's gtp_server.py when there is one (it finds the engine
    package beside it from any directory), else the installed package."""
    server = Path(__file__).resolve().parents[2] / "gtp_server.py"
    program = [os.fspath(server)] if server.exists() else ["-m", "engine.gtp.main"]
    return shlex.join([sys.executable, *program, "--weights", os.fspath(weights_path),
                       "--size", str(size), "--seed", str(seed), *options])


def gnugo_command(gnugo, level):
    return shlex.join([gnugo, "--mode", "gtp", "--level", str(level), "--chinese-rules"])


class BackgroundEvaluations:
    """The trainer's evaluation matches in a process of their own (--eval-in-background), so
    that training goes on while they play (NeuroGo's test takes more than 40 minutes of a core at
    GNU Go level 10): one at a time, in the order of the trainer's queue (background_evals, kept
    in every checkpoint's state). A stopped run stops its evaluation, and the resumed run plays
    again the matches that evals.jsonl does not hold yet."""

    def __init__(self, trainer):
        self.trainer = trainer
        self.process = None
        self.finished_any = False     # the queue has lost a job: a checkpoint must say so

    @property
    def queue(self):
        return self.trainer.background_evals

    def log_path(self, job):
        return self.trainer.run_dir / "evals" / f"{job['checkpoint']}-{job['protocol']}.log"

    def poll(self):
        """Note a finished evaluation; start the next one when none is playing."""
        if self.process is not None:
            if self.process.is_alive():
                return
            job = self.queue.pop(0)
            self.finished_any = True
            for line in _evaluation_lines(self.trainer.run_dir, job["checkpoint"],
                                          job["protocol"]):
                print(f"kosumi-train: {_evaluation_summary(job['checkpoint'], line)}",
                      file=sys.stderr)
            if self.process.exitcode != 0:
                print(f"kosumi-train: the evaluation of checkpoint {job['checkpoint']} failed "
                      f"(exit code {self.process.exitcode}; {self.log_path(job)}); play it with "
                      f"kosumi-train eval {self.trainer.run_dir} --checkpoints "
                      f"{int(job['checkpoint'])} --protocol {job['protocol']}", file=sys.stderr)
            self.process = None
        while self.queue and self.process is None:
            job = self.queue[0]
            done = _evaluated_opponents(self.trainer.run_dir, job["checkpoint"], job["protocol"])
            opponents = [pair for pair in job["opponents"] if pair[0] not in done]
            if not opponents:
                self.queue.pop(0)
                self.finished_any = True
                continue
            self.log_path(job).parent.mkdir(exist_ok=True)
            self.process = multiprocessing.get_context("fork").Process(
                target=_evaluation_main,
                args=(self.trainer, {**job, "opponents": opponents}, self.log_path(job)))
            self.process.start()
            print(f"kosumi-train: evaluating checkpoint {job['checkpoint']} in the background "
                  f"({job['protocol']} protocol, against {', '.join(o for o, _ in opponents)}; "
                  f"log: {self.log_path(job)})", file=sys.stderr)

    def wait(self, stop):
        """Let the queue play out (the end of a run); a stop signal cuts it short."""
        if self.queue and not stop.stop:
            print(f"kosumi-train: waiting for {len(self.queue)} evaluation(s) (log: "
                  f"{self.log_path(self.queue[0])}); a stop leaves them to the resumption",
                  file=sys.stderr)
        while self.queue and not stop.stop:
            if self.process is not None:
                self.process.join(timeout=1.0)
            self.poll()

    def stop(self):
        """End the playing evaluation and its engines (its job stays queued)."""
        if self.process is None:
            return
        if self.process.is_alive():
            for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, None)):
                try:
                    os.killpg(self.process.pid, sig)
                except ProcessLookupError:    # just forked: no group, no engines yet
                    self.process.kill()
                self.process.join(timeout=grace)
                if not self.process.is_alive():
                    break
        self.process = None


def _evaluation_main(trainer, job, log_path):
    """A background evaluation (forked): its own process group, so that stopping it stops the
    engines it started; killed with the trainer however the trainer ends (a resumed run plays
    the evaluation again, and two must not play it side by side), which ends its engines too (they
    read end of file); the run's lock let go; output to the log file; the matches' lines to
    evals.jsonl as `kosumi-train eval` writes them."""
    trainer_pid = os.getppid()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    os.setsid()
    _die_with_parent()
    if os.getppid() != trainer_pid:      # the trainer ended before that took effect
        os._exit(1)
    trainer.close()                      # this process's descriptor of the run's lock
    descriptor = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    print(f"# {timestamp()}: checkpoint {job['checkpoint']}, {job['protocol']} protocol, "
          f"{job['games']} games against each of {[label for label, _ in job['opponents']]}")
    _record_evaluations(trainer.run_dir, job["checkpoint"], job["opponents"], job["games"],
                        trainer.settings, job["protocol"])
    print(f"# {timestamp()}: done")


def _die_with_parent():
    """Ask Linux for SIGKILL when the parent process ends (prctl PR_SET_PDEATHSIG); elsewhere
    nothing (a trainer killed with SIGKILL there leaves its evaluation playing)."""
    import ctypes
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    PR_SET_PDEATHSIG = 1
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _evaluation_lines(run_dir, name, protocol):
    """The lines of evals.jsonl about checkpoint `name` under `protocol`."""
    return [line for line in read_jsonl(Path(run_dir) / EVALS_FILE)
            if line.get("game") == int(name) and line.get("protocol", KOSUMI_PROTOCOL) == protocol]


def _evaluated_opponents(run_dir, name, protocol):
    """The opponents evals.jsonl holds a match of checkpoint `name` against under `protocol`."""
    return {line["opponent"] for line in _evaluation_lines(run_dir, name, protocol)}
