"""Game rules on top of the fast board: Rules, GameState, handicap, scoring, Benson.

Reading order: GameState.play() first (board move, then the superko check, then the records that
undo() pops), then the free functions below it, which read a Board and never change it for good:
fixed_handicap_points(), area_score() / territory_score() and pass_alive() (Benson). Ladders
are read a layer up, in engine/tactics/ladder.pyx.

The board (engine/rules/board.pyx) knows stones, chains, simple ko and the Zobrist hash of the stones;
everything that needs the game's past (superko, passes, the side to move) lives here.
"""
from collections import Counter
from dataclasses import dataclass
import math

from engine.rules.board import (BLACK, EMPTY, NO_LOC, PASS, WALL, WHITE, Board, IllegalMove,
                                _board_from_state, opponent)

__all__ = [
    "Rules", "GameState", "IllegalMove", "fixed_handicap_points", "area_score", "territory_score",
    "pass_alive",
]

KO_RULES = ("simple", "positional", "situational")
SCORING_RULES = ("area", "territory")
MIN_SIZE, MAX_SIZE = 2, 25


@dataclass(frozen=True)
class Rules:
    """The rule set of a game.

    ko: "simple" (only the immediate retake is barred), "positional" (no move may recreate the
        stones of any earlier position) or "situational" (no move may recreate earlier stones
        with the same side to move).
    suicide: whether a move that leaves its own chain without liberties is allowed; when it is,
        that chain is removed and counted as captured by the opponent. A single-stone suicide is
        refused even then: it leaves the stones exactly as they were (a pass that gifts a
        prisoner), and positional superko forbids it anyway.
    scoring: "area" (Tromp-Taylor: stones plus empty regions reaching one colour only) or
        "territory" (Japanese: surrounded empty points plus prisoners).
    komi: points given to White.
    """
    ko: str = "positional"
    suicide: bool = False
    scoring: str = "area"
    komi: float = 7.0

    def __post_init__(self):
        if self.ko not in KO_RULES:
            raise ValueError(f"unknown ko rule {self.ko!r}; expected one of {', '.join(KO_RULES)}")
        if self.scoring not in SCORING_RULES:
            raise ValueError(f"unknown scoring {self.scoring!r}; expected one of {', '.join(SCORING_RULES)}")
        if not isinstance(self.suicide, bool):
            raise ValueError(f"suicide must be True or False, not {self.suicide!r}")
        real = isinstance(self.komi, (int, float)) and not isinstance(self.komi, bool)
        if not real or not math.isfinite(self.komi):
            raise ValueError(f"komi must be a finite number, not {self.komi!r}")


SYMMETRIES = 8   # of the square board: 0 the identity, then rotations and reflections


def symmetric_point(row, col, size, symmetry):
    """(row, col) under symmetry 0..7 of the size x size board: bit 0 mirrors the columns, bit 1
    the rows, and bit 2 then swaps rows and columns."""
    if symmetry & 1:
        col = size - 1 - col
    if symmetry & 2:
        row = size - 1 - row
    return (col, row) if symmetry & 4 else (row, col)


def _inverse_symmetry(symmetry):
    return next(t for t in range(SYMMETRIES)
                if symmetric_point(*symmetric_point(0, 1, 5, symmetry), 5, t) == (0, 1))


INVERSE_SYMMETRY = tuple(_inverse_symmetry(s) for s in range(SYMMETRIES))


def symmetric_loc(loc, size, symmetry):
    """Board loc under symmetry 0..7 (symmetric_point); PASS stays PASS."""
    if loc == PASS:
        return PASS
    stride = size + 2
    row, col = symmetric_point(loc // stride - 1, loc % stride - 1, size, symmetry)
    return (row + 1) * stride + col + 1


def _check_colour(colour):
    if colour != BLACK and colour != WHITE:
        raise ValueError(f"colour must be BLACK ({BLACK}) or WHITE ({WHITE}), not {colour!r}")


def _neighbours(loc, stride):
    return (loc - stride, loc - 1, loc + 1, loc + stride)


def connected_parts(points, stride):
    """A set of locs split into its 4-connected parts (a list of sets)."""
    remaining, parts = set(points), []
    while remaining:
        start = remaining.pop()
        part, stack = {start}, [start]
        while stack:
            p = stack.pop()
            for q in _neighbours(p, stride):
                if q in remaining:
                    remaining.discard(q)
                    part.add(q)
                    stack.append(q)
        parts.append(part)
    return parts


class _MoveRecord:
    """What undo() needs beyond the board's own journal for one history entry."""
    __slots__ = ("hash_before", "to_move_before", "passes_before", "recorded")

    def __init__(self, hash_before, to_move_before, passes_before, recorded):
        self.hash_before = hash_before
        self.to_move_before = to_move_before
        self.passes_before = passes_before
        self.recorded = recorded      # (stones hash, side to move) added to the superko sets, or None


class GameState:
    """A game: the board, the side to move, the history and everything superko needs.

    Every position reached after a move (and the starting position) is recorded twice: its stones
    hash (positional superko) and the pair (stones hash, side to move) (situational superko). Both
    are kept whatever the ko rule, so rules may be replaced mid-game (GTP `komi` does). The records
    are multisets, so undo() removes exactly what the undone move added, also when that move
    repeated a position (a tolerant play).

    Do not play on `board` directly: the history and the superko sets would no longer match it.
    """

    def __init__(self, size, rules=Rules()):
        if isinstance(size, bool) or not isinstance(size, int) or not MIN_SIZE <= size <= MAX_SIZE:
            raise ValueError(f"board size must be an integer from {MIN_SIZE} to {MAX_SIZE}, not {size!r}")
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a Rules value, not {rules!r}")
        self.size = size
        self.rules = rules
        self._start(Board(size), BLACK)

    @classmethod
    def from_board(cls, board, to_move=BLACK, rules=Rules()):
        """A game starting from a set-up position (a copy of board; e.g. SGF AB/AW or a test
        diagram). The history starts empty: undo() cannot go back past this position."""
        _check_colour(to_move)
        game = cls(board.size, rules)
        game._start(board.copy(), to_move)
        return game

    def _start(self, board, to_move):
        self._initial_board = board.copy()
        self._initial_to_move = to_move
        self.board = board
        self.to_move = to_move
        self.history = []
        self.consecutive_passes = 0
        self._records = []
        self._seen_stones = Counter()
        self._seen_situations = Counter()
        self._record_position(board.hash, to_move)

    def _record_position(self, stones_hash, side_to_move):
        self._seen_stones[stones_hash] += 1
        self._seen_situations[(stones_hash, side_to_move)] += 1
        return (stones_hash, side_to_move)

    def _forget_position(self, recorded):
        stones_hash, _ = recorded
        for counter, key in ((self._seen_stones, stones_hash), (self._seen_situations, recorded)):
            counter[key] -= 1
            if counter[key] == 0:
                del counter[key]

    def _repeats_earlier_position(self, stones_hash, side_to_move):
        if self.rules.ko == "positional":
            return stones_hash in self._seen_stones
        if self.rules.ko == "situational":
            return (stones_hash, side_to_move) in self._seen_situations
        return False

    def _is_single_stone_suicide(self, loc, colour):
        """Empty loc whose stone would have no liberty, no friendly neighbour and capture nothing."""
        board = self.board
        if board.get(loc) != EMPTY:
            return False
        for q in _neighbours(loc, board.stride):
            c = board.get(q)
            if c == EMPTY or c == colour:
                return False
            if c != WALL and board.liberty_count(q) == 1:
                return False      # captures
        return True

    # ------------------------------------------------------------------ moves

    def play(self, loc, colour=None, tolerant=False):
        """Play loc (or PASS) for colour (default: the side to move); the opponent moves next.
        Raises IllegalMove with reason "occupied", "suicide", "ko" or "superko" and leaves the
        game unchanged; ValueError for a point off the board or a bad colour.

        tolerant: the move of a GTP controller, which referees the game itself (KataGo's
        Search::isLegalTolerant): a multi-stone suicide or a repetition of an earlier position
        is played instead of refused; an occupied point, a simple-ko retake and a single-stone
        suicide (which would change no stone) are still refused. Returns the reason this game's
        rules would have refused the move ("suicide" or "superko"), else None."""
        colour = self.to_move if colour is None else colour
        _check_colour(colour)
        board = self.board
        hash_before = board.hash
        broken = None
        if loc == PASS:
            board.play(PASS, colour)
            passes = self.consecutive_passes + 1
        else:
            allow_suicide = self.rules.suicide or tolerant
            if allow_suicide and self._is_single_stone_suicide(loc, colour):
                raise IllegalMove("suicide")
            board.play(loc, colour, allow_suicide)       # raises occupied / suicide / ko
            if self._repeats_earlier_position(board.hash, opponent(colour)):
                broken = "superko"
            if not self.rules.suicide and board.get(loc) == EMPTY:
                broken = "suicide"          # the move's own chain was taken off
            if broken and not tolerant:
                board.undo()
                raise IllegalMove(broken)
            passes = 0
        self._records.append(_MoveRecord(hash_before, self.to_move, self.consecutive_passes,
                                         self._record_position(board.hash, opponent(colour))))
        self.history.append((colour, loc))
        self.to_move = opponent(colour)
        self.consecutive_passes = passes
        return broken

    def is_legal(self, loc, colour=None):
        """Whether play(loc, colour) would succeed under the full rules; a pass always would."""
        colour = self.to_move if colour is None else colour
        _check_colour(colour)
        if loc == PASS:
            return True
        board = self.board
        if not board.is_legal(loc, colour, self.rules.suicide):
            return False
        if self.rules.suicide and self._is_single_stone_suicide(loc, colour):
            return False
        if self.rules.ko == "simple":
            return True
        board.play(loc, colour, self.rules.suicide)
        repeats = self._repeats_earlier_position(board.hash, opponent(colour))
        board.undo()
        return not repeats

    def legal_moves(self, colour=None):
        """The on-board points colour may play under the full rules (pass not included)."""
        colour = self.to_move if colour is None else colour
        _check_colour(colour)
        board = self.board
        allow_suicide = self.rules.suicide
        moves = board.legal_moves(colour, allow_suicide)
        if allow_suicide:
            moves = [p for p in moves if not self._is_single_stone_suicide(p, colour)]
        if self.rules.ko == "simple":
            return moves
        legal = []
        after_move = opponent(colour)
        for p in moves:
            board.play(p, colour, allow_suicide)
            if not self._repeats_earlier_position(board.hash, after_move):
                legal.append(p)
            board.undo()
        return legal

    def undo(self):
        """Take back the last history entry (a move, a pass or one handicap stone) exactly."""
        if not self.history:
            raise IndexError("cannot undo")
        self.board.undo()
        record = self._records.pop()
        self.history.pop()
        if record.recorded is not None:
            self._forget_position(record.recorded)
        self.to_move = record.to_move_before
        self.consecutive_passes = record.passes_before

    def copy(self):
        """An independent game with the same position, history and superko records; it can undo
        as far back as this one (its board is rebuilt by replaying the history)."""
        other = GameState.__new__(GameState)
        other.size = self.size
        other.rules = self.rules
        other._initial_board = self._initial_board.copy()
        other._initial_to_move = self._initial_to_move
        board = self._initial_board.copy()
        for colour, loc in self.history:
            # Every entry was played once; a suicide in it was allowed by the rules then or
            # by a tolerant play.
            board.play(loc, colour, True)
        other.board = board
        other.to_move = self.to_move
        other.history = list(self.history)
        other.consecutive_passes = self.consecutive_passes
        other._records = [_MoveRecord(r.hash_before, r.to_move_before, r.passes_before, r.recorded)
                          for r in self._records]
        other._seen_stones = Counter(self._seen_stones)
        other._seen_situations = Counter(self._seen_situations)
        return other

    def transformed(self, symmetry):
        """This game under symmetry 0..7 of the board (symmetric_point): its starting position
        (ko and prisoners included) and every move mapped, so that what is legal, ko and superko
        are this game's, mirrored."""
        size, start = self.size, self._initial_board
        _, (_, _, ko_loc, ko_colour, captures_black, captures_white) = start.__reduce__()
        mapped = [["."] * size for _ in range(size)]
        for loc in start.points():
            row, col = symmetric_point(*start.row_col(loc), size, symmetry)
            mapped[row][col] = {EMPTY: ".", BLACK: "X", WHITE: "O"}[start.get(loc)]
        if ko_loc != NO_LOC:
            ko_loc = symmetric_loc(ko_loc, size, symmetry)
        board = _board_from_state(size, "\n".join("".join(row) for row in mapped), ko_loc,
                                  ko_colour, captures_black, captures_white)
        game = GameState.from_board(board, self._initial_to_move, self.rules)
        handicap = 0       # a free placement's stones are recorded as one position at its end
        while handicap < len(self._records) and self._records[handicap].recorded is None:
            handicap += 1
        if handicap:
            handicap += 1
            game.place_handicap([symmetric_loc(loc, size, symmetry)
                                 for _, loc in self.history[:handicap]])
        for colour, loc in self.history[handicap:]:
            # a controller's move may have broken the rules (see play): the game has it
            game.play(symmetric_loc(loc, size, symmetry), colour, tolerant=True)
        return game

    def seen_positions(self):
        """The stones hashes of every position of the game so far (positional superko's set)."""
        return set(self._seen_stones)

    def position_hash(self):
        """Zobrist hash of the stones now on the board (side to move not included)."""
        return self.board.hash

    def previous_hash(self):
        """Stones hash of the position before the last history entry, or None at the start."""
        return self._records[-1].hash_before if self._records else None

    def place_handicap(self, locs):
        """Free placement: black stones on locs, on an empty board; then White moves. Each stone
        is a history entry (undo takes them back one by one), but only the complete placement is
        recorded as a position for superko."""
        locs = list(locs)
        board = self.board
        if board.stones(BLACK) or board.stones(WHITE):
            raise ValueError("board not empty")
        if not locs:
            raise ValueError("no handicap stones given")
        if len(locs) > self.size * self.size - 1:
            raise ValueError(f"at most {self.size * self.size - 1} handicap stones fit on "
                             f"a {self.size}x{self.size} board, not {len(locs)}")
        if len(set(locs)) != len(locs):
            raise ValueError("repeated handicap point")
        for loc in locs:
            if loc == PASS:
                raise ValueError("pass is not a handicap point")
            board.row_col(loc)       # ValueError for a point off the board
        last = len(locs) - 1
        for i, loc in enumerate(locs):
            hash_before = board.hash
            board.play(loc, BLACK)
            recorded = self._record_position(board.hash, WHITE) if i == last else None
            self._records.append(_MoveRecord(hash_before, self.to_move, self.consecutive_passes, recorded))
            self.history.append((BLACK, loc))
            self.to_move = BLACK
        self.to_move = WHITE
        self.consecutive_passes = 0

    def is_over(self):
        """Two passes in a row end the game."""
        return self.consecutive_passes >= 2

    def score(self, dead=()):
        """Black's margin (negative: White ahead) under this game's scoring rule and komi."""
        if self.rules.scoring == "area":
            return area_score(self.board, self.rules.komi, dead)
        return territory_score(self.board, self.rules.komi, self.board.captures(BLACK),
                               self.board.captures(WHITE), dead)


# ---------------------------------------------------------------------- handicap

def fixed_handicap_points(size, count):
    """The GTP `fixed_handicap` points for count stones on a size x size board, as GNU Go 3.8
    (the protocol's reference implementation) places them: 2 to 9 stones; at most 4 on 7x7 and
    on even sizes (no centre point); none below 7x7. The stones sit on the 3rd line up to 11x11
    and on the 4th line from 12x12 up (GNU Go: `board_size > 11`; 12x12 gives D4 J4 D9 J9).
    Order: lower left, upper right, upper left, lower right, then the sides and the centre."""
    if isinstance(size, bool) or not isinstance(size, int) or not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"board size must be an integer from {MIN_SIZE} to {MAX_SIZE}, not {size!r}")
    if isinstance(count, bool) or not isinstance(count, int):
        raise ValueError(f"handicap must be an integer, not {count!r}")
    if size < 7:
        raise ValueError(f"no fixed handicap on a {size}x{size} board (needs 7x7 or larger)")
    most = 4 if size == 7 or size % 2 == 0 else 9
    if not 2 <= count <= most:
        raise ValueError(f"invalid handicap {count} for {size}x{size}: must be 2 to {most}")
    near = 3 if size > 11 else 2          # rows/columns counted from 0 at the top and left
    far = size - 1 - near
    mid = size // 2

    def at(row, col):
        return (row + 1) * (size + 2) + (col + 1)

    corners = [at(far, near), at(near, far), at(near, near), at(far, far)]
    left_right = [at(mid, near), at(mid, far)]
    top_bottom = [at(far, mid), at(near, mid)]
    centre = [at(mid, mid)]
    if count <= 4:
        return corners[:count]
    if count == 5:
        return corners + centre
    if count == 6:
        return corners + left_right
    if count == 7:
        return corners + left_right + centre
    if count == 8:
        return corners + left_right + top_bottom
    return corners + left_right + top_bottom + centre


# ---------------------------------------------------------------------- scoring

def _colours_without_dead(board, dead):
    """The colour of every loc (a list indexed by loc, WALL off the board) with the chains of
    the dead stones emptied, and the dead stone counts (black, white)."""
    colours = [WALL] * board.num_locs
    for p in board.points():
        colours[p] = board.get(p)
    dead_black = dead_white = 0
    removed = set()
    for loc in dead:
        if isinstance(loc, bool) or not isinstance(loc, int):
            raise ValueError(f"dead stone {loc!r} is not a point")
        if not 0 <= loc < board.num_locs or colours[loc] == WALL:
            raise ValueError(f"dead stone {loc} is not on the {board.size}x{board.size} board")
        if loc in removed:
            continue
        if colours[loc] == EMPTY:
            raise ValueError(f"dead stone {loc} {board.row_col(loc)} is an empty point")
        # A chain lives or dies as a whole: one stone marks it all.
        for stone in board.chain(loc):
            if colours[stone] == BLACK:
                dead_black += 1
            else:
                dead_white += 1
            colours[stone] = EMPTY
            removed.add(stone)
    return colours, dead_black, dead_white


def empty_regions(board, colours):
    """Yield (points, bordering colours) for each connected region of EMPTY points of `colours`
    (a colour per loc, WALL off the board)."""
    stride = board.stride
    seen = set()
    for start in board.points():
        if colours[start] != EMPTY or start in seen:
            continue
        seen.add(start)
        region, stack, borders = [start], [start], set()
        while stack:
            p = stack.pop()
            for q in (p - stride, p - 1, p + 1, p + stride):
                c = colours[q]
                if c == EMPTY:
                    if q not in seen:
                        seen.add(q)
                        region.append(q)
                        stack.append(q)
                elif c != WALL:
                    borders.add(c)
        yield region, borders


def _territories(board, colours):
    black = white = 0
    for region, borders in empty_regions(board, colours):
        if borders == {BLACK}:
            black += len(region)
        elif borders == {WHITE}:
            white += len(region)
    return black, white


def area_score(board, komi, dead=()):
    """Tromp-Taylor area count, Black minus White minus komi: stones plus empty regions that
    reach stones of one colour only. dead: points of dead stones (a stone marks its whole
    chain); they are taken off first, so they normally become the opponent's area."""
    colours, _, _ = _colours_without_dead(board, dead)
    black_area, white_area = _territories(board, colours)
    for p in board.points():
        c = colours[p]
        if c == BLACK:
            black_area += 1
        elif c == WHITE:
            white_area += 1
    return black_area - white_area - komi


def territory_score(board, komi, captures_black, captures_white, dead=()):
    """Japanese-style count, Black minus White minus komi: empty points surrounded by one colour
    (after the dead chains are taken off) plus prisoners (captures_black: stones Black captured
    during the game, and the dead white stones; likewise for White). Eyes in seki count as
    territory here; Japanese rules would not count them."""
    colours, dead_black, dead_white = _colours_without_dead(board, dead)
    black_territory, white_territory = _territories(board, colours)
    black = black_territory + captures_black + dead_white
    white = white_territory + captures_white + dead_black
    return black - white - komi


# ---------------------------------------------------------------------- Benson

def pass_alive(board, colour):
    """Benson's unconditional life: (stones of colour's pass-alive chains, points of the regions
    they make safe). A pass-alive chain cannot be captured even if colour always passes; a safe
    region (empty points and any opponent stones in it) can never hold a living opponent chain.

    Regions are the connected sets of points not holding colour's stones. A region is vital to a
    chain when every empty point of the region is a liberty of that chain. Repeat until nothing
    changes: drop every chain with fewer than two vital regions among the remaining regions, and
    every region bordered by a dropped chain. What is left is pass-alive; its safe regions are the
    remaining regions vital to at least one remaining chain."""
    _check_colour(colour)
    stride = board.stride
    points = board.points()
    colours = [WALL] * board.num_locs
    for p in points:
        colours[p] = board.get(p)

    chain_of = {}            # stone -> chain index
    chain_stones = []
    region_of = {}           # point -> region index
    region_points = []
    for start in points:
        own = colours[start] == colour
        labels = chain_of if own else region_of
        if start in labels:
            continue
        index = len(chain_stones) if own else len(region_points)
        members = [start]
        labels[start] = index
        stack = [start]
        while stack:
            p = stack.pop()
            for q in (p - stride, p - 1, p + 1, p + stride):
                c = colours[q]
                if c != WALL and (c == colour) == own and q not in labels:
                    labels[q] = index
                    members.append(q)
                    stack.append(q)
        (chain_stones if own else region_points).append(members)

    region_borders = []       # region -> set of chains touching it
    chain_vital = [[] for _ in chain_stones]     # chain -> regions vital to it
    for index, members in enumerate(region_points):
        borders = set()
        vital = None
        for p in members:
            adjacent = {chain_of[q] for q in (p - stride, p - 1, p + 1, p + stride) if colours[q] == colour}
            borders |= adjacent
            if colours[p] == EMPTY:
                vital = adjacent if vital is None else vital & adjacent
        region_borders.append(borders)
        # A region without empty points would be opponent stones without liberties: none on a
        # legal board, so vital stays None only for impossible input, and counts for nobody.
        for chain in vital or ():
            chain_vital[chain].append(index)

    alive = set(range(len(chain_stones)))
    regions = {r for r in range(len(region_points)) if region_borders[r]}
    while True:
        dropped = {c for c in alive if sum(1 for r in chain_vital[c] if r in regions) < 2}
        if not dropped:
            break
        alive -= dropped
        regions = {r for r in regions if region_borders[r] <= alive}

    stones = {p for c in alive for p in chain_stones[c]}
    safe = set()
    for r in regions:
        if any(r in chain_vital[c] for c in region_borders[r]):
            safe.update(region_points[r])
    return stones, safe
