"""Training the judging net (engine/training/judging.py): PyTorch's pass equals numpy's, each
head's gradient against finite differences, and runs of `--kind judge` on tiny data."""
import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from engine.nets.judge import SCORE_SCALE, JudgeNet, judge_planes, load_judge
from engine.nets.policy import PolicyNet, save_policy
from engine.training.policydata import PolicyDataset, prepare
from engine.training.policytrain import PolicyRun, PolicySettings, starting_net
from tests.unit.nets.test_judge_net import ARCHITECTURE, random_planes, trained_like
from tests.unit.training.test_policy_training import game_sgf, needs_torch

HEAD_NAMES = ("value", "score", "ownership")


def judge_settings(**changes):
    values = dict(kind="judge", channels=6, layers=3, first_kernel=5, head_channels=3, value_hidden=5,
                  batch_size=16, learning_rate="0.02@0", steps=60, seed=3)
    values.update(changes)
    return PolicySettings(**values)


def targets_of(batch, size, seed=0):
    """Judging targets of a batch: some positions with each target, some without."""
    rng = np.random.default_rng(seed)
    return SimpleNamespace(
        komi=rng.uniform(-7.5, 7.5, batch).astype(np.float32),
        value=(rng.random(batch) < 0.5).astype(np.float32), value_known=rng.random(batch) < 0.8,
        score=rng.normal(0, 15, batch).astype(np.float32), score_known=rng.random(batch) < 0.6,
        ownership=rng.integers(-1, 2, (batch, size, size)).astype(np.float32),
        ownership_known=rng.random(batch) < 0.6)


@needs_torch
@pytest.mark.parametrize("convolutions, owned", [("direct", 0), ("winograd", 0), ("direct", 1)])
def test_torch_pass_equals_numpy(convolutions, owned):
    from engine.training.judging import JudgeBackend
    net = trained_like(dict(ARCHITECTURE, owned_lead=owned))
    backend = JudgeBackend(net, judge_settings(owned_lead=owned), threads=1,
                           convolutions=convolutions)
    planes = random_planes(3, 9)
    torch_judged, numpy_judged = backend.judge(planes), net.forward(planes)
    for name in ("policy", "win", "score", "ownership"):
        assert np.allclose(getattr(torch_judged, name), getattr(numpy_judged, name), atol=2e-4), name
    assert np.allclose(backend.logits(planes), numpy_judged.policy, atol=2e-4)


@needs_torch
@pytest.mark.parametrize("head, owned", [(head, 0) for head in HEAD_NAMES] +
                         [("value", 1), ("score", 1)])
def test_each_heads_gradient_against_finite_differences(head, owned):
    import torch
    from engine.training.judging import JudgeBackend
    net = trained_like(dict(ARCHITECTURE, owned_lead=owned))
    net.params = {name: value.astype(np.float64) for name, value in net.params.items()}
    backend = JudgeBackend(net, judge_settings(owned_lead=owned), threads=1, convolutions="direct")
    planes, judged = random_planes(4, 5).astype(np.float64), targets_of(4, 5)

    def loss():
        total, _ = backend._head_losses(backend._outputs(planes, backend.params), judged)[head]
        return total

    loss().backward()
    rng = np.random.default_rng(1)
    checked = 0
    for name in ("conv0.w", "conv2.w", "value.conv.w", "value.conv.b", "ownership.w", "value.fc.w",
                 "value.out.w", "value.out.b"):
        param = backend.params[name]
        for flat_index in rng.choice(param.numel(), size=min(3, param.numel()), replace=False):
            index = np.unravel_index(flat_index, tuple(param.shape))
            with torch.no_grad():
                kept = float(param[index])
                param[index] = kept + 1e-6
                up = float(loss())
                param[index] = kept - 1e-6
                down = float(loss())
                param[index] = kept
            numeric = (up - down) / 2e-6
            analytic = 0.0 if param.grad is None else float(param.grad[index])   # a head it does not reach
            assert abs(numeric - analytic) <= 1e-5 + 1e-4 * abs(numeric), (name, index, numeric, analytic)
            checked += abs(analytic) > 0
    assert checked > 5


@needs_torch
def test_a_head_without_targets_adds_nothing():
    from engine.training.judging import JudgeBackend
    backend = JudgeBackend(trained_like(), judge_settings(), threads=1, convolutions="direct")
    planes, judged = random_planes(3, 5), targets_of(3, 5)
    judged.score_known[:] = False
    losses = backend._head_losses(backend._outputs(planes, backend.params), judged)
    assert float(losses["score"][0].detach()) == 0.0 and losses["score"][1] == 0
    backend.step(planes, np.zeros(3, np.int64), 0.01, judged=judged)
    assert set(backend.head_losses) == {"value", "ownership"}


def test_the_score_scale_is_in_points():
    net = JudgeNet(ARCHITECTURE, "rich")
    net.params["value.out.b"][1] = 0.5
    assert np.allclose(net.forward(random_planes(1, 9)).score, 0.5 * SCORE_SCALE)


WON = ["ee", "aa", "ed", "ab", "ec", "ba", "ef", "ia", "eg", "ib"]  # Black takes the centre line


def won_games(count, seed=0):
    """9x9 games that Black wins by resignation: the same start, then a random move or two."""
    rng = np.random.default_rng(seed)
    games = []
    for _ in range(count):
        tail = [m for m in ("gg", "cc", "gc", "cg", "hh") if rng.random() < 0.4][:2]
        games.append(game_sgf(WON + tail))
    return games


@pytest.fixture
def won_data(tmp_path):
    (tmp_path / "won.sgf").write_bytes(b"\n".join(won_games(12)))
    prepare([tmp_path / "won.sgf"], tmp_path / "data", size=9)
    return tmp_path / "data"


@needs_torch
@pytest.mark.slow
def test_a_tiny_judge_run_learns_who_wins_a_won_position(won_data, tmp_path):
    run = PolicyRun.create(tmp_path / "run", judge_settings(steps=80))
    run.train([won_data], backend_name="torch", progress=False, threads=1, log_every=20)
    net, metadata = load_judge(tmp_path / "run" / "weights.npz")
    assert isinstance(net, JudgeNet) and metadata["positions_trained"] == 80 * 16
    dataset = PolicyDataset([won_data])
    late = np.arange(dataset.positions)[dataset.positions_before_end(np.arange(dataset.positions)) < 4]
    planes, _ = dataset.batch("rich", late)
    judged = net.forward(judge_planes(planes, dataset.judge_targets(late).komi))
    _, _, own = dataset.gather(late, 0)
    black_win = np.where(own == 1, judged.win, 1 - judged.win)
    assert black_win.min() > 0.8, black_win
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert all("value_loss" in record for record in log if record["type"] == "train")
    assert log[-1]["value_loss"] < log[0]["value_loss"]


@needs_torch
def test_a_judge_run_stops_resumes_and_evaluates_beside_its_training_positions(won_data, tmp_path):
    run = PolicyRun.create(tmp_path / "run", judge_settings(steps=4))
    run.train([won_data], [won_data], backend_name="torch", progress=False, threads=1, log_every=2,
              eval_every=4, eval_positions=30)
    resumed = PolicyRun.resume(tmp_path / "run")
    assert resumed.step == 4 and isinstance(resumed.net, JudgeNet)
    resumed.change(steps=6)
    resumed.train([won_data], [won_data], backend_name="torch", progress=False, threads=1,
                  log_every=2, eval_every=4, eval_positions=30)
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    evaluation = next(record for record in log if record["type"] == "eval")
    assert evaluation["value_positions"] == 30 and evaluation["training_positions"]["value_loss"] > 0
    assert evaluation["score_positions"] == 0       # resigned games: no score, no ownership
    best, metadata = load_judge(tmp_path / "run" / "best.npz")
    assert metadata["trainer"]["best_value_loss"] == evaluation["value_loss"]
    assert [record["step"] for record in log if record["type"] == "train"] == [2, 4, 6]
    assert evaluation["top5"] >= evaluation["top1"]
    from engine.training.policycli import plot_runs
    assert Path(plot_runs([tmp_path / "run"], tmp_path / "curves.png")).stat().st_size > 0


@needs_torch
def test_a_judge_run_starts_from_a_res_policy_net(won_data, tmp_path):
    policy = PolicyNet({"kind": "res", "channels": 6, "layers": 3, "first_kernel": 5}, "rich", seed=4)
    save_policy(tmp_path / "policy.npz", policy, 9, games_trained=5, positions_trained=500)
    net, metadata = starting_net(tmp_path / "policy.npz", kind="judge", head_channels=3, value_hidden=5)
    assert isinstance(net, JudgeNet) and metadata["positions_trained"] == 500
    assert net.architecture["head_channels"] == 3
    settings = judge_settings(channels=6, layers=3, first_kernel=5, steps=2)
    run = PolicyRun.create(tmp_path / "run", settings, net, metadata["positions_trained"])
    run.train([won_data], backend_name="torch", progress=False, threads=1)
    assert load_judge(tmp_path / "run" / "weights.npz")[1]["positions_trained"] == 500 + 2 * 16
    with pytest.raises(ValueError, match="do not describe the starting net"):
        PolicyRun.create(tmp_path / "other", judge_settings(channels=8, steps=2), net)


@needs_torch
def test_a_judge_run_grows_the_owned_lead_on_a_judging_net_and_trains_it(won_data, tmp_path):
    from engine.training.policytrain import net_settings
    save_policy(tmp_path / "judge.npz", trained_like(), 9, games_trained=5, positions_trained=500)
    net, metadata = starting_net(tmp_path / "judge.npz", kind="judge", owned_lead=1)
    assert net.architecture["owned_lead"] == 1 and not net.params["value.out.w"][-1].any()
    settings = judge_settings(**dict(net_settings(net), steps=4, head_optimizer="adam"))
    run = PolicyRun.create(tmp_path / "run", settings, net, metadata["positions_trained"])
    run.train([won_data], backend_name="torch", progress=False, threads=1)
    trained, _ = load_judge(tmp_path / "run" / "weights.npz")
    assert trained.architecture["owned_lead"] == 1 and trained.params["value.out.w"][-1].any()
    unchanged, _ = starting_net(tmp_path / "judge.npz", kind="judge")
    assert not unchanged.architecture.get("owned_lead")


def test_the_judging_net_needs_data_with_targets_and_torch(tmp_path, monkeypatch):
    import engine.training.judging as judging
    monkeypatch.setattr(judging, "torch_available", lambda: False)
    with pytest.raises(ValueError, match="PyTorch"):
        judging.make_judge_backend("auto", JudgeNet(ARCHITECTURE, "rich"), judge_settings())
    with pytest.raises(ValueError, match="PyTorch only"):
        judging.make_judge_backend("numpy", JudgeNet(ARCHITECTURE, "rich"), judge_settings())


def test_the_judgement_of_counted_games_from_blacks_side(tmp_path):
    from engine.nets.judge import Judgement
    from engine.training.judgeeval import judged_positions, judgement_table
    from tests.unit.training.test_agreedcounts import record
    games = [record("W+16.5"), record("B+2.5"), record("B+R"), record("W+T"),
             record("B+0.5", extra="HA[2]AB[aa][ab]")]
    (tmp_path / "games.sgf").write_text("\n".join(games))
    points = {"end-5": -5, "move-10": 10, "move-99": 99}
    positions = list(judged_positions([tmp_path / "games.sgf"], size=9, points=points))
    assert [(p.point, p.margin) for p in positions] == \
        [("move-10", -16.5), ("end-5", -16.5), ("move-10", 2.5), ("end-5", 2.5)]
    assert positions[0].to_move == 1 and positions[1].to_move == 2      # moves 11 and 19 (of 21)

    def says(planes):
        """The side to move wins with 0.8 and leads by 4 points: Black's view alternates."""
        batch, size = len(planes), planes.shape[-1]
        return Judgement(np.zeros((batch, size * size + 1)), np.full(batch, 0.8, np.float32),
                         np.full(batch, 4.0, np.float32), np.zeros((batch, size, size), np.float32))

    table = judgement_table(says, positions)
    # move 10, Black to move in both: it says Black wins (0.8, +4); Black lost the first game
    assert table["move-10"] == {"positions": 2, "winner_by_win_rate": 0.5, "winner_by_score": 0.5,
                                "brier": pytest.approx((0.8 ** 2 + 0.2 ** 2) / 2),
                                "score_error": pytest.approx((20.5 + 1.5) / 2)}
    # end-5, White to move: it says White wins (Black 0.2, -4); White won the first game
    assert table["end-5"]["winner_by_win_rate"] == 0.5 and table["end-5"]["score_error"] == \
        pytest.approx((12.5 + 6.5) / 2)
    assert "move-99" not in table


def test_the_judgement_command_refuses_what_it_cannot_judge(tmp_path, capsys):
    from engine.training.train import main as kosumi_train
    from tests.unit.training.test_agreedcounts import record
    (tmp_path / "short.sgf").write_text(record("W+16.5"))      # 21 moves: no move 150, no end-40
    save_policy(tmp_path / "judge.npz", trained_like(), 9, 0, 0)
    save_policy(tmp_path / "policy.npz", PolicyNet({"kind": "conv", "channels": 4, "layers": 2,
                                                    "first_kernel": 3}, "rich"), 9, 0, 0)
    for weights, message in (("judge.npz", "no counted games"), ("policy.npz", "policy.npz.*not a judge")):
        with pytest.raises(SystemExit):
            kosumi_train(["policy", "judgement", "--weights", str(tmp_path / weights), "--sgf",
                          str(tmp_path / "short.sgf"), "--size", "9"])
        assert re.search(message, capsys.readouterr().err)


@needs_torch
def test_the_heads_learn_at_their_share_of_the_rate():
    from engine.training.judging import JudgeBackend
    planes, judged = random_planes(4, 5), targets_of(4, 5)
    moves = np.arange(4, dtype=np.int64)
    changes = []
    for scale in (1.0, 10.0):
        net = trained_like()
        backend = JudgeBackend(net, judge_settings(head_rate_scale=scale), threads=1, convolutions="direct")
        before = {name: value.copy() for name, value in net.params.items()}
        backend.step(planes, moves, 0.01, judged=judged)
        after = backend.export().params
        changes.append({name: after[name] - before[name] for name in ("conv1.w", "value.fc.w", "ownership.w")})
    assert np.allclose(changes[1]["conv1.w"], changes[0]["conv1.w"], atol=1e-7)
    for name in ("value.fc.w", "ownership.w"):
        assert np.abs(changes[0][name]).max() > 0
        assert np.allclose(changes[1][name], 10.0 * changes[0][name], rtol=1e-3, atol=1e-8)
    with pytest.raises(ValueError, match="head_rate_scale"):
        judge_settings(head_rate_scale=0)


@needs_torch
def test_a_run_whose_heads_learn_by_adam_resumes_exactly(won_data, tmp_path):
    settings = judge_settings(steps=4, head_optimizer="adam", head_rate_scale=0.05)
    straight = PolicyRun.create(tmp_path / "straight", settings)
    straight.train([won_data], backend_name="torch", progress=False, threads=1)
    stopped = PolicyRun.create(tmp_path / "stopped", judge_settings(steps=2, head_optimizer="adam",
                                                                    head_rate_scale=0.05))
    stopped.train([won_data], backend_name="torch", progress=False, threads=1)
    with np.load(tmp_path / "stopped" / "state.npz") as state:
        assert any(key.startswith("adam/value.fc.w/") for key in state.files)
    resumed = PolicyRun.resume(tmp_path / "stopped")
    resumed.change(steps=4)
    resumed.train([won_data], backend_name="torch", progress=False, threads=1)
    one, other = load_judge(tmp_path / "straight" / "weights.npz")[0], load_judge(tmp_path / "stopped" / "weights.npz")[0]
    for name in ("conv0.w", "value.fc.w", "value.out.w", "ownership.w"):
        np.testing.assert_allclose(one.params[name], other.params[name], rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="head_optimizer"):
        judge_settings(head_optimizer="rmsprop")
