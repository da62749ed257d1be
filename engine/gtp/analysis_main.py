"""`kosumi analysis` (also `python gtp_server.py analysis`): the command line of KataGo's JSON
analysis engine over kosumi's search (docs/ANALYSIS_ENGINE.md). engine/gtp/main.py hands it
the arguments after `analysis`.

Reading order: `main()` (the options, the nets, stdout kept for the protocol), `build_server()`
and `player_factory()` (one SearchPlayer per worker and pre-emption level). The protocol is in
analysis_engine.py (queries and answers) and analysis_queue.py (the queue and the workers).
"""
import argparse
import logging
import math
import os
import re
import sys
import threading

import numpy as np

from engine import __version__
from engine.gtp.analysis_engine import AnalysisConfig, PERSPECTIVES
from engine.gtp.analysis_queue import AnalysisServer
from engine.gtp.options import (EXIT_BAD_SETUP, add_logging_options, add_net_options,
                                add_settings_options, load_predictor, settings_from_options,
                                start_logging)

log = logging.getLogger("kosumi.analysis")

# The search's settings an analysis takes from the command line: its budget comes from each
# query (maxVisits, maxTime), and it analyses, it never resigns.
QUERY_BUDGET = ("playouts", "time_per_move", "resign_threshold")
# A review shows the lead itself, move by move (KaTrain's points lost): one playout's margin in
# it swung the lead by 6.5 points a move at 25 visits, the net's alone by 0.37 (2026-12-02,
# docs/notebook/puct.md); play, where the lead is a tenth of the utility, mixes it as measured.
ANALYSIS_PLAYOUT_LEAD_WEIGHT = 0.0


def build_parser():
    from engine.play.settings import PlayerSettings, SearchSettings, settings_fields
    defaults = AnalysisConfig()
    parser = argparse.ArgumentParser(
        prog="kosumi analysis",
        description="KataGo's JSON analysis protocol on stdin/stdout (one query per line, one "
                    "answer per line), over kosumi's tree search: for KaTrain and other review "
                    "tools. See docs/ANALYSIS_ENGINE.md.",
        epilog='KaTrain: "backend": "custom", "altcommand": "exec kosumi analysis" in the '
               '"engine" section of ~/.katrain/config.json')
    add_net_options(parser, "the weight file (.npz) of the net the search plays over; default: "
                            "the shipped judging nets, weights/judge_9x9.npz (boards up "
                            "to 9x9) and weights/judge_19x19_run.npz (larger boards)")
    parser.add_argument("--visits", type=int, default=defaults.max_visits, metavar="N",
                        help="maxVisits of a query that gives none (default: %(default)d)")
    parser.add_argument("--max-time", type=float, default=defaults.max_seconds, metavar="S",
                        help="seconds per position of a query that gives no maxTime "
                             "(default: none)")
    parser.add_argument("--pv-length", type=int, default=defaults.pv_length, metavar="N",
                        help="moves of each principal variation (default: %(default)d)")
    parser.add_argument("--report-winrates-as", choices=PERSPECTIVES,
                        default=defaults.perspective,
                        help="the side values and ownership are reported for, unless a query's "
                             "overrideSettings says (default: %(default)s, as KataGo's example "
                             "analysis config)")
    parser.add_argument("--workers", type=int, default=2, choices=range(1, 65), metavar="N",
                        help="positions searched at once (KataGo's numAnalysisThreads; "
                             "default: %(default)d)")
    parser.add_argument("--quit-without-waiting", action="store_true",
                        help="at the end of the input, terminate the open queries instead of "
                             "finishing them")
    search = parser.add_argument_group("search", "the search of every position (SearchSettings, "
                                                 "as kosumi's; --threads per position)")
    add_settings_options(search, (PlayerSettings, SearchSettings), skip=QUERY_BUDGET,
                         only={"seed", "policy_precision"} |
                         {f.name for f in settings_fields(SearchSettings)} - {"ponder"})
    for action in search._group_actions:       # the analysis's own default (above)
        if action.dest == "puct_playout_lead_weight":
            action.default = ANALYSIS_PLAYOUT_LEAD_WEIGHT
            action.help = re.sub(r"\(default: [^;]*;", f"(default here: "
                                 f"{ANALYSIS_PLAYOUT_LEAD_WEIGHT:g};", action.help)
    add_logging_options(parser)
    parser.add_argument("--version", action="version", version=f"kosumi {__version__}")
    return parser


def analysis_settings(args, seed):
    """The SearchSettings and PlayerSettings of every worker's search: the options', no budget
    of its own (each query's), never resigning."""
    from engine.play.settings import PlayerSettings, SearchSettings
    search = settings_from_options(SearchSettings, args, playouts=None, time_per_move=math.inf,
                                   resign_threshold=None)
    return search, settings_from_options(PlayerSettings, args, seed=seed)


def player_factory(args, evaluator, seed, predictor=None):
    """make_player(worker, level): a SearchPlayer with its own twins of the evaluator and of
    the policy net (the search's policy prior, where the search uses one), its own seed, the
    same settings otherwise."""
    from engine.play.search_player import SearchPlayer
    seeds = np.random.SeedSequence(seed)
    lock = threading.Lock()
    first = [True]
    search_settings, player_settings = analysis_settings(args, seed)

    def make_player(worker, level):
        with lock:
            own = evaluator if first[0] else evaluator.twin()
            first[0] = False
            child_seed = int(seeds.spawn(1)[0].generate_state(1)[0])
        return SearchPlayer(own, search_settings, player_settings,
                            None if predictor is None else predictor.twin(), seed=child_seed)

    return make_player


def build_server(args, output, evaluator, predictor=None):
    """The server the options describe, writing to output (a binary stream)."""
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    log.info("seed %d", seed)
    config = AnalysisConfig(max_visits=args.visits, max_seconds=args.max_time,
                            pv_length=args.pv_length, perspective=args.report_winrates_as)
    return AnalysisServer(config, player_factory(args, evaluator, seed, predictor), output,
                          workers=args.workers, predictor=predictor)


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.visits < 1 or args.pv_length < 1 or \
            (args.max_time is not None and not args.max_time > 0):
        parser.error("--visits and --pv-length must be at least 1, --max-time positive")
    start_logging(args, "kosumi analysis")
    try:
        if args.evaluator == "uniform":
            from engine.nets.evaluator import UniformEvaluator
            evaluator = UniformEvaluator()
        else:
            from engine.play.search_player import load_prior_evaluator
            evaluator = load_prior_evaluator(args.weights, args.policy_precision)
        from engine.nets.evaluator import JudgeMoves
        from engine.play.search_player import uses_puct
        # the PUCT search's moves are the judging net's own: its move head is the answers'
        # policy unless a policy net is named
        if uses_puct(analysis_settings(args, 0)[0], evaluator) and args.policy is None:
            predictor = JudgeMoves(evaluator)
        else:
            predictor = load_predictor(args.policy, precision=args.policy_precision)
    except (OSError, ValueError) as error:
        print(f"kosumi analysis: {error}", file=sys.stderr)
        sys.exit(EXIT_BAD_SETUP)
    # stdout carries protocol lines only: the protocol keeps a private copy of fd 1, and
    # anything else that writes there (a stray print, a C library) goes to stderr
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    status = 0
    with os.fdopen(protocol_fd, "wb", buffering=0) as output:
        server = build_server(args, output, evaluator, predictor)
        print("Started, ready to begin handling requests", file=sys.stderr, flush=True)
        try:
            status = server.run(sys.stdin.buffer, wait=not args.quit_without_waiting)
        except KeyboardInterrupt:
            status = 130
    logging.shutdown()
    sys.exit(status)
