"""Search speed: playouts per second of the playout policy, and simulations per second of the tree
search on 9x9 and 19x19, with one and two threads, with and without the net's prior.

    python benchmarks/search_speed.py                       # every row, a few seconds each
    python benchmarks/search_speed.py --rows playouts       # only the policy's playouts
    python benchmarks/search_speed.py --weights weights/isn14_9x9.npz   # another prior net
    python benchmarks/search_speed.py --playout-tactics mogo,fuego      # both policies' rows
    python benchmarks/search_speed.py --prior-thresholds 8,16,32        # when nodes ask the net
    python benchmarks/search_speed.py --last-good-reply off,on          # without and with replies
    python benchmarks/search_speed.py --policy-prior off,fp32,bf16      # the policy net's prior too

Rows are measured one after another in the same process, so their ratios are comparable; run it
on an otherwise idle machine (docs/notebook/search.md says what else was running). Each search starts from
the empty board and from a middle-game position (40 random policy moves), without early stops.
"""
import argparse
import itertools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from engine.gtp.options import load_predictor  # noqa: E402
from engine.nets.weights import DEFAULT_WEIGHTS  # noqa: E402
from engine.play.search_player import SearchPlayer, load_prior_evaluator  # noqa: E402
from engine.rules.board import BLACK, Board  # noqa: E402
from engine.rules.game import GameState, Rules  # noqa: E402
from engine.search import playout  # noqa: E402


def middle_game(size, moves=40, seed=3):
    """A game of `moves` policy moves (MoGo's tactics; legal under superko), as a GameState:
    the same position whatever --playout-tactics asks for."""
    game = GameState(size, Rules(komi=7.0))
    for i in range(moves):
        move = playout.policy_move(game.board, game.to_move, seed=seed * 1000 + i)
        if move < 0 or not game.is_legal(move):
            break
        game.play(move)
    return game


def playout_rows(sizes, count, tactics_list):
    policies = [("light (uniform, no eye fill)", False, False, "mogo")]
    policies += [(f"{name} tactics + 3x3 patterns", True, True, name) for name in tactics_list]
    for size in sizes:
        board = Board(size)
        for name, patterns, tactics, playout_tactics in policies:
            seconds, moves = playout.playouts_per_second(board, BLACK, count, patterns=patterns,
                                                         tactics=tactics,
                                                         playout_tactics=playout_tactics)
            print(f"| {size}x{size} | playouts, {name} | {count / seconds:,.0f} /s | "
                  f"{moves:.0f} moves each |")


def search_rows(sizes, evaluator, seconds, threads_list, knowledge_visits, tactics_list,
                prior_thresholds, replies_list, policies):
    # the prior's threshold changes nothing without the prior: one no-prior row per setting
    priors = [(False, prior_thresholds[0])] + [(True, t) for t in prior_thresholds]
    # one net a precision; each search takes a twin, with a cache of its own
    predictors = {policy: load_predictor(None, precision=policy) for policy in policies if policy != "off"}
    for size in sizes:
        for start, game in (("empty board", GameState(size, Rules(komi=7.0))),
                            ("move 40", middle_game(size))):
            for (use_prior, threshold), threads, playout_tactics, replies, policy in itertools.product(
                    priors, threads_list, tactics_list, replies_list, policies):
                predictor = predictors[policy].twin() if policy in predictors else None
                player = SearchPlayer(evaluator, predictor=predictor, playouts=None, time_per_move=seconds,
                                      threads=threads, seed=1,
                                      search_prior="net" if use_prior else "none",
                                      prior_threshold=threshold,
                                      reuse_tree=False, max_nodes=4_000_000,
                                      knowledge_prior=knowledge_visits,
                                      playout_tactics=playout_tactics,
                                      last_good_reply=replies)
                started = time.perf_counter()
                analysis = player.search(game, game.to_move)
                elapsed = time.perf_counter() - started
                asked_at = player.tree_options["net_prior_threshold"]
                prior = f"net prior at {asked_at} visits" if use_prior else "no prior"
                if knowledge_visits:
                    prior += f" + knowledge {knowledge_visits:g}"
                prior += f", {playout_tactics} playouts"
                if replies:
                    prior += " + last good replies"
                if predictor is not None:
                    prior += f", the policy prior in {policy}"
                print(f"| {size}x{size} | search, {start}, {prior}, {threads} thread"
                      f"{'s' if threads > 1 else ''} | {analysis.simulations / elapsed:,.0f} "
                      f"sims/s | {analysis.simulations} sims in {elapsed:.2f} s |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", choices=("all", "playouts", "search"), default="all")
    parser.add_argument("--sizes", default="9,19")
    parser.add_argument("--playouts", type=int, default=20000, help="playouts per policy row")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per search row")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--weights", default=str(DEFAULT_WEIGHTS),
                        help="the prior's weight file (default: the RAVE tree's, "
                             "weights/softseg_9x9.npz; the PUCT search's speed is "
                             "puct_speed.py's)")
    parser.add_argument("--knowledge-prior", type=float, default=0.0,
                        help="games of the rules of thumb in every node's prior (default: 0)")
    parser.add_argument("--playout-tactics", default="mogo",
                        help="the playout tactics to time, comma-separated, of "
                             f"{','.join(playout.PLAYOUT_TACTICS)} (default: %(default)s)")
    parser.add_argument("--prior-thresholds", default="default",
                        help="the visits a node needs before it asks the net, comma-separated; "
                             "'default': the search's for that net (default: %(default)s)")
    parser.add_argument("--policy-prior", default="off",
                        help="the shipped policy prior's net, comma-separated, of off,fp32,bf16 "
                             "(its products' precision; default: %(default)s)")
    parser.add_argument("--last-good-reply", default="off",
                        help="the playouts' last good replies, comma-separated, of off,on "
                             "(default: %(default)s)")
    args = parser.parse_args()
    replies_names = args.last_good_reply.split(",")
    if set(replies_names) - {"off", "on"}:
        parser.error(f"--last-good-reply takes off, on or off,on, not {args.last_good_reply}")
    policies = args.policy_prior.split(",")
    if set(policies) - {"off", "fp32", "bf16"}:
        parser.error(f"--policy-prior takes off, fp32 and bf16, comma-separated, not {args.policy_prior}")
    tactics_list = args.playout_tactics.split(",")
    unknown = set(tactics_list) - set(playout.PLAYOUT_TACTICS)
    if unknown:
        parser.error(f"unknown playout tactics: {', '.join(sorted(unknown))}")
    sizes = [int(s) for s in args.sizes.split(",")]
    print("| board | what | speed | notes |\n|---|---|---|---|")
    if args.rows in ("all", "playouts"):
        playout_rows(sizes, args.playouts, tactics_list)
    if args.rows in ("all", "search"):
        evaluator = load_prior_evaluator(args.weights)
        search_rows(sizes, evaluator, args.seconds, [int(t) for t in args.threads.split(",")],
                    args.knowledge_prior, tactics_list,
                    [None if t == "default" else int(t) for t in args.prior_thresholds.split(",")],
                    [name == "on" for name in replies_names], policies)


if __name__ == "__main__":
    main()
