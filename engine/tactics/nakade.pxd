# Nakade: the contracts of engine/tactics/nakade.pyx. Reads the board without changing it.

from engine.rules.board cimport Board
from engine.rules.types cimport loc_t

cdef loc_t nakade_point(Board board, loc_t q, int colour) noexcept nogil
# The middle point of the empty region holding the empty point q when that region has exactly
# three points (straight or bent) and only the opponent's stones and the edge surround it: the
# vital point of the opponent's three-point eye space, where colour plays nakade. NO_LOC
# otherwise. (The move may still be illegal or an own eye's fill: the caller checks.)
