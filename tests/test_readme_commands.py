"""The README's two commands are what a newcomer runs: CI must run the test command verbatim,
and that command must install what the tests import."""
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
