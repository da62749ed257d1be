"""NeuroGo 1996's network over units (engine/nets/unitgraph.pyx, engine/nets/unitnet.pyx): units and
relations on diagrams, groups, the colour transformation, Benson's override, the symmetries, the
gradient, incremental successors against full rebuilds, weight files, the trainer and the engine."""
import json
import sys

import numpy as np
import pytest

from engine.nets import unitnet
from engine.nets import weights as weight_files
from engine.nets.evaluator import UnitGraphEvaluator, load_evaluator
from engine.nets.unitgraph import UnitGraph, relation_names
from engine.rules.board import BLACK, EMPTY, WHITE, Board
from engine.rules.game import SYMMETRIES, GameState, pass_alive, symmetric_loc
from engine.tools.gtp_client import GtpClient
from engine.training import learning, train
from engine.training.selfplay import play_unitgraph_game
from tests.diagrams import board_grid, board_from_grid, load_board
from tests.paths import REPO


def at(board, row, col):
    return board.loc(row, col)


def random_network(seed, hidden=4, max_distance=3, scale=0.3):
    return weight_files.new_unitgraph_network(seed, hidden=hidden, max_distance=max_distance,
                                              scale=scale)


def random_game(size, moves, seed, colour=BLACK):
    """A board after random legal moves (captures happen on small boards), and the side to move."""
    board = Board(size)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        legal = board.legal_moves(colour)
        if not legal:
            break
        board.play(legal[rng.integers(len(legal))], colour)
        colour = 3 - colour
    return board, colour


def graph_of(board, to_move=BLACK, max_distance=3):
    graph = UnitGraph(max_distance)
    graph.load(board, to_move)
    return graph


# ------------------------------------------------------------------------------ units and relations

def test_a_string_is_one_unit_and_every_empty_point_another():
    board = load_board("""
        . X X . .
        . X . O .
        . . . O .
        O . . . .
        . . . . .
    """)
    graph = graph_of(board, BLACK)
    units = graph.units()
    black = graph.unit_of(at(board, 0, 1))
    assert units[black] == ("own", sorted([at(board, 0, 1), at(board, 0, 2), at(board, 1, 1)]))
    white = graph.unit_of(at(board, 1, 3))
    assert units[white] == ("opponent", sorted([at(board, 1, 3), at(board, 2, 3)]))
    assert units[graph.unit_of(at(board, 3, 0))] == ("opponent", [at(board, 3, 0)])
    empties = [a for a, (kind, _) in units.items() if kind == "empty"]
    assert len(empties) == 25 - 6 and all(units[a][1] == [a] for a in empties)
    assert len(units) == 3 + len(empties)
    # the other side to move: the same units, own and opponent exchanged
    swapped = graph_of(board, WHITE).units()
    assert swapped[black][0] == "opponent" and swapped[white][0] == "own"


def test_distances_follow_paths_through_empty_points_only():
    board = load_board("""
        . X O . . . .
        . X . . . . .
        . X . . . . .
        . . . . . . .
        X . . . O . .
        . . . . . . .
        . . . . . . .
    """)
    relations = graph_of(board, BLACK, max_distance=3).relations()
    corner, wall = at(board, 0, 0), graph_of(board).unit_of(at(board, 0, 1))
    white = at(board, 0, 2)

    def relation(a, b):
        return relations.get((a, b))

    assert relation(corner, corner) == "same"
    assert relation(corner, wall) == "adjacent" and relation(wall, corner) == "adjacent"
    assert relation(wall, white) == "adjacent"
    # the corner is two steps from the white stone as the crow flies, but the wall is in the way
    assert relation(corner, white) is None
    assert relation(at(board, 1, 2), at(board, 3, 2)) == "D2"
    assert relation(at(board, 1, 2), at(board, 4, 2)) == "D3"
    assert relation(at(board, 1, 2), at(board, 5, 2)) is None          # D4 > max_distance
    lone_black, lone_white = at(board, 4, 0), at(board, 4, 4)
    assert relation(lone_black, lone_white) is None                    # four steps apart
    longer = graph_of(board, BLACK, max_distance=4).relations()
    assert longer[(lone_black, lone_white)] == "D4" == longer[(lone_white, lone_black)]
    # every relation is the same both ways, every unit is its own "same"
    for (a, b), name in relations.items():
        assert relations[(b, a)] == name
        assert (name == "same") == (a == b)
    assert relation_names(3) == ["same", "group", "adjacent", "D2", "D3"]


def test_groups_share_two_liberties_or_a_cut_that_dies():
    board = load_board("""
        . X . X . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . X . . . . . .
        . . . X . X . X .
        . . . . . . . . .
        . . . . . . . . .
        . . X . . . . . .
        X . . . . . . . .
    """)
    graph = graph_of(board, BLACK)
    unit = graph.unit_of
    groups = [set(g) for g in graph.groups()]

    def together(a, b):
        return any(unit(a) in g and unit(b) in g for g in groups)

    # the diagonal pair shares two liberties
    assert together(at(board, 3, 2), at(board, 4, 3))
    # the jump on the edge shares one, where a white cut has a single liberty: captured at once
    assert together(at(board, 0, 1), at(board, 0, 3))
    # one-point jumps in the open: the cut has two liberties and runs away
    assert not together(at(board, 4, 3), at(board, 4, 5))
    assert not together(at(board, 4, 5), at(board, 4, 7))
    # the knight's move in the corner shares no liberty
    assert not together(at(board, 7, 2), at(board, 8, 0))
    assert len(groups) == 6
    relations = graph.relations()
    assert relations[(unit(at(board, 0, 1)), unit(at(board, 0, 3)))] == "group"
    assert relations[(unit(at(board, 4, 5)), unit(at(board, 4, 7)))] == "D2"
    # White to move sees the same groups: they are the strings', whoever is to move
    assert graph_of(board, WHITE).groups() == graph.groups()


def test_groups_are_closed_transitively_beyond_the_largest_distance():
    board = load_board("""
        X . . . . . . . .
        . X . . . . . . .
        . . X . . . . . .
        . . . X . . . . .
        . . . . X . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
    """)
    graph = graph_of(board, WHITE, max_distance=2)
    first, last = at(board, 0, 0), at(board, 4, 4)
    assert graph.groups() == [sorted(graph.unit_of(at(board, k, k)) for k in range(5))]
    assert graph.relations()[(graph.unit_of(first), graph.unit_of(last))] == "group"


def test_the_feature_expert_sees_strings_and_points_in_the_side_to_moves_frame():
    board = load_board("""
        . . . . .
        . X . . .
        . O X . .
        . X . . .
        . . . . .
    """)
    for to_move in (BLACK, WHITE):
        inputs = graph_of(board, to_move).inputs()
        white = at(board, 2, 1)
        assert unitnet.feature_set_version("units") == 1
        # the white stone: one liberty, one stone, in atari
        assert {0, 1, 5} <= set(inputs[white])
        liberty = at(board, 2, 0)
        assert board.liberties(white) == [liberty]
        own_atari, opponent_atari = 7, 8
        expected = opponent_atari if to_move == BLACK else own_atari
        assert expected in inputs[liberty]
        assert (own_atari if to_move == BLACK else opponent_atari) not in inputs[liberty]
        corner = at(board, 4, 4)
        assert inputs[corner][:2] == [0, 1]            # present, on the first line


# ------------------------------------------------------------------------------ Benson

def test_benson_in_c_agrees_with_pass_alive_on_played_out_boards():
    for seed in range(12):
        size = 5 + seed % 4
        board = Board(size)
        board.playout(BLACK if seed % 2 else WHITE, seed=seed)
        graph = graph_of(board, BLACK)
        verdicts = graph.benson()
        for colour, value in ((BLACK, 1.0), (WHITE, 0.0)):
            stones, safe = pass_alive(board, colour)
            decided = {p for p in board.points() if verdicts[p] == value}
            assert decided == stones | safe, (seed, colour)


def test_benson_overrides_the_network_whatever_its_weights():
    board = load_board("""
        . X . X O . .
        X X X X O . .
        O O O O O . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
    black_area = [at(board, 0, c) for c in range(4)] + [at(board, 1, c) for c in range(4)]
    for seed in range(3):
        network = random_network(seed, scale=1.0)
        for to_move in (BLACK, WHITE):
            owned, decided, total = network.evaluate_board(board, to_move)
            expected = 1.0 if to_move == BLACK else 0.0
            assert all(owned[p] == expected and decided[p] for p in black_area)
            assert not decided[at(board, 4, 4)]
            assert total == pytest.approx(owned[board.points()].sum())
    # no error, so no gradient, from the decided points
    network = random_network(5)
    targets = np.zeros(board.num_locs)
    mask = np.zeros(board.num_locs, dtype=np.uint8)
    mask[black_area] = 1
    grad = np.zeros(network.num_params)
    assert network.loss_and_gradient(board, BLACK, targets, mask, grad) == 0.0
    assert not grad.any()


# ------------------------------------------------------------------------------ the network

def test_the_colour_transformation_makes_the_side_to_move_black():
    board, _ = random_game(7, 20, seed=3)
    swapped = board_from_grid(np.where(board_grid(board) == EMPTY, EMPTY,
                                       3 - board_grid(board)))
    network = random_network(4)
    for to_move in (BLACK, WHITE):
        owned, _, total = network.evaluate_board(board, to_move)
        mirrored, _, mirrored_total = network.evaluate_board(swapped, 3 - to_move)
        assert np.allclose(owned, mirrored, rtol=0, atol=1e-12)
        assert total == pytest.approx(mirrored_total, abs=1e-9)
    # the same inputs point by point (the units' anchors, chain heads, may differ)
    views = []
    for graph in (graph_of(board, WHITE), graph_of(swapped, BLACK)):
        inputs = graph.inputs()
        views.append({p: inputs[graph.unit_of(p)] for p in board.points()})
    assert views[0] == views[1]


@pytest.mark.parametrize("size, seed", [(7, 1), (9, 2)])
def test_values_and_ownership_are_the_same_under_the_eight_symmetries(size, seed):
    state = GameState(size)
    rng = np.random.default_rng(seed)
    for _ in range(size * size // 3):
        moves = [m for m in state.legal_moves() if not state.board.is_eye(m, state.to_move)]
        state.play(moves[rng.integers(len(moves))])
    evaluator = UnitGraphEvaluator(random_network(seed))
    plain = evaluator.evaluate(state)
    moves, values = evaluator.successor_values(state)
    value_of = dict(zip(moves, values))
    for symmetry in range(1, SYMMETRIES):
        image = state.transformed(symmetry)
        mirrored = evaluator.evaluate(image)
        assert mirrored.value == pytest.approx(plain.value, abs=1e-9)
        for p in state.board.points():
            assert mirrored.ownership[symmetric_loc(p, size, symmetry)] == \
                pytest.approx(plain.ownership[p], abs=1e-9)
        image_moves, image_values = evaluator.successor_values(image)
        image_value_of = dict(zip(image_moves, image_values))
        for move in moves:
            image_move = move if move < 0 else symmetric_loc(move, size, symmetry)
            assert image_value_of[image_move] == pytest.approx(value_of[move], abs=1e-9)


def test_gradient_matches_finite_differences():
    network = random_network(7, hidden=3, max_distance=2, scale=0.4)
    board, colour = random_game(6, 12, seed=7)
    rng = np.random.default_rng(7)
    targets = rng.random(board.num_locs)
    mask = np.zeros(board.num_locs, dtype=np.uint8)
    mask[board.points()] = 1
    grad = np.zeros(network.num_params)
    network.loss_and_gradient(board, colour, targets, mask, grad)
    params = network.get_params()
    used = np.flatnonzero(grad)
    assert len(used) > 100
    blocks = network.parameter_blocks()
    checked = set()
    start_b2 = blocks["b2"][0]
    for index in np.union1d(used[::max(1, len(used) // 60)], used[used >= start_b2]):
        def loss_at(delta):
            shifted = params.copy()
            shifted[index] += delta
            network.set_params(shifted)
            return network.loss_and_gradient(board, colour, targets, mask,
                                             np.zeros(network.num_params))
        numeric = (loss_at(1e-6) - loss_at(-1e-6)) / 2e-6
        assert grad[index] == pytest.approx(numeric, rel=1e-5, abs=1e-7)
        checked |= {name for name, (start, stop, _) in blocks.items() if start <= index < stop}
    assert checked == set(blocks)


# ------------------------------------------------------------------------------ incremental

@pytest.mark.parametrize("size, moves, seed", [(5, 12, 1), (5, 30, 2), (7, 40, 3), (9, 30, 4),
                                               (9, 70, 5), (13, 60, 6)])
def test_incremental_successors_equal_a_full_rebuild(size, moves, seed):
    """Every successor's value bit for bit, and the graph itself: units, edges in their order,
    inputs, groups and Benson's verdicts, after captures, merges and ladders."""
    board, colour = random_game(size, moves, seed)
    network = random_network(seed, hidden=5)
    legal = board.legal_moves(colour)
    pass_value, values = network.successor_values(board, colour, legal)
    full_pass, full_values = network.successor_values_full(board, colour, legal)
    assert pass_value == full_pass
    assert np.array_equal(values, full_values)
    incremental, rebuilt = UnitGraph(3), UnitGraph(3)
    for move in legal:
        incremental.load_successor(board, 3 - colour, move)
        rebuilt.load(board, 3 - colour)
        assert incremental.units() == rebuilt.units()
        assert incremental.edge_lists() == rebuilt.edge_lists()
        assert incremental.inputs() == rebuilt.inputs()
        assert incremental.groups() == rebuilt.groups()
        assert np.array_equal(incremental.benson(), rebuilt.benson())
        board.undo()


def test_suicides_allowed_are_evaluated_like_any_successor():
    board = load_board("""
        X . O . .
        O O . . .
        . . . . .
        . . . X .
        . . . . .
    """)
    network = random_network(3)
    legal = board.legal_moves(BLACK, True)
    suicide = at(board, 0, 1)
    assert suicide in legal and suicide not in board.legal_moves(BLACK)
    pass_value, values = network.successor_values(board, BLACK, legal, True)
    full_pass, full_values = network.successor_values_full(board, BLACK, legal, True)
    assert pass_value == full_pass and np.array_equal(values, full_values)
    board.play(suicide, BLACK, True)
    assert board.get(at(board, 0, 0)) == EMPTY            # both black stones are gone
    _, _, total = network.evaluate_board(board, WHITE)
    assert values[legal.index(suicide)] == pytest.approx(25 - 2 * total, abs=1e-12)


def test_a_successor_rebuilds_only_near_the_move():
    board, colour = random_game(19, 60, seed=9)
    graph = UnitGraph(3)
    graph.load(board, 3 - colour)
    units = len(graph.units())
    move = next(m for m in board.legal_moves(colour)
                if all(board.get(m + d) == EMPTY for d in (1, -1, 21, -21)))
    dirty, changed = graph.load_successor(board, 3 - colour, move)
    board.undo()
    assert len(dirty) < units / 4 and len(changed) < units / 4


# ------------------------------------------------------------------------------ weight files

def test_weight_file_round_trip_and_corrupt_files_refused(tmp_path):
    network = random_network(8, hidden=6, max_distance=2)
    path = tmp_path / "unitgraph.npz"
    metadata = weight_files.save_weights(path, network, board_size=9, games_trained=3)
    assert metadata["architecture"] == {"name": "unitgraph", "hidden": 6, "max_distance": 2,
                                        "num_inputs": network.num_inputs, "num_outputs": 1,
                                        "num_params": network.num_params}
    assert metadata["feature_set"] == {"name": "units", "version": 1}
    loaded, _ = weight_files.load_weights(path)
    assert isinstance(loaded, unitnet.UnitGraphNetwork)
    assert np.array_equal(loaded.get_params(), network.get_params())
    assert isinstance(load_evaluator(path), UnitGraphEvaluator)

    def rewrite(change, name, params=None):
        broken = json.loads(json.dumps(metadata))
        change(broken)
        target = tmp_path / name
        encoded = np.frombuffer(json.dumps(broken).encode(), dtype=np.uint8)
        np.savez(target, params=network.get_params() if params is None else params,
                 metadata=encoded)
        return target

    altered = network.get_params()
    altered[0] += 1.0
    cases = [
        (rewrite(lambda m: m["architecture"].update(hidden=0), "a.npz"), "hidden should be"),
        (rewrite(lambda m: m["architecture"].update(max_distance=9), "b.npz"), "max_distance"),
        (rewrite(lambda m: m["architecture"].update(hidden=7), "c.npz"), "num_params"),
        (rewrite(lambda m: m["architecture"].update(num_outputs=7), "d.npz"), "num_outputs"),
        (rewrite(lambda m: m["feature_set"].update(name="neurogo"), "e.npz"),
         "unknown unit feature set"),
        (rewrite(lambda m: m["feature_set"].update(version=2), "f.npz"), "version 2 does not"),
        (rewrite(lambda m: None, "g.npz", altered), "checksum"),
        (rewrite(lambda m: None, "h.npz", network.get_params()[:-1]), "shape"),
    ]
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(path.read_bytes()[:len(path.read_bytes()) // 2])
    cases.append((truncated, "truncated or corrupt"))
    for target, message in cases:
        with pytest.raises(weight_files.WeightFileError, match=message) as error:
            weight_files.load_weights(target)
        assert str(target) in str(error.value)


# ------------------------------------------------------------------------------ training and play

def tiny_settings(**changes):
    values = dict(size=5, arch="unitgraph", procedure="neurogo", shortcut_games=0,
                  feature_set="units", learning_rate=1e-3, weight_decay=1.0,
                  unitgraph_hidden=4, recent_games=1, seed=3)
    return train.TrainSettings(**{**values, **changes})


def test_train_game_is_the_replay_position_by_position():
    settings = tiny_settings(rich_signal=True)
    network = random_network(2, hidden=4)
    record = play_unitgraph_game(network, settings.selfplay_config("all"),
                                 np.random.default_rng(2))
    game = learning.TrainingGame.from_record(record, settings, 0.0)
    game.trained[::3] = False
    assert game.observed.shape == (len(game.inputs), record.final_board.num_locs)
    reference = random_network(2, hidden=4)
    rate = 1e-3
    # the replay by hand: positions rebuilt from the moves, targets from the next position
    positions, board = [], Board(5)
    for colour, move in game.inputs:
        positions.append(board.copy())
        board.play(int(move), int(colour))
    following, expected_loss = game.final_targets.copy(), 0.0
    for t in range(len(positions) - 1, -1, -1):
        to_move = BLACK if game.black_to_move[t] else WHITE
        owned, _, _ = reference.evaluate_board(positions[t], to_move)
        if game.trained[t]:
            grad = np.zeros(reference.num_params)
            target = following if to_move == BLACK else 1.0 - following
            expected_loss += reference.loss_and_gradient(positions[t], to_move, target,
                                                         game.final_mask, grad)
            reference.set_params(reference.get_params() - rate * grad)
        following = owned if to_move == BLACK else 1.0 - owned
        following = np.where(game.observed[t] >= 0, game.observed[t], following)
    loss, entries = network.train_game(game.inputs, game.black_to_move, game.trained,
                                       game.observed, game.final_targets, game.final_mask,
                                       rate, 5)
    assert entries == int(game.trained.sum()) * int(game.final_mask.sum())
    assert loss == pytest.approx(expected_loss, rel=1e-9)
    assert np.allclose(network.get_params(), reference.get_params(), rtol=0, atol=1e-12)


def test_a_run_learns_resumes_exactly_and_the_engine_plays_its_weights(tmp_path):
    settings = tiny_settings(recent_games=2)
    straight = train.Trainer.create(tmp_path / "straight", settings)
    straight.run(games=6, workers=1, checkpoint_every=0, progress=False)
    straight.close()
    first = train.Trainer.create(tmp_path / "split", settings)
    first.run(games=3, workers=1, checkpoint_every=0, progress=False)
    first.close()
    resumed = train.Trainer.resume(tmp_path / "split")
    assert len(resumed.recent) == 2
    resumed.run(games=6, workers=1, checkpoint_every=0, progress=False)
    resumed.close()
    assert np.array_equal(straight.network.get_params(), resumed.network.get_params())
    lines = [json.loads(line) for line in (tmp_path / "straight" / "log.jsonl").read_text()
             .splitlines()]
    assert [line["game"] for line in lines if line["type"] == "game"] == list(range(1, 7))
    assert all(line["loss"] > 0 for line in lines if line["type"] == "game")
    weights = tmp_path / "straight" / "checkpoints" / "000000006" / "weights.npz"
    _, metadata = weight_files.load_weights(weights)
    assert metadata["trainer"]["settings"]["arch"] == "unitgraph"
    for size in (5, 9):
        with GtpClient([sys.executable, str(REPO / "gtp_server.py"), "--weights", str(weights),
                        "--seed", "1"]) as engine:
            engine.send(f"boardsize {size}")
            engine.send("clear_board")
            engine.send("play b c3")
            move = engine.send("genmove w").lower()
            assert move == "pass" or (move != "c3" and move[0] in "abcdefghj")


def test_unitgraph_settings_are_refused_when_they_cannot_work():
    for changes, message in (({"procedure": "blair", "lam": 0.9}, "--procedure neurogo"),
                             ({"shortcut_games": 10}, "no shortcut phase"),
                             ({"feature_set": "neurogo"}, "takes the input sets"),
                             ({"unitgraph_hidden": 0}, "sizes out of range"),
                             ({"unitgraph_distance": 9}, "sizes out of range")):
        with pytest.raises(ValueError, match=message):
            tiny_settings(**changes)


@pytest.mark.parametrize("size", [5, 9, 13, 19])
def test_the_evaluator_plays_every_board_size(size):
    evaluator = UnitGraphEvaluator(random_network(size))
    state = GameState(size)
    state.play(state.board.loc(size // 2, size // 2))
    moves, values = evaluator.successor_values(state)
    assert len(moves) == size * size and np.all(np.isfinite(values))
    evaluation = evaluator.evaluate(state)
    on_board = np.zeros(state.board.num_locs, dtype=bool)
    on_board[state.board.points()] = True
    assert np.all(np.abs(evaluation.ownership[on_board]) <= 1)
    assert not evaluation.ownership[~on_board].any()
    # the value is the expected area margin: the ownership summed, komi added, for White to move
    assert evaluation.value == pytest.approx(-evaluation.ownership.sum() + state.rules.komi)
    # its inputs say which points the network took as one unit
    assert evaluation.inputs[state.board.loc(size // 2, size // 2)] == \
        state.board.loc(size // 2, size // 2)
    assert np.array_equal(evaluation.inputs[~on_board], np.full((~on_board).sum(), -1))


def test_the_shipped_unitgraph_net_loads_and_plays_9x9_and_19x19():
    evaluator = load_evaluator(REPO / "weights" / "unitgraph_9x9.npz")
    assert isinstance(evaluator, UnitGraphEvaluator)
    metadata = evaluator.metadata
    assert metadata["architecture"]["name"] == "unitgraph" and metadata["board_size"] == 9
    assert metadata["games_trained"] >= 5000
    assert metadata["trainer"]["settings"]["arch"] == "unitgraph"
    for size in (9, 19):
        state = GameState(size)
        moves, values = evaluator.successor_values(state)
        assert len(moves) == size * size + 1 and np.all(np.isfinite(values))
