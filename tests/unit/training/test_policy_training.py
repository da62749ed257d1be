"""The policy net's data and trainer: readers of SGF collections and archives with broken records,
position data that resumes, a tiny run that learns a fixed opening, resume after a stop, and
`kosumi-train policy eval` on a small fixed set."""
import io
import json
import lzma
import tarfile
import zipfile

import numpy as np
import pytest

from engine.nets.policy import PolicyNet, load_policy
from engine.nets.predictor import MovePredictor
from engine.rules.coords import format_vertex
from engine.rules.game import GameState, Rules
from engine.training.policydata import PolicyDataset, prepare, read_manifest
from engine.training.policygrow import grown
from engine.training.policybackends import make_backend, torch_available
from engine.training.policytrain import PolicyRun, PolicySettings
from engine.training.sgfdata import ReadCounts, iter_games, read_game, split_collection
from engine.training.train import main as kosumi_train

OPENING = ["ee", "cc", "gg", "cg", "gc", "dd", "ff"]   # the moves every test game plays first


def game_sgf(moves, size=9, extra=""):
    colours = "BW"
    body = "".join(f";{colours[i % 2]}[{m}]" for i, m in enumerate(moves))
    return f"(;GM[1]FF[4]SZ[{size}]KM[7]RE[B+R]{extra}{body})".encode()


def varied_games(count, seed=0):
    """Games opening with OPENING, then a few random legal-looking moves."""
    rng = np.random.default_rng(seed)
    letters = "abcdefghi"
    games = []
    for _ in range(count):
        tail, used = [], set(OPENING)
        while len(tail) < 5:
            move = letters[rng.integers(9)] + letters[rng.integers(9)]
            if move not in used:
                used.add(move)
                tail.append(move)
        games.append(game_sgf(OPENING + tail))
    return games


BROKEN = b"(;GM[1]SZ[9];B[ee];W[ee])"          # a move onto a stone
UNREADABLE = b"(;GM[1]SZ[9];B[ee"                 # cut off in a property value


def test_collections_are_cut_into_games():
    text = game_sgf(["ee"]) + b"\n" + game_sgf(["cc", "dd"]) + b"\n"
    assert len(split_collection(text)) == 2
    nested = b"(;GM[1]SZ[9]C[a ) and a \\] inside];B[ee](;W[cc])(;W[dd]))(;SZ[9];B[aa])"
    trees = split_collection(nested)
    assert len(trees) == 2 and trees[1] == b"(;SZ[9];B[aa])"
    record = read_game("x", trees[0])
    assert [format_vertex(loc, 9) for _, loc in record.moves] == ["E5", "C7"]   # the main line


def test_readers_skip_broken_records_in_every_format(tmp_path):
    good = varied_games(3)
    collection = tmp_path / "games.sgf"
    collection.write_bytes(b"\n".join(good + [BROKEN, UNREADABLE]))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for i, data in enumerate(good + [UNREADABLE]):
            info = tarfile.TarInfo(f"kgs/{i}.sgf")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    (tmp_path / "games.tar.gz").write_bytes(buffer.getvalue())
    (tmp_path / "games.sgf.xz").write_bytes(lzma.compress(b"\n".join([UNREADABLE] + good)))
    with zipfile.ZipFile(tmp_path / "games.zip", "w") as archive:
        for i, data in enumerate(good + [UNREADABLE]):
            archive.writestr(f"{i}.sgf", data)
    for name in ("games.sgf", "games.tar.gz", "games.sgf.xz", "games.zip"):
        counts = ReadCounts()
        records = [record for _, record in iter_games([tmp_path / name], counts)]
        assert counts.games == len(records) == (4 if name == "games.sgf" else 3), name
        assert counts.skipped == {"unreadable": 1}, name
    # a data directory of the whole folder: the move onto a stone is skipped too
    manifest = prepare([tmp_path], tmp_path / "data", size=9)
    assert manifest["games"] == 12 and manifest["skipped"] == {"unreadable": 4, "illegal move or setup": 1}
    assert manifest["positions"] == 12 * 12


def test_prepare_resumes_where_it_stopped(tmp_path):
    (tmp_path / "games.sgf").write_bytes(b"\n".join(varied_games(10)))
    first = prepare([tmp_path / "games.sgf"], tmp_path / "data", size=9, max_games=4, shard_positions=20)
    assert first["games"] == 4 and len(first["shards"]) == 2
    again = prepare([tmp_path / "games.sgf"], tmp_path / "data", size=9, shard_positions=20)
    assert again["games"] == 10 and again["positions"] == 120 and again["trees_done"] == 10
    prepare([tmp_path / "games.sgf"], tmp_path / "whole", size=9)
    one, other = PolicyDataset([tmp_path / "data"]), PolicyDataset([tmp_path / "whole"])
    everything = np.arange(120)
    for a, b in zip(one.gather(everything, 4), other.gather(everything, 4)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="same sources"):
        prepare([tmp_path], tmp_path / "data", size=9)


def test_history_boards_stop_at_the_games_start(tmp_path):
    (tmp_path / "games.sgf").write_bytes(b"\n".join(varied_games(2)))
    prepare([tmp_path / "games.sgf"], tmp_path / "data", size=9)
    dataset = PolicyDataset([tmp_path / "data"])
    records, moves, own = dataset.gather(np.array([0, 2, 12]), 4)
    assert not records[0, 1:].any()                   # the first position: nothing before it
    assert records[1, 2].any() is np.False_ or not records[1, 3:].any()
    assert not records[2, 1:].any()                   # the second game's first position
    assert list(own[:2]) == [1, 1] and moves[0] == 4 * 9 + 4


needs_torch = pytest.mark.skipif(not torch_available(), reason="PyTorch is not installed (pip install -e '.[train]')")


@pytest.fixture
def data(tmp_path):
    """Position data of 10 varied 9x9 games."""
    (tmp_path / "games.sgf").write_bytes(b"\n".join(varied_games(10)))
    prepare([tmp_path / "games.sgf"], tmp_path / "data", size=9)
    return tmp_path / "data"


def small_settings(**changes):
    values = dict(kind="conv", channels=16, layers=3, first_kernel=5, batch_size=16,
                  learning_rate="0.02@0", steps=150, seed=3)
    values.update(changes)
    return PolicySettings(**values)


@pytest.mark.slow
def test_a_tiny_run_learns_a_fixed_opening(tmp_path):
    (tmp_path / "games.sgf").write_bytes(b"\n".join(varied_games(30)))
    prepare([tmp_path / "games.sgf"], tmp_path / "data", size=9)
    # as played: under the board's symmetries the 3-3 points after E5 are one move
    run = PolicyRun.create(tmp_path / "run", small_settings(steps=300, augment=0))
    run.train([tmp_path / "data"], backend_name="numpy", log_every=100, checkpoint_every=100,
              progress=False)
    predictor = MovePredictor.load(tmp_path / "run" / "weights.npz")
    game = GameState(9, Rules())
    for expected in OPENING:
        probabilities = predictor.probabilities(game)
        best = int(np.argmax(probabilities[:-1]))
        assert format_vertex(best, 9) == format_vertex(_loc(expected), 9)
        game.play(_loc(expected))
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == [100, 200, 300] and log[-1]["loss"] < log[0]["loss"]


def _loc(sgf_point):
    col, row = "abcdefghi".index(sgf_point[0]), "abcdefghi".index(sgf_point[1])
    return (row + 1) * 11 + col + 1


@pytest.mark.parametrize("backend", [
    "numpy",
    pytest.param("torch", marks=needs_torch)])
def test_a_stopped_run_resumes_exactly(data, tmp_path, backend):
    straight = PolicyRun.create(tmp_path / "straight", small_settings(steps=20, average_decay=0.9))
    straight.train([data], backend_name=backend, progress=False)

    class StopAt:
        def __init__(self, run, step):
            self.run, self.step = run, step

        @property
        def requested(self):
            return self.run.step >= self.step

    halted = PolicyRun.create(tmp_path / "halted", small_settings(steps=20, average_decay=0.9))
    halted.train([data], backend_name=backend, progress=False, stop=StopAt(halted, 8))
    assert halted.step == 8
    resumed = PolicyRun.resume(tmp_path / "halted")
    assert resumed.step == 8 and resumed.positions == 8 * 16
    resumed.train([data], backend_name=backend, progress=False)
    for name in ("weights.npz", "average.npz"):
        a, _ = load_policy(tmp_path / "straight" / name)
        b, _ = load_policy(tmp_path / "halted" / name)
        np.testing.assert_allclose(a.flat_params(), b.flat_params(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", [
    "numpy",
    pytest.param("torch", marks=needs_torch)])
def test_the_weights_average_is_the_moving_average_of_the_steps(data, tmp_path, backend):
    dataset = PolicyDataset([data])
    settings = small_settings(kind="res", average_decay=0.8)
    trainer = make_backend(backend, PolicyNet(settings.architecture(), "rich", seed=3), settings)
    trainer.start_average()
    expected = trainer.export().flat_params().astype(np.float64)
    for step in range(4):
        planes, moves = dataset.batch("rich", np.arange(step * 16, step * 16 + 16))
        trainer.step(planes, moves, 0.05)
        trainer.update_average(0.8)
        expected = 0.8 * expected + 0.2 * trainer.export().flat_params()
    average = trainer.export(averaged=True)
    np.testing.assert_allclose(average.flat_params(), expected, rtol=1e-4, atol=1e-6)
    assert not np.allclose(average.flat_params(), trainer.export().flat_params(), atol=1e-4)
    np.testing.assert_allclose(trainer.logits(planes, averaged=True), average.forward(planes), rtol=1e-4, atol=1e-4)


def test_averaging_may_start_on_resume_and_its_net_is_evaluated_and_kept(data, tmp_path):
    PolicyRun.create(tmp_path / "run", small_settings(steps=4)).train(
        [data], backend_name="numpy", progress=False)
    assert not (tmp_path / "run" / "average.npz").exists()
    before = load_policy(tmp_path / "run" / "weights.npz")[0].flat_params()
    assert kosumi_train(["policy", "train", "--resume", str(tmp_path / "run"), "--data", str(data),
                         "--eval-data", str(data), "--eval-every", "2", "--eval-positions", "40",
                         "--steps", "6", "--average-decay", "0.5", "--backend", "numpy", "--no-progress"]) == 0
    after = load_policy(tmp_path / "run" / "weights.npz")[0].flat_params()
    average, metadata = load_policy(tmp_path / "run" / "average.npz")
    # begun at the resumed weights, then moved towards the two steps' weights
    assert metadata["trainer"]["averaged"] and metadata["positions_trained"] == 6 * 16
    assert not np.allclose(average.flat_params(), before) and not np.allclose(average.flat_params(), after)
    records = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert {"type": "settings", "step": 4, "positions": 4 * 16, "steps": 6, "average_decay": 0.5} in records
    evaluations = [r for r in records if r["type"] == "eval"]
    assert [r["step"] for r in evaluations] == [6] and set(evaluations[0]["current"]) == {"top1", "top5", "log_loss"}
    assert load_policy(tmp_path / "run" / "best.npz")[1]["trainer"]["averaged"]
    assert kosumi_train(["plot", str(tmp_path / "run"), "--out", str(tmp_path / "curves.png")]) == 0
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"
    assert set(np.load(tmp_path / "run" / "state.npz").files) >= {f"average/{name}" for name, _ in average.shapes}
    with pytest.raises(ValueError, match="average_decay 1.0"):
        small_settings(average_decay=1.0)
    assert small_settings(average_decay=0.999).average_decay_at(0) == 0.1
    assert small_settings(average_decay=0.999).average_decay_at(10 ** 6) == 0.999


def test_a_run_from_weights_takes_the_files_net_and_settings_to_match(data, tmp_path):
    PolicyRun.create(tmp_path / "first", small_settings(channels=8, layers=2, steps=3)).train(
        [data], backend_name="numpy", progress=False)
    start, metadata = load_policy(tmp_path / "first" / "weights.npz")
    # the command line's defaults (the sn2008 kind; 6 x 48 maps for conv) give way to the file's net
    assert kosumi_train(["policy", "train", "--run-dir", str(tmp_path / "second"), "--from-weights",
                         str(tmp_path / "first" / "weights.npz"), "--data", str(data),
                         "--steps", "2", "--backend", "numpy", "--no-progress"]) == 0
    settings = json.loads((tmp_path / "second" / "settings.json").read_text())
    assert (settings["kind"], settings["channels"], settings["layers"], settings["first_kernel"],
            settings["feature_set"]) == ("conv", 8, 2, 5, "rich")
    resumed = PolicyRun.resume(tmp_path / "second")
    # its steps count from 0, its positions from the file's: the net's whole training
    assert resumed.positions == metadata["positions_trained"] + 2 * resumed.settings.batch_size
    assert metadata["positions_trained"] == 3 * small_settings().batch_size > 0
    assert resumed.step == 2 and resumed.settings.architecture() == \
        {key: start.architecture[key] for key in ("kind", "channels", "layers", "first_kernel")}
    assert not np.allclose(resumed.net.flat_params(), start.flat_params())
    with pytest.raises(ValueError, match="do not describe the starting net"):
        PolicyRun.create(tmp_path / "third", small_settings(), start)
    # a res net's layers are the file's too, not the default's even count that a res net refuses
    PolicyRun.create(tmp_path / "res", small_settings(kind="res", layers=3, steps=1)).train(
        [data], backend_name="numpy", progress=False)
    assert kosumi_train(["policy", "train", "--run-dir", str(tmp_path / "from-res"), "--kind", "res", "--from-weights",
                         str(tmp_path / "res" / "weights.npz"), "--data", str(data), "--steps", "1",
                         "--backend", "numpy", "--no-progress"]) == 0
    assert PolicyRun.resume(tmp_path / "from-res").settings.layers == 3


def test_a_grown_net_predicts_the_moves_of_the_net_it_grew_from():
    rng = np.random.default_rng(3)
    net = PolicyNet({"kind": "conv", "channels": 4, "layers": 3, "first_kernel": 3}, "rich", seed=3)
    net.params = {k: (v + rng.standard_normal(v.shape) * 0.3).astype(np.float32) for k, v in net.params.items()}
    x = rng.random((3, net.feature_set.planes, 9, 9))
    exact = grown(net, layers=5, channels=7, noise=0.0)
    assert (exact.architecture["layers"], exact.architecture["channels"]) == (5, 7)
    assert np.allclose(exact.forward(x), net.forward(x), atol=1e-5)
    many = grown(net, layers=9, noise=0.0)                 # more new layers than old ones
    assert np.allclose(many.forward(x), net.forward(x), atol=1e-5)
    # the copies of a map split its outgoing weights in shares that differ weight by weight, so
    # their kernels' gradients differ from the start: they can learn apart
    logits, cache = exact.forward(x, keep=True)
    gradients = exact.backward(cache, logits - logits.mean())
    for copy in range(4, 7):
        source = next(m for m in range(4) if np.array_equal(exact.params["conv0.w"][m], exact.params["conv0.w"][copy]))
        ratio = gradients["conv0.w"][copy] / gradients["conv0.w"][source]
        assert np.ptp(ratio) > 0.1 * np.abs(ratio).mean()
    noisy = grown(net, channels=7, noise=0.01, seed=1)
    plain = net.forward(x)
    assert np.abs(noisy.forward(x) - plain).max() < 0.05 * np.abs(plain).max()
    # a new map's kernels are its source's plus noise, so copies can learn apart
    new_maps, old_maps = noisy.params["conv0.w"][4:], net.params["conv0.w"]
    assert not any(np.array_equal(m, o) for m in new_maps for o in old_maps)
    with pytest.raises(ValueError, match="grows only"):
        grown(net, layers=2)
    with pytest.raises(ValueError, match="only conv"):
        grown(PolicyNet({"kind": "sn2008", "hidden": 3, "kernel": 3, "boards": 5}, "sn2008"), layers=2)


def test_a_run_starts_from_a_grown_net(data, tmp_path, capsys):
    PolicyRun.create(tmp_path / "small", small_settings(channels=4, layers=2, steps=2)).train(
        [data], backend_name="numpy", progress=False)
    assert kosumi_train(["policy", "grow", "--weights", str(tmp_path / "small" / "weights.npz"),
                         "--out", str(tmp_path / "grown.npz"), "--layers", "3", "--channels", "6"]) == 0
    assert "3 layers of 6 maps" in capsys.readouterr().out
    net, metadata = load_policy(tmp_path / "grown.npz")
    assert metadata["trainer"]["grown_from"] == "weights.npz" and metadata["positions_trained"] == 2 * 16
    assert kosumi_train(["policy", "train", "--run-dir", str(tmp_path / "big"), "--from-weights",
                         str(tmp_path / "grown.npz"), "--data", str(data),
                         "--steps", "1", "--backend", "numpy", "--no-progress"]) == 0
    settings = json.loads((tmp_path / "big" / "settings.json").read_text())
    assert (settings["layers"], settings["channels"]) == (3, 6)
    with pytest.raises(SystemExit):
        kosumi_train(["policy", "grow", "--weights", str(tmp_path / "grown.npz"),
                      "--out", str(tmp_path / "smaller.npz"), "--layers", "2"])
    assert "grows only" in capsys.readouterr().err


def test_a_res_run_is_refused_an_even_number_of_layers_before_it_starts():
    with pytest.raises(ValueError, match="odd number of layers"):
        small_settings(kind="res", layers=4)
    assert small_settings(kind="res", layers=5).architecture()["kind"] == "res"


def test_a_resumed_run_may_change_its_schedule_and_length_only(data, tmp_path):
    PolicyRun.create(tmp_path / "run", small_settings(steps=4)).train(
        [data], backend_name="numpy", progress=False)
    assert kosumi_train(["policy", "train", "--resume", str(tmp_path / "run"), "--data", str(data),
                         "--steps", "6", "--learning-rate", "0.02@0,0.005@5", "--backend", "numpy",
                         "--no-progress"]) == 0
    resumed = PolicyRun.resume(tmp_path / "run")
    assert resumed.step == 6 and resumed.settings.steps == 6
    assert resumed.settings.rate_at(4) == 0.02 and resumed.settings.rate_at(5) == 0.005
    records = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert {"type": "settings", "step": 4, "positions": 4 * 16, "steps": 6,
            "learning_rate": "0.02@0,0.005@5"} in records
    with pytest.raises(SystemExit):
        kosumi_train(["policy", "train", "--resume", str(tmp_path / "run"), "--data", str(data),
                      "--channels", "8", "--no-progress"])
    assert PolicyRun.resume(tmp_path / "run").settings.channels == 16


@pytest.mark.slow
@needs_torch
def test_the_torch_backend_takes_the_same_steps_as_numpy(data, tmp_path):
    for kind in ("conv", "res", "sn2008"):
        settings = small_settings(kind=kind, feature_set="", kernel=3, hidden=3, steps=5)
        runs = []
        for backend in ("numpy", "torch"):
            run = PolicyRun.create(tmp_path / f"{kind}-{backend}", settings)
            run.train([data], backend_name=backend, progress=False)
            runs.append(load_policy(tmp_path / f"{kind}-{backend}" / "weights.npz")[0].flat_params())
        np.testing.assert_allclose(runs[0], runs[1], rtol=1e-3, atol=1e-5)


@needs_torch
def test_bfloat16_steps_follow_the_float32_steps(data, tmp_path):
    settings = small_settings(kind="conv", feature_set="", steps=1)
    runs = []
    for precision in ("fp32", "bf16"):
        run = PolicyRun.create(tmp_path / precision, settings)
        run.train([data], backend_name="torch", progress=False, precision=precision)
        runs.append(load_policy(tmp_path / precision / "weights.npz")[0].flat_params())
    start = PolicyNet(settings.architecture(), "rich", seed=settings.seed).flat_params()
    # bfloat16 keeps 8 bits of mantissa: a step in nearly the same direction, not the same step
    step32, step16 = runs[0] - start, runs[1] - start
    cosine = step32 @ step16 / (np.linalg.norm(step32) * np.linalg.norm(step16))
    assert 0.99 < cosine < 1 - 1e-7
    assert 0.8 < np.linalg.norm(step16) / np.linalg.norm(step32) < 1.25
    with pytest.raises(ValueError, match="only the torch backend"):
        PolicyRun.create(tmp_path / "numpy", settings).train(
            [data], backend_name="numpy", progress=False, precision="bf16")


def winograd_and_direct_gradients(settings, size, threads=None, seed=0):
    """{name: (Winograd's gradient, torch's own)} of one batch's loss, and the logits."""
    import torch
    from engine.training.policybackends import TorchBackend
    rng = np.random.default_rng(seed)
    net = PolicyNet(settings.architecture(), settings.feature_set or "rich", seed=seed)
    # a res net's pairs end in zeros, which would hide the gradients through them
    net.params = {name: value if value.any() or not (name.startswith("conv") and name.endswith(".w"))
                  else (0.1 * rng.standard_normal(value.shape)).astype(np.float32)
                  for name, value in net.params.items()}
    planes = rng.random((5, net.feature_set.planes, size, size)).astype(np.float32)
    moves = torch.from_numpy(rng.integers(0, size * size + 1, 5))
    results = []
    for convolutions in ("winograd", "direct"):
        backend = TorchBackend(net.with_params(dict(net.params)), settings, threads, convolutions=convolutions)
        with backend.passes():
            logits = backend._forward(planes, backend.params)
            torch.nn.functional.cross_entropy(logits, moves).backward()
        results.append({"logits": logits.detach().numpy()} |
                       {name: param.grad.numpy().copy() for name, param in backend.params.items()})
    return {name: (results[0][name], results[1][name]) for name in results[0]}


@needs_torch
@pytest.mark.parametrize("size,first_kernel", [(19, 5), (9, 3), (7, 7), (5, 5)])
@pytest.mark.parametrize("kind,layers", [("conv", 4), ("res", 5)])
def test_winograd_steps_have_torch_convolutions_gradients(size, first_kernel, kind, layers):
    # 7: a first layer with no transform takes torch's own; 5: one block, cut by the edge
    settings = small_settings(kind=kind, channels=11, layers=layers, first_kernel=first_kernel)
    for name, (winograd, direct) in winograd_and_direct_gradients(settings, size).items():
        assert winograd.shape == direct.shape
        assert np.allclose(winograd, direct, atol=3e-4 * np.abs(direct).max()), name


@needs_torch
def test_winograd_threads_share_a_batch_and_give_its_gradients():
    settings = small_settings(channels=11, layers=3, first_kernel=5)
    one, two = (winograd_and_direct_gradients(settings, 9, threads) for threads in (1, 2))
    for name in one:    # the same sums, in another order where torch's threads add them
        assert np.allclose(one[name][0], two[name][0], atol=1e-5 * np.abs(one[name][0]).max()), name


@needs_torch
def test_winograd_convolutions_are_for_conv_nets_in_float32():
    from engine.training.policybackends import TorchBackend, use_winograd
    assert use_winograd("auto", "fp32", "conv") and not use_winograd("auto", "bf16", "conv")
    assert not use_winograd("auto", "fp32", "sn2008") and not use_winograd("direct", "fp32", "conv")
    settings = small_settings(kind="sn2008", feature_set="", kernel=3, hidden=3)
    for precision, net_settings in (("bf16", small_settings()), ("fp32", settings)):
        net = PolicyNet(net_settings.architecture(), net_settings.feature_set or "rich")
        with pytest.raises(ValueError, match="take --convolutions direct"):
            TorchBackend(net, net_settings, precision=precision, convolutions="winograd")
    with pytest.raises(ValueError, match="choose from auto, winograd, direct"):
        use_winograd("fast", "fp32", "conv")


@needs_torch
def test_bfloat16_on_a_cpu_that_only_emulates_it_warns(monkeypatch, capsys):
    import engine.training.policybackends as backends
    net = PolicyNet(small_settings().architecture(), "rich", seed=1)
    for native, warned in ((True, False), (False, True)):
        monkeypatch.setattr(backends, "native_bf16", lambda torch: native)
        backends.TorchBackend(net, small_settings(), precision="bf16")
        assert ("no native bfloat16" in capsys.readouterr().err) == warned
    backends.TorchBackend(net, small_settings(), precision="fp32")
    assert capsys.readouterr().err == ""


def test_native_bfloat16_is_asked_of_onednn_or_read_from_the_cpu_capability():
    from types import SimpleNamespace
    from engine.training.policybackends import native_bf16

    def fake_torch(supported, capability):
        def query():
            if supported is None:
                raise AttributeError("_is_mkldnn_bf16_supported")
            return supported
        return SimpleNamespace(ops=SimpleNamespace(mkldnn=SimpleNamespace(
            _is_mkldnn_bf16_supported=query)), backends=SimpleNamespace(cpu=SimpleNamespace(
                get_cpu_capability=lambda: capability)))
    assert native_bf16(fake_torch(True, "AVX2")) and not native_bf16(fake_torch(False, "AVX512"))
    assert native_bf16(fake_torch(None, "AVX512")) and not native_bf16(fake_torch(None, "AVX2"))


@pytest.mark.slow
def test_policy_eval_on_a_fixed_set(tmp_path, capsys):
    (tmp_path / "games.sgf").write_bytes(b"\n".join(varied_games(30)))
    prepare([tmp_path / "games.sgf"], tmp_path / "data", size=9)
    run = PolicyRun.create(tmp_path / "run", small_settings(steps=300, augment=0))
    run.train([tmp_path / "data"], backend_name="numpy", progress=False)
    held_out = tmp_path / "held_out.sgf"
    held_out.write_bytes(b"\n".join(varied_games(4, seed=9) + [BROKEN]))
    assert kosumi_train(["policy", "eval", "--weights", str(tmp_path / "run" / "weights.npz"),
                         "--sgf", str(held_out), "--size", "9", "--json", str(tmp_path / "r.json")]) == 0
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["positions"] == 4 * 12 and result["skipped"] == 1
    # the opening's 7 moves of every game are predicted; the random tails mostly not
    assert 7 / 12 - 0.01 <= result["top1"] <= 1 and result["top5"] >= result["top1"]
    assert result["log_loss"] > 0
    assert "top1" in capsys.readouterr().out
    # by move number: the fixed opening (moves 1-7) against the random tails (8-12)
    assert kosumi_train(["policy", "eval", "--weights", str(tmp_path / "run" / "weights.npz"),
                         "--sgf", str(held_out), "--size", "9", "--stretch", "7",
                         "--json", str(tmp_path / "r7.json")]) == 0
    opening, tail = json.loads((tmp_path / "r7.json").read_text())["by_move_number"]
    assert (opening["first"], opening["last"], opening["positions"]) == (1, 7, 4 * 7)
    assert (tail["first"], tail["last"], tail["positions"]) == (8, 14, 4 * 5)
    assert opening["top1"] == 1 and tail["top1"] < 0.5
    assert "moves   8-14" in capsys.readouterr().out
    # averaged over the 8 symmetries, as --policy-symmetries 8 plays
    assert kosumi_train(["policy", "eval", "--weights", str(tmp_path / "run" / "weights.npz"),
                         "--sgf", str(held_out), "--size", "9", "--symmetries", "8",
                         "--json", str(tmp_path / "r8.json")]) == 0
    averaged = json.loads((tmp_path / "r8.json").read_text())
    assert averaged["symmetries"] == 8 and averaged["positions"] == result["positions"]
    assert averaged["log_loss"] != result["log_loss"]
    # with the products in bfloat16, as --policy-precision bf16 plays: nearly the same numbers
    assert result["precision"] == "fp32"
    assert kosumi_train(["policy", "eval", "--weights", str(tmp_path / "run" / "weights.npz"),
                         "--sgf", str(held_out), "--size", "9", "--precision", "bf16",
                         "--json", str(tmp_path / "rb.json")]) == 0
    rounded = json.loads((tmp_path / "rb.json").read_text())
    assert rounded["precision"] == "bf16" and rounded["positions"] == result["positions"]
    assert rounded["log_loss"] != result["log_loss"]
    assert rounded["log_loss"] == pytest.approx(result["log_loss"], rel=0.05)


def test_training_data_errors_name_the_directory(tmp_path):
    with pytest.raises(ValueError, match="not a policy data directory"):
        read_manifest(tmp_path)
    with pytest.raises(SystemExit):
        kosumi_train(["policy", "train", "--run-dir", str(tmp_path / "run"), "--data", str(tmp_path)])
