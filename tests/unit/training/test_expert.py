"""Expert iteration (engine/training/expert/): self-play games of the PUCT search with their visit
targets, chunks the judging net's trainer reads, TD(lambda) targets worked by hand, the learner
and its gate, resumption after a killed learner or worker, local and Ray workers, the command
line."""
import dataclasses
import json
import math
import re

import numpy as np
import pytest

from engine.nets.evaluator import JudgeEvaluator
from engine.nets.policy import save_policy
from engine.nets.policy_features import move_permutation
from engine.nets.policy_inputs import RECORD_PLANES
from engine.rules.board import BLACK, WHITE, Board
from engine.search.puct import PuctSearch
from engine.training.expert import cli
from engine.training.expert.chunks import chunk_directories, write_chunk
from engine.training.expert.games import SelfPlayGame, SelfPlaySettings, play_game
from engine.training.expert.pool import Driver, ExpertWorker, LocalPool
from engine.training.expert.run import CLOCK, CURRENT, NETS, ExpertRun, ExpertSettings, gate, net_name
from engine.training.policydata import PolicyDataset
from engine.training.policytrain import PolicyRun
from tests.unit.nets.test_judge_net import trained_like
from tests.unit.training.test_policy_training import needs_torch

SIZE = 5
FAST = SelfPlaySettings(visits=12, cheap_visits=3, full_share=0.5, precision="fp32")
LOOP = dict(size=SIZE, games_per_net=4, window_games=8, steps_per_net=6, chunk_games=2)
TRAINER = {"batch_size": 8, "learning_rate": "0.01@0"}


def evaluator(seed=5):
    return JudgeEvaluator(trained_like(seed=seed))


def test_a_self_play_game_records_full_searches_visits_and_its_count():
    game = play_game(evaluator(), SIZE, dataclasses.replace(FAST, resign_below=0.0),
                     np.random.default_rng(1))
    n = len(game.moves)
    assert n == len(game.records) == len(game.colours) == len(game.visits) == len(game.values) > 2
    assert game.colours[:2] == [BLACK, 3 - BLACK] and game.records[0].shape[1] == SIZE * SIZE
    full = [v for v in game.visits if v is not None]
    assert 0 < len(full) < n           # playout-cap randomisation: some cheap searches
    for shares in full:
        assert shares.shape == (SIZE * SIZE + 1,) and abs(shares.sum() - 1) < 1e-5
    assert all(0.0 <= value <= 1.0 for value in game.values)
    # two passes end it (the move cap is 3 * 25) and the board as it stands is counted
    assert game.moves[-2:] == [SIZE * SIZE] * 2 and not game.resigned
    assert game.margin == game.ownership.sum() - FAST.komi
    assert game.winner == int(np.sign(game.margin))


def test_a_hopeless_side_resigns_unless_the_game_is_played_out():
    always = dataclasses.replace(FAST, resign_below=1.0, resign_after=1, no_resign_share=0.0)
    game = play_game(evaluator(), SIZE, always, np.random.default_rng(2))
    assert game.resigned and game.moves == [] and game.winner == -1 and math.isnan(game.margin)
    checked = dataclasses.replace(always, no_resign_share=1.0)
    game = play_game(evaluator(), SIZE, checked, np.random.default_rng(2))
    assert not game.resigned and game.would_have_resigned == 1 and len(game.moves) > 2


def test_root_noise_mixes_into_the_roots_priors():
    tree = PuctSearch(SIZE, 7.0)
    tree.set_root(Board(SIZE), BLACK)
    count = SIZE * SIZE + 1
    tree.set_evaluation_function(lambda lines, colours: (
        np.ones((len(lines), Board(SIZE).num_locs + 1)), np.full(len(lines), 0.5),
        np.zeros(len(lines)), None))
    with pytest.raises(ValueError, match="no children"):
        tree.mix_root_priors(np.full(count, 1.0 / count), 0.25)
    tree.run(1, stop_early=False)
    assert tree.root_child_count == count
    noise = np.zeros(count)
    noise[3] = 1.0
    tree.mix_root_priors(noise, 0.25)
    priors = {child["index"]: child["prior"] for child in tree.root_children()}
    first = min(priors)
    assert priors[first + 3] == pytest.approx(0.75 / count + 0.25)
    assert priors[first] == pytest.approx(0.75 / count) and sum(priors.values()) == pytest.approx(1)
    with pytest.raises(ValueError, match="values"):
        tree.mix_root_priors(np.ones(3), 0.25)


def hand_made_game(values, winner):
    """A resigned game of len(values) positions, Black to move first, with given search values;
    its first position's search gave moves 1 and 7 a quarter and three quarters of the visits."""
    n = len(values)
    visits = [None] * n
    visits[0] = np.zeros(SIZE * SIZE + 1, np.float32)
    visits[0][[1, 7]] = [0.25, 0.75]
    return SelfPlayGame(SIZE, 7.0, [np.zeros((RECORD_PLANES, SIZE * SIZE), np.uint8)] * n,
                        list(range(n)), [BLACK if t % 2 == 0 else WHITE for t in range(n)],
                        visits, list(values), winner, math.nan, np.zeros(SIZE * SIZE, np.int8), True)


def test_chunks_are_read_as_training_data_with_the_searchs_targets(tmp_path):
    first = hand_made_game([0.5, 0.6, 0.7], winner=1)
    second = hand_made_game([0.4, 0.3], winner=-1)
    write_chunk(tmp_path / "c1", [first, second], net=3, worker=1)
    assert chunk_directories(tmp_path) == [tmp_path / "c1"]
    manifest = json.loads((tmp_path / "c1" / "manifest.json").read_text())
    assert manifest["search_targets"] == 1 and manifest["games"] == 2 and manifest["net"] == 3
    data = PolicyDataset([tmp_path / "c1"])
    assert data.has_search_targets and data.positions == 5
    shares = data.search_policy([0, 1, 3])
    assert shares[0, 7] == pytest.approx(0.75) and not shares[1].any() and shares[2, 1] == 0.25
    for symmetry in range(1, 8):     # the target turns as batch() turns the moves
        turned = data.search_policy([0], symmetry)[0]
        assert turned[move_permutation(SIZE, symmetry)[7]] == pytest.approx(0.75)
    targets = data.judge_targets([0, 1, 3, 4])
    # from the side to move: Black won the first game, White the second
    assert list(targets.value) == [1.0, 0.0, 0.0, 1.0]


def test_a_game_resigned_before_its_first_move_leaves_no_trace_in_a_chunk(tmp_path):
    empty = dataclasses.replace(hand_made_game([0.5], winner=1), records=[], moves=[], colours=[],
                                visits=[], values=[])
    assert write_chunk(tmp_path / "none", [empty], net=0, worker=0) is None
    assert chunk_directories(tmp_path) == []
    manifest = write_chunk(tmp_path / "c", [empty, hand_made_game([0.5, 0.4], winner=1)], 0, 0)
    assert manifest["games"] == 1 and PolicyDataset([tmp_path / "c"]).positions == 2


def test_td_lambda_targets_worked_by_hand(tmp_path):
    write_chunk(tmp_path / "c", [hand_made_game([0.5, 0.6, 0.8], winner=-1)], net=0, worker=0)
    data = PolicyDataset([tmp_path / "c"])
    # lambda 0: the next position's value; the last position: the result (White won: 0)
    assert data.td_returns(0.0) == pytest.approx([0.6, 0.8, 0.0])
    # lambda 1: the result everywhere; 0.5: G2 = 0, G1 = 0.5 * 0.8 + 0.5 * 0, G0 = 0.5 * 0.6 + 0.5 * G1
    assert data.td_returns(1.0) == pytest.approx([0.0, 0.0, 0.0])
    assert data.td_returns(0.5) == pytest.approx([0.5, 0.4, 0.0])
    # seen by the side to move (White at the second position)
    targets = data.judge_targets([0, 1, 2], td_lambda=0.5)
    assert targets.value == pytest.approx([0.5, 0.6, 0.0])


@pytest.fixture
def new_run(tmp_path):
    def make(gate_games=0, **loop):
        return ExpertRun.create(tmp_path / "run", trained_like(), ExpertSettings(
            **dict(LOOP, gate_games=gate_games, gate_visits=4, **loop)), FAST, TRAINER)
    return make


def play_chunks(run, count, worker=0):
    player = ExpertWorker(dataclasses.asdict(run.selfplay), run.settings.size, run.settings.chunk_games)
    for call in range(count):
        net = run.current_net()
        version, games = player.play(net, run.net_bytes(net), [worker, call])
        run.write_games(version, worker, games)


@needs_torch
def test_the_learner_trains_a_net_every_few_games_on_its_window(new_run):
    run = new_run()
    assert [entry["net"] for entry in run.history()] == [0] and run.current_net() == 0
    start = trained_like()          # the learner goes on from the starting net
    learner = PolicyRun.resume(run.dir / "learner")
    assert learner.step == 0 and all(np.array_equal(learner.net.params[name], value)
                                     for name, value in start.params.items())
    play_chunks(run, 1)
    assert len(run.learn(wait=False)) == 1            # 2 games: too few for a net
    play_chunks(run, 2)
    history = run.learn(wait=False)
    assert [entry["net"] for entry in history] == [0, 1] and history[1]["accepted"]
    assert history[1]["games"] == 6 and history[1]["steps"] == 6
    assert run.current_net() == 1 and (run.dir / NETS / net_name(1)).is_file()
    play_chunks(run, 3)                          # now net 1 plays; the window: the newest 8 games
    assert run._window(run.chunks()) == [path for path, _ in run.chunks()[-4:]]
    history = run.learn(wait=False)
    assert [entry["net"] for entry in history] == [0, 1, 2] and history[2]["steps"] == 12
    assert "mean_moves" in history[2] and history[2]["games"] == 12


class StopAfter:
    """A stop request that comes after `calls` looks at it (the trainer looks once an update)."""

    def __init__(self, calls):
        self.calls = calls

    @property
    def requested(self):
        self.calls -= 1
        return self.calls < 0


@needs_torch
def test_a_killed_learner_resumes_towards_the_same_net_counting_each_game_once(new_run):
    run = new_run()
    play_chunks(run, 2)
    run.learn(stop=StopAfter(4), wait=False)
    assert len(run.history()) == 1                # stopped while training: no net yet
    resumed = ExpertRun(run.dir)
    history = resumed.learn(wait=False)
    assert [entry["net"] for entry in history] == [0, 1]
    assert history[1]["steps"] == 6 and history[1]["games"] == 4


@needs_torch
def test_a_resumed_run_counts_the_time_its_last_process_spent_after_its_last_net(new_run):
    run = new_run()
    play_chunks(run, 1)
    run.learn(wait=False)                         # too few games: no net, but the time is noted
    assert (run.dir / CLOCK).is_file() and len(run.history()) == 1
    run.note_time(3600.0)       # as a process that made games for an hour after its last net
    play_chunks(run, 2)
    history = ExpertRun(run.dir).learn(wait=False)
    assert history[1]["time"] >= 3600.0 and history[1]["games_per_hour"] <= 6
    assert run.noted_time() >= history[1]["time"]
    (run.dir / CLOCK).write_text("{not json")     # a clock cut short by a kill: the history's time
    assert run.noted_time() == 0.0


def passing_net():
    """A judging net that wants to pass whatever the position (its pass logit far above)."""
    net = trained_like()
    params = dict(net.params)
    params["pass.b"] = np.array(params["pass.b"] + 50.0, np.float32)
    return net.with_params(params)


def test_the_gate_scores_two_fixed_nets():
    passer, player = JudgeEvaluator(passing_net()), evaluator()
    settings = dataclasses.replace(FAST, cheap_visits=0, noise_fraction=0.0, resign_below=0.0,
                                   visits=4)
    # a net that passes at once loses every game, as Black (komi) or as White (Black's stones)
    assert gate(passer, player, SIZE, settings, 4, np.random.default_rng(0)) == (0.0, 4)
    assert gate(player, passer, SIZE, settings, 4, np.random.default_rng(0)) == (4.0, 4)


@needs_torch
def test_a_net_the_gate_rejects_never_reaches_the_workers(new_run):
    run = new_run(gate_games=2)
    save_policy(run.dir / NETS / net_name(0), trained_like(), SIZE, 0, 0)
    play_chunks(run, 2)
    original = run.gate
    run.gate = lambda candidate, current, number: (0.0, 2)    # the candidate lost both
    history = run.learn(wait=False)
    assert history[1]["accepted"] is False and history[1]["gate_games"] == 2
    assert run.current_net() == 0 and not (run.dir / NETS / net_name(1)).exists()
    wins, games = original(run.dir / "learner" / "weights.npz", run.dir / NETS / net_name(0), 1)
    assert games == 2 and 0 <= wins <= 2


def test_a_killed_worker_loses_its_chunk_and_is_replaced(new_run):
    run = new_run()
    options = (dataclasses.asdict(run.selfplay), SIZE, 1)
    pool = LocalPool(options, 1)
    try:
        pool.call(0, (0, run.net_bytes(0), [1]))
        pool.slots[0][0].kill()
        done = []
        while not done:
            done = pool.finished({0})
        assert done[0][0] == 0 and done[0][1] is None and "exited" in done[0][2]
        pool.call(0, (0, run.net_bytes(0), [2]))      # the new process plays on
        done = []
        while not done:
            done = pool.finished({0})
        slot, (version, games), error = done[0]
        assert error is None and version == 0 and len(games) == 1
    finally:
        pool.close()


def test_the_driver_writes_the_workers_chunks_until_stopped(new_run):
    run = new_run()
    driver = Driver(run, LocalPool((dataclasses.asdict(run.selfplay), SIZE, 2), 2), 2, log=print)
    driver.start()
    try:
        while run.games() < 4 and driver.error is None:
            driver.join(timeout=0.5)
    finally:
        driver.stop()
    assert driver.error is None and run.games() >= 4
    names = [path.name for path, _ in run.chunks()]
    assert names == sorted(names) and {name.split("-")[2] for name in names} <= {"w000", "w001"}


@needs_torch
def test_the_command_line_starts_resumes_and_describes_a_run(tmp_path, capsys):
    weights = tmp_path / "judge.npz"
    save_policy(weights, trained_like(), SIZE, 0, 0)
    run_dir = tmp_path / "run"
    argv = ["run", "--run-dir", str(run_dir), "--from-weights", str(weights), "--size", "5",
            "--games-per-net", "2", "--steps-per-net", "3", "--chunk-games", "2", "--visits", "8",
            "--cheap-visits", "2", "--precision", "fp32", "--batch-size", "8", "--nets", "1"]
    assert cli.main(argv) == 0
    err = capsys.readouterr().err
    assert re.search(r"net 1: accepted; \d+ games, 3 updates, \d+ s \(\d+ games/h\)", err), err
    run = ExpertRun(run_dir)
    assert [entry["net"] for entry in run.history()] == [0, 1]
    assert json.loads((run_dir / NETS / CURRENT).read_text()) == {"net": 1}
    assert cli.main(["run", "--resume", str(run_dir), "--nets", "2"]) == 0
    assert len(ExpertRun(run_dir).history()) == 3
    with pytest.raises(SystemExit):
        cli.main(["run", "--resume", str(run_dir), "--visits", "50"])
    assert "keeps its settings" in capsys.readouterr().err
    assert cli.main(["history", str(run_dir), "--out", str(tmp_path / "history.png")]) == 0
    out = capsys.readouterr().out
    assert "net 2: accepted" in out and (tmp_path / "history.png").stat().st_size > 0


def test_a_run_starts_only_from_a_judging_net(tmp_path, capsys):
    (tmp_path / "bad.npz").write_bytes(b"not a weight file")
    with pytest.raises(SystemExit):
        cli.main(["run", "--run-dir", str(tmp_path / "r"), "--from-weights", str(tmp_path / "bad.npz")])
    assert "bad.npz" in capsys.readouterr().err
    from engine.nets.policy import PolicyNet
    with pytest.raises(ValueError, match="judging net"):
        ExpertRun.create(tmp_path / "r", PolicyNet({"kind": "conv", "channels": 4, "layers": 1,
                                                    "first_kernel": 3}, "rich"),
                         ExpertSettings(size=SIZE), FAST, {})
    with pytest.raises(ValueError, match="not a self-play run"):
        ExpertRun(tmp_path)


def test_bad_settings_are_refused():
    for bad in (dict(visits=0), dict(full_share=1.5), dict(precision="fp8"), dict(noise_alpha=-1)):
        with pytest.raises(ValueError):
            SelfPlaySettings(**bad)
    for bad in (dict(size=3), dict(games_per_net=0), dict(gate_threshold=2.0)):
        with pytest.raises(ValueError):
            ExpertSettings(**bad)


def test_the_strength_of_a_net_against_a_fixed_opponent_goes_to_the_history(new_run, capsys):
    run = new_run()
    assert cli.main(["eval", str(run.dir), "--nets", "0", "--opponent", "net-0", "--games", "2",
                     "--visits", "4"]) == 0
    assert cli.main(["eval", str(run.dir), "--nets", "0", "--opponent", "net-0", "--games", "2",
                     "--visits", "4"]) == 0           # the finished match again: one line still
    line = json.loads((run.dir / "strength.jsonl").read_text())
    assert line["net"] == 0 and line["games"] == 2 and line["opponent"] == "net-0"
    assert line["wins"] + line["draws"] <= 2 and line["time"] == 0.0
    shown = capsys.readouterr().out
    assert "net 0 vs net-0 at 4 visits: " in shown
    assert re.search(r"mean margin ([+-][0-9]+\.[0-9]|none counted)$", shown.strip().splitlines()[-1])
    assert cli.main(["history", str(run.dir)]) == 0
    assert "net 0 vs net-0" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["eval", str(run.dir), "--nets", "0", "--opponent", "pachi"])
    assert "gnugo-LEVEL or net-N" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["eval", str(run.dir), "--nets", "7"])
    assert "no net 7" in capsys.readouterr().err


def test_a_run_starts_from_a_res_policy_nets_trunk_and_move_head(tmp_path):
    from engine.nets.judge import load_judge
    from engine.nets.policy import PolicyNet
    policy = PolicyNet({"kind": "res", "channels": 4, "layers": 3, "first_kernel": 3}, "rich", seed=2)
    save_policy(tmp_path / "res.npz", policy, SIZE, 0, 0)
    assert cli.main(["run", "--run-dir", str(tmp_path / "run"), "--from-weights",
                     str(tmp_path / "res.npz"), "--size", "5", "--nets", "0"]) == 0
    net, _ = load_judge(tmp_path / "run" / NETS / net_name(0))
    assert np.array_equal(net.params["output.w"], policy.params["output.w"])


EXPERT_SGF = "(;GM[1]FF[4]SZ[5]KM[7]RE[B+R];B[cc];W[bb];B[cb];W[bc];B[dc])"


@pytest.fixture
def expert_data(tmp_path):
    from engine.training.policydata import prepare
    (tmp_path / "expert.sgf").write_text(EXPERT_SGF)
    prepare([tmp_path / "expert.sgf"], tmp_path / "expert", size=SIZE)
    return tmp_path / "expert"


def test_expert_games_mixed_into_self_plays_batches(tmp_path, expert_data):
    from engine.training.mixeddata import MixedDataset
    write_chunk(tmp_path / "c", [hand_made_game([0.5, 0.6, 0.7], winner=-1)], net=0, worker=0)
    mixed = MixedDataset(PolicyDataset([tmp_path / "c"]), PolicyDataset([expert_data]), 0.25)
    assert mixed.positions == 8 and mixed.has_search_targets
    indices, symmetry = next(mixed.random_draws(8, np.random.default_rng(0)))
    assert (indices < 3).sum() == 6 and (indices >= 3).sum() == 2
    indices = np.array([0, 3, 4])              # a self-play position, the expert's first two
    planes, moves = mixed.batch("rich", indices, 5)
    assert planes.shape[0] == 3 and moves[0] == move_permutation(SIZE, 5)[0]
    policy = mixed.search_policy(indices, 5)
    assert policy[0, move_permutation(SIZE, 5)[7]] == pytest.approx(0.75)
    assert policy[1:].sum(axis=1) == pytest.approx([1, 1]) and (policy[1:].argmax(axis=1) == moves[1:]).all()
    targets = mixed.judge_targets(indices, 5, td_lambda=0.0)
    # self-play: the next position's value (0.6 for Black); the expert game: Black won, seen by
    # Black then White
    assert targets.value == pytest.approx([0.6, 1.0, 0.0]) and targets.value_known.all()
    with pytest.raises(ValueError):
        MixedDataset(PolicyDataset([tmp_path / "c"]), PolicyDataset([expert_data]), 1.0)


@needs_torch
def test_a_run_with_expert_games_beside_its_own(new_run, expert_data):
    with pytest.raises(ValueError, match="go together"):
        new_run(expert_data=str(expert_data))
    run = new_run(expert_data=str(expert_data), expert_share=0.5)
    play_chunks(run, 2)
    history = run.learn(wait=False)
    assert [entry["net"] for entry in history] == [0, 1] and history[1]["steps"] == 6


def test_a_history_line_cut_short_by_a_kill_is_left_out_and_one_run_has_one_learner(new_run):
    from engine.training.rundir import lock_run
    run = new_run()
    with open(run.dir / "history.jsonl", "a") as history:
        history.write('{"net": 1, "accep')
    assert [entry["net"] for entry in run.history()] == [0]
    run._record({"net": 1, "accepted": False, "games": 0, "steps": 0, "time": 1.0})
    assert [entry["net"] for entry in run.history()] == [0, 1] and run.current_net() == 0
    held = lock_run(run.dir)
    try:
        with pytest.raises(SystemExit, match="another process"):
            cli.main(["run", "--resume", str(run.dir)])
    finally:
        held.close()
