"""The counted games' reader and measurement (engine/training/agreedcounts.py) on tiny hand-made
9x9 records: results, rules, the count under each rule set, the ceiling (a result some labelling
explains, one that none can), and the measurement's record lines and table."""
import json

import pytest

from engine.rules.coords import to_sgfmill
from engine.tools.gtp_client import find_gnugo
from engine.training import agreedcounts
from engine.training.agreedcounts import (AREA, TERRITORY, count, explanation, iter_counted,
                                          parse_result)
from tests.diagrams import load_board, vertex

# Black owns columns A-D (36 points), White E-J (45); Black's G3 is dead in White's area.
# Area: 36 - 45 - 7.5 = W+16.5. Territory: Black 27 empty points, White 36 (G3's point
# included) and the dead G3 as a prisoner: 27 - 37 - 6.5 = W+16.5.
FINAL = """
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . X . .
    . . . X O . . . .
    . . . X O . . . .
"""


def record(result, rules="Chinese", komi=7.5, extra="", final=""):
    """A one-game SGF whose moves build FINAL (Black and White alternately), then two passes
    (final: properties of the last node)."""
    board = load_board(FINAL)
    black = [p for p in board.points() if board.get(p) == 1]
    white = [p for p in board.points() if board.get(p) == 2]
    moves = []
    for i in range(max(len(black), len(white))):
        for colour, stones in (("B", black), ("W", white)):
            if i < len(stones):
                row, col = to_sgfmill(stones[i], 9)
                moves.append(f";{colour}[{'abcdefghi'[col]}{'abcdefghi'[8 - row]}]")
            else:
                moves.append(f";{colour}[]")
    ru = f"RU[{rules}]" if rules else ""
    return (f"(;GM[1]FF[4]SZ[9]KM[{komi:g}]{ru}RE[{result}]{extra}" + "".join(moves) +
            f";B[];W[]{final})")


def write(tmp_path, name, *texts):
    path = tmp_path / name
    path.write_text("\n".join(texts))
    return path


def the_game(tmp_path, text, name="one.sgf"):
    return next(iter_counted([write(tmp_path, name, text)]))[1]


def test_results_and_what_is_set_aside():
    assert parse_result("B+2.5") == 2.5 and parse_result("W+0.5") == -0.5
    assert parse_result("0") == 0 and parse_result("Draw") == 0
    for text, reason in (("B+R", "resignation"), ("W+Resign", "resignation"), ("B+T", "time"),
                         ("W+Time", "time"), ("B+F", "forfeit"), ("", "no result"),
                         ("Void", "result not in points")):
        with pytest.raises(ValueError, match=reason):
            parse_result(text)


def test_the_reader_gives_the_final_board_rules_komi_and_captures(tmp_path):
    game = the_game(tmp_path, record("W+16.5"))
    assert game.scoring == AREA and game.komi == 7.5 and game.result == -16.5
    assert game.board.get(vertex("G3", 9)) == 1 and game.captures == (0, 0)
    japanese = the_game(tmp_path, record("W+16.5", rules="Japanese", komi=6.5))
    assert japanese.scoring == TERRITORY and japanese.teire
    # TYGEM records carry no RU (the server is told by the collection's name): Korean rules,
    # counted by territory, no teire
    tygem = the_game(tmp_path, record("W+16.5", rules="", komi=6.5), "tygem-9d-2016.sgf")
    assert tygem.scoring == TERRITORY and tygem.rules_name.startswith("TYGEM") and not tygem.teire
    set_aside = {}
    path = write(tmp_path, "many.sgf", record("B+R"), record("W+T"),
                 record("W+16.5", extra="HA[2]"), record("W+16.5"))
    assert len(list(iter_counted([path], set_aside=set_aside))) == 1
    assert set_aside == {"resignation": 1, "time": 1, "handicap": 1}


# KGS's marks of FINAL's count with G3 dead: TB on Black's columns A-C, TW on White's F-J,
# G3's point included. With G3 alive White has no territory there: TB alone.
BLACK_MARKS = "TB" + "".join(f"[{c}{r}]" for c in "abc" for r in "abcdefghi")
MARKS = BLACK_MARKS + "TW" + "".join(f"[{c}{r}]" for c in "fghi" for r in "abcdefghi")


def test_the_players_marked_dead_stones_are_read_and_measured(tmp_path, capsys):
    from engine.training.sgfdata import read_game
    text = record("W+16.5", final=MARKS)
    marked = read_game("one.sgf", text.encode())
    assert len(marked.territory[1]) == 27 and vertex("G3", 9) in marked.territory[2]
    assert the_game(tmp_path, text).players_dead == [vertex("G3", 9)]
    assert the_game(tmp_path, record("W+16.5")).players_dead is None
    alive = the_game(tmp_path, record("B+20.5", final=BLACK_MARKS))
    assert alive.players_dead == []
    # the players' labels come first, and only when they count to the result
    statuses, source, _ = agreedcounts.agreed_labelling(the_game(tmp_path, text))
    assert source == "players" and statuses.count(agreedcounts.deadstones.DEAD) == 1
    statuses, source, _ = agreedcounts.agreed_labelling(alive)
    assert source == "players" and agreedcounts.deadstones.DEAD not in statuses
    unexplained = the_game(tmp_path, record("B+20.5", final=MARKS))
    assert agreedcounts.agreed_labelling(unexplained)[1] != "players"
    lines = [agreedcounts.measure_game(i, game, review=False)
             for i, game in enumerate((the_game(tmp_path, text), alive, unexplained))]
    assert [line["players_dead_agree"] for line in lines] == [True, False, True]
    assert [line["players_count"] for line in lines] == [-16.5, 20.5, -16.5]
    assert agreedcounts.summarise(lines)["marked"] == {
        "boards": 3, "dead_agree": 2, "players_right": 2, "kosumi_right": 1}
    out = write(tmp_path, "marked.jsonl", *map(json.dumps, lines))
    agreedcounts.report([out])
    assert ("marked by the players (TB/TW): 3 boards; kosumi's dead stones are theirs on "
            "2/3 (66.7%); theirs count to the result on 2/3 (66.7%) (the rest: the rules of the "
            "count), and on those kosumi is right on 1/2 (50.0%)") in capsys.readouterr().out
    # marks that do not parse are left out; the record's moves stay readable
    assert read_game("bad.sgf", record("W+16.5", final="TB[zz]").encode()).territory == {}


def test_counts_under_each_rule_set():
    board = load_board(FINAL)
    dead = [vertex("G3", 9)]
    assert count(board, AREA, 7.5, dead=dead) == -16.5
    assert count(board, TERRITORY, 6.5, dead=dead) == -16.5
    assert count(board, TERRITORY, 6.5, captures=(3, 1), dead=dead) == -14.5   # prisoners
    # alive, G3 makes White's whole side nobody's
    assert count(board, AREA, 7.5) == 37 - 9 - 7.5
    # under territory rules no territory touches a stone in seki
    assert count(board, TERRITORY, 6.5, dead=dead, seki=[vertex("D5", 9)]) == -16.5 - 27


def test_teire_leaves_out_a_false_eye_its_owner_must_fill():
    # C1 is White's false eye (Black B2 on its diagonal, on the edge); B1 has liberties C1 and
    # the dame A1: Black fills A1, White must connect at C1. D2 and E1 are White's for good.
    board = load_board("""
        . X . X .
        X X X X X
        X X O O O
        X X O . O
        . O . O .
    """)
    with_teire = count(board, TERRITORY, 0, teire=True)
    assert with_teire == count(board, TERRITORY, 0) + 1
    assert count(board, AREA, 0, teire=True) == count(board, AREA, 0)   # area: no difference


def test_the_servers_count_the_eyes_of_stones_in_seki(tmp_path):
    # KGS's and TYGEM's counters know no seki: a block kosumi calls seki keeps its eyes as
    # territory in the agreed count (here Black's 27 points beside the D column), unlike
    # count()'s Japanese seki
    from engine.scoring import deadstones
    game = the_game(tmp_path, record("W+16.5", rules="Japanese", komi=6.5))
    assert game.seki_eyes
    blocks = agreedcounts.blocks_of(game.board)
    statuses = [deadstones.DEAD if vertex("G3", 9) in stones else
                deadstones.SEKI if vertex("D5", 9) in stones else deadstones.ALIVE
                for _, stones in blocks]
    assert agreedcounts._count_statuses(game, blocks, statuses) == -16.5
    assert explanation(game, blocks, statuses).explained
    game.seki_eyes = False
    assert agreedcounts._count_statuses(game, blocks, statuses) == -16.5 - 27


def test_the_ceiling_one_labelling_explains_none_can(tmp_path):
    from engine.scoring import deadstones
    right = the_game(tmp_path, record("W+16.5"))
    blocks = agreedcounts.blocks_of(right.board)
    alive = [deadstones.ALIVE] * len(blocks)
    g3 = next(i for i, (_, stones) in enumerate(blocks) if vertex("G3", 9) in stones)
    labelled = list(alive)
    labelled[g3] = deadstones.DEAD
    assert explanation(right, blocks, labelled).explained
    # starting from every block alive, the subset-sum finds G3's death
    found = explanation(right, blocks, alive)
    assert found.reachable and found.explained and found.statuses[g3] == deadstones.DEAD
    # B+20.5 is the count with G3 alive: explained, though CSA* would call it dead
    alive_g3 = the_game(tmp_path, record("B+20.5"))
    assert explanation(alive_g3, blocks, labelled).explained
    # B+30.5: no labelling of these blocks counts so; nor W+16 (off the half-point lattice)
    for result in ("B+30.5", "W+16"):
        game = the_game(tmp_path, record(result))
        verdict = explanation(game, blocks, labelled)
        assert not verdict.reachable and not verdict.explained


@pytest.mark.slow
def test_measure_writes_resumable_lines_and_reports(tmp_path, capsys):
    path = write(tmp_path, "games.sgf", record("W+16.5"), record("B+R"), record("B+30.5"),
                 record("W+16.5", rules="Japanese", komi=6.5), record("B+20.5"))
    out = tmp_path / "agreed.jsonl"
    gnugo = find_gnugo() is not None
    assert agreedcounts.measure([path], out, games=2, use_gnugo=gnugo, review=False) == 2
    assert agreedcounts.measure([path], out, games=4, use_gnugo=gnugo, review=False) == 2
    lines = [json.loads(text) for text in out.read_text().splitlines()]
    assert [line["index"] for line in lines] == [0, 2, 3, 4]
    first, impossible, japanese, alive = lines
    assert first["kosumi"] == -16.5 and first["explained"] and first["dead"] == "G3"
    assert not impossible["reachable"] and japanese["kosumi"] == -16.5
    assert alive["explained"] and alive["kosumi"] != alive["result"]
    if gnugo:      # GNU Go's own reading of a hand-made board: only that it gave a count
        assert all(isinstance(line["gnugo"], float) for line in lines)
    summary = agreedcounts.report([out])
    assert summary["boards"] == 4 and summary["unreachable"] == 1 and summary["explained"] == 3
    assert summary["rows"]["all"]["kosumi_right"] == 2
    assert "| explained (3) | 2/3 (66.7%)" in capsys.readouterr().out


def test_training_labels_are_the_labelling_that_counts_to_the_agreed_result(tmp_path):
    from engine.training.csatrain import examples
    path = write(tmp_path, "games.sgf", record("W+16.5"), record("B+R"), record("B+20.5"),
                 record("B+30.5"), record("W+16.5", rules="Japanese", komi=6.5))
    out = tmp_path / "labels.jsonl"
    assert agreedcounts.make_labels([path], out, games=2, use_gnugo=False) == 2
    assert agreedcounts.make_labels([path], out, games=9, use_gnugo=False) == 2    # resumed
    lines = [json.loads(text) for text in out.read_text().splitlines()]
    assert [line["index"] for line in lines] == [0, 2, 3, 4]
    dead_g3, alive_g3, impossible, japanese = lines
    g3 = agreedcounts.board_points(9).index(vertex("G3", 9))
    # W+16.5 is CSA*'s own count (G3 dead); B+20.5 only G3 alive explains, so it is relabelled
    assert dead_g3["label_source"] == "kosumi" and dead_g3["labels"][g3] == "d"
    assert alive_g3["label_source"] == "relabelled" and alive_g3["changed_units"] == 1
    assert alive_g3["labels"][g3] == "a" and alive_g3["labels"].count("d") == 0
    assert impossible["abandoned"] and "no labelling" in impossible["reason"]
    assert japanese["scoring"] == TERRITORY and japanese["labels"] == dead_g3["labels"]
    for line in (dead_g3, alive_g3):
        assert [c == "." for c in line["board"]] == [c == "." for c in line["labels"]]
        board = load_board(FINAL)
        assert line["board"] == "".join(".XO"[board.get(p)] for p in agreedcounts.board_points(9))
    # csatrain reads them as they are: G3's block is the one dead block of the first record
    first, second, third = examples(lines)       # the abandoned record is left out
    assert [len(e.dead) for e in (first, second, third)] == [1, 0, 1]
    assert first.targets.tolist().count(0.0) == 1


def test_a_labelling_is_only_taken_when_it_counts_to_the_result(tmp_path):
    from engine.scoring import deadstones

    class WrongGnuGo:
        """A GNU Go whose dead list (every stone alive) does not count to the result."""
        def statuses(self, game):
            return set(), set()

    class RightGnuGo:
        def statuses(self, game):
            return {vertex("G3", 9)}, set()

    game = the_game(tmp_path, record("W+16.5"))
    blocks = agreedcounts.blocks_of(game.board)
    alive_everywhere = deadstones.ALIVE
    # CSA* counts W+16.5 itself; GNU Go is not asked
    statuses, source, _ = agreedcounts.agreed_labelling(game, gnugo=WrongGnuGo())
    assert source == "kosumi" and statuses.count(deadstones.DEAD) == 1
    alive = the_game(tmp_path, record("B+20.5"))
    statuses, source, changed = agreedcounts.agreed_labelling(alive, gnugo=WrongGnuGo())
    assert source == "gnugo" and set(statuses) == {alive_everywhere} and changed == 0
    statuses, source, changed = agreedcounts.agreed_labelling(alive, gnugo=RightGnuGo())
    assert source == "relabelled" and set(statuses) == {alive_everywhere} and changed == 1
    assert len(statuses) == len(blocks)
    assert agreedcounts.agreed_labelling(the_game(tmp_path, record("B+30.5"))) is None


def test_the_same_boards_measured_again_and_gnu_go_s_column_borrowed(tmp_path, capsys):
    path = write(tmp_path, "games.sgf", record("W+16.5"), record("B+20.5"), record("B+30.5"),
                 record("W+16.5", rules="Japanese", komi=6.5))
    first = tmp_path / "first.jsonl"
    agreedcounts.measure([path], first, games=4, use_gnugo=False, review=False, every=2)
    names = agreedcounts.boards_of([first])
    assert len(names) == 2
    lines = [json.loads(text) for text in first.read_text().splitlines()]
    for line in lines:      # as if GNU Go had counted them
        line["gnugo"] = line["result"]
    first.write_text("".join(json.dumps(line) + "\n" for line in lines))
    again = tmp_path / "again.jsonl"
    agreedcounts.measure([path], again, games=10, use_gnugo=False, review=False, only=names)
    measured = [json.loads(text) for text in again.read_text().splitlines()]
    assert {line["name"] for line in measured} == names
    assert all("gnugo" not in line and "signs" in line for line in measured)
    assert agreedcounts.report([again])["rows"]["all"]["gnugo_boards"] == 0
    summary = agreedcounts.report([again], gnugo_from=[first])
    assert summary["rows"]["all"]["gnugo_boards"] == summary["rows"]["all"]["gnugo_right"] == 2
    with pytest.raises(ValueError, match="no measured boards"):
        agreedcounts.boards_of([write(tmp_path, "empty.jsonl", "")])


def signs(counts_gap=0.0, least_sure=0.5, changed_mind=False, search_gap=0.0):
    return {"counts_gap": counts_gap, "least_sure": least_sure, "changed_mind": changed_mind,
            "search_gap": search_gap}


def test_the_flag_s_rule_is_chosen_to_catch_the_most_within_the_false_share():
    # ten right boards, three wrong: only the search's gap separates them (wrong ones 14-30
    # points away, right ones at most 9 but for one at 16); the flood/distance gap is noise
    right = [signs(counts_gap=g, search_gap=s) for g, s in
             ((0, 2), (5, 3), (3, 9), (0, 1), (8, 0), (0, 4), (2, 16), (0, 0), (6, 2), (0, 5))]
    wrong = [signs(counts_gap=g, search_gap=s) for g, s in ((0, 14), (4, 30), (0, 20))]
    lines = [{"explained": True, "kosumi": 1.5, "result": 1.5, "signs": x} for x in right] + \
            [{"explained": True, "kosumi": 1.5, "result": -0.5, "signs": x} for x in wrong] + \
            [{"explained": False, "kosumi": 1.5, "result": 99.5, "signs": signs(search_gap=50)}]
    rule, (caught, wrong_boards, flagged, right_boards) = agreedcounts.tune_flag(lines, 0.10)
    assert (caught, wrong_boards, flagged, right_boards) == (3, 3, 1, 10)
    assert 9 <= rule.review_gap < 14 and rule.counts_gap >= 8
    rule, counts = agreedcounts.tune_flag(lines, 0.0)          # no right board flagged
    assert counts == (2, 3, 0, 10) and 16 <= rule.review_gap < 20
    with pytest.raises(ValueError, match="no explained boards"):
        agreedcounts.tune_flag([{"explained": True, "kosumi": 0, "result": 0}])


def test_the_teire_sign_is_chosen_where_it_catches_the_one_point_boards():
    # two wrong boards a point off hold a false eye their owner may fill, one right board of
    # ten does; nothing else tells them apart
    right = [dict(signs(), teire_points=int(i == 0)) for i in range(10)]
    wrong = [dict(signs(), teire_points=1) for _ in range(2)]
    lines = [{"explained": True, "kosumi": 1.5, "result": 1.5, "signs": x} for x in right] + \
            [{"explained": True, "kosumi": 1.5, "result": 0.5, "signs": x} for x in wrong]
    rule, counts = agreedcounts.tune_flag(lines, 0.10)
    assert rule.teire and counts == (2, 2, 1, 10)
    # measured without the review search: the rule leaves the search's gap out
    unreviewed = [dict(line, signs=dict(line["signs"], search_gap=None)) for line in lines]
    rule, counts = agreedcounts.tune_flag(unreviewed, 0.10)
    assert rule.teire and counts == (2, 2, 1, 10)
    assert not rule.flags(dict(signs(search_gap=400.0), teire_points=0))
    # boards measured before the sign existed: it is never chosen
    rule, counts = agreedcounts.tune_flag(
        [dict(line, signs=signs()) for line in lines], 0.10)
    assert not rule.teire and counts[0] == 0


def test_a_chosen_rule_is_written_into_the_classifier_file(tmp_path):
    from engine.scoring import csa
    from tests.unit.scoring.test_csa import small_classifier
    path = tmp_path / "c.npz"
    small_classifier().save(path, {"games_trained": 7})
    rule = csa.DoubtRule(counts_gap=6, band=0.3, changed_mind=False, review_gap=15)
    agreedcounts.write_rule(path, rule, "dev boards")
    loaded = csa.Classifier.load(path)
    assert loaded.doubt_rule == rule and loaded.metadata["games_trained"] == 7
    assert loaded.metadata["doubt_chosen_on"] == "dev boards"
