"""Area (Tromp-Taylor) and territory counting, with and without dead stones."""
import pytest

from engine.rules.board import WHITE, Board
from engine.rules.game import GameState, Rules, area_score, territory_score
from tests.diagrams import load_board, vertex, vertices

SPLIT_BOARD = """
    . X O . .
    . X O . .
    . X O . .
    . X O . .
    . X O . .
"""

# The same, with a white stone in Black's area (A3) and a black one in White's (E1).
INVADED_BOARD = """
    . X O . .
    . X O . .
    O X O . .
    . X O . .
    . X O . X
"""


def test_area_counts_stones_and_single_coloured_regions():
    # Black: 5 stones + 5 points; White: 5 stones + 10 points.
    assert area_score(load_board(SPLIT_BOARD), komi=0.5) == 10 - 15 - 0.5


def test_empty_board_is_all_neutral():
    assert area_score(Board(9), komi=7.0) == -7.0


def test_region_touching_both_colours_is_neutral():
    board = load_board("""
        X . O
        X . O
        X . O
    """)
    assert area_score(board, komi=0) == 0


def test_area_without_dead_stones_leaves_invaded_regions_neutral():
    # A3 splits column A into two regions that touch White: neither is Black's; E1 makes the
    # D/E region touch Black: not White's. Only the stones count, 6 each.
    assert area_score(load_board(INVADED_BOARD), komi=0) == 6 - 6


def test_dead_stones_become_the_opponents_area():
    board = load_board(INVADED_BOARD)
    dead = vertices("A3 E1", 5)
    assert area_score(board, komi=0.5, dead=dead) == 10 - 15 - 0.5
    # The board itself is not changed.
    assert sorted(board.stones(WHITE)) == sorted(vertices("C5 C4 C3 C2 C1 A3", 5))


def test_one_stone_marks_its_whole_chain_dead():
    board = load_board("""
        . X O . .
        . X O . .
        . X O . .
        . X O X X
        . X O . .
    """)
    assert area_score(board, 0, dead=[vertex("D2", 5)]) == area_score(board, 0, dead=vertices("D2 E2", 5))
    assert area_score(board, 0, dead=[vertex("E2", 5)]) == 10 - 15


@pytest.mark.parametrize("bad", [[0], [vertex("A5", 5)], ["C3"], [10 ** 6]])
def test_dead_set_must_name_stones_on_the_board(bad):
    with pytest.raises(ValueError):
        area_score(load_board(SPLIT_BOARD), 0, dead=bad)


def test_territory_counts_surrounded_points_and_prisoners():
    board = load_board(SPLIT_BOARD)
    # Black: territory 5 + 2 prisoners; White: territory 10 + 3 prisoners.
    assert territory_score(board, 6.5, captures_black=2, captures_white=3) == 7 - 13 - 6.5


def test_territory_with_dead_stones_counts_them_as_prisoners():
    board = load_board(INVADED_BOARD)
    # Black: territory 5 (column A incl. A3) + 2 captured + 1 dead white stone.
    # White: territory 10 (columns D, E incl. E1) + 3 captured + 1 dead black stone.
    score = territory_score(board, 6.5, captures_black=2, captures_white=3, dead=vertices("A3 E1", 5))
    assert score == (5 + 2 + 1) - (10 + 3 + 1) - 6.5


def test_territory_without_dead_stones_gives_no_territory_next_to_them():
    board = load_board(INVADED_BOARD)
    assert territory_score(board, 0, captures_black=0, captures_white=0) == 0


def test_game_state_scores_with_its_own_rules_and_captures():
    diagram = """
        . . . . .
        . . O . .
        . O X . .
        . . O . .
        . . . . .
    """
    area_game = GameState.from_board(load_board(diagram), WHITE, Rules(scoring="area", komi=0.5))
    territory_game = GameState.from_board(load_board(diagram), WHITE, Rules(scoring="territory", komi=0.5))
    for game in (area_game, territory_game):
        game.play(vertex("D3", 5))          # captures C3
    # Area: the 4 white stones and all 21 empty points (they reach only white).
    assert area_game.score() == -25.5
    # Territory: the 21 empty points + 1 prisoner.
    assert territory_game.score() == -22.5
    # D3 marked dead: its point joins White's territory (22) and it is Black's prisoner.
    assert territory_game.score(dead=[vertex("D3", 5)]) == (0 + 0 + 1) - (22 + 1 + 0) - 0.5
