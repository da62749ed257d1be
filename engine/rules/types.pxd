# The one place for kosumi's C-level types and constants (cimported by every .pyx).
# Python code gets the same values from engine.rules.board (EMPTY, BLACK, WHITE, WALL, PASS).

cdef enum Colour:
    EMPTY = 0
    BLACK = 1
    WHITE = 2
    WALL = 3           # the sentinel in the padded border

# A point is a flat index into the padded (size+2) x (size+2) array:
#   loc = (row + 1) * (size + 2) + (col + 1),  row 0 = the top line as printed, col 0 = column A.
# The evaluator's extended lattice (board plus a one-point border) uses the same indices.
ctypedef int loc_t

cdef enum:
    PASS_LOC = -1      # the pass move
    NO_LOC = -2        # "no point" (no ko, no move)
    MIN_SIZE = 2
    MAX_SIZE = 25
    MAX_STRIDE = 27    # MAX_SIZE + 2
    MAX_LOCS = 729     # MAX_STRIDE * MAX_STRIDE
