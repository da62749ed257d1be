"""Fuzzing the command loop: any input line gets exactly one well-formed reply (none for an empty
or comment line), the id is echoed, and the engine survives with a consistent board.

Lines mix real command names, plausible and implausible arguments, control characters, tabs,
comments, ids and arbitrary text. The engine runs in-process on the uniform evaluator, in a
throw-away working directory (`printsgf <word>` writes a file named by the fuzz).
"""
import contextlib
import io
import os
import re
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.gtp.protocol import GtpLoop
from engine.gtp.main import build_engine, build_parser

OPTIONS = ["--evaluator", "uniform", "--seed", "1", "--no-resign", "--size", "9"]
COMMANDS = build_engine(build_parser().parse_args(OPTIONS)).commands
NAMES = sorted(COMMANDS) + ["", "PLAY", "genmove_black", "kata", "analyze", "xyzzy"]
# A well-formed reply: `=id text` or `?id text` (the text may start on the next line, as in a
# stream or showboard), then lines that are not empty, then the closing empty line.
WELL_FORMED = re.compile(r"[=?](\d*) [^\n]*(\n[^\n]*\S[^\n]*)*\n\n")

words = st.one_of(
    st.sampled_from(["b", "w", "B", "W", "black", "WHITE", "white", "e", "empty", "pass", "PASS",
                     "resign", "A1", "a1", "J9", "j9", "I5", "T19", "Z25", "A0", "A26", "Z99",
                     "AA1", "3", "0", "-1", "2", "9", "25", "26", "7.5", "-0.5", "1e3", "nan",
                     "inf", "1_0", "+4", "0x10", "true", "false", "alive", "dead", "seki",
                     "interval", "maxmoves", "ownership", "none", "absolute", "byoyomi",
                     "canadian", "/dev/null", "no_such.sgf", "#", "\t", "\r", "\x00", "\x1b[0m",
                     "é", "\u2003", "𝄞"]),
    st.integers(min_value=-5, max_value=30).map(str),
    st.text(max_size=8).filter(lambda s: "\n" not in s),
)


@st.composite
def command_lines(draw):
    if draw(st.booleans()) and draw(st.booleans()):
        return draw(st.text(max_size=40).filter(lambda s: "\n" not in s))
    parts = []
    if draw(st.booleans()):
        parts.append(str(draw(st.integers(min_value=0, max_value=10 ** 6))))
    parts.append(draw(st.sampled_from(NAMES)))
    parts.extend(draw(st.lists(words, max_size=5)))
    separator = draw(st.sampled_from([" ", "\t", "  ", " \t "]))
    line = separator.join(parts)
    if draw(st.integers(min_value=0, max_value=9)) == 0:
        line += " # " + draw(st.text(max_size=10).filter(lambda s: "\n" not in s))
    return line


def expected_text(line):
    """What GTP 2.2 leaves of a line, computed independently of engine.gtp.protocol."""
    line = re.sub(r"[\x00-\x08\x0a-\x1f\x7f]", "", line)
    return line.split("#", 1)[0].replace("\t", " ").strip()


@pytest.mark.slow
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(command_lines(), min_size=1, max_size=12))
def test_every_line_gets_exactly_one_well_formed_reply(lines):
    with tempfile.TemporaryDirectory() as scratch, contextlib.chdir(scratch):
        check_lines(lines)
    assert os.getcwd() != scratch


def check_lines(lines):
    session = GtpLoop(build_engine(build_parser().parse_args(OPTIONS)), io.BytesIO(b""),
                      io.BytesIO())
    for line in lines:
        output = session.handle_line(line + "\n")
        text = expected_text(line)
        if not text:
            assert output == "", f"{line!r} is empty or a comment but got {output!r}"
            continue
        match = WELL_FORMED.fullmatch(output)
        assert match, f"{line!r} got a malformed reply {output!r}"
        first = text.split()[0]
        assert match.group(1) == (first if re.fullmatch(r"[0-9]+", first) else "")
        assert "internal error" not in output, f"{line!r} hit a bug: {output!r}"
        session.engine.state.board.check_consistency()
        if session.engine.quit_requested:
            break
