# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Self-atari: the liberties a move would have, counted without playing it, and the self-atari
the playouts never play (Pachi's tactics/selfatari.c, much reduced).

Reading order: liberties_after(), then is_bad_self_atari() on top of it. Users: the playout
policy (engine/search/playout.pyx: legal moves it may play, its escapes, low-liberty moves and
self-atari correction) and the nakade test beside this module. is_self_atari() is the Python
view, for tests.
"""
from engine.rules.types cimport EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE


cdef int liberties_after(Board board, loc_t p, int colour, int enough) noexcept nogil:
    cdef unsigned int epoch = board.new_mark_epoch()
    cdef int i, j, count = 0, c
    cdef loc_t q, head, stone, r
    board.mark[p] = epoch
    for i in range(4):
        q = p + board.neighbour_offset[i]
        c = board.colour[q]
        if c == C_EMPTY:
            if board.mark[q] != epoch:
                board.mark[q] = epoch
                count += 1
        elif c == 3 - colour:
            if board.in_atari(board.chain_head[q]):
                return enough
    if count >= enough:
        return count
    for i in range(4):
        q = p + board.neighbour_offset[i]
        if board.colour[q] != colour:
            continue
        head = board.chain_head[q]
        stone = head
        while True:
            for j in range(4):
                r = stone + board.neighbour_offset[j]
                if board.colour[r] == C_EMPTY and board.mark[r] != epoch:
                    board.mark[r] = epoch
                    count += 1
                    if count >= enough:
                        return count
            stone = board.next_in_chain[stone]
            if stone == head:
                break
    return count


cdef bint is_bad_self_atari(Board board, loc_t p, int colour) noexcept nogil:
    cdef int i
    cdef bint joins = False
    for i in range(4):
        if board.colour[p + board.neighbour_offset[i]] == colour:
            joins = True
            break
    if not joins:
        return False
    return liberties_after(board, p, colour, 2) < 2


def is_self_atari(Board board, loc_t p, int colour):
    """Whether colour playing at the empty point p leaves a chain of two or more stones with at
    most one liberty (is_bad_self_atari)."""
    if colour != C_BLACK and colour != C_WHITE:
        raise ValueError(f"colour must be BLACK (1) or WHITE (2), not {colour}")
    if not 0 <= p < board.num_locs or board.get(p) != C_EMPTY:
        raise ValueError(f"point {p} is not an empty point of the board")
    return is_bad_self_atari(board, p, colour)
