"""The match tool: rules, scoring, forfeits (illegal move, crash, hang), SGFs, summary, GNU Go."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from sgfmill import boards, sgf

from engine.tools import match
from engine.tools.gtp_client import find_gnugo
from engine.tools.match import DOUBTFUL_MARK, IllegalMove, MatchConfig, RulesBoard, run_match
from engine.tools.match_summary import elo_difference, format_summary, wilson_interval

GNUGO = find_gnugo()
needs_gnugo = pytest.mark.skipif(GNUGO is None,
                                 reason="GNU Go is not installed (apt-get install gnugo)")

# A scriptable GTP engine. Options: --moves "C3 D4 ..." (then it passes; "C3 D4|E5": game 1 plays
# C3 D4, game 2 E5, and so on round), --crash-at N and
# --hang-at N (at its Nth genmove of each game), --resign-at N, --refuse-play, --refuse-boardsize,
# --dead "A1 B2" (final_status_list dead), --final-score TEXT (to act as a referee),
# --pid-file PATH (appends its pid on start).
FAKE_ENGINE = r'''
import argparse, os, sys, time

parser = argparse.ArgumentParser()
parser.add_argument("--moves", default="")
parser.add_argument("--crash-at", type=int, default=0)
parser.add_argument("--hang-at", type=int, default=0)
parser.add_argument("--resign-at", type=int, default=0)
parser.add_argument("--refuse-play", action="store_true")
parser.add_argument("--refuse-boardsize", action="store_true")
parser.add_argument("--dead")
parser.add_argument("--final-score")
parser.add_argument("--pid-file")
args = parser.parse_args()
if args.pid_file:
    with open(args.pid_file, "a") as stream:
        stream.write("%d\n" % os.getpid())
sys.stderr.write("fake engine started\n")
sys.stderr.flush()
commands = ["protocol_version", "name", "version", "list_commands", "boardsize", "clear_board",
            "komi", "play", "genmove", "quit"]
if args.dead is not None:
    commands.append("final_status_list")
if args.final_score:
    commands.append("final_score")
genmoves = 0
games = 0
moves = []

def reply(text, ok=True):
    sys.stdout.write(("= " if ok else "? ") + text + "\n\n")
    sys.stdout.flush()

for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    name = words[0]
    if name == "protocol_version":
        reply("2")
    elif name == "name":
        reply("Fake")
    elif name == "version":
        reply("1.0")
    elif name == "list_commands":
        reply("\n".join(commands))
    elif name == "boardsize":
        reply("unacceptable size", ok=False) if args.refuse_boardsize else reply("")
    elif name == "clear_board":
        per_game = args.moves.split("|")
        moves = per_game[games % len(per_game)].split()
        games += 1
        genmoves = 0
        reply("")
    elif name == "komi":
        reply("")
    elif name == "play":
        reply("illegal move", ok=False) if args.refuse_play else reply("")
    elif name == "genmove":
        genmoves += 1
        if genmoves == args.crash_at:
            os._exit(5)
        if genmoves == args.hang_at:
            time.sleep(60)
        if genmoves == args.resign_at:
            reply("resign")
        else:
            reply(moves.pop(0) if moves else "pass")
    elif name == "final_status_list" and args.dead is not None:
        reply(args.dead)
    elif name == "final_score" and args.final_score:
        reply(args.final_score)
    elif name == "quit":
        reply("")
        break
    else:
        reply("unknown command", ok=False)
'''


@pytest.fixture
def fake(tmp_path):
    """fake("--moves 'C3'") -> a command line running the fake engine with those options."""
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    return lambda options="": f"{sys.executable} {script} {options}"


def run(tmp_path, engine_a, engine_b, games=2, name="out", referee=None, **config):
    config.setdefault("size", 5)
    config.setdefault("komi", 0.5)
    config.setdefault("move_timeout", 10.0)
    out_dir = tmp_path / name
    summary = run_match(engine_a, engine_b, MatchConfig(games=games, **config), str(out_dir),
                        referee_command=referee)
    assert json.loads((out_dir / "summary.json").read_text()) == summary
    return summary, out_dir


def load_sgf(path):
    return sgf.Sgf_game.from_bytes(path.read_bytes())


# --- rules ----------------------------------------------------------------------------------------

def board_from_rows(rows, superko=True):
    """rows top line first, X black, O white; returns a RulesBoard holding that position."""
    size = len(rows)
    points = {"X": [], "O": []}
    for r, row in enumerate(rows):
        for c, char in enumerate(row):
            if char in points:
                points[char].append((size - 1 - r, c))
    return RulesBoard.with_setup(size, points["X"], points["O"], superko)


def test_occupied_and_suicide_are_illegal():
    rules = board_from_rows([".X...",
                             "X....",
                             ".....",
                             ".....",
                             "....."])
    with pytest.raises(IllegalMove, match="occupied"):
        rules.play("w", (4, 1))
    with pytest.raises(IllegalMove, match="suicide"):
        rules.play("w", (4, 0))
    assert rules.board.get(4, 0) is None  # a rejected move leaves the board unchanged
    rules.play("b", (4, 0))  # filling one's own eye is legal


@pytest.mark.parametrize("superko", [True, False])
def test_simple_ko_lasts_one_move(superko):
    rules = board_from_rows([".XO..",
                             "XO.O.",
                             ".XO..",
                             ".....",
                             "....."], superko)
    rules.play("b", (3, 2))  # captures the white stone at B4
    assert rules.board.get(3, 1) is None
    with pytest.raises(IllegalMove, match="^ko$"):
        rules.play("w", (3, 1))
    rules.play("w", (0, 4))  # a ko threat elsewhere
    rules.play("b", (0, 0))
    rules.play("w", (3, 1))  # retaking is legal now
    assert rules.board.get(3, 2) is None


def test_positional_superko_only_when_enabled():
    # Black passes in between, so the recapture is not a simple ko but repeats a position.
    rows = [".XO..",
            "XO.O.",
            ".XO..",
            ".....",
            "....."]
    for superko in (True, False):
        rules = board_from_rows(rows, superko)
        rules.play("b", (3, 2))  # Black takes the ko
        rules.play("w", None)
        rules.play("b", None)  # a pass clears the simple ko
        if superko:
            with pytest.raises(IllegalMove, match="^superko$"):
                rules.play("w", (3, 1))  # recapture would repeat the position before Black took
        else:
            rules.play("w", (3, 1))
            assert rules.board.get(3, 2) is None


def test_area_margin_with_and_without_dead_stones():
    rules = board_from_rows(["..X..",
                             "..X..",
                             "..X..",
                             "..X..",
                             "O.X.."])
    assert rules.area_margin() == (5 + 10) - 1  # A/B columns touch both colours: nobody's
    assert rules.area_margin({(0, 0)}) == 25


def test_wilson_interval():
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    low, high = wilson_interval(10, 10)
    assert high == 1.0 and low == pytest.approx(0.7225, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_elo_difference():
    assert elo_difference(0.5) == 0.0
    assert elo_difference(10 / 11) == pytest.approx(400.0)       # odds 10:1 are 400 points
    assert elo_difference(0.25) == pytest.approx(-190.85, abs=0.01)
    assert elo_difference(0.25) == pytest.approx(-elo_difference(0.75))
    assert elo_difference(0.0) is None and elo_difference(1.0) is None


# --- games with fake engines ----------------------------------------------------------------------

def test_scored_games_and_alternating_colours(tmp_path, fake):
    wall = fake("--moves 'C1 C2 C3 C4 C5'")
    summary, out_dir = run(tmp_path, wall, fake(), games=2, komi=0.5)
    first, second = summary["results"]
    assert (first["black"], first["white"]) == ("A", "B")
    assert (second["black"], second["white"]) == ("B", "A")
    # Game 1: A walls the board as Black and owns all 25 points. Game 2: B passes first as
    # Black, A plays its wall as White, B passes again, so the margin is Black's -25 - komi.
    assert first["result"] == "B+24.5" and first["winner"] == "A" and first["margin"] == 24.5
    assert second["result"] == "W+25.5" and second["winner"] == "A" and second["margin"] == -25.5
    assert all(r["end"] == "two passes" for r in summary["results"])
    engine_a = summary["engines"]["A"]
    assert engine_a["wins"] == 2 and engine_a["as_black"] == {"games": 1, "wins": 1}
    assert engine_a["as_white"] == {"games": 1, "wins": 1}
    assert summary["engines"]["B"]["wins"] == 0
    assert summary["black_wins"] == 1 and summary["white_wins"] == 1
    assert summary["mean_margin_a"] == pytest.approx((24.5 + 25.5) / 2)
    assert summary["win_rate_a"] == 1.0
    assert summary["elo_a"] is None                    # 2 wins of 2: no finite difference fits
    low = summary["elo_a_95"][0]
    assert low == pytest.approx(elo_difference(wilson_interval(2, 2)[0]))
    assert summary["elo_a_95"][1] is None
    assert f"A's Elo difference +inf (95% interval {low:+.0f} to +inf)" in format_summary(summary)
    assert summary["repeated_games"] == [] and summary["distinct"]["games"] == 2
    game = load_sgf(out_dir / "game-1.sgf")
    assert game.get_root().get("RE") == "B+24.5"
    assert game.get_komi() == 0.5
    moves = [node.get_move() for node in game.get_main_sequence()[1:]]
    assert moves[0] == ("b", (0, 2)) and moves[-1] == ("b", None) and len(moves) == 11


def test_stones_played_after_the_opponents_pass_are_counted(tmp_path, fake):
    # B walls the C line and passes; A, which has more stones to play, plays D1 and D2 after B's
    # passes and loses both games (B has columns A to C at least).
    summary, _ = run(tmp_path, fake("--moves 'E1 E2 E3 E4 E5 D1 D2'"),
                     fake("--moves 'C1 C2 C3 C4 C5'"), games=2)
    assert [r["winner"] for r in summary["results"]] == ["B", "B"]
    assert [r["replies_to_pass"] for r in summary["results"]] == [{"A": 1, "B": 0},
                                                                  {"B": 0, "A": 2}]
    assert summary["engines"]["A"]["played_on_after_pass"] == 2
    assert summary["engines"]["A"]["played_on_after_pass_and_lost"] == 2
    assert summary["engines"]["B"]["played_on_after_pass"] == 0
    assert "A played stones after its opponent's pass in 2 games and lost 2 of them" in \
        format_summary(summary)
    assert "B played stones" not in format_summary(summary)


def test_games_that_repeat_up_to_symmetry_are_counted_once_as_well(tmp_path, fake):
    # A always Black: game 2 is game 1 turned about the diagonal, game 4 game 1 itself, game 3
    # another game (column B is not the mirror image of column C)
    walls = fake("--moves 'C1 C2 C3 C4 C5|A3 B3 C3 D3 E3|B1 B2 B3 B4 B5|C1 C2 C3 C4 C5'")
    summary, out_dir = run(tmp_path, walls, fake(), games=4, alternate=False)
    assert [r["duplicate_of"] for r in summary["results"]] == [None, 1, None, 1]
    assert summary["repeated_games"] == [2, 4]
    assert summary["distinct"] == {"games": 2, "wins_a": 2, "draws": 0, "win_rate_a": 1.0,
                                   "win_rate_a_95": list(wilson_interval(2, 2)),
                                   "scored_games": 2, "mean_margin_a": 24.5}
    assert summary["win_rate_a"] == 1.0 and summary["games"] == 4
    assert "repeats game 1 (up to rotation and mirroring)" in \
        load_sgf(out_dir / "game-2.sgf").get_main_sequence()[-1].get("C")
    assert "2 games repeat an earlier one" in format_summary(summary)
    # the same moves with the colours swapped are another game
    summary, _ = run(tmp_path, fake("--moves 'C1 C2 C3 C4 C5'"), fake("--moves 'C1 C2 C3 C4 C5'"),
                     games=2, name="swapped")
    assert summary["repeated_games"] == [] and summary["distinct"]["games"] == 2


@pytest.mark.parametrize("dead_a, dead_b, expected, scored_by", [
    ("A1", "A1", "B+80.5", "area, 1 dead stones removed by agreement"),
    ("A1", "", "B+80.5", "area, 1 dead stones removed by CSA*"),  # disagreement: CSA* decides
])
def test_dead_stones_removed_by_agreement_else_by_csa(tmp_path, fake, dead_a, dead_b, expected,
                                                      scored_by):
    # 9x9: Black's wall on the C line, a lone white stone at A1 inside Black's side.
    black = fake(f"--moves 'C1 C2 C3 C4 C5 C6 C7 C8 C9' --dead '{dead_a}'")
    white = fake(f"--moves 'A1' --dead '{dead_b}'")
    summary, _ = run(tmp_path, black, white, games=1, size=9)
    assert summary["results"][0]["result"] == expected
    assert summary["results"][0]["scored_by"] == scored_by


def test_a_doubtful_csa_count_is_pointed_out(tmp_path, fake):
    # Black's wall on the C line and a lone white stone at G5 in the open: CSA*'s count by
    # flood fill (the right side is neutral) and by distance differ, so it asks for a look.
    black = fake("--moves 'C1 C2 C3 C4 C5 C6 C7 C8 C9'")
    white = fake("--moves 'G5'")
    summary, out_dir = run(tmp_path, black, white, games=1, size=9)
    result = summary["results"][0]
    assert result["scored_by"].endswith(DOUBTFUL_MARK) and summary["doubtful_counts"] == [1]
    assert result["doubtful_count"] is True
    assert any(note.startswith("CSA*'s count is doubtful") for note in result["notes"])
    assert "doubtful in games 1" in format_summary(summary)
    last_node = load_sgf(out_dir / "game-1.sgf").get_main_sequence()[-1]
    assert "CSA*'s count is doubtful" in last_node.get("C")


def test_a_clear_csa_count_is_not_pointed_out(tmp_path, fake):
    black = fake("--moves 'C1 C2 C3 C4 C5 C6 C7 C8 C9'")
    summary, _ = run(tmp_path, black, fake("--moves 'A1'"), games=1, size=9)
    assert summary["results"][0]["scored_by"] == "area, 1 dead stones removed by CSA*"
    assert summary["results"][0]["doubtful_count"] is False
    assert summary["doubtful_counts"] == [] and "doubtful" not in format_summary(summary)


def test_move_cap_ends_and_scores_the_game(tmp_path, fake):
    black = fake("--moves 'A1 B1 C1 D1 E1'")
    white = fake("--moves 'A5 B5 C5 D5 E5'")
    summary, _ = run(tmp_path, black, white, games=1, max_moves=4)
    result = summary["results"][0]
    assert result["end"] == "move cap" and result["moves"] == 4
    assert result["margin"] == -0.5  # two stones each, the middle touches both
    assert summary["capped_games"] == 1


def test_resignation(tmp_path, fake):
    summary, out_dir = run(tmp_path, fake("--moves C3 --resign-at 2"), fake(), games=2)
    assert [r["result"] for r in summary["results"]] == ["W+R", "B+R"]
    assert summary["engines"]["A"]["resignations"] == 2
    assert summary["engines"]["B"]["wins"] == 2
    assert summary["forfeits"] == [] and summary["scored_games"] == 0
    assert load_sgf(out_dir / "game-2.sgf").get_root().get("RE") == "B+R"


@pytest.mark.parametrize("moves, detail", [
    ("'C3 C3'", "C3 (occupied)"),
    ("hello", "unreadable"),
    ("F1", "off board"),  # outside the 5x5 board
])
def test_illegal_move_forfeits_and_match_goes_on(tmp_path, fake, moves, detail):
    summary, out_dir = run(tmp_path, fake(f"--moves {moves}"), fake(), games=2)
    assert [r["result"] for r in summary["results"]] == ["W+F", "B+F"]
    assert summary["engines"]["B"]["wins"] == 2
    assert summary["engines"]["A"]["forfeits"] == 2
    assert summary["engines"]["A"]["restarts"] == 0  # a bad move is no reason to restart
    forfeits = summary["forfeits"]
    assert [f["game"] for f in forfeits] == [1, 2]
    assert all(f["loser"] == "A" and f["kind"] == "illegal move" for f in forfeits)
    assert all(detail in f["detail"] for f in forfeits)
    for number in (1, 2):
        game = load_sgf(out_dir / f"game-{number}.sgf")
        last = game.get_main_sequence()[-1]
        assert "forfeits" in last.get("C")


def test_crash_forfeits_and_the_engine_is_restarted(tmp_path, fake):
    pid_file = tmp_path / "pids"
    crasher = fake(f"--moves 'C3 D3' --crash-at 2 --pid-file {pid_file}")
    summary, _ = run(tmp_path, crasher, fake(), games=2)
    assert [r["result"] for r in summary["results"]] == ["W+F", "B+F"]
    assert all(f["kind"] == "crash" and "exit status 5" in f["detail"]
               for f in summary["forfeits"])
    assert summary["engines"]["A"]["restarts"] == 1
    assert len(pid_file.read_text().split()) == 2  # a second process played game 2


def test_hang_forfeits_on_time_and_the_process_is_killed(tmp_path, fake):
    pid_file = tmp_path / "pids"
    hanger = fake(f"--moves 'C3 D3' --hang-at 2 --pid-file {pid_file}")
    summary, _ = run(tmp_path, fake(), hanger, games=2, move_timeout=0.5)
    # B hangs on its second genmove: as White in game 1, as Black in game 2.
    assert [r["result"] for r in summary["results"]] == ["B+T", "W+T"]
    assert all(f["kind"] == "timeout" and f["loser"] == "B" for f in summary["forfeits"])
    pids = [int(pid) for pid in pid_file.read_text().split()]
    assert len(pids) == 2
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_refusing_a_legal_move_forfeits(tmp_path, fake):
    summary, _ = run(tmp_path, fake("--moves C3"), fake("--refuse-play"), games=1)
    result = summary["results"][0]
    assert result["result"] == "B+F"
    assert result["forfeit"]["kind"] == "refused a legal move"
    assert "play B C3" in result["forfeit"]["detail"]


def test_referee_decides_and_its_failure_falls_back(tmp_path, fake):
    summary, _ = run(tmp_path, fake(), fake(), games=1, name="ok",
                     referee=fake("--final-score W+100"))
    result = summary["results"][0]
    assert result["result"] == "W+100" and result["scored_by"] == "referee"
    assert summary["scoring"].startswith("referee: ")

    summary, _ = run(tmp_path, fake(), fake(), games=1, name="broken",
                     referee=fake("--refuse-boardsize"))
    result = summary["results"][0]
    assert result["result"] == "W+0.5" and result["scored_by"].startswith("area")
    assert any("referee failed" in note for note in result["notes"])


def test_unusable_engines_abort_the_match(tmp_path, fake):
    with pytest.raises(match.MatchAborted, match="refused 'boardsize 5'"):
        run(tmp_path, fake(), fake("--refuse-boardsize"), name="size")
    with pytest.raises(match.MatchAborted, match="failed to start"):
        run(tmp_path, fake(), str(tmp_path / "no-such-engine"), name="missing")


def test_command_line(tmp_path, fake):
    out_dir = tmp_path / "cli"
    command = [sys.executable, "-m", "engine.match", "--engine-a", fake("--moves C3"),
               "--engine-b", fake(), "--games", "2", "--size", "5", "--komi", "0.5",
               "--out", str(out_dir)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.startswith("2 games, 5x5, komi 0.5")
    assert "A win rate 100.0%" in finished.stdout
    assert "game 2/2: B (B) vs A (W): W+" in finished.stderr
    assert sorted(path.name for path in out_dir.glob("*.sgf")) == ["game-1.sgf", "game-2.sgf"]
    assert "fake engine started" in (out_dir / "engine-B.stderr.log").read_text()

    again = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert again.returncode == 1 and "already holds a match" in again.stderr

    bad = subprocess.run(command[:-2] + ["--size", "1", "--out", str(tmp_path / "x")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "board size must be 2..25" in bad.stderr


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "engine.match", *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def test_a_match_resumes_after_its_last_finished_game(tmp_path, fake):
    out_dir = tmp_path / "m"
    first = run_cli("--engine-a", fake("--moves 'C1 C2 C3 C4 C5'"), "--engine-b", fake(),
                    "--games", "3", "--size", "5", "--komi", "0.5", "--out", out_dir)
    assert first.returncode == 0, first.stderr
    # as if killed during game 3: its record cut short, no summary
    lines = (out_dir / "games.jsonl").read_text().splitlines(keepends=True)
    assert [json.loads(line)["number"] for line in lines] == [1, 2, 3]
    # game 1's record as written before the count of stones played after a pass was kept
    old_record = json.loads(lines[0])
    del old_record["replies_to_pass"]
    lines[0] = json.dumps(old_record) + "\n"
    (out_dir / "games.jsonl").write_text("".join(lines[:2]) + lines[2][:40])
    (out_dir / "game-3.sgf").unlink()
    (out_dir / "summary.json").unlink()

    resumed = run_cli("--resume", out_dir, "--games", "4")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stderr and "after game 2 of 4" in resumed.stderr
    assert "game 1/" not in resumed.stderr and "game 3/4: A (B) vs B (W)" in resumed.stderr
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["games"] == 4 and summary["komi"] == 0.5 and summary["size"] == 5
    assert [r["number"] for r in summary["results"]] == [1, 2, 3, 4]
    assert [r["black"] for r in summary["results"]] == ["A", "B", "A", "B"]
    assert summary["engines"]["A"]["wins"] == 4
    # A walls as Black while B passes: C2 to C5 answer a pass, counted from the old record's moves
    assert summary["results"][0]["replies_to_pass"] == {"A": 4, "B": 0}
    assert sorted(p.name for p in out_dir.glob("*.sgf")) == [f"game-{n}.sgf" for n in range(1, 5)]
    # the fake engines repeat themselves: games 3 and 4 repeat 1 and 2, as the record shows
    assert summary["repeated_games"] == [3, 4]


def test_a_match_stopped_in_its_first_game_resumes(tmp_path, fake):
    out_dir = tmp_path / "m"
    first = run_cli("--engine-a", fake("--moves 'C1 C2 C3 C4 C5'"), "--engine-b", fake(),
                    "--games", "2", "--size", "5", "--komi", "0.5", "--out", out_dir)
    assert first.returncode == 0, first.stderr
    # as if stopped during game 1: no finished game, and the summary of none written on the way
    (out_dir / "games.jsonl").write_text("")
    (out_dir / "game-1.sgf").unlink()
    (out_dir / "game-2.sgf").unlink()
    resumed = run_cli("--resume", out_dir)
    assert resumed.returncode == 0, resumed.stderr
    assert "after game 0 of 2" in resumed.stderr and "already holds a match" not in resumed.stderr
    summary = json.loads((out_dir / "summary.json").read_text())
    assert [r["number"] for r in summary["results"]] == [1, 2]


def test_resume_refuses_what_it_cannot_continue(tmp_path, fake):
    out_dir = tmp_path / "m"
    assert run_cli("--engine-a", fake("--moves C3"), "--engine-b", fake(), "--games", "1",
                   "--size", "5", "--out", out_dir).returncode == 0
    done = run_cli("--resume", out_dir)
    assert done.returncode == 1 and "has played all 1 of its games; give --games N" in done.stderr
    changed = run_cli("--resume", out_dir, "--games", "2", "--komi", "3")
    assert changed.returncode == 2 and "--komi: a resumed match keeps its own" in changed.stderr
    nothing = run_cli("--resume", tmp_path / "empty")
    assert nothing.returncode == 1 and "holds no match to resume (match.json missing)" in \
        nothing.stderr
    lines = (out_dir / "games.jsonl").read_text()
    (out_dir / "games.jsonl").write_text("{not json\n" + lines)
    damaged = run_cli("--resume", out_dir, "--games", "3")
    assert damaged.returncode == 1 and "games.jsonl, line 1, is damaged" in damaged.stderr
    assert (out_dir / "games.jsonl").read_text() == "{not json\n" + lines   # nothing lost
    again = run_cli("--engine-a", fake(), "--engine-b", fake(), "--out", out_dir)
    assert again.returncode == 1 and f"continue it with --resume {out_dir}" in again.stderr


def test_sigterm_stops_the_match_kills_engines_and_keeps_the_summary(tmp_path, fake):
    pid_file = tmp_path / "pids"
    out_dir = tmp_path / "stopped"
    command = [sys.executable, "-m", "engine.match", "--engine-a", fake("--moves C3"),
               "--engine-b", fake(f"--moves C4 --hang-at 2 --pid-file {pid_file}"),
               "--games", "3", "--size", "5", "--move-timeout", "60", "--out", str(out_dir)]
    match_process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
    try:
        deadline = time.monotonic() + 20
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # B is now hanging on its second move of game 1
        match_process.send_signal(signal.SIGTERM)
        stdout, stderr = match_process.communicate(timeout=20)
    finally:
        if match_process.poll() is None:
            match_process.kill()
    assert match_process.returncode == 130, stderr
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["games"] == 0
    assert stdout.startswith("0 games (interrupted)")
    for pid in map(int, pid_file.read_text().split()):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


# --- GNU Go ---------------------------------------------------------------------------------------

def replayed_area_margin(game):
    board = boards.Board(game.get_size())
    for node in game.get_main_sequence()[1:]:
        colour, move = node.get_move()
        if move is not None:
            board.play(*move, colour)
    return board.area_score() - game.get_komi()


@pytest.mark.external
@needs_gnugo
def test_two_gnugo_games(tmp_path):
    gnugo_1 = "gnugo --mode gtp --level 1 --chinese-rules"
    summary, out_dir = run(tmp_path, gnugo_1, gnugo_1 + " --seed 3", games=2, size=7, komi=7)
    assert summary["games"] == 2 and summary["forfeits"] == []
    assert summary["engines"]["A"]["name"].startswith("GNU Go")
    wins = {"A": 0, "B": 0}
    for number, result in enumerate(summary["results"], start=1):
        game = load_sgf(out_dir / result["sgf"])
        root = game.get_root()
        assert root.get("RE") == result["result"]
        assert root.get("PB").endswith(f"({result['black']})")
        assert result["end"] in ("two passes", "resignation", "move cap")
        assert len(game.get_main_sequence()) - 1 == result["moves"] > 4
        if result["scored_by"] == "area, engines agree no stones are dead":
            assert replayed_area_margin(game) == result["margin"]
        winner_colour = game.get_winner()
        if winner_colour is not None:
            label = result["black"] if winner_colour == "b" else result["white"]
            wins[label] += 1
    assert {label: summary["engines"][label]["wins"] for label in wins} == wins
    assert summary["draws"] == 2 - sum(wins.values())  # komi 7 on 7x7 allows a draw
    assert summary["black_wins"] + summary["white_wins"] + summary["draws"] == 2


@pytest.mark.external
@needs_gnugo
def test_gnugo_referee(tmp_path):
    gnugo_1 = "gnugo --mode gtp --level 1 --chinese-rules"
    # GNU Go resigns hopeless games, which leaves nothing to score; on 7x7 with komi 7 it plays
    # them out.
    summary, _ = run(tmp_path, gnugo_1, gnugo_1, games=1, size=7, komi=7, referee=gnugo_1)
    result = summary["results"][0]
    assert result["end"] == "two passes", result["notes"]
    assert result["scored_by"] == "referee" and result["notes"] == []
    expected = "0" if result["margin"] == 0 else match.result_string(
        "b" if result["margin"] > 0 else "w", result["margin"])
    assert result["result"] == expected
