"""GameState and Rules: captures, suicide, ko and superko, passes, undo, copy, handicap."""
import random
import subprocess

import pytest

from engine.rules.board import BLACK, PASS, WHITE, IllegalMove
from engine.rules.game import (INVERSE_SYMMETRY, SYMMETRIES, GameState, Rules,
                               fixed_handicap_points, symmetric_loc, symmetric_point)
from engine.tools.gtp_client import find_gnugo
from tests.diagrams import load_board, vertex, vertices


def game_from(diagram, to_move=BLACK, **rules):
    return GameState.from_board(load_board(diagram), to_move, Rules(**rules))


def play(game, moves):
    """Play space-separated GTP vertices (or "pass") alternately from the side to move."""
    for word in moves.split():
        game.play(vertex(word, game.size))


def assert_position(game, diagram):
    expected = load_board(diagram)
    assert str(game.board) == str(expected)
    assert game.board.hash == expected.hash
    game.board.check_consistency()


# A ko: black takes at C4 (capturing B4), white takes back at B4.
KO_POSITION = """
    . X O . .
    X O . O .
    . X O . .
    . . . . .
    . . . . .
"""


# ---------------------------------------------------------------------- captures

def test_single_capture_removes_the_stone_and_counts_it():
    game = game_from("""
        . . . . .
        . . O . .
        . O X . .
        . . O . .
        . . . . .
    """, to_move=WHITE)
    game.play(vertex("D3", 5))
    assert_position(game, """
        . . . . .
        . . O . .
        . O . O .
        . . O . .
        . . . . .
    """)
    assert game.board.captures(WHITE) == 1
    assert game.board.captures(BLACK) == 0
    assert game.to_move == BLACK
    assert game.history == [(WHITE, vertex("D3", 5))]


def test_one_move_captures_two_chains():
    game = game_from("""
        X . X X O
        O O O O .
        . . . . .
        . . . . .
        . . . . .
    """, to_move=WHITE)
    game.play(vertex("B5", 5))
    assert_position(game, """
        . O . . O
        O O O O .
        . . . . .
        . . . . .
        . . . . .
    """)
    assert game.board.captures(WHITE) == 3


def test_snapback():
    game = game_from("""
        . . X . .
        O O X . .
        X X . . .
        . . . . .
        . . . . .
    """)
    play(game, "A5 B5")              # black throws in, white takes the one stone
    assert game.board.captures(WHITE) == 1
    assert game.board.liberties(vertex("B5", 5)) == [vertex("A5", 5)]
    play(game, "A5")                 # and black takes back three
    assert_position(game, """
        X . X . .
        . . X . .
        X X . . .
        . . . . .
        . . . . .
    """)
    assert game.board.captures(BLACK) == 3


# ---------------------------------------------------------------------- suicide

SUICIDE_POSITION = """
    X . O . .
    O O . . .
    . . . . .
    . . . . .
    . . . . .
"""


def test_suicide_is_refused_by_default():
    game = game_from(SUICIDE_POSITION)
    before = str(game.board)
    with pytest.raises(IllegalMove) as refused:
        game.play(vertex("B5", 5))
    assert refused.value.reason == "suicide"
    assert str(game.board) == before and game.history == [] and game.to_move == BLACK
    assert not game.is_legal(vertex("B5", 5))
    assert vertex("B5", 5) not in game.legal_moves()


def test_multi_stone_suicide_removes_the_own_chain_when_allowed():
    game = game_from(SUICIDE_POSITION, suicide=True)
    assert game.is_legal(vertex("B5", 5))
    assert vertex("B5", 5) in game.legal_moves()
    game.play(vertex("B5", 5))
    assert_position(game, """
        . . O . .
        O O . . .
        . . . . .
        . . . . .
        . . . . .
    """)
    assert game.board.captures(WHITE) == 2
    assert game.to_move == WHITE
    game.undo()
    assert_position(game, SUICIDE_POSITION)
    assert game.board.captures(WHITE) == 0


@pytest.mark.parametrize("allowed", [False, True])
def test_single_stone_suicide_is_refused_under_both_rules(allowed):
    game = game_from("""
        . O . . .
        O . . . .
        . . . . .
        . . . . .
        . . . . .
    """, suicide=allowed)
    with pytest.raises(IllegalMove) as refused:
        game.play(vertex("A5", 5))
    assert refused.value.reason == "suicide"
    assert not game.is_legal(vertex("A5", 5))
    assert vertex("A5", 5) not in game.legal_moves()
    assert game.history == [] and game.board.captures(WHITE) == 0


@pytest.mark.parametrize("allowed", [False, True])
def test_capture_into_a_point_without_liberties_is_not_suicide(allowed):
    game = game_from(KO_POSITION, suicide=allowed)
    assert game.is_legal(vertex("C4", 5)) and vertex("C4", 5) in game.legal_moves()
    play(game, "C4")
    assert game.board.captures(BLACK) == 1


def test_occupied_point_is_refused():
    game = GameState(5)
    play(game, "C3")
    with pytest.raises(IllegalMove) as refused:
        game.play(vertex("C3", 5))
    assert refused.value.reason == "occupied"


# ---------------------------------------------------------------------- ko and superko

@pytest.mark.parametrize("ko", ["simple", "positional", "situational"])
def test_simple_ko_immediate_retake_is_refused(ko):
    game = game_from(KO_POSITION, ko=ko)
    play(game, "C4")                  # black takes the ko
    assert game.board.captures(BLACK) == 1
    with pytest.raises(IllegalMove) as refused:
        game.play(vertex("B4", 5))
    assert refused.value.reason == "ko"
    assert not game.is_legal(vertex("B4", 5))
    play(game, "E1 E2")               # a threat and an answer
    assert game.is_legal(vertex("B4", 5))
    play(game, "B4")                  # now white may take back
    assert game.board.captures(WHITE) == 1


def test_ko_retake_after_two_passes_is_superko_under_positional_rules():
    simple = game_from(KO_POSITION, ko="simple")
    positional = game_from(KO_POSITION, ko="positional")
    for game in (simple, positional):
        play(game, "C4 pass pass")    # the passes clear the board's ko point
    play(simple, "B4")
    assert_position(simple, KO_POSITION)
    with pytest.raises(IllegalMove) as refused:
        positional.play(vertex("B4", 5))
    assert refused.value.reason == "superko"
    assert len(positional.history) == 3 and positional.to_move == WHITE


# Three kos: black can take at C8 and G8, white at B2. Black C8, white B2, black G8, white B8,
# black C2, white H8 is a six-move cycle of captures, none an immediate retake.
TRIPLE_KO = """
    . X O . . . O X .
    X O . O . O . O X
    . X O . . . O X .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . X O . . . . . .
    X . X O . . . . .
    . X O . . . . . .
"""
TRIPLE_KO_CYCLE = "C8 B2 G8 B8 C2 H8"


@pytest.mark.parametrize("ko", ["positional", "situational"])
def test_triple_ko_cycle_is_stopped_by_superko(ko):
    game = game_from(TRIPLE_KO, ko=ko)
    *first_five, last = TRIPLE_KO_CYCLE.split()
    play(game, " ".join(first_five))
    assert game.board.is_legal(vertex(last, 9), WHITE)      # simple ko alone allows it
    assert not game.is_legal(vertex(last, 9))
    assert vertex(last, 9) not in game.legal_moves()
    with pytest.raises(IllegalMove) as refused:
        game.play(vertex(last, 9))
    assert refused.value.reason == "superko"
    assert game.board.hash != load_board(TRIPLE_KO).hash


def test_triple_ko_cycles_forever_under_simple_ko():
    game = game_from(TRIPLE_KO, ko="simple")
    start = load_board(TRIPLE_KO).hash
    for _ in range(3):
        play(game, TRIPLE_KO_CYCLE)
        assert game.position_hash() == start
    assert game.board.captures(BLACK) == 9 and game.board.captures(WHITE) == 9


# Two kos, black to take at C8, white at B2. Black C8, white B2, black passes, white B8 and
# black C2 bring back the starting stones, but with White to move instead of Black.
DOUBLE_KO = """
    . X O . . . . . .
    X O . O . . . . .
    . X O . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . X O . . . . . .
    X . X O . . . . .
    . X O . . . . . .
"""


def test_positional_and_situational_superko_differ_on_the_side_to_move():
    start = load_board(DOUBLE_KO).hash
    positional = game_from(DOUBLE_KO, ko="positional")
    situational = game_from(DOUBLE_KO, ko="situational")
    for game in (positional, situational):
        play(game, "C8 B2 pass B8")
    with pytest.raises(IllegalMove) as refused:
        positional.play(vertex("C2", 9))
    assert refused.value.reason == "superko"
    assert situational.is_legal(vertex("C2", 9))
    play(situational, "C2")
    assert situational.position_hash() == start and situational.to_move == WHITE


def test_rules_can_change_mid_game_and_superko_still_sees_the_whole_past():
    game = game_from(DOUBLE_KO, ko="situational")
    play(game, "C8 B2 pass B8")
    game.rules = Rules(ko="positional", komi=6.5)
    assert not game.is_legal(vertex("C2", 9))


# ---------------------------------------------------------------------- passes, undo, copy

def test_two_consecutive_passes_end_the_game():
    game = GameState(5)
    play(game, "pass")
    assert game.consecutive_passes == 1 and not game.is_over()
    play(game, "C3 pass")
    assert game.consecutive_passes == 1 and not game.is_over()
    play(game, "pass")
    assert game.consecutive_passes == 2 and game.is_over()
    game.undo()
    assert game.consecutive_passes == 1 and not game.is_over()


def test_play_with_an_explicit_colour_and_previous_hash():
    game = GameState(5)
    assert game.previous_hash() is None
    empty = game.position_hash()
    game.play(vertex("C3", 5), BLACK)
    after_first = game.position_hash()
    game.play(vertex("D3", 5), BLACK)               # GTP lets a colour move twice
    assert game.to_move == WHITE
    assert game.previous_hash() == after_first
    game.play(PASS, WHITE)
    assert game.previous_hash() == game.position_hash()
    game.undo()
    game.undo()
    assert game.previous_hash() == empty


def snapshot(game):
    board = game.board
    return (str(board), board.hash, board.ko_loc, board.captures(BLACK), board.captures(WHITE),
            game.to_move, game.consecutive_passes, list(game.history), game.previous_hash(),
            game.legal_moves(BLACK), game.legal_moves(WHITE), game.is_over())


def test_undo_restores_everything_move_by_move():
    game = game_from(TRIPLE_KO)
    moves = "C8 B2 G8 B8 C2 pass E5 pass pass D5 E4 D4 E3"
    snapshots = [snapshot(game)]
    for word in moves.split():
        play(game, word)
        snapshots.append(snapshot(game))
    while snapshots:
        assert snapshot(game) == snapshots.pop()
        game.board.check_consistency()
        if game.history:
            game.undo()
    with pytest.raises(IndexError, match="cannot undo"):
        game.undo()


def test_undo_removes_the_position_from_the_superko_record():
    game = game_from(KO_POSITION)
    play(game, "C4")
    game.undo()
    play(game, "C4")            # would be a repetition if the undone position were remembered
    assert game.history == [(BLACK, vertex("C4", 5))]


def test_superko_refusal_leaves_the_game_untouched():
    game = game_from(TRIPLE_KO)
    play(game, "C8 B2 G8 B8 C2")
    before = snapshot(game)
    with pytest.raises(IllegalMove):
        play(game, "H8")
    assert snapshot(game) == before
    game.board.check_consistency()


def test_copy_is_independent_and_can_undo_the_whole_game():
    game = game_from(TRIPLE_KO)
    play(game, "C8 B2 G8")
    twin = game.copy()
    assert snapshot(twin) == snapshot(game)
    play(twin, "B8")
    assert game.to_move == WHITE and len(game.history) == 3
    while twin.history:
        twin.undo()
    assert twin.board.hash == load_board(TRIPLE_KO).hash
    assert snapshot(game)[0] != snapshot(twin)[0]
    play(game, "B8 C2")
    assert not game.is_legal(vertex("H8", 9))


def test_random_games_undo_back_to_the_start_exactly():
    rng = random.Random(2024)
    for size in (5, 7, 9):
        game = GameState(size, Rules(ko=rng.choice(["simple", "positional", "situational"])))
        snapshots = [snapshot(game)]
        for _ in range(3 * size * size):
            moves = game.legal_moves()
            move = rng.choice(moves + [PASS]) if moves else PASS
            for illegal in set(game.board.points()) - set(moves):
                assert not game.is_legal(illegal)
            game.play(move)
            game.board.check_consistency()
            snapshots.append(snapshot(game))
        while game.history:
            assert snapshot(game) == snapshots.pop()
            game.undo()
            game.board.check_consistency()
        assert snapshot(game) == snapshots.pop() and not snapshots


def test_every_legal_move_is_accepted_and_every_other_refused():
    game = game_from(TRIPLE_KO)
    play(game, "C8 B2 G8 B8 C2")
    legal = set(game.legal_moves())
    for point in game.board.points():
        trial = game.copy()
        try:
            trial.play(point)
        except IllegalMove:
            assert point not in legal
        else:
            assert point in legal


# ---------------------------------------------------------------------- bad input

def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="ko rule"):
        Rules(ko="japanese")
    with pytest.raises(ValueError, match="scoring"):
        Rules(scoring="stones")
    with pytest.raises(ValueError, match="komi"):
        Rules(komi=float("nan"))
    with pytest.raises(ValueError, match="board size"):
        GameState(26)
    game = GameState(5)
    with pytest.raises(ValueError, match="colour"):
        game.play(vertex("C3", 5), 3)
    with pytest.raises(ValueError):
        game.play(0)                     # the padded border, not a point of the board
    assert game.history == []


# ---------------------------------------------------------------------- handicap

# Read from GNU Go 3.8 (`boardsize N`, `fixed_handicap K`), the GTP reference implementation.
GNUGO_FIXED_HANDICAP = {
    (7, 4): "C5 E5 C3 E3",
    (8, 4): "C6 F6 C3 F3",
    (9, 4): "C7 G7 C3 G3",
    (9, 5): "C7 G7 E5 C3 G3",
    (9, 9): "C7 E7 G7 C5 E5 G5 C3 E3 G3",
    (12, 4): "D9 J9 D4 J4",
    (13, 9): "D10 G10 K10 D7 G7 K7 D4 G4 K4",
    (19, 2): "Q16 D4",
    (19, 3): "D16 Q16 D4",
    (19, 4): "D16 Q16 D4 Q4",
    (19, 5): "D16 Q16 K10 D4 Q4",
    (19, 6): "D16 Q16 D10 Q10 D4 Q4",
    (19, 7): "D16 Q16 D10 K10 Q10 D4 Q4",
    (19, 8): "D16 K16 Q16 D10 Q10 D4 K4 Q4",
    (19, 9): "D16 K16 Q16 D10 K10 Q10 D4 K4 Q4",
}


@pytest.mark.parametrize("size,count", sorted(GNUGO_FIXED_HANDICAP))
def test_fixed_handicap_points_match_gnugo(size, count):
    points = fixed_handicap_points(size, count)
    assert len(points) == count
    assert set(points) == set(vertices(GNUGO_FIXED_HANDICAP[size, count], size))


def test_fixed_handicap_follows_the_pattern_above_gnugos_largest_board():
    # GNU Go 3.8 stops at 19x19; the spec's pattern goes on to 25x25.
    assert set(fixed_handicap_points(25, 9)) == set(vertices("D22 N22 W22 D13 N13 W13 D4 N4 W4", 25))
    assert set(fixed_handicap_points(20, 4)) == set(vertices("D17 R17 D4 R4", 20))
    with pytest.raises(ValueError):
        fixed_handicap_points(20, 5)


def test_fixed_handicap_order_starts_with_the_diagonal_corners():
    assert fixed_handicap_points(19, 2) == vertices("D4 Q16", 19)
    assert fixed_handicap_points(9, 5)[-1] == vertex("E5", 9)


@pytest.mark.parametrize("size,count", [(6, 2), (5, 4), (7, 5), (8, 5), (10, 9), (9, 1), (9, 10), (19, 0)])
def test_fixed_handicap_refuses_what_the_spec_does_not_define(size, count):
    with pytest.raises(ValueError):
        fixed_handicap_points(size, count)


@pytest.mark.external
@pytest.mark.skipif(find_gnugo() is None,
                    reason="GNU Go not installed (apt-get install gnugo): fixed_handicap not compared")
def test_fixed_handicap_agrees_with_gnugo_on_every_size():
    gnugo = find_gnugo()
    cases = [(size, count) for size in range(7, 20) for count in range(2, 10)]   # GNU Go: up to 19x19
    commands = []
    for size, count in cases:
        commands += [f"boardsize {size}", "clear_board", f"fixed_handicap {count}"]
    reply = subprocess.run([gnugo, "--mode", "gtp"], input="\n".join(commands + ["quit"]) + "\n",
                           capture_output=True, text=True, timeout=60).stdout
    answers = reply.strip().split("\n\n")[2::3]
    assert len(answers) == len(cases)
    for (size, count), answer in zip(cases, answers):
        if answer.startswith("?"):
            with pytest.raises(ValueError):
                fixed_handicap_points(size, count)
        else:
            expected = set(vertices(answer.lstrip("= "), size))
            assert set(fixed_handicap_points(size, count)) == expected, (size, count)


def test_place_handicap_puts_black_stones_and_gives_white_the_move():
    game = GameState(9)
    points = fixed_handicap_points(9, 4)
    game.place_handicap(points)
    assert sorted(game.board.stones(BLACK)) == sorted(points)
    assert game.to_move == WHITE
    assert game.history == [(BLACK, p) for p in points]
    assert game.consecutive_passes == 0
    play(game, "E5")
    assert game.to_move == BLACK
    while game.history:
        game.undo()
    assert game.board.stones(BLACK) == [] and game.to_move == BLACK


def test_place_handicap_refuses_bad_placements():
    game = GameState(9)
    with pytest.raises(ValueError, match="repeated"):
        game.place_handicap(vertices("C3 C3", 9))
    with pytest.raises(ValueError, match="pass"):
        game.place_handicap([vertex("C3", 9), PASS])
    with pytest.raises(ValueError):
        game.place_handicap([vertex("C3", 9), 0])
    with pytest.raises(ValueError, match="no handicap"):
        game.place_handicap([])
    assert game.history == [] and game.board.stones(BLACK) == []
    play(game, "pass E5")
    with pytest.raises(ValueError, match="board not empty"):
        game.place_handicap(vertices("C3 G7", 9))



# ---------------------------------------------------------------------- symmetries

def test_symmetries_are_the_eight_of_the_square_and_each_has_its_inverse():
    images = {symmetric_point(0, 1, 5, s) for s in range(SYMMETRIES)}
    assert images == {(0, 1), (0, 3), (4, 1), (4, 3), (1, 0), (3, 0), (1, 4), (3, 4)}
    for s in range(SYMMETRIES):
        for row in range(5):
            for col in range(5):
                assert symmetric_point(*symmetric_point(row, col, 5, s), 5,
                                       INVERSE_SYMMETRY[s]) == (row, col)
    assert symmetric_loc(PASS, 9, 3) == PASS


@pytest.mark.parametrize("symmetry", range(SYMMETRIES))
def test_a_transformed_game_is_the_game_mirrored_ko_and_superko_included(symmetry):
    game = game_from(TRIPLE_KO)
    *first_five, last = TRIPLE_KO_CYCLE.split()
    play(game, " ".join(first_five))
    mirrored = game.transformed(symmetry)
    mirrored.board.check_consistency()
    assert mirrored.to_move == game.to_move and len(mirrored.history) == 5
    expected = [[None] * 9 for _ in range(9)]
    for row in range(9):
        for col in range(9):
            new_row, new_col = symmetric_point(row, col, 9, symmetry)
            expected[new_row][new_col] = game.board.get(game.board.loc(row, col))
    assert [[mirrored.board.get(mirrored.board.loc(r, c)) for c in range(9)]
            for r in range(9)] == expected
    assert mirrored.board.captures(BLACK) == game.board.captures(BLACK) == 3
    # the superko refusal of the cycle's last move, and every other legal move, mirrored
    assert sorted(mirrored.legal_moves()) == \
        sorted(symmetric_loc(loc, 9, symmetry) for loc in game.legal_moves())
    assert not mirrored.is_legal(symmetric_loc(vertex(last, 9), 9, symmetry))
    assert str(game.transformed(symmetry).board) == str(mirrored.board)   # game unchanged


def test_a_transformed_game_keeps_a_set_up_ko_and_a_handicap_placement():
    board = load_board(KO_POSITION)
    board.play(vertex("C4", 5), BLACK)           # the ko is in the starting position
    ko = GameState.from_board(board, WHITE)
    retake = vertex("B4", 5)
    assert not ko.is_legal(retake)
    for symmetry in range(SYMMETRIES):
        mirrored = ko.transformed(symmetry)
        assert mirrored.history == [] and mirrored.board.captures(BLACK) == 1
        assert not mirrored.is_legal(symmetric_loc(retake, 5, symmetry))
        assert sorted(mirrored.legal_moves()) == \
            sorted(symmetric_loc(loc, 5, symmetry) for loc in ko.legal_moves())
    handicap = GameState(9)
    handicap.place_handicap(fixed_handicap_points(9, 3))
    play(handicap, "E5")
    mirrored = handicap.transformed(6)
    assert mirrored.to_move == BLACK and len(mirrored.history) == 4
    mirrored.undo()
    assert mirrored.to_move == WHITE
    assert sorted(mirrored.board.stones(BLACK)) == \
        sorted(symmetric_loc(loc, 9, 6) for loc in fixed_handicap_points(9, 3))
