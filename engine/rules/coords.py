"""Coordinate conversions, all in one place.

| form          | example (9x9)   | meaning                                                   |
|---------------|-----------------|-----------------------------------------------------------|
| loc           | 41              | flat index into the padded (size+2)^2 board array         |
| (row, col)    | (4, 4)          | row 0 = top line as printed, col 0 = column A             |
| GTP vertex    | "E5", "pass"    | letters A-Z without I, number 1 = bottom line             |
| sgfmill move  | (4, 4) or None  | sgfmill's (row, col) with row 0 = BOTTOM line; None = pass|

loc = (row + 1) * (size + 2) + (col + 1); the pass move is PASS (-1).
"""

PASS = -1
GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # GTP skips I


def loc_of(row, col, size):
    return (row + 1) * (size + 2) + (col + 1)


def row_col(loc, size):
    stride = size + 2
    return loc // stride - 1, loc % stride - 1


def on_board(loc, size):
    if loc < 0:
        return False
    row, col = row_col(loc, size)
    return 0 <= row < size and 0 <= col < size


def board_points(size):
    """Every on-board loc, top row first."""
    return [loc_of(r, c, size) for r in range(size) for c in range(size)]


def parse_vertex(text, size):
    """GTP vertex (any case) -> loc or PASS; ValueError for anything else or off the board."""
    word = text.strip().upper()
    if word == "PASS":
        return PASS
    if len(word) < 2 or word[0] not in GTP_COLUMNS or not word[1:].isdigit():
        raise ValueError(f"invalid vertex {text!r}")
    col = GTP_COLUMNS.index(word[0])
    number = int(word[1:])
    if col >= size or not 1 <= number <= size:
        raise ValueError(f"vertex {text!r} is off the {size}x{size} board")
    return loc_of(size - number, col, size)


def format_vertex(loc, size):
    if loc == PASS:
        return "pass"
    row, col = row_col(loc, size)
    return f"{GTP_COLUMNS[col]}{size - row}"


def to_sgfmill(loc, size):
    """loc -> sgfmill (row-from-bottom, col), or None for a pass."""
    if loc == PASS:
        return None
    row, col = row_col(loc, size)
    return size - 1 - row, col


def from_sgfmill(move, size):
    if move is None:
        return PASS
    row_from_bottom, col = move
    return loc_of(size - 1 - row_from_bottom, col, size)
