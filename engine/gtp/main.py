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


def build_parser():
    """The options: the nets, the game, then one per field of the players' settings
    (engine/play/settings.py, through options.py), then the log."""
    from engine.gtp.options import add_logging_options, add_net_options, add_settings_options
    from engine.play.settings import PlayerSettings, SearchSettings
    parser = argparse.ArgumentParser(
        prog="kosumi",
        description="kosumi, a Go engine speaking GTP version 2 on stdin/stdout. Every setting "
                    "of the players and the search can also be listed and changed while it "
                    "runs: GTP kosumi-list-params, kosumi-set-param NAME VALUE.",
        epilog="Example: gogui-twogtp -black 'python gtp_server.py' -white 'gnugo --mode gtp' "
               "-size 9 -komi 7 -games 20 -alternate -auto")
    add_net_options(parser, "network weight file (.npz); default: the shipped judging nets "
                            "by board size, weights/judge_9x9.npz (boards up to 9x9) and "
                            "weights/judge_19x19_run.npz (larger boards)")
    game = parser.add_argument_group("the game", "until a controller sets them")
    game.add_argument("--komi", type=number(what="komi"), default=7.0,
                      help="komi until a controller sets one (default: %(default)g)")
    game.add_argument("--size", type=int, default=19, choices=range(2, 26), metavar="N",
                      help="board size until a controller sets one (default: %(default)d)")
    game.add_argument("--rules", choices=("chinese", "japanese"), default="chinese",
                      help="scoring: chinese = area, japanese = territory (default: chinese)")
    game.add_argument("--override-version", metavar="VERSION", type=version_text,
                      help="answer the GTP `version` command with VERSION instead of kosumi's "
                           "own, as KataGo's -override-version does (Lizzie 0.7.4 reads the "
                           "version as Leela Zero's and needs 0.15 or later: use 0.17)")
    players = parser.add_argument_group("players", "every player's settings (PlayerSettings)")
    players.add_argument("--player", choices=("1ply", "mcts", "policy"),
                         help="move choice: 1ply and mcts as --search; policy = the policy "
                              "network's move, no search (fast on every board size); default: "
                              "--search's choice")
    search = parser.add_argument_group("search", "Monte-Carlo tree search (--search mcts; "
                                                 "kosumi-search in every mode; SearchSettings)")
    search.add_argument("--search", choices=("1ply", "mcts"), default="1ply",
                        help="move choice: 1ply = Boltzmann over the net's successor values "
                             "(the design's default); mcts = tree search (stronger): PUCT over "
                             "a judging net's moves, chance to win and lead, or MC-RAVE with "
                             "pattern playouts over any other net (--tree)")
    add_settings_options(parser, (PlayerSettings, SearchSettings),
                         groups={PlayerSettings: players, SearchSettings: search})
    add_logging_options(parser)
    parser.add_argument("--version", action="version", version=f"kosumi {__version__}")
    return parser


def version_text(text):
    """A version for GTP `version`: one line of printable text."""
    if not text.strip() or any(ch < " " or ch == "\x7f" for ch in text):
        raise argparse.ArgumentTypeError(f"not a printable version: {text!r}")
    return text.strip()


def make_evaluator(args, player_settings):
    """The evaluator the options ask for. Raises OSError/ValueError with a message that names
    the weight file when it cannot be loaded."""
    if args.evaluator == "uniform":
        from engine.nets.evaluator import UniformEvaluator
        return UniformEvaluator()
    from engine.nets.evaluator import JudgeEvaluator, load_evaluator
    from engine.nets.weights import DEFAULT_JUDGES
    from engine.rules.game import SYMMETRIES
    if args.search == "1ply":
        precision, value = player_settings.policy_precision, player_settings.judge_value
        evaluator = load_evaluator(args.weights, precision, value) if args.weights else \
            JudgeEvaluator.load_by_size(DEFAULT_JUDGES, precision, value=value)
        symmetries = player_settings.symmetries or \
            (SYMMETRIES if evaluator.tells_directions_apart else 1)
        if symmetries > 1:
            from engine.nets.evaluator import SymmetricEvaluator
            evaluator = SymmetricEvaluator(evaluator, symmetries)
        return evaluator
    from engine.play.search_player import load_prior_evaluator
    return load_prior_evaluator(args.weights, player_settings.policy_precision)


def resolve_player(args):
    """--player 1ply/mcts is --search's choice; the options after it read args.search."""
    if args.player in ("1ply", "mcts"):
        args.search = args.player
    return args


def engine_settings(args):
    """The PlayerSettings and SearchSettings the options give, with the seed drawn (and logged)
    when none was given, so that every player, and kosumi-get-param seed, has the same."""
    from engine.gtp.options import settings_from_options
    from engine.play.settings import PlayerSettings, SearchSettings
    player_settings = settings_from_options(PlayerSettings, args)
    if player_settings.seed is None:
        player_settings.seed = int.from_bytes(os.urandom(4), "little")
    log.info("seed %d", player_settings.seed)
    return player_settings, settings_from_options(SearchSettings, args)


def build_engine(args):
    """The KosumiEngine the options describe. Every player holds the same two settings objects,
    which the GTP parameter commands change in place."""
    from engine.gtp.commands import KosumiEngine
    from engine.gtp.options import load_predictor
    from engine.gtp.params import ParameterTable
    from engine.gtp.protocol import GtpError
    from engine.nets.weights import DEFAULT_POLICY_WEIGHTS
    from engine.play.player import Player
    from engine.nets.evaluator import JudgeMoves
    from engine.play.search_player import SearchPlayer, load_prior_evaluator, uses_puct
    from engine.rules.game import SYMMETRIES
    args = resolve_player(args)
    player_settings, search_settings = engine_settings(args)
    evaluator = make_evaluator(args, player_settings)
    one_ply = Player(evaluator, player_settings)
    searching = args.search == "mcts" and args.player != "policy"
    prior_symmetries, precision = player_settings.policy_symmetries or 1, player_settings.policy_precision
    # the PUCT search's moves are the judging net's own: its move head is the engine's policy
    # (the policy views) unless a policy net is named
    puct = searching and uses_puct(search_settings, evaluator)
    if args.player == "policy":
        predictor = load_predictor(args.policy, player_settings.policy_symmetries or SYMMETRIES,
                                   DEFAULT_POLICY_WEIGHTS, precision)
    elif puct:
        predictor = JudgeMoves(evaluator) if args.policy is None else \
            load_predictor(args.policy, prior_symmetries, precision=precision)
    elif searching and search_settings.policy_prior != "off":
        predictor = load_predictor(args.policy, prior_symmetries, precision=precision)
    else:
        predictor = None

    def analysis_searcher():
        # kosumi-search beside a player that does not search: the tree --search mcts would
        # build, over the named net or the default prior alone (not averaged over the
        # symmetries: eight times the cost a node), with the same settings
        try:
            prior = load_prior_evaluator(args.weights, precision) if args.evaluator == "net" \
                else evaluator
            policy = None
            if uses_puct(search_settings, prior) and args.policy is None:
                policy = JudgeMoves(prior)
            elif search_settings.policy_prior != "off":
                policy = predictor.twin(prior_symmetries) \
                    if predictor is not None and args.policy is not None \
                    else load_predictor(args.policy, prior_symmetries, precision=precision)
        except (OSError, ValueError) as error:
            raise GtpError(f"cannot load the search's nets: {error}") from None
        return SearchPlayer(prior, search_settings, player_settings, policy)

    policy = None       # kosumi-policy shows kosumi-search's prior unless the player has its own
    if args.player == "policy":
        from engine.play.policy_player import PolicyPlayer
        if predictor is None:
            raise ValueError("--player policy needs a policy network: give one with --policy PATH "
                             "(kosumi-train policy trains one)")
        player, searcher = PolicyPlayer(predictor, evaluator, one_ply, player_settings), \
            analysis_searcher
        policy = lambda: predictor  # noqa: E731 (the net the player follows)
    elif searching:
        player = SearchPlayer(evaluator, search_settings, player_settings, predictor)
        searcher = lambda: player   # noqa: E731 (the playing search is kosumi-search's)
    else:
        player, searcher = one_ply, analysis_searcher
    engine = KosumiEngine(evaluator, player, komi=args.komi, rules=args.rules, size=args.size,
                          one_ply=one_ply, searcher=searcher,
                          parameters=ParameterTable(player_settings, search_settings, searching),
                          policy=policy)
    if args.override_version is not None:
        engine.engine_version = args.override_version
    return engine


def main(argv=None):
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == ["analysis"]:   # `kosumi analysis`: KataGo's JSON analysis protocol
        from engine.gtp.analysis_main import main as analysis_main
        return analysis_main(arguments[1:])
    parser = build_parser()
    args = resolve_player(parser.parse_args(argv))
    if (args.symmetries or 1) > 1 and args.search != "1ply":
        parser.error("--symmetries is for the 1-ply player (--search 1ply)")
    from engine.gtp.options import EXIT_BAD_SETUP, start_logging
    start_logging(args, "kosumi")
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
