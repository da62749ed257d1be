"""Ladder reader: captured ladders, breakers, edge ladders, escape by capturing, depth bound."""
import pytest

from conftest import LADDER, load_board, vertex, with_stones
from engine.rules.board import BLACK, PASS, Board
from engine.rules.game import ladder_captured


def read(diagram, stone, attacker_moves_first, **options):
    """ladder_captured on the diagram, checking that the board is left exactly as it was."""
    board = load_board(diagram)
    before = (str(board), board.hash, board.ko_loc, board.move_count)
    result = ladder_captured(board, vertex(stone, board.size), attacker_moves_first, **options)
    assert (str(board), board.hash, board.ko_loc, board.move_count) == before
    board.check_consistency()
    return result


def test_ladder_is_captured():
    assert read(LADDER, "C3", attacker_moves_first=False)
    assert read(LADDER, "C3", attacker_moves_first=True)      # in atari: simply taken


def test_two_liberty_chain_is_captured_only_if_the_attacker_starts():
    extended = with_stones(LADDER, {"C4": "O"})
    assert read(extended, "C3", attacker_moves_first=True)
    assert not read(extended, "C4", attacker_moves_first=False)   # one more move gives 3 liberties


@pytest.mark.parametrize("breaker", ["E5", "F6", "G7", "H8"])
def test_white_stone_on_the_path_breaks_the_ladder(breaker):
    assert not read(with_stones(LADDER, {breaker: "O"}), "C3", attacker_moves_first=False)


@pytest.mark.parametrize("elsewhere", ["A9", "H2", "J5"])
def test_white_stone_off_the_path_does_not_break_it(elsewhere):
    assert read(with_stones(LADDER, {elsewhere: "O"}), "C3", attacker_moves_first=False)


def test_black_stone_on_the_path_does_not_help_white():
    assert read(with_stones(LADDER, {"G7": "X"}), "C3", attacker_moves_first=False)


# White B1 runs along the first line under black's ataris from the second line until the
# corner: an edge ladder (B2, C1; C2, D1; ... H2, J1; J2 captures).
EDGE_LADDER = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    X . . . . . . . .
    X . . . . . . . .
    X O . . . . . . .
"""


def test_edge_ladder_is_captured_at_the_corner():
    assert read(EDGE_LADDER, "B1", attacker_moves_first=True)
    assert not read(EDGE_LADDER, "B1", attacker_moves_first=False)   # B2 first: three liberties


def test_edge_ladder_breaker_on_the_second_line():
    assert not read(with_stones(EDGE_LADDER, {"G2": "O"}), "B1", attacker_moves_first=True)


def test_second_line_stone_dies_against_the_edge():
    # A2 in atari can only extend to A1, where it has a single liberty again.
    assert read("""
        . . . . .
        . . . . .
        X X . . .
        O X . . .
        . . . . .
    """, "A2", attacker_moves_first=False)


def test_defender_escapes_by_capturing_an_attacking_stone_in_atari():
    # Black C2 is in atari between white B2 and D2: white takes it at C1 instead of running.
    assert not read(with_stones(LADDER, {"B2": "O", "D2": "O"}), "C3", attacker_moves_first=False)
    # With C2 still having two liberties the ladder works.
    assert read(with_stones(LADDER, {"B2": "O"}), "C3", attacker_moves_first=False)


def test_ko_the_attacker_may_not_retake_is_not_a_capture():
    board = load_board("""
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .
    """)
    board.play(vertex("C4", 5), BLACK)      # takes the ko: C4 has one liberty, barred to white
    assert not ladder_captured(board, vertex("C4", 5), attacker_moves_first=True)
    board.play(PASS, BLACK)                 # the pass lifts the ko
    assert ladder_captured(board, vertex("C4", 5), attacker_moves_first=True)


def test_depth_bound_leaves_a_long_ladder_unresolved():
    assert not read(LADDER, "C3", attacker_moves_first=False, max_depth=4)
    assert read(LADDER, "C3", attacker_moves_first=False, max_depth=40)


def test_chain_with_three_liberties_is_not_a_ladder():
    board = load_board("""
        . . . . .
        . . . . .
        . X O . .
        . . . . .
        . . . . .
    """)
    assert not ladder_captured(board, vertex("C3", 5), True)
    assert not ladder_captured(board, vertex("C3", 5), False)


def test_bad_arguments():
    board = load_board(LADDER)
    with pytest.raises(ValueError):
        ladder_captured(board, vertex("E5", 9))                 # empty point
    with pytest.raises(ValueError):
        ladder_captured(board, vertex("C3", 9), max_depth=-1)
    with pytest.raises(ValueError):
        ladder_captured(Board(5), 0)                            # the border
