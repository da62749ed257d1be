"""The README's two commands are what a newcomer runs: CI must run the test command verbatim,
and that command must install what the tests import. The engine command lines of the README and
of docs/PLAYING.md must parse, and the strong mode they show must play."""
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def readme_command(section):
    """The first fenced code block under the README heading `section`."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```\n(.*?)\n```", body, re.DOTALL).group(1).strip()


def test_ci_runs_exactly_the_readme_test_command():
    command = readme_command("Run the tests")
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    steps = [line.strip() for line in script.splitlines() if line.strip() and not line.startswith("#")]
    assert steps[-1] == command


def test_the_test_command_installs_the_test_extras_it_needs():
    command = readme_command("Run the tests")
    assert command.startswith("pip install -e '.[test]' && ") and command.endswith("python -m pytest -q")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    names = {re.split(r"[<>=!~ \[]", item)[0] for item in extras["project"]["optional-dependencies"]["test"]}
    assert {"pytest", "hypothesis"} <= names
    setup = readme_command("Set up and run")
    assert setup.startswith("pip install -e . && ")


STRONG_MODE = "python gtp_server.py --search mcts --time-per-move 1 --threads 2"


def engine_command_lines(path, section=None):
    """The `python gtp_server.py ...` lines of a doc (of its `## section` if given), comments cut."""
    text = (REPO / path).read_text(encoding="utf-8")
    if section is not None:
        text = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return [line.split("#")[0].split() for line in text.splitlines()
            if line.strip().startswith("python gtp_server.py")]


def test_the_readme_shows_the_strong_mode_on_its_first_screen():
    first_screen = (REPO / "README.md").read_text(encoding="utf-8").splitlines()[:30]
    assert any(line.strip() == STRONG_MODE for line in first_screen)


def test_every_documented_engine_command_line_parses():
    from engine.gtp.main import build_parser
    commands = engine_command_lines("README.md") + engine_command_lines("docs/PLAYING.md")
    assert STRONG_MODE.split() in commands
    for command in commands:
        build_parser().parse_args(command[2:])      # SystemExit on an unknown or bad option


def test_the_strong_mode_command_lines_parse_and_the_strongest_plays():
    import subprocess
    import sys
    from engine.gtp.main import build_parser
    commands = engine_command_lines("docs/PLAYING.md", "The strong mode: tree search")
    assert len(commands) >= 4
    for command in commands:
        build_parser().parse_args(command[2:])      # SystemExit on an unknown or bad option
    strongest = next(c for c in commands if "--threads" in c and "--time-per-move" in c)
    assert strongest == STRONG_MODE.split()
    result = subprocess.run([sys.executable, *strongest[1:], "--log-level", "debug"], cwd=REPO,
                            input=b"boardsize 9\nclear_board\ngenmove b\nquit\n",
                            capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr.decode()
    replies = result.stdout.decode().split("\n\n")
    assert re.fullmatch(r"= [A-HJ][1-9]", replies[2].strip()), replies
    # it searched (how far in its second depends on the machine's load: benchmarks measure that)
    simulations = int(re.search(r"(\d+) simulations in", result.stderr.decode()).group(1))
    assert simulations > 0
