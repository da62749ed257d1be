"""GTP regression scripts (tests/regress/gtp/*.tst), run the way gogui-regress runs them.

Script format (gogui-regress, so `gogui-regress 'python gtp_server.py --evaluator uniform
--seed 1 --no-resign' tests/regress/gtp/*.tst` runs the same files):
    10 genmove b            a numbered command is a test
    #? [D4|E5]              its reply (text after `=id `, trimmed) must match the regex in full
                            (DOTALL, MULTILINE); [!regex] must not match; a trailing * marks a
                            known failure; a failed (`?`) reply fails the test
    boardsize 9             an unnumbered command sets up; it must succeed
    #! [illegal move]       kosumi's addition, a plain comment to gogui-regress: the command
                            before it must FAIL with a message matching the regex in full
Scripts run with tests/regress/gtp as the working directory (loadsgf paths are relative to it),
on an engine with the uniform evaluator, seed 1, never resigning, the way the command line above
makes; a first line `# options: ...` adds engine options for that script (e.g. the search player).
"""
import re
from pathlib import Path

import pytest

from engine.gtp.protocol import GtpLoop, parse_command_line

SCRIPT_DIR = Path(__file__).parent / "gtp"
SCRIPTS = sorted(SCRIPT_DIR.glob("*.tst"))
SLOW_SCRIPTS = {"search.tst"}       # several seconds of tree search
ENGINE_OPTIONS = ["--evaluator", "uniform", "--seed", "1", "--no-resign"]


def make_session(options=ENGINE_OPTIONS):
    """An in-process GTP session on a fresh engine built by the real option parser."""
    import io
    from engine.gtp.main import build_engine, build_parser
    engine = build_engine(build_parser().parse_args(options))
    return GtpLoop(engine, io.BytesIO(b""), io.BytesIO())


REPLY = re.compile(r"^([=?])(\d*)( (.*))?$", re.DOTALL)


def split_reply(raw):
    """(success, id, text) of one raw reply; asserts the GTP framing."""
    assert raw.endswith("\n\n") and "\n\n" not in raw[:-2], f"bad framing: {raw!r}"
    match = REPLY.match(raw[:-2])
    assert match, f"not a GTP reply: {raw!r}"
    return match.group(1) == "=", match.group(2), (match.group(4) or "").strip()


def parse_pattern(text):
    """(regex, negated, known_failure) of a `[...]` pattern."""
    text = text.strip()
    known_failure = text.endswith("*")
    if known_failure:
        text = text[:-1].rstrip()
    assert text.startswith("[") and text.endswith("]"), f"pattern needs brackets: {text!r}"
    regex = text[1:-1].strip()
    negated = regex.startswith("!")
    return (regex[1:] if negated else regex), negated, known_failure


def script_options(path):
    """ENGINE_OPTIONS plus those of the script's `# options:` first line."""
    first = path.read_text(encoding="utf-8").splitlines()[:1]
    if first and first[0].startswith("# options:"):
        return ENGINE_OPTIONS + first[0][len("# options:"):].split()
    return ENGINE_OPTIONS


def run_script(path, monkeypatch):
    """Run one script; returns a list of failure descriptions (empty when all passed)."""
    monkeypatch.chdir(path.parent)
    session = make_session(script_options(path))
    failures = []
    last = None   # (line number, command text, success, text) of the last command
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        stripped = line.strip()
        where = f"{path.name}:{number}"
        if stripped.startswith("#?") or stripped.startswith("#!"):
            assert last is not None, f"{where}: pattern without a command before it"
            _, command, success, text = last
            regex, negated, known_failure = parse_pattern(stripped[2:])
            matched = re.fullmatch(regex, text, re.DOTALL | re.MULTILINE) is not None
            if stripped.startswith("#?"):
                passed = success and matched != negated
            else:
                passed = not success and matched != negated
            if passed == known_failure:
                expectation = "succeed" if stripped.startswith("#?") else "fail"
                failures.append(f"{where}: {command!r} should {expectation} matching "
                                f"{stripped[2:].strip()}, got {'=' if success else '?'} {text!r}")
            last = None
            continue
        if last is not None and not re.match(r"\d+ ", last[1]) and not last[2]:
            failures.append(f"{path.name}:{last[0]}: setup command {last[1]!r} failed: {last[3]!r}")
        last = None
        if not stripped or stripped.startswith("#"):
            continue
        raw = session.handle_line(line + "\n")
        if parse_command_line(line) is None:
            continue
        success, _, text = split_reply(raw)
        last = (number, stripped, success, text)
        if session.engine.quit_requested:
            break
    if last is not None and not re.match(r"\d+ ", last[1]) and not last[2]:
        failures.append(f"{path.name}:{last[0]}: setup command {last[1]!r} failed: {last[3]!r}")
    return failures


@pytest.mark.parametrize("script", [
    pytest.param(s, id=s.name, marks=[pytest.mark.slow] if s.name in SLOW_SCRIPTS else [])
    for s in SCRIPTS])
def test_script(script, monkeypatch):
    failures = run_script(script, monkeypatch)
    assert not failures, "\n".join(failures)


def commands_used_in_scripts():
    used = set()
    for script in SCRIPTS:
        for line in script.read_text(encoding="utf-8").splitlines():
            command = parse_command_line(line)
            if command is not None and command.name:
                used.add(command.name)
    return used


def test_every_listed_command_is_exercised_by_a_script():
    session = make_session()
    listed = session.handle_line("list_commands\n")
    _, _, text = split_reply(listed)
    missing = set(text.split("\n")) - commands_used_in_scripts()
    assert not missing, f"commands no script exercises: {sorted(missing)}"


def test_harness_detects_a_wrong_expectation(tmp_path, monkeypatch):
    script = tmp_path / "wrong.tst"
    script.write_text("1 protocol_version\n#? [3]\n2 play b A1\n#! [illegal move]\n"
                      "boardsize 99\n", encoding="utf-8")
    failures = run_script(script, monkeypatch)
    assert len(failures) == 3, failures
