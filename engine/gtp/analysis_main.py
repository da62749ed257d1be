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
import sys
import threading

import numpy as np

from engine import __version__
from engine.gtp.analysis_engine import AnalysisConfig, PERSPECTIVES
from engine.gtp.analysis_queue import AnalysisServer

log = logging.getLogger("kosumi.analysis")

EXIT_BAD_SETUP = 2      # as `kosumi`'s (main.py, which imports this module: not the reverse)


def build_parser():
    from engine.search.tree import DEFAULT_MAX_NODES
    defaults = AnalysisConfig()
    parser = argparse.ArgumentParser(
        prog="kosumi analysis",
        description="KataGo's JSON analysis protocol on stdin/stdout (one query per line, one "
                    "answer per line), over kosumi's tree search: for KaTrain and other review "
                    "tools. See docs/ANALYSIS_ENGINE.md.",
        epilog='KaTrain: "backend": "custom", "altcommand": "exec kosumi analysis" in the '
               '"engine" section of ~/.katrain/config.json')
    parser.add_argument("--weights", metavar="PATH",
                        help="value net weight file (.npz), the search's prior; default: the "
                             "shipped net, weights/softseg_9x9.npz")
    parser.add_argument("--evaluator", choices=("net", "uniform"), default="net",
                        help="'uniform': no net at all (a plain area count), for tests")
    parser.add_argument("--policy", metavar="PATH",
                        help="a move-prediction (policy) net: the answers' `policy`, the "
                             "`prior` of moves, and the search's policy prior where the search "
                             "takes one (default: the shipped net when present; 'none': no "
                             "policy net, and `policy` and such priors are left out)")
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
    parser.add_argument("--threads", type=int, default=1, choices=range(1, 65), metavar="N",
                        help="search threads per position (root-parallel trees; default: "
                             "%(default)d)")
    parser.add_argument("--search-prior", choices=("auto", "net", "none"), default="auto",
                        help="the tree's prior: the value net's successor values, or none; auto "
                             "(the default): the net's below 13 lines")
    parser.add_argument("--max-nodes", type=int, default=DEFAULT_MAX_NODES, metavar="N",
                        help="node budget per tree (default: %(default)d)")
    parser.add_argument("--seed", type=int, help="random seed (default: a fresh one, logged)")
    parser.add_argument("--quit-without-waiting", action="store_true",
                        help="at the end of the input, terminate the open queries instead of "
                             "finishing them")
    parser.add_argument("--log-level", default="warning",
                        choices=("debug", "info", "warning", "error"),
                        help="log detail; debug logs every line in and out (default: %(default)s)")
    parser.add_argument("--log-file", metavar="PATH",
                        help="write the log there instead of to stderr")
    parser.add_argument("--version", action="version", version=f"kosumi {__version__}")
    return parser


def player_factory(args, evaluator, seed, predictor=None):
    """make_player(worker, level): a SearchPlayer with its own twins of the evaluator and of
    the policy net (the search's policy prior, where the search uses one), its own seed, never
    resigning (it analyses, it does not play)."""
    from engine.play.search_player import SearchPlayer
    seeds = np.random.SeedSequence(seed)
    lock = threading.Lock()
    first = [True]

    def make_player(worker, level):
        with lock:
            own = evaluator if first[0] else evaluator.twin()
            first[0] = False
            child_seed = int(seeds.spawn(1)[0].generate_state(1)[0])
        options = {} if predictor is None else {"predictor": predictor.twin()}
        return SearchPlayer(own, playouts=None, seconds_per_move=math.inf, threads=args.threads,
                            seed=child_seed, resign_threshold=None,
                            use_prior={"auto": None, "net": True, "none": False}[args.search_prior],
                            max_nodes=args.max_nodes, **options)

    return make_player


def build_server(args, output, evaluator, predictor=None):
    """The server the options describe, writing to output (a binary stream)."""
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    log.info("seed %d", seed)
    config = AnalysisConfig(max_visits=args.visits, max_seconds=args.max_time,
                            pv_length=args.pv_length, perspective=args.report_winrates_as)
    return AnalysisServer(config, player_factory(args, evaluator, seed, predictor), output,
                          workers=args.workers, predictor=predictor)


def load_predictor(path):
    """The policy net (a MovePredictor) at path, the shipped one when path is None and it is
    there, or None ('none', or nothing shipped)."""
    if path == "none":
        return None
    from engine.nets.weights import DEFAULT_POLICY_WEIGHTS
    if path is None and not DEFAULT_POLICY_WEIGHTS.exists():
        return None
    from engine.nets.predictor import MovePredictor
    return MovePredictor.load(path or DEFAULT_POLICY_WEIGHTS)


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.visits < 1 or args.pv_length < 1 or args.max_nodes < 2 or \
            (args.max_time is not None and not args.max_time > 0):
        parser.error("--visits and --pv-length must be at least 1, --max-nodes at least 2, "
                     "--max-time positive")
    from engine.gtp.protocol import configure_logging
    try:
        configure_logging(args.log_level, args.log_file)
    except OSError as error:
        print(f"kosumi analysis: cannot open the log file: {error}", file=sys.stderr)
        sys.exit(EXIT_BAD_SETUP)
    try:
        if args.evaluator == "uniform":
            from engine.nets.evaluator import UniformEvaluator
            evaluator = UniformEvaluator()
        else:
            from engine.play.search_player import load_prior_evaluator
            evaluator = load_prior_evaluator(args.weights)
        predictor = load_predictor(args.policy)
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
