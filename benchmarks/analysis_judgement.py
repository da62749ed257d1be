"""The judgement table of `kosumi-train policy judgement` (engine/training/judgeeval.py) through
KataGo's JSON analysis protocol: any engine that speaks it on stdin/stdout (`kosumi analysis`,
`katago analysis -config ... -model ...`) judges the counted games' positions, 40 moves before
the end and at move 150, and is measured as the judging net is.

    python benchmarks/analysis_judgement.py --engine "kosumi analysis" \\
        --sgf ../shared/data/tygem-9d/tygem-9d-2016.sgf.xz --games 100 [--visits 200] \\
        [--size 19] [--points end-40=-40,move-150=150] [--timeout 300] [--json OUT]

The positions are judgeeval's (counted_positions(): the first N counted games, no handicap,
each point a game has). One query per position, as KaTrain sends them: the record's moves up to
the point, `initialStones` (none: handicap games are left out), `rules` `chinese` for area and
`japanese` for territory when the record's RU names one, else `chinese` (`--rules` sets one for
every query), the record's komi, `analyzeTurns` the last turn, `maxVisits` --visits, and
`overrideSettings.reportAnalysisWinratesAs`: BLACK (KataGo and kosumi both take it there; a
top-level field of that name is a warning in both). `--report-as SIDETOMOVE` asks for the side
to move's view instead and turns it to Black's here.

The queries are written all at once (a writer thread) and the answers read by id as they come;
--timeout is the longest wait for the next answer, after which the queries still open count as
unanswered and the engine is stopped. An error answer, a `noResults` answer or one without
rootInfo.winrate and rootInfo.scoreLead counts as an error of its point, never stops the run.
The measures (judgeeval.judgement_row) are over the answered positions: winner right by win
rate and by score lead, Brier score, mean score-lead error, all from Black's side; the clock runs
from the first query written (after the engine answered `query_version`) to the last answer.
--json writes the table with the engine's command, maxVisits, the skipped records, the errors
and warnings met, and every answered position's Black win chance, lead and visits.
"""
import argparse
import json
import os
import queue
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from engine.rules.board import BLACK, WHITE  # noqa: E402
from engine.rules.coords import format_vertex  # noqa: E402
from engine.training.agreedcounts import RULES_SCORING  # noqa: E402
from engine.training.judgeeval import counted_positions, judgement_row  # noqa: E402
from engine.training.sgfdata import ReadCounts  # noqa: E402

RULE_OF_SCORING = {"area": "chinese", "territory": "japanese"}
COLOURS = {BLACK: "B", WHITE: "W"}
SHOWN_MESSAGES = 5                      # distinct error and warning messages kept per kind


def parse_points(text):
    """{name: offset} from `end-40=-40,move-150=150` (an offset below 0 counts from the end)."""
    points = {}
    for part in text.split(","):
        name, sep, offset = part.strip().partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            points[name.strip()] = int(offset)
        except ValueError:
            raise argparse.ArgumentTypeError(f"bad point {part.strip()!r}: NAME=OFFSET, e.g. "
                                             f"end-40=-40") from None
    return points


def query_rules(record):
    """KataGo's rules name for a record: as its RU says (area or territory), else chinese."""
    scoring = RULES_SCORING.get(record.rules.strip().lower())
    return RULE_OF_SCORING.get(scoring, "chinese")


def position_query(query_id, record, index, visits, report_as="BLACK", rules=None):
    """The analysis query of a record's position before its move `index`."""
    size = record.size
    return {"id": query_id,
            "moves": [[COLOURS[colour], format_vertex(loc, size)]
                      for colour, loc in record.moves[:index]],
            "initialStones": [[COLOURS[colour], format_vertex(loc, size)]
                              for colour in (BLACK, WHITE) for loc in record.setup[colour]],
            "rules": rules or query_rules(record), "komi": record.komi,
            "boardXSize": size, "boardYSize": size, "analyzeTurns": [index],
            "maxVisits": visits, "overrideSettings": {"reportAnalysisWinratesAs": report_as}}


class Tally:
    """A point's answers: Black's win chances and leads, the margins, visits, errors."""

    def __init__(self):
        self.black_win, self.black_lead, self.margin, self.visits = [], [], [], []
        self.errors = self.unanswered = 0


def remember(messages, text):
    if len(messages) < SHOWN_MESSAGES and text not in messages:
        messages.append(text)


def start_engine(command, log):
    engine = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=log)
    lines = queue.Queue()

    def read():
        for line in engine.stdout:
            lines.put(line)
        lines.put(None)                   # the engine closed its output

    threading.Thread(target=read, daemon=True).start()
    return engine, lines


def stop_engine(engine):
    if engine.poll() is None:
        engine.terminate()
        try:
            engine.wait(timeout=10)
        except subprocess.TimeoutExpired:
            engine.kill()
            engine.wait()


def next_line(lines, timeout):
    """The next line from the engine, None at the end of its output, TimeoutError after
    timeout seconds."""
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        raise TimeoutError from None


def ask(engine, lines, queries, timeout):
    """(answers, error messages, warning messages, error answers without an id, seconds):
    answers {id: the final answer, or None for an error}, without the queries left unanswered;
    seconds from the first query written to the last final answer read."""
    answers, error_messages, warning_messages, stray_errors = {}, [], [], 0

    def write():
        try:
            for query in queries.values():
                engine.stdin.write((json.dumps(query) + "\n").encode())
                engine.stdin.flush()
            engine.stdin.close()          # both engines finish what is open, then exit
        except (BrokenPipeError, OSError):
            pass

    started = finished = time.perf_counter()
    threading.Thread(target=write, daemon=True).start()
    while len(answers) < len(queries):
        try:
            line = next_line(lines, timeout)
        except TimeoutError:
            remember(error_messages, f"no answer for {timeout:g} s: "
                                     f"{len(queries) - len(answers)} queries left unanswered")
            break
        if line is None:
            remember(error_messages, f"the engine closed its output with "
                                     f"{len(queries) - len(answers)} queries unanswered")
            break
        try:
            answer = json.loads(line)
        except ValueError:
            remember(error_messages, f"not JSON: {line[:200]!r}")
            continue
        query_id = answer.get("id") if isinstance(answer, dict) else None
        if not isinstance(answer, dict) or query_id not in queries:
            if isinstance(answer, dict) and "error" in answer:
                stray_errors += 1
                remember(error_messages, f"error without a query's id: {answer['error']}")
            continue
        if "warning" in answer:
            remember(warning_messages, f"{answer.get('field', '')}: {answer['warning']}")
            continue
        if answer.get("isDuringSearch") is True or query_id in answers:
            continue
        finished = time.perf_counter()
        if "error" in answer:
            remember(error_messages, f"{answer.get('field', '')}: {answer['error']}")
            answers[query_id] = None
        elif answer.get("noResults"):
            remember(error_messages, "noResults")
            answers[query_id] = None
        else:
            root = answer.get("rootInfo") or {}
            if not all(isinstance(root.get(key), (int, float)) for key in ("winrate", "scoreLead")):
                remember(error_messages, f"an answer without rootInfo.winrate and scoreLead: "
                                         f"{line[:200]!r}")
                answers[query_id] = None
            else:
                answers[query_id] = answer
    return answers, error_messages, warning_messages, stray_errors, finished - started


def black_view(answer, to_move, report_as, warnings):
    """(Black's win chance, Black's lead, visits) of an answer given from report_as's side."""
    root = answer["rootInfo"]
    current = root.get("currentPlayer")
    if current is not None and current != COLOURS[to_move]:
        remember(warnings, f"rootInfo.currentPlayer {current} where {COLOURS[to_move]} is to move")
    win, lead = float(root["winrate"]), float(root["scoreLead"])
    if (report_as == "SIDETOMOVE" and to_move == WHITE) or report_as == "WHITE":
        win, lead = 1.0 - win, -lead
    return win, lead, root.get("visits")


def measure(args):
    """The result (a dict, as --json writes it) of a run; SystemExit for what cannot start."""
    counts = ReadCounts()
    positions, queries = {}, {}
    for point, record, index, margin, _ in counted_positions(args.sgf, args.size, args.games,
                                                             counts, args.points):
        query_id = f"{point}:{len(queries)}"
        positions[query_id] = (point, record, index, margin)
        queries[query_id] = position_query(query_id, record, index, args.visits, args.report_as,
                                           args.rules)
    if not queries:
        sys.exit(f"analysis_judgement: no counted positions in {' '.join(map(str, args.sgf))} "
                 f"({counts.summary()})")
    load_before = os.getloadavg()
    with tempfile.TemporaryFile() as log:
        try:
            engine, lines = start_engine(args.engine, log)
        except OSError as error:
            sys.exit(f"analysis_judgement: cannot start {args.engine!r}: {error}")
        try:
            version = None
            try:
                engine.stdin.write(b'{"id":"analysis_judgement:version","action":"query_version"}\n')
                engine.stdin.flush()
                first = next_line(lines, args.timeout)
            except (BrokenPipeError, OSError, TimeoutError):
                first = None
            if first is None:
                engine.kill()
                engine.wait()
                log.seek(0)
                tail = log.read().decode("utf-8", "replace")[-2000:]
                sys.exit(f"analysis_judgement: {args.engine!r} did not answer query_version "
                         f"within {args.timeout:g} s (exit status {engine.poll()}):\n{tail}")
            try:
                version = json.loads(first).get("version")
            except (ValueError, AttributeError):
                pass
            answers, errors, warnings, stray_errors, seconds = ask(engine, lines, queries,
                                                                   args.timeout)
        finally:
            stop_engine(engine)
    tallies = {point: Tally() for point in args.points}
    judged = []
    for query_id, (point, record, index, margin) in positions.items():
        tally = tallies[point]
        if query_id not in answers:
            tally.unanswered += 1
        elif answers[query_id] is None:
            tally.errors += 1
        else:
            win, lead, visits = black_view(answers[query_id], record.moves[index][0],
                                           args.report_as, warnings)
            judged.append({"id": query_id, "game": record.name, "date": record.date,
                           "move": index, "to_move": COLOURS[record.moves[index][0]],
                           "margin": margin, "black_win": win, "black_lead": lead,
                           "visits": visits})
            tally.black_win.append(win)
            tally.black_lead.append(lead)
            tally.margin.append(margin)
            if isinstance(visits, (int, float)):
                tally.visits.append(visits)
    table = {}
    for point, tally in tallies.items():
        asked = len(tally.margin) + tally.errors + tally.unanswered
        if not asked:
            continue
        row = judgement_row(tally.black_win, tally.black_lead, tally.margin) if tally.margin \
            else {"positions": 0}
        row.update(errors=tally.errors, unanswered=tally.unanswered,
                   mean_visits=sum(tally.visits) / len(tally.visits) if tally.visits else None)
        table[point] = row
    answered = sum(answer is not None for answer in answers.values())
    return {"engine": args.engine, "engine_version": version, "visits": args.visits,
            "report_as": args.report_as, "rules": args.rules or "from the records",
            "sgf": [str(path) for path in args.sgf], "games": args.games, "size": args.size,
            "points": args.points, "skipped": dict(counts.skipped), "queries": len(queries),
            "answered": answered, "errors": sum(t.errors for t in tallies.values()),
            "unanswered": sum(t.unanswered for t in tallies.values()),
            "errors_without_id": stray_errors, "error_messages": errors,
            "warning_messages": warnings, "seconds": seconds,
            "seconds_per_query": seconds / answered if answered else None,
            "load_average_before": load_before[0], "load_average_after": os.getloadavg()[0],
            "table": table, "positions": judged}


def print_result(result):
    for point, row in result["table"].items():
        problems = f"; {row['errors']} errors, {row['unanswered']} unanswered" \
            if row["errors"] or row["unanswered"] else ""
        if not row["positions"]:
            print(f"{point:>9}: no usable answer{problems}")
            continue
        visits = "" if row["mean_visits"] is None else f"; mean visits {row['mean_visits']:.0f}"
        print(f"{point:>9}: winner right by win rate {row['winner_by_win_rate']:.1%}, by score "
              f"lead {row['winner_by_score']:.1%}; Brier {row['brier']:.3f}; score error "
              f"{row['score_error']:.1f} points; {row['positions']} positions{visits}{problems}")
    per_query = "" if result["seconds_per_query"] is None else \
        f" ({result['seconds_per_query']:.3f} s a query)"
    print(f"{result['answered']} of {result['queries']} queries answered in "
          f"{result['seconds']:.1f} s{per_query}, maxVisits {result['visits']}; "
          f"{result['errors']} errors, {result['unanswered']} unanswered, "
          f"{result['errors_without_id']} errors without an id; load average "
          f"{result['load_average_before']:.2f} before, {result['load_average_after']:.2f} after")
    for kind in ("error", "warning"):
        for message in result[f"{kind}_messages"]:
            print(f"  {kind}: {message}")


def build_parser():
    parser = argparse.ArgumentParser(
        description="The judgement table of counted expert games through KataGo's JSON analysis "
                    "protocol (any engine that speaks it).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--engine", required=True,
                        help='the engine\'s command line, e.g. "kosumi analysis" or "katago '
                             'analysis -config analysis.cfg -model model.bin.gz"')
    parser.add_argument("--sgf", nargs="+", required=True, type=Path,
                        help="SGF files, directories, archives")
    parser.add_argument("--games", type=int, default=None, help="the first N counted games only")
    parser.add_argument("--visits", type=int, default=200, help="maxVisits of every query")
    parser.add_argument("--size", type=int, default=19, help="board size of the games")
    parser.add_argument("--points", type=parse_points, default="end-40=-40,move-150=150",
                        help="NAME=OFFSET,...: the positions judged, OFFSET moves from the "
                             "start, or from the end when below 0")
    parser.add_argument("--rules", default=None,
                        help="the rules of every query (default: from each record's RU: "
                             "chinese for area, japanese for territory, else chinese)")
    parser.add_argument("--report-as", choices=("BLACK", "WHITE", "SIDETOMOVE"), default="BLACK",
                        help="reportAnalysisWinratesAs asked for (turned to Black's view here)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds to wait for the next answer before the queries still "
                             "open count as unanswered")
    parser.add_argument("--json", type=Path, help="write the result here")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.visits < 1 or not args.timeout > 0:
        sys.exit("analysis_judgement: --visits must be at least 1, --timeout positive")
    result = measure(args)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print_result(result)
    return 0 if result["answered"] else 1


if __name__ == "__main__":
    sys.exit(main())
