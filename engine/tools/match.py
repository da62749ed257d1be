"""kosumi-match: play games between two GTP engines; write each game as SGF and a summary.

Reading order: main() parses the command line and calls run_match(), which plays the games one by
one with play_game(). play_game() drives both engines move by move, checks every move with
RulesBoard, and ends the game on two passes, a resignation, the move cap or a forfeit; games that
end on the board are scored by score_game(). summarise() (engine/tools/match_summary.py) turns
the GameResults into summary.json and the printed table: A's win rate with its 95% Wilson
interval, the same as an Elo difference, and the mean margin.

The match tool is the judge: it keeps its own board (sgfmill's, plus the ko and superko rules
below) and does not trust either engine about legality. An engine forfeits the game when it plays
an illegal or unreadable move, fails to answer within --move-timeout, crashes, or refuses a legal
move of its opponent; a crashed or hung engine is killed and restarted for the next game, and the
match goes on.

Scoring, unless --referee is given: area (Tromp-Taylor) after removing the stones that both
engines list as dead (`final_status_list dead`); when they do not both answer or do not agree,
kosumi's own dead-stone classifier (CSA*, engine/scoring/csa.py) decides for a game that ended
by two passes (and the summary lists the games whose count it doubts), and a game stopped by the
move cap counts every stone alive. With --referee CMD (e.g. "gnugo --mode gtp --chinese-rules") the
referee is replayed the game and its `final_score` decides; if it fails, the match scores the
game itself and says so.

Rules: suicide is illegal, simple ko always; positional superko unless --no-superko.

Resuming: match.json holds the engines, referee and settings, and games.jsonl a line per finished
game (its result and moves), written after its SGF; `--resume DIR` reads them and plays on from
the next game, so a stopped or killed match loses only the game it was playing.

Repeated games: a game whose moves are an earlier game's up to the board's eight symmetries, with
the same engine as Black, is marked as a repeat (its SGF says of which game); the summary gives
the win rate and mean margin over the distinct games as well, as NeuroGo's test protocol counts.
"""
import argparse
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field

from sgfmill import boards, sgf
from sgfmill.common import format_vertex, move_from_vertex, opponent_of

from engine.tools.cli import number, options_given
from engine.tools.gtp_client import (GtpClient, GtpCommandError, GtpEngineCrashed, GtpEngineFailure,
                                     GtpError, GtpTimeout)
from engine.tools.match_summary import (COLOUR_NAMES, format_number, format_summary, summarise,
                                        symmetry_key)

MAX_GTP_SIZE = 25  # GTP vertices have letters A-Z without I
VERTEX_PATTERN = re.compile(r"^(pass|[a-hj-z][0-9]{1,2})$")  # before sgfmill's laxer int()
FINAL_SCORE_PATTERN = re.compile(r"^(?:([BW])\+([0-9]+(?:\.[0-9]*)?)|0|draw|jigo)$", re.IGNORECASE)


# --- rules ----------------------------------------------------------------------------------------

class IllegalMove(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason  # "occupied" | "suicide" | "ko" | "superko"


class RulesBoard:
    """sgfmill's board plus the match's rules: no suicide, simple ko, optional positional superko.

    Colours are sgfmill's 'b'/'w'; moves are sgfmill's (row, col) with row 0 at the bottom, or
    None for a pass.
    """

    def __init__(self, size, superko=True):
        self.size = size
        self.superko = superko
        self.board = boards.Board(size)
        self._ko = None  # (point, colour barred from it) for the next move only
        self._positions = {self._position(self.board)}  # every position so far, for superko

    @classmethod
    def with_setup(cls, size, black_points, white_points, superko=True):
        """A board that starts from setup stones (an opening, a test position)."""
        rules = cls(size, superko)
        rules.board.apply_setup(black_points, white_points, ())
        rules._positions = {cls._position(rules.board)}
        return rules

    @staticmethod
    def _position(board):
        return frozenset(board.list_occupied_points())

    def play(self, colour, move):
        """Play `move` for `colour`, or raise IllegalMove and leave the board unchanged."""
        if move is None:
            self._ko = None
            return
        row, col = move
        if self.board.get(row, col) is not None:
            raise IllegalMove("occupied")
        if self._ko == (move, colour):
            raise IllegalMove("ko")
        trial = self.board.copy()
        ko_point = trial.play(row, col, colour)
        if trial.get(row, col) is None:  # sgfmill allows suicide and removes the group
            raise IllegalMove("suicide")
        position = self._position(trial)
        if self.superko and position in self._positions:
            raise IllegalMove("superko")
        self.board = trial
        self._positions.add(position)
        self._ko = None if ko_point is None else (ko_point, opponent_of(colour))

    def area_margin(self, dead_points=()):
        """Black's area minus White's (Tromp-Taylor, no komi) with `dead_points` removed first."""
        board = self.board.copy()
        if dead_points:
            board.apply_setup((), (), list(dead_points))
        return board.area_score()


def parse_move(text, size):
    """A GTP vertex as sgfmill (row, col) or None for a pass; ValueError if unreadable."""
    word = text.strip().lower()
    if not VERTEX_PATTERN.match(word):
        raise ValueError(f"not a vertex: {text.strip()[:40]!r}")
    return move_from_vertex(word, size)


def result_string(winner_colour, how):
    """SGF RE value: how is a margin (float), 'R' resignation, 'T' time, 'F' forfeit."""
    if winner_colour is None:
        return "0"
    if isinstance(how, str):
        return f"{winner_colour.upper()}+{how}"
    return f"{winner_colour.upper()}+{format_number(abs(how))}"


# --- engines --------------------------------------------------------------------------------------

class MatchAborted(Exception):
    """A problem that would recur in every game (bad command line, unsupported board size)."""


class EngineSlot:
    """One engine of the match: its command line, its current process, and its restarts."""

    def __init__(self, label, command, startup_timeout, stderr_path=None, verbose=False):
        self.label = label
        self.command = command
        self.startup_timeout = startup_timeout
        self.stderr_path = stderr_path
        self.verbose = verbose
        self.client = None
        self.name = None  # from the first successful start: `name` and `version`
        self.starts = 0

    def ensure_started(self):
        """Start the engine if it is not running. Raises OSError or GtpError."""
        if self.client is not None and self.client.usable:
            return
        self.discard()  # a client that crashed or hung has killed its engine; reap and replace it
        stderr = open(self.stderr_path, "ab") if self.stderr_path else subprocess.DEVNULL
        try:
            self.client = GtpClient(self.command, stderr=stderr,
                                    transcript=self._log_traffic if self.verbose else None)
        finally:
            if self.stderr_path:
                stderr.close()  # the child holds its own copy of the descriptor
        self.starts += 1
        timeout = self.startup_timeout
        try:
            self._optional_reply("protocol_version", timeout)
            name = self._optional_reply("name", timeout) or self.command
            version = self._optional_reply("version", timeout)
            self.client.list_commands(timeout)
        except GtpError:
            self.discard()
            raise
        if self.name is None:
            self.name = f"{name} {version}".strip()

    def _optional_reply(self, command, timeout):
        try:
            return self.client.send(command, timeout).strip()
        except GtpCommandError:
            return ""

    def _log_traffic(self, direction, text):
        lines = text.split("\n")
        more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
        print(f"  [{self.label}] {direction} {lines[0]}{more}", file=sys.stderr, flush=True)

    def new_game(self, size, komi, timeout):
        self.client.send(f"boardsize {size}", timeout)
        self.client.send("clear_board", timeout)
        self.client.send(f"komi {format_number(komi)}", timeout)

    def discard(self):
        """Kill the current process, if any; the next ensure_started() starts a fresh one."""
        if self.client is not None:
            self.client.kill()
            self.client = None

    def close(self):
        if self.client is not None:
            self.client.close()
            self.client = None

    @property
    def restarts(self):
        return max(0, self.starts - 1)


# --- one game -------------------------------------------------------------------------------------

@dataclass
class GameResult:
    number: int
    black: str  # engine label, "A" or "B"
    white: str
    result: str  # SGF RE: "B+3.5", "W+R", "B+T", "W+F", "0"
    winner: str | None  # engine label, None for a draw
    winner_colour: str | None  # "b" | "w" | None
    end: str  # "two passes" | "move cap" | "resignation" | "forfeit"
    moves: int
    margin: float | None = None  # Black's points minus White's, komi included; scored games only
    scored_by: str | None = None
    doubtful_count: bool = False  # CSA* counted the game and doubts its count
    forfeit: dict | None = None  # {"loser": label, "colour": "b"/"w", "kind": ..., "detail": ...}
    sgf: str | None = None
    seconds: float = 0.0
    notes: list = field(default_factory=list)
    duplicate_of: int | None = None  # an earlier game with these moves, up to the board's symmetry
    # stones each engine played in reply to its opponent's pass, by label: a player throwing stones
    # into the area of an opponent who has passed shows here
    replies_to_pass: dict = field(default_factory=dict)


@dataclass
class MatchConfig:
    size: int = 9
    komi: float = 7.0
    games: int = 10
    alternate: bool = True
    move_timeout: float = 30.0
    startup_timeout: float = 60.0  # engines that load weights or compile on start need a while
    referee_timeout: float = 120.0
    max_moves: int | None = None  # None: 4 * size * size
    superko: bool = True

    @property
    def move_cap(self):
        return self.max_moves if self.max_moves is not None else 4 * self.size * self.size


def failure_kind(error):
    if isinstance(error, GtpTimeout):
        return "timeout"
    if isinstance(error, GtpEngineCrashed):
        return "crash"
    if isinstance(error, OSError):
        return "start failed"
    return "protocol error"


class Game:
    """State of the game being played: the board, the moves, and how it ended."""

    def __init__(self, number, players, config):
        self.number = number
        self.players = players  # {"b": EngineSlot, "w": EngineSlot}
        self.config = config
        self.board = RulesBoard(config.size, config.superko)
        self.moves = []  # (colour, move) in order
        self.notes = []  # what happened besides moves, for the log, the SGF and the summary
        self.started = time.monotonic()
        self.result = None  # the GameResult, once the game is over

    def finish(self, result, winner_colour, end, **details):
        players = self.players
        return GameResult(
            number=self.number, black=players["b"].label, white=players["w"].label,
            result=result, winner=None if winner_colour is None else players[winner_colour].label,
            winner_colour=winner_colour, end=end, moves=len(self.moves),
            seconds=round(time.monotonic() - self.started, 3), notes=self.notes,
            replies_to_pass=replies_to_pass(self.moves, players["b"].label, players["w"].label),
            **details)

    def forfeit(self, colour, kind, detail):
        """`colour` loses the game. (A crashed or hung engine has already been killed by its
        client; EngineSlot.ensure_started replaces it before the next game.)"""
        slot = self.players[colour]
        self.notes.append(f"{COLOUR_NAMES[colour]} ({slot.label}) forfeits: {kind}: {detail}")
        letter = "T" if kind == "timeout" else "F"
        winner = opponent_of(colour)
        return self.finish(result_string(winner, letter), winner, "forfeit",
                           forfeit={"loser": slot.label, "colour": colour, "kind": kind,
                                    "detail": detail})


def replies_to_pass(moves, black_label, white_label):
    """{label: stones that engine played right after its opponent passed} over (colour, move)
    pairs, a pass being None."""
    replies = {black_label: 0, white_label: 0}
    for (_, previous), (colour, move) in zip(moves, moves[1:]):
        if previous is None and move is not None:
            replies[black_label if colour == "b" else white_label] += 1
    return replies


def play_game(number, players, config, referee=None):
    """Play one game between players {"b": slot, "w": slot}.

    Returns the finished Game (its .result and .moves). Raises MatchAborted only for a refusal
    that would recur in every game (an unsupported board size or komi).
    """
    game = Game(number, players, config)
    game.result = _play(game, referee)
    return game


def _play(game, referee):
    players, config = game.players, game.config
    timeout = config.move_timeout
    for colour in "bw":
        slot = players[colour]
        try:
            slot.ensure_started()
        except (GtpEngineFailure, OSError) as error:
            return game.forfeit(colour, failure_kind(error), f"could not start: {error}")
        except GtpCommandError as error:
            return game.forfeit(colour, "protocol error", str(error))
        try:
            slot.new_game(config.size, config.komi, timeout)
        except GtpCommandError as error:
            raise MatchAborted(f"engine {slot.label} ({slot.command}) refused {error.command!r}: "
                               f"{error.message}") from error
        except GtpEngineFailure as error:
            return game.forfeit(colour, failure_kind(error), str(error))

    colour = "b"
    consecutive_passes = 0
    while True:
        mover, other = players[colour], players[opponent_of(colour)]
        try:
            reply = mover.client.send(f"genmove {colour}", timeout)
        except GtpCommandError as error:
            return game.forfeit(colour, "genmove failed", error.message)
        except GtpEngineFailure as error:
            return game.forfeit(colour, failure_kind(error), str(error))
        if reply.strip().lower() == "resign":
            winner = opponent_of(colour)
            game.notes.append(f"{COLOUR_NAMES[colour]} ({mover.label}) resigns")
            return game.finish(result_string(winner, "R"), winner, "resignation")
        try:
            move = parse_move(reply, config.size)
        except ValueError as error:
            return game.forfeit(colour, "illegal move", f"unreadable move: {error}")
        vertex = format_vertex(move)
        try:
            game.board.play(colour, move)
        except IllegalMove as error:
            game.notes.append(f"illegal move {vertex} by {COLOUR_NAMES[colour]}")
            return game.forfeit(colour, "illegal move", f"{vertex} ({error.reason})")
        game.moves.append((colour, move))
        try:
            other.client.send(f"play {colour.upper()} {vertex}", timeout)
        except GtpCommandError as error:
            return game.forfeit(opponent_of(colour), "refused a legal move",
                                f"play {colour.upper()} {vertex}: {error.message}")
        except GtpEngineFailure as error:
            return game.forfeit(opponent_of(colour), failure_kind(error), str(error))
        consecutive_passes = consecutive_passes + 1 if move is None else 0
        if consecutive_passes == 2:
            return score_game(game, "two passes", referee)
        if len(game.moves) >= config.move_cap:
            game.notes.append(f"move cap of {config.move_cap} reached")
            return score_game(game, "move cap", referee)
        colour = opponent_of(colour)


def score_game(game, end, referee):
    """Score a game that ended on the board: the referee's verdict, else area on our board."""
    margin = None
    scored_by = None
    if referee is not None:
        margin, problem = referee.score(game.config, game.moves)
        if margin is not None:
            scored_by = "referee"
        else:
            game.notes.append(f"referee failed ({problem}); scored by the match tool")
    doubtful = False
    if margin is None:
        dead_points = agreed_dead_stones(game)
        if dead_points is None and end == "two passes":
            dead_points, doubt = classifier_dead_stones(game)
            scored_by = f"area, {len(dead_points)} dead stones removed by CSA*"
            if doubt:
                doubtful = True
                scored_by += DOUBTFUL_MARK
                game.notes.append(doubt)
        elif dead_points is None:
            scored_by = "area, all stones alive (no agreed dead-stone list)"
        elif dead_points:
            scored_by = f"area, {len(dead_points)} dead stones removed by agreement"
        else:
            scored_by = "area, engines agree no stones are dead"
        margin = game.board.area_margin(dead_points or ()) - game.config.komi
    winner = None if margin == 0 else ("b" if margin > 0 else "w")
    return game.finish(result_string(winner, margin), winner, end, margin=margin,
                       scored_by=scored_by, doubtful_count=doubtful)


DOUBTFUL_MARK = "; doubtful, check the board"     # ends scored_by when CSA* doubts its count


def classifier_dead_stones(game):
    """The stones CSA* (kosumi's learned dead-stone classifier) calls dead on the match board,
    as sgfmill points, and a note saying why CSA* doubts the count (None when it does not).
    The one place the match tool uses the engine's own code: a finished game without a referee
    or an agreed dead-stone list still gets a count it can trust, or is pointed out for a look,
    as the paper proposes."""
    from engine.rules.board import BLACK, WHITE, Board
    from engine.rules.coords import from_sgfmill, to_sgfmill
    from engine.scoring import csa
    size = game.config.size
    board = Board(size)
    for colour, point in game.board.board.list_occupied_points():
        board.play(from_sgfmill(point, size), BLACK if colour == "b" else WHITE)
    result = csa.analyse(board, game.config.komi, csa.classifier_for(size), review=True)
    doubt = (f"CSA*'s count is doubtful ({csa.DOUBT_REASONS}): check the dead stones"
             if result.doubtful else None)
    return {to_sgfmill(p, size) for p in result.dead_stones}, doubt


def agreed_dead_stones(game):
    """The stones both engines list as dead, or None when they do not both answer alike."""
    answers = []
    for colour in "bw":
        slot = game.players[colour]
        try:
            if not slot.client.known_command("final_status_list", game.config.move_timeout):
                return None
            reply = slot.client.send("final_status_list dead", game.config.move_timeout)
            answers.append({parse_move(word, game.config.size) for word in reply.split()})
        except GtpCommandError:
            return None
        except ValueError as error:
            game.notes.append(f"{slot.label}'s dead-stone list is unreadable: {error}")
            return None
        except GtpEngineFailure as error:
            # The game is over, so no forfeit; the engine restarts for the next game.
            game.notes.append(f"{slot.label} failed on final_status_list: {error}")
            return None
    black_dead, white_dead = answers
    if black_dead != white_dead:
        game.notes.append("the engines disagree on dead stones; all stones counted alive")
        return None
    board = game.board.board
    return {point for point in black_dead if point is not None and board.get(*point) is not None}


class Referee:
    """A GTP engine (normally GNU Go) that is replayed each finished game and asked final_score."""

    def __init__(self, command, timeout, stderr_path=None, verbose=False):
        self.slot = EngineSlot("referee", command, timeout, stderr_path, verbose)
        self.timeout = timeout

    def score(self, config, moves):
        """(margin for Black with komi, None) or (None, what went wrong)."""
        try:
            self.slot.ensure_started()
            client = self.slot.client
            self.slot.new_game(config.size, config.komi, self.timeout)
            for colour, move in moves:
                client.send(f"play {colour.upper()} {format_vertex(move)}", self.timeout)
            reply = client.send("final_score", self.timeout).strip()
        except (GtpError, OSError) as error:
            return None, str(error)
        match = FINAL_SCORE_PATTERN.match(reply)
        if not match:
            return None, f"unreadable final_score {reply!r}"
        if match.group(1) is None:
            return 0.0, None
        points = float(match.group(2))
        return (points if match.group(1).upper() == "B" else -points), None

    def close(self):
        self.slot.close()


# --- SGF ------------------------------------------------------------------------------------------

def write_sgf(path, result, moves, config, slots):
    """Write one game; forfeits and other events go into comments."""
    game = sgf.Sgf_game(size=config.size)
    root = game.get_root()
    root.set("AP", ("kosumi-match", "1"))
    root.set("KM", float(config.komi))
    root.set("PB", f"{slots[result.black].name or result.black} ({result.black})")
    root.set("PW", f"{slots[result.white].name or result.white} ({result.white})")
    root.set("RE", result.result)
    root.set("GN", str(result.number))
    root.set("DT", datetime.date.today().strftime("%Y-%m-%d"))
    rules = "positional superko" if config.superko else "simple ko"
    scoring = result.scored_by or "not scored"
    root.set("C", f"kosumi-match game {result.number}: ended by {result.end}; {rules}, "
                  f"no suicide; scoring: {scoring}.")
    node = root
    for colour, move in moves:
        node = node.new_child()
        node.set_move(colour, move)
    if result.notes:
        node.add_comment_text("\n".join(result.notes))
    with open(path, "wb") as stream:
        stream.write(game.serialise())


# --- the match ------------------------------------------------------------------------------------

def progress(message):
    print(message, file=sys.stderr, flush=True)


MATCH_FILE = "match.json"      # the match's engines, referee and settings, for --resume
GAMES_FILE = "games.jsonl"     # a line per finished game: its result and moves, for --resume


def _game_record(result, moves):
    return json.dumps({**asdict(result), "move_list": [[colour, None if move is None else
                                                        list(move)] for colour, move in moves]})


def read_match(out_dir):
    """The match in out_dir that --resume continues: (commands {"A", "B", "referee"}, MatchConfig,
    finished games as [(GameResult, moves)]). A last line of games.jsonl cut short by a kill is
    left out (that game is played again); raises MatchAborted for a folder that holds no match
    or a damaged record, naming the file."""
    match_path = os.path.join(out_dir, MATCH_FILE)
    try:
        with open(match_path) as stream:
            match = json.load(stream)
        commands = {label: match["engines"][label] for label in ("A", "B")}
        commands["referee"] = match["referee"]
        config = MatchConfig(**match["config"])
    except FileNotFoundError:
        raise MatchAborted(f"{out_dir} holds no match to resume ({MATCH_FILE} missing)") from None
    except (ValueError, KeyError, TypeError) as error:
        raise MatchAborted(f"{match_path} is damaged: {error!r}") from None
    games_path = os.path.join(out_dir, GAMES_FILE)
    finished = []
    lines = []
    if os.path.exists(games_path):
        with open(games_path) as stream:
            lines = stream.read().split("\n")[:-1]     # each written whole ends with "\n"
    for line_number, line in enumerate(lines, start=1):
        try:
            record = json.loads(line)
            moves = [(colour, None if move is None else tuple(move))
                     for colour, move in record.pop("move_list")]
            result = GameResult(**record)
            if "replies_to_pass" not in record:    # a record from before the count was kept
                result.replies_to_pass = replies_to_pass(moves, result.black, result.white)
        except (ValueError, KeyError, TypeError) as error:
            raise MatchAborted(f"{games_path}, line {line_number}, is damaged: {error!r}") from None
        if result.number != line_number:
            raise MatchAborted(f"{games_path}, line {line_number}, holds game {result.number}")
        finished.append((result, moves))
    return commands, config, finished


def run_match(command_a, command_b, config, out_dir, referee_command=None, verbose=False,
              finished=None):
    """Play the match; write SGFs and summary.json into out_dir; return the summary dict.
    finished: None for a new match, else the games a resumed match has played ([(GameResult,
    moves)], read_match's, perhaps none); the match goes on from the next game.

    Raises MatchAborted when an engine cannot be used at all.
    """
    os.makedirs(out_dir, exist_ok=True)
    summary_path = os.path.join(out_dir, "summary.json")
    games_path = os.path.join(out_dir, GAMES_FILE)
    if finished is None:
        finished = []
        for name in ("summary.json", MATCH_FILE, GAMES_FILE):
            if os.path.exists(os.path.join(out_dir, name)):
                raise MatchAborted(f"{out_dir} already holds a match ({name}); choose another "
                                   f"--out, or continue it with --resume {out_dir}")
        _write_json(os.path.join(out_dir, MATCH_FILE), {
            "engines": {"A": command_a, "B": command_b}, "referee": referee_command,
            "config": asdict(config)})
    with open(games_path, "w") as stream:     # drops a line cut short by a kill
        stream.writelines(_game_record(result, moves) + "\n" for result, moves in finished)
    slots = {label: EngineSlot(label, command, config.startup_timeout,
                               os.path.join(out_dir, f"engine-{label}.stderr.log"), verbose)
             for label, command in (("A", command_a), ("B", command_b))}
    referee = (Referee(referee_command, config.referee_timeout,
                       os.path.join(out_dir, "referee.stderr.log"), verbose)
               if referee_command else None)
    results = [result for result, _ in finished]
    first_of_key = {}       # symmetry_key -> the number of the first game with it
    for result, moves in reversed(finished):
        first_of_key[symmetry_key(result.black, moves, config.size)] = result.number
    interrupted = False
    try:
        # A command line that cannot start at all is a usage error, not a forfeit.
        for slot in slots.values():
            try:
                slot.ensure_started()
            except (GtpError, OSError) as error:
                raise MatchAborted(f"engine {slot.label} ({slot.command}) failed to start: "
                                   f"{error}") from error
        digits = len(str(config.games))
        for game_number in range(len(results) + 1, config.games + 1):
            a_is_black = not config.alternate or game_number % 2 == 1
            players = ({"b": slots["A"], "w": slots["B"]} if a_is_black
                       else {"b": slots["B"], "w": slots["A"]})
            game = play_game(game_number, players, config, referee)
            result = game.result
            result.sgf = f"game-{game_number:0{digits}d}.sgf"
            first = first_of_key.setdefault(symmetry_key(result.black, game.moves, config.size),
                                            game_number)
            if first != game_number:
                result.duplicate_of = first
                result.notes.append(f"repeats game {first} (up to rotation and mirroring)")
            write_sgf(os.path.join(out_dir, result.sgf), result, game.moves, config, slots)
            with open(games_path, "a") as stream:
                stream.write(_game_record(result, game.moves) + "\n")
            results.append(result)
            report_game(result, results, config)
    except KeyboardInterrupt:
        interrupted = True
        progress("interrupted; writing the summary of the finished games")
    finally:
        for slot in slots.values():
            slot.close()
        if referee is not None:
            referee.close()
    summary = summarise(results, config, slots, referee_command, interrupted)
    _write_json(summary_path, summary)
    return summary


def _write_json(path, value):
    temporary = path + ".tmp"
    with open(temporary, "w") as stream:
        json.dump(value, stream, indent=2)
        stream.write("\n")
    os.replace(temporary, path)


def report_game(result, results, config):
    a_wins = sum(r.winner == "A" for r in results)
    b_wins = sum(r.winner == "B" for r in results)
    for note in result.notes:
        progress(f"game {result.number}: {note}")
    progress(f"game {result.number}/{config.games}: {result.black} (B) vs {result.white} (W): "
             f"{result.result} by {result.end} after {result.moves} moves, "
             f"{result.seconds:.1f} s  [A {a_wins} - B {b_wins}]")


# --- command line ---------------------------------------------------------------------------------

def build_parser():
    parser = argparse.ArgumentParser(
        prog="kosumi-match",
        description="Play games between two GTP engines; write SGFs and summary.json.",
        epilog='example: kosumi-match --engine-a "kosumi" --engine-b "gnugo --mode gtp '
               '--level 1 --chinese-rules" --games 100 --size 9 --komi 7 --out runs/vs-gnugo1')
    parser.match_settings = []    # their actions: a resumed match keeps its own (match.json)

    def setting(*names, **options):
        parser.match_settings.append(parser.add_argument(*names, **options))

    setting("--engine-a", "--black", dest="engine_a", metavar="CMD",
            help="command line of engine A (Black in the first game)")
    setting("--engine-b", "--white", dest="engine_b", metavar="CMD",
            help="command line of engine B (White in the first game)")
    parser.add_argument("--games", type=number(int, minimum=1),
                        help=f"games (default {MatchConfig.games}; with --resume, the match's "
                             f"own, or more to extend it)")
    setting("--size", type=number(int, minimum=2, maximum=MAX_GTP_SIZE, what="board size"),
            default=9, help="board size (default 9)")
    setting("--komi", type=number(what="komi"), default=7.0, help="komi (default 7)")
    setting("--alternate", action=argparse.BooleanOptionalAction, default=True,
            help="swap colours every game (default on)")
    setting("--referee", metavar="CMD",
            help='GTP engine that scores finished games with final_score, e.g. '
                 '"gnugo --mode gtp --chinese-rules"; default: the match tool '
                 'scores by area')
    setting("--move-timeout", type=number(above=0), default=30.0, metavar="SECONDS",
            help="time limit for each command during a game; an engine that "
                 "exceeds it forfeits and is restarted (default 30)")
    setting("--startup-timeout", type=number(above=0), default=60.0,
            metavar="SECONDS", help="time limit for an engine to start and answer "
                                    "the handshake (default 60)")
    setting("--referee-timeout", type=number(above=0), default=120.0,
            metavar="SECONDS", help="time limit for each referee command "
                                    "(default 120)")
    setting("--max-moves", type=number(int, minimum=1), metavar="N",
            help="end and score a game after N moves, passes included "
                 "(default 4 x size x size)")
    setting("--superko", action=argparse.BooleanOptionalAction, default=True,
            help="positional superko (default on; off: simple ko only)")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", metavar="DIR",
                       help="directory for game-N.sgf, summary.json and engine stderr logs "
                            "(one that holds no match yet)")
    where.add_argument("--resume", metavar="DIR",
                       help="continue the match in DIR, stopped or killed, with its own engines "
                            "and settings, from the game after its last finished one (the "
                            "engines start afresh: one with a fixed --seed may repeat its "
                            "first games, which the summary marks as repeats)")
    parser.add_argument("--verbose", action="store_true",
                        help="show the GTP traffic on stderr")
    return parser


def stop_on_sigterm(signal_number, frame):
    # Leave through the KeyboardInterrupt path: engines are killed, finished games summarised.
    raise KeyboardInterrupt


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    try:
        if args.resume:
            given = options_given(parser.match_settings, args)
            if given:
                parser.error(f"{', '.join(given)}: a resumed match keeps its own engines and "
                             f"settings ({MATCH_FILE}); only --games and --verbose may be given")
            commands, config, finished = read_match(args.resume)
            if args.games is not None:
                config.games = args.games
            if len(finished) >= config.games:
                raise MatchAborted(f"{args.resume} has played all {len(finished)} of its games; "
                                   f"give --games N, more than {len(finished)}, to extend it")
            progress(f"resuming {args.resume} after game {len(finished)} of {config.games}")
            summary = run_match(commands["A"], commands["B"], config, args.resume,
                                commands["referee"], args.verbose, finished)
        else:
            if not (args.engine_a and args.engine_b):
                parser.error("--engine-a and --engine-b are required (or --resume DIR)")
            config = MatchConfig(size=args.size, komi=args.komi,
                                 games=args.games or MatchConfig.games,
                                 alternate=args.alternate, move_timeout=args.move_timeout,
                                 startup_timeout=args.startup_timeout,
                                 referee_timeout=args.referee_timeout, max_moves=args.max_moves,
                                 superko=args.superko)
            summary = run_match(args.engine_a, args.engine_b, config, args.out, args.referee,
                                args.verbose)
    except MatchAborted as error:
        print(f"kosumi-match: {error}", file=sys.stderr)
        return 1
    print(format_summary(summary))
    return 130 if summary["interrupted"] else 0


if __name__ == "__main__":
    sys.exit(main())
