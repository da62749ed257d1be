"""The move-prediction network: position records and feature planes on ASCII diagrams, the
forward pass against a finite-difference gradient, symmetric outputs, weight files refused by
name, and the predictor at play."""
import json
import threading

import numpy as np
import pytest

from engine.nets.policy import PolicyNet, load_policy, save_policy, softmax
from engine.nets.policy_features import FEATURE_SETS, features, move_permutation, transform
from engine.nets.policy_inputs import (AGE, CAPTURES, LADDER as LADDER_PLANE, LADDER_ATTACKER_FIRST,
                                       LADDER_IF_PLAYED, LIBERTIES, MOVE_LIBERTIES, STONE,
                                       PositionEncoder, new_record)
from engine.nets.predictor import MovePredictor, symmetric_log_probabilities
from engine.nets.weights import WeightFileError
from engine.nets.winograd import CHUNK, POINTS, TILE, WinogradForward, transform as winograd_transform
from engine.nets.winograd_products import HAS_AVX2, point_products
from engine.nets.winograd_tiles import adjoint_inputs, adjoint_outputs, transform_inputs, transform_outputs
from engine.rules.board import BLACK, WHITE
from engine.rules.game import SYMMETRIES, GameState, Rules, symmetric_loc
from tests.diagrams import LADDER, load_board, vertex

ATARI = """
    . O . . .
    . X O . .
    . O . . .
    . . . . .
    . . . . .
"""
SMALL_NETS = [({"kind": "sn2008", "hidden": 3, "kernel": 3, "boards": 5, "position_bias": 5}, "sn2008"),
              ({"kind": "sn2008", "hidden": 3, "kernel": 3, "boards": 5}, "sn2008"),
              ({"kind": "conv", "channels": 4, "layers": 2, "first_kernel": 3}, "rich"),
              ({"kind": "res", "channels": 4, "layers": 5, "first_kernel": 3}, "rich")]


def record_of(diagram, to_move, recent=()):
    board = load_board(diagram)
    record = new_record(board.size)
    PositionEncoder().encode(board, to_move, list(recent), record)
    return board, record.reshape(-1, board.size, board.size)


def point(text, size):
    board_row = size - int(text[1:])
    return board_row, "ABCDEFGHJKLMNOPQRST".index(text[0])


def test_record_planes_on_a_diagram():
    _, record = record_of(ATARI, WHITE, recent=[vertex("B3", 5), vertex("C4", 5)])
    at = lambda text: record[(slice(None),) + point(text, 5)]
    assert at("B4")[STONE] == BLACK and at("B4")[LIBERTIES] == 1      # its one liberty: A4
    assert at("C4")[STONE] == WHITE and at("C4")[LIBERTIES] == 3
    assert at("B5")[LIBERTIES] == 2
    assert at("B3")[AGE] == 1 and at("C4")[AGE] == 2 and at("B4")[AGE] == 0
    assert at("A4")[CAPTURES] == 1 and at("A4")[MOVE_LIBERTIES] == 3  # White takes B4
    assert at("D2")[MOVE_LIBERTIES] == 4 and at("D2")[CAPTURES] == 0
    assert at("B4")[MOVE_LIBERTIES] == 0                              # occupied: not a move
    _, black = record_of(ATARI, BLACK)
    at = lambda text: black[(slice(None),) + point(text, 5)]
    assert at("A4")[CAPTURES] == 0 and at("A4")[MOVE_LIBERTIES] == 2  # Black extends


def test_ladders_on_diagrams():
    # conftest's ladder: White C3 (in atari) is captured if Black moves first, and a white
    # stone at C4 (its escape) is captured in the ladder
    _, black = record_of(LADDER, BLACK)
    assert black[(LADDER_PLANE,) + point("C3", 9)] & LADDER_ATTACKER_FIRST
    _, white = record_of(LADDER, WHITE)
    assert white[(LADDER_PLANE,) + point("C4", 9)] & LADDER_IF_PLAYED
    assert not white[(LADDER_PLANE,) + point("G7", 9)] & LADDER_IF_PLAYED


def test_feature_planes_are_in_the_side_to_moves_frame():
    _, record = record_of(ATARI, BLACK)
    records = record.reshape(1, 1, *record.shape[:1], -1)
    rich = features("rich", records, np.array([BLACK]))[0]
    row, col = point("B4", 5)
    assert rich[0, row, col] == 1          # own stone with one liberty
    flipped = features("rich", records, np.array([WHITE]))[0]
    assert flipped[4, row, col] == 1       # the same stone is the opponent's with one liberty
    assert rich.shape == (FEATURE_SETS["rich"].planes, 5, 5)
    sn = features("sn2008", np.repeat(records, 5, axis=1), np.array([BLACK]))[0]
    assert sn.shape == (30, 5, 5) and sn[0, row, col] == 1 and sn[6, row, col] == 1


def test_the_position_bias_map_keeps_corners_and_edges():
    from engine.nets.policy import edge_map
    assert list(edge_map(19, 19)) == list(range(19))
    assert list(edge_map(9, 19)) == [0, 1, 2, 3, 4, 15, 16, 17, 18]
    assert list(edge_map(25, 19))[:10] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert list(edge_map(25, 19))[10:15] == [9, 9, 9, 9, 9] and edge_map(25, 19)[-1] == 18


def test_symmetry_of_planes_matches_the_board_symmetry():
    size = 5
    for s in range(SYMMETRIES):
        table = move_permutation(size, s)
        plane = np.zeros((size, size))
        plane[1, 3] = 1
        moved = transform(plane, s)
        assert moved.ravel()[table[1 * size + 3]] == 1


@pytest.mark.parametrize("architecture,feature_set", SMALL_NETS)
def test_gradient_matches_finite_differences(architecture, feature_set):
    rng = np.random.default_rng(7)
    net = PolicyNet(architecture, feature_set, seed=3)
    net.params = {k: (v + rng.standard_normal(v.shape) * 0.3).astype(np.float64) for k, v in net.params.items()}
    x = rng.random((2, net.feature_set.planes, 5, 5))
    target = np.array([3, 25])

    def loss():
        return -np.log(softmax(net.forward(x))[np.arange(2), target]).sum()

    logits, cache = net.forward(x, keep=True)
    d = softmax(logits)
    d[np.arange(2), target] -= 1
    grads = net.backward(cache, d)
    for name, values in net.params.items():
        for index in list(np.ndindex(values.shape))[:6]:
            old = values[index]
            values[index] = old + 1e-6
            plus = loss()
            values[index] = old - 1e-6
            minus = loss()
            values[index] = old
            assert abs((plus - minus) / 2e-6 - grads[name][index]) < 1e-4, (name, index)


@pytest.mark.parametrize("architecture,feature_set", SMALL_NETS)
def test_inference_one_position_at_a_time_is_the_batched_pass(architecture, feature_set):
    net = trained_like(architecture, feature_set)
    x = np.random.default_rng(2).random((5, net.feature_set.planes, 7, 7))
    batched, _ = net.forward(x, keep=True)
    assert np.allclose(net.forward(x), batched, atol=1e-5)


@pytest.mark.parametrize("size", [19, 13, 9, 5])
@pytest.mark.parametrize("first_kernel", [3, 5, 7])      # 7: no transform, im2col as before
@pytest.mark.parametrize("kind,layers", [("conv", 4), ("res", 7)])
def test_winograd_convolutions_give_the_im2col_logits(size, first_kernel, kind, layers):
    net = trained_like({"kind": kind, "channels": 6, "layers": layers, "first_kernel": first_kernel}, "rich")
    x = np.random.default_rng(size).random((CHUNK + 3, net.feature_set.planes, size, size))
    fast, plain = WinogradForward(net)(x), net.forward(x)
    assert fast.shape == plain.shape == (CHUNK + 3, size * size + 1)
    assert np.allclose(fast, plain, rtol=1e-4, atol=1e-4 * np.abs(plain).max())


@pytest.mark.parametrize("r", sorted(POINTS))
@pytest.mark.parametrize("avx2", [True, False])
@pytest.mark.parametrize("other_matrices", [False, True])
def test_winograd_block_transforms_are_their_matrix_products(r, avx2, other_matrices):
    # 11 maps: 8 in vector registers, 3 after; a 9x9 board: blocks that cross the edge and not.
    # F(4x4, 3x3)'s own B^T and A^T have combines that know them; other matrices of their
    # shapes take the general ones.
    t, size, batch, maps = winograd_transform(r), 9, 2, 11
    n, blocks, rng = t.window, -(-size // TILE), np.random.default_rng(r)
    bt, at = t.bt, t.at
    if other_matrices:
        bt = (bt + 0.1 * rng.standard_normal(bt.shape)).astype(np.float32)
        at = (at + 0.1 * rng.standard_normal(at.shape)).astype(np.float32)
    x = rng.standard_normal((batch, size, size, maps)).astype(np.float32)
    windows = np.empty((n * n, batch * blocks * blocks, maps), np.float32)
    transform_inputs(x, bt, r // 2, windows, avx2)
    padded = np.zeros((batch, TILE * blocks + n - TILE, TILE * blocks + n - TILE, maps))
    padded[:, r // 2:r // 2 + size, r // 2:r // 2 + size] = x
    products = rng.standard_normal(windows.shape).astype(np.float32)
    bias = rng.standard_normal(maps).astype(np.float32)
    out, shortcut, added = np.empty_like(x), rng.standard_normal(x.shape).astype(np.float32), np.empty_like(x)
    transform_outputs(products, at, bias, out, avx2)
    transform_outputs(products, at, bias, added, avx2, shortcut=shortcut)
    with pytest.raises(ValueError, match="shortcut"):
        transform_outputs(products, at, bias, added, avx2, shortcut=shortcut[1:])
    for b in range(batch):
        for by in range(blocks):
            for bx in range(blocks):
                block = (b * blocks + by) * blocks + bx
                d = padded[b, TILE * by:TILE * by + n, TILE * bx:TILE * bx + n]
                expected = np.einsum("ik,kjc,lj->ilc", bt, d, bt).reshape(n * n, maps)
                assert np.allclose(windows[:, block], expected, atol=1e-4 * np.abs(expected).max())
                y = np.einsum("ik,kjc,lj->ilc", at, products[:, block].reshape(n, n, maps), at) + bias
                rows, cols = min(TILE, size - TILE * by), min(TILE, size - TILE * bx)
                here = (b, slice(TILE * by, TILE * by + rows), slice(TILE * bx, TILE * bx + cols))
                assert np.allclose(out[here], np.maximum(y[:rows, :cols], 0), atol=1e-4 * np.abs(y).max())
                assert np.allclose(added[here], np.maximum(y[:rows, :cols] + shortcut[here], 0),
                                   atol=1e-4 * np.abs(y).max())


@pytest.mark.parametrize("r", sorted(POINTS))
@pytest.mark.parametrize("avx2", [True, False])
@pytest.mark.parametrize("size", [9, 8, 3])
def test_winograd_adjoints_are_the_transposes_of_the_block_transforms(r, avx2, size):
    # <T x, g> = <x, T' g> for random x and g: the training step's gradients (11 maps: the
    # vector registers and the tail; 9 and 3: blocks that cross the edge, 8: none do)
    t, batch, maps = winograd_transform(r), 3, 11
    n, blocks, rng = t.window, batch * (-(-size // TILE)) ** 2, np.random.default_rng(size)
    x = rng.standard_normal((batch, size, size, maps)).astype(np.float32)
    window_grads = rng.standard_normal((n * n, blocks, maps)).astype(np.float32)
    windows, x_grads = np.empty_like(window_grads), np.full_like(x, np.nan)
    transform_inputs(x, t.bt, r // 2, windows, avx2)
    adjoint_inputs(window_grads, t.bt, r // 2, x_grads, avx2)
    assert np.isclose(np.vdot(windows, window_grads), np.vdot(x, x_grads), rtol=1e-4)
    # the outputs' linear part: a bias large enough that the ReLU never cuts
    products, bias = rng.standard_normal(window_grads.shape).astype(np.float32), np.float32(1000)
    out, out_grads = np.empty_like(x), rng.standard_normal(x.shape).astype(np.float32)
    transform_outputs(products, t.at, np.full(maps, bias), out, avx2)
    product_grads = np.full_like(products, np.nan)
    adjoint_outputs(out_grads, t.at, product_grads, avx2)
    assert np.isclose(np.vdot(out - bias, out_grads), np.vdot(products, product_grads), rtol=1e-4)


@pytest.mark.parametrize("r", sorted(POINTS))
def test_winograd_block_transforms_take_a_part_of_a_batch(r):
    # the trainer's threads each take some positions: their blocks are a slice of the batch's
    t, size, batch, maps = winograd_transform(r), 9, 4, 11
    n, per_position, rng = t.window, (-(-size // TILE)) ** 2, np.random.default_rng(r)
    x = rng.standard_normal((batch, size, size, maps)).astype(np.float32)
    whole, parts = (np.empty((n * n, batch * per_position, maps), np.float32) for _ in range(2))
    transform_inputs(x, t.bt, r // 2, whole)
    for start, stop in ((0, 1), (1, 4)):
        transform_inputs(x[start:stop], t.bt, r // 2, parts[:, start * per_position:stop * per_position])
    assert np.array_equal(whole, parts)
    out_whole, out_parts = np.empty_like(x), np.empty_like(x)
    adjoint_inputs(whole, t.bt, r // 2, out_whole)
    for start, stop in ((0, 3), (3, 4)):
        adjoint_inputs(whole[:, start * per_position:stop * per_position], t.bt, r // 2, out_parts[start:stop])
    assert np.array_equal(out_whole, out_parts)


# rows: whole panels of five and every remainder; columns: whole panels of sixteen and not
@pytest.mark.parametrize("rows, depth, cols", [(25, 96, 96), (9, 28, 48), (13, 3, 17), (4, 1, 40),
                                               (2, 64, 15), (1, 5, 32), (51, 7, 33)])
def test_winograd_point_products_are_numpys(rows, depth, cols):
    rng = np.random.default_rng(rows * cols)
    windows = rng.standard_normal((6, rows, depth)).astype(np.float32)
    kernels = rng.standard_normal((6, depth, cols)).astype(np.float32)
    out = np.full((6, rows, cols), np.nan, np.float32)
    point_products(windows, kernels, out)
    assert np.allclose(out, np.matmul(windows, kernels), rtol=1e-5, atol=1e-5)


def test_winograd_point_products_refuse_shapes_that_do_not_fit():
    windows, kernels = np.zeros((4, 5, 8), np.float32), np.zeros((4, 8, 16), np.float32)
    with pytest.raises(ValueError, match="do not fit"):
        point_products(windows, kernels, np.zeros((4, 5, 15), np.float32))
    with pytest.raises(ValueError, match="do not fit"):
        point_products(windows, kernels[:3], np.zeros((4, 5, 16), np.float32))


def test_winograd_point_products_are_in_c_where_the_processor_has_avx2():
    # else the tests above would only have compared numpy with itself
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            flags = next(line for line in cpuinfo if line.startswith("flags")).split()
    except (OSError, StopIteration):
        pytest.skip("no /proc/cpuinfo flags to compare with")
    assert HAS_AVX2 == ("avx2" in flags and "fma" in flags)


def test_search_threads_sharing_a_winograd_pass_keep_their_own_arrays():
    # the pass keeps its layers' arrays from call to call; the search's threads share the pass
    # (MovePredictor.twin) and must not write into each other's
    net = trained_like({"kind": "conv", "channels": 8, "layers": 3, "first_kernel": 5}, "rich")
    forward = WinogradForward(net)
    inputs = [np.random.default_rng(seed).random((1, net.feature_set.planes, 9, 9)) for seed in range(4)]
    expected = [net.forward(x) for x in inputs]
    failures = []

    def work(index):
        for _ in range(50):
            if not np.allclose(forward(inputs[index]), expected[index], rtol=1e-4,
                               atol=1e-4 * np.abs(expected[index]).max()):
                failures.append(index)
                return

    threads = [threading.Thread(target=work, args=(index,)) for index in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_the_predictor_plays_the_winograd_pass_of_conv_and_res_nets_only():
    conv, paper = trained_like(*SMALL_NETS[2]), trained_like(*SMALL_NETS[0])
    predictor = MovePredictor(conv)
    assert isinstance(predictor.forward, WinogradForward)
    assert predictor.twin().forward is predictor.forward      # the twins share the transformed kernels
    assert isinstance(MovePredictor(trained_like(*SMALL_NETS[3])).forward, WinogradForward)
    assert MovePredictor(paper).forward == paper.forward
    with pytest.raises(ValueError, match="conv and res nets"):
        WinogradForward(paper)


def test_a_new_res_net_passes_its_first_layers_maps_through_every_pair():
    res = PolicyNet({"kind": "res", "channels": 6, "layers": 7, "first_kernel": 5}, "rich", seed=4)
    assert all(not res.params[f"conv{layer}.w"].any() for layer in (2, 4, 6))
    assert all(res.params[f"conv{layer}.w"].any() for layer in (0, 1, 3, 5))
    rng = np.random.default_rng(1)
    res.params = {name: value if name.startswith("conv") else rng.standard_normal(value.shape).astype(np.float32)
                  for name, value in res.params.items()}
    plain = PolicyNet({"kind": "conv", "channels": 6, "layers": 1, "first_kernel": 5}, "rich",
                      params={name: value for name, value in res.params.items()
                              if not name.startswith("conv") or name.startswith("conv0")})
    x = rng.random((2, res.feature_set.planes, 9, 9))
    np.testing.assert_allclose(res.forward(x), plain.forward(x), rtol=1e-6)
    np.testing.assert_allclose(WinogradForward(res)(x), plain.forward(x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("layers", [2, 4, 1])
def test_a_res_net_has_the_first_layer_and_whole_pairs(layers):
    with pytest.raises(ValueError, match="odd number of layers"):
        PolicyNet({"kind": "res", "channels": 4, "layers": layers, "first_kernel": 3}, "rich")


def trained_like(architecture, feature_set, seed=5):
    """A net with random weights of some size, so that its outputs differ from point to point."""
    net = PolicyNet(architecture, feature_set, seed=seed)
    rng = np.random.default_rng(seed)
    net.params = {k: (v + rng.standard_normal(v.shape) * 0.5).astype(np.float32) for k, v in net.params.items()}
    return net


def test_weight_file_round_trip_and_refusals(tmp_path):
    net = trained_like(*SMALL_NETS[2])
    path = tmp_path / "policy.npz"
    save_policy(path, net, 19, games_trained=3, positions_trained=600)
    loaded, metadata = load_policy(path)
    assert metadata["architecture"]["kind"] == "conv" and metadata["feature_set"]["name"] == "rich"
    x = np.random.default_rng(0).random((1, net.feature_set.planes, 7, 7)).astype(np.float32)
    np.testing.assert_allclose(loaded.forward(x), net.forward(x), rtol=1e-6)
    # truncated
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(path.read_bytes()[:200])
    with pytest.raises(WeightFileError, match="truncated.npz"):
        load_policy(truncated)
    # altered parameters
    arrays = dict(np.load(path))
    arrays["params"] = arrays["params"] + 1
    altered = tmp_path / "altered.npz"
    np.savez(altered, **arrays)
    with pytest.raises(WeightFileError, match="altered.npz.*checksum"):
        load_policy(altered)
    # a feature set of another version
    metadata = json.loads(arrays["metadata"].tobytes())
    metadata["feature_set"]["version"] = 99
    arrays = dict(np.load(path))
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode(), np.uint8)
    versioned = tmp_path / "versioned.npz"
    np.savez(versioned, **arrays)
    with pytest.raises(WeightFileError, match="versioned.npz.*version 99"):
        load_policy(versioned)
    # a value net is not a policy net
    from engine.nets.weights import DEFAULT_WEIGHTS
    with pytest.raises(WeightFileError, match="not a policy network"):
        load_policy(DEFAULT_WEIGHTS)


@pytest.mark.parametrize("architecture,feature_set", SMALL_NETS)
def test_symmetry_averaging_gives_symmetric_probabilities(architecture, feature_set):
    predictor = MovePredictor(trained_like(architecture, feature_set), symmetries=8)
    size = 7
    game = GameState(size, Rules())
    for text in ("C3", "E5", "D3"):
        game.play(vertex(text, size))
    base = predictor.probabilities(game)
    for s in range(SYMMETRIES):
        image = game.transformed(s)
        moved = predictor.probabilities(image)
        for loc in game.board.points():
            # equal up to float32 rounding: Winograd's blocks start at the top-left corner,
            # so a transformed board is summed in another order
            assert moved[symmetric_loc(loc, size, s)] == pytest.approx(base[loc], abs=1e-7)
        assert moved[-1] == pytest.approx(base[-1])


def test_a_batch_averaged_over_the_symmetries_is_the_predictors_answer():
    # kosumi-train policy eval --symmetries scores a batch as the player does one position
    net = trained_like(*SMALL_NETS[1])
    size = 7
    game = GameState(size, Rules())
    for text in ("C3", "E5", "D3", "C5"):
        game.play(vertex(text, size))
    predictor = MovePredictor(net, symmetries=8)
    planes = features(net.feature_set.name, predictor.records(game, game.to_move)[None],
                      np.array([game.to_move]))
    batch = np.concatenate([planes, transform(planes, 3)])
    scores = symmetric_log_probabilities(net.forward, batch, 8)
    board_probabilities = predictor.probabilities(game)
    by_index = softmax(scores[0])
    points = [loc for loc in game.board.points() if board_probabilities[loc] > 0]
    indices = [row * size + col for row, col in map(game.board.row_col, points)] + [size * size]
    legal = by_index[indices] / by_index[indices].sum()    # the predictor renormalises over these
    assert legal == pytest.approx(board_probabilities[points + [-1]], rel=1e-6)
    # the averaged answer does not depend on the frame the position came in
    image = softmax(scores[1])[move_permutation(size, 3)]
    assert image == pytest.approx(by_index, rel=1e-6)
    # one symmetry: the net's own logits
    assert symmetric_log_probabilities(net.forward, planes, 1) == pytest.approx(net.forward(planes))


def test_predictor_gives_zero_to_illegal_points_and_sums_to_one():
    predictor = MovePredictor(trained_like(*SMALL_NETS[1]))
    game = GameState(5, Rules())
    for text in ("B4", "C4", "A3", "B3"):
        game.play(vertex(text, 5))
    p = predictor.probabilities(game)
    assert p.sum() == pytest.approx(1.0)
    for text in ("B4", "C4", "A3", "B3"):
        assert p[vertex(text, 5)] == 0
    assert (p[game.board.points()] > 0).sum() == 25 - 4


@pytest.mark.parametrize("name", ["policy_19x19.npz", "policy_prior_19x19.npz", "policy_sn2008_19x19.npz"])
def test_the_shipped_nets_open_on_the_third_and_fourth_lines(name):
    from engine.nets.weights import shipped_weights_path
    predictor = MovePredictor.load(shipped_weights_path(name))
    game = GameState(19, Rules(komi=7))
    probabilities = predictor.probabilities(game)
    top = np.argsort(-probabilities[:-1])[:4]
    for loc in top:
        row, col = game.board.row_col(int(loc))
        assert min(row, col, 18 - row, 18 - col) in (2, 3), (name, row, col)
