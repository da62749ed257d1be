"""The 3x3 playout patterns: MoGo's hane, cut and edge shapes (Gelly, Wang, Munos, Teytaud,
"Modification of UCT with patterns in Monte-Carlo Go", 2006), as a table built once.

The table is indexed by a point's neighbourhood as the player to move sees it (playout.pyx
computes the index):

    bits 0-15   the 8 neighbours, 2 bits each, in NEIGHBOUR_ORDER: 0 empty, 1 a stone of the
                player to move, 2 an opponent stone, 3 off the board
    bits 16-19  the 4 orthogonal neighbours (N, E, S, W): 1 if a stone there is in atari

and an entry is 1 where playing the centre is an urgent local move: one of the shapes below in
any of the 8 orientations, for either colour (the shapes are colour-symmetric), or a point next to
a chain in atari (a capture, or an escape that the playout still checks for self-atari).

Pattern language, rows top to bottom, the centre is the move: X and O stones (either colour,
swapped together), `.` empty, `#` off the board, `x` anything but X, `o` anything but O, `?` any.
"""
import functools
import itertools

import numpy as np

NEIGHBOUR_ORDER = ("N", "E", "S", "W", "NE", "SE", "SW", "NW")
# (row, col) of each neighbour in a 3x3 diagram
CELL_OF = {"NW": (0, 0), "N": (0, 1), "NE": (0, 2), "W": (1, 0), "E": (1, 2),
           "SW": (2, 0), "S": (2, 1), "SE": (2, 2)}
EMPTY_CODE, OWN_CODE, OPPONENT_CODE, WALL_CODE = 0, 1, 2, 3
TABLE_SIZE = 1 << 20

SHAPES = {
    "hane, enclosing": ("XOX",
                        "...",
                        "???"),
    "hane, non-cutting": ("XO.",
                          "...",
                          "?.?"),
    "hane, magari": ("XO?",
                     "X..",
                     "x.?"),
    "attachment, diagonal": (".O.",
                             "X..",
                             "..."),
    "cut, unprotected": ("XO?",
                         "O.o",
                         "?o?"),
    "cut, peeped": ("XO?",
                    "O.X",
                    "???"),
    "cut, de": ("?X?",
                "O.O",
                "ooo"),
    "cut, keima": ("OX?",
                   "o.O",
                   "???"),
    "edge, chase": ("X.?",
                    "O.?",
                    "##?"),
    "edge, block side cut": ("OX?",
                             "X.O",
                             "###"),
    "edge, block side connection": ("?X?",
                                    "x.O",
                                    "###"),
    "edge, sagari": ("?XO",
                     "x.x",
                     "###"),
    "edge, cut": ("?OX",
                  "X.O",
                  "###"),
}

# What each pattern letter matches, with X as the player to move (the colour swap adds the rest).
LETTER_CODES = {
    "X": (OWN_CODE,), "O": (OPPONENT_CODE,), ".": (EMPTY_CODE,), "#": (WALL_CODE,),
    "x": (EMPTY_CODE, OPPONENT_CODE, WALL_CODE), "o": (EMPTY_CODE, OWN_CODE, WALL_CODE),
    "?": (EMPTY_CODE, OWN_CODE, OPPONENT_CODE, WALL_CODE),
}
SWAP_COLOURS = str.maketrans("XOxo", "OXox")


def orientations(rows):
    """The 8 rotations and reflections of a 3x3 diagram."""
    grid = [list(row) for row in rows]
    found = []
    for _ in range(4):
        grid = [list(row) for row in zip(*grid[::-1])]          # rotate a quarter turn
        for variant in (grid, [row[::-1] for row in grid]):     # and its mirror image
            found.append(tuple("".join(row) for row in variant))
    return set(found)


def codes_of(rows):
    """Every colour index (bits 0-15) that the diagram matches."""
    options = [LETTER_CODES[rows[r][c]] for r, c in (CELL_OF[name] for name in NEIGHBOUR_ORDER)]
    for combination in itertools.product(*options):
        yield sum(code << (2 * i) for i, code in enumerate(combination))


@functools.lru_cache(maxsize=None)
def colour_matches():
    """uint8 (65536,): 1 where the 8 neighbours' colours match a shape."""
    matches = np.zeros(1 << 16, dtype=np.uint8)
    for rows in SHAPES.values():
        assert len(rows) == 3 and all(len(row) == 3 for row in rows) and rows[1][1] == "."
        for variant in orientations(rows):
            for coloured in (variant, tuple(row.translate(SWAP_COLOURS) for row in variant)):
                matches[list(codes_of(coloured))] = 1
    return matches


@functools.lru_cache(maxsize=None)
def pattern_table():
    """uint8 (TABLE_SIZE,): the playout's table (module docstring); read-only, built once."""
    colours = np.arange(1 << 16)
    stones = np.zeros(1 << 16, dtype=np.int64)    # bit i set: orthogonal neighbour i is a stone
    for i in range(4):
        code = (colours >> (2 * i)) & 3
        stones |= ((code == OWN_CODE) | (code == OPPONENT_CODE)).astype(np.int64) << i
    atari = np.arange(16)[:, None]                 # rows: the atari bits
    table = colour_matches()[None, :] | ((atari & stones[None, :]) != 0)
    table = np.ascontiguousarray(table.astype(np.uint8).reshape(-1))
    table.flags.writeable = False
    return table


def index_of(rows, atari=""):
    """The table index of a concrete diagram (X to move) with the orthogonal neighbours named in
    atari ("N", "E", ...) in atari: for tests and for reading the table."""
    code = {"X": OWN_CODE, "O": OPPONENT_CODE, ".": EMPTY_CODE, "#": WALL_CODE}
    index = 0
    for i, name in enumerate(NEIGHBOUR_ORDER):
        r, c = CELL_OF[name]
        index |= code[rows[r][c]] << (2 * i)
    for i, name in enumerate(NEIGHBOUR_ORDER[:4]):
        if name in atari:
            index |= 1 << (16 + i)
    return index
