"""kosumi-train --ray: self-play on Ray actors (engine/training/raypool.py) against one local Ray
of two CPUs shared by the module: the same run as the local pool with one game per actor call
and with several, dead actors and the games of their calls, actors that cannot start, stale
weights, stopping and resuming; no Ray at all without --ray, and clear exits without Ray
installed or without a cluster at the address."""
import dataclasses
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import ray

from engine.training import raypool, train
from tests.paths import REPO

TINY = dict(size=5, learning_rate=1e-4, shortcut_games=4, seed=7)
RAY_FIELDS = {"node", "weight_version", "weight_lag"}


@pytest.fixture(scope="module")
def ray_address():
    """A local Ray of two CPUs for the whole module (starting one takes seconds); its address
    lets a trainer in a subprocess join it as it would join a cluster."""
    sigterm_handler = signal.getsignal(signal.SIGTERM)     # ray.init() replaces it
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        signal.signal(signal.SIGTERM, sigterm_handler)


@pytest.fixture
def actors_start_together(monkeypatch):
    """No game is handed out before both actors have started (Ray starts them seconds apart, in
    which one actor can play a whole tiny run): the tests that need both playing are exact."""
    fill = raypool.RayPool._fill

    def fill_once_both_started(pool):
        if len(pool.nodes) == 2 or pool.trainer.games_trained > 0:
            fill(pool)

    monkeypatch.setattr(raypool.RayPool, "_fill", fill_once_both_started)


def read_log(run_dir):
    return [json.loads(line) for line in (Path(run_dir) / "log.jsonl").read_text().splitlines()]


def lines_of(run_dir, kind):
    return [line for line in read_log(run_dir) if line["type"] == kind]


def runs_of_workers(games):
    """The log's game lines cut into runs of one worker's consecutive games."""
    runs = []
    for line in games:
        if runs and runs[-1][0]["worker"] == line["worker"]:
            runs[-1].append(line)
        else:
            runs.append([line])
    return runs


@pytest.mark.slow
@pytest.mark.parametrize("games_per_call", [1, 3])
def test_ray_run_has_the_local_pools_structure_and_learns(ray_address, actors_start_together,
                                                          tmp_path, games_per_call):
    settings = train.TrainSettings(**TINY)
    local = train.Trainer.create(tmp_path / "local", settings)
    local.run(games=12, workers=2, checkpoint_every=5, progress=False)
    trainer = train.Trainer.create(tmp_path / "ray", settings)
    initial = trainer.network.get_params()
    trainer.run(games=12, workers=2, checkpoint_every=5, progress=False, ray_address=ray_address,
                ray_games_per_call=games_per_call)
    trainer.close()

    assert not np.array_equal(trainer.network.get_params(), initial)
    assert trainer.games_trained == 12 and (tmp_path / "ray" / "LATEST").read_text().strip() == "000000012"
    names = lambda run: sorted(p.name for p in (tmp_path / run / "checkpoints").iterdir())
    assert names("ray") == names("local") == ["000000000", "000000005", "000000010", "000000012"]
    state = lambda run: json.loads((tmp_path / run / "checkpoints" / "000000012" / "state.json").read_text())
    assert state("ray").keys() == state("local").keys() and state("ray")["games_trained"] == 12

    games, local_games = lines_of(tmp_path / "ray", "game"), lines_of(tmp_path / "local", "game")
    assert [line["game"] for line in games] == list(range(1, 13))      # each game counted once
    assert {line["worker"] for line in games} == {0, 1}
    assert all(set(line) == set(local_games[0]) | RAY_FIELDS for line in games)
    assert all(line["weight_lag"] >= 0 and line["weight_version"] < line["game"] for line in games)
    # a call's games reach the learner in a row, with one weight version and lag
    calls = [run[i:i + games_per_call] for run in runs_of_workers(games)
             for i in range(0, len(run), games_per_call)]
    assert all(len(call) == games_per_call for call in calls)
    assert all(len({(line["weight_version"], line["weight_lag"]) for line in call}) == 1
               for call in calls)
    status = lines_of(tmp_path / "ray", "workers")[-1]
    assert status["game"] == 12 and status["actors"] == 2
    assert status["games_per_call"] == games_per_call
    assert set(status["nodes"]) == {line["node"] for line in games}
    assert status["lost_games"] == status["refused_stale"] == 0


def test_softseg_trains_by_neurogos_procedure_on_the_actors(ray_address, tmp_path):
    settings = train.TrainSettings(size=5, arch="softseg", procedure="neurogo", shortcut_games=0,
                                   feature_set="raw", rich_signal=True, weight_decay=1.0,
                                   learning_rate=train.SOFTSEG_LEARNING_RATE, seed=3,
                                   softseg_hidden=(2, 0), softseg_intervals=2)
    trainer = train.Trainer.create(tmp_path / "run", settings)
    initial = trainer.network.get_params()
    trainer.run(games=4, workers=2, checkpoint_every=0, progress=False, ray_address=ray_address)
    trainer.close()
    assert [line["game"] for line in lines_of(tmp_path / "run", "game")] == [1, 2, 3, 4]
    assert len(trainer.recent) == 4 and not np.array_equal(trainer.network.get_params(), initial)


@pytest.mark.slow
def test_killed_actors_are_replaced_and_their_calls_games_lost_not_learned(
        ray_address, actors_start_together, tmp_path, monkeypatch):
    """Three games per call; each of the two actors is killed just after it is handed its
    second call: the run goes on with their replacements, and the six games of the two calls
    in flight are lost and counted, none learned."""
    handed = []
    call = raypool.RayPool._call

    def call_then_kill_at_the_second_call(pool, worker_id):
        call(pool, worker_id)
        handed.append(worker_id)
        if worker_id in (0, 1) and handed.count(worker_id) == 2:
            ray.kill(pool.actors[worker_id])

    monkeypatch.setattr(raypool.RayPool, "_call", call_then_kill_at_the_second_call)
    trainer = train.Trainer.create(tmp_path / "run", train.TrainSettings(**TINY))
    trainer.run(games=16, workers=2, checkpoint_every=0, progress=False, ray_address=ray_address,
                ray_games_per_call=3)
    trainer.close()

    games = lines_of(tmp_path / "run", "game")
    assert [line["game"] for line in games] == list(range(1, 17))   # each game learned once
    workers = [line["worker"] for line in games]
    assert workers.count(0) == workers.count(1) == 3       # their first calls; the second lost
    assert set(workers) - {0, 1} <= {2, 3} and len(workers) - 6 == 10   # the replacements' games
    deaths = lines_of(tmp_path / "run", "actor")
    assert sorted((line["worker"], line["event"], line["games_lost"]) for line in deaths) == \
        [(0, "died", 3), (1, "died", 3)]
    assert {line["replacement"] for line in deaths} == {2, 3}
    status = lines_of(tmp_path / "run", "workers")[-1]
    assert status["lost_games"] == 6 and status["actors_replaced"] == 2
    assert status["actors"] + status["actors_starting"] == 2
    assert trainer.games_trained == 16


@pytest.mark.slow
def test_games_from_stale_weights_are_refused_and_counted(ray_address, actors_start_together,
                                                          tmp_path):
    """Two games per call: a call that returns after the other actor's call published a new
    version is refused, both its games counted."""
    trainer = train.Trainer.create(tmp_path / "run", train.TrainSettings(**TINY))
    trainer.run(games=20, workers=2, checkpoint_every=0, progress=False, ray_address=ray_address,
                max_weight_lag=0, ray_games_per_call=2)
    trainer.close()
    games = lines_of(tmp_path / "run", "game")
    assert [line["game"] for line in games] == list(range(1, 21))
    assert all(line["weight_lag"] == 0 for line in games)
    status = lines_of(tmp_path / "run", "workers")[-1]
    assert status["refused_stale"] > 0 and status["max_weight_lag"] == 0


def test_actors_that_cannot_start_are_not_replaced_and_the_run_stops_with_the_cause(
        ray_address, tmp_path, monkeypatch):
    trainer = train.Trainer.create(tmp_path / "run", train.TrainSettings(**TINY))
    # settings the actors refuse, as a node would whose kosumi does not know them
    monkeypatch.setattr(train.TrainSettings, "to_json", lambda settings: {"no_such_setting": 1})
    with pytest.raises(RuntimeError, match="no self-play actor is left"):
        trainer.run(games=4, workers=2, checkpoint_every=0, progress=False, ray_address=ray_address)
    trainer.close()
    failures = lines_of(tmp_path / "run", "actor")
    assert sorted(line["worker"] for line in failures) == [0, 1]
    assert all(line["event"] == "failed to start" and "no_such_setting" in line["error"]
               for line in failures)
    assert lines_of(tmp_path / "run", "workers")[-1]["actors_failed"] == 2


@pytest.mark.slow
def test_stopped_driver_checkpoints_and_resume_continues(ray_address, tmp_path):
    """A trainer in another process joins the Ray by its address (as on a cluster), is stopped
    by Ctrl-C, and the run resumes here on the same Ray."""
    run_dir = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-m", "engine.train", "--run-dir", str(run_dir), "--size", "5",
         "--seed", "5", "--shortcut-games", "2", "--checkpoint-every", "1000", "--no-progress",
         "--ray", ray_address, "--workers", "2", "--ray-games-per-call", "2"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(lines_of(run_dir, "game") if (run_dir / "log.jsonl").exists() else []) < 5:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the trainer played no games on Ray"
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert f"--resume {run_dir}" in stderr
    stopped_at = int((run_dir / "LATEST").read_text())
    assert [line["game"] for line in lines_of(run_dir, "game")] == list(range(1, stopped_at + 1))

    train.main(["--resume", str(run_dir), "--games", str(stopped_at + 6), "--ray", ray_address,
                "--workers", "2", "--no-progress"])
    assert [line["game"] for line in lines_of(run_dir, "game")] == list(range(1, stopped_at + 7))
    assert int((run_dir / "LATEST").read_text()) == stopped_at + 6


def test_without_ray_the_trainer_does_not_import_it(tmp_path):
    script = ("import sys\nfrom engine.training import train\n"
              f"train.main(['--run-dir', {str(tmp_path / 'run')!r}, '--size', '5', '--games', '2', "
              "'--workers', '1', '--no-progress'])\n"
              "assert 'ray' not in sys.modules, 'ray was imported'\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("option", ["--max-weight-lag", "--ray-games-per-call"])
def test_the_ray_options_need_ray(tmp_path, capsys, option):
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "run"), option, "2"])
    assert f"{option} is for the Ray actors" in capsys.readouterr().err


def test_without_ray_installed_the_trainer_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)         # `import ray` fails as if not installed
    with pytest.raises(SystemExit, match=r"pip install 'kosumi\[ray\]'"):
        train.main(["--run-dir", str(tmp_path / "run"), "--ray"])
    assert not (tmp_path / "run").exists()


def test_an_address_where_no_cluster_answers_is_refused_at_once(tmp_path):
    with socket.socket() as probe:          # a port that was free a moment ago: nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(SystemExit, match=f"no Ray cluster answers at 127.0.0.1:{port}"):
        train.main(["--run-dir", str(tmp_path / "run"), "--ray", f"127.0.0.1:{port}"])
    assert not (tmp_path / "run").exists()


def test_expert_iterations_workers_as_ray_actors_write_chunks_and_a_dead_one_is_replaced(
        ray_address, tmp_path):
    """kosumi-train selfplay run --ray: the driver feeds Ray actors as it feeds local processes
    (engine/training/expert/pool.py); an actor killed mid-run loses its chunk and a new one
    plays on."""
    from engine.training.expert.games import SelfPlaySettings
    from engine.training.expert.pool import Driver, RayPool
    from engine.training.expert.run import ExpertRun, ExpertSettings
    from tests.unit.nets.test_judge_net import trained_like
    run = ExpertRun.create(tmp_path / "run", trained_like(), ExpertSettings(size=5, chunk_games=1),
                           SelfPlaySettings(visits=8, cheap_visits=2, precision="fp32"), {})
    options = (dataclasses.asdict(run.selfplay), 5, 1)
    pool = RayPool(options, 2, ray_address)
    messages = []
    driver = Driver(run, pool, 2, log=messages.append)
    driver.start()
    try:
        deadline = time.monotonic() + 120
        while run.games() < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        ray.kill(pool.actors[0], no_restart=True)
        while (run.games() < 6 or not messages) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        driver.stop()
    assert driver.error is None
    assert messages and "worker 0" in messages[0] and "a new worker takes its place" in messages[0]
    workers = {path.name.split("-")[2] for path, _ in run.chunks()}
    assert run.games() >= 6 and workers == {"w000", "w001"}


def test_expert_iteration_refuses_an_address_where_no_cluster_answers(tmp_path):
    from engine.training.expert import cli
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(SystemExit, match=f"no Ray cluster answers at 127.0.0.1:{port}"):
        cli.main(["run", "--run-dir", str(tmp_path / "run"), "--from-weights", "x.npz",
                  "--ray", f"127.0.0.1:{port}"])
    assert not (tmp_path / "run").exists()
