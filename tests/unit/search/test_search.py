"""Monte-Carlo tree search: the pattern table, the playout policy on ASCII diagrams, the tree's
invariants, superko, budgets, reuse, determinism, and small problems the search must solve."""
import threading
import time

import numpy as np
import pytest

from engine.nets.evaluator import UniformEvaluator
from engine.play.search_player import SearchPlayer
from engine.rules.board import BLACK, NO_LOC, PASS, WHITE, Board
from engine.rules.coords import format_vertex, parse_vertex
from engine.rules.game import GameState, Rules
from engine.search import patterns, playout
from engine.search.tree import TreeSearch
from engine.tactics.ladder import ladder_captured


def point(board, vertex):
    return parse_vertex(vertex, board.size)


def vertices(board, locs):
    return {format_vertex(p, board.size) if p != PASS else "pass" for p in locs}


def loaded(diagram):
    board = Board.from_ascii(diagram)
    board.check_consistency()
    return board


# --- patterns -------------------------------------------------------------------------------------

def test_pattern_table_matches_the_shapes_in_every_orientation_and_colour():
    table = patterns.pattern_table()
    assert table.shape == (patterns.TABLE_SIZE,) and not table.flags.writeable
    hane = ("XOX",
            "...",
            "...")
    rotated = (".X.",
               "..O",
               ".X.")
    swapped = ("OXO",
               "...",
               "...")
    for rows in (hane, rotated, swapped):
        assert table[patterns.index_of(rows)] == 1, rows
    assert table[patterns.index_of(("...", "...", "..."))] == 0
    assert table[patterns.index_of(("X..", "...", "..."))] == 0


def test_pattern_table_marks_points_next_to_a_chain_in_atari():
    table = patterns.pattern_table()
    lone = ("...",
            "..O",
            "...")
    assert table[patterns.index_of(lone)] == 0
    assert table[patterns.index_of(lone, atari="E")] == 1


def test_edge_shapes_match_only_with_the_edge():
    table = patterns.pattern_table()
    assert table[patterns.index_of(("...",
                                    "...",
                                    "###"))] == 0
    # "edge, cut" with the edge on each side: the board's rotations read the same table
    for rows in patterns.orientations(("XOX",
                                       "O.X",
                                       "###")):
        assert table[patterns.index_of(rows)] == 1, rows


# --- the playout policy ---------------------------------------------------------------------------

def test_policy_captures_the_chain_the_last_move_left_in_atari():
    board = loaded("""
        . . X . .
        . X O . .
        . X O X .
        . . X . .
        . . . . .
    """)
    # White's last move C3 left C4-C3 in atari (liberty D4): Black takes it.
    moves = playout.policy_moves(board, BLACK, last_move=point(board, "C3"), samples=50)
    assert vertices(board, moves) == {"D4"}


def test_policy_escapes_from_atari_by_extending():
    board = loaded("""
        . . . . .
        . . . . .
        . O X O .
        . . O . .
        . . . . .
    """)
    # White's D3 left the black stone C3 in atari (liberty C4); C4 gives it three liberties.
    moves = playout.policy_moves(board, BLACK, last_move=point(board, "D3"), samples=50)
    assert vertices(board, moves) == {"C4"}


def test_policy_escapes_by_capturing_a_neighbour_in_atari_or_connecting_out():
    board = loaded("""
        . . . . .
        . . O . .
        . O X O X
        . . . X .
        . . . . .
    """)
    # White's B3 left C3 in atari (liberty C2); White's D3 is itself in atari (liberty D4).
    moves = playout.policy_moves(board, BLACK, last_move=point(board, "B3"), samples=100)
    assert vertices(board, moves) == {"D4", "C2"}


def test_policy_never_fills_its_own_eye():
    board = loaded("""
        . X . X .
        X X X X X
        . . . . .
        O O O O O
        . O . O .
    """)
    for colour, eyes in ((BLACK, {"A5", "C5", "E5"}), (WHITE, {"A1", "C1", "E1"})):
        chosen = set()
        for seed in range(40):
            chosen.add(playout.policy_move(board, colour, seed=seed))
        assert not vertices(board, chosen) & eyes, colour


def test_policy_avoids_self_atari_of_a_larger_chain():
    board = loaded("""
        . . O . .
        X X O . .
        O O O . .
        . . . . .
        . . . . .
    """)
    # A5 or B5 would leave the black chain A4-B4 with one liberty: never chosen.
    chosen = {playout.policy_move(board, BLACK, seed=seed) for seed in range(300)}
    assert not vertices(board, chosen) & {"A5", "B5"}
    assert len(chosen) > 5


# --- the policy's Fuego tactics (playout_tactics="fuego") ---------------------------------------

def fuego_moves(board, colour, last_move, samples=100, playout_tactics="fuego"):
    return vertices(board, playout.policy_moves(board, colour, last_move=point(board, last_move),
                                                samples=samples, playout_tactics=playout_tactics))


def mogo_moves(board, colour, last_move, samples=100):
    return vertices(board, playout.policy_moves(board, colour, last_move=point(board, last_move),
                                                samples=samples))


# White's D3 left C3 in atari. Extending at C4 gives two liberties (B4, C5), and White's atari
# at C5 drives it to the top-left edge: a ladder. With a black stone at B5 it breaks.
LADDER = """
      A B C D E F G
    7 . . . . . . . 7
    6 . . . . . . . 6
    5 . . . . . . . 5
    4 . . . O . . . 4
    3 . O X O . . . 3
    2 . . O . . . . 2
    1 . . . . . . . 1
      A B C D E F G
"""


def test_ladder_tactics_do_not_escape_into_a_ladder():
    board = loaded(LADDER)
    assert mogo_moves(board, BLACK, "D3") == {"C4"}
    assert fuego_moves(board, BLACK, "D3") == {"C4"}           # "fuego" reads no ladders
    assert "C4" not in fuego_moves(board, BLACK, "D3", samples=300,
                                   playout_tactics="fuego-ladders")


def test_ladder_tactics_escape_when_a_stone_breaks_the_ladder():
    board = loaded(LADDER)
    board.play(point(board, "B5"), BLACK)
    assert fuego_moves(board, BLACK, "D3", playout_tactics="fuego-ladders") == {"C4"}


def test_fuego_tactics_prefer_capturing_the_attacker_to_a_two_liberty_extension():
    board = loaded("""
          A B C D E
        5 . . . . . 5
        4 . . O X . 4
        3 . O X O X 3
        2 . O . . . 2
        1 . . . . . 1
          A B C D E
    """)
    # White's C4 left C3 in atari. D2 captures D3; C2 extends to two liberties only (C1, D2).
    assert mogo_moves(board, BLACK, "C4") == {"D2", "C2"}
    assert fuego_moves(board, BLACK, "C4") == {"D2"}
    assert fuego_moves(board, BLACK, "C4", playout_tactics="fuego-ladders") == {"D2"}


def test_fuego_tactics_atari_a_two_liberty_chain_that_cannot_run():
    board = loaded("""
          A B C D E
        5 . . . . . 5
        4 . . . . . 4
        3 . X X X . 3
        2 X O O X . 2
        1 . . . . . 1
          A B C D E
    """)
    # White's C2 made B2-C2 with two liberties, B1 and C1; an atari at either leaves it one way
    # out, which gives it two liberties at most.
    assert fuego_moves(board, BLACK, "C2") == {"B1", "C1"}


def test_fuego_tactics_atari_from_the_side_the_chain_cannot_run_to():
    board = loaded("""
          A B C D E
        5 . . . . . 5
        4 . . . . . 4
        3 . . X . . 3
        2 . X O . . 2
        1 . . . . . 1
          A B C D E
    """)
    # White's C2 has two liberties. Black's D2 drives it to the edge (C1: two liberties); C1
    # would let it out at D2 to three.
    assert fuego_moves(board, BLACK, "C2") == {"D2"}


def test_fuego_tactics_give_the_movers_two_liberty_chain_more_liberties():
    board = loaded("""
          A B C D E F
        6 . . . . . . 6
        5 . . . . . . 5
        4 . O O . . . 4
        3 O X X O . . 3
        2 . . . O . . 2
        1 . . O . . . 1
          A B C D E F
    """)
    # White's D3 left B3-C3 with two liberties: B2 gives it three (A2, B1, C2); C2 only one.
    assert fuego_moves(board, BLACK, "D3") == {"B2"}


def test_fuego_tactics_capture_next_to_the_movers_two_liberty_chain():
    board = loaded("""
          A B C D E F G
        7 . . . . . . . 7
        6 . . . . . . . 6
        5 . . . . . . . 5
        4 O O O O . . . 4
        3 X X X X O . . 3
        2 O O X . . . . 2
        1 . X . O . . . 1
          A B C D E F G
    """)
    # White's E3 left the black chain A3-D3 with two liberties, C1 and D2, neither of which gives
    # it a third. A1 takes the white A2-B2 in atari next to it, which the capture step, looking
    # only around E3, does not see.
    assert fuego_moves(board, BLACK, "E3") == {"A1"}


def test_fuego_tactics_play_the_middle_of_a_three_point_eye_space():
    board = loaded(STRAIGHT_THREE)
    # White's D2 closed the eye space A2-B2-C2: its middle kills.
    assert fuego_moves(board, BLACK, "D2") == {"B2"}
    bent = loaded("""
          A B C D E
        5 . . . . . 5
        4 X X X X . 4
        3 O O O X . 3
        2 . . O X . 2
        1 . O O X . 1
          A B C D E
    """)
    # White's C2 closed the bent three B2-A2-A1: its middle is the corner's A2.
    assert fuego_moves(bent, BLACK, "C2") == {"A2"}


def test_fuego_tactics_move_a_lone_self_atari_to_its_liberty():
    board = loaded("""
          A B C D E
        5 . O . . X 5
        4 O O O X . 4
        3 . O X X X 3
        2 O O X . X 2
        1 . O X X X 1
          A B C D E
    """)
    # Black may play only C5 and D5 (A5, A3, A1 are suicide, E4 and D2 its eyes). C5 is a lone
    # stone in atari for nothing; D5, its liberty, connects with three liberties.
    assert vertices(board, playout.policy_moves(board, BLACK)) == {"C5", "D5"}
    assert vertices(board, playout.policy_moves(board, BLACK, playout_tactics="fuego")) == {"D5"}


def test_reply_memory_keeps_the_winners_replies_and_forgets_the_losers():
    board = Board(9)
    c5, d4, e5, f6, g7 = (point(board, v) for v in ("C5", "D4", "E5", "F6", "G7"))
    memory = playout.ReplyMemory(board.num_locs)
    none = NO_LOC
    assert memory.reply(BLACK, None, None) == (none, none)
    # Black C5, White D4, Black E5, White pass, Black F6: Black won
    memory.learn_moves([c5, d4, e5, PASS, f6], BLACK, None, None, BLACK)
    assert memory.reply(WHITE, None, c5) == (none, none)        # the loser's replies: none
    assert memory.reply(BLACK, c5, d4) == (e5, e5)              # LGRF-2 and LGRF-1
    assert memory.reply(BLACK, e5, PASS) == (f6, f6)            # a pass is a previous move...
    assert memory.reply(WHITE, d4, e5) == (none, none)          # ...never a reply
    # the same replies in a game Black lost are forgotten; a reply that was not stored stays
    memory.learn_moves([c5, d4, e5], BLACK, None, None, WHITE)
    assert memory.reply(BLACK, c5, d4) == (none, none)
    assert memory.reply(WHITE, None, c5) == (d4, d4)            # White won this time
    memory.learn_moves([g7, d4, e5], BLACK, None, None, WHITE)
    assert memory.reply(BLACK, g7, d4) == (none, none)
    memory.learn_moves([c5, d4, g7], BLACK, None, None, 0)     # a draw teaches nothing
    assert memory.reply(BLACK, c5, d4) == (none, none)


def test_policy_plays_the_stored_reply_after_tactics_and_before_patterns():
    board = loaded("""
        . . . . . . .
        . . . . . . .
        . . . O . . .
        . . X X O . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
    e4, c5, f2, d3 = (point(board, v) for v in ("E4", "C5", "F2", "D3"))
    memory = playout.ReplyMemory(board.num_locs)
    memory.learn_moves([e4, f2], WHITE, None, None, BLACK)      # Black's F2 answered E4 and won
    assert vertices(board, playout.policy_moves(board, BLACK, last_move=e4, samples=30,
                                                replies=memory)) == {"F2"}
    # LGRF-2 first: the reply to (D3, E4)
    memory.learn_moves([d3, e4, c5], BLACK, None, None, BLACK)
    assert vertices(board, playout.policy_moves(board, BLACK, last_move=e4, move_before=d3,
                                                samples=30, replies=memory)) == {"C5"}
    # without an LGRF-2 reply (after G7, E4), the LGRF-1 reply to E4, which C5 replaced
    assert vertices(board, playout.policy_moves(board, BLACK, last_move=e4,
                                                move_before=point(board, "G7"), samples=30,
                                                replies=memory)) == {"C5"}
    # a stored reply that is no longer playable is passed over
    board.play(c5, WHITE)
    moves = playout.policy_moves(board, BLACK, last_move=e4, move_before=d3, samples=200,
                                 replies=memory)
    assert "C5" not in vertices(board, moves) and len(moves) > 1
    # an escape from atari comes before a stored reply
    atari = loaded("""
        . . . . .
        . . . . .
        . O X O .
        . . O . .
        . . . . .
    """)
    memory = playout.ReplyMemory(atari.num_locs)
    memory.learn_moves([point(atari, "D3"), point(atari, "A1")], WHITE, None, None, BLACK)
    assert vertices(atari, playout.policy_moves(atari, BLACK, last_move=point(atari, "D3"),
                                                samples=30, replies=memory)) == {"C4"}


@pytest.mark.parametrize("playout_tactics", playout.PLAYOUT_TACTICS)
def test_a_playout_ends_with_the_board_full_of_eyes_and_scores_tromp_taylor(playout_tactics):
    board = Board(9)
    margin, owner, moves = playout.playout_score(board, BLACK, komi=7.0, seed=3,
                                                 playout_tactics=playout_tactics)
    assert moves > 20
    on_board = [owner[p] for p in board.points()]
    assert all(v in (-1, 1) for v in on_board)            # no neutral point after a full playout
    assert margin == sum(on_board) - 7.0


def test_mean_ownership_averages_the_playouts_and_repeats_with_its_seed():
    # Black's wall and corner are safe; the white stone at B5 inside it has no room to live.
    board = loaded("""
        . . . X . .
        . O . X . .
        . . . X . .
        X X X X . .
        . . . . . .
        . . . . . .
    """)
    owned = playout.mean_ownership(board, 64, seed=5)
    assert owned.dtype == np.float64 and owned.shape == (board.num_locs,)
    assert np.array_equal(owned, playout.mean_ownership(board, 64, seed=5))
    assert all(owned[p] == 0 for p in range(board.num_locs) if p not in board.points())
    assert all(-1 <= owned[p] <= 1 for p in board.points())
    assert owned[point(board, "D6")] == 1.0          # a stone of the wall: never captured
    assert owned[point(board, "B5")] > 0.5           # the white stone dies in most playouts
    assert set(np.unique(playout.mean_ownership(board, 1, seed=9))) <= {-1.0, 0.0, 1.0}
    assert np.array_equal(playout.mean_ownership(board, 0), np.zeros(board.num_locs))


def test_area_count_on_a_diagram():
    board = loaded("""
        . X O .
        . X O .
        . X O .
        . X O .
    """)
    assert playout.area_count(board, 0.0) == 0
    assert playout.area_count(board, 7.0) == -7.0
    board.play(point(board, "D4"), BLACK)
    assert playout.area_count(board, 0.0) == 5      # Black: A, B and D4 (9); White: C (4); D1-D3 neutral


# --- the tree -------------------------------------------------------------------------------------

def searched(board, colour, simulations, **options):
    tree = TreeSearch(board.size, options.pop("komi", 0.5), seed=options.pop("seed", 1), **options)
    tree.set_root(board, colour, [board.hash])
    tree.run(simulations, stop_early=False)
    return tree


def test_tree_invariants_hold_after_a_search():
    tree = searched(Board(7), BLACK, 2000)
    tree.check_invariants()
    assert tree.root_visits == 2000 == tree.playouts
    children = tree.root_children()
    assert sum(c["visits"] for c in children) == 2000 - tree.node(0)["visits_at_expansion"]
    assert all(0 <= c["winrate"] <= 1 for c in children)
    assert children[0]["visits"] >= children[-1]["visits"]
    assert np.all(np.abs(tree.ownership()) <= 1)


def test_a_seeded_search_repeats_exactly_and_another_seed_differs():
    def summary(seed):
        return [(c["move"], c["visits"], c["winrate"], c["rave_visits"])
                for c in searched(Board(9), BLACK, 1500, seed=seed).root_children()]
    first, again, other = summary(5), summary(5), summary(6)
    assert first == again
    assert first != other


def test_last_good_reply_search_keeps_the_invariants_and_repeats_with_its_seed():
    def summary(seed):
        tree = searched(Board(9), BLACK, 1500, seed=seed, last_good_reply=True)
        tree.check_invariants()
        return [(c["move"], c["visits"], c["winrate"]) for c in tree.root_children()]
    first = summary(5)
    assert first == summary(5)
    assert first != summary(6)
    plain = searched(Board(9), BLACK, 1500, seed=5)
    assert first != [(c["move"], c["visits"], c["winrate"]) for c in plain.root_children()]
    assert plain.replies is None


def test_the_node_budget_stops_growth_without_failing():
    tree = searched(Board(9), BLACK, 3000, max_nodes=500)
    assert tree.num_nodes <= 500
    assert tree.root_visits == 3000
    tree.check_invariants()


def test_the_time_budget_holds():
    tree = TreeSearch(19, 7.5, seed=1)
    tree.set_root(Board(19), BLACK)
    started = time.perf_counter()
    done = tree.run(10 ** 9, max_seconds=0.3)
    elapsed = time.perf_counter() - started
    assert 0 < done < 10 ** 9
    assert elapsed < 0.3 + 0.25       # the clock is read every 16 simulations


def test_stop_early_when_the_best_move_cannot_change():
    board = loaded(STRAIGHT_THREE)
    tree = TreeSearch(5, 3.5, seed=1)
    tree.set_root(board, WHITE, [board.hash])
    done = tree.run(20000, stop_early=True)
    assert done < 20000
    assert format_vertex(tree.root_children()[0]["move"], 5) == "B2"


def test_moves_that_repeat_an_earlier_position_are_not_in_the_tree():
    board = Board(5)
    game = GameState(5, Rules(komi=0.5))
    banned = point(board, "C3")
    after = board.copy()
    after.play(banned, BLACK)
    tree = TreeSearch(5, 0.5, seed=1)
    tree.set_root(game.board, BLACK, game.seen_positions() | {after.hash})
    tree.run(100, stop_early=False)
    children = {c["move"] for c in tree.root_children()}
    assert banned not in children
    assert children == (set(game.legal_moves(BLACK)) - {banned}) | {PASS}


def test_simple_ko_is_respected_at_the_root():
    board = loaded("""
        . X O .
        X O . O
        . X O .
        . . . .
    """)
    game = GameState.from_board(board, BLACK, Rules(komi=0.5))
    game.play(point(board, "C3"), BLACK)          # takes the ko
    retake = point(board, "B3")
    assert not game.is_legal(retake, WHITE)
    tree = TreeSearch(4, 0.5, seed=1)
    tree.set_root(game.board, WHITE, game.seen_positions(), last_move=point(board, "C3"))
    tree.run(50, stop_early=False)
    assert retake not in {c["move"] for c in tree.root_children()}
    tree.check_invariants()


def test_tree_reuse_keeps_the_subtree_of_the_moves_played():
    tree = searched(Board(9), BLACK, 3000)
    best = tree.root_children()[0]
    game = GameState(9, Rules(komi=0.5))
    game.play(best["move"], BLACK)
    assert tree.advance([best["move"]], game.board, game.seen_positions())
    assert tree.root_visits == best["visits"]
    assert tree.root_colour == WHITE
    tree.check_invariants()
    tree.run(100, stop_early=False)
    tree.check_invariants()
    # a line the tree does not hold: a fresh tree
    game.play(PASS, WHITE)
    game.play(PASS, BLACK)
    assert not tree.advance([PASS, PASS], game.board, game.seen_positions(), passes=2) or \
        tree.root_visits > 0
    fresh = searched(Board(9), BLACK, 50)
    assert not fresh.advance([point(game.board, "A1"), point(game.board, "B1"),
                              point(game.board, "C1")], game.board, game.seen_positions())
    assert fresh.root_visits == 0 and fresh.num_nodes == 1
    assert fresh.root_colour == WHITE          # three moves after Black's root: White to move


def test_a_search_after_moves_played_by_hand_is_for_the_side_to_move():
    # A GoGui user plays a few moves by hand between two genmoves, of either colour: the kept
    # tree must follow them or start afresh with the right side to move.
    player = SearchPlayer(UniformEvaluator(), playouts=200, seed=3)
    game = GameState(9, Rules(komi=7.0))
    line = "E5 C3 G7 C7 G3 E3 E7 C5 G5 D4 F6 D6 F4 B4 H4"
    for i, text in enumerate(line.split()):
        if i % 3 == 0:
            analysis = player.search(game, game.to_move)
            assert player._owners[0].tree.root_colour == game.to_move
            assert all(game.is_legal(move) for move in analysis.moves if move != PASS)
        game.play(point(game.board, text))


def test_root_filter_restricts_the_root_moves():
    board = Board(5)
    tree = TreeSearch(5, 0.5, seed=1)
    tree.set_root(board, BLACK, [board.hash])
    permitted = np.zeros(board.num_locs + 1, dtype=np.uint8)
    allowed = {point(board, "A1"), point(board, "E5")}
    for p in allowed:
        permitted[p] = 1
    tree.set_root_filter(permitted)
    tree.run(300, stop_early=False)
    visited = {c["move"] for c in tree.root_children() if c["visits"] > 0}
    assert visited <= allowed
    with pytest.raises(ValueError):
        tree.set_root_filter(np.ones(3))


# --- problems the search must solve -----------------------------------------------------------

def best_move(board, colour, simulations, komi, seed=1, playout_tactics="mogo",
              last_good_reply=False):
    tree = TreeSearch(board.size, komi, seed=seed, playout_tactics=playout_tactics,
                      last_good_reply=last_good_reply)
    tree.set_root(board, colour, [board.hash])
    tree.run(simulations, stop_early=False)
    return format_vertex(tree.root_children()[0]["move"], board.size)


# White's group has a straight three of eye space (A2 B2 C2) and no outside liberty. Alive it
# has 11 points to Black's 14, so with komi 3.5 the group decides the game: the middle point
# kills it (Black to move) or makes its two eyes (White to move).
STRAIGHT_THREE = """
    . . . . .
    X X X X X
    O O O O X
    . . . O X
    O O O O X
"""

# A black chain of four stones in atari (liberty G6) in an otherwise even position.
CHAIN_IN_ATARI = """
    . . . . . . . . .
    . . . . . . . . .
    . . O O O O . . .
    . O X X X X . . .
    . . O O O O . . .
    . . . . . . . . .
    . X X . . . X X .
    . . . X . X . . .
    . . . . . . . . .
"""


@pytest.mark.parametrize("playout_tactics", playout.PLAYOUT_TACTICS)
@pytest.mark.parametrize("colour", [BLACK, WHITE])
@pytest.mark.parametrize("last_good_reply", [False, True])
def test_search_finds_the_vital_point_of_a_straight_three(colour, playout_tactics,
                                                          last_good_reply):
    assert best_move(loaded(STRAIGHT_THREE), colour, 3000, komi=3.5,
                     playout_tactics=playout_tactics, last_good_reply=last_good_reply) == "B2"


@pytest.mark.parametrize("playout_tactics", playout.PLAYOUT_TACTICS)
@pytest.mark.parametrize("colour", [BLACK, WHITE])
@pytest.mark.parametrize("last_good_reply", [False, True])
def test_search_captures_or_saves_a_chain_in_atari_on_9x9(colour, playout_tactics,
                                                          last_good_reply):
    board = loaded(CHAIN_IN_ATARI)
    move = best_move(board, colour, 3000, komi=7.0, playout_tactics=playout_tactics,
                     last_good_reply=last_good_reply)
    if colour == BLACK or move == "G6":
        assert move == "G6"
    else:
        # White's G5, G7 or H6 take the chain too: after Black's G6 it is caught in a ladder,
        # which ladder-reading playouts see
        board.play(point(board, move), WHITE)
        board.play(point(board, "G6"), BLACK)
        assert ladder_captured(board, point(board, "G6")), move


# Black to move: E4 captures, B7 escapes from atari to three liberties, J9 is a self-atari, D6
# completes a pattern next to White's stone in atari, A1 and B2 are far from every stone on the
# first and second lines, C4 is an ordinary move.
RULES_OF_THUMB = """
    . O . . . . . O .
    O X O . . . . . .
    . . . . . . . . .
    . . . . X . . . .
    . . . X O X . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
"""


def test_knowledge_prior_gives_each_child_the_rules_of_thumb_win_rate():
    board = loaded(RULES_OF_THUMB)
    tree = TreeSearch(9, 7.0, even_prior_visits=0, knowledge_prior_visits=10, seed=1)
    tree.set_root(board, BLACK, [board.hash])
    tree.run(1, stop_early=False)          # the first simulation expands the root
    root = tree.node(0)
    prior = {}
    for index in range(root["first_child"], root["first_child"] + root["num_children"]):
        child = tree.node(index)
        assert child["prior_visits"] == 10
        move = "pass" if child["move"] == PASS else format_vertex(child["move"], 9)
        prior[move] = round(child["prior_wins"] / child["prior_visits"], 6)
    assert prior == {**prior, "E4": 1.0, "B7": 1.0, "J9": 0.0, "D6": 0.6, "A1": 0.1, "B2": 0.3,
                     "C4": 0.4, "pass": 0.0}


def root_prior(tree, size):
    """{vertex: the root child's prior win rate} after the first simulation expanded the root."""
    tree.run(1, stop_early=False)
    root = tree.node(0)
    children = [tree.node(i) for i in range(root["first_child"],
                                            root["first_child"] + root["num_children"])]
    return {format_vertex(c["move"], size): round(c["prior_wins"] / c["prior_visits"], 6)
            for c in children if c["move"] != PASS}


def test_on_large_boards_the_knowledge_prior_favours_the_empty_third_and_fourth_lines():
    board = Board(15)
    board.play(parse_vertex("K10", 15), WHITE)
    board.play(parse_vertex("C3", 15), WHITE)
    tree = TreeSearch(15, 7.5, even_prior_visits=0, knowledge_prior_visits=10, seed=1)
    tree.set_root(board, BLACK, [board.hash])
    prior = root_prior(tree, 15)
    assert prior["C13"] == prior["D13"] == prior["M4"] == 0.7     # far from every stone
    assert prior["G7"] == 0.4                                     # the fifth line and beyond
    assert prior["K11"] == 0.4 and prior["L10"] == 0.4            # next to a stone: no rule
    assert prior["L11"] == prior["K12"] == 0.4                    # within distance 3 of it
    # the first and second lines: only near a stone (C3); the rest is left out of the tree
    assert prior["B2"] == prior["A3"] == prior["C1"] == prior["B5"] == prior["E2"] == 0.4
    assert not {"A1", "B6", "A5", "F1", "N2", "B13", "H1", "O8"} & set(prior)
    # below 15 lines every legal move stays, the far edge moves with their low prior
    board = Board(13)
    tree = TreeSearch(13, 7.5, even_prior_visits=0, knowledge_prior_visits=10, seed=1)
    tree.set_root(board, BLACK, [board.hash])
    prior = root_prior(tree, 13)
    assert len(prior) == 169 and prior["B2"] == 0.3 and prior["A1"] == 0.1 and prior["D4"] == 0.4


# Black owns the whole board; White's stone at A1 is dead. Counted as it stands the corner is
# nobody's and Black has 21 points to White's 1, so with komi 20.5 Black loses; with the dead stone
# off Black has all 25 and wins.
DEAD_STONE_IN_BLACKS_AREA = """
    . . X . .
    . . X . .
    X X X X X
    . . X . .
    O . X . .
"""


def test_two_passes_in_the_tree_play_on_so_dead_stones_are_taken_off():
    board = loaded(DEAD_STONE_IN_BLACKS_AREA)
    tree = TreeSearch(5, 20.5, seed=1)
    tree.set_root(board, BLACK, [board.hash], last_move=PASS, passes=1)
    only_pass = np.zeros(board.num_locs + 1, dtype=np.uint8)
    only_pass[-1] = 1
    tree.set_root_filter(only_pass)
    tree.run(400, stop_early=False)
    tree.check_invariants()
    pass_child = next(c for c in tree.root_children() if c["move"] == PASS)
    # counted as it stands this pass would lose every time
    assert pass_child["visits"] > 0 and pass_child["winrate"] > 0.5


# --- the player ---------------------------------------------------------------------------------

def test_search_player_plays_legal_moves_and_passes_after_a_won_pass():
    player = SearchPlayer(UniformEvaluator(), playouts=300, seed=1)
    game = GameState(5, Rules(komi=0.5))
    for _ in range(60):
        if game.is_over():
            break
        decision = player.choose(game, game.to_move)
        assert decision.move == PASS or game.is_legal(decision.move)
        if decision.move == "resign":
            break
        game.play(decision.move)
        game.board.check_consistency()
    assert game.is_over() or len(game.history) == 60


def test_search_player_logs_each_move_with_its_simulations(caplog):
    player = SearchPlayer(UniformEvaluator(), playouts=150, seed=1)
    game = GameState(5, Rules(komi=0.5))
    with caplog.at_level("DEBUG", logger="kosumi.search"):
        decision = player.choose(game, BLACK)
    line = next(r.getMessage() for r in caplog.records if "simulations in" in r.getMessage())
    assert line.startswith(f"B: {format_vertex(decision.move, 5)} (search: ")
    assert f"{decision.analysis.simulations} simulations in" in line


def test_search_player_passes_first_on_a_lost_count_only_when_no_move_has_a_chance():
    # Every point is settled and Black, 10 points to 15, cannot change the count: a stone in
    # White's area is captured for nothing, so Black passes (issue 44) rather than throw one in.
    board = loaded("""
        . X . X .
        X X X X X
        O O O O O
        . O . O .
        . O . O .
    """)
    game = GameState.from_board(board, BLACK, Rules(komi=0.5))
    player = SearchPlayer(UniformEvaluator(), playouts=300, seed=1, resign_threshold=None)
    decision = player.choose(game, BLACK)
    assert decision.move == PASS and "no move has a chance" in decision.reason
    # With the dame E4 open, Black (komi -5.5: 1.5 behind) wins by filling it: no pass.
    board = loaded("""
        . X . X .
        X X X X .
        O O O O O
        . O . O .
        . O . O .
    """)
    game = GameState.from_board(board, BLACK, Rules(komi=-5.5))
    decision = player.choose(game, BLACK)
    assert decision.move == parse_vertex("E4", 5), decision.reason


def test_dry_run_decides_what_the_real_call_decides():
    game = GameState(7, Rules(komi=0.5))
    player = SearchPlayer(UniformEvaluator(), playouts=400, seed=3)
    dry = player.choose(game, BLACK, dry_run=True)
    real = player.choose(game, BLACK)
    assert dry.move == real.move


def test_threads_add_their_root_statistics():
    player = SearchPlayer(UniformEvaluator(), playouts=800, threads=2, seed=1, search_prior="none")
    analysis = player.search(GameState(7, Rules(komi=0.5)), BLACK)
    assert 0 < analysis.simulations <= 800
    assert analysis.total_visits == analysis.simulations   # the roots expand at their first visit


def test_every_thread_asks_its_own_evaluator():
    class ThreadRecording(UniformEvaluator):
        instances = []

        def __init__(self):
            self.threads = set()
            ThreadRecording.instances.append(self)

        def twin(self):
            return ThreadRecording()

        def successor_values(self, state):
            self.threads.add(threading.get_ident())
            return super().successor_values(state)

    player = SearchPlayer(ThreadRecording(), playouts=600, threads=2, seed=1, prior_threshold=2)
    player.search(GameState(5, Rules(komi=0.5)), BLACK)
    asked = [instance.threads for instance in ThreadRecording.instances]
    assert len(asked) == 2 and all(len(threads) == 1 for threads in asked)
    assert asked[0] != asked[1]


def test_prior_function_feeds_the_evaluator_values_into_the_children():
    player = SearchPlayer(UniformEvaluator(), playouts=50, seed=1, prior_visits=30)
    analysis = player.search(GameState(5, Rules(komi=0.5)), BLACK)
    priors = [p for p in analysis.priors if p is not None]
    assert priors and abs(sum(priors) - 1.0) < 1e-6


def test_an_evaluator_failure_reaches_the_caller():
    class Exploding(UniformEvaluator):
        def successor_values(self, state):
            raise RuntimeError("boom")
    player = SearchPlayer(Exploding(), playouts=50, seed=1)
    with pytest.raises(RuntimeError, match="boom"):
        player.search(GameState(5, Rules(komi=0.5)), BLACK)


def test_the_evaluator_value_is_mixed_into_every_result_below_it():
    board = Board(5)
    num_locs = board.num_locs
    calls = []

    def prior(path, colour):
        calls.append((tuple(path), colour))
        win = np.full(num_locs + 1, 0.5)
        return win, np.full(num_locs + 1, 1.0 / (num_locs + 1)), 1.0   # Black always wins

    tree = TreeSearch(5, 0.5, seed=1, value_weight=1.0, net_prior_threshold=4)
    tree.set_prior_function(prior)
    tree.set_root(board, BLACK, [board.hash])
    tree.run(500, stop_early=False)
    assert tree.root_winrate == 1.0                        # only the evaluator's value counts
    assert calls[0] == ((), BLACK)                         # the root asks at once
    deeper = [path for path, _ in calls if path]
    assert deeper and all(colour == (BLACK if len(path) % 2 == 0 else WHITE)
                          for path, colour in calls)
    tree.check_invariants()
    node = tree.node(tree.root_children()[0]["index"])
    assert node["prior_visits"] == tree.net_prior_visits and node["prior_wins"] == 0.5 * node["prior_visits"]


def test_the_prior_steers_the_search_towards_the_evaluators_move():
    board = Board(7)
    favourite = point(board, "B2")                           # a poor move without the prior

    def prior(path, colour):
        win = np.full(board.num_locs + 1, 0.3)
        if not path:
            win[favourite] = 0.95
        return win, win / win.sum(), 0.5

    tree = TreeSearch(7, 7.5, seed=1, net_prior_visits=200)
    tree.set_prior_function(prior)
    tree.set_root(board, BLACK, [board.hash])
    tree.run(400, stop_early=False)
    assert tree.root_children()[0]["move"] == favourite
    without = searched(board, BLACK, 400, komi=7.5)
    assert without.root_children()[0]["move"] != favourite


def test_search_options_reach_the_tree_and_bad_values_are_refused(capsys):
    from engine.gtp.main import build_engine, build_parser
    parser = build_parser()
    engine = build_engine(parser.parse_args(["--evaluator", "uniform", "--search", "mcts",
                                             "--knowledge-prior", "10", "--policy", "none"]))
    assert engine.player.settings_for(9) == (True, False, 10) and engine.player.settings_for(19)[2] == 10
    with pytest.raises(SystemExit):
        parser.parse_args(["--search", "mcts", "--knowledge-prior", "-1"])
    assert "knowledge prior" in capsys.readouterr().err


def test_large_boards_search_with_rules_of_thumb_instead_of_the_nets_prior():
    from engine.gtp.main import build_engine, build_parser
    parser = build_parser()
    player = build_engine(parser.parse_args(["--evaluator", "uniform", "--search", "mcts",
                                             "--policy", "none"])).player
    assert player.settings_for(9) == (True, False, 0) and player.settings_for(12) == (True, False, 0)
    assert player.settings_for(13) == (False, False, 60) and player.settings_for(19) == (False, False, 60)
    player = build_engine(parser.parse_args(["--evaluator", "uniform", "--search", "mcts",
                                             "--search-prior", "net", "--policy", "none"])).player
    assert player.settings_for(19) == (True, False, 60)
    player = build_engine(parser.parse_args(["--evaluator", "uniform", "--search", "mcts",
                                             "--search-prior", "none", "--policy", "none"])).player
    assert player.settings_for(9) == (False, False, 0)
    # the trees follow the board: a 19x19 search asks the evaluator nothing
    calls = []

    class CountingEvaluator(UniformEvaluator):
        def successor_values(self, state, *args, **kwargs):
            calls.append(state.size)
            return super().successor_values(state, *args, **kwargs)

    player = SearchPlayer(CountingEvaluator(), playouts=50, seed=1)
    player.search(GameState(19), BLACK)
    assert calls == []
    player.search(GameState(9), BLACK)
    assert calls and set(calls) == {9}


def test_playout_tactics_option_reaches_the_tree_and_bad_names_are_refused(capsys):
    from engine.gtp.main import build_engine, build_parser
    parser = build_parser()
    assert parser.parse_args(["--search", "mcts"]).playout_tactics == "mogo"
    engine = build_engine(parser.parse_args(["--evaluator", "uniform", "--search", "mcts",
                                             "--playout-tactics", "fuego"]))
    assert engine.player.tree_options["playout_tactics"] == "fuego"
    with pytest.raises(SystemExit):
        parser.parse_args(["--search", "mcts", "--playout-tactics", "pachi"])
    assert "--playout-tactics" in capsys.readouterr().err
    assert TreeSearch(9, playout_tactics="fuego").playout_tactics == "fuego"
    assert not build_engine(parser.parse_args(["--evaluator", "uniform", "--search", "mcts"])) \
        .player.tree_options["last_good_reply"]
    engine = build_engine(parser.parse_args(["--evaluator", "uniform", "--search", "mcts",
                                             "--last-good-reply"]))
    assert engine.player.tree_options["last_good_reply"]
    with pytest.raises(ValueError, match="mogo, fuego"):
        TreeSearch(9, playout_tactics="pachi")


def test_free_handicap_without_a_standard_pattern_with_the_search_player():
    # the greedy placement reads the 1-ply values: a search's analysis ranks by visits
    import io
    from engine.gtp.main import build_engine, build_parser
    from engine.gtp.protocol import GtpLoop
    engine = build_engine(build_parser().parse_args(["--evaluator", "uniform", "--search", "mcts",
                                                     "--playouts", "50", "--policy", "none"]))
    session = GtpLoop(engine, io.BytesIO(b""), io.BytesIO())
    session.handle_line("boardsize 9\n")
    reply = session.handle_line("place_free_handicap 7\n")
    assert reply.startswith("= ") and len(reply[2:].split()) == 7, reply
