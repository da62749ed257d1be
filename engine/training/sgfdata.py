"""Game records in bulk: SGF files, SGF collections and archives of them, read as they are
distributed (`../shared/data/README.md` of the project's data: KGS `.tar.gz` of one-game files,
TYGEM and Tom collections of one game tree per line, xz-compressed).

Reading order: `iter_sgf_texts()` walks paths (files, directories, `.tar`/`.tar.gz`/`.tgz`,
`.zip`, `.xz`, `.gz`) and yields every game tree's bytes with a name for messages;
`split_collection()` cuts a collection into game trees; `read_game()` turns one tree into a
`GameRecord` (board size, komi, setup stones, the main line's moves) or raises ValueError with the
reason. `iter_games()` puts them together and counts what it had to skip (`ReadCounts`), never
stopping on a broken record. Nothing is unpacked to disk.
"""
import gzip
import io
import lzma
import re
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from sgfmill import sgf

from engine.rules.board import BLACK, WHITE, Board, IllegalMove
from engine.rules.coords import PASS, from_sgfmill

SGF_SUFFIXES = (".sgf", ".sgfs", ".mgt")
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".zip")
COMPRESSED_SUFFIXES = (".xz", ".gz")
# A bracketed property value (with escapes) or a tree parenthesis: all the structure a collection
# needs to be cut into trees.
_TOKEN = re.compile(rb"\[(?:[^\]\\]|\\.)*\]|[()]", re.DOTALL)
_COLOURS = {"b": BLACK, "w": WHITE}


@dataclass
class GameRecord:
    """One game's main line, as the players played it."""
    name: str                       # where it came from, for messages
    size: int
    komi: float
    setup: dict                     # BLACK/WHITE -> [loc, ...] stones before the first move
    first_to_move: int              # BLACK or WHITE, by PL or else by the first move
    moves: list                     # [(colour, loc)], PASS for a pass
    result: str = ""                # RE as written
    date: str = ""                  # DT as written
    rules: str = ""                 # RU as written
    properties: dict = field(default_factory=dict)   # other root properties kept (PB, PW, BR, WR)
    territory: dict = field(default_factory=dict)    # BLACK/WHITE -> [loc, ...] marked TB/TW at
                                                     # the last node (a server's agreed count)


@dataclass
class ReadCounts:
    """What a bulk read met: games read, and records skipped by reason."""
    games: int = 0
    skipped: dict = field(default_factory=dict)

    def skip(self, reason):
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    @property
    def broken(self):
        return sum(self.skipped.values())

    def summary(self):
        reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(self.skipped.items()))
        return f"{self.games} games read, {self.broken} skipped" + (f" ({reasons})" if reasons else "")


def split_collection(data):
    """The game trees of an SGF collection (several `(;...)` trees in one file) as bytes. A
    collection written one tree per line (TYGEM, Tom: every line starts a tree) is cut at line
    ends, so that a record cut short spoils only its own line; a tree whose parentheses never
    close is returned as it stands (its reader then says why)."""
    lines = [line.strip() for line in data.splitlines() if line.strip()]
    if len(lines) > 1 and all(line.startswith(b"(;") for line in lines[:50]):
        return lines
    trees, depth, start = [], 0, None
    for token in _TOKEN.finditer(data):
        text = token.group()
        if text == b"(":
            if depth == 0:
                start = token.start()
            depth += 1
        elif text == b")" and depth > 0:
            depth -= 1
            if depth == 0:
                trees.append(data[start:token.end()])
    if depth > 0:
        trees.append(data[start:])
    return trees


def _suffix(name):
    lower = name.lower()
    for suffix in ARCHIVE_SUFFIXES + COMPRESSED_SUFFIXES + SGF_SUFFIXES:
        if lower.endswith(suffix):
            return suffix
    return ""


def _texts_of_member(name, data):
    """Game trees of one file's bytes, by its name: decompressed and cut into trees."""
    suffix = _suffix(name)
    if suffix in ARCHIVE_SUFFIXES:
        yield from _texts_of_archive(name, io.BytesIO(data))
    elif suffix == ".xz":
        yield from _texts_of_member(name[:-3], lzma.decompress(data))
    elif suffix == ".gz":
        yield from _texts_of_member(name[:-3], gzip.decompress(data))
    else:
        for index, tree in enumerate(split_collection(data)):
            yield f"{name}#{index + 1}", tree


def _texts_of_archive(name, stream):
    if _suffix(name) == ".zip":
        with zipfile.ZipFile(stream) as archive:
            for member in sorted(archive.namelist()):
                if not member.endswith("/") and _suffix(member):
                    yield from _texts_of_member(f"{name}/{member}", archive.read(member))
        return
    with tarfile.open(fileobj=stream, mode="r:*") as archive:
        for member in archive:
            if member.isfile() and _suffix(member.name):
                yield from _texts_of_member(f"{name}/{member.name}", archive.extractfile(member).read())


def iter_sgf_texts(paths):
    """(name, bytes) of every game tree under the paths, in a fixed order: files as given,
    directories walked in sorted order (files with an SGF, archive or compressed suffix).
    ValueError for a path that does not exist; an unreadable archive raises ValueError naming it."""
    for path in map(Path, paths):
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and _suffix(p.name))
        elif path.is_file():
            files = [path]
        else:
            raise ValueError(f"{path}: no such file or directory")
        for file in files:
            try:
                if _suffix(file.name) in ARCHIVE_SUFFIXES:
                    with open(file, "rb") as stream:
                        yield from _texts_of_archive(str(file), stream)
                elif _suffix(file.name) == ".xz":
                    with lzma.open(file) as stream:
                        yield from _texts_of_member(str(file)[:-3], stream.read())
                else:
                    yield from _texts_of_member(str(file), file.read_bytes())
            except (tarfile.TarError, zipfile.BadZipFile, lzma.LZMAError, EOFError, OSError) as error:
                raise ValueError(f"{file}: not a readable archive ({error})") from None


def read_game(name, data):
    """A GameRecord from one game tree's bytes (the main line: the first child of every node).
    ValueError with the reason for a record that cannot be read or replayed: unparsable SGF,
    a board that is not square, a setup or move off the board or onto a stone."""
    try:
        game = sgf.Sgf_game.from_bytes(data)
    except ValueError as error:
        raise ValueError(f"unreadable SGF ({error})") from None
    size = game.get_size()
    root = game.get_root()
    try:
        komi = float(game.get_komi())
    except ValueError:
        komi = 0.0
    setup = {BLACK: [], WHITE: []}
    for prop, colour in (("AB", BLACK), ("AW", WHITE)):
        if root.has_property(prop):
            setup[colour] = sorted(from_sgfmill(point, size) for point in root.get(prop))
    moves = []
    main_line = game.get_main_sequence()
    try:
        for node in main_line[1:]:
            colour, point = node.get_move()
            if colour is None:
                if any(node.has_property(p) for p in ("AB", "AW", "AE")):
                    raise ValueError("setup stones after the first move")
                continue
            moves.append((_COLOURS[colour], PASS if point is None else from_sgfmill(point, size)))
    except ValueError as error:
        raise ValueError(f"bad move or property ({error})") from None
    territory = {}
    try:
        for prop, colour in (("TB", BLACK), ("TW", WHITE)):
            if main_line[-1].has_property(prop):
                territory[colour] = sorted(from_sgfmill(p, size) for p in main_line[-1].get(prop))
    except ValueError:
        territory = {}      # marks are only ever measured against: the moves stay usable
    first = moves[0][0] if moves else BLACK
    if root.has_property("PL"):
        first = {"b": BLACK, "w": WHITE, "1": BLACK, "2": WHITE}.get(
            root.get_raw("PL").decode("ascii", "replace").strip().lower(), first)

    def text(prop):
        return root.get_raw(prop).decode("utf-8", "replace") if root.has_property(prop) else ""

    return GameRecord(name=name, size=size, komi=komi, setup=setup, first_to_move=first,
                      moves=moves, result=text("RE"), date=text("DT"), rules=text("RU"),
                      properties={p: text(p) for p in ("PB", "PW", "BR", "WR", "HA") if text(p)},
                      territory=territory)


def replay(record):
    """Plays the record on a fresh Board: yields (board, colour, loc) before every move, then
    plays it (simple ko; suicide allowed, as some rule sets do). ValueError on a setup stone on a
    stone or without a liberty, or on an illegal move, naming the move number."""
    board = Board(record.size)
    for colour in (BLACK, WHITE):
        for loc in record.setup[colour]:
            if board.get(loc) != 0:
                raise ValueError("setup stone on an occupied point")
            board.play(loc, colour, True)
    if any(board.liberty_count(loc) == 0 for colour in (BLACK, WHITE) for loc in record.setup[colour]):
        raise ValueError("setup leaves a chain without a liberty")
    for number, (colour, loc) in enumerate(record.moves, 1):
        yield board, colour, loc
        try:
            board.play(loc, colour, True)
        except IllegalMove as error:
            raise ValueError(f"move {number} is illegal ({error})") from None


def iter_games(paths, counts=None, sizes=None, skip=0):
    """(index, GameRecord) of every readable record under the paths, index counting every game
    tree met. Broken records are counted in counts (a ReadCounts) and skipped. sizes: board sizes
    to keep (others counted as skipped). skip: the number of game trees to pass over first (a
    resumed reader: the last index it finished plus one), counted in neither."""
    counts = counts if counts is not None else ReadCounts()
    for index, (name, data) in enumerate(iter_sgf_texts(paths)):
        if index < skip:
            continue
        try:
            record = read_game(name, data)
        except ValueError:
            counts.skip("unreadable")
            continue
        if sizes is not None and record.size not in sizes:
            counts.skip(f"board size {record.size}")
            continue
        counts.games += 1
        yield index, record
