"""How well a judging net names the winner and the score of expert games the players counted to
the end (`kosumi-train policy judgement`): at fixed points of each game (40 moves before the
end, move 150), the net's win chance and score lead against the record's result.

Measures at each point, over the games long enough to have it, all from Black's side:
- winner right by win rate: the win chance over one half for the side that won;
- winner right by score lead: the lead's sign is the winner's (a lead of 0 is wrong);
- Brier score: the mean squared difference of Black's win chance and 1 (Black won) or 0;
- score error: the mean absolute difference of Black's lead and the record's margin (komi in).
Only counted games enter (a numeric result, no handicap), so that every position has a true
score; the positions are the records' as played.

Reading order: counted_positions() (the games and their points, shared with
benchmarks/analysis_judgement.py, which asks an analysis engine instead), judged_positions(),
then judgement_table() and judgement_row() (the measures, shared too).
"""
from dataclasses import dataclass

import numpy as np

from engine.nets.judge import judge_planes, symmetric_judgement
from engine.nets.policy_features import features
from engine.nets.policy_inputs import PositionEncoder, new_record
from engine.rules.board import BLACK, WHITE
from engine.training.agreedcounts import parse_result
from engine.training.sgfdata import ReadCounts, iter_games, replay

RECENT = 15                              # the AGE plane's memory, as the training data's
POINTS = {"end-40": -40, "move-150": 150}   # a point's position: from the end if negative


@dataclass
class JudgedPosition:
    point: str          # its point's name (POINTS)
    game: str
    record: np.ndarray  # (RECORD_PLANES, S*S) the position as the training data stores it
    to_move: int        # BLACK or WHITE
    komi: float
    margin: float       # Black's final margin, komi in


def position_index(offset, moves):
    """The index of a point's position (offset: moves from the start, or from the end if
    negative) in a game of `moves` moves, or None when the game is too short to have it."""
    index = moves + offset if offset < 0 else offset
    return index if 0 <= index < moves else None


def counted_positions(paths, size=19, games=None, counts=None, points=POINTS, look=None):
    """(point, record, index, margin, looked) at every one of points ({name: offset}, as POINTS)
    each of the first `games` counted games under paths has: the game's GameRecord before its
    move `index` (record.moves[:index] played, record.moves[index] to play), Black's final margin
    (komi in), and what look(board, colour, recent) made of the position then (None without
    look; recent: the locs played so far, oldest first; the board changes after the call). A game
    enters whole or not at all: one that does not replay legally is skipped and not taken."""
    counts = counts if counts is not None else ReadCounts()
    taken = 0
    for _, record in iter_games(paths, counts, sizes={size}):
        if games is not None and taken >= games:
            break
        try:
            margin = parse_result(record.result)
        except ValueError as error:
            counts.skip(str(error))
            continue
        if record.setup[BLACK] or record.setup[WHITE]:
            counts.skip("handicap")
            continue
        wanted = {index: point for point, offset in points.items()
                  if (index := position_index(offset, len(record.moves))) is not None}
        found, recent = [], []
        try:
            for index, (board, colour, loc) in enumerate(replay(record)):
                if index in wanted:
                    looked = None if look is None else look(board, colour, recent)
                    found.append((wanted[index], record, index, margin, looked))
                recent.append(loc)
        except ValueError:
            counts.skip("illegal move or setup")
            continue
        taken += 1
        yield from found


def judged_positions(paths, size=19, games=None, counts=None, points=POINTS):
    """The JudgedPositions of the first `games` counted games under paths, at every one of points
    ({name: offset}, as POINTS) each game has."""
    encoder = PositionEncoder()

    def encode(board, colour, recent):
        planes = new_record(size)
        encoder.encode(board, colour, recent[::-1][:RECENT], planes)
        return planes

    for point, record, index, margin, planes in counted_positions(paths, size, games, counts,
                                                                  points, encode):
        yield JudgedPosition(point, record.name, planes, record.moves[index][0], record.komi,
                             margin)


def judgement_table(judge_of, positions, feature_set_name="rich", symmetries=1, batch_size=64):
    """{point: {"positions", "winner_by_win_rate", "winner_by_score", "brier", "score_error"}} of a
    judging net's pass judge_of (planes -> Judgement) over JudgedPositions."""
    by_point = {}
    for position in positions:
        by_point.setdefault(position.point, []).append(position)
    table = {}
    for point, chosen in by_point.items():
        black_win, black_lead = [], []
        for start in range(0, len(chosen), batch_size):
            part = chosen[start:start + batch_size]
            records = np.stack([p.record for p in part])[:, None]
            own = np.array([p.to_move for p in part], np.uint8)
            komi = np.array([p.komi if p.to_move == WHITE else -p.komi for p in part], np.float32)
            planes = judge_planes(features(feature_set_name, records, own), komi)
            judged = symmetric_judgement(judge_of, planes, symmetries)
            black = own == BLACK
            black_win.append(np.where(black, judged.win, 1.0 - judged.win))
            black_lead.append(np.where(black, judged.score, -judged.score))
        black_win, black_lead = np.concatenate(black_win), np.concatenate(black_lead)
        table[point] = judgement_row(black_win, black_lead, [p.margin for p in chosen])
    return table


def judgement_row(black_win, black_lead, margin):
    """{"positions", "winner_by_win_rate", "winner_by_score", "brier", "score_error"} of one
    point from its positions' Black win chances, Black leads and Black's final margins (komi in);
    a drawn game enters the score error only."""
    black_win, black_lead = np.asarray(black_win, float), np.asarray(black_lead, float)
    margin = np.asarray(margin, float)
    black_won = margin > 0
    decided = margin != 0                    # a draw has no winner to name
    return {
        "positions": len(margin),
        "winner_by_win_rate": float(((black_win > 0.5) == black_won)[decided].mean()),
        "winner_by_score": float((np.sign(black_lead) == np.sign(margin))[decided].mean()),
        "brier": float(((black_win - black_won) ** 2)[decided].mean()),
        "score_error": float(np.abs(black_lead - margin).mean()),
    }
