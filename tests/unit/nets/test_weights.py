"""Weight files: round trip, atomic saving, fresh networks, and every refusal on load."""
import json
import os

import numpy as np
import pytest

from engine.rules.board import BLACK, Board
from engine.nets import network as isn
from engine.nets import weights as weight_files
from engine.nets.weights import (FORMAT_VERSION, WeightFileError, load_weights, new_network,
                            save_weights)


@pytest.fixture
def saved(tmp_path):
    network = new_network(seed=31)
    path = tmp_path / "net.npz"
    metadata = save_weights(path, network, board_size=9, games_trained=1234,
                            trainer={"learning_rate": 5e-6, "lambda": 0.9})
    return path, network, metadata


def write_archive(path, params, metadata):
    """An .npz with arbitrary contents, for the refusal cases."""
    encoded = np.frombuffer(json.dumps(metadata).encode("utf-8"), dtype=np.uint8)
    with open(path, "wb") as handle:
        np.savez(handle, params=params, metadata=encoded)


def variant(saved_fixture, tmp_path, change_metadata=None, params=None):
    path, network, metadata = saved_fixture
    metadata = json.loads(json.dumps(metadata))
    if change_metadata:
        change_metadata(metadata)
    params = network.get_params() if params is None else params
    target = tmp_path / "variant.npz"
    write_archive(target, params, metadata)
    return target


def refused(path, *fragments):
    with pytest.raises(WeightFileError) as caught:
        load_weights(path)
    message = str(caught.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message, message
    return caught.value


def test_round_trip(saved):
    path, network, written = saved
    loaded, metadata = load_weights(path)
    assert np.array_equal(loaded.get_params(), network.get_params())
    assert metadata == written
    assert metadata["format_version"] == FORMAT_VERSION
    assert metadata["architecture"] == {
        "name": "isn", "hidden": {"T": 4, "S": 2, "D": 2, "C": 0, "F": 2}, "num_inputs": 14,
        "num_outputs": 7, "explicit_biases": False, "num_params": 714}
    assert metadata["feature_set"] == {"name": "isn14", "version": 1}
    assert (metadata["board_size"], metadata["games_trained"]) == (9, 1234)
    assert metadata["trainer"] == {"learning_rate": 5e-6, "lambda": 0.9}
    assert metadata["created"].endswith("+00:00")


def test_the_same_net_loads_for_any_board_size(saved):
    path, network, _ = saved
    loaded, _ = load_weights(path)
    for size in (5, 9, 19, 25):
        board = Board(size)
        board.play(board.loc(size // 2, size // 2), BLACK)
        weights = isn.prior_liberty_weights(board.num_locs)
        assert np.array_equal(loaded.evaluate_board(board, BLACK, weights)[0],
                              network.evaluate_board(board, BLACK, weights)[0])


def test_other_architectures_round_trip(tmp_path):
    network = new_network(seed=3, hidden={"T": 2, "S": 1, "D": 0, "C": 1, "F": 1})
    path = tmp_path / "small.npz"
    save_weights(path, network, board_size=7, games_trained=0)
    loaded, metadata = load_weights(path)
    assert loaded.num_params == network.num_params == metadata["architecture"]["num_params"]
    assert np.array_equal(loaded.get_params(), network.get_params())


def test_feature_set_and_version_travel_with_the_weights(tmp_path):
    network = new_network(seed=4, feature_set="neurogo")
    path = tmp_path / "neurogo.npz"
    metadata = save_weights(path, network, board_size=9, games_trained=0)
    assert metadata["feature_set"] == {"name": "neurogo", "version": 1}
    assert metadata["architecture"]["num_inputs"] == 79
    assert metadata["architecture"]["explicit_biases"] is True
    loaded, _ = load_weights(path, feature_set="neurogo")
    assert loaded.feature_set == "neurogo"
    assert np.array_equal(loaded.get_params(), network.get_params())
    # A caller that feeds other inputs is refused, naming both sets.
    with pytest.raises(WeightFileError) as caught:
        load_weights(path, feature_set="isn14")
    assert "trained on input feature set 'neurogo', but the caller feeds 'isn14'" in str(caught.value)
    with pytest.raises(ValueError, match="unknown feature set 'nonsense'"):
        load_weights(path, feature_set="nonsense")


def test_the_rich_signal_option_travels_with_the_weights(saved, tmp_path):
    network = new_network(seed=6, rich_signal=True)
    path = tmp_path / "rich.npz"
    metadata = save_weights(path, network, board_size=9, games_trained=0)
    assert metadata["architecture"]["rich_signal"] is True
    assert metadata["architecture"]["num_outputs"] == 17
    loaded, _ = load_weights(path)
    assert loaded.rich_signal and loaded.num_outputs == 17
    assert np.array_equal(loaded.get_params(), network.get_params())
    # Without the key (as every file written before the option) a net has no rich signal.
    assert "rich_signal" not in saved[2]["architecture"]
    assert not load_weights(saved[0])[0].rich_signal
    refused(variant(saved, tmp_path, lambda m: m["architecture"].update(rich_signal=True)),
            "architecture has 7 outputs, not 17")
    refused(variant(saved, tmp_path, lambda m: m["architecture"].update(rich_signal="yes")),
            "rich_signal should be true or false")


def test_fresh_networks_are_small_random_and_reproducible():
    first, again, other = new_network(seed=1), new_network(seed=1), new_network(seed=2)
    assert np.array_equal(first.get_params(), again.get_params())
    assert not np.array_equal(first.get_params(), other.get_params())
    params = first.get_params()
    assert 0.05 < params.std() < 0.2 and abs(params.mean()) < 0.02


def test_saving_is_atomic(saved, tmp_path, monkeypatch):
    path, network, _ = saved
    original = path.read_bytes()

    def broken_savez(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(weight_files.np, "savez", broken_savez)
    with pytest.raises(OSError, match="disk full"):
        save_weights(path, new_network(seed=99), board_size=9, games_trained=1)
    assert path.read_bytes() == original          # the old file is untouched
    assert sorted(os.listdir(tmp_path)) == ["net.npz"]   # and no temporary file is left
    monkeypatch.undo()
    save_weights(path, new_network(seed=99), board_size=9, games_trained=1)
    assert sorted(os.listdir(tmp_path)) == ["net.npz"]
    assert load_weights(path)[1]["games_trained"] == 1


def test_save_rejects_bad_metadata(tmp_path):
    with pytest.raises(ValueError):
        save_weights(tmp_path / "x.npz", new_network(seed=1), board_size=1, games_trained=0)
    with pytest.raises(ValueError):
        save_weights(tmp_path / "x.npz", new_network(seed=1), board_size=9, games_trained=-1)


# ------------------------------------------------------------------------------- refusals

def test_missing_file_is_refused(tmp_path):
    error = refused(tmp_path / "nowhere.npz", "file not found")
    assert isinstance(error, ValueError)
    refused(tmp_path, "not a regular file")


def test_truncated_file_is_refused(saved):
    path, _, _ = saved
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    refused(path, "truncated or corrupt")
    path.write_bytes(b"")
    refused(path, "no zip signature")


def test_corrupt_file_is_refused(saved):
    path, _, _ = saved
    data = bytearray(path.read_bytes())
    npy = data.find(b"\x93NUMPY")                # the first member, params.npy, stored as is
    header_length = int.from_bytes(data[npy + 8:npy + 10], "little")
    inside = npy + 10 + header_length + 800      # inside the params array's bytes
    data[inside:inside + 16] = bytes(255 - b for b in data[inside:inside + 16])
    path.write_bytes(bytes(data))
    refused(path, "truncated or corrupt", "CRC")
    path.write_text("this is not a zip archive")
    refused(path, "no zip signature")


def test_altered_params_are_refused(saved, tmp_path):
    path, network, _ = saved
    altered = network.get_params()
    altered[0] += 1.0
    refused(variant(saved, tmp_path, params=altered), "checksum")


def test_missing_arrays_are_refused(tmp_path):
    path = tmp_path / "bare.npz"
    with open(path, "wb") as handle:
        np.savez(handle, params=np.zeros(714))
    refused(path, "missing array 'metadata'")


def test_pickled_objects_are_refused(tmp_path):
    path = tmp_path / "pickled.npz"
    with open(path, "wb") as handle:
        np.savez(handle, params=np.zeros(714), metadata=np.array([{"format": "x"}], dtype=object))
    refused(path, "pickled Python objects")


def test_bad_metadata_is_refused(tmp_path, saved):
    path = tmp_path / "garbled.npz"
    with open(path, "wb") as handle:
        np.savez(handle, params=np.zeros(714), metadata=np.frombuffer(b"{not json", dtype=np.uint8))
    refused(path, "not valid JSON")
    refused(variant(saved, tmp_path, lambda m: m.update(format="something-else")),
            "not a kosumi weight file")
    refused(variant(saved, tmp_path, lambda m: m.pop("board_size")), "lacks 'board_size'")
    refused(variant(saved, tmp_path, lambda m: m.update(games_trained="many")), "'games_trained'")
    refused(variant(saved, tmp_path, lambda m: m.update(board_size=40)), "board_size 40")


def test_other_format_versions_are_refused(saved, tmp_path):
    refused(variant(saved, tmp_path, lambda m: m.update(format_version=FORMAT_VERSION + 1)),
            f"format version {FORMAT_VERSION + 1} is not supported")


def test_mismatched_architecture_or_features_are_refused(saved, tmp_path):
    def set_arch(key, value):
        return lambda m: m["architecture"].update({key: value})

    refused(variant(saved, tmp_path, set_arch("name", "cnn")), "architecture 'cnn' is not supported")
    refused(variant(saved, tmp_path, set_arch("num_params", 700)),
            "says 700 parameters; that architecture has 714")
    refused(variant(saved, tmp_path, set_arch("num_outputs", 6)), "6 outputs")
    refused(variant(saved, tmp_path, set_arch("num_inputs", 15)), "15 inputs")
    refused(variant(saved, tmp_path, set_arch("hidden", {"T": 4})), "hidden counts")
    refused(variant(saved, tmp_path, set_arch("explicit_biases", "no")), "explicit_biases")
    refused(variant(saved, tmp_path, lambda m: m["feature_set"].update(version=2)),
            "input feature set isn14 version 2 does not match this kosumi's version 1")
    refused(variant(saved, tmp_path, lambda m: m["feature_set"].update(name="raw-board")),
            "unknown input feature set 'raw-board'")
    refused(variant(saved, tmp_path, lambda m: m["feature_set"].update(name="neurogo")),
            "architecture has 14 inputs; feature set neurogo has 79")
    # Metadata describing a bigger network than the params hold.
    refused(variant(saved, tmp_path, lambda m: m["architecture"].update(
        hidden={"T": 5, "S": 2, "D": 2, "C": 0, "F": 2}, num_params=714 + 7 * 3 + 3 * 14)),
        "params should be float64 of shape (777,)")


def test_non_finite_or_mistyped_params_are_refused(saved, tmp_path):
    path, network, metadata = saved
    bad = network.get_params()
    bad[5] = np.nan

    def reseal(m):
        import hashlib
        m["params_sha256"] = hashlib.sha256(bad.tobytes()).hexdigest()

    refused(variant(saved, tmp_path, reseal, params=bad), "NaN")
    refused(variant(saved, tmp_path, params=network.get_params().astype(np.float32)), "float64")


def test_errors_with_their_own_arguments_survive_pickling():
    # worker processes (the trainer's, the CSA* data generator's) send their exceptions to the
    # parent by pickling: the message must arrive whole, not as a TypeError about arguments
    import pickle
    from engine.rules.board import IllegalMove
    from engine.scoring.csa import ClassifierFileError
    from engine.tools.gtp_client import GtpCommandError
    errors = [WeightFileError("weights/x.npz", "not found"),
              ClassifierFileError("weights/csa.npz", "truncated"),
              GtpCommandError("genmove b", "boom"),
              IllegalMove("ko"), IllegalMove("superko", "illegal move: the position repeats")]
    for error in errors:
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and str(copy) == str(error)
        assert vars(copy) == vars(error)
