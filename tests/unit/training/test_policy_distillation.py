"""Distilling trained policy nets into a new one: the targets in every symmetry frame, a run that
learns a teacher's probabilities rather than the moves played, the same steps on both backends,
and bad teacher settings refused."""
import numpy as np
import pytest

from engine.nets.policy import load_policy, softmax
from engine.nets.policy_features import move_permutation
from engine.nets.weights import WeightFileError
from engine.rules.game import SYMMETRIES
from engine.training.policydata import PolicyDataset, prepare
from engine.training.policyteacher import Teachers
from engine.training.policytrain import PolicyRun
from tests.unit.training.test_policy_training import needs_torch, small_settings, varied_games


@pytest.fixture
def data(tmp_path):
    (tmp_path / "games.sgf").write_bytes(b"\n".join(varied_games(12)))
    prepare([tmp_path / "games.sgf"], tmp_path / "data", size=9)
    return tmp_path / "data"


def stones_teacher(planes):
    """An equivariant stand-in for a net: each point's logit is a weighted sum of its planes, pass
    0 (so a point's probability is the same in every frame in which the position is seen)."""
    weights = np.linspace(-2.0, 3.0, planes.shape[1])
    points = np.einsum("c,bcij->bij", weights, planes).reshape(len(planes), -1)
    return np.concatenate([points, np.zeros((len(planes), 1))], axis=1)


class FixedRng:
    """rng.integers answers from a list: the teacher, then the teacher's symmetry."""

    def __init__(self, answers):
        self.answers = list(answers)

    def integers(self, high):
        answer = self.answers.pop(0)
        assert answer < high
        return answer


@pytest.mark.parametrize("weight", [1.0, 0.25])
def test_targets_are_the_teachers_probabilities_read_in_the_batchs_own_frame(data, weight):
    dataset = PolicyDataset([data])
    teachers = Teachers([("rich", stones_teacher)], weight)
    indices = np.arange(10, 26)
    for symmetry in range(SYMMETRIES):
        planes, moves = dataset.batch("rich", indices, symmetry)
        expected = weight * softmax(stones_teacher(planes))
        expected[np.arange(len(moves)), moves] += 1.0 - weight
        for seen_as in range(SYMMETRIES):
            targets = teachers.targets(dataset, indices, symmetry, moves, FixedRng([0, seen_as]))
            np.testing.assert_allclose(targets, expected, atol=1e-6)
            np.testing.assert_allclose(targets.sum(axis=1), 1.0, atol=1e-5)
    # and the frames matter: the identity symmetry's targets are not another's
    _, moves = dataset.batch("rich", indices, 0)
    plain = teachers.targets(dataset, indices, 0, moves, FixedRng([0, 0]))
    assert not np.allclose(plain, plain[:, move_permutation(9, 5)])


def _kl_to(teacher_file, student_file, dataset):
    teacher, _ = load_policy(teacher_file)
    student, _ = load_policy(student_file)
    planes, _ = dataset.batch("rich", np.arange(dataset.positions))
    p, q = softmax(teacher.forward(planes)), softmax(student.forward(planes))
    return float((p * (np.log(p) - np.log(q))).sum(axis=1).mean())


def test_a_run_with_a_teacher_learns_the_teachers_probabilities(data, tmp_path):
    # the teacher: a net that saw other games, so its moves are not the ones played here
    (tmp_path / "other.sgf").write_bytes(b"\n".join(varied_games(12, seed=9)))
    prepare([tmp_path / "other.sgf"], tmp_path / "other", size=9)
    PolicyRun.create(tmp_path / "teacher", small_settings(steps=60, seed=5)).train(
        [tmp_path / "other"], backend_name="numpy", progress=False)
    teacher = str(tmp_path / "teacher" / "weights.npz")
    for name, changes in (("played", {}), ("taught", {"teacher": teacher, "teacher_weight": 1.0})):
        PolicyRun.create(tmp_path / name, small_settings(steps=60, **changes)).train(
            [data], backend_name="numpy", progress=False)
    dataset = PolicyDataset([data])
    taught = _kl_to(teacher, tmp_path / "taught" / "weights.npz", dataset)
    played = _kl_to(teacher, tmp_path / "played" / "weights.npz", dataset)
    assert taught < 0.5 * played
    assert PolicyRun.resume(tmp_path / "taught").settings.teacher == teacher


@needs_torch
def test_the_torch_backend_takes_the_same_distillation_steps_as_numpy(data, tmp_path):
    PolicyRun.create(tmp_path / "teacher", small_settings(steps=5)).train(
        [data], backend_name="numpy", progress=False)
    settings = small_settings(steps=5, seed=4, teacher=str(tmp_path / "teacher" / "weights.npz"))
    runs = []
    for backend in ("numpy", "torch"):
        PolicyRun.create(tmp_path / backend, settings).train([data], backend_name=backend, progress=False)
        runs.append(load_policy(tmp_path / backend / "weights.npz")[0].flat_params())
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-3, atol=1e-5)


def test_bad_teachers_are_refused(data, tmp_path):
    for weight in (0.0, 1.5):
        with pytest.raises(ValueError, match="teacher_weight"):
            small_settings(teacher="x.npz", teacher_weight=weight)
    (tmp_path / "corrupt.npz").write_bytes(b"not a weight file")
    run = PolicyRun.create(tmp_path / "run", small_settings(teacher=str(tmp_path / "corrupt.npz")))
    with pytest.raises(WeightFileError, match="corrupt.npz"):
        run.train([data], backend_name="numpy", progress=False)
