"""The summary of a match (engine/tools/match.py): summary.json's counts and the printed table.

Reading order: summarise() turns the finished games' GameResults into summary.json's dictionary:
each engine's wins by colour, forfeits and restarts, A's win rate with its 95% Wilson interval
(draws count half), the same as an Elo difference, the mean margin, and the same over the
distinct games (symmetry_key() finds the repeats); format_summary() prints it.
"""
import math
from dataclasses import asdict

COLOUR_NAMES = {"b": "Black", "w": "White"}
WILSON_Z = 1.959964  # two-sided 95% normal quantile


def format_number(value):
    """7 -> "7", 6.5 -> "6.5": komi and margins as GTP and SGF write them, never in e-notation."""
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)



def symmetry_key(black_label, moves, size):
    """Which engine had Black, and the game's moves under the board's eight symmetries, the least:
    games that a rotation or mirroring maps onto each other have the same key. (Deterministic
    engines repeat games; NeuroGo's test protocol counts them once.)"""
    last = size - 1
    images = []
    for swap in (False, True):
        for flip_row in (False, True):
            for flip_col in (False, True):
                image = []
                for colour, move in moves:
                    if move is None:
                        image.append((colour, -1, -1))
                        continue
                    row, col = (move[1], move[0]) if swap else move
                    image.append((colour, last - row if flip_row else row,
                                  last - col if flip_col else col))
                images.append(tuple(image))
    return black_label, min(images)


def wilson_interval(successes, trials, z=WILSON_Z):
    """Wilson score interval for a proportion; (0, 1) when there are no trials."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half_width = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    # At p = 0 or 1 the interval touches the boundary exactly; say so despite rounding.
    low = 0.0 if successes <= 0 else max(0.0, centre - half_width)
    high = 1.0 if successes >= trials else min(1.0, centre + half_width)
    return low, high


def elo_difference(score):
    """A's rating minus B's under the Elo model that gives A this expected score (wins plus half
    the draws, over games); None at 0 or 1, where no finite difference fits."""
    if not 0.0 < score < 1.0:
        return None
    return -400.0 * math.log10(1.0 / score - 1.0)


def summarise(results, config, slots, referee_command=None, interrupted=False):
    """Everything summary.json holds; counts come from `results` only."""
    engines = {}
    for label, slot in slots.items():
        played = [r for r in results if label in (r.black, r.white)]
        as_black = [r for r in played if r.black == label]
        as_white = [r for r in played if r.white == label]
        engines[label] = {
            "command": slot.command,
            "name": slot.name,
            "games": len(played),
            "wins": sum(r.winner == label for r in played),
            "losses": sum(r.winner is not None and r.winner != label for r in played),
            "draws": sum(r.winner is None for r in played),
            "as_black": {"games": len(as_black), "wins": sum(r.winner == label for r in as_black)},
            "as_white": {"games": len(as_white), "wins": sum(r.winner == label for r in as_white)},
            "forfeits": sum(r.forfeit is not None and r.forfeit["loser"] == label
                            for r in played),
            "resignations": sum(r.end == "resignation" and r.winner != label for r in played),
            # games in which the engine played stones after its opponent's pass, and those it lost
            "played_on_after_pass": sum(r.replies_to_pass.get(label, 0) > 0 for r in played),
            "played_on_after_pass_and_lost": sum(
                r.replies_to_pass.get(label, 0) > 0 and r.winner is not None
                and r.winner != label for r in played),
            "restarts": slot.restarts,
        }
    games = len(results)
    a_points = engines["A"]["wins"] + 0.5 * engines["A"]["draws"]
    low, high = wilson_interval(a_points, games)
    scored = [r for r in results if r.margin is not None]
    margins_for_a = [r.margin if r.black == "A" else -r.margin for r in scored]
    distinct = [r for r in results if r.duplicate_of is None]
    distinct_scored = [r for r in distinct if r.margin is not None]
    distinct_a_wins = sum(r.winner == "A" for r in distinct)
    distinct_draws = sum(r.winner is None for r in distinct)
    distinct_a_points = distinct_a_wins + 0.5 * distinct_draws
    return {
        "games": games,
        "interrupted": interrupted,
        "size": config.size,
        "komi": config.komi,
        "rules": "positional superko" if config.superko else "simple ko",
        "scoring": f"referee: {referee_command}" if referee_command else "area (Tromp-Taylor)",
        "move_cap": config.move_cap,
        "move_timeout": config.move_timeout,
        "engines": engines,
        "black_wins": sum(r.winner_colour == "b" for r in results),
        "white_wins": sum(r.winner_colour == "w" for r in results),
        "draws": sum(r.winner is None for r in results),
        "win_rate_a": a_points / games if games else None,
        "win_rate_a_95": [low, high] if games else None,
        # the interval's ends mapped through the same model (None: unbounded that way)
        "elo_a": elo_difference(a_points / games) if games else None,
        "elo_a_95": [elo_difference(low), elo_difference(high)] if games else None,
        "scored_games": len(scored),
        "mean_margin_a": sum(margins_for_a) / len(scored) if scored else None,
        "mean_margin_black": sum(r.margin for r in scored) / len(scored) if scored else None,
        "capped_games": sum(r.end == "move cap" for r in results),
        "repeated_games": [r.number for r in results if r.duplicate_of is not None],
        "distinct": {
            "games": len(distinct),
            "wins_a": distinct_a_wins,
            "draws": distinct_draws,
            "win_rate_a": distinct_a_points / len(distinct) if distinct else None,
            "win_rate_a_95": list(wilson_interval(distinct_a_points, len(distinct)))
            if distinct else None,
            "scored_games": len(distinct_scored),
            "mean_margin_a": sum(r.margin if r.black == "A" else -r.margin
                                 for r in distinct_scored) / len(distinct_scored)
            if distinct_scored else None,
        },
        "doubtful_counts": [r.number for r in results if r.doubtful_count],
        "forfeits": [dict(game=r.number, **r.forfeit) for r in results if r.forfeit],
        "results": [asdict(r) for r in results],
    }


def format_elo(value, unbounded):
    return unbounded if value is None else f"{value:+.0f}"


def format_summary(summary):
    lines = []
    interrupted = " (interrupted)" if summary["interrupted"] else ""
    lines.append(f"{summary['games']} games{interrupted}, {summary['size']}x{summary['size']}, "
                 f"komi {format_number(summary['komi'])}, {summary['rules']}, "
                 f"scoring: {summary['scoring']}")
    for label, engine in summary["engines"].items():
        lines.append(f"  {label}: {engine['name'] or '?'}  [{engine['command']}]")
    lines.append(f"  {'':6}{'wins':>6}{'as black':>10}{'as white':>10}{'forfeits':>10}"
                 f"{'restarts':>10}")
    for label, engine in summary["engines"].items():
        black = f"{engine['as_black']['wins']}/{engine['as_black']['games']}"
        white = f"{engine['as_white']['wins']}/{engine['as_white']['games']}"
        lines.append(f"  {label:6}{engine['wins']:>6}{black:>10}{white:>10}"
                     f"{engine['forfeits']:>10}{engine['restarts']:>10}")
    lines.append(f"  draws {summary['draws']}; Black won {summary['black_wins']}, "
                 f"White won {summary['white_wins']}")
    if summary["games"]:
        low, high = summary["win_rate_a_95"]
        lines.append(f"  A win rate {100 * summary['win_rate_a']:.1f}% "
                     f"(95% interval {100 * low:.1f}%-{100 * high:.1f}%, draws count half)")
        elo_low, elo_high = summary["elo_a_95"]
        unbounded = "+inf" if summary["win_rate_a"] >= 1 else "-inf"
        lines.append(f"  A's Elo difference {format_elo(summary['elo_a'], unbounded)} "
                     f"(95% interval {format_elo(elo_low, '-inf')} to "
                     f"{format_elo(elo_high, '+inf')})")
    if summary["scored_games"]:
        lines.append(f"  mean margin for A {summary['mean_margin_a']:+.2f} over "
                     f"{summary['scored_games']} scored games "
                     f"(for Black {summary['mean_margin_black']:+.2f})")
    if summary["capped_games"]:
        lines.append(f"  {summary['capped_games']} games reached the move cap "
                     f"of {summary['move_cap']}")
    if summary["repeated_games"]:
        distinct = summary["distinct"]
        line = (f"  {len(summary['repeated_games'])} games repeat an earlier one (up to rotation "
                f"and mirroring); the {distinct['games']} distinct games: A win rate "
                f"{100 * distinct['win_rate_a']:.1f}% (95% "
                f"{100 * distinct['win_rate_a_95'][0]:.1f}-{100 * distinct['win_rate_a_95'][1]:.1f}%)")
        if distinct["scored_games"]:
            line += f", mean margin for A {distinct['mean_margin_a']:+.2f}"
        lines.append(line)
    for label, engine in summary["engines"].items():
        if engine.get("played_on_after_pass"):
            lines.append(f"  {label} played stones after its opponent's pass in "
                         f"{engine['played_on_after_pass']} games and lost "
                         f"{engine['played_on_after_pass_and_lost']} of them")
    if summary["doubtful_counts"]:
        lines.append(f"  CSA*'s count is doubtful in games "
                     f"{', '.join(map(str, summary['doubtful_counts']))}: check their dead stones")
    for forfeit in summary["forfeits"]:
        lines.append(f"  forfeit: game {forfeit['game']}, {forfeit['loser']} "
                     f"({COLOUR_NAMES[forfeit['colour']]}): {forfeit['kind']}: "
                     f"{forfeit['detail']}")
    return "\n".join(lines)
