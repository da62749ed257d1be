"""The 1-ply Boltzmann player (engine/play/player.py) and the dead-stone decisions it relies on
(engine/scoring/deadstones.py).

Policy tests use TableEvaluator, whose move values are set by the test, so each rule is checked
on values chosen to trigger it; whole games use the uniform evaluator (an area count).
"""
import math

import numpy as np
import pytest

from engine.scoring import deadstones
from engine.rules.board import BLACK, PASS, WHITE, Board
from engine.rules.coords import parse_vertex
from engine.nets.evaluator import Evaluation, Evaluator, SymmetricEvaluator, UniformEvaluator
from engine.rules.game import GameState, Rules
from engine.play.player import (GAME_LENGTH_VALVE, PASS_MARGIN, PREMATURE_PASS_SHARE, RESIGN,
                                RESIGN_STREAK, Player, boltzmann, win_probability)


class TableEvaluator(Evaluator):
    """Successor values from a table {loc: value}; every other move gets `default`, pass gets
    `pass_value`. evaluate() returns `position_value` and the given ownership (zeros if None)."""

    def __init__(self, table=None, default=0.0, pass_value=0.0, position_value=0.0,
                 ownership=None):
        self.table = table or {}
        self.default = default
        self.pass_value = pass_value
        self.position_value = position_value
        self.ownership = ownership
        self.successor_calls = 0

    def successor_values(self, state):
        self.successor_calls += 1
        moves = state.legal_moves() + [PASS]
        values = [self.pass_value if m == PASS else self.table.get(m, self.default) for m in moves]
        return moves, np.array(values, dtype=float)

    def evaluate(self, state):
        ownership = self.ownership if self.ownership is not None else \
            np.zeros(state.board.num_locs)
        return Evaluation(self.position_value, ownership, ownership[:, None].copy())


def game_from(diagram, to_move=BLACK, komi=0.5, scoring="area"):
    board = Board.from_ascii(diagram)
    return GameState.from_board(board, to_move, Rules(komi=komi, scoring=scoring))


def at(text, size):
    return parse_vertex(text, size)


# Black's wall on line 4 of a 5x5 board is pass-alive; the white stone B5 is dead inside it.
BENSON_WALL = """
. O . X .
X X X X X
. . . . .
. . . . .
. . . . .
"""

# The black chain on line 2 and the white chain B1-D1 share A1 and E1: seki.
SEKI = """
. . . . .
. . . . .
O O O O O
X X X X X
. O O O .
"""


# --- Boltzmann ----------------------------------------------------------------------------------------

def test_boltzmann_probabilities():
    values = np.array([0.0, 1.0, 2.0, 5.0])
    candidate = np.array([True, True, True, False])
    p = boltzmann(values, candidate, beta=2.0)
    expected = np.exp(2.0 * np.array([0.0, 1.0, 2.0]))
    assert p[3] == 0.0
    assert p[:3] == pytest.approx(expected / expected.sum())
    assert boltzmann(values, candidate, beta=0.0)[:3] == pytest.approx([1 / 3] * 3)
    greedy = boltzmann(np.array([1.0, 3.0, 3.0]), np.array([True] * 3), beta=math.inf)
    assert greedy == pytest.approx([0.0, 0.5, 0.5])
    # huge values do not overflow: probabilities are shifted by the best value
    assert boltzmann(np.array([1e6, 1e6 + 1]), np.array([True, True]), 20.0).sum() == \
        pytest.approx(1.0)


def test_moves_are_drawn_with_boltzmann_frequencies():
    state = GameState(3, Rules(komi=0.5))
    b2, a1 = at("B2", 3), at("A1", 3)
    evaluator = TableEvaluator({b2: math.log(3.0)}, default=-100.0, pass_value=-100.0)
    evaluator.table[a1] = 0.0
    player = Player(evaluator, beta=1.0, seed=11, resign_threshold=None)
    draws = [player.choose(state, BLACK).move for _ in range(4000)]
    assert set(draws) == {b2, a1}
    assert draws.count(b2) / len(draws) == pytest.approx(0.75, abs=0.03)


def test_the_same_seed_replays_the_same_game():
    def self_play(seed):
        state = GameState(7, Rules(komi=0.5))
        player = Player(UniformEvaluator(), beta=0.5, seed=seed, resign_threshold=None)
        moves = []
        while not state.is_over() and len(moves) < 60:
            move = player.choose(state, state.to_move).move
            state.play(move)
            moves.append(move)
        return moves
    assert self_play(5) == self_play(5)
    assert self_play(5) != self_play(6)


def test_a_dry_run_predicts_the_next_choice_and_changes_nothing():
    state = GameState(9, Rules(komi=7.0))
    player = Player(UniformEvaluator(), beta=0.0, seed=3, resign_threshold=None)
    before = player.rng.bit_generator.state
    predicted = [player.choose(state, BLACK, dry_run=True).move for _ in range(3)]
    assert len(set(predicted)) == 1
    assert player.rng.bit_generator.state == before
    assert player.choose(state, BLACK).move == predicted[0]
    assert player.rng.bit_generator.state != before


def test_greedy_play_with_infinite_beta():
    state = GameState(5, Rules(komi=0.5))
    best = at("C3", 5)
    evaluator = TableEvaluator({best: 3.0}, default=2.9, pass_value=0.0)
    player = Player(evaluator, beta=math.inf, seed=1, resign_threshold=None)
    assert {player.choose(state, BLACK).move for _ in range(50)} == {best}


# --- candidates ----------------------------------------------------------------------------------------

def test_own_eyes_and_pass_alive_territory_are_never_candidates():
    state = game_from(BENSON_WALL, to_move=BLACK)
    size = 5
    # The table makes the excluded points look best.
    excluded = [at(v, size) for v in ("A5", "C5", "E5")]
    evaluator = TableEvaluator({p: 50.0 for p in excluded}, default=1.0, pass_value=0.0)
    player = Player(evaluator, seed=2, resign_threshold=None)
    analysis = player.analyse(state, BLACK)
    for p in excluded:
        assert not analysis.candidate[analysis.moves.index(p)]
    assert analysis.candidate[analysis.moves.index(PASS)]
    assert analysis.candidate[analysis.moves.index(at("C2", size))]
    for _ in range(30):
        assert player.choose(state, BLACK).move not in excluded
    # Where dead stones must be captured (CGOS), the region holding B5 stays playable; E5,
    # Black's own single-point eye, never does.
    analysis = player.analyse(state, BLACK, capture_mode=True)
    assert analysis.candidate[analysis.moves.index(at("A5", size))]
    assert analysis.candidate[analysis.moves.index(at("C5", size))]
    assert not analysis.candidate[analysis.moves.index(at("E5", size))]


def test_single_point_eyes_are_excluded_even_without_benson():
    state = game_from("""
        . X . . .
        X X . . .
        . . . . .
        . . . . .
        . . . . .
        """)
    eye = at("A5", 5)
    player = Player(TableEvaluator({eye: 10.0}), seed=1, resign_threshold=None)
    analysis = player.analyse(state, BLACK)
    assert not analysis.candidate[analysis.moves.index(eye)]
    assert analysis.candidate[analysis.moves.index(at("C5", 5))]
    assert all(player.choose(state, BLACK).move != eye for _ in range(20))


# --- passing --------------------------------------------------------------------------------------------

def test_no_pass_while_a_real_move_gains():
    state = GameState(5, Rules(komi=0.5))
    gaining = TableEvaluator({at("C3", 5): PASS_MARGIN + 0.5}, default=-5.0, pass_value=0.0)
    player = Player(gaining, beta=1.0, seed=4, resign_threshold=None)
    assert all(player.choose(state, BLACK).move != PASS for _ in range(200))
    # A gain below the margin is noise: the player passes.
    tiny = TableEvaluator({at("C3", 5): PASS_MARGIN / 2}, default=-5.0, pass_value=0.0)
    player = Player(tiny, beta=1.0, seed=4, resign_threshold=None)
    decision = player.choose(state, BLACK)
    assert decision.move == PASS and decision.reason == "no move gains"


class MoveHeadEvaluator(TableEvaluator):
    """A TableEvaluator with a move head that rates passing at `share` of its likeliest move."""

    def __init__(self, share, **table):
        super().__init__(**table)
        self.share = share

    def pass_share(self, state):
        return self.share


@pytest.mark.parametrize("share, passes", [(PREMATURE_PASS_SHARE / 2, False),
                                           (PREMATURE_PASS_SHARE, True), (None, True)])
def test_a_move_head_that_would_not_pass_keeps_the_player_from_passing_first(share, passes):
    """No move gains by the values; a judging net's move head that rates passing low plays on,
    among the real moves; after the opponent's pass the count decides as before."""
    state = GameState(5, Rules(komi=0.5))
    flat = MoveHeadEvaluator(share, table={at("C3", 5): PASS_MARGIN / 2}, default=-0.2)
    player = Player(flat, beta=1.0, seed=4, resign_threshold=None)
    decisions = [player.choose(state, BLACK) for _ in range(20)]
    assert all((decision.move == PASS) == passes for decision in decisions)
    state.play(PASS)
    assert player.choose(state, WHITE).move == PASS    # the count (an empty board) wins for White


def test_after_the_opponent_passes_pass_exactly_when_the_count_wins():
    # Black's wall owns the whole board once the dead B5 is taken off: 25 - komi.
    winning = game_from(BENSON_WALL, to_move=WHITE, komi=0.5)
    winning.play(PASS, WHITE)
    ownership = UniformEvaluator().evaluate(winning).ownership
    evaluator = TableEvaluator(default=30.0, pass_value=0.0, ownership=ownership)
    player = Player(evaluator, seed=1, resign_threshold=None)
    decision = player.choose(winning, BLACK)
    assert decision.move == PASS and "count wins" in decision.reason   # even though moves gain

    # Lost by far more than the margin of doubt: pass (resigning is off), even though a move
    # "gains"; lost by little: play on only with a move that gains (test_passing_when_lost.py).
    losing = game_from(BENSON_WALL, to_move=WHITE, komi=40.5)
    losing.play(PASS, WHITE)
    evaluator = TableEvaluator(default=1.0, pass_value=0.0, ownership=ownership)
    player = Player(evaluator, seed=1, resign_threshold=None)
    decision = player.choose(losing, BLACK)
    assert decision.move == PASS and "count loses" in decision.reason
    close = game_from(BENSON_WALL, to_move=WHITE, komi=26.5)
    close.play(PASS, WHITE)
    for _ in range(20):
        decision = player.choose(close, BLACK)
        assert decision.move != PASS and "count loses" in decision.reason


def test_capture_all_dead_takes_dead_stones_off_before_passing():
    state = game_from(BENSON_WALL, to_move=BLACK)
    evaluator = UniformEvaluator()
    liberties = {at("A5", 5), at("C5", 5)}
    # Counting dead stones off, nothing gains: pass.
    plain = Player(evaluator, seed=1, resign_threshold=None)
    assert plain.choose(state, BLACK).move == PASS
    # Counting the board as it stands (CGOS), A5 or C5 gains a point.
    cgos = Player(evaluator, seed=1, resign_threshold=None, capture_all_dead=True)
    assert cgos.choose(state, BLACK).move in liberties
    # When no move gains, the dead stone's liberties become the only candidates.
    flat = Player(TableEvaluator(default=0.0, pass_value=0.0), seed=1, resign_threshold=None)
    decision = flat.choose(state, BLACK, cleanup=True)
    assert decision.move in liberties and decision.reason == "capturing dead stones"
    # kgs-genmove_cleanup goes on until the stone is off the board, even after White passes.
    first = plain.choose(state, BLACK, cleanup=True)
    assert first.move in liberties
    state.play(first.move, BLACK)
    state.play(PASS, WHITE)
    second = plain.choose(state, BLACK, cleanup=True)
    assert second.move == (liberties - {first.move}).pop()
    state.play(second.move, BLACK)
    assert state.board.stones(WHITE) == []
    state.play(PASS, WHITE)
    assert plain.choose(state, BLACK, cleanup=True).move == PASS
    assert cgos.choose(state, BLACK).move == PASS


def test_cgos_mode_counts_the_board_as_it_stands_after_a_pass():
    # As it stands, A5 and C5 touch the white stone: Black has 22 points, not 25.
    state = game_from(BENSON_WALL, to_move=WHITE, komi=23.5)
    state.play(PASS, WHITE)
    evaluator = UniformEvaluator()
    removing = Player(evaluator, seed=1, resign_threshold=None)
    assert removing.choose(state, BLACK).move == PASS             # 25 - 23.5 wins
    as_it_stands = Player(evaluator, seed=1, resign_threshold=None, capture_all_dead=True)
    decision = as_it_stands.choose(state, BLACK)                  # 22 - 23.5 loses: capture
    assert decision.move in {at("A5", 5), at("C5", 5)}


def test_the_game_length_valve_lets_a_weak_player_pass():
    state = GameState(2, Rules(komi=-0.5))   # White, to move, loses the count: must play on
    for _ in range(GAME_LENGTH_VALVE * 4 - 1):
        state.play(PASS)
    gaining = TableEvaluator(default=10.0, pass_value=0.0)
    player = Player(gaining, seed=1, resign_threshold=None)
    assert player.choose(state, state.to_move).move != PASS
    state.play(PASS)
    assert player.choose(state, state.to_move).move == PASS


# --- resigning -----------------------------------------------------------------------------------------

def test_resign_after_a_streak_of_hopeless_moves():
    state = GameState(5, Rules(komi=0.5))
    threshold = 0.5
    hopeless = TableEvaluator(default=-threshold * 25 - 1, pass_value=-threshold * 25 - 1)
    player = Player(hopeless, seed=1, resign_threshold=threshold)
    decisions = [player.choose(state, BLACK).move for _ in range(RESIGN_STREAK)]
    assert RESIGN not in decisions[:-1] and decisions[-1] == RESIGN
    # A good evaluation in between resets the streak.
    player = Player(hopeless, seed=1, resign_threshold=threshold)
    player.choose(state, BLACK)
    player.evaluator = TableEvaluator(default=0.0, pass_value=0.0)
    player.choose(state, BLACK)
    player.evaluator = hopeless
    assert [player.choose(state, BLACK).move for _ in range(RESIGN_STREAK - 1)].count(RESIGN) == 0
    # Never, when resigning is off; and never in a cleanup genmove.
    never = Player(hopeless, seed=1, resign_threshold=None)
    assert RESIGN not in [never.choose(state, BLACK).move for _ in range(10)]
    cleaning = Player(hopeless, seed=1, resign_threshold=threshold)
    assert RESIGN not in [cleaning.choose(state, BLACK, cleanup=True).move for _ in range(10)]


# --- time -----------------------------------------------------------------------------------------------

def test_an_instant_move_when_the_budget_is_below_the_usual_cost():
    state = GameState(9, Rules(komi=7.0))
    evaluator = TableEvaluator(default=1.0)
    player = Player(evaluator, seed=1, resign_threshold=None)
    assert player.choose(state, BLACK, time_budget=0.0).reason == "boltzmann"   # cost unknown yet
    calls = evaluator.successor_calls
    decision = player.choose(state, BLACK, time_budget=0.0)
    assert decision.reason.startswith("instant move")
    assert evaluator.successor_calls == calls                 # nothing was evaluated
    assert state.is_legal(decision.move, BLACK)
    assert player.choose(state, BLACK, time_budget=60.0).reason == "boltzmann"


def test_short_of_time_the_player_averages_fewer_symmetries_before_it_plays_instantly():
    state = GameState(9, Rules(komi=7.0))
    inner = TableEvaluator(default=1.0)
    player = Player(SymmetricEvaluator(inner, 8), seed=1, resign_threshold=None)
    assert player.choose(state, BLACK, time_budget=60.0).reason == "boltzmann"
    assert inner.successor_calls == 1          # the cost unknown yet: timed on one symmetry
    assert player.choose(state, BLACK).reason == "boltzmann"
    assert inner.successor_calls == 9
    player.seconds_per_size[9] = 1.0               # a move costs about a second
    assert player.choose(state, BLACK, time_budget=60.0).reason == "boltzmann"
    assert inner.successor_calls == 17
    player.seconds_per_size[9] = 1.0
    decision = player.choose(state, BLACK, time_budget=1.0)   # half of twice the usual cost
    assert decision.reason == "boltzmann" and inner.successor_calls == 21
    player.seconds_per_size[9] = 1.0
    assert player.choose(state, BLACK, time_budget=0.3).reason == "boltzmann"    # 1 of 8
    assert inner.successor_calls == 22
    player.seconds_per_size[9] = 1.0
    assert player.choose(state, BLACK, time_budget=0.2).reason.startswith("instant move")
    assert inner.successor_calls == 22


# --- display winrate -------------------------------------------------------------------------------------

def test_win_probability_is_a_monotone_map_of_the_score():
    assert win_probability(0.0, 81) == pytest.approx(0.5)
    leads = [-30, -5, -1, 0, 1, 5, 30]
    probabilities = [win_probability(lead, 81) for lead in leads]
    assert probabilities == sorted(probabilities)
    assert win_probability(1.0, 0) > 0.97          # a finished board: a point is a win
    assert win_probability(1.0, 361) < 0.6         # an open 19x19 board: a point is little


# --- dead stones ---------------------------------------------------------------------------------------

def statuses(assessment, size):
    from engine.rules.coords import format_vertex
    return {" ".join(format_vertex(p, size).upper() for p in chain.stones): chain.status
            for chain in assessment.chains}


def test_benson_decides_before_the_network():
    state = game_from(BENSON_WALL)
    # A network that believes the opposite of Benson everywhere.
    ownership = -UniformEvaluator().evaluate(state).ownership
    assessment = deadstones.assess(state, TableEvaluator(ownership=ownership))
    assert statuses(assessment, 5) == {"D5 A4 B4 C4 D4 E4": "alive", "B5": "dead"}
    assert {c.source for c in assessment.chains} == {"benson"}
    assert deadstones.score(state, assessment.dead) == pytest.approx(24.5)


def test_the_ownership_scorer_decides_clear_cases_and_the_board_checks_doubtful_ones():
    # The scorer CSA* replaced, kept for the benchmarks (deadstones.assess_by_ownership).
    diagram = """
        . . . . . . .
        . X X X . . .
        . X . X . . .
        . X X X O . .
        . . . O X O .
        . . . O . O .
        . . . . . . .
        """
    state = game_from(diagram)
    board = state.board
    size = 7
    ownership = np.zeros(board.num_locs)
    ring = board.chain(at("B6", size))   # one eye (C5): not pass-alive
    lone = at("E3", size)                # extending to E2 leaves one liberty: lost either way
    for p in ring + [lone]:
        ownership[p] = 0.1               # doubtful: the board check decides
    for p in board.stones(WHITE):
        ownership[p] = -0.9              # clearly White's: alive
    assessment = deadstones.assess_by_ownership(state, TableEvaluator(ownership=ownership))
    by_stone = {p: chain for chain in assessment.chains for p in chain.stones}
    assert by_stone[lone].status == "dead" and by_stone[lone].source == "board check"
    assert by_stone[ring[0]].status == "alive" and by_stone[ring[0]].source == "board check"
    for chain in assessment.chains:
        if chain.colour == WHITE:
            assert chain.status == "alive" and chain.source == "network"
    # Leaning the other way, the doubtful ring (many liberties, no quick capture) dies.
    for p in ring:
        ownership[p] = -0.1
    by_stone = {p: c for c in deadstones.assess_by_ownership(state, TableEvaluator(ownership=ownership)).chains
                for p in c.stones}
    assert by_stone[ring[0]].status == "dead" and by_stone[ring[0]].source == "board check"
    # The network alone decides when it is sure.
    for p in ring:
        ownership[p] = -0.8
    by_stone = {p: c for c in deadstones.assess_by_ownership(state, TableEvaluator(ownership=ownership)).chains
                for p in c.stones}
    assert by_stone[ring[0]].status == "dead" and by_stone[ring[0]].source == "network"
    assert board.stones(BLACK) and state.board.hash == board.hash   # the reading left no trace


def test_seki_is_recognised():
    state = game_from(SEKI)
    evaluator = UniformEvaluator()
    assessment = deadstones.assess(state, evaluator)
    assert statuses(assessment, 5) == {"A3 B3 C3 D3 E3": "alive",
                                       "A2 B2 C2 D2 E2": "seki", "B1 C1 D1": "seki"}
    assert deadstones.format_score(deadstones.score(state, assessment.dead)) == "W+13.5"


def test_format_score():
    assert deadstones.format_score(3.5) == "B+3.5"
    assert deadstones.format_score(-0.5) == "W+0.5"
    assert deadstones.format_score(0.0) == "0"
    assert deadstones.format_score(12.0) == "B+12.0"
