"""Teire: territory points their owner must fill before a territory count (a false eye that is
the only inside liberty of a chain), shared by the count (engine/scoring/deadstones.py, where
rules with teire leave them out) and CSA*'s doubtful flag (engine/scoring/csa.py: a board with
such a point is counted one point apart by rules with and without teire, and by players who
filled it or did not).

Reading order: `must_fill()` on a board whose dead stones are off and whose territory is known;
`teire_points()` does both from the board and the dead stones, with `without_dead()` and
`territory()`, which the count shares.
"""
from engine.rules.board import BLACK, EMPTY, WALL, WHITE, opponent
from engine.rules.game import empty_regions


def must_fill(board, colours, owner_of):
    """Territory points their owner must fill before the count (teire): a false eye (living
    opponent stones on two of its diagonals, one at the edge) that is the only liberty inside
    its owner's territory of a chain with liberties outside it, which the opponent can fill to
    put the chain in atari. `colours`: the board with the dead stones taken off; `owner_of`:
    the territory, point -> colour."""
    stride = board.stride
    seen, points = set(), set()
    for p in board.points():
        colour = colours[p]
        if colour not in (BLACK, WHITE) or p in seen:
            continue
        chain = board.chain(p)
        seen.update(chain)
        liberties = {q for s in chain for q in (s - stride, s - 1, s + 1, s + stride)
                     if colours[q] == EMPTY}
        inside = [q for q in liberties if owner_of.get(q) == colour]
        if len(inside) == 1 and len(liberties) > 1 and \
                false_eye(inside[0], colour, colours, stride):
            points.add(inside[0])
    return points


def false_eye(p, owner, colours, stride):
    """Whether point p of owner's is a false eye: living opponent stones on two of its
    diagonals, or on one at the edge."""
    diagonals = [colours[q] for q in (p - stride - 1, p - stride + 1, p + stride - 1,
                                      p + stride + 1)]
    enemies = sum(c == opponent(owner) for c in diagonals)
    return enemies >= (1 if WALL in diagonals else 2)


def without_dead(board, dead=()):
    """(colours, dead_count): the board's colour at every loc (WALL off the board) with the
    chains of `dead` stones taken off (one stone marks its chain), and how many stones of each
    colour that took off."""
    colours = [WALL] * board.num_locs
    for p in board.points():
        colours[p] = board.get(p)
    dead_count = {BLACK: 0, WHITE: 0}
    for p in dead:
        if colours[p] in (BLACK, WHITE):
            for q in board.chain(p):
                if colours[q] != EMPTY:
                    dead_count[colours[q]] += 1
                    colours[q] = EMPTY
    return colours, dead_count


def territory(board, colours, counts=lambda region: True):
    """point -> colour of the empty regions of `colours` that reach one colour only, and for
    which `counts(region)` holds."""
    owner_of = {}
    for region, borders in empty_regions(board, colours):
        if len(borders) == 1 and counts(region):
            owner = next(iter(borders))
            for p in region:
                owner_of[p] = owner
    return owner_of


def teire_points(board, dead=()):
    """must_fill() of the board with the `dead` stones (their chains) taken off, its
    territory being the empty regions that reach one colour only."""
    colours, _ = without_dead(board, dead)
    return must_fill(board, colours, territory(board, colours))
