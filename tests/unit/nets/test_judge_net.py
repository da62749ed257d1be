"""The judging net (engine/nets/judge.py): its heads' shapes on every board size, the symmetric
average's symmetric outputs, Winograd's pass against im2col's, a judging net grown from a policy
net, and weight files refused by name."""
import numpy as np
import pytest

from engine.nets.judge import (KOMI_SCALE, SCORE_SCALE, JudgeNet, Judgement, judge_planes,
                               load_judge, symmetric_judgement)
from engine.nets.policy import PolicyNet, load_policy, save_policy, softmax
from engine.nets.policy_features import FEATURE_SETS, move_permutation, transform
from engine.nets.weights import WeightFileError
from engine.nets.winograd import WinogradForward
from engine.rules.game import SYMMETRIES

ARCHITECTURE = {"kind": "judge", "channels": 6, "layers": 5, "first_kernel": 5,
                "head_channels": 3, "value_hidden": 5}
PLANES = FEATURE_SETS["rich"].planes + 1


def trained_like(architecture=ARCHITECTURE, seed=5):
    """A judging net with every weight random (a new net's outputs start at zero)."""
    net = JudgeNet(architecture, "rich", seed=seed)
    rng = np.random.default_rng(seed)
    # small enough noise that nothing saturates, over a stack without normalisation
    return net.with_params({name: (value + rng.normal(0, 0.08, value.shape)).astype(np.float32)
                            for name, value in net.params.items()})


def random_planes(batch, size, seed=0):
    rng = np.random.default_rng(seed)
    planes = (rng.random((batch, PLANES - 1, size, size)) < 0.3).astype(np.float32)
    return judge_planes(planes, rng.uniform(-7.5, 7.5, batch))


@pytest.mark.parametrize("size", [5, 7, 9, 13, 19])
def test_heads_have_their_shapes_on_every_board_size(size):
    judged = trained_like().forward(random_planes(3, size))
    assert judged.policy.shape == (3, size * size + 1)
    assert judged.win.shape == judged.score.shape == (3,)
    assert judged.ownership.shape == (3, size, size)
    assert np.all((judged.win > 0) & (judged.win < 1))
    assert np.all(np.abs(judged.ownership) <= 1)
    assert np.all(np.isfinite(judged.score)) and np.ptp(judged.score) > 0


def test_a_new_net_says_even_and_owns_nothing():
    judged = JudgeNet(ARCHITECTURE, "rich", seed=1).forward(random_planes(2, 9))
    assert np.allclose(judged.win, 0.5) and np.allclose(judged.score, 0.0)
    assert np.allclose(judged.ownership, 0.0)


def test_the_komi_plane_is_the_komi_the_side_to_move_receives():
    planes = judge_planes(np.zeros((2, PLANES - 1, 9, 9), np.float32), np.array([7.5, -6.5]))
    assert planes.shape == (2, PLANES, 9, 9)
    assert np.all(planes[0, -1] == np.float32(7.5 / KOMI_SCALE))
    assert np.all(planes[1, -1] == np.float32(-6.5 / KOMI_SCALE))
    assert not planes[:, :-1].any()


def test_the_komi_changes_the_judgement():
    net, planes = trained_like(), random_planes(1, 9)
    other = planes.copy()
    other[:, -1] = -other[:, -1] - 0.5
    assert net.forward(planes).win[0] != net.forward(other).win[0]


def test_a_batch_equals_its_positions_one_by_one():
    net, planes = trained_like(), random_planes(4, 9)
    batch = net.forward(planes)
    for i in range(4):
        single = net.forward(planes[i:i + 1])
        for name in ("policy", "win", "score", "ownership"):
            assert np.allclose(getattr(batch, name)[i], getattr(single, name)[0], atol=1e-5)


@pytest.mark.parametrize("size", [5, 9, 19])
def test_winograd_pass_equals_im2col(size):
    net = trained_like()
    planes = random_planes(11, size)          # more than a chunk: the parts are joined
    fast, reference = WinogradForward(net)(planes), net.forward(planes)
    assert isinstance(fast, Judgement) and len(fast) == 11
    for name in ("policy", "win", "score", "ownership"):
        assert np.allclose(getattr(fast, name), getattr(reference, name), atol=2e-4), name


def test_eight_symmetries_give_symmetric_outputs():
    net, size = trained_like(), 7
    planes = random_planes(2, size, seed=3)
    base = symmetric_judgement(net.forward, planes, SYMMETRIES)
    assert np.abs(base.ownership - transform(base.ownership, 1)).max() > 1e-3   # not trivially symmetric
    for s in range(SYMMETRIES):
        turned = symmetric_judgement(net.forward, np.ascontiguousarray(transform(planes, s)), SYMMETRIES)
        assert np.allclose(turned.win, base.win, atol=1e-6)
        assert np.allclose(turned.score, base.score, atol=1e-4)
        assert np.allclose(turned.ownership, transform(base.ownership, s), atol=1e-6)
        moves = softmax(base.policy)
        assert np.allclose(softmax(turned.policy)[:, move_permutation(size, s)], moves, atol=1e-6)


def test_one_symmetry_is_the_net_itself():
    net, planes = trained_like(), random_planes(2, 9)
    assert np.array_equal(symmetric_judgement(net.forward, planes, 1).win, net.forward(planes).win)


def test_a_judging_net_grown_from_a_res_policy_net_moves_as_it_whatever_the_komi():
    policy = PolicyNet({"kind": "res", "channels": 6, "layers": 3, "first_kernel": 5}, "rich", seed=2)
    rng = np.random.default_rng(2)
    policy = policy.with_params({name: (value + rng.normal(0, 0.3, value.shape)).astype(np.float32)
                                 for name, value in policy.params.items()})
    judge = JudgeNet.from_policy(policy, head_channels=3, value_hidden=4, seed=1)
    features = (rng.random((2, PLANES - 1, 9, 9)) < 0.3).astype(np.float32)
    for komi in (7.5, -7.5, 0.0):
        judged = judge.forward(judge_planes(features, np.full(2, komi)))
        assert np.allclose(judged.policy, policy.forward(features), atol=1e-5)
    conv = PolicyNet({"kind": "conv", "channels": 4, "layers": 2, "first_kernel": 3}, "rich")
    with pytest.raises(ValueError, match="res policy net"):
        JudgeNet.from_policy(conv, 3, 4)


def test_the_owned_lead_grows_at_zero_and_then_moves_the_result_by_the_owners(tmp_path):
    net = trained_like()
    grown = net.with_owned_lead()
    assert grown.architecture["owned_lead"] == 1 and grown.with_owned_lead() is grown
    assert grown.params["value.out.w"].shape == (ARCHITECTURE["value_hidden"] + 1, 2)
    planes = random_planes(3, 9, seed=4)
    before, after = net.forward(planes), grown.forward(planes)
    for name in ("policy", "win", "score", "ownership"):
        assert np.allclose(getattr(before, name), getattr(after, name)), name
    # a weight on the owned lead: the win logit moves by it times the ownership's sum / 20
    params = dict(grown.params, **{"value.out.w": grown.params["value.out.w"].copy()})
    params["value.out.w"][-1] = (0.5, 1.0)
    weighted = grown.with_params(params).forward(planes)
    owned = after.ownership.reshape(3, -1).sum(axis=1) / SCORE_SCALE
    logit = lambda win: np.log(win / (1 - win))     # noqa: E731
    assert np.allclose(logit(weighted.win) - logit(after.win), 0.5 * owned, atol=1e-4)
    assert np.allclose(weighted.score - after.score, owned * SCORE_SCALE, atol=1e-3)
    fast = WinogradForward(grown.with_params(params))(planes)
    assert np.allclose(fast.win, weighted.win, atol=2e-4)
    turned = symmetric_judgement(grown.with_params(params).forward,
                                 np.ascontiguousarray(transform(planes, 5)), SYMMETRIES)
    assert np.allclose(turned.win, symmetric_judgement(grown.with_params(params).forward, planes,
                                                       SYMMETRIES).win, atol=1e-6)
    path = tmp_path / "owned.npz"
    save_policy(path, grown.with_params(params), 19, games_trained=1, positions_trained=10)
    loaded, _ = load_judge(path)
    assert loaded.architecture["owned_lead"] == 1
    assert np.array_equal(loaded.forward(planes).win, weighted.win)
    with pytest.raises(ValueError, match="owned_lead"):
        JudgeNet(dict(ARCHITECTURE, owned_lead=2), "rich")


def test_architecture_checks():
    with pytest.raises(ValueError, match="head_channels"):
        JudgeNet(dict(ARCHITECTURE, head_channels=0), "rich")
    with pytest.raises(ValueError, match="odd number of layers"):
        JudgeNet(dict(ARCHITECTURE, layers=4), "rich")
    with pytest.raises(ValueError, match="kind is 'judge'"):
        JudgeNet(dict(ARCHITECTURE, kind="res"), "rich")
    with pytest.raises(NotImplementedError):
        JudgeNet(ARCHITECTURE, "rich").forward(random_planes(1, 5), keep=True)


def test_weight_file_round_trip_and_refusals(tmp_path):
    net = trained_like()
    path = tmp_path / "judge.npz"
    save_policy(path, net, 19, games_trained=3, positions_trained=600)
    loaded, metadata = load_judge(path)
    assert metadata["architecture"]["name"] == "judge" and metadata["positions_trained"] == 600
    planes = random_planes(2, 9)
    assert np.array_equal(loaded.forward(planes).ownership, net.forward(planes).ownership)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(path.read_bytes()[:300])
    with pytest.raises(WeightFileError, match="truncated.npz"):
        load_judge(truncated)
    with pytest.raises(WeightFileError, match="judge.npz.*not a policy network"):
        load_policy(path)
    policy_path = tmp_path / "policy.npz"
    save_policy(policy_path, PolicyNet({"kind": "res", "channels": 4, "layers": 3, "first_kernel": 3},
                                       "rich"), 19, 0, 0)
    with pytest.raises(WeightFileError, match="policy.npz.*not a judge network"):
        load_judge(policy_path)
    altered = dict(np.load(path))
    altered["params"] = altered["params"].copy()
    altered["params"][-1] += 1.0
    np.savez(tmp_path / "altered.npz", **altered)
    with pytest.raises(WeightFileError, match="altered.npz.*checksum"):
        load_judge(tmp_path / "altered.npz")
