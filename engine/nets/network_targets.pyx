# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The Internal Symmetry Network's recurrence weights, rewards and training targets, at numpy level:
liberty_weights() and prior_liberty_weights() (the implicit recurrence, section IV.B), classify(),
point_rewards() (Tables I-III), final_status() and final_targets() (Table IV), rich_targets()
(NeuroGo 3's rich signal, section 2.1), and the frame changes swap_colours*(). The network is
engine/nets/network_forward.pyx and network.pyx, which gives these names too.
"""
import numpy as np

from engine.rules.board cimport Board
from engine.nets.network_forward cimport (NUM_OUTPUTS, NUM_RICH_OUTPUTS, OUT_Z_EMPTY, OUT_Z_WHITE,
                                          OUT_Z_BLACK, OUT_A_EMPTY_WHITE, OUT_A_EMPTY_BLACK,
                                          OUT_A_WHITE, OUT_A_BLACK, WEIGHTS_PER_POINT,
                                          WEIGHT_BLACK_Z, WEIGHT_BLACK_A, WEIGHT_WHITE_Z,
                                          WEIGHT_WHITE_A, liberty_class)
from engine.nets.network_forward import (PRIOR_LIBERTY_A, PRIOR_LIBERTY_Z, SWAP_COMPLEMENT,
                                         SWAP_PERMUTATION)
from engine.rules.types cimport (EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE,
                                 WALL as C_WALL)

# ---------------------------------------------------------------------------------------------
# Recurrence, rewards, targets and frames (numpy level)

def liberty_weights(outputs, int to_move):
    """Recurrence weights (num_locs, 4) in real colours from one evaluation's outputs (made with
    to_move presented as Black): per point [z, a] for black chains then [z, a] for white chains.
    In the frame, a White chain's liberty counts Z+ and A+o, a Black chain's 1 - Z+ and A+."""
    y = np.asarray(outputs, dtype=np.float64)
    if y.ndim != 2 or y.shape[1] not in (NUM_OUTPUTS, NUM_OUTPUTS + NUM_RICH_OUTPUTS):
        raise ValueError(f"outputs must have shape (num_locs, {NUM_OUTPUTS}) (or "
                         f"{NUM_OUTPUTS + NUM_RICH_OUTPUTS} with the rich signal), got {y.shape}")
    if to_move != C_BLACK and to_move != C_WHITE:
        raise ValueError(f"colour must be BLACK (1) or WHITE (2), not {to_move}")
    frame_white = np.stack([y[:, OUT_Z_EMPTY], y[:, OUT_A_EMPTY_WHITE]], axis=1)
    frame_black = np.stack([1.0 - y[:, OUT_Z_EMPTY], y[:, OUT_A_EMPTY_BLACK]], axis=1)
    if to_move == C_BLACK:   # the frame's colours are the real ones
        return np.ascontiguousarray(np.concatenate([frame_black, frame_white], axis=1))
    return np.ascontiguousarray(np.concatenate([frame_white, frame_black], axis=1))


def prior_liberty_weights(int num_locs):
    """Recurrence weights for a position whose predecessor has no evaluation (PRIOR_LIBERTY_Z/A)."""
    weights = np.empty((num_locs, WEIGHTS_PER_POINT))
    weights[:, WEIGHT_BLACK_Z] = weights[:, WEIGHT_WHITE_Z] = PRIOR_LIBERTY_Z
    weights[:, WEIGHT_BLACK_A] = weights[:, WEIGHT_WHITE_A] = PRIOR_LIBERTY_A
    return weights


def classify(double z_sum, double a_sum):
    """Liberty class 0..5 (C1..C6) of a chain with these sums over its liberties."""
    return liberty_class(z_sum, a_sum)


def swap_colours(values):
    """Outputs or targets (..., 7) seen with the other side to move: Z+ -> 1-Z+, Zo <-> 1-Z.,
    A+o <-> A+., Ao <-> A. (a white stone's R^1 and R^0 are minus those of the same stone black)."""
    v = np.asarray(values, dtype=np.float64)
    swapped = v[..., SWAP_PERMUTATION]
    return np.where(SWAP_COMPLEMENT, 1.0 - swapped, swapped)


def swap_colours_mask(mask):
    """A target mask (..., 7) seen with the other side to move."""
    return np.asarray(mask)[..., SWAP_PERMUTATION]


def point_rewards(outputs, cell_states, double c=0.0, double s=1.0):
    """Per-point expected rewards for the frame's White (numpy version of point_reward), from
    outputs (n, 7) and the points' current contents in the frame (EMPTY, BLACK, WHITE)."""
    y = np.asarray(outputs, dtype=np.float64)
    states = np.asarray(cell_states)
    r1 = np.where(states == C_EMPTY, 2 * y[:, 0] - 1,
                  np.where(states == C_WHITE, (2 + c) * y[:, 1] - (1 + c), (2 + c) * y[:, 2] - 1))
    r0 = np.where(states == C_EMPTY, y[:, 3] - y[:, 4],
                  np.where(states == C_WHITE, c * (y[:, 1] - 1) - y[:, 5], c * y[:, 2] + y[:, 6]))
    return s * r1 + (1 - s) * r0


# Table IV, one row per final state of a point (in the frame); None is a blank ("no target").
def target_table(double c):
    """{final state: the 7 targets} of Table IV for capture value c; None marks a blank."""
    return {
        "white_empty": (1.0, None, 1.0, 1.0, 0.0, None, 1.0),
        "white_stone": (1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0),
        "neutral_empty": (0.5, 1.0 / (2 + c), (1 + c) / (2 + c), 0.0, 0.0, c / (2 + c), c / (2 + c)),
        "black_stone": (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
        "black_empty": (0.0, 0.0, None, 0.0, 1.0, 1.0, None),
    }


def final_status(Board board):
    """Per loc: 'black_stone', 'white_stone', 'black_empty' / 'white_empty' (an empty region
    reaching only that colour) or 'neutral_empty'; None off the board. Every stone still on the
    board counts as alive (Tromp-Taylor): the training games are played out."""
    status = [None] * board.num_locs
    stride = board.stride
    for p in board.points():
        colour = board.get(p)
        if colour == C_BLACK:
            status[p] = "black_stone"
        elif colour == C_WHITE:
            status[p] = "white_stone"
    for start in board.points():
        if status[start] is not None:
            continue
        region, stack, reaches = [start], [start], set()
        status[start] = "pending"
        while stack:
            p = stack.pop()
            for q in (p + 1, p - 1, p + stride, p - stride):
                colour = board.get(q)
                if colour == C_EMPTY and status[q] is None:
                    status[q] = "pending"
                    region.append(q)
                    stack.append(q)
                elif colour == C_BLACK or colour == C_WHITE:
                    reaches.add(colour)
        owner = ("black_empty" if reaches == {C_BLACK} else
                 "white_empty" if reaches == {C_WHITE} else "neutral_empty")
        for p in region:
            status[p] = owner
    return status


def final_targets(Board board, double c, int to_move=C_BLACK):
    """Table IV targets (num_locs, 7) and mask (num_locs, 7, bool) from the final position of a
    game, in the frame where to_move is Black (the frame of the position being trained). Off-board
    rows and Table IV's blanks have mask False."""
    if to_move != C_BLACK and to_move != C_WHITE:
        raise ValueError(f"colour must be BLACK (1) or WHITE (2), not {to_move}")
    if not 0.0 <= c:
        raise ValueError(f"capture value c must be >= 0, not {c}")
    table = target_table(c)
    targets = np.zeros((board.num_locs, NUM_OUTPUTS))
    mask = np.zeros((board.num_locs, NUM_OUTPUTS), dtype=bool)
    swap = {"black_stone": "white_stone", "white_stone": "black_stone",
            "black_empty": "white_empty", "white_empty": "black_empty",
            "neutral_empty": "neutral_empty"}
    for p, state in enumerate(final_status(board)):
        if state is None:
            continue
        if to_move == C_WHITE:   # the real white is the frame's Black
            state = swap[state]
        for o, value in enumerate(table[state]):
            if value is not None:
                targets[p, o] = value
                mask[p, o] = True
    return targets, mask


# ---------------------------------------------------------------------------------------------
# The rich reinforcement signal (NeuroGo 3, section 2.1)

def _connection_components(Board board, int colour):
    """Per loc, the label of colour's connection component (-1 outside): the 4-connected sets of
    colour's stones and colour's single-point eyes (NeuroGo: a path of such points connects)."""
    stride = board.stride
    member = np.zeros(board.num_locs, dtype=bool)
    for p in board.points():
        member[p] = board.get(p) == colour or board.is_eye(p, colour)
    label = np.full(board.num_locs, -1, dtype=np.int64)
    count = 0
    for start in board.points():
        if not member[start] or label[start] >= 0:
            continue
        label[start] = count
        stack = [start]
        while stack:
            p = stack.pop()
            for q in (p + 1, p - 1, p + stride, p - stride):
                if 0 <= q < board.num_locs and member[q] and label[q] < 0:
                    label[q] = count
                    stack.append(q)
        count += 1
    return label


def rich_targets(Board board, int to_move=C_BLACK):
    """The rich signal observed on board, in the frame where to_move is Black: targets
    (num_locs, N_RICH_OUTPUTS) in [0, 1] and mask (num_locs, N_RICH_OUTPUTS, bool; the on-board
    cells). Per frame colour X:
      eye              the point is a single-point eye of X (the board's eye rule)
      connected_self   the point is X's stone or eye (connected to itself)
      connected_edges  the fraction of its on-board edge neighbours connected to it by X
      connected_corners  the same for its on-board diagonal neighbours
      alive            the point is connected by X to two of X's single-point eyes
    Two points are connected by X when a path of X's stones and single-point eyes joins them.
    NeuroGo predicts the connection to each of the 8 neighbours; an ISN output is invariant under
    the board's symmetries, so the 8 directions enter as their two D8 orbits (edges, corners),
    each as the fraction connected. Trained by TD like the territory outputs: at the end of a game
    these are the final targets; during the game an eye, connection or live point present on the
    board is an observed event (NeuroGo: the signal comes "when it is created on the board"), and
    a live point stays alive until the end."""
    if to_move != C_BLACK and to_move != C_WHITE:
        raise ValueError(f"colour must be BLACK (1) or WHITE (2), not {to_move}")
    stride = board.stride
    targets = np.zeros((board.num_locs, NUM_RICH_OUTPUTS))
    mask = np.zeros((board.num_locs, NUM_RICH_OUTPUTS), dtype=bool)
    points = board.points()
    mask[points] = True
    edges = (1, -1, stride, -stride)
    corners = (1 + stride, 1 - stride, -1 + stride, -1 - stride)
    for column, colour in enumerate((to_move, 3 - to_move)):   # frame Black, then frame White
        label = _connection_components(board, colour)
        eyes_in = np.zeros(label.max() + 2, dtype=np.int64)
        for p in points:
            if board.is_eye(p, colour):
                targets[p, 0 + column] = 1.0
                eyes_in[label[p]] += 1
        for p in points:
            if label[p] < 0:
                continue
            targets[p, 2 + column] = 1.0
            for offsets, first in ((edges, 4), (corners, 6)):
                neighbours = [p + d for d in offsets if board.get(p + d) != C_WALL]
                joined = sum(1 for q in neighbours if label[q] == label[p])
                targets[p, first + column] = joined / len(neighbours)
            if eyes_in[label[p]] >= 2:
                targets[p, 8 + column] = 1.0
    return targets, mask


def swap_rich_colours(values):
    """Rich outputs or targets (..., N_RICH_OUTPUTS) seen with the other side to move."""
    v = np.asarray(values)
    return v[..., [k ^ 1 for k in range(NUM_RICH_OUTPUTS)]]

