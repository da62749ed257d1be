"""Benson's unconditional life: classic shapes, and a brute-force check that what it calls
pass-alive survives every sequence of opponent moves while its owner only passes."""
import random

import pytest

from engine.rules.board import BLACK, EMPTY, PASS, WHITE, Board, opponent
from engine.rules.game import pass_alive
from tests.diagrams import load_board, vertices


def test_two_separate_eyes_are_pass_alive_and_safe():
    board = load_board("""
        . X . X O .
        X X X X O .
        O O O O O .
        . . . . . .
        . . . . . .
        . . . . . .
    """)
    stones, safe = pass_alive(board, BLACK)
    assert stones == set(board.stones(BLACK))
    assert safe == set(vertices("A6 C6", 6))
    assert pass_alive(board, WHITE) == (set(), set())


def test_one_big_eye_is_not_pass_alive():
    board = load_board("""
        . . . X O .
        X X X X O .
        O O O O O .
        . . . . . .
        . . . . . .
        . . . . . .
    """)
    assert pass_alive(board, BLACK) == (set(), set())


def test_false_eye_is_not_an_eye():
    # D6 is false: white C5 cuts B5-C6 from D5-E6. The right chain has only D6, so it drops;
    # then D6 no longer counts for the left chain, which is left with A6 alone.
    board = load_board("""
        . X X . X O
        X X O X X O
        X X O X X O
        O O O O O O
        . . . . . .
        . . . . . .
    """)
    assert pass_alive(board, BLACK) == (set(), set())


def test_two_chains_sharing_their_eyes_are_both_pass_alive():
    # The lone stone C7 and the big chain around it share the eyes B7, D7 and C6.
    board = load_board("""
        X . X . X O .
        X X . X X O .
        X X X X X O .
        O O O O O O .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
    stones, safe = pass_alive(board, BLACK)
    assert stones == set(board.stones(BLACK))
    assert len({tuple(board.chain(p)) for p in stones}) == 2
    assert safe == set(vertices("B7 D7 C6", 7))


def test_dead_opponent_stone_inside_an_eye_does_not_spoil_it():
    # The eye C6-D6 holds a white stone; its empty point D6 is still a liberty of the chain.
    board = load_board("""
        . X O . X O
        X X X X X O
        O O O O O O
        . . . . . .
        . . . . . .
        . . . . . .
    """)
    stones, safe = pass_alive(board, BLACK)
    assert stones == set(board.stones(BLACK))
    assert safe == set(vertices("A6 C6 D6", 6))


def test_region_with_a_point_away_from_the_chain_is_not_vital():
    # A7 is an eye, but the region C7-E6 is not: D7 touches no black stone (a white group could
    # still live there). One eye is not enough.
    board = load_board("""
        . X . . . X O
        X X . . . X O
        X X X X X X O
        O O O O O O O
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
    assert pass_alive(board, BLACK) == (set(), set())


def test_both_colours_can_be_pass_alive_on_one_board():
    board = load_board("""
        . X . X O . O . O
        X X X X O O O O O
        . . . X O . . . .
        . . . X O . . . .
        . . . X O . . . .
        . . . X O . . . .
        . . . X O . . . .
        . . . X O . . . .
        . . . X O . . . .
    """)
    black, black_safe = pass_alive(board, BLACK)
    white, white_safe = pass_alive(board, WHITE)
    assert black == set(board.stones(BLACK)) and white == set(board.stones(WHITE))
    assert black_safe == set(vertices("A9 C9", 9))
    assert white_safe == set(vertices("F9 H9", 9))


def test_empty_board_and_lone_stones_have_nothing_alive():
    assert pass_alive(Board(9), BLACK) == (set(), set())
    board = load_board("""
        . . . . .
        . X . . .
        . . . O .
        . . . . .
        . . . . .
    """)
    assert pass_alive(board, BLACK) == (set(), set())
    assert pass_alive(board, WHITE) == (set(), set())


def test_bad_colour_is_refused():
    with pytest.raises(ValueError):
        pass_alive(Board(5), EMPTY)


def survives_any_attack(board, colour, stones, limit=100000):
    """True if no sequence of opponent moves (colour passing every time) removes any of stones.
    Only the opponent moves, so its stones never leave and the search is over sets of them."""
    attacker = opponent(colour)
    seen = set()

    def attacker_can_capture():
        if board.hash in seen:
            return False
        seen.add(board.hash)
        assert len(seen) <= limit, "position too open for the brute-force check"
        for move in board.legal_moves(attacker):
            board.play(move, attacker)
            try:
                if any(board.get(stone) != colour for stone in stones) or attacker_can_capture():
                    return True
            finally:
                board.undo()
        return False

    return not attacker_can_capture()


def random_endgame(size, rng, max_empty):
    """Random play that never fills its own single-point eyes, stopped at some point once at most
    max_empty points are empty (or when both sides pass)."""
    board = Board(size)
    colour, passes = BLACK, 0
    while passes < 2:
        empty = sum(1 for p in board.points() if board.get(p) == EMPTY)
        if empty <= max_empty and rng.random() < 0.3:
            break
        moves = [p for p in board.legal_moves(colour) if not board.is_eye(p, colour)]
        if moves:
            board.play(rng.choice(moves), colour)
            passes = 0
        else:
            board.play(PASS, colour)
            passes += 1
        colour = opponent(colour)
    return board.copy()


def test_pass_alive_chains_survive_every_opponent_sequence():
    rng = random.Random(11)
    checked = 0
    for i in range(200):
        board = random_endgame(5 + i % 2, rng, max_empty=12)
        for colour in (BLACK, WHITE):
            stones, safe = pass_alive(board, colour)
            for point in safe:
                assert board.get(point) != colour
            if stones:
                checked += 1
                assert survives_any_attack(board, colour, stones), f"{colour}\n{board}"
    assert checked >= 10     # the check must actually have met pass-alive chains
