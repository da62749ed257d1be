"""The Internal Symmetry Network: parameter count, tying, equivariance, gradients, board inputs,
incremental successor evaluation, Table IV targets."""
import numpy as np
import pytest

from engine.rules.board import BLACK, EMPTY, WHITE, Board
from engine.nets import network as isn
from engine.nets.network import Network
from tests.diagrams import board_from_grid, board_grid, symmetries

SIZES = range(5, 20)


def random_params(net, seed, scale=0.5):
    return np.random.default_rng(seed).normal(0.0, scale, net.num_params)


def make_net(seed=0, scale=0.5, **options):
    net = Network(**options)
    net.set_params(random_params(net, seed, scale))
    return net


def random_inputs(size, rng):
    stride = size + 2
    grid = np.full((stride, stride), isn.INPUT_OFF_BOARD_POINT, dtype=np.intc)
    grid[1:-1, 1:-1] = rng.integers(0, isn.INPUT_EMPTY_POINT + 1, (size, size))
    return grid


def random_board(size, moves, rng, allow_suicide=False):
    board = Board(size)
    colour = BLACK
    for _ in range(moves):
        legal = board.legal_moves(colour, allow_suicide)
        if legal:
            board.play(legal[rng.integers(len(legal))], colour, allow_suicide)
        colour = 3 - colour
    return board, colour


# ------------------------------------------------------------------------------- the 714

def test_default_network_has_the_papers_714_free_parameters():
    net = Network()
    assert net.num_hidden == 12
    assert net.num_params == 714
    assert not net.explicit_biases
    features = list(net.feature_types)
    per_type = {t: features.count(t) for t in "TSDCF"}
    assert per_type == {"T": 12, "S": 2, "D": 2, "C": 0, "F": 4}
    # The Appendix blocks: V_OI, V_OT, V_TI, V_OS, V_SI, V_OD, V_DI, V_OF, V_FI.
    outputs, inputs = 7, 14
    assert outputs * inputs * 3 == 294
    assert [outputs * per_type[t] for t in "TSDF"] == [84, 14, 14, 28]
    assert [inputs * per_type[t] for t in "TSDF"] == [168, 28, 28, 56]
    assert 294 + 84 + 168 + 14 + 28 + 14 + 28 + 28 + 56 == net.num_params


@pytest.mark.slow
def test_every_free_parameter_changes_the_kernels_independently():
    net = Network()
    columns = []
    for i in range(net.num_params):
        unit = np.zeros(net.num_params)
        unit[i] = 1.0
        net.set_params(unit)
        kernels = net.dense_kernels()
        columns.append(np.concatenate([kernels[k].ravel() for k in sorted(kernels)]))
    assert np.linalg.matrix_rank(np.array(columns)) == 714


def test_explicit_biases_follow_the_feature_set():
    assert isn.FEATURE_SETS["isn14"].one_hot
    assert not Network("isn14").explicit_biases
    with_biases = Network("isn14", explicit_biases=True)
    assert with_biases.num_params == 714 + 7 + 4       # output biases and T-unit biases only
    with pytest.raises(ValueError, match="unknown feature set"):
        Network("no-such-set")


def test_biases_are_redundant_with_one_hot_inputs():
    """The claim behind the 714: a bias equals a constant added to the centre weights of all 14
    inputs, because exactly one input per cell is active."""
    rng = np.random.default_rng(5)
    biased = make_net(seed=5, explicit_biases=True)
    plain = Network()
    params = biased.get_params()
    blocks = biased.parameter_blocks()
    folded = params[:plain.num_params].copy()
    start, stop, shape = blocks["shortcut"]
    shortcut = folded[start:stop].reshape(shape)
    output_bias = params[slice(*blocks["output_bias"][:2])]
    shortcut[:, :, 0] += output_bias[:, None]          # orbit 0 is the centre offset
    start, stop, shape = blocks["input"]
    input_weights = folded[start:stop].reshape(shape)
    trivial_bias = params[slice(*blocks["trivial_bias"][:2])]
    for unit in range(plain.num_trivial):              # the centre feature of T unit t is 3 t
        input_weights[3 * unit] += trivial_bias[unit]
    plain.set_params(folded)
    inputs = random_inputs(9, rng).ravel()
    assert np.allclose(biased.forward(inputs), plain.forward(inputs), rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------- the tying

def equivariant_dimension(hidden_type):
    """Dimension of the equivariant kernels, by solving V[g nu] = rho(g) V[nu] for the generators
    directly (independently of the group averaging in equivariant_basis)."""
    index = {v: k for k, v in enumerate(isn.OFFSET_VECTORS)}
    elements = isn.symmetry_group(hidden_type)
    dim = elements[0][1].shape[0]
    rows = []
    for geometric, internal in (elements[2], elements[1]):   # r (k=1, m=0) and s (k=0, m=1)
        for k, vector in enumerate(isn.OFFSET_VECTORS):
            image = index[tuple(int(x) for x in geometric @ np.array(vector))]
            for a in range(dim):
                row = np.zeros((9, dim))
                row[image, a] += 1.0
                row[k] -= internal[a]
                rows.append(row.ravel())
    return 9 * dim - np.linalg.matrix_rank(np.array(rows))


@pytest.mark.parametrize("hidden_type, expected", [("T", 3), ("S", 1), ("D", 1), ("C", 0), ("F", 2)])
def test_group_averaging_finds_every_equivariant_kernel(hidden_type, expected):
    assert len(isn.equivariant_basis(hidden_type)) == expected
    assert equivariant_dimension(hidden_type) == expected


def test_tying_is_the_papers_appendix():
    net = make_net(seed=1)
    kernels = net.dense_kernels()
    names = {name: k for k, name in enumerate(isn.OFFSET_NAMES)}

    def at(kernel, name):
        return kernel[names[name]]

    input_hidden = kernels["input_hidden"].transpose(0, 2, 1)   # [offset][hidden][input]
    hidden_output = kernels["hidden_output"]                    # [offset][hidden][output]
    input_output = kernels["input_output"]
    T, S, D, F = range(0, 4), range(4, 6), range(6, 8), range(8, 12)
    edges, diagonals = ("E", "N", "W", "S"), ("NE", "NW", "SW", "SE")
    for kernel in (input_output, input_hidden[:, T], hidden_output[:, T]):
        for group in (edges, diagonals):
            for name in group[1:]:
                assert np.array_equal(at(kernel, name), at(kernel, group[0]))
    for kernel in (input_hidden, hidden_output):
        for h in S:      # V^E = -V^N = V^W = -V^S, zero at O and the diagonals
            v = kernel[:, h]
            assert np.array_equal(at(v, "E"), -at(v, "N"))
            assert np.array_equal(at(v, "E"), at(v, "W"))
            assert np.array_equal(at(v, "E"), -at(v, "S"))
            for name in ("O",) + diagonals:
                assert not at(v, name).any()
            assert at(v, "E").any()
        for h in D:      # V^NE = -V^NW = V^SW = -V^SE, zero at O and the edges
            v = kernel[:, h]
            assert np.array_equal(at(v, "NE"), -at(v, "NW"))
            assert np.array_equal(at(v, "NE"), at(v, "SW"))
            assert np.array_equal(at(v, "NE"), -at(v, "SE"))
            for name in ("O",) + edges:
                assert not at(v, name).any()
        for pair in (0, 1):
            f1, f2 = kernel[:, F[2 * pair]], kernel[:, F[2 * pair + 1]]
            assert not at(f1, "O").any() and not at(f2, "O").any()
            e = at(f1, "E")
            assert e.any()
            for value in (at(f2, "N"), -at(f1, "W"), -at(f2, "S")):
                assert np.array_equal(value, e)
            for value in (at(f2, "E"), at(f1, "N"), at(f2, "W"), at(f1, "S")):
                assert not value.any()
            d = at(f1, "NE")
            assert d.any()
            for value in (-at(f1, "NW"), -at(f1, "SW"), at(f1, "SE"), at(f2, "NE"), at(f2, "NW"),
                          -at(f2, "SW"), -at(f2, "SE")):
                assert np.array_equal(value, d)


# ------------------------------------------------------------------------------- equivariance

@pytest.mark.parametrize("explicit_biases", [False, True])
def test_outputs_permute_exactly_under_all_eight_symmetries(explicit_biases):
    net = make_net(seed=2, explicit_biases=explicit_biases)
    rng = np.random.default_rng(2)
    for size in SIZES:
        stride = size + 2
        grid = random_inputs(size, rng)
        outputs = net.forward(grid.ravel()).reshape(stride, stride, 7)
        for image, expected in zip(symmetries(grid), symmetries(outputs)):
            got = net.forward(image.ravel()).reshape(stride, stride, 7)
            assert np.allclose(got, expected, rtol=1e-9, atol=1e-12), size


def test_hidden_units_transform_by_their_representations():
    """Rotating the board by 90 degrees (np.rot90, the paper's r) or mirroring it left-right (s)
    permutes the hidden cells and acts on each unit as section III says: T unchanged, S -/+,
    D -/-, F as the vector (east, north)."""
    net = make_net(seed=3)
    rng = np.random.default_rng(3)
    size = 9
    stride = size + 2
    grid = random_inputs(size, rng)
    _, hidden = net.forward(grid.ravel(), want_hidden=True)
    hidden = hidden.reshape(stride, stride, 12)

    def act(transform_cells, signs, faithful):
        image = transform_cells(hidden).copy()
        image[..., :8] *= signs
        for base in (8, 10):
            f1, f2 = image[..., base].copy(), image[..., base + 1].copy()
            image[..., base], image[..., base + 1] = faithful(f1, f2)
        return image

    # Units: T T T T S S D D, then the F pairs.
    rotate_signs = np.array([1, 1, 1, 1, -1, -1, -1, -1])
    mirror_signs = np.array([1, 1, 1, 1, 1, 1, -1, -1])
    expectations = [
        (np.rot90(grid), act(np.rot90, rotate_signs, lambda f1, f2: (-f2, f1))),
        (np.fliplr(grid), act(np.fliplr, mirror_signs, lambda f1, f2: (-f1, f2))),
    ]
    for image, expected in expectations:
        _, got = net.forward(np.ascontiguousarray(image).ravel(), want_hidden=True)
        assert np.allclose(got.reshape(stride, stride, 12), expected, rtol=1e-9, atol=1e-12)


def test_board_evaluation_is_equivariant_including_the_recurrence_and_successors():
    net = make_net(seed=4)
    rng = np.random.default_rng(4)
    for size in (5, 8, 13):
        board, to_move = random_board(size, size * size // 2, rng)
        stride = size + 2
        weights = rng.uniform(0, 1, (stride * stride, 4))
        outputs, _, _, total = net.evaluate_board(board, to_move, weights)
        moves = board.legal_moves(to_move)
        pass_value, values = net.successor_values(board, to_move, weights, moves)
        value_of = dict(zip(moves, values))
        locs = np.arange(stride * stride).reshape(stride, stride)
        grid = np.full((stride, stride), EMPTY)
        grid[1:-1, 1:-1] = board_grid(board)
        for image_locs, image_grid in zip(symmetries(locs), symmetries(grid)):
            image = board_from_grid(image_grid[1:-1, 1:-1])
            image_weights = weights[image_locs.ravel()]
            got, _, _, got_total = net.evaluate_board(image, to_move, image_weights)
            assert np.allclose(got, outputs[image_locs.ravel()], rtol=1e-9, atol=1e-12)
            assert got_total == pytest.approx(total, rel=1e-9, abs=1e-9)
            image_moves = image.legal_moves(to_move)
            got_pass, got_values = net.successor_values(image, to_move, image_weights, image_moves)
            assert got_pass == pytest.approx(pass_value, rel=1e-9, abs=1e-9)
            old_loc = image_locs.ravel()
            for move, value in zip(image_moves, got_values):
                assert value == pytest.approx(value_of[old_loc[move]], rel=1e-9, abs=1e-9)


# ------------------------------------------------------------------------------- gradients

@pytest.mark.parametrize("explicit_biases", [False, True])
def test_gradient_matches_finite_differences(explicit_biases):
    net = make_net(seed=6, explicit_biases=explicit_biases)
    rng = np.random.default_rng(6)
    size = 5
    inputs = random_inputs(size, rng).ravel()
    num_locs = (size + 2) ** 2
    targets = rng.uniform(0, 1, (num_locs, 7))
    mask = rng.uniform(0, 1, (num_locs, 7)) < 0.8
    grad = np.zeros(net.num_params)
    loss = net.loss_and_gradient(inputs, targets, mask, grad)
    assert loss == pytest.approx(net.loss(inputs, targets, mask), rel=1e-12)
    params = net.get_params()
    step = 1e-6
    numeric = np.empty(net.num_params)
    for i in range(net.num_params):
        shifted = params.copy()
        shifted[i] += step
        net.set_params(shifted)
        up = net.loss(inputs, targets, mask)
        shifted[i] -= 2 * step
        net.set_params(shifted)
        down = net.loss(inputs, targets, mask)
        numeric[i] = (up - down) / (2 * step)
    net.set_params(params)
    assert np.allclose(grad, numeric, rtol=1e-5, atol=1e-6)
    assert np.abs(grad).max() > 1.0


def test_loss_is_masked_cross_entropy_and_gradient_accumulates():
    net = make_net(seed=7)
    rng = np.random.default_rng(7)
    inputs = random_inputs(6, rng).ravel()
    outputs = net.forward(inputs)
    targets = rng.uniform(0, 1, outputs.shape)
    mask = np.zeros(outputs.shape, dtype=bool)
    on_board = inputs != isn.INPUT_OFF_BOARD_POINT
    mask[on_board, 2] = True
    y = outputs[mask]
    t = targets[mask]
    expected = -np.sum(t * np.log(y) + (1 - t) * np.log(1 - y))
    assert net.loss(inputs, targets, mask) == pytest.approx(expected, rel=1e-10)
    grad = np.zeros(net.num_params)
    net.loss_and_gradient(inputs, targets, mask, grad)
    twice = grad.copy()
    net.loss_and_gradient(inputs, targets, mask, twice)
    assert np.allclose(twice, 2 * grad)
    nothing = np.zeros(net.num_params)
    assert net.loss_and_gradient(inputs, targets, np.zeros_like(mask), nothing) == 0.0
    assert not nothing.any()
    # Only output 2 has targets: the shortcut weights of the other outputs get no gradient.
    start, stop, shape = net.parameter_blocks()["shortcut"]
    shortcut_grad = grad[start:stop].reshape(shape)
    assert not np.delete(shortcut_grad, 2, axis=0).any() and shortcut_grad[2].any()


def test_training_api_rejects_bad_arguments():
    net = make_net(seed=8)
    rng = np.random.default_rng(8)
    inputs = random_inputs(5, rng).ravel()
    shape = (49, 7)
    good_targets, good_mask = np.full(shape, 0.5), np.ones(shape, dtype=bool)
    with pytest.raises(ValueError, match="grad"):
        net.loss_and_gradient(inputs, good_targets, good_mask, np.zeros(10))
    with pytest.raises(ValueError, match="grad"):
        net.loss_and_gradient(inputs, good_targets, good_mask,
                              np.zeros(net.num_params, dtype=np.float32))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        net.loss(inputs, np.full(shape, 1.5), good_mask)
    with pytest.raises(ValueError, match="shape"):
        net.loss(inputs, np.full((48, 7), 0.5), good_mask)
    with pytest.raises(ValueError, match="padded board"):
        net.forward(np.full(50, 12))
    out_of_range = inputs.copy()
    out_of_range[8] = 14
    with pytest.raises(ValueError, match="input indices"):
        net.forward(out_of_range)
    misplaced = inputs.copy()
    misplaced[8] = isn.INPUT_OFF_BOARD_POINT      # loc 8 is on the 5x5 board
    with pytest.raises(ValueError, match="off-board"):
        net.forward(misplaced)
    with pytest.raises(ValueError, match="parameters"):
        net.set_params(np.zeros(3))
    with pytest.raises(ValueError, match="NaN"):
        net.set_params(np.full(net.num_params, np.nan))


def test_decay_scales_every_parameter():
    net = make_net(seed=9)
    before = net.get_params()
    net.decay(0.99999)
    assert np.allclose(net.get_params(), before * 0.99999, rtol=1e-15)
    with pytest.raises(ValueError):
        net.decay(0.0)
    with pytest.raises(ValueError):
        net.decay(1.5)


def test_networks_pickle_with_their_parameters():
    import pickle
    net = make_net(seed=15, explicit_biases=True)
    copy = pickle.loads(pickle.dumps(net))
    assert copy.explicit_biases and copy.num_params == net.num_params
    assert np.array_equal(copy.get_params(), net.get_params())
    inputs = random_inputs(7, np.random.default_rng(15)).ravel()
    assert np.array_equal(copy.forward(inputs), net.forward(inputs))


def test_every_parameter_change_bumps_the_version():
    net = Network()
    version = net.params_version
    net.set_params(np.zeros(net.num_params))
    net.decay(0.5)
    assert net.params_version == version + 2


# ------------------------------------------------------------------------------- board inputs

@pytest.mark.parametrize("z_sum, a_sum, expected", [
    (0.0, 0.0, 0), (0.74, 0.74, 0), (0.75, 0.0, 1), (1.49, 0.5, 1), (1.5, 0.0, 2), (9.0, 0.7, 2),
    (0.0, 0.75, 3), (1.49, 1.49, 3), (1.5, 0.75, 4), (5.0, 1.49, 4), (0.0, 1.5, 5), (9.0, 9.0, 5),
])
def test_liberty_classes_use_the_papers_thresholds(z_sum, a_sum, expected):
    assert isn.classify(z_sum, a_sum) == expected


def test_encode_classes_chains_from_the_previous_outputs_in_the_side_to_move_frame():
    board = Board.from_ascii("""
        X . O O .
        . . O . .
        . . . . .
        X X . . .
        . . . . X
    """)
    net = Network()
    stride = board.stride
    prior = isn.prior_liberty_weights(board.num_locs)
    inputs = net.encode(board, BLACK, prior)

    def at(row, col):
        return inputs[board.loc(row, col)]

    # The prior counts 0.5 per liberty and no eyes: 2 liberties -> C2, 3+ -> C3.
    assert at(0, 0) == isn.INPUT_BLACK_C1 + 1           # 2 liberties
    assert at(0, 2) == isn.INPUT_WHITE_C1 + 2           # 4 liberties
    assert at(3, 0) == at(3, 1) == isn.INPUT_BLACK_C1 + 2
    assert at(4, 4) == isn.INPUT_BLACK_C1 + 1
    assert at(2, 2) == isn.INPUT_EMPTY_POINT
    assert inputs[0] == inputs[stride - 1] == isn.INPUT_OFF_BOARD_POINT
    # With White to move, White's stones are the frame's Black; classes do not change.
    flipped = net.encode(board, WHITE, prior)
    assert flipped[board.loc(0, 0)] == isn.INPUT_WHITE_C1 + 1
    assert flipped[board.loc(0, 2)] == isn.INPUT_BLACK_C1 + 2
    # Eye weight on the liberties: black's corner stone has liberties (0, 1) and (1, 0).
    weights = prior.copy()
    black_a = isn.LIBERTY_WEIGHT_COLUMNS["black_a"]
    weights[board.loc(0, 1), black_a] = 0.8
    weights[board.loc(1, 0), black_a] = 0.8
    assert net.encode(board, BLACK, weights)[board.loc(0, 0)] == isn.INPUT_BLACK_C1 + 5   # sum A 1.6
    weights[board.loc(1, 0), black_a] = 0.0
    assert net.encode(board, BLACK, weights)[board.loc(0, 0)] == isn.INPUT_BLACK_C1 + 3   # 0.8, Z 1.0


def test_liberty_weights_are_real_colour_and_frame_independent():
    rng = np.random.default_rng(10)
    outputs = rng.uniform(0, 1, (49, 7))
    as_black = isn.liberty_weights(outputs, BLACK)
    as_white = isn.liberty_weights(isn.swap_colours(outputs), WHITE)
    assert np.allclose(as_black, as_white, rtol=0, atol=1e-15)
    assert np.allclose(as_black[:, 2], outputs[:, 0])         # a white chain counts Z+
    assert np.allclose(as_black[:, 3], outputs[:, 3])         # and A+o
    assert np.allclose(as_black[:, 0], 1 - outputs[:, 0])     # a black chain 1 - Z+
    assert np.allclose(as_black[:, 1], outputs[:, 4])         # and A+.


def test_colour_swapped_position_gives_the_same_inputs_and_value():
    net = make_net(seed=11)
    rng = np.random.default_rng(11)
    board, to_move = random_board(9, 40, rng)
    weights = rng.uniform(0, 1, (board.num_locs, 4))
    grid = board_grid(board)
    swapped_grid = np.where(grid == BLACK, WHITE, np.where(grid == WHITE, BLACK, EMPTY))
    swapped = board_from_grid(swapped_grid)
    swapped_weights = weights[:, [2, 3, 0, 1]]
    first = net.evaluate_board(board, to_move, weights)
    second = net.evaluate_board(swapped, 3 - to_move, swapped_weights)
    assert np.array_equal(first[1], second[1])
    assert second[3] == first[3]
    moves = board.legal_moves(to_move)
    assert moves == swapped.legal_moves(3 - to_move)
    values = net.successor_values(board, to_move, weights, moves)
    swapped_values = net.successor_values(swapped, 3 - to_move, swapped_weights, moves)
    assert values[0] == swapped_values[0]
    assert np.array_equal(values[1], swapped_values[1])


# ------------------------------------------------------------------------------- rewards, targets

def test_swap_colours_negates_every_reward():
    """Table III: the colour-swapped outputs give each point minus its reward, for any c and s."""
    rng = np.random.default_rng(12)
    outputs = rng.uniform(0, 1, (30, 7))
    states = rng.choice([EMPTY, BLACK, WHITE], 30)
    swapped_states = np.where(states == BLACK, WHITE, np.where(states == WHITE, BLACK, EMPTY))
    for c, s in ((0.0, 1.0), (0.4, 0.4), (1.0, 0.0), (0.3, 0.7)):
        rewards = isn.point_rewards(outputs, states, c, s)
        assert np.allclose(isn.point_rewards(isn.swap_colours(outputs), swapped_states, c, s), -rewards)
    assert np.allclose(isn.swap_colours(isn.swap_colours(outputs)), outputs)


FINAL = """
    . X . O .
    X X O O O
    X X . O O
    . X O . .
    X X O . .
"""


def test_final_targets_are_table_iv():
    board = Board.from_ascii(FINAL)
    c = 0.4
    targets, mask = isn.final_targets(board, c, BLACK)
    table = isn.target_table(c)
    expected_status = {
        (0, 0): "black_empty", (0, 1): "black_stone", (0, 2): "neutral_empty",
        (0, 4): "white_empty", (2, 2): "neutral_empty", (3, 0): "black_empty",
        (3, 3): "white_empty", (4, 4): "white_empty", (1, 2): "white_stone",
    }
    for (row, col), status in expected_status.items():
        p = board.loc(row, col)
        row_values = table[status]
        assert list(mask[p]) == [v is not None for v in row_values]
        assert np.allclose(targets[p][mask[p]], [v for v in row_values if v is not None])
    assert table["neutral_empty"] == pytest.approx((0.5, 1 / 2.4, 1.4 / 2.4, 0, 0, 0.4 / 2.4, 0.4 / 2.4))
    assert not mask[0].any()      # off the board
    # With White to move the frame swaps colours: same as swapping the outputs and the mask.
    white_targets, white_mask = isn.final_targets(board, c, WHITE)
    assert np.array_equal(white_mask, isn.swap_colours_mask(mask))
    assert np.allclose(white_targets[white_mask], isn.swap_colours(targets)[white_mask])


def test_targets_as_outputs_score_the_final_position():
    """At the final position, Table IV's targets read as outputs give the Table I rewards: with
    c = 0, s = 1 their sum is White's area margin."""
    board = Board.from_ascii(FINAL)
    targets, mask = isn.final_targets(board, 0.0, BLACK)
    states = np.array([board.get(p) for p in range(board.num_locs)])
    on_board = states != 3
    rewards = isn.point_rewards(targets, states, 0.0, 1.0)[on_board]
    status = isn.final_status(board)
    white = sum(1 for s in status if s in ("white_stone", "white_empty"))
    black = sum(1 for s in status if s in ("black_stone", "black_empty"))
    assert rewards.sum() == pytest.approx(white - black)
    territory_only = isn.point_rewards(targets, states, 0.4, 0.0)[on_board]
    empties = [s for s in status if s and s.endswith("_empty")]
    white_minus_black = empties.count("white_empty") - empties.count("black_empty")
    assert territory_only.sum() == pytest.approx(white_minus_black)


# ------------------------------------------------------------------------------- incremental

def capture_and_suicide_counts(board, colour, moves, allow_suicide):
    """How many of moves capture, and how many are suicides (the board counts a suicide's
    stones as captured by the opponent)."""
    captures = suicides = 0
    for move in moves:
        taken, lost = board.captures(colour), board.captures(3 - colour)
        board.play(move, colour, allow_suicide)
        if board.captures(3 - colour) > lost:
            suicides += 1
        elif board.captures(colour) > taken:
            captures += 1
        board.undo()
    return captures, suicides


@pytest.mark.parametrize("allow_suicide", [False, True])
def test_incremental_successor_values_equal_full_evaluation(allow_suicide):
    net = make_net(seed=13)
    rng = np.random.default_rng(13)
    checked = captures = suicides = 0
    for size in (5, 7, 9, 13, 19):
        for fill in (0.3, 0.6, 0.9):
            board, to_move = random_board(size, int(fill * size * size), rng, allow_suicide)
            weights = rng.uniform(0, 1, (board.num_locs, 4))
            moves = board.legal_moves(to_move, allow_suicide)
            for c, s in ((0.0, 1.0), (0.4, 0.4)):
                fast = net.successor_values(board, to_move, weights, moves, c, s, allow_suicide)
                full = net.successor_values_full(board, to_move, weights, moves, c, s, allow_suicide)
                assert fast[0] == pytest.approx(full[0], rel=1e-9, abs=1e-9)
                assert np.allclose(fast[1], full[1], rtol=1e-9, atol=1e-9)
                checked += len(moves)
            found = capture_and_suicide_counts(board, to_move, moves, allow_suicide)
            captures += found[0]
            suicides += found[1]
            board.check_consistency()
    assert checked > 1000 and captures > 0
    assert suicides > 0 if allow_suicide else suicides == 0


def test_successor_values_leave_the_board_unchanged_and_reject_illegal_moves():
    net = make_net(seed=14)
    rng = np.random.default_rng(14)
    board, to_move = random_board(9, 40, rng)
    before = (str(board), board.hash, board.move_count, board.ko_loc)
    weights = rng.uniform(0, 1, (board.num_locs, 4))
    net.successor_values(board, to_move, weights, board.legal_moves(to_move))
    assert (str(board), board.hash, board.move_count, board.ko_loc) == before
    board.check_consistency()
    occupied = board.stones(BLACK)[0]
    with pytest.raises(ValueError, match="illegal"):
        net.successor_values(board, to_move, weights, [occupied])
    with pytest.raises(ValueError, match="on-board"):
        net.successor_values(board, to_move, weights, [0])
    with pytest.raises(ValueError, match="weights"):
        net.successor_values(board, to_move, weights[:10], [])
