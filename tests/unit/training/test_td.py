"""The TD(lambda) target math of engine/training/td.py: frames, Table III, and the limiting cases."""
import numpy as np
import pytest

from engine.nets import network as isn
from engine.training import td
from engine.rules.board import BLACK, WHITE, Board

C = 0.4


def random_outputs(rng, shape):
    return rng.uniform(0.0, 1.0, size=shape + (td.NUM_OUTPUTS,))


def table_iv_like_targets(rng, num_locs):
    """Targets shaped like Table IV rows (one-hot eyes), with its blanks, in the real-Black frame."""
    c = C
    rows = np.array([
        # Z+   Z o          Z.               A+o A+. A o           A.
        [1.0, 0.0,         1.0,             1.0, 0.0, 0.0,         1.0],   # white territory
        [1.0, 1.0,         1.0,             0.0, 0.0, 0.0,         0.0],   # white stone
        [0.5, 1 / (2 + c), (1 + c) / (2 + c), 0.0, 0.0, c / (2 + c), c / (2 + c)],   # neutral
        [0.0, 0.0,         0.0,             0.0, 0.0, 0.0,         0.0],   # black stone
        [0.0, 0.0,         0.0,             0.0, 1.0, 1.0,         0.0],   # black territory
    ])
    masks = np.ones((5, 7), dtype=bool)
    masks[0, [td.Z_WHITE, td.A_WHITE]] = False
    masks[4, [td.Z_BLACK, td.A_BLACK]] = False
    row = rng.integers(0, 5, size=num_locs)
    return rows[row], masks[row]


def test_swap_frame_is_an_involution_and_negates_rewards():
    rng = np.random.default_rng(1)
    y = random_outputs(rng, (50,))
    assert np.allclose(td.swap_frame(td.swap_frame(y)), y)
    r = td.rewards_from_outputs(y, C)
    r_swapped = td.rewards_from_outputs(td.swap_frame(y), C)
    # Colour swap: every reward changes sign, and the white-stone and black-stone columns trade.
    assert np.allclose(r_swapped[:, 0], -r[:, 0])
    assert np.allclose(r_swapped[:, 1], -r[:, 2])
    assert np.allclose(r_swapped[:, 2], -r[:, 1])
    assert np.allclose(r_swapped[:, 3], -r[:, 3])
    assert np.allclose(r_swapped[:, 4], -r[:, 5])
    assert np.allclose(r_swapped[:, 5], -r[:, 4])


def test_swap_frame_mask_follows_the_outputs():
    mask = np.array([True, False, True, True, False, False, True])
    assert td.swap_frame_mask(mask).tolist() == [True, True, False, False, True, True, False]


def rich_board():
    """Black has a two-eyed group on the left, White one eye on the right."""
    return Board.from_ascii("""
        . X . O .
        X X O . O
        . X O O O
        X X O . .
        . X O . .
    """)


def test_swap_frame_exchanges_the_rich_signal_pairwise():
    rng = np.random.default_rng(11)
    y = rng.uniform(0.0, 1.0, size=(30, td.NUM_OUTPUTS + td.NUM_RICH_OUTPUTS))
    swapped = td.swap_frame(y)
    assert np.allclose(swapped[:, :td.NUM_OUTPUTS], td.swap_frame(y[:, :td.NUM_OUTPUTS]))
    assert np.allclose(swapped[:, td.NUM_OUTPUTS:], isn.swap_rich_colours(y[:, td.NUM_OUTPUTS:]))
    assert np.allclose(td.swap_frame(swapped), y)
    # Black's eye column and White's trade places: eye_black <-> eye_white, and so on.
    assert np.allclose(swapped[:, td.NUM_OUTPUTS], y[:, td.NUM_OUTPUTS + 1])
    mask = rng.random((30, td.NUM_OUTPUTS + td.NUM_RICH_OUTPUTS)) < 0.5
    swapped_mask = td.swap_frame_mask(mask)
    assert (swapped_mask[:, :td.NUM_OUTPUTS] == td.swap_frame_mask(mask[:, :td.NUM_OUTPUTS])).all()
    assert (swapped_mask[:, td.NUM_OUTPUTS:] == isn.swap_rich_colours(mask[:, td.NUM_OUTPUTS:])).all()


def test_swap_frame_of_rich_targets_is_the_other_side_to_move():
    board = rich_board()
    black, black_mask = isn.final_targets(board, C, BLACK)
    white, white_mask = isn.final_targets(board, C, WHITE)
    rich_black, rich_black_mask = isn.rich_targets(board, BLACK)
    rich_white, rich_white_mask = isn.rich_targets(board, WHITE)
    as_black = np.concatenate([black, rich_black], axis=1)
    as_white = np.concatenate([white, rich_white], axis=1)
    both_masks = np.concatenate([black_mask, rich_black_mask], axis=1)
    swapped_mask = td.swap_frame_mask(both_masks)
    assert (swapped_mask == np.concatenate([white_mask, rich_white_mask], axis=1)).all()
    # Equal wherever there is a target (Table IV's blanks hold no value).
    assert np.allclose(td.swap_frame(as_black)[swapped_mask], as_white[swapped_mask])
    # The board has rich events of both colours, so the swap is not vacuous.
    assert rich_black[:, 0].any() and rich_black[:, 1].any() and not np.allclose(rich_black, rich_white)


def test_lambda_targets_carry_the_rich_signal_across_frames():
    board = rich_board()
    num_locs = board.num_locs
    territory, territory_mask = isn.final_targets(board, C, BLACK)
    rich, rich_mask = isn.rich_targets(board, BLACK)
    final = np.concatenate([territory, rich], axis=1)
    final_mask = np.concatenate([territory_mask, rich_mask], axis=1)
    rng = np.random.default_rng(12)
    outputs = rng.uniform(0.0, 1.0, size=(6, num_locs, final.shape[1]))
    black_to_move = np.arange(6) % 2 == 0
    targets, mask = td.lambda_targets(outputs, black_to_move, final, final_mask, 1.0)
    for t in range(6):
        colour = BLACK if black_to_move[t] else WHITE
        expected = np.concatenate([isn.final_targets(board, C, colour)[0],
                                   isn.rich_targets(board, colour)[0]], axis=1)
        expected_mask = np.concatenate([isn.final_targets(board, C, colour)[1],
                                        isn.rich_targets(board, colour)[1]], axis=1)
        assert (mask[t] == expected_mask).all()
        assert np.allclose(targets[t][mask[t]], expected[expected_mask])
    targets, _ = td.lambda_targets(outputs, black_to_move, final, final_mask, 0.0)
    for t in range(5):
        assert np.allclose(targets[t], td.swap_frame(outputs[t + 1]))
    with pytest.raises(ValueError, match="final_targets"):
        td.lambda_targets(outputs, black_to_move, territory, final_mask, 0.5)


def test_table_iii_round_trip_on_table_iv_targets():
    rng = np.random.default_rng(2)
    targets, _ = table_iv_like_targets(rng, 40)
    back = td.outputs_from_rewards(td.rewards_from_outputs(targets, C), C)
    assert np.allclose(back, targets)


def test_lambda_one_gives_the_final_targets_in_each_frame():
    rng = np.random.default_rng(3)
    final, final_mask = table_iv_like_targets(rng, 30)
    outputs = random_outputs(rng, (9, 30))
    black_to_move = np.arange(9) % 2 == 0
    targets, mask = td.lambda_targets(outputs, black_to_move, final, final_mask, 1.0)
    for t in range(9):
        expected = final if black_to_move[t] else td.swap_frame(final)
        expected_mask = final_mask if black_to_move[t] else td.swap_frame_mask(final_mask)
        assert np.allclose(targets[t][mask[t]], expected[expected_mask])
        assert (mask[t] == expected_mask).all()


def test_lambda_zero_gives_the_next_prediction_across_the_frame_change():
    rng = np.random.default_rng(4)
    final, final_mask = table_iv_like_targets(rng, 20)
    outputs = random_outputs(rng, (6, 20))
    black_to_move = np.array([True, False, True, False, True, False])
    targets, _ = td.lambda_targets(outputs, black_to_move, final, final_mask, 0.0)
    for t in range(5):
        # The next position has the other side to move: its outputs seen from this side's frame.
        assert np.allclose(targets[t], td.swap_frame(outputs[t + 1]))
    # The last position before the end is trained on the outcome (final is in Black's frame,
    # position 5 has White to move).
    assert np.allclose(targets[5], td.swap_frame(final))


def test_lambda_return_recursion_and_reward_form_agree():
    rng = np.random.default_rng(5)
    final, final_mask = table_iv_like_targets(rng, 15)
    num_positions = 7
    outputs = random_outputs(rng, (num_positions, 15))
    # Positions with one eye output zero: there Table III's inverse loses nothing.
    outputs[..., td.A_EMPTY_BLACK] = 0.0
    final = final.copy()
    final[..., td.A_EMPTY_BLACK] = 0.0
    black_to_move = np.ones(num_positions, dtype=bool)      # one frame: isolates the recursion
    lam = 0.9
    targets, _ = td.lambda_targets(outputs, black_to_move, final, final_mask, lam)
    # Direct sum: G_t = sum_k (1-lam) lam^(k-1) V_{t+k} over k < T-t, plus lam^(T-t-1) G_T.
    values = np.concatenate([outputs, final[None]], axis=0)
    for t in range(num_positions):
        horizon = num_positions - t
        expected = lam ** (horizon - 1) * final
        for k in range(1, horizon):
            expected = expected + (1 - lam) * lam ** (k - 1) * values[t + k]
        assert np.allclose(targets[t], expected)
        # The same return taken on Table III's rewards and mapped back.
        reward_return = lam ** (horizon - 1) * td.rewards_from_outputs(final, C)
        for k in range(1, horizon):
            reward_return = reward_return + (1 - lam) * lam ** (k - 1) * td.rewards_from_outputs(
                values[t + k], C)
        assert np.allclose(td.outputs_from_rewards(reward_return, C), targets[t])


def test_targets_stay_in_the_unit_interval():
    rng = np.random.default_rng(6)
    final, final_mask = table_iv_like_targets(rng, 25)
    outputs = random_outputs(rng, (40, 25))
    targets, _ = td.lambda_targets(outputs, np.arange(40) % 2 == 1, final, final_mask, 0.9)
    assert targets.min() >= 0.0 and targets.max() <= 1.0


def test_untrained_positions_are_masked_and_do_not_change_td0_targets():
    rng = np.random.default_rng(7)
    final, final_mask = table_iv_like_targets(rng, 10)
    outputs = random_outputs(rng, (5, 10))
    black_to_move = np.arange(5) % 2 == 0
    trained = np.array([True, False, True, True, False])
    all_targets, _ = td.lambda_targets(outputs, black_to_move, final, final_mask, 0.0)
    targets, mask = td.lambda_targets(outputs, black_to_move, final, final_mask, 0.0, trained)
    assert not mask[~trained].any()
    assert mask[trained].any()
    assert np.allclose(targets[trained], all_targets[trained])


def test_bad_shapes_and_lambda_are_refused():
    rng = np.random.default_rng(8)
    final, final_mask = table_iv_like_targets(rng, 10)
    outputs = random_outputs(rng, (3, 10))
    with pytest.raises(ValueError, match="lambda"):
        td.lambda_targets(outputs, [True, False, True], final, final_mask, 1.5)
    with pytest.raises(ValueError, match="black_to_move"):
        td.lambda_targets(outputs, [True, False], final, final_mask, 0.5)
    with pytest.raises(ValueError, match="final_targets"):
        td.lambda_targets(outputs, [True, False, True], final[:5], final_mask, 0.5)
    with pytest.raises(ValueError, match="outputs"):
        td.swap_frame(np.zeros((3, 6)))
