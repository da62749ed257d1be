"""Distillation targets for the move-prediction network: the move played, mixed with the move
probabilities of one or more trained nets (the teachers).

A net averaged over the board's 8 symmetries predicts better than the same net once, but costs
8 passes at play; trained towards that average, a net might keep some of the gain in a single
pass (the 12 x 64 net did not: docs/notebook/policy.md, twelfth session). The cross-entropy is
linear in its target, so one teacher under one random symmetry at each batch is an unbiased
sample of the teachers' average over all 8 (more noise, 1/8 of the cost): the expected gradient
is the same as the full average's.

    target = (1 - weight) * [the move played] + weight * teacher(position under symmetry t),
             read back in the batch's own symmetry
"""
import numpy as np
from threadpoolctl import ThreadpoolController

from engine.nets.policy import load_policy, softmax
from engine.nets.policy_features import move_permutation
from engine.nets.winograd import play_forward
from engine.rules.game import SYMMETRIES


def teacher_paths(text):
    """'a.npz,b.npz' -> ['a.npz', 'b.npz'] ('' -> [])."""
    return [path.strip() for path in text.split(",") if path.strip()]


class Teachers:
    """The teachers' nets, and the soft targets they give a batch."""

    def __init__(self, forwards, weight):
        """forwards: (feature set name, planes -> logits) of each teacher."""
        if not forwards:
            raise ValueError("distillation needs at least one teacher")
        self.forwards, self.weight = list(forwards), weight
        self.blas = ThreadpoolController()

    @classmethod
    def load(cls, paths, weight):
        """The teachers in policy weight files (a missing or corrupt one is refused by name)."""
        nets = [load_policy(path)[0] for path in paths]
        return cls([(net.feature_set.name, play_forward(net)) for net in nets], weight)

    def targets(self, dataset, indices, symmetry, moves, rng):
        """(B, S*S + 1) float32 targets of the dataset's positions at indices, whose planes the
        student sees under `symmetry` and whose played moves (in that frame) are `moves`."""
        feature_set_name, forward = self.forwards[int(rng.integers(len(self.forwards)))]
        seen_as = int(rng.integers(SYMMETRIES))
        planes, _ = dataset.batch(feature_set_name, indices, seen_as)
        # one BLAS thread: more would spin after each product, taking the cores from torch's step
        with self.blas.limit(limits=1, user_api="blas"):
            probabilities = softmax(forward(planes))
        # move i of the record is move permutation[i] of a frame: the student's from the teacher's
        target = np.empty(probabilities.shape, np.float32)
        target[:, move_permutation(dataset.size, symmetry)] = \
            probabilities[:, move_permutation(dataset.size, seen_as)]
        target *= self.weight
        target[np.arange(len(moves)), moves] += 1.0 - self.weight
        return target
