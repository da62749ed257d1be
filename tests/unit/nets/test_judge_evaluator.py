"""The judging net behind the Evaluator interface (engine/nets/evaluator.py: JudgeEvaluator):
its value, win and ownership against the net's own outputs, the cache, successor values in one
batch and among the policy head's candidates, the symmetric average, loading by --weights, the
search's prior, and the GTP engine playing and analysing with a judging net's file."""
import io

import numpy as np
import pytest

from engine.gtp.main import build_engine, build_parser
from engine.gtp.protocol import GtpLoop
from engine.nets.evaluator import (JUDGE_CANDIDATES, Evaluation, JudgeEvaluator, JudgeMoves,
                                   SymmetricEvaluator, UniformEvaluator, load_evaluator,
                                   position_symmetry)
from engine.nets.judge import JudgeNet, judge_planes, judgement_in_symmetries, win_as_lead
from engine.nets.policy import save_policy
from engine.nets.policy_features import features, move_permutation, transform
from engine.nets.policy_inputs import RECORD_PLANES, PositionEncoder
from engine.nets.predictor import RECENT_MOVES
from engine.nets.weights import WeightFileError, architecture_name
from engine.play.player import win_probability
from engine.play.search_player import SearchPlayer
from engine.rules.board import BLACK, PASS, WHITE
from engine.rules.coords import board_points, format_vertex, loc_of, parse_vertex
from engine.rules.game import INVERSE_SYMMETRY, SYMMETRIES, GameState, Rules, symmetric_loc
from tests.unit.nets.test_judge_net import ARCHITECTURE, trained_like


def game(size=9, vertices=("E5", "C3", "G7", "D4", "F3"), komi=6.5):
    state = GameState(size, Rules(komi=komi))
    for vertex in vertices:
        state.play(parse_vertex(vertex, size))
    return state


def ko_game():
    """Black has just taken a ko at F5: White may not retake at E5 at once."""
    state = game(9, ("D5", "F4", "E4", "F6", "E6", "G5", "A9", "E5", "F5"))
    assert state.board.get(parse_vertex("E5", 9)) == 0 and state.to_move == WHITE
    return state


def reference(net, state, colour=None):
    """The net's own judgement (im2col's pass) of state with colour to move, encoded by hand."""
    colour = state.to_move if colour is None else colour
    records = np.zeros((1, 1, RECORD_PLANES, state.size ** 2), np.uint8)
    recent = [loc for _, loc in reversed(state.history[-RECENT_MOVES:])]
    PositionEncoder().encode(state.board, colour, recent, records[0, 0])
    komi = state.rules.komi if colour == WHITE else -state.rules.komi
    return net.forward(judge_planes(features("rich", records, np.array([colour])), np.array([komi])))


class Counting:
    """A forward pass that counts its calls and the positions it judges."""

    def __init__(self, forward):
        self.forward, self.calls, self.positions = forward, 0, 0

    def __call__(self, planes):
        self.calls += 1
        self.positions += len(planes)
        return self.forward(planes)


def counted(evaluator):
    evaluator.forward = Counting(evaluator.forward)
    return evaluator.forward


@pytest.fixture(scope="module")
def net():
    return trained_like()


@pytest.fixture(scope="module")
def judge_file(net, tmp_path_factory):
    path = tmp_path_factory.mktemp("judge") / "judge.npz"
    save_policy(path, net, 9, 10, 1000)
    return path


# --- evaluate ----------------------------------------------------------------------------------

@pytest.mark.parametrize("moves", [5, 6])
def test_the_value_is_the_nets_score_for_the_side_to_move(net, moves):
    state = game(vertices=("E5", "C3", "G7", "D4", "F3", "B2")[:moves])
    evaluation = JudgeEvaluator(net).evaluate(state)
    judged = reference(net, state)
    assert isinstance(evaluation, Evaluation) and evaluation.inputs is None
    assert evaluation.value == pytest.approx(float(judged.score[0]), abs=1e-3)
    assert evaluation.win == pytest.approx(float(judged.win[0]), abs=1e-5)
    assert 0.0 < evaluation.win < 1.0
    sign = 1.0 if state.to_move == BLACK else -1.0
    for row, col in ((0, 0), (4, 4), (2, 7), (8, 3)):
        loc = loc_of(row, col, 9)
        own = float(judged.ownership[0, row, col])
        assert evaluation.outputs[loc, 0] == pytest.approx(own, abs=1e-5)
        assert evaluation.ownership[loc] == pytest.approx(sign * own, abs=1e-5)
    off_board = np.setdiff1d(np.arange(state.board.num_locs), board_points(9))
    assert not evaluation.ownership[off_board].any() and not evaluation.outputs[off_board].any()
    assert evaluation.ownership.shape == (state.board.num_locs,)
    assert evaluation.outputs.shape == (state.board.num_locs, 1)


def test_ownership_is_in_real_colours_whoever_is_to_move():
    """A net whose side to move owns every point: +1 Black's with Black to move, White's with
    White to move, on the same board."""
    net = trained_like()
    params = dict(net.params)
    params["ownership.w"] = np.zeros_like(params["ownership.w"])
    params["ownership.b"] = np.full_like(params["ownership.b"], 0.5)
    evaluator = JudgeEvaluator(net.with_params(params))
    black = game(vertices=("E5", "C3", "G7", "D4"))
    white = black.copy()
    white.play(PASS)
    assert black.to_move == BLACK and white.to_move == WHITE and black.board.hash == white.board.hash
    points = board_points(9)
    assert np.allclose(evaluator.evaluate(black).ownership[points], np.tanh(0.5))
    assert np.allclose(evaluator.evaluate(white).ownership[points], -np.tanh(0.5))
    assert np.allclose(evaluator.evaluate(white).outputs[points, 0], np.tanh(0.5))


def test_evaluations_are_remembered_by_position_and_komi(net):
    evaluator = JudgeEvaluator(net)
    forward = counted(evaluator)
    state = game()
    first = evaluator.evaluate(state)
    assert evaluator.evaluate(state.copy()) is first and forward.calls == 1
    more_komi = game(komi=8.5)
    assert evaluator.evaluate(more_komi).value != first.value and forward.calls == 2
    replayed = game(vertices=("F3", "D4", "G7", "C3", "E5"))     # the same board, other moves
    assert replayed.board.hash == state.board.hash
    evaluator.evaluate(replayed)
    assert forward.calls == 3
    assert evaluator.evaluate(state) is first and forward.calls == 3
    small = JudgeEvaluator(net, cache_size=1)
    small.evaluate(state), small.evaluate(more_komi)
    again = small.evaluate(state)
    assert again is not first and (again.value, again.win) == (first.value, first.win)
    assert np.array_equal(again.ownership, first.ownership)


def test_the_evaluation_leaves_the_state_as_it_was(net):
    state = ko_game()
    before = (str(state.board), state.board.hash, state.to_move, list(state.history))
    evaluator = JudgeEvaluator(net)
    evaluator.evaluate(state)
    evaluator.successor_values(state)
    assert (str(state.board), state.board.hash, state.to_move, list(state.history)) == before


# --- successor values --------------------------------------------------------------------------

@pytest.mark.parametrize("make_state", [game, ko_game])
def test_successor_values_are_minus_each_successors_score_in_one_pass(net, make_state):
    state = make_state()
    evaluator = JudgeEvaluator(net)
    forward = counted(evaluator)
    moves, values = evaluator.successor_values(state)
    assert moves == UniformEvaluator().successor_values(state)[0]
    assert moves[-1] == PASS and len(values) == len(moves)
    assert forward.calls == 1 and forward.positions == len(moves)
    alone = JudgeEvaluator(net)
    for move, value in zip(moves, values):
        after = state.copy()
        after.play(move)
        assert value == pytest.approx(-alone.evaluate(after).value, abs=1e-3)
        assert value == pytest.approx(-float(reference(net, after).score[0]), abs=1e-3)


def test_win_values_are_each_successors_chance_to_win_read_as_a_lead(net):
    state = game()
    open_points = 81 - len(state.history)
    moves, values = JudgeEvaluator(net, value="win").successor_values(state)
    alone = JudgeEvaluator(net)
    for move, value in zip(moves, values):
        after = state.copy()
        after.play(move)
        win = 1.0 - alone.evaluate(after).win
        assert win_probability(value, open_points) == pytest.approx(win, abs=1e-6)
    with pytest.raises(ValueError, match="win, lead"):
        JudgeEvaluator(net, value="score")


def test_move_log_probabilities_are_the_move_heads_over_the_moves_asked(net):
    state = game()
    moves = state.legal_moves()[:7] + [PASS]
    logits = reference(net, state).policy[0]
    index = [81 if move == PASS else state.board.row_col(move)[0] * 9 +
             state.board.row_col(move)[1] for move in moves]
    chosen = np.exp(logits[index] - logits.max())
    expected = np.log(chosen / chosen.sum())
    evaluator = JudgeEvaluator(net)
    assert evaluator.move_log_probabilities(state, moves) == pytest.approx(expected, abs=1e-4)
    averaged = SymmetricEvaluator(evaluator, 2).move_log_probabilities(state, moves)
    mirrored = evaluator.move_log_probabilities(
        state.transformed(1), [symmetric_loc(move, 9, 1) for move in moves])
    assert averaged == pytest.approx((expected + mirrored) / 2, abs=1e-4)
    assert UniformEvaluator().move_log_probabilities(state, moves) is None
    assert SymmetricEvaluator(UniformEvaluator(), 2).move_log_probabilities(state, moves) is None


def test_win_as_lead_inverts_the_guis_win_rate_on_every_board():
    wins = np.array([1e-4, 0.02, 0.3, 0.5, 0.6, 0.97, 1 - 1e-4])
    for open_points in (0, 3, 81, 361):
        leads = win_as_lead(wins, open_points)
        assert np.all(np.diff(leads) > 0) and leads[3] == 0.0
        assert [win_probability(lead, open_points) for lead in leads] == \
            pytest.approx(wins, abs=1e-9)
    assert np.isfinite(win_as_lead(np.array([0.0, 1.0]), 81)).all()


def test_pass_share_is_the_move_heads_pass_over_its_likeliest_move(net):
    state = game()
    logits = reference(net, state).policy[0]
    probabilities = np.exp(logits - logits.max())
    expected = probabilities[-1] / probabilities.max()
    evaluator = JudgeEvaluator(net)
    assert evaluator.pass_share(state) == pytest.approx(expected, rel=1e-4)
    assert SymmetricEvaluator(evaluator, 2).pass_share(state) == evaluator.pass_share(state)
    assert UniformEvaluator().pass_share(state) is None


def test_the_ko_retake_is_not_a_successor(net):
    state = ko_game()
    moves, _ = JudgeEvaluator(net).successor_values(state)
    assert parse_vertex("E5", 9) not in moves and parse_vertex("J1", 9) in moves


def test_candidates_judge_the_policy_heads_likeliest_moves_and_pass(net):
    state = game()
    evaluator = JudgeEvaluator(net, candidates=5)
    forward = counted(evaluator)
    moves, values = evaluator.successor_values(state)
    assert moves == state.legal_moves() + [PASS]
    assert forward.positions == 1 + 6          # the position itself, then 5 moves and pass
    everything = dict(zip(*JudgeEvaluator(net, candidates=0).successor_values(state)))
    policy = reference(net, state).policy[0]
    likeliest = sorted(moves[:-1], key=lambda m: -policy[state.board.row_col(m)[0] * 9 +
                                                          state.board.row_col(m)[1]])[:5]
    judged = set(likeliest) | {PASS}
    lowest = min(everything[move] for move in judged)
    for move, value in zip(moves, values):
        if move in judged:
            assert value == pytest.approx(everything[move], abs=1e-3)
        else:
            assert value == pytest.approx(lowest - 1.0, abs=1e-3) and value < lowest
    again = evaluator.successor_values(state)       # the position's policy is remembered
    assert forward.positions == 1 + 2 * 6 and np.array_equal(again[1], values)


def test_all_successors_up_to_9x9_the_policy_heads_candidates_above(net):
    evaluator = JudgeEvaluator(net)
    assert evaluator.candidate_count(9) == 0 and evaluator.candidate_count(7) == 0
    assert evaluator.candidate_count(13) == evaluator.candidate_count(19) == JUDGE_CANDIDATES
    assert JudgeEvaluator(net, candidates=0).candidate_count(19) == 0
    assert JudgeEvaluator(net, candidates=7).candidate_count(9) == 7
    state = game(13, ("G7", "D4"))
    forward = counted(evaluator)
    moves, values = evaluator.successor_values(state)
    assert len(moves) == 13 * 13 - 2 + 1
    assert forward.positions == 1 + JUDGE_CANDIDATES + 1
    assert len(set(values)) == JUDGE_CANDIDATES + 2       # the moves judged, and the rest
    with pytest.raises(ValueError):
        JudgeEvaluator(net, candidates=-1)


# --- symmetries, twins ---------------------------------------------------------------------------

def test_the_symmetric_average_of_a_judging_net(net):
    state = game()
    evaluator = JudgeEvaluator(net)
    assert evaluator.tells_directions_apart and evaluator.costly
    averaged = SymmetricEvaluator(evaluator, 2)
    plain, mirrored = evaluator.evaluate(state), evaluator.evaluate(state.transformed(1))
    evaluation = averaged.evaluate(state)
    assert evaluation.win == pytest.approx((plain.win + mirrored.win) / 2)
    assert evaluation.value == pytest.approx((plain.value + mirrored.value) / 2)
    moves, values = averaged.successor_values(state)
    plain_moves, plain_values = evaluator.successor_values(state)
    assert moves == plain_moves and not np.allclose(values, plain_values)
    assert SymmetricEvaluator(UniformEvaluator(), 2).evaluate(state).win is None


def test_each_position_of_a_batch_judged_in_its_own_symmetry(net):
    """judgement_in_symmetries(): position i under symmetries[i], brought back to its own frame,
    is the net's judgement of the mirrored game read back."""
    states = [game(9, ("E5", "C3", "G7", "D4", "F3")[:k]) for k in (5, 4, 3, 2, 1, 5, 4, 3)]
    planes = np.concatenate([judge_planes(*_inputs(state)) for state in states])
    judged = judgement_in_symmetries(net.forward, planes, list(range(SYMMETRIES)))
    for i, state in enumerate(states):
        mirrored = reference(net, state.transformed(i))
        assert judged.win[i] == pytest.approx(float(mirrored.win[0]), abs=1e-5)
        assert judged.score[i] == pytest.approx(float(mirrored.score[0]), abs=1e-4)
        assert np.allclose(judged.policy[i], mirrored.policy[0][move_permutation(9, i)], atol=1e-4)
        assert np.allclose(judged.ownership[i], transform(mirrored.ownership[0], INVERSE_SYMMETRY[i]),
                           atol=1e-5)
    plain = net.forward(planes)
    assert np.allclose(judged.policy[0], plain.policy[0], atol=1e-5)
    assert not np.allclose(judged.policy[1], plain.policy[1], atol=1e-3)


def _inputs(state):
    """judge_planes()'s arguments for state, as reference() encodes it."""
    records = np.zeros((1, 1, RECORD_PLANES, state.size ** 2), np.uint8)
    recent = [loc for _, loc in reversed(state.history[-RECENT_MOVES:])]
    PositionEncoder().encode(state.board, state.to_move, recent, records[0, 0])
    komi = state.rules.komi if state.to_move == WHITE else -state.rules.komi
    return features("rich", records, np.array([state.to_move])), np.array([komi])


def test_spread_symmetries_judge_a_position_in_the_symmetry_of_its_hash(net):
    state = game()
    evaluator = JudgeEvaluator(net)
    lines = [(), (parse_vertex("C7", 9),), (parse_vertex("G3", 9),), (PASS,)]
    answers = evaluator.judge_lines(state, lines, spread_symmetries=True)
    symmetries = set()
    for line, (evaluation, logits) in zip(lines, answers):
        after = state.copy()
        for move in line:
            after.play(move)
        symmetry = position_symmetry(after.board.hash, after.to_move)
        symmetries.add(symmetry)
        mirrored = reference(net, after.transformed(symmetry))
        assert evaluation.value == pytest.approx(float(mirrored.score[0]), abs=1e-4)
        assert np.allclose(logits, mirrored.policy[0][move_permutation(9, symmetry)], atol=1e-4)
    assert len(symmetries) > 1
    assert evaluator.judge_lines(state, lines, spread_symmetries=True)[1][0] is answers[1][0]
    again = JudgeEvaluator(net).judge_lines(state, lines, spread_symmetries=True)
    assert [evaluation.value for evaluation, _ in again] == \
        [evaluation.value for evaluation, _ in answers]


def test_position_symmetries_are_spread_over_all_eight():
    rng = np.random.default_rng(3)
    drawn = [position_symmetry(int(h), colour) for h in rng.integers(0, 1 << 63, 800, dtype=np.int64)
             for colour in (BLACK, WHITE)]
    counts = np.bincount(drawn, minlength=SYMMETRIES)
    assert len(counts) == SYMMETRIES and counts.min() > 140 and counts.max() < 260


def test_a_twin_shares_the_pass_but_not_the_cache(net):
    evaluator = JudgeEvaluator(net, cache_size=17, candidates=3)
    twin = evaluator.twin()
    assert twin.forward is evaluator.forward and twin.net is evaluator.net
    assert twin.encoder is not evaluator.encoder and twin._cache is not evaluator._cache
    assert (twin.cache_size, twin.candidates) == (17, 3)
    state = game()
    ours, theirs = evaluator.evaluate(state), twin.evaluate(state)
    assert ours is not theirs and (ours.value, ours.win) == (theirs.value, theirs.win)
    assert np.array_equal(ours.ownership, theirs.ownership)
    assert evaluator.within(0.5) == (evaluator, 1.0)


# --- weight files ------------------------------------------------------------------------------

def test_load_evaluator_reads_a_judging_nets_file(net, judge_file):
    evaluator = load_evaluator(judge_file)
    assert isinstance(evaluator, JudgeEvaluator)
    assert evaluator.metadata["architecture"]["name"] == "judge"
    state = game()
    assert evaluator.evaluate(state).value == pytest.approx(JudgeEvaluator(net).evaluate(state).value,
                                                            abs=1e-5)
    assert architecture_name(judge_file) == "judge"
    searching = load_evaluator(judge_file, cache_size=4096)      # the search's prior's options
    assert isinstance(searching, JudgeEvaluator) and searching.cache_size == 4096


def test_a_damaged_judging_nets_file_is_refused_by_name(judge_file, tmp_path):
    truncated = tmp_path / "truncated_judge.npz"
    truncated.write_bytes(judge_file.read_bytes()[:len(judge_file.read_bytes()) // 2])
    assert architecture_name(truncated) is None and architecture_name(tmp_path / "none") is None
    with pytest.raises(WeightFileError, match="truncated_judge.npz"):
        load_evaluator(truncated)
    policy_file = tmp_path / "nan_judge.npz"
    policy = JudgeNet(ARCHITECTURE, "rich", seed=1)
    params = dict(policy.params)
    params["conv0.w"] = params["conv0.w"] * np.float32(np.nan)
    save_policy(policy_file, policy.with_params(params), 9, 0, 0)
    with pytest.raises(WeightFileError, match="nan_judge.npz"):
        load_evaluator(policy_file)


def test_nets_by_size_each_judge_their_boards(net, judge_file, tmp_path):
    other = trained_like(seed=11)
    large_file = tmp_path / "large_judge.npz"
    save_policy(large_file, other, 19, 10, 1000)
    evaluator = JudgeEvaluator.load_by_size([(19, large_file), (9, judge_file)], cache_size=64)
    assert evaluator.cache_size == 64 and evaluator.net.architecture == other.architecture
    for size, judging in ((5, net), (9, net), (11, other), (19, other), (21, other)):
        state = game(size, ("C3",))
        expected = float(reference(judging, state).score[0])
        assert evaluator.evaluate(state).value == pytest.approx(expected, abs=1e-4), size
        assert evaluator.twin().evaluate(state).value == pytest.approx(expected, abs=1e-4)
    assert JudgeEvaluator(other).evaluate(game(9, ("C3",))).value != \
        pytest.approx(evaluator.evaluate(game(9, ("C3",))).value, abs=1e-3)


def test_nets_by_size_must_read_the_same_inputs(judge_file, tmp_path):
    other_inputs = tmp_path / "sn2008_judge.npz"
    save_policy(other_inputs, JudgeNet(ARCHITECTURE, "sn2008", seed=2), 19, 0, 0)
    with pytest.raises(WeightFileError,
                       match="judge.npz: reads the rich inputs .*sn2008_judge.npz the sn2008"):
        JudgeEvaluator.load_by_size([(9, judge_file), (19, other_inputs)])
    damaged = tmp_path / "damaged_judge.npz"
    damaged.write_bytes(judge_file.read_bytes()[:1000])
    with pytest.raises(WeightFileError, match="damaged_judge.npz"):
        JudgeEvaluator.load_by_size([(9, damaged), (19, judge_file)])


# --- the search's prior ------------------------------------------------------------------------

def test_the_search_prior_takes_the_judging_nets_chance_to_win(net):
    state = game()                            # White to move
    evaluator = JudgeEvaluator(net)
    prior = SearchPlayer(evaluator)._prior_function(state, evaluator, None)
    win, _, black_win = prior([], state.to_move)
    assert black_win == pytest.approx(1.0 - evaluator.evaluate(state).win)
    moves, values = evaluator.successor_values(state)
    assert win[moves[0]] == pytest.approx(1.0 / (1.0 + np.exp(-values[0] / 5.0)))


# --- the GTP engine with --weights judge.npz ----------------------------------------------------

def session(*options):
    engine = build_engine(build_parser().parse_args(["--seed", "3", "--no-resign", *options]))
    return GtpLoop(engine, io.BytesIO(b""), io.BytesIO())


def ask(loop, line):
    raw = loop.handle_line(line + "\n")
    assert raw.endswith("\n\n"), raw
    return raw[0] == "=", raw[2:].strip()


def test_gtp_plays_and_shows_ownership_with_a_judging_net(judge_file):
    loop = session("--weights", str(judge_file))
    engine = loop.engine
    assert isinstance(engine.evaluator, SymmetricEvaluator)       # 1-ply: the eight symmetries
    assert isinstance(engine.evaluator.inner, JudgeEvaluator)
    for line in ("boardsize 9", "clear_board", "komi 6.5", "play b E5", "play w C3"):
        assert ask(loop, line)[0]
    expected = engine.evaluator.evaluate(engine.state).ownership[board_points(9)]
    raw = loop.handle_line("kata-genmove_analyze b 10 ownership true\n")
    lines = raw.rstrip("\n").split("\n")
    assert lines[0] == "= " and lines[-1].startswith("play ")
    shown = np.array(lines[1].split(" ownership ")[1].split(), float)
    assert len(shown) == 81 and np.allclose(shown, expected, atol=1e-4) and np.ptp(shown) > 0
    legal = engine.state.legal_moves() + [PASS]
    ok, vertex = ask(loop, "genmove w")
    assert ok and parse_vertex(vertex, 9) in legal
    assert engine.state.history[-1][1] == parse_vertex(vertex, 9)


def test_the_policy_player_plays_a_judging_nets_move_head(net, judge_file):
    loop = session("--player", "policy", "--policy", str(judge_file))
    predictor = loop.engine.player.predictor
    assert isinstance(predictor, JudgeMoves) and predictor.symmetries == SYMMETRIES
    assert predictor.description().endswith("its move head, 8 symmetries")
    for line in ("boardsize 9", "clear_board", "komi 6.5", "play b E5", "play w C3"):
        assert ask(loop, line)[0]
    state = loop.engine.state
    averaged = np.zeros(82)
    for symmetry in range(SYMMETRIES):
        logits = reference(net, state.transformed(symmetry)).policy[0]
        averaged += np.exp(logits - logits.max())[move_permutation(9, symmetry)] / \
            np.exp(logits - logits.max()).sum() / SYMMETRIES
    legal = state.legal_moves()
    rows, cols = np.divmod(np.array(legal), 9 + 2)          # locs -> the head's points, row by row
    points = (rows - 1) * 9 + cols - 1
    expected = averaged[points] / averaged[np.append(points, 81)].sum()
    shown = predictor.probabilities(state)
    assert np.allclose(shown[legal], expected, atol=1e-5)
    assert shown[parse_vertex("E5", 9)] == 0 and predictor.twin().symmetries == SYMMETRIES
    one = JudgeMoves(JudgeEvaluator(net)).probabilities(state)
    assert not np.allclose(one[legal], expected, atol=1e-3)
    ok, vertex = ask(loop, "genmove b")
    assert ok and parse_vertex(vertex, 9) in legal + [PASS]


def test_the_1ply_player_takes_the_judging_nets_value_and_precision(judge_file):
    engine = session("--weights", str(judge_file), "--judge-value", "lead",
                     "--policy-precision", "bf16").engine
    judging = engine.evaluator.inner
    assert judging.value == "lead" and judging.twin().value == "lead"
    assert session("--weights", str(judge_file)).engine.evaluator.inner.value == "win"


def test_the_search_plays_with_a_judging_nets_prior(judge_file):
    loop = session("--weights", str(judge_file), "--search", "mcts", "--tree", "rave",
                   "--playouts", "60", "--policy", "none")
    evaluator = loop.engine.player.evaluator
    assert isinstance(evaluator, JudgeEvaluator)
    for line in ("boardsize 9", "clear_board", "play b E5"):
        assert ask(loop, line)[0]
    legal = loop.engine.state.legal_moves()
    ok, vertex = ask(loop, "genmove w")
    assert ok and parse_vertex(vertex, 9) in legal
    assert evaluator.evaluations > 0                  # the prior asked the judging net
    assert format_vertex(loop.engine.state.history[-1][1], 9) == vertex


def test_the_search_plays_over_the_shipped_judging_nets_by_board_size():
    from engine.nets.weights import DEFAULT_JUDGES
    from engine.play.search_player import uses_puct
    loop = session("--search", "mcts", "--playouts", "20")
    engine = loop.engine
    assert isinstance(engine.evaluator, JudgeEvaluator)
    assert uses_puct(engine.player.settings, engine.evaluator)
    (small, small_file), (large, large_file) = DEFAULT_JUDGES
    alone = {small: JudgeEvaluator.load(small_file), large: JudgeEvaluator.load(large_file)}
    for size, net_size in ((small, small), (13, large), (large, large)):
        state = game(size, ("C3",))
        expected = alone[net_size].evaluate(state).value
        assert engine.evaluator.evaluate(state).value == pytest.approx(expected, abs=1e-4)
        for line in (f"boardsize {size}", "clear_board", "play b C3"):
            assert ask(loop, line)[0]
        ok, vertex = ask(loop, "genmove w")
        assert ok and parse_vertex(vertex, size) in game(size, ("C3",)).legal_moves() + [PASS]
    assert alone[small].evaluate(game(9, ("C3",))).value != pytest.approx(
        alone[large].evaluate(game(9, ("C3",))).value, abs=1e-3)


def test_the_1ply_player_draws_by_the_values_and_the_move_heads_weight(judge_file):
    """--judge-move-weight W: the draw over value + W log p, the values shown as they are."""
    loop = session("--weights", str(judge_file), "--judge-move-weight", "2", "--beta", "inf")
    engine = loop.engine
    for line in ("boardsize 9", "clear_board", "play b E5", "play w C3"):
        assert ask(loop, line)[0]
    state = engine.state
    analysis = engine.player.analyse(state, BLACK)
    plain_moves, plain = engine.evaluator.successor_values(state)
    log_probabilities = engine.evaluator.move_log_probabilities(state, analysis.moves)
    assert analysis.moves == plain_moves and np.allclose(analysis.values, plain)
    assert np.allclose(analysis.preference, plain + 2.0 * log_probabilities)
    best = max((i for i in range(len(plain)) if analysis.candidate[i]),
               key=lambda i: analysis.preference[i])
    assert analysis.probabilities[best] == 1.0 and analysis.order()[0] == best
    assert ask(loop, "genmove b") == (True, format_vertex(analysis.moves[best], 9))
    assert ask(loop, "kosumi-set-param judge_move_weight 0")[0]
    assert engine.player.analyse(state, BLACK).preference is None


def test_the_1ply_players_default_nets_are_the_judging_nets_by_board_size():
    from engine.nets.weights import DEFAULT_JUDGES
    engine = session().engine
    assert isinstance(engine.evaluator, SymmetricEvaluator) and engine.evaluator.count == 8
    default = engine.evaluator.inner
    assert isinstance(default, JudgeEvaluator)
    for size, path in DEFAULT_JUDGES:
        alone = JudgeEvaluator.load(path)
        state = game(size, ("C3",))
        assert default.evaluate(state).win == pytest.approx(alone.evaluate(state).win, abs=1e-5)
