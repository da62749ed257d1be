"""Expert iteration: workers play games with the PUCT search over the newest accepted net, a
learner trains the judging net on a window of the recent games and writes a new net every
`games_per_net` games, and a gate (or, with gate_games 0, KataGo's rule: every net accepted)
decides whether the workers play with it.

A run directory:
    expert.json           ExpertSettings and SelfPlaySettings (games.py)
    nets/net-NNNNN.npz    the nets the workers play with; current.json names the newest
    games/<chunks>        the workers' games (chunks.py), whole chunks only
    learner/              the judging net's training run (engine/training/policytrain.py's
                          PolicyRun: settings, weights, optimizer state, log.jsonl)
    history.jsonl         a line per new net: whether accepted, its gate match, the games and
                          updates it learnt from, the self-play games' statistics, the time
    clock.json            the run's seconds so far, noted while the learner waits for games and
                          when it stops: a resumed run's time (and games an hour) goes on from
                          there, not from its last net's

Nothing is lost or counted twice when a process is killed: a worker's games reach the disk a
whole chunk at a time (a worker killed with a chunk in hand loses only that chunk); the learner's
training resumes from its last checkpoint towards the same number of updates, and a net is
written before its history line, which is written before current.json names it (a resumed
learner redoes a gate that has no history line yet).

Reading order: ExpertRun.create(), ExpertRun.learn(), gate(); the workers are pool.py's.
"""
import dataclasses
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.nets.evaluator import JudgeEvaluator
from engine.nets.judge import JudgeNet
from engine.nets.policy import save_policy
from engine.training.expert.chunks import chunk_directories, chunk_name, chunk_number, write_chunk
from engine.training.expert.games import SEARCH_CACHE, described, play_game, settings_from
from engine.training.policydata import read_manifest
from engine.training.policytrain import WEIGHTS, PolicyRun, PolicySettings, net_settings
from engine.training.rundir import read_jsonl, write_atomic

SETTINGS = "expert.json"
NETS, GAMES, LEARNER, HISTORY, CURRENT = "nets", "games", "learner", "history.jsonl", "current.json"
CLOCK = "clock.json"
POLL_SECONDS = 2.0
CLOCK_SECONDS = 30.0    # how often a waiting learner notes the run's time (a kill loses no more,
                        # or the time of one net's training)


@dataclass
class ExpertSettings:
    """A run's loop: how many games make a net, what the learner draws from, the gate."""
    size: int = field(default=9, metadata=described("board size"))
    games_per_net: int = field(default=200, metadata=described("new games before the next net"))
    window_games: int = field(default=2000, metadata=described(
        "the learner draws from the most recent this many games"))
    steps_per_net: int = field(default=500, metadata=described("the learner's updates per net"))
    chunk_games: int = field(default=4, metadata=described("games a worker writes at a time"))
    gate_games: int = field(default=0, metadata=described(
        "games of a new net against the current one before the workers take it; 0: no gate, "
        "every net taken (KataGo)"))
    gate_threshold: float = field(default=0.55, metadata=described(
        "the share of gate games a new net must win (Leela Zero's 0.55)"))
    gate_visits: int = field(default=100, metadata=described("visits a move in gate games"))
    expert_data: str = field(default="", metadata=described(
        "data directories of expert games (kosumi-train policy data), comma-separated, drawn "
        "beside the self-play games so that the net keeps what it learnt from them"))
    expert_share: float = field(default=0.0, metadata=described(
        "the share of every batch drawn from --expert-data"))
    seed: int = field(default=1, metadata=described("random seed of the workers' and gates' games"))

    def __post_init__(self):
        if not 5 <= self.size <= 19:
            raise ValueError(f"size {self.size}: 5 to 19")
        for name in ("games_per_net", "window_games", "steps_per_net", "chunk_games", "gate_visits"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.gate_games < 0 or not 0.0 <= self.gate_threshold <= 1.0:
            raise ValueError("gate_games must be at least 0, gate_threshold in [0, 1]")
        if bool(self.expert_data) != (self.expert_share > 0) or not 0.0 <= self.expert_share < 1.0:
            raise ValueError("expert_data and an expert_share above 0 and below 1 go together")

    @property
    def expert_directories(self):
        return [path.strip() for path in self.expert_data.split(",") if path.strip()]


def _copy_atomic(source, target):
    temporary = target.with_name(f".{target.name}.tmp")
    shutil.copyfile(source, temporary)
    os.replace(temporary, target)


def net_name(number):
    return f"net-{number:05d}.npz"


class ExpertRun:
    """A run directory (module docstring)."""

    def __init__(self, run_dir):
        self.dir = Path(run_dir)
        try:
            saved = json.loads((self.dir / SETTINGS).read_text(encoding="utf-8"))
            self.settings = ExpertSettings(**saved["expert"])
            self.selfplay = settings_from(saved["selfplay"])
        except (OSError, ValueError, TypeError, KeyError) as error:
            raise ValueError(f"{self.dir}: not a self-play run ({error})") from None
        self._chunk_games = {}         # chunk directory name -> its games

    @classmethod
    def create(cls, run_dir, start_net, settings, selfplay, trainer):
        """A new run from a judging net (JudgeNet); trainer: PolicySettings fields for the
        learner (its architecture and features are the net's)."""
        run_dir = Path(run_dir)
        if not isinstance(start_net, JudgeNet):
            raise ValueError("self-play trains a judging net: start from one (kosumi-train policy "
                             "train --kind judge, or weights/judge_19x19_run.npz)")
        if run_dir.exists() and any(run_dir.iterdir()):
            raise ValueError(f"{run_dir}: not empty; continue a run with --resume")
        trainer = PolicySettings(**{**trainer, **net_settings(start_net), "kind": "judge"})
        for directory in settings.expert_directories:       # DataError naming one that is not data
            if read_manifest(directory)["size"] != settings.size:
                raise ValueError(f"{directory}: not {settings.size}x{settings.size} games")
        for part in (NETS, GAMES):
            (run_dir / part).mkdir(parents=True, exist_ok=True)
        write_atomic(run_dir / SETTINGS, json.dumps(
            {"expert": dataclasses.asdict(settings), "selfplay": dataclasses.asdict(selfplay)},
            indent=1) + "\n")
        PolicyRun.create(run_dir / LEARNER, trainer, start_net)
        # the learner resumes from its weight file: the first one is the starting net
        for path in (run_dir / LEARNER / WEIGHTS, run_dir / NETS / net_name(0)):
            save_policy(path, start_net, settings.size, 0, 0, {"step": 0, "self_play": "the starting net"})
        run = cls(run_dir)
        run._record({"net": 0, "accepted": True, "games": 0, "steps": 0, "time": 0.0})
        return run

    # ------------------------------------------------------------------ what is on disk

    def history(self):
        """The history's lines (one cut short by a kill is left out: its net is trained again)."""
        return read_jsonl(self.dir / HISTORY)

    def _record(self, entry):
        """A history line, then current.json naming the newest accepted net."""
        lines = self.history() + [entry]       # rewritten whole: no line cut short stays
        write_atomic(self.dir / HISTORY, "".join(json.dumps(line) + "\n" for line in lines))
        self._name_current()

    def _name_current(self):
        accepted = [entry["net"] for entry in self.history() if entry["accepted"]]
        write_atomic(self.dir / NETS / CURRENT, json.dumps({"net": accepted[-1]}) + "\n")

    def current_net(self):
        """The number of the net the workers play with."""
        try:
            return int(json.loads((self.dir / NETS / CURRENT).read_text())["net"])
        except (OSError, ValueError, KeyError, TypeError):
            self._name_current()      # a learner killed between a history line and this file
            return self.current_net()

    def chunks(self):
        """[(chunk directory, its games)], oldest first."""
        found = []
        for directory in chunk_directories(self.dir / GAMES):
            if directory.name not in self._chunk_games:
                self._chunk_games[directory.name] = read_manifest(directory)["games"]
            found.append((directory, self._chunk_games[directory.name]))
        return found

    def games(self):
        return sum(games for _, games in self.chunks())

    def net_bytes(self, number):
        return (self.dir / NETS / net_name(number)).read_bytes()

    def write_games(self, net, worker, games):
        """A chunk of games (games.SelfPlayGame) that net `net` played in `worker`, numbered
        after every chunk there."""
        chunks = self.chunks()
        number = chunk_number(chunks[-1][0]) + 1 if chunks else 1
        write_chunk(self.dir / GAMES / chunk_name(number, net, worker), games, net, worker)

    # ------------------------------------------------------------------ the learner

    def learn(self, stop=None, nets=None, threads=1, wait=True, idle=lambda: None,
              precision="fp32", report=None):
        """Train a net every games_per_net new games, gate it, and let the workers have it when
        accepted; until stop.requested, or until the run has `nets` nets beyond the first (None:
        no end), or (wait False) until too few new games are there. idle(): called while the
        learner waits for games (it may raise to end the loop). threads, precision: the training
        step's (policytrain.py). report(text): told of each new net. Returns the history."""
        started = time.monotonic()
        elapsed_before = max(self.history()[-1]["time"], self.noted_time())

        def elapsed():
            return elapsed_before + time.monotonic() - started

        try:
            self._learn(stop, nets, wait, idle, threads, precision, report, elapsed)
        finally:
            self.note_time(elapsed())
        return self.history()

    def noted_time(self):
        """The run's seconds as clock.json last noted them (0 before the first note)."""
        try:
            return float(json.loads((self.dir / CLOCK).read_text(encoding="utf-8"))["time"])
        except (OSError, ValueError, KeyError, TypeError):
            return 0.0

    def note_time(self, seconds):
        write_atomic(self.dir / CLOCK, json.dumps({"time": round(seconds, 1)}) + "\n")

    def _learn(self, stop, nets, wait, idle, threads, precision, report, elapsed):
        noted = time.monotonic()
        while not (stop and stop.requested):
            history = self.history()
            number = len(history)
            if nets is not None and number > nets:
                break
            chunks = self.chunks()
            games = sum(count for _, count in chunks)
            if games < history[-1]["games"] + self.settings.games_per_net:
                if not wait:
                    break
                if time.monotonic() - noted >= CLOCK_SECONDS:
                    self.note_time(elapsed())
                    noted = time.monotonic()
                idle()
                time.sleep(POLL_SECONDS)
                continue
            learner = self._train(number, self._window(chunks), stop, threads, precision)
            if stop and stop.requested:
                break
            entry = {"net": number, "games": games, "steps": learner.step,
                     "positions": learner.positions, **_selfplay_statistics(chunks, history)}
            candidate = self.dir / LEARNER / WEIGHTS
            if self.settings.gate_games:
                wins, played = self.gate(candidate, self.dir / NETS / net_name(self.current_net()),
                                         number)
                entry.update(gate_wins=wins, gate_games=played,
                             accepted=wins >= self.settings.gate_threshold * played)
            else:
                entry["accepted"] = True
            if entry["accepted"]:
                _copy_atomic(candidate, self.dir / NETS / net_name(number))
            entry["time"] = round(elapsed(), 1)
            entry["games_per_hour"] = round(3600 * (games - history[-1]["games"]) /
                                            max(entry["time"] - history[-1]["time"], 1e-3))
            self._record(entry)
            if report:
                report(describe([entry]))

    def _window(self, chunks):
        """The newest chunks holding at most window_games games (at least the newest one)."""
        window, games = [], 0
        for directory, count in reversed(chunks):
            if window and games + count > self.settings.window_games:
                break
            window.append(directory)
            games += count
        return window[::-1]

    def _train(self, number, window, stop, threads, precision):
        """The learner's run trained to number * steps_per_net updates on the window."""
        learner = PolicyRun.resume(self.dir / LEARNER)
        learner.change(steps=number * self.settings.steps_per_net)
        return learner.train([str(path) for path in window], threads=threads, stop=stop,
                             progress=False, log_every=max(1, min(100, self.settings.steps_per_net)),
                             checkpoint_every=max(1, min(1000, self.settings.steps_per_net)),
                             precision=precision, extra_dirs=self.settings.expert_directories,
                             extra_share=self.settings.expert_share)

    def gate(self, candidate, current, number):
        """(games the candidate net won, draws counting half; games) against the current net,
        colours alternating, at gate_visits a move without root noise."""
        settings = dataclasses.replace(self.selfplay, visits=self.settings.gate_visits,
                                       cheap_visits=0, noise_fraction=0.0, no_resign_share=0.0)
        nets = [JudgeEvaluator.load(path, cache_size=SEARCH_CACHE, precision=settings.precision)
                for path in (candidate, current)]
        return gate(*nets, self.settings.size,
                    settings, self.settings.gate_games,
                    np.random.default_rng([self.settings.seed, 1 << 20, number]))


def gate(candidate, current, size, settings, games, rng):
    """(the candidate's wins, draws counting half; games) of a match between two evaluators,
    the candidate Black in the even games."""
    wins = 0.0
    for game in range(games):
        pair = (candidate, current) if game % 2 == 0 else (current, candidate)
        result = play_game(pair, size, settings, rng, record=False)
        candidate_sign = 1 if game % 2 == 0 else -1
        wins += 0.5 if result.winner == 0 else float(result.winner == candidate_sign)
    return wins, games


def _selfplay_statistics(chunks, history):
    """The games since the last net: Black's share of the wins, their mean length, how many
    ended by resignation, and how many of the checked resignations were wrong."""
    since = history[-1]["games"]
    manifests, seen = [], 0
    for directory, count in chunks:
        if seen >= since:
            manifests.append(read_manifest(directory))
        seen += count
    games = sum(manifest["games"] for manifest in manifests)
    if not games:
        return {}
    total = {name: sum(manifest[name] for manifest in manifests)
             for name in ("moves", "black_wins", "resigned", "checked_resignations",
                          "wrong_resignations")}
    return {"black_win_share": round(total["black_wins"] / games, 3),
            "mean_moves": round(total["moves"] / games, 1),
            "resigned_share": round(total["resigned"] / games, 3),
            "checked_resignations": total["checked_resignations"],
            "wrong_resignations": total["wrong_resignations"]}


def is_expert_run(path):
    return (Path(path) / SETTINGS).is_file()


def describe(history):
    """One line a net of a run's history."""
    lines = []
    for entry in history:
        gate_text = f", gate {entry['gate_wins']:g}/{entry['gate_games']}" if "gate_games" in entry else ""
        lines.append(f"net {entry['net']}: {'accepted' if entry['accepted'] else 'rejected'}{gate_text}; "
                     f"{entry['games']} games, {entry['steps']} updates, {entry['time']:.0f} s"
                     + (f" ({entry['games_per_hour']} games/h)" if "games_per_hour" in entry else "")
                     + (f"; Black won {entry['black_win_share']:.0%}, {entry['mean_moves']:.0f} moves a game, "
                        f"{entry['resigned_share']:.0%} resigned ({entry['wrong_resignations']} of "
                        f"{entry['checked_resignations']} checked wrong)"
                        if "mean_moves" in entry else ""))
    return "\n".join(lines)

