"""After the opponent passes, every player follows one rule (engine/play/player.py,
`after_opponent_passed`): pass when the count wins; resign (or pass, never resigning) when it
loses by more than the margin of doubt; in between, play on only with a move the player rates
better than passing. Never a stone thrown into the opponent's settled area (issue 44: kosumi,
behind, played about 20 stones into GNU Go's area after GNU Go passed)."""
import numpy as np

from engine.nets.evaluator import UniformEvaluator
from engine.play.player import COUNT_DOUBT_MARGIN, RESIGN, Player, after_opponent_passed
from engine.play.policy_player import PolicyPlayer
from engine.play.search_player import SearchPlayer
from engine.rules.board import BLACK, PASS, WHITE
from engine.rules.game import GameState, Rules
from tests.diagrams import load_board, vertex
from tests.unit.play.test_player import TableEvaluator

# Settled: White's area (columns A-F, 54 points) and Black's (G-J, 27) are Benson-safe; Black's
# A5 stone is dead in White's area. With komi 7.5 Black is lost by 34.5, far beyond the margin
# of doubt (8.1 points on 9x9). Black can still throw stones into White's two-point eye A5-B5.
LOST_BY_FAR = """
    . O . O . O X . X
    O O O O O O X X X
    . O . O . O X . X
    O O O O O O X X X
    X . O . O O X . X
    O O O O O O X X X
    . O . O . O X . X
    O O O O O O X X X
    . O . O . O X . X
"""

# Settled but close: Black 44 points (columns A-E), White 36 (F-J) and the dame E5. With komi
# 7.5 White is lost by 0.5, inside the margin of doubt: filling E5 wins; a stone in Black's
# two-point eye A5-B5 is captured for nothing.
LOST_BY_LITTLE = """
    . X . X X O . O .
    X X X X X O O O O
    . X . X X O . O .
    X X X X X O O O O
    . . X X . O . O .
    X X X X X O O O O
    . X . X X O . O .
    X X X X X O O O O
    . X . X X O . O .
"""
NO_DAME = LOST_BY_LITTLE.replace(". . X X . O", ". . X X X O")   # Black 45, White 36
THROW_INS = {"A5", "B5"}


def after_a_pass(diagram, to_move, komi=7.5):
    """The game with the other colour's pass just played (so `to_move` may end the game)."""
    game = GameState.from_board(load_board(diagram), opponent_of(to_move), Rules(komi=komi))
    game.play(PASS, opponent_of(to_move))
    return game


def opponent_of(colour):
    return WHITE if colour == BLACK else BLACK


def points(texts):
    return {vertex(text, 9) for text in texts}


def test_the_shared_rule_decides_by_the_count_and_its_margin_of_doubt():
    far = after_a_pass(LOST_BY_FAR, BLACK)
    verdict = after_opponent_passed(far, BLACK, None, capture_mode=False, resigns=True)
    assert verdict.move == RESIGN and verdict.count == -34.5
    assert verdict.margin == COUNT_DOUBT_MARGIN * 81
    assert after_opponent_passed(far, BLACK, None, False, resigns=False).move == PASS
    # The winner passes: its count wins.
    won = after_a_pass(LOST_BY_FAR, WHITE)
    assert after_opponent_passed(won, WHITE, None, False, True).move == PASS
    # Lost by little: the player decides, with a move better than passing or a pass.
    near = after_a_pass(LOST_BY_LITTLE, WHITE)
    verdict = after_opponent_passed(near, WHITE, None, False, True)
    assert verdict.move is None and verdict.count == -0.5 and "margin of doubt" in verdict.reason


def test_a_count_csa_doubts_is_never_resigned_on(monkeypatch):
    from engine.scoring import deadstones
    assess = deadstones.assess

    def doubting(*args, **kwargs):
        assessment = assess(*args, **kwargs)
        assessment.doubtful = True
        return assessment

    monkeypatch.setattr(deadstones, "assess", doubting)
    verdict = after_opponent_passed(after_a_pass(LOST_BY_FAR, BLACK), BLACK, None, False, True)
    assert verdict.move is None and "doubtful" in verdict.reason


def test_one_ply_player_resigns_or_passes_when_lost_by_far():
    game = after_a_pass(LOST_BY_FAR, BLACK)
    # the net rates a stone in White's area above passing, as a weak net may
    throw_in = TableEvaluator({vertex("B5", 9): 5.0}, default=-40.0, pass_value=-34.5)
    decision = Player(throw_in, seed=1).choose(game, BLACK)
    assert decision.move == RESIGN and "more than the margin of doubt" in decision.reason
    never = Player(throw_in, seed=1, resign_threshold=None)
    assert all(never.choose(game, BLACK).move == PASS for _ in range(10))


def test_one_ply_player_plays_on_by_little_only_with_a_move_that_gains():
    game = after_a_pass(LOST_BY_LITTLE, WHITE)
    dame = vertex("E5", 9)
    gaining = TableEvaluator({dame: 0.5}, default=-3.0, pass_value=-0.5)
    player = Player(gaining, beta=1.0, seed=1, resign_threshold=None)
    assert all(player.choose(game, WHITE).move == dame for _ in range(20))   # never A5 or B5
    nothing = TableEvaluator(default=-3.0, pass_value=-0.5)
    decision = Player(nothing, seed=1).choose(game, WHITE)
    assert decision.move == PASS and "no move gains" in decision.reason


def test_one_ply_player_never_throws_a_stone_its_net_overrates():
    # A weak net rates the throw-ins A5 and B5 above everything; the count takes them off at once.
    game = after_a_pass(LOST_BY_LITTLE, WHITE)
    throw_ins = {vertex("A5", 9): 5.0, vertex("B5", 9): 5.0}
    overrating = TableEvaluator(throw_ins, default=-3.0, pass_value=-0.5)
    player = Player(overrating, beta=1.0, seed=1, resign_threshold=None)
    decision = player.choose(game, WHITE)
    assert decision.move == PASS and "throw stones away" in decision.reason
    with_dame = TableEvaluator({**throw_ins, vertex("E5", 9): 0.5}, default=-3.0, pass_value=-0.5)
    player = Player(with_dame, beta=1.0, seed=1, resign_threshold=None)
    assert all(player.choose(game, WHITE).move == vertex("E5", 9) for _ in range(5))


def test_search_player_resigns_or_passes_when_lost_by_far():
    game = after_a_pass(LOST_BY_FAR, BLACK)
    decision = SearchPlayer(UniformEvaluator(), playouts=200, seed=1).choose(game, BLACK)
    assert decision.move == RESIGN and decision.analysis is None    # no search needed
    never = SearchPlayer(UniformEvaluator(), playouts=200, seed=1, resign_threshold=None)
    assert never.choose(game, BLACK).move == PASS


def test_search_player_plays_on_by_little_only_with_a_move_that_has_a_chance():
    game = after_a_pass(LOST_BY_LITTLE, WHITE)
    player = SearchPlayer(UniformEvaluator(), playouts=400, seed=1, resign_threshold=None)
    decision = player.choose(game, WHITE)
    assert decision.move == vertex("E5", 9), decision.reason
    # Without the dame every move is a stone captured for nothing: pass.
    filled = after_a_pass(NO_DAME, WHITE, komi=8.5)        # still lost by 0.5
    decision = player.choose(filled, WHITE)
    assert decision.move == PASS and "no move has a chance" in decision.reason
    assert not SearchPlayer.has_a_chance(decision.analysis, vertex("A5", 9))


def test_search_player_never_throws_stones_in_a_lost_game_after_passes():
    # The game: the opponent passes again and again; the loser answers each time
    # without putting a stone in the opponent's area.
    game = after_a_pass(NO_DAME, WHITE, komi=8.5)
    player = SearchPlayer(UniformEvaluator(), playouts=300, seed=2, resign_threshold=None)
    for _ in range(3):
        move = player.choose(game, WHITE).move
        assert move not in points(THROW_INS)
        if move == PASS:
            break
        game.play(move, WHITE)
        game.play(PASS, BLACK)


# A 9x9 game of the search against itself (2026-12-07, black won by 8 when White passed at move
# 74 and again at 76): Black's top left lives by its eye at C9 and by taking A8-B8, but CSA*
# counts it dead, a count it doubts, and the search, after rating passing a sure win by 8, filled
# that eye with C9 (its next most visited move) and lost.
EYE_FILLED_GAME = (
    "F3 C4 G6 D6 D8 E7 E8 F7 G7 F8 C7 F5 F6 E6 G5 F4 G3 E3 E2 G4 H4 H3 D3 E4 D4 E5 H2 H5 J3 G8 "
    "H6 H7 J5 C6 B6 B5 B7 C3 C2 B2 B1 B3 A5 A4 A6 E9 D9 F9 H8 H9 J7 A8 B9 B8 C8 A2 D2 D5 F2 C1 "
    "D1 A1 C1 D7 J8 G9 J9 C5 G1 J1 J2 F1 H1 pass E1 pass").split()


def test_search_player_passes_on_a_doubtful_count_when_no_move_beats_passing():
    from engine.play.search_player import load_prior_evaluator
    game = GameState(9, Rules(komi=7))
    for move in EYE_FILLED_GAME:
        game.play(vertex(move, 9))
    evaluator = load_prior_evaluator()              # the shipped 9x9 judging net
    verdict = after_opponent_passed(game, BLACK, evaluator, False, True)
    assert verdict.move is None and verdict.margin == np.inf, verdict      # CSA* doubts: play on?
    decision = SearchPlayer(evaluator, playouts=100, seed=1).choose(game, BLACK)
    analysis = decision.analysis
    assert analysis.moves[0] == PASS and analysis.winrates[0] > 0.9       # the search's own count
    assert decision.move == PASS and "no move is rated as good as passing" in decision.reason
    assert SearchPlayer.has_a_chance(analysis, vertex("C9", 9))           # the move played before
    assert SearchPlayer.rated_below_passing(analysis, vertex("C9", 9))


def test_policy_player_resigns_or_passes_when_lost_by_far():
    game = after_a_pass(LOST_BY_FAR, BLACK)
    predictor = FavouritePredictor({"B5": 0.9})
    assert policy_player(predictor).choose(game, BLACK).move == RESIGN
    assert policy_player(predictor, resign_threshold=None).choose(game, BLACK).move == PASS


def test_policy_player_plays_on_by_little_only_with_a_move_that_gains():
    game = after_a_pass(LOST_BY_LITTLE, WHITE)
    # The net likes the throw-in best; the values (a table: the dame gains) overrule it.
    predictor = FavouritePredictor({"A5": 0.6, "E5": 0.1})
    gaining = TableEvaluator({vertex("E5", 9): 0.5}, default=-3.0, pass_value=-0.5)
    assert policy_player(predictor, gaining).choose(game, WHITE).move == vertex("E5", 9)
    nothing = TableEvaluator(default=-3.0, pass_value=-0.5)
    decision = policy_player(predictor, nothing).choose(game, WHITE)
    assert decision.move == PASS and "no move gains" in decision.reason


def test_policy_player_never_throws_a_stone_its_values_overrate():
    game = after_a_pass(LOST_BY_LITTLE, WHITE)
    predictor = FavouritePredictor({"A5": 0.6, "B5": 0.2, "E5": 0.1})
    throw_ins = {vertex("A5", 9): 5.0, vertex("B5", 9): 5.0}
    overrating = TableEvaluator(throw_ins, default=-3.0, pass_value=-0.5)
    decision = policy_player(predictor, overrating).choose(game, WHITE)
    assert decision.move == PASS and "throw stones away" in decision.reason
    with_dame = TableEvaluator({**throw_ins, vertex("E5", 9): 0.5}, default=-3.0, pass_value=-0.5)
    assert policy_player(predictor, with_dame).choose(game, WHITE).move == vertex("E5", 9)


def test_cleanup_still_captures_dead_stones_when_lost():
    # kgs-genmove_cleanup is not the end of the game: the dead A5 comes off, whoever is behind.
    game = after_a_pass(LOST_BY_FAR, WHITE)
    for player in (Player(UniformEvaluator(), seed=1),
                   SearchPlayer(UniformEvaluator(), playouts=200, seed=1),
                   policy_player(FavouritePredictor({"J9": 0.9}, pass_probability=0.05))):
        assert player.choose(game, WHITE, cleanup=True).move == vertex("B5", 9)


class FavouritePredictor:
    """Move probabilities given by vertex; the other empty points share a little."""

    def __init__(self, favourites, pass_probability=0.0):
        self.favourites, self.pass_probability = favourites, pass_probability

    def probabilities(self, state, colour=None):
        board = state.board
        p = np.zeros(board.num_locs + 1)
        for loc in board.points():
            if board.get(loc) == 0:
                p[loc] = 0.001
        for text, value in self.favourites.items():
            p[vertex(text, board.size)] = value
        p[-1] = self.pass_probability
        return p / p.sum()


def policy_player(predictor, values=None, **options):
    one_ply = Player(values or UniformEvaluator(), seed=1)
    return PolicyPlayer(predictor, UniformEvaluator(), one_ply, seed=1, **options)
