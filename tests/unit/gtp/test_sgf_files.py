"""loadsgf and printsgf on SGF files written in the shapes real programs produce (tests/sgf/):
Cgoban 1 (FF[3], handicap in the second node, tt passes, PL[2] for White), KGS's CGoban 3, GoGui,
Sabaki (with variations), a problem collection (setup in the second node, PL), stones added and
removed mid-game, a positional-superko repetition played under simple ko, a file missing its
final `)`. Every refusal says why.

Every position is checked against an independent replay with sgfmill's own board (setup
overwrites, moves capture), against GNU Go's loadsgf where GNU Go is installed, and after a
printsgf round trip through kosumi, sgfmill and GNU Go."""
import io
import re

import pytest
from sgfmill import boards, sgf

from engine.gtp.main import build_engine, build_parser
from engine.gtp.protocol import GtpLoop
from engine.rules.board import BLACK, PASS, WHITE
from engine.rules.coords import format_vertex, from_sgfmill
from engine.tools.gtp_client import GtpClient, find_gnugo
from tests.paths import SGF, TESTS

CORPUS = SGF
GOOD_FILES = sorted(p.name for p in CORPUS.glob("*.sgf")
                    if p.name not in {"size27.sgf", "rectangular.sgf", "setup_without_liberties.sgf",
                                      "two_moves_in_one_node.sgf"})
GNUGO = find_gnugo()
needs_gnugo = pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed (apt-get install gnugo)")
# GNU Go 3.8 ignores AE (it keeps the stones the file removes), so this file is compared with the
# SGF specification's position (sgfmill's replay) only.
GNUGO_IGNORES_AE = {"stones_added_mid_game.sgf"}


def session():
    engine = build_engine(build_parser().parse_args(["--evaluator", "uniform", "--seed", "1"]))
    return GtpLoop(engine, io.BytesIO(b""), io.BytesIO())


def ask(loop, line):
    raw = loop.handle_line(line + "\n")
    assert raw.endswith("\n\n"), raw
    return raw[0] == "=", raw[1:].strip()


def load(loop, name, *rest):
    ok, text = ask(loop, " ".join([f"loadsgf {CORPUS / name}", *map(str, rest)]))
    assert ok, text
    loop.engine.state.board.check_consistency()
    return loop.engine


def stones_of(engine):
    board = engine.state.board
    return {colour: sorted(format_vertex(p, engine.size) for p in board.stones(colour))
            for colour in (BLACK, WHITE)}


def sgfmill_position(path, moves_wanted=None):
    """Stones and side to move by sgfmill's board: setup (AB/AW/AE) overwrites, moves capture.
    Independent of kosumi's loader."""
    data = path.read_bytes()
    if path.name == "missing_final_paren.sgf":
        data = data.rstrip() + b")"
    game = sgf.Sgf_game.from_bytes(data)
    size = game.get_size()
    board = boards.Board(size)
    to_move, played = "b", 0
    for node in game.get_main_sequence():
        black, white, empty = node.get_setup_stones()
        if black or white or empty:
            board.apply_setup(black, white, empty)
        if node.has_property("PL"):     # Cgoban 1 writes 1 and 2 for B and W
            to_move = {"1": "b", "2": "w"}.get(node.get_raw("PL").decode()) or node.get("PL")
        colour, point = node.get_move()
        if colour is None:
            continue
        if moves_wanted is not None and played == moves_wanted:
            to_move = colour
            break
        if point is not None:
            board.play(*point, colour)
        played += 1
        to_move = "w" if colour == "b" else "b"
    stones = {BLACK: [], WHITE: []}
    for colour, point in board.list_occupied_points():
        stones[BLACK if colour == "b" else WHITE].append(format_vertex(from_sgfmill(point, size), size))
    return {c: sorted(v) for c, v in stones.items()}, BLACK if to_move == "b" else WHITE


@pytest.mark.parametrize("name", GOOD_FILES)
def test_every_corpus_file_loads_to_the_position_sgfmill_replays(name):
    engine = load(session(), name)
    stones, to_move = sgfmill_position(CORPUS / name)
    assert stones_of(engine) == stones
    assert engine.state.to_move == to_move
    assert engine.state.rules.ko == "positional" and not engine.state.rules.suicide


@pytest.mark.parametrize("name", ["gogui_9x9.sgf", "problem_setup_second_node.sgf",
                                  "cgoban2_handicap_ff3.sgf", "stones_added_mid_game.sgf"])
@pytest.mark.parametrize("number", [1, 2, 7, 41, 43, 500])
def test_a_move_number_counts_moves_not_nodes(name, number):
    engine = load(session(), name, number)
    stones, to_move = sgfmill_position(CORPUS / name, moves_wanted=number - 1)
    assert stones_of(engine) == stones
    assert engine.state.to_move == to_move


def test_cgoban_handicap_in_the_second_node_with_ff3_passes():
    engine = load(session(), "cgoban2_handicap_ff3.sgf")
    assert engine.handicap_stones == 3 and engine.komi == 0.5 and engine.scoring == "territory"
    assert engine.state.history[-2:] == [(BLACK, PASS), (WHITE, PASS)]
    engine = load(session(), "cgoban2_handicap_ff3.sgf", 1)
    assert stones_of(engine)[BLACK] == ["D16", "D4", "Q16"] and engine.state.to_move == WHITE
    assert len(engine.state.history) == 3       # handicap stones: undo takes them back one by one


def test_kgs_komi_rules_and_handicap_in_the_root():
    engine = load(session(), "kgs_cgoban3.sgf")
    assert engine.komi == 0.5 and engine.scoring == "territory" and engine.handicap_stones == 2
    assert engine.state.history[-1] == (WHITE, PASS)


def test_problem_with_setup_in_the_second_node_and_pl():
    loop = session()
    engine = load(loop, "problem_setup_second_node.sgf", 1)
    assert engine.state.to_move == WHITE and engine.handicap_stones == 0
    assert len(stones_of(engine)[BLACK]) == 8 and len(stones_of(engine)[WHITE]) == 9
    assert ask(loop, "undo") == (False, "cannot undo")      # the setup is the start
    assert ask(loop, "genmove w")[0]


def test_vertex_form_stops_before_the_first_move_there():
    game = sgf.Sgf_game.from_bytes((CORPUS / "gogui_9x9.sgf").read_bytes())
    moves = [node.get_move() for node in game.get_main_sequence()[1:]]
    for index in (0, 5, 30):
        colour, point = moves[index]
        vertex = format_vertex(from_sgfmill(point, 9), 9)
        first = next(i for i, (_, p) in enumerate(moves) if p == point)
        engine = load(session(), "gogui_9x9.sgf", vertex.lower())
        assert len(engine.state.history) == first
        assert engine.state.to_move == (BLACK if moves[first][0] == "b" else WHITE)
    never = next(format_vertex(from_sgfmill((row, col), 9), 9) for row in range(9)
                 for col in range(9) if (row, col) not in {p for _, p in moves})
    engine = load(session(), "gogui_9x9.sgf", never)           # no move there: the whole game
    assert len(engine.state.history) == len(moves)


def test_a_superko_repetition_under_simple_ko_is_replayed_and_play_goes_on_under_superko():
    loop = session()
    engine = load(loop, "superko_repetition_simple_ko.sgf", 12)
    assert engine.state.history[-2:] == [(WHITE, PASS), (BLACK, PASS)]
    assert ask(loop, "is_legal w D5") == (True, "0")            # kosumi's rules from here on
    engine = load(loop, "superko_repetition_simple_ko.sgf")
    assert len(engine.state.history) == 14 and engine.scoring == "territory"
    assert ask(loop, "genmove b")[0]


def test_stones_added_mid_game_keep_the_prisoners_and_start_the_game_there():
    loop = session()
    before = load(loop, "stones_added_mid_game.sgf", 41).state.board
    captured = before.captures(BLACK), before.captures(WHITE)
    assert captured != (0, 0)
    engine = load(loop, "stones_added_mid_game.sgf")
    assert (engine.state.board.captures(BLACK), engine.state.board.captures(WHITE)) == captured
    assert len(engine.state.history) == 3 and engine.state.history[0][0] == WHITE   # PL[W]
    assert "J8" not in stones_of(engine)[BLACK]                                     # AE


def test_a_file_missing_only_its_final_paren_loads_like_the_whole_one():
    whole = stones_of(load(session(), "sabaki_13x13_variations.sgf"))
    assert stones_of(load(session(), "missing_final_paren.sgf")) == whole


def test_variations_beside_the_main_line_are_ignored():
    engine = load(session(), "sabaki_13x13_variations.sgf")
    assert engine.size == 13 and engine.komi == 6.5
    assert engine.state.history[-2:] == [(BLACK, PASS), (WHITE, PASS)]
    assert len(engine.state.history) == 52


def test_cgoban1_numeric_pl_is_black_or_white_to_move(tmp_path):
    engine = load(session(), "cgoban1_pl_numbers.sgf")
    assert engine.state.to_move == WHITE and not engine.state.history
    black = tmp_path / "pl1.sgf"
    black.write_bytes(b"(;FF[3]SZ[9];B[ee];W[cc];PL[1])")
    engine = load(session(), str(black))
    assert engine.state.to_move == BLACK and len(engine.state.history) == 2


def assert_refused_without_change(argument, reply):
    loop = session()
    for command in ("boardsize 7", "komi 3", "play b D4", "play w C3"):
        assert ask(loop, command)[0]
    board_before, history = ask(loop, "showboard"), list(loop.engine.state.history)
    ok, text = ask(loop, f"loadsgf {argument}")
    assert not ok and text.startswith(reply), text
    assert ask(loop, "showboard") == board_before and loop.engine.state.history == history
    assert loop.engine.komi == 3 and loop.engine.scoring == "area"


@pytest.mark.parametrize("argument,reply", [
    (CORPUS / "size27.sgf", "cannot load file: board size 27 is not supported"),
    (CORPUS / "rectangular.sgf", "cannot load file: board size 19:13 is not supported"),
    (CORPUS / "setup_without_liberties.sgf",
     "cannot load file: the setup in node 3 leaves the chain at A9 without liberties"),
    (f"{CORPUS / 'gogui_9x9.sgf'} K10", "cannot load file: vertex K10 is not on the 9x9 board"),
    (f"{CORPUS / 'gogui_9x9.sgf'} 0", "syntax error: move number 0 is out of range"),
    (f"{CORPUS / 'gogui_9x9.sgf'} pass", "syntax error: loadsgf stops at a move number"),
    (f"{CORPUS / 'gogui_9x9.sgf'} 3 4", "syntax error: unexpected argument '4'"),
    (CORPUS / "no_such_file.sgf", "cannot load file: [Errno 2]"),
    (TESTS / "regress" / "gtp" / "truncated.sgf", "cannot load file: not a readable SGF game"),
    (CORPUS / "two_moves_in_one_node.sgf", "cannot load file: node 2 has both a black and a white"),
])
def test_a_refused_file_changes_nothing(argument, reply):
    assert_refused_without_change(argument, reply)


# sgfmill raises a ValueError without text for a value it cannot read: each refusal quotes it.
@pytest.mark.parametrize("data,reason", [
    (b"(;FF[3]SZ[9]AB[cc]PL[3])", "bad PL[3] in node 0 (expected B or W)"),
    (b"(;SZ[9];B[ee]PL[])", "bad PL[] in node 1 (expected B or W)"),
    (b"(;SZ[9]KM[six])", "bad komi KM[six]"),
    (b"(;SZ[9]HA[two])", "bad handicap HA[two] (not a number)"),
    (b"(;SZ[9];B[ee];W[zz])", "bad move W[zz] in node 2 (not a point of the 9x9 board)"),
    (b"(;SZ[9]AB[ee]AW[jj])", "bad setup property in node 0 (a value that is not a point or "
                              "rectangle of the 9x9 board)"),
    (b"(;SZ[9];AE[aa:zz])", "bad setup property in node 1"),
    (b"(;CA[no-such-charset]SZ[9])", "not a readable SGF game (unknown encoding"),
    (b"", "not a readable SGF game (no SGF data found)"),
])
def test_every_refusal_gives_its_reason(tmp_path, data, reason):
    path = tmp_path / "bad.sgf"
    path.write_bytes(data)
    assert_refused_without_change(path, f"cannot load file: {reason}")


@pytest.mark.parametrize("target", ["missing_folder/out.sgf", "."])
def test_a_printsgf_refusal_gives_its_reason(tmp_path, target):
    ok, text = ask(session(), f"printsgf {tmp_path / target}")
    assert not ok and re.fullmatch(r"cannot write file: \[Errno \d+\] .+", text), text


@pytest.mark.parametrize("name", GOOD_FILES)
def test_printsgf_reads_back_to_the_same_position_in_kosumi_and_sgfmill(name, tmp_path):
    loop = session()
    engine = load(loop, name)
    written = tmp_path / "out.sgf"
    assert ask(loop, f"printsgf {written}") == (True, "")
    again = load(session(), str(written))
    assert stones_of(again) == stones_of(engine) and again.state.to_move == engine.state.to_move
    assert again.state.history == engine.state.history and again.komi == engine.komi
    assert again.handicap_stones == engine.handicap_stones and again.scoring == engine.scoring
    assert sgfmill_position(written) == (stones_of(engine), engine.state.to_move)


def gnugo_position(path):
    with GtpClient([GNUGO, "--mode", "gtp"]) as gnugo:
        to_move = gnugo.send(f"loadsgf {path}", timeout=30)
        stones = {colour: sorted(gnugo.send(f"list_stones {word}", timeout=30).upper().split())
                  for colour, word in ((BLACK, "black"), (WHITE, "white"))}
    return stones, BLACK if to_move.strip().lower() == "black" else WHITE


@pytest.mark.external
@needs_gnugo
@pytest.mark.parametrize("name", [n for n in GOOD_FILES if n not in GNUGO_IGNORES_AE])
def test_gnugo_loads_every_file_to_the_same_position(name):
    engine = load(session(), name)
    assert gnugo_position(CORPUS / name) == (stones_of(engine), engine.state.to_move)


@pytest.mark.external
@needs_gnugo
@pytest.mark.parametrize("name", GOOD_FILES)
def test_printsgf_round_trip_through_gnugo(name, tmp_path):
    loop = session()
    engine = load(loop, name)
    if name == "problem_setup_second_node.sgf":
        engine = load(loop, name, 1)          # setup stones only, White to move
    written = tmp_path / "out.sgf"
    assert ask(loop, f"printsgf {written}")[0]
    assert gnugo_position(written) == (stones_of(engine), engine.state.to_move)
