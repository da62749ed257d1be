"""GTP version 2, a framework that knows no Go: the command registry, argument parsing, canonical
errors and the command loop. The Go lives above it: its argument types in goargs.py, the commands
in commands.py, the analysis formats in formats.py.

Reading order: `GtpLoop.run()` reads command lines (a reader thread keeps stdin flowing, so a
controller may pipeline commands and the next line can interrupt a streamed analysis or the
engine's pondering, `_ponder()`), cleans each
line as GTP section 2.2 says (`parse_command_line`), and `GtpLoop.execute()` looks the command up
in the registry, parses its arguments from their declared types and calls the handler. Handlers
are methods decorated with `@gtp_command`; the protocol commands live in `GtpEngineBase` below,
the Go commands in `KosumiEngine` (commands.py). `list_commands` and `known_command` read the same
registry, so nothing is listed that is not implemented.

Replies are `=[id] text` or `?[id] message`, each ended by an empty line. No reply contains an
empty line (the CGOS clients stop reading at the first one), so `format_reply` drops blank lines.
Handlers raise `GtpError(message)` to fail; any other exception becomes `? internal error: ...`
with the traceback in the log, and the loop goes on. A handler parses and checks everything
before it changes any state, so a command that fails changes nothing.

Streamed replies (kata-analyze and friends): the handler is a generator of lines. Nothing is
written until it yields its first line, so a bad argument still gets a plain `?` reply. A
"stream until interrupted" command then keeps its reply open until the next input line arrives
(that line is then executed as usual); the reply is closed by the empty line, as KataGo does.
"""
import logging
import math
import os
import queue
import re
import sys
import threading
import traceback
from dataclasses import dataclass

log = logging.getLogger("kosumi.gtp")

# Canonical failure texts of the protocol itself (the Go commands' texts are in goargs.py).
UNKNOWN_COMMAND = "unknown command"
SYNTAX_ERROR = "syntax error"

PROTOCOL_VERSION = "2"

PLAIN = "plain"              # one reply text
STREAM = "stream"            # a generator of lines, closed when it is done
STREAM_UNTIL_INPUT = "stream-until-input"   # ... and kept open until the next input line


class GtpError(Exception):
    """A command failed; str(error) is the reply text after `? `."""


def syntax_error(detail):
    return GtpError(f"{SYNTAX_ERROR}: {detail}")


# --- argument types -------------------------------------------------------------------------------
# Each type consumes tokens from the front of the argument list. `engine` is passed through, for
# types that read the engine's state (goargs.VertexArg reads its board size).

INTEGER_PATTERN = re.compile(r"[+-]?[0-9]+")
FLOAT_PATTERN = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
ID_PATTERN = re.compile(r"[0-9]+")


class ArgType:
    name = "argument"

    def take(self, tokens, engine):
        """Return (value, remaining tokens) or raise GtpError."""
        if not tokens:
            raise syntax_error(f"missing {self.name}")
        return self.parse(tokens[0], engine), tokens[1:]

    def parse(self, token, engine):
        raise NotImplementedError


class IntArg(ArgType):
    name = "integer"

    def __init__(self, minimum=None, maximum=None):
        self.minimum, self.maximum = minimum, maximum

    def parse(self, token, engine):
        if not INTEGER_PATTERN.fullmatch(token):
            raise syntax_error(f"invalid integer {token!r}")
        value = int(token)
        if (self.minimum is not None and value < self.minimum) or \
                (self.maximum is not None and value > self.maximum):
            raise syntax_error(f"{value} is out of range")
        return value


class FloatArg(ArgType):
    name = "number"

    def __init__(self, minimum=None):
        self.minimum = minimum

    def parse(self, token, engine):
        if not FLOAT_PATTERN.fullmatch(token):
            raise syntax_error(f"invalid number {token!r}")
        value = float(token)
        if not math.isfinite(value) or (self.minimum is not None and value < self.minimum):
            raise syntax_error(f"invalid number {token!r}")
        return value


class WordArg(ArgType):
    name = "word"

    def __init__(self, choices=None):
        self.choices = choices

    def parse(self, token, engine):
        if self.choices is not None and token.lower() not in self.choices:
            raise syntax_error(f"expected one of {', '.join(self.choices)}, got {token!r}")
        return token if self.choices is None else token.lower()


class OptionalArg(ArgType):
    """The wrapped type if a token is left, else the default."""

    def __init__(self, inner, default=None):
        self.inner, self.default = inner, default
        self.name = inner.name

    def take(self, tokens, engine):
        if not tokens:
            return self.default, tokens
        return self.inner.take(tokens, engine)


class RestArg(ArgType):
    """All remaining tokens, as a list, each parsed with `inner` (raw strings if None)."""

    def __init__(self, inner=None, min_count=0):
        self.inner, self.min_count = inner, min_count
        self.name = f"list of {inner.name if inner else 'words'}"

    def take(self, tokens, engine):
        if len(tokens) < self.min_count:
            raise syntax_error(f"expected at least {self.min_count} arguments")
        values = [self.inner.parse(t, engine) if self.inner else t for t in tokens]
        return values, []


# --- the registry ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class CommandSpec:
    name: str
    method_name: str
    arg_types: tuple
    kind: str
    summary: str


def gtp_command(name, *arg_types, kind=PLAIN):
    """Register the decorated method as the handler of GTP command `name`.

    The handler is called with the parsed arguments, in order. Its first docstring line is the
    command's summary (docs/GTP_EXTENSIONS.md has the full contract of the extensions).
    """
    def register(method):
        summary = (method.__doc__ or "").strip().splitlines()[0] if method.__doc__ else ""
        method.gtp_spec = CommandSpec(name, method.__name__, tuple(arg_types), kind, summary)
        return method
    return register


def collect_commands(cls):
    """name -> CommandSpec for every registered method of cls and its bases, base classes first,
    each in definition order (that order is list_commands' order)."""
    commands = {}
    for klass in reversed(cls.__mro__):
        for attribute in vars(klass).values():
            spec = getattr(attribute, "gtp_spec", None)
            if spec is not None:
                commands[spec.name] = spec
    return commands


def parse_arguments(spec, tokens, engine):
    values = []
    for arg_type in spec.arg_types:
        value, tokens = arg_type.take(tokens, engine)
        values.append(value)
    if tokens:
        raise syntax_error(f"unexpected argument {tokens[0]!r}")
    return values


# --- lines in, replies out ------------------------------------------------------------------------

def clean_line(raw):
    """GTP 2.2 preprocessing of one line: control characters other than HT and LF dropped, a
    comment after # dropped, HT turned into a space. Returns the stripped text (maybe empty)."""
    kept = "".join(ch for ch in raw if ch == "\t" or (ch >= " " and ch != "\x7f"))
    kept = kept.split("#", 1)[0]
    return kept.replace("\t", " ").strip()


@dataclass(frozen=True)
class CommandLine:
    id: str            # "" when the command had no id
    name: str
    args: list


def parse_command_line(raw):
    """CommandLine for a line of input, or None for an empty or comment-only line."""
    text = clean_line(raw)
    if not text:
        return None
    words = text.split()
    command_id = ""
    if ID_PATTERN.fullmatch(words[0]):
        command_id = words[0]
        words = words[1:]
    if not words:
        return CommandLine(command_id, "", [])
    return CommandLine(command_id, words[0], words[1:])


def reply_lines(text):
    """The lines of a reply text, with blank lines (which would end the reply early) dropped. The
    first line may be empty: it follows the `=` (showboard starts its diagram on the next line)."""
    lines = [line.rstrip() for line in str(text).replace("\r", "").split("\n")]
    first, rest = lines[0], [line for line in lines[1:] if line.strip()]
    return [first] + rest


def format_reply(success, command_id, text=""):
    lines = reply_lines(text)
    head = ("=" if success else "?") + command_id
    lines[0] = f"{head} {lines[0]}" if lines[0] else head + " "
    return "\n".join(lines) + "\n\n"


class LineSource:
    """Lines of a binary input stream, read by a background thread so that the command loop can
    ask whether another line is already waiting (pipelining, interrupting an analysis).

    A real file descriptor is read with os.read: a daemon thread blocked inside a buffered
    reader would abort the interpreter's shutdown after `quit` (the reader's lock is held)."""

    def __init__(self, stream):
        self._lines = queue.Queue()
        self._pending = None
        try:
            source = stream.fileno()
        except (AttributeError, OSError, ValueError):   # in-memory streams (tests)
            source = stream
        self._thread = threading.Thread(target=self._read, args=(source,), daemon=True,
                                        name="gtp-stdin")
        self._thread.start()

    def _read(self, source):
        try:
            if isinstance(source, int):
                self._read_descriptor(source)
            else:
                for raw in source:
                    self._lines.put(raw.decode("utf-8", errors="replace"))
        except (OSError, ValueError) as error:   # closed or broken input: same as end of input
            log.debug("input closed: %s", error)
        finally:
            self._lines.put(None)

    def _read_descriptor(self, fd):
        pending = b""
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                self._lines.put(raw.decode("utf-8", errors="replace") + "\n")
        if pending:
            self._lines.put(pending.decode("utf-8", errors="replace"))

    def next_line(self):
        """The next line (str, with its newline), or None at the end of the input."""
        if self._pending is not None:
            line, self._pending = self._pending, None
            return line[0]
        return self._lines.get()

    def wait_for_input(self, timeout=None):
        """True once a line (or the end of input) is waiting; False if timeout passes first."""
        if self._pending is not None:
            return True
        try:
            self._pending = (self._lines.get(timeout=timeout),)
        except queue.Empty:
            return False
        return True


class GtpLoop:
    """Reads commands from `input_stream`, answers on `output_stream` (both binary)."""

    def __init__(self, engine, input_stream, output_stream):
        self.engine = engine
        self.source = LineSource(input_stream)
        self.output = output_stream

    def write(self, text):
        self.output.write(text.encode("utf-8"))
        self.output.flush()

    def run(self):
        """Answer commands until `quit` or the end of the input. Returns the exit status (0)."""
        while not self.engine.quit_requested:
            raw = self.source.next_line()
            if raw is None:
                log.info("end of input")
                break
            command = parse_command_line(raw)
            if command is None:
                continue
            self.execute(command)
            self._ponder()
        return 0

    def _ponder(self):
        """Step the engine's search on the opponent's time (an engine's ponder_steps(), where it
        has one and something to ponder) until the next input line arrives."""
        steps = getattr(self.engine, "ponder_steps", lambda: None)()
        if steps is None:
            return
        try:
            while not self.source.wait_for_input(timeout=0):
                if next(steps, None) is None:
                    break
        except Exception:   # pondering is a bonus: log, and answer the next command as usual
            log.error("internal error while pondering:\n%s", traceback.format_exc())
        finally:
            steps.close()

    def handle_line(self, raw):
        """Execute one input line in-process and return the bytes it wrote (for tests and
        benchmarks; a streamed analysis is closed at once when the input has ended)."""
        if not hasattr(self.output, "getvalue"):
            raise TypeError("handle_line needs an in-memory output (io.BytesIO)")
        start = len(self.output.getvalue())
        command = parse_command_line(raw)
        if command is not None:
            self.execute(command)
        return self.output.getvalue()[start:].decode("utf-8")

    def execute(self, command):
        log.debug("<< %s", " ".join(filter(None, [command.id, command.name, *command.args])))
        spec = self.engine.find_command(command.name)
        if spec is None:
            self.write(format_reply(False, command.id, UNKNOWN_COMMAND))
            return
        try:
            args = parse_arguments(spec, command.args, self.engine)
            result = getattr(self.engine, spec.method_name)(*args)
            if spec.kind == PLAIN:
                reply = format_reply(True, command.id, "" if result is None else result)
                self.write(reply)
                log.debug(">> %s", reply.rstrip("\n"))
                return
            first_line = next(result, None)
        except GtpError as error:
            self.write(format_reply(False, command.id, str(error) or SYNTAX_ERROR))
            log.debug(">> ? %s", error)
            return
        except Exception as error:   # a bug must not kill the engine: report it and go on
            log.error("internal error in %r:\n%s", command.name, traceback.format_exc())
            self.write(format_reply(False, command.id,
                                    f"internal error: {type(error).__name__}: {error}"))
            return
        self._stream(command, spec, result, first_line)

    def _stream(self, command, spec, lines, first_line):
        self.write(f"={command.id} \n")   # as showboard: the text starts on the next line
        try:
            line = first_line
            while line is not None:
                for part in reply_lines(line):
                    if part.strip():
                        self.write(part + "\n")
                if spec.kind == STREAM_UNTIL_INPUT and self.source.wait_for_input(timeout=0):
                    lines.close()      # a search that goes on (pondering) stops here
                    break
                line = next(lines, None)
            if spec.kind == STREAM_UNTIL_INPUT:
                self.source.wait_for_input()
        except Exception:   # the reply has started: log, then close it normally
            log.error("internal error in streamed %r:\n%s", command.name, traceback.format_exc())
        finally:
            self.write("\n")


# --- the protocol commands every engine has ----------------------------------------------------------

class GtpEngineBase:
    """Protocol-level commands; subclasses add the game (and whatever state their argument types
    read, as `size` for vertices)."""

    engine_name = "GTP engine"
    engine_version = "0"

    def __init__(self):
        self.commands = collect_commands(type(self))
        self.quit_requested = False

    def find_command(self, name):
        """The CommandSpec of name (as written, else in lower case), or None."""
        return self.commands.get(name) or self.commands.get(name.lower())

    @gtp_command("protocol_version")
    def cmd_protocol_version(self):
        """GTP protocol version: 2."""
        return PROTOCOL_VERSION

    @gtp_command("name")
    def cmd_name(self):
        """The engine's name."""
        return self.engine_name

    @gtp_command("version")
    def cmd_version(self):
        """The engine's version."""
        return self.engine_version

    @gtp_command("known_command", WordArg())
    def cmd_known_command(self, name):
        """`true` if the command is implemented, else `false`."""
        return "true" if self.find_command(name) else "false"

    @gtp_command("list_commands")
    def cmd_list_commands(self):
        """Every implemented command, one per line."""
        return "\n".join(self.commands)

    @gtp_command("quit")
    def cmd_quit(self):
        """Answer, then exit with status 0."""
        self.quit_requested = True
        return ""


def configure_logging(level, log_file):
    """Every log line to stderr, or to log_file: stdout carries protocol bytes only."""
    handler = logging.FileHandler(log_file, encoding="utf-8") if log_file else \
        logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper()))


def run_stdio(engine):
    """Serve GTP on the process's stdin/stdout. Anything else that would write to stdout (a stray
    print, a C library) is sent to stderr instead: the protocol keeps a private copy of fd 1."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with os.fdopen(protocol_fd, "wb", buffering=0) as protocol_out:
        return GtpLoop(engine, sys.stdin.buffer, protocol_out).run()
