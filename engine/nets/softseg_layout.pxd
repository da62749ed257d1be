# NeuroGo 3's soft-segmentation network (Enzenberger 2003, section 2): the layout its modules share
# (softseg_pathfinder.pyx, softseg_forward.pyx, softseg.pyx, softseg_targets.pyx). Constants and
# small inline helpers only: there is no softseg_layout.pyx.
#
# Lattice. Arrays are indexed by loc on the padded (size+2)^2 lattice of engine/rules/types.pxd; only
# on-board cells (cells[0..num_cells), in row-major order) carry activations, border cells stay zero.
#
# Fields. The 3x3 window of a point p lists its points in one order (Figure 3's field index):
#   0 O (0,0)  1 E (1,0)  2 N (0,1)  3 W (-1,0)  4 S (0,-1)  5 NE (1,1)  6 NW (-1,1)  7 SW (-1,-1)
#   8 SE (1,-1), as (east, north) vectors; loc of field f = p + field_offset(f, stride).
#
# Point types (Figure 2), in the frame where the side to move is Black:
#   0 empty corner, 1 empty edge next to a corner, 2 other empty edge, 3 empty point diagonal from a
#   corner, 4 other empty second-line point, 5 empty point on line 3 or higher, 6 black (own)
#   stone, 7 white (opponent) stone; -1 off the board.
#
# Outputs (the trained units) per point, NUM_SOFTSEG_OUTPUTS = 21 columns:
#   0, 1 simple eye own / opponent; 2 + 9c + f local connection of colour c (0 own, 1 opponent)
#   to field f; 20 evaluation (alive for the side to move).
# Seen from the other side to move (swap_column()), the colour columns swap and the evaluation
# complements.

cdef enum:
    NUM_TYPES = 8
    NUM_FIELDS = 9
    NUM_LOCAL = 18                # local connection units per point (2 colours x 9 fields)
    NUM_SOFTSEG_OUTPUTS = 21
    OUT_EYE = 0
    OUT_LOCAL = 2
    OUT_EVAL = 20


cdef inline int field_dx(int f) noexcept nogil:
    # the east component of field f's vector
    if f == 1 or f == 5 or f == 8:
        return 1
    if f == 3 or f == 6 or f == 7:
        return -1
    return 0


cdef inline int field_dy(int f) noexcept nogil:
    # the north component of field f's vector
    if f == 2 or f == 5 or f == 6:
        return 1
    if f == 4 or f == 7 or f == 8:
        return -1
    return 0


cdef inline int field_offset(int f, int stride) noexcept nogil:
    # the loc offset of field f on a lattice of this stride (north is one row up)
    return field_dx(f) - field_dy(f) * stride


cdef inline int swap_column(int k) noexcept nogil:
    # the column that output column k comes from in the other side's frame (the evaluation column
    # also complements: 1 - value)
    if k < OUT_LOCAL:
        return 1 - k
    if k < OUT_LOCAL + NUM_FIELDS:
        return k + NUM_FIELDS
    if k < OUT_EVAL:
        return k - NUM_FIELDS
    return k


cdef inline int board_cells(int size, int *cells, int *cell_index, int num_locs) noexcept nogil:
    # The on-board cells of a size x size board in row-major order into cells[], and every loc's
    # index into it (-1 off the board) into cell_index[0..num_locs); returns their number.
    cdef int p, row, col, n = 0, stride = size + 2
    for p in range(num_locs):
        cell_index[p] = -1
    for row in range(size):
        for col in range(size):
            p = (row + 1) * stride + col + 1
            cell_index[p] = n
            cells[n] = p
            n += 1
    return n
