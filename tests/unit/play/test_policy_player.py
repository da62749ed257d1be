"""The policy player's rules (its move, eyes, passing, resigning) on ASCII diagrams, and the move
predictor as the search's prior."""
import numpy as np
import pytest

from engine.nets.evaluator import UniformEvaluator
from engine.play.player import RESIGN, Player
from engine.play.policy_player import PolicyPlayer
from engine.play.search_player import SearchPlayer
from engine.rules.board import BLACK, PASS, WHITE
from engine.rules.game import GameState, Rules
from tests.diagrams import load_board, vertex

# Black owns the left, White the right; Black's A1 corner point is an eye.
SETTLED = """
    . X . O .
    X X . O .
    . X . O .
    X X . O O
    . X . O .
"""


class FixedPredictor:
    """Probabilities given by vertex (the rest share what is left), for the rules' tests."""

    def __init__(self, size, favourites, pass_probability=0.0):
        self.size, self.favourites, self.pass_probability = size, favourites, pass_probability

    def probabilities(self, state, colour=None):
        p = np.zeros(state.board.num_locs + 1)
        for loc in state.board.points():
            if state.board.get(loc) == 0:
                p[loc] = 0.001
        for text, value in self.favourites.items():
            p[vertex(text, self.size)] = value
        p[-1] = self.pass_probability
        return p / p.sum()

    def twin(self):
        return self


def game_of(diagram, to_move=BLACK, komi=0.5, passes=()):
    game = GameState.from_board(load_board(diagram), to_move, Rules(komi=komi))
    for colour in passes:
        game.play(PASS, colour)
    return game


def policy_player(predictor, **options):
    evaluator = UniformEvaluator()
    return PolicyPlayer(predictor, evaluator, Player(evaluator, seed=1), seed=1, **options)


def test_it_plays_the_nets_top_move_but_never_its_own_eye():
    game = game_of(SETTLED)
    player = policy_player(FixedPredictor(5, {"A1": 0.5, "C3": 0.3, "C2": 0.1}))
    assert player.choose(game, BLACK).move == vertex("C3", 5)


def test_its_analysis_ranks_the_moves_by_the_net_with_the_one_ply_values():
    game = game_of(SETTLED)
    predictor = FixedPredictor(5, {"A1": 0.5, "C3": 0.3, "C2": 0.1})
    player = policy_player(predictor)
    analysis = player.analyse(game, BLACK)
    ranked = analysis.ranked()
    assert [move for move, *_ in ranked[:2]] == [vertex("C3", 5), vertex("C2", 5)]
    assert ranked[0][1] == analysis.value_of(vertex("C3", 5)) == \
        player.one_ply.analyse(game, BLACK).value_of(vertex("C3", 5))
    # the own eye A1 is no candidate: the net's probabilities are shared over the others
    net = predictor.probabilities(game)
    candidates = [m for m, c in zip(analysis.moves, analysis.candidate) if c]
    assert vertex("A1", 5) not in candidates
    shared = net[vertex("C3", 5)] / sum(net[-1] if m == PASS else net[m] for m in candidates)
    assert ranked[0][2] == pytest.approx(shared) and sum(p for *_, p in ranked) == pytest.approx(1.0)
    assert ranked[0][0] == player.choose(game, BLACK).move


def test_a_temperature_draws_from_the_probabilities_reproducibly():
    game = game_of(SETTLED)
    draws = [policy_player(FixedPredictor(5, {"C3": 0.4, "C2": 0.4}), policy_temperature=1.0).choose(game, BLACK).move
             for _ in range(2)]
    assert draws[0] == draws[1] and draws[0] in (vertex("C3", 5), vertex("C2", 5))
    player = policy_player(FixedPredictor(5, {"C3": 0.4, "C2": 0.4}), policy_temperature=1.0)
    seen = {player.choose(game, BLACK).move for _ in range(30)}
    assert {vertex("C3", 5), vertex("C2", 5)} <= seen


def test_after_a_pass_it_passes_when_the_count_wins():
    # Black has 10 points and White 10 with komi 0.5: the count of the board as it stands
    ahead = game_of(SETTLED.replace(". X . O .\n    X X", ". X X O .\n    X X", 1), passes=[WHITE, BLACK, WHITE])
    player = policy_player(FixedPredictor(5, {"C3": 0.9}))
    assert player.choose(ahead, BLACK).move == PASS


def test_after_a_pass_a_clearly_lost_count_resigns_or_passes():
    lost = game_of("""
        . X O . .
        X X O . .
        O O O . .
        . . . . .
        . . . . .
    """, komi=0.5, passes=[WHITE, BLACK, WHITE])
    assert policy_player(FixedPredictor(5, {"D3": 0.9})).choose(lost, BLACK).move == RESIGN
    never = policy_player(FixedPredictor(5, {"D3": 0.9}), resign_threshold=None)
    assert never.choose(lost, BLACK).move == PASS


def test_it_passes_when_the_net_passes_and_plays_on_otherwise():
    game = game_of(SETTLED)
    assert policy_player(FixedPredictor(5, {"C3": 0.1}, pass_probability=0.8)).choose(game, BLACK).move == PASS
    assert policy_player(FixedPredictor(5, {"C3": 0.8}, pass_probability=0.1)).choose(game, BLACK).move != PASS


def test_cleanup_captures_dead_stones_before_passing():
    game = game_of("""
        . X . . .
        X X X X X
        . . O . .
        . . . . .
        . . . . .
    """, komi=0.5)
    # the area count (the uniform evaluator) calls White's lone C3 dead
    player = policy_player(FixedPredictor(5, {"C1": 0.1}, pass_probability=0.9), capture_all_dead=True)
    decision = player.choose(game, BLACK)
    assert decision.reason == "capturing dead stones" and decision.move in \
        {vertex(v, 5) for v in ("B3", "D3", "C2")}
    assert policy_player(FixedPredictor(5, {"C1": 0.1}, pass_probability=0.9)).choose(game, BLACK).move == PASS


def test_the_predictor_is_the_search_prior():
    game = GameState(9, Rules(komi=7))
    favourite = vertex("C3", 9)
    predictor = FixedPredictor(9, {"C3": 0.9})
    search = SearchPlayer(UniformEvaluator(), playouts=300, seed=3, predictor=predictor,
                          search_prior="none", policy_prior="on")
    analysis = search.search(game, BLACK)
    assert analysis.moves[0] == favourite
    assert analysis.priors[0] == pytest.approx(predictor.probabilities(game)[favourite])
    plain = SearchPlayer(UniformEvaluator(), playouts=300, seed=3, search_prior="none")
    assert plain.settings_for(9)[1] is False and search.settings_for(9)[1] is True
    default = SearchPlayer(UniformEvaluator(), playouts=10, predictor=predictor)
    assert default.settings_for(9)[1] is True and default.settings_for(19)[1] is True
    off = SearchPlayer(UniformEvaluator(), playouts=10, predictor=predictor, policy_prior="off")
    assert off.settings_for(9)[1] is False and off.settings_for(19)[1] is False
