"""Counts that players agreed on, as the yardstick of kosumi's final_score: the counted games of
the project's data (`../shared/data/README.md`), their final boards, and how kosumi's count
(engine/scoring/deadstones.py: Benson, then CSA*) and GNU Go's compare with the recorded result.

    python -m engine.training.agreedcounts measure \
        --sgf ../shared/data/kgs-6d/KGS-2017_0[1-6]*.tar.gz --out runs/agreed/kgs2017.jsonl --games 700
    python -m engine.training.agreedcounts measure --every 3 \
        --sgf ../shared/data/tygem-9d/tygem-9d-2016.sgf.xz --out runs/agreed/tygem2016.jsonl --games 2000
    python -m engine.training.agreedcounts report \
        --data runs/agreed/kgs2017.jsonl runs/agreed/tygem2016.jsonl
    python -m engine.training.agreedcounts labels \
        --sgf ../shared/data/tygem-9d/tygem-9d-2010.sgf.xz --out runs/agreed/train-tygem2010.jsonl --games 1500 --every 8
    python -m engine.training.agreedcounts tune-flag --data runs/agreed/dev.jsonl --write weights/csa_19x19.npz

Reading order: `counted_game()` turns a GameRecord (engine/training/sgfdata.py) into a
CountedGame (final board, rules, komi, captures, recorded margin) or says why the record is set
aside; `count()` (engine/scoring/deadstones.py) counts a board under a rule set with some blocks
dead or in seki; `explanation()` decides whether any dead-stone labelling can reach the recorded
result (the ceiling); `measure_game()` makes one board's record line; `report()` the table.
`label_game()` makes a CSA* training record of a counted game (`agreed_labelling()`: the labels
whose count is the agreed result), which `scoredata train` reads; `tune_flag()` chooses the
doubtful flag's rule (csa.DoubtRule) on measured boards and `write_rule()` stores it in the
classifier file.

Which games are counted: a numeric RE (`B+2.5`, `W+0.5`, `0`/`Draw`); resignations, time,
forfeits and unknown results are set aside, and so are handicap games (HA or setup stones: the
compensation rules differ by server). Which rules: RU when the record has it (Japanese, Korean:
territory with prisoners; Chinese, AGA, New Zealand, Tromp-Taylor: area). TYGEM records have no
RU: TYGEM is a Korean server and counts by Korean rules, territory with prisoners, komi 6.5 (its
margins are half-points of either parity, equally often: 3,070 and 3,037 of 2016's, where an
area count of a board with its dame filled gives one parity only); so do Tom games at komi 6.5.
Tom games at komi 7.5 are Chinese, area (7,661 of 10,880 margins have the parity of a board with
every point owned). count() has seki as the rules have it: under territory rules an empty region
touching a stone in seki is nobody's; under area rules it belongs to the colour that surrounds it.

Seki as the servers count it. The servers' counters (KGS, TYGEM) know no seki: once the dead
stones are off, every empty region bordered by one colour is that colour's territory, the eyes
of a group in seki included, whatever the Japanese or Korean rules say. So CountedGame.seki_eyes
is set for every record read, and a block's seki label changes no agreed count. On the 650
development boards (TYGEM 2011, KGS 2003; 2026-11-28) counting the eyes of the blocks kosumi
calls seki mends 6 boards (4 TYGEM, 2 KGS) and breaks none: they were groups with a dead stone
inside that CSA* left alive, which the seki rule then turned into a seki without territory.

The players' marks. KGS writes the count the players agreed on into the record's last node:
TB and TW mark each side's territory, the points of the dead stones inside it included (KGS 2017
has them on every counted game; the earlier KGS years, TYGEM and Tom have none). Where a record
has them, CountedGame.players_dead holds the stones on the other colour's marks: the measurement
says whether kosumi's dead stones are the players' and whether the players' count to the result
under count()'s rules (where not, the rules differ, not the labels), and training labels take
them first.

The ceiling. A record is explained when some labelling of its blocks (alive, dead, or in seki
under territory rules) counts to its result; the rest (players' mistakes, disputed or unfinished
endings, a board the server counted otherwise) no scorer can get right and are counted apart.
Deciding it exactly would try every labelling. Instead the blocks are grouped into units (the
blocks of one colour linked by shared liberties, which live or die together), and each unit's
choices (as kosumi labelled it, all alive, all dead, all in seki under territory rules when it
shares a liberty with the other colour, or one of its blocks flipped; Benson's verdicts are
never overruled) change kosumi's count by a fixed delta each, measured one unit at a time.
The counts reachable by combining one choice per unit are then a subset-sum over those deltas: a
bit set shifted and or-ed once per choice (multiple-choice subset-sum, linear in units x choices
x the span of counts). Units interact only where two changed units border one region, so the
sum is checked: the labelling that the bit sets trace back to the result is counted for real.
A record is explained when kosumi's own count or that traced labelling hits the result;
unreachable when the result is outside the reachable set (or off the count's half-point
lattice); the few that the sums reach but the traced labelling misses are reported apart.

Teire. Counted by territory, a false eye (living opponent stones on two of its diagonals, one
at the edge) that is the only liberty inside its owner's territory of a chain with liberties
outside is no territory where the rules make the owner fill it before the count: KGS's Japanese
counts and GNU Go's final_score leave it out, TYGEM's counts it. With GNU Go's dead stones, the
first 80 KGS 2017 territory boards counted to their result 76 times with the rule and 68
without; the first 60 TYGEM 2016 boards 49 times with it and 52 without. So records with RU
count with the rule, TYGEM and Tom records without.
"""
import argparse
import itertools
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from engine.rules.board import BLACK, EMPTY, WHITE, opponent
from engine.rules.coords import PASS, board_points, format_vertex, parse_vertex
from engine.rules.game import GameState, Rules, pass_alive
from engine.scoring import csa, deadstones
from engine.scoring.deadstones import AREA, TERRITORY, count
from engine.tools.gtp_client import GtpClient, GtpError, find_gnugo
from engine.training.sgfdata import ReadCounts, iter_games, replay

RULES_SCORING = {"japanese": TERRITORY, "korean": TERRITORY, "jp": TERRITORY, "kr": TERRITORY,
                 "chinese": AREA, "cn": AREA, "aga": AREA, "nz": AREA, "new zealand": AREA,
                 "tromp-taylor": AREA, "tromp taylor": AREA}
_MARGIN = re.compile(r"^\s*([BW])\+(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)
WITNESS_CHECKS = 60     # labellings counted for real before a reachable result is left unverified
_SET_ASIDE = {"r": "resignation", "resign": "resignation", "t": "time", "time": "time",
              "f": "forfeit", "forfeit": "forfeit"}


@dataclass
class CountedGame:
    """A game counted to the end, as the players agreed on it."""
    name: str
    board: object            # the final Board
    to_move: int             # the colour after the last move
    scoring: str             # AREA or TERRITORY
    rules_name: str          # what the record says (RU, or the server's rules)
    komi: float
    captures: tuple          # (stones Black captured, stones White captured) during the game
    teire: bool              # territory counting leaves out false eyes the owner must fill
    result: float            # Black's recorded margin (komi included)
    moves: list              # the record's moves, for GNU Go
    seki_eyes: bool = True   # territory counting gives the eyes of stones in seki to their
                             # owner, as the servers' counters do (module docstring: Seki)
    players_dead: list = None   # the stones on the other colour's territory marks (TB/TW:
                                # the dead stones the players agreed on), None without marks

    def state(self):
        """A GameState of the final board under the record's rules (CSA* reads its komi)."""
        return GameState.from_board(self.board, self.to_move,
                                    Rules(ko="simple", suicide=True, scoring=self.scoring,
                                          komi=self.komi))


def parse_result(text):
    """Black's margin of a counted result (`B+2.5` -> 2.5, `W+0.5` -> -0.5, `0`/`Draw`/`Jigo`
    -> 0), or raise ValueError naming why the record is not counted (resignation, time,
    forfeit, no result, or a result not in points)."""
    text = (text or "").strip()
    if not text or text == "?":
        raise ValueError("no result")
    if text.lower() in ("0", "draw", "jigo", "b+0", "w+0"):
        return 0.0
    match = _MARGIN.match(text)
    if match:
        margin = float(match.group(2))
        return margin if match.group(1).upper() == "B" else -margin
    tail = text.partition("+")[2].strip().lower()
    raise ValueError(_SET_ASIDE.get(tail, "result not in points"))


def scoring_of(record):
    """(AREA or TERRITORY, the rules' name, teire) of a record (module docstring: RU, else the
    server's rules; teire: the count leaves out the false eyes their owner must fill, as KGS's
    and GNU Go's Japanese counts do and TYGEM's does not). ValueError for rules it does not
    know."""
    rules = record.rules.strip().lower()
    if rules:
        if rules in RULES_SCORING:
            return RULES_SCORING[rules], record.rules.strip(), True
        raise ValueError(f"unknown rules {record.rules.strip()!r}")
    place = record.name        # the collection's file name: GameRecord keeps no PC
    if "tygem" in place.lower():
        return TERRITORY, "TYGEM (Korean)", False
    if "tom" in place.lower():
        return ((AREA, "Tom (Chinese)", False) if record.komi >= 7
                else (TERRITORY, "Tom (Korean)", False))
    raise ValueError("no rules (RU) and no known server")


def counted_game(record):
    """The CountedGame of a GameRecord, or ValueError with the reason it is set aside."""
    result = parse_result(record.result)
    handicap = record.properties.get("HA", "").strip()
    if record.setup[BLACK] or record.setup[WHITE] or handicap not in ("", "0", "1"):
        raise ValueError("handicap")
    scoring, rules_name, teire = scoring_of(record)
    board, to_move = None, record.first_to_move
    try:
        for board, colour, _ in replay(record):
            to_move = opponent(colour)
    except ValueError as error:
        raise ValueError("illegal move" if "illegal" in str(error) else "bad setup") from None
    if board is None:
        raise ValueError("no moves")
    if abs(result) > board.size * board.size + 200:
        raise ValueError("result not in points")
    players_dead = None
    if record.territory:
        players_dead = sorted(p for colour, marked in record.territory.items() for p in marked
                              if board.get(p) == opponent(colour))
    return CountedGame(record.name, board, to_move, scoring, rules_name, record.komi,
                       (board.captures(BLACK), board.captures(WHITE)), teire, result,
                       record.moves, players_dead=players_dead)


def iter_counted(paths, counts=None, set_aside=None, skip=0, only=None):
    """(index, CountedGame) of the counted games under the paths (iter_games' index, so that a
    resumed reader can skip). Records set aside are counted by reason in set_aside (a dict).
    only: a set of record names to read, the others passed over unread (and uncounted)."""
    set_aside = {} if set_aside is None else set_aside
    for index, record in iter_games(paths, counts, sizes={19, 13, 9}, skip=skip):
        if only is not None and record.name not in only:
            continue
        try:
            game = counted_game(record)
        except ValueError as error:
            reason = str(error).split(" (")[0]
            set_aside[reason] = set_aside.get(reason, 0) + 1
            continue
        yield index, game


# ---------------------------------------------------------------------- counting


def blocks_of(board):
    """Every block as (colour, sorted stones), top-left first."""
    return deadstones.all_chains(board)


def units_of(board, blocks):
    """The blocks grouped into units: blocks of one colour linked by shared liberties,
    transitively (a list of lists of block indices)."""
    parent = list(range(len(blocks)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner = {}
    for i, (colour, stones) in enumerate(blocks):
        for liberty in board.liberties(stones[0]):
            key = (colour, liberty)
            if key in owner:
                parent[find(i)] = find(owner[key])
            else:
                owner[key] = i
    groups = {}
    for i in range(len(blocks)):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values())


@dataclass
class Explanation:
    reachable: bool          # the subset-sum reaches the result
    explained: bool          # a labelling counted for real reaches it
    statuses: list = None    # that labelling: per block "alive", "dead" or "seki"
    units: int = 0
    changed_units: int = 0   # units whose labels it changes from kosumi's


def _count_statuses(game, blocks, statuses):
    dead = [blocks[i][1][0] for i, s in enumerate(statuses) if s == deadstones.DEAD]
    seki = [p for i, s in enumerate(statuses) if s == deadstones.SEKI for p in blocks[i][1]]
    return count(game.board, game.scoring, game.komi, game.captures, dead,
                 () if game.seki_eyes else seki, game.teire)


def explanation(game, blocks, statuses, base_count=None):
    """Whether some labelling of the blocks counts to the recorded result (module docstring:
    the units' choices as a multiple-choice subset-sum from `statuses`, kosumi's labelling)."""
    base = _count_statuses(game, blocks, statuses) if base_count is None else base_count
    if abs(base - game.result) < 1e-6:
        return Explanation(True, True, list(statuses))
    target = game.result - base
    if abs(target - round(target)) > 1e-6:
        return Explanation(False, False)       # off the half-point lattice of this komi
    target = int(round(target))
    board = game.board
    units = units_of(board, blocks)
    fixed = _benson_statuses(board, blocks)
    choices = []          # per unit: {delta: statuses of its blocks}
    for unit in units:
        options = [[deadstones.ALIVE] * len(unit), [deadstones.DEAD] * len(unit)]
        if game.scoring == TERRITORY and not game.seki_eyes and \
                _touches_opponent_liberty(board, blocks, unit):
            options.append([deadstones.SEKI] * len(unit))
        if len(unit) > 1:
            for k in range(len(unit)):
                flipped = [statuses[i] for i in unit]
                flipped[k] = deadstones.ALIVE if flipped[k] == deadstones.DEAD else deadstones.DEAD
                options.append(flipped)
        by_delta = {0: [statuses[i] for i in unit]}
        for option in options:
            option = [fixed.get(i, status) for i, status in zip(unit, option)]
            trial = list(statuses)
            for i, status in zip(unit, option):
                trial[i] = status
            delta = int(round(_count_statuses(game, blocks, trial) - base))
            by_delta.setdefault(delta, option)
        choices.append(by_delta)
    # bit v + offset of a layer is set when the first units' choices can change the count by v
    offset = -sum(min(by_delta) for by_delta in choices)
    layers = [1 << offset]
    for by_delta in choices:
        previous, reach = layers[-1], 0
        for delta in by_delta:
            reach |= previous << delta if delta >= 0 else previous >> -delta
        layers.append(reach)
    bit = target + offset
    if bit < 0 or not (layers[-1] >> bit) & 1:
        return Explanation(False, False, units=len(units))
    for changes in _candidate_changes(choices, target, layers, offset):
        traced = list(statuses)
        for k, delta in changes:
            for i, status in zip(units[k], choices[k][delta]):
                traced[i] = status
        if abs(_count_statuses(game, blocks, traced) - game.result) < 1e-6:
            return Explanation(True, True, traced, len(units), len(changes))
    return Explanation(True, False, None, len(units))


def _benson_statuses(board, blocks):
    """{block index: status} of the blocks Benson decides: pass-alive blocks alive, blocks in
    the other colour's pass-alive area dead (no labelling may say otherwise)."""
    fixed = {}
    safe = {colour: pass_alive(board, colour) for colour in (BLACK, WHITE)}
    for i, (colour, stones) in enumerate(blocks):
        if stones[0] in safe[colour][0]:
            fixed[i] = deadstones.ALIVE
        elif stones[0] in safe[opponent(colour)][1]:
            fixed[i] = deadstones.DEAD
    return fixed


def _touches_opponent_liberty(board, blocks, unit):
    """Whether a block of the unit shares a liberty with a block of the other colour (a seki
    needs one)."""
    stride = board.stride
    colour = blocks[unit[0]][0]
    for i in unit:
        for liberty in board.liberties(blocks[i][1][0]):
            if any(board.get(q) == opponent(colour)
                   for q in (liberty - stride, liberty - 1, liberty + 1, liberty + stride)):
                return True
    return False


def _candidate_changes(choices, target, layers, offset, most=WITNESS_CHECKS):
    """Labellings whose summed deltas reach target, fewest changed units first, as lists of
    (unit, delta): every single change, then pairs (at most `most` in all), then the one the
    bit sets trace back keeping kosumi's choice wherever it can."""
    by_delta = {}
    for k, unit_choices in enumerate(choices):
        for delta in unit_choices:
            if delta:
                by_delta.setdefault(delta, []).append(k)
    tried = 0
    for k in by_delta.get(target, []):
        yield [(k, target)]
        tried += 1
    for delta, firsts in sorted(by_delta.items(), key=lambda item: abs(item[0])):
        for k in firsts:
            for j in by_delta.get(target - delta, []):
                if j > k and tried < most:
                    tried += 1
                    yield [(k, delta), (j, target - delta)]
    changes, remaining = [], target
    for k in range(len(choices) - 1, -1, -1):
        for delta in sorted(choices[k], key=abs):
            rest = remaining - delta + offset
            if rest >= 0 and (layers[k] >> rest) & 1:
                if delta:
                    changes.append((k, delta))
                remaining -= delta
                break
    yield changes


# ---------------------------------------------------------------------- GNU Go's count


class GnuGoCounter:
    """GNU Go 3.8's final_score of a record's final board: its moves replayed (so it knows the
    prisoners) into a GNU Go run under the record's rules (--chinese-rules for area,
    --japanese-rules for territory), one process per rule set, kept between boards."""

    def __init__(self, command=None, timeout=120):
        self.command = command or find_gnugo()
        self.timeout = timeout
        self.clients = {}

    def _client(self, scoring):
        client = self.clients.get(scoring)
        if client is None or not client.usable:
            flag = "--chinese-rules" if scoring == AREA else "--japanese-rules"
            client = GtpClient(f"{self.command} --mode gtp {flag}")
            self.clients[scoring] = client
        return client

    def score(self, game):
        """Black's margin by GNU Go, or None when it refused a move or failed."""
        try:
            reply = self._replayed(game).send("final_score", timeout=self.timeout)
        except GtpError:
            self._drop(game.scoring)
            return None
        try:
            return parse_result(reply)
        except ValueError:
            return None

    def statuses(self, game):
        """(dead stones, stones in seki) by GNU Go's final_status_list on the record's final
        board (its moves replayed), or None when it refused a move or failed."""
        size = game.board.size
        try:
            gnugo = self._replayed(game)
            found = [{parse_vertex(v, size) for v in gnugo.send(f"final_status_list {status}",
                                                                timeout=self.timeout).split()}
                     for status in ("dead", "seki")]
        except (GtpError, ValueError):
            self._drop(game.scoring)
            return None
        return found[0], found[1]

    def _replayed(self, game):
        size = game.board.size
        gnugo = self._client(game.scoring)
        gnugo.send(f"boardsize {size}")
        gnugo.send("clear_board")
        gnugo.send(f"komi {game.komi:g}")
        for colour, loc in game.moves:
            vertex = "pass" if loc == PASS else format_vertex(loc, size)
            gnugo.send(f"play {'bw'[colour - 1]} {vertex}")
        return gnugo

    def _drop(self, scoring):
        client = self.clients.pop(scoring, None)
        if client is not None and not client.usable:
            client.kill()

    def close(self):
        for client in self.clients.values():
            client.close()
        self.clients = {}


# ---------------------------------------------------------------------- one board


def _vertices(board, stones):
    return " ".join(format_vertex(p, board.size) for p in sorted(stones))


def _statuses_from(blocks, dead, seki=()):
    """Per block: DEAD when its first stone is in dead, SEKI when in seki, else ALIVE."""
    return [deadstones.DEAD if stones[0] in dead else
            deadstones.SEKI if stones[0] in seki else deadstones.ALIVE for _, stones in blocks]


def _statuses_of(assessment, blocks):
    status_of = {chain.stones[0]: chain.status for chain in assessment.chains}
    return [status_of.get(stones[0], deadstones.ALIVE) for _, stones in blocks]


def measure_game(index, game, gnugo=None, review=True, classifier=None):
    """One board's record line (a dict): kosumi's count and flags, the ceiling, GNU Go's count."""
    started = time.perf_counter()
    assessment = deadstones.assess(game.state(), classifier=classifier, review=review)
    blocks = blocks_of(game.board)
    statuses = _statuses_of(assessment, blocks)
    kosumi = _count_statuses(game, blocks, statuses)
    result = assessment.csa_result
    signs = result.doubt_signs()
    unreviewed = dict(signs, search_gap=None)
    line = {"index": index, "name": game.name, "rules": game.rules_name,
            "scoring": game.scoring, "komi": game.komi, "result": game.result,
            "captures": list(game.captures), "kosumi": kosumi,
            "dead": _vertices(game.board, (p for i, (_, stones) in enumerate(blocks)
                                           if statuses[i] == deadstones.DEAD for p in stones)),
            "seki": _vertices(game.board, (p for i, (_, stones) in enumerate(blocks)
                                           if statuses[i] == deadstones.SEKI for p in stones)),
            "doubtful": bool(result.rule.flags(unreviewed)), "signs": signs}
    if review:
        # final_score's flag: the assessment's, with the tree search's area count
        line["search_count"] = result.search_score
        line["doubtful_review"] = bool(assessment.doubtful)
    kosumi_seconds = time.perf_counter() - started
    ceiling = explanation(game, blocks, statuses, kosumi)
    line.update(reachable=ceiling.reachable, explained=ceiling.explained,
                changed_units=ceiling.changed_units, blocks=len(blocks), units=ceiling.units)
    if game.players_dead is not None:
        # the players' own dead stones: whether kosumi's are the same, and whether they count
        # to the result under the record's rules (where not, the rules of the count differ)
        theirs = _statuses_from(blocks, set(game.players_dead))
        line.update(players_dead_agree=[s == deadstones.DEAD for s in statuses] ==
                    [s == deadstones.DEAD for s in theirs],
                    players_count=_count_statuses(game, blocks, theirs))
    if gnugo is not None:
        gnugo_started = time.perf_counter()
        line["gnugo"] = gnugo.score(game)
        line["gnugo_seconds"] = round(time.perf_counter() - gnugo_started, 3)
    line["kosumi_seconds"] = round(kosumi_seconds, 3)
    line["seconds"] = round(time.perf_counter() - started, 3)
    return line


# ---------------------------------------------------------------------- the run and its report


def _last_index(out):
    """The highest index on file (-1 when none), a torn last line cut off."""
    last, lines = -1, 0
    if out.exists():
        with open(out, "rb+") as handle:
            data = handle.read()
            if data and not data.endswith(b"\n"):
                handle.truncate(data.rfind(b"\n") + 1)
                data = data[:data.rfind(b"\n") + 1]
        for text in data.decode("utf-8").splitlines():
            if text.strip():
                record = json.loads(text)
                last = max(last, record["index"])
                lines += record.get("kind") != "summary"
    return last, lines


def measure(paths, out, games, use_gnugo=True, review=True, every=1, progress=None,
            classifier=None, only=None):
    """Measure counted games under `paths` into the JSON-lines file `out`, appending (fsynced
    a line at a time), until it holds `games` boards; a resumed run goes on after the last
    index on file. every: take one counted game in this many (spread a small run over a
    collection); only: the names of the records to measure instead (the boards of an earlier
    file, `boards_of()`). classifier: CSA*'s (default: the shipped one for the board size).
    Returns the boards written now."""
    return _run_over(paths, out, games, every, use_gnugo, progress,
                     lambda index, game, gnugo: measure_game(index, game, gnugo, review,
                                                             classifier), only)


def boards_of(paths):
    """The record names measured in earlier files (to measure the same boards again)."""
    from engine.training.scoredata import read_records
    names = {r["name"] for path in paths for r in read_records(path) if "name" in r}
    if not names:
        raise ValueError(f"no measured boards in {', '.join(map(str, paths))}")
    return names


def _run_over(paths, out, games, every, use_gnugo, progress, make_line, only=None):
    """The resumable loop of `measure` and `make_labels`: make_line(index, game, gnugo) for
    every `every`-th counted game after the last index on file (or, given `only`, a set of
    record names, for exactly those games), one fsynced line each, until the file holds
    `games` lines."""
    progress = progress or sys.stderr
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    last, on_file = _last_index(out)
    gnugo = GnuGoCounter() if use_gnugo else None
    if use_gnugo and gnugo.command is None:
        raise ValueError("GNU Go is not installed (apt-get install gnugo), or use --no-gnugo")
    counts, set_aside = ReadCounts(), {}
    written = seen = 0
    if only is not None:
        only = set(only) - {r["name"] for r in _lines_of(out)}
    try:
        with open(out, "a", encoding="utf-8") as handle:
            for index, game in iter_counted(paths, counts, set_aside, skip=last + 1, only=only):
                if on_file + written >= games:
                    break
                if only is not None:
                    only.discard(game.name)
                else:
                    seen += 1
                    if (seen - 1) % every:
                        continue
                try:
                    line = make_line(index, game, gnugo)
                except Exception as error:        # one board never stops the run
                    line = {"index": index, "name": game.name, "error": repr(error),
                            "abandoned": True}     # what scoredata's readers skip
                handle.write(json.dumps(line, separators=(",", ":")) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
                written += 1
                if progress and written % 25 == 0:
                    print(f"{on_file + written} boards ({index + 1} records read)", file=progress,
                          flush=True)
                if only is not None and not only:
                    break           # every board asked for is measured
    finally:
        if gnugo is not None:
            gnugo.close()
    reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(set_aside.items()))
    print(f"{written} boards written to {out}; this run read {counts.summary()}; set aside: "
          f"{reasons or 'none'}", file=progress)
    return written


# ---------------------------------------------------------------------- labels for training


LABEL_LETTER = {deadstones.ALIVE: "a", deadstones.DEAD: "d", deadstones.SEKI: "s"}
BOARD_LETTER = {EMPTY: ".", BLACK: "X", WHITE: "O"}


def agreed_labelling(game, classifier=None, gnugo=None):
    """(statuses per block of blocks_of(), source, units changed) of a labelling that counts
    to the recorded result, or None when none is found. Tried in turn: the dead stones the
    players marked ("players", records with TB/TW); CSA*'s labels ("kosumi"); GNU Go's dead
    and seki lists ("gnugo"); the fewest units relabelled from either by explanation()
    ("relabelled"; from GNU Go's when both need as few). A labelling is only ever taken when
    its count under the record's rules is the result."""
    blocks = blocks_of(game.board)
    if game.players_dead is not None:
        theirs = _statuses_from(blocks, set(game.players_dead))
        if abs(_count_statuses(game, blocks, theirs) - game.result) < 1e-6:
            return theirs, "players", 0
    kosumi = _statuses_of(deadstones.assess(game.state(), classifier=classifier), blocks)
    if abs(_count_statuses(game, blocks, kosumi) - game.result) < 1e-6:
        return kosumi, "kosumi", 0
    bases = [kosumi]
    found = gnugo.statuses(game) if gnugo is not None else None
    if found is not None:
        theirs = _statuses_from(blocks, *found)
        if abs(_count_statuses(game, blocks, theirs) - game.result) < 1e-6:
            return theirs, "gnugo", 0
        bases.insert(0, theirs)
    best = None
    for base in bases:
        verdict = explanation(game, blocks, base)
        if verdict.explained and (best is None or verdict.changed_units < best.changed_units):
            best = verdict
    if best is None:
        return None
    return best.statuses, "relabelled", best.changed_units


def label_game(index, game, gnugo=None, classifier=None):
    """One training record (scoredata's format, which csatrain reads: the board as '.XO' and a
    label per point as '.ads', row by row from the top) labelled by the agreed count, or a
    record marked abandoned when no labelling found counts to the result."""
    line = {"index": index, "name": game.name, "size": game.board.size, "komi": game.komi,
            "rules": game.rules_name, "scoring": game.scoring, "result": game.result}
    labelling = agreed_labelling(game, classifier, gnugo)
    if labelling is None:
        return dict(line, abandoned=True, reason="no labelling found counts to the result")
    statuses, source, changed = labelling
    status_at = {p: statuses[i] for i, (_, stones) in enumerate(blocks_of(game.board))
                 for p in stones}
    points = board_points(game.board.size)
    return dict(line, board="".join(BOARD_LETTER[game.board.get(p)] for p in points),
                labels="".join(LABEL_LETTER[status_at[p]] if p in status_at else "."
                               for p in points),
                label_source=source, changed_units=changed)


def make_labels(paths, out, games, use_gnugo=True, every=1, progress=None, classifier=None):
    """Training records for CSA* from the counted games under `paths` (label_game), appended
    to `out` and resumable as `measure` is. Returns the records written now."""
    return _run_over(paths, out, games, every, use_gnugo, progress,
                     lambda index, game, gnugo: label_game(index, game, gnugo, classifier))


def _lines_of(out):
    from engine.training.scoredata import read_records
    return read_records(out) if Path(out).exists() else []


def _rate(part, whole):
    return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else f"{part}/0"


def summarise(lines):
    """The table's numbers (a dict) from record lines."""
    boards = [r for r in lines if "error" not in r]
    right = lambda r: abs(r["kosumi"] - r["result"]) < 1e-6
    gnugo_right = lambda r: r.get("gnugo") is not None and abs(r["gnugo"] - r["result"]) < 1e-6
    explained = [r for r in boards if r["explained"]]
    summary = {"boards": len(boards), "errors": len(lines) - len(boards),
               "explained": len(explained),
               "reachable_unverified": sum(r["reachable"] and not r["explained"] for r in boards),
               "unreachable": sum(not r["reachable"] for r in boards), "rows": {}}
    wrong_explained = [r.get("changed_units", 0) for r in explained if not right(r)]
    summary["changes"] = {"1": wrong_explained.count(1), "2": wrong_explained.count(2),
                          "3+": sum(n >= 3 for n in wrong_explained)}
    marked = [r for r in boards if "players_dead_agree" in r]
    explained_by_players = [r for r in marked if abs(r["players_count"] - r["result"]) < 1e-6]
    summary["marked"] = {"boards": len(marked),
                         "dead_agree": sum(r["players_dead_agree"] for r in marked),
                         "players_right": len(explained_by_players),
                         "kosumi_right": sum(map(right, explained_by_players))}
    for name, pool in (("explained", explained), ("all", boards)):
        wrong = [r for r in pool if not right(r)]
        good = [r for r in pool if right(r)]
        row = {"boards": len(pool), "kosumi_right": len(good),
               "kosumi_winner": sum((r["kosumi"] > 0) == (r["result"] > 0) for r in pool),
               "gnugo_boards": sum(r.get("gnugo") is not None for r in pool),
               "gnugo_right": sum(gnugo_right(r) for r in pool),
               "wrong": len(wrong), "right": len(good)}
        for flag in ("doubtful", "doubtful_review"):
            if all(flag in r for r in pool):
                row[f"{flag}_caught"] = sum(r[flag] for r in wrong)
                row[f"{flag}_false"] = sum(r[flag] for r in good)
        summary["rows"][name] = row
    return summary


def report(paths, out=None, gnugo_from=()):
    """Print the accuracy table of measured record files, one block per file and their total.
    gnugo_from: files measured with GNU Go whose counts fill in GNU Go's column of boards
    measured without it (the same record names)."""
    out = out or sys.stdout
    from engine.training.scoredata import read_records
    groups = [(str(path), read_records(path)) for path in paths]
    if gnugo_from:
        theirs = {r["name"]: r["gnugo"] for path in gnugo_from for r in read_records(path)
                  if r.get("gnugo") is not None}
        for _, lines in groups:
            for r in lines:
                if r.get("gnugo") is None and r.get("name") in theirs:
                    r["gnugo"] = theirs[r["name"]]
    if len(groups) > 1:
        groups.append(("all files", [r for _, lines in groups for r in lines]))
    for name, lines in groups:
        s = summarise(lines)
        print(f"\n{name}: {s['boards']} boards ({s['errors']} failed); explained by some "
              f"labelling {s['explained']}, beyond any labelling (the ceiling) {s['unreachable']}, "
              f"reached only by the subset-sum {s['reachable_unverified']}; kosumi's wrong "
              f"explained boards come right by relabelling 1 unit: {s['changes']['1']}, 2: "
              f"{s['changes']['2']}, more: {s['changes']['3+']}", file=out)
        marked = s["marked"]
        if marked["boards"]:
            print(f"marked by the players (TB/TW): {marked['boards']} boards; kosumi's dead stones "
                  f"are theirs on {_rate(marked['dead_agree'], marked['boards'])}; theirs count to "
                  f"the result on {_rate(marked['players_right'], marked['boards'])} (the rest: "
                  f"the rules of the count), and on those kosumi is right on "
                  f"{_rate(marked['kosumi_right'], marked['players_right'])}", file=out)
        print("| boards | kosumi exactly right | right winner | GNU Go exactly right | "
              "doubtful: wrong caught | doubtful: right flagged | without the search's review: "
              "caught | flagged |", file=out)
        print("|---|---|---|---|---|---|---|---|", file=out)
        for pool in ("explained", "all"):
            row = s["rows"][pool]
            cells = [f"{pool} ({row['boards']})", _rate(row["kosumi_right"], row["boards"]),
                     _rate(row["kosumi_winner"], row["boards"]),
                     _rate(row["gnugo_right"], row["gnugo_boards"])]
            for flag in ("doubtful_review", "doubtful"):
                if f"{flag}_caught" in row:
                    cells += [_rate(row[f"{flag}_caught"], row["wrong"]),
                              _rate(row[f"{flag}_false"], row["right"])]
                else:
                    cells += ["-", "-"]
            print("| " + " | ".join(cells) + " |", file=out)
    return summarise([r for _, lines in groups[-1:] for r in lines])


# ---------------------------------------------------------------------- the doubtful flag's rule

LEFT_OUT = 1000.0                                 # points: a gap no board reaches
COUNTS_GAPS = (*range(0, 31), LEFT_OUT)           # points; LEFT_OUT: the check left out
BANDS = (0.5, 0.45, 0.4, 0.35, 0.3, 0.25, 0.2, 0.15, 0.1, 0.05)   # 0.5: no block flags a board
REVIEW_GAPS = (*range(2, 41), LEFT_OUT)


def tune_flag(lines, most_false=0.10):
    """The DoubtRule (engine/scoring/csa.py) that catches the most wrong counts among the
    explained boards of measured lines (with their "signs") while flagging at most
    `most_false` of the right ones (ties: fewer right ones flagged, then the earliest rule of
    the grids), and its (caught, wrong, flagged, right). Boards measured without the review
    search give a rule that leaves the search's gap out (final_score reviews, and a gap the
    choice never saw must not flag). Choose it on boards the classifier never learnt and that
    are not the test boards."""
    import numpy as np
    boards = [r for r in lines if "error" not in r and r.get("explained") and "signs" in r]
    if not boards:
        raise ValueError("no explained boards with doubt signs (measure them with this kosumi)")
    reviewed = all(r["signs"]["search_gap"] is not None for r in boards)
    wrong = np.array([abs(r["kosumi"] - r["result"]) >= 1e-6 for r in boards])
    counts_gap = np.array([r["signs"]["counts_gap"] for r in boards])
    least_sure = np.array([r["signs"]["least_sure"] for r in boards])
    changed = np.array([r["signs"]["changed_mind"] for r in boards])
    search_gap = np.array([r["signs"]["search_gap"] if reviewed else 0.0 for r in boards])
    # boards measured before the teire sign existed leave it out of the choice
    with_teire = all("teire_points" in r["signs"] for r in boards)
    teire = np.array([r["signs"].get("teire_points", 0) > 0 for r in boards])
    rights, wrongs = int((~wrong).sum()), int(wrong.sum())
    best, best_key = None, None
    for review_gap in (REVIEW_GAPS if reviewed else (LEFT_OUT,)):
        by_search = search_gap > review_gap if reviewed else np.zeros(len(boards), bool)
        for gap in COUNTS_GAPS:
            by_counts = by_search | (counts_gap > gap + 1e-9)
            for band in BANDS:
                by_band = by_counts | (least_sure < 0.5 - band)
                for changed_mind, by_teire in itertools.product(
                        (False, True), (False, True) if with_teire else (False,)):
                    flagged = by_band | changed if changed_mind else by_band
                    flagged = flagged | teire if by_teire else flagged
                    false = int((flagged & ~wrong).sum())
                    if false > most_false * rights:
                        continue
                    key = (int((flagged & wrong).sum()), -false)
                    if best_key is None or key > best_key:
                        best_key = key
                        best = csa.DoubtRule(float(gap), band, changed_mind,
                                             float(review_gap) if reviewed else LEFT_OUT,
                                             by_teire)
    return best, (best_key[0], wrongs, -best_key[1], rights)


def write_rule(weights, rule, note):
    """Save the classifier file `weights` again with `rule` as its doubtful flag's rule."""
    classifier = csa.Classifier.load(weights)
    metadata = {k: v for k, v in classifier.metadata.items()
                if k not in ("format", "format_version", "feature_version", "num_base_features",
                             "num_recursive_features", "steps", "hidden", "params_sha256")}
    metadata["doubt"] = rule.to_metadata()
    metadata["doubt_chosen_on"] = note
    classifier.save(weights, metadata)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m engine.training.agreedcounts",
                                     description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("measure", help="count the counted games' final boards")
    labels = commands.add_parser("labels", help="CSA* training records labelled by the agreed "
                                                "counts (for scoredata train)")
    for sub in (run, labels):
        sub.add_argument("--sgf", nargs="+", required=True,
                         help="SGF files, collections, archives")
        sub.add_argument("--out", required=True, help="record file (JSON lines), appended; "
                                                      "resumed runs go on after its last game")
        sub.add_argument("--games", type=int, required=True, help="boards the file should hold")
        sub.add_argument("--every", type=int, default=1,
                         help="take one counted game in this many")
        sub.add_argument("--no-gnugo", action="store_true",
                         help="leave GNU Go out (its column; for labels, its dead stones)")
        sub.add_argument("--weights", default=None,
                         help="CSA* classifier file (default: the shipped one for the size)")
    run.add_argument("--no-review", action="store_true",
                     help="leave out the tree search's review (final_score's doubtful flag "
                          "reviews; 0.7 s or more a 19x19 board)")
    run.add_argument("--boards-of", nargs="+", default=None, metavar="FILE",
                     help="measure exactly the boards of these earlier files (not --every)")
    show = commands.add_parser("report", help="the accuracy table of measured files")
    show.add_argument("--data", nargs="+", required=True)
    show.add_argument("--gnugo-from", nargs="+", default=(), metavar="FILE",
                      help="files measured with GNU Go: its counts of the same boards")
    tune = commands.add_parser("tune-flag", help="choose the doubtful flag's rule on measured "
                                                 "boards (not the test boards)")
    tune.add_argument("--data", nargs="+", required=True)
    tune.add_argument("--most-false", type=float, default=0.10,
                      help="share of right boards the flag may mark (default 0.10)")
    tune.add_argument("--write", default=None, metavar="WEIGHTS",
                      help="save the rule into this classifier file (the one measured)")
    args = parser.parse_args(argv)
    try:
        classifier = (csa.Classifier.load(args.weights)
                      if getattr(args, "weights", None) else None)
        if args.command == "measure":
            measure(args.sgf, args.out, args.games, use_gnugo=not args.no_gnugo,
                    review=not args.no_review, every=max(1, args.every),
                    classifier=classifier,
                    only=boards_of(args.boards_of) if args.boards_of else None)
        elif args.command == "labels":
            make_labels(args.sgf, args.out, args.games, use_gnugo=not args.no_gnugo,
                        every=max(1, args.every), classifier=classifier)
        elif args.command == "tune-flag":
            from engine.training.scoredata import read_records
            rule, (caught, wrong, flagged, right) = tune_flag(
                [r for path in args.data for r in read_records(path)], args.most_false)
            print(f"{rule}: catches {_rate(caught, wrong)} wrong counts, flags "
                  f"{_rate(flagged, right)} right ones")
            if args.write:
                write_rule(args.write, rule, f"agreedcounts tune-flag --most-false "
                                             f"{args.most_false:g} on {', '.join(args.data)}")
                print(f"wrote the rule into {args.write}")
        else:
            report(args.data, gnugo_from=args.gnugo_from)
    except KeyboardInterrupt:
        print("\ninterrupted; run the same command again to go on", file=sys.stderr)
        return 130
    except (ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
