"""`kosumi analysis`, KataGo's JSON analysis protocol (docs/ANALYSIS_ENGINE.md): queries and
their answers, errors and warnings with the query's id, the actions, priorities and
pre-emption, terminate, answers during the search, the real process on pipes (a fuzz of 1,000
malformed lines, a 9x9 game analysed), the queries KaTrain 1.20 sent in a recorded session
(tests/data/katrain_queries.jsonl), and KaTrain's own engine class when katrain is installed.

Servers run with the uniform evaluator (an area count) and small budgets, never the shipped
weights, except where the value net's own output is the subject."""
import json
import random
import shlex
import subprocess
import sys
import threading
import time

import pytest
from sgfmill import sgf

from engine.gtp.analysis_engine import ProtocolError, read_query
from engine.gtp.analysis_main import build_parser, build_server
from engine.gtp.analysis_queue import Job, JobQueue
from tests.paths import DATA, REPO, SGF

RECORDED = DATA / "katrain_queries.jsonl"
ENGINE = [sys.executable, str(REPO / "gtp_server.py"), "analysis", "--evaluator", "uniform",
          "--policy", "none", "--seed", "5"]
BASE = {"rules": "chinese", "komi": 7, "boardXSize": 9, "boardYSize": 9, "moves": []}
# Black owns rows 1-6 with one-point eyes, White rows 8-9: Black leads by about 30 points, and
# nothing can be invaded
AHEAD_DIAGRAM = """
    O.O.O.O.O
    OOOOOOOOO
    .........
    XXXXXXXXX
    X.X.X.X.X
    XXXXXXXXX
    X.X.X.X.X
    XXXXXXXXX
    X.X.X.X.X
"""


def stones(diagram):
    rows = diagram.split()
    return [["B" if stone == "X" else "W", f"{'ABCDEFGHJ'[col]}{len(rows) - row}"]
            for row, text in enumerate(rows) for col, stone in enumerate(text) if stone in "XO"]


AHEAD = {**BASE, "initialPlayer": "W", "initialStones": stones(AHEAD_DIAGRAM)}


# --- an in-process server ------------------------------------------------------------------------

class Sink:
    """The server's output: answers as parsed JSON, and a way to wait for them."""

    def __init__(self):
        self.answers = []
        self._condition = threading.Condition()

    def write(self, data):
        with self._condition:
            for line in data.decode("utf-8").splitlines():
                self.answers.append(json.loads(line))
            self._condition.notify_all()

    def flush(self):
        pass

    def wait_for(self, predicate, timeout=10.0):
        """The answers once predicate(answers) holds; fails after timeout."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while not predicate(self.answers):
                left = deadline - time.monotonic()
                assert left > 0, f"timed out; answers so far: {self.answers}"
                self._condition.wait(left)
            return list(self.answers)


def finals(answers, query_id):
    return [a for a in answers if a.get("id") == query_id and a.get("isDuringSearch") is False]


class Session:
    def __init__(self, *options, workers=1, predictor=None, evaluator=None):
        from engine.nets.evaluator import UniformEvaluator
        args = build_parser().parse_args(["--evaluator", "uniform", "--seed", "3",
                                          "--workers", str(workers), *options])
        self.sink = Sink()
        self.server = build_server(args, self.sink, evaluator or UniformEvaluator(), predictor)

    def send(self, query):
        self.server.handle(json.dumps(query))

    def answer(self, query, timeout=10.0):
        """Send an analysis query of one turn; its final answer."""
        self.send(query)
        answers = self.sink.wait_for(lambda a: finals(a, query["id"]) or
                                     any(x.get("id") == query["id"] and "error" in x for x in a),
                                     timeout)
        errors = [a for a in answers if a.get("id") == query["id"] and "error" in a]
        assert not errors, errors
        return finals(answers, query["id"])[0]

    def close(self):
        self.server.close(wait=False)


@pytest.fixture
def session():
    opened = []

    def make(*options, **keywords):
        opened.append(Session(*options, **keywords))
        return opened[-1]

    yield make
    for each in opened:
        each.close()


# --- answers --------------------------------------------------------------------------------------

def test_each_analysed_turn_gets_one_answer_with_katrains_fields(session):
    server = session(workers=2)
    server.send({**BASE, "id": "game", "moves": [["B", "E5"], ["W", "C3"], ["B", "G7"]],
                 "analyzeTurns": [0, 1, 3], "maxVisits": 40, "includeOwnership": True,
                 "analysisPVLen": 3})
    answers = server.sink.wait_for(lambda a: len(finals(a, "game")) == 3)
    assert sorted(a["turnNumber"] for a in answers) == [0, 1, 3]
    for result in answers:
        infos, root = result["moveInfos"], result["rootInfo"]
        assert infos and [info["order"] for info in infos] == list(range(len(infos)))
        assert root["visits"] == sum(info["visits"] for info in infos) <= 40
        assert root["currentPlayer"] == "BW"[result["turnNumber"] % 2]
        for info in infos:
            assert {"move", "visits", "winrate", "scoreLead", "scoreMean", "lcb", "order",
                    "pv"} <= set(info)
            assert info["visits"] > 0 and 0 <= info["winrate"] <= 1
            assert info["pv"][0] == info["move"] and len(info["pv"]) <= 3
            assert "prior" not in info or 0 <= info["prior"] <= 1
        assert len(result["ownership"]) == 81 and all(-1 <= o <= 1 for o in result["ownership"])
        assert "policy" not in result and "scoreStdev" not in infos[0]


@pytest.mark.parametrize("perspective,sign", [("BLACK", 1), ("WHITE", -1), ("SIDETOMOVE", -1)])
def test_values_and_ownership_are_reported_for_the_chosen_side(session, perspective, sign):
    """Black is far ahead, White to move: values flip with reportAnalysisWinratesAs, and the
    ownership runs row by row from A9 (White's top) to J1 (Black's bottom)."""
    result = session().answer({**AHEAD, "id": "p", "maxVisits": 100, "includeOwnership": True,
                               "overrideSettings": {"reportAnalysisWinratesAs": perspective}})
    root = result["rootInfo"]
    assert sign * (root["winrate"] - 0.5) > 0.4 and sign * root["scoreLead"] > 15
    for info in result["moveInfos"]:
        assert sign * (info["winrate"] - 0.5) > 0.3 and sign * info["scoreLead"] > 10
    ownership = result["ownership"]
    assert sign * ownership[0] < -0.9 and sign * ownership[80] > 0.9   # A9 White's, J1 Black's
    assert sign * ownership[4 * 9 + 4] > 0.9                          # E5: a black stone


def test_avoid_and_allow_moves_restrict_the_root(session):
    server = session()
    allowed = server.answer({**BASE, "id": "allow", "maxVisits": 60, "allowMoves": [
        {"player": "B", "moves": ["C3", "G7"], "untilDepth": 1}]})
    assert {info["move"] for info in allowed["moveInfos"]} <= {"C3", "G7"}
    avoided = server.answer({**BASE, "id": "avoid", "maxVisits": 60, "avoidMoves": [
        {"player": "B", "moves": ["E5", "C3", "G7", "C7", "G3"], "untilDepth": 1}]})
    assert not {info["move"] for info in avoided["moveInfos"]} & {"E5", "C3", "G7", "C7", "G3"}


def test_setup_stones_initial_player_and_a_controllers_repeated_colour(session):
    server = session()
    handicap = server.answer({**BASE, "id": "h", "maxVisits": 20,
                              "initialStones": [["B", "C3"], ["B", "G7"]]})
    assert handicap["rootInfo"]["currentPlayer"] == "W"      # KataGo's guess: handicap
    twice = server.answer({**BASE, "id": "t", "maxVisits": 20,
                           "moves": [["B", "E5"], ["B", "(2,6)"]]})   # (x,y) from the top: C3
    assert twice["rootInfo"]["currentPlayer"] == "W" and twice["turnNumber"] == 2
    assert "C3" not in {info["move"] for info in twice["moveInfos"]}


def test_report_during_search_then_exactly_one_final_answer(session):
    server = session()
    server.send({**BASE, "boardXSize": 19, "boardYSize": 19, "id": "r", "maxVisits": 10 ** 7,
                 "reportDuringSearchEvery": 0.05, "overrideSettings": {"maxTime": 0.6}})
    answers = server.sink.wait_for(lambda a: finals(a, "r"), timeout=5)
    time.sleep(0.2)
    answers = [a for a in server.sink.answers if a.get("id") == "r"]
    partial = [a for a in answers if a["isDuringSearch"]]
    assert len(partial) >= 3 and answers[-1]["isDuringSearch"] is False
    assert len(finals(answers, "r")) == 1
    visits = [a["rootInfo"]["visits"] for a in answers]
    assert visits == sorted(visits)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_policy_and_priors_from_a_policy_net(session, tmp_path, precision):
    policy = pytest.importorskip("engine.nets.policy")
    from engine.gtp.options import load_predictor
    net = policy.PolicyNet({"kind": "conv", "channels": 4, "layers": 2, "first_kernel": 3},
                           "rich", seed=1)
    path = tmp_path / "policy.npz"
    policy.save_policy(path, net, 9, games_trained=0, positions_trained=0)
    args = build_parser().parse_args(["--policy", str(path), "--policy-precision", precision])
    predictor = load_predictor(args.policy, precision=args.policy_precision)   # as main() loads it
    assert predictor.forward.precision == precision
    server = session(predictor=predictor)
    result = server.answer({**BASE, "id": "pol", "maxVisits": 20, "includePolicy": True,
                            "moves": [["B", "E5"]]})
    values = result["policy"]
    assert len(values) == 82 and values[4 * 9 + 4] == -1            # E5 is taken
    assert abs(sum(v for v in values if v != -1) - 1) < 1e-3
    assert all(0 <= info["prior"] <= 1 for info in result["moveInfos"])


def test_the_value_nets_ownership_after_each_move_where_the_search_uses_the_net():
    # the RAVE tree over the soft-segmentation net, which it asks below 13 lines only
    from engine.nets.weights import DEFAULT_WEIGHTS
    from engine.play.search_player import load_prior_evaluator
    args = build_parser().parse_args(["--seed", "1", "--workers", "1"])
    sink = Sink()
    server = build_server(args, sink, load_prior_evaluator(DEFAULT_WEIGHTS))
    try:
        server.handle(json.dumps({**BASE, "id": "m", "maxVisits": 30,
                                  "includeMovesOwnership": True}))
        server.handle(json.dumps({**BASE, "id": "big", "boardXSize": 19, "boardYSize": 19,
                                  "maxVisits": 30, "includeMovesOwnership": True}))
        answers = sink.wait_for(lambda a: finals(a, "m") and finals(a, "big"))
    finally:
        server.close()
    assert all(len(info["ownership"]) == 81 for info in finals(answers, "m")[0]["moveInfos"])
    assert "ownership" not in finals(answers, "big")[0]["moveInfos"][0]
    assert [a["field"] for a in answers if a.get("id") == "big" and "warning" in a] == \
        ["includeMovesOwnership"]


def test_the_default_analysis_judges_each_board_size_with_its_own_net(session):
    # kosumi analysis without --weights: PUCT over the shipped judging net of each query's size
    from engine.nets.evaluator import JudgeEvaluator, JudgeMoves
    from engine.nets.weights import DEFAULT_JUDGES
    from engine.play.search_player import load_prior_evaluator

    def answer(evaluator, query):
        return session(evaluator=evaluator, predictor=JudgeMoves(evaluator)).answer(query)

    small = {**BASE, "id": "small", "maxVisits": 8, "includeOwnership": True,
             "includePolicy": True}
    big = {**BASE, "id": "big", "boardXSize": 19, "boardYSize": 19, "maxVisits": 8,
           "includeMovesOwnership": True}
    default = load_prior_evaluator()
    assert all(len(info["ownership"]) == 361 for info in answer(default, big)["moveInfos"])
    policy = answer(default, small)["policy"]
    (_, small_net), (_, large_net) = DEFAULT_JUDGES
    alone = [answer(JudgeEvaluator.load(path), small)["policy"] for path in (small_net, large_net)]
    assert policy == pytest.approx(alone[0], abs=1e-6)
    assert policy != pytest.approx(alone[1], abs=1e-3)


# --- errors and warnings --------------------------------------------------------------------------

VALID = {**BASE, "id": "e", "moves": [["B", "E5"]]}
BAD_FIELDS = [
    ({"boardXSize": None}, "boardXSize"), ({"boardXSize": 30}, "boardXSize"),
    ({"boardYSize": "9"}, "boardYSize"), ({"boardYSize": 13}, "boardYSize"),
    ({"moves": None}, "moves"), ({"moves": [["B"]]}, "moves"), ({"moves": [["X", "E5"]]}, "moves"),
    ({"moves": [["B", "Z9"]]}, "moves"), ({"moves": [["B", "E5"], ["W", "E5"]]}, "moves"),
    ({"moves": "E5"}, "moves"), ({"initialStones": [["B", "pass"]]}, "initialStones"),
    ({"initialStones": [["B", "A1"], ["W", "A2"], ["W", "B1"]]}, "initialStones"),
    ({"initialPlayer": "red"}, "initialPlayer"), ({"analyzeTurns": [5]}, "analyzeTurns"),
    ({"analyzeTurns": "0"}, "analyzeTurns"), ({"rules": None}, "rules"), ({"rules": "go"}, "rules"),
    ({"rules": 3}, "rules"), ({"rules": {"ko": "SIMPLE"}}, "rules"), ({"komi": "7"}, "komi"),
    ({"komi": 1000}, "komi"), ({"maxVisits": 0}, "maxVisits"), ({"maxVisits": 1.5}, "maxVisits"),
    ({"maxVisits": True}, "maxVisits"), ({"includeOwnership": "yes"}, "includeOwnership"),
    ({"includePolicy": 1}, "includePolicy"), ({"includePVVisits": 1}, "includePVVisits"),
    ({"reportDuringSearchEvery": 0}, "reportDuringSearchEvery"),
    ({"priority": "high"}, "priority"),
    ({"analyzeTurns": [1], "priorities": [1], "priority": 1}, "priority"),
    ({"priorities": [1]}, "priorities"),
    ({"analyzeTurns": [0, 1], "priorities": [1]}, "priorities"),
    ({"overrideSettings": []}, "overrideSettings"),
    ({"overrideSettings": {"reportAnalysisWinratesAs": "RED"}}, "overrideSettings"),
    ({"overrideSettings": {"maxTime": -1}}, "overrideSettings"),
    ({"avoidMoves": [], "allowMoves": []}, "allowMoves"), ({"avoidMoves": {}}, "avoidMoves"),
    ({"avoidMoves": [{"player": "B", "moves": ["E5"]}]}, "avoidMoves"),
    ({"avoidMoves": [{"player": "B", "moves": ["Z1"], "untilDepth": 1}]}, "moves"),
    ({"avoidMoves": [{"player": "B", "moves": ["E5"], "untilDepth": 0}]}, "untilDepth"),
    ({"avoidMoves": [{"player": "Q", "moves": ["E5"], "untilDepth": 1}]}, "player"),
    ({"allowMoves": [{"player": "B", "moves": ["E5"], "untilDepth": 1}] * 2}, "allowMoves"),
    ({"analysisPVLen": 0}, "analysisPVLen"), ({"action": 5}, "action"),
    ({"action": "terminate"}, "terminateId"),
    ({"action": "terminate", "terminateId": "x", "turnNumbers": "1"}, "turnNumbers"),
    ({"action": "dance"}, "action"),
]


def malformed(change):
    query = dict(VALID, **change)
    return {key: value for key, value in query.items() if value is not None}


@pytest.mark.parametrize("change,field", BAD_FIELDS)
def test_each_bad_field_is_an_error_naming_it_with_the_id(session, change, field):
    server = session()
    server.send(malformed(change))
    answers = server.sink.wait_for(lambda a: a)
    assert answers == [answers[0]] and answers[0]["id"] == "e" and answers[0]["field"] == field
    assert answers[0]["error"]


def test_lines_that_are_not_queries():
    with pytest.raises(ProtocolError) as error:
        read_query('{"id":"cut","moves":[["B","E5"],')
    assert error.value.query_id == "cut"
    with pytest.raises(ProtocolError) as error:
        read_query('[1, 2]')
    assert error.value.query_id is None and "not an object" in error.value.message
    with pytest.raises(ProtocolError) as error:
        read_query('{"id": 12}')
    assert error.value.query_id == 12 and error.value.field == "id"
    for line in ('{"id":"n","komi":NaN}', "[" * 100000, "\x00\xff"):
        with pytest.raises(ProtocolError):
            read_query(line)


def test_warnings_for_what_kosumi_ignores_then_the_answer(session):
    server = session()
    result = server.answer({**BASE, "id": "w", "maxVisits": 10, "includePolicy": True,
                            "rootPolicyTemperature": 2.0, "colour": "b",
                            "rules": "tromp-taylor",
                            "overrideSettings": {"wideRootNoise": 0.04, "maxTime": 5}})
    warnings = {a["field"] for a in server.sink.answers if "warning" in a}
    assert warnings == {"includePolicy", "rootPolicyTemperature", "colour", "rules",
                        "overrideSettings"}
    assert result["rootInfo"]["visits"] <= 10 and "policy" not in result


# --- actions, priorities, terminate ---------------------------------------------------------------

def test_query_version_and_clear_cache_echo_the_query(session):
    server = session()
    server.send({"id": "v", "action": "query_version", "extra": [1]})
    server.send({"id": "c", "action": "clear_cache"})
    version, cleared = server.sink.wait_for(lambda a: len(a) == 2)
    assert version["extra"] == [1] and version["version"] and "git_hash" in version
    assert cleared == {"id": "c", "action": "clear_cache"}


def test_job_queue_takes_the_highest_priority_then_the_earliest():
    queue = JobQueue()
    jobs = [Job(type("R", (), {"priority": p})(), i) for i, p in enumerate([0, 5, 5, -1, 9])]
    for job in jobs:
        queue.put(job)
    jobs[4].finished = True                        # terminated while queued: skipped
    assert queue.take_above(5) is None
    assert [queue.take().sequence for _ in range(4)] == [1, 2, 0, 3]


def test_terminate_answers_the_running_search_at_once_and_the_queued_with_no_results(session):
    server = session()
    big = {**BASE, "boardXSize": 19, "boardYSize": 19, "maxVisits": 10 ** 7}
    server.send({**big, "id": "long", "analyzeTurns": [0], "moves": [["B", "Q16"]]})
    server.send({**big, "id": "long", "analyzeTurns": [1], "moves": [["B", "Q16"]],
                 "priority": -5})
    time.sleep(0.3)
    started = time.monotonic()
    server.send({"id": "stop", "action": "terminate", "terminateId": "long"})
    answers = server.sink.wait_for(lambda a: len(finals(a, "long")) == 2)
    assert time.monotonic() - started < 2.0
    done = {a["turnNumber"]: a for a in finals(answers, "long")}
    assert done[1] == {"id": "long", "turnNumber": 1, "isDuringSearch": False, "noResults": True}
    assert done[0]["rootInfo"]["visits"] > 0
    assert {"id": "stop", "action": "terminate", "terminateId": "long"} in answers


def test_terminate_all_by_turn(session):
    server = session()
    server.send({**BASE, "id": "g", "moves": [["B", "E5"], ["W", "C3"]], "maxVisits": 10 ** 7,
                 "analyzeTurns": [0, 1, 2]})
    server.send({"id": "all", "action": "terminate_all", "turnNumbers": [1, 2]})
    time.sleep(0.3)
    assert len(finals(server.sink.answers, "g")) == 2       # turns 1 and 2; turn 0 runs on
    server.send({"id": "all0", "action": "terminate_all"})
    answers = server.sink.wait_for(lambda a: len(finals(a, "g")) == 3)
    assert sorted(a["turnNumber"] for a in finals(answers, "g")) == [0, 1, 2]


def test_a_higher_priority_preempts_a_running_search_which_then_resumes(session):
    server = session()                         # one worker
    server.send({**BASE, "boardXSize": 19, "boardYSize": 19, "id": "game", "priority": -100,
                 "maxVisits": 10 ** 7, "reportDuringSearchEvery": 0.1})
    server.sink.wait_for(lambda a: any(x.get("id") == "game" for x in a))
    started = time.monotonic()
    urgent = server.answer({**BASE, "id": "now", "priority": 1000, "maxVisits": 50})
    assert time.monotonic() - started < 2.0 and urgent["rootInfo"]["visits"] <= 50
    seen = len(server.sink.answers)
    server.sink.wait_for(lambda a: any(x.get("id") == "game" for x in a[seen:]))   # resumed
    server.send({"id": "t", "action": "terminate", "terminateId": "game"})
    assert server.sink.wait_for(lambda a: finals(a, "game"))


def test_a_parked_search_that_is_terminated_answers_at_once(session):
    server = session()
    server.send({**BASE, "boardXSize": 19, "boardYSize": 19, "id": "low", "priority": 1,
                 "maxVisits": 10 ** 7})
    time.sleep(0.2)
    server.send({**BASE, "boardXSize": 19, "boardYSize": 19, "id": "high", "priority": 2,
                 "maxVisits": 10 ** 7})
    time.sleep(0.2)
    server.send({"id": "t", "action": "terminate", "terminateId": "low"})
    answers = server.sink.wait_for(lambda a: finals(a, "low"), timeout=2.0)
    assert finals(answers, "low")[0]["rootInfo"]["visits"] > 0 and not finals(answers, "high")
    server.send({"id": "t2", "action": "terminate", "terminateId": "high"})
    server.sink.wait_for(lambda a: finals(a, "high"))


# --- the real process -----------------------------------------------------------------------------

def run_engine(lines, *options, timeout=60):
    """(answers, stderr, exit status) of `python gtp_server.py analysis` fed these lines."""
    result = subprocess.run([*ENGINE, *options], input="".join(l + "\n" for l in lines).encode(),
                            capture_output=True, timeout=timeout, cwd=REPO)
    return ([json.loads(line) for line in result.stdout.decode().splitlines()],
            result.stderr.decode(), result.returncode)


def fuzz_lines(count, seed=11):
    """(line, the id its error must carry or None) pairs: queries with one field spoiled, cut
    short, not objects, not JSON, with ids of every kind."""
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        kind = rng.randrange(6)
        query_id = f"f{i}"
        if kind == 0:
            change, _ = rng.choice(BAD_FIELDS)
            query = malformed(change)
            query["id"] = query_id
            lines.append((json.dumps(query), query_id))
        elif kind == 1:
            query = {"id": query_id}
            query.update((key, value) for key, value in VALID.items() if key != "id")
            text = json.dumps(query)
            cut = text[:rng.randrange(1, len(text) - 1)]
            lines.append((cut, query_id if f'"id": "{query_id}"' in cut else None))
        elif kind == 2:
            lines.append((json.dumps(rng.choice([[1, 2], 3, "text", None, True, [{"id": "x"}]])),
                          None))
        elif kind == 3:
            garbage = "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x3000)]))
                              for _ in range(rng.randrange(1, 80)))
            lines.append(("x" + garbage, None))
        elif kind == 4:
            bad_id = rng.choice([17, 2.5, False, ["a"], {"b": 1}])
            shown = bad_id if isinstance(bad_id, (int, float, bool)) else None
            lines.append((json.dumps({**VALID, "id": bad_id}), shown))
        else:
            query = dict(VALID, id=query_id)
            del query[rng.choice(["moves", "rules", "boardXSize", "boardYSize"])]
            lines.append((json.dumps(query), query_id))
    return lines


def test_a_fuzz_of_a_thousand_malformed_lines_each_answered_and_the_process_alive():
    lines = fuzz_lines(1000)
    answers, stderr, status = run_engine([line for line, _ in lines] +
                                         ['{"id":"alive","action":"query_version"}'])
    assert status == 0 and "Traceback" not in stderr
    assert len(answers) == 1001 and answers[-1]["id"] == "alive"
    for (line, query_id), answer in zip(lines, answers):
        assert "error" in answer, (line, answer)
        assert answer.get("id") == query_id, (line, answer)


def test_a_client_that_writes_everything_before_it_reads_is_not_deadlocked():
    """Answers wait in memory, not in the pipe: the engine keeps reading while nobody reads
    its output (here 2,000 errors, far more than a pipe holds)."""
    engine = subprocess.Popen(ENGINE, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, cwd=REPO)
    lines = "".join(json.dumps(dict(VALID, id=f"q{i}", rules="go")) + "\n" for i in range(2000))
    writer = threading.Thread(target=lambda: (engine.stdin.write(lines.encode()),
                                              engine.stdin.close()), daemon=True)
    writer.start()
    writer.join(timeout=30)
    assert not writer.is_alive(), "the engine stopped reading its input"
    answers = engine.stdout.read().decode().splitlines()
    assert engine.wait(timeout=30) == 0 and len(answers) == 2000


def test_a_small_9x9_game_analysed_turn_by_turn_by_the_process():
    game = sgf.Sgf_game.from_bytes((SGF / "gogui_9x9.sgf").read_bytes())
    moves = [[colour.upper(), "pass" if point is None else
              "ABCDEFGHJ"[point[1]] + str(point[0] + 1)]
             for colour, point in (node.get_move() for node in game.get_main_sequence()[1:])
             if colour]
    query = {**BASE, "id": "game", "moves": moves, "analyzeTurns": list(range(len(moves) + 1)),
             "maxVisits": 25, "includeOwnership": True}
    started = time.monotonic()
    answers, stderr, status = run_engine([json.dumps(query)], "--workers", "2")
    assert status == 0 and time.monotonic() - started < 30
    assert sorted(a["turnNumber"] for a in answers) == list(range(len(moves) + 1))
    assert all(a["rootInfo"]["currentPlayer"] == ("B" if t % 2 == 0 else "W")
               for a, t in ((a, a["turnNumber"]) for a in answers))


def test_the_command_line_dispatch_and_stdout_hygiene():
    help_text = subprocess.run([sys.executable, str(REPO / "gtp_server.py"), "analysis", "--help"],
                               capture_output=True, timeout=60).stdout.decode()
    assert help_text.startswith("usage: kosumi analysis")
    answers, stderr, status = run_engine(['{"id":"q","action":"query_version"}', "",
                                          json.dumps({**BASE, "id": "a", "maxVisits": 5})])
    assert status == 0 and [a["id"] for a in answers] == ["q", "a"]
    assert "Started, ready to begin handling requests" in stderr


# --- KaTrain --------------------------------------------------------------------------------------

def test_the_queries_katrain_sent_are_answered_without_an_error():
    """Replays a session of KaTrain 1.20 (a 19x19 game loaded and browsed, continuous analysis,
    its extra analyses; a 9x9 game played against its AI modes), recorded from kosumi's debug
    log: every query gets answers and no error, each analysed turn exactly one final answer.
    For speed, budgets above 100 visits are cut to 100, except the continuous analysis's
    (10,000,000, ended by KaTrain's terminate)."""
    queries = [json.loads(line) for line in RECORDED.read_text().splitlines()]
    for query in queries:
        if 100 < query.get("maxVisits", 0) < 10 ** 7:
            query["maxVisits"] = 100
    answers, stderr, status = run_engine([json.dumps(q) for q in queries], "--workers", "2",
                                         "--search-prior", "none", timeout=120)
    assert status == 0 and not [a for a in answers if "error" in a]
    for query in queries:
        if "action" in query:
            assert query in answers
            continue
        done = [a for a in finals(answers, query["id"]) if a["turnNumber"] in
                query.get("analyzeTurns", [len(query["moves"])])]
        assert len(done) == 1, query["id"]
        if not done[0].get("noResults"):
            assert done[0]["rootInfo"]["visits"] > 0 and done[0]["moveInfos"]


@pytest.mark.external
def test_katrains_own_engine_class_drives_kosumi(tmp_path, monkeypatch):
    """KaTrain's KataGoEngine (needs `pip install katrain`; it imports without a display) runs
    `kosumi analysis` as its custom engine and digests the answers into its game nodes."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("KIVY_NO_ARGS", "1")
    monkeypatch.setenv("KIVY_NO_CONSOLELOG", "1")
    (tmp_path / ".kivy").mkdir()
    engine_module = pytest.importorskip("katrain.core.engine")
    from katrain.core.game import KaTrainSGF

    class KaTrain:
        def __init__(self):
            self.errors = []

        def log(self, message, level=0):
            if level == -1:
                self.errors.append(message)

        def __call__(self, *args, **kwargs):
            self.errors.append(args)

    katrain = KaTrain()
    # KaTrain runs altcommand through /bin/sh -c and terminates the shell: `exec` makes the
    # shell become kosumi, so that terminating it ends kosumi (docs/ANALYSIS_ENGINE.md)
    config = {"backend": "custom", "altcommand": "exec " + shlex.join(ENGINE),
              "allow_recovery": False, "max_visits": 40, "fast_visits": 10, "max_time": 5.0,
              "wide_root_noise": 0.04, "_enable_ownership": True}
    engine = engine_module.KataGoEngine(katrain, config)
    root = KaTrainSGF.parse_sgf((SGF / "gogui_9x9.sgf").read_text())
    nodes = [root]
    while nodes[-1].children:
        nodes.append(nodes[-1].children[0])
    try:
        for node in nodes[:12]:
            node.analyze(engine)
        deadline = time.monotonic() + 30
        while not all(node.analysis_complete for node in nodes[:12]):
            assert time.monotonic() < deadline and not katrain.errors, katrain.errors
            time.sleep(0.1)
    finally:
        engine.shutdown(finish=False)
    assert not katrain.errors
    for node in nodes[:12]:
        assert node.analysis["root"]["visits"] > 0 and node.candidate_moves
        assert len(node.ownership) == 81 and node.policy is None
