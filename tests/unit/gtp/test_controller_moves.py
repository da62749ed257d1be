"""GTP `play` takes the controller's moves as KataGo does: only an occupied point, a simple-ko
retake or a single-stone suicide is `illegal move`; a repetition of an earlier position (and a
multi-stone suicide) is played and logged, while kosumi's own moves, `is_legal` and the search
keep kosumi's rules (positional superko, no suicide).

The case replayed is the one that broke a match against GNU Go (which knows only simple ko):
kosumi answered `? illegal move` to `play w B1`, a move that repeated an earlier position.
Engines run with the uniform evaluator (an area count), never the shipped weights."""
import io
import logging

import pytest
from sgfmill import sgf

from engine.gtp.main import build_engine, build_parser
from engine.gtp.protocol import GtpLoop
from engine.rules.board import BLACK, EMPTY, WHITE, IllegalMove
from engine.rules.coords import format_vertex
from engine.rules.game import GameState, Rules
from tests.diagrams import load_board, vertex

UNIFORM = ["--evaluator", "uniform", "--seed", "1", "--no-resign"]
SEARCH = UNIFORM + ["--search", "mcts", "--playouts", "64"]

# Three kos: Black takes at C8 and C1, White at G4. Black C8, White G4, Black C1, White B8,
# Black H4, White B1 is a six-move cycle of captures, none an immediate retake: White's B1 brings
# back the starting position, Black to move, which positional superko forbids and simple ko
# (GNU Go's rule) allows. After it, Black's C8 and C1 would each repeat a position too.
TRIPLE_KO = """
    . X O . . . . . .
    X O . O . . . . .
    . X O . . . . . .
    . . . . . . . . .
    . . . . . . X O .
    . . . . . X . X O
    . . . . . . X O .
    . X O . . . . . .
    X O . O . . . . .
"""
CYCLE = ["b C8", "w G4", "b C1", "w B8", "b H4"]
REPEATING_MOVE = "w B1"
BLACK_REPEATS = ("C8", "C1")

# Black A1 joins the black chain A2 B2 B1, which then has no liberty and captures nothing.
MULTI_STONE_SUICIDE = """
    . . . . .
    . . . . .
    O O . . .
    X X O . .
    . X O . .
"""


def session(options=UNIFORM):
    engine = build_engine(build_parser().parse_args(options))
    return GtpLoop(engine, io.BytesIO(b""), io.BytesIO())


def ask(loop, line):
    """(success, text) of one command; the reply alone is on stdout, framed."""
    raw = loop.handle_line(line + "\n")
    assert raw.endswith("\n\n") and "\n\n" not in raw[:-2], raw
    return raw[0] == "=", raw[1:].strip()


def set_up(loop, diagram):
    """The diagram's stones as the controller's consecutive plays, komi 0. No stone is captured
    on the way: every chain of the diagram has a liberty, and so has every part of it."""
    board = load_board(diagram)
    assert ask(loop, f"boardsize {board.size}")[0] and ask(loop, "komi 0")[0]
    for colour, word in ((BLACK, "b"), (WHITE, "w")):
        for loc in board.stones(colour):
            ok, text = ask(loop, f"play {word} {format_vertex(loc, board.size)}")
            assert ok, text
    assert loop.engine.state.position_hash() == board.hash


def reach_the_repetition(loop):
    set_up(loop, TRIPLE_KO)
    for move in CYCLE:
        assert ask(loop, f"play {move}") == (True, "")


def test_play_w_b1_repeating_a_position_is_accepted_logged_and_is_legal_keeps_superko(caplog):
    loop = session()
    reach_the_repetition(loop)
    state = loop.engine.state
    start = load_board(TRIPLE_KO).hash
    assert ask(loop, f"is_legal {REPEATING_MOVE}") == (True, "0")       # kosumi's rule
    with caplog.at_level(logging.WARNING, logger="kosumi.gtp"):
        assert ask(loop, f"play {REPEATING_MOVE}") == (True, "")          # the controller's
    assert state.position_hash() == start and state.to_move == BLACK
    assert state.history[-1] == (WHITE, vertex("B1", 9))
    state.board.check_consistency()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["play w B1 breaks kosumi's rules (superko): played, as the controller asks"]
    for move in BLACK_REPEATS:
        assert ask(loop, f"is_legal b {move}") == (True, "0")


@pytest.mark.parametrize("options", [UNIFORM, SEARCH], ids=["1-ply", "search"])
def test_kosumis_own_moves_never_repeat_a_position_after_the_controllers_repetition(options,
                                                                                      caplog):
    loop = session(options)
    reach_the_repetition(loop)
    if options is SEARCH:
        # a tree for White's move, kept for reuse: the controller's repetition then arrives
        assert ask(loop, "kosumi-search w")[0]
    assert ask(loop, f"play {REPEATING_MOVE}")[0]
    state = loop.engine.state
    for number, colour in enumerate("bwbwbw"):
        seen = state.seen_positions()
        with caplog.at_level(logging.DEBUG, logger="kosumi.search"):
            ok, move = ask(loop, f"genmove {colour}")
        if options is SEARCH and number == 0:    # the kept tree was advanced over the repetition
            assert any(r.getMessage().startswith("tree reuse") for r in caplog.records)
        assert ok, move
        assert number > 0 or move.upper() not in BLACK_REPEATS
        if move != "pass":
            assert state.position_hash() not in seen, f"genmove {colour} {move} repeats"
        state.board.check_consistency()


def test_undo_of_the_repetition_restores_the_superko_records():
    loop = session()
    reach_the_repetition(loop)
    state = loop.engine.state
    before = (state.seen_positions(), state.position_hash(), state.to_move, tuple(state.history))
    assert ask(loop, f"play {REPEATING_MOVE}")[0]
    assert ask(loop, "undo") == (True, "")
    assert (state.seen_positions(), state.position_hash(), state.to_move,
            tuple(state.history)) == before
    assert ask(loop, f"is_legal {REPEATING_MOVE}") == (True, "0")
    assert ask(loop, f"play {REPEATING_MOVE}")[0]          # and the controller may play it again
    assert ask(loop, "undo")[0] and ask(loop, "undo")[0]   # past it and the cycle's last move
    assert state.to_move == BLACK and state.is_legal(vertex("H4", 9))


def test_printsgf_and_scoring_after_the_repetition(tmp_path):
    loop = session()
    reach_the_repetition(loop)
    assert ask(loop, f"play {REPEATING_MOVE}")[0]
    engine = loop.engine
    ok, text = ask(loop, "printsgf")
    assert ok
    game = sgf.Sgf_game.from_string(text)
    moves = [node.get_move() for node in game.get_main_sequence()][-6:]
    assert [colour for colour, _ in moves] == ["b", "w", "b", "w", "b", "w"]
    written = tmp_path / "repetition.sgf"
    assert ask(loop, f"printsgf {written}") == (True, "")
    again = session()
    assert ask(again, f"loadsgf {written}") == (True, "")
    assert again.engine.state.history == engine.state.history
    assert again.engine.state.position_hash() == engine.state.position_hash()
    ok, score = ask(loop, "final_score")
    assert ok and (score == "0" or score[:2] in ("B+", "W+"))


def test_a_multi_stone_suicide_by_the_controller_is_played_a_single_stone_one_refused():
    loop = session()
    set_up(loop, MULTI_STONE_SUICIDE)
    state = loop.engine.state
    assert ask(loop, "is_legal b A1") == (True, "0")
    assert ask(loop, "play b A1") == (True, "")
    for point in ("A1", "A2", "B2", "B1"):
        assert state.board.get(vertex(point, 5)) == EMPTY
    assert state.board.captures(WHITE) == 4
    state.board.check_consistency()
    assert ask(loop, "play w A2")[0] and ask(loop, "play w B1")[0]
    assert ask(loop, "play b A1") == (False, "illegal move")   # a single-stone suicide
    for _ in range(3):
        assert ask(loop, "undo")[0]
    assert state.board.get(vertex("A2", 5)) == BLACK and state.board.captures(WHITE) == 0


def test_tolerant_play_in_the_game_state_reports_the_broken_rule():
    game = GameState.from_board(load_board(MULTI_STONE_SUICIDE), BLACK, Rules())
    with pytest.raises(IllegalMove, match="suicide"):
        game.play(vertex("A1", 5))
    assert game.play(vertex("A1", 5), tolerant=True) == "suicide"
    assert game.play(vertex("E5", 5)) is None
    mirrored = game.transformed(3)          # replays the history, the suicide included
    assert mirrored.board.captures(WHITE) == 4
