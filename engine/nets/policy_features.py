"""Input feature sets of the move-prediction network, computed from position records
(engine/nets/policy_inputs.pyx) with numpy, a batch at a time.

A feature set is registered with its name, version, the number of planes and how many previous
positions it reads; its version goes into every weight file, so a net never meets inputs it was
not trained on. Planes are in the frame of the side to move ("own" = the side to move at the
current position, also on the previous boards), as Sutskever & Nair reverse the colours of every
second board.

- `sn2008` (Sutskever & Nair 2008, section 3, "the liberty representation" with t = 4): for the
  current board and the 4 before it, own and opponent stones whose chain has 1, 2, >= 3 liberties
  (6 planes a board, 30 in all); a board before the game's start is empty.
- `rich` (beyond the paper, after Clark & Storkey 2015 and Maddison et al. 2015): own and
  opponent stones by liberties 1, 2, 3, >= 4; empty points; legal moves; liberties after the
  move 1, 2, >= 3; captures 1, 2, >= 3; the last 8 moves one-hot by age; ladders (an opponent
  chain captured if we move first, an own chain lost even if we move first, a move here captured
  in a ladder); a plane of ones (the board's extent, since convolutions pad with zeros).

Reading order: FEATURE_SETS, then features(); transform()/transform_moves() are the 8 board
symmetries (engine.rules.game.symmetric_point's numbering) for augmentation and averaging.
"""
import functools
from dataclasses import dataclass

import numpy as np

from engine.nets.policy_inputs import (AGE, CAPTURES, LADDER, LADDER_ATTACKER_FIRST,
                                       LADDER_DEFENDER_FIRST, LADDER_IF_PLAYED, LIBERTIES,
                                       MOVE_LIBERTIES, RECORD_PLANES, STONE)
from engine.rules.game import symmetric_point


@dataclass(frozen=True)
class PolicyFeatureSet:
    name: str
    version: int
    planes: int
    history: int          # previous positions read besides the current one
    compute: object       # (records (B, history + 1, RECORD_PLANES, S, S), own (B,)) -> planes


def _stones_by_liberties(stone, liberties, own, opponent, buckets):
    """Own then opponent stone planes, one per liberty bucket (the last one open-ended)."""
    planes = []
    for colour in (own, opponent):
        mine = stone == colour
        for n in buckets[:-1]:
            planes.append(mine & (liberties == n))
        planes.append(mine & (liberties >= buckets[-1]))
    return planes


def _sn2008(records, own):
    own, opponent = own[:, None, None, None], (3 - own)[:, None, None, None]
    planes = []
    for t in range(records.shape[1]):
        board = records[:, t]
        planes += _stones_by_liberties(board[:, STONE], board[:, LIBERTIES], own[:, 0], opponent[:, 0],
                                       (1, 2, 3))
    return np.stack(planes, axis=1)


def _rich(records, own):
    board = records[:, 0]
    own, opponent = own[:, None, None], (3 - own)[:, None, None]
    stone, move_libs, captures = board[:, STONE], board[:, MOVE_LIBERTIES], board[:, CAPTURES]
    age, ladder = board[:, AGE], board[:, LADDER]
    planes = _stones_by_liberties(stone, board[:, LIBERTIES], own, opponent, (1, 2, 3, 4))
    planes.append(stone == 0)
    planes.append(move_libs > 0)
    planes += [move_libs == 1, move_libs == 2, move_libs >= 3]
    planes += [captures == 1, captures == 2, captures >= 3]
    planes += [age == n for n in range(1, 9)]
    ladder_flag = lambda bit: (ladder & bit) != 0
    planes.append((stone == opponent) & ladder_flag(LADDER_ATTACKER_FIRST))
    planes.append((stone == own) & ladder_flag(LADDER_DEFENDER_FIRST))
    planes.append(ladder_flag(LADDER_IF_PLAYED))
    planes.append(np.ones_like(stone, dtype=bool))
    return np.stack(planes, axis=1)


FEATURE_SETS = {
    "sn2008": PolicyFeatureSet("sn2008", 1, 30, 4, _sn2008),
    "rich": PolicyFeatureSet("rich", 1, 28, 0, _rich),
}


def feature_set(name):
    try:
        return FEATURE_SETS[name]
    except KeyError:
        raise ValueError(f"unknown policy feature set {name!r}; known: {sorted(FEATURE_SETS)}") from None


def features(name, records, own):
    """float32 planes (B, planes, S, S) of a batch. records: uint8 (B, history + 1,
    RECORD_PLANES, S * S), the current position first, then the earlier ones (zeros before the
    game's start); own: (B,) the colour to move (1 Black, 2 White)."""
    spec = feature_set(name)
    batch, boards, planes, points = records.shape
    size = int(round(points ** 0.5))
    if boards != spec.history + 1 or planes != RECORD_PLANES or size * size != points:
        raise ValueError(f"feature set {name!r} reads records of shape (B, {spec.history + 1}, "
                         f"{RECORD_PLANES}, S*S), got {records.shape}")
    grid = records.reshape(batch, boards, planes, size, size)
    result = spec.compute(grid, np.asarray(own, dtype=np.uint8)).astype(np.float32)
    assert result.shape[1] == spec.planes, (name, result.shape)
    return result


def transform(planes, symmetry):
    """planes (..., S, S) under board symmetry 0..7: a point (row, col) goes to
    symmetric_point(row, col, S, symmetry)."""
    if symmetry & 1:
        planes = planes[..., :, ::-1]
    if symmetry & 2:
        planes = planes[..., ::-1, :]
    if symmetry & 4:
        planes = np.swapaxes(planes, -1, -2)
    return planes


@functools.lru_cache(maxsize=None)
def move_permutation(size, symmetry):
    """index -> index of the same move under symmetry, over the size*size points then pass
    (read-only: one table for every caller, as the predictor asks for it at every position)."""
    table = np.empty(size * size + 1, dtype=np.int64)
    for row in range(size):
        for col in range(size):
            r, c = symmetric_point(row, col, size, symmetry)
            table[row * size + col] = r * size + c
    table[-1] = size * size
    table.flags.writeable = False
    return table

