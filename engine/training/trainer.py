"""The learner: `Trainer`, a training run in its directory (engine/training/rundir.py): creating
and resuming it, the loop, learning from each game, checkpoints, and when to evaluate.

Reading order: `Trainer.run()` is the loop: it hands games to self-play (in-process with one
worker, else a pool of engine/training/workers.py or engine/training/raypool.py), applies each
result with `Trainer._apply()`, logs a JSONL line per game, checkpoints, and evaluates
(engine/training/evaluation.py). The learning itself is `game_gradient()` (Blair: the gradient of
one game, engine/training/learning.py) and `Trainer._train_recent_games()` (NeuroGo: TD(0) over the
10 most recent games). Self-play games come from engine/training/selfplay.py.

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

One worker plays in-process; with --seed such a run is reproducible bit for bit, and a resumed run
continues exactly (weights, game counter, generator state, recent games, log). With several
workers (engine/training/workers.py) the arrival order varies, so runs are not reproducible. With
--ray the workers are Ray actors on a cluster (engine/training/raypool.py; Ray is imported only
then), each playing --ray-games-per-call games per call: weights go out through Ray's object
store, and the learner stays in this process and still learns one game at a time.
"""
import collections
import dataclasses
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import numpy as np

from engine.nets import weights as weight_files
from engine.training.evaluation import (KOSUMI_PROTOCOL, NEUROGO_OPPONENTS, NEUROGO_PROTOCOL,
                                        BackgroundEvaluations, initial_checkpoint,
                                        match_checkpoint)
from engine.training.history import RunHistory
from engine.training.learning import play_training_game
from engine.training.raypool import MAX_WEIGHT_LAG, RAY_GAMES_PER_CALL, RayPool
from engine.training.recipes import recipe_of
from engine.training.rundir import (CHECKPOINTS, EVALS_FILE, LATEST_FILE, LOG_FILE,
                                    SETTINGS_FILE, SETTINGS_HISTORY_FILE, fsync_directory,
                                    load_recent, lock_run, read_jsonl, save_recent, timestamp,
                                    truncate_log, write_atomic)
from engine.training.settings import TrainSettings, new_network, shortcut_mask
from engine.training.workers import WorkerPool

RECENT_RESULTS = 100            # games in the progress bar's running statistics


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
    """A run in its directory: the net, the game counter, the random generator and NeuroGo's
    recent games. Made by create() (a new run) or resume(); run() trains it; close() lets the run
    go (its lock)."""

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
        self._lock = lock_run(self.run_dir)

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
        write_atomic(run_dir / SETTINGS_FILE, json.dumps(settings.to_json(), indent=2) + "\n")
        if start is None:
            (run_dir / LOG_FILE).touch()
            trainer = cls(run_dir, settings, new_network(settings))
        else:
            record = {"type": "start", "game": start.games_trained, "from_weights": str(start.path),
                      "params_sha256": start.params_sha256}
            if start.history is not None:
                record["history"] = start.history
            write_atomic(run_dir / LOG_FILE, json.dumps(record) + "\n")
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
        recent = load_recent(checkpoint / "recent.npz") if settings.procedure == "neurogo" else []
        trainer = cls(run_dir, settings, network, state["games_trained"], state["rng_state"],
                      recent, state["stats"])
        trainer.last_checkpoint = checkpoint
        trainer.eval_history = state.get("eval_history", [])
        trainer.background_evals = state.get("background_evals", [])
        trainer.history = RunHistory.from_log(truncate_log(run_dir / LOG_FILE,
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
        write_atomic(self.run_dir / SETTINGS_FILE, json.dumps(self.settings.to_json(), indent=2) + "\n")
        with open(self.run_dir / LOG_FILE, "a") as stream:
            stream.write(json.dumps(record) + "\n")
        self.checkpoint()

    # ------------------------------------------------------------ checkpoints

    @property
    def phase(self):
        return "shortcut" if self.games_trained < self.settings.shortcut_games else "all"

    def trainer_metadata(self):
        evaluations = [line for line in read_jsonl(self.run_dir / EVALS_FILE)
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
                 "background_evals": self.background_evals, "saved": timestamp()}
        write_atomic(temporary / "state.json", json.dumps(state, indent=2) + "\n")
        if self.settings.procedure == "neurogo":
            save_recent(temporary / "recent.npz", list(self.recent))
        fsync_directory(temporary)
        if final.exists():
            shutil.rmtree(final)
        os.rename(temporary, final)
        fsync_directory(directory)
        write_atomic(self.run_dir / LATEST_FILE, name + "\n")
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
        an update after every trained position (the architecture's replay,
        engine/training/recipes.py); weight decay once per game, after the replay."""
        network = self.network
        loss, entries = 0.0, 0
        trainable = self.shortcut_only if self.phase == "shortcut" else slice(None)
        rate = self.settings.learning_rate
        replay = recipe_of(self.settings).replay
        for index in self.rng.permutation(len(self.recent)):
            game = self.recent[index]
            if not game.trained.any():
                continue
            for step_loss, step_entries in replay(network, game, rate, self.settings, trainable):
                loss += step_loss
                entries += step_entries
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
        evaluations = BackgroundEvaluations(self)
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
            pool = RayPool(self, ray_address, workers, games, max_weight_lag, ray_games_per_call,
                           log, stop)
        else:
            pool = WorkerPool(self, workers, stop) if workers > 1 else None
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
        """evaluate()'s matches in a process of their own (BackgroundEvaluations), results to
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
            initial_checkpoint(self.run_dir)
        return [("previous", previous_name), ("gnugo-1", None)]


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
