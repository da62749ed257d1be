"""The tactics layer's other modules from Python (engine/tactics/selfatari.pyx, nakade.pyx): the
self-atari the playouts never play and the vital point of a three-point eye space, on diagrams.
The ladder reader has test_ladder.py beside this file; the playouts that use all three,
tests/unit/search/test_search.py."""
import pytest

from engine.rules.board import BLACK, WHITE
from engine.tactics.nakade import vital_point
from engine.tactics.selfatari import is_self_atari
from tests.diagrams import load_board, vertex

# White's bent three B2-A2-A1 in the corner, closed by C2; and an open space on the right.
BENT = """
    . . . . .
    X X X X .
    O O O X .
    . . O X .
    . O O X .
"""


def test_self_atari_of_a_chain_but_not_of_a_lone_stone_or_a_capture():
    board = load_board("""
        . . . . .
        . . . . .
        . O O . .
        O X . O .
        . O . . .
    """)
    # C2 joins B2 (in atari at C2) and leaves B2-C2 the one liberty C1
    assert is_self_atari(board, vertex("C2", 5), BLACK) is True
    assert is_self_atari(board, vertex("C1", 5), BLACK) is False    # a lone stone may be thrown in
    assert is_self_atari(board, vertex("E2", 5), WHITE) is False    # D2 then has five liberties
    capture = load_board("""
        . . . . .
        . . . . .
        . O O X .
        O X . O X
        . O . X .
    """)
    assert is_self_atari(capture, vertex("C2", 5), BLACK) is False  # it captures D2


def test_vital_point_of_straight_and_bent_three():
    straight = load_board("""
        . . . . .
        X X X X X
        O O O O X
        . . . O X
        O O O O X
    """)
    for point in ("A2", "B2", "C2"):
        assert vital_point(straight, vertex(point, 5), BLACK) == vertex("B2", 5)
    bent = load_board(BENT)
    for point in ("A1", "A2", "B2"):
        assert vital_point(bent, vertex(point, 5), BLACK) == vertex("A2", 5)
    # the space is White's: White does not play nakade in it, and an open area has no vital point
    assert vital_point(bent, vertex("A2", 5), WHITE) is None
    assert vital_point(bent, vertex("E3", 5), BLACK) is None


def test_bad_arguments():
    board = load_board(BENT)
    with pytest.raises(ValueError):
        vital_point(board, vertex("B1", 5), BLACK)          # a stone
    with pytest.raises(ValueError):
        is_self_atari(board, vertex("A1", 5), 3)
