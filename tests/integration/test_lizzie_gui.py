"""Lizzie 0.7.4 itself (Debian's liblizzie-java) driving kosumi under a virtual X server (Xvfb):
with `--override-version 0.17` it gets past its Leela Zero version check and starts analysing;
without it, its "requires version 0.15" box blocks the analysis. Skips, saying why, without
Lizzie or Xvfb (apt-get install liblizzie-java xvfb). kosumi's debug log shows what Lizzie sent."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.paths import REPO

LIZZIE_JAR = Path("/usr/share/java/lizzie.jar")
XVFB = shutil.which("Xvfb")
JAVA = shutil.which("java")

pytestmark = pytest.mark.skipif(
    XVFB is None or JAVA is None or not LIZZIE_JAR.exists(),
    reason="needs Lizzie and Xvfb (apt-get install liblizzie-java xvfb)")


def start_xvfb():
    """An X server on a free display; returns (process, display)."""
    read_end, write_end = os.pipe()
    process = subprocess.Popen([XVFB, "-displayfd", str(write_end), "-screen", "0", "1280x900x24"],
                               pass_fds=(write_end,), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    os.close(write_end)
    with os.fdopen(read_end) as numbers:
        display = numbers.readline().strip()
    assert display.isdigit(), "Xvfb did not report a display"
    return process, f":{display}"


def stop(process):
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(process.pid, signal.SIGKILL)


def received(log):
    """The commands kosumi received, from its debug log."""
    if not log.exists():
        return []
    return [line.split("<< ", 1)[1].split(" ", 1)[-1] for line in log.read_text().splitlines()
            if " kosumi.gtp DEBUG << " in line]


def run_lizzie(tmp_path, display, engine_options, until, seconds, linger=0.0):
    """Start Lizzie with kosumi as its engine on 9x9; return the commands kosumi received by the
    time `until(commands)` holds (and `linger` seconds more) or `seconds` have passed."""
    home = tmp_path / "home"
    (home / ".config" / "leela-zero").mkdir(parents=True)
    log = tmp_path / "kosumi.log"
    command = [sys.executable, str(REPO / "gtp_server.py"), "--evaluator", "uniform",
               "--log-level", "debug", "--log-file", str(log), *engine_options]
    config = {"leelaz": {"engine-command": " ".join(command)}, "ui": {"board-size": 9}}
    (home / ".config" / "leela-zero" / "lizzie-config.txt").write_text(json.dumps(config))
    env = dict(os.environ, DISPLAY=display, JAVA_TOOL_OPTIONS=f"-Duser.home={home}")
    lizzie = subprocess.Popen([JAVA, "-jar", str(LIZZIE_JAR)], cwd=home, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not until(received(log)):
            time.sleep(0.5)
        time.sleep(linger)
        return received(log)
    finally:
        stop(lizzie)


@pytest.mark.slow
def test_lizzie_gets_past_its_version_check_and_analyses(tmp_path):
    xvfb, display = start_xvfb()
    try:
        commands = run_lizzie(tmp_path / "override", display, ["--override-version", "0.17"],
                              until=lambda c: any(x.startswith("lz-analyze") for x in c),
                              seconds=120)
        assert commands[:3] == ["name", "version", "boardsize 9"], commands
        assert any(x.startswith("lz-analyze") for x in commands), commands
        # Without the override, Lizzie's modal box holds everything after `version` back.
        commands = run_lizzie(tmp_path / "plain", display, [],
                              until=lambda c: "boardsize 9" in c, seconds=120, linger=8)
        assert "version" in commands, commands
        assert not any(x.startswith("lz-analyze") for x in commands), commands
    finally:
        stop(xvfb)
