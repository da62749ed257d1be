# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Nakade: the vital point of a three-point eye space (Fuego's playout nakade, Pachi's
tactics/nakade.c for the smallest spaces).

Reading order: nakade_point(). A straight or bent three-point space is one eye if its owner
plays the middle and can be reduced to one if the other side does, so both want the middle.
Users: the playout policy's nakade step (engine/search/playout.pyx, "fuego" tactics).
vital_point() is the Python view, for tests.
"""
from engine.rules.types cimport EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE, NO_LOC


cdef inline bint adjacent(Board board, loc_t p, loc_t q) noexcept nogil:
    # the padding column keeps points on the board that differ by 1 in one row
    return p - q == 1 or q - p == 1 or p - q == board.stride or q - p == board.stride


cdef loc_t nakade_point(Board board, loc_t q, int colour) noexcept nogil:
    cdef int j, k, size, c
    cdef bint open_space
    cdef loc_t region[3]
    cdef loc_t r, t, middle
    # flood q's empty region, giving up at a fourth point or a stone of colour's (the three
    # points found are their own marks)
    region[0] = q
    size = 1
    k = 0
    open_space = False
    while k < size and not open_space:
        r = region[k]
        k += 1
        for j in range(4):
            t = r + board.neighbour_offset[j]
            c = board.colour[t]
            if c == colour:
                open_space = True
                break
            if c == C_EMPTY and t != region[0] and (size < 2 or t != region[1]) and \
                    (size < 3 or t != region[2]):
                if size == 3:
                    open_space = True
                    break
                region[size] = t
                size += 1
    if open_space or size != 3:
        return NO_LOC
    for k in range(3):        # straight or bent, the middle touches the other two
        middle = region[k]
        if adjacent(board, middle, region[(k + 1) % 3]) and \
                adjacent(board, middle, region[(k + 2) % 3]):
            return middle
    return NO_LOC


def vital_point(Board board, loc_t q, int colour):
    """nakade_point() of the empty point q for colour: the loc, or None."""
    if colour != C_BLACK and colour != C_WHITE:
        raise ValueError(f"colour must be BLACK (1) or WHITE (2), not {colour}")
    if not 0 <= q < board.num_locs or board.get(q) != C_EMPTY:
        raise ValueError(f"point {q} is not an empty point of the board")
    cdef loc_t middle = nakade_point(board, q, colour)
    return None if middle == NO_LOC else middle
