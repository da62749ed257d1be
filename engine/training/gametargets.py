"""What a game record says about how its game ended, as targets for a net that judges positions:
the komi, who won, Black's final margin, and the final owner of every point.

Reading order: `outcome_of()` reads RE (the winner, and Black's margin when the result is in
points); `margin_of()` sets the margin aside for handicap games; `final_ownership()` finds the
dead stones of a game counted to the end (engine/training/agreedcounts.py: the labelling whose
count is the recorded result) and maps the final board's owners; `game_targets()` puts them
together for one record.

Which results give a winner: a margin in points (`B+3.5`), a resignation (`W+R`, `W+Resign`) or a
win the record gives no reason for (`B+`, as the SGF specification allows). Time losses, forfeits
and disconnections (`B+T`, `W+F`, TYGEM's `B+Offline`: the position says little about them),
draws, `Void`, `?` and anything unreadable give none. A draw (`0`, `Draw`, `Jigo`, `B+0`) is a
margin of 0 all the same.

Which margins: the numeric results of even games. A handicap game's margin (HA above 1, or setup
stones) depends on how its rules compensate the handicap stones, which the record rarely says.

Which ownerships: those of games that `agreedcounts.counted_game()` accepts (a margin in points,
no handicap, known rules, a legal replay) and `agreed_labelling()` (without GNU Go) can label so
that the count is the recorded result. The final board with the labelled dead stones taken off
is mapped by flood fill (engine/scoring/counting.py `area_map`): a region bordered by one colour
is that colour's, dame and the liberties shared in a seki nobody's, and the stones of a block
labelled seki nobody's too (neither side gains them by the end). The eyes of a block in seki
stay their owner's, as the servers' counts and area rules have them. So on a board counted by
area the ownership sums to Black's margin plus the komi, but for the stones in seki (59 of the
first 60 owned Tom games at komi 7.5, 2026-12-02; the 60th has a seki of 10 stones against 4).
"""
import math
import re
from dataclasses import dataclass

import numpy as np

from engine.rules.board import BLACK, WHITE
from engine.rules.coords import board_points
from engine.scoring import deadstones
from engine.scoring.counting import area_map
from engine.scoring.csa import classifier_for
from engine.training.agreedcounts import agreed_labelling, blocks_of, counted_game

_RESULT = re.compile(r"^([bw])\+(.*)$")
_NUMBER = re.compile(r"^(?:\d+(?:\.\d*)?|\.\d+)$")
_DRAWS = {"0", "draw", "jigo"}                     # and B+0 / W+0, a margin of none
_RESIGNED = {"r", "res", "resign", "resigned", "resignation",
             ""}                                   # "": the SGF's bare "B+", a win without reason
_OWNER_VALUE = {BLACK: 1, WHITE: -1}               # EMPTY (neutral): 0


def outcome_of(result_text):
    """(winner, Black's margin) of an RE text: winner +1 (Black won), -1 (White won) or 0 (no
    value target: a draw, a time loss, a forfeit, no result, anything unreadable); the margin in
    points for a numeric result or a draw, NaN otherwise. Case and whitespace do not matter."""
    text = re.sub(r"\s+", "", result_text or "").lower()
    if text in _DRAWS:
        return 0, 0.0
    match = _RESULT.match(text)
    if not match:
        return 0, math.nan
    sign = 1 if match.group(1) == "b" else -1
    how = match.group(2)
    if _NUMBER.match(how):
        margin = float(how)
        return (sign, sign * margin) if margin > 0 else (0, 0.0)
    if how in _RESIGNED:
        return sign, math.nan
    return 0, math.nan          # time, forfeit, or a reason this reader does not know


def winner_of(result_text):
    """+1 when Black won, -1 when White won, 0 when the result gives no value target."""
    return outcome_of(result_text)[0]


def is_handicap(record):
    """Whether the record is a handicap game: HA above 1, or stones set up before the first move
    (an HA that does not read as a number counts as one: its margin cannot be trusted)."""
    if record.setup[BLACK] or record.setup[WHITE]:
        return True
    text = record.properties.get("HA", "").strip()
    try:
        return bool(text) and int(float(text)) > 1
    except ValueError:
        return True


def margin_of(record):
    """Black's final margin in points (komi included) of an even game with a numeric result
    (or a draw), NaN otherwise; NaN too for a margin no board could give."""
    if is_handicap(record):
        return math.nan
    margin = outcome_of(record.result)[1]
    # no count goes past every point of the board and the komi (prisoners aside)
    if abs(margin) > record.size * record.size + abs(record.komi):
        return math.nan
    return margin


def owners(board, dead=(), neutral=frozenset()):
    """int8 (S*S,) owners of a final board by flood fill, row-major from the top row: +1 Black,
    -1 White, 0 neutral, with the `dead` stones taken off and the points in `neutral` nobody's
    (self-play's count as the board stands takes neither)."""
    owner = area_map(board, dead)
    return np.array([0 if p in neutral else _OWNER_VALUE.get(owner[p], 0)
                     for p in board_points(board.size)], np.int8)


def ownership_of_labelling(board, statuses):
    """owners() of the final board with the blocks labelled dead taken off and those labelled
    seki neutral. statuses: per block of agreedcounts.blocks_of(board)."""
    blocks = blocks_of(board)
    dead = [p for (_, stones), status in zip(blocks, statuses) if status == deadstones.DEAD
            for p in stones]
    seki = {p for (_, stones), status in zip(blocks, statuses) if status == deadstones.SEKI
            for p in stones}
    return owners(board, dead, seki)


def final_ownership(record, classifier=None):
    """(ownership int8 (S*S,), how it was found: agreed_labelling's source "players", "kosumi"
    or "relabelled"), or (None, why not: counted_game's reason or "no labelling counts to the
    result"). classifier: CSA*'s (default: the shipped one for the board size)."""
    try:
        game = counted_game(record)
    except ValueError as error:
        reason = str(error).split(" (")[0]
        return None, "unknown rules" if reason.startswith("unknown rules") else reason
    classifier = classifier or classifier_for(record.size)
    try:
        labelling = agreed_labelling(game, classifier=classifier, gnugo=None)
    except Exception as error:      # one strange board must not stop hours of preparation;
        return None, f"labelling failed ({type(error).__name__})"    # the manifest counts it
    if labelling is None:
        return None, "no labelling counts to the result"
    statuses, source, _ = labelling
    return ownership_of_labelling(game.board, statuses), source


@dataclass
class GameTargets:
    """One game's targets, from Black's side."""
    komi: float
    winner: int              # +1 Black won, -1 White won, 0 no value target
    margin: float            # Black's final margin in points, komi included; NaN when unknown
    ownership: np.ndarray    # int8 (S*S,): +1 Black, -1 White, 0 neutral; zeros when not owned
    owned: bool
    ownership_note: str      # the labelling's source when owned, else why not


def game_targets(record, classifier=None):
    """The GameTargets of a record (module docstring: which results, margins and ownerships)."""
    ownership, note = final_ownership(record, classifier)
    owned = ownership is not None
    if not owned:
        ownership = np.zeros(record.size * record.size, np.int8)
    return GameTargets(float(record.komi), winner_of(record.result), margin_of(record),
                       ownership, owned, note)
