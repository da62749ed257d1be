"""Weight files: the network's parameters as data, with a metadata record, validated on load.

A weight file is an .npz archive (read with allow_pickle=False) holding two arrays:
  params    float64 (num_params,)  the flat parameter vector (the ISN's layout:
                                   engine/nets/network_forward.pxd)
  metadata  uint8                  UTF-8 JSON, an object with these keys:
    format           "kosumi-weights"
    format_version   FORMAT_VERSION
    architecture     {"name": "isn", "hidden": {"T", "S", "D", "C", "F": counts},
                      "num_inputs", "num_outputs", "explicit_biases", "num_params",
                      "rich_signal" (only when true; absent means false)}
                     or {"name": "softseg", "hidden1", "hidden2", "intervals", "cutoff",
                      "num_inputs", "num_outputs", "num_params"} (engine/nets/softseg_forward.pxd)
                     or {"name": "unitgraph", "hidden", "max_distance", "num_inputs",
                      "num_outputs", "num_params"} (engine/nets/unitnet.pyx); each
                     architecture's record is its descriptor's (engine/nets/architectures.py)
    feature_set      {"name", "version"} of the inputs the parameters were trained on (softseg:
                     also "raw", the constant input)
    board_size       the board size trained on (the net itself plays on any size)
    games_trained    self-play games behind the parameters
    trainer          the trainer's settings (any JSON object)
    created          ISO 8601 UTC time of saving
    params_sha256    hex digest of the params array's bytes
Reading order: save_weights(), load_weights() and its _validate_* helpers, new_network().
"""
import datetime
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from engine.nets import softseg
from engine.nets import unitnet
from engine.nets.architectures import (ARCHITECTURES, ArchitectureError, architecture_of,
                                       isn_network)

FORMAT_NAME = "kosumi-weights"
FORMAT_VERSION = 1
ZIP_SIGNATURE = b"PK\x03\x04"    # an .npz is a zip archive; anything else np.load would unpickle
DEFAULT_HIDDEN = {"T": 4, "S": 2, "D": 2, "C": 0, "F": 2}   # the paper's 12 hidden units
DEFAULT_INIT_SCALE = 0.1      # small: tanh units start near their linear range, outputs near 0.5


def shipped_weights_path(name):
    """A file shipped in weights/: the checkout's (also what an editable install sees), or after
    a plain `pip install .` the copy that pyproject's data-files put under
    <prefix>/share/kosumi/weights."""
    checkout = Path(__file__).resolve().parents[2] / "weights" / name
    installed = Path(sys.prefix) / "share" / "kosumi" / "weights" / name
    return installed if installed.exists() and not checkout.exists() else checkout


# The strongest of the seeds' value nets, load_evaluator()'s default: the soft-segmentation net
# won 43.0% of 200 games against GNU Go level 1 where the ISN won 3.8%, and as the RAVE tree's
# prior (asked at eight times fewer nodes) it won more games at equal time
# (docs/notebook/softseg.md). The 1-ply player's default until the judging nets below.
DEFAULT_WEIGHTS = shipped_weights_path("softseg_9x9.npz")
# The move predictors (engine/nets/policy.py), trained on 19x19 expert games; they play every size.
# The policy player's: the best predictor within 5 ms a 19x19 position (res 13 x 80; about 2
# points of top-1 above the smaller net on held-out games, docs/notebook/policy.md).
DEFAULT_POLICY_WEIGHTS = shipped_weights_path("policy_19x19.npz")
# The search's prior: a smaller net (8 x 48), asked at every node it expands; at half the
# larger net's cost a call the 9x9 search won more games with it at equal time.
DEFAULT_PRIOR_POLICY_WEIGHTS = shipped_weights_path("policy_prior_19x19.npz")
# The players' nets (the 1-ply player's, and the PUCT search's with `--search mcts`: judging
# nets, engine/nets/judge.py), each the default for the boards of up to its size, the 19x19 one
# also for larger boards: on 9x9 the net of the search's own self-play (engine/training/expert/),
# which learnt from the 19x19 one what the human games teach and 9x9 from its games; elsewhere
# the net of the 19x19 expert games, which every size reads (a fully convolutional trunk, a
# pooled score head).
DEFAULT_JUDGES = ((9, shipped_weights_path("judge_9x9.npz")),
                  (19, shipped_weights_path("judge_19x19_run.npz")))
# The ISN: the net of the CSA* data generator, and the cheaper prior (a call costs about a tenth).
ISN_WEIGHTS = shipped_weights_path("isn_9x9.npz")


class WeightFileError(ValueError):
    """A weight file that cannot be used; the message names the file and the problem."""

    def __init__(self, path, problem):
        super().__init__(f"weight file {os.fspath(path)}: {problem}")
        self.path = os.fspath(path)
        self.problem = problem

    def __reduce__(self):
        # rebuilt from its own arguments, so the message survives the trip from a worker process
        return type(self), (self.path, self.problem)


def new_network(seed, hidden=None, feature_set="isn14", scale=DEFAULT_INIT_SCALE,
                rich_signal=False):
    """A freshly initialised network: parameters drawn from N(0, scale^2) with numpy's PCG64
    seeded by seed, so the same seed gives the same network (the trainer starts from it).
    feature_set: the input set (engine/nets/features.pyx); rich_signal: NeuroGo's extra outputs."""
    counts = dict(DEFAULT_HIDDEN if hidden is None else hidden)
    return _initialised(isn_network(counts, feature_set, rich_signal=rich_signal), seed, scale)


def new_softseg_network(seed, feature_set="neurogo", hidden1=softseg.DEFAULT_HIDDEN1,
                        hidden2=softseg.DEFAULT_HIDDEN2, intervals=softseg.DEFAULT_INTERVALS,
                        scale=softseg.DEFAULT_INIT_SCALE):
    """A freshly initialised soft-segmentation network, parameters from N(0, scale^2) (PCG64
    seeded by seed)."""
    return _initialised(softseg.SoftSegNetwork(feature_set, hidden1, hidden2, intervals), seed, scale)


def new_unitgraph_network(seed, feature_set=unitnet.DEFAULT_FEATURE_SET,
                          hidden=unitnet.DEFAULT_HIDDEN, max_distance=unitnet.DEFAULT_MAX_DISTANCE,
                          scale=unitnet.DEFAULT_INIT_SCALE):
    """A freshly initialised unit-graph network (NeuroGo 1996), parameters from N(0, scale^2)
    (PCG64 seeded by seed)."""
    return _initialised(unitnet.UnitGraphNetwork(feature_set, hidden, max_distance), seed, scale)


def _initialised(network, seed, scale):
    """network with its parameters drawn from N(0, scale^2) by numpy's PCG64 seeded by seed."""
    network.set_params(np.random.default_rng(seed).normal(0.0, scale, network.num_params))
    return network


def save_weights(path, network, board_size, games_trained, trainer=None, created=None):
    """Write network to path atomically (a temporary file in the same directory, then
    os.replace), so a reader never sees a half-written file. Returns the metadata written."""
    path = Path(path)
    params = network.get_params()
    if not 2 <= int(board_size) <= 25:
        raise ValueError(f"board_size must be 2..25, not {board_size}")
    if int(games_trained) < 0:
        raise ValueError(f"games_trained must be >= 0, not {games_trained}")
    architecture = architecture_of(network)
    metadata = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "architecture": {"name": architecture.name, **architecture.record(network)},
        "feature_set": architecture.feature_record(network),
        "board_size": int(board_size),
        "games_trained": int(games_trained),
        "trainer": dict(trainer or {}),
        "created": created or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "params_sha256": hashlib.sha256(params.tobytes()).hexdigest(),
    }
    encoded = np.frombuffer(json.dumps(metadata, sort_keys=True).encode("utf-8"), dtype=np.uint8)
    directory = path.parent if str(path.parent) else Path(".")
    descriptor, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            np.savez(handle, params=params, metadata=encoded)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes the file private (0600); a weight file is shared data like any other file
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    return metadata


def read_npz(path, error_type):
    """Every array of an .npz file, read without unpickling; error_type(path, problem) for a
    file that is missing, not a regular file, unreadable, not a zip archive, pickled or damaged.
    Weight files and the CSA* classifier files (engine/scoring/csa.py) are read through it."""
    path = Path(path)
    if not path.exists():
        raise error_type(path, "file not found")
    if not path.is_file():
        raise error_type(path, "not a regular file")
    try:
        with open(path, "rb") as handle:
            signature = handle.read(4)
    except OSError as error:
        raise error_type(path, f"cannot be read: {error.strerror or error}") from None
    if signature != ZIP_SIGNATURE:
        raise error_type(path, "not an .npz archive (no zip signature: empty, truncated or "
                               "another kind of file)")
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except MemoryError:
        raise
    except Exception as error:   # zipfile and the npy parser raise many kinds on damaged bytes
        if isinstance(error, ValueError) and "allow_pickle" in str(error):
            problem = "holds pickled Python objects (or a damaged array header); they are never loaded"
        else:
            problem = f"not a readable .npz archive (truncated or corrupt): {error}"
        raise error_type(path, problem) from None


def architecture_name(path):
    """The architecture name a weight file's metadata records (its `architecture` `name`: "isn",
    "policy", "judge", ...), read without the parameters and without unpickling; None when the
    file cannot tell (missing, damaged, not a weight file): the loader then says why."""
    try:
        with open(path, "rb") as handle:
            if handle.read(4) != ZIP_SIGNATURE:
                return None
        with np.load(path, allow_pickle=False) as archive:
            metadata = json.loads(archive["metadata"].tobytes().decode("utf-8"))
        name = metadata["architecture"]["name"]
    except MemoryError:
        raise
    except Exception:   # whatever a damaged file raises, its loader reports by name
        return None
    return name if isinstance(name, str) else None


def load_weights(path, feature_set=None):
    """(Network, metadata) from a weight file; WeightFileError for a missing, truncated, corrupt
    or mismatched file. feature_set: the input feature set the caller will feed the net; a file
    trained on another set is refused (a net must never meet inputs it was not trained on)."""
    path = Path(path)
    known_sets = set().union(*(set(a.feature_sets) for a in ARCHITECTURES.values()))
    if feature_set is not None and feature_set not in known_sets:
        raise ValueError(f"unknown feature set {feature_set!r}; known: {sorted(known_sets)}")
    arrays = read_npz(path, WeightFileError)
    for required in ("params", "metadata"):
        if required not in arrays:
            raise WeightFileError(path, f"missing array {required!r} (has {sorted(arrays)})")
    params = arrays["params"]
    raw_metadata = arrays["metadata"]
    metadata = _decode_metadata(path, raw_metadata)
    trained_on = metadata["feature_set"].get("name")
    if feature_set is not None and trained_on != feature_set:
        raise WeightFileError(path, f"trained on input feature set {trained_on!r}, but the caller "
                                    f"feeds {feature_set!r}")
    network = _network_from_metadata(path, metadata)
    _validate_params(path, params, metadata, network)
    network.set_params(params)
    return network, metadata


def _decode_metadata(path, raw):
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise WeightFileError(path, f"metadata must be UTF-8 JSON bytes, got {raw.dtype} "
                                    f"shape {raw.shape}")
    try:
        metadata = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise WeightFileError(path, f"metadata is not valid JSON: {error}") from None
    if not isinstance(metadata, dict):
        raise WeightFileError(path, "metadata is not a JSON object")
    if metadata.get("format") != FORMAT_NAME:
        raise WeightFileError(path, f"not a kosumi weight file (format {metadata.get('format')!r})")
    version = metadata.get("format_version")
    if version != FORMAT_VERSION:
        raise WeightFileError(path, f"format version {version!r} is not supported "
                                    f"(this kosumi reads version {FORMAT_VERSION})")
    for key, kind in (("architecture", dict), ("feature_set", dict), ("board_size", int),
                      ("games_trained", int), ("trainer", dict), ("created", str),
                      ("params_sha256", str)):
        if key not in metadata:
            raise WeightFileError(path, f"metadata lacks {key!r}")
        if not isinstance(metadata[key], kind) or isinstance(metadata[key], bool):
            raise WeightFileError(path, f"metadata {key!r} should be {kind.__name__}, "
                                        f"got {metadata[key]!r}")
    if not 2 <= metadata["board_size"] <= 25:
        raise WeightFileError(path, f"board_size {metadata['board_size']} is outside 2..25")
    if metadata["games_trained"] < 0:
        raise WeightFileError(path, f"games_trained {metadata['games_trained']} is negative")
    return metadata


def _network_from_metadata(path, metadata):
    """The network the metadata describes (its architecture's descriptor builds it), every size
    checked; WeightFileError naming the file otherwise."""
    name = metadata["architecture"].get("name")
    if name not in tuple(ARCHITECTURES):
        raise WeightFileError(path, f"architecture {name!r} is not supported "
                                    f"(this kosumi runs {' and '.join(map(repr, ARCHITECTURES))})")
    architecture = ARCHITECTURES[name]
    try:
        feature_set = architecture.check_feature_set(metadata["feature_set"])
        return architecture.build(metadata["architecture"], feature_set)
    except ArchitectureError as error:
        raise WeightFileError(path, str(error)) from None


def _validate_params(path, params, metadata, network, dtype=np.float64):
    """The flat params of a file fit network (its num_params, of dtype: the value nets store
    float64, the policy net float32), match their checksum and are finite; WeightFileError
    naming the file otherwise."""
    if params.dtype != dtype or params.shape != (network.num_params,):
        raise WeightFileError(path, f"params should be {np.dtype(dtype).name} of shape "
                                    f"({network.num_params},), got {params.dtype} shape {params.shape}")
    if hashlib.sha256(params.tobytes()).hexdigest() != metadata["params_sha256"]:
        raise WeightFileError(path, "params do not match their recorded checksum (corrupt or altered)")
    if not np.all(np.isfinite(params)):
        raise WeightFileError(path, "params contain NaN or infinity")
