"""The analysis formats: what the analysis commands write, apart from how they get the analysis.

Reading order: GoGui's gfx, pspairs and string replies first (`gogui_analyze_commands` is its
analysis menu; `ownership_gfx` ... `search_gfx` draw one command each); then the streamed info
lines of Sabaki and Lizzie in their two dialects, KataGo's `kata-analyze` and Leela Zero's
`lz-analyze`: their argument grammar (`parse_analysis_options`, with the avoid/allow move rules),
then `info_line`, which writes a search's analysis (`search_info_line`) or a 1-ply analysis
(`one_ply_info_line`, visits shared out by `share_visits`).

Every function takes what it shows (the position, the analysis, the evaluator for ownership and
score spreads) and returns text; the commands that call them are in commands.py.
docs/GTP_EXTENSIONS.md documents each format.
"""
import math

import numpy as np

from engine.rules.board import BLACK, PASS, WHITE
from engine.rules.coords import board_points, format_vertex, loc_of, row_col
from engine.play.player import RESIGN, state_for, win_probability
from engine.play.restriction import ALLOW, AVOID, MoveRestriction, MoveRule
from engine.gtp.protocol import INTEGER_PATTERN, IntArg, WordArg, syntax_error
from engine.gtp.goargs import COLOUR, POINT, VERTEX, ColourArg, colour_letter, colour_word

ANALYSIS_KEYS = ("interval", "minmoves", "maxmoves", "ownership", "avoid", "allow")
LZ_ANALYSIS_KEYS = ("interval", "minmoves", "maxmoves", "avoid", "allow")
ANALYSIS_VISITS = 1000   # the visits shared out over the listed moves (see one_ply_info_line)
GOGUI_ANALYZE_COMMANDS = (
    "gfx/Kosumi Ownership/kosumi-ownership",
    "gfx/Kosumi Move Values/kosumi-move_values %m",
    "pspairs/Kosumi Move Values List/kosumi-move_values_list %m",
    "gfx/Kosumi Chosen Move/kosumi-chosen_move %m",
    "gfx/Kosumi Search/kosumi-search %m",
    "string/Kosumi Score Estimate/kosumi-score_estimate",
    "plist/Kosumi Dead Stones/final_status_list dead",
    "string/Final Score/final_score",
    "param/Kosumi Parameters/kosumi-param",
)   # GoGui replaces %m with the colour to move; a param command opens its dialog
CONNECTIVITY_ANALYZE_COMMAND = "gfx/Kosumi Connectivity/kosumi-connectivity %p"   # asks a point
POLICY_ANALYZE_COMMANDS = (
    "gfx/Kosumi Policy/kosumi-policy %m",
    "pspairs/Kosumi Policy List/kosumi-policy_list %m",
)
POLICY_FLOOR = 0.001     # the least probability the policy's views show
POLICY_SHADES = 16       # the heat map's colours


def black_view(state, value):
    """A value for the side to move as Black's margin."""
    return value if state.to_move == BLACK else -value


def score_text(black_margin):
    return f"{'B' if black_margin >= 0 else 'W'}+{abs(black_margin):.1f}"


# --- GoGui: gfx, pspairs, string ------------------------------------------------------------------

def gogui_analyze_commands(has_connectivity, has_policy):
    """GoGui's analysis menu: type/label/command per line (the connectivity map when the
    evaluator has one, the policy's views when there is a policy net)."""
    commands = GOGUI_ANALYZE_COMMANDS
    if has_connectivity:
        commands += (CONNECTIVITY_ANALYZE_COMMAND,)
    if has_policy:
        commands += POLICY_ANALYZE_COMMANDS
    return "\n".join(commands)


def ownership_gfx(state, evaluation):
    """The evaluation's ownership of every point as INFLUENCE (+1 black .. -1 white), with its sum
    and the expected score."""
    size = state.size
    ownership = evaluation.ownership
    points = board_points(size)
    influence = " ".join(f"{format_vertex(p, size)} {ownership[p]:.2f}" for p in points)
    black_share = sum(ownership[p] for p in points)
    return (f"INFLUENCE {influence}\n"
            f"TEXT ownership sum {black_share:+.1f} for Black; expected score "
            f"{score_text(black_view(state, evaluation.value))}")


def connectivity_gfx(size, loc, colour, connection):
    """colour's connection values from loc (a map over the points) as INFLUENCE and percent
    LABELs, loc marked."""
    sign = 1.0 if colour == BLACK else -1.0
    reached = [p for p in board_points(size) if connection[p] > 0.0]
    influence = " ".join(f"{format_vertex(p, size)} {sign * connection[p]:.2f}" for p in reached)
    labels = " ".join(f"{format_vertex(p, size)} {round(100 * connection[p])}" for p in reached)
    strong = sum(connection[p] >= 0.5 for p in reached)
    lines = [f"INFLUENCE {influence}", f"LABEL {labels}"] if reached else []
    lines.append(f"MARK {format_vertex(loc, size)}")
    lines.append(f"TEXT {colour_word(colour).capitalize()}'s connection values from "
                 f"{format_vertex(loc, size)} in percent; points reached: {len(reached)}, "
                 f"at 50 or more: {strong}")
    return "\n".join(lines)


def move_values_gfx(size, analysis, colour):
    """A 1-ply analysis as a LABEL per legal move (points for colour), the best move's SQUARE."""
    labels = " ".join(f"{format_vertex(move, size)} {value:.1f}"
                      for move, value, _ in analysis.ranked(candidates_only=False)
                      if move != PASS)
    best_move, best_value, _ = analysis.ranked()[0]
    lines = [f"LABEL {labels}"] if labels else []
    if best_move != PASS:
        lines.append(f"SQUARE {format_vertex(best_move, size)}")
    lines.append(f"TEXT best {format_vertex(best_move, size)} {best_value:+.1f}, pass "
                 f"{analysis.value_of(PASS):+.1f} (points for {colour_word(colour)})")
    return "\n".join(lines)


def move_values_pspairs(size, analysis):
    """A 1-ply analysis as pspairs: vertex and value of every legal move, best first."""
    return " ".join(f"{format_vertex(move, size)} {value:.2f}"
                    for move, value, _ in analysis.ranked(candidates_only=False)
                    if move != PASS)


def ranked_policy(size, probabilities):
    """(loc, probability) of the point moves at POLICY_FLOOR or more, most likely first."""
    points = [p for p in board_points(size) if probabilities[p] >= POLICY_FLOOR]
    return sorted(((p, float(probabilities[p])) for p in points), key=lambda entry: -entry[1])


def policy_colour(probability):
    """A heat colour for a move's probability, in POLICY_SHADES steps of a log scale: blue at
    POLICY_FLOOR, then cyan, green and yellow, red at 1 (red is likely, as in Pachi's map)."""
    share = min(max(math.log10(probability / POLICY_FLOOR) / -math.log10(POLICY_FLOOR), 0.0), 1.0)
    stops = ((0, 0, 255), (0, 255, 255), (0, 255, 0), (255, 255, 0), (255, 0, 0))
    position = round(share * POLICY_SHADES) / POLICY_SHADES * (len(stops) - 1)
    low = min(int(position), len(stops) - 2)
    mix = position - low
    red, green, blue = (round(a + (b - a) * mix) for a, b in zip(stops[low], stops[low + 1]))
    return f"#{red:02x}{green:02x}{blue:02x}"


def policy_gfx(size, probabilities, colour, description):
    """A policy net's move probabilities (by loc, pass last) for colour: a COLOR heat map of the
    moves at POLICY_FLOOR or more, their rounded percentages as LABELs from 1 on, the likeliest
    move's SQUARE, and a TEXT line with pass and the net (description)."""
    ranked = ranked_policy(size, probabilities)
    by_colour = {}
    for p, probability in ranked:
        by_colour.setdefault(policy_colour(probability), []).append(format_vertex(p, size))
    lines = [f"COLOR {shade} {' '.join(vertices)}" for shade, vertices in by_colour.items()]
    percents = [(format_vertex(p, size), round(100 * probability)) for p, probability in ranked]
    labels = " ".join(f"{vertex} {percent}" for vertex, percent in percents if percent >= 1)
    if labels:
        lines.append(f"LABEL {labels}")
    summary = f"pass {100 * float(probabilities[-1]):.1f}%"
    if ranked:
        best, probability = ranked[0]
        lines.append(f"SQUARE {format_vertex(best, size)}")
        top5 = sum(probability for _, probability in ranked[:5])
        summary = (f"best {format_vertex(best, size)} {100 * probability:.1f}%, {summary}; "
                   f"the 5 likeliest {100 * top5:.0f}%")
    lines.append(f"TEXT {colour_word(colour).capitalize()}'s moves by the policy net "
                 f"({description}): {summary}")
    return "\n".join(lines)


def policy_pspairs(size, probabilities):
    """A policy net's move probabilities as pspairs: vertex and percent of the point moves at
    POLICY_FLOOR or more, most likely first (pass is in policy_gfx's text)."""
    return " ".join(f"{format_vertex(p, size)} {100 * probability:.1f}"
                    for p, probability in ranked_policy(size, probabilities))


def chosen_move_gfx(colour, decision, move_text):
    """A player's decision (its move written as move_text) as a VAR, with its reason,
    probability and value."""
    lines = []
    if decision.move not in (RESIGN, PASS):
        lines.append(f"VAR {colour_letter(colour)} {move_text}")
    value = "" if decision.analysis is None or decision.move == RESIGN else \
        f", value {decision.analysis.value_of(decision.move):+.1f}"
    lines.append(f"TEXT {move_text}: {decision.reason}, probability "
                 f"{decision.probability:.3f}{value}")
    return "\n".join(lines)


def search_gfx(size, analysis, colour):
    """A search's analysis: the root moves' visits as LABELs, the principal variation as VAR,
    the best move's win rate and score as TEXT."""
    ranked = [entry for entry in analysis.ranked() if entry[1] > 0]
    labels = " ".join(f"{format_vertex(move, size)} {visits}" for move, visits, *_ in ranked
                      if move != PASS)
    lines = [f"LABEL {labels}"] if labels else []
    if ranked:
        move, visits, winrate, score, _, pv = ranked[0]
        variation = " ".join(f"{colour_letter(colour if i % 2 == 0 else 3 - colour)} "
                             f"{format_vertex(m, size)}" for i, m in enumerate(pv))
        lines.append(f"VAR {variation}")
        lines.append(f"TEXT {analysis.total_visits} visits: best {format_vertex(move, size)} "
                     f"({visits} visits, win rate {winrate:.1%} for {colour_word(colour)}, "
                     f"score {score:+.1f})")
    return "\n".join(lines)


# --- Sabaki, Lizzie: KataGo's and Leela Zero's streamed info lines --------------------------------

def parse_analysis_options(words, dialect, to_move, engine):
    """KataGo's argument grammar (Leela Zero's is the same with fewer keys): optional colour,
    optional interval (centiseconds), then key-value pairs; `avoid`/`allow` take three
    values: colour, comma-separated vertices, until-depth. Returns (colour, options); colour is
    to_move unless one is given. engine is the argument types' engine (for the board size)."""
    colour = to_move
    words = list(words)
    if words and words[0].lower() in ColourArg.WORDS:
        colour = COLOUR.parse(words.pop(0), engine)
    options = {"interval": 0, "minmoves": 0, "maxmoves": 0, "ownership": False}
    if words and INTEGER_PATTERN.fullmatch(words[0]):
        options["interval"] = IntArg(0).parse(words.pop(0), engine)
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
            rules.append(parse_move_rule(key, words[:3], engine))
            del words[:3]
            continue
        value = words.pop(0)
        if key == "ownership":
            options[key] = WordArg(("true", "false")).parse(value, engine) == "true"
        else:
            options[key] = IntArg(0).parse(value, engine)
    check_rule_combination(rules, dialect)
    options["restriction"] = MoveRestriction(tuple(rules)) if rules else None
    return colour, options


def parse_move_rule(kind, words, engine):
    """A MoveRule from `COLOUR VERTICES UNTIL_DEPTH`; vertices are comma-separated vertices
    or `pass`, or Leela Zero's rectangles `A1:C3`."""
    colour_text, vertices_text, depth_text = words
    colour = COLOUR.parse(colour_text, engine)
    moves = set()
    for part in filter(None, (piece.strip() for piece in vertices_text.split(","))):
        if ":" in part:
            corner_a, _, corner_b = part.partition(":")
            (row_a, col_a), (row_b, col_b) = (row_col(POINT.parse(c, engine), engine.size)
                                              for c in (corner_a, corner_b))
            moves.update(loc_of(row, col, engine.size)
                         for row in range(min(row_a, row_b), max(row_a, row_b) + 1)
                         for col in range(min(col_a, col_b), max(col_a, col_b) + 1))
        else:
            moves.add(VERTEX.parse(part, engine))
    if not moves:
        raise syntax_error(f"{kind} needs at least one vertex")
    depth = IntArg(1).parse(depth_text, engine)
    return MoveRule(kind, colour, frozenset(moves), depth)


def check_rule_combination(rules, dialect):
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


def info_line(analysis, dialect, options, state, evaluator):
    """One line of `info move ...` entries in the dialect ("kata" or "lz") for an analysis of
    state: a search's or a 1-ply player's."""
    if hasattr(analysis, "visits"):
        return search_info_line(analysis, dialect, options, state.size)
    return one_ply_info_line(analysis, dialect, options, state, evaluator)


def search_info_line(analysis, dialect, options, size):
    """`info move ...` per visited root move, most visited first, with the search's visits,
    win rate, mean score and principal variation; lcb is the win rate less two standard
    errors. From the side of the analysed colour."""
    entries = []
    ranked = [entry for entry in analysis.ranked() if entry[1] > 0] or analysis.ranked()[:1]
    for order, (move, visits, winrate, score, prior, pv) in enumerate(ranked):
        if options["maxmoves"] and order >= options["maxmoves"]:
            break
        vertex = format_vertex(move, size)
        lcb = winrate - 2.0 * math.sqrt(winrate * (1.0 - winrate) / max(visits, 1))
        prior = 0.0 if prior is None else prior
        line = " ".join(format_vertex(m, size) for m in pv or [move])
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
                                         for p in board_points(size))
    return text


def one_ply_info_line(analysis, dialect, options, state, evaluator):
    """One line of `info move ...` entries, best first (Sabaki splits it at each `info`).

    visits: ANALYSIS_VISITS shared out in proportion to each move's selection probability
    (largest remainders), so the visit-weighted average of the listed winrates (what Lizzie
    and Sabaki show as the position's winrate) is the winrate of kosumi's own move choice.
    Moves with no visit are listed only as far as `minmoves` asks, as KataGo does.
    kata: winrate in [0, 1] with a decimal point, scoreLead in points, scoreStdev where the
    evaluator can estimate it; lz: winrate and prior in ten-thousandths. All from the side of
    the analysed colour, as KataGo and Leela Zero report them."""
    size = state.size
    empty_points = state.board.empty_points
    ranked = analysis.ranked()
    visits = share_visits([probability for _, _, probability in ranked], ANALYSIS_VISITS)
    listed = [(move, value, probability, count)
              for order, ((move, value, probability), count) in enumerate(zip(ranked, visits))
              if count > 0 or order < options["minmoves"]]
    if options["maxmoves"]:
        listed = listed[:options["maxmoves"]]
    stdevs = score_stdevs(state, evaluator, analysis.colour, [move for move, *_ in listed]) \
        if dialect == "kata" else {}
    entries = []
    for order, (move, value, probability, count) in enumerate(listed):
        vertex = format_vertex(move, size)
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
        ownership = evaluator.evaluate(state_for(state, analysis.colour)).ownership
        sign = 1.0 if analysis.colour == BLACK else -1.0
        line += " ownership " + " ".join(f"{sign * ownership[p]:.4f}"
                                         for p in board_points(size))
    return line


def score_stdevs(state, evaluator, colour, moves):
    """move -> the spread (points) of the final score after colour plays it, from the
    evaluator's ownership: every point an independent +-1 outcome with mean o has variance
    1 - o^2 (an estimate that ignores how points live and die together, so the real spread
    is larger). Empty when the evaluator has no probabilities to offer (no network: its
    ownership is a count, not a prediction), so the key is left out rather than 0."""
    if not evaluator.predicts_ownership:
        return {}
    position = state_for(state, colour)
    if position is state:
        position = state.copy()
    points = board_points(state.size)
    stdevs = {}
    for move in moves:
        position.play(move, colour)
        try:
            evaluation = evaluator.evaluate(position)
        finally:
            position.undo()
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
