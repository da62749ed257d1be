"""The PUCT search over a judging net (engine/search/puct.pyx): the selection rule against the
formula worked by hand from the nodes, batches and virtual losses, an evaluator's failure, the
count at two passes, the kept subtree, the root filter, the budget; then the search player and
the GTP engine over a small judging net (PUCT is the search over a judging net by default)."""
import io
import math

import numpy as np
import pytest

from engine.gtp.main import build_engine, build_parser
from engine.gtp.protocol import GtpLoop
from engine.nets.evaluator import JudgeEvaluator, JudgeMoves, UniformEvaluator
from engine.nets.policy import save_policy
from engine.play.search_player import SearchPlayer, uses_puct
from engine.play.settings import SearchSettings
from engine.rules.board import BLACK, PASS, WHITE, Board
from engine.rules.coords import board_points, format_vertex, parse_vertex
from engine.rules.game import GameState, Rules
from engine.search.puct import PuctSearch, default_score_scale
from tests.unit.nets.test_judge_evaluator import ask, session
from tests.unit.nets.test_judge_net import trained_like


class Judge:
    """An evaluation function from tables: wins[(move,)] is the chance of the side to move after
    the first move, the same throughout its subtree (default 0.5); priors[line] the priors at a
    line (default uniform). Counts its calls and the lines it judged."""

    def __init__(self, num_locs, wins=None, priors=None, score=0.0):
        self.num_locs, self.wins, self.priors, self.score = num_locs, wins or {}, priors or {}, score
        self.calls, self.lines = 0, []

    def __call__(self, lines, colours):
        self.calls += 1
        self.lines.extend(tuple(line) for line in lines)
        priors = np.ones((len(lines), self.num_locs + 1))
        for i, line in enumerate(lines):
            for move, p in self.priors.get(tuple(line), {}).items():
                priors[i, self.num_locs if move == PASS else move] = p
        win = np.array([self.wins.get(tuple(line[:1]), 0.5) if len(line) % 2 else
                        1.0 - self.wins.get(tuple(line[:1]), 0.5) for line in lines])
        return priors, win, np.full(len(lines), self.score), np.zeros((len(lines), self.num_locs))


def search(size=5, komi=0.5, board=None, colour=BLACK, **options):
    tree = PuctSearch(size, komi, **options)
    tree.set_root(board or Board(size), colour)
    return tree


def children(tree, index=0):
    node = tree.node(index)
    return [tree.node(node["first_child"] + i) for i in range(node["num_children"])]


def by_hand(tree, index, exploration, exploration_log, fpu_reduction, **others):
    """The child of node `index` that KataGo's PUCT picks, worked out from the nodes in Python."""
    parent, kids = tree.node(index), children(tree, index)
    total = sum(c["visits"] for c in kids)
    visited_prior = sum(c["prior"] for c in kids if c["visits"])
    parent_q = 1.0 - parent["utility_sum"] / parent["visits"]
    fpu = parent_q - fpu_reduction * math.sqrt(visited_prior)
    scale = (exploration + exploration_log * math.log((total + 500) / 500)) * math.sqrt(total + 0.01)
    values = [(c["utility_sum"] / c["visits"] if c["visits"] else fpu) +
              scale * c["prior"] / (1 + c["visits"]) for c in kids]
    return parent["first_child"] + int(np.argmax(values))


# --- the tree -------------------------------------------------------------------------------------

def test_each_visit_goes_to_the_child_the_puct_formula_picks():
    board = Board(5)
    a, b, c = (parse_vertex(v, 5) for v in ("C3", "B2", "D4"))
    judge = Judge(board.num_locs, wins={(a,): 0.8, (b,): 0.3, (c,): 0.55},
                  priors={(): {a: 30.0, b: 10.0, c: 5.0}})
    options = dict(exploration=0.5, exploration_log=0.225, fpu_reduction=0.1, score_utility=0.0)
    tree = search(**options)
    tree.set_evaluation_function(judge)
    assert tree.run(1) == 1 and tree.root_visits == 1        # the root's own evaluation
    for _ in range(30):
        expected = by_hand(tree, 0, **options)
        before = {i: tree.node(i)["visits"] for i in range(1, 1 + len(children(tree)))}
        tree.run(1, stop_early=False)
        after = {i: tree.node(i)["visits"] for i in before}
        changed = [i for i in before if after[i] != before[i]]
        assert changed == [expected]
    tree.check_invariants()
    visits = {child["move"]: child["visits"] for child in tree.root_children()}
    # b leaves the opponent 30%: the best move gets the most visits, the likeliest is tried first
    assert max(visits, key=visits.get) == b
    assert judge.lines[1] == (a,)


def test_priors_are_the_nets_over_the_legal_moves_and_pass():
    board = Board.from_ascii("""
        . X . . .
        X X . . .
        . . . . .
        . . . O .
        . . . . .""")
    judge = Judge(board.num_locs)
    tree = search(board=board, colour=BLACK)
    tree.set_evaluation_function(judge)
    tree.run(1)
    moves = {child["move"] for child in tree.root_children()}
    assert parse_vertex("A5", 5) not in moves           # Black's own eye
    assert parse_vertex("D2", 5) not in moves           # a stone
    assert PASS in moves and len(moves) == 25 - 4 - 1 + 1
    assert all(child["prior"] == pytest.approx(1 / len(moves)) for child in tree.root_children())


def test_a_batch_holds_distinct_leaves_and_leaves_no_virtual_loss():
    judge = Judge(Board(5).num_locs)
    tree = search(batch_size=8)
    tree.set_evaluation_function(judge)
    assert tree.run(200, stop_early=False) == 200
    tree.check_invariants()                             # no virtual loss is left anywhere
    assert tree.root_visits == 200
    assert judge.calls < 200 / 2                        # most calls judged several leaves
    assert len(set(judge.lines)) == len(judge.lines)   # never the same leaf twice


def test_one_at_a_time_and_in_batches_the_search_finds_the_same_best_move():
    board = Board(5)
    good = parse_vertex("B4", 5)
    wins = {(move,): 0.35 for move in board_points(5)}
    wins[(good,)] = 0.1
    best = []
    for batch_size in (1, 4):
        tree = search(batch_size=batch_size)
        tree.set_evaluation_function(Judge(board.num_locs, wins=wins))
        tree.run(300, stop_early=False)
        tree.check_invariants()
        best.append(tree.root_children()[0]["move"])
    assert best == [good, good]


def test_a_failing_evaluator_leaves_the_tree_as_it_was():
    judge = Judge(Board(5).num_locs)
    tree = search(batch_size=4)
    tree.set_evaluation_function(judge)
    tree.run(20, stop_early=False)
    before = [tree.node(i) for i in range(tree.num_nodes)]

    def failing(lines, colours):
        raise RuntimeError("net unavailable")

    tree.set_evaluation_function(failing)
    with pytest.raises(RuntimeError, match="net unavailable"):
        tree.run(10)
    assert [tree.node(i) for i in range(tree.num_nodes)] == before
    tree.set_evaluation_function(lambda lines, colours: (np.ones((1, 3)), [0.5], [0.0], None))
    with pytest.raises(ValueError, match="does not fit"):
        tree.run(10)
    assert [tree.node(i) for i in range(tree.num_nodes)] == before
    tree.set_evaluation_function(judge)
    tree.run(10, stop_early=False)
    tree.check_invariants()


def test_two_passes_end_the_game_and_the_count_decides():
    # Black owns the board but for White's stone, which Black can capture: passing twice now
    # counts it (Tromp-Taylor: Black's 20 stones and two eyes, White's stone, two points
    # neutral), a loss by 1.5 at komi 22.5; after the capture Black has all 25 points
    board = Board.from_ascii("""
        X X X X X
        X . X . X
        X X X X X
        X . O . X
        X X X X X""")
    tree = search(board=board, colour=BLACK, komi=22.5)
    tree.set_evaluation_function(Judge(board.num_locs))
    tree.run(300, stop_early=False)
    tree.check_invariants()
    black_pass = next(c for c in tree.root_children() if c["move"] == PASS)
    both = next(c for c in children(tree, black_pass["index"]) if c["move"] == PASS)
    assert both["state"] == 3 and both["black_score"] == pytest.approx(-1.5)   # TERMINAL
    assert both["black_win"] == 0.0 and both["first_child"] == -1
    assert tree.root_children()[0]["move"] != PASS and black_pass["winrate"] < 0.5


def test_playouts_mixed_into_the_values_count_what_the_net_does_not_see():
    # the net says 50% everywhere; Black's wall owns most of the board, and the playouts count it
    board = Board.from_ascii("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        X X X X X X X
        O O O O O O O
        . . . . . . .""")
    winrates = {}
    for weight in (0.0, 0.5, 1.0):
        tree = search(size=7, board=board, colour=WHITE, komi=0.5, playout_weight=weight, seed=4)
        tree.set_evaluation_function(Judge(board.num_locs))
        tree.run(200, stop_early=False)
        tree.check_invariants()
        winrates[weight] = tree.root_winrate          # White's
    assert winrates[0.0] == pytest.approx(0.5)
    assert winrates[1.0] < winrates[0.5] < 0.45 and winrates[1.0] < 0.4, winrates
    repeat = search(size=7, board=board, colour=WHITE, komi=0.5, playout_weight=1.0, seed=4)
    repeat.set_evaluation_function(Judge(board.num_locs))
    repeat.run(200, stop_early=False)
    assert repeat.root_winrate == winrates[1.0]        # the seed decides the playouts


def test_the_kept_subtree_keeps_its_visits():
    board = Board(5)
    tree = search()
    tree.set_evaluation_function(Judge(board.num_locs))
    tree.run(300, stop_early=False)
    first = tree.root_children()[0]
    kept = tree.node(first["index"])
    after = board.copy()
    after.play(first["move"], BLACK)
    assert tree.advance([first["move"]], after)
    assert tree.root_visits == kept["visits"] and tree.root_colour == WHITE
    assert tree.node(0)["num_children"] == kept["num_children"]
    tree.check_invariants()
    tree.run(50, stop_early=False)
    assert tree.root_visits == kept["visits"] + 50
    fresh = search()
    fresh.set_evaluation_function(Judge(board.num_locs))
    fresh.run(1)                                              # the root's children, no deeper
    a1, e5 = parse_vertex("A1", 5), parse_vertex("E5", 5)
    elsewhere = board.copy()
    elsewhere.play(a1, BLACK)
    elsewhere.play(e5, WHITE)
    assert not fresh.advance([a1, e5], elsewhere)             # a line the tree never held
    assert fresh.root_visits == 0 and fresh.num_nodes == 1 and fresh.root_colour == BLACK


def test_the_root_filter_keeps_the_search_to_the_permitted_moves():
    board = Board(5)
    allowed = [parse_vertex("A1", 5), parse_vertex("E5", 5)]
    flags = np.zeros(board.num_locs + 1, np.uint8)
    flags[allowed] = 1
    tree = search()
    tree.set_evaluation_function(Judge(board.num_locs))
    tree.set_root_filter(flags)
    tree.run(60, stop_early=False)
    visited = {c["move"] for c in tree.root_children() if c["visits"]}
    assert visited == set(allowed)


def test_the_search_stops_when_the_leader_cannot_be_caught_and_is_deterministic():
    board = Board(5)
    wins = {(move,): 0.9 for move in board_points(5)}
    wins[(parse_vertex("C3", 5),)] = 0.05
    runs = []
    for _ in range(2):
        tree = search()
        tree.set_evaluation_function(Judge(board.num_locs, wins=wins))
        done = tree.run(100_000, max_seconds=30)
        runs.append((done, [(c["move"], c["visits"]) for c in tree.root_children()]))
    assert runs[0] == runs[1]
    assert runs[0][0] < 100_000


def test_parameters_out_of_range_are_refused():
    for options in (dict(batch_size=0), dict(batch_size=1000), dict(score_utility=1.5),
                    dict(exploration=-1), dict(score_scale=0), dict(max_nodes=1),
                    dict(playout_weight=1.5)):
        with pytest.raises(ValueError):
            PuctSearch(9, **options)
    assert PuctSearch(19).score_scale == default_score_scale(19) == 9.5
    with pytest.raises(RuntimeError, match="evaluation function"):
        PuctSearch(5).run(1)


# --- the player and the engine over a judging net ----------------------------------------------

@pytest.fixture(scope="module")
def judge_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("puct") / "judge.npz"
    save_policy(path, trained_like(), 9, 10, 1000)
    return path


def test_puct_is_the_search_over_a_judging_net_and_refused_over_others(judge_file):
    judging = JudgeEvaluator.load(judge_file)
    assert uses_puct(SearchSettings(), judging)
    assert not uses_puct(SearchSettings(tree="rave"), judging)
    assert not uses_puct(SearchSettings(), UniformEvaluator())
    with pytest.raises(ValueError, match="judging net"):
        uses_puct(SearchSettings(tree="puct"), UniformEvaluator())


@pytest.mark.parametrize("threads, batch", [(1, 1), (1, 4), (2, 2)])
def test_the_player_searches_with_the_nets_numbers(judge_file, threads, batch):
    evaluator = JudgeEvaluator.load(judge_file)
    player = SearchPlayer(evaluator, playouts=64, threads=threads, puct_batch=batch, seed=3)
    state = GameState(9, Rules(komi=6.5))
    for vertex in ("E5", "C3"):
        state.play(parse_vertex(vertex, 9))
    analysis = player.search(state, BLACK)
    # every visit but each fresh tree's first (its root's own evaluation) went through a move
    assert analysis.total_visits == analysis.simulations - threads and analysis.simulations >= 16
    assert analysis.moves[0] in state.legal_moves() + [PASS]
    root = evaluator.evaluate(state)
    # the net's ownership, averaged over the positions judged: near the root's own
    assert np.abs(analysis.ownership - root.ownership).mean() < 0.5 and np.ptp(analysis.ownership) > 0
    assert all(prior is not None for prior in analysis.priors)
    assert 0 <= analysis.root_winrate <= 1 and not math.isnan(analysis.score_leads[0])
    decision = player.choose(state, BLACK)
    assert decision.move in state.legal_moves() + [PASS]


def test_random_symmetry_judges_the_positions_in_their_own_symmetries_reproducibly(judge_file):
    state = GameState(9, Rules(komi=6.5))
    for vertex in ("E5", "C3"):
        state.play(parse_vertex(vertex, 9))

    def searched(symmetry):
        evaluator = JudgeEvaluator.load(judge_file)
        asked = []
        judge_lines = evaluator.judge_lines
        evaluator.judge_lines = lambda *args: asked.append(args[2]) or judge_lines(*args)
        player = SearchPlayer(evaluator, playouts=48, net_symmetry=symmetry, seed=3)
        analysis = player.search(state, BLACK)
        return asked, list(zip(analysis.moves, analysis.visits, analysis.winrates))

    asked, spread = searched("random")
    assert asked and all(asked)
    assert searched("random")[1] == spread              # the same search again: the same tree
    fixed_asked, fixed = searched("fixed")
    assert not any(fixed_asked) and fixed != spread


def test_the_batch_is_one_leaf_with_one_thread_and_more_beside_other_threads(judge_file):
    from engine.play.settings import THREADED_BATCH_SIZE
    evaluator = JudgeEvaluator.load(judge_file)
    assert SearchPlayer(evaluator).puct_options["batch_size"] == 1
    two = SearchPlayer(evaluator, threads=2, playouts=32, seed=1)
    assert two.puct_options["batch_size"] == THREADED_BATCH_SIZE > 1
    assert SearchPlayer(evaluator, threads=2, puct_batch=3).puct_options["batch_size"] == 3
    state = GameState(9, Rules(komi=6.5))
    two.search(state, BLACK)
    assert all(owner.tree.batch_size == THREADED_BATCH_SIZE for owner in two._owners)
    two.settings.threads = 1                   # kosumi-set-param threads 1: new trees, one leaf
    two.search(state, BLACK)
    assert [owner.tree.batch_size for owner in two._owners] == [1]


def test_gtp_plays_and_analyses_with_the_puct_search(judge_file):
    loop = session("--weights", str(judge_file), "--search", "mcts", "--playouts", "40")
    player = loop.engine.player
    assert isinstance(player, SearchPlayer) and isinstance(player.predictor, JudgeMoves)
    for line in ("boardsize 9", "clear_board", "komi 6.5", "play b E5"):
        assert ask(loop, line)[0]
    ok, vertex = ask(loop, "genmove w")
    assert ok and parse_vertex(vertex, 9) in GameState(9).legal_moves() + [PASS]
    raw = loop.handle_line("kata-genmove_analyze b 10 ownership true\n")
    lines = raw.rstrip("\n").split("\n")
    assert lines[-1].startswith("play ")
    info = lines[1]
    assert "scoreLead" in info and "visits" in info
    shown = np.array(info.split(" ownership ")[1].split(), float)
    assert len(shown) == 81 and np.ptp(shown) > 0
    ok, message = ask(loop, "kosumi-set-param tree rave")
    assert not ok and "fixed" in message
    # the policy views show the judging net's move head, zero where Black may not play
    state = loop.engine.state
    probabilities = player.predictor.probabilities(state, BLACK)
    assert probabilities.sum() == pytest.approx(1.0)
    assert all(probabilities[loc] == 0 for loc in board_points(9) if state.board.get(loc))
    black_to_move = state.copy()
    black_to_move.to_move = BLACK
    _, logits = player.evaluator._judged(black_to_move)
    best = int(np.argmax(logits[:-1]))
    if state.board.get(board_points(9)[best]) == 0:
        assert np.argmax(probabilities) == board_points(9)[best]
    ok, shown = ask(loop, "kosumi-policy_list b")
    assert ok and shown.split()[0] == format_vertex(int(np.argmax(probabilities[:-1])), 9)


def test_analysis_answers_carry_the_judging_nets_policy(judge_file):
    import json
    from engine.gtp.analysis_main import build_parser as analysis_parser, build_server
    args = analysis_parser().parse_args(["--weights", str(judge_file), "--seed", "1"])
    evaluator = JudgeEvaluator.load(judge_file)
    output = io.BytesIO()
    server = build_server(args, output, evaluator, JudgeMoves(evaluator))
    query = {"id": "a", "moves": [["B", "E5"]], "rules": "chinese", "komi": 7, "boardXSize": 19,
             "boardYSize": 19, "maxVisits": 30, "includePolicy": True, "includeOwnership": True,
             "includeMovesOwnership": True}
    server.run(io.BytesIO((json.dumps(query) + "\n").encode()))
    lines = [json.loads(line) for line in output.getvalue().decode().strip().splitlines()]
    assert not [line for line in lines if "warning" in line or "error" in line]
    answer = lines[-1]
    # per move the net's ownership after it, on 19x19 too
    assert all(len(info["ownership"]) == 361 for info in answer["moveInfos"])
    e5 = (19 - 5) * 19 + 4                     # KataGo's order: the top row first
    assert len(answer["policy"]) == 362 and answer["policy"][e5] == -1      # E5 is taken
    assert abs(sum(p for p in answer["policy"] if p > 0) - 1) < 1e-3
    assert len(answer["ownership"]) == 361 and answer["rootInfo"]["visits"] >= 25


def test_the_engine_refuses_puct_without_a_judging_net():
    with pytest.raises(ValueError, match="judging net"):
        build_engine(build_parser().parse_args(["--evaluator", "uniform", "--search", "mcts",
                                                "--tree", "puct"]))


# --- time ----------------------------------------------------------------------------------------

def analysis_of(visits, winrates):
    from engine.play.search_player import SearchAnalysis
    visits, count = np.array(visits), len(visits)
    return SearchAnalysis(BLACK, 9, list(range(count)), visits, np.array(winrates, float),
                          np.zeros(count), [None] * count, [[m] for m in range(count)], 0.5,
                          int(visits.sum()), np.zeros(121), simulations=int(visits.sum()))


def test_a_clear_choice_stops_early_and_an_unclear_one_spends_the_budget(monkeypatch):
    from engine.play import search_player
    clear = analysis_of([80, 15, 5], [0.6, 0.5, 0.4])
    for unclear in (analysis_of([40, 35, 25], [0.6, 0.5, 0.4]),      # the visits spread
                    analysis_of([60, 35, 5], [0.5, 0.6, 0.4])):      # a rival wins more often
        assert search_player.SearchPlayer.clear_choice(clear)
        assert not search_player.SearchPlayer.clear_choice(unclear)
        for first, calls_expected in ((clear, 1), (unclear, 2)):
            player = SearchPlayer(UniformEvaluator())
            calls = []

            def search(state, colour, max_playouts=None, max_seconds=None, restriction=None):
                calls.append(max_seconds)
                return first if len(calls) == 1 else analysis_of([70, 30], [0.6, 0.5])

            monkeypatch.setattr(player, "search", search)
            analysis = player._timed_search(GameState(9), BLACK, 10.0, None)
            assert len(calls) == calls_expected
            whole = 10.0 * search_player.TIME_SAFETY
            assert calls[0] == pytest.approx(whole * search_player.PLANNED_SHARE)
            if calls_expected == 2:
                assert 0 < calls[1] <= whole        # the budget less the time spent (none here)
                assert analysis.simulations == first.simulations + 100
    # a fixed time a move is the time a move, clock or not
    player = SearchPlayer(UniformEvaluator(), time_per_move=0.5)
    calls = []
    monkeypatch.setattr(player, "search", lambda state, colour, max_playouts=None,
                        max_seconds=None, restriction=None: calls.append(max_seconds) or clear)
    player._timed_search(GameState(9), BLACK, 10.0, None)
    player._timed_search(GameState(9), BLACK, None, None)
    assert calls == [0.5, 0.5]


def test_the_puct_search_keeps_within_the_clock(judge_file):
    import time
    loop = session("--weights", str(judge_file), "--search", "mcts", "--playouts", "100000000")
    assert ask(loop, "boardsize 9")[0] and ask(loop, "time_settings 0 1 1")[0]
    for colour in "bw":
        cpu = time.process_time()
        ok, move = ask(loop, f"genmove {colour}")
        assert ok and time.process_time() - cpu < 1.0         # one second a move (Canadian)
    assert ask(loop, "time_left b 0.05 1")[0]
    cpu = time.process_time()
    assert ask(loop, "genmove b")[0] and time.process_time() - cpu < 0.2


def test_pondering_searches_the_opponents_turn_until_the_next_command(judge_file):
    import os
    import threading
    import time
    read, write = os.pipe()
    output = io.BytesIO()
    engine = build_engine(build_parser().parse_args(
        ["--seed", "5", "--no-resign", "--weights", str(judge_file), "--search", "mcts",
         "--playouts", "30", "--ponder"]))
    reader = os.fdopen(read, "rb")             # (kept: closed when collected)
    loop = GtpLoop(engine, reader, output)
    runner = threading.Thread(target=loop.run)
    runner.start()
    try:
        os.write(write, b"boardsize 9\nclear_board\ngenmove b\n")
        tree = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:           # the move, then the search on White's turn
            owners = engine.player._owners
            if owners and owners[0].tree.root_colour == WHITE and owners[0].tree.root_visits > 200:
                tree = owners[0].tree
                break
            time.sleep(0.05)
        assert tree is not None, "no pondering"
        asked = time.monotonic()
        os.write(write, b"name\n")                   # a command stops it at once
        while b"= kosumi" not in output.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert time.monotonic() - asked < 2.0
        reply = tree.root_children()[0]["move"]
        visits = tree.node(tree.root_children()[0]["index"])["visits"]
        searches = []
        search = engine.player.search
        engine.player.search = lambda *args, **options: searches.append(
            search(*args, **options)) or searches[-1]
        os.write(write, f"play w {format_vertex(reply, 9)}\ngenmove b\n".encode())
        while output.getvalue().count(b"\n\n") < 6 and time.monotonic() < deadline:
            time.sleep(0.01)
        # the search after White's reply went on from the pondered subtree (its root's own
        # evaluation aside): more visits than the 30 it had of its own
        assert searches[0].total_visits >= visits - 1 > 30
    finally:
        os.write(write, b"quit\n")
        runner.join(timeout=30)
        os.close(write)
        reader.close()
    assert not runner.is_alive()


def test_without_pondering_the_engine_waits_idle(judge_file):
    loop = session("--weights", str(judge_file), "--search", "mcts", "--playouts", "30")
    for line in ("boardsize 9", "clear_board", "genmove b"):
        assert ask(loop, line)[0]
    assert loop.engine.ponder_steps() is None


def test_the_analysis_engine_keeps_the_nets_lead_unless_told():
    from engine.gtp.analysis_main import analysis_settings, build_parser as analysis_parser
    assert SearchSettings().puct_playout_lead_weight == 0.5             # play: as measured
    plain = analysis_settings(analysis_parser().parse_args([]), 1)[0]
    assert plain.puct_playout_lead_weight == 0.0
    told = analysis_settings(analysis_parser().parse_args(["--puct-playout-lead-weight", "0.3"]), 1)[0]
    assert told.puct_playout_lead_weight == 0.3
