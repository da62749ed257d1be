# Self-atari and the liberties of a move not played: the contracts of engine/tactics/selfatari.pyx.
# Both read the board without changing it (but for its mark scratch, Board.new_mark_epoch).

from engine.rules.board cimport Board
from engine.rules.types cimport loc_t

cdef int liberties_after(Board board, loc_t p, int colour, int enough) noexcept nogil
# The distinct liberties of colour's chain at the empty point p if colour played there, counted
# up to enough (a capture counts as enough: it frees at least the captured point).
cdef bint is_bad_self_atari(Board board, loc_t p, int colour) noexcept nogil
# Playing p would leave a chain of two or more stones with one liberty or none. (A lone stone
# may be thrown in: that is how eyes are destroyed.)
