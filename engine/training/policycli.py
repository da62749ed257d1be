"""`kosumi-train policy`: the move-prediction network's command line.

    kosumi-train policy data --sgf PATH... --out DATA_DIR [--size 19] [--max-games N]
        position records of every game under the paths (files, directories, SGF collections,
        .tar.gz/.zip/.xz archives); resumable: run it again to continue
    kosumi-train policy train --run-dir RUN --data DATA_DIR... [--eval-data DIR...] [settings]
    kosumi-train policy train --resume RUN --data DATA_DIR... [--steps N]
        a training run (engine/training/policytrain.py): checkpoints, resume after a kill,
        evaluation on held-out data, a progress bar; weights in RUN/weights.npz and RUN/best.npz
    kosumi-train policy eval --weights W --sgf PATH... [--games N] [--stretch MOVES] [--json OUT]
        top-1 and top-5 accuracy and the mean log-loss over every position of the games, in all
        and by move number (moves 1-50, 51-100, ...: where in the game the net is weak)
    kosumi-train policy judgement --weights JUDGE --sgf PATH... [--games N] [--json OUT]
        how well a judging net (--kind judge) names the winner and the score of counted games,
        40 moves before their end and at move 150 (engine/training/judgeeval.py)
    kosumi-train policy grow --weights W --out W2 [--layers N] [--channels C]
        a larger conv net that predicts what W predicts (engine/training/policygrow.py), to start
        a run from with --from-weights
    kosumi-train policy plot RUN... [--out PNG]    (or kosumi-train plot RUN...)
        loss and accuracy curves of runs
"""
import argparse
import dataclasses
import functools
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.nets.judge import load_judge
from engine.nets.policy import load_policy, save_policy
from engine.nets.predictor import symmetric_log_probabilities
from engine.nets.weights import WeightFileError
from engine.nets.winograd import play_forward, precision_of
from engine.rules.game import SYMMETRIES
from engine.training.sgfdata import ReadCounts
from engine.training.judgeeval import judged_positions, judgement_table
from engine.training.policydata import DataError, PolicyDataset, prepare
from engine.training.policygrow import NOISE, grown
from engine.training.policybackends import CONVOLUTIONS, PRECISIONS
from engine.training.policytrain import (LOG, SETTINGS, PolicyRun, PolicySettings, Stop, move_ranks, net_settings,
                                         starting_net, summarise_ranks)


def progress_printer(every=500):
    """A prepare() progress callback: the games read so far and the time, every `every` games,
    on stderr."""
    started = time.monotonic()

    def progress(counts, positions):
        if counts.games % every == 0:
            print(f"{counts.summary()}; {positions} positions; {time.monotonic() - started:.0f} s",
                  file=sys.stderr)
    return progress


def add_field_options(group, fields):
    """One option per dataclass field, its default and help from the field (None when not
    given, so that a resumed run can tell what was)."""
    for spec in fields:
        group.add_argument(f"--{spec.name.replace('_', '-')}", type=type(spec.default), default=None,
                           help=f"{spec.metadata['help']} (default: {spec.default!r})")


def _add_settings(parser):
    add_field_options(parser.add_argument_group("training settings (new runs)"),
                      dataclasses.fields(PolicySettings))


def _add_measure_options(parser, weights, games):
    """The options of a net's measure over game records (eval, judgement)."""
    parser.add_argument("--weights", required=True, help=weights)
    parser.add_argument("--sgf", nargs="+", required=True, help="SGF files, directories, archives")
    parser.add_argument("--games", type=int, default=None, help=games)
    parser.add_argument("--size", type=int, default=19, help="board size of the games (default 19)")
    parser.add_argument("--symmetries", type=int, default=1, choices=range(1, SYMMETRIES + 1),
                        metavar="N", help="average the net over N of the board's 8 symmetries, "
                        "as --policy-symmetries does in play (default 1)")
    parser.add_argument("--precision", default="fp32", choices=PRECISIONS,
                        help="the net's products, as --policy-precision in play (default fp32)")
    parser.add_argument("--json", help="also write the result as JSON here")


def build_parser():
    parser = argparse.ArgumentParser(prog="kosumi-train policy", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    data = commands.add_parser("data", help="position records from game records")
    data.add_argument("--sgf", nargs="+", required=True, help="SGF files, directories, archives")
    data.add_argument("--out", required=True, help="data directory (continued if it exists)")
    data.add_argument("--size", type=int, default=19, help="board size to keep (default 19)")
    data.add_argument("--max-games", type=int, default=None, help="stop after N games in all")

    train = commands.add_parser("train", help="train or resume a run")
    where = train.add_mutually_exclusive_group(required=True)
    where.add_argument("--run-dir", help="a new run's directory")
    where.add_argument("--resume", help="continue this run")
    train.add_argument("--data", nargs="+", required=True, help="training data directories")
    train.add_argument("--eval-data", nargs="*", default=[], help="held-out data directories")
    train.add_argument("--from-weights", help="start a new run from this net (with --kind judge, a "
                                              "res policy net's trunk and move head start a judging net)")
    train.add_argument("--backend", default="auto", choices=("auto", "torch", "numpy"),
                       help="auto: torch when installed, else numpy")
    train.add_argument("--threads", type=int, default=None, help="torch threads (default: its own)")
    train.add_argument("--precision", default="fp32", choices=PRECISIONS,
                       help="torch: bf16 runs the step's convolutions in bfloat16 (faster on CPUs "
                            "with AVX-512 BF16; weights and evaluation stay float32)")
    train.add_argument("--convolutions", default="auto", choices=CONVOLUTIONS,
                       help="torch: winograd takes the conv and res nets' 3x3 and 5x5 layers by Winograd's "
                            "F(4x4), fewer products than torch's own (direct); auto: winograd in fp32")
    train.add_argument("--log-every", type=int, default=100)
    train.add_argument("--checkpoint-every", type=int, default=1000)
    train.add_argument("--eval-every", type=int, default=2000)
    train.add_argument("--eval-positions", type=int, default=10_000)
    train.add_argument("--no-progress", action="store_true")
    _add_settings(train)

    evaluate = commands.add_parser("eval", help="accuracy over game records")
    _add_measure_options(evaluate, "a policy weight file", "the first N games only")
    evaluate.add_argument("--stretch", type=int, default=50, metavar="MOVES",
                          help="the accuracy by move number in stretches of MOVES (default 50)")

    judgement = commands.add_parser("judgement", help="a judging net's winners and scores of counted games")
    _add_measure_options(judgement, "a judging net's weight file", "the first N counted games only")

    grow = commands.add_parser("grow", help="a deeper or wider net from a trained one")
    grow.add_argument("--weights", required=True, help="a conv policy weight file")
    grow.add_argument("--out", required=True, help="the grown net's weight file")
    grow.add_argument("--layers", type=int, default=None, help="hidden layers (default: as W)")
    grow.add_argument("--channels", type=int, default=None, help="maps a layer (default: as W)")
    grow.add_argument("--noise", type=float, default=NOISE,
                      help=f"new maps' kernel noise, times the layer's weight spread (default {NOISE})")
    grow.add_argument("--seed", type=int, default=0)

    plot = commands.add_parser("plot", help="training curves")
    plot.add_argument("runs", nargs="+")
    plot.add_argument("--out", default="policy_curves.png")
    return parser


def _train(args, parser):
    given = {spec.name: getattr(args, spec.name) for spec in dataclasses.fields(PolicySettings)
             if getattr(args, spec.name) is not None}
    try:
        if args.resume:
            run = PolicyRun.resume(args.resume)
            run.change(**given)
        else:
            start, metadata = starting_net(args.from_weights, args.kind, args.head_channels,
                                           args.value_hidden, args.seed, args.owned_lead) \
                if args.from_weights else (None, {})
            if start is not None:   # the file's architecture and features, whatever the options said
                given.update(net_settings(start))
            run = PolicyRun.create(args.run_dir, PolicySettings(**given), start,
                                   metadata.get("positions_trained", 0))
        print(f"kosumi-train policy: {run.run_dir}: step {run.step}, {run.positions} positions; "
              f"{json.dumps(dataclasses.asdict(run.settings))}", file=sys.stderr)
        with Stop() as stop:
            run.train(args.data, args.eval_data, args.backend, args.threads, args.log_every,
                      args.checkpoint_every, args.eval_every, args.eval_positions, stop,
                      not args.no_progress, args.precision, args.convolutions)
    except (ValueError, DataError, WeightFileError) as error:
        parser.error(str(error))
    return 0


def _eval(args, parser):
    if args.stretch < 1:
        parser.error(f"--stretch must be a positive number of moves, not {args.stretch}")
    try:
        net, _ = load_policy(args.weights)
        with tempfile.TemporaryDirectory(prefix="kosumi-policy-eval-") as scratch:
            manifest = prepare(args.sgf, scratch, size=args.size, max_games=args.games,
                               progress=progress_printer())
            if not manifest["positions"]:
                parser.error(f"no positions in {' '.join(args.sgf)} ({manifest['skipped']} skipped)")
            dataset = PolicyDataset([scratch])
            forward = play_forward(net, args.precision)
            scores = functools.partial(symmetric_log_probabilities, forward, symmetries=args.symmetries)
            indices = np.arange(dataset.positions)
            ranks, log_probabilities = move_ranks(scores, dataset, net.feature_set.name, indices)
            stretches = (dataset.move_numbers(indices) - 1) // args.stretch
    except (ValueError, DataError, WeightFileError) as error:
        parser.error(str(error))
    result = summarise_ranks(ranks, log_probabilities)
    result["games"] = manifest["games"]
    result["symmetries"] = args.symmetries
    result["precision"] = precision_of(forward)
    result["skipped"] = sum(manifest["skipped"].values())
    result["by_move_number"] = [
        {"first": int(n) * args.stretch + 1, "last": (int(n) + 1) * args.stretch,
         **summarise_ranks(ranks[stretches == n], log_probabilities[stretches == n])}
        for n in np.unique(stretches)]
    print(f"top1 {result['top1']:.4f}  top5 {result['top5']:.4f}  log_loss {result['log_loss']:.4f}  "
          f"positions {result['positions']}  games {result['games']}  skipped {result['skipped']}")
    for part in result["by_move_number"]:
        print(f"  moves {part['first']:>3}-{part['last']:<3}  top1 {part['top1']:.4f}  "
              f"top5 {part['top5']:.4f}  log_loss {part['log_loss']:.4f}  positions {part['positions']}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


def _judgement(args, parser):
    counts = ReadCounts()
    try:
        net, _ = load_judge(args.weights)
        positions = list(judged_positions(args.sgf, args.size, args.games, counts))
        table = judgement_table(play_forward(net, args.precision), positions, net.feature_set.name,
                                args.symmetries)
    except (ValueError, WeightFileError) as error:
        parser.error(str(error))
    if not table:
        parser.error(f"no counted games in {' '.join(args.sgf)} ({counts.summary()})")
    result = {"weights": Path(args.weights).name, "symmetries": args.symmetries,
              "precision": args.precision, "skipped": dict(counts.skipped), "points": table}
    for point, row in table.items():
        print(f"{point:>9}: winner right by win rate {row['winner_by_win_rate']:.1%}, by score lead "
              f"{row['winner_by_score']:.1%}; Brier {row['brier']:.3f}; score error "
              f"{row['score_error']:.1f} points; {row['positions']} positions")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


def _grow(args, parser):
    try:
        net, metadata = load_policy(args.weights)
        bigger = grown(net, args.layers, args.channels, args.noise, args.seed)
    except (ValueError, WeightFileError) as error:
        parser.error(str(error))
    save_policy(args.out, bigger, metadata["board_size"], metadata["games_trained"],
                metadata["positions_trained"],
                trainer={"grown_from": Path(args.weights).name, "from_params_sha256": metadata["params_sha256"]})
    print(f"{args.out}: {bigger.architecture['layers']} layers of {bigger.architecture['channels']} "
          f"maps, {bigger.num_params} parameters (from {net.num_params})")
    return 0


def is_policy_run(path):
    """A policy run's directory (its settings name a policy architecture)."""
    settings = Path(path) / SETTINGS
    try:
        return Path(path).is_dir() and "kind" in json.loads(settings.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False


def read_log(run):
    path = Path(run) / LOG
    if not path.is_file():
        raise ValueError(f"{run}: no {LOG} (not a policy run directory)")
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            raise ValueError(f"{path}: line {number} is not JSON") from None
    return records


def plot_runs(runs, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    logs = {run: read_log(run) for run in runs}
    judging = any("value_loss" in record for records in logs.values() for record in records)
    figure, axes = plt.subplots(1, 3 if judging else 2, figsize=(16.5 if judging else 11, 4))
    loss_axis, accuracy_axis = axes[:2]
    for run, records in logs.items():
        train = [r for r in records if r["type"] == "train"]
        held = [r for r in records if r["type"] == "eval"]
        label = Path(run).name
        loss_axis.plot([r["positions"] for r in train], [r["loss"] for r in train], label=f"{label} train")
        if held:
            loss_axis.plot([r["positions"] for r in held], [r["log_loss"] for r in held], "o-",
                           label=f"{label} held out")
        accuracy_axis.plot([r["positions"] for r in train], [r["top1"] for r in train],
                           label=f"{label} train top-1")
        if held:
            accuracy_axis.plot([r["positions"] for r in held], [r["top1"] for r in held], "o-",
                               label=f"{label} held-out top-1")
            with_top5 = [r for r in held if r.get("top5") is not None]
            accuracy_axis.plot([r["positions"] for r in with_top5], [r["top5"] for r in with_top5], "s--",
                               label=f"{label} held-out top-5")
        averaged = [r for r in held if "current" in r]
        if averaged:    # the run evaluates its weights' average; these are the newest weights
            accuracy_axis.plot([r["positions"] for r in averaged], [r["current"]["top1"] for r in averaged],
                               "x:", label=f"{label} held-out top-1, newest weights")
        if judging:
            _plot_value_losses(axes[2], label, train, held)
    loss_axis.set(xlabel="positions trained", ylabel="log-loss", title="loss")
    accuracy_axis.set(xlabel="positions trained", ylabel="accuracy", title="move prediction")
    for axis in axes:
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7, loc="best")
    figure.tight_layout()
    figure.savefig(out, dpi=100)
    return out


def _plot_value_losses(axis, label, train, held):
    """The judging net's result loss: the training steps', the held-out positions' and, beside
    them, the training positions' measured the same way (a gap between those two is memorising)."""
    train = [r for r in train if "value_loss" in r]
    held = [r for r in held if r.get("value_loss") is not None]
    axis.plot([r["positions"] for r in train], [r["value_loss"] for r in train], label=f"{label} steps")
    axis.plot([r["positions"] for r in held], [r["value_loss"] for r in held], "o-",
              label=f"{label} held out")
    axis.plot([r["positions"] for r in held], [r["training_positions"]["value_loss"] for r in held],
              "s--", label=f"{label} training positions")
    axis.set(xlabel="positions trained", ylabel="logistic loss", title="the result (judging net)")


def main(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "data":
        try:
            manifest = prepare(args.sgf, args.out, args.size, args.max_games, progress=progress_printer())
        except (ValueError, DataError) as error:
            parser.error(str(error))
        print(f"{args.out}: {manifest['games']} games, {manifest['positions']} positions, "
              f"{sum(manifest['skipped'].values())} records skipped {manifest['skipped'] or ''}; "
              f"the judging net's targets: a winner in {manifest['value_games']} games, a score in "
              f"{manifest['scored_games']}, an ownership in {manifest['owned_games']}")
        return 0
    if args.command == "train":
        return _train(args, parser)
    if args.command == "eval":
        return _eval(args, parser)
    if args.command == "grow":
        return _grow(args, parser)
    if args.command == "judgement":
        return _judgement(args, parser)
    try:
        print(plot_runs(args.runs, args.out))
    except ValueError as error:
        parser.error(str(error))
    return 0

