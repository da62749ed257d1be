"""The TD self-play trainer: learning, checkpoints, resumption, kill -9, logs, workers, plots."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from engine.nets import network as isn
from engine.training import learning, plots, train
from engine.training import history as run_history
from engine.nets import weights as weight_files
from engine.rules.board import BLACK
from engine.tools.gtp_client import GtpClient, find_gnugo
from engine.training.selfplay import SelfPlayConfig, play_game
from engine.training.settings import shortcut_mask
from tests.paths import REPO

TINY = dict(size=5, learning_rate=1e-4, shortcut_games=10, seed=7)


def tiny_settings(**changes):
    return train.TrainSettings(**{**TINY, **changes})


def read_log(run_dir):
    return [json.loads(line) for line in (Path(run_dir) / "log.jsonl").read_text().splitlines()]


def game_lines(run_dir):
    return [line for line in read_log(run_dir) if line["type"] == "game"]


def held_out_final_positions(count, seed, feature_set="isn14"):
    """Final positions of games played by an unrelated net: nothing the trainer sees."""
    network = weight_files.new_network(1000 + seed, feature_set=feature_set)
    rng = np.random.default_rng(seed)
    config = SelfPlayConfig(size=5)
    return [learning.final_position(network, play_game(network, config, rng), 0.4)
            for _ in range(count)]


def test_tiny_run_learns_and_its_weights_play_in_the_gtp_engine(tmp_path):
    held_out = held_out_final_positions(20, seed=3)
    trainer = train.Trainer.create(tmp_path / "run", tiny_settings())
    before = learning.final_position_error(trainer.network, held_out)
    trainer.run(games=40, workers=1, checkpoint_every=20, progress=False)
    after = learning.final_position_error(trainer.network, held_out)
    assert after < 0.7 * before, (before, after)

    weights = tmp_path / "run" / "checkpoints" / "000000040" / "weights.npz"
    with GtpClient([sys.executable, str(REPO / "gtp_server.py"), "--weights", str(weights),
                    "--seed", "1"]) as engine:
        engine.send("boardsize 5")
        engine.send("clear_board")
        engine.send("play b c3")
        move = engine.send("genmove w").lower()
        assert move == "pass" or (move[0] in "abcde" and move[1] in "12345" and move != "c3")


@pytest.mark.parametrize("feature_set, rich_signal", [("neurogo", False), ("isn14", True)])
def test_tiny_run_learns_with_other_feature_sets_and_the_rich_signal(tmp_path, feature_set,
                                                                     rich_signal):
    held_out = held_out_final_positions(20, seed=3, feature_set=feature_set)
    settings = tiny_settings(feature_set=feature_set, rich_signal=rich_signal)
    trainer = train.Trainer.create(tmp_path / "run", settings)
    assert trainer.network.feature_set == feature_set
    assert trainer.network.rich_signal == rich_signal
    before = learning.final_position_error(trainer.network, held_out)
    trainer.run(games=40, workers=1, checkpoint_every=20, progress=False)
    after = learning.final_position_error(trainer.network, held_out)
    assert after < 0.7 * before, (before, after)
    losses = [line["loss"] for line in game_lines(tmp_path / "run") if line["loss"] is not None]
    assert np.mean(losses[-10:]) < np.mean(losses[:10]), losses

    network, metadata = weight_files.load_weights(tmp_path / "run" / "checkpoints" / "000000040" /
                                                  "weights.npz")
    assert metadata["feature_set"]["name"] == feature_set
    assert network.rich_signal == rich_signal
    assert metadata["trainer"]["settings"]["feature_set"] == feature_set
    assert np.array_equal(network.get_params(), trainer.network.get_params())
    # The evaluation matches' engine plays with such a weight file.
    weights = tmp_path / "run" / "checkpoints" / "000000040" / "weights.npz"
    with GtpClient([sys.executable, str(REPO / "gtp_server.py"), "--weights", str(weights),
                    "--seed", "1"]) as engine:
        engine.send("boardsize 5")
        engine.send("clear_board")
        engine.send("play b c3")
        move = engine.send("genmove w").lower()
        assert move == "pass" or (move[0] in "abcde" and move[1] in "12345" and move != "c3")


def test_rich_signal_outputs_are_trained_towards_the_final_rich_targets():
    network = weight_files.new_network(5, rich_signal=True)
    settings = tiny_settings(rich_signal=True)
    record = play_game(network, settings.selfplay_config("all"), np.random.default_rng(2))
    assert record.outputs.shape == (record.length, 49, isn.N_OUTPUTS + isn.N_RICH_OUTPUTS)
    game = learning.TrainingGame.from_record(record, settings, 0.0)
    grad, loss, entries = learning.game_gradient(network, game, 1.0)
    expected = np.zeros(network.num_params)
    expected_loss = 0.0
    for t in range(record.length):
        colour = BLACK if record.black_to_move[t] else 3 - BLACK
        targets, mask = isn.final_targets(record.final_board, 0.4, colour)
        rich, rich_mask = isn.rich_targets(record.final_board, colour)
        expected_loss += network.loss_and_gradient(
            record.inputs[t], np.concatenate([targets, rich], axis=1),
            np.concatenate([mask, rich_mask], axis=1), expected)
    assert np.allclose(grad, expected) and np.isclose(loss, expected_loss)
    # The rich outputs' own parameters (their shortcut weights) receive gradient.
    start, stop, shape = network.parameter_blocks()["shortcut"]
    shortcut_grad = grad[start:stop].reshape(shape)
    assert np.abs(shortcut_grad[isn.N_OUTPUTS:]).max() > 0


def test_game_gradient_with_lambda_one_trains_on_the_final_targets():
    network = weight_files.new_network(5)
    settings = tiny_settings()
    record = play_game(network, settings.selfplay_config("all"), np.random.default_rng(2))
    game = learning.TrainingGame.from_record(record, settings, 0.0)
    grad, loss, entries = learning.game_gradient(network, game, 1.0)
    expected = np.zeros(network.num_params)
    expected_loss = 0.0
    for t in range(record.length):
        colour = BLACK if record.black_to_move[t] else 3 - BLACK
        targets, mask = isn.final_targets(record.final_board, 0.4, colour)
        expected_loss += network.loss_and_gradient(record.inputs[t], targets, mask, expected)
    assert np.allclose(grad, expected) and np.isclose(loss, expected_loss)
    assert entries > 0 and np.abs(grad).max() > 0
    # The outputs the game was played with are the ones the inputs give.
    assert np.allclose(np.array([network.forward(x) for x in record.inputs]), record.outputs)


def test_shortcut_phase_trains_only_the_shortcuts(tmp_path):
    trainer = train.Trainer.create(tmp_path / "run", tiny_settings(shortcut_games=6))
    start = trainer.network.get_params()
    trainer.run(games=6, workers=1, checkpoint_every=0, progress=False)
    middle = trainer.network.get_params()
    shortcuts = shortcut_mask(trainer.network)
    assert not np.allclose(middle[shortcuts], start[shortcuts])
    assert np.array_equal(middle[~shortcuts], start[~shortcuts])
    trainer.run(games=8, workers=1, checkpoint_every=0, progress=False)
    assert not np.allclose(trainer.network.get_params()[~shortcuts], start[~shortcuts])
    assert [line["phase"] for line in game_lines(tmp_path / "run")] == ["shortcut"] * 6 + ["all"] * 2


@pytest.mark.parametrize("procedure, feature_set", [
    ("blair", "isn14"), ("neurogo", "isn14"), ("blair", "neurogo"),
    pytest.param("neurogo", "neurogo", marks=pytest.mark.slow)])
def test_resume_continues_exactly(tmp_path, procedure, feature_set):
    settings = tiny_settings(procedure=procedure, shortcut_games=4, feature_set=feature_set,
                             rich_signal=feature_set == "neurogo")
    straight = train.Trainer.create(tmp_path / "straight", settings)
    straight.run(games=16, workers=1, checkpoint_every=0, progress=False)

    first = train.Trainer.create(tmp_path / "split", settings)
    first.run(games=9, workers=1, checkpoint_every=0, progress=False)
    with pytest.raises(SystemExit, match="another process"):
        train.Trainer.resume(tmp_path / "split")          # first still holds the run
    first.close()
    resumed = train.Trainer.resume(tmp_path / "split")
    assert resumed.games_trained == 9
    resumed.run(games=16, workers=1, checkpoint_every=0, progress=False)

    assert np.array_equal(straight.network.get_params(), resumed.network.get_params())
    strip = lambda lines: [{k: v for k, v in line.items() if k != "seconds"} for line in lines]
    assert strip(game_lines(tmp_path / "straight")) == strip(game_lines(tmp_path / "split"))
    if procedure == "neurogo":
        lines = game_lines(tmp_path / "split")
        assert sum(line["explored"] for line in lines) > 0


def test_checkpoint_metadata_and_log_line_format(tmp_path):
    trainer = train.Trainer.create(tmp_path / "run", tiny_settings())
    trainer.run(games=12, workers=1, checkpoint_every=5, progress=False)
    checkpoints = sorted(p.name for p in (tmp_path / "run" / "checkpoints").iterdir())
    assert checkpoints == ["000000000", "000000005", "000000010", "000000012"]
    assert (tmp_path / "run" / "LATEST").read_text().strip() == "000000012"
    network, metadata = weight_files.load_weights(tmp_path / "run" / "checkpoints" / "000000010" /
                                                  "weights.npz")
    assert metadata["games_trained"] == 10 and metadata["board_size"] == 5
    assert metadata["trainer"]["name"] == "kosumi-train"
    assert metadata["trainer"]["settings"] == tiny_settings().to_json()
    assert metadata["trainer"]["phase"] == "all"
    state = json.loads((tmp_path / "run" / "checkpoints" / "000000010" / "state.json").read_text())
    assert state["games_trained"] == 10 and "rng_state" in state

    lines = game_lines(tmp_path / "run")
    assert [line["game"] for line in lines] == list(range(1, 13))
    for line in lines:
        assert set(line) == {"type", "game", "phase", "worker", "loss", "length", "result", "score",
                             "capped", "superko_rejections", "explored", "seconds"}
        assert line["length"] > 0 and isinstance(line["capped"], bool)
        assert line["result"][:2] in ("B+", "W+") or line["result"] == "0"
        assert line["loss"] > 0 and line["seconds"] >= 0


def test_capped_games_are_counted_and_not_trained(tmp_path):
    trainer = train.Trainer.create(tmp_path / "run", tiny_settings(move_cap_factor=0.4))
    start = trainer.network.get_params()
    trainer.run(games=3, workers=1, checkpoint_every=0, progress=False)
    lines = game_lines(tmp_path / "run")
    assert all(line["capped"] and line["length"] == 10 and line["loss"] is None for line in lines)
    assert trainer.stats["capped_games"] == 3
    assert np.array_equal(trainer.network.get_params(), start)


def run_cli(*args, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "engine.train", *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def wait_for_games(run_dir, count, process, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = Path(run_dir) / "log.jsonl"
        if log.exists() and len(log.read_text().splitlines()) >= count:
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} games after {timeout} s")


def test_kill_minus_nine_loses_only_the_games_since_the_last_checkpoint(tmp_path):
    run_dir = tmp_path / "run"
    process = run_cli("--run-dir", str(run_dir), "--size", "5", "--workers", "1", "--seed", "3",
                      "--checkpoint-every", "4", "--shortcut-games", "2", "--no-progress")
    wait_for_games(run_dir, 11, process)
    process.send_signal(signal.SIGKILL)
    process.communicate()
    logged = len((run_dir / "log.jsonl").read_text().splitlines())
    checkpointed = int((run_dir / "LATEST").read_text())
    assert checkpointed % 4 == 0 and logged - 4 <= checkpointed <= logged

    trainer = train.Trainer.resume(run_dir)
    assert trainer.games_trained == checkpointed
    assert [line["game"] for line in game_lines(run_dir)] == list(range(1, checkpointed + 1))
    trainer.run(games=checkpointed + 3, workers=1, checkpoint_every=4, progress=False)
    assert [line["game"] for line in game_lines(run_dir)] == list(range(1, checkpointed + 4))


def test_sigterm_writes_a_checkpoint_and_resume_is_offered(tmp_path):
    run_dir = tmp_path / "run"
    process = run_cli("--run-dir", str(run_dir), "--size", "5", "--workers", "1", "--seed", "4",
                      "--checkpoint-every", "1000", "--no-progress")
    wait_for_games(run_dir, 3, process)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert f"--resume {run_dir}" in stderr
    logged = len(game_lines(run_dir))
    assert int((run_dir / "LATEST").read_text()) == logged


def test_a_signal_to_every_process_of_the_run_stops_it_cleanly(tmp_path):
    # systemd and pkill -f signal the workers too: the run stops as with its own SIGTERM
    run_dir = tmp_path / "run"
    process = run_cli("--run-dir", str(run_dir), "--size", "5", "--workers", "2", "--seed", "4",
                      "--checkpoint-every", "1000", "--no-progress")
    wait_for_games(run_dir, 3, process)
    workers = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True,
                             text=True).stdout.split()
    assert len(workers) >= 2
    for pid in workers:
        os.kill(int(pid), signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert "SIGTERM to a self-play worker: checkpoint written" in stderr
    assert "Traceback" not in stderr
    assert int((run_dir / "LATEST").read_text()) == len(game_lines(run_dir))


def test_parallel_workers_all_contribute(tmp_path):
    trainer = train.Trainer.create(tmp_path / "run", tiny_settings())
    trainer.run(games=12, workers=2, checkpoint_every=0, progress=False)
    lines = game_lines(tmp_path / "run")
    assert [line["game"] for line in lines] == list(range(1, 13))
    assert {line["worker"] for line in lines} == {0, 1}
    assert trainer.games_trained == 12
    assert int((tmp_path / "run" / "LATEST").read_text()) == 12


@pytest.mark.slow
def test_evaluation_matches_are_logged_with_intervals_and_plotted(tmp_path):
    run_dir = tmp_path / "run"
    trainer = train.Trainer.create(run_dir, tiny_settings())
    trainer.run(games=4, workers=1, checkpoint_every=0, eval_every=4, eval_games=2, progress=False)
    evals = [line for line in read_log(run_dir) if line["type"] == "eval"]
    opponents = ["previous"] + (["gnugo-1"] if find_gnugo() else [])
    assert [line["opponent"] for line in evals] == opponents
    for line in evals:
        assert line["game"] == 4 and line["games"] == 2 and 0 <= line["wins"] <= 2
        low, high = line["win_rate_95"]
        assert 0.0 <= low <= line["win_rate"] <= high <= 1.0
    assert evals[0]["opponent_checkpoint"] == "000000000"

    out = plots.plot_run(run_dir, tmp_path / "curves.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.external
@pytest.mark.skipif(find_gnugo() is None, reason="GNU Go 3.8 is not installed (apt-get install gnugo)")
def test_training_can_evaluate_under_neurogos_protocol(tmp_path):
    run_dir = tmp_path / "run"
    trainer = train.Trainer.create(run_dir, tiny_settings())
    trainer.run(games=2, workers=1, checkpoint_every=0, eval_every=2, eval_games=2, progress=False,
                eval_protocol="neurogo")
    trainer.close()
    evals = [line for line in read_log(run_dir) if line["type"] == "eval"]
    assert [line["opponent"] for line in evals] == ["gnugo-10", "gnugo-1"]
    for line in evals:
        assert line["protocol"] == "neurogo" and line["game"] == 2 and line["games_played"] == 2
        summary = json.loads((run_dir / "evals" / f"000000002-{line['opponent']}-neurogo" /
                              "summary.json").read_text())
        assert summary["komi"] == 5.5 and all(r["black"] == "A" for r in summary["results"])
    state = json.loads((run_dir / "checkpoints" / "000000002" / "state.json").read_text())
    assert state["eval_history"] == ["000000002"]


@pytest.mark.slow
def test_an_evaluation_cut_short_is_played_again_on_resume(tmp_path):
    run_dir = tmp_path / "run"
    trainer = train.Trainer.create(run_dir, tiny_settings())
    trainer.run(games=2, workers=1, checkpoint_every=0, eval_every=2, eval_games=1, progress=False)
    trainer.close()
    evaluations = len([line for line in read_log(run_dir) if line["type"] == "eval"])
    assert evaluations >= 1
    # finished: resuming at the same count plays no evaluation again
    resumed = train.Trainer.resume(run_dir)
    resumed.run(games=2, workers=1, checkpoint_every=0, eval_every=2, eval_games=1, progress=False)
    resumed.close()
    assert len([line for line in read_log(run_dir) if line["type"] == "eval"]) == evaluations
    # killed during it: the checkpoint it played was written before it, without it in the history
    state_path = run_dir / "checkpoints" / "000000002" / "state.json"
    state = json.loads(state_path.read_text())
    state_path.write_text(json.dumps({**state, "eval_history": []}))
    resumed = train.Trainer.resume(run_dir)
    resumed.run(games=2, workers=1, checkpoint_every=0, eval_every=2, eval_games=1, progress=False)
    resumed.close()
    assert len([line for line in read_log(run_dir) if line["type"] == "eval"]) == 2 * evaluations
    assert resumed.games_trained == 2


def evals_file_lines(run_dir):
    path = Path(run_dir) / "evals.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def checkpoint_state(run_dir, games):
    return json.loads((Path(run_dir) / "checkpoints" / f"{games:09d}" / "state.json").read_text())


@pytest.mark.slow
def test_evaluations_in_the_background_go_to_evals_jsonl(tmp_path, capsys):
    run_dir = tmp_path / "run"
    trainer = train.Trainer.create(run_dir, tiny_settings())
    trainer.run(games=4, workers=1, checkpoint_every=0, eval_every=2, eval_games=1,
                progress=False, eval_in_background=True)
    trainer.close()
    assert not [line for line in read_log(run_dir) if line["type"] == "eval"]
    opponents = ["previous"] + (["gnugo-1"] if find_gnugo() else [])
    evals = evals_file_lines(run_dir)
    assert [(line["game"], line["opponent"]) for line in evals] == \
        [(game, label) for game in (2, 4) for label in opponents]
    assert [line["opponent_checkpoint"] for line in evals if line["opponent"] == "previous"] == \
        ["000000000", "000000002"]
    state = checkpoint_state(run_dir, 4)
    assert state["eval_history"] == ["000000002", "000000004"]
    assert state["background_evals"] == []       # the run waited for them
    assert (run_dir / "evals" / "000000004-kosumi.log").read_text().startswith("# ")
    err = capsys.readouterr().err
    assert "evaluating checkpoint 000000004 in the background" in err
    assert "kosumi-train: 000000004 vs previous (kosumi protocol): " in err


class StopOnceQueued:
    """A stop signal that arrives while a background evaluation plays."""

    def __init__(self):
        self.trainer = None
        self.signal_name = "SIGTERM"

    @property
    def stop(self):
        return bool(self.trainer.background_evals)


def test_a_stopped_background_evaluation_plays_on_resume_once(tmp_path):
    run_dir = tmp_path / "run"
    trainer = train.Trainer.create(run_dir, tiny_settings())
    stop = StopOnceQueued()
    stop.trainer = trainer
    trainer.run(games=2, workers=1, checkpoint_every=0, eval_every=2, eval_games=1,
                progress=False, stop=stop, eval_in_background=True)
    trainer.close()
    assert trainer.games_trained == 2
    queued = checkpoint_state(run_dir, 2)["background_evals"]
    assert [job["checkpoint"] for job in queued] == ["000000002"]
    assert evals_file_lines(run_dir) == []        # stopped before its first match ended

    resumed = train.Trainer.resume(run_dir)
    resumed.run(games=2, workers=1, checkpoint_every=0, eval_every=2, eval_games=1,
                progress=False, eval_in_background=True)
    resumed.close()
    opponents = ["previous"] + (["gnugo-1"] if find_gnugo() else [])
    assert [line["opponent"] for line in evals_file_lines(run_dir)] == opponents
    assert checkpoint_state(run_dir, 2)["background_evals"] == []

    # killed after its matches were written but before a checkpoint said so: nothing is
    # played twice
    state_path = run_dir / "checkpoints" / "000000002" / "state.json"
    state_path.write_text(json.dumps({**checkpoint_state(run_dir, 2), "background_evals": queued}))
    resumed = train.Trainer.resume(run_dir)
    resumed.run(games=2, workers=1, checkpoint_every=0, progress=False)
    resumed.close()
    assert [line["opponent"] for line in evals_file_lines(run_dir)] == opponents
    assert checkpoint_state(run_dir, 2)["background_evals"] == []


def children_of(pid):
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def running(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_a_trainer_killed_outright_takes_its_background_evaluation_along(tmp_path):
    run_dir = tmp_path / "run"
    trainer = subprocess.Popen(
        [sys.executable, "-m", "engine.training.train", "--run-dir", str(run_dir), "--size", "5",
         "--games", "1", "--workers", "1", "--seed", "1", "--no-progress", "--eval-every", "1",
         "--eval-games", "500", "--eval-in-background"],
        cwd=REPO, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while not children_of(trainer.pid) and trainer.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    evaluation, = children_of(trainer.pid)
    time.sleep(1.0)                           # its matches under way
    trainer.kill()                            # kill -9: no handler runs
    trainer.wait()
    deadline = time.time() + 30
    while running(evaluation) and time.time() < deadline:
        time.sleep(0.05)
    assert not running(evaluation)
    # the resumption plays it again: it is in the state of the checkpoint before it
    assert checkpoint_state(run_dir, 1)["background_evals"][0]["checkpoint"] == "000000001"


def test_command_line_refuses_bad_runs(tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "something").write_text("x")
    with pytest.raises(SystemExit, match="not empty"):
        train.main(["--run-dir", str(tmp_path / "busy"), "--no-progress"])
    with pytest.raises(SystemExit, match="not a training run"):
        train.main(["--resume", str(tmp_path / "busy"), "--no-progress"])
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "new"), "--size", "4"])
    with pytest.raises(ValueError, match="lambda"):
        train.TrainSettings(lam=1.5)
    with pytest.raises(ValueError, match="feature set"):
        train.TrainSettings(feature_set="raw")
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "new"), "--feature-set", "raw"])


def test_run_and_csa_are_subcommands_and_the_bare_form_is_run(tmp_path, capsys):
    for name, command in (("bare", []), ("run", ["run"])):
        train.main([*command, "--run-dir", str(tmp_path / name), "--size", "5", "--games", "3",
                    "--workers", "1", "--seed", "4", "--no-progress"])
    bare, run = (weight_files.load_weights(tmp_path / name / "checkpoints" / "000000003" /
                                           "weights.npz")[0].get_params()
                 for name in ("bare", "run"))
    assert np.array_equal(bare, run)
    with pytest.raises(SystemExit) as exit_info:
        train.main(["csa", "train", "--help"])
    assert exit_info.value.code == 0
    assert "usage: kosumi-train csa train" in capsys.readouterr().out


def test_command_line_feature_set_and_rich_signal_reach_the_weight_files(tmp_path):
    run_dir = tmp_path / "run"
    train.main(["--run-dir", str(run_dir), "--size", "5", "--games", "2", "--workers", "1",
                "--seed", "1", "--no-progress", "--feature-set", "neurogo_lite", "--rich-signal"])
    settings = json.loads((run_dir / "settings.json").read_text())
    assert settings["feature_set"] == "neurogo_lite" and settings["rich_signal"] is True
    network, metadata = weight_files.load_weights(run_dir / "checkpoints" / "000000002" /
                                                  "weights.npz")
    assert metadata["feature_set"]["name"] == "neurogo_lite" and network.multi_hot
    assert metadata["architecture"]["rich_signal"] is True
    train.main(["--resume", str(run_dir), "--games", "3", "--workers", "1", "--no-progress"])
    resumed, _ = weight_files.load_weights(run_dir / "checkpoints" / "000000003" / "weights.npz")
    assert resumed.feature_set == "neurogo_lite" and resumed.rich_signal


def test_settings_of_runs_from_before_feature_sets_default_to_isn14():
    values = tiny_settings().to_json()
    del values["feature_set"], values["rich_signal"]
    settings = train.TrainSettings.from_json(values)
    assert settings.feature_set == "isn14" and settings.rich_signal is False


def test_plot_command_writes_a_png_with_the_background_evaluations(tmp_path):
    run_dir = tmp_path / "run"
    train.main(["--run-dir", str(run_dir), "--size", "5", "--games", "3", "--workers", "1",
                "--seed", "1", "--no-progress", "--eval-every", "3", "--eval-games", "1",
                "--eval-in-background"])
    assert {(line["game"], line["opponent"]) for line in evals_file_lines(run_dir)} >= \
        {(3, "previous")}
    assert train.main(["plot", str(run_dir)]) == 0
    assert (run_dir / "training.png").read_bytes()[:4] == b"\x89PNG"


def test_offline_evaluation_of_checkpoints_feeds_the_plot(tmp_path):
    run_dir = tmp_path / "run"
    train.Trainer.create(run_dir, tiny_settings()).run(games=3, workers=1, checkpoint_every=0,
                                                       progress=False)
    assert train.main(["eval", str(run_dir), "--checkpoints", "3", "--opponents", "initial",
                       "--games", "2"]) == 0
    lines = [json.loads(line) for line in (run_dir / "evals.jsonl").read_text().splitlines()]
    assert len(lines) == 1
    assert lines[0]["game"] == 3 and lines[0]["opponent"] == "initial"
    assert lines[0]["opponent_checkpoint"] == "000000000" and lines[0]["games"] == 2
    with pytest.raises(SystemExit, match="no checkpoints"):
        train.main(["eval", str(run_dir), "--checkpoints", "7"])
    out = plots.plot_run(run_dir)
    assert out == run_dir / "training.png" and out.stat().st_size > 1000


def test_neurogo_protocol_plays_the_net_as_black_at_komi_5_5_and_counts_repeats_once(tmp_path):
    run_dir = tmp_path / "run"
    train.Trainer.create(run_dir, tiny_settings()).run(games=3, workers=1, checkpoint_every=0,
                                                       progress=False)
    assert train.main(["eval", str(run_dir), "--checkpoints", "3", "--opponents", "initial",
                       "--games", "3", "--protocol", "neurogo"]) == 0
    line, = [json.loads(text) for text in (run_dir / "evals.jsonl").read_text().splitlines()]
    summary = json.loads((run_dir / "evals" / "000000003-initial-neurogo" /
                          "summary.json").read_text())
    assert line["protocol"] == "neurogo" and line["games_played"] == 3 == summary["games"]
    assert line["games"] == 3 - len(summary["repeated_games"]) == summary["distinct"]["games"]
    assert line["win_rate"] == summary["distinct"]["win_rate_a"]
    assert summary["komi"] == 5.5
    assert all(result["black"] == "A" for result in summary["results"])
    assert "--beta 1.51515" in summary["engines"]["A"]["command"]
    assert "--no-resign" in summary["engines"]["A"]["command"]
    assert "--symmetries 1" in summary["engines"]["A"]["command"]    # the net alone, as NeuroGo
    assert "--beta" not in summary["engines"]["B"]["command"]
    out = plots.plot_run(run_dir)
    assert out.stat().st_size > 1000
    assert plots._curve_label(line) == "initial, neurogo protocol"


def test_plot_compares_several_runs_in_one_png(tmp_path):
    run_dirs = [tmp_path / "isn14", tmp_path / "lite"]
    for run_dir, feature_set in zip(run_dirs, ("isn14", "neurogo_lite")):
        train.Trainer.create(run_dir, tiny_settings(feature_set=feature_set)).run(
            games=3, workers=1, checkpoint_every=0, progress=False)
    assert train.main(["eval", str(run_dirs[0]), "--checkpoints", "3", "--opponents", "initial",
                       "--games", "2"]) == 0
    out = tmp_path / "compare.png"
    assert train.main(["plot", *map(str, run_dirs), "--out", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert not (run_dirs[0] / "training.png").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "log.jsonl").write_text("")
    with pytest.raises(SystemExit, match="has no games yet"):
        train.plot_runs([run_dirs[0], empty], out)


@pytest.mark.parametrize("procedure", ["blair", "neurogo"])
def test_self_play_rules(procedure):
    """Never into one's own eye, positional superko, a pass only when no move is left (forced),
    two passes end the game; the recorded inputs are the board's encoding."""
    from engine.rules.board import Board, PASS
    from engine.training.selfplay import candidate_moves
    network = weight_files.new_network(11)
    config = SelfPlayConfig(size=5, procedure=procedure)
    for seed in range(3):
        record = play_game(network, config, np.random.default_rng(seed))
        board = Board(5)
        seen = {board.hash}
        for colour, move in record.moves:
            candidates = candidate_moves(board, colour)
            if move == PASS:
                assert all(_repeats(board, p, colour, seen) for p in candidates)
            else:
                assert move in candidates and not board.is_eye(move, colour)
            board.play(move, colour)
            if move != PASS:
                assert board.hash not in seen
                seen.add(board.hash)
        assert not record.capped and [m for _, m in record.moves[-2:]] == [PASS, PASS]
        assert str(board) == str(record.final_board)
        assert record.explored.any() == (procedure == "neurogo" and record.length > 20)


def _repeats(board, move, colour, seen):
    board.play(move, colour)
    repeated = board.hash in seen
    board.undo()
    return repeated


def test_move_cap_ends_a_game():
    network = weight_files.new_network(12)
    record = play_game(network, SelfPlayConfig(size=7, move_cap_factor=0.5),
                       np.random.default_rng(0))
    assert record.capped and record.length == 24


def test_learning_rate_can_be_annealed_on_resume(tmp_path):
    run_dir = tmp_path / "run"
    train.main(["--run-dir", str(run_dir), "--size", "5", "--games", "3", "--workers", "1",
                "--seed", "2", "--no-progress", "--learning-rate", "1e-4"])
    train.main(["--resume", str(run_dir), "--games", "5", "--workers", "1", "--no-progress",
                "--learning-rate", "2e-5"])
    assert json.loads((run_dir / "settings.json").read_text())["learning_rate"] == 2e-5
    _, metadata = weight_files.load_weights(run_dir / "checkpoints" / "000000003" / "weights.npz")
    assert metadata["trainer"]["settings"]["learning_rate"] == 2e-5   # rewritten at the change
    changes = [line for line in read_log(run_dir) if line["type"] == "settings"]
    assert changes == [{"type": "settings", "game": 3, "changes": {"learning_rate": 2e-5}}]
    assert [line["game"] for line in game_lines(run_dir)] == [1, 2, 3, 4, 5]
    with pytest.raises(SystemExit):
        train.main(["--resume", str(run_dir), "--no-progress", "--learning-rate", "-1"])


def test_a_new_run_can_start_from_a_net_kosumi_train_wrote(tmp_path):
    first = tmp_path / "first"
    train.main(["--run-dir", str(first), "--size", "5", "--games", "3", "--workers", "1",
                "--seed", "2", "--no-progress", "--learning-rate", "1e-4"])
    net = first / "checkpoints" / "000000003" / "weights.npz"
    _, file_metadata = weight_files.load_weights(net)
    run_dir = tmp_path / "second"
    train.main(["--run-dir", str(run_dir), "--from-weights", str(net), "--games", "5",
                "--workers", "1", "--no-progress", "--learning-rate", "2e-5", "--seed", "9"])
    # the run goes on from the file's net and game count, with the file's other settings
    started, metadata = weight_files.load_weights(run_dir / "checkpoints" / "000000003" /
                                                  "weights.npz")
    assert metadata["params_sha256"] == file_metadata["params_sha256"]
    settings = json.loads((run_dir / "settings.json").read_text())
    assert settings == {**file_metadata["trainer"]["settings"], "learning_rate": 2e-5, "seed": 9}
    assert read_log(run_dir)[0] == {"type": "start", "game": 3, "from_weights": str(net),
                                    "params_sha256": file_metadata["params_sha256"],
                                    "history": file_metadata["trainer"]["history"]}
    assert [line["game"] for line in game_lines(run_dir)] == [4, 5]
    assert train.Trainer.resume(run_dir).games_trained == 5
    # its "initial" opponent is the net it started from
    assert train.main(["eval", str(run_dir), "--checkpoints", "5", "--opponents", "initial",
                       "--games", "1"]) == 0
    evals = [json.loads(line) for line in (run_dir / "evals.jsonl").read_text().splitlines()]
    assert evals[0]["opponent_checkpoint"] == "000000003"


def history_of(path):
    return weight_files.load_weights(path)[1]["trainer"]["history"]


@pytest.mark.slow
def test_the_weights_carry_the_runs_curves_to_a_run_started_from_them(tmp_path, monkeypatch):
    monkeypatch.setattr(run_history, "HISTORY_BLOCK", 2)
    first = tmp_path / "first"
    train.main(["--run-dir", str(first), "--size", "5", "--games", "3", "--workers", "1",
                "--seed", "2", "--no-progress", "--eval-every", "3", "--eval-games", "1"])
    games = game_lines(first)
    net = first / "checkpoints" / "000000003" / "weights.npz"
    history = history_of(net)
    assert history["block"] == 2
    assert history["blocks"] == [
        [1, 2, round((games[0]["loss"] + games[1]["loss"]) / 2, 6), 2,
         (games[0]["length"] + games[1]["length"]) / 2],
        [3, 1, games[2]["loss"], 1, games[2]["length"]]]
    evaluations = [{key: line[key] for key in run_history.HISTORY_EVAL_KEYS if key in line}
                   for line in read_log(first) if line["type"] == "eval"]
    assert evaluations and history["evals"] == evaluations
    # the directory is gone (another machine): a run from the file goes on with its curves
    shutil.copy(net, tmp_path / "net.npz")
    shutil.rmtree(first)
    second = tmp_path / "second"
    train.main(["--run-dir", str(second), "--from-weights", str(tmp_path / "net.npz"),
                "--games", "5", "--workers", "1", "--no-progress", "--seed", "9"])
    later = game_lines(second)
    carried = history_of(second / "checkpoints" / "000000005" / "weights.npz")
    assert carried["blocks"][0] == history["blocks"][0]
    games_3_and_4 = [3, 2, round((games[2]["loss"] + later[0]["loss"]) / 2, 6), 2,
                     (games[2]["length"] + later[0]["length"]) / 2]
    assert carried["blocks"][1] == pytest.approx(games_3_and_4)
    assert carried["blocks"][2] == [5, 1, later[1]["loss"], 1, later[1]["length"]]
    assert carried["evals"] == history["evals"]
    # and a resumption rebuilds it from the log, with the offline evaluations
    assert train.main(["eval", str(second), "--checkpoints", "5", "--opponents", "initial",
                       "--games", "1"]) == 0
    trainer = train.Trainer.resume(second)
    resumed = trainer.trainer_metadata()["history"]
    trainer.close()
    assert resumed["blocks"] == carried["blocks"]
    assert resumed["evals"][:-1] == evaluations
    assert (resumed["evals"][-1]["game"], resumed["evals"][-1]["opponent"]) == (5, "initial")
    # the plot draws it from the run directory and from a weight file alone
    assert train.main(["plot", str(second), "--out", str(tmp_path / "run.png")]) == 0
    monkeypatch.chdir(tmp_path)
    assert train.main(["plot", str(tmp_path / "net.npz")]) == 0
    assert (tmp_path / "net-training.png").read_bytes()[:4] == b"\x89PNG"


def test_a_malformed_history_or_none_is_refused_naming_the_file(tmp_path):
    run_dir = tmp_path / "run"
    train.Trainer.create(run_dir, tiny_settings()).run(games=1, workers=1, progress=False)
    network, metadata = weight_files.load_weights(run_dir / "checkpoints" / "000000001" /
                                                  "weights.npz")
    broken = tmp_path / "broken.npz"
    weight_files.save_weights(broken, network, 5, 1, {**metadata["trainer"],
                                                      "history": {"block": 100, "blocks": [[1]]}})
    with pytest.raises(SystemExit, match=f"{broken}: cannot start a run from it: its training "
                                         f"history is malformed"):
        train.main(["--run-dir", str(tmp_path / "b"), "--from-weights", str(broken)])
    with pytest.raises(SystemExit, match=f"{broken}: its training history is malformed"):
        train.main(["plot", str(broken), "--out", str(tmp_path / "x.png")])
    older = tmp_path / "older.npz"
    weight_files.save_weights(older, network, 5, 1, {key: value for key, value
                                                     in metadata["trainer"].items()
                                                     if key != "history"})
    with pytest.raises(SystemExit, match=f"{older} holds no training history"):
        train.main(["plot", str(older), "--out", str(tmp_path / "x.png")])
    # an older file still starts a run, without curves before it
    train.main(["--run-dir", str(tmp_path / "c"), "--from-weights", str(older), "--games", "2",
                "--workers", "1", "--no-progress"])
    assert [block[:2] for block in history_of(tmp_path / "c" / "checkpoints" / "000000002" /
                                              "weights.npz")["blocks"]] == [[1, 1]]


def test_from_weights_refuses_other_settings_and_files_not_from_the_trainer(tmp_path, capsys):
    shipped = train.StartingNet.load(REPO / "weights" / "softseg_9x9.npz")
    assert shipped.settings.arch == "softseg" and shipped.games_trained > 0
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "a"), "--from-weights",
                    str(REPO / "weights" / "softseg_9x9.npz"), "--size", "7"])
    assert "--size: with --from-weights the training settings are the file's" in \
        capsys.readouterr().err
    with pytest.raises(SystemExit):
        train.main(["--resume", str(tmp_path / "a"), "--from-weights",
                    str(REPO / "weights" / "softseg_9x9.npz")])
    assert "--from-weights starts a new run" in capsys.readouterr().err
    bare = tmp_path / "bare.npz"
    weight_files.save_weights(bare, weight_files.new_network(1), 5, 0)
    with pytest.raises(SystemExit, match=f"{bare}: cannot start a run from it: .*kosumi-train"):
        train.main(["--run-dir", str(tmp_path / "b"), "--from-weights", str(bare)])
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(SystemExit, match=f"weight file {corrupt}"):
        train.main(["--run-dir", str(tmp_path / "c"), "--from-weights", str(corrupt)])
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()
