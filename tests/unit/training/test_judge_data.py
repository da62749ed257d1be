"""The judging targets of the position data (engine/training/policydata.py version 2, with
engine/training/gametargets.py): each game's komi, winner, margin and final ownership written by
`prepare()`, read back from the side to move under the batch's symmetry; version 1 data still
serving the policy; files that do not fit refused by name.

The games are test_agreedcounts.py's FINAL board (9x9, Chinese rules, komi 7.5, 22 moves with the
closing passes), under several results."""
import json
import math
import re
import shutil

import numpy as np
import pytest

from engine.nets.policy_features import transform
from engine.rules.coords import row_col
from engine.rules.game import SYMMETRIES, symmetric_point
from engine.training.gametargets import margin_of, outcome_of, winner_of
from engine.training.policydata import DataError, PolicyDataset, prepare
from engine.training.sgfdata import read_game
from tests.diagrams import vertex
from tests.unit.training.test_agreedcounts import record

MOVES = 22                      # positions of every game of record()
NO_MOVES = "(;GM[1]FF[4]SZ[9]KM[7.5]RE[B+R])"
# In file order; the game without moves has no positions, so no place among the games below.
GAMES = [record("W+16.5"),      # 0: counted; CSA* calls G3 dead and counts the result
         record("B+R"),         # 1: resigned
         NO_MOVES,
         record("W+T"),         # 2: lost on time
         record("?"),           # 3: no result
         record("B+20.5"),      # 4: counted with G3 alive: White's side nobody's
         record("W+16.5", extra="HA[2]")]      # 5: a handicap game
G3, A1, D5, E5, F5 = (row_col(vertex(v, 9), 9) for v in ("G3", "A1", "D5", "E5", "F5"))


def write_games(path, texts):
    path.write_text("\n".join(texts))
    return path


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """(data directory, manifest) of GAMES, one shard."""
    folder = tmp_path_factory.mktemp("judge")
    games = write_games(folder / "games.sgf", GAMES)
    manifest = prepare([games], folder / "data", size=9)
    return folder / "data", manifest


def per_game(directory, part):
    """A per-game array of every shard, end to end."""
    manifest = json.loads((directory / "manifest.json").read_text())
    return np.concatenate([np.load(directory / f"{shard['name']}.{part}.npy")
                           for shard in manifest["shards"]])


def test_winners_of_results_in_every_form():
    black = ["B+R", "B+Resign", "b+resign", " B + 3.5 ", "B+0.5", "B+12", "B+Resignation",
             "B+", "b+r\n"]
    white = ["W+R", "W+Resign", "w+0.5", "W+ 7.5", "W+", "W+resigned", "W+.5"]
    none = ["B+T", "B+Time", "W+t", "W+Time", "B+F", "W+Forfeit", "w+forfeit", "0", "Draw",
            "jigo", "Void", "?", "", "  ", None, "B+0", "W+0.0", "B+3,5", "Black wins", "B+X",
            "W+R+T", "+3.5", "B3.5"]
    assert [winner_of(text) for text in black] == [1] * len(black)
    assert [winner_of(text) for text in white] == [-1] * len(white)
    assert [winner_of(text) for text in none] == [0] * len(none)
    assert outcome_of("B+3.5") == (1, 3.5) and outcome_of("W + 0.5") == (-1, -0.5)
    assert outcome_of("Jigo") == (0, 0.0) and outcome_of("W+0") == (0, 0.0)
    for text in ("B+R", "W+T", "Void", "", "B+"):
        assert math.isnan(outcome_of(text)[1]), text


def test_margins_are_of_even_games_in_points():
    def margin(text):
        return margin_of(read_game("one.sgf", text.encode()))

    assert margin(record("W+16.5")) == -16.5 and margin(record("B+20.5")) == 20.5
    assert margin(record("W+16.5", extra="HA[1]")) == -16.5
    assert margin(record("W+16.5", extra="HA[0]")) == -16.5
    assert margin(record("0")) == 0.0
    for text in (record("W+16.5", extra="HA[2]"), record("W+16.5", extra="HA[x]"),
                 record("W+16.5", extra="AB[aa]"), record("B+R"), record("B+500")):
        assert math.isnan(margin(text))


def test_every_game_s_targets_are_written_and_counted(prepared):
    directory, manifest = prepared
    assert manifest["version"] == 2 and manifest["games"] == 7
    assert manifest["positions"] == 6 * MOVES
    assert manifest["shards"][0]["games"] == 6          # the game without moves has no place
    assert (manifest["value_games"], manifest["scored_games"], manifest["owned_games"]) == (4, 2, 2)
    assert manifest["owned_by"] == {"kosumi": 1, "relabelled": 1}
    assert manifest["not_owned"] == {"resignation": 1, "time": 1, "no result": 1, "handicap": 1}
    assert per_game(directory, "winner").tolist() == [-1, 1, 0, 0, 1, -1]
    np.testing.assert_array_equal(per_game(directory, "margin"),
                                  [-16.5, np.nan, np.nan, np.nan, 20.5, np.nan])
    assert per_game(directory, "komi").tolist() == [7.5] * 6
    assert per_game(directory, "owned").tolist() == [True, False, False, False, True, False]
    ownership = per_game(directory, "ownership").reshape(6, 9, 9)
    assert ownership.dtype == np.int8 and not ownership[[1, 2, 3, 5]].any()
    dead, alive = ownership[0], ownership[4]
    # G3 dead: Black owns columns A-D (36 points), White E-J with G3's point (45)
    assert dead[A1] == dead[D5] == 1 and dead[E5] == dead[G3] == dead[F5] == -1
    assert ((dead == 1).sum(), (dead == -1).sum()) == (36, 45)
    # G3 alive: its point Black's, the rest of White's side nobody's; 37 - 9 - 7.5 = 20.5
    assert alive[G3] == 1 and alive[F5] == 0 and alive[E5] == -1
    assert ((alive == 1).sum(), (alive == -1).sum(), (alive == 0).sum()) == (37, 9, 35)


def test_judge_targets_are_seen_from_the_side_to_move(prepared):
    dataset = PolicyDataset([prepared[0]])
    assert dataset.has_targets
    # the first two positions of games 0, 1, 2, 4 and 5 (Black, then White to move)
    indices = np.array([0, 1, 22, 23, 44, 45, 88, 89, 110, 111])
    targets = dataset.judge_targets(indices)
    assert targets.komi.dtype == targets.value.dtype == targets.score.dtype == np.float32
    assert targets.ownership.dtype == np.float32 and targets.ownership.shape == (10, 9, 9)
    assert targets.komi.tolist() == [-7.5, 7.5] * 5
    assert targets.value_known.tolist() == [True, True, True, True, False, False, True, True,
                                            True, True]
    assert targets.value.tolist() == [0, 1, 1, 0, 0, 0, 1, 0, 0, 1]
    assert targets.score_known.tolist() == [True, True] + [False] * 4 + [True, True, False, False]
    assert targets.score.tolist() == [-16.5, 16.5, 0, 0, 0, 0, 20.5, -20.5, 0, 0]
    assert targets.ownership_known.tolist() == [True, True] + [False] * 4 + [True, True] + \
        [False] * 2
    first, second = targets.ownership[0], targets.ownership[1]
    assert (first[A1], first[G3], second[A1], second[G3]) == (1, -1, -1, 1)
    np.testing.assert_array_equal(second, -first)
    assert not targets.ownership[2:6].any() and not targets.ownership[8:].any()
    alive, alive_for_white = targets.ownership[6], targets.ownership[7]
    assert (alive[G3], alive[F5], alive_for_white[G3]) == (1, 0, -1)


def test_ownership_turns_with_the_planes(prepared):
    dataset = PolicyDataset([prepared[0]])
    # the final board: White to move at the closing passes' last, Black at the one before; and
    # E1 as a move played (White's ninth stone)
    indices = np.array([20, 21, 17])
    plain = dataset.judge_targets(indices)
    for symmetry in range(SYMMETRIES):
        targets = dataset.judge_targets(indices, symmetry)
        np.testing.assert_array_equal(targets.ownership, transform(plain.ownership, symmetry))
        assert targets.ownership.flags.c_contiguous
        planes, moves = dataset.batch("rich", indices, symmetry)
        own_stones, their_stones = planes[:, 0:4].sum(1) > 0, planes[:, 4:8].sum(1) > 0
        g3 = symmetric_point(*G3, 9, symmetry)
        # Black to move: its own G3 is the one own stone the opponent owns at the end
        assert np.argwhere(own_stones[0] & (targets.ownership[0] == -1)).tolist() == [list(g3)]
        assert np.all(targets.ownership[0][their_stones[0]] == -1)
        # White to move: Black's G3 is the one opponent stone it owns at the end
        assert np.argwhere(their_stones[1] & (targets.ownership[1] == 1)).tolist() == [list(g3)]
        assert np.all(targets.ownership[1][own_stones[1]] == 1)
        # the point of the move played, as batch() turns the moves
        assert targets.ownership[2].reshape(-1)[moves[2]] == 1


def test_positions_before_the_end_of_each_game(prepared):
    dataset = PolicyDataset([prepared[0]])
    indices = [0, 21, 22, 43, 100, 6 * MOVES - 1]
    assert dataset.positions_before_end(indices).tolist() == [21, 0, 21, 0, 9, 0]
    assert dataset.positions_before_end(indices).dtype == np.int64


def test_a_resumed_prepare_writes_the_same_targets(tmp_path, prepared):
    games = write_games(tmp_path / "games.sgf", GAMES)
    first = prepare([games], tmp_path / "parts", size=9, max_games=4, shard_positions=30)
    assert first["games"] == 4 and first["owned_games"] == 1
    again = prepare([games], tmp_path / "parts", size=9, shard_positions=30)
    directory, whole = prepared
    assert len(again["shards"]) == 4 and [s["games"] for s in again["shards"]] == [2, 1, 2, 1]
    for key in ("games", "positions", "value_games", "scored_games", "owned_games", "owned_by",
                "not_owned"):
        assert again[key] == whole[key], key
    for part in ("komi", "winner", "margin", "ownership", "owned"):
        np.testing.assert_array_equal(per_game(tmp_path / "parts", part),
                                      per_game(directory, part))
    everything = np.arange(6 * MOVES)
    resumed, one_go = PolicyDataset([tmp_path / "parts"]), PolicyDataset([directory])
    for a, b in zip(vars(resumed.judge_targets(everything, 3)).values(),
                    vars(one_go.judge_targets(everything, 3)).values()):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(resumed.positions_before_end(everything),
                                  one_go.positions_before_end(everything))


def version_1_copy(directory, to):
    """A copy of a data directory as kosumi wrote it before the result targets."""
    shutil.copytree(directory, to)
    manifest = json.loads((to / "manifest.json").read_text())
    for key in ("value_games", "scored_games", "owned_games", "owned_by", "not_owned"):
        del manifest[key]
    manifest["version"] = 1
    (to / "manifest.json").write_text(json.dumps(manifest))
    for part in ("komi", "winner", "margin", "ownership", "owned"):
        for path in to.glob(f"*.{part}.npy"):
            path.unlink()
    return to


def test_version_1_data_serves_the_policy_but_not_the_judge(tmp_path, prepared):
    directory = prepared[0]
    older = version_1_copy(directory, tmp_path / "older")
    dataset, newer = PolicyDataset([older]), PolicyDataset([directory])
    assert not dataset.has_targets and not PolicyDataset([directory, older]).has_targets
    indices = np.array([0, 5, 30, 131])
    for a, b in zip(dataset.batch("rich", indices, 5), newer.batch("rich", indices, 5)):
        np.testing.assert_array_equal(a, b)
    assert dataset.positions_before_end(indices).tolist() == [21, 16, 13, 0]
    for data in ([older], [directory, older]):
        with pytest.raises(DataError, match=re.escape(str(older)) + ".*prepare it again"):
            PolicyDataset(data).judge_targets(indices)
    with pytest.raises(DataError, match="version 1"):
        prepare(prepared[1]["sources"], older, size=9)


def test_per_game_files_that_do_not_fit_are_refused_by_name(tmp_path, prepared):
    broken = tmp_path / "broken"
    shutil.copytree(prepared[0], broken)
    (broken / "shard-00000.winner.npy").write_bytes(b"not an array")
    with pytest.raises(DataError, match=re.escape(str(broken / "shard-00000.winner.npy"))):
        PolicyDataset([broken])
    np.save(broken / "shard-00000.winner.npy", np.zeros(6, np.int8))
    np.save(broken / "shard-00000.ownership.npy", np.zeros((5, 81), np.int8))
    with pytest.raises(DataError, match=r"shard-00000\.ownership\.npy: .*6 games"):
        PolicyDataset([broken])
    np.save(broken / "shard-00000.ownership.npy", np.zeros((6, 81), np.int8))
    np.save(broken / "shard-00000.margin.npy", np.zeros(6, np.float64))
    with pytest.raises(DataError, match=r"shard-00000\.margin\.npy"):
        PolicyDataset([broken])
    np.save(broken / "shard-00000.margin.npy", np.zeros(6, np.float32))
    # a start array whose games are not the manifest's: found when the games are first indexed
    start = np.load(broken / "shard-00000.start.npy")
    start[MOVES:2 * MOVES] = 0
    np.save(broken / "shard-00000.start.npy", start)
    dataset = PolicyDataset([broken])
    with pytest.raises(DataError, match=r"shard-00000\.start\.npy: 5 games .* says 6"):
        dataset.judge_targets([0])
