"""CSA*'s labelled data (engine/training/scoredata.py): the record file and a real generation
run against GNU Go, resumed."""
import json

import pytest

from engine.rules.coords import board_points
from engine.scoring import counting
from engine.tools.gtp_client import find_gnugo
from engine.training.csatrain import board_of, examples
from engine.training.scoredata import generate, parse_mix, read_records, relabel


def test_a_torn_last_line_is_skipped_and_a_bad_middle_line_refused(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text('{"index": 0}\n{"index": 1}\n{"ind')
    assert [r["index"] for r in read_records(path)] == [0, 1]
    path.write_text('{"index": 0}\nnot json\n{"index": 2}\n')
    with pytest.raises(ValueError, match="records.jsonl: line 2"):
        read_records(path)


def test_mix_names_only_known_sources():
    assert parse_mix("gnugo-self:3,kosumi-self") == {"gnugo-self": 3.0, "kosumi-self": 1.0}
    with pytest.raises(Exception, match="unknown source"):
        parse_mix("gnugo-self,alphago:2")


@pytest.mark.slow
@pytest.mark.external
@pytest.mark.skipif(find_gnugo() is None, reason="needs GNU Go (apt-get install gnugo)")
def test_generated_games_are_labelled_consistently_and_a_rerun_resumes(tmp_path):
    out = tmp_path / "games.jsonl"
    written, abandoned = generate(out, games=2, size=9, seed=5, workers=1, mix="gnugo-self")
    assert written + abandoned == 2
    first = out.read_text()
    # The same command again plays nothing; one more game plays only that one.
    assert generate(out, games=2, size=9, seed=5, workers=1, mix="gnugo-self") == (0, 0)
    assert out.read_text() == first
    written, abandoned = generate(out, games=3, size=9, seed=5, workers=1, mix="gnugo-self")
    assert written + abandoned == 1
    records = read_records(out)
    assert sorted(r["index"] for r in records) == [0, 1, 2]
    with pytest.raises(ValueError, match="seed 5"):
        generate(out, games=3, size=9, seed=6, workers=1, mix="gnugo-self")
    for record in records:
        if not record.get("abandoned"):
            assert record["cleanup_level"] == 10
            assert_labelled_consistently(record)
    json.dumps(records)   # plain JSON all the way


def assert_labelled_consistently(record):
    assert len(record["board"]) == len(record["labels"]) == 81
    for letter, label in zip(record["board"], record["labels"]):
        assert (letter == ".") == (label == ".")
    # The recorded score is the flood-fill count with the labelled dead blocks taken off.
    board = board_of(record)
    dead = [p for p, label in zip(board_points(9), record["labels"]) if label == "d"]
    assert counting.score_by_flood_fill(board, record["komi"], dead) == record["score"]
    # Labels belong to whole blocks.
    example = examples([record])[0]
    for block in example.features.blocks:
        assert len({record["labels"][board_points(9).index(p)] for p in block.stones}) == 1


@pytest.mark.external
@pytest.mark.skipif(find_gnugo() is None, reason="needs GNU Go (apt-get install gnugo)")
def test_relabelling_plays_the_same_games_out_again_and_resumes(tmp_path):
    games, again = tmp_path / "games.jsonl", tmp_path / "again.jsonl"
    generate(games, games=2, size=9, seed=3, workers=1, mix="gnugo-self")
    with open(games, "a") as handle:
        handle.write('{"index": 2, "seed": 3, "size": 9, "abandoned": true}\n')
    assert relabel(games, again, level=1, workers=1) == (3, 0)
    old = {r["index"]: r for r in read_records(games)}
    new = {r["index"]: r for r in read_records(again)}
    assert new[2] == old[2]                       # an abandoned game is copied as it was
    for index in (0, 1):
        if old[index].get("abandoned"):
            continue
        assert new[index]["cleanup_level"] == 1
        label_fields = {"labels", "score", "playout_score", "playout_moves", "cleanup_level"}
        assert {k: v for k, v in new[index].items() if k not in label_fields} == \
            {k: v for k, v in old[index].items() if k not in label_fields}
        assert_labelled_consistently(new[index])
    first = again.read_text()
    assert relabel(games, again, level=1, workers=1) == (0, 0)   # resumed: nothing left
    assert again.read_text() == first


def test_an_interrupted_generator_says_how_to_resume(tmp_path, monkeypatch, capsys):
    from engine.training import scoredata
    out = tmp_path / "games.jsonl"
    out.write_text('{"index": 0, "seed": 1, "size": 9, "abandoned": true}\n')

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(scoredata, "generate", interrupted)
    monkeypatch.setattr(scoredata, "find_gnugo", lambda: "/usr/games/gnugo")
    code = scoredata.main(["generate", "--out", str(out), "--games", "5", "--workers", "1"])
    assert code == 130
    assert f"games on file in {out}: 1; run the same command again" in capsys.readouterr().err


def test_relabelling_an_empty_file_is_refused_with_its_name(tmp_path, monkeypatch, capsys):
    from engine.training import scoredata
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    monkeypatch.setattr(scoredata, "find_gnugo", lambda: "/usr/games/gnugo")
    code = scoredata.main(["relabel", "--data", str(empty), "--out", str(tmp_path / "o.jsonl")])
    assert code == 2
    assert f"{empty}: no records" in capsys.readouterr().err


def column_walls_record(index, labels=None):
    # Black walls column E, White column F: Black's area 45, White's 36, B+2 with komi 7
    rows = ["....XO..."] * 9
    board = "".join(rows)
    return {"index": index, "seed": 4, "size": 9, "komi": 7.0, "source": "gnugo-self",
            "moves": f"game {index}", "board": board,
            "labels": labels or board.replace("X", "a").replace("O", "a"),
            "score": 2.0, "gnugo_score": "B+2"}


def test_evaluating_only_the_boards_a_second_play_out_agrees_on(tmp_path, capsys):
    from engine.training import scoredata
    from engine.training.csatrain import split_by_second_play_out
    records = [column_walls_record(i) for i in range(3)]
    white_lost = records[1]["board"].replace("X", "a").replace("O", "d")
    second = [column_walls_record(0), column_walls_record(1, labels=white_lost)]
    agreeing, differing, missing = split_by_second_play_out(records, second)
    assert [r["index"] for r in agreeing] == [0]
    assert [r["index"] for r in differing] == [1]
    assert [r["index"] for r in missing] == [2]

    data, again = tmp_path / "data.jsonl", tmp_path / "again.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    again.write_text("".join(json.dumps(r) + "\n" for r in second))
    assert scoredata.main(["evaluate", "--data", str(data), "--agree-with", str(again),
                           "--no-review"]) == 0
    out = capsys.readouterr().out
    assert "left out: 1 labelled otherwise there, 1 not played out there" in out
    assert "1 boards (9)" in out

    other = dict(second[0], moves="another game")
    again.write_text(json.dumps(other) + "\n")
    assert scoredata.main(["evaluate", "--data", str(data), "--agree-with", str(again),
                           "--no-review"]) == 2
    assert "not a relabelled copy of the same games" in capsys.readouterr().err


def test_mini_batches_learn_a_separable_task_and_a_bad_batch_size_is_refused():
    import numpy as np
    from engine.training.csatrain import fit_mlp, train
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3000, 5))
    y = (x[:, 0] - x[:, 1] > 0).astype(float)
    step, (errors, _) = fit_mlp(x[:2500], y[:2500], x[2500:], y[2500:], 8, 5, rng,
                                batch_size=100)
    assert errors <= 10                                   # of 500 held-out points
    full, (full_errors, _) = fit_mlp(x[:2500], y[:2500], x[2500:], y[2500:], 8, 5, rng)
    assert full_errors > errors          # five full-batch updates have learnt far less
    with pytest.raises(ValueError, match="batch_size"):
        train([], batch_size=0)
