"""Temporal-difference targets for the ISN's seven per-point outputs: the math, no plumbing.

Reading order: `lambda_targets()` is the whole algorithm; `swap_frame()` is the colour change it
needs; `rewards_from_outputs()` / `outputs_from_rewards()` are Blair's Table III, used to state
(and test) why the lambda-return may be taken on the outputs themselves.

Derivation
----------
Blair (2008, section IV) gives every on-board point p seven outputs, each a likelihood about the
END of the game (Table IV): Z+ "white gains territory here", Z o "a white stone here avoids
capture", ..., A. "a black stone here is captured, leading to a white eye". Table I gives the reward
to be gained at p from now on as a function of two things only: the point's state now (the column:
empty, white stone, black stone) and its ownership/state at the end (the row). The capture reward c
of a stone now at p is inferred from the final row (a white stone now and a black-owned point at
the end means that stone was captured: -(1+c)); Table I does not count captures that a later
refilling of p undoes. So the Monte Carlo return of every (point, column) is a function of the
final position alone, the same at every time step: there is no intermediate reward to add between
t and t+1 in this formulation, and the capture rewards sit inside each column's final return. That
is what makes "lambda = 1 gives Table IV" exact.

Each of the six rewards (R+, R o, R. for s = 1 and s = 0) is an affine function of the outputs
(Table III, upper part), except that R+^0 = A+o - A+. mixes two of them. The offline lambda-return
per point, G_t = (1 - lambda) V_{t+1} + lambda G_{t+1} with G_T = the final return, is a convex
combination, and convex combinations commute with affine maps. So taking the lambda-return of the
rewards and mapping back with Table III's inverse (lower part) gives exactly the lambda-return of
Z+, Z o, Z., A o and A. themselves (a test checks it). For the pair A+o, A+. the inverse,
max(+-R+^0, 0), would collapse a prediction such as (0.5, 0.5) ("either side may make an eye
here") to (0, 0); we keep the two likelihoods apart by taking their lambda-return directly, which
agrees with the reward form whenever one of the pair is zero (always so for Table IV's targets).
Targets are therefore convex combinations of values in [0, 1] and need no clipping.

Colour frames. The network sees the side to move as Black. Position t's outputs are in its own
frame; before they are mixed with position t+1's (the other side to move), everything is brought
to one frame: the frame in which the real Black is Black. Swapping colours maps rewards R to -R and
exchanges the white-stone and black-stone columns, which on the outputs is
    Z+' = 1 - Z+,  Z o' = 1 - Z.,  Z.' = 1 - Z o,  A+o' = A+.,  A+.' = A+o,  A o' = A.,  A.' = A o
(swap_frame; it is its own inverse). The targets are mapped back to each position's frame.

Blanks. Table IV has no target for Z o and A o when the point ends as white territory, nor for Z.
and A. when it ends as black territory. The lambda-return at t puts weight lambda^(T-1-t) on the
final return, so an output blank at the end is left untrained at every t (the final mask, carried
to each frame).

Rich signal. A network with rich_signal (engine/nets/network.pyx) has NUM_RICH_OUTPUTS more outputs
after the seven: eyes, connections and live points per frame colour, in Black/White pairs. Each is
a likelihood about the end of the game too (their final targets are rich_targets() of the final
board), so the same lambda-return applies to them column by column. Their frame change only
exchanges each pair (swap_rich_colours); they have no blanks. Every function here takes either 7
columns or 7 + NUM_RICH_OUTPUTS.

NeuroGo (Enzenberger 2003, section 3) uses lambda = 0 and does not train the positions whose move
was an exploratory Gibbs sample; `trained` selects positions, and lambda = 0 makes every target the
next position's prediction, so untrained positions leave the others' targets unchanged.
"""
import numpy as np

from engine.nets.network import N_RICH_OUTPUTS, swap_rich_colours

NUM_OUTPUTS = 7
NUM_RICH_OUTPUTS = N_RICH_OUTPUTS
OUTPUT_COUNTS = (NUM_OUTPUTS, NUM_OUTPUTS + NUM_RICH_OUTPUTS)   # territory alone, or with the rich signal
# Output order of engine/nets/network_forward.pxd (the frame where the side to move is Black).
Z_EMPTY, Z_WHITE, Z_BLACK, A_EMPTY_WHITE, A_EMPTY_BLACK, A_WHITE, A_BLACK = range(NUM_OUTPUTS)

# swap_frame: output k of the swapped frame is output SWAP_SOURCE[k] of the original, complemented
# (1 - y) for the three Z outputs.
SWAP_SOURCE = np.array([Z_EMPTY, Z_BLACK, Z_WHITE, A_EMPTY_BLACK, A_EMPTY_WHITE, A_BLACK, A_WHITE])
SWAP_COMPLEMENTED = np.array([True, True, True, False, False, False, False])


def swap_frame(outputs):
    """Outputs (..., 7) seen with the colours of all stones exchanged (a new array); with the rich
    signal's columns (..., 17) those are exchanged pairwise (swap_rich_colours)."""
    outputs = np.asarray(outputs, dtype=np.float64)
    _check_output_axis(outputs, "outputs")
    swapped = outputs[..., SWAP_SOURCE]
    swapped[..., SWAP_COMPLEMENTED] = 1.0 - swapped[..., SWAP_COMPLEMENTED]
    if outputs.shape[-1] == NUM_OUTPUTS:
        return swapped
    return np.concatenate([swapped, swap_rich_colours(outputs[..., NUM_OUTPUTS:])], axis=-1)


def swap_frame_mask(mask):
    """A target mask (..., 7) or (..., 17) carried to the colour-swapped frame (a new array)."""
    mask = np.asarray(mask)
    _check_output_axis(mask, "mask")
    swapped = mask[..., SWAP_SOURCE]
    if mask.shape[-1] == NUM_OUTPUTS:
        return swapped
    return np.concatenate([swapped, swap_rich_colours(mask[..., NUM_OUTPUTS:])], axis=-1)


def rewards_from_outputs(outputs, c):
    """Table III (upper part): outputs (..., 7) -> rewards (..., 6) for White in the frame, in the
    order R+^1, R o^1, R.^1, R+^0, R o^0, R.^0, for capture value c."""
    y = np.asarray(outputs, dtype=np.float64)
    _check_last_axis(y, "outputs")
    rewards = np.empty(y.shape[:-1] + (6,))
    rewards[..., 0] = 2.0 * y[..., Z_EMPTY] - 1.0
    rewards[..., 1] = (2.0 + c) * y[..., Z_WHITE] - (1.0 + c)
    rewards[..., 2] = (2.0 + c) * y[..., Z_BLACK] - 1.0
    rewards[..., 3] = y[..., A_EMPTY_WHITE] - y[..., A_EMPTY_BLACK]
    rewards[..., 4] = c * (y[..., Z_WHITE] - 1.0) - y[..., A_WHITE]
    rewards[..., 5] = c * y[..., Z_BLACK] + y[..., A_BLACK]
    return rewards


def outputs_from_rewards(rewards, c):
    """Table III (lower part): rewards (..., 6) -> outputs (..., 7), clipped to [0, 1]."""
    r = np.asarray(rewards, dtype=np.float64)
    if r.shape[-1:] != (6,):
        raise ValueError(f"rewards must have a last axis of 6, not shape {r.shape}")
    y = np.empty(r.shape[:-1] + (NUM_OUTPUTS,))
    y[..., Z_EMPTY] = (1.0 + r[..., 0]) / 2.0
    y[..., Z_WHITE] = (1.0 + c + r[..., 1]) / (2.0 + c)
    y[..., Z_BLACK] = (1.0 + r[..., 2]) / (2.0 + c)
    y[..., A_EMPTY_WHITE] = np.maximum(r[..., 3], 0.0)
    y[..., A_EMPTY_BLACK] = np.maximum(-r[..., 3], 0.0)
    y[..., A_WHITE] = c * (y[..., Z_WHITE] - 1.0) - r[..., 4]
    y[..., A_BLACK] = -c * y[..., Z_BLACK] + r[..., 5]
    return np.clip(y, 0.0, 1.0)


def lambda_targets(outputs, black_to_move, final_targets, final_mask, lam, trained=None):
    """Offline lambda-return targets for one game.

    outputs: (T, L, K) the net's outputs at the T positions where a move was chosen, each in its
        own frame (side to move as Black); K is 7, or 17 for a rich-signal net.
    black_to_move: (T,) bool, whether real Black was to move at position t.
    final_targets, final_mask: (L, K) Table IV targets and mask of the final position, in the frame
        where real Black is Black (final_targets(board, c, BLACK), followed for K = 17 by
        rich_targets(board, BLACK)).
    lam: lambda in [0, 1].
    trained: optional (T,) bool, the positions to train (default all).

    Returns (targets, mask), each (T, L, K) in each position's own frame; mask is False for Table
    IV's blanks and at every output of an untrained position.
    """
    outputs = np.asarray(outputs, dtype=np.float64)
    if outputs.ndim != 3 or outputs.shape[2] not in OUTPUT_COUNTS:
        raise ValueError(f"outputs must have shape (T, L, K) with K in {OUTPUT_COUNTS}, not "
                         f"{outputs.shape}")
    num_positions, num_locs, num_columns = outputs.shape
    black_to_move = np.asarray(black_to_move, dtype=bool)
    if black_to_move.shape != (num_positions,):
        raise ValueError(f"black_to_move must have shape ({num_positions},), not {black_to_move.shape}")
    final_targets = np.asarray(final_targets, dtype=np.float64)
    final_mask = np.asarray(final_mask, dtype=bool)
    for name, array in (("final_targets", final_targets), ("final_mask", final_mask)):
        if array.shape != (num_locs, num_columns):
            raise ValueError(f"{name} must have shape ({num_locs}, {num_columns}) like the "
                             f"outputs, not {array.shape}")
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lambda must be in [0, 1], not {lam}")
    if trained is None:
        trained = np.ones(num_positions, dtype=bool)
    else:
        trained = np.asarray(trained, dtype=bool)
        if trained.shape != (num_positions,):
            raise ValueError(f"trained must have shape ({num_positions},), not {trained.shape}")

    # All predictions in the real-Black frame.
    common = outputs.copy()
    white_to_move = ~black_to_move
    common[white_to_move] = swap_frame(outputs[white_to_move])

    targets = np.empty_like(common)
    following_return = final_targets          # G_{t+1}; at t = T-1 the next "position" is the end
    following_prediction = final_targets      # V_{t+1}; the end's value is the outcome itself
    for t in range(num_positions - 1, -1, -1):
        ret = (1.0 - lam) * following_prediction + lam * following_return
        targets[t] = ret
        following_return = ret
        following_prediction = common[t]

    mask = np.broadcast_to(final_mask, targets.shape).copy()
    targets[white_to_move] = swap_frame(targets[white_to_move])
    mask[white_to_move] = swap_frame_mask(mask[white_to_move])
    mask[~trained] = False
    return targets, mask


def _check_last_axis(array, name):
    if array.shape[-1:] != (NUM_OUTPUTS,):
        raise ValueError(f"{name} must have a last axis of {NUM_OUTPUTS}, not shape {array.shape}")


def _check_output_axis(array, name):
    if array.ndim == 0 or array.shape[-1] not in OUTPUT_COUNTS:
        raise ValueError(f"{name} must have a last axis of {NUM_OUTPUTS} (or {OUTPUT_COUNTS[1]} "
                         f"with the rich signal), not shape {array.shape}")
