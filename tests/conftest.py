"""Shared helpers for the board and rules tests: positions are written as ASCII diagrams."""
import pytest

from engine.rules.board import Board
from engine.rules.coords import parse_vertex


def load_board(diagram):
    """Board from a diagram (X black, O white, . or + empty; labels ignored), checked for
    internal consistency before any test looks at it."""
    board = Board.from_ascii(diagram)
    board.check_consistency()
    return board


def vertices(text, size):
    """Locs of space-separated GTP vertices, e.g. vertices("C3 D4", 9)."""
    return [parse_vertex(word, size) for word in text.split()]


def vertex(text, size):
    return parse_vertex(text, size)


@pytest.fixture(name="load_board")
def load_board_fixture():
    return load_board
