"""GTP version 2: the command registry, argument parsing, canonical errors and the command loop.

Reading order: `GtpLoop.run()` reads command lines (a reader thread keeps stdin flowing, so a
controller may pipeline commands and the next line can interrupt a streamed analysis), cleans each
line as GTP section 2.2 says (`parse_command_line`), and `GtpLoop.execute()` looks the command up
in the registry, parses its arguments from their declared types and calls the handler. Handlers
are methods decorated with `@gtp_command`; the protocol commands live in `GtpEngineBase` below,
the Go commands in `KosumiEngine` at the end of this file, with the SGF reading and writing they
use. `list_commands` and `known_command` read the same registry, so nothing is listed that
is not implemented.

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
import time
import traceback
from dataclasses import dataclass

import numpy as np

from engine import __version__
from engine.scoring import deadstones
from engine.scoring.csa import DOUBT_REASONS
from engine.rules.board import BLACK, PASS, WHITE, IllegalMove
from engine.rules.coords import board_points, format_vertex, loc_of, parse_vertex, row_col
from engine.rules.game import GameState, Rules, fixed_handicap_points
from engine.play.player import RESIGN, state_for, win_probability
from engine.play.restriction import ALLOW, AVOID, MoveRestriction, MoveRule
from engine.play.timecontrol import TimeControl
from engine.gtp.sgffile import game_to_sgf, load_sgf, parse_until

log = logging.getLogger("kosumi.gtp")

# Canonical failure texts of the GTP specification.
UNKNOWN_COMMAND = "unknown command"
SYNTAX_ERROR = "syntax error"
ILLEGAL_MOVE = "illegal move"
UNACCEPTABLE_SIZE = "unacceptable size"
CANNOT_UNDO = "cannot undo"
BOARD_NOT_EMPTY = "board not empty"
INVALID_NUMBER_OF_STONES = "invalid number of stones"
BAD_VERTEX_LIST = "bad vertex list"
CANNOT_LOAD = "cannot load file"

PROTOCOL_VERSION = "2"

PLAIN = "plain"              # one reply text
STREAM = "stream"            # a generator of lines, closed when it is done
STREAM_UNTIL_INPUT = "stream-until-input"   # ... and kept open until the next input line


class GtpError(Exception):
    """A command failed; str(error) is the reply text after `? `."""


def syntax_error(detail):
    return GtpError(f"{SYNTAX_ERROR}: {detail}")


# --- argument types -------------------------------------------------------------------------------
# Each type consumes tokens from the front of the argument list. `engine` gives access to the
# board size for vertices.

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


class ColourArg(ArgType):
    name = "colour"
    WORDS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}

    def parse(self, token, engine):
        try:
            return self.WORDS[token.lower()]
        except KeyError:
            raise syntax_error(f"invalid colour {token!r}") from None


class VertexArg(ArgType):
    """A board vertex or `pass`, any case; a loc or PASS."""
    name = "vertex"

    def __init__(self, allow_pass=True):
        self.allow_pass = allow_pass

    def parse(self, token, engine):
        try:
            loc = parse_vertex(token, engine.size)
        except ValueError:
            raise syntax_error(f"invalid vertex {token!r}") from None
        if loc == PASS and not self.allow_pass:
            raise syntax_error("pass is not a board vertex here")
        return loc


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


COLOUR = ColourArg()
VERTEX = VertexArg()
POINT = VertexArg(allow_pass=False)


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
        return 0

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
    """Protocol-level commands; subclasses add the game. `size` is needed by vertex arguments."""

    engine_name = "GTP engine"
    engine_version = "0"
    size = 19

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


def run_stdio(engine):
    """Serve GTP on the process's stdin/stdout. Anything else that would write to stdout (a stray
    print, a C library) is sent to stderr instead: the protocol keeps a private copy of fd 1."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with os.fdopen(protocol_fd, "wb", buffering=0) as protocol_out:
        return GtpLoop(engine, sys.stdin.buffer, protocol_out).run()


# === the Go engine ================================================================================
# Reading order: __init__ (the state a controller can change), then the commands in GTP spec order,
# then the extensions, then the analysis commands and their formatting helpers.

MIN_SIZE, MAX_SIZE = 2, 25
RULE_SETS = {"chinese": "area", "japanese": "territory"}
ANALYSIS_KEYS = ("interval", "minmoves", "maxmoves", "ownership", "avoid", "allow")
LZ_ANALYSIS_KEYS = ("interval", "minmoves", "maxmoves", "avoid", "allow")
ANALYSIS_VISITS = 1000   # the visits shared out over the listed moves (see _info_line)
GOGUI_ANALYZE_COMMANDS = (
    "gfx/Kosumi Ownership/kosumi-ownership",
    "gfx/Kosumi Move Values/kosumi-move_values %m",
    "pspairs/Kosumi Move Values List/kosumi-move_values_list %m",
    "gfx/Kosumi Chosen Move/kosumi-chosen_move %m",
    "gfx/Kosumi Search/kosumi-search %m",
    "string/Kosumi Score Estimate/kosumi-score_estimate",
    "plist/Kosumi Dead Stones/final_status_list dead",
    "string/Final Score/final_score",
)   # GoGui replaces %m with the colour to move
CONNECTIVITY_ANALYZE_COMMAND = "gfx/Kosumi Connectivity/kosumi-connectivity %p"   # asks a point


def colour_word(colour):
    return "black" if colour == BLACK else "white"


def colour_letter(colour):
    return "b" if colour == BLACK else "w"


def black_view(state, value):
    """A value for the side to move as Black's margin."""
    return value if state.to_move == BLACK else -value


class KosumiEngine(GtpEngineBase):
    """kosumi's GTP commands. The engine owns the game (a GameState), the player, the clocks."""

    engine_name = "kosumi"

    def __init__(self, evaluator, player, komi=7.0, rules="chinese", size=19, one_ply=None,
                 search_evaluator=None):
        """player chooses the moves (1-ply or search); one_ply, the 1-ply player that the move
        value commands show (default: player, which must then be a 1-ply Player);
        search_evaluator, for a 1-ply player, a function giving the evaluator whose values are
        the prior of kosumi-search's tree (called on its first use; default: evaluator)."""
        super().__init__()
        if rules not in RULE_SETS:
            raise ValueError(f"unknown rules {rules!r}; expected one of {', '.join(RULE_SETS)}")
        self.engine_version = __version__
        self.evaluator = evaluator
        self.player = player
        self.one_ply = player if one_ply is None else one_ply
        self._search_evaluator = search_evaluator or (lambda: evaluator)
        self.scoring = RULE_SETS[rules]
        self.rules_name = rules
        self.komi = float(komi)
        self.time_control = TimeControl()
        self._new_game(size)

    # --- state helpers --------------------------------------------------------------------------

    def _rules(self):
        return Rules(ko="positional", suicide=False, scoring=self.scoring, komi=self.komi)

    def _new_game(self, size):
        self.size = size
        self.state = GameState(size, self._rules())
        self.handicap_stones = 0       # leading history entries that are handicap placements
        self.setup = {BLACK: [], WHITE: []}   # stones loadsgf set up before the history starts
        self.time_control.reset_clocks()
        self.player.new_game()

    def _board_is_empty(self):
        board = self.state.board
        return not self.state.history and not board.stones(BLACK) and not board.stones(WHITE)

    def _vertex(self, loc):
        return format_vertex(loc, self.size)

    def _vertices(self, locs):
        return " ".join(self._vertex(p) for p in sorted(locs))

    def _play(self, loc, colour, tolerant=False):
        try:
            return self.state.play(loc, colour, tolerant)
        except IllegalMove:
            raise GtpError(ILLEGAL_MOVE) from None

    # --- setup (GTP spec 6.3.1, 6.3.2) ----------------------------------------------------------

    @gtp_command("boardsize", WordArg())
    def cmd_boardsize(self, size_text):
        """Set the board size (2..25) and clear the board; komi is kept."""
        value = IntArg().parse(size_text, self)
        if not MIN_SIZE <= value <= MAX_SIZE:
            raise GtpError(UNACCEPTABLE_SIZE)
        self._new_game(value)

    @gtp_command("clear_board")
    def cmd_clear_board(self):
        """Empty the board; size, komi and time settings are kept, the clocks restart."""
        self._new_game(self.size)

    @gtp_command("komi", FloatArg())
    def cmd_komi(self, komi):
        """Set komi; it survives boardsize and clear_board."""
        self.komi = komi
        self.state.rules = self._rules()

    @gtp_command("fixed_handicap", IntArg())
    def cmd_fixed_handicap(self, count):
        """Place the GTP spec's fixed handicap stones; returns their vertices."""
        if not self._board_is_empty():
            raise GtpError(BOARD_NOT_EMPTY)
        try:
            points = fixed_handicap_points(self.size, count)
        except ValueError:
            raise GtpError(INVALID_NUMBER_OF_STONES) from None
        return self._place_handicap(points)

    @gtp_command("place_free_handicap", IntArg())
    def cmd_place_free_handicap(self, count):
        """Place `count` handicap stones where kosumi likes them; returns their vertices."""
        if not self._board_is_empty():
            raise GtpError(BOARD_NOT_EMPTY)
        if not 2 <= count <= self.size * self.size - 1:
            raise GtpError(INVALID_NUMBER_OF_STONES)
        try:
            points = fixed_handicap_points(self.size, count)
        except ValueError:   # no standard pattern: pick the points Black values most, one by one
            points = self._greedy_handicap(count)
        return self._place_handicap(points)

    def _greedy_handicap(self, count):
        trial = GameState(self.size, self._rules())
        points = []
        for _ in range(count):
            analysis = self.player.analyse(trial, BLACK)
            choices = [(value, move) for move, value, _ in analysis.ranked() if move != PASS]
            if not choices:
                break
            _, move = max(choices)
            trial.play(move, BLACK)
            points.append(move)
        return points

    @gtp_command("set_free_handicap", RestArg())
    def cmd_set_free_handicap(self, vertex_texts):
        """Black handicap stones on the given vertices; White moves next."""
        if not self._board_is_empty():
            raise GtpError(BOARD_NOT_EMPTY)
        try:
            points = [POINT.parse(text, self) for text in vertex_texts]
        except GtpError:
            raise GtpError(BAD_VERTEX_LIST) from None
        if len(points) < 2 or len(set(points)) != len(points) or \
                len(points) > self.size * self.size - 1:
            raise GtpError(BAD_VERTEX_LIST)
        self._place_handicap(points)

    def _place_handicap(self, points):
        self.state.place_handicap(points)
        self.handicap_stones = len(points)
        return self._vertices(points)

    # --- core play (6.3.3) ----------------------------------------------------------------------

    @gtp_command("play", COLOUR, VERTEX)
    def cmd_play(self, colour, loc):
        """Play a move (any colour, any order: setup stones come as consecutive plays)."""
        # The controller referees its players' moves (GNU Go knows only simple ko), so a
        # repetition or a multi-stone suicide is played, as KataGo's play does; kosumi's own
        # moves keep its rules.
        broken = self._play(loc, colour, tolerant=True)
        if broken:
            log.warning("play %s %s breaks kosumi's rules (%s): played, as the controller asks",
                        colour_letter(colour), self._vertex(loc), broken)

    @gtp_command("genmove", COLOUR)
    def cmd_genmove(self, colour):
        """Choose a move for colour, play it and return it (or `resign`)."""
        return self._genmove(colour, cleanup=False)

    def _genmove(self, colour, cleanup, play=True):
        """The chosen move as GTP text; played (and its time booked) unless play is False, in
        which case nothing changes at all, the player's random state included."""
        decision, started = self._choose(colour, cleanup, dry_run=not play)
        if play:
            self._commit(colour, decision, started)
        return self._move_text(decision.move)

    def _choose(self, colour, cleanup, dry_run, restriction=None):
        started = time.monotonic()
        budget = self.time_control.budget(colour, self._empty_points())
        decision = self.player.choose(self.state, colour, cleanup=cleanup, time_budget=budget,
                                      dry_run=dry_run, restriction=restriction)
        return decision, started

    def _commit(self, colour, decision, started):
        """Play the decision (resigning plays nothing) and book the time since `started`."""
        if decision.move != RESIGN:
            self._play(decision.move, colour)
        self.time_control.charge(colour, time.monotonic() - started)

    def _move_text(self, move):
        return move if isinstance(move, str) else self._vertex(move)

    def _empty_points(self):
        board = self.state.board
        return self.size * self.size - len(board.stones(BLACK)) - len(board.stones(WHITE))

    @gtp_command("undo")
    def cmd_undo(self):
        """Take back the last move."""
        try:
            self.state.undo()
        except IndexError:
            raise GtpError(CANNOT_UNDO) from None
        self.handicap_stones = min(self.handicap_stones, len(self.state.history))

    # --- tournament (6.3.4) ---------------------------------------------------------------------

    @gtp_command("time_settings", FloatArg(0), FloatArg(0), IntArg(0))
    def cmd_time_settings(self, main_time, byoyomi_time, byoyomi_stones):
        """Canadian byo-yomi (0 byo-yomi time: absolute; byo-yomi time with 0 stones: no limit)."""
        self.time_control.set_gtp(main_time, byoyomi_time, byoyomi_stones)

    @gtp_command("time_left", COLOUR, FloatArg(0), IntArg(0))
    def cmd_time_left(self, colour, seconds, stones):
        """Time left for colour: main time if stones is 0, else byo-yomi with that many stones."""
        self.time_control.update_from_time_left(colour, seconds, stones)

    @gtp_command("final_score")
    def cmd_final_score(self):
        """Score with dead stones removed (Benson, then CSA*, the learned classifier): B+n, W+n or 0."""
        assessment = deadstones.assess(self.state, self.evaluator, review=True)
        score = deadstones.format_score(deadstones.score(self.state, assessment.dead))
        if assessment.doubtful:
            # On stderr, which GoGui's shell shows: the reply itself has no room for it.
            log.warning("final_score %s is doubtful for CSA* (%s): check the dead stones",
                        score, DOUBT_REASONS)
        return score

    @gtp_command("final_status_list", WordArg(("alive", "dead", "seki")))
    def cmd_final_status_list(self, status):
        """Stones with that status, one chain per line."""
        assessment = deadstones.assess(self.state, self.evaluator)
        return "\n".join(self._vertices(chain.stones)
                         for chain in assessment.chains_with(status))

    # --- regression (6.3.5) ---------------------------------------------------------------------

    @gtp_command("loadsgf", WordArg(), OptionalArg(WordArg()))
    def cmd_loadsgf(self, filename, until_text):
        """FILE [N | VERTEX]: load an SGF file's main line, up to (not including) move N or the
        first move at VERTEX; kept as it was on any failure."""
        until = None
        if until_text is not None:
            try:
                until = parse_until(until_text)
            except ValueError as error:
                raise syntax_error(str(error)) from None
        try:
            loaded = load_sgf(filename, until, self.scoring, self.komi)
        except (OSError, ValueError) as error:
            raise GtpError(f"{CANNOT_LOAD}: {error}") from None
        self.size = loaded.state.size
        self.komi = loaded.state.rules.komi
        self.scoring = loaded.scoring
        self.rules_name = next(name for name, scoring in RULE_SETS.items()
                               if scoring == loaded.scoring)
        self.state = loaded.state
        self.handicap_stones = loaded.handicap_stones
        self.setup = loaded.setup
        self.time_control.reset_clocks()
        self.player.new_game()

    @gtp_command("reg_genmove", COLOUR)
    def cmd_reg_genmove(self, colour):
        """The move genmove would choose now (the same random draw), without playing it."""
        return self._genmove(colour, cleanup=False, play=False)

    # --- debug (6.3.6) --------------------------------------------------------------------------

    @gtp_command("showboard")
    def cmd_showboard(self):
        """The board diagram (X black, O white), captures and the side to move."""
        board = self.state.board
        lines = str(board).splitlines()
        lines.append(f"Black (X) captured {board.captures(BLACK)}, White (O) captured "
                     f"{board.captures(WHITE)}; komi {self.komi:g}; {colour_word(self.state.to_move)} "
                     f"to move")
        return "\n" + "\n".join(lines)

    # --- extensions ---------------------------------------------------------------------------

    @gtp_command("kgs-genmove_cleanup", COLOUR)
    def cmd_kgs_genmove_cleanup(self, colour):
        """genmove that captures every dead opponent stone before it passes."""
        return self._genmove(colour, cleanup=True)

    @gtp_command("kgs-time_settings", WordArg(("none", "absolute", "byoyomi", "canadian")),
                 RestArg(FloatArg(0)))
    def cmd_kgs_time_settings(self, system, numbers):
        """none | absolute MAIN | byoyomi MAIN PERIOD PERIODS | canadian MAIN TIME STONES."""
        expected = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}[system]
        if len(numbers) != expected:
            raise syntax_error(f"{system} takes {expected} numbers")
        control = self.time_control
        if system == "none":
            control.set_none()
        elif system == "absolute":
            control.set_absolute(numbers[0])
        else:
            main_time, period_time, count = numbers
            if count != int(count):
                raise syntax_error(f"{system} needs a whole number of periods or stones")
            if system == "byoyomi":
                control.set_japanese(main_time, period_time, int(count))
            elif period_time > 0 and count > 0:
                control.set_canadian(main_time, period_time, int(count))
            else:
                control.set_absolute(main_time)

    @gtp_command("cputime")
    def cmd_cputime(self):
        """CPU seconds used by the engine process."""
        return f"{time.process_time():.3f}"

    @gtp_command("printsgf", OptionalArg(WordArg()))
    def cmd_printsgf(self, filename):
        """The game as SGF (to the file if one is named, else in the reply)."""
        text = game_to_sgf(self)
        if filename is None:
            return text
        try:
            with open(filename, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as error:
            raise GtpError(f"cannot write file: {error}") from None

    @gtp_command("is_legal", COLOUR, VERTEX)
    def cmd_is_legal(self, colour, loc):
        """1 if colour may play there now (superko included), else 0."""
        return "1" if self.state.is_legal(loc, colour) else "0"

    @gtp_command("list_stones", COLOUR)
    def cmd_list_stones(self, colour):
        """The vertices of colour's stones."""
        return self._vertices(self.state.board.stones(colour))

    # --- analysis: GoGui ----------------------------------------------------------------------

    @gtp_command("gogui-analyze_commands")
    def cmd_gogui_analyze_commands(self):
        """GoGui's analysis menu: type/label/command per line."""
        commands = GOGUI_ANALYZE_COMMANDS
        if self.evaluator.has_connectivity:
            commands += (CONNECTIVITY_ANALYZE_COMMAND,)
        return "\n".join(commands)

    @gtp_command("kosumi-ownership")
    def cmd_kosumi_ownership(self):
        """gfx: the net's predicted ownership of every point (INFLUENCE, +1 black .. -1 white)."""
        evaluation = self.evaluator.evaluate(self.state)
        ownership = evaluation.ownership
        points = board_points(self.size)
        influence = " ".join(f"{self._vertex(p)} {ownership[p]:.2f}" for p in points)
        black_share = sum(ownership[p] for p in points)
        return (f"INFLUENCE {influence}\n"
                f"TEXT ownership sum {black_share:+.1f} for Black; expected score "
                f"{_score_text(black_view(self.state, evaluation.value))}")

    @gtp_command("kosumi-connectivity", POINT, OptionalArg(COLOUR))
    def cmd_kosumi_connectivity(self, loc, colour):
        """gfx: the net's connection values for a colour from a point to every point."""
        if not self.evaluator.has_connectivity:
            raise GtpError("the connectivity map needs a soft-segmentation net (--weights)")
        if colour is None:      # a stone's own colour; on an empty point, the side to move's
            stone = self.state.board.get(loc)
            colour = stone if stone in (BLACK, WHITE) else self.state.to_move
        connection = self.evaluator.connectivity(self.state, loc, colour)
        sign = 1.0 if colour == BLACK else -1.0
        reached = [p for p in board_points(self.size) if connection[p] > 0.0]
        influence = " ".join(f"{self._vertex(p)} {sign * connection[p]:.2f}" for p in reached)
        labels = " ".join(f"{self._vertex(p)} {round(100 * connection[p])}" for p in reached)
        strong = sum(connection[p] >= 0.5 for p in reached)
        lines = [f"INFLUENCE {influence}", f"LABEL {labels}"] if reached else []
        lines.append(f"MARK {self._vertex(loc)}")
        lines.append(f"TEXT {colour_word(colour).capitalize()}'s connection values from "
                     f"{self._vertex(loc)} in percent; points reached: {len(reached)}, "
                     f"at 50 or more: {strong}")
        return "\n".join(lines)

    @gtp_command("kosumi-move_values", COLOUR)
    def cmd_kosumi_move_values(self, colour):
        """gfx: the 1-ply value (points, for colour) of every legal move as a label."""
        analysis = self.one_ply.analyse(self.state, colour)
        labels = " ".join(f"{self._vertex(move)} {value:.1f}"
                          for move, value, _ in analysis.ranked(candidates_only=False)
                          if move != PASS)
        best_move, best_value, _ = analysis.ranked()[0]
        lines = [f"LABEL {labels}"] if labels else []
        if best_move != PASS:
            lines.append(f"SQUARE {self._vertex(best_move)}")
        lines.append(f"TEXT best {self._vertex(best_move)} {best_value:+.1f}, pass "
                     f"{analysis.value_of(PASS):+.1f} (points for {colour_word(colour)})")
        return "\n".join(lines)

    @gtp_command("kosumi-move_values_list", COLOUR)
    def cmd_kosumi_move_values_list(self, colour):
        """pspairs: vertex and 1-ply value of every legal move, best first."""
        analysis = self.one_ply.analyse(self.state, colour)
        return " ".join(f"{self._vertex(move)} {value:.2f}"
                        for move, value, _ in analysis.ranked(candidates_only=False)
                        if move != PASS)

    @gtp_command("kosumi-chosen_move", COLOUR)
    def cmd_kosumi_chosen_move(self, colour):
        """gfx: the move genmove would play now, with its probability and value."""
        decision, _ = self._choose(colour, cleanup=False, dry_run=True)
        text = self._move_text(decision.move)
        lines = []
        if decision.move not in (RESIGN, PASS):
            lines.append(f"VAR {colour_letter(colour)} {text}")
        value = "" if decision.analysis is None or decision.move == RESIGN else \
            f", value {decision.analysis.value_of(decision.move):+.1f}"
        lines.append(f"TEXT {text}: {decision.reason}, probability "
                     f"{decision.probability:.3f}{value}")
        return "\n".join(lines)

    @gtp_command("kosumi-search", COLOUR)
    def cmd_kosumi_search(self, colour):
        """gfx: a search of the position for colour: visits of the root moves as labels, the
        principal variation, and the root's win rate (the search player's own budget; with the
        1-ply player, a search of DEFAULT_PLAYOUTS with the search's defaults)."""
        analysis = self._searcher().search(self.state, colour)
        ranked = [entry for entry in analysis.ranked() if entry[1] > 0]
        labels = " ".join(f"{self._vertex(move)} {visits}" for move, visits, *_ in ranked
                          if move != PASS)
        lines = [f"LABEL {labels}"] if labels else []
        if ranked:
            move, visits, winrate, score, _, pv = ranked[0]
            variation = " ".join(f"{colour_letter(colour if i % 2 == 0 else 3 - colour)} "
                                 f"{self._vertex(m)}" for i, m in enumerate(pv))
            lines.append(f"VAR {variation}")
            lines.append(f"TEXT {analysis.total_visits} visits: best {self._vertex(move)} "
                         f"({visits} visits, win rate {winrate:.1%} for {colour_word(colour)}, "
                         f"score {score:+.1f})")
        return "\n".join(lines)

    def _searcher(self):
        if hasattr(self.player, "search"):
            return self.player
        if getattr(self, "_analysis_searcher", None) is None:
            from engine.play.search_player import SearchPlayer
            self._analysis_searcher = SearchPlayer(self._search_evaluator(), seed=0)
        return self._analysis_searcher

    @gtp_command("kosumi-score_estimate")
    def cmd_kosumi_score_estimate(self):
        """The net's expected final score and the count with its dead stones removed."""
        evaluation = self.evaluator.evaluate(self.state)
        assessment = deadstones.assess(self.state, self.evaluator, evaluation.ownership)
        count = deadstones.score(self.state, assessment.dead)
        return (f"expected {_score_text(black_view(self.state, evaluation.value))}, counted now "
                f"{deadstones.format_score(count)} with {len(assessment.dead)} dead stones")

    # --- analysis: Sabaki, Lizzie (KataGo's and Leela Zero's streamed formats) ----------------

    @gtp_command("kata-analyze", RestArg(), kind=STREAM_UNTIL_INPUT)
    def cmd_kata_analyze(self, words):
        """[colour] [interval] [key value ...]: KataGo info lines until the next command."""
        colour, options = self._analysis_options(words, "kata")
        yield from self._analysis_lines(colour, "kata", options)

    @gtp_command("lz-analyze", RestArg(), kind=STREAM_UNTIL_INPUT)
    def cmd_lz_analyze(self, words):
        """[colour] [interval] [key value ...]: Leela Zero info lines until the next command."""
        colour, options = self._analysis_options(words, "lz")
        yield from self._analysis_lines(colour, "lz", options)

    @gtp_command("kata-genmove_analyze", RestArg(), kind=STREAM)
    def cmd_kata_genmove_analyze(self, words):
        """genmove that also streams KataGo info lines, then `play <vertex>`."""
        yield from self._genmove_analyze(words, "kata")

    @gtp_command("lz-genmove_analyze", RestArg(), kind=STREAM)
    def cmd_lz_genmove_analyze(self, words):
        """genmove that also streams Leela Zero info lines, then `play <vertex>`."""
        yield from self._genmove_analyze(words, "lz")

    def _genmove_analyze(self, words, dialect):
        colour, options = self._analysis_options(words, dialect)
        decision, started = self._choose(colour, cleanup=False, dry_run=False,
                                         restriction=options["restriction"])
        # The info line describes the position before the move, so it is made first.
        info = None if decision.analysis is None else \
            self._info_line(decision.analysis, dialect, options)
        self._commit(colour, decision, started)
        if info is not None:
            yield info
        yield f"play {self._move_text(decision.move)}"

    def _analysis_options(self, words, dialect):
        """KataGo's argument grammar (Leela Zero's is the same with fewer keys): optional colour,
        optional interval (centiseconds), then key-value pairs; `avoid`/`allow` take three
        values: colour, comma-separated vertices, until-depth. Returns (colour, options)."""
        colour = self.state.to_move
        words = list(words)
        if words and words[0].lower() in ColourArg.WORDS:
            colour = COLOUR.parse(words.pop(0), self)
        options = {"interval": 0, "minmoves": 0, "maxmoves": 0, "ownership": False}
        if words and INTEGER_PATTERN.fullmatch(words[0]):
            options["interval"] = IntArg(0).parse(words.pop(0), self)
        allowed = ANALYSIS_KEYS if dialect == "kata" else LZ_ANALYSIS_KEYS
        rules = []
        while words:
            key = words.pop(0)
            if key not in allowed:
                raise syntax_error(f"unknown analysis option {key!r}")
            if not words:
                raise syntax_error(f"{key} needs a value")
            if key in (AVOID, ALLOW):
                if len(words) < 3:
                    raise syntax_error(f"{key} needs a colour, vertices and an until-depth")
                rules.append(self._move_rule(key, words[:3]))
                del words[:3]
                continue
            value = words.pop(0)
            if key == "ownership":
                options[key] = WordArg(("true", "false")).parse(value, self) == "true"
            else:
                options[key] = IntArg(0).parse(value, self)
        _check_rule_combination(rules, dialect)
        options["restriction"] = MoveRestriction(tuple(rules)) if rules else None
        return colour, options

    def _move_rule(self, kind, words):
        """A MoveRule from `COLOUR VERTICES UNTIL_DEPTH`; vertices are comma-separated vertices
        or `pass`, or Leela Zero's rectangles `A1:C3`."""
        colour_text, vertices_text, depth_text = words
        colour = COLOUR.parse(colour_text, self)
        moves = set()
        for part in filter(None, (piece.strip() for piece in vertices_text.split(","))):
            if ":" in part:
                corner_a, _, corner_b = part.partition(":")
                (row_a, col_a), (row_b, col_b) = (row_col(POINT.parse(c, self), self.size)
                                                  for c in (corner_a, corner_b))
                moves.update(loc_of(row, col, self.size)
                             for row in range(min(row_a, row_b), max(row_a, row_b) + 1)
                             for col in range(min(col_a, col_b), max(col_a, col_b) + 1))
            else:
                moves.add(VERTEX.parse(part, self))
        if not moves:
            raise syntax_error(f"{kind} needs at least one vertex")
        depth = IntArg(1).parse(depth_text, self)
        return MoveRule(kind, colour, frozenset(moves), depth)

    def _analysis_lines(self, colour, dialect, options):
        """The search player ponders, a line every interval, until the next command arrives;
        the 1-ply player's analysis is one line."""
        restriction = options["restriction"]
        if hasattr(self.player, "analysis_stream"):
            for analysis in self.player.analysis_stream(self.state, colour,
                                                        options["interval"] / 100.0, restriction):
                yield self._info_line(analysis, dialect, options)
        else:
            analysis = self.player.analyse(self.state, colour, restriction=restriction)
            yield self._info_line(analysis, dialect, options)

    def _info_line(self, analysis, dialect, options):
        if hasattr(analysis, "visits"):
            return self._search_info_line(analysis, dialect, options)
        return self._one_ply_info_line(analysis, dialect, options)

    def _search_info_line(self, analysis, dialect, options):
        """`info move ...` per visited root move, most visited first, with the search's visits,
        win rate, mean score and principal variation; lcb is the win rate less two standard
        errors. From the side of the analysed colour."""
        entries = []
        ranked = [entry for entry in analysis.ranked() if entry[1] > 0] or analysis.ranked()[:1]
        for order, (move, visits, winrate, score, prior, pv) in enumerate(ranked):
            if options["maxmoves"] and order >= options["maxmoves"]:
                break
            vertex = self._vertex(move)
            lcb = winrate - 2.0 * math.sqrt(winrate * (1.0 - winrate) / max(visits, 1))
            prior = 0.0 if prior is None else prior
            line = " ".join(self._vertex(m) for m in pv or [move])
            score = 0.0 if math.isnan(score) else score
            if dialect == "kata":
                entries.append(f"info move {vertex} visits {visits} winrate {winrate:.6f} "
                               f"scoreMean {score:.3f} scoreLead {score:.3f} "
                               f"prior {prior:.6f} lcb {lcb:.6f} order {order} pv {line}")
            else:
                entries.append(f"info move {vertex} visits {visits} winrate {round(winrate * 10000)} "
                               f"prior {round(prior * 10000)} lcb {round(lcb * 10000)} "
                               f"order {order} pv {line}")
        text = " ".join(entries)
        if options["ownership"]:
            sign = 1.0 if analysis.colour == BLACK else -1.0
            text += " ownership " + " ".join(f"{sign * analysis.ownership[p]:.4f}"
                                             for p in board_points(self.size))
        return text

    def _one_ply_info_line(self, analysis, dialect, options):
        """One line of `info move ...` entries, best first (Sabaki splits it at each `info`).

        visits: ANALYSIS_VISITS shared out in proportion to each move's selection probability
        (largest remainders), so the visit-weighted average of the listed winrates (what Lizzie
        and Sabaki show as the position's winrate) is the winrate of kosumi's own move choice.
        Moves with no visit are listed only as far as `minmoves` asks, as KataGo does.
        kata: winrate in [0, 1] with a decimal point, scoreLead in points, scoreStdev where the
        evaluator can estimate it; lz: winrate and prior in ten-thousandths. All from the side of
        the analysed colour, as KataGo and Leela Zero report them."""
        empty_points = self._empty_points()
        ranked = analysis.ranked()
        visits = share_visits([probability for _, _, probability in ranked], ANALYSIS_VISITS)
        listed = [(move, value, probability, count)
                  for order, ((move, value, probability), count) in enumerate(zip(ranked, visits))
                  if count > 0 or order < options["minmoves"]]
        if options["maxmoves"]:
            listed = listed[:options["maxmoves"]]
        stdevs = self._score_stdevs(analysis.colour, [move for move, *_ in listed]) \
            if dialect == "kata" else {}
        entries = []
        for order, (move, value, probability, count) in enumerate(listed):
            vertex = self._vertex(move)
            winrate = win_probability(value, empty_points)
            if dialect == "kata":
                stdev = stdevs.get(move)
                stdev_text = "" if stdev is None else f"scoreStdev {stdev:.3f} "
                entries.append(f"info move {vertex} visits {count} winrate {winrate:.6f} "
                               f"scoreMean {value:.3f} {stdev_text}scoreLead {value:.3f} "
                               f"prior {probability:.6f} lcb {winrate:.6f} order {order} "
                               f"pv {vertex}")
            else:
                entries.append(f"info move {vertex} visits {count} winrate {round(winrate * 10000)} "
                               f"prior {round(probability * 10000)} "
                               f"lcb {round(winrate * 10000)} order {order} pv {vertex}")
        line = " ".join(entries)
        if options["ownership"]:
            ownership = self.evaluator.evaluate(state_for(self.state, analysis.colour)).ownership
            sign = 1.0 if analysis.colour == BLACK else -1.0
            line += " ownership " + " ".join(f"{sign * ownership[p]:.4f}"
                                             for p in board_points(self.size))
        return line

    def _score_stdevs(self, colour, moves):
        """move -> the spread (points) of the final score after colour plays it, from the
        evaluator's ownership: every point an independent +-1 outcome with mean o has variance
        1 - o^2 (an estimate that ignores how points live and die together, so the real spread
        is larger). Empty when the evaluator has no probabilities to offer (no network: its
        ownership is a count, not a prediction), so the key is left out rather than 0."""
        position = state_for(self.state, colour)
        if position is self.state:
            position = self.state.copy()
        points = board_points(self.size)
        stdevs = {}
        for move in moves:
            position.play(move, colour)
            try:
                evaluation = self.evaluator.evaluate(position)
            finally:
                position.undo()
            if evaluation.inputs is None:
                return {}
            ownership = np.asarray(evaluation.ownership)[points]
            stdevs[move] = float(np.sqrt(np.sum(1.0 - np.clip(ownership, -1.0, 1.0) ** 2)))
        return stdevs


def share_visits(probabilities, total):
    """Whole visit counts summing to `total` (when any probability is positive), in proportion
    to the probabilities: floors first, then one more to the largest remainders."""
    weights = np.asarray(probabilities, dtype=float)
    if not len(weights) or weights.sum() <= 0:
        return [0] * len(weights)
    exact = weights / weights.sum() * total
    counts = np.floor(exact).astype(int)
    short = total - int(counts.sum())
    if short > 0:
        counts[np.argsort(-(exact - counts), kind="stable")[:short]] += 1
    return [int(count) for count in counts]


def _check_rule_combination(rules, dialect):
    """KataGo accepts, per colour, either avoid rules or one allow rule; Leela Zero accepts any
    number of allow rules, and avoid beside them only for pass."""
    for colour in (BLACK, WHITE):
        avoids = [rule for rule in rules if rule.colour == colour and rule.kind == AVOID]
        allows = [rule for rule in rules if rule.colour == colour and rule.kind == ALLOW]
        if not allows:
            continue
        if dialect == "kata" and (avoids or len(allows) > 1):
            raise syntax_error("kata-analyze takes either avoid or one allow per colour")
        if dialect == "lz" and any(move != PASS for rule in avoids for move in rule.moves):
            raise syntax_error("lz-analyze takes avoid beside allow only for pass")


def _score_text(black_margin):
    return f"{'B' if black_margin >= 0 else 'W'}+{abs(black_margin):.1f}"
