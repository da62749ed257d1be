"""Training data of the move-prediction network and of the nets that judge positions: every
position of a collection of game records, stored as position records
(engine/nets/policy_inputs.pyx) in shards on disk, with what each game's record says about its
end, and read back as shuffled batches of feature planes and targets.

`prepare()` (`kosumi-train policy data`) replays the records (engine/training/sgfdata.py) and
writes, per shard of about `shard_positions` positions (whole games only; n positions of g games,
each game's positions in order, the games in order):
    shard-NNNNN.records.npy   uint8 (n, RECORD_PLANES, S*S)   the position before each move
    shard-NNNNN.moves.npy     int16 (n,)     the move played: row * S + col, S*S for a pass
    shard-NNNNN.own.npy       uint8 (n,)     the colour that played it (1 Black, 2 White)
    shard-NNNNN.start.npy     int32 (n,)     the index (in the shard) of the game's first position
    shard-NNNNN.komi.npy      float32 (g,)   the record's komi (KM)
    shard-NNNNN.winner.npy    int8 (g,)      +1 Black won, -1 White won, 0 no value target
    shard-NNNNN.margin.npy    float32 (g,)   Black's final margin in points, NaN when unknown
    shard-NNNNN.ownership.npy int8 (g, S*S)  the final owner of every point (row * S + col):
                                             +1 Black, -1 White, 0 neutral; zeros when unknown
    shard-NNNNN.owned.npy     bool (g,)      whether the game's ownership is known
(the per-game files from version 2 on; engine/training/gametargets.py says which results give a
winner, a margin and an ownership) and `manifest.json` (sources, board size, game trees read so
far, counts: games, positions, the games with a value target, a margin, an ownership, how the
ownerships were found and why the others were not). A shard and then the manifest are written
atomically, so a killed `prepare` resumes after its last shard.

`PolicyDataset` memory-maps the shards of one or more such directories; `random_draws()` picks
positions uniformly over all of them (so from many games at once) and a random symmetry;
`batch()` gathers each one's earlier positions for feature sets with history, and returns
feature planes under that symmetry; `judge_targets()` the game's targets seen from the side to
move at each position, under the same symmetry (version 2 data only; version 1 still serves the
policy trainer). Self-play data (engine/training/expert/chunks.py) has the same layout and the
search's visits and values beside it: `search_policy()` and `td_returns()` read them.
"""
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.nets.policy_features import feature_set, features, move_permutation, transform
from engine.nets.policy_inputs import RECORD_PLANES, PositionEncoder, new_record
from engine.rules.board import BLACK
from engine.rules.coords import PASS
from engine.rules.game import SYMMETRIES
from engine.training.gametargets import game_targets
from engine.training.sgfdata import ReadCounts, iter_games, replay

MANIFEST = "manifest.json"
DATA_FORMAT = "kosumi-policy-data"
DATA_VERSION = 2
READABLE_VERSIONS = (1, 2)   # version 1: the positions without the games' result targets
SHARD_POSITIONS = 50_000
RECENT = 15            # moves remembered for the AGE plane
POSITION_PARTS = ("records", "moves", "own", "start")
GAME_DTYPES = {"komi": np.float32, "winner": np.int8, "margin": np.float32,
               "ownership": np.int8, "owned": np.bool_}
TARGET_COUNTS = ("value_games", "scored_games", "owned_games")


class DataError(ValueError):
    """A data directory that cannot be used; the message names it."""


def atomic_json(path, value):
    """Writes value as JSON to path whole or not at all (a hidden file renamed into place)."""
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
    if manifest.get("format") != DATA_FORMAT or manifest.get("version") not in READABLE_VERSIONS:
        raise DataError(f"{path}: not a {DATA_FORMAT} manifest of version "
                        f"{' or '.join(map(str, READABLE_VERSIONS))}")
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


class PendingShard:
    """The positions and the games' targets (gametargets.GameTargets) read since the last shard
    was written."""

    def __init__(self):
        self.positions = {part: [] for part in POSITION_PARTS}
        self.games = []

    def __len__(self):
        return len(self.positions["moves"])

    def add(self, records, moves, own, targets):
        start = len(self)
        self.positions["records"] += records
        self.positions["moves"] += moves
        self.positions["own"] += own
        self.positions["start"] += [start] * len(moves)
        self.games.append(targets)

    def write(self, out, name):
        """Writes the shard's files (each atomically); returns its manifest entry."""
        arrays = {"records": np.stack(self.positions["records"]),
                  "moves": np.array(self.positions["moves"], np.int16),
                  "own": np.array(self.positions["own"], np.uint8),
                  "start": np.array(self.positions["start"], np.int32),
                  "komi": np.array([g.komi for g in self.games], np.float32),
                  "winner": np.array([g.winner for g in self.games], np.int8),
                  "margin": np.array([g.margin for g in self.games], np.float32),
                  "ownership": np.stack([g.ownership for g in self.games]).astype(np.int8),
                  "owned": np.array([g.owned for g in self.games], np.bool_)}
        for part, array in arrays.items():
            _atomic_npy(out / f"{name}.{part}.npy", array)
        return {"name": name, "positions": len(self), "games": len(self.games)}

    def tally(self, manifest):
        """Adds the games' targets to the manifest's counts."""
        for game in self.games:
            manifest["value_games"] += game.winner != 0
            manifest["scored_games"] += math.isfinite(game.margin)
            manifest["owned_games"] += game.owned
            notes = manifest["owned_by" if game.owned else "not_owned"]
            notes[game.ownership_note] = notes.get(game.ownership_note, 0) + 1

    def clear(self):
        for values in self.positions.values():
            values.clear()
        self.games.clear()


def new_manifest(sources, size):
    """A data directory's manifest before its first shard."""
    return {"format": DATA_FORMAT, "version": DATA_VERSION, "size": size, "sources": sources,
            "trees_done": 0, "games": 0, "positions": 0, "skipped": {}, "shards": [],
            **{name: 0 for name in TARGET_COUNTS}, "owned_by": {}, "not_owned": {}}


def _continued_manifest(out, sources, size):
    manifest = read_manifest(out)
    if manifest["sources"] != sources or manifest["size"] != size:
        raise DataError(f"{out}: holds data of {manifest['sources']} at size {manifest['size']}; "
                        f"continue it with the same sources and size, or choose a new directory")
    if manifest["version"] != DATA_VERSION:
        raise DataError(f"{out}: holds version {manifest['version']} data, without the games' "
                        f"result targets; prepare the sources again into a new directory")
    return manifest


def prepare(sources, out, size=19, max_games=None, shard_positions=SHARD_POSITIONS, progress=None):
    """Writes (or continues) the data directory out from the records under sources. Returns the
    manifest. max_games: stop after this many games in all (None: every game). A game without
    moves counts among the games read but has no positions, so no place in a shard."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sources = [str(Path(source)) for source in sources]
    manifest = (_continued_manifest(out, sources, size) if (out / MANIFEST).exists()
                else new_manifest(sources, size))
    counts = ReadCounts(games=manifest["games"], skipped=dict(manifest["skipped"]))
    encoder = PositionEncoder()
    pending = PendingShard()

    def flush(trees_done):
        if len(pending):
            name = f"shard-{len(manifest['shards']):05d}"
            manifest["shards"].append(pending.write(out, name))
            manifest["positions"] += len(pending)
            pending.tally(manifest)
        manifest["trees_done"] = trees_done
        manifest["games"], manifest["skipped"] = counts.games, dict(counts.skipped)
        atomic_json(out / MANIFEST, manifest)
        pending.clear()

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
        if moves:
            pending.add(records, moves, own, game_targets(record))
        if progress:
            progress(counts, manifest["positions"] + len(pending))
        if len(pending) >= shard_positions:
            flush(tree + 1)
    flush(last_tree + 1)
    return manifest


@dataclass
class JudgeTargets:
    """A batch's targets for a net that judges positions, each from the side to move's point of
    view at its position (PolicyDataset.judge_targets)."""
    komi: np.ndarray              # float32 (B,): the komi the side to move receives (White: +KM)
    value: np.ndarray             # float32 (B,): 1 the side to move won, 0 it lost
    value_known: np.ndarray       # bool (B,)
    score: np.ndarray             # float32 (B,): its final margin in points; 0 where unknown
    score_known: np.ndarray       # bool (B,)
    ownership: np.ndarray         # float32 (B, S, S): +1 its point at the end, -1 the
                                  # opponent's, 0 neutral; under the batch's symmetry; 0 unknown
    ownership_known: np.ndarray   # bool (B,)


def _load_game_arrays(base, games, size):
    """The per-game arrays of a version 2 shard, checked against the manifest's games: the
    small ones read, the ownership memory-mapped. DataError naming a file that does not fit."""
    expected = {part: (games, size * size) if part == "ownership" else (games,)
                for part in GAME_DTYPES}
    arrays = {}
    for part, dtype in GAME_DTYPES.items():
        path = f"{base}.{part}.npy"
        try:
            array = np.load(path, mmap_mode="r" if part == "ownership" else None,
                            allow_pickle=False)
        except (OSError, ValueError) as error:
            raise DataError(f"{path}: unreadable ({error})") from None
        if array.shape != expected[part] or array.dtype != dtype:
            raise DataError(f"{path}: {array.dtype} {array.shape} where the manifest's {games} "
                            f"games need {np.dtype(dtype)} {expected[part]}")
        arrays[part] = array
    return arrays


def _load_search_arrays(base, positions, size):
    """(visits, values) of a self-play shard (engine/training/expert/chunks.py), memory-mapped;
    DataError naming a file that does not fit."""
    expected = {"visits": (positions, size * size + 1), "values": (positions,)}
    arrays = []
    for part, shape in expected.items():
        path = f"{base}.{part}.npy"
        try:
            array = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as error:
            raise DataError(f"{path}: unreadable ({error})") from None
        if array.shape != shape or array.dtype != np.float32:
            raise DataError(f"{path}: {array.dtype} {array.shape} where the manifest's {positions} "
                            f"positions need float32 {shape}")
        arrays.append(array)
    return tuple(arrays)


class PolicyDataset:
    """The positions of one or more data directories, memory-mapped, for random batches."""

    def __init__(self, directories):
        self.shards, sizes = [], set()
        self._shard_bases = []        # per shard: its files' path without the suffixes
        self._shard_games = []        # per shard: its manifest's games count
        self._game_arrays = []        # per shard: _load_game_arrays (version 2), or None
        self._version1_directories = []
        self._search_arrays = []      # per shard: (visits, values) of self-play data, or None
        searched = []
        for directory in directories:
            manifest = read_manifest(directory)
            sizes.add(manifest["size"])
            searched.append(bool(manifest.get("search_targets")))
            if manifest["version"] < 2:
                self._version1_directories.append(str(directory))
            for shard in manifest["shards"]:
                base = Path(directory) / shard["name"]
                try:
                    arrays = tuple(np.load(f"{base}.{part}.npy", mmap_mode="r", allow_pickle=False)
                                   for part in POSITION_PARTS)
                except (OSError, ValueError) as error:
                    raise DataError(f"{base}: unreadable shard ({error})") from None
                records, moves, own, start = arrays
                n = shard["positions"]
                if (records.shape != (n, RECORD_PLANES, manifest["size"] ** 2)
                        or moves.shape != (n,) or own.shape != (n,) or start.shape != (n,)):
                    raise DataError(f"{base}: shard arrays do not match the manifest's {n} positions")
                self.shards.append(arrays)
                self._shard_bases.append(base)
                self._shard_games.append(shard["games"])
                self._game_arrays.append(None if manifest["version"] < 2 else
                                         _load_game_arrays(base, shard["games"], manifest["size"]))
                self._search_arrays.append(_load_search_arrays(base, n, manifest["size"])
                                           if searched[-1] else None)
        if not self.shards:
            raise DataError(f"no positions in {', '.join(map(str, directories))}")
        if len(sizes) != 1:
            raise DataError(f"data directories of different board sizes: {sorted(sizes)}")
        self.size = sizes.pop()
        self.lengths = np.array([len(shard[1]) for shard in self.shards])
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)])
        self.positions = int(self.offsets[-1])
        self._games = None            # _GameIndex, built when first asked for
        self.has_search_targets = all(searched)
        self._returns = {}            # td_lambda -> the lambda-returns of every position

    @property
    def has_targets(self):
        """Whether every directory holds the games' result targets (version 2)."""
        return not self._version1_directories

    def _locate(self, indices):
        """(shard's arrays, index in the shard) of each global position index."""
        return [(self.shards[shard], local) for shard, local in self._shard_locals(indices)]

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

    def moves_played(self, indices):
        """int64 (B,): the move played at each position (row * S + col, S*S a pass)."""
        return np.array([shard[1][local] for shard, local in self._locate(indices)], np.int64)

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

    # ------------------------------------------------------------------ the games' targets

    def _game_index(self):
        if self._games is None:
            self._games = _GameIndex(self)
        return self._games

    def positions_before_end(self, indices):
        """int64 (B,): the moves of its game played after each position's move (0 at the game's
        last position)."""
        indices = np.asarray(indices, np.int64)
        games = self._game_index()
        return games.ends[games.game_of(indices)] - 1 - indices

    def judge_targets(self, indices, symmetry=0, td_lambda=1.0):
        """The JudgeTargets of global position indices, from the side to move's point of view,
        the ownership under the board symmetry as batch() turns the planes. td_lambda below 1:
        the value target of self-play positions is the lambda-return of the search's values
        along the game (td_returns()), 1: the result. DataError naming a directory of version 1
        data."""
        if self._version1_directories:
            raise DataError(f"{self._version1_directories[0]}: prepared by an older kosumi "
                            f"without result targets: prepare it again with "
                            f"`kosumi-train policy data`")
        indices = np.asarray(indices, np.int64)
        games = self._game_index()
        game = games.game_of(indices)
        own, ownership = self._own_and_ownership(indices, game)
        side = np.where(own == BLACK, 1, -1).astype(np.int8)     # +1 where Black is to move
        winner, margin = games.winner[game], games.margin[game]
        score_known = np.isfinite(margin)
        ownership_known = games.owned[game]
        ownership = (ownership * (side * ownership_known)[:, None]).astype(np.float32)
        ownership = ownership.reshape(len(indices), self.size, self.size)
        if symmetry:
            ownership = np.ascontiguousarray(transform(ownership, symmetry))
        value = (winner * side > 0).astype(np.float32)
        if td_lambda < 1.0 and self.has_search_targets:
            black = self.td_returns(td_lambda)[indices]
            value = np.where(side > 0, black, 1.0 - black).astype(np.float32)
        return JudgeTargets(
            komi=(-side * games.komi[game]).astype(np.float32),
            value=value, value_known=winner != 0,
            score=np.where(score_known, side * margin, 0).astype(np.float32),
            score_known=score_known, ownership=ownership, ownership_known=ownership_known)

    def search_policy(self, indices, symmetry=0):
        """float32 (B, S*S + 1): the self-play search's visit shares at each position, by move
        index under the board symmetry (batch()'s frame); a row of zeros where the search was
        cheap (no policy target)."""
        shares = np.stack([self._search_arrays[shard][0][local] for shard, local in
                           self._shard_locals(indices)]).astype(np.float32)
        if not symmetry:
            return shares
        turned = np.empty_like(shares)
        turned[:, move_permutation(self.size, symmetry)] = shares
        return turned

    def td_returns(self, td_lambda):
        """float64 (positions,): each self-play position's lambda-return for Black, Sutton's
        G_t = (1 - lambda) v_(t+1) + lambda G_(t+1) over the search's values v along its game,
        the result (1 Black won, 0 White, 1/2 none) after the last position."""
        if td_lambda not in self._returns:
            games = self._game_index()
            values = np.concatenate([arrays[1] for arrays in self._search_arrays]).astype(float)
            returns = np.empty(self.positions)
            for start, end, winner in zip(games.starts, games.ends, games.winner):
                following = (1.0 + winner) / 2.0
                for t in range(end - 1, start - 1, -1):
                    returns[t] = following
                    following = (1.0 - td_lambda) * values[t] + td_lambda * following
            self._returns[td_lambda] = returns
        return self._returns[td_lambda]

    def _shard_locals(self, indices):
        """(shard number, index in the shard) of each global position index."""
        shard_of = np.searchsorted(self.offsets, indices, side="right") - 1
        return [(int(shard), int(index - self.offsets[shard])) for index, shard in zip(indices, shard_of)]

    def _own_and_ownership(self, indices, game):
        """(own uint8 (B,), Black's ownership int8 (B, S*S)) of positions and their games, read
        a shard at a time."""
        own = np.empty(len(indices), np.uint8)
        ownership = np.empty((len(indices), self.size * self.size), np.int8)
        shard_of = np.searchsorted(self.offsets, indices, side="right") - 1
        order = np.argsort(shard_of, kind="stable")
        cuts = np.flatnonzero(np.diff(shard_of[order])) + 1
        first_games = self._game_index().shard_first_game
        for rows in np.split(order, cuts) if len(order) else ():
            shard = shard_of[rows[0]]
            own[rows] = self.shards[shard][2][indices[rows] - self.offsets[shard]]
            ownership[rows] = self._game_arrays[shard]["ownership"][game[rows] - first_games[shard]]
        return own, ownership


class _GameIndex:
    """Where every game of a dataset starts and ends (global position indices), from the
    shards' start arrays (the games stored in order, so a position starts a game where its start
    is itself), and the version 2 per-game scalars of all shards end to end."""

    def __init__(self, dataset):
        starts, shard_first_game, games = [], [], 0
        for shard, (_, _, _, start) in enumerate(dataset.shards):
            local = np.flatnonzero(np.asarray(start) == np.arange(len(start)))
            expected = dataset._shard_games[shard]
            # version 1 counted the games without moves among a shard's games: its count may
            # be higher
            version1 = dataset._game_arrays[shard] is None
            if local[:1].tolist() != [0] or not (len(local) == expected or version1):
                raise DataError(f"{dataset._shard_bases[shard]}.start.npy: {len(local)} games "
                                f"start in the shard (the first at {local[:1].tolist()}), its "
                                f"manifest says {expected}")
            shard_first_game.append(games)
            starts.append(local + dataset.offsets[shard])
            games += len(local)
        self.starts = np.concatenate(starts).astype(np.int64)
        self.ends = np.append(self.starts[1:], dataset.positions)
        self.shard_first_game = np.array(shard_first_game, np.int64)
        if dataset.has_targets:
            for part in ("komi", "winner", "margin", "owned"):
                setattr(self, part, np.concatenate([arrays[part]
                                                    for arrays in dataset._game_arrays]))

    def game_of(self, indices):
        """The dataset's game index of each global position index."""
        return np.searchsorted(self.starts, indices, side="right") - 1
