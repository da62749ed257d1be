"""kosumi-train: TD self-play training of the Internal Symmetry Network.

Usage:
    kosumi-train --run-dir RUN_DIR [--games N] [options]     start a run (RUN_DIR must be new/empty)
    kosumi-train --resume RUN_DIR [--games N] [--workers K]  continue it exactly where it stopped
    kosumi-train --run-dir RUN_DIR --from-weights NET.npz    a new run from a net kosumi-train wrote
    kosumi-train ... --ray [auto|HEAD:6379]                  self-play on Ray actors (a cluster)
    kosumi-train plot RUN_DIR... [--out PNG]                 training curves to PNG (several:
                                                             compared; a weight file: its curves)
    kosumi-train policy {data,train,eval,plot} ...          the move-prediction network
                                                             (engine/training/policycli.py)
    kosumi-train eval RUN_DIR [--checkpoints N,..] [--opponents initial,gnugo-1] [--games G]
                      [--protocol kosumi|neurogo]            match checkpoints (evals.jsonl)
(`python -m engine.train` is the same program.)

Reading order: `Trainer.run()` is the loop: it hands games to self-play (in-process with one
worker, else `_worker_main` processes), applies each result with `Trainer._apply()`, logs a JSONL
line per game, checkpoints, and evaluates. The learning itself is `game_gradient()` (Blair: the
gradient of one game, TD(lambda) targets from engine/training/td.py) and `Trainer._train_recent_games()`
(NeuroGo: TD(0) over the 10 most recent games). Self-play games come from engine/training/selfplay.py.

Blair's procedure (default; Blair 2008, section V): moves by 1-ply Boltzmann (beta = 4) over the
current net under the training scoring c = s = 0.4; after each game, the TD(lambda = 0.9) targets
of every position (engine/training/td.py), the summed cross-entropy gradient over every point, output and
position, one step of learning rate 5e-6 and a weight decay of 0.99999. The gradient is summed over
the points, not averaged, as in the paper ("differentials accumulate at every single vertex"),
which is what makes the tiny rate move the weights: on 9x9 a game's gradient has entries in the
thousands. A preliminary phase (--shortcut-games) trains only the input->output shortcut weights:
the paper's linear player that makes games terminate. During that phase a pass is allowed only when
no other move is (played-out games, whatever --pass-rule says: an untrained net may pass at once),
and weight decay applies only to the weights being trained.

NeuroGo's procedure (--procedure neurogo; Enzenberger 2003, section 3): greedy moves, except 15%
Gibbs-sampled at T = 4 whose positions are not trained; after each game the 10 most recent games
are trained with TD(0), in random order, each backward from its end, updating after each position.

Inputs and outputs (new runs only; stored in the settings and so in every weight file):
--feature-set picks the net's inputs (isn14 one-hot, or the multi-hot neurogo / neurogo_lite of
engine/nets/features.pyx, whose positions are stored as (num_locs, max_active) active inputs).
--rich-signal adds NeuroGo 3's extra outputs (eyes, connections, live points), trained by the same
TD targets as the territory outputs with the final board's network.rich_targets() as their
outcome; values, moves and the recurrence still come from the seven territory outputs.

Evaluation matches use engine/tools/match.py with GNU Go (--chinese-rules) as the referee when it is
installed: weak nets stop with dead stones on the board, which the match tool alone would count as
alive when the engines disagree about them.

Parallelism: with K > 1 workers, K processes play games with a copy of the weights as of their
last game and send back the game's gradient (Blair) or the game itself (NeuroGo); the learner (this
process) applies them in arrival order and sends the worker the new weights with its next game.
One worker plays in-process; with --seed such a run is reproducible bit for bit, and a resumed run
continues exactly (weights, game counter, generator state, recent games, log). With several workers
the arrival order varies, so runs are not reproducible. With --ray the workers are Ray actors on
a cluster (engine/training/raypool.py, the same interface as _WorkerPool; Ray is imported only
then), each playing --ray-games-per-call games per call: weights go out through Ray's object
store, and the learner stays in this process and still learns one game at a time.

Run directory:
    settings.json          the training settings (the newest; a checkpoint's own are in its
                           weights' metadata, and resuming uses those)
    settings-changes.jsonl learning rate / decay changes made on resume, with their game
    log.jsonl              one line per game ({"type": "game", ...}), per --eval-every match
                           ("eval") and per settings change ("settings")
    evals.jsonl            the matches of `kosumi-train eval` and of --eval-in-background
                           (the plot reads both files)
    .lock                  flock of the process training the run (one trainer per run)
    checkpoints/NNNNNNNNN/ weights.npz (engine weight file, metadata: games trained, settings),
                           state.json (counter, generator, phase, statistics), recent.npz (NeuroGo)
    LATEST                 the name of the newest complete checkpoint
    evals/                 SGFs and summaries of the evaluation matches, and the output of
                           those played in the background (CHECKPOINT-PROTOCOL.log)
Each checkpoint's weights also carry the run's curves in brief (RunHistory: means of 100 games,
the evaluations), so a run started from them elsewhere (--from-weights) keeps its curves.
A checkpoint is written to a temporary directory and renamed, then LATEST is replaced atomically,
so a kill -9 at any moment loses at most the games since the last checkpoint. On resume the log is
cut back to the checkpoint's game counter.
"""
import argparse
import collections
import dataclasses
import datetime
import fcntl
import json
import math
import multiprocessing
import os
import shlex
import shutil
import signal
import sys
import time
from pathlib import Path

import numpy as np

from engine.nets import network as isn
from engine.nets import softseg
from engine.training import td
from engine.nets import weights as weight_files
from engine.rules.board import BLACK, WHITE, opponent
from engine.tools.cli import number, options_given
from engine.tools.gtp_client import find_gnugo
from engine.training.selfplay import (PASS_RULES, PROCEDURES, SelfPlayConfig, play_game,
                                      play_softseg_game)

RECENT_RESULTS = 100            # games in the progress bar's running statistics
STOP_SIGNAL_EXITS = {-signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP}   # a worker's exit code
                                                    # when a signal stopped it
SETTINGS_FILE = "settings.json"
SETTINGS_HISTORY_FILE = "settings-changes.jsonl"   # changes made on resume, with their game
LOG_FILE = "log.jsonl"
EVALS_FILE = "evals.jsonl"          # offline evaluations (kosumi-train eval)
HISTORY_BLOCK = 100                 # games per point of the loss and length curves a weight file
                                    # carries (RunHistory)
HISTORY_EVAL_KEYS = ("game", "opponent", "protocol", "games", "games_played", "wins", "draws",
                     "win_rate", "win_rate_95", "mean_margin")
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
LATEST_FILE = "LATEST"
LOCK_FILE = ".lock"                  # held (flock) by the process training the run
CHECKPOINTS = "checkpoints"
ARCHITECTURES = ("isn", "softseg")   # Blair's ISN; NeuroGo 3's soft segmentation (--arch softseg)
SOFTSEG_LEARNING_RATE = 3e-4        # NeuroGo's rate (Enzenberger 2003, section 4.1)
MAX_WEIGHT_LAG = 8                   # --ray: versions a game's weights may lag. One is published
                                     # each time every actor could have finished a call, so a lag
                                     # of 8 is a call 8 times slower than the rest: a stuck node's
                                     # games are refused, not learned from weights long gone
RAY_GAMES_PER_CALL = 8               # --ray: games an actor plays per call. Ray's fixed work in
                                     # the driver (most of the 2.3-2.9 ms a game of one game a call,
                                     # docs/notebook/ray.md) is shared by them: at 8, learning is most of
                                     # the driver's work; the weights get up to A·k games older
                                     # (A actors, k of these)


@dataclasses.dataclass(frozen=True)
class TrainSettings:
    """Everything that defines a run's learning; stored in settings.json and weight metadata."""
    size: int = 9
    procedure: str = "blair"
    lam: float = None                # TD lambda; None: 0.9 (blair) or 0 (neurogo)
    learning_rate: float = 5e-6      # Blair's rate, on the gradient summed over points
    weight_decay: float = 0.99999    # Blair's per-game decay factor
    beta: float = 4.0
    gibbs_fraction: float = 0.15
    gibbs_temperature: float = 4.0
    capture_value: float = 0.4
    stone_value: float = 0.4
    move_cap_factor: float = 3.0
    pass_rule: str = "forced"
    shortcut_games: int = 1000       # preliminary phase: shortcut weights only
    recent_games: int = 10           # NeuroGo: games retrained after each game
    train_capped: bool = False       # capped games have no real end: not trained by default
    hidden: tuple = (4, 2, 2, 0, 2)  # T, S, D, C, F hidden units (the paper's 714 parameters)
    feature_set: str = "isn14"       # the net's inputs (engine/nets/features.pyx)
    rich_signal: bool = False        # NeuroGo's extra outputs, trained by TD beside the seven
    init_scale: float = weight_files.DEFAULT_INIT_SCALE
    seed: int = 0
    komi: float = 7.0                # only for the logged results
    arch: str = "isn"                # "softseg": NeuroGo 3's network (hidden and rich_signal are
                                     # the ISN's; softseg always has the rich signal's outputs)
    softseg_hidden: tuple = (softseg.DEFAULT_HIDDEN1, softseg.DEFAULT_HIDDEN2)
    softseg_intervals: int = softseg.DEFAULT_INTERVALS

    def __post_init__(self):
        object.__setattr__(self, "softseg_hidden", tuple(int(h) for h in self.softseg_hidden))
        if self.arch not in ARCHITECTURES:
            raise ValueError(f"arch must be one of {ARCHITECTURES}, not {self.arch!r}")
        if self.arch == "softseg":
            if self.procedure != "neurogo":
                raise ValueError("--arch softseg trains by NeuroGo's procedure: --procedure neurogo")
            if self.shortcut_games:
                raise ValueError("--arch softseg has no shortcut phase: --shortcut-games 0")
            if self.feature_set not in softseg.FEATURE_SETS:
                raise ValueError(f"--arch softseg takes the input sets {softseg.FEATURE_SETS}, "
                                 f"not {self.feature_set!r}")
            if not self.rich_signal:
                raise ValueError("--arch softseg is trained by the rich signal (rich_signal true)")
            if len(self.softseg_hidden) != 2 or not 1 <= self.softseg_hidden[0] <= 64 or \
                    not 0 <= self.softseg_hidden[1] <= 64 or not 1 <= self.softseg_intervals <= 64:
                raise ValueError(f"softseg sizes out of range: hidden {self.softseg_hidden}, "
                                 f"intervals {self.softseg_intervals}")
        if self.lam is None:
            object.__setattr__(self, "lam", 0.9 if self.procedure == "blair" else 0.0)
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        if self.procedure not in PROCEDURES:
            raise ValueError(f"procedure must be one of {PROCEDURES}, not {self.procedure!r}")
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"lambda must be in [0, 1], not {self.lam}")
        if self.procedure == "neurogo" and self.lam != 0.0:
            raise ValueError("the neurogo procedure is TD(0): lambda must be 0")
        if not self.learning_rate > 0.0 or not math.isfinite(self.learning_rate):
            raise ValueError(f"learning rate must be a positive number, not {self.learning_rate}")
        if not 0.0 < self.weight_decay <= 1.0:
            raise ValueError(f"weight decay factor must be in (0, 1], not {self.weight_decay}")
        if self.shortcut_games < 0 or self.recent_games < 1:
            raise ValueError("shortcut_games must be >= 0 and recent_games >= 1")
        if len(self.hidden) != 5 or min(self.hidden) < 0 or sum(self.hidden) == 0:
            raise ValueError(f"hidden must be five counts T,S,D,C,F >= 0, not {self.hidden}")
        if self.arch == "isn" and self.feature_set not in isn.FEATURE_SETS:
            hint = " (raw is --arch softseg's)" if self.feature_set in softseg.FEATURE_SETS else ""
            raise ValueError(f"feature set must be one of {sorted(isn.FEATURE_SETS)}, "
                             f"not {self.feature_set!r}{hint}")
        if not isinstance(self.rich_signal, bool):
            raise ValueError(f"rich_signal must be true or false, not {self.rich_signal!r}")
        self.selfplay_config("all")          # validates the self-play settings

    def selfplay_config(self, phase):
        return SelfPlayConfig(
            size=self.size, procedure=self.procedure, beta=self.beta,
            gibbs_fraction=self.gibbs_fraction, gibbs_temperature=self.gibbs_temperature,
            capture_value=self.capture_value, stone_value=self.stone_value,
            move_cap_factor=self.move_cap_factor, komi=self.komi,
            pass_rule="forced" if phase == "shortcut" else self.pass_rule)

    def to_json(self):
        values = dataclasses.asdict(self)
        values["hidden"] = list(self.hidden)
        values["softseg_hidden"] = list(self.softseg_hidden)
        return values

    @classmethod
    def from_json(cls, values):
        """Settings from settings.json or weight metadata; runs from before feature_set and
        rich_signal existed get their defaults (isn14, no rich signal), which they used."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown training settings {sorted(unknown)}")
        return cls(**values)


def hidden_counts(settings):
    return dict(zip("TSDCF", settings.hidden))


def new_network(settings):
    if settings.arch == "softseg":
        return weight_files.new_softseg_network(settings.seed, settings.feature_set,
                                                *settings.softseg_hidden,
                                                settings.softseg_intervals,
                                                scale=settings.init_scale)
    return weight_files.new_network(settings.seed, hidden_counts(settings),
                                    feature_set=settings.feature_set, scale=settings.init_scale,
                                    rich_signal=settings.rich_signal)


def shortcut_mask(network):
    """Boolean mask of the input->output shortcut parameters (the preliminary phase's)."""
    mask = np.zeros(network.num_params, dtype=bool)
    if "shortcut" not in network.parameter_blocks():     # softseg: no shortcut phase
        return mask
    start, stop, _ = network.parameter_blocks()["shortcut"]
    mask[start:stop] = True
    return mask


@dataclasses.dataclass
class TrainingGame:
    """What learning needs from one self-play game (plain arrays: it crosses process borders)."""
    inputs: np.ndarray            # (T, num_locs) int32, (T, num_locs, max_active) if multi-hot
    black_to_move: np.ndarray     # (T,) bool
    trained: np.ndarray           # (T,) bool
    final_targets: np.ndarray     # (num_locs, num_outputs), real-Black frame: Table IV's seven,
                                  # then with the rich signal the final board's rich_targets()
    final_mask: np.ndarray        # (num_locs, num_outputs) bool
    summary: dict                 # length, result, score, capped, superko rejections, seconds
    observed: np.ndarray = None   # softseg: (T, num_locs, 21) int8, the signal present on the
                                  # board at each position (real-Black frame, -1 where none)

    @classmethod
    def from_record(cls, record, settings, seconds):
        targets, mask = final_targets_of(record.final_board, settings)
        trained = ~record.explored if settings.procedure == "neurogo" else np.ones(record.length, bool)
        if record.capped and not settings.train_capped:
            trained = np.zeros(record.length, dtype=bool)
        summary = {"length": record.length, "result": record.result, "score": record.score,
                   "capped": record.capped, "superko_rejections": record.superko_rejections,
                   "explored": int(record.explored.sum()), "seconds": round(seconds, 4)}
        return cls(record.inputs, record.black_to_move, trained, targets, mask, summary,
                   record.extra.get("observed"))


def final_targets_of(board, settings):
    """The TD targets and mask of a game's final board in the real-Black frame: Table IV's seven
    per point, followed with the rich signal by the rich outputs' (network.rich_targets); for
    softseg the final signal of section 2.1 (softseg.rich_signal)."""
    if settings.arch == "softseg":
        return softseg.rich_signal(board, BLACK, final=True)
    targets, mask = isn.final_targets(board, settings.capture_value, BLACK)
    if not settings.rich_signal:
        return targets, mask
    rich, rich_mask = isn.rich_targets(board, BLACK)
    return np.concatenate([targets, rich], axis=1), np.concatenate([mask, rich_mask], axis=1)


def game_gradient(network, game, lam, outputs=None):
    """(gradient, loss, entries) of one game under TD(lambda): the summed cross-entropy gradient of
    every trained position against its lambda-return targets. outputs: the outputs the game was
    played with, (T, num_locs, num_outputs) (recomputed from the inputs when None)."""
    grad = np.zeros(network.num_params)
    if not game.trained.any():
        return grad, 0.0, 0
    if outputs is None:
        outputs = np.array([network.forward(x) for x in game.inputs])
    targets, mask = td.lambda_targets(outputs, game.black_to_move, game.final_targets,
                                      game.final_mask, lam, game.trained)
    loss = 0.0
    for t in np.flatnonzero(game.trained):
        loss += network.loss_and_gradient(game.inputs[t], targets[t], mask[t], grad)
    return grad, loss, int(mask.sum())


def play_training_game(network, settings, phase, rng):
    """One self-play game and, for Blair's procedure, its gradient: (TrainingGame, gradient or
    None, loss, entries)."""
    start = time.perf_counter()
    play = play_softseg_game if settings.arch == "softseg" else play_game
    record = play(network, settings.selfplay_config(phase), rng)
    game = TrainingGame.from_record(record, settings, time.perf_counter() - start)
    if settings.procedure == "neurogo":
        return game, None, 0.0, 0
    grad, loss, entries = game_gradient(network, game, settings.lam, record.outputs)
    return game, grad, loss, entries


def final_position_error(network, positions):
    """Mean squared error of the territory outputs at final positions against their Table IV
    targets: how well the net predicts game ends it has not trained on (the rich outputs of a
    rich-signal net are not counted: the value comes from the seven). positions: (inputs,
    black_to_move, targets, mask) with targets and mask (num_locs, 7) in the real-Black frame
    (final_position())."""
    errors, count = 0.0, 0
    for inputs, black_to_move, targets, mask in positions:
        outputs = network.forward(inputs)[:, :isn.N_OUTPUTS]
        if not black_to_move:
            targets, mask = td.swap_frame(targets), td.swap_frame_mask(mask)
        errors += float(((outputs - targets)[mask] ** 2).sum())
        count += int(mask.sum())
    return errors / max(count, 1)


def final_position(network, record, capture_value):
    """A finished game's final position for final_position_error(): its inputs in network's
    feature set (the side to move next as Black, the recurrence of the game's last evaluation), whether Black is to
    move, and its Table IV targets and mask in the real-Black frame."""
    last = record.length - 1
    last_colour = BLACK if record.black_to_move[last] else WHITE
    weights = isn.liberty_weights(record.outputs[last], last_colour)
    to_move = opponent(last_colour)
    targets, mask = isn.final_targets(record.final_board, capture_value, BLACK)
    return network.encode(record.final_board, to_move, weights), to_move == BLACK, targets, mask


# ------------------------------------------------------------------------------------ workers

class SelfPlayWorker:
    """What a self-play worker holds, in a process of the local pool or in a Ray actor
    (engine/training/raypool.py): the settings, its own copy of the net and its random stream."""

    def __init__(self, settings_json, seed_sequence):
        self.settings = TrainSettings.from_json(settings_json)
        self.network = new_network(self.settings)
        self.rng = np.random.default_rng(seed_sequence)

    def play(self, phase):
        """One game with the weights it holds: play_training_game()'s (game, gradient, loss,
        entries)."""
        return play_training_game(self.network, self.settings, phase, self.rng)


def _worker_main(worker_id, settings_json, seed_sequence, tasks, results):
    """A self-play process: receives (params, phase) or None (stop), returns game results."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the learner decides when to stop
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    worker = SelfPlayWorker(settings_json, seed_sequence)
    while True:
        task = tasks.recv()
        if task is None:
            break
        params, phase = task
        worker.network.set_params(params)
        results.put((worker_id, worker.play(phase)))


class Interrupted:
    """SIGINT/SIGTERM set a flag; the loop checkpoints and stops after the game in hand."""

    def __init__(self):
        self.stop = False
        self.signal_name = None

    def install(self):
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._handle)

    def _handle(self, signum, frame):
        self.stop = True
        self.signal_name = signal.Signals(signum).name


# ------------------------------------------------------------------------------------ trainer

def new_stats():
    """A run's counters before its first game (checkpoints and weight metadata keep them)."""
    return {"capped_games": 0, "superko_rejections": 0, "positions_trained": 0}


@dataclasses.dataclass
class StartingNet:
    """A net that kosumi-train wrote (a checkpoint's weights.npz, a shipped net), to start a new
    run from (`--from-weights`): the run keeps its weights, training settings and game count."""
    path: Path
    network: object
    settings: TrainSettings
    games_trained: int
    stats: dict
    params_sha256: str
    history: dict = None       # RunHistory.to_json() of the run that wrote it (None: older files)

    @classmethod
    def load(cls, path):
        """Refuses, naming the file, a weight file that is not a kosumi-train net."""
        path = Path(path)
        try:
            network, metadata = weight_files.load_weights(path)
            trainer = metadata.get("trainer")
            if not isinstance(trainer, dict) or not isinstance(trainer.get("settings"), dict):
                raise ValueError("its metadata holds no training settings: not written by "
                                 "kosumi-train")
            settings = TrainSettings.from_json(trainer["settings"])
            if settings.size != metadata["board_size"]:
                raise ValueError(f"its training settings say size {settings.size}, its "
                                 f"board_size {metadata['board_size']}")
            history = trainer.get("history")
            if history is not None:
                RunHistory().merge(history)          # refuses a malformed one
        except weight_files.WeightFileError as error:
            raise SystemExit(f"kosumi-train: {error}") from None
        except (ValueError, TypeError) as error:
            raise SystemExit(f"kosumi-train: {path}: cannot start a run from it: {error}") from None
        stats = {**new_stats(), **trainer.get("stats", {})}
        return cls(path, network, settings, metadata["games_trained"], stats,
                   metadata["params_sha256"], history)


class Trainer:
    def __init__(self, run_dir, settings, network, games_trained=0, rng_state=None, recent=None,
                 stats=None):
        self.run_dir = Path(run_dir)
        self.settings = settings
        self.network = network
        self.games_trained = games_trained
        self.rng = np.random.default_rng(settings.seed)
        if rng_state is not None:
            self.rng.bit_generator.state = rng_state
        self.recent = collections.deque(recent or [], maxlen=settings.recent_games)
        self.stats = stats or new_stats()
        self.shortcut_only = shortcut_mask(network)
        self.last_checkpoint = None
        self.eval_history = []
        self.background_evals = []    # evaluate_in_background's queue, the running one first
        self.history = RunHistory()   # the log in brief, for the weight files
        self._lock = _lock_run(self.run_dir)

    def close(self):
        """Release the run (its lock); the trainer cannot be used afterwards."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    # ------------------------------------------------------------ creation and resumption

    @classmethod
    def create(cls, run_dir, settings, start=None):
        """A new run in run_dir (new or empty) from a new net, or from start, a StartingNet:
        its weights and game count (the run's checkpoints and log go on from that count)."""
        run_dir = Path(run_dir)
        if run_dir.exists() and any(run_dir.iterdir()):
            raise SystemExit(f"kosumi-train: {run_dir} is not empty; use --resume {run_dir} to "
                             f"continue a run, or choose a new directory")
        (run_dir / CHECKPOINTS).mkdir(parents=True, exist_ok=True)
        _write_atomic(run_dir / SETTINGS_FILE, json.dumps(settings.to_json(), indent=2) + "\n")
        if start is None:
            (run_dir / LOG_FILE).touch()
            trainer = cls(run_dir, settings, new_network(settings))
        else:
            record = {"type": "start", "game": start.games_trained, "from_weights": str(start.path),
                      "params_sha256": start.params_sha256}
            if start.history is not None:
                record["history"] = start.history
            _write_atomic(run_dir / LOG_FILE, json.dumps(record) + "\n")
            trainer = cls(run_dir, settings, start.network, start.games_trained,
                          stats=start.stats)
            trainer.history = RunHistory.from_log([record])
        trainer.checkpoint()
        return trainer

    @classmethod
    def resume(cls, run_dir):
        run_dir = Path(run_dir)
        try:
            (run_dir / SETTINGS_FILE).stat()
            name = (run_dir / LATEST_FILE).read_text().strip()
        except FileNotFoundError as error:
            raise SystemExit(f"kosumi-train: {run_dir} is not a training run ({error.filename} "
                             f"missing)") from None
        checkpoint = run_dir / CHECKPOINTS / name
        network, metadata = weight_files.load_weights(checkpoint / "weights.npz")
        # The checkpoint's own settings: settings.json may hold a change made after it.
        settings = TrainSettings.from_json(metadata["trainer"]["settings"])
        state = json.loads((checkpoint / "state.json").read_text())
        recent = _load_recent(checkpoint / "recent.npz") if settings.procedure == "neurogo" else []
        trainer = cls(run_dir, settings, network, state["games_trained"], state["rng_state"],
                      recent, state["stats"])
        trainer.last_checkpoint = checkpoint
        trainer.eval_history = state.get("eval_history", [])
        trainer.background_evals = state.get("background_evals", [])
        trainer.history = RunHistory.from_log(_truncate_log(run_dir / LOG_FILE,
                                                            trainer.games_trained))
        return trainer

    def change_settings(self, changes):
        """Change learning settings of a resumed run from the current game on (e.g. annealing the
        learning rate). settings.json is rewritten, the change is logged with its game number
        (log and settings-changes.jsonl), and a checkpoint at this game records it, so a later
        resumption keeps it."""
        allowed = {"learning_rate", "weight_decay"}
        if set(changes) - allowed:
            raise ValueError(f"only {sorted(allowed)} can change in a resumed run, "
                             f"not {sorted(set(changes) - allowed)}")
        self.settings = dataclasses.replace(self.settings, **changes)
        record = {"type": "settings", "game": self.games_trained, "changes": changes}
        history_path = self.run_dir / SETTINGS_HISTORY_FILE
        with open(history_path, "a") as stream:
            stream.write(json.dumps(record) + "\n")
        _write_atomic(self.run_dir / SETTINGS_FILE, json.dumps(self.settings.to_json(), indent=2) + "\n")
        with open(self.run_dir / LOG_FILE, "a") as stream:
            stream.write(json.dumps(record) + "\n")
        self.checkpoint()

    # ------------------------------------------------------------ checkpoints

    @property
    def phase(self):
        return "shortcut" if self.games_trained < self.settings.shortcut_games else "all"

    def trainer_metadata(self):
        evaluations = [line for line in _read_jsonl(self.run_dir / EVALS_FILE)
                       if line.get("type") == "eval" and line["game"] <= self.games_trained]
        return {"name": "kosumi-train", "settings": self.settings.to_json(), "phase": self.phase,
                "stats": dict(self.stats), "history": self.history.to_json(evaluations)}

    def checkpoint(self):
        """Write checkpoints/<games>/ atomically and point LATEST at it."""
        directory = self.run_dir / CHECKPOINTS
        name = f"{self.games_trained:09d}"
        final = directory / name
        temporary = directory / f".tmp-{name}-{os.getpid()}"
        if temporary.exists():
            shutil.rmtree(temporary)
        temporary.mkdir()
        weight_files.save_weights(temporary / "weights.npz", self.network, self.settings.size,
                                  self.games_trained, self.trainer_metadata())
        state = {"games_trained": self.games_trained, "rng_state": self.rng.bit_generator.state,
                 "phase": self.phase, "stats": self.stats, "eval_history": self.eval_history,
                 "background_evals": self.background_evals, "saved": _now()}
        _write_atomic(temporary / "state.json", json.dumps(state, indent=2) + "\n")
        if self.settings.procedure == "neurogo":
            _save_recent(temporary / "recent.npz", list(self.recent))
        _fsync_directory(temporary)
        if final.exists():
            shutil.rmtree(final)
        os.rename(temporary, final)
        _fsync_directory(directory)
        _write_atomic(self.run_dir / LATEST_FILE, name + "\n")
        self.last_checkpoint = final
        return final

    # ------------------------------------------------------------ learning

    def _step(self, grad):
        """One learning step on the flat parameters: gradient descent, then weight decay, both on
        the weights being trained in this phase."""
        params = self.network.get_params()
        trainable = self.shortcut_only if self.phase == "shortcut" else slice(None)
        params[trainable] -= self.settings.learning_rate * grad[trainable]
        params[trainable] *= self.settings.weight_decay
        self.network.set_params(params)

    def _apply(self, game, grad, loss, entries):
        """Learn from one finished game; returns the mean cross-entropy per trained output."""
        if self.settings.procedure == "blair":
            if entries:
                self._step(grad)
            trained_loss, trained_entries = loss, entries
        else:
            self.recent.append(game)
            trained_loss, trained_entries = self._train_recent_games()
        self.games_trained += 1
        self.stats["capped_games"] += int(game.summary["capped"])
        self.stats["superko_rejections"] += game.summary["superko_rejections"]
        self.stats["positions_trained"] += int(game.trained.sum())
        return trained_loss / trained_entries if trained_entries else None

    def _train_recent_games(self):
        """NeuroGo: TD(0) over the recent games in random order, each backward from its end, with
        an update after every trained position; weight decay once per game, after the replay.
        softseg: the whole replay of a game is SoftSegNetwork.train_game() (the signal observed
        at the next position is its target where present, the event ending that unit's
        prediction, section 2.1; the final signal at the end; the update made in place, and a
        trained position's prediction, the target of the one before it, the forward pass its
        own step was computed from: one pass fewer, differing from the updated net's by one
        step of 3e-4)."""
        network = self.network
        loss, entries = 0.0, 0
        trainable = self.shortcut_only if self.phase == "shortcut" else slice(None)
        rate = self.settings.learning_rate
        for index in self.rng.permutation(len(self.recent)):
            game = self.recent[index]
            if not game.trained.any():
                continue
            if self.settings.arch == "softseg":
                game_loss, game_entries = network.train_game(
                    game.inputs, game.black_to_move, game.trained, game.observed,
                    game.final_targets, game.final_mask, rate)
                loss += game_loss
                entries += game_entries
                continue
            following = game.final_targets           # real-Black frame
            following_mask = game.final_mask
            for t in range(len(game.inputs) - 1, -1, -1):
                black = game.black_to_move[t]
                if game.trained[t]:
                    target = following if black else td.swap_frame(following)
                    mask = following_mask if black else td.swap_frame_mask(following_mask)
                    grad = np.zeros(network.num_params)
                    loss += network.loss_and_gradient(game.inputs[t], target, mask, grad)
                    params = network.get_params()
                    params[trainable] -= rate * grad[trainable]
                    network.set_params(params)
                    entries += int(mask.sum())
                outputs = network.forward(game.inputs[t])
                following = outputs if black else td.swap_frame(outputs)
        if self.settings.weight_decay != 1.0:
            params = network.get_params()
            params[trainable] *= self.settings.weight_decay
            network.set_params(params)
        return loss, entries

    # ------------------------------------------------------------ the loop

    def run(self, games=None, workers=1, checkpoint_every=100, eval_every=0, eval_games=10,
            progress=True, stop=None, ray_address=None, max_weight_lag=MAX_WEIGHT_LAG,
            ray_games_per_call=RAY_GAMES_PER_CALL, eval_protocol=KOSUMI_PROTOCOL,
            eval_in_background=False):
        """Train until games_trained reaches games (None: until interrupted), evaluating every
        eval_every games under eval_protocol (see evaluate), with eval_in_background in a process
        of their own while training goes on (the run waits for them at its end). With ray_address
        ("local" starts a local Ray, "auto" or HOST:PORT joins a running cluster) the self-play
        workers are Ray actors (engine/training/raypool.py; workers None: one per CPU of the
        cluster), each playing ray_games_per_call games per call, and a game played with weights
        more than max_weight_lag versions old is refused."""
        stop = stop or Interrupted()
        log = open(self.run_dir / LOG_FILE, "a")
        recent = collections.deque(maxlen=RECENT_RESULTS)
        bar = _progress_bar(self.games_trained, games, progress)
        evaluations = _BackgroundEvaluations(self)
        evaluations.poll()          # those a stop cut short, again

        def evaluate():
            if eval_in_background:
                self.evaluate_in_background(eval_games, eval_protocol, evaluations)
            else:
                self.evaluate(eval_games, log, eval_protocol)

        if eval_every and self.games_trained and self.games_trained % eval_every == 0 and \
                f"{self.games_trained:09d}" not in self.eval_history:
            # stopped during this evaluation (the checkpoint it plays comes first): play it again
            evaluate()
        if ray_address is not None:
            from engine.training.raypool import RayPool     # Ray is imported only for --ray
            pool = RayPool(self, ray_address, workers, games, max_weight_lag, ray_games_per_call,
                           log, stop)
        else:
            pool = _WorkerPool(self, workers, stop) if workers > 1 else None
        started = time.perf_counter()
        games_at_start = self.games_trained
        try:
            while (games is None or self.games_trained < games) and not stop.stop:
                tags = {}
                if pool is None:
                    game, grad, loss, entries = play_training_game(self.network, self.settings,
                                                                   self.phase, self.rng)
                    worker = 0
                else:
                    arrival = pool.next_result()
                    if arrival is None:              # stopped while waiting
                        break
                    worker, (game, grad, loss, entries), tags = arrival
                phase = self.phase
                mean_loss = self._apply(game, grad, loss, entries)
                if pool is not None and (games is None or
                                         self.games_trained + pool.busy() < games):
                    pool.submit(worker)
                line = {"type": "game", "game": self.games_trained, "phase": phase,
                        "worker": worker, "loss": None if mean_loss is None else round(mean_loss, 6),
                        **game.summary, **tags}
                log.write(json.dumps(line) + "\n")
                log.flush()
                self.history.add_game(line)
                recent.append(game.summary)
                _update_bar(bar, recent, mean_loss, started, self.games_trained - games_at_start,
                            pool)
                if checkpoint_every and self.games_trained % checkpoint_every == 0:
                    self.checkpoint()
                if eval_every and self.games_trained % eval_every == 0:
                    evaluate()
                evaluations.poll()
            if pool is not None:
                pool.close()
                pool = None
            evaluations.wait(stop)
        finally:
            if pool is not None:
                pool.close()
            evaluations.stop()      # only when cut short: the queue stays for the resumption
            if self.last_checkpoint is None or evaluations.finished_any or \
                    self.last_checkpoint.name != f"{self.games_trained:09d}":
                self.checkpoint()
            log.close()
            if bar is not None:
                bar.close()
        if stop.stop:
            print(f"kosumi-train: {stop.signal_name}: checkpoint written at game "
                  f"{self.games_trained}; continue with: kosumi-train --resume {self.run_dir}",
                  file=sys.stderr)
        return self.games_trained

    # ------------------------------------------------------------ evaluation

    def evaluate(self, games, log, protocol=KOSUMI_PROTOCOL):
        """Matches of the current weights, results to the log: under kosumi's protocol against
        the previous evaluation's checkpoint (the initial net the first time) and GNU Go level 1;
        under NeuroGo's, its test against GNU Go levels 10 and 1 (the paper's Figure 4). GNU Go
        matches only when it is installed."""
        current = self._current_checkpoint()
        for label, checkpoint_name in self._evaluation_opponents(protocol):
            line = match_checkpoint(self.run_dir, current.name, label, games, self.settings,
                                    checkpoint_name, protocol)
            if line is not None:
                log.write(json.dumps(line) + "\n")
                log.flush()
                self.history.add_eval(line)
        self.eval_history.append(current.name)
        self.checkpoint()     # the same games again, now with this evaluation done

    def evaluate_in_background(self, games, protocol, evaluations):
        """evaluate()'s matches in a process of their own (_BackgroundEvaluations), results to
        evals.jsonl: training goes on while they play."""
        current = self._current_checkpoint()
        self.background_evals.append({
            "checkpoint": current.name, "games": games, "protocol": protocol,
            "opponents": [list(pair) for pair in self._evaluation_opponents(protocol)]})
        self.eval_history.append(current.name)
        self.checkpoint()     # the queue is in the state before the matches start
        evaluations.poll()

    def _current_checkpoint(self):
        if self.last_checkpoint is None or \
                self.last_checkpoint.name != f"{self.games_trained:09d}":
            return self.checkpoint()
        return self.last_checkpoint

    def _evaluation_opponents(self, protocol):
        """(label, checkpoint name or None for GNU Go) of each evaluation match."""
        if protocol == NEUROGO_PROTOCOL:
            return [(label, None) for label in NEUROGO_OPPONENTS]
        previous_name = self.eval_history[-1] if self.eval_history else \
            _initial_checkpoint(self.run_dir)
        return [("previous", previous_name), ("gnugo-1", None)]


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
        return _initial_checkpoint(run_dir)
    if label.startswith("checkpoint-") and label[len("checkpoint-"):].isdigit():
        name = f"{int(label[len('checkpoint-'):]):09d}"
        if not (Path(run_dir) / CHECKPOINTS / name).is_dir():
            raise SystemExit(f"kosumi-train eval: no checkpoint {name} in {run_dir}")
        return name
    raise SystemExit(f"kosumi-train eval: unknown opponent {label!r} "
                     f"(initial, checkpoint-N or gnugo-LEVEL)")


def _initial_checkpoint(run_dir):
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


class _WorkerPool:
    """Self-play processes, each with one game in hand at a time. A worker stopped by a signal
    (systemd, `pkill -f kosumi-train` and the like signal every process of the run) stops the
    run as the learner's own signal would: a checkpoint, then exit."""

    def __init__(self, trainer, workers, stop):
        self.trainer = trainer
        self.stop = stop
        context = multiprocessing.get_context("fork")
        self.results = context.Queue()
        self.connections, self.processes = [], []
        # Each run (and each resumption) gets fresh worker streams from the seed and the counter.
        base = np.random.SeedSequence([trainer.settings.seed, trainer.games_trained])
        for worker_id, child in enumerate(base.spawn(workers)):
            parent_end, child_end = context.Pipe()
            process = context.Process(target=_worker_main, daemon=True,
                                      args=(worker_id, trainer.settings.to_json(), child,
                                            child_end, self.results))
            process.start()
            self.connections.append(parent_end)
            self.processes.append(process)
        self.in_hand = [False] * workers
        for worker_id in range(workers):
            self.submit(worker_id)

    def submit(self, worker_id):
        try:
            self.connections[worker_id].send((self.trainer.network.get_params(),
                                              self.trainer.phase))
        except OSError:              # it died after sending its last game: next_result says why
            return
        self.in_hand[worker_id] = True

    def busy(self):
        return sum(self.in_hand)

    def next_result(self):
        """(worker id, play_training_game()'s result, extra log fields: none here), or None when
        a worker was stopped by a signal."""
        while True:
            try:
                worker_id, result = self.results.get(timeout=1.0)
            except Exception:                       # queue.Empty: check the workers are alive
                dead = [p for p in self.processes if not p.is_alive()]
                if not dead:
                    continue
                code = dead[0].exitcode
                if code in STOP_SIGNAL_EXITS:
                    self.stop.stop = True
                    self.stop.signal_name = f"{signal.Signals(-code).name} to a self-play worker"
                    return None
                raise RuntimeError(f"self-play worker died (exit code {code})")
            self.in_hand[worker_id] = False
            return worker_id, result, {}

    def progress_text(self):
        """The local processes add nothing to the progress bar."""
        return ""

    def close(self):
        for connection in self.connections:
            try:
                connection.send(None)
            except OSError:
                pass
        for process in self.processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join()


class _BackgroundEvaluations:
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
    if trainer._lock is not None:
        trainer._lock.close()
    descriptor = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    print(f"# {_now()}: checkpoint {job['checkpoint']}, {job['protocol']} protocol, "
          f"{job['games']} games against each of {[label for label, _ in job['opponents']]}")
    _record_evaluations(trainer.run_dir, job["checkpoint"], job["opponents"], job["games"],
                        trainer.settings, job["protocol"])
    print(f"# {_now()}: done")


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
    return [line for line in _read_jsonl(Path(run_dir) / EVALS_FILE)
            if line.get("game") == int(name) and line.get("protocol", KOSUMI_PROTOCOL) == protocol]


def _evaluated_opponents(run_dir, name, protocol):
    """The opponents evals.jsonl holds a match of checkpoint `name` against under `protocol`."""
    return {line["opponent"] for line in _evaluation_lines(run_dir, name, protocol)}


# ------------------------------------------------------------------------------------ files

def _lock_run(run_dir):
    """Hold an exclusive lock on the run for this process's lifetime (released by the kernel
    however the process ends): two trainers on one run would interleave their checkpoints."""
    stream = open(Path(run_dir) / LOCK_FILE, "a")
    try:
        fcntl.flock(stream, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        stream.close()
        raise SystemExit(f"kosumi-train: {run_dir} is being trained by another process") from None
    return stream


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _write_atomic(path, text):
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "w") as stream:
        stream.write(text)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, path)


def _fsync_directory(path):
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _truncate_log(path, games_trained):
    """Drop the log lines of games (and evaluations) after the checkpoint being resumed, and
    a line cut short by kill -9; returns the records kept."""
    kept = [record for record in _read_jsonl(path) if record.get("game", 0) <= games_trained]
    _write_atomic(path, "".join(json.dumps(record) + "\n" for record in kept))
    return kept


class RunHistory:
    """A run's curves in brief: the mean loss and game length of every HISTORY_BLOCK games, and
    its evaluation results. Every checkpoint's weight file carries it (trainer metadata,
    "history"), so the curves go with the net: a run started from that file (--from-weights, on
    another machine when the run directory is gone) begins with them, and `kosumi-train plot`
    draws them from a run directory or from the weight file itself."""

    def __init__(self):
        self.blocks = {}      # first game of a block -> [games, loss sum, games with a loss,
                              # length sum]
        self.evals = []

    def add_game(self, line):
        first = (line["game"] - 1) // HISTORY_BLOCK * HISTORY_BLOCK + 1
        block = self.blocks.setdefault(first, [0, 0.0, 0, 0.0])
        block[0] += 1
        if line["loss"] is not None:
            block[1] += line["loss"]
            block[2] += 1
        block[3] += line["length"]

    def add_eval(self, line):
        self.evals.append(_history_eval(line))

    @classmethod
    def from_log(cls, records):
        """The history in a run's log records: its games and evaluations, and in its start
        record the history of the net the run started from."""
        history = cls()
        for record in records:
            if record.get("type") == "game":
                history.add_game(record)
            elif record.get("type") == "eval":
                history.add_eval(record)
            elif record.get("type") == "start" and "history" in record:
                history.merge(record["history"])
        return history

    def merge(self, data):
        """Add a history in to_json's form; ValueError when it is not one."""
        try:
            if data["block"] != HISTORY_BLOCK:
                raise ValueError(f"blocks of {data['block']} games, not {HISTORY_BLOCK}")
            for first, games, mean_loss, loss_games, mean_length in data["blocks"]:
                block = self.blocks.setdefault(int(first), [0, 0.0, 0, 0.0])
                block[0] += int(games)
                block[1] += 0.0 if mean_loss is None else float(mean_loss) * int(loss_games)
                block[2] += int(loss_games)
                block[3] += float(mean_length) * int(games)
            for line in data["evals"]:
                self.add_eval(line)
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"its training history is malformed ({error!r})") from None

    def to_json(self, extra_evals=()):
        """The compact form kept in weight files, with extra_evals (those of evals.jsonl)."""
        blocks = [[first, games, round(loss / loss_games, 6) if loss_games else None, loss_games,
                   round(length / games, 2)]
                  for first, (games, loss, loss_games, length) in sorted(self.blocks.items())]
        evals = self.evals + [_history_eval(line) for line in extra_evals]
        return {"block": HISTORY_BLOCK, "blocks": blocks,
                "evals": sorted(evals, key=lambda line: line["game"])}


def _history_eval(line):
    return {key: line[key] for key in HISTORY_EVAL_KEYS if key in line}


def _read_jsonl(path):
    """The JSON lines of a file (none when it does not exist; a line cut short by kill -9 is
    skipped)."""
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


_RECENT_ARRAYS = ("inputs", "black_to_move", "trained", "final_targets", "final_mask")


def _save_recent(path, games):
    arrays = {}
    for i, game in enumerate(games):
        for name in _RECENT_ARRAYS:
            arrays[f"{i}_{name}"] = getattr(game, name)
        arrays[f"{i}_summary"] = np.frombuffer(json.dumps(game.summary).encode(), dtype=np.uint8)
        if game.observed is not None:
            arrays[f"{i}_observed"] = game.observed
    with open(path, "wb") as stream:
        np.savez_compressed(stream, count=np.array(len(games)), **arrays)


def _load_recent(path):
    with np.load(path, allow_pickle=False) as archive:
        return [TrainingGame(*(archive[f"{i}_{name}"] for name in _RECENT_ARRAYS),
                             json.loads(archive[f"{i}_summary"].tobytes().decode()),
                             archive[f"{i}_observed"] if f"{i}_observed" in archive.files else None)
                for i in range(int(archive["count"]))]


# ------------------------------------------------------------------------------------ progress

def _progress_bar(initial, total, enabled):
    if not enabled:
        return None
    from tqdm import tqdm
    return tqdm(total=total, initial=initial, unit="game", dynamic_ncols=True, file=sys.stderr,
                smoothing=0.05)


def _update_bar(bar, recent, mean_loss, started, games_this_session, pool):
    """pool: the worker pool (None: in-process), whose progress_text() the bar adds (Ray's:
    games/s per node, weight staleness); asked only when there is a bar, as it costs the
    driver time on every game."""
    if bar is None:
        return
    pool_text = pool.progress_text() if pool is not None else ""
    elapsed = time.perf_counter() - started
    black_wins = sum(r["score"] > 0 for r in recent)
    bar.set_postfix_str(
        f"B wins {100 * black_wins / len(recent):.0f}%, len {np.mean([r['length'] for r in recent]):.0f}, "
        f"capped {sum(r['capped'] for r in recent)}, loss {mean_loss if mean_loss is None else round(mean_loss, 4)}, "
        f"{games_this_session / max(elapsed, 1e-9):.1f} g/s" + (f"; {pool_text}" if pool_text else ""),
        refresh=False)
    bar.update(1)


# ------------------------------------------------------------------------------------ plot

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
    lines = _read_jsonl(source / LOG_FILE) + _read_jsonl(source / EVALS_FILE)
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


# ------------------------------------------------------------------------------------ CLI

def _hidden(text):
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected five integers T,S,D,C,F, not {text!r}") from None
    if len(counts) != 5 or min(counts) < 0:
        raise argparse.ArgumentTypeError(f"expected five integers T,S,D,C,F >= 0, not {text!r}")
    return counts


def _softseg_hidden(text):
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected two integers H1,H2, not {text!r}") from None
    if len(counts) != 2 or not 1 <= counts[0] <= 64 or not 0 <= counts[1] <= 64:
        raise argparse.ArgumentTypeError(f"expected H1,H2 with 1 <= H1 <= 64, 0 <= H2 <= 64, "
                                         f"not {text!r}")
    return counts


# what a run started --from-weights may set itself; the rest of its settings are the file's
FROM_WEIGHTS_SETTINGS = ("learning_rate", "weight_decay", "seed")


def build_parser():
    defaults = TrainSettings()
    parser = argparse.ArgumentParser(
        prog="kosumi-train",
        description="TD self-play training of kosumi's Internal Symmetry Network. "
                    "`kosumi-train plot RUN_DIR` draws the training curves.",
        epilog="example: kosumi-train --run-dir runs/9x9 --games 100000 --eval-every 5000")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--run-dir", metavar="DIR", help="start a new run in DIR (new or empty)")
    where.add_argument("--resume", metavar="DIR", help="continue the run in DIR from its newest "
                                                       "checkpoint (its settings are kept)")
    parser.add_argument("--from-weights", metavar="FILE",
                        help="with --run-dir: start the new run from a net kosumi-train wrote (a "
                             "checkpoint's weights.npz, a shipped net such as "
                             "weights/softseg_9x9.npz) with its training settings and game "
                             "count; the 10 recent games and the random state start afresh. "
                             "Of the training settings only --learning-rate, --weight-decay and "
                             "--seed may be given")
    run = parser.add_argument_group("this session")
    run.add_argument("--games", type=number(int, minimum=0), metavar="N",
                     help="stop when N games are trained in total (default: until interrupted)")
    run.add_argument("--workers", type=number(int, minimum=1),
                     help="self-play processes (default: all cores); 1 plays in-process and, "
                          "with --seed, reproduces a run exactly; with --ray, the actors "
                          "(default: one per CPU of the cluster)")
    run.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                     help="play the self-play games on Ray actors (pip install 'kosumi[ray]'): "
                          "alone, on a local Ray started for the run; `auto` or HEAD:6379, on "
                          "the running cluster (`ray start --head` ...); the learner stays here")
    run.add_argument("--max-weight-lag", type=number(int, minimum=0), metavar="N",
                     help=f"with --ray: refuse (and count) a game played with weights more than "
                          f"N versions old; a version is published once per call of every actor "
                          f"(default {MAX_WEIGHT_LAG})")
    run.add_argument("--ray-games-per-call", type=number(int, minimum=1), metavar="K",
                     help=f"with --ray: games an actor plays per call, all with one weight "
                          f"version; more share Ray's own work per call in the driver (the "
                          f"learner keeps up with more actors), fewer keep the weights fresher "
                          f"(default {RAY_GAMES_PER_CALL})")
    run.add_argument("--checkpoint-every", type=number(int, minimum=0), default=500, metavar="N",
                     help="checkpoint every N games (default 500; always on exit)")
    run.add_argument("--eval-every", type=number(int, minimum=0), default=0, metavar="K",
                     help="every K games, a short match against the previous evaluation's "
                          "checkpoint and GNU Go level 1 (default 0: never)")
    run.add_argument("--eval-games", type=number(int, minimum=1), metavar="N",
                     help=f"games per evaluation match (default 10; --eval-protocol neurogo: "
                          f"{NEUROGO_GAMES})")
    run.add_argument("--eval-protocol", choices=PROTOCOLS, default=KOSUMI_PROTOCOL,
                     help="kosumi: the matches above (default); neurogo: NeuroGo's test against "
                          "GNU Go levels 10 and 1 instead (the paper's Figure 4; see "
                          "`kosumi-train eval --help`)")
    run.add_argument("--eval-in-background", action="store_true",
                     help="play the evaluation matches in a process of their own while training "
                          "goes on, results to RUN_DIR/evals.jsonl (the run waits for them at its "
                          "end; a stop leaves them to --resume)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    learn = parser.add_argument_group("training settings (new runs only)")
    parser.training_settings = []       # their actions: --from-weights takes them from its file

    def setting(*names, **options):
        parser.training_settings.append(learn.add_argument(*names, **options))

    setting("--size", type=int, default=defaults.size, help="board size 5..19 (default 9)")
    setting("--arch", choices=ARCHITECTURES, default=defaults.arch,
            help="isn: Blair's Internal Symmetry Network (default); softseg: NeuroGo "
                 "3's soft-segmentation network (engine/nets/softseg.pyx), trained by "
                 "NeuroGo's procedure and rich signal, rate 3e-4, no weight decay, "
                 "inputs neurogo unless --feature-set says raw or neurogo_lite")
    setting("--softseg-hidden", type=_softseg_hidden,
            default=TrainSettings().softseg_hidden, metavar="H1,H2",
            help="softseg: units per point of the two hidden layers (default 8,2)")
    setting("--softseg-intervals", type=number(int, minimum=1, maximum=64),
            default=defaults.softseg_intervals,
            help="softseg: connection-value intervals of the weight selection (default 8)")
    setting("--procedure", choices=PROCEDURES,
            help="blair: Boltzmann self-play, TD(lambda) per game (default); neurogo: "
                 "greedy + 15%% Gibbs moves, TD(0) over the 10 most recent games "
                 "(the only one, and the default, for --arch softseg)")
    setting("--lambda", dest="lam", type=float,
            help="TD lambda (default 0.9 for blair, 0 for neurogo)")
    setting("--learning-rate", type=float,
            help="step size on the gradient summed over points (default 5e-6, Blair); "
                 "with --resume or --from-weights, changes the run's rate from now on "
                 "(annealing)")
    setting("--weight-decay", type=float,
            help="factor applied to the weights after each game (default 0.99999); "
                 "with --resume or --from-weights, changes it from now on")
    setting("--beta", type=float, default=defaults.beta,
            help="Boltzmann constant of the training moves (default 4)")
    setting("--gibbs-fraction", type=float, default=defaults.gibbs_fraction,
            help="neurogo: share of Gibbs-sampled moves (default 0.15)")
    setting("--gibbs-temperature", type=float, default=defaults.gibbs_temperature,
            help="neurogo: temperature of the Gibbs sampling (default 4)")
    setting("--capture-value", type=float, default=defaults.capture_value,
            help="c of the training scoring (default 0.4)")
    setting("--stone-value", type=float, default=defaults.stone_value,
            help="s of the training scoring (default 0.4)")
    setting("--move-cap", dest="move_cap_factor", type=float,
            default=defaults.move_cap_factor, metavar="FACTOR",
            help="end a game after FACTOR x N^2 moves (default 3)")
    setting("--pass-rule", choices=PASS_RULES, default=defaults.pass_rule,
            help="when a player may pass while a move is left: forced (default): "
                 "never, games are played out; better: when passing beats every "
                 "move; boltzmann: pass is one more candidate (see engine/training/selfplay.py)")
    setting("--shortcut-games", type=number(int, minimum=0),
            metavar="N", help="preliminary phase: train only the input->output "
                              "shortcuts for the first N games (default 1000; "
                              "softseg has none)")
    setting("--recent-games", type=number(int, minimum=1), default=defaults.recent_games,
            help="neurogo: games retrained after each game (default 10)")
    setting("--train-capped", action="store_true",
            help="also train games that reached the move cap")
    setting("--hidden", type=_hidden, default=defaults.hidden, metavar="T,S,D,C,F",
            help="hidden units per type (default 4,2,2,0,2: 714 parameters)")
    setting("--feature-set", choices=sorted(set(isn.FEATURE_SETS) | set(softseg.FEATURE_SETS)),
            help="the net's inputs (engine/nets/features.pyx): isn14, Blair's one-hot "
                 "inputs (default); neurogo, isn14 plus NeuroGo's preprocessed "
                 "features; neurogo_lite, neurogo without the ladder-if-playing-here "
                 "reads; raw (softseg only): one constant input, the paper's "
                 "raw-board experiment")
    setting("--rich-signal", action="store_true",
            help="NeuroGo's rich reinforcement signal: extra outputs (eyes, "
                 "connections, live points) trained by TD beside the territory "
                 "outputs, which alone give values and moves")
    setting("--init-scale", type=float, default=defaults.init_scale,
            help="standard deviation of the initial weights (default 0.1)")
    setting("--seed", type=int, help="random seed (default: from the clock)")
    setting("--komi", type=float, default=defaults.komi,
            help="komi of the logged results (default 7)")
    return parser


def build_plot_parser():
    parser = argparse.ArgumentParser(prog="kosumi-train plot",
                                     description="Render a run's training curves to PNG; with "
                                                 "several runs, overlaid to compare them.")
    parser.add_argument("run_dirs", metavar="RUN_DIR", nargs="+",
                        help="a run directory, or a weight file kosumi-train wrote (a checkpoint's "
                             "weights.npz, a shipped net): the curves it carries")
    parser.add_argument("--out", metavar="PNG",
                        help="output file (default: the first RUN_DIR's training.png; "
                             "NAME-training.png here for a weight file NAME.npz)")
    parser.add_argument("--window", type=number(int, minimum=1), default=200,
                        help="games in the running means (default 200)")
    return parser


def build_eval_parser():
    parser = argparse.ArgumentParser(
        prog="kosumi-train eval",
        description="Match a run's checkpoints against opponents; results to RUN_DIR/evals.jsonl.")
    parser.add_argument("run_dir", metavar="RUN_DIR")
    parser.add_argument("--checkpoints", metavar="N,N,...",
                        help="games-trained counts of the checkpoints (default: all)")
    parser.add_argument("--opponents",
                        help="comma-separated: initial (the run's first checkpoint: its "
                             "untrained net, or the net it started from), checkpoint-N (the "
                             "run's checkpoint after N games), gnugo-LEVEL (GNU Go at that "
                             "level); default initial,gnugo-1 (--protocol neurogo: "
                             "gnugo-10,gnugo-1)")
    parser.add_argument("--games", type=number(int, minimum=1),
                        help="games per match (default 20; --protocol neurogo: 100)")
    parser.add_argument("--protocol", choices=PROTOCOLS, default=KOSUMI_PROTOCOL,
                        help="kosumi: the run's komi, colours alternating, the engine's play "
                             "settings (default); neurogo: NeuroGo's test (the net always Black, "
                             "komi 5.5, Gibbs sampling at T = 0.33, no resigning, repeated games "
                             "counted once)")
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "policy":
        from engine.training.policycli import main as policy_main
        return policy_main(argv[1:])
    if argv and argv[0] == "plot":
        args = build_plot_parser().parse_args(argv[1:])
        from engine.training.policycli import is_policy_run, plot_runs as plot_policy_runs
        if any(is_policy_run(run) for run in args.run_dirs):
            print(plot_policy_runs(args.run_dirs, args.out or "policy_curves.png"))
            return 0
        print(plot_runs(args.run_dirs, args.out, args.window))
        return 0
    if argv and argv[0] == "eval":
        args = build_eval_parser().parse_args(argv[1:])
        names = sorted(p.name for p in (Path(args.run_dir) / CHECKPOINTS).iterdir()
                       if p.name.isdigit())
        if args.checkpoints:
            wanted = {f"{int(n):09d}" for n in args.checkpoints.split(",")}
            missing = wanted - set(names)
            if missing:
                raise SystemExit(f"kosumi-train eval: no checkpoints {sorted(missing)} in {args.run_dir}")
            names = sorted(wanted)
        neurogo = args.protocol == NEUROGO_PROTOCOL
        opponents = args.opponents or (",".join(NEUROGO_OPPONENTS) if neurogo else "initial,gnugo-1")
        games = args.games or (NEUROGO_GAMES if neurogo else 20)
        evaluate_checkpoints(args.run_dir, names, opponents.split(","), games, args.protocol)
        return 0
    parser = build_parser()
    args = parser.parse_args(argv)
    for option in ("max_weight_lag", "ray_games_per_call"):
        if getattr(args, option) is not None and args.ray is None:
            parser.error(f"--{option.replace('_', '-')} is for the Ray actors: add --ray")
    if args.ray is not None:
        from engine.training.raypool import check_ray
        check_ray(args.ray)                  # before a run directory is made for nothing
    workers = args.workers or (None if args.ray else os.cpu_count() or 1)
    defaults = TrainSettings()
    stop = Interrupted()
    stop.install()
    if args.from_weights is not None:
        if args.resume:
            parser.error("--from-weights starts a new run: give --run-dir, not --resume")
        given = options_given([action for action in parser.training_settings
                               if action.dest not in FROM_WEIGHTS_SETTINGS], args)
        if given:
            parser.error(f"{', '.join(given)}: with --from-weights the training settings are "
                         f"the file's; only --learning-rate, --weight-decay and --seed may be given")
    if args.resume:
        trainer = Trainer.resume(args.resume)
        changes = {name: value for name, value in (("learning_rate", args.learning_rate),
                                                   ("weight_decay", args.weight_decay))
                   if value is not None and value != getattr(trainer.settings, name)}
        if changes:
            try:
                trainer.change_settings(changes)
            except ValueError as error:
                trainer.close()
                parser.error(str(error))
    elif args.from_weights is not None:
        start = StartingNet.load(args.from_weights)
        changes = {name: value for name in FROM_WEIGHTS_SETTINGS
                   if (value := getattr(args, name)) is not None}
        changes.setdefault("seed", int(time.time_ns() % 2**31))
        try:
            settings = dataclasses.replace(start.settings, **changes)
        except ValueError as error:
            parser.error(str(error))
        trainer = Trainer.create(args.run_dir, settings, start)
    else:
        seed = args.seed if args.seed is not None else int(time.time_ns() % 2**31)
        softseg_run = args.arch == "softseg"
        default_rate = SOFTSEG_LEARNING_RATE if softseg_run else defaults.learning_rate
        default_decay = 1.0 if softseg_run else defaults.weight_decay   # NeuroGo has no decay
        try:
            settings = TrainSettings(
                size=args.size, lam=args.lam, arch=args.arch,
                procedure=args.procedure or ("neurogo" if softseg_run else defaults.procedure),
                softseg_hidden=args.softseg_hidden, softseg_intervals=args.softseg_intervals,
                learning_rate=default_rate if args.learning_rate is None else args.learning_rate,
                weight_decay=default_decay if args.weight_decay is None else args.weight_decay,
                beta=args.beta,
                gibbs_fraction=args.gibbs_fraction, gibbs_temperature=args.gibbs_temperature,
                capture_value=args.capture_value, stone_value=args.stone_value,
                move_cap_factor=args.move_cap_factor, pass_rule=args.pass_rule,
                shortcut_games=(args.shortcut_games if args.shortcut_games is not None
                                else 0 if softseg_run else defaults.shortcut_games),
                recent_games=args.recent_games,
                train_capped=args.train_capped, hidden=args.hidden,
                feature_set=args.feature_set or ("neurogo" if softseg_run else defaults.feature_set),
                rich_signal=args.rich_signal or softseg_run,
                init_scale=args.init_scale,
                seed=seed, komi=args.komi)
        except ValueError as error:
            parser.error(str(error))
        trainer = Trainer.create(args.run_dir, settings)
    if args.ray is None:
        where = f"{workers} worker(s)"
    else:
        where = f"Ray {args.ray}, " + (f"{workers} actor(s)" if workers else
                                       "one actor per CPU of the cluster")
    print(f"kosumi-train: {trainer.run_dir}: {trainer.games_trained} games trained; "
          f"{where}; settings {json.dumps(trainer.settings.to_json())}", file=sys.stderr)
    try:
        eval_games = args.eval_games or \
            (NEUROGO_GAMES if args.eval_protocol == NEUROGO_PROTOCOL else 10)
        trainer.run(args.games, workers, args.checkpoint_every, args.eval_every,
                    eval_games, not args.no_progress, stop, args.ray,
                    MAX_WEIGHT_LAG if args.max_weight_lag is None else args.max_weight_lag,
                    args.ray_games_per_call or RAY_GAMES_PER_CALL, args.eval_protocol,
                    args.eval_in_background)
    finally:
        trainer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
