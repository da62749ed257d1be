"""benchmarks/analysis_judgement.py: the judgement table of counted games through KataGo's JSON
analysis protocol, with kosumi's own analysis engine (the uniform evaluator, a few visits) and
with a fake engine that answers one query with an error and never answers another."""
import importlib.util
import json
import subprocess
import sys
import textwrap

import pytest

from engine.training.judgeeval import counted_positions
from tests.paths import REPO
from tests.unit.training.test_agreedcounts import record

SCRIPT = REPO / "benchmarks" / "analysis_judgement.py"
KOSUMI = f"{sys.executable} {REPO / 'gtp_server.py'} analysis --evaluator uniform --policy none " \
         f"--seed 5 --workers 1"
POINTS = "end-5=-5,move-10=10"


def load_script():
    spec = importlib.util.spec_from_file_location("analysis_judgement", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def games(tmp_path):
    """Two counted 9x9 games (one under Japanese rules) and three that are not counted."""
    path = tmp_path / "games.sgf"
    path.write_text("\n".join([record("W+16.5"), record("B+R"),
                               record("B+2.5", rules="Japanese", komi=6.5), record("W+T"),
                               record("B+0.5", extra="HA[2]AB[aa][ab]")]))
    return path


def run_script(games, engine, tmp_path, *options):
    out = tmp_path / "result.json"
    result = subprocess.run([sys.executable, str(SCRIPT), "--engine", engine, "--sgf", str(games),
                             "--size", "9", "--points", POINTS, "--json", str(out), *options],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    return result, (json.loads(out.read_text()) if out.exists() else None)


def test_a_query_is_the_records_position_as_katrain_sends_it(games):
    script = load_script()
    assert script.parse_points(POINTS) == {"end-5": -5, "move-10": 10}
    found = list(counted_positions([games], size=9, points={"end-5": -5}))
    assert [(point, margin) for point, _, _, margin, _ in found] == [("end-5", -16.5), ("end-5", 2.5)]
    _, record, index, _, _ = found[1]
    query = script.position_query("q", record, index, 50)
    assert query["moves"] == [["BW"[i % 2], query["moves"][i][1]] for i in range(index)]
    assert query["moves"][0] == ["B", "D9"] and query["analyzeTurns"] == [index]
    assert query["rules"] == "japanese" and query["komi"] == 6.5 and query["initialStones"] == []
    assert query["boardXSize"] == query["boardYSize"] == 9 and query["maxVisits"] == 50
    assert query["overrideSettings"] == {"reportAnalysisWinratesAs": "BLACK"}
    assert script.position_query("q", found[0][1], index, 50)["rules"] == "chinese"


def test_kosumis_analysis_engine_judges_the_counted_games(games, tmp_path):
    result, table = run_script(games, KOSUMI, tmp_path, "--visits", "12")
    assert result.returncode == 0, result.stderr
    assert list(table["table"]) == ["end-5", "move-10"]
    assert table["queries"] == table["answered"] == 4 and table["errors"] == 0
    assert table["skipped"] == {"resignation": 1, "time": 1, "handicap": 1}
    for row in table["table"].values():
        assert row["positions"] == 2 and row["errors"] == row["unanswered"] == 0
        assert 0 <= row["winner_by_win_rate"] <= 1 and 0 <= row["winner_by_score"] <= 1
        assert 0 <= row["brier"] <= 1 and row["score_error"] >= 0
        assert 0 < row["mean_visits"] <= 12
    assert table["engine"] == KOSUMI and table["visits"] == 12 and table["seconds_per_query"] > 0
    assert "end-5: winner right by win rate" in result.stdout
    assert "4 of 4 queries answered" in result.stdout


FAKE = """
    import json, sys
    asked = 0
    for line in sys.stdin:
        query = json.loads(line)
        if query.get("action") == "query_version":
            print(json.dumps({**query, "version": "fake"}), flush=True)
            continue
        asked += 1
        if asked == 1:
            print(json.dumps({"id": query["id"], "field": "moves", "error": "Illegal move 3: C3"}),
                  flush=True)
        elif asked == 2:
            pass                                   # never answered
        else:
            black = len(query["moves"]) % 2 == 0   # BLACK asked for: Black's view whoever moves
            print(json.dumps({"id": query["id"], "field": "x", "warning": "a warning"}), flush=True)
            print(json.dumps({"id": query["id"], "turnNumber": len(query["moves"]),
                              "isDuringSearch": False, "moveInfos": [],
                              "rootInfo": {"visits": 7, "winrate": 0.25, "scoreLead": -3.0,
                                           "currentPlayer": "B" if black else "W"}}), flush=True)
    sys.stdin.close()
    import time; time.sleep(30)                    # still open: the run must not wait for it
"""


def test_an_error_answer_and_a_missing_answer_are_counted_not_fatal(games, tmp_path):
    fake = tmp_path / "fake_engine.py"
    fake.write_text(textwrap.dedent(FAKE))
    result, table = run_script(games, f"{sys.executable} {fake}", tmp_path, "--timeout", "1")
    assert result.returncode == 0, result.stderr
    assert table["queries"] == 4 and table["answered"] == 2
    assert table["errors"] == 1 and table["unanswered"] == 1
    # the game order: move-10 and end-5 of the first game, then of the second
    assert table["table"]["move-10"]["errors"] == 1 and table["table"]["end-5"]["unanswered"] == 1
    end, move = table["table"]["end-5"], table["table"]["move-10"]
    assert end["positions"] == move["positions"] == 1 and end["mean_visits"] == 7
    # both answered positions are the second game's, which Black won by 2.5: Black 0.25, -3
    assert end["winner_by_win_rate"] == end["winner_by_score"] == 0.0
    assert end["brier"] == pytest.approx(0.75 ** 2) and end["score_error"] == pytest.approx(5.5)
    assert any("Illegal move 3" in message for message in table["error_messages"])
    assert any("no answer for 1 s" in message for message in table["error_messages"])
    assert table["warning_messages"] == ["x: a warning"] and table["engine_version"] == "fake"
    assert "1 errors, 1 unanswered" in result.stdout


def test_an_engine_that_cannot_start_or_answer_is_named(games, tmp_path):
    silent = tmp_path / "silent.py"
    silent.write_text("import sys\nprint('loading', file=sys.stderr)\nsys.exit(3)\n")
    result, _ = run_script(games, f"{sys.executable} {silent}", tmp_path)
    assert result.returncode != 0 and "did not answer query_version" in result.stderr
    assert "loading" in result.stderr
    result, _ = run_script(games, str(tmp_path / "no-such-engine"), tmp_path)
    assert result.returncode != 0 and "cannot start" in result.stderr
