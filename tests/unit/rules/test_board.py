"""The fast board: ASCII-diagram rule tests, undo, and a random stress test with check_consistency()."""
import random

import pytest

from engine.rules.board import BLACK, EMPTY, PASS, WHITE, Board, IllegalMove
from tests.diagrams import load_board as board_from


def point(board, vertex):
    """'C3' style vertex on this board (row 1 = bottom line)."""
    from engine.rules.coords import parse_vertex
    return parse_vertex(vertex, board.size)


def play(board, colour, vertex):
    board.play(point(board, vertex), colour)
    board.check_consistency()


def assert_position(board, diagram):
    assert str(board) == str(Board.from_ascii(diagram)), f"\n{board}"


def test_ascii_round_trip_with_coordinates():
    board = board_from("""
        . X O .
        X O . O
        . X O .
        . . . .
    """)
    assert str(Board.from_ascii(str(board))) == str(board)
    assert "\n\n" not in str(board)
    assert board.get(point(board, "B4")) == BLACK
    assert board.get(point(board, "C4")) == WHITE
    assert board.get(point(board, "A1")) == EMPTY


def test_from_ascii_refuses_bad_diagrams():
    with pytest.raises(ValueError, match="not square"):
        Board.from_ascii(". . .\n. . .")
    with pytest.raises(ValueError, match="unexpected"):
        Board.from_ascii("Q .\n. .")
    with pytest.raises(ValueError, match="without liberties"):
        Board.from_ascii("X O\nO .")


def test_size_limits():
    Board(2)
    Board(25)
    for size in (1, 26, 0, -3):
        with pytest.raises(ValueError):
            Board(size)


def test_single_capture_and_counts():
    board = board_from("""
        . . . . .
        . . X . .
        . X O . .
        . . X . .
        . . . . .
    """)
    play(board, BLACK, "D3")
    assert_position(board, """
        . . . . .
        . . X . .
        . X . X .
        . . X . .
        . . . . .
    """)
    assert board.captures(BLACK) == 1 and board.captures(WHITE) == 0


def test_capture_of_several_chains_at_once():
    board = board_from("""
        X O . O X
        . X O X .
        . . X . .
        . . . . .
        . . . . .
    """)
    play(board, BLACK, "C5")  # takes the last liberty of three white chains
    assert_position(board, """
        X . X . X
        . X . X .
        . . X . .
        . . . . .
        . . . . .
    """)
    assert board.captures(BLACK) == 3


def test_snapback():
    board = board_from("""
        . . . . .
        . . . . .
        . O O O .
        O X X X O
        O X . . O
    """)
    play(board, WHITE, "C1")  # throw-in: white C1 is in atari at once
    play(board, BLACK, "D1")  # black takes it ...
    assert board.captures(BLACK) == 1 and board.ko_loc == -2  # a five-stone chain made it: no ko
    assert board.liberties(point(board, "B2")) == [point(board, "C1")]
    play(board, WHITE, "C1")  # ... and white takes back five stones
    assert board.captures(WHITE) == 5
    assert_position(board, """
        . . . . .
        . . . . .
        . O O O .
        O . . . O
        O . O . O
    """)


def test_single_stone_suicide_refused_and_allowed():
    board = board_from("""
        . X .
        X . .
        . . .
    """)
    corner = point(board, "A3")
    assert not board.is_legal(corner, WHITE)
    with pytest.raises(IllegalMove) as refused:
        board.play(corner, WHITE)
    assert refused.value.reason == "suicide"
    assert board.is_legal(corner, BLACK)
    assert board.is_legal(corner, WHITE, allow_suicide=True)


def test_multi_stone_suicide_when_allowed_removes_own_chain():
    board = board_from("""
        . O X .
        O X . .
        X . . .
        . . . .
    """)
    move = point(board, "A4")  # would join B4 and A3 into a white chain with no liberty
    assert not board.is_legal(move, WHITE)
    board.play(move, WHITE, allow_suicide=True)
    board.check_consistency()
    assert_position(board, """
        . . X .
        . X . .
        X . . .
        . . . .
    """)
    assert board.captures(BLACK) == 3
    assert board.empty_points == 16 - len(board.stones(BLACK)) == 13
    board.undo()
    board.check_consistency()
    assert board.get(point(board, "B4")) == WHITE and board.get(move) == EMPTY
    assert board.empty_points == 16 - len(board.stones(BLACK)) - len(board.stones(WHITE)) == 11


def test_capture_is_not_suicide():
    board = board_from("""
        . X O .
        X O . .
        O . . .
        . . . .
    """)
    assert board.is_legal(point(board, "A4"), WHITE)
    play(board, WHITE, "A4")
    assert board.get(point(board, "B4")) == EMPTY and board.get(point(board, "A3")) == EMPTY


def test_simple_ko_and_its_release():
    board = board_from("""
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .
    """)
    play(board, BLACK, "C4")  # captures B4
    ko_point = point(board, "B4")
    assert board.ko_loc == ko_point
    with pytest.raises(IllegalMove) as refused:
        board.play(ko_point, WHITE)
    assert refused.value.reason == "ko"
    assert board.is_legal(ko_point, BLACK)  # the ko binds only the side that was captured
    play(board, WHITE, "E1")  # a ko threat elsewhere
    play(board, BLACK, "E2")
    assert board.is_legal(ko_point, WHITE)
    play(board, WHITE, "B4")  # retake
    assert board.ko_loc == point(board, "C4")


def test_pass_clears_ko():
    board = board_from("""
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .
    """)
    play(board, BLACK, "C4")
    board.play(PASS, WHITE)
    board.play(PASS, BLACK)
    assert board.is_legal(point(board, "B4"), WHITE)


def test_occupied():
    board = board_from("X .\n. .")
    with pytest.raises(IllegalMove) as refused:
        board.play(point(board, "A2"), WHITE)
    assert refused.value.reason == "occupied"


def test_liberties_queries_and_eyes():
    board = board_from("""
        . X . X .
        X X X X X
        . . . . .
        O O . . .
        . O . . .
    """)
    chain = point(board, "B4")
    assert len(board.chain(chain)) == 7
    assert board.liberties(chain) == sorted(point(board, v) for v in
                                            ["A5", "C5", "E5", "A3", "B3", "C3", "D3", "E3"])
    assert board.liberty_count(chain) == 8
    assert board.is_eye(point(board, "C5"), BLACK)
    assert not board.is_eye(point(board, "C5"), WHITE)
    assert board.is_eye(point(board, "A1"), WHITE)
    assert board.liberties_if_played(point(board, "C2"), WHITE) == 6  # joins A2 B2 B1: A1 A3 B3 C1 C3 D2


def test_false_eye_by_diagonals():
    board = board_from("""
        . X O . .
        X . X . .
        O X . . .
        . . . . .
        . . . . .
    """)
    # B4 has black on all four sides; diagonals A5 (empty), C5 (white), A3 (white), C3 (empty):
    # two opposing diagonals inside the board make it false.
    assert not board.is_eye(point(board, "B4"), BLACK)
    board = board_from("""
        . X . . .
        X . X . .
        . X . . .
        . . . . .
        . . . . .
    """)
    assert board.is_eye(point(board, "B4"), BLACK)
    edge = board_from("""
        X . X O .
        . X . . .
        . . . . .
        . . . . .
        . . . . .
    """)
    # B5 on the edge: no opposing diagonal -> eye; one (white C4) already makes it false.
    assert edge.is_eye(point(edge, "B5"), BLACK)
    edge.play(point(edge, "C4"), WHITE)
    assert not edge.is_eye(point(edge, "B5"), BLACK)


def test_undo_restores_everything_including_hash():
    board = board_from("""
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .
    """)
    before = (str(board), board.hash, board.ko_loc, board.captures(BLACK), board.captures(WHITE))
    play(board, BLACK, "C4")
    assert board.hash != before[1]
    board.undo()
    board.check_consistency()
    assert (str(board), board.hash, board.ko_loc, board.captures(BLACK), board.captures(WHITE)) == before
    with pytest.raises(IndexError):
        board.undo()


def test_hash_is_position_function():
    a = Board(5)
    b = Board(5)
    for colour, vertex in [(BLACK, "A1"), (WHITE, "B2"), (BLACK, "C3")]:
        a.play(point(a, vertex), colour)
    for colour, vertex in [(BLACK, "C3"), (WHITE, "B2"), (BLACK, "A1")]:
        b.play(point(b, vertex), colour)
    assert a.hash == b.hash
    assert Board(5).hash == 0


def test_copy_is_independent():
    board = board_from(". X .\nX . .\n. . .")
    other = board.copy()
    other.check_consistency()
    other.play(point(other, "C1"), WHITE)
    assert board.get(point(board, "C1")) == EMPTY
    assert other.move_count == 1 and board.move_count == 0
    assert board.copy().hash == board.hash


def test_random_stress_with_consistency_after_every_move_and_undo():
    rng = random.Random(20261122)
    for size in (5, 7, 9, 13, 19):
        for _ in range(4):
            board = Board(size)
            colour = BLACK
            snapshots = []
            for _ in range(size * size * 2):
                moves = board.legal_moves(colour)
                allow_suicide = rng.random() < 0.1
                if allow_suicide:
                    moves = board.legal_moves(colour, allow_suicide=True)
                move = rng.choice(moves) if moves and rng.random() > 0.03 else PASS
                snapshots.append((str(board), board.hash, board.ko_loc))
                board.play(move, colour, allow_suicide=allow_suicide)
                board.check_consistency()
                colour = BLACK + WHITE - colour
            while snapshots:
                board.undo()
                board.check_consistency()
                expected = snapshots.pop()
                assert (str(board), board.hash, board.ko_loc) == expected


def test_playout_ends_and_keeps_board_consistent():
    for size in (5, 9, 19):
        board = Board(size)
        limit = size * size * 4
        moves = board.playout(BLACK, max_moves=limit, seed=7)
        board.check_consistency()
        assert 0 < moves < limit, "a random playout that never fills its own eyes ends by passes"
        for colour in (BLACK, WHITE):  # ended by two passes: nothing left but own eyes
            assert all(board.is_eye(p, colour) or not board.is_legal(p, colour)
                       for p in board.points() if board.get(p) == EMPTY)


