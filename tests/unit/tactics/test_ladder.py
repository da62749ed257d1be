"""The ladder reader (engine/tactics/ladder.pyx) and its oracle (ladder_oracle.py, beside this
file): captured ladders, breakers, edge ladders, escape by capturing, the ko at the root, both
readers alike on each diagram, then the reader against the oracle on many random positions; the
oracle's depth bound."""
import numpy as np
import pytest

from engine.rules.board import BLACK, EMPTY, NO_LOC, PASS, Board
from engine.tactics import ladder
from tests.diagrams import LADDER, load_board, vertex, with_stones
from tests.unit.tactics import ladder_oracle


@pytest.fixture(params=["reader", "oracle"])
def ladder_captured(request):
    return ladder.ladder_captured if request.param == "reader" else ladder_oracle.ladder_captured


def read_with(reader, board, loc, attacker_moves_first, **options):
    """reader on board, checking that the board is left exactly as it was."""
    before = (str(board), board.hash, board.ko_loc, board.move_count)
    result = reader(board, loc, attacker_moves_first, **options)
    assert (str(board), board.hash, board.ko_loc, board.move_count) == before
    board.check_consistency()
    return result


@pytest.fixture
def read(ladder_captured):
    def read_diagram(diagram, stone, attacker_moves_first):
        board = load_board(diagram)
        return read_with(ladder_captured, board, vertex(stone, board.size), attacker_moves_first)
    return read_diagram


def test_ladder_is_captured(read):
    assert read(LADDER, "C3", attacker_moves_first=False)
    assert read(LADDER, "C3", attacker_moves_first=True)      # in atari: simply taken


def test_two_liberty_chain_is_captured_only_if_the_attacker_starts(read):
    extended = with_stones(LADDER, {"C4": "O"})
    assert read(extended, "C3", attacker_moves_first=True)
    assert not read(extended, "C4", attacker_moves_first=False)   # one more move gives 3 liberties


@pytest.mark.parametrize("breaker", ["E5", "F6", "G7", "H8"])
def test_white_stone_on_the_path_breaks_the_ladder(read, breaker):
    assert not read(with_stones(LADDER, {breaker: "O"}), "C3", attacker_moves_first=False)


@pytest.mark.parametrize("elsewhere", ["A9", "H2", "J5"])
def test_white_stone_off_the_path_does_not_break_it(read, elsewhere):
    assert read(with_stones(LADDER, {elsewhere: "O"}), "C3", attacker_moves_first=False)


def test_black_stone_on_the_path_does_not_help_white(read):
    assert read(with_stones(LADDER, {"G7": "X"}), "C3", attacker_moves_first=False)


# White B1 runs along the first line under black's ataris from the second line until the
# corner: an edge ladder (B2, C1; C2, D1; ... H2, J1; J2 captures).
EDGE_LADDER = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    X . . . . . . . .
    X . . . . . . . .
    X O . . . . . . .
"""


def test_edge_ladder_is_captured_at_the_corner(read):
    assert read(EDGE_LADDER, "B1", attacker_moves_first=True)
    assert not read(EDGE_LADDER, "B1", attacker_moves_first=False)   # B2 first: three liberties


def test_edge_ladder_breaker_on_the_second_line(read):
    assert not read(with_stones(EDGE_LADDER, {"G2": "O"}), "B1", attacker_moves_first=True)


def test_second_line_stone_dies_against_the_edge(read):
    # A2 in atari can only extend to A1, where it has a single liberty again.
    assert read("""
        . . . . .
        . . . . .
        X X . . .
        O X . . .
        . . . . .
    """, "A2", attacker_moves_first=False)


def test_defender_escapes_by_capturing_an_attacking_stone_in_atari(read):
    # Black C2 is in atari between white B2 and D2: white takes it at C1 instead of running.
    assert not read(with_stones(LADDER, {"B2": "O", "D2": "O"}), "C3", attacker_moves_first=False)
    # With C2 still having two liberties the ladder works.
    assert read(with_stones(LADDER, {"B2": "O"}), "C3", attacker_moves_first=False)


def test_ko_the_attacker_may_not_retake_is_not_a_capture(ladder_captured):
    board = load_board("""
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .
    """)
    board.play(vertex("C4", 5), BLACK)      # takes the ko: C4 has one liberty, barred to white
    assert not ladder_captured(board, vertex("C4", 5), attacker_moves_first=True)
    board.play(PASS, BLACK)                 # the pass lifts the ko
    assert ladder_captured(board, vertex("C4", 5), attacker_moves_first=True)


def test_the_oracles_depth_bound_leaves_a_long_ladder_unresolved():
    board = load_board(LADDER)
    stone = vertex("C3", 9)
    assert not read_with(ladder_oracle.ladder_captured, board, stone, False, max_depth=4)
    assert read_with(ladder_oracle.ladder_captured, board, stone, False, max_depth=40)


def test_chain_with_three_liberties_is_not_a_ladder(ladder_captured):
    board = load_board("""
        . . . . .
        . . . . .
        . X O . .
        . . . . .
        . . . . .
    """)
    assert not ladder_captured(board, vertex("C3", 5), True)
    assert not ladder_captured(board, vertex("C3", 5), False)


def test_bad_arguments(ladder_captured):
    board = load_board(LADDER)
    with pytest.raises(ValueError):
        ladder_captured(board, vertex("E5", 9))                 # empty point
    with pytest.raises(ValueError):
        ladder_captured(Board(5), 0)                            # the border
    with pytest.raises(ValueError):
        ladder_oracle.ladder_captured(board, vertex("C3", 9), max_depth=-1)


# ------------------------------------------------------------------------ against the oracle

def random_board(size, moves, rng):
    board, colour = Board(size), BLACK
    for _ in range(moves):
        legal = [m for m in board.legal_moves(colour) if not board.is_eye(m, colour)]
        if legal:
            board.play(legal[rng.integers(len(legal))], colour)
        colour = 3 - colour
    return board, colour


def take_a_ko(board, colour):
    """Plays colour's first move that leaves a ko point, if there is one."""
    for move in board.legal_moves(colour):
        board.play(move, colour)
        if board.ko_loc != NO_LOC:
            return
        board.undo()


def test_the_reader_agrees_with_the_oracle_on_random_positions():
    """Every block with one or two liberties, both sides first, ko points at the root included;
    13x13 for longer ladders and deeper escapes."""
    rng = np.random.default_rng(11)
    results, kos = [], 0
    for game in range(120):
        size = int(rng.choice([7, 9, 13]))
        board, colour = random_board(size, int(rng.integers(10, size * size)), rng)
        if game % 2:           # half the positions with a ko point at the root, where one exists
            take_a_ko(board, colour)
        kos += board.ko_loc != NO_LOC
        for p in board.points():
            if board.get(p) != EMPTY and board.liberty_count(p) <= 2:
                for attacker_first in (True, False):
                    expected = read_with(ladder_oracle.ladder_captured, board, p, attacker_first)
                    assert read_with(ladder.ladder_captured, board, p, attacker_first) == expected
                    results.append(expected)
    assert len(results) > 400 and 0.1 < np.mean(results) < 0.9
    assert kos >= 4
