"""Two datasets drawn in a fixed share: self-play games beside expert games.

Self-play on a large board gives few games an hour; a net trained on them alone forgets what it
learnt from the expert games. `MixedDataset` holds the self-play data (`main`, with the search's
targets) and the expert data (`extra`) and draws each batch's positions in a fixed share
(`extra_share` of them expert positions), each part uniformly over its own positions. It reads
like a PolicyDataset to the trainer (engine/training/policytrain.py): global indices run over
main's positions, then extra's; the move head's target is the search's visit shares for
self-play positions and the move played for expert ones; the value's TD(lambda) target applies
to the self-play positions only.
"""
import numpy as np

from engine.rules.game import SYMMETRIES
from engine.nets.policy_features import move_permutation
from engine.training.policydata import DataError, JudgeTargets


class MixedDataset:
    def __init__(self, main, extra, extra_share):
        if main.size != extra.size:
            raise DataError(f"expert data of {extra.size}x{extra.size} beside self-play of "
                            f"{main.size}x{main.size}")
        if not 0.0 < extra_share < 1.0:
            raise ValueError(f"extra_share {extra_share}: must be above 0 and below 1")
        self.main, self.extra, self.extra_share = main, extra, extra_share
        self.size = main.size
        self.positions = main.positions + extra.positions
        self.has_targets = main.has_targets and extra.has_targets
        self.has_search_targets = main.has_search_targets

    def random_draws(self, batch_size, rng, augment=True):
        """Endless (indices, symmetry): extra_share of each batch drawn from extra."""
        extra = int(round(batch_size * self.extra_share))
        while True:
            indices = np.concatenate([rng.integers(0, self.main.positions, size=batch_size - extra),
                                      self.main.positions + rng.integers(0, self.extra.positions,
                                                                         size=extra)])
            symmetry = int(rng.integers(SYMMETRIES))
            yield indices, symmetry if augment else 0

    def _split(self, indices):
        indices = np.asarray(indices, np.int64)
        extra = indices >= self.main.positions
        return extra, indices[~extra], indices[extra] - self.main.positions

    def batch(self, feature_set_name, indices, symmetry=0):
        extra, main_indices, extra_indices = self._split(indices)
        planes, moves = None, np.empty(len(indices), np.int64)
        for mask, dataset, part in ((~extra, self.main, main_indices), (extra, self.extra, extra_indices)):
            if len(part):
                part_planes, moves[mask] = dataset.batch(feature_set_name, part, symmetry)
                if planes is None:
                    planes = np.empty((len(indices),) + part_planes.shape[1:], np.float32)
                planes[mask] = part_planes
        return planes, moves

    def judge_targets(self, indices, symmetry=0, td_lambda=1.0):
        extra, main_indices, extra_indices = self._split(indices)
        parts = [(~extra, self.main.judge_targets(main_indices, symmetry, td_lambda)
                  if len(main_indices) else None),
                 (extra, self.extra.judge_targets(extra_indices, symmetry)
                  if len(extra_indices) else None)]
        fields = {}
        for name in JudgeTargets.__dataclass_fields__:
            for mask, targets in parts:
                if targets is None:
                    continue
                values = getattr(targets, name)
                if name not in fields:
                    fields[name] = np.empty((len(indices),) + values.shape[1:], values.dtype)
                fields[name][mask] = values
        return JudgeTargets(**fields)

    def search_policy(self, indices, symmetry=0):
        """The visit shares of self-play positions, the move played (one-hot) at expert ones."""
        extra, main_indices, extra_indices = self._split(indices)
        targets = np.zeros((len(indices), self.size * self.size + 1), np.float32)
        if len(main_indices):
            targets[~extra] = self.main.search_policy(main_indices, symmetry)
        if len(extra_indices):
            played = move_permutation(self.size, symmetry)[self.extra.moves_played(extra_indices)]
            targets[np.flatnonzero(extra), played] = 1.0
        return targets
