"""kosumi-train: TD self-play training of the evaluation nets, and the other trainers' commands.

Usage (`run` may be left out: the forms without a subcommand are run's):
    kosumi-train run --run-dir RUN_DIR [--games N] [options]    start a run (RUN_DIR new or empty)
    kosumi-train run --resume RUN_DIR [--games N] [--workers K] continue it exactly where it stopped
    kosumi-train run --run-dir RUN_DIR --from-weights NET.npz   a new run from a net kosumi-train
                                                                wrote
    kosumi-train run ... --ray [auto|HEAD:6379]                 self-play on Ray actors (a cluster)
    kosumi-train plot RUN_DIR... [--out PNG]                    training curves to PNG (several:
                                                                compared; a weight file: its curves)
    kosumi-train eval RUN_DIR [--checkpoints N,..] [--opponents initial,gnugo-1] [--games G]
                      [--protocol kosumi|neurogo]               match checkpoints (evals.jsonl)
    kosumi-train policy {data,train,eval,plot} ...              the move-prediction network
                                                                (engine/training/policycli.py)
    kosumi-train selfplay {run,history} ...                     expert iteration: the PUCT search's
                                                                self-play teaches the judging net
                                                                (engine/training/expert/cli.py)
    kosumi-train csa {generate,train,evaluate,relabel} ...      CSA*'s labelled data and classifier
                                                                (engine/training/scoredata.py, also
                                                                python -m engine.training.scoredata)
(`python -m engine.train` is the same program.)

This module is the command line only. Reading order of the trainer it drives, one job a module:
    settings.py    TrainSettings: what defines a run's learning; the new net
    recipes.py     how each architecture is trained (defaults, checks, game, targets, replay)
    trainer.py     Trainer: the loop, learning from each game, checkpoints, when to evaluate
    learning.py    TrainingGame and Blair's gradient of one game; play_training_game()
    workers.py     the local self-play processes (raypool.py: the same on Ray actors)
    evaluation.py  the evaluation matches, offline and in the background
    rundir.py      the run directory's files; history.py: the run's curves in brief
    plots.py       the training curves
"""
import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

from engine.nets import unitnet
from engine.tools.cli import number, options_given
from engine.training.evaluation import (KOSUMI_PROTOCOL, NEUROGO_GAMES, NEUROGO_OPPONENTS,
                                        NEUROGO_PROTOCOL, PROTOCOLS, evaluate_checkpoints)
from engine.training.plots import plot_runs
from engine.training.raypool import MAX_WEIGHT_LAG, RAY_GAMES_PER_CALL, check_ray
from engine.training.rundir import CHECKPOINTS
from engine.training.selfplay import PASS_RULES, PROCEDURES
from engine.training.recipes import RECIPES, UNITGRAPH_RECENT_GAMES
from engine.training.recipes import SOFTSEG_LEARNING_RATE  # noqa: F401 (train.SOFTSEG_LEARNING_RATE)
from engine.training.settings import ARCHITECTURES, TrainSettings
from engine.training.trainer import Interrupted, StartingNet, Trainer


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


def build_parser(prog="kosumi-train"):
    defaults = TrainSettings()
    parser = argparse.ArgumentParser(
        prog=prog,
        description="TD self-play training of kosumi's value nets (the Internal Symmetry Network, "
                    "NeuroGo 3's soft-segmentation net, NeuroGo 1996's network over units). "
                    "`kosumi-train plot RUN_DIR` draws the training curves; the other "
                    "commands: kosumi-train {run,plot,eval,policy,csa} --help.",
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
                 "inputs neurogo unless --feature-set says raw or neurogo_lite; unitgraph: "
                 "NeuroGo 1996's network over strings and empty points "
                 "(engine/nets/unitnet.pyx), TD(0) played backwards over the game just "
                 "played, rate 1e-3, no weight decay, inputs units")
    setting("--softseg-hidden", type=_softseg_hidden,
            default=TrainSettings().softseg_hidden, metavar="H1,H2",
            help="softseg: units per point of the two hidden layers (default 8,2)")
    setting("--softseg-intervals", type=number(int, minimum=1, maximum=64),
            default=defaults.softseg_intervals,
            help="softseg: connection-value intervals of the weight selection (default 8)")
    setting("--unitgraph-hidden", type=number(int, minimum=1, maximum=unitnet.MAX_HIDDEN_UNITS),
            default=defaults.unitgraph_hidden,
            help=f"unitgraph: hidden units per unit (default {defaults.unitgraph_hidden}; the "
                 f"paper tried 3 to 24)")
    setting("--unitgraph-distance", type=number(int, minimum=1, maximum=unitnet.MAX_DISTANCE),
            default=defaults.unitgraph_distance,
            help=f"unitgraph: the largest distance relation Dn the relation expert draws "
                 f"(default {defaults.unitgraph_distance})")
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
    setting("--recent-games", type=number(int, minimum=1),
            help=f"neurogo: games retrained after each game (default {defaults.recent_games}; "
                 f"--arch unitgraph: {UNITGRAPH_RECENT_GAMES}, the 1996 paper's)")
    setting("--train-capped", action="store_true",
            help="also train games that reached the move cap")
    setting("--hidden", type=_hidden, default=defaults.hidden, metavar="T,S,D,C,F",
            help="hidden units per type (default 4,2,2,0,2: 714 parameters)")
    setting("--feature-set", choices=sorted(set().union(*(
                set(recipe.architecture.feature_sets) for recipe in RECIPES.values()))),
            help="the net's inputs (engine/nets/features.pyx): isn14, Blair's one-hot "
                 "inputs (default); neurogo, isn14 plus NeuroGo's preprocessed "
                 "features; neurogo_lite, neurogo without the ladder-if-playing-here "
                 "reads; raw (softseg only): one constant input, the paper's "
                 "raw-board experiment; units (unitgraph only, its default): the "
                 "feature expert's inputs per string and empty point")
    setting("--rich-signal", action="store_true",
            help="NeuroGo's rich reinforcement signal: extra outputs (eyes, "
                 "connections, live points) trained by TD beside the territory "
                 "outputs, which alone give values and moves")
    setting("--init-scale", type=float,
            help=f"standard deviation of the initial weights (default {defaults.init_scale}; "
                 f"--arch unitgraph: {unitnet.DEFAULT_INIT_SCALE})")
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
    """kosumi-train's subcommands; arguments without one are `run`'s."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = argv[0] if argv else None
    if command == "policy":
        from engine.training.policycli import main as policy_main
        return policy_main(argv[1:])
    if command == "selfplay":
        from engine.training.expert.cli import main as selfplay_main
        return selfplay_main(argv[1:])
    if command == "csa":
        from engine.training.scoredata import main as csa_main
        return csa_main(argv[1:], prog="kosumi-train csa")
    if command == "plot":
        return plot_main(argv[1:])
    if command == "eval":
        return eval_main(argv[1:])
    if command == "run":
        return run_main(argv[1:], prog="kosumi-train run")
    return run_main(argv)


def plot_main(argv):
    """`kosumi-train plot`: the curves of TD runs, or of move-prediction runs (policycli.py)."""
    args = build_plot_parser().parse_args(argv)
    from engine.training.policycli import is_policy_run, plot_runs as plot_policy_runs
    if any(is_policy_run(run) for run in args.run_dirs):
        print(plot_policy_runs(args.run_dirs, args.out or "policy_curves.png"))
        return 0
    print(plot_runs(args.run_dirs, args.out, args.window))
    return 0


def eval_main(argv):
    """`kosumi-train eval`: a run's checkpoints against opponents, to its evals.jsonl."""
    args = build_eval_parser().parse_args(argv)
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


def run_main(argv, prog="kosumi-train"):
    """A training run: new (--run-dir), resumed (--resume) or from a net (--from-weights)."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    for option in ("max_weight_lag", "ray_games_per_call"):
        if getattr(args, option) is not None and args.ray is None:
            parser.error(f"--{option.replace('_', '-')} is for the Ray actors: add --ray")
    if args.ray is not None:
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
        recipe = RECIPES[args.arch]

        def given_or_default(name):
            """The option's value, else the architecture's default for a new run (the NeuroGo
            nets: NeuroGo's procedure, their rates, no weight decay nor shortcut phase, ...)."""
            value = getattr(args, name)
            return value if value is not None else recipe.default(name, defaults)

        try:
            settings = TrainSettings(
                size=args.size, lam=args.lam, arch=args.arch,
                procedure=args.procedure or recipe.default("procedure", defaults),
                softseg_hidden=args.softseg_hidden, softseg_intervals=args.softseg_intervals,
                unitgraph_hidden=args.unitgraph_hidden,
                unitgraph_distance=args.unitgraph_distance,
                learning_rate=given_or_default("learning_rate"),
                weight_decay=given_or_default("weight_decay"),
                beta=args.beta,
                gibbs_fraction=args.gibbs_fraction, gibbs_temperature=args.gibbs_temperature,
                capture_value=args.capture_value, stone_value=args.stone_value,
                move_cap_factor=args.move_cap_factor, pass_rule=args.pass_rule,
                shortcut_games=given_or_default("shortcut_games"),
                recent_games=given_or_default("recent_games"),
                train_capped=args.train_capped, hidden=args.hidden,
                feature_set=args.feature_set or recipe.default("feature_set", defaults),
                rich_signal=args.rich_signal or recipe.default("rich_signal", defaults),
                init_scale=given_or_default("init_scale"),
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
