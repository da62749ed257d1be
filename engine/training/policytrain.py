"""Training the move-prediction network on expert games: settings, the run directory with
checkpoints and resume, and the accuracy measure (top-1, top-5, log-loss).

Reading order: PolicySettings (every setting with its default, once), PolicyRun.create()/resume(),
PolicyRun.train() (the loop: batches from engine/training/policydata.py, a step of a backend from
engine/training/policybackends.py, a log line, a checkpoint, an evaluation), then accuracy().

The paper's schedule (Sutskever & Nair 2008, section 3) is the default for `sn2008`: learning
rate 0.1 for 3,000 updates, then 0.01; momentum 0.9; no weight decay; one update per game with the
gradient divided by 200 (the mean game length), which is a mean over a batch of 200 positions.

Run directory:
    settings.json     the settings (resume reads them)
    weights.npz       the newest checkpoint's net (a policy weight file: --policy takes it)
    average.npz       with --average-decay: the newest checkpoint's moving average of the weights
    best.npz          the net of the best held-out top-1 so far (the average's, when averaging)
    state.npz         optimizer momentum, the weights' average, step, positions seen, random state
    log.jsonl         {"type": "train", step, positions, loss, top1, rate, positions_per_second}
                      every log_every steps (means over those steps; loss and top1 of the moves
                      played, also when the targets mix in a teacher's); {"type": "eval", step,
                      positions, top1, top5, log_loss, held_out_positions} every eval_every;
                      when averaging, these are the average's and "current" holds the
                      newest weights' {top1, top5, log_loss}
"""
import dataclasses
import functools
import json
import math
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.nets.judge import KIND as JUDGE, JudgeNet, judge_planes, load_judge
from engine.nets.policy import KINDS, PolicyNet, load_policy, played_ranks, save_policy, tensor_shapes
from engine.nets.weights import WeightFileError
from engine.training.judging import HEADS, MEASURES, judgement_measures, make_judge_backend
from engine.training.mixeddata import MixedDataset
from engine.training.policybackends import make_backend
from engine.training.policydata import PolicyDataset
from engine.training.policyteacher import Teachers, teacher_paths

SETTINGS = "settings.json"
WEIGHTS = "weights.npz"
AVERAGE = "average.npz"
BEST = "best.npz"
STATE = "state.npz"
LOG = "log.jsonl"


# the schedule, where it ends, averaging, the judging net's heads' share of the rate
RESUMABLE_CHANGES = ("steps", "learning_rate", "average_decay", "head_rate_scale", "head_optimizer",
                     "td_lambda")
STACK_RATES = "0.01@0,0.003@150000,0.001@300000"
DEFAULT_RATES = {"sn2008": "0.1@0,0.01@3000", "conv": STACK_RATES, "res": STACK_RATES, JUDGE: STACK_RATES}
TRAINABLE = KINDS + (JUDGE,)     # the policy nets, and the judging net (engine/nets/judge.py)
HEAD_OPTIMIZERS = ("sgd", "adam")


def _schedule(text):
    """'0.1@0,0.01@3000' -> [(0, 0.1), (3000, 0.01)] (rate from that step on)."""
    try:
        pairs = sorted((int(step), float(rate)) for rate, step in
                       (item.split("@") for item in text.split(",")))
    except ValueError:
        raise ValueError(f"learning-rate schedule {text!r}: expected RATE@STEP,RATE@STEP,...") from None
    if not pairs or pairs[0][0] != 0 or any(rate <= 0 for _, rate in pairs):
        raise ValueError(f"learning-rate schedule {text!r}: must start at step 0 with positive rates")
    return pairs


@dataclass
class PolicySettings:
    """A training run's settings; the command line is generated from the metadata."""
    kind: str = field(default="sn2008", metadata={"help": f"architecture: {', '.join(TRAINABLE)} "
                                                          f"(judge: a res trunk with value, score and "
                                                          f"ownership heads beside the move's)"})
    feature_set: str = field(default="", metadata={"help": "input features (default: sn2008 for "
                                                           "the sn2008 net, rich for conv)"})
    kernel: int = field(default=9, metadata={"help": "sn2008: input-to-hidden kernel (7 or 9 in the paper)"})
    hidden: int = field(default=15, metadata={"help": "sn2008: hidden kernels"})
    position_bias: int = field(default=19, metadata={"help": "sn2008: the hidden units' bias map "
                                                            "(the paper's: 19x19; 0: none)"})
    channels: int = field(default=48, metadata={"help": "conv, res: maps per layer"})
    layers: int = field(default=6, metadata={"help": "conv, res: convolutional layers (res: odd, "
                                                     "the first and pairs with a shortcut)"})
    first_kernel: int = field(default=5, metadata={"help": "conv, res: the first layer's kernel"})
    batch_size: int = field(default=200, metadata={"help": "positions per update"})
    learning_rate: str = field(default="", metadata={
        "help": "schedule RATE@STEP,...: the rate from each step on (default: the paper's "
                "0.1@0,0.01@3000 for sn2008; 0.01@0,0.003@150000,0.001@300000 for conv, which "
                "diverges at 0.1)"})
    momentum: float = field(default=0.9, metadata={"help": "SGD momentum"})
    weight_decay: float = field(default=0.0, metadata={"help": "L2 weight decay"})
    steps: int = field(default=100_000, metadata={"help": "updates in all (the paper: 100,000)"})
    augment: int = field(default=1, metadata={"help": "1: each batch under a random board "
                                                      "symmetry; 0: as played"})
    seed: int = field(default=1, metadata={"help": "random seed"})
    teacher: str = field(default="", metadata={
        "help": "policy weight files, comma-separated, to distil: the targets mix the move played "
                "with a teacher's probabilities under a random board symmetry "
                "(engine/training/policyteacher.py); '': the move played alone"})
    teacher_weight: float = field(default=0.5, metadata={"help": "the teachers' share of the targets"})
    head_channels: int = field(default=32, metadata={"help": "judge: the value and ownership heads' maps"})
    value_hidden: int = field(default=64, metadata={"help": "judge: the value and score heads' hidden units"})
    owned_lead: int = field(default=0, metadata={
        "help": "judge: 1: the result and score outputs also read the ownership head's sum (the "
                "lead the owners imply); a judging net without it given by --from-weights grows "
                "it, at zero"})
    value_weight: float = field(default=1.0, metadata={"help": "judge: the result's loss weight"})
    score_weight: float = field(default=1.0, metadata={"help": "judge: the score's loss weight"})
    ownership_weight: float = field(default=1.0, metadata={"help": "judge: the ownership's loss weight"})
    head_rate_scale: float = field(default=1.0, metadata={
        "help": "judge: the value, score and ownership heads learn at this times the schedule's "
                "rate (heads that start at zero on a trained trunk learn faster at a higher one)"})
    head_optimizer: str = field(default="sgd", metadata={
        "help": "judge: the heads' optimizer: sgd (the trunk's) or adam (at head_rate_scale "
                "times the rate: 0.5 for Adam's usual 0.001 at a rate of 0.002)"})
    td_lambda: float = field(default=1.0, metadata={
        "help": "judge, self-play data: the value's target is the lambda-return of the search's "
                "values along the game (TD(lambda), as the seeds train); 1: the game's result"})
    average_decay: float = field(default=0.0, metadata={
        "help": "keep an exponential moving average of the weights, this decay an update (0.999: "
                "about the last 1,000 updates); evaluations, best.npz and average.npz take the "
                "average; 0: none"})

    def __post_init__(self):
        if self.kind not in TRAINABLE:
            raise ValueError(f"kind {self.kind!r}: choose from {TRAINABLE}")
        if not self.feature_set:
            self.feature_set = "sn2008" if self.kind == "sn2008" else "rich"
        if not self.learning_rate:
            self.learning_rate = DEFAULT_RATES[self.kind]
        _schedule(self.learning_rate)
        if self.position_bias < 0:
            raise ValueError("position_bias must be 0 (none) or a map size")
        for name in ("kernel", "hidden", "channels", "layers", "first_kernel", "batch_size", "steps",
                     "head_channels", "value_hidden"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        for name in ("kernel", "first_kernel"):
            if getattr(self, name) % 2 == 0:
                raise ValueError(f"{name} must be odd (a kernel centred on its point)")
        tensor_shapes(self.architecture(), input_planes=1)     # the architecture's own checks
        if not 0.0 < self.teacher_weight <= 1.0:
            raise ValueError(f"teacher_weight {self.teacher_weight}: must be above 0 and at most 1")
        if not 0.0 <= self.average_decay < 1.0:
            raise ValueError(f"average_decay {self.average_decay}: must be at least 0 (none) and below 1")
        for head in HEADS:
            if getattr(self, f"{head}_weight") < 0:
                raise ValueError(f"{head}_weight must be at least 0")
        if self.head_rate_scale <= 0:
            raise ValueError(f"head_rate_scale {self.head_rate_scale}: must be above 0")
        if self.owned_lead not in (0, 1):
            raise ValueError(f"owned_lead {self.owned_lead}: 0 or 1")
        if not 0.0 <= self.td_lambda <= 1.0:
            raise ValueError(f"td_lambda {self.td_lambda}: must be in [0, 1]")
        if self.head_optimizer not in HEAD_OPTIMIZERS:
            raise ValueError(f"head_optimizer {self.head_optimizer!r}: choose from {HEAD_OPTIMIZERS}")

    def architecture(self):
        if self.kind == "sn2008":
            return {"kind": "sn2008", "hidden": self.hidden, "kernel": self.kernel, "boards": 5,
                    "position_bias": self.position_bias}
        stack = {"kind": self.kind, "channels": self.channels, "layers": self.layers,
                 "first_kernel": self.first_kernel}
        if self.kind == JUDGE:
            return dict(stack, head_channels=self.head_channels, value_hidden=self.value_hidden,
                        owned_lead=self.owned_lead)
        return stack

    def new_net(self):
        net_class = JudgeNet if self.kind == JUDGE else PolicyNet
        return net_class(self.architecture(), self.feature_set, seed=self.seed)

    def load_net(self, path):
        """(net, metadata) of a weight file of this run's kind of net."""
        return (load_judge if self.kind == JUDGE else load_policy)(path)

    def rate_at(self, step):
        rate = None
        for start, value in _schedule(self.learning_rate):
            if step >= start:
                rate = value
        return rate

    def average_decay_at(self, step):
        """The average's decay after update `step`: lower while the run is young, so that its
        random start fades fast (as TensorFlow's ExponentialMovingAverage with num_updates)."""
        return min(self.average_decay, (1 + step) / (10 + step))


SETTINGS_FIELDS = {spec.name for spec in dataclasses.fields(PolicySettings)}


def net_settings(net):
    """The settings that describe net's architecture and features."""
    shape = {name: value for name, value in net.architecture.items() if name in SETTINGS_FIELDS}
    return dict(shape, feature_set=net.feature_set.name)


def move_ranks(logits_of, dataset, feature_set_name, indices, batch_size=256):
    """(ranks, log_probabilities) of the moves played at the dataset's positions at indices, as
    the players made them (no symmetry): rank 0 is the net's top move."""
    ranks = np.empty(len(indices), np.int64)
    log_probabilities = np.empty(len(indices))
    for start in range(0, len(indices), batch_size):
        chunk = indices[start:start + batch_size]
        planes, moves = dataset.batch(feature_set_name, chunk)
        ranks[start:start + len(chunk)], log_probabilities[start:start + len(chunk)] = \
            played_ranks(logits_of(planes), moves)
    return ranks, log_probabilities


def summarise_ranks(ranks, log_probabilities):
    """{"top1", "top5", "log_loss", "positions"} of move_ranks()' result (or a part of it)."""
    return {"top1": float((ranks == 0).mean()), "top5": float((ranks < 5).mean()),
            "log_loss": float(-log_probabilities.mean()), "positions": len(ranks)}


def accuracy(logits_of, dataset, feature_set_name, indices, batch_size=256):
    """{"top1", "top5", "log_loss", "positions"} of a net (logits_of: planes -> logits) over the
    dataset's positions at indices."""
    return summarise_ranks(*move_ranks(logits_of, dataset, feature_set_name, indices, batch_size))


def evaluation_indices(dataset, count, seed=12345):
    """A fixed sample of a held-out dataset's positions (the same every evaluation)."""
    rng = np.random.default_rng(seed)
    count = min(count, dataset.positions)
    return np.sort(rng.choice(dataset.positions, size=count, replace=False))


class Stop:
    """SIGINT/SIGTERM ask the loop to checkpoint and stop, while the `with` block runs; the
    previous handlers come back after it (a process forked later, such as a multiprocessing
    pool's worker, must still die on SIGTERM)."""

    def __init__(self):
        self.requested = False
        self._previous = {}

    def __enter__(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc_info):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _handle(self, signum, frame):
        self.requested = True


class PolicyRun:
    """A run directory: its settings, its net and optimizer state, its log."""

    def __init__(self, run_dir, settings, net, step=0, positions=0, best_top1=0.0,
                 best_value_loss=math.inf, rng_state=None):
        self.run_dir = Path(run_dir)
        self.settings, self.net = settings, net
        self.judging = settings.kind == JUDGE
        self.step, self.positions, self.best_top1 = step, positions, best_top1
        self.best_value_loss = best_value_loss
        self.rng = np.random.default_rng(settings.seed)
        if rng_state is not None:
            self.rng.bit_generator.state = rng_state
        self.optimizer_state = None

    @classmethod
    def create(cls, run_dir, settings, start_net=None, start_positions=0):
        """A new run, from random weights or from start_net, whose architecture and features the
        settings must name (take them from it with net_settings()); start_positions: the
        positions start_net learnt from, which the run's count goes on from (the weight files'
        positions_trained), while its steps and its rate schedule start at 0."""
        run_dir = Path(run_dir)
        if run_dir.exists() and any(run_dir.iterdir()):
            raise ValueError(f"{run_dir}: not empty; continue a run with --resume")
        if start_net is not None:
            differ = {name: value for name, value in net_settings(start_net).items()
                      if getattr(settings, name) != value}
            if differ:
                raise ValueError(f"the settings do not describe the starting net, which has {differ}")
        run_dir.mkdir(parents=True, exist_ok=True)
        net = start_net if start_net is not None else settings.new_net()
        _write_settings(run_dir, settings)
        return cls(run_dir, settings, net, positions=start_positions if start_net is not None else 0)

    @classmethod
    def resume(cls, run_dir):
        run_dir = Path(run_dir)
        try:
            settings = PolicySettings(**json.loads((run_dir / SETTINGS).read_text()))
        except (OSError, ValueError, TypeError) as error:
            raise ValueError(f"{run_dir}: cannot resume ({error})") from None
        if not (run_dir / WEIGHTS).exists():
            return cls(run_dir, settings, settings.new_net())
        net, metadata = settings.load_net(run_dir / WEIGHTS)
        trainer = metadata["trainer"]
        run = cls(run_dir, settings, net, trainer.get("step", 0), metadata["positions_trained"],
                  trainer.get("best_top1", 0.0), trainer.get("best_value_loss", math.inf))
        state_path = run_dir / STATE
        if state_path.exists():
            with np.load(state_path, allow_pickle=False) as arrays:
                state = {name: arrays[name] for name in arrays.files}
            if int(state["step"]) == run.step:
                run.rng.bit_generator.state = json.loads(bytes(state["rng"]).decode())
                run.optimizer_state = state
        return run

    def change(self, **changes):
        """Changes the settings a resumed run may change (RESUMABLE_CHANGES): they go to
        settings.json and, with the step they take effect from, to the log."""
        refused = set(changes) - set(RESUMABLE_CHANGES)
        if refused:
            raise ValueError(f"a resumed run keeps its settings; only {', '.join(RESUMABLE_CHANGES)} "
                             f"may change, not {', '.join(sorted(refused))}")
        changes = {name: value for name, value in changes.items() if getattr(self.settings, name) != value}
        if not changes:
            return
        self.settings = dataclasses.replace(self.settings, **changes)
        _write_settings(self.run_dir, self.settings)
        self._log({"type": "settings", "step": self.step, "positions": self.positions, **changes})

    def _log(self, record):
        with open(self.run_dir / LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")

    def _trainer_record(self, backend, averaged=False):
        record = {"step": self.step, "best_top1": self.best_top1, "backend": backend.name,
                  "settings": dataclasses.asdict(self.settings), "averaged": averaged}
        if self.judging and math.isfinite(self.best_value_loss):
            record["best_value_loss"] = self.best_value_loss
        return record

    def checkpoint(self, backend, size, games):
        net = backend.export()
        save_policy(self.run_dir / WEIGHTS, net, size, games, self.positions, self._trainer_record(backend))
        if backend.average is not None:
            save_policy(self.run_dir / AVERAGE, backend.export(averaged=True), size, games, self.positions,
                        self._trainer_record(backend, averaged=True))
        state = dict(backend.state(), step=np.array(self.step),
                     rng=np.frombuffer(json.dumps(self.rng.bit_generator.state).encode(), np.uint8))
        temporary = self.run_dir / f".{STATE}.tmp.npz"
        np.savez(temporary, **state)
        os.replace(temporary, self.run_dir / STATE)

    def train(self, data_dirs, eval_dirs=(), backend_name="auto", threads=None, log_every=100,
              checkpoint_every=1000, eval_every=2000, eval_positions=10_000, stop=None, progress=True,
              precision="fp32", convolutions="auto", extra_dirs=(), extra_share=0.0):
        """Trains until settings.steps updates (or a stop request); checkpoints on the way out.
        extra_dirs: data drawn beside data_dirs' as extra_share of every batch (MixedDataset:
        expert games beside self-play)."""
        dataset = PolicyDataset(data_dirs)
        if extra_dirs:
            dataset = MixedDataset(dataset, PolicyDataset(extra_dirs), extra_share)
        held_out = PolicyDataset(eval_dirs) if eval_dirs else None
        eval_indices = evaluation_indices(held_out, eval_positions) if held_out else None
        # the judging net's measures on training positions too, beside the held-out ones: a value
        # head that memorises its games (AlphaGo's warning) shows as a gap between the two
        train_indices = evaluation_indices(dataset, eval_positions) if held_out and self.judging else None
        if self.judging and not dataset.has_targets:
            raise ValueError("the judging net learns from data with result targets: prepare it "
                             "again with `kosumi-train policy data`")
        backend = (make_judge_backend if self.judging else make_backend)(
            backend_name, self.net, self.settings, threads, precision, convolutions)
        if self.optimizer_state is not None:
            backend.load_state(self.optimizer_state)
        if self.settings.average_decay:
            backend.start_average()
        games = sum(read_games(directory) for directory in data_dirs)
        teachers = Teachers.load(teacher_paths(self.settings.teacher), self.settings.teacher_weight) \
            if self.settings.teacher else None
        draws = dataset.random_draws(self.settings.batch_size, self.rng, bool(self.settings.augment))
        window_loss = window_top1 = 0.0
        window_steps, window_start, window_heads = 0, time.monotonic(), {}
        bar = _progress(progress, self.settings.steps, self.step)
        try:
            while self.step < self.settings.steps and not (stop and stop.requested):
                indices, symmetry = next(draws)
                planes, moves = dataset.batch(self.settings.feature_set, indices, symmetry)
                targets = teachers.targets(dataset, indices, symmetry, moves, self.rng) if teachers else None
                if targets is None and dataset.has_search_targets:
                    targets = dataset.search_policy(indices, symmetry)
                if self.judging:
                    judged = dataset.judge_targets(indices, symmetry, self.settings.td_lambda)
                    loss, top1 = backend.step(judge_planes(planes, judged.komi), moves,
                                              self.settings.rate_at(self.step), targets, judged)
                    for head, value in backend.head_losses.items():
                        total, count = window_heads.get(head, (0.0, 0))
                        window_heads[head] = (total + value, count + 1)
                else:
                    loss, top1 = backend.step(planes, moves, self.settings.rate_at(self.step), targets)
                if not math.isfinite(loss):
                    raise FloatingPointError(f"step {self.step}: the loss is {loss}; lower the "
                                             f"learning rate and resume")
                self.step += 1
                self.positions += len(moves)
                if self.settings.average_decay:
                    backend.update_average(self.settings.average_decay_at(self.step))
                window_loss, window_top1, window_steps = window_loss + loss, window_top1 + top1, window_steps + 1
                if bar:
                    bar.update(1)
                    bar.set_postfix(loss=f"{loss:.3f}", top1=f"{top1:.3f}")
                if self.step % log_every == 0:
                    elapsed = time.monotonic() - window_start
                    self._log({"type": "train", "step": self.step, "positions": self.positions,
                               "loss": window_loss / window_steps, "top1": window_top1 / window_steps,
                               "rate": self.settings.rate_at(self.step - 1),
                               "positions_per_second": window_steps * self.settings.batch_size / elapsed,
                               **{f"{head}_loss": total / count for head, (total, count) in window_heads.items()}})
                    window_loss = window_top1 = 0.0
                    window_steps, window_start, window_heads = 0, time.monotonic(), {}
                if held_out is not None and self.step % eval_every == 0:
                    if self.judging:
                        self._evaluate_judgement(backend, held_out, eval_indices, dataset, train_indices, games)
                    else:
                        self._evaluate(backend, held_out, eval_indices, dataset.size, games)
                if self.step % checkpoint_every == 0:
                    self.checkpoint(backend, dataset.size, games)
        finally:
            if bar:
                bar.close()
            self.checkpoint(backend, dataset.size, games)
        return self

    def _evaluate(self, backend, held_out, indices, size, games):
        averaged = backend.average is not None
        result = accuracy(functools.partial(backend.logits, averaged=averaged), held_out,
                          self.settings.feature_set, indices)
        record = {"type": "eval", "step": self.step, "positions": self.positions,
                  "top1": result["top1"], "top5": result["top5"], "log_loss": result["log_loss"],
                  "held_out_positions": result["positions"]}
        if averaged:
            current = accuracy(backend.logits, held_out, self.settings.feature_set, indices)
            record["current"] = {name: current[name] for name in ("top1", "top5", "log_loss")}
        self._log(record)
        if result["top1"] > self.best_top1:
            self.best_top1 = result["top1"]
            save_policy(self.run_dir / BEST, backend.export(averaged), size, games, self.positions,
                        self._trainer_record(backend, averaged))
        return result

    def _evaluate_judgement(self, backend, held_out, indices, dataset, train_indices, games):
        """The judging net's measures (engine/training/judging.py) on the held-out positions and
        on a sample of the training ones; best.npz keeps the lowest held-out value loss."""
        averaged = backend.average is not None
        judge_of = functools.partial(backend.judge, averaged=averaged)
        result = judgement_measures(judge_of, held_out, self.settings.feature_set, indices)
        seen = judgement_measures(judge_of, dataset, self.settings.feature_set, train_indices)
        self._log({"type": "eval", "step": self.step, "positions": self.positions, **result,
                   "held_out_positions": result["moves_positions"],
                   "training_positions": {name: seen[name] for name in MEASURES}})
        value_loss = result["value_loss"]
        if value_loss is not None and value_loss < self.best_value_loss:
            self.best_value_loss = value_loss
            save_policy(self.run_dir / BEST, backend.export(averaged), dataset.size, games,
                        self.positions, self._trainer_record(backend, averaged))
        return result


def starting_net(path, kind=None, head_channels=None, value_hidden=None, seed=None,
                 owned_lead=None):
    """(net, metadata) of a weight file a new run starts from (--from-weights): its own net, or,
    for a judging run (kind "judge") from a res policy net, a judging net whose trunk and move
    head are that net's (JudgeNet.from_policy); owned_lead 1 grows a judging net's value
    outputs the owned lead's input (JudgeNet.with_owned_lead)."""
    try:
        net, metadata = load_policy(path)
    except WeightFileError as policy_error:
        try:
            net, metadata = load_judge(path)
        except WeightFileError:
            raise policy_error from None
    if kind == JUDGE and not isinstance(net, JudgeNet):
        default = {spec.name: spec.default for spec in dataclasses.fields(PolicySettings)}
        net = JudgeNet.from_policy(net, head_channels or default["head_channels"],
                                   value_hidden or default["value_hidden"],
                                   default["seed"] if seed is None else seed, owned_lead or 0)
    elif owned_lead and isinstance(net, JudgeNet):
        net = net.with_owned_lead()
    return net, metadata


def _write_settings(run_dir, settings):
    (Path(run_dir) / SETTINGS).write_text(json.dumps(dataclasses.asdict(settings), indent=1) + "\n")


def read_games(directory):
    from engine.training.policydata import read_manifest
    return read_manifest(directory)["games"]


def _progress(enabled, total, done):
    if not enabled:
        return None
    from tqdm import tqdm
    return tqdm(total=total, initial=done, unit="step", file=sys.stderr, dynamic_ncols=True)
