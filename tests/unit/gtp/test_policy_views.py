"""The policy net in the analysis tools: GoGui's `kosumi-policy` (a heat map with percent labels)
and `kosumi-policy_list` (pspairs), their formats on a small board and which net they show; the
policy player's streams for Lizzie and Sabaki, ranked by its net."""
import io

import numpy as np

from engine.gtp.formats import POLICY_FLOOR, policy_colour, policy_gfx, policy_pspairs
from engine.gtp.main import build_engine, build_parser
from engine.gtp.protocol import GtpLoop
from engine.rules.board import WHITE
from engine.rules.game import GameState, Rules
from tests.diagrams import vertex

UNIFORM = ["--evaluator", "uniform", "--seed", "1"]


def session(options):
    engine = build_engine(build_parser().parse_args(UNIFORM + options))
    return engine, GtpLoop(engine, io.BytesIO(b""), io.BytesIO())


def reply(loop, line):
    """(success, text) of one command."""
    raw = loop.handle_line(line + "\n")
    return raw.startswith("="), raw[2:-2]


def probabilities_of(size, by_vertex, pass_probability):
    probabilities = np.zeros(GameState(size, Rules()).board.num_locs + 1)
    for text, value in by_vertex.items():
        probabilities[vertex(text, size)] = value
    probabilities[-1] = pass_probability
    return probabilities


def test_the_heat_colours_run_from_blue_at_the_floor_through_green_to_red_at_certainty():
    assert policy_colour(POLICY_FLOOR / 100) == policy_colour(POLICY_FLOOR) == "#0000ff"
    assert policy_colour(10 ** -1.5) == "#00ff00"          # half way on the log scale
    assert policy_colour(0.004) == "#00bfff"
    assert policy_colour(0.6) == "#ff4000"
    assert policy_colour(1.0) == "#ff0000"


def test_the_heat_map_labels_the_likely_moves_and_leaves_out_those_under_the_floor():
    probabilities = probabilities_of(5, {"C3": 0.6, "B2": 0.3, "D4": 0.004, "E5": 0.0005}, 0.0955)
    assert policy_gfx(5, probabilities, WHITE, "conv 2 x 8, 1 symmetry").split("\n") == [
        "COLOR #ff4000 C3",
        "COLOR #ffbf00 B2",
        "COLOR #00bfff D4",
        "LABEL C3 60 B2 30",
        "SQUARE C3",
        "TEXT White's moves by the policy net (conv 2 x 8, 1 symmetry): best C3 60.0%, "
        "pass 9.6%; the 5 likeliest 90%",
    ]
    assert policy_pspairs(5, probabilities) == "C3 60.0 B2 30.0 D4 0.4"


def test_a_net_that_only_passes_draws_its_text_alone():
    only_pass = probabilities_of(5, {}, 1.0)
    assert policy_gfx(5, only_pass, WHITE, "res 3 x 8, 8 symmetries") == \
        "TEXT White's moves by the policy net (res 3 x 8, 8 symmetries): pass 100.0%"
    assert policy_pspairs(5, only_pass) == ""


def test_the_policy_player_shows_its_own_net_and_plays_the_move_it_marks():
    engine, loop = session(["--player", "policy"])
    for line in ("boardsize 9", "clear_board", "play b C3", "play w G6"):
        assert reply(loop, line)[0]
    ok, menu = reply(loop, "gogui-analyze_commands")
    assert ok and "gfx/Kosumi Policy/kosumi-policy %m" in menu.split("\n")
    assert "pspairs/Kosumi Policy List/kosumi-policy_list %m" in menu.split("\n")
    ok, gfx = reply(loop, "kosumi-policy b")
    shown = engine.player.predictor.description()
    assert ok and shown.endswith("8 symmetries") and f"({shown})" in gfx.split("\n")[-1]
    marked = next(line.split()[1] for line in gfx.split("\n") if line.startswith("SQUARE"))
    ok, pairs = reply(loop, "kosumi-policy_list b")
    assert ok and pairs.split()[0] == marked
    percents = [float(word) for word in pairs.split()[1::2]]
    assert percents == sorted(percents, reverse=True) and 90 < sum(percents) < 101   # one decimal each
    # Lizzie's and Sabaki's streams rank the moves by the net: their first is the player's move
    ok, stream = reply(loop, "lz-analyze b 10 maxmoves 3")
    first = stream.split("info move ")[1].split()
    assert ok and first[0] == marked and first[first.index("order") + 1] == "0"
    assert abs(int(first[first.index("prior") + 1]) / 100 - float(pairs.split()[1])) <= 0.06
    assert reply(loop, "genmove b") == (True, marked)


def test_beside_the_one_ply_player_it_shows_the_searchs_prior_and_without_a_net_says_so():
    engine, loop = session([])
    ok, gfx = reply(loop, "kosumi-policy w")
    assert ok and f"({engine._searcher().predictor.description()})" in gfx and "1 symmetry" in gfx
    _, loop = session(["--search", "mcts", "--policy", "none"])
    ok, menu = reply(loop, "gogui-analyze_commands")
    assert ok and "kosumi-policy" not in menu
    assert reply(loop, "kosumi-policy b") == (
        False, "no policy net: give one with --policy PATH (--policy none and --policy-prior off "
               "leave the engine without)")
    assert not reply(loop, "kosumi-policy purple")[0]
    assert reply(loop, "boardsize 9")[0]       # the engine runs on


def test_the_policy_players_genmove_analyze_streams_the_position_it_moved_from():
    engine, loop = session(["--player", "policy"])
    for line in ("boardsize 9", "clear_board", "play b E5"):
        assert reply(loop, line)[0]
    ok, pairs = reply(loop, "kosumi-policy_list w")
    raw = loop.handle_line("kata-genmove_analyze w 10\n")
    lines = raw.rstrip("\n").split("\n")
    assert lines[0] == "= " and len(lines) == 3 and lines[2] == f"play {pairs.split()[0]}"
    first = lines[1].split("info move ")[1].split()
    assert first[0] == pairs.split()[0] and first[first.index("order") + 1] == "0"
    assert abs(float(first[first.index("prior") + 1]) * 100 - float(pairs.split()[1])) <= 0.06
    assert reply(loop, "list_stones w") == (True, pairs.split()[0])


def test_the_policy_nets_precision_is_the_options_for_the_player_the_search_and_its_analysis():
    engine, loop = session(["--player", "policy", "--policy-precision", "bf16", "--policy-symmetries", "2"])
    assert engine.player.predictor.description().endswith("2 symmetries, bf16")
    assert engine._searcher().predictor.description() == "conv 8 x 48, 2 symmetries, bf16"  # the prior
    ok, gfx = reply(loop, "kosumi-policy b")
    assert ok and "2 symmetries, bf16)" in gfx
    engine, loop = session(["--search", "mcts", "--policy-precision", "bf16"])
    assert engine.player.predictor.description().endswith("1 symmetry, bf16")
    assert reply(loop, "kosumi-get-param policy_precision") == (True, "bf16")
    assert reply(loop, "kosumi-set-param policy_precision fp32")[0] is False    # fixed at start
    engine, _ = session([])
    assert engine._searcher().predictor.description().endswith("1 symmetry")
    assert engine._searcher().predictor.forward.precision == "fp32"
