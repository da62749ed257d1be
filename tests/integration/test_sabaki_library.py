"""kosumi driven by Sabaki's own GTP library (@sabaki/gtp, from the npm registry), not a replay:
pipelined attach, a whole game by kata-genmove_analyze, kata-analyze interrupted by the next
command. .ci/run installs the library into .ci/node_modules; elsewhere the test skips and says why."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import REPO

LIBRARY = REPO / ".ci" / "node_modules" / "@sabaki" / "gtp"
PLAY_GAME = Path(__file__).resolve().parent / "sabaki" / "play_game.js"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(
    NODE is None or not LIBRARY.is_dir(),
    reason="needs node and @sabaki/gtp in .ci/node_modules (npm install --prefix .ci @sabaki/gtp)")


@pytest.mark.parametrize("size, options", [(7, []), (9, []),
                                           (9, ["--search", "mcts", "--playouts", "60"]),
                                           (9, ["--player", "policy"])])
def test_a_whole_game_through_sabakis_gtp_library(size, options):
    completed = subprocess.run(
        [NODE, str(PLAY_GAME), sys.executable,
         str(REPO / "gtp_server.py"), str(size), *options],
        capture_output=True, text=True, timeout=180,
        env={"NODE_PATH": str(LIBRARY.parent.parent), "PATH": "/usr/bin:/bin"})
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report["errors"] == []
    assert report["name"] == "kosumi" and report["protocol"] == "2" and report["lists_kata"]
    assert report["moves"] > size and (report["passes"] == 2 or report["resigned"])
    assert report["infoLines"] >= 1 and report["streamEndedOk"]
    assert report["interruptReply"] == "2"
    assert report["score"] == "0" or report["score"][:2] in ("B+", "W+")
