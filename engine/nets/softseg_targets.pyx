# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The soft-segmentation network's rich reinforcement signal (Enzenberger 2003, section 2.1): the
targets of its 21 outputs per point (softseg_layout.pxd's columns), observed on a board during a
game or final at its end, and the change of frame between the two sides to move.

Reading order: rich_signal() (fill_rich_signal(): eyes_and_labels() for each colour's eyes and
connection components, area_owners() for the final count), then events_of() (the trainer's
compact storage) and the swap_frame*() functions. The network is softseg_forward.pyx and
softseg.pyx; engine/training/ plays and trains with these targets.
"""

import numpy as np

from engine.rules.board cimport Board
from engine.nets.softseg_layout cimport (NUM_FIELDS, NUM_SOFTSEG_OUTPUTS, OUT_EYE, OUT_LOCAL,
                                         OUT_EVAL, field_offset, swap_column)
from engine.rules.types cimport (EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE,
                                 WALL as C_WALL, MAX_LOCS)

# the columns of the other side's frame (swap_column()), for numpy and for nogil code
_SWAP_COLUMNS = np.array([swap_column(k) for k in range(NUM_SOFTSEG_OUTPUTS)])
cdef int SWAP_COLUMN[NUM_SOFTSEG_OUTPUTS]
for _column in range(NUM_SOFTSEG_OUTPUTS):
    SWAP_COLUMN[_column] = swap_column(_column)


def check_colour(int colour):
    if colour != C_BLACK and colour != C_WHITE:
        raise ValueError(f"colour must be BLACK (1) or WHITE (2), not {colour}")


cdef void swap_outputs(const double *values, double *swapped, int num_locs) noexcept nogil:
    # swap_frame() of values (num_locs x 21) into swapped
    cdef int p, k
    for p in range(num_locs):
        for k in range(NUM_SOFTSEG_OUTPUTS):
            swapped[k] = values[SWAP_COLUMN[k]]
        swapped[OUT_EVAL] = 1.0 - swapped[OUT_EVAL]
        values += NUM_SOFTSEG_OUTPUTS
        swapped += NUM_SOFTSEG_OUTPUTS


cdef int eyes_and_labels(Board board, int colour, unsigned char *eye, int *label,
                         int *scratch) noexcept nogil:
    # Section 2.1's single-point eyes of colour (eye[loc]: an empty point whose neighbours are
    # all stones of one block, or of two blocks that share another such point) and colour's
    # connection components (label[loc]: the 4-connected sets of its stones and eyes, numbered in
    # loc order; -1 outside). Returns the number of components. scratch: 4 * MAX_LOCS ints.
    cdef int num_locs = board.num_locs, p, q, i, j, n, count = 0, top, num_pairs = 0
    cdef int heads[4]
    cdef int *pair_low = scratch              # the two blocks around a two-block candidate
    cdef int *pair_high = scratch + MAX_LOCS
    cdef int *pair_point = scratch + 2 * MAX_LOCS
    cdef int *stack = scratch + 3 * MAX_LOCS
    cdef bint candidate
    for p in range(num_locs):
        eye[p] = False
        label[p] = -1
    for p in range(num_locs):
        if board.colour[p] != C_EMPTY:
            continue
        n = 0
        candidate = True
        for i in range(4):
            q = p + board.neighbour_offset[i]
            if board.colour[q] == C_WALL:
                continue
            if board.colour[q] != colour:
                candidate = False
                break
            for j in range(n):
                if heads[j] == board.chain_head[q]:
                    break
            else:
                heads[n] = board.chain_head[q]
                n += 1
        if not candidate:
            continue
        if n == 1:
            eye[p] = True
        elif n == 2:
            pair_low[num_pairs] = min(heads[0], heads[1])
            pair_high[num_pairs] = max(heads[0], heads[1])
            pair_point[num_pairs] = p
            num_pairs += 1
    for i in range(num_pairs):                # two blocks sharing another two-block point
        for j in range(num_pairs):
            if j != i and pair_low[j] == pair_low[i] and pair_high[j] == pair_high[i]:
                eye[pair_point[i]] = True
                break
    for p in range(num_locs):
        if label[p] >= 0 or not (board.colour[p] == colour or eye[p]):
            continue
        label[p] = count
        stack[0] = p
        top = 1
        while top > 0:
            top -= 1
            q = stack[top]
            for i in range(4):
                j = q + board.neighbour_offset[i]
                if label[j] < 0 and (board.colour[j] == colour or eye[j]):
                    label[j] = count
                    stack[top] = j
                    top += 1
        count += 1
    return count


cdef void area_owners(Board board, int to_move, double *owner, int *scratch) noexcept nogil:
    # owner[loc] per on-board point: 1 if to_move's area (its stone, or an empty region bordered
    # by its stones alone), 0 if the other's, 0.5 if neutral (Tromp-Taylor). scratch: 2 * MAX_LOCS
    cdef int num_locs = board.num_locs, p, q, x, i, top, size, borders, colour
    cdef int *region = scratch
    cdef int *seen = scratch + MAX_LOCS
    cdef double value
    for p in range(num_locs):
        seen[p] = False
    for p in range(num_locs):
        colour = board.colour[p]
        if colour == C_WALL or seen[p]:
            continue
        if colour != C_EMPTY:
            owner[p] = 1.0 if colour == to_move else 0.0
            continue
        seen[p] = True
        region[0] = p
        size = 1
        top = 0
        borders = 0                           # bit colour: a stone of colour borders the region
        while top < size:
            x = region[top]
            top += 1
            for i in range(4):
                q = x + board.neighbour_offset[i]
                colour = board.colour[q]
                if colour == C_EMPTY and not seen[q]:
                    seen[q] = True
                    region[size] = q
                    size += 1
                elif colour == C_BLACK or colour == C_WHITE:
                    borders |= 1 << colour
        if borders == 1 << to_move:
            value = 1.0
        elif borders == 1 << (3 - to_move):
            value = 0.0
        else:
            value = 0.5
        for i in range(size):
            owner[region[i]] = value


def eyes_and_components(Board board, int colour):
    """(eye, component): per loc, whether it is a single-point eye of colour as section 2.1
    defines it (an empty point whose neighbours are all stones of one block, or of two blocks
    that share another such point), and the label of colour's connection component (the
    4-connected sets of colour's stones and eyes, numbered in loc order; -1 outside)."""
    check_colour(colour)
    cdef unsigned char eye_at[MAX_LOCS]
    cdef int label_at[MAX_LOCS]
    cdef int scratch[4 * MAX_LOCS]
    cdef int p, num_locs = board.num_locs
    eyes_and_labels(board, colour, eye_at, label_at, scratch)
    eye = np.zeros(num_locs, dtype=bool)
    label = np.empty(num_locs, dtype=np.int64)
    cdef unsigned char[::1] eye_view = eye.view(np.uint8)
    cdef long long[::1] label_view = label
    for p in range(num_locs):
        eye_view[p] = eye_at[p]
        label_view[p] = label_at[p]
    return eye, label


cdef void fill_rich_signal(Board board, int to_move, bint final, double *targets,
                           unsigned char *mask, int *scratch) noexcept nogil:
    # rich_signal() into zeroed targets and mask (num_locs x NUM_SOFTSEG_OUTPUTS); scratch:
    # 4 * MAX_LOCS ints
    cdef int num_locs = board.num_locs, p, q, c, f, k, colour, column, count
    cdef unsigned char eye[MAX_LOCS]
    cdef int label[MAX_LOCS]
    cdef int eyes_in[MAX_LOCS]                # per component, its eyes
    cdef unsigned char alive[2][MAX_LOCS]
    cdef int offsets[NUM_FIELDS]
    cdef double owner[MAX_LOCS]
    cdef double *row
    cdef unsigned char *row_mask
    for f in range(NUM_FIELDS):
        offsets[f] = field_offset(f, board.stride)
    for c in range(2):
        colour = to_move if c == 0 else 3 - to_move
        count = eyes_and_labels(board, colour, eye, label, scratch)
        for k in range(count):
            eyes_in[k] = 0
        for p in range(num_locs):
            alive[c][p] = False
            if eye[p]:
                eyes_in[label[p]] += 1
        for p in range(num_locs):
            if board.colour[p] == C_WALL:
                continue
            row = targets + p * NUM_SOFTSEG_OUTPUTS
            row_mask = mask + p * NUM_SOFTSEG_OUTPUTS
            if eye[p]:
                row[OUT_EYE + c] = 1.0
                row_mask[OUT_EYE + c] = True
            elif final:
                row_mask[OUT_EYE + c] = True
            for f in range(NUM_FIELDS):
                q = p + offsets[f]
                if board.colour[q] == C_WALL:
                    continue
                column = OUT_LOCAL + NUM_FIELDS * c + f
                if label[p] >= 0 and label[q] == label[p]:
                    row[column] = 1.0
                    row_mask[column] = True
                elif final:
                    row_mask[column] = True
            if label[p] >= 0 and eyes_in[label[p]] >= 2:
                alive[c][p] = True
    if final:
        area_owners(board, to_move, owner, scratch)
    for p in range(num_locs):
        if board.colour[p] == C_WALL:
            continue
        row = targets + p * NUM_SOFTSEG_OUTPUTS
        row_mask = mask + p * NUM_SOFTSEG_OUTPUTS
        if alive[0][p]:
            row[OUT_EVAL] = 1.0
            row_mask[OUT_EVAL] = True
        elif alive[1][p]:
            row_mask[OUT_EVAL] = True
        elif final:
            row[OUT_EVAL] = owner[p]
            row_mask[OUT_EVAL] = True


def rich_signal(Board board, int to_move=C_BLACK, bint final=False):
    """The reinforcement signal observed on board, in the frame where to_move is Black:
    (targets (num_locs, 21), mask (num_locs, 21) bool), columns as the outputs (softseg_layout.pxd).
    Observed (final False): only the events present — a single-point eye, a connection of a
    point to a point of its 3x3 window (itself included), a live point (connected to two eyes;
    target 1 alive for to_move, 0 alive for the other) — are masked in, with target 1 (0 for
    the other colour's live points). Final: every on-board output has a target: eyes and
    connections present or not; a point alive for neither colour (a game ended by superko or
    the move cap) takes its area owner (1, 0, or 0.5 when neutral)."""
    check_colour(to_move)
    targets = np.zeros((board.num_locs, NUM_SOFTSEG_OUTPUTS))
    mask = np.zeros((board.num_locs, NUM_SOFTSEG_OUTPUTS), dtype=bool)
    cdef double[:, ::1] target_view = targets
    cdef unsigned char[:, ::1] mask_view = mask.view(np.uint8)
    cdef int scratch[4 * MAX_LOCS]
    fill_rich_signal(board, to_move, final, &target_view[0, 0], &mask_view[0, 0], scratch)
    return targets, mask


def all_alive(Board board):
    """Whether every point of board is alive for one colour (section 2.1: only then may a
    training game pass)."""
    targets, mask = rich_signal(board, C_BLACK, False)
    return bool(mask[board.points(), OUT_EVAL].all())


def own_eyes(Board board, int colour):
    """The single-point eyes of colour (section 2.1's definition), as a boolean array per loc."""
    return eyes_and_components(board, colour)[0]


def swap_frame(values):
    """Outputs or targets (..., 21) seen from the other side to move (a new array)."""
    values = np.asarray(values, dtype=np.float64)
    swapped = values[..., _SWAP_COLUMNS]
    swapped[..., OUT_EVAL] = 1.0 - swapped[..., OUT_EVAL]
    return swapped


def swap_frame_mask(mask):
    return np.asarray(mask)[..., _SWAP_COLUMNS]


def swap_frame_events(events):
    """Observed events int8 (..., 21), -1 where none, seen from the other side to move."""
    events = np.asarray(events)
    swapped = events[..., _SWAP_COLUMNS].copy()
    column = swapped[..., OUT_EVAL]
    swapped[..., OUT_EVAL] = np.where(column >= 0, 1 - column, column)
    return swapped


def events_of(Board board):
    """The observed signal of board in the real-Black frame, as int8 (num_locs, 21): the target
    where an event is present, -1 elsewhere (compact storage for the trainer)."""
    targets, mask = rich_signal(board, C_BLACK, False)
    events = np.where(mask, targets, -1).astype(np.int8)
    return events
