"""SGF files in and out of a game: `loadsgf` and `printsgf` (sgfmill parses and writes; kosumi
builds the position).

Reading order: `load_sgf()` walks the main line node by node (`_Replay`), applying setup
properties (AB, AW, AE, PL) and moves in file order, then hands back a GameState under kosumi's
rules; `game_to_sgf()` writes a game back.

Files are read as real programs write them (Cgoban, GoGui, Sabaki, KGS, problem collections):
- setup may come in any node of the main line, also after moves. Setup stones overwrite what was
  there and capture nothing (FF[4] spec, AB/AW); a setup that leaves a chain without a liberty is
  refused, since no legal position has one. A setup after the first move starts the game anew
  from the position it makes (undo stops there; captures so far are kept);
- black setup stones before any move with `HA` in the root are handicap stones (undo takes them
  back one by one, as after `set_free_handicap`);
- moves are replayed as recorded under simple ko, with multi-stone suicide allowed: a record of a
  game played under other rules (Japanese simple ko, New Zealand suicide) loads, and the game goes
  on under kosumi's rules (positional superko, no suicide) from there;
- `PL[1]`/`PL[2]` (Cgoban 1) are Black/White to move, as GNU Go reads them;
- `B[]` and, on boards up to 19x19, FF[3]'s `B[tt]` are passes (sgfmill); variations past the main
  line (the first child of every node) are ignored; a file that lacks only its final `)` loads.
Everything is built aside: a refused file changes nothing in the caller's game, and every
refusal says why (sgfmill's own ValueErrors carry no text, so the loader quotes the property).
"""
import math
import re
from dataclasses import dataclass

from sgfmill import sgf

from engine import __version__
from engine.rules.board import BLACK, PASS, WHITE, Board, IllegalMove
from engine.rules.board import _board_from_state
from engine.rules.coords import board_points, format_vertex, from_sgfmill, parse_vertex, to_sgfmill
from engine.rules.game import MAX_SIZE, MIN_SIZE, GameState, Rules

# SGF RU values (lower case) kosumi can follow: area or territory scoring. Anything else leaves
# the engine's scoring as it was.
SGF_RULES = {
    "japanese": "territory", "korean": "territory", "jp": "territory",
    "chinese": "area", "cn": "area", "aga": "area", "goe": "area", "ing": "area", "nz": "area",
    "new zealand": "area", "tromp-taylor": "area", "tromp taylor": "area",
}
SETUP_PROPERTIES = ("AB", "AW", "AE")
# PL values: B and W, and the 1 and 2 that Cgoban 1 writes (a slip in the FF[3] property list
# gave colours as numbers); GNU Go reads them the same way.
PLAYER_VALUES = {b"b": BLACK, b"w": WHITE, b"1": BLACK, b"2": WHITE}
SZ_ERROR = re.compile(r"bad SZ property|size out of range")


@dataclass
class LoadedGame:
    state: GameState
    handicap_stones: int     # leading history entries that are handicap placements
    setup: dict              # BLACK/WHITE -> locs of the start position (empty after handicap)
    scoring: str             # from RU when kosumi knows the rule set, else the caller's


def parse_sgf(data):
    """sgfmill's game from SGF bytes. A file whose only fault is a missing final `)` (a common
    truncation, which GNU Go reads) is read as if it were there. ValueError otherwise."""
    try:
        return sgf.Sgf_game.from_bytes(data)
    except ValueError as error:
        first_error = error
    try:
        return sgf.Sgf_game.from_bytes(data.rstrip() + b")")
    except ValueError:
        pass
    if SZ_ERROR.search(str(first_error)):
        size = re.search(rb"SZ\[([^\]]*)\]", data)
        shown = size.group(1).decode("ascii", "replace") if size else "?"
        raise ValueError(f"board size {shown} is not supported (kosumi plays square boards "
                         f"from {MIN_SIZE}x{MIN_SIZE} to {MAX_SIZE}x{MAX_SIZE})") from None
    raise ValueError(f"not a readable SGF game ({first_error})") from None


def parse_until(text):
    """loadsgf's optional second argument: a move number (int >= 1) or a vertex (str, checked
    against the file's board size later). ValueError for anything else."""
    if re.fullmatch(r"[+-]?[0-9]+", text):
        number = int(text)
        if number < 1:
            raise ValueError(f"move number {number} is out of range")
        return number
    loc = parse_vertex(text, MAX_SIZE)      # syntax only: the file's size is not known yet
    if loc == PASS:
        raise ValueError("loadsgf stops at a move number or a board vertex, not at pass")
    return text


def _property_text(node, identifier):
    """The property as the file writes it (its first value), to quote in a refusal: sgfmill's
    own ValueErrors mostly carry no text."""
    return f"{identifier}[{node.get_raw(identifier).decode('utf-8', 'replace')}]"


def _player_to_move(node, node_number):
    try:
        return PLAYER_VALUES[node.get_raw("PL").strip().lower()]
    except KeyError:
        raise ValueError(f"bad {_property_text(node, 'PL')} in node {node_number} "
                         f"(expected B or W)") from None


def _colour_of(letter):
    return BLACK if letter == "b" else WHITE


def _chain_without_liberty(stones, size):
    """A loc of some chain in `stones` (loc -> colour) that has no empty neighbour, else None."""
    stride = size + 2
    on_board = set(board_points(size))
    seen = set()
    for start, colour in stones.items():
        if start in seen:
            continue
        chain, stack, free = {start}, [start], False
        while stack:
            p = stack.pop()
            for q in (p - 1, p + 1, p - stride, p + stride):
                if q not in on_board:
                    continue
                if q not in stones:
                    free = True
                elif stones[q] == colour and q not in chain:
                    chain.add(q)
                    stack.append(q)
        seen |= chain
        if not free:
            return min(chain)
    return None


def board_from_stones(size, stones, captures=(0, 0)):
    """A Board with `stones` (loc -> colour) and the given prisoner counts, no ko."""
    rows = [["."] * size for _ in range(size)]
    for loc, colour in stones.items():
        row, col = divmod(loc, size + 2)
        rows[row - 1][col - 1] = "X" if colour == BLACK else "O"
    board = Board.from_ascii("\n".join("".join(row) for row in rows))
    if any(captures):
        # The board keeps prisoner counts only through its pickling constructor.
        _, (_, diagram, ko_loc, ko_colour, _, _) = board.__reduce__()
        board = _board_from_state(size, diagram, ko_loc, ko_colour, *captures)
    return board


class _Replay:
    """The position while the main line is walked: a GameState under replay rules, plus what the
    GTP engine needs to know about how it started."""

    def __init__(self, size, rules, has_handicap_property):
        self.size = size
        self.rules = rules
        self.has_handicap_property = has_handicap_property
        self.state = GameState(size, rules)
        self.handicap_stones = 0
        self.setup = {BLACK: [], WHITE: []}
        self.moves_played = 0

    def apply_setup(self, node, node_number):
        size = self.size
        try:
            black, white, empty = node.get_setup_stones()
        except ValueError:
            raise ValueError(f"bad setup property in node {node_number} (a value that is not a "
                             f"point or rectangle of the {size}x{size} board)") from None
        board = self.state.board
        stones = {p: colour for colour in (BLACK, WHITE) for p in board.stones(colour)}
        for point in empty:
            stones.pop(from_sgfmill(point, size), None)
        for points, colour in ((black, BLACK), (white, WHITE)):
            for point in points:
                stones[from_sgfmill(point, size)] = colour
        stranded = _chain_without_liberty(stones, size)
        if stranded is not None:
            raise ValueError(f"the setup in node {node_number} leaves the chain at "
                             f"{format_vertex(stranded, size)} without liberties")
        only_black_before_moves = self.moves_played == 0 and not self.state.history and \
            not board.stones(BLACK) and not board.stones(WHITE) and \
            all(colour == BLACK for colour in stones.values())
        if only_black_before_moves and self.has_handicap_property and len(stones) >= 2:
            self.state = GameState(size, self.rules)
            # bottom row first, as sgfmill lists points (GTP's fixed handicap starts there too)
            self.state.place_handicap(sorted(stones, key=lambda p: to_sgfmill(p, size)))
            self.handicap_stones = len(stones)
            self.setup = {BLACK: [], WHITE: []}
            return
        to_move = self.state.to_move if self.moves_played else BLACK
        captures = (board.captures(BLACK), board.captures(WHITE))
        self.state = GameState.from_board(board_from_stones(size, stones, captures), to_move,
                                          self.rules)
        self.handicap_stones = 0
        self.setup = {colour: sorted(p for p, c in stones.items() if c == colour)
                      for colour in (BLACK, WHITE)}

    def play(self, colour, loc, number):
        try:
            self.state.play(loc, colour)
        except IllegalMove as error:
            raise ValueError(f"move {number} ({'BW'[colour - 1]} {format_vertex(loc, self.size)}) "
                             f"cannot be played ({error})") from None
        self.moves_played += 1


def load_sgf(path, until, scoring, current_komi):
    """The main line of an SGF file as a LoadedGame. `until`: None (every move), a move number N
    (stop before the N-th move; moves are counted, not nodes, passes included) or a vertex text
    (GNU Go's form: stop before the first move at that vertex). Stopping before a move leaves its
    colour to move. Raises OSError or ValueError with the reason; nothing of the caller's changes."""
    with open(path, "rb") as handle:
        data = handle.read()
    game = parse_sgf(data)
    size = game.get_size()
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"board size {size} is not supported (kosumi plays square boards from "
                         f"{MIN_SIZE}x{MIN_SIZE} to {MAX_SIZE}x{MAX_SIZE})")
    root = game.get_root()
    komi = current_komi
    if root.has_property("KM"):
        try:
            komi = float(game.get_komi())
        except ValueError:
            raise ValueError(f"bad komi {_property_text(root, 'KM')}") from None
        if not math.isfinite(komi):
            raise ValueError("bad komi (not a finite number)")
    if root.has_property("RU"):
        scoring = SGF_RULES.get(root.get("RU").strip().lower(), scoring)
    has_handicap = False
    if root.has_property("HA"):
        try:
            has_handicap = int(root.get("HA")) >= 2
        except ValueError:
            raise ValueError(f"bad handicap {_property_text(root, 'HA')} (not a number)") \
                from None
    stop_at = None
    if isinstance(until, str):
        try:
            stop_at = parse_vertex(until, size)
        except ValueError:
            raise ValueError(f"vertex {until} is not on the {size}x{size} board") from None

    replay = _Replay(size, Rules(ko="simple", suicide=True, scoring=scoring, komi=komi),
                     has_handicap)
    number = 0
    for node_number, node in enumerate(game.get_main_sequence()):
        if any(node.has_property(name) for name in SETUP_PROPERTIES):
            replay.apply_setup(node, node_number)
        if node.has_property("PL"):
            replay.state.to_move = _player_to_move(node, node_number)
        if node.has_property("B") and node.has_property("W"):
            raise ValueError(f"node {node_number} has both a black and a white move")
        try:
            letter, point = node.get_move()
        except ValueError:
            move = _property_text(node, "B" if node.has_property("B") else "W")
            raise ValueError(f"bad move {move} in node {node_number} (not a point of the "
                             f"{size}x{size} board)") from None
        if letter is None:
            continue
        colour, loc = _colour_of(letter), from_sgfmill(point, size)
        number += 1
        if (isinstance(until, int) and number >= until) or (stop_at is not None and loc == stop_at):
            replay.state.to_move = colour
            break
        replay.play(colour, loc, number)

    state = replay.state
    state.rules = Rules(ko="positional", suicide=False, scoring=scoring, komi=komi)
    return LoadedGame(state, replay.handicap_stones, replay.setup, scoring)


def game_to_sgf(engine):
    """The engine's game as SGF text: size, komi, rules, the start position (handicap stones with
    HA, or setup stones), every move, and PL wherever the side to move would not follow from the
    moves. kosumi, GNU Go and sgfmill read it back to the same position."""
    state = engine.state
    size = state.size
    game = sgf.Sgf_game(size)
    root = game.get_root()
    root.set("KM", state.rules.komi)
    root.set("RU", "Japanese" if state.rules.scoring == "territory" else "Chinese")
    root.set("AP", ("kosumi", __version__))   # the real version, whatever `version` answers
    history = state.history
    handicap = [loc for _, loc in history[:engine.handicap_stones]]
    black_setup = list(engine.setup[BLACK]) + handicap
    if black_setup:
        root.set("AB", {to_sgfmill(p, size) for p in black_setup})
    if engine.setup[WHITE]:
        root.set("AW", {to_sgfmill(p, size) for p in engine.setup[WHITE]})
    if handicap:
        root.set("HA", len(handicap))
    moves = history[engine.handicap_stones:]
    implied = (WHITE if handicap else BLACK) if not moves else 3 - moves[-1][0]
    if not moves:
        root.set("PL", "b" if state.to_move == BLACK else "w")
    for colour, loc in moves:
        node = game.extend_main_sequence()
        node.set_move("b" if colour == BLACK else "w", to_sgfmill(loc, size))
    if moves and state.to_move != implied:
        game.extend_main_sequence().set("PL", "b" if state.to_move == BLACK else "w")
    return game.serialise().decode("utf-8")
