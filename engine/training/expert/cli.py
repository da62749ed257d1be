"""kosumi-train selfplay: expert iteration, the search teaching the judging net (run.py).

    kosumi-train selfplay run --run-dir RUN --from-weights NET.npz [--size 9] [settings]
                                                    a new run from a judging net (or a res
                                                    policy net's trunk and move head), then runs it
    kosumi-train selfplay run --resume RUN [--workers K] [--ray ADDRESS|local] [--nets N]
                                                    go on: K local worker processes (default 1)
                                                    or K Ray actors, the learner in this process
    kosumi-train selfplay eval RUN --nets 0,4 [--opponent gnugo-10] [--games 20] [--visits 200]
                                                    nets of a run against a fixed opponent
                                                    (strength.py), to its strength.jsonl
    kosumi-train selfplay history RUN [--out PNG]  the nets of a run, their strength, the plot

A run goes on until interrupted (SIGINT or SIGTERM: the learner checkpoints, the workers drop the
games under way) or until it has N nets beyond its first (--nets).
"""
import argparse
import dataclasses
import sys

from engine.nets.weights import WeightFileError
from engine.training.expert.games import SelfPlaySettings
from engine.training.expert.pool import Driver, LocalPool, RayPool
from engine.training.expert.run import ExpertRun, ExpertSettings, describe
from engine.training.expert.strength import describe_strength, measure, strengths
from engine.training.policybackends import PRECISIONS
from engine.training.policycli import add_field_options
from engine.training.policydata import DataError
from engine.training.policytrain import JUDGE, PolicySettings, Stop, starting_net
from engine.training.raypool import check_ray
from engine.training.rundir import lock_run

# the learner's settings a new run takes from the command line (the rest: the starting net's
# architecture, and PolicySettings' defaults)
TRAINER_OPTIONS = ("batch_size", "learning_rate", "momentum", "weight_decay", "td_lambda",
                   "value_weight", "score_weight", "ownership_weight")


def build_parser():
    parser = argparse.ArgumentParser(prog="kosumi-train selfplay", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="start or continue a run")
    where = run.add_mutually_exclusive_group(required=True)
    where.add_argument("--run-dir", help="a new run's directory")
    where.add_argument("--resume", help="continue this run")
    run.add_argument("--from-weights", help="a new run's first net: a judging net's weight file, "
                                            "or a res policy net's (its trunk and move head, "
                                            "the other heads new)")
    run.add_argument("--workers", type=int, default=1, help="self-play workers (default 1)")
    run.add_argument("--ray", metavar="ADDRESS", help="the workers as Ray actors: a cluster's "
                                                     "HOST:PORT, auto, or local (a Ray of this machine)")
    run.add_argument("--nets", type=int, default=None, help="stop once the run has this many "
                                                            "nets beyond its first")
    run.add_argument("--learner-threads", type=int, default=1, help="torch threads of the learner")
    run.add_argument("--learner-precision", default="fp32", choices=PRECISIONS,
                     help="the learner's step: bf16 on CPUs with AVX-512 BF16 (kosumi-train policy "
                          "train --precision)")
    add_field_options(run.add_argument_group("the run's loop (new runs)"), dataclasses.fields(ExpertSettings))
    add_field_options(run.add_argument_group("self-play games (new runs)"), dataclasses.fields(SelfPlaySettings))
    add_field_options(run.add_argument_group("the learner (new runs)"),
                [spec for spec in dataclasses.fields(PolicySettings) if spec.name in TRAINER_OPTIONS])
    evaluate = commands.add_parser("eval", help="nets of a run against a fixed opponent")
    evaluate.add_argument("run")
    evaluate.add_argument("--nets", required=True, help="net numbers, comma-separated (accepted nets)")
    evaluate.add_argument("--opponent", default="gnugo-10", help="gnugo-LEVEL or net-N (default gnugo-10)")
    evaluate.add_argument("--games", type=int, default=20, help="games a match (default 20)")
    evaluate.add_argument("--visits", type=int, default=200, help="the nets' visits a move (default 200)")
    history = commands.add_parser("history", help="the nets of a run")
    history.add_argument("run")
    history.add_argument("--out", help="also plot the run's history to this PNG")
    return parser


def _given(args, settings_class, names=None):
    return {spec.name: getattr(args, spec.name) for spec in dataclasses.fields(settings_class)
            if (names is None or spec.name in names) and getattr(args, spec.name) is not None}


def _run(args, parser):
    if args.workers < 1 or args.learner_threads < 1:
        parser.error("--workers and --learner-threads must be at least 1")
    if args.ray:
        check_ray(args.ray)        # before a run directory is made
    try:
        if args.resume:
            new_settings = sorted(_given(args, ExpertSettings) | _given(args, SelfPlaySettings)
                                  | _given(args, PolicySettings, TRAINER_OPTIONS))
            if new_settings or args.from_weights:
                parser.error(f"a resumed run keeps its settings and nets; not "
                             f"{', '.join(new_settings) or '--from-weights'}")
            run = ExpertRun(args.resume)
        else:
            if not args.from_weights:
                parser.error("a new run starts from a judging net: --from-weights")
            net, _ = starting_net(args.from_weights, JUDGE)
            run = ExpertRun.create(args.run_dir, net, ExpertSettings(**_given(args, ExpertSettings)),
                                   SelfPlaySettings(**_given(args, SelfPlaySettings)),
                                   _given(args, PolicySettings, TRAINER_OPTIONS))
    except (ValueError, WeightFileError, DataError) as error:
        parser.error(str(error))
    lock = lock_run(run.dir)       # noqa: F841 (held while this process lives)
    options = (dataclasses.asdict(run.selfplay), run.settings.size, run.settings.chunk_games)
    pool = RayPool(options, args.workers, args.ray) if args.ray else LocalPool(options, args.workers)
    driver = Driver(run, pool, args.workers)
    print(f"kosumi-train selfplay: {run.dir}: net {run.current_net()} playing, "
          f"{run.games()} games so far; {args.workers} {'Ray actors' if args.ray else 'workers'}",
          file=sys.stderr)

    def idle():
        if driver.error is not None:
            raise driver.error

    driver.start()
    try:
        with Stop() as stop:
            run.learn(stop, args.nets, args.learner_threads, idle=idle,
                      precision=args.learner_precision,
                      report=lambda text: print(text, file=sys.stderr, flush=True))
    finally:
        driver.stop()
    print(f"kosumi-train selfplay: stopped with net {run.current_net()} playing, {run.games()} games",
          file=sys.stderr)
    return 0


def _history(args, parser):
    try:
        run = ExpertRun(args.run)
    except ValueError as error:
        parser.error(str(error))
    print(describe(run.history()))
    for line in strengths(run):
        print(describe_strength(line))
    if args.out:
        from engine.training.expert.plot import plot_history
        print(plot_history(run, args.out))
    return 0


def _eval(args, parser):
    if args.games < 1 or args.visits < 1:
        parser.error("--games and --visits must be at least 1")
    try:
        run = ExpertRun(args.run)
        numbers = [int(text) for text in args.nets.split(",")]
        for number in numbers:
            print(describe_strength(measure(run, number, args.opponent, args.games, args.visits)))
    except ValueError as error:
        parser.error(str(error))
    return 0


def main(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    return {"run": _run, "eval": _eval, "history": _history}[args.command](args, parser)
