"""The GTP layer: line cleaning, replies, the registry, error handling, the real process on pipes
(stdout hygiene, exit status, pipelining, streamed analysis and its interruption), the traffic of
the controllers kosumi must work with (CONTROLLERS.md), the SGF round trip and time control.

Engines run with the uniform evaluator (an area count), never the shipped weights.
"""
import io
import logging
import os
import re
import select
import subprocess
import sys
import tempfile
import time

import pytest
from sgfmill import sgf

from engine.gtp.protocol import (GtpEngineBase, GtpLoop, clean_line, collect_commands, format_reply,
                                 gtp_command, parse_command_line)
from engine.gtp.main import build_engine, build_parser
from engine.play.timecontrol import LAG_MARGIN, SAFETY_FRACTION, TimeControl
from tests.paths import REPO

UNIFORM = ["--evaluator", "uniform", "--seed", "7", "--no-resign"]
REPLY = re.compile(r"^([=?])(\d*) (.*)$", re.DOTALL)


# --- helpers ----------------------------------------------------------------------------------------

def make_session(options=UNIFORM):
    engine = build_engine(build_parser().parse_args(options))
    return GtpLoop(engine, io.BytesIO(b""), io.BytesIO())


def ask(session, line):
    """(success, text) of one command in-process; asserts the reply's framing."""
    raw = session.handle_line(line + "\n")
    return split_reply(raw)[0::2]


def split_reply(raw):
    assert raw.endswith("\n\n") and "\n\n" not in raw[:-2], f"bad framing: {raw!r}"
    match = REPLY.match(raw[:-2])
    assert match, f"not a GTP reply: {raw!r}"
    return match.group(1) == "=", match.group(2), (match.group(3) or "").strip()


def snapshot(engine):
    """Everything a controller can change."""
    state = engine.state
    control = engine.time_control
    return (engine.size, engine.komi, state.rules, state.board.hash, tuple(state.history),
            state.to_move, state.board.captures(1), state.board.captures(2),
            control.system, control.main_time, control.byoyomi_time, control.byoyomi_stones,
            control.byoyomi_periods, repr(control.clocks), engine.handicap_stones,
            repr(engine.setup), engine.player.rng.bit_generator.state["state"]["state"])


class EngineProcess:
    """`python gtp_server.py` on pipes, read line by line with timeouts (stderr to a file, so a
    chatty log can never fill a pipe and stall the engine)."""

    def __init__(self, *options):
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, "gtp_server.py", *options], cwd=REPO, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.stderr)
        self.buffer = b""

    def send(self, text):
        self.process.stdin.write(text.encode("utf-8"))
        self.process.stdin.flush()

    def read_line(self, timeout=30.0):
        """The next stdout line without its newline; None at end of output."""
        deadline = time.monotonic() + timeout
        fd = self.process.stdout.fileno()
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no line within {timeout}s; got {self.buffer!r}"
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return None if not self.buffer else self._take(len(self.buffer))
                self.buffer += chunk
        return self._take(self.buffer.index(b"\n") + 1)[:-1]

    def _take(self, count):
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data.decode("utf-8")

    def nothing_more_within(self, seconds):
        if self.buffer:
            return False
        ready, _, _ = select.select([self.process.stdout.fileno()], [], [], seconds)
        return not ready

    def read_reply(self, timeout=60.0):
        """The lines of one reply (up to its closing empty line)."""
        lines = []
        while True:
            line = self.read_line(timeout)
            assert line is not None, f"output ended inside a reply: {lines}"
            if line == "" and lines:
                return lines
            assert line != "", "an empty line before any reply"
            lines.append(line)

    def command(self, line, timeout=60.0):
        """(success, id, text) for one command sent and answered."""
        self.send(line + "\n")
        lines = self.read_reply(timeout)
        return split_reply("\n".join(lines) + "\n\n")

    def finish(self, timeout=30.0):
        """Close stdin, wait; (exit status, remaining stdout, stderr text)."""
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        rest = self.process.stdout.read()
        status = self.process.wait(timeout)
        self.stderr.seek(0)
        return status, (self.buffer + rest).decode("utf-8"), self.stderr.read().decode("utf-8")

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def engine_process():
    started = []

    def start(*options):
        process = EngineProcess(*options)
        started.append(process)
        return process
    yield start
    for process in started:
        process.kill()


# --- line cleaning and replies (GTP 2.2, 3) -----------------------------------------------------------

@pytest.mark.parametrize("raw, expected", [
    ("  5 genmove b  # a comment\n", ("5", "genmove", ["b"])),
    ("\tplay\tB\tD4\r\n", ("", "play", ["B", "D4"])),
    ("pro\x01tocol_\x7fversion\n", ("", "protocol_version", [])),
    ("12\n", ("12", "", [])),
    ("007 name\n", ("007", "name", [])),
    ("-3 name\n", ("", "-3", ["name"])),
])
def test_command_lines_are_cleaned_as_gtp_says(raw, expected):
    command = parse_command_line(raw)
    assert (command.id, command.name, command.args) == expected


@pytest.mark.parametrize("raw", ["\n", "   \t \r\n", "# only a comment\n", "\x00\x01\x02\n", "  # x\n"])
def test_empty_and_comment_lines_are_not_commands(raw):
    assert parse_command_line(raw) is None
    assert clean_line(raw) == ""


def test_replies_never_contain_an_empty_line():
    assert format_reply(True, "3", "a\n\nb\n  \n") == "=3 a\nb\n\n"
    assert format_reply(False, "", "illegal move") == "? illegal move\n\n"
    assert format_reply(True, "", "") == "= \n\n"
    # showboard starts its diagram on the line after the `=`.
    assert format_reply(True, "1", "\n  A B\n2 . .") == "=1 \n  A B\n2 . .\n\n"


# --- the registry ------------------------------------------------------------------------------------

def test_list_commands_and_known_command_come_from_the_registry():
    session = make_session()
    ok, listed = ask(session, "list_commands")
    assert ok
    names = listed.split("\n")
    assert names == list(session.engine.commands)
    assert len(names) == len(set(names))
    for name in names:
        assert ask(session, f"known_command {name}") == (True, "true")
        spec = session.engine.commands[name]
        assert spec.summary, f"{name} has no docstring"
    assert ask(session, "known_command list-commands") == (True, "false")


def test_a_registered_method_becomes_a_command():
    class Tiny(GtpEngineBase):
        @gtp_command("echo_twice")
        def cmd_echo(self):
            """Say it twice."""
            return "hi\nhi"
    assert list(collect_commands(Tiny))[-1] == "echo_twice"
    loop = GtpLoop(Tiny(), io.BytesIO(b""), io.BytesIO())
    assert loop.handle_line("4 echo_twice\n") == "=4 hi\nhi\n\n"
    assert loop.handle_line("4 echo_thrice\n") == "?4 unknown command\n\n"


# --- errors change nothing, and never stop the engine -------------------------------------------------

FAILING_COMMANDS = [
    "boardsize 0", "boardsize 26", "boardsize x", "komi", "komi 1 2", "komi inf",
    "play b", "play b Z9", "play purple D4", "play b D4 E4", "play b E5", "play w E5",
    "genmove", "genmove x", "fixed_handicap 2", "place_free_handicap 2", "set_free_handicap C3 D4",
    "undo now", "time_settings 1 2", "time_settings -5 0 0", "time_left b -1 0",
    "time_left b 10", "kgs-time_settings absolute", "kgs-time_settings canadian 1 2",
    "final_status_list", "final_status_list sleeping", "loadsgf", "loadsgf /no/such/file.sgf",
    "is_legal b", "list_stones", "kata-analyze b 50 bogus 1", "kata-genmove_analyze x",
    "lz-analyze b x", "lz-genmove_analyze b ownership true", "reg_genmove",
    "kosumi-move_values", "kosumi-chosen_move z", "known_command", "quit now", "showboard 9",
]


@pytest.mark.parametrize("line", FAILING_COMMANDS)
def test_a_failing_command_changes_nothing(line):
    session = make_session()
    for setup in ("boardsize 9", "komi 5.5", "time_settings 100 10 5", "play b E5", "play w C3"):
        assert ask(session, setup)[0]
    before = snapshot(session.engine)
    ok, message = ask(session, line)
    assert not ok
    assert message, "an error reply needs a message"
    assert snapshot(session.engine) == before
    assert ask(session, "protocol_version") == (True, "2")


def test_canonical_error_texts():
    session = make_session()
    assert ask(session, "frobnicate") == (False, "unknown command")
    assert ask(session, "boardsize 1") == (False, "unacceptable size")
    assert ask(session, "undo") == (False, "cannot undo")
    assert ask(session, "play b D4")[0]
    assert ask(session, "play w D4") == (False, "illegal move")
    assert ask(session, "fixed_handicap 2") == (False, "board not empty")
    assert ask(session, "clear_board")[0]
    assert ask(session, "fixed_handicap 1") == (False, "invalid number of stones")
    assert ask(session, "set_free_handicap D4 D4") == (False, "bad vertex list")
    ok, message = ask(session, "play b X99")
    assert not ok and message.startswith("syntax error") and "'X99'" in message


class ExplodingEvaluator:
    def evaluate(self, state):
        raise RuntimeError("the net is on fire")

    def successor_values(self, state):
        raise RuntimeError("the net is on fire")


def test_an_exception_in_a_handler_becomes_a_failure_and_the_engine_goes_on(caplog):
    session = make_session()
    session.engine.player.evaluator = ExplodingEvaluator()
    session.engine.evaluator = ExplodingEvaluator()
    before = snapshot(session.engine)
    for line in ("genmove b", "kosumi-score_estimate", "kosumi-ownership"):   # final_score needs no net (CSA*)
        ok, message = ask(session, line)
        assert not ok and message == "internal error: RuntimeError: the net is on fire"
    assert snapshot(session.engine) == before
    assert "the net is on fire" in caplog.text   # the traceback goes to the log
    # A stream that fails before its first line is a plain failure too.
    raw = session.handle_line("7 kata-analyze b 50\n")
    assert raw == "?7 internal error: RuntimeError: the net is on fire\n\n"
    assert ask(session, "name") == (True, "kosumi")


# --- the real process on pipes -------------------------------------------------------------------------

def test_stdout_carries_protocol_only_and_end_of_input_exits_0(engine_process):
    engine = engine_process(*UNIFORM, "--log-level", "debug")
    commands = ["1 protocol_version", "boardsize 9", "2 genmove b", "showboard", "3 final_score",
                "foo", "4 kata-genmove_analyze w 10", "5 list_commands"]
    engine.send("".join(line + "\n" for line in commands))
    status, output, errors = engine.finish()
    assert status == 0
    replies = output.split("\n\n")
    assert replies[-1] == ""
    assert len(replies) - 1 == len(commands)
    for line, reply in zip(commands, replies):
        success, reply_id, _ = split_reply(reply + "\n\n")
        assert reply_id == (line.split()[0] if line[0].isdigit() else "")
        assert success == (line != "foo")
    assert "<< 2 genmove b" in errors   # the debug log went to stderr


def test_a_stray_print_cannot_reach_the_protocol_stream():
    script = (
        "import sys\n"
        "from engine.gtp.commands import KosumiEngine\n"
        "from engine.gtp.protocol import gtp_command, run_stdio\n"
        "from engine.gtp.main import build_engine, build_parser\n"
        "class Noisy(KosumiEngine):\n"
        "    @gtp_command('noisy')\n"
        "    def cmd_noisy(self):\n"
        "        '''Writes to stdout behind the protocol's back.'''\n"
        "        print('stray print')\n"
        "        import os; os.write(1, b'stray bytes on fd 1\\n')\n"
        "        return 'ok'\n"
        "args = build_parser().parse_args(['--evaluator', 'uniform'])\n"
        "base = build_engine(args)\n"
        "engine = Noisy(base.evaluator, base.player)\n"
        "sys.exit(run_stdio(engine))\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, input=b"noisy\nname\n",
                            capture_output=True, timeout=60)
    assert result.returncode == 0
    assert result.stdout == b"= ok\n\n= kosumi\n\n"
    assert b"stray print" in result.stderr and b"stray bytes on fd 1" in result.stderr


def test_quit_answers_and_exits_0(engine_process):
    engine = engine_process(*UNIFORM)
    assert engine.command("9 quit") == (True, "9", "")
    status, rest, _ = engine.finish()
    assert status == 0 and rest == ""


def test_a_missing_weight_file_fails_clearly_before_any_protocol(engine_process):
    engine = engine_process("--weights", "/no/such/dir/net.npz")
    status, output, errors = engine.finish()
    assert status == 2
    assert output == ""
    assert "/no/such/dir/net.npz" in errors


def test_help_lists_the_options():
    result = subprocess.run([sys.executable, "gtp_server.py", "--help"], cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    for option in ("--weights", "--beta", "--seed", "--komi", "--rules", "--resign-threshold",
                   "--no-resign", "--capture-all-dead", "--log-level", "--log-file"):
        assert option in result.stdout


def test_log_file_option_keeps_stderr_quiet(engine_process, tmp_path):
    log_file = tmp_path / "kosumi.log"
    engine = engine_process(*UNIFORM, "--log-level", "debug", "--log-file", str(log_file))
    assert engine.command("boardsize 5")[0]
    assert engine.command("genmove b")[0]
    status, _, errors = engine.finish()
    assert status == 0 and errors == ""
    assert "<< genmove b" in log_file.read_text()


def test_pipelined_commands_are_answered_in_order(engine_process):
    engine = engine_process(*UNIFORM)
    lines = [f"{i} {command}" for i, command in enumerate(
        ["name", "version", "protocol_version", "list_commands", "boardsize 7", "genmove b",
         "genmove w", "undo", "list_stones w"], start=1)]
    engine.send("".join(line + "\n" for line in lines))
    for line in lines:
        success, reply_id, text = split_reply("\n".join(engine.read_reply()) + "\n\n")
        assert success and reply_id == line.split()[0]
    assert text == ""   # White's move was undone


def test_streamed_analysis_runs_until_the_next_command(engine_process):
    engine = engine_process(*UNIFORM)
    assert engine.command("boardsize 9")[0]
    assert engine.command("play b E5")[0]
    engine.send("5 kata-analyze W 50\n")
    assert engine.read_line() == "=5 "
    info = engine.read_line()
    assert info.startswith("info move ") and " pv " in info
    # The stream stays open: no closing empty line until the controller sends something.
    assert engine.nothing_more_within(0.5)
    engine.send("6 protocol_version\n")     # Sabaki interrupts this way
    assert engine.read_line() == ""          # the stream ends with an empty line ...
    assert engine.read_reply() == ["=6 2"]   # ... and the new command is answered
    # The analysis changed nothing; lz-analyze behaves the same.
    assert engine.command("list_stones w")[2] == ""
    engine.send("lz-analyze 10\n")
    assert engine.read_line() == "= "
    assert re.match(r"info move \S+ visits [1-9]\d* winrate \d+ prior \d+ lcb \d+ order 0 pv ",
                    engine.read_line())
    engine.send("name\n")
    assert engine.read_line() == ""
    assert engine.read_reply() == ["= kosumi"]


def test_search_analysis_streams_growing_visits_until_the_next_command(engine_process):
    engine = engine_process(*UNIFORM, "--search", "mcts", "--playouts", "200")
    assert engine.command("boardsize 9")[0]
    engine.send("3 kata-analyze b 10\n")
    assert engine.read_line() == "=3 "
    totals = []
    for _ in range(3):     # the search goes on (pondering): each line has more visits
        line = engine.read_line(timeout=10)
        assert line.startswith("info move ") and " pv " in line
        totals.append(sum(int(v) for v in re.findall(r" visits (\d+)", line)))
    assert totals[0] < totals[1] < totals[2]
    engine.send("4 protocol_version\n")
    while True:                              # lines already written may still arrive
        line = engine.read_line(timeout=10)
        if line == "":
            break
        assert line.startswith("info move ")
    assert engine.read_reply() == ["=4 2"]
    assert engine.command("list_stones b")[2] == ""     # the analysis played nothing


def test_end_of_input_closes_a_running_analysis(engine_process):
    engine = engine_process(*UNIFORM)
    engine.send("boardsize 5\nkata-analyze b 50\n")
    status, output, _ = engine.finish()
    assert status == 0
    assert re.fullmatch(r"= \n\n= \ninfo move [^\n]+\n\n", output)


# --- what the controllers send (CONTROLLERS.md) ----------------------------------------------------------

def check_replies(engine, lines):
    """Send each line (a string, or a list of lines to pipeline), check each reply succeeds;
    returns the texts."""
    texts = []
    for item in lines:
        batch = item if isinstance(item, list) else [item]
        engine.send("".join(line + "\n" for line in batch))
        for line in batch:
            success, _, text = split_reply("\n".join(engine.read_reply()) + "\n\n")
            assert success, f"{line!r} failed: {text!r}"
            texts.append(text)
    return texts


def test_gogui_twogtp_match_traffic(engine_process):
    """Two games in one process: komi once, then only boardsize/clear_board; lowercase genmove,
    uppercase play; final_score and cputime at the end."""
    engine = engine_process(*UNIFORM)
    texts = check_replies(engine, ["protocol_version", "name", "version", "list_commands",
                                   "boardsize 9", "clear_board", "komi 7", "cputime",
                                   "time_settings 60 10 5"])
    assert "time_settings" in texts[3].split("\n")
    for game in range(2):
        if game:
            check_replies(engine, ["boardsize 9", "clear_board"])
        for turn in range(6):
            move = check_replies(engine, ["genmove b"])[0]
            assert re.fullmatch(r"[A-HJ][1-9]|pass", move)
            check_replies(engine, ["play W PASS" if turn % 2 else "play W " + "ABCDEFGHJ"[turn] + "1"])
        score = check_replies(engine, ["final_score", "cputime"])[0]
        assert re.fullmatch(r"[BW]\+\d+\.\d|0", score)
        # komi 7 survived boardsize and clear_board
        assert "komi 7;" in check_replies(engine, ["showboard"])[0]
    check_replies(engine, ["quit"])
    assert engine.finish()[0] == 0


def test_gogui_attach_and_analyze_menu(engine_process):
    engine = engine_process(*UNIFORM)
    texts = check_replies(engine, [
        "name", "protocol_version", "version", "list_commands", "name", "protocol_version",
        "boardsize 9", "clear_board", "komi 6.5", "gogui-analyze_commands", "genmove b",
        "play w C3", "undo", "undo", "set_free_handicap C3 G7", "time_settings 300 0 0",
        "time_left b 299 0", "genmove w", "cputime"])
    for entry in texts[9].split("\n"):
        analyze_type, label, command = entry.split("/")
        assert analyze_type in ("gfx", "pspairs", "string", "plist", "param") and label
        check_replies(engine, [command.replace("%m", "white")])


def test_sabaki_traffic(engine_process):
    """Attach written all at once; sync with komi before boardsize, setup stones as consecutive
    same-colour plays and set_free_handicap; moves by kata-genmove_analyze; analysis interrupted
    by protocol_version."""
    engine = engine_process(*UNIFORM)
    texts = check_replies(engine, [["name", "version", "protocol_version", "list_commands"]])
    commands = texts[3].split("\n")
    # Sabaki's choices: the first listed of these.
    assert [c for c in ("analyze", "kata-analyze", "lz-analyze") if c in commands][0] == "kata-analyze"
    assert [c for c in ("genmove_analyze", "kata-genmove_analyze", "lz-genmove_analyze")
            if c in commands][0] == "kata-genmove_analyze"
    check_replies(engine, [["komi 0", "boardsize 9", "clear_board", "play B C3", "play B G7",
                            "play B E5", "play W D4"]])
    engine.send("kata-genmove_analyze B 50\n")
    lines = engine.read_reply()
    assert lines[0] == "= " and lines[1].startswith("info move ")
    assert re.fullmatch(r"play ([A-HJ][1-9]|pass|resign)", lines[-1])
    engine.send("kata-analyze W 50\n")
    assert engine.read_line() == "= "
    assert engine.read_line().startswith("info move ")
    engine.send("protocol_version\n")
    assert engine.read_line() == ""
    assert engine.read_reply() == ["= 2"]
    check_replies(engine, [["undo", "undo", "play W D5"], "clear_board",
                           "set_free_handicap C3 G7 C7", "play W E5", "genmove B"])


@pytest.mark.parametrize("client", ["cgosclient.py", "cgosGtp.tcl"])
def test_cgos_client_traffic(engine_process, client):
    engine = engine_process(*UNIFORM, "--capture-all-dead")
    commands = check_replies(engine, ["list_commands"])[0].split("\n")
    for needed in ("boardsize", "clear_board", "komi", "play", "genmove", "quit",
                   "time_settings", "time_left"):
        assert needed in commands
    for game in range(2):
        if client == "cgosclient.py":
            check_replies(engine, ["boardsize 9", "komi 7.0", "time_settings 300 0 0",
                                   "clear_board"])
        else:
            check_replies(engine, ["boardsize 9", "clear_board", "komi 7.0",
                                   "time_settings 300 0 0"])
        wishes = iter(["e5", "c3", "pass", "g7", "d4", "pass", "pass", "pass"])
        for turn in range(8):
            # The opponent's move (CGOS forwards it in lowercase); if kosumi took the point,
            # the opponent passes instead (is_legal is the test's question, not CGOS traffic).
            wish = next(wishes)
            if wish != "pass" and check_replies(engine, [f"is_legal b {wish}"])[0] == "0":
                wish = "pass"
            check_replies(engine, [f"play b {wish}", f"time_left w {290 - turn} 0"])
            move = check_replies(engine, ["genmove w"])[0]
            assert re.fullmatch(r"[A-HJ][1-9]|pass|resign", move)
            if move == "resign":
                break
    engine.send("quit\n")
    assert engine.read_reply() == ["= "]


# --- SGF round trip ------------------------------------------------------------------------------------

def test_printsgf_and_loadsgf_round_trip(tmp_path):
    session = make_session(UNIFORM + ["--beta", "2"])
    assert ask(session, "boardsize 9")[0] and ask(session, "komi 5.5")[0]
    assert ask(session, "fixed_handicap 2")[0]
    for turn in range(40):
        assert ask(session, f"genmove {'wb'[turn % 2]}")[0]
    assert ask(session, "play w pass")[0]
    path = tmp_path / "game.sgf"
    assert ask(session, f"printsgf {path}") == (True, "")
    ok, text = ask(session, "printsgf")
    assert ok and path.read_text() == text + "\n"

    game = sgf.Sgf_game.from_string(path.read_text())
    assert game.get_size() == 9 and game.get_komi() == 5.5 and game.get_handicap() == 2
    played = [node.get_move() for node in game.get_main_sequence()[1:]]
    engine_history = session.engine.state.history[2:]
    assert len(played) == len(engine_history) == 41
    assert played[-1] == ("w", None)

    other = make_session()
    assert ask(other, f"loadsgf {path}") == (True, "")
    for query in ("list_stones b", "list_stones w", "showboard"):
        assert ask(other, query) == ask(session, query)
    assert other.engine.state.history == session.engine.state.history
    assert other.engine.state.board.hash == session.engine.state.board.hash


# --- time control --------------------------------------------------------------------------------------

def allowance(seconds):
    return max(0.0, seconds * SAFETY_FRACTION - LAG_MARGIN)


def test_absolute_time_is_spread_over_the_remaining_moves():
    control = TimeControl()
    assert control.budget(1, 81) is None               # no limit by default
    control.set_gtp(300, 0, 0)                         # CGOS 9x9
    assert control.budget(1, 81) == pytest.approx(allowance(300 / 40.5))
    control.update_from_time_left(1, 10, 0)
    assert control.budget(1, 81) == pytest.approx(allowance(10 / 40.5))
    assert control.budget(1, 4) == pytest.approx(allowance(10 / 12))   # never fewer than 12 moves
    control.update_from_time_left(1, 0.2, 0)
    assert control.budget(1, 81) == 0.0
    control.charge(1, 100)                             # out of time: the clock stays at zero
    assert control.clocks[1].main_left == 0.0


def test_canadian_byoyomi_bookkeeping():
    control = TimeControl()
    control.set_gtp(60, 10, 5)                         # gogui-twogtp -time 1m+10s/5
    control.charge(2, 59.0)
    assert control.clocks[2].main_left == pytest.approx(1.0)
    assert control.budget(2, 50) <= allowance(1.0 + 10 / 5)   # never beyond what is left
    control.charge(2, 3.0)                             # main time runs out during this move
    clock = control.clocks[2]
    assert clock.in_byoyomi and clock.stones_left == 4 and clock.period_left == pytest.approx(8.0)
    assert control.budget(2, 50) == pytest.approx(allowance(8.0 / 4))
    for _ in range(4):
        control.charge(2, 1.0)
    assert control.clocks[2].stones_left == 5 and control.clocks[2].period_left == 10.0
    control.update_from_time_left(2, 3.0, 2)
    assert control.budget(2, 50) == pytest.approx(allowance(1.5))
    control.reset_clocks()                             # a new game: the settings stay
    assert control.clocks[2].main_left == 60 and not control.clocks[2].in_byoyomi


def test_special_gtp_time_settings_and_japanese_byoyomi():
    control = TimeControl()
    control.set_gtp(60, 10, 0)
    assert control.budget(1, 81) is None               # GTP: byo-yomi time with 0 stones = no limit
    control.set_japanese(0, 30, 5)
    assert control.clocks[1].in_byoyomi and control.clocks[1].periods_left == 5
    assert control.budget(1, 81) == pytest.approx(allowance(30))
    control.charge(1, 45)                              # overran one period
    assert control.clocks[1].periods_left == 4 and control.clocks[1].period_left == 30
    control.update_from_time_left(1, 12, 3)
    assert control.budget(1, 81) == pytest.approx(allowance(12))
    with pytest.raises(ValueError):
        control.set_canadian(-1, 10, 5)


def test_out_of_time_the_engine_plays_an_instant_move():
    session = make_session()
    assert ask(session, "boardsize 9")[0] and ask(session, "time_settings 300 0 0")[0]
    ok, text = ask(session, "kosumi-chosen_move b")
    assert ok and "instant" not in text
    assert ask(session, "genmove b")[0]              # measures what a full choice costs
    assert ask(session, "time_left w 0.01 0")[0]
    ok, text = ask(session, "kosumi-chosen_move w")
    assert ok and "instant move" in text
    ok, move = ask(session, "genmove w")
    assert ok and re.fullmatch(r"[A-HJ][1-9]|pass", move)
    assert ask(session, "time_left w 200 0")[0]
    assert "instant" not in ask(session, "kosumi-chosen_move w")[1]


def test_the_search_keeps_within_the_clock():
    # An unlimited number of playouts: only the clock stops the search. The engine's own CPU
    # time is the measure (a loaded machine stretches the wall time of every move, not the work
    # the engine decides to do); the wall time is only checked against a gross overrun.
    session = make_session(UNIFORM + ["--search", "mcts", "--playouts", "100000000"])
    assert ask(session, "boardsize 9")[0] and ask(session, "time_settings 0 1 1")[0]

    def genmove(colour):
        started, cpu = time.monotonic(), time.process_time()
        ok, move = ask(session, f"genmove {colour}")
        return ok, move, time.process_time() - cpu, time.monotonic() - started

    for colour in "bw":
        ok, move, cpu, wall = genmove(colour)
        assert ok and re.fullmatch(r"[A-HJ][1-9]", move)
        assert cpu < 1.0 and wall < 5.0                 # one second per move (Canadian)
    # main time nearly gone: the byo-yomi period's second is still to come
    assert ask(session, "time_left b 0.05 0")[0]
    ok, move, cpu, wall = genmove("b")
    assert ok and re.fullmatch(r"[A-HJ][1-9]|pass", move)
    assert cpu < 1.05 and wall < 5.0
    # nearly out of byo-yomi time (0.05 s for its one stone): still a move, at once
    assert ask(session, "time_left w 0.05 1")[0]
    ok, move, cpu, wall = genmove("w")
    assert ok and re.fullmatch(r"[A-HJ][1-9]|pass", move)
    assert cpu < 0.2 and wall < 5.0


def test_japanese_rules_count_territory_and_prisoners():
    session = make_session(UNIFORM + ["--rules", "japanese", "--komi", "0.5"])
    for line in ("boardsize 5", "play b A4", "play b B4", "play b C4", "play b D4", "play b E4",
                 "play b D5", "play w B5"):
        assert ask(session, line)[0]
    # Black's territory: A5-C5 (B5 taken off), E5 and the 15 points below = 19, plus the dead
    # B5 as a prisoner = 20, minus komi. (Area counting gives 25 - 0.5.)
    assert ask(session, "final_score") == (True, "B+19.5")


def test_a_doubtful_final_score_is_flagged_on_stderr_only(caplog):
    session = make_session()
    assert ask(session, "boardsize 9")[0]
    for row in range(1, 10):
        assert ask(session, f"play b C{row}")[0]
    assert ask(session, "play w G5")[0]
    # CSA*'s counts differ: flood fill leaves the right side neutral, distance splits it.
    with caplog.at_level(logging.WARNING, logger="kosumi.gtp"):
        ok, score = ask(session, "final_score")
    assert ok and re.fullmatch(r"[BW]\+\d+(\.\d)?", score)
    assert f"final_score {score} is doubtful" in caplog.text
    caplog.clear()
    assert ask(session, "play w G4")[0] and ask(session, "undo")[0] and ask(session, "undo")[0]
    with caplog.at_level(logging.WARNING, logger="kosumi.gtp"):
        assert ask(session, "final_score") == (True, "B+74.0")   # the wall owns the board
    assert "doubtful" not in caplog.text


def test_genmove_analyze_reports_the_position_before_its_move():
    session = make_session()
    for line in ("boardsize 5", "play b C3"):
        assert ask(session, line)[0]
    # Before White's move every point is Black's (a lone stone on an empty board, area count),
    # so from White's side the ownership is -1 everywhere; after it, it would not be.
    raw = session.handle_line("kata-genmove_analyze w 10 ownership true\n")
    lines = raw.rstrip("\n").split("\n")
    assert lines[0] == "= " and lines[-1].startswith("play ")
    ownership = lines[1].split(" ownership ")[1].split()
    assert ownership == ["-1.0000"] * 25
    assert ask(session, "list_stones w") == (True, lines[-1][len("play "):])


def test_an_engine_process_multiplies_on_one_blas_thread_unless_told_otherwise():
    code = "import engine.gtp.main, os; print(os.environ['OPENBLAS_NUM_THREADS'])"
    environment = {name: value for name, value in os.environ.items()
                   if name != "OPENBLAS_NUM_THREADS"}
    for given, expected in ((None, "1"), ("2", "2")):
        if given is not None:
            environment["OPENBLAS_NUM_THREADS"] = given
        shown = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True,
                               text=True, check=True).stdout.strip()
        assert shown == expected
