"""avoid/allow (engine/play/restriction.py) in the player and the analysis commands; the visits
figure and scoreStdev of the analysis lines; --override-version; Lizzie 0.7.4's own session."""
import io
import re

import pytest

from engine.gtp.main import build_engine, build_parser
from engine.gtp.formats import ANALYSIS_VISITS, share_visits
from engine.gtp.protocol import GtpLoop
from engine.nets.evaluator import UniformEvaluator
from engine.play.player import Player, win_probability
from engine.play.restriction import ALLOW, AVOID, MoveRestriction, MoveRule
from engine.rules.board import BLACK, PASS, WHITE
from engine.rules.coords import parse_vertex
from engine.rules.game import GameState, Rules
from tests.diagrams import vertices

INFO = re.compile(r"info move (\S+) visits (\d+) winrate (\S+) (.*?)(?= info move |$)")


def rule(kind, colour, text, depth, size=9):
    return MoveRule(kind, colour, frozenset(vertices(text, size)), depth)


# --- permits -------------------------------------------------------------------------------------

def test_avoid_binds_its_colour_up_to_its_depth():
    restriction = MoveRestriction((rule(AVOID, BLACK, "D4 E5", 3),))
    d4 = parse_vertex("D4", 9)
    assert not restriction.permits(BLACK, d4) and not restriction.permits(BLACK, d4, depth=3)
    assert restriction.permits(BLACK, d4, depth=4)
    assert restriction.permits(WHITE, d4) and restriction.permits(BLACK, parse_vertex("C3", 9))
    assert restriction.permits(BLACK, PASS)


def test_allow_bars_everything_else_pass_included_unless_listed():
    restriction = MoveRestriction((rule(ALLOW, WHITE, "C3", 1),))
    assert restriction.permits(WHITE, parse_vertex("C3", 9))
    assert not restriction.permits(WHITE, parse_vertex("C4", 9))
    assert not restriction.permits(WHITE, PASS)
    assert restriction.permits(WHITE, PASS, depth=2) and restriction.permits(BLACK, PASS)
    with_pass = MoveRestriction((rule(ALLOW, WHITE, "C3 pass", 1),))
    assert with_pass.permits(WHITE, PASS)


def test_several_allows_permit_what_any_active_one_lists_and_avoid_still_bars():
    restriction = MoveRestriction((rule(ALLOW, BLACK, "C3", 1), rule(ALLOW, BLACK, "D4", 2),
                                   rule(AVOID, BLACK, "pass", 1)))
    c3, d4 = parse_vertex("C3", 9), parse_vertex("D4", 9)
    assert restriction.permits(BLACK, c3) and restriction.permits(BLACK, d4)
    assert not restriction.permits(BLACK, c3, depth=2) and restriction.permits(BLACK, d4, depth=2)
    assert not restriction.permits(BLACK, PASS)
    assert not MoveRestriction() and MoveRestriction().permits(BLACK, c3)


@pytest.mark.parametrize("args", [("ban", BLACK, {1}, 1), (AVOID, 3, {1}, 1), (AVOID, BLACK, {1}, 0),
                                  (AVOID, BLACK, {1}, True), (AVOID, BLACK, {1}, 1.5)])
def test_bad_rules_are_refused(args):
    with pytest.raises(ValueError):
        MoveRule(*args)


# --- the player ----------------------------------------------------------------------------------

def uniform_player(beta=0.0, seed=3):
    return Player(UniformEvaluator(), beta=beta, seed=seed, resign_threshold=None)


def test_analysis_and_choice_never_use_a_barred_move():
    state = GameState(9, Rules(komi=7.0))
    for move in ("E5", "C3", "G7"):
        state.play(parse_vertex(move, 9))
    barred = set(vertices("A1 B1 C1 D1 E1 F1 G1 H1 J1 D4 F6", 9))
    restriction = MoveRestriction((MoveRule(AVOID, WHITE, frozenset(barred), 1),))
    player = uniform_player()
    analysis = player.analyse(state, WHITE, restriction=restriction)
    assert not barred & {move for move, _, _ in analysis.ranked()}
    assert abs(sum(p for _, _, p in analysis.ranked()) - 1.0) < 1e-9
    for _ in range(40):
        assert player.choose(state, WHITE, restriction=restriction).move not in barred
    allowed = set(vertices("A1 J9", 9))
    only = MoveRestriction((MoveRule(ALLOW, WHITE, frozenset(allowed), 1),))
    assert {player.choose(state, WHITE, restriction=only).move for _ in range(20)} == allowed


def test_a_barred_pass_becomes_a_permitted_move():
    state = GameState(5, Rules(komi=0.5))
    for move in ("C3", "pass"):
        state.play(parse_vertex(move, 5))
    player = uniform_player(beta=float("inf"))
    assert player.choose(state, BLACK).move == PASS          # the count wins after a pass
    no_pass = MoveRestriction((rule(AVOID, BLACK, "pass", 1, size=5),))
    decision = player.choose(state, BLACK, restriction=no_pass)
    assert decision.move != PASS and "pass not permitted" in decision.reason


def test_an_instant_move_under_time_pressure_obeys_the_restriction():
    state = GameState(9, Rules())
    player = uniform_player()
    player.seconds_per_size[9] = 10.0
    allowed = set(vertices("A1 J9", 9))
    only = MoveRestriction((MoveRule(ALLOW, BLACK, frozenset(allowed), 1),))
    for _ in range(10):
        decision = player.choose(state, BLACK, time_budget=0.01, restriction=only)
        assert "instant" in decision.reason and decision.move in allowed


# --- GTP -----------------------------------------------------------------------------------------

def session(*options):
    engine = build_engine(build_parser().parse_args(["--seed", "5", "--no-resign", *options]))
    return GtpLoop(engine, io.BytesIO(b""), io.BytesIO())


def ask(loop, line):
    raw = loop.handle_line(line + "\n")
    assert raw.endswith("\n\n"), raw
    return raw[0] == "=", raw[1:].strip()


def infos(text):
    return [(move, int(visits), float(winrate), rest) for move, visits, winrate, rest in INFO.findall(text)]


@pytest.mark.parametrize("beta", ["20", "2", "inf"])
def test_visit_weighted_winrate_is_the_winrate_of_the_players_own_choice(beta):
    loop = session("--beta", beta)
    for command in ("boardsize 9", "komi 7", "play b E5", "play w C3", "play b G7"):
        assert ask(loop, command)[0]
    ok, text = ask(loop, "lz-analyze w 10")
    assert ok
    listed = infos(text)
    assert sum(visits for _, visits, _, _ in listed) == ANALYSIS_VISITS
    shown = sum(visits * winrate / 10000 for _, visits, winrate, _ in listed) / ANALYSIS_VISITS
    engine = loop.engine
    analysis = engine.player.analyse(engine.state, WHITE)
    empty = 81 - 3
    own_choice = sum(p * win_probability(v, empty) for _, v, p in analysis.ranked())
    assert shown == pytest.approx(own_choice, abs=0.002)
    assert all(visits > 0 for _, visits, _, _ in listed)


def test_share_visits_is_proportional_and_exact():
    assert share_visits([0.5, 0.25, 0.25], 1000) == [500, 250, 250]
    counts = share_visits([1 / 3] * 3, 1000)
    assert sum(counts) == 1000 and max(counts) - min(counts) == 1
    assert share_visits([0.9995, 0.0005], 1000) in ([1000, 0], [999, 1])
    assert share_visits([], 1000) == [] and share_visits([0.0, 0.0], 10) == [0, 0]


def test_minmoves_lists_moves_without_visits_and_maxmoves_cuts():
    loop = session("--beta", "inf")
    assert ask(loop, "boardsize 9")[0] and ask(loop, "play b E5")[0]
    assert len(infos(ask(loop, "kata-analyze w 10")[1])) < 80
    listed = infos(ask(loop, "kata-analyze w 10 minmoves 12")[1])
    assert len(listed) >= 12 and listed[-1][1] == 0
    assert len(infos(ask(loop, "kata-analyze w 10 minmoves 12 maxmoves 5")[1])) == 5


def test_score_stdev_comes_from_the_net_and_is_left_out_without_one():
    net = session()
    assert ask(net, "boardsize 9")[0] and ask(net, "play b E5")[0]
    stdevs = [float(x) for x in re.findall(r"scoreStdev (\S+)", ask(net, "kata-analyze w 10")[1])]
    assert stdevs and all(0.0 < s < 81 for s in stdevs)
    uniform = session("--evaluator", "uniform")
    assert ask(uniform, "boardsize 9")[0]
    ok, text = ask(uniform, "kata-analyze b 10")
    assert ok and "info move" in text and "scoreStdev" not in text
    assert "scoreStdev" not in ask(net, "lz-analyze w 10")[1]


def test_analysis_and_genmove_variants_honour_avoid_and_allow():
    loop = session("--evaluator", "uniform", "--beta", "0")
    assert ask(loop, "boardsize 9")[0]
    text = ask(loop, "kata-analyze b 10 avoid b A1,B1,C1,D1,E1,F1,G1,H1,J1 1 minmoves 81")[1]
    assert {move for move, *_ in infos(text)}.isdisjoint({"A1", "B1", "C1", "D1", "E1", "F1", "G1", "H1", "J1"})
    text = ask(loop, "lz-analyze b 10 allow b A1:B2,J9 1")[1]            # Leela Zero's rectangle
    assert {move for move, *_ in infos(text)} == {"A1", "A2", "B1", "B2", "J9"}
    for turn in range(6):
        colour = "bw"[turn % 2]
        ok, text = ask(loop, f"kata-genmove_analyze {colour} 10 allow {colour} A1,J1,A9,J9 1")
        assert ok
        played = text.splitlines()[-1].split()[-1]
        assert played in ("A1", "J1", "A9", "J9") or (played == "pass" and turn >= 4)
    ok, text = ask(loop, "lz-genmove_analyze b 10 avoid b pass 1 allow b A1,J1,A9,J9,E5 1")
    assert ok and text.endswith("play E5")


@pytest.mark.parametrize("command,message", [
    ("kata-analyze b allow b A1 1 allow b B1 1", "either avoid or one allow per colour"),
    ("kata-analyze b avoid b A1 1 allow b B1 1", "either avoid or one allow per colour"),
    ("lz-analyze b avoid b A1 1 allow b B1 1", "avoid beside allow only for pass"),
    ("lz-analyze b avoid b A1", "avoid needs a colour, vertices and an until-depth"),
    ("lz-analyze b avoid x A1 1", "invalid colour"),
    ("lz-analyze b avoid b A1,Z1 1", "invalid vertex 'Z1'"),
    ("lz-analyze b avoid b , 1", "avoid needs at least one vertex"),
    ("lz-analyze b avoid b A1 0", "0 is out of range"),
    ("kata-genmove_analyze b allow b A1:pass 1", "pass is not a board vertex"),
])
def test_bad_restrictions_are_refused_before_anything_changes(command, message):
    loop = session("--evaluator", "uniform")
    assert ask(loop, "boardsize 9")[0]
    ok, text = ask(loop, command)
    assert not ok and text.startswith("syntax error") and message in text
    assert ask(loop, "list_stones b") == (True, "")


def test_override_version_answers_version_only():
    loop = session("--evaluator", "uniform", "--override-version", "0.17")
    assert ask(loop, "version") == (True, "0.17") and ask(loop, "name") == (True, "kosumi")
    assert "AP[kosumi:0.1" in ask(loop, "printsgf")[1]
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--override-version", "0.17\n"])


def lizzie_accepts_version(text):
    """Lizzie 0.7.4's check of a non-KataGo engine: the number after the first dot >= 15."""
    return int(text.split(".")[1]) >= 15


# The commands Lizzie 0.7.4 (Debian liblizzie-java) sent to kosumi on 9x9: start-up, analysis,
# a click, a human-vs-engine game's genmove, undo (mouse wheel), right-click avoid and allow.
LIZZIE_SESSION = """1 name
2 version
3 boardsize 9
4 komi 7.5
5 clear_board
6 komi 7.5
7 lz-analyze 10
8 play B E5
9 lz-analyze 10
10 time_settings 0 2 1
11 play W C3
12 genmove B
13 lz-analyze 10
14 undo
15 lz-analyze 10
16 name
17 lz-analyze 10
18 lz-analyze 10 avoid b C7 30 avoid w C7 30
19 name
20 lz-analyze 10
21 lz-analyze 10 allow b G7 1"""


def test_lizzies_own_session_is_answered_as_lizzie_expects():
    loop = session("--override-version", "0.17")
    replies = {}
    for line in LIZZIE_SESSION.splitlines():
        ok, text = ask(loop, line)
        assert ok, (line, text)
        replies[line.split()[0]] = re.sub(r"^\d+ ?", "", text)
    assert replies["1"] == "kosumi" and lizzie_accepts_version(replies["2"])
    for key in ("7", "9", "13", "15", "17", "18", "20", "21"):
        listed = infos(replies[key])
        assert listed and sum(visits for _, visits, _, _ in listed) == ANALYSIS_VISITS, key
        for _, _, winrate, rest in listed:
            assert winrate == int(winrate) and re.match(r"prior \d+ lcb \d+ order \d+ pv \S+$", rest)
    assert "C7" not in {move for move, *_ in infos(replies["18"])}
    assert {move for move, *_ in infos(replies["21"])} == {"G7"}
    assert loop.engine.state.history == [(BLACK, parse_vertex("E5", 9)), (WHITE, parse_vertex("C3", 9))]
