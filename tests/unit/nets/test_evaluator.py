"""The evaluator interface: NetworkEvaluator (values, recurrence, cache, superko, colour symmetry),
UniformEvaluator and load_evaluator."""
import numpy as np
import pytest

from engine.rules.board import BLACK, PASS, WHITE, Board, opponent
from engine.nets.evaluator import (Evaluation, Evaluator, NetworkEvaluator, SoftSegEvaluator,
                                   SymmetricEvaluator, UniformEvaluator, load_evaluator)
from engine.rules.coords import parse_vertex
from engine.rules.game import GameState, Rules, area_score, symmetric_loc
from engine.nets import weights as weight_files
from engine.nets.weights import WeightFileError, new_network, save_weights


@pytest.fixture(scope="module")
def network():
    # Larger than the trainer's initial scale, so that outputs (and liberty classes) vary.
    return new_network(seed=21, scale=0.6)


def random_game(size, moves, seed, rules=Rules()):
    rng = np.random.default_rng(seed)
    state = GameState(size, rules)
    for _ in range(moves):
        legal = state.legal_moves()
        if not legal:
            break
        state.play(legal[rng.integers(len(legal))])
    return state


def snapshot(state):
    return (str(state.board), state.board.hash, state.to_move, list(state.history),
            state.consecutive_passes, state.board.move_count)


def test_network_evaluator_is_an_evaluator(network):
    evaluator = NetworkEvaluator(network)
    assert isinstance(evaluator, Evaluator)
    with pytest.raises(TypeError):
        Evaluator()


@pytest.mark.parametrize("size, moves", [(5, 12), (9, 40), (13, 80)])
def test_successor_values_are_minus_the_evaluation_of_each_successor(network, size, moves):
    state = random_game(size, moves, seed=size)
    evaluator = NetworkEvaluator(network)
    moves_out, values = evaluator.successor_values(state)
    assert moves_out == state.legal_moves() + [PASS]
    assert values.shape == (len(moves_out),)
    for move, value in zip(moves_out, values):
        after = state.copy()
        after.play(move)
        assert value == pytest.approx(-evaluator.evaluate(after).value, rel=1e-9, abs=1e-9)


def test_multi_hot_feature_sets_evaluate_through_the_same_interface():
    network = new_network(seed=5, feature_set="neurogo", scale=0.3)
    state = random_game(7, 25, seed=8)
    evaluator = NetworkEvaluator(network)
    evaluation = evaluator.evaluate(state)
    assert evaluation.inputs.shape == (state.board.num_locs, network.max_active)
    assert np.all(np.abs(evaluation.ownership) <= 1.0)
    moves, values = evaluator.successor_values(state)
    for move, value in list(zip(moves, values))[::2]:
        after = state.copy()
        after.play(move)
        assert value == pytest.approx(-evaluator.evaluate(after).value, rel=1e-9, abs=1e-9)


def test_training_scoring_is_consistent_too(network):
    state = random_game(7, 20, seed=3)
    evaluator = NetworkEvaluator(network, capture_value=0.4, stone_value=0.4)
    moves, values = evaluator.successor_values(state)
    for move, value in list(zip(moves, values))[::3]:
        after = state.copy()
        after.play(move)
        assert value == pytest.approx(-evaluator.evaluate(after).value, rel=1e-9, abs=1e-9)
    with pytest.raises(ValueError):
        NetworkEvaluator(network, stone_value=1.5)


def test_superko_forbidden_retake_is_not_a_successor(network):
    board = Board.from_ascii("""
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .
    """)
    retake, capture = board.loc(1, 1), board.loc(1, 2)
    for ko_rule, allowed in (("positional", False), ("situational", False), ("simple", True)):
        state = GameState.from_board(board, BLACK, Rules(ko=ko_rule))
        state.play(capture)
        state.play(PASS)
        state.play(PASS)      # the passes clear the simple ko: only superko forbids the retake
        moves, values = NetworkEvaluator(network).successor_values(state)
        assert (retake in moves) == allowed
        assert moves[-1] == PASS and len(moves) == len(values)


def test_evaluation_fields(network):
    state = random_game(9, 30, seed=4)
    evaluation = NetworkEvaluator(network).evaluate(state)
    assert isinstance(evaluation, Evaluation)
    num_locs = state.board.num_locs
    assert evaluation.outputs.shape == (num_locs, 7)
    assert evaluation.ownership.shape == (num_locs,)
    assert evaluation.inputs.shape == (num_locs,)
    assert np.all(np.abs(evaluation.ownership) <= 1.0)
    off_board = [p for p in range(num_locs) if p not in set(state.board.points())]
    assert not evaluation.ownership[off_board].any() and not evaluation.outputs[off_board].any()
    assert not evaluation.outputs.flags.writeable
    # Chinese scoring: the value is the ownership sum from the side to move's view, plus komi.
    black_margin = evaluation.ownership.sum() - state.rules.komi
    expected = black_margin if state.to_move == BLACK else -black_margin
    assert evaluation.value == pytest.approx(expected, rel=1e-12, abs=1e-9)


def test_komi_counts_for_white(network):
    state = random_game(7, 10, seed=5)
    more_komi = GameState(7, Rules(komi=state.rules.komi + 2.0))
    for colour, loc in state.history:
        more_komi.play(loc, colour)
    difference = NetworkEvaluator(network).evaluate(more_komi).value - \
        NetworkEvaluator(network).evaluate(state).value
    assert difference == pytest.approx(2.0 if state.to_move == WHITE else -2.0)


def test_evaluator_does_not_change_the_state(network):
    state = random_game(9, 35, seed=6)
    before = snapshot(state)
    evaluator = NetworkEvaluator(network)
    evaluator.evaluate(state)
    evaluator.successor_values(state)
    assert snapshot(state) == before
    state.board.check_consistency()


# ------------------------------------------------------------------------------- the recurrence

def test_evaluation_is_a_function_of_the_game_not_of_the_cache(network):
    state = random_game(9, 30, seed=7)
    forward = NetworkEvaluator(network)
    replay = GameState(9)
    for colour, loc in state.history:
        forward.evaluate(replay)
        replay.play(loc, colour)
    cold = NetworkEvaluator(network).evaluate(state)
    warm = forward.evaluate(state)
    assert np.array_equal(cold.inputs, warm.inputs)
    assert np.allclose(cold.outputs, warm.outputs, rtol=0, atol=1e-15)
    assert cold.value == warm.value
    # A cache too small to hold the game still gives the same answer.
    tiny = NetworkEvaluator(network, cache_size=2)
    assert tiny.evaluate(state).value == cold.value


def test_playing_forward_costs_one_evaluation_per_position(network):
    evaluator = NetworkEvaluator(network)
    state = GameState(9)
    evaluator.evaluate(state)
    first = evaluator.evaluations
    assert first == 2                        # position 0: bootstrap from the prior, then itself
    rng = np.random.default_rng(8)
    for step in range(1, 11):
        legal = state.legal_moves()
        state.play(legal[rng.integers(len(legal))])
        evaluator.evaluate(state)
        assert evaluator.evaluations == first + step
    evaluator.successor_values(state)
    assert evaluator.evaluations == first + 10      # successors need no full evaluation


def test_undo_returns_the_earlier_evaluation(network):
    evaluator = NetworkEvaluator(network)
    state = random_game(9, 12, seed=9)
    earlier = evaluator.evaluate(state)
    state.play(state.legal_moves()[0])
    evaluator.evaluate(state)
    state.undo()
    count = evaluator.evaluations
    assert evaluator.evaluate(state).value == earlier.value
    assert evaluator.evaluations == count


def test_the_recurrence_changes_liberty_classes(network):
    """The previous outputs decide the classes: the same stones reached by different histories
    may be encoded differently, and the prior is not what a game position uses."""
    from engine.nets import network as isn
    state = random_game(9, 40, seed=10)
    evaluation = NetworkEvaluator(network).evaluate(state)
    prior = isn.prior_liberty_weights(state.board.num_locs)
    prior_inputs = network.encode(state.board, state.to_move, prior)
    stones = evaluation.inputs < isn.INPUT_EMPTY_POINT
    assert stones.sum() > 20
    assert not np.array_equal(evaluation.inputs[stones], prior_inputs[stones])


def test_changing_the_parameters_drops_remembered_evaluations():
    network = new_network(seed=22, scale=0.6)
    evaluator = NetworkEvaluator(network)
    state = random_game(7, 15, seed=16)
    before = evaluator.evaluate(state).value
    network.set_params(network.get_params() * 0.5)
    after = evaluator.evaluate(state).value
    assert after != before
    assert after == NetworkEvaluator(network).evaluate(state).value


@pytest.mark.parametrize("make", [
    lambda: NetworkEvaluator(new_network(seed=23, feature_set="neurogo", scale=0.3)),
    lambda: SoftSegEvaluator(weight_files.new_softseg_network(seed=24, scale=0.3)),
    UniformEvaluator])
def test_a_twin_gives_the_same_values_from_its_own_network(make):
    evaluator = make()
    twin = evaluator.twin()
    state = random_game(7, 20, seed=17)
    assert twin.evaluate(state).value == evaluator.evaluate(state).value
    moves, values = evaluator.successor_values(state)
    twin_moves, twin_values = twin.successor_values(state)
    assert twin_moves == moves and np.array_equal(twin_values, values)
    network = getattr(evaluator, "network", None)
    if network is not None:      # its own buffers: a change to the twin's net stays there
        assert twin.network is not network
        twin.network.set_params(twin.network.get_params() * 0.5)
        assert twin.evaluate(state).value != evaluator.evaluate(state).value


def test_set_up_position_is_bootstrapped_from_the_prior(network):
    board = random_game(9, 30, seed=11).board
    state = GameState.from_board(board, WHITE)
    evaluator = NetworkEvaluator(network)
    first = evaluator.evaluate(state)
    assert evaluator.evaluations == 2
    again = NetworkEvaluator(network).evaluate(state)
    assert first.value == again.value
    moves, values = evaluator.successor_values(state)
    after = state.copy()
    after.play(moves[0])
    assert values[0] == pytest.approx(-evaluator.evaluate(after).value, rel=1e-9, abs=1e-9)


def test_other_colour_to_move_is_evaluated_in_its_own_frame(network):
    """GTP may ask for either colour (player.state_for sets to_move on a copy)."""
    state = random_game(9, 21, seed=12)
    flipped = state.copy()
    flipped.to_move = opponent(state.to_move)
    evaluator = NetworkEvaluator(network)
    normal, other = evaluator.evaluate(state), evaluator.evaluate(flipped)
    assert normal.value != other.value
    moves, values = evaluator.successor_values(flipped)
    after = flipped.copy()
    after.play(moves[0])
    assert values[0] == pytest.approx(-evaluator.evaluate(after).value, rel=1e-9, abs=1e-9)


def test_colour_swapped_game_with_negated_komi_has_the_same_values(network):
    rng = np.random.default_rng(13)
    original = GameState(9, Rules(komi=6.5))
    swapped = GameState(9, Rules(komi=-6.5))
    for _ in range(35):
        legal = original.legal_moves()
        move = legal[rng.integers(len(legal))]
        colour = original.to_move
        original.play(move, colour)
        swapped.play(move, opponent(colour))
    first, second = NetworkEvaluator(network), NetworkEvaluator(network)
    a, b = first.evaluate(original), second.evaluate(swapped)
    assert a.value == pytest.approx(b.value, rel=1e-12, abs=1e-12)
    assert np.allclose(a.ownership, -b.ownership, rtol=0, atol=1e-12)
    moves_a, values_a = first.successor_values(original)
    moves_b, values_b = second.successor_values(swapped)
    assert moves_a == moves_b
    assert np.allclose(values_a, values_b, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------- the others

def test_uniform_evaluator_counts_area():
    state = random_game(7, 25, seed=14, rules=Rules(komi=0.5))
    evaluator = UniformEvaluator()
    evaluation = evaluator.evaluate(state)
    black_margin = area_score(state.board, 0.5)
    assert evaluation.value == (black_margin if state.to_move == BLACK else -black_margin)
    assert evaluation.ownership.sum() == pytest.approx(black_margin + 0.5)
    moves, values = evaluator.successor_values(state)
    assert moves == state.legal_moves() + [PASS]
    after = state.copy()
    after.play(moves[0])
    assert values[0] == pytest.approx(-evaluator.evaluate(after).value)


def test_load_evaluator_reads_a_weight_file(tmp_path, network, monkeypatch):
    path = tmp_path / "net.npz"
    save_weights(path, network, board_size=9, games_trained=5)
    evaluator = load_evaluator(path)
    state = random_game(9, 20, seed=15)
    assert evaluator.evaluate(state).value == NetworkEvaluator(network).evaluate(state).value
    assert evaluator.metadata["games_trained"] == 5
    monkeypatch.setattr(weight_files, "DEFAULT_WEIGHTS", tmp_path / "missing.npz")
    with pytest.raises(WeightFileError, match="missing.npz: file not found"):
        load_evaluator()


def test_the_isn_is_symmetric_so_averaging_its_symmetries_changes_nothing(network):
    evaluator = NetworkEvaluator(network)
    averaged = SymmetricEvaluator(NetworkEvaluator(network), 8)
    state = random_game(9, 25, seed=31)
    moves, values = evaluator.successor_values(state)
    averaged_moves, averaged_values = averaged.successor_values(state)
    assert averaged_moves == moves
    assert np.allclose(averaged_values, values, atol=1e-9)
    plain, mean = evaluator.evaluate(state), averaged.evaluate(state)
    assert mean.value == pytest.approx(plain.value, abs=1e-9)
    assert np.allclose(mean.ownership, plain.ownership, atol=1e-9)


def test_the_softseg_net_averaged_over_all_symmetries_gives_mirrored_games_one_value():
    net = weight_files.new_softseg_network(seed=32, scale=0.5)
    plain = SoftSegEvaluator(net)
    averaged = SymmetricEvaluator(SoftSegEvaluator(net), 8)
    state = random_game(7, 12, seed=33)
    moves, values = averaged.successor_values(state)
    _, plain_values = plain.successor_values(state)
    assert not np.allclose(plain_values, values)        # the net alone tells directions apart
    for symmetry in (1, 5, 6):
        mirrored = state.transformed(symmetry)
        mirrored_moves, mirrored_values = averaged.successor_values(mirrored)
        value_of = dict(zip(mirrored_moves, mirrored_values))
        assert np.allclose([value_of[symmetric_loc(m, 7, symmetry)] for m in moves], values)
        assert averaged.evaluate(mirrored).value == pytest.approx(averaged.evaluate(state).value)
    ownership = averaged.evaluate(state).ownership
    back = averaged.evaluate(state.transformed(3)).ownership
    assert np.allclose([back[symmetric_loc(p, 7, 3)] for p in state.board.points()],
                       [ownership[p] for p in state.board.points()])
    assert snapshot(state) == snapshot(random_game(7, 12, seed=33))    # the state is untouched
    twin = averaged.twin()
    assert twin.inner is not averaged.inner and twin.count == 8
    with pytest.raises(ValueError, match="symmetries must be from 1 to 8"):
        SymmetricEvaluator(plain, 9)


# ------------------------------------------------------------------------- the connectivity map

def test_the_connectivity_map_gives_each_colour_its_own_connections():
    """The shipped soft-segmentation net links the stones of one chain for their colour, never for
    the other, whichever side is to move (the net sees the side to move as Black)."""
    evaluator = load_evaluator(weight_files.DEFAULT_WEIGHTS)
    assert evaluator.has_connectivity
    state = GameState(9, Rules())
    for vertex in ("C5", "D5", "E5", "F5", "G5"):
        state.play(parse_vertex(vertex, 9), BLACK)
    ends = parse_vertex("C5", 9), parse_vertex("G5", 9)
    for to_move in (BLACK, WHITE):
        state.to_move = to_move
        black = evaluator.connectivity(state, ends[0], BLACK)
        white = evaluator.connectivity(state, ends[0], WHITE)
        assert black.shape == white.shape == (state.board.num_locs,)
        assert black[ends[1]] > 0.9 and white[ends[1]] < 0.1
        assert ((black >= 0) & (black <= 1)).all() and ((white >= 0) & (white <= 1)).all()


def test_the_averaged_connectivity_map_reads_each_symmetry_back():
    net = weight_files.new_softseg_network(seed=35, scale=0.5)
    plain = SoftSegEvaluator(net)
    averaged = SymmetricEvaluator(SoftSegEvaluator(net), 8)
    state = random_game(7, 14, seed=36)
    source = state.board.points()[9]
    expected = np.zeros(state.board.num_locs)
    for symmetry in range(8):
        mirrored = state.transformed(symmetry)
        values = plain.connectivity(mirrored, symmetric_loc(source, 7, symmetry), WHITE)
        for p in state.board.points():
            expected[p] += values[symmetric_loc(p, 7, symmetry)] / 8
    assert averaged.has_connectivity
    assert np.allclose(averaged.connectivity(state, source, WHITE), expected, rtol=0, atol=1e-12)
    assert not np.allclose(plain.connectivity(state, source, WHITE), expected)


def test_an_isn_has_no_connectivity_map(network):
    evaluator = SymmetricEvaluator(NetworkEvaluator(network), 8)
    assert not evaluator.has_connectivity
    with pytest.raises(NotImplementedError, match="NetworkEvaluator has no connectivity layer"):
        evaluator.connectivity(GameState(9, Rules()), 12, BLACK)
