"""The players' settings (engine/play/settings.py): one declaration per setting, the command lines
generated from them, the settings reaching the players unchanged and at run time (GTP
kosumi-*-param, GoGui's param dialog) and the players' common interface. The games that must not
change are replayed by tests/regress/test_golden_games.py.

Engines run with the uniform evaluator.
"""
import io
import math
import re

import numpy as np
import pytest

from engine.gtp.analysis_main import build_parser as build_analysis_parser
from engine.gtp.analysis_main import player_factory
from engine.gtp.main import build_engine, build_parser
from engine.gtp.options import settings_from_options
from engine.gtp.protocol import GtpLoop
from engine.nets.evaluator import UniformEvaluator
from engine.play.player import RESIGN, MovePlayer, Player
from engine.play.policy_player import PolicyPlayer
from engine.play.search_player import SearchAnalysis, SearchPlayer
from engine.play.settings import (PlayerSettings, SearchSettings, parse_value, settings_fields,
                                  with_changes)
from engine.rules.board import BLACK
from engine.rules.coords import parse_vertex
from engine.rules.game import GameState, Rules
from tests.paths import REPO

UNIFORM = ["--evaluator", "uniform", "--seed", "1", "--policy", "none"]
PLAYING_MD = REPO / "docs" / "PLAYING.md"


def session_for(options):
    engine = build_engine(build_parser().parse_args(options))
    return engine, GtpLoop(engine, io.BytesIO(b""), io.BytesIO())


def ask(session, line):
    """The reply text of a command that must succeed."""
    raw = session.handle_line(line + "\n")
    assert raw.startswith("= ") and raw.endswith("\n\n"), raw
    return raw[2:-2]


def fail(session, line):
    raw = session.handle_line(line + "\n")
    assert raw.startswith("? ") and raw.endswith("\n\n"), raw
    return raw[2:-2]


def cli_fields(settings_class):
    return [f for f in settings_fields(settings_class) if f.metadata["cli"]]


# --- the two option bugs ------------------------------------------------------------------------

def test_kosumi_search_beside_the_1ply_player_takes_the_search_options():
    # It built its own default search: 3,000 simulations, one thread, MoGo's playouts.
    engine, session = session_for([*UNIFORM, "--playouts", "40", "--threads", "2",
                                   "--playout-tactics", "fuego"])
    ask(session, "boardsize 9")
    reply = ask(session, "kosumi-search b")
    visits = int(re.search(r"^TEXT (\d+) visits", reply, re.MULTILINE).group(1))
    assert 0 < visits <= 40
    trees = [owner.tree for owner in engine._searcher()._owners]
    assert len(trees) == 2 and {tree.playout_tactics for tree in trees} == {"fuego"}


def hopeless_search(player, winrate):
    """player.search() made to give the best move this win rate (no tree needed)."""
    move = parse_vertex("E5", 9)

    def search(state, colour, **_):
        return SearchAnalysis(colour, 9, [move], np.array([100]), np.array([winrate]),
                              np.array([-10.0]), [None], [[move]], winrate, 100,
                              np.zeros(state.board.num_locs))
    player.search = search
    return player


def decisions(player, count=3):
    game = GameState(9, Rules(komi=7))
    return [player.choose(game, BLACK).move for _ in range(count)]


def test_resign_threshold_is_the_search_win_rate_with_search_mcts():
    # It was ignored: the search resigned below a fixed 5% whatever the option said.
    mcts = [*UNIFORM, "--search", "mcts", "--playouts", "10"]
    player = build_engine(build_parser().parse_args([*mcts, "--resign-threshold", "0.3"])).player
    assert player.settings.resign_threshold == 0.3
    assert decisions(hopeless_search(player, 0.2))[-1] == RESIGN
    # the default stays the 5% it was; --no-resign never resigns
    default = build_engine(build_parser().parse_args(mcts)).player
    assert RESIGN not in decisions(hopeless_search(default, 0.2))
    default = build_engine(build_parser().parse_args(mcts)).player
    e5 = parse_vertex("E5", 9)
    assert decisions(hopeless_search(default, 0.04)) == [e5, e5, RESIGN]
    never = build_engine(build_parser().parse_args([*mcts, "--resign-threshold", "0.3",
                                                    "--no-resign"])).player
    assert RESIGN not in decisions(hopeless_search(never, 0.01))


def test_resign_threshold_keeps_its_1ply_meaning():
    engine = build_engine(build_parser().parse_args([*UNIFORM, "--resign-threshold", "0.1"]))
    assert engine.player.settings.resign_threshold == 0.1
    assert build_engine(build_parser().parse_args(UNIFORM)).player.settings.resign_threshold == 0.5


# --- one declaration, the command lines generated ------------------------------------------------

def test_every_setting_is_one_option_whose_default_is_the_fields():
    parser = build_parser()
    flags = {flag for action in parser._actions for flag in action.option_strings}
    for settings_class in (PlayerSettings, SearchSettings):
        for settings_field in cli_fields(settings_class):
            flag = settings_field.metadata["flag"] or "--" + settings_field.name.replace("_", "-")
            assert flag in flags, settings_field.name
    args = parser.parse_args([])
    assert settings_from_options(PlayerSettings, args) == PlayerSettings()
    assert settings_from_options(SearchSettings, args) == SearchSettings()
    # kosumi analysis: the search's settings but its budget (each query's) and resigning
    analysis = build_analysis_parser()
    args = analysis.parse_args(["--threads", "2", "--playout-tactics", "fuego", "--seed", "4"])
    make_player = player_factory(args, UniformEvaluator(), seed=4)
    player = make_player(0, 0)
    assert (player.settings.threads, player.settings.playout_tactics) == (2, "fuego")
    assert player.settings.resign_threshold is None and player.settings.playouts is None
    assert player.budget() == (None, math.inf)
    for flag in ("--playouts", "--time-per-move", "--resign-threshold", "--beta"):
        assert flag not in {f for a in analysis._actions for f in a.option_strings}


def test_both_command_lines_share_the_logging_and_net_options():
    for parser in (build_parser(), build_analysis_parser()):
        args = parser.parse_args(["--log-level", "debug", "--log-file", "x.log",
                                  "--weights", "w.npz", "--policy", "none"])
        assert (args.log_level, args.log_file, args.weights, args.policy) == \
            ("debug", "x.log", "w.npz", "none")


@pytest.mark.parametrize("option, value, message", [
    ("--threads", "0", "threads must be an integer 1..64, not '0'"),
    ("--playouts", "0", "playouts must be an integer >= 1, or auto, not '0'"),
    ("--value-weight", "2", "value weight must be a number 0..1, not '2'"),
    ("--seed", "-1", "seed must be an integer >= 0, or fresh, not '-1'"),
    ("--resign-threshold", "0", "resign threshold must be a number > 0 and <= 1, or off"),
    ("--beta", "nan", "beta must be a number >= 0 (or inf), not 'nan'"),
])
def test_an_option_out_of_range_is_refused_with_its_range(option, value, message, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args([option, value])
    error = capsys.readouterr().err
    assert option in error and message in error


def test_settings_refuse_values_out_of_range_wherever_they_are_made():
    with pytest.raises(ValueError, match="threads must be an integer 1..64"):
        SearchPlayer(UniformEvaluator(), threads=0)
    with pytest.raises(ValueError, match="beta must be"):
        Player(UniformEvaluator(), beta=-1.0)
    with pytest.raises(TypeError, match="unknown setting 'use_prior'"):
        SearchPlayer(UniformEvaluator(), use_prior=False)
    settings = SearchSettings()
    assert with_changes(settings, {}) is settings          # shared, not copied
    field = next(f for f in settings_fields(SearchSettings) if f.name == "knowledge_prior")
    assert parse_value(field, "auto") is None and parse_value(field, "2.5") == 2.5


def test_the_options_table_documents_every_option():
    table = PLAYING_MD.read_text(encoding="utf-8")
    for settings_class in (PlayerSettings, SearchSettings):
        for settings_field in cli_fields(settings_class):
            flag = settings_field.metadata["flag"] or "--" + settings_field.name.replace("_", "-")
            assert f"| `{flag}" in table, flag


# --- the players --------------------------------------------------------------------------------

def test_every_player_is_a_move_player_holding_the_engines_settings():
    for options in ([], ["--search", "mcts"], ["--player", "policy", "--policy-temperature", "1"]):
        engine = build_engine(build_parser().parse_args(
            ["--evaluator", "uniform", "--seed", "2", *options]))
        assert isinstance(engine.player, MovePlayer) and isinstance(engine.one_ply, MovePlayer)
        assert isinstance(engine._searcher(), SearchPlayer)
        shared = engine.parameters.entries["beta"][0]
        assert engine.one_ply.settings is shared and engine._searcher().player_settings is shared
    assert engine.player.settings is shared and isinstance(engine.player, PolicyPlayer)
    assert not isinstance(UniformEvaluator(), MovePlayer)


def test_the_policy_player_averages_eight_symmetries_and_the_prior_one_unless_told():
    def symmetries(*options):
        engine = build_engine(build_parser().parse_args(["--evaluator", "uniform", *options]))
        prior = engine._searcher().predictor
        return engine.player.predictor.symmetries, prior.symmetries
    assert symmetries("--player", "policy") == (8, 1)
    assert symmetries("--player", "policy", "--policy-symmetries", "2") == (2, 2)
    engine = build_engine(build_parser().parse_args(["--evaluator", "uniform", "--search", "mcts"]))
    assert engine.player.predictor.symmetries == 1
    assert ask(session_for(["--evaluator", "uniform"])[1],
               "kosumi-get-param policy_symmetries") == "auto"


def test_the_policy_player_plays_the_larger_shipped_net_and_the_search_the_smaller_unless_told():
    from engine.nets.policy import load_policy
    from engine.nets.weights import DEFAULT_POLICY_WEIGHTS, DEFAULT_PRIOR_POLICY_WEIGHTS

    def nets(*options):
        engine = build_engine(build_parser().parse_args(["--evaluator", "uniform", *options]))
        return [predictor.metadata["params_sha256"] for predictor in
                (engine.player.predictor, engine._searcher().predictor)]
    player_net, prior_net = (load_policy(path)[1]["params_sha256"]
                             for path in (DEFAULT_POLICY_WEIGHTS, DEFAULT_PRIOR_POLICY_WEIGHTS))
    assert player_net != prior_net
    assert nets("--player", "policy") == [player_net, prior_net]
    assert nets("--search", "mcts")[1] == prior_net
    assert nets("--player", "policy", "--policy", str(DEFAULT_PRIOR_POLICY_WEIGHTS)) == \
        [prior_net, prior_net]


def test_a_parameter_changed_at_run_time_reaches_the_next_search():
    engine, session = session_for([*UNIFORM, "--search", "mcts", "--playouts", "300"])
    ask(session, "boardsize 9")
    game = GameState(9, Rules(komi=7))
    ask(session, "kosumi-set-param playouts 25")
    assert 0 < engine.player.search(game, BLACK).simulations <= 25
    ask(session, "kosumi-set-param threads 2")
    ask(session, "kosumi-set-param playout_tactics fuego-ladders")
    engine.player.search(game, BLACK)
    assert [owner.tree.playout_tactics for owner in engine.player._owners] == \
        ["fuego-ladders"] * 2
    ask(session, "kosumi-set-param policy_temperature 0.5")
    assert engine.one_ply.settings.policy_temperature == 0.5
    # a failed change changes nothing
    assert fail(session, "kosumi-set-param threads two") == \
        "threads must be an integer 1..64, not 'two'"
    assert ask(session, "kosumi-get-param threads") == "2"
    assert ask(session, "genmove b") != ""


def test_the_1ply_player_follows_beta_set_at_run_time():
    engine, session = session_for([*UNIFORM, "--beta", "0"])
    ask(session, "boardsize 5")
    ask(session, "kosumi-set-param beta inf")
    analysis = engine.player.analyse(engine.state, BLACK)
    best = analysis.values[analysis.candidate].max()
    chosen = {ask(session, "reg_genmove b") for _ in range(5)}
    assert all(analysis.value_of(parse_vertex(v, 5)) == best for v in chosen)


def gogui_parameters(response):
    """GoGui's reading of a param command's response (gtp/AnalyzeUtil.parseParameterLine):
    (type, key, value) per line."""
    parameters = []
    for line in response.splitlines():
        line = line.strip()
        match = re.match(r"\[([^\]]*)\]", line)
        kind = match.group(1) if match else "string"
        rest = line[match.end():].strip() if match else line
        key, _, value = rest.partition(" ")
        parameters.append((kind, key, value.strip()))
    return parameters


def test_gogui_parameter_dialog_round_trip():
    engine, session = session_for([*UNIFORM, "--search", "mcts"])
    raw = session.handle_line("kosumi-param\n")
    assert raw.startswith("= [string] beta 20\n") and raw.endswith("\n\n") and \
        "\n\n" not in raw[:-2]
    parameters = gogui_parameters(raw[2:-2])
    names = [key for _, key, _ in parameters]
    assert names == [name for name, (_, f) in engine.parameters.entries.items()
                     if not f.metadata["startup"]]
    assert "seed" not in names and all(value for _, _, value in parameters)
    for kind, key, value in parameters:
        ask(session, f"kosumi-param {key} {value}")        # OK without a change: accepted
        if kind == "bool":
            ask(session, f"kosumi-param {key} {1 - int(value)}")
            assert ask(session, f"kosumi-get-param {key}") == ("true" if value == "0" else "false")
        elif kind.startswith("list/"):
            for item in kind.split("/")[1:]:
                ask(session, f"kosumi-param {key} {item}")
                assert ask(session, f"kosumi-get-param {key}") == item
    assert "param/Kosumi Parameters/kosumi-param" in ask(session, "gogui-analyze_commands")
