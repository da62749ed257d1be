"""Training data of the move-prediction network: every position of a collection of game records,
stored as position records (engine/nets/policy_inputs.pyx) in shards on disk, and read back as
shuffled batches of feature planes.

`prepare()` (`kosumi-train policy data`) replays the records (engine/training/sgfdata.py) and
writes, per shard of about `shard_positions` positions (whole games only):
    shard-NNNNN.records.npy   uint8 (n, RECORD_PLANES, S*S)   the position before each move
    shard-NNNNN.moves.npy     int16 (n,)     the move played: row * S + col, S*S for a pass
    shard-NNNNN.own.npy       uint8 (n,)     the colour that played it
    shard-NNNNN.start.npy     int32 (n,)     the index (in the shard) of the game's first position
and `manifest.json` (sources, board size, game trees read so far, counts). A shard and then the
manifest are written atomically, so a killed `prepare` resumes after its last shard.

`PolicyDataset` memory-maps the shards of one or more such directories; `random_draws()` picks
positions uniformly over all of them (so from many games at once) and a random symmetry;
`batch()` gathers each one's earlier positions for feature sets with history, and returns
feature planes under that symmetry.
"""
import json
import os
from pathlib import Path

import numpy as np

from engine.nets.policy_features import feature_set, features, move_permutation, transform
from engine.nets.policy_inputs import RECORD_PLANES, PositionEncoder, new_record
from engine.rules.coords import PASS
from engine.rules.game import SYMMETRIES
from engine.training.sgfdata import ReadCounts, iter_games, replay

MANIFEST = "manifest.json"
DATA_FORMAT = "kosumi-policy-data"
DATA_VERSION = 1
SHARD_POSITIONS = 50_000
RECENT = 15            # moves remembered for the AGE plane


class DataError(ValueError):
    """A data directory that cannot be used; the message names it."""


def _atomic_json(path, value):
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(value, indent=1) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def _atomic_npy(path, array):
    temporary = path.with_name(f".{path.name}.tmp.npy")
    np.save(temporary, array)
    os.replace(temporary, path)


def read_manifest(directory):
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise DataError(f"{directory}: not a policy data directory (no {MANIFEST}); make one with "
                        f"`kosumi-train policy data`")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DataError(f"{path}: unreadable manifest ({error})") from None
    if manifest.get("format") != DATA_FORMAT or manifest.get("version") != DATA_VERSION:
        raise DataError(f"{path}: not a {DATA_FORMAT} version {DATA_VERSION} manifest")
    return manifest


def move_index(loc, size):
    if loc == PASS:
        return size * size
    stride = size + 2
    return (loc // stride - 1) * size + (loc % stride - 1)


def game_positions(record, encoder):
    """(records (n, RECORD_PLANES, S*S), moves, own) of one game; ValueError if it does not
    replay."""
    size = record.size
    recent, records, moves, own = [], [], [], []
    for board, colour, loc in replay(record):
        planes = new_record(size)
        encoder.encode(board, colour, recent[::-1][:RECENT], planes)
        records.append(planes)
        moves.append(move_index(loc, size))
        own.append(colour)
        recent.append(loc)
    return records, moves, own


def prepare(sources, out, size=19, max_games=None, shard_positions=SHARD_POSITIONS, progress=None):
    """Writes (or continues) the data directory out from the records under sources. Returns the
    manifest. max_games: stop after this many games in all (None: every game)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sources = [str(Path(source)) for source in sources]
    if (out / MANIFEST).exists():
        manifest = read_manifest(out)
        if manifest["sources"] != sources or manifest["size"] != size:
            raise DataError(f"{out}: holds data of {manifest['sources']} at size {manifest['size']}; "
                            f"continue it with the same sources and size, or choose a new directory")
    else:
        manifest = {"format": DATA_FORMAT, "version": DATA_VERSION, "size": size, "sources": sources,
                    "trees_done": 0, "games": 0, "positions": 0, "skipped": {}, "shards": []}
    counts = ReadCounts(games=manifest["games"], skipped=dict(manifest["skipped"]))
    encoder = PositionEncoder()
    pending = {"records": [], "moves": [], "own": [], "start": []}
    games_in_shard = 0

    def flush(trees_done):
        nonlocal games_in_shard
        if pending["records"]:
            name = f"shard-{len(manifest['shards']):05d}"
            _atomic_npy(out / f"{name}.records.npy", np.stack(pending["records"]))
            _atomic_npy(out / f"{name}.moves.npy", np.array(pending["moves"], np.int16))
            _atomic_npy(out / f"{name}.own.npy", np.array(pending["own"], np.uint8))
            _atomic_npy(out / f"{name}.start.npy", np.array(pending["start"], np.int32))
            manifest["shards"].append({"name": name, "positions": len(pending["moves"]),
                                       "games": games_in_shard})
            manifest["positions"] += len(pending["moves"])
        manifest["trees_done"] = trees_done
        manifest["games"], manifest["skipped"] = counts.games, dict(counts.skipped)
        _atomic_json(out / MANIFEST, manifest)
        for values in pending.values():
            values.clear()
        games_in_shard = 0

    last_tree = manifest["trees_done"] - 1
    for tree, record in iter_games(sources, counts, sizes={size}, skip=manifest["trees_done"]):
        if max_games is not None and counts.games > max_games:
            counts.games -= 1
            break
        last_tree = tree
        try:
            records, moves, own = game_positions(record, encoder)
        except ValueError:
            counts.games -= 1
            counts.skip("illegal move or setup")
            continue
        start = len(pending["moves"])
        pending["records"] += records
        pending["moves"] += moves
        pending["own"] += own
        pending["start"] += [start] * len(moves)
        games_in_shard += 1
        if progress:
            progress(counts, manifest["positions"] + len(pending["moves"]))
        if len(pending["moves"]) >= shard_positions:
            flush(tree + 1)
    flush(last_tree + 1)
    return manifest


class PolicyDataset:
    """The positions of one or more data directories, memory-mapped, for random batches."""

    def __init__(self, directories):
        self.shards, sizes = [], set()
        for directory in directories:
            manifest = read_manifest(directory)
            sizes.add(manifest["size"])
            for shard in manifest["shards"]:
                base = Path(directory) / shard["name"]
                try:
                    arrays = tuple(np.load(f"{base}.{part}.npy", mmap_mode="r", allow_pickle=False)
                                   for part in ("records", "moves", "own", "start"))
                except (OSError, ValueError) as error:
                    raise DataError(f"{base}: unreadable shard ({error})") from None
                records, moves, own, start = arrays
                n = shard["positions"]
                if (records.shape != (n, RECORD_PLANES, manifest["size"] ** 2)
                        or moves.shape != (n,) or own.shape != (n,) or start.shape != (n,)):
                    raise DataError(f"{base}: shard arrays do not match the manifest's {n} positions")
                self.shards.append(arrays)
        if not self.shards:
            raise DataError(f"no positions in {', '.join(map(str, directories))}")
        if len(sizes) != 1:
            raise DataError(f"data directories of different board sizes: {sorted(sizes)}")
        self.size = sizes.pop()
        self.lengths = np.array([len(shard[1]) for shard in self.shards])
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)])
        self.positions = int(self.offsets[-1])

    def _locate(self, indices):
        """(shard's arrays, index in the shard) of each global position index."""
        shard_of = np.searchsorted(self.offsets, indices, side="right") - 1
        return [(self.shards[shard], int(index - self.offsets[shard]))
                for index, shard in zip(indices, shard_of)]

    def gather(self, indices, history):
        """(records (B, history + 1, RECORD_PLANES, S*S), moves, own) of global position indices."""
        points = self.size * self.size
        records = np.zeros((len(indices), history + 1, RECORD_PLANES, points), np.uint8)
        moves = np.empty(len(indices), np.int64)
        own = np.empty(len(indices), np.uint8)
        for row, (shard, local) in enumerate(self._locate(indices)):
            shard_records, shard_moves, shard_own, shard_start = shard
            first = int(shard_start[local])
            for t in range(min(history, local - first) + 1):
                records[row, t] = shard_records[local - t]
            moves[row], own[row] = shard_moves[local], shard_own[local]
        return records, moves, own

    def move_numbers(self, indices):
        """The number in its game (1: the first move) of the move played at each position."""
        return np.array([local - int(shard[3][local]) + 1 for shard, local in self._locate(indices)],
                        np.int64)

    def batch(self, feature_set_name, indices, symmetry=0):
        """(planes float32 (B, planes, S, S), moves int64 (B,)) of the positions, under a board
        symmetry."""
        spec = feature_set(feature_set_name)
        records, moves, own = self.gather(indices, spec.history)
        planes = features(feature_set_name, records, own)
        if symmetry:
            planes = np.ascontiguousarray(transform(planes, symmetry))
            moves = move_permutation(self.size, symmetry)[moves]
        return planes, moves

    def random_draws(self, batch_size, rng, augment=True):
        """Endless (indices, symmetry) of batches of uniformly drawn positions (so from many
        games at once), each batch under one random symmetry (augment) or as played (0)."""
        while True:
            indices = rng.integers(0, self.positions, size=batch_size)
            symmetry = int(rng.integers(SYMMETRIES))
            yield indices, symmetry if augment else 0
