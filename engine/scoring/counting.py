"""Counting a finished board with a set of dead stones taken off, in the two ways CSA*
(engine/scoring/csa.py) compares: by flood fill (an empty region belongs to a colour when only
that colour borders it) and by distance (an empty point belongs to the colour whose stones are
nearer). The scores are Black's area minus White's minus komi."""
from engine.rules.board import BLACK, EMPTY, WALL, WHITE
from engine.rules.game import empty_regions


def _colours_after_removal(board, dead):
    colours = [WALL] * board.num_locs
    for p in board.points():
        colours[p] = board.get(p)
    for p in dead:
        colours[p] = EMPTY
    return colours


def area_map(board, dead=()):
    """Owner of every loc by flood fill after `dead` stones are taken off: BLACK, WHITE, or
    EMPTY for neutral points (and WALL off the board)."""
    colours = _colours_after_removal(board, dead)
    owner = list(colours)
    for region, borders in empty_regions(board, colours):
        value = borders.pop() if len(borders) == 1 else EMPTY
        for p in region:
            owner[p] = value
    return owner


def distance_map(board, dead=()):
    """Owner of every loc by distance (breadth first through empty points) to the nearest
    remaining stone of each colour: BLACK, WHITE, or EMPTY when both are equally near or
    neither is reachable (and WALL off the board)."""
    colours = _colours_after_removal(board, dead)
    stride = board.stride
    unreached = len(colours)
    distances = {}
    for colour in (BLACK, WHITE):
        distance = [unreached] * len(colours)
        frontier = [p for p in board.points() if colours[p] == colour]
        step = 0
        while frontier:
            step += 1
            following = []
            for p in frontier:
                for q in (p - stride, p - 1, p + 1, p + stride):
                    if colours[q] == EMPTY and distance[q] == unreached:
                        distance[q] = step
                        following.append(q)
            frontier = following
        distances[colour] = distance
    owner = list(colours)
    black, white = distances[BLACK], distances[WHITE]
    for p in board.points():
        if colours[p] == EMPTY:
            owner[p] = BLACK if black[p] < white[p] else WHITE if white[p] < black[p] else EMPTY
    return owner


def count(owner, points, komi):
    black = sum(1 for p in points if owner[p] == BLACK)
    white = sum(1 for p in points if owner[p] == WHITE)
    return black - white - komi


def score_by_flood_fill(board, komi, dead=()):
    return count(area_map(board, dead), board.points(), komi)


def score_by_distance(board, komi, dead=()):
    return count(distance_map(board, dead), board.points(), komi)
