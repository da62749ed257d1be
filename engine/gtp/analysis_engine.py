"""KataGo's JSON analysis protocol (`kosumi analysis`): queries in, answers out.

Reading order: `read_query()` turns a line into a JSON object or a `ProtocolError`;
`parse_query()` checks every field of an analysis query (in KataGo's order, with its messages)
and replays the game into one `PositionRequest` per analysed turn; `answer()` turns the search's
`SearchAnalysis` of such a position into KataGo's answer (`moveInfos`, `rootInfo`, `ownership`,
`policy`). The actions' own fields are read by `parse_terminate()`. The queue and the worker
threads are in analysis_queue.py, the command line in analysis_main.py; the protocol subset and
every choice made here are in docs/ANALYSIS_ENGINE.md.

Nothing is made up: a field kosumi has no estimate for (scoreStdev, utility, a prior where the
search has none and no policy net is loaded, the policy without a policy net) is left out, as
the protocol allows, and a requested one that is left out gets a warning with the query's id.
"""
import json
import math
import re
from dataclasses import dataclass
from typing import Optional

import numpy as np

from engine.play.restriction import ALLOW, AVOID, MoveRestriction, MoveRule
from engine.rules.board import BLACK, PASS, WHITE, IllegalMove
from engine.rules.coords import board_points, format_vertex, loc_of, parse_vertex
from engine.rules.game import GameState, Rules
from engine.gtp.sgffile import board_from_stones

MIN_SIZE, MAX_SIZE = 2, 25
MAX_PRIORITY = 2 ** 62
MAX_VISITS = 2 ** 50
MAX_KOMI = 400.0
PERSPECTIVES = ("BLACK", "WHITE", "SIDETOMOVE")
DIGITS = 6                      # decimals of the numbers in answers (KataGo: 8 significant)

# rule names (lower case, '_' and ' ' read as '-') -> (scoring, what kosumi plays differently)
RULE_NAMES = {
    "chinese": ("area", None), "cn": ("area", None), "chinese-ogs": ("area", None),
    "chinese-kgs": ("area", None), "aga": ("area", None), "bga": ("area", None),
    "french": ("area", None),
    "japanese": ("territory", None), "jp": ("territory", None),
    "korean": ("territory", None), "ko": ("territory", None),
    "tromp-taylor": ("area", "suicide"), "tt": ("area", "suicide"),
    "new-zealand": ("area", "suicide"), "nz": ("area", "suicide"),
    "stone-scoring": ("area", "stone scoring"),
}
DEFAULT_KOMI = {"area": 7.5, "territory": 6.5}     # KataGo's guess when a query gives none

# Top-level fields: read here; KataGo's that kosumi reads but cannot honour (a warning each)
FIELDS = {"id", "action", "moves", "initialStones", "initialPlayer", "rules", "komi",
          "boardXSize", "boardYSize", "analyzeTurns", "maxVisits", "includeOwnership",
          "includeMovesOwnership", "includePolicy", "avoidMoves", "allowMoves",
          "overrideSettings", "priority", "priorities", "reportDuringSearchEvery",
          "firstReportDuringSearchAfter", "analysisPVLen"}
IGNORED_BOOLEANS = ("includePVVisits", "includeOwnershipStdev", "includeMovesOwnershipStdev",
                    "includeNoResultValue")
IGNORED_NUMBERS = {"rootPolicyTemperature": (0.01, 100.0), "rootFpuReductionMax": (0.0, 2.0)}
# overrideSettings kosumi honours; any other key is reported as ignored
SETTINGS = ("reportAnalysisWinratesAs", "maxVisits", "maxPlayouts", "maxTime", "analysisPVLen")

BOARD_MOVES = 'Must be an array of pairs of the form: ["b" or "w", GTP board vertex]'
RULES_NEEDED = ('Must specify rules string, such as "chinese" or "tromp-taylor", or a JSON '
                'object with detailed rules parameters.')
AVOID_SHAPE = "Must be a list of dicts with subfields 'player', 'moves', 'untilDepth'"
ID_PATTERN = re.compile(r'"id"\s*:\s*"((?:[^"\\]|\\.)*)"')


class ProtocolError(Exception):
    """An error answer: {"error": message} with the query's id and the field when known."""

    def __init__(self, message, field=None, query_id=None):
        super().__init__(message)
        self.message, self.field, self.query_id = message, field, query_id

    def to_json(self):
        return error_json(self.message, self.field, self.query_id)


def error_json(message, field=None, query_id=None, kind="error"):
    result = {} if query_id is None else {"id": query_id}
    if field is not None:
        result["field"] = field
    result[kind] = message
    return result


@dataclass(frozen=True)
class AnalysisConfig:
    """Every query's defaults (the command line's options)."""
    max_visits: int = 500
    max_seconds: Optional[float] = None
    pv_length: int = 15
    perspective: str = "BLACK"      # reportAnalysisWinratesAs


@dataclass
class PositionRequest:
    """One turn of a query to analyse: the position, the budget and what the answer holds."""
    id: str
    turn: int
    state: GameState               # the colour to analyse for is state.to_move
    priority: int
    max_visits: int
    max_seconds: Optional[float]
    perspective: str
    pv_length: int
    include_ownership: bool
    include_moves_ownership: bool
    include_policy: bool
    restriction: Optional[MoveRestriction]
    report_every: Optional[float]          # seconds between isDuringSearch answers, or None
    first_report_after: Optional[float]


# --- reading a line -----------------------------------------------------------------------------

def _refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


def read_query(line):
    """The JSON object of an input line; ProtocolError (with the id when one can be read from a
    broken line) for anything else."""
    try:
        query = json.loads(line, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as error:
        found = ID_PATTERN.search(line)
        query_id = None
        if found:
            try:
                query_id = json.loads(f'"{found.group(1)}"')
            except ValueError:
                pass
        raise ProtocolError(f"{error} - could not parse input line as json request: "
                            f"{line[:200]}", query_id=query_id) from None
    if not isinstance(query, dict):
        raise ProtocolError("Request line was valid json but was not an object, ignoring: "
                            f"{json.dumps(query)[:200]}")
    query_id = query.get("id")
    if not isinstance(query_id, str):
        shown = query_id if isinstance(query_id, (int, float, bool)) else None
        raise ProtocolError('Request must have a string "id" field',
                            field="id" if "id" in query else None, query_id=shown)
    return query


# --- field readers: each raises ProtocolError(message, field, id) --------------------------------

class _Fields:
    def __init__(self, query):
        self.query, self.id = query, query["id"]

    def fail(self, field, message):
        raise ProtocolError(message, field, self.id)

    def integer(self, field, low, high, message, source=None):
        value = (self.query if source is None else source)[field]
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self.fail(field, message)
        return value

    def number(self, field, low, high, message, source=None):
        value = (self.query if source is None else source)[field]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value) or not low <= value <= high:
            self.fail(field, message)
        return float(value)

    def boolean(self, field):
        value = self.query[field]
        if not isinstance(value, bool):
            self.fail(field, "Must be a boolean")
        return value

    def integer_list(self, field, message):
        value = self.query[field]
        if not isinstance(value, list) or any(isinstance(x, bool) or not isinstance(x, int)
                                              for x in value):
            self.fail(field, message)
        return value

    def player(self, value, field):
        colour = parse_player(value)
        if colour is None:
            self.fail(field, 'Must be "b" or "w"')
        return colour

    def location(self, text, size, field, allow_pass):
        loc = parse_location(text, size) if isinstance(text, str) else None
        if loc is None or (loc == PASS and not allow_pass):
            self.fail(field, f"Could not parse board location: {text}")
        return loc

    def board_moves(self, field, size, allow_pass):
        value = self.query[field]
        if not isinstance(value, list):
            self.fail(field, BOARD_MOVES)
        moves = []
        for pair in value:
            if not isinstance(pair, list) or len(pair) != 2 or \
                    not all(isinstance(part, str) for part in pair):
                self.fail(field, BOARD_MOVES)
            colour = parse_player(pair[0])
            if colour is None:
                self.fail(field, f"Could not parse player: {pair[0]}")
            moves.append((colour, self.location(pair[1], size, field, allow_pass)))
        return moves


def parse_player(value):
    words = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}
    return words.get(value.lower()) if isinstance(value, str) else None


def parse_location(text, size):
    """A GTP vertex (any case), `pass`, or KataGo's `(x,y)` with y counted from the top; loc,
    PASS or None."""
    text = text.strip()
    match = re.fullmatch(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)", text)
    if match:
        x, y = int(match.group(1)), int(match.group(2))
        return loc_of(y, x, size) if x < size and y < size else None
    try:
        return parse_vertex(text, size)
    except ValueError:
        return None


def parse_rules(fields):
    """(scoring, warning or None) from the query's rules: a name or KataGo's rules object."""
    if "rules" not in fields.query:
        fields.fail("rules", RULES_NEEDED)
    rules = fields.query["rules"]
    if isinstance(rules, str):
        name = re.sub(r"[_ ]", "-", rules.strip().lower())
        if name not in RULE_NAMES:
            fields.fail("rules", f"Could not parse rules: {rules}")
        scoring, differs = RULE_NAMES[name]
    elif isinstance(rules, dict):
        scoring_name = rules.get("scoring", rules.get("scoringRule"))
        if not isinstance(scoring_name, str) or scoring_name.upper() not in ("AREA", "TERRITORY"):
            fields.fail("rules", f"Could not parse rules: {json.dumps(rules)}")
        scoring = scoring_name.lower()
        differs = "suicide" if rules.get("suicide", rules.get("multiStoneSuicideLegal")) \
            else None
    else:
        fields.fail("rules", RULES_NEEDED)
    warning = None if differs is None else \
        (f"Rules {json.dumps(rules)} not supported by kosumi ({differs}), using {scoring} "
         f"scoring with positional superko and no suicide instead")
    return scoring, warning


def parse_move_rules(fields, size):
    """MoveRestriction from avoidMoves or allowMoves (not both; allowMoves once per player)."""
    query = fields.query
    if "allowMoves" in query and "avoidMoves" in query:
        fields.fail("allowMoves", "Cannot specify both allowMoves and avoidMoves")
    field = "allowMoves" if "allowMoves" in query else "avoidMoves"
    if field not in query:
        return None
    entries = query[field]
    if not isinstance(entries, list):
        fields.fail(field, AVOID_SHAPE)
    if field == "allowMoves" and len(entries) > 2:
        fields.fail(field, "Currently allowMoves only allows at most one entry per player")
    rules, allowed_players = [], set()
    for entry in entries:
        if not isinstance(entry, dict) or not {"moves", "untilDepth", "player"} <= set(entry):
            fields.fail(field, AVOID_SHAPE)
        colour = fields.player(entry["player"], "player")
        if not isinstance(entry["moves"], list):
            fields.fail("moves", "Must be an array of GTP board vertices")
        moves = []
        for text in entry["moves"]:
            if not isinstance(text, str):
                fields.fail("moves", "Must be an array of GTP board vertices")
            moves.append(fields.location(text, size, "moves", allow_pass=True))
        depth = fields.integer("untilDepth", 1, 1_000_000_000, "Must be a positive integer",
                               source=entry)
        if field == "allowMoves":
            if colour in allowed_players:
                fields.fail(field, "Cannot specify allowMoves more than once for the same player")
            allowed_players.add(colour)
        rules.append(MoveRule(ALLOW if field == "allowMoves" else AVOID, colour,
                              frozenset(moves), depth))
    return MoveRestriction(tuple(rules)) if rules else None


def parse_settings(fields, config, warnings):
    """(perspective, max visits or None, max seconds or None, pv length or None) from
    overrideSettings; a warning names the settings kosumi has no use for. Errors name the
    field overrideSettings, as KataGo's do."""
    if "overrideSettings" not in fields.query:
        return config.perspective, None, None, None
    try:
        return _read_settings(fields, config, warnings)
    except ProtocolError as error:
        raise ProtocolError(error.message, "overrideSettings", fields.id) from None


def _read_settings(fields, config, warnings):
    perspective, visits, seconds, pv_length = config.perspective, None, None, None
    settings = fields.query["overrideSettings"]
    if not isinstance(settings, dict):
        fields.fail("overrideSettings", "Must be an object")
    for key in ("maxVisits", "maxPlayouts"):
        if key in settings:
            visits = fields.integer(key, 1, MAX_VISITS, f"Could not set settings: {key} must be "
                                    "an integer from 1 to 2^50", source=settings)
    if "maxTime" in settings:
        seconds = fields.number("maxTime", 0.0, 1e9, "Could not set settings: maxTime must be "
                                "a number of seconds from 0 to 1e9", source=settings)
        seconds = None if seconds == 0 else seconds
    if "analysisPVLen" in settings:
        pv_length = fields.integer("analysisPVLen", 1, 1000, "Could not set settings: "
                                   "analysisPVLen must be an integer from 1 to 1000",
                                   source=settings)
    if "reportAnalysisWinratesAs" in settings:
        value = settings["reportAnalysisWinratesAs"]
        if not isinstance(value, str) or value.upper() not in PERSPECTIVES:
            fields.fail("overrideSettings", "Could not set settings: reportAnalysisWinratesAs "
                        "must be BLACK, WHITE or SIDETOMOVE")
        perspective = value.upper()
    ignored = sorted(key for key in settings if key not in SETTINGS)
    if ignored:
        warnings.append(error_json(f"Settings kosumi's search does not have, ignored: "
                                   f"{','.join(ignored)}", "overrideSettings", fields.id,
                                   "warning"))
    return perspective, visits, seconds, pv_length


# --- a query ------------------------------------------------------------------------------------

def parse_query(query, config):
    """(requests, warnings) for an analysis query (a dict with a string id and no action): one
    PositionRequest per analysed turn, in turn order; warnings as answers to write. Raises
    ProtocolError, naming the field, for anything the query gets wrong."""
    fields = _Fields(query)
    warnings = []
    size_error = f"Must provide an integer from {MIN_SIZE} to {MAX_SIZE}"
    for field in ("boardXSize", "boardYSize"):
        if field not in query:
            fields.fail(field, size_error)
    width = fields.integer("boardXSize", MIN_SIZE, MAX_SIZE, size_error)
    size = fields.integer("boardYSize", MIN_SIZE, MAX_SIZE, size_error)
    if width != size:
        fields.fail("boardYSize", "kosumi plays square boards only: boardXSize and "
                                  "boardYSize must be equal")
    placements = fields.board_moves("initialStones", size, False) \
        if "initialStones" in query else []
    if "moves" not in query:
        fields.fail("moves", "Must specify an array of [player,location] pairs")
    moves = fields.board_moves("moves", size, True)
    initial_player = fields.player(query["initialPlayer"], "initialPlayer") \
        if "initialPlayer" in query else None
    turns = [len(moves)]
    if "analyzeTurns" in query:
        turns = fields.integer_list("analyzeTurns", "Must specify an array of integers "
                                                    "indicating turns to analyze")
        for turn in turns:
            if not 0 <= turn <= len(moves):
                fields.fail("analyzeTurns", f"Invalid turn number: {turn}")
    priorities = {}
    if "priorities" in query:
        values = fields.integer_list("priorities", "Must specify an array of integers "
                                                   "indicating priorities")
        if "analyzeTurns" not in query:
            fields.fail("priorities", "Can only specify when also specifying analyzeTurns")
        if len(values) != len(turns):
            fields.fail("priorities", "Must be of matching length to analyzeTurns")
        for turn, priority in zip(turns, values):
            if not -MAX_PRIORITY < priority < MAX_PRIORITY:
                fields.fail("priorities", f"Invalid priority: {priority}")
            priorities[turn] = priority
    scoring, rules_warning = parse_rules(fields)
    if rules_warning:
        warnings.append(error_json(rules_warning, "rules", fields.id, "warning"))
    komi = DEFAULT_KOMI[scoring]
    if "komi" in query:
        komi = fields.number("komi", -MAX_KOMI, MAX_KOMI,
                             "Must be a number from -400.0 to 400.0")
    perspective, visits, seconds, pv_length = parse_settings(fields, config, warnings)
    if "maxVisits" in query:
        visits = fields.integer("maxVisits", 1, MAX_VISITS, "Must be an integer from 1 to 2^50")
    if "analysisPVLen" in query:
        pv_length = fields.integer("analysisPVLen", 1, 1000, "Must be an integer from 1 to 1000")
    for field, (low, high) in IGNORED_NUMBERS.items():
        if field in query:
            fields.number(field, low, high, f"Must be a number from {low} to {high}")
    flags = {}
    for field in ("includeOwnership", "includeMovesOwnership", "includePolicy",
                  *IGNORED_BOOLEANS):
        flags[field] = fields.boolean(field) if field in query else False
    report_every = first_report = None
    if "reportDuringSearchEvery" in query:
        report_every = first_report = fields.number(
            "reportDuringSearchEvery", 0.001, 1e6,
            "Must be number of seconds from 0.001 to 1000000.0")
    if "firstReportDuringSearchAfter" in query:
        first_report = fields.number("firstReportDuringSearchAfter", 0.001, 1e6,
                                     "Must be number of seconds from 0.001 to 1000000.0")
    priority = 0
    if "priority" in query:
        if "priorities" in query:
            fields.fail("priority", "Cannot specify both priority and priorities")
        priority = fields.integer("priority", -MAX_PRIORITY + 1, MAX_PRIORITY - 1,
                                  "Must be a number between -2^62 and 2^62")
    restriction = parse_move_rules(fields, size)

    stones = {loc: colour for colour, loc in placements}
    try:
        board = board_from_stones(size, stones)
    except ValueError as error:
        fields.fail("initialStones", f"Impossible position: {error}")
    if initial_player is None:
        if moves:
            initial_player = moves[0][0]
        else:
            black = sum(colour == BLACK for colour in stones.values())
            initial_player = WHITE if black >= 2 and black == len(stones) else BLACK
    for field in sorted(set(query) - FIELDS):
        message = "Not supported by kosumi, ignored" if \
            field in IGNORED_BOOLEANS or field in IGNORED_NUMBERS or field == "whiteHandicapBonus" \
            else "Unexpected or unused field, do you have a typo?"
        warnings.append(error_json(message, field, fields.id, "warning"))

    rules = Rules(ko="positional", suicide=False, scoring=scoring, komi=komi)
    state = GameState.from_board(board, initial_player, rules)
    wanted = set(turns)
    positions = {}
    for turn in range(len(moves) + 1):
        if turn in wanted:
            positions[turn] = state.copy()
        if turn == len(moves):
            break
        colour, loc = moves[turn]
        try:
            state.play(loc, colour, tolerant=True)   # the game's record referees, as KataGo's
        except IllegalMove:
            fields.fail("moves", f"Illegal move {turn}: {format_vertex(loc, size)}")
    requests = [PositionRequest(
        id=fields.id, turn=turn, state=positions[turn], priority=priorities.get(turn, priority),
        max_visits=config.max_visits if visits is None else visits,
        max_seconds=config.max_seconds if seconds is None else seconds,
        perspective=perspective, pv_length=config.pv_length if pv_length is None else pv_length,
        include_ownership=flags["includeOwnership"],
        include_moves_ownership=flags["includeMovesOwnership"],
        include_policy=flags["includePolicy"], restriction=restriction,
        report_every=report_every, first_report_after=first_report)
        for turn in sorted(wanted)]
    return requests, warnings


def parse_terminate(query):
    """(terminateId or None for terminate_all, turn numbers or None) of a terminate action."""
    fields = _Fields(query)
    terminate_id = None
    if query["action"] == "terminate":
        terminate_id = query.get("terminateId")
        if not isinstance(terminate_id, str):
            fields.fail("terminateId", 'Requests for a terminate action must have a string '
                                       '"terminateId" field')
    turns = None
    if "turnNumbers" in query:
        turns = set(fields.integer_list("turnNumbers", "If provided, must be an array of "
                                                       "integers indicating turns to terminate"))
    return terminate_id, turns


# --- answers ------------------------------------------------------------------------------------

def _number(value):
    return round(float(value), DIGITS)


def _flips_values(perspective, colour):
    """Whether values for `colour` (the side to move) are reported from the other side."""
    return (perspective == "BLACK" and colour == WHITE) or \
        (perspective == "WHITE" and colour == BLACK)


def ownership_list(ownership, size, perspective, colour):
    """A (num_locs,) ownership, +1 Black, as KataGo's array: row-major from the top left (A19
    on 19x19) to the bottom right, +1 for the reported side (BLACK, WHITE, or SIDETOMOVE: the
    side to move)."""
    black_positive = perspective == "BLACK" or (perspective == "SIDETOMOVE" and colour == BLACK)
    sign = 1.0 if black_positive else -1.0
    values = np.asarray(ownership, dtype=float)[board_points(size)]
    return [_number(sign * value) for value in np.clip(values, -1.0, 1.0)]


def policy_list(probabilities, state):
    """A policy net's (num_locs + 1,) probabilities (pass last) as KataGo's policy array:
    row-major from the top left, then pass; -1 at the points the side to move may not play
    (superko included), the others rescaled to sum to 1."""
    legal = set(state.legal_moves(state.to_move))
    points = board_points(state.size)
    values = np.array([probabilities[loc] if loc in legal else 0.0 for loc in points] +
                      [probabilities[-1]], dtype=float)
    total = values.sum()
    if total > 0:
        values /= total
    return [_number(value) if loc in legal or loc == PASS else -1
            for loc, value in zip(points + [PASS], values)]


def no_results(request):
    """The answer to a terminated request that was never searched."""
    return {"id": request.id, "turnNumber": request.turn, "isDuringSearch": False,
            "noResults": True}


def answer(request, analysis, during_search, policy=None, move_prior=None,
           move_ownership=None):
    """KataGo's answer for a position from kosumi's SearchAnalysis (visited moves only, most
    visited first). policy: KataGo's policy array, or None to leave it out; move_prior(move):
    the policy net's prior for moves the search has none for (or None); move_ownership(move):
    the (num_locs,) ownership after a move (+1 Black), or None where kosumi has none."""
    size = request.state.size
    colour = analysis.colour
    flip = _flips_values(request.perspective, colour)
    infos = []
    ranked = [entry for entry in analysis.ranked() if entry[1] > 0]
    for order, (move, visits, winrate, score, prior, pv) in enumerate(ranked):
        lcb = winrate - 2.0 * math.sqrt(winrate * (1.0 - winrate) / visits)
        if flip:
            winrate, lcb, score = 1.0 - winrate, 1.0 - lcb, -score
        info = {"move": format_vertex(move, size), "visits": int(visits),
                "winrate": _number(winrate), "scoreLead": _number(score),
                "scoreMean": _number(score), "lcb": _number(lcb), "order": order,
                "pv": [format_vertex(m, size) for m in (pv or [move])[:request.pv_length]]}
        if prior is None and move_prior is not None:
            prior = move_prior(move)
        if prior is not None:
            info["prior"] = _number(prior)
        if move_ownership is not None:
            ownership = move_ownership(move)
            if ownership is not None:
                info["ownership"] = ownership_list(ownership, size, request.perspective,
                                                   colour)
        infos.append(info)
    visits = np.array([entry[1] for entry in ranked], dtype=float)
    root_winrate = analysis.root_winrate
    root_score = float(np.dot(visits, [entry[3] for entry in ranked]) / visits.sum())
    if flip:
        root_winrate, root_score = 1.0 - root_winrate, -root_score
    result = {"id": request.id, "turnNumber": request.turn, "isDuringSearch": during_search,
              "moveInfos": infos,
              "rootInfo": {"visits": int(visits.sum()), "winrate": _number(root_winrate),
                           "scoreLead": _number(root_score),
                           "currentPlayer": "B" if colour == BLACK else "W"}}
    if request.include_ownership:
        result["ownership"] = ownership_list(analysis.ownership, size, request.perspective,
                                             colour)
    if policy is not None:
        result["policy"] = policy
    return result


def encode(message):
    """One line of output (strict JSON: a NaN would be a bug, and raises here)."""
    return json.dumps(message, allow_nan=False, separators=(",", ":")) + "\n"
