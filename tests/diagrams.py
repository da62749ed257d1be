"""Positions for the tests, written as ASCII diagrams (X black, O white, . or + empty), and the
board as a grid: load_board(), vertex(), vertices(), with_stones(), symmetries(), LADDER.
Imported as `from tests.diagrams import ...`; tests/conftest.py also offers load_board as a
fixture."""
import numpy as np

from engine.rules.board import BLACK, EMPTY, WHITE, Board
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


# White C3 is in atari (liberty C4). Running out, it is chased up and to the right, with
# 2 liberties after every step, until the top edge.
LADDER = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . X . . . . . . .
    . X O X . . . . .
    . . X . . . . . .
    . . . . . . . . .
"""


def with_stones(diagram, changes):
    """The diagram with stones added: changes maps a GTP vertex to "X" or "O" (or "." to empty)."""
    board = load_board(diagram)
    symbol = {EMPTY: ".", BLACK: "X", WHITE: "O"}
    rows = [[symbol[board.get(board.loc(r, c))] for c in range(board.size)]
            for r in range(board.size)]
    for text, stone in changes.items():
        row, col = board.row_col(vertex(text, board.size))
        rows[row][col] = stone
    return "\n".join(" ".join(row) for row in rows)


def symmetries(grid):
    """The 8 images of a (stride, stride, ...) array: rot90^k, then optionally mirrored."""
    images = []
    for k in range(4):
        rotated = np.rot90(grid, k)
        images.append(np.ascontiguousarray(rotated))
        images.append(np.ascontiguousarray(np.fliplr(rotated)))
    return images


def board_from_grid(grid):
    """The board of a (size, size) array of EMPTY, BLACK and WHITE."""
    symbol = {EMPTY: ".", BLACK: "X", WHITE: "O"}
    return Board.from_ascii("\n".join("".join(symbol[int(c)] for c in row) for row in grid))


def board_grid(board):
    """The board as a (size, size) array of EMPTY, BLACK and WHITE."""
    stride = board.stride
    return np.array([[board.get(r * stride + c) for c in range(1, stride - 1)]
                     for r in range(1, stride - 1)])

