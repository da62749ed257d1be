"""Input features (engine/nets/features.pyx): the registry, every NeuroGo feature on an ASCII diagram,
the blocks' ladders against the ladder oracle, symmetry, the side-to-move frame, incremental successor
features (ladders far from the move included), and the neurogo network built on them."""
import numpy as np
import pytest

from engine.rules.board import BLACK, EMPTY, NO_LOC, WHITE, Board
from engine.rules.coords import format_vertex
from engine.nets import features as F
from engine.nets import network as isn
from engine.nets.weights import new_network
from tests.diagrams import (LADDER, board_from_grid, board_grid, load_board, symmetries,
                            vertex, with_stones)
from tests.unit.tactics import ladder_oracle


def value_at(diagram, to_move, name, text):
    """The active plane of feature name at the GTP vertex text (-1: none)."""
    board = load_board(diagram)
    planes = F.feature_planes(board, to_move, name)
    row = planes[vertex(text, board.size)]
    assert row.sum() <= 1, "a feature has at most one active plane per point"
    return int(np.argmax(row)) if row.any() else -1


def active_points(diagram, to_move, name):
    """{vertex: plane} of every point where feature name is active."""
    board = load_board(diagram)
    planes = F.feature_planes(board, to_move, name)
    return {format_vertex(p, board.size): int(np.argmax(planes[p]))
            for p in range(board.num_locs) if planes[p].any()}


def random_board(size, moves, rng):
    board = Board(size)
    colour = BLACK
    for _ in range(moves):
        legal = [m for m in board.legal_moves(colour) if not board.is_eye(m, colour)]
        if legal:
            board.play(legal[rng.integers(len(legal))], colour)
        colour = 3 - colour
    return board, colour


# ------------------------------------------------------------------------------- the registry

def test_neurogo_is_isn14_plus_table_1():
    isn14, neurogo = F.set_layout("isn14"), F.set_layout("neurogo")
    assert (isn14.num_inputs, isn14.one_hot, isn14.version) == (14, True, 1)
    assert neurogo.offsets["stone_class"] == 0 and not neurogo.one_hot
    planes = {name: F.FEATURES[name].planes for name in F.FEATURE_SET_SPECS["neurogo"].features}
    # Table 1's plane counts; occupied-point features come once per side (own / opponent stone),
    # because the ISN's weights do not depend on the point's colour as NeuroGo's point types do.
    for side in ("own", "opponent"):
        assert planes[f"liberties_if_{side}_plays"] == 6
        assert planes[f"ladder_if_{side}_plays"] == planes[f"eye_{side}"] == 1
        assert planes[f"eye_moves_{side}"] == 3 and planes[f"ponnuki_{side}"] == 1
        assert planes[f"link_{side}"] == 1
        assert planes[f"pon_{side}"] == 8 and planes[f"block_liberties_{side}"] == 4
        assert planes[f"block_stones_{side}"] == 5
        assert planes[f"ladder_attacker_first_{side}"] == planes[f"ladder_defender_first_{side}"] == 1
    assert planes["atari_if_own_plays"] == 1
    assert neurogo.num_inputs == sum(planes.values()) == 79
    assert isn.FEATURE_SETS["neurogo"].num_inputs == 79
    assert isn.FEATURE_SETS["isn14"].num_inputs == 14
    lite = F.set_layout("neurogo_lite")
    left_out = (set(F.FEATURE_SET_SPECS["neurogo"].features)
                - set(F.FEATURE_SET_SPECS["neurogo_lite"].features))
    assert left_out == {"ladder_if_own_plays", "ladder_if_opponent_plays"}
    assert lite.num_inputs == 77


def test_registry_refuses_bad_features_and_sets():
    with pytest.raises(ValueError, match="already registered"):
        F.register_feature("eye_own", 1, "empty_own", F.SLOT["eye_black"], 0, "again")
    with pytest.raises(ValueError, match="unknown point kind"):
        F.register_feature("new_feature", 1, "corner", 0, 0, "")
    with pytest.raises(ValueError, match="unknown feature set"):
        F.set_layout("raw")
    with pytest.raises(ValueError, match="unknown feature set"):
        isn.Network("raw")


# ------------------------------------------------------------------------------- each feature

LIBERTIES = """
    . O . . .
    O . . . .
    . . . . .
    . . . X X
    . . . X .
"""


def test_liberties_if_played():
    own, opponent = "liberties_if_own_plays", "liberties_if_opponent_plays"
    assert value_at(LIBERTIES, BLACK, own, "A5") == 0          # suicide
    assert value_at(LIBERTIES, BLACK, opponent, "A5") == 3     # White connects: B4 C5 A3
    assert value_at(LIBERTIES, BLACK, own, "E1") == 4          # C1 C2 D3 E3
    assert value_at(LIBERTIES, BLACK, opponent, "E1") == 0     # suicide for White
    assert value_at(LIBERTIES, BLACK, own, "E3") == 5          # >4: C1 C2 D3 E1 E4
    assert value_at(LIBERTIES, BLACK, own, "C3") == 4
    assert value_at(LIBERTIES, BLACK, own, "D2") == -1         # occupied
    # With White to move the roles swap.
    assert value_at(LIBERTIES, WHITE, own, "A5") == 3
    assert value_at(LIBERTIES, WHITE, opponent, "A5") == 0


CAPTURE_TO_LIVE = """
    . X O . .
    X O . . .
    O . . . .
    . . . . .
    . . . . .
"""


def test_liberties_if_played_count_the_captured_stones():
    # Black B5 and A4 each have A5 as their last liberty: White at A5 takes both and then has
    # their two points as liberties; Black at A5 connects them into a block with none left.
    assert value_at(CAPTURE_TO_LIVE, WHITE, "liberties_if_own_plays", "A5") == 2
    assert value_at(CAPTURE_TO_LIVE, WHITE, "liberties_if_opponent_plays", "A5") == 0
    assert value_at(CAPTURE_TO_LIVE, WHITE, "liberties_if_own_plays", "A4") == -1   # occupied


def test_ladder_if_played_reads_the_whole_ladder():
    # White extending at C4 has two liberties and is chased to the top edge.
    assert value_at(LADDER, WHITE, "ladder_if_own_plays", "C4") == 0
    assert value_at(LADDER, BLACK, "ladder_if_opponent_plays", "C4") == 0
    # A white stone far away on the ladder's path breaks it.
    broken = with_stones(LADDER, {"G7": "O"})
    assert value_at(broken, WHITE, "ladder_if_own_plays", "C4") == -1
    # Points where the stone gets three or more liberties are never ladders.
    assert value_at(LADDER, WHITE, "ladder_if_own_plays", "E5") == -1


def test_block_ladders_for_either_side_moving_first():
    for to_move, side in ((WHITE, "own"), (BLACK, "opponent")):
        assert value_at(LADDER, to_move, f"ladder_attacker_first_{side}", "C3") == 0
        assert value_at(LADDER, to_move, f"ladder_defender_first_{side}", "C3") == 0
    broken = with_stones(LADDER, {"H8": "O"})
    assert value_at(broken, BLACK, "ladder_attacker_first_opponent", "C3") == 0   # in atari
    assert value_at(broken, BLACK, "ladder_defender_first_opponent", "C3") == -1  # runs out
    # Black's stones have plenty of liberties.
    assert value_at(LADDER, BLACK, "ladder_attacker_first_own", "B4") == -1


SHAPES = """
    X . . . . . .
    . X . . . . .
    X . X . . . .
    . X . . O . .
    . . . O . O .
    . . . . O . .
    . . . . . . X
"""


def test_single_point_eyes():
    assert active_points(SHAPES, BLACK, "eye_own") == {"B5": 0, "A6": 0}
    assert active_points(SHAPES, BLACK, "eye_opponent") == {"E3": 0}
    assert active_points(SHAPES, WHITE, "eye_own") == {"E3": 0}
    # A false eye: two opposing diagonals inside.
    false = with_stones(SHAPES, {"C6": "O", "C4": "O"})
    assert value_at(false, BLACK, "eye_own", "B5") == -1


def test_moves_needed_for_an_eye():
    name = "eye_moves_own"
    assert value_at(SHAPES, BLACK, name, "B7") == 0      # C7 fills it (A7, B6 and the edge are done)
    assert value_at(SHAPES, BLACK, name, "C6") == 1      # D6 and C7: two moves
    assert value_at(SHAPES, BLACK, name, "D5") == 2      # D6 D4 E5: more than two
    assert value_at(SHAPES, BLACK, name, "B5") == -1     # already an eye
    assert value_at(SHAPES, BLACK, name, "D4") == -1     # White stones next to it
    assert value_at(SHAPES, WHITE, name, "D4") == 1      # C4 and D5 for White: two moves
    assert value_at(SHAPES, BLACK, "eye_moves_opponent", "D4") == 1
    # Two opposing diagonals inside make it false whatever Black fills.
    assert value_at(with_stones(SHAPES, {"D6": "O", "B6": "."}), BLACK, name, "C5") == -1


def test_ponnuki():
    assert active_points(SHAPES, BLACK, "ponnuki_own") == {"B5": 0}
    assert active_points(SHAPES, BLACK, "ponnuki_opponent") == {"E3": 0}
    # A diagonal stone of the same colour is no ponnuki any more (nor is the edge).
    assert value_at(with_stones(SHAPES, {"C6": "X"}), BLACK, "ponnuki_own", "B5") == -1


ATARI = """
    . . . . .
    . X O . .
    . . X . .
    . . . . .
    . . . . .
"""


def test_atari_if_own_plays():
    assert active_points(ATARI, BLACK, "atari_if_own_plays") == {"C5": 0, "D4": 0}
    # White threatens nothing: Black's stones have three liberties each.
    assert active_points(ATARI, WHITE, "atari_if_own_plays") == {}


LINKS = """
    . . . . . . .
    . X . X . . .
    . . . . . . .
    . . . . . . .
    . X . . O . .
    . . . . . O .
    . . . . . . .
"""


def test_link_patterns_in_a_diagram():
    # B6-D6 one-point jump (C6), B6-B3 two-point jump (B5 B4). White E3-F2 touch diagonally:
    # no pattern.
    assert active_points(LINKS, BLACK, "link_own") == {"C6": 0, "B5": 0, "B4": 0}
    assert active_points(LINKS, BLACK, "link_opponent") == {}
    assert active_points(with_stones(LINKS, {"C6": "O"}), BLACK, "link_own") == {"B5": 0, "B4": 0}


@pytest.mark.parametrize("vector", [(2, 0), (3, 0), (2, 1), (3, 1)])
def test_every_orientation_of_every_link_pattern(vector):
    a, b = vector
    orientations = {(x, y) for x, y in [(a, b), (b, a)] for x, y in
                    [(x, y), (-x, y), (x, -y), (-x, -y)]}
    for dx, dy in orientations:
        board = Board(9)
        first = board.loc(4, 4)
        second = board.loc(4 + dy, 4 + dx)
        board.play(first, WHITE)
        board.play(second, WHITE)
        planes = F.feature_planes(board, WHITE, "link_own")
        expected = {board.loc(4 + ly, 4 + lx) for lx, ly in F.link_points_of((dx, dy))}
        assert {p for p in range(board.num_locs) if planes[p].any()} == expected
        assert len(expected) == {(2, 0): 1, (3, 0): 2, (2, 1): 2, (3, 1): 4}[vector]
        # A stone of either colour between them cuts the link.
        board.play(next(iter(expected)), BLACK)
        assert not F.feature_planes(board, WHITE, "link_own").any()


BLOCKS = """
    . . . . . . .
    . . . . . . .
    . . X X X . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . O X
"""


def test_block_liberties_stones_and_pon():
    assert value_at(BLOCKS, BLACK, "block_liberties_own", "D5") == 3       # 8 liberties: >3
    assert value_at(BLOCKS, BLACK, "block_stones_own", "C5") == 2          # 3 stones
    assert value_at(BLOCKS, BLACK, "block_liberties_own", "G1") == 0       # 1 liberty
    assert value_at(BLOCKS, BLACK, "block_stones_own", "G1") == 0
    assert value_at(BLOCKS, BLACK, "block_liberties_opponent", "F1") == 1  # E1 F2
    assert value_at(BLOCKS, WHITE, "block_stones_opponent", "D5") == 2     # Black's 3 stones
    assert value_at(BLOCKS, WHITE, "block_liberties_opponent", "G1") == 0
    # PON = L1 + L2 / 2 - 3: C5-E5 8 + 12/2 - 3 = 11 (>= 4.5); G1 1 + 2/2 - 3 = -1
    # ([-1.5, -0.5)); F1 2 + 4/2 - 3 = 1 ([0.5, 1.5)).
    assert value_at(BLOCKS, BLACK, "pon_own", "E5") == 7
    assert value_at(BLOCKS, BLACK, "pon_own", "G1") == 1
    assert value_at(BLOCKS, BLACK, "pon_opponent", "F1") == 3
    assert value_at(BLOCKS, WHITE, "pon_own", "F1") == 3
    # Stone features describe stones only, by their side.
    assert value_at(BLOCKS, BLACK, "pon_opponent", "E5") == -1
    assert value_at(BLOCKS, BLACK, "pon_own", "A1") == -1


def test_feature_values_are_refused_for_the_recurrence_feature():
    with pytest.raises(ValueError, match="recurrence"):
        F.feature_planes(Board(5), BLACK, "stone_class")
    with pytest.raises(ValueError, match="colour"):
        F.feature_planes(Board(5), 3, "eye_own")


# ------------------------------------------------------------------------------- ladders

def test_block_ladder_slots_are_the_ladder_oracles_reading():
    """The features read ladders with engine/tactics/ladder.pyx (reusing the attacker-first
    result for the defender-first read of a two-liberty block); the oracle is
    tests/unit/tactics/ladder_oracle.py (positions with a ko point are left out: the features
    ignore the root's ko by design)."""
    rng = np.random.default_rng(11)
    captured = []
    for _ in range(40):
        size = int(rng.choice([7, 9, 13]))
        board, _ = random_board(size, int(rng.integers(10, size * size)), rng)
        if board.ko_loc != NO_LOC:
            continue
        slots = F.BoardFeatures().compute(board)
        for p in board.points():
            if board.get(p) != EMPTY and board.liberty_count(p) <= 2:
                for attacker_first, slot in ((True, "ladder_attacker_first"),
                                             (False, "ladder_defender_first")):
                    expected = ladder_oracle.ladder_captured(board, p, attacker_first)
                    assert (slots[p, F.SLOT[slot]] == 0) == expected
                    captured.append(expected)
    assert len(captured) > 200 and any(captured) and not all(captured)


# ------------------------------------------------------------------------------- invariances

def test_features_rotate_with_the_board():
    rng = np.random.default_rng(4)
    computer = F.BoardFeatures()
    for size in (7, 9):
        board, _ = random_board(size, int(size * size * 0.55), rng)
        grid = board_grid(board)
        stride = size + 2
        slots = computer.compute(board).reshape(stride, stride, -1)
        for image, slot_image in zip(symmetries(grid), symmetries(slots)):
            rotated = board_from_grid(image)
            assert np.array_equal(computer.compute(rotated).reshape(stride, stride, -1), slot_image)


def test_swapping_colours_and_side_to_move_gives_the_same_inputs():
    rng = np.random.default_rng(6)
    net = new_network(seed=2, feature_set="neurogo")
    board, to_move = random_board(9, 45, rng)
    swapped = board_from_grid(np.where(board_grid(board) == EMPTY, EMPTY, 3 - board_grid(board)))
    weights = rng.uniform(0.0, 1.0, (board.num_locs, 4))
    swapped_weights = weights[:, [2, 3, 0, 1]]
    assert np.array_equal(net.encode(board, to_move, weights),
                          net.encode(swapped, 3 - to_move, swapped_weights))


def test_neurogo_network_is_equivariant_under_the_eight_symmetries():
    rng = np.random.default_rng(9)
    net = new_network(seed=7, feature_set="neurogo", scale=0.4)
    board, to_move = random_board(7, 28, rng)
    stride = board.stride
    weights = rng.uniform(0.0, 1.0, (stride, stride, 4))
    outputs, _, _, total = net.evaluate_board(board, to_move, weights.reshape(-1, 4))
    for image, weight_image, output_image in zip(symmetries(board_grid(board)), symmetries(weights),
                                                 symmetries(outputs.reshape(stride, stride, -1))):
        rotated = board_from_grid(image)
        got, _, _, got_total = net.evaluate_board(rotated, to_move, weight_image.reshape(-1, 4))
        assert np.allclose(got.reshape(stride, stride, -1), output_image, atol=1e-12)
        assert got_total == pytest.approx(total, abs=1e-9)


# ------------------------------------------------------------------------------- incremental

def assert_successors_incremental(board, colour, computer):
    """Incremental slots of every legal successor equal a full computation; returns the cells
    whose slots changed per move."""
    changed = {}
    for move in board.legal_moves(colour):
        incremental, _ = computer.successor_slots(board, move, colour)
        board.play(move, colour)
        full = F.BoardFeatures().compute(board)
        board.undo()
        assert np.array_equal(incremental, full), format_vertex(move, board.size)
        changed[move] = incremental
    return changed


def test_incremental_features_equal_full_on_random_positions():
    rng = np.random.default_rng(12)
    computer = F.BoardFeatures()
    for size in (5, 7, 9):
        for fill in (0.3, 0.6):
            board, colour = random_board(size, int(size * size * fill), rng)
            assert_successors_incremental(board, colour, computer)


def test_feature_reading_leaves_the_board_exactly_as_it_was():
    # The ladder reader plays its moves with Board.reading (no empty list, hash or capture
    # counts kept): after every successor's features the board must still be whole.
    rng = np.random.default_rng(31)
    computer = F.BoardFeatures()
    for size in (7, 9, 13):
        board, colour = random_board(size, int(size * size * 0.5), rng)
        before = (board.hash, board.captures(BLACK), board.captures(WHITE), str(board),
                  board.legal_moves(BLACK), board.legal_moves(WHITE), board.move_count)
        for move in board.legal_moves(colour):
            computer.successor_slots(board, move, colour)
            board.check_consistency()
        assert before == (board.hash, board.captures(BLACK), board.captures(WHITE), str(board),
                          board.legal_moves(BLACK), board.legal_moves(WHITE), board.move_count)
        for move in board.legal_moves(colour)[:8]:
            board.play(move, colour)
            board.check_consistency()
            board.undo()
        board.check_consistency()


def test_one_ply_feature_work_refuses_illegal_moves_and_leaves_the_board_whole():
    # BoardFeatures.one_ply is the benchmarks' measure of the features' share of a 1-ply move.
    rng = np.random.default_rng(8)
    board, colour = random_board(9, 40, rng)
    computer = F.BoardFeatures()
    before = (board.hash, str(board), board.move_count, board.legal_moves(colour))
    reads = computer.ladders.reads_made
    computer.one_ply(board, colour, board.legal_moves(colour))
    board.check_consistency()
    assert computer.ladders.reads_made > reads
    assert before == (board.hash, str(board), board.move_count, board.legal_moves(colour))
    occupied = next(p for p in range(board.stride ** 2) if board.get(p) in (BLACK, WHITE))
    with pytest.raises(ValueError, match="illegal"):
        computer.one_ply(board, colour, [occupied])
    with pytest.raises(ValueError, match="colour"):
        computer.one_ply(board, EMPTY, [])


def test_incremental_features_follow_ladders_far_from_the_move():
    board = load_board(LADDER)
    computer = F.BoardFeatures()
    base = computer.compute(board)
    c3 = vertex("C3", 9)
    for colour in (BLACK, WHITE):
        successors = assert_successors_incremental(board, colour, computer)
        # A white stone on the ladder's path, five points away, saves C3.
        if colour == WHITE:
            breaker = vertex("G7", 9)
            assert base[c3, F.SLOT["ladder_defender_first"]] == 0
            assert successors[breaker][c3, F.SLOT["ladder_defender_first"]] == -1
    # And with the breaker on the board, a black stone far away can take it back off the path.
    broken = load_board(with_stones(LADDER, {"G7": "O", "G8": "X", "F8": "X"}))
    assert_successors_incremental(broken, BLACK, computer)
    assert_successors_incremental(broken, WHITE, computer)


def suicide_position(size, rng):
    """A random position played with suicide allowed, and a side to move that has suicides."""
    for _ in range(100):
        board, colour = Board(size), BLACK
        for _ in range(int(size * size * 0.7)):
            legal = board.legal_moves(colour, True)
            if legal:
                board.play(legal[rng.integers(len(legal))], colour, True)
            colour = 3 - colour
        if any(not board.is_legal(m, colour) for m in board.legal_moves(colour, True)):
            return board, colour
    raise AssertionError("no position with a suicide found")


@pytest.mark.parametrize("feature_set", ["neurogo", "neurogo_lite"])
@pytest.mark.parametrize("allow_suicide", [False, True])
@pytest.mark.parametrize("c, s", [(0.3, 0.6), (0.0, 1.0)])   # s = 1: the one-output reward path
@pytest.mark.parametrize("rich_signal", [False, True])
def test_multi_hot_successor_values_equal_full_evaluation(feature_set, allow_suicide, c, s,
                                                          rich_signal):
    rng = np.random.default_rng(13)
    net = new_network(seed=3, feature_set=feature_set, scale=0.4, rich_signal=rich_signal)
    if allow_suicide:
        positions = [suicide_position(size, rng) for size in (5, 7)]
    else:
        positions = [(load_board(LADDER), WHITE), (load_board(LADDER), BLACK)]
        positions += [random_board(size, int(size * size * 0.5), rng) for size in (5, 7, 9)]
    for board, colour in positions:
        weights = rng.uniform(0.0, 1.0, (board.num_locs, 4))
        moves = board.legal_moves(colour, allow_suicide)
        before = (str(board), board.hash, board.move_count)
        pass_value, values = net.successor_values(board, colour, weights, moves, c, s,
                                                  allow_suicide)
        full_pass, full_values = net.successor_values_full(board, colour, weights, moves, c, s,
                                                           allow_suicide)
        assert (str(board), board.hash, board.move_count) == before
        assert pass_value == pytest.approx(full_pass, abs=1e-9)
        assert np.allclose(values, full_values, atol=1e-9)


# ------------------------------------------------------------------------------- training API

def test_multi_hot_gradient_matches_finite_differences():
    rng = np.random.default_rng(14)
    net = new_network(seed=8, feature_set="neurogo", scale=0.3)
    board, colour = random_board(5, 12, rng)
    inputs = net.encode(board, colour, rng.uniform(0.0, 1.0, (board.num_locs, 4)))
    targets = rng.uniform(0.0, 1.0, (board.num_locs, isn.N_OUTPUTS))
    mask = rng.uniform(0.0, 1.0, targets.shape) < 0.8
    grad = np.zeros(net.num_params)
    net.loss_and_gradient(inputs, targets, mask, grad)
    params = net.get_params()
    # Check the parameters of the inputs that are actually active, plus the explicit biases.
    used = sorted({int(i) for i in inputs.ravel() if i > isn.INPUT_OFF_BOARD_POINT})
    blocks = net.parameter_blocks()
    start, _, (features, num_inputs) = blocks["input"]
    candidates = [start + f * num_inputs + i for f in range(0, features, 5) for i in used[::3]]
    candidates += list(range(blocks["output_bias"][0], blocks["trivial_bias"][1]))
    epsilon = 1e-6
    for index in candidates:
        shifted = params.copy()
        shifted[index] += epsilon
        net.set_params(shifted)
        up = net.loss(inputs, targets, mask)
        shifted[index] -= 2 * epsilon
        net.set_params(shifted)
        down = net.loss(inputs, targets, mask)
        assert grad[index] == pytest.approx((up - down) / (2 * epsilon), rel=1e-5, abs=1e-6)


def test_multi_hot_inputs_are_validated():
    net = new_network(seed=1, feature_set="neurogo")
    board = Board(5)
    inputs = net.encode(board, BLACK, isn.prior_liberty_weights(board.num_locs))
    assert inputs.shape == (board.num_locs, net.max_active)
    net.forward(inputs)
    with pytest.raises(ValueError, match="2-D"):
        net.forward(inputs[:, 0])
    bad = inputs.copy()
    bad[board.loc(2, 2), 1] = 3                  # an isn14 input in a feature column
    with pytest.raises(ValueError, match="further inputs"):
        net.forward(bad)
    bad = inputs.copy()
    bad[0, 1] = 20                               # a feature on the border
    with pytest.raises(ValueError, match="border"):
        net.forward(bad)


# ------------------------------------------------------------------------------- rich signal

TWO_EYES = """
    . X . X O . .
    X X X X O . .
    O O O O O . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
"""


def test_rich_targets_on_a_diagram():
    board = load_board(TWO_EYES)
    targets, mask = isn.rich_targets(board, BLACK)
    names = {name: k for k, name in enumerate(isn.RICH_OUTPUT_NAMES)}

    def at(text, name):
        return targets[vertex(text, 7), names[name]]

    assert mask[vertex("A1", 7)].all() and not mask[0].any()
    assert at("A7", "eye_black") == at("C7", "eye_black") == 1.0
    assert at("F4", "eye_black") == at("A7", "eye_white") == 0.0
    # Black's stones and both eyes form one component with two eyes: all alive.
    assert at("B6", "alive_black") == at("A7", "alive_black") == at("D7", "alive_black") == 1.0
    assert at("E6", "alive_white") == at("F4", "alive_black") == 0.0
    assert at("D7", "connected_self_black") == 1.0 and at("E7", "connected_self_black") == 0.0
    assert at("D7", "connected_edges_black") == pytest.approx(2 / 3)     # C7 (eye) D6; not E7
    assert at("D7", "connected_corners_black") == pytest.approx(1 / 2)   # C6; not E6
    assert at("A5", "connected_edges_white") == pytest.approx(1 / 3)     # B5; not A6, A4
    assert at("F4", "connected_edges_white") == 0.0                      # empty: not connected
    # With White to move the pairs swap.
    white_frame, _ = isn.rich_targets(board, WHITE)
    assert np.array_equal(white_frame, isn.swap_rich_colours(targets))


def embed_territory_params(plain, rich, extra):
    """rich's parameters: plain's for the seven territory outputs, extra for the rich rows."""
    params = extra.copy()
    plain_blocks, rich_blocks = plain.parameter_blocks(), rich.parameter_blocks()
    source = plain.get_params()
    for name, (start, stop, shape) in plain_blocks.items():
        r_start, r_stop, r_shape = rich_blocks[name]
        block = params[r_start:r_stop].reshape(r_shape)
        if name in ("shortcut", "output", "output_bias"):
            block[:isn.N_OUTPUTS] = source[start:stop].reshape(shape)
        else:
            block[...] = source[start:stop].reshape(shape)
    return params


@pytest.mark.parametrize("feature_set", ["isn14", "neurogo"])
def test_values_come_from_the_territory_outputs_alone(feature_set):
    rng = np.random.default_rng(15)
    plain = new_network(seed=9, feature_set=feature_set, scale=0.4)
    rich = new_network(seed=10, feature_set=feature_set, scale=0.4, rich_signal=True)
    assert rich.num_outputs == isn.N_OUTPUTS + isn.N_RICH_OUTPUTS
    rich.set_params(embed_territory_params(plain, rich, rich.get_params()))
    board, colour = random_board(7, 20, rng)
    weights = rng.uniform(0.0, 1.0, (board.num_locs, 4))
    plain_outputs, _, plain_rewards, plain_total = plain.evaluate_board(board, colour, weights)
    rich_outputs, _, rich_rewards, rich_total = rich.evaluate_board(board, colour, weights)
    assert rich_outputs.shape == (board.num_locs, 17)
    assert np.array_equal(rich_outputs[:, :isn.N_OUTPUTS], plain_outputs)
    assert rich_total == plain_total and np.array_equal(rich_rewards, plain_rewards)
    moves = board.legal_moves(colour)
    assert np.array_equal(rich.successor_values(board, colour, weights, moves)[1],
                          plain.successor_values(board, colour, weights, moves)[1])
    # The recurrence reads the territory outputs only.
    assert np.array_equal(isn.liberty_weights(rich_outputs, colour),
                          isn.liberty_weights(plain_outputs, colour))


def test_rich_outputs_train_by_gradient_and_rotate_with_the_board():
    rng = np.random.default_rng(16)
    net = new_network(seed=11, rich_signal=True, scale=0.4)
    board, colour = random_board(5, 10, rng)
    inputs = net.encode(board, colour, rng.uniform(0.0, 1.0, (board.num_locs, 4)))
    territory, territory_mask = isn.final_targets(board, 0.4, colour)
    rich, rich_mask = isn.rich_targets(board, colour)
    targets = np.concatenate([territory, rich], axis=1)
    mask = np.concatenate([territory_mask, rich_mask], axis=1)
    grad = np.zeros(net.num_params)
    net.loss_and_gradient(inputs, targets, mask, grad)
    params = net.get_params()
    start, _, (outputs, num_inputs, orbits) = net.parameter_blocks()["shortcut"]
    rich_rows = [start + (o * num_inputs + i) * orbits + k for o in range(7, outputs)
                 for i in (isn.INPUT_EMPTY_POINT, isn.INPUT_BLACK_C1 + 2) for k in range(3)]
    for index in rich_rows[::2]:
        shifted = params.copy()
        shifted[index] += 1e-6
        net.set_params(shifted)
        up = net.loss(inputs, targets, mask)
        shifted[index] -= 2e-6
        net.set_params(shifted)
        down = net.loss(inputs, targets, mask)
        assert grad[index] == pytest.approx((up - down) / 2e-6, rel=1e-5, abs=1e-6)
    net.set_params(params)
    stride = board.stride
    weights = rng.uniform(0.0, 1.0, (stride, stride, 4))
    outputs, _, _, _ = net.evaluate_board(board, colour, weights.reshape(-1, 4))
    for image, weight_image, output_image in zip(symmetries(board_grid(board)), symmetries(weights),
                                                 symmetries(outputs.reshape(stride, stride, -1))):
        got, _, _, _ = net.evaluate_board(board_from_grid(image), colour,
                                          weight_image.reshape(-1, 4))
        assert np.allclose(got.reshape(stride, stride, -1), output_image, atol=1e-12)


def test_incremental_ladders_around_attackers_short_of_liberties():
    # The ladder reader records an attacking chain whole only while it has at most two liberties
    # (with three, no single move can put it in atari), and the escapes it sees without playing
    # them (surely_escapes) on the defender's side whole. Random stones around LADDER make
    # attackers short of liberties, captures and breakers; every successor must still equal a
    # full computation, including moves away from the ladder's block that flip its status.
    rng = np.random.default_rng(21)
    computer = F.BoardFeatures()
    c3 = vertex("C3", 9)
    slot = F.SLOT["ladder_defender_first"]
    flips_far_from_the_block = checked = 0
    while checked < 12:
        diagram = load_board(LADDER)
        for _ in range(int(rng.integers(3, 8))):
            row, col = int(rng.integers(0, 9)), int(rng.integers(0, 9))
            p = diagram.loc(row, col)
            colour = int(rng.choice([BLACK, WHITE]))
            if diagram.is_legal(p, colour) and diagram.liberties_if_played(p, colour) > 1:
                diagram.play(p, colour)
        if diagram.get(c3) != WHITE or computer.compute(diagram)[c3, slot] != 0:
            continue
        checked += 1
        block = set(diagram.chain(c3))
        near = block | {q for s in block for q in (s - 1, s + 1, s - 11, s + 11)}
        for colour in (BLACK, WHITE):
            successors = assert_successors_incremental(diagram, colour, computer)
            flips_far_from_the_block += sum(1 for move, slots in successors.items()
                                            if move not in near and slots[c3, slot] != 0)
    assert flips_far_from_the_block > 0
