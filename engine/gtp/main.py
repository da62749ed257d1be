"""`kosumi` / `python gtp_server.py`: parse the options, build the engine, serve GTP on stdin/stdout.

Everything else lives in engine/gtp/protocol.py (the loop), engine/gtp/commands.py (the commands)
and engine/play/player.py (the move choice). Logs go to stderr (or --log-file); stdout carries
protocol bytes only.
"""
import argparse
import logging
import os
import sys

# One BLAS thread, set before numpy loads: the engine's parallelism is its search threads, and a
# BLAS spreading each small matrix product of the policy net over cores that are busy (the search
# threads, a GUI, a match opponent) spins: a 19x19 search with the policy prior made a sixth of
# the simulations with two BLAS threads on a loaded two-core machine.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from engine import __version__  # noqa: E402
from engine.tools.cli import number  # noqa: E402

log = logging.getLogger("kosumi")

EXIT_BAD_SETUP = 2


def build_parser():
    from engine.play.player import DEFAULT_BETA, DEFAULT_RESIGN_THRESHOLD
    from engine.nets.weights import DEFAULT_POLICY_WEIGHTS
    from engine.play.search_player import (DEFAULT_PLAYOUTS, LARGE_BOARD_KNOWLEDGE_PRIOR,
                                           POLICY_PRIOR_LINES, POLICY_PRIOR_VISITS,
                                           RULES_OF_THUMB_LINES, SOFTSEG_PRIOR_THRESHOLD)
    from engine.search.playout import PLAYOUT_TACTICS
    from engine.search.tree import (DEFAULT_EXPAND_THRESHOLD, DEFAULT_KNOWLEDGE_PRIOR,
                                    DEFAULT_MAX_NODES, DEFAULT_NET_PRIOR,
                                    DEFAULT_NET_PRIOR_THRESHOLD, DEFAULT_VALUE_WEIGHT,
                                    LARGE_BOARD_LINES)
    parser = argparse.ArgumentParser(
        prog="kosumi",
        description="kosumi, a Go engine speaking GTP version 2 on stdin/stdout.",
        epilog="Example: gogui-twogtp -black 'python gtp_server.py' -white 'gnugo --mode gtp' "
               "-size 9 -komi 7 -games 20 -alternate -auto")
    parser.add_argument("--weights", metavar="PATH",
                        help="network weight file (.npz); default: the shipped nets, "
                             "weights/softseg_9x9.npz, for 1-ply play and as the prior of "
                             "--search mcts")
    parser.add_argument("--evaluator", choices=("net", "uniform"), default="net",
                        help="'uniform' plays from a plain area count without any net: for "
                             "testing controllers and the protocol (default: net)")
    parser.add_argument("--beta", type=number(minimum=0, finite=False, what="beta"), default=DEFAULT_BETA,
                        help="Boltzmann inverse temperature over move values in points; "
                             "'inf' always plays the best move (default: %(default)g)")
    parser.add_argument("--seed", type=int, help="random seed; the same seed replays the same "
                                                 "moves (default: a fresh one, logged)")
    parser.add_argument("--komi", type=number(what="komi"), default=7.0,
                        help="komi until a controller sets one (default: %(default)g)")
    parser.add_argument("--size", type=int, default=19, choices=range(2, 26), metavar="N",
                        help="board size until a controller sets one (default: %(default)d)")
    parser.add_argument("--rules", choices=("chinese", "japanese"), default="chinese",
                        help="scoring: chinese = area, japanese = territory (default: chinese)")
    parser.add_argument("--resign-threshold", type=number(above=0, maximum=1, what="the resign threshold (a fraction of the board)"),
                        default=DEFAULT_RESIGN_THRESHOLD, metavar="FRACTION",
                        help="resign after 3 moves in a row whose best expected score is below "
                             "-FRACTION x board points (default: %(default)g)")
    parser.add_argument("--no-resign", action="store_true", help="never resign")
    parser.add_argument("--capture-all-dead", action="store_true",
                        help="capture every dead opponent stone before passing; needed where "
                             "the board is counted as it stands (CGOS)")
    parser.add_argument("--symmetries", type=int, choices=range(1, 9), metavar="N",
                        help="1-ply play: average the net's values over N of the board's 8 "
                             "rotations and reflections, at N times the cost (default: 8 for a "
                             "net that tells directions apart, the soft-segmentation net; 1 for "
                             "the ISN, symmetric already). Short of time, fewer are used")
    policy = parser.add_argument_group("move prediction", "the policy network (--player policy, "
                                                          "and the search's prior)")
    policy.add_argument("--player", choices=("1ply", "mcts", "policy"),
                        help="move choice: 1ply and mcts as --search; policy = the policy "
                             "network's move, no search (fast on every board size); default: "
                             "--search's choice")
    policy.add_argument("--policy", metavar="PATH",
                        help="policy network weight file (default: the shipped "
                             f"{DEFAULT_POLICY_WEIGHTS.name} when present; 'none': no policy net)")
    policy.add_argument("--policy-temperature", type=number(minimum=0, what="temperature"),
                        default=0.0, metavar="T",
                        help="--player policy: 0 plays the net's top move; T > 0 draws a move "
                             "with probability proportional to p^(1/T) (default: %(default)g)")
    policy.add_argument("--policy-symmetries", type=int, choices=range(1, 9), default=1,
                        metavar="N", help="average the policy over N of the board's 8 "
                                          "symmetries, at N times the cost (default: %(default)d)")
    policy.add_argument("--policy-prior", choices=("auto", "on", "off"), default="auto",
                        help="--search mcts: the policy network's probabilities in the tree's "
                             f"prior; auto (the default): from {POLICY_PRIOR_LINES} lines, "
                             "when a policy net is loaded")
    policy.add_argument("--policy-visits", type=number(minimum=0, what="policy visits"),
                        default=POLICY_PRIOR_VISITS, metavar="GAMES",
                        help="games of equivalent experience (wins) the policy's top move gets "
                             "in the tree; each move gets GAMES x sqrt(p / p_top) "
                             "(default: %(default)g)")
    search = parser.add_argument_group("search", "Monte-Carlo tree search (--search mcts)")
    search.add_argument("--search", choices=("1ply", "mcts"), default="1ply",
                        help="move choice: 1ply = Boltzmann over the net's successor values "
                             "(the design's default); mcts = tree search with RAVE and pattern "
                             "playouts, the net's values as the prior (stronger)")
    search.add_argument("--playouts", type=int, metavar="N",
                        help=f"simulations per move (default: {DEFAULT_PLAYOUTS} unless "
                             "--time-per-move is given); with --seed and one thread a search "
                             "repeats exactly")
    search.add_argument("--time-per-move", type=number(above=0, what="seconds per move"),
                        metavar="S", help="seconds per move (the GTP clock, when set, may "
                                          "shorten it)")
    search.add_argument("--threads", type=int, default=1, choices=range(1, 65), metavar="N",
                        help="search threads (root-parallel trees; default: %(default)d)")
    search.add_argument("--search-prior", choices=("auto", "net", "none"), default="auto",
                        help="the tree's prior: the net's successor values, or none (even); "
                             f"auto (the default): the net's below {RULES_OF_THUMB_LINES} "
                             "lines, none from there (the shipped nets learnt 9x9, and a net's "
                             "call costs more playouts the larger the board)")
    search.add_argument("--prior-visits", type=number(minimum=0, what="prior visits"),
                        default=DEFAULT_NET_PRIOR,
                        help="games of equivalent experience the prior is worth (default: "
                             "%(default)g)")
    search.add_argument("--knowledge-prior", type=number(minimum=0, what="knowledge prior"),
                        metavar="GAMES",
                        help="games of equivalent experience for rules of thumb in the tree "
                             "(captures, escapes, self-ataris, patterns, empty edges and, from "
                             f"{LARGE_BOARD_LINES} lines, empty third and fourth lines; see "
                             "engine/search/tree.pyx); default: "
                             f"{DEFAULT_KNOWLEDGE_PRIOR:g} below {RULES_OF_THUMB_LINES} lines, "
                             f"{LARGE_BOARD_KNOWLEDGE_PRIOR:g} from there")
    search.add_argument("--playout-tactics", choices=PLAYOUT_TACTICS, default="mogo",
                        help="the playouts' tactics: mogo = MoGo's (escape from atari, capture, "
                             "3x3 patterns); fuego = those and Fuego's: moves at the liberties "
                             "of two-liberty chains (capturing races), the nakade of a "
                             "three-point eye space, no lone stone put in atari for nothing; "
                             "fuego-ladders = fuego and no escape into a ladder (Pachi's check: "
                             "it reads ladders, the dearest); see engine/search/playout.pyx. "
                             "Default: %(default)s")
    search.add_argument("--last-good-reply", action="store_true",
                        help="the playouts also play the replies that won the tree's recent "
                             "simulations and forget those that lost (LGRF-2 and LGRF-1, Baier "
                             "& Drake 2010), after escapes and captures, before the patterns")
    search.add_argument("--prior-threshold", type=int, metavar="N",
                        help="visits a node needs before the net gives its children their "
                             "prior (the root: at once); default: "
                             f"{SOFTSEG_PRIOR_THRESHOLD} for a soft-segmentation net, "
                             f"{DEFAULT_NET_PRIOR_THRESHOLD} for an ISN (ten times cheaper a call)")
    search.add_argument("--value-weight", type=number(minimum=0, maximum=1, what="value weight"),
                        default=DEFAULT_VALUE_WEIGHT,
                        help="share of the net's value in each simulation's result (default: "
                             "%(default)g: playouts only)")
    search.add_argument("--expand-threshold", type=int, default=DEFAULT_EXPAND_THRESHOLD,
                        metavar="N", help="visits before a leaf gets children; default: "
                                          "%(default)d")
    search.add_argument("--max-nodes", type=int, default=DEFAULT_MAX_NODES, metavar="N",
                        help="node budget per tree; the search stops growing there "
                             "(default: %(default)d)")
    parser.add_argument("--override-version", metavar="VERSION", type=version_text,
                        help="answer the GTP `version` command with VERSION instead of kosumi's "
                             "own, as KataGo's -override-version does (Lizzie 0.7.4 reads the "
                             "version as Leela Zero's and needs 0.15 or later: use 0.17)")
    parser.add_argument("--log-level", default="warning",
                        choices=("debug", "info", "warning", "error"),
                        help="log detail (default: %(default)s)")
    parser.add_argument("--log-file", metavar="PATH",
                        help="write the log there instead of to stderr")
    parser.add_argument("--version", action="version", version=f"kosumi {__version__}")
    return parser


def version_text(text):
    """A version for GTP `version`: one line of printable text."""
    if not text.strip() or any(ch < " " or ch == "\x7f" for ch in text):
        raise argparse.ArgumentTypeError(f"not a printable version: {text!r}")
    return text.strip()


def make_evaluator(args):
    """The evaluator the options ask for. Raises OSError/ValueError with a message that names
    the weight file when it cannot be loaded."""
    if args.evaluator == "uniform":
        from engine.nets.evaluator import UniformEvaluator
        return UniformEvaluator()
    from engine.nets.evaluator import load_evaluator
    from engine.nets.weights import DEFAULT_WEIGHTS
    from engine.rules.game import SYMMETRIES
    if args.search == "1ply":
        evaluator = load_evaluator(args.weights or DEFAULT_WEIGHTS)
        symmetries = args.symmetries or (SYMMETRIES if evaluator.tells_directions_apart else 1)
        if symmetries > 1:
            from engine.nets.evaluator import SymmetricEvaluator
            evaluator = SymmetricEvaluator(evaluator, symmetries)
        return evaluator
    from engine.play.search_player import load_prior_evaluator
    return load_prior_evaluator(args.weights)


def load_predictor(args):
    """The policy net the options name (a MovePredictor), the shipped one by default when it is
    there, or None. Raises WeightFileError naming a named file that cannot be used."""
    from engine.nets.predictor import MovePredictor
    from engine.nets.weights import DEFAULT_POLICY_WEIGHTS
    if args.policy == "none":
        return None
    if args.policy is None and not DEFAULT_POLICY_WEIGHTS.exists():
        return None
    return MovePredictor.load(args.policy or DEFAULT_POLICY_WEIGHTS, args.policy_symmetries)


def resolve_player(args):
    """--player 1ply/mcts is --search's choice; the options after it read args.search."""
    if args.player in ("1ply", "mcts"):
        args.search = args.player
    return args


def build_engine(args):
    from engine.gtp.commands import KosumiEngine
    from engine.play.player import Player
    from engine.play.search_player import load_prior_evaluator
    args = resolve_player(args)
    evaluator = make_evaluator(args)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    log.info("seed %d", seed)
    resign_threshold = None if args.no_resign else args.resign_threshold
    one_ply = Player(evaluator, beta=args.beta, seed=seed, resign_threshold=resign_threshold,
                     capture_all_dead=args.capture_all_dead)
    predictor = load_predictor(args) if args.search == "mcts" and args.policy_prior != "off" \
        or args.player == "policy" else None
    if args.player == "policy":
        from engine.play.policy_player import PolicyPlayer
        if predictor is None:
            raise ValueError("--player policy needs a policy network: give one with --policy PATH "
                             "(kosumi-train policy trains one)")
        player = PolicyPlayer(predictor, evaluator, one_ply, temperature=args.policy_temperature,
                              seed=seed, resign_threshold=resign_threshold,
                              capture_all_dead=args.capture_all_dead)
        engine = KosumiEngine(evaluator, player, komi=args.komi, rules=args.rules, size=args.size,
                              one_ply=one_ply)
    elif args.search == "1ply":
        # kosumi-search's tree takes the prior --search mcts would: the named or the default net
        # alone (not averaged over the symmetries: eight times the cost a node)
        search_evaluator = (lambda: load_prior_evaluator(args.weights)) \
            if args.evaluator == "net" else None
        engine = KosumiEngine(evaluator, one_ply, komi=args.komi, rules=args.rules,
                              size=args.size, search_evaluator=search_evaluator)
    else:
        engine = KosumiEngine(evaluator, make_search_player(args, evaluator, seed, resign_threshold,
                                                            predictor),
                              komi=args.komi, rules=args.rules, size=args.size, one_ply=one_ply)
    if args.override_version is not None:
        engine.engine_version = args.override_version
    return engine


def make_search_player(args, evaluator, seed, resign_threshold, predictor=None):
    from engine.play.search_player import DEFAULT_PLAYOUTS, SearchPlayer
    playouts = args.playouts
    if playouts is None and args.time_per_move is None:
        playouts = DEFAULT_PLAYOUTS
    return SearchPlayer(evaluator, playouts=playouts, seconds_per_move=args.time_per_move,
                        threads=args.threads, seed=seed, resign_threshold=resign_threshold,
                        capture_all_dead=args.capture_all_dead,
                        use_prior={"auto": None, "net": True, "none": False}[args.search_prior],
                        predictor=predictor,
                        use_policy={"auto": None, "on": True, "off": False}[args.policy_prior],
                        policy_visits=args.policy_visits,
                        prior_visits=args.prior_visits,
                        prior_threshold=args.prior_threshold,
                        knowledge_visits=args.knowledge_prior, value_weight=args.value_weight,
                        expand_threshold=args.expand_threshold, max_nodes=args.max_nodes,
                        playout_tactics=args.playout_tactics,
                        last_good_reply=args.last_good_reply)


def main(argv=None):
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == ["analysis"]:   # `kosumi analysis`: KataGo's JSON analysis protocol
        from engine.gtp.analysis_main import main as analysis_main
        return analysis_main(arguments[1:])
    parser = build_parser()
    args = resolve_player(parser.parse_args(argv))
    if (args.symmetries or 1) > 1 and args.search != "1ply":
        parser.error("--symmetries is for the 1-ply player (--search 1ply)")
    from engine.gtp.protocol import configure_logging
    try:
        configure_logging(args.log_level, args.log_file)
    except OSError as error:
        print(f"kosumi: cannot open the log file: {error}", file=sys.stderr)
        sys.exit(EXIT_BAD_SETUP)
    try:
        engine = build_engine(args)
    except (OSError, ValueError) as error:
        hint = "" if args.weights or args.evaluator != "net" else \
            " (train a net with kosumi-train, or give one with --weights PATH)"
        print(f"kosumi: {error}{hint}", file=sys.stderr)
        sys.exit(EXIT_BAD_SETUP)
    from engine.gtp.protocol import run_stdio
    try:
        status = run_stdio(engine)
    except BrokenPipeError:   # the controller closed our stdout: nobody is left to answer
        status = 0
    except KeyboardInterrupt:
        status = 130
    logging.shutdown()
    sys.exit(status)


if __name__ == "__main__":
    main()
