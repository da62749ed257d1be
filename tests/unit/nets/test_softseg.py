"""NeuroGo 3's soft-segmentation network (engine/nets/softseg.pyx): the pathfinder, the weight
selection, the gradient, the rich signal, the evaluator, weight files and a tiny training run."""
import json
import subprocess
import sys

import numpy as np
import pytest

from engine.nets import softseg
from engine.nets import weights as weight_files
from engine.nets.evaluator import SoftSegEvaluator, load_evaluator
from engine.rules.board import BLACK, PASS, WHITE, Board
from engine.rules.game import GameState, Rules
from engine.tools.gtp_client import GtpClient
from engine.training import learning, train
from engine.training.selfplay import SelfPlayConfig, play_softseg_game
from tests.paths import REPO

FIELDS = softseg.FIELD_VECTORS


def random_network(seed, feature_set="neurogo", scale=0.5, **sizes):
    return weight_files.new_softseg_network(seed, feature_set, scale=scale, **sizes)


def middle_game(size=7, moves=14, seed=0):
    board = Board(size)
    rng = np.random.default_rng(seed)
    colour = BLACK
    for _ in range(moves):
        legal = board.legal_moves(colour)
        board.play(legal[rng.integers(len(legal))], colour)
        colour = 3 - colour
    return board, colour


# ------------------------------------------------------------------------------ pathfinder

def window_steps(board_size):
    stride = board_size + 2
    points = [(r + 1) * stride + c + 1 for r in range(board_size) for c in range(board_size)]
    on_board = set(points)
    offsets = [dx - dy * stride for dx, dy in FIELDS]
    return stride, points, on_board, offsets


def brute_force_connectivity(local, board_size, cutoff):
    """Every simple path of window steps, by depth-first search: the best product per pair."""
    stride, points, on_board, offsets = window_steps(board_size)
    result = np.zeros((2, local.shape[0], local.shape[0]))
    for c in range(2):
        for source in points:
            best = {}

            def walk(x, product, seen):
                for f in range(1, 9):
                    y = x + offsets[f]
                    if y not in on_board or y in seen:
                        continue
                    value = product * local[x, c, f]
                    if value > best.get(y, 0.0):
                        best[y] = value
                    seen.add(y)
                    walk(y, value, seen)
                    seen.discard(y)

            walk(source, 1.0, {source})
            best.pop(source, None)
            for q, value in best.items():
                if value >= cutoff:
                    result[c, source, q] = value
            if local[source, c, 0] >= cutoff:
                result[c, source, source] = local[source, c, 0]
    return result


def random_local(board_size, rng, low=0.0):
    num_locs = (board_size + 2) ** 2
    return rng.uniform(low, 1.0, (num_locs, 2, 9)) ** 0.5


@pytest.mark.parametrize("seed", range(4))
def test_pathfinder_finds_the_best_product_of_any_path_on_small_boards(seed):
    rng = np.random.default_rng(seed)
    local = random_local(3, rng)
    expected = brute_force_connectivity(local, 3, 0.1)
    found = softseg.pathfinder_reference(local, 3, 0.1)
    assert np.allclose(found, expected, rtol=1e-12, atol=0)
    assert (expected > 0).sum() > 20          # the test sees real paths, not only cut-offs


def test_pathfinder_cut_off_and_long_paths_on_a_larger_board():
    """Floyd-Warshall on max-product as the reference (4x4 is too big to list every path)."""
    rng = np.random.default_rng(11)
    size = 5
    local = random_local(size, rng, low=0.3)
    stride, points, on_board, offsets = window_steps(size)
    for cutoff in (0.1, 0.3):
        found = softseg.pathfinder_reference(local, size, cutoff)
        for c in range(2):
            n = len(points)
            best = np.zeros((n, n))
            index = {p: i for i, p in enumerate(points)}
            for p in points:
                for f in range(1, 9):
                    q = p + offsets[f]
                    if q in on_board:
                        best[index[p], index[q]] = local[p, c, f]
            for k in range(n):
                best = np.maximum(best, best[:, [k]] * best[[k], :])
            for p in points:
                for q in points:
                    value = local[p, c, 0] if p == q else best[index[p], index[q]]
                    expected = value if value >= cutoff else 0.0
                    assert found[c, p, q] == pytest.approx(expected, rel=1e-12, abs=0)


# ------------------------------------------------------------------------------ weight selection

def test_evaluation_layer_matches_a_direct_weight_selection():
    network = random_network(1, hidden1=4, hidden2=3, intervals=5)
    board, to_move = middle_game()
    outputs, encoded, total = network.evaluate_board(board, to_move)
    level2 = network.level2_activations()
    connection = network.connectivity()
    params = network.get_params()
    start, stop, shape = network.parameter_blocks()["wv"]
    wv = params[start:stop].reshape(shape)
    bv = params[network.parameter_blocks()["bv"][0]:]
    types = encoded[:, 0]
    selected = network.hidden2 + 2
    for p in board.points():
        z = bv[types[p]]
        for c in range(2):
            for q in board.points():
                value = connection[c, p, q]
                if value < 0.1:
                    continue
                interval = min(int(value * 5), 4)
                z += wv[c, types[p], types[q], interval] @ level2[q, :selected]
        assert outputs[p, softseg.OUTPUT_EVAL] == pytest.approx(1 / (1 + np.exp(-z)), abs=1e-12)
    assert total == pytest.approx(outputs[board.points(), softseg.OUTPUT_EVAL].sum())


def test_point_types_follow_figure_2():
    board = Board.from_ascii("""
        . . . . . . .
        . . . . . . .
        . . X . . . .
        . . . O . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
    network = random_network(0)
    types = network.encode(board, WHITE)[:, 0]
    grid = np.array([types[board.loc(r, c)] for r in range(7) for c in range(7)]).reshape(7, 7)
    assert grid[0].tolist() == [0, 1, 2, 2, 2, 1, 0]
    assert grid[1].tolist() == [1, 3, 4, 4, 4, 3, 1]
    assert grid[2, 2] == 7 and grid[3, 3] == 6      # White to move: White's stones are "black"
    assert grid[3, 0] == 2 and grid[3, 1] == 4 and grid[4, 4] == 5
    assert network.encode(board, BLACK)[board.loc(2, 2), 0] == 6
    assert (network.encode(board, BLACK)[:, 0] < 0).sum() == board.num_locs - 49


# ------------------------------------------------------------------------------ gradient

@pytest.mark.parametrize("feature_set", ["neurogo", "raw"])
def test_gradient_matches_finite_differences(feature_set):
    network = random_network(3, feature_set, hidden1=3, hidden2=2)
    board, to_move = middle_game(6, 12, seed=2)
    encoded = network.encode(board, to_move)
    rng = np.random.default_rng(5)
    targets = rng.random((board.num_locs, 21))
    mask = np.zeros((board.num_locs, 21), dtype=bool)
    mask[board.points()] = rng.random((len(board.points()), 21)) < 0.8
    grad = np.zeros(network.num_params)
    network.loss_and_gradient(encoded, targets, mask, grad)
    network.freeze_connectivity = True     # the connectivity is not differentiated (section 3.1)
    params = network.get_params()
    checked = 0
    for name, (start, stop, _) in network.parameter_blocks().items():
        touched = np.flatnonzero(grad[start:stop]) + start
        assert len(touched), name
        for i in rng.choice(touched, min(5, len(touched)), replace=False):
            losses = []
            for step in (1e-6, -1e-6):
                shifted = params.copy()
                shifted[i] += step
                network.set_params(shifted)
                losses.append(network.loss_and_gradient(encoded, targets, mask,
                                                        np.zeros(network.num_params)))
            numeric = (losses[0] - losses[1]) / 2e-6
            assert grad[i] == pytest.approx(numeric, rel=1e-4, abs=1e-7), (name, i)
            checked += 1
    assert checked >= 25


def test_train_position_is_one_gradient_step_in_place():
    network = random_network(4, hidden1=3)
    board, to_move = middle_game(5, 8, seed=4)
    encoded = network.encode(board, to_move)
    targets, mask = softseg.rich_signal(board, to_move, final=True)
    grad = np.zeros(network.num_params)
    loss = network.loss_and_gradient(encoded, targets, mask, grad)
    before = network.get_params()
    version = network.params_version
    step_loss, outputs = network.train_position(encoded, targets, mask, 0.01)
    assert step_loss == pytest.approx(loss)
    assert np.allclose(network.get_params(), before - 0.01 * grad, rtol=0, atol=1e-15)
    assert network.params_version > version
    network.set_params(before)
    assert np.array_equal(outputs, network.forward(encoded))


# ------------------------------------------------------------------------------ rich signal

def signal_grid(board, column, to_move=BLACK, final=False):
    targets, mask = softseg.rich_signal(board, to_move, final)
    rows = []
    for r in range(board.size):
        row = ""
        for c in range(board.size):
            p = board.loc(r, c)
            row += "." if not mask[p, column] else ("1" if targets[p, column] == 1 else "0")
        rows.append(row)
    return rows


def test_single_point_eyes_as_section_2_1_defines_them():
    board = Board.from_ascii("""
        . X . X O
        X X X X O
        X . X O .
        X X O O O
        . X O . O
    """)
    # Black: A5, C5, B3 and A1 are surrounded by Black's one block.
    assert signal_grid(board, softseg.OUTPUT_EYE) == [
        "1.1..",
        ".....",
        ".1...",
        ".....",
        "1....",
    ]
    # White: D1 is surrounded by one block; E3 by two (E4-E5 and the rest) that share no other
    # such point, so it is no eye.
    assert signal_grid(board, softseg.OUTPUT_EYE + 1) == [
        ".....",
        ".....",
        ".....",
        ".....",
        "...1.",
    ]


def test_two_blocks_make_eyes_only_when_they_share_another_and_then_live():
    sharing = Board.from_ascii("""
        . . . . .
        . . . . .
        X X O . .
        X . X O .
        . X X O .
    """)
    # A1 touches the blocks A2-A3-B3 and B1-C1-C2; B2 touches the same two: both are eyes, and
    # the two blocks with their two eyes are alive.
    assert signal_grid(sharing, softseg.OUTPUT_EYE)[3:] == [".1...", "1...."]
    assert signal_grid(sharing, softseg.OUTPUT_EVAL)[2:] == ["11...", "111..", "111.."]
    alone = Board.from_ascii("""
        . . . . .
        . . . . .
        X X O . .
        X . . O .
        . X X O .
    """)
    # without C2 the point B2 has an empty neighbour: A1 is between two blocks sharing nothing
    assert all(c == "." for row in signal_grid(alone, softseg.OUTPUT_EYE) for c in row)
    assert all(c == "." for row in signal_grid(alone, softseg.OUTPUT_EVAL) for c in row)


def test_live_points_are_connected_to_two_eyes():
    board = Board.from_ascii("""
        . X . X O
        X X X X O
        O O O X O
        . O . O O
        O O O O .
    """)
    grid = signal_grid(board, softseg.OUTPUT_EVAL)
    # Black's block with its eyes A5 and C5; White's with A2, C2 and E1: every point is alive
    assert grid == ["11110", "11110", "00010", "00000", "00000"]
    assert signal_grid(board, softseg.OUTPUT_EVAL, WHITE)[3][2] == "1"     # White's frame


def test_shared_eyes_need_exactly_two_blocks():
    board = Board.from_ascii("""
        . X O . . . .
        X . X O . . .
        O X X O . . .
        . O O . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
    # B6 touches three blocks (B7, A6, B5-C5-C6): no eye; A7 touches two (B7, A6) that share
    # no other such point: no eye.
    grid = signal_grid(board, softseg.OUTPUT_EYE)
    assert grid[0][0] == "." and grid[1][1] == "."
    lattice = Board.from_ascii("""
        . X . X .
        X . X . X
        . X . X .
        X . X . X
        . X . X .
    """)
    # single stones everywhere: every empty point touches two or more blocks, none shares
    assert all(c == "." for row in signal_grid(lattice, softseg.OUTPUT_EYE) for c in row)
    shared = Board.from_ascii("""
        X . X . .
        X X . X .
        . X X X .
        . . . . .
        . . . . .
    """)
    # B5 and C4 each touch the big block and C5: two blocks sharing two points, two eyes
    grid = signal_grid(shared, softseg.OUTPUT_EYE)
    assert grid[0][1] == "1" and grid[1][2] == "1"
    assert grid[0][3] == "." and grid[2][0] == "."


def test_connections_within_the_window():
    board = Board.from_ascii("""
        X X . O .
        . X . O .
        . . . . .
        . . X . .
        . . . . .
    """)
    targets, mask = softseg.rich_signal(board, BLACK)
    b4 = board.loc(1, 1)
    local = softseg.OUTPUT_LOCAL
    connected = {FIELDS[f] for f in range(9) if mask[b4, local + f] and targets[b4, local + f] == 1}
    # B4 to itself, to B5 (north) and to A5 (north-west); not to the empty points
    assert connected == {(0, 0), (0, 1), (-1, 1)}
    c2 = board.loc(3, 2)
    assert {FIELDS[f] for f in range(9) if mask[c2, local + f]} == {(0, 0)}
    assert not mask[b4, local + 9:local + 18].any()          # White's connections: none at B4
    final_targets, final_mask = softseg.rich_signal(board, BLACK, final=True)
    # at the end every on-board output has a target; off-board window points have none
    a5 = board.loc(0, 0)
    assert final_mask[a5, local:local + 9].sum() == 4          # A5: itself, E, S, SE
    assert final_mask[board.points()][:, [0, 1, 20]].all()


def test_final_signal_counts_points_alive_for_neither_by_area():
    board = Board.from_ascii("""
        . X O .
        X X O O
        . X O .
        X X O O
    """)
    targets, mask = softseg.rich_signal(board, BLACK, final=True)
    # Black's A4 and A2 are eyes of one block: alive; White's D4, D2: alive for White
    assert targets[board.loc(0, 0), softseg.OUTPUT_EVAL] == 1
    assert targets[board.loc(0, 3), softseg.OUTPUT_EVAL] == 0
    lonely = Board.from_ascii("""
        . . . .
        . X . .
        . . . .
        . . . O
    """)
    targets, mask = softseg.rich_signal(lonely, BLACK, final=True)
    assert targets[lonely.loc(1, 1), softseg.OUTPUT_EVAL] == 1      # Black's stone: area
    assert targets[lonely.loc(0, 0), softseg.OUTPUT_EVAL] == 0.5    # touches both: neutral
    assert mask[lonely.points(), softseg.OUTPUT_EVAL].all()
    assert not softseg.all_alive(lonely) and softseg.all_alive(board)


def reference_eyes_and_components(board, colour):
    """Section 2.1's eyes and connection components straight from the definitions, through the
    board's Python API (the pure-Python form softseg.eyes_and_components had)."""
    on_board = set(board.points())
    neighbours = lambda p: [q for q in (p + 1, p - 1, p + board.stride, p - board.stride)
                            if q in on_board]
    eye = np.zeros(board.num_locs, dtype=bool)
    pairs = {}
    for p in board.points():
        if board.get(p) != 0 or any(board.get(q) != colour for q in neighbours(p)):
            continue
        blocks = {min(board.chain(q)) for q in neighbours(p)}
        if len(blocks) == 1:
            eye[p] = True
        elif len(blocks) == 2:
            pairs.setdefault(tuple(sorted(blocks)), []).append(p)
    for points in pairs.values():
        if len(points) >= 2:
            eye[points] = True
    label = np.full(board.num_locs, -1, dtype=np.int64)
    count = 0
    for start in board.points():
        if label[start] >= 0 or not (board.get(start) == colour or eye[start]):
            continue
        label[start] = count
        stack = [start]
        while stack:
            p = stack.pop()
            for q in neighbours(p):
                if label[q] < 0 and (board.get(q) == colour or eye[q]):
                    label[q] = count
                    stack.append(q)
        count += 1
    return eye, label


def reference_area_owner(board, p, to_move):
    if board.get(p) != 0:
        return 1.0 if board.get(p) == to_move else 0.0
    on_board = set(board.points())
    seen, stack, borders = {p}, [p], set()
    while stack:
        x = stack.pop()
        for q in (x + 1, x - 1, x + board.stride, x - board.stride):
            if q not in on_board:
                continue
            if board.get(q) == 0 and q not in seen:
                seen.add(q)
                stack.append(q)
            elif board.get(q) != 0:
                borders.add(board.get(q))
    return 1.0 if borders == {to_move} else 0.0 if borders == {3 - to_move} else 0.5


def reference_rich_signal(board, to_move, final):
    """softseg.rich_signal() straight from its docstring (the pure-Python form it had)."""
    on_board = set(board.points())
    offsets = [dx - dy * board.stride for dx, dy in FIELDS]
    targets = np.zeros((board.num_locs, 21))
    mask = np.zeros((board.num_locs, 21), dtype=bool)
    alive = np.zeros((2, board.num_locs), dtype=bool)
    for c, colour in enumerate((to_move, 3 - to_move)):
        eye, label = reference_eyes_and_components(board, colour)
        for p in board.points():
            if eye[p] or final:
                targets[p, softseg.OUTPUT_EYE + c] = float(eye[p])
                mask[p, softseg.OUTPUT_EYE + c] = True
            for f in range(9):
                q = p + offsets[f]
                connected = q in on_board and label[p] >= 0 and label[q] == label[p]
                if q in on_board and (connected or final):
                    targets[p, softseg.OUTPUT_LOCAL + 9 * c + f] = float(connected)
                    mask[p, softseg.OUTPUT_LOCAL + 9 * c + f] = True
            alive[c, p] = label[p] >= 0 and sum(eye[label == label[p]]) >= 2
    for p in board.points():
        if alive[0, p] or alive[1, p] or final:
            targets[p, softseg.OUTPUT_EVAL] = 1.0 if alive[0, p] else 0.0 if alive[1, p] else \
                reference_area_owner(board, p, to_move)
            mask[p, softseg.OUTPUT_EVAL] = True
    return targets, mask


@pytest.mark.parametrize("size, seed", [(5, 0), (7, 1), (9, 2), (9, 3)])
def test_rich_signal_matches_its_definition_through_a_whole_game(size, seed):
    """The C rich signal (eyes, components, connections, live points, the final area owners)
    against the reference above, at every position of random games played to the end (no
    filling of one's own eyes: the late positions are full of eyes, shared ones and captures)."""
    rng = np.random.default_rng(seed)
    board = Board(size)
    colour = BLACK
    passes = 0
    for _ in range(3 * size * size):        # a cap: random play may go on recapturing
        if passes == 2:
            break
        for c in (BLACK, WHITE):
            eye, label = softseg.eyes_and_components(board, c)
            reference_eye, reference_label = reference_eyes_and_components(board, c)
            assert np.array_equal(eye, reference_eye) and np.array_equal(label, reference_label)
            for final in (False, True):
                targets, mask = softseg.rich_signal(board, c, final)
                reference_targets, reference_mask = reference_rich_signal(board, c, final)
                assert np.array_equal(mask, reference_mask)
                assert np.array_equal(targets, reference_targets)
        moves = [p for p in board.legal_moves(colour) if not softseg.own_eyes(board, colour)[p]]
        if moves:
            board.play(moves[rng.integers(len(moves))], colour)
            passes = 0
        else:
            passes += 1
        colour = 3 - colour


def test_swapping_the_frame_twice_is_the_identity():
    rng = np.random.default_rng(0)
    values = rng.random((10, 21))
    swapped = softseg.swap_frame(values)
    assert np.allclose(softseg.swap_frame(swapped), values)
    assert swapped[:, 0].tolist() == values[:, 1].tolist()
    assert np.allclose(swapped[:, 20], 1 - values[:, 20])
    board = Board.from_ascii("""
        . X O .
        X X O O
        . X O .
        X X O O
    """)
    black, black_mask = softseg.rich_signal(board, BLACK, final=True)
    white, white_mask = softseg.rich_signal(board, WHITE, final=True)
    assert np.array_equal(softseg.swap_frame_mask(black_mask), white_mask)
    assert np.allclose(softseg.swap_frame(black)[white_mask], white[white_mask])
    events = softseg.events_of(board)
    assert np.array_equal(softseg.swap_frame_events(softseg.swap_frame_events(events)), events)


# ------------------------------------------------------------------------------ evaluation

@pytest.mark.parametrize("feature_set", ["neurogo", "neurogo_lite", "raw"])
def test_successor_values_are_full_evaluations_of_each_successor(feature_set):
    network = random_network(6, feature_set, scale=0.3)
    board, to_move = middle_game(7, 20, seed=6)
    before = board.hash
    moves = board.legal_moves(to_move)
    pass_value, values = network.successor_values(board, to_move, moves)
    assert board.hash == before
    board.check_consistency()
    for move, value in zip(moves, values):
        board.play(move, to_move)
        _, _, total = network.evaluate_board(board, 3 - to_move)
        board.undo()
        assert value == pytest.approx(49 - 2 * total, abs=1e-9)
    _, _, total = network.evaluate_board(board, 3 - to_move)
    assert pass_value == pytest.approx(49 - 2 * total, abs=1e-9)


def test_successors_redo_only_the_searches_a_move_can_change():
    """With short connections (local units biased down), a move far from most points leaves their
    searches alone: the successor path redoes a few, and its values are still the full ones."""
    network = random_network(12, scale=0.3)
    params = network.get_params()
    start, stop, shape = network.parameter_blocks()["b2"]
    b2 = params[start:stop].reshape(shape)
    b2[:, network.hidden2 + 2:] -= 1.5          # local connections around 0.2: short paths
    network.set_params(params)
    board, to_move = middle_game(13, 30, seed=8)
    moves = board.legal_moves(to_move)[:20]
    before = network.searches_made
    pass_value, values = network.successor_values(board, to_move, moves)
    per_successor = (network.searches_made - before - 2 * 169) / len(moves)
    assert 0 < per_successor < 0.5 * 2 * 169, per_successor
    for move, value in zip(moves, values):
        board.play(move, to_move)
        _, _, total = network.evaluate_board(board, 3 - to_move)
        board.undo()
        assert value == pytest.approx(169 - 2 * total, abs=1e-9)


@pytest.mark.parametrize("size, moves, seed", [(9, 10, 1), (9, 30, 2), (9, 45, 3), (13, 60, 4),
                                               (19, 40, 5), (19, 150, 6)])
def test_repaired_searches_give_the_full_evaluation_of_every_successor(size, moves, seed):
    """forward_successor() repairs the base position's searches (engine/nets/softseg.pyx:
    repair()) instead of redoing them: with the shipped trained net (long reach, strong
    connections) and a random one, in the opening and the middle game, every successor's value,
    and the base position's connectivity afterwards, are those of full evaluations."""
    shipped, _ = weight_files.load_weights(REPO / "weights" / "softseg_9x9.npz")
    board, to_move = middle_game(size, moves, seed)
    legal = board.legal_moves(to_move)
    rng = np.random.default_rng(seed)
    chosen = legal if size < 19 else [legal[k] for k in rng.choice(len(legal), 40, replace=False)]
    for network in (shipped, random_network(seed, scale=0.5)):
        network.evaluate_board(board, 3 - to_move)      # the base, as successor_values sees it
        connectivity = network.connectivity()
        pass_value, values = network.successor_values(board, to_move, chosen)
        assert np.array_equal(network.connectivity(), connectivity)
        for move, value in zip(chosen, values):
            board.play(move, to_move)
            _, _, total = network.evaluate_board(board, 3 - to_move)
            board.undo()
            assert value == pytest.approx(size * size - 2 * total, abs=1e-10)


@pytest.mark.parametrize("size", [5, 9, 13, 19])
def test_the_evaluator_plays_every_board_size(size):
    evaluator = SoftSegEvaluator(random_network(7, scale=0.2))
    state = GameState(size, Rules(komi=7.5))
    state.play(state.board.loc(size // 2, size // 2))
    evaluation = evaluator.evaluate(state)
    assert evaluation.ownership.shape == (state.board.num_locs,)
    assert np.all(np.abs(evaluation.ownership) <= 1)
    margin = 2 * evaluation.outputs[state.board.points(), softseg.OUTPUT_EVAL].sum() - size * size
    assert evaluation.value == pytest.approx(margin + 7.5)      # White to move: komi is White's
    moves, values = evaluator.successor_values(state)
    assert moves[-1] == PASS and len(values) == len(moves) == len(state.legal_moves()) + 1
    assert np.all(np.isfinite(values))


# ------------------------------------------------------------------------------ weight files

def test_weight_file_round_trip_and_refusals(tmp_path):
    network = random_network(8, "raw", hidden1=5, hidden2=1, intervals=6)
    path = tmp_path / "softseg.npz"
    metadata = weight_files.save_weights(path, network, board_size=9, games_trained=12)
    assert metadata["architecture"] == {"name": "softseg", "hidden1": 5, "hidden2": 1,
                                        "intervals": 6, "cutoff": 0.1, "num_inputs": 1,
                                        "num_outputs": 21, "num_params": network.num_params}
    assert metadata["feature_set"] == {"name": "raw", "version": 1}
    loaded, loaded_metadata = weight_files.load_weights(path)
    assert isinstance(loaded, softseg.SoftSegNetwork)
    assert np.array_equal(loaded.get_params(), network.get_params())
    assert loaded.sizes == network.sizes and loaded.feature_set == "raw"
    assert isinstance(load_evaluator(path), SoftSegEvaluator)

    def rewrite(change, name):
        broken = json.loads(json.dumps(metadata))
        change(broken)
        target = tmp_path / name
        encoded = np.frombuffer(json.dumps(broken).encode(), dtype=np.uint8)
        np.savez(target, params=network.get_params(), metadata=encoded)
        return target

    cases = [
        (lambda m: m["architecture"].update(hidden1=0), "hidden1 should be an integer 1..64"),
        (lambda m: m["architecture"].update(intervals="8"), "intervals should be an integer"),
        (lambda m: m["architecture"].update(cutoff=1.5), "cutoff should be a number in \\(0, 1\\)"),
        (lambda m: m["architecture"].update(hidden2=2), "num_params"),
        (lambda m: m["architecture"].update(num_outputs=7), "num_outputs"),
        (lambda m: m["feature_set"].update(name="isn14"), "unknown soft-segmentation input set"),
        (lambda m: m["feature_set"].update(version=99), "version 99 does not match"),
        (lambda m: m["architecture"].update(name="transformer"), "'transformer' is not supported"),
    ]
    for i, (change, message) in enumerate(cases):
        target = rewrite(change, f"broken{i}.npz")
        with pytest.raises(weight_files.WeightFileError, match=message) as error:
            weight_files.load_weights(target)
        assert str(target) in str(error.value)
    with pytest.raises(weight_files.WeightFileError, match="trained on input feature set 'raw'"):
        weight_files.load_weights(path, feature_set="neurogo")


# ------------------------------------------------------------------------------ training

def test_self_play_follows_section_2_1():
    network = random_network(9, scale=0.1)
    config = SelfPlayConfig(size=5, procedure="neurogo")
    record = play_softseg_game(network, config, np.random.default_rng(2))
    board = Board(5)
    observed = record.extra["observed"]
    assert observed.shape == (record.length, board.num_locs, 21)
    passes_before_the_end = 0
    for t, (colour, move) in enumerate(record.moves):
        events = softseg.events_of(board)
        assert np.array_equal(events, observed[t])
        if move == PASS:
            if not record.capped and t < record.length - 1:
                passes_before_the_end += 1
            everything_alive = (events[board.points(), softseg.OUTPUT_EVAL] >= 0).all()
            others = [p for p in board.legal_moves(colour) if not softseg.own_eyes(board, colour)[p]]
            assert everything_alive or not others
        else:
            assert not softseg.own_eyes(board, colour)[move]
        board.play(move, colour)
    assert record.moves[-1][1] == PASS or record.capped
    assert record.inputs.shape == (record.length, board.num_locs, network.input_width)


def tiny_softseg_settings(**changes):
    values = dict(size=5, arch="softseg", procedure="neurogo", shortcut_games=0,
                  feature_set="neurogo", rich_signal=True, learning_rate=3e-3, weight_decay=1.0,
                  softseg_hidden=(3, 2), seed=5)
    return train.TrainSettings(**{**values, **changes})


def test_tiny_run_loss_drops_and_the_gtp_engine_plays_its_weights(tmp_path):
    trainer = train.Trainer.create(tmp_path / "run", tiny_softseg_settings())
    trainer.run(games=12, workers=1, checkpoint_every=6, progress=False)
    trainer.close()
    lines = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    losses = [line["loss"] for line in lines if line["type"] == "game"]
    assert len(losses) == 12
    assert np.mean(losses[-3:]) < 0.8 * np.mean(losses[:3]), losses

    weights = tmp_path / "run" / "checkpoints" / "000000012" / "weights.npz"
    network, metadata = weight_files.load_weights(weights)
    assert metadata["architecture"]["name"] == "softseg" and metadata["games_trained"] == 12
    assert metadata["trainer"]["settings"]["arch"] == "softseg"
    for size in (5, 9):
        with GtpClient([sys.executable, str(REPO / "gtp_server.py"), "--weights", str(weights),
                        "--seed", "1"]) as engine:
            engine.send(f"boardsize {size}")
            engine.send("clear_board")
            engine.send("play b c3")
            move = engine.send("genmove w").lower()
            assert move == "pass" or (move != "c3" and move[0] in "abcdefghj")


def reference_game_replay(network, game, rate):
    """NeuroGo's TD(0) replay of one game position by position through train_position() (the
    trainer's loop before SoftSegNetwork.train_game())."""
    loss, entries = 0.0, 0
    following = game.final_targets
    for t in range(len(game.inputs) - 1, -1, -1):
        black = game.black_to_move[t]
        if game.trained[t]:
            target = following if black else softseg.swap_frame(following)
            mask = game.final_mask if black else softseg.swap_frame_mask(game.final_mask)
            position_loss, outputs = network.train_position(game.inputs[t], target, mask, rate)
            loss += position_loss
            entries += int(mask.sum())
        else:
            outputs = network.forward(game.inputs[t])
        following = outputs if black else softseg.swap_frame(outputs)
        following = np.where(game.observed[t] >= 0, game.observed[t], following)
    return loss, entries


@pytest.mark.parametrize("size, seed", [(5, 1), (7, 2)])
def test_train_game_is_the_replay_position_by_position(size, seed):
    """train_game() (the whole replay in C) takes the steps, in the same order, of the replay
    through train_position(), explored (untrained) positions included."""
    settings = tiny_softseg_settings(size=size)
    network = random_network(seed, scale=0.3)
    record = play_softseg_game(network, settings.selfplay_config("all"), np.random.default_rng(seed))
    game = learning.TrainingGame.from_record(record, settings, 0.0)
    game.trained[::3] = False                  # more untrained positions than Gibbs makes
    reference = random_network(seed, scale=0.3)
    expected_loss, expected_entries = reference_game_replay(reference, game, 3e-3)
    loss, entries = network.train_game(game.inputs, game.black_to_move, game.trained,
                                       game.observed, game.final_targets, game.final_mask, 3e-3)
    assert entries == expected_entries
    assert loss == pytest.approx(expected_loss, rel=1e-12)
    assert np.allclose(network.get_params(), reference.get_params(), rtol=0, atol=1e-14)


def test_softseg_run_resumes_exactly(tmp_path):
    settings = tiny_softseg_settings(feature_set="raw", recent_games=3)
    straight = train.Trainer.create(tmp_path / "straight", settings)
    straight.run(games=5, workers=1, checkpoint_every=0, progress=False)
    straight.close()
    first = train.Trainer.create(tmp_path / "split", settings)
    first.run(games=3, workers=1, checkpoint_every=0, progress=False)
    first.close()
    resumed = train.Trainer.resume(tmp_path / "split")
    assert len(resumed.recent) == 3 and resumed.recent[0].observed is not None
    resumed.run(games=5, workers=1, checkpoint_every=0, progress=False)
    resumed.close()
    assert np.array_equal(straight.network.get_params(), resumed.network.get_params())


def test_softseg_settings_are_refused_when_they_cannot_work():
    for changes, message in (({"procedure": "blair", "lam": 0.9}, "--procedure neurogo"),
                             ({"shortcut_games": 10}, "no shortcut phase"),
                             ({"feature_set": "isn14"}, "takes the input sets"),
                             ({"rich_signal": False}, "rich signal"),
                             ({"softseg_hidden": (0, 2)}, "sizes out of range")):
        with pytest.raises(ValueError, match=message):
            tiny_softseg_settings(**changes)
    with pytest.raises(ValueError, match="feature set must be one of"):
        train.TrainSettings(feature_set="raw")           # raw is softseg's alone


def test_gibbs_moves_sample_the_papers_score(monkeypatch):
    """Section 3.1 samples P ~ exp(s / T) with s the sum of the evaluation layer: half the area
    margin the network returns (up to a constant), so self-play hands the policy margin / 2."""
    from engine.training import selfplay
    network = random_network(10, scale=0.1)
    seen = []
    real_choose = selfplay._choose

    def recording_choose(config, rng, values):
        seen.append(values.copy())
        return real_choose(config, rng, values)

    monkeypatch.setattr(selfplay, "_choose", recording_choose)
    board = Board(5)
    config = SelfPlayConfig(size=5, procedure="neurogo", move_cap_factor=0.05)   # one move
    play_softseg_game(network, config, np.random.default_rng(0))
    pass_value, values = network.successor_values(board, BLACK, board.legal_moves(BLACK))
    assert np.allclose(seen[0][:-1], values / 2)
    assert seen[0][-1] == -np.inf                    # no pass before every point is alive


def test_the_engine_plays_and_searches_with_the_softseg_net():
    # the strongest of the seeds' value nets (softseg: 43.0% against GNU Go level 1, the ISN
    # 3.8%), the 1-ply default until the judging nets (tests/unit/nets/test_judge_evaluator.py);
    # named with --weights it plays 1-ply and is the RAVE tree's prior, asked at nodes with 64
    # visits (an ISN, ten times cheaper a call, at 8)
    import tomllib
    from engine.gtp.main import build_engine, build_parser
    from engine.nets.evaluator import NetworkEvaluator
    from engine.play.search_player import SOFTSEG_PRIOR_THRESHOLD
    from engine.search.tree import DEFAULT_NET_PRIOR_THRESHOLD
    parser = build_parser()
    softseg = ["--weights", str(REPO / "weights" / "softseg_9x9.npz")]
    engine = build_engine(parser.parse_args(["--seed", "1", *softseg]))
    assert isinstance(engine.evaluator.inner, SoftSegEvaluator)     # averaged over symmetries
    assert engine.evaluator.metadata["params_sha256"] == \
        load_evaluator(REPO / "weights" / "softseg_9x9.npz").metadata["params_sha256"]
    searcher = build_engine(parser.parse_args(softseg))._searcher()   # kosumi-search's tree
    assert isinstance(searcher.evaluator, SoftSegEvaluator)         # the net alone
    assert searcher.tree_options["net_prior_threshold"] == SOFTSEG_PRIOR_THRESHOLD
    for options in (["--search", "mcts"], ["--search", "mcts", "--search-prior", "none"]):
        searching = build_engine(parser.parse_args(["--seed", "1", *softseg, *options]))
        assert isinstance(searching.evaluator, SoftSegEvaluator)
        assert searching.player.tree_options["net_prior_threshold"] == SOFTSEG_PRIOR_THRESHOLD
    isn = ["--search", "mcts", "--weights", str(REPO / "weights" / "isn_9x9.npz")]
    searching = build_engine(parser.parse_args(isn))
    assert isinstance(searching.evaluator, NetworkEvaluator)
    assert searching.player.tree_options["net_prior_threshold"] == DEFAULT_NET_PRIOR_THRESHOLD
    chosen = build_engine(parser.parse_args([*isn, "--prior-threshold", "16"]))
    assert chosen.player.tree_options["net_prior_threshold"] == 16
    chosen = REPO / "weights" / "isn14_9x9.npz"
    for options in ([], ["--search", "mcts"]):
        engine = build_engine(parser.parse_args(["--weights", str(chosen), *options]))
        assert engine.evaluator.metadata["feature_set"]["name"] == "isn14"
        assert engine._searcher().evaluator.metadata["feature_set"]["name"] == "isn14"
    # kosumi-search beside the 1-ply player searches with the named net, at its threshold
    searcher = build_engine(parser.parse_args(isn[2:]))._searcher()
    assert searcher.tree_options["net_prior_threshold"] == DEFAULT_NET_PRIOR_THRESHOLD
    # a plain `pip install .` must carry both defaults along (weights.shipped_weights_path)
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    installed = pyproject["tool"]["setuptools"]["data-files"]["share/kosumi/weights"]
    for path in (weight_files.DEFAULT_WEIGHTS, weight_files.ISN_WEIGHTS,
                 *(path for _, path in weight_files.DEFAULT_JUDGES)):
        assert path.exists() and f"weights/{path.name}" in installed


def test_the_shipped_softseg_net_loads_and_plays_9x9_and_19x19():
    path = REPO / "weights" / "softseg_9x9.npz"
    evaluator = load_evaluator(path)
    assert isinstance(evaluator, SoftSegEvaluator)
    metadata = evaluator.metadata
    assert metadata["architecture"]["name"] == "softseg" and metadata["board_size"] == 9
    assert metadata["games_trained"] > 0
    assert metadata["trainer"]["settings"]["procedure"] == "neurogo"
    for size in (9, 19):
        state = GameState(size)
        moves, values = evaluator.successor_values(state)
        assert len(moves) == size * size + 1 and np.all(np.isfinite(values))


def test_the_1ply_player_averages_the_net_over_the_boards_symmetries():
    from engine.gtp.main import build_engine, build_parser
    from engine.nets.evaluator import NetworkEvaluator, SymmetricEvaluator
    from engine.nets.weights import ISN_WEIGHTS

    softseg = ["--weights", str(REPO / "weights" / "softseg_9x9.npz")]

    def evaluator(*options):
        return build_engine(build_parser().parse_args(["--seed", "1", *options])).evaluator

    # By default all eight for the softseg net, which tells directions apart; none for the ISN.
    default = evaluator(*softseg)
    assert isinstance(default, SymmetricEvaluator) and default.count == 8
    assert isinstance(default.inner, SoftSegEvaluator)
    assert isinstance(evaluator(*softseg, "--symmetries", "1"), SoftSegEvaluator)
    assert evaluator(*softseg, "--symmetries", "4").count == 4
    assert isinstance(evaluator("--weights", str(ISN_WEIGHTS)), NetworkEvaluator)
    with GtpClient([sys.executable, str(REPO / "gtp_server.py"), *softseg, "--symmetries", "8",
                    "--seed", "2"]) as client:
        client.send("boardsize 9")
        client.send("clear_board")
        client.send("play b e5")
        move = client.send("genmove w")
        assert move.lower() != "e5" and move.lower() != "resign"
    refused = subprocess.run([sys.executable, str(REPO / "gtp_server.py"), "--symmetries", "8",
                              "--search", "mcts"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert "--symmetries is for the 1-ply player" in refused.stderr
