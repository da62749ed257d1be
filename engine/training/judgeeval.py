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

Reading order: judged_positions(), then judgement_table().
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


def judged_positions(paths, size=19, games=None, counts=None, points=POINTS):
    """The JudgedPositions of the first `games` counted games under paths, at every one of points
    ({name: offset}, as POINTS) each game has."""
    counts = counts if counts is not None else ReadCounts()
    encoder, taken = PositionEncoder(), 0
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
                    planes = new_record(size)
                    encoder.encode(board, colour, recent[::-1][:RECENT], planes)
                    found.append(JudgedPosition(wanted[index], record.name, planes, colour,
                                                record.komi, margin))
                recent.append(loc)
        except ValueError:
            counts.skip("illegal move or setup")
            continue
        taken += 1
        yield from found


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
        margin = np.array([p.margin for p in chosen])
        black_won = margin > 0
        decided = margin != 0                    # a draw has no winner to name
        table[point] = {
            "positions": len(chosen),
            "winner_by_win_rate": float(((black_win > 0.5) == black_won)[decided].mean()),
            "winner_by_score": float((np.sign(black_lead) == np.sign(margin))[decided].mean()),
            "brier": float(((black_win - black_won) ** 2)[decided].mean()),
            "score_error": float(np.abs(black_lead - margin).mean()),
        }
    return table
