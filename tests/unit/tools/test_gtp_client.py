"""GtpClient against a scripted fake engine: replies, errors, crashes, hangs, process cleanup."""
import os
import shutil
import sys
import time

import pytest

from engine.tools.gtp_client import (GtpClient, GtpCommandError, GtpEngineCrashed, GtpEngineFailure,
                               GtpProtocolError, GtpTimeout, GNUGO_FALLBACK_PATH, command_argv,
                               find_gnugo)

# Each command name is a scenario; anything unknown gets the canonical error.
FAKE_ENGINE = r'''
import os, subprocess, sys, time

def reply(text):
    sys.stdout.write(text)
    sys.stdout.flush()

for line in sys.stdin:
    command = line.strip()
    if command == "list_commands":
        reply("= alpha\nbeta\ngamma\n\n")
    elif command == "name":
        reply("= fake\n\n")
    elif command == "crlf":
        reply("= one\r\ntwo\r\n\r\n")
    elif command == "blank_first":
        reply("\n\n= after blanks\n\n")
    elif command == "tab":
        reply("=\tA1\tB2\n\n")
    elif command == "empty":
        reply("=\n\n")
    elif command == "in_pieces":
        reply("= fir")
        time.sleep(0.1)
        reply("st\nsec")
        time.sleep(0.1)
        reply("ond\n\n")
    elif command == "two_replies_in_one_write":
        reply("= 1\n\n= 2\n\n")
    elif command == "fail":
        reply("? no such thing\n\n")
    elif command == "garbage":
        reply("hello there\n\n")
    elif command == "crash":
        os._exit(3)
    elif command == "hang":
        time.sleep(60)
    elif command == "spawn_and_hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        reply("= %d\n\n" % child.pid)
        time.sleep(60)
    elif command == "quit":
        reply("=\n\n")
        break
    else:
        reply("? unknown command\n\n")
'''


@pytest.fixture
def fake_engine(tmp_path):
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    return [sys.executable, str(script)]


@pytest.fixture
def client(fake_engine):
    engine = GtpClient(fake_engine)
    yield engine
    engine.kill()


def process_is_gone(pid, wait=3.0):
    """True once pid no longer runs (absent, or a zombie waiting for a parent to reap it)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                state = stat.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


def test_single_and_multi_line_replies(client):
    assert client.send("name") == "fake"
    assert client.send("list_commands") == "alpha\nbeta\ngamma"
    assert client.list_commands() == ["alpha", "beta", "gamma"]
    assert client.known_command("beta")
    assert not client.known_command("delta")
    assert client.send("empty") == ""


def test_reply_normalisation(client):
    assert client.send("crlf") == "one\ntwo"
    assert client.send("blank_first") == "after blanks"
    assert client.send("tab") == "A1 B2"
    assert client.send("in_pieces", timeout=5) == "first\nsecond"


def test_replies_stay_in_step_when_they_arrive_together(client):
    # The engine answers once more than asked; the extra reply must be read by the next send.
    assert client.send("two_replies_in_one_write") == "1"
    assert client.send("name") == "2"


def test_error_reply_raises_and_engine_stays_usable(client):
    with pytest.raises(GtpCommandError) as raised:
        client.send("fail")
    assert raised.value.message == "no such thing"
    assert raised.value.command == "fail"
    with pytest.raises(GtpCommandError, match="unknown command"):
        client.send("frobnicate")
    assert client.usable
    assert client.send("name") == "fake"


def test_crash_is_detected_and_later_sends_fail_at_once(client):
    with pytest.raises(GtpEngineCrashed, match="exit status 3"):
        client.send("crash", timeout=5)
    assert not client.usable
    assert client.returncode == 3
    with pytest.raises(GtpEngineFailure, match="no longer usable"):
        client.send("name")


def test_timeout_kills_the_engine(client):
    pid = client.pid
    started = time.monotonic()
    with pytest.raises(GtpTimeout, match="within 0.3 s"):
        client.send("hang", timeout=0.3)
    assert time.monotonic() - started < 2.0
    assert not client.usable
    assert process_is_gone(pid)


def test_timeout_kills_the_engines_children_too(client):
    child_pid = int(client.send("spawn_and_hang", timeout=5))
    with pytest.raises(GtpTimeout):
        client.send("name", timeout=0.3)
    assert process_is_gone(client.pid)
    assert process_is_gone(child_pid)


def test_garbage_reply_is_a_protocol_error(client):
    with pytest.raises(GtpProtocolError, match="hello there"):
        client.send("garbage", timeout=5)
    assert not client.usable


def test_commands_must_be_one_line(client):
    with pytest.raises(ValueError):
        client.send("name\nquit")
    with pytest.raises(ValueError):
        client.send("   ")
    assert client.send("name") == "fake"


def test_close_sends_quit_and_reaps(fake_engine):
    transcript = []
    with GtpClient(fake_engine, transcript=lambda *entry: transcript.append(entry)) as engine:
        engine.send("name")
    assert engine.returncode == 0  # exited by itself after `quit`, not killed
    assert transcript == [(">", "name"), ("<", "= fake"), (">", "quit"), ("<", "=")]


def test_missing_program_raises_oserror_naming_it(tmp_path):
    missing = str(tmp_path / "no-such-engine")
    with pytest.raises(OSError, match="no-such-engine"):
        GtpClient([missing, "--mode", "gtp"])


def test_command_argv():
    assert command_argv("prog --flag 'two words'") == ["prog", "--flag", "two words"]
    assert command_argv(["prog", 3]) == ["prog", "3"]
    with pytest.raises(ValueError):
        command_argv("  ")


@pytest.mark.external
@pytest.mark.skipif(find_gnugo() is None, reason="GNU Go is not installed (apt-get install gnugo)")
@pytest.mark.parametrize("gnugo_dir_on_path", [False, True])
def test_bare_gnugo_resolves_and_talks_gtp(gnugo_dir_on_path, monkeypatch):
    # Both ways PATH is set in practice: root's PATH lacks /usr/games (the bare name becomes the
    # Debian path), a user's has it (the bare name stays and the system finds it on PATH).
    gnugo_dir = os.path.dirname(os.path.realpath(find_gnugo()))
    if not gnugo_dir_on_path and not os.access(GNUGO_FALLBACK_PATH, os.X_OK):
        pytest.skip(f"GNU Go is not at {GNUGO_FALLBACK_PATH}: off PATH it cannot be found")
    others = [d for d in os.environ.get("PATH", os.defpath).split(os.pathsep)
              if d and os.path.realpath(d) != gnugo_dir and not os.path.exists(os.path.join(d, "gnugo"))]
    monkeypatch.setenv("PATH", os.pathsep.join(([gnugo_dir] if gnugo_dir_on_path else []) + others))
    argv = command_argv("gnugo --mode gtp --level 1")
    assert (argv[0] == "gnugo") == gnugo_dir_on_path
    resolved = shutil.which(argv[0])
    assert resolved and os.path.samefile(resolved, find_gnugo())
    with GtpClient(argv) as gnugo:
        gnugo.send("boardsize 5", timeout=10)
        gnugo.send("clear_board", timeout=10)
        assert gnugo.known_command("final_status_list")
        gnugo.send("play b a1", timeout=10)
        with pytest.raises(GtpCommandError, match="illegal move"):
            gnugo.send("play w a1", timeout=10)
        assert gnugo.send("genmove w", timeout=10).upper() != "A1"