"""Self-play games on disk: each chunk of games a data directory of the policy data's format
(engine/training/policydata.py, version 2: the positions, the games' komi, winner, margin and
ownership), so that the judging net's trainer reads it as it reads the expert games, with the
search's own targets beside each shard:
    shard-00000.visits.npy   float32 (n, S*S + 1)   a full search's visit shares by move index;
                                                    zeros after a cheap search (no policy target)
    shard-00000.values.npy   float32 (n,)           the search's chance for Black at the position
and in manifest.json "search_targets": 1, the net that played ("net"), the worker, and the
resignations' check (games played out without resigning, and those where the side that would
have resigned won after all).

A chunk is written under a hidden name and renamed into place, so a killed worker leaves whole
chunks only: a reader never sees half a chunk, and a game is never counted twice.

Reading order: write_chunk(), then chunk_directories().
"""
import os
import shutil
from pathlib import Path

import numpy as np

from engine.training.gametargets import GameTargets
from engine.training.policydata import MANIFEST, atomic_json, new_manifest, PendingShard

SHARD = "shard-00000"


def write_chunk(directory, games, net, worker):
    """Writes the games (games.SelfPlayGame, each with its records) as the chunk directory
    `directory`, whole or not at all. Returns its manifest, or None when no game has a position
    (a game resigned before its first move teaches nothing and has no place in a shard)."""
    games = [game for game in games if game.moves]
    if not games:
        return None
    directory = Path(directory)
    temporary = directory.with_name(f".{directory.name}.tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir(parents=True)
    size = games[0].size
    manifest = new_manifest([f"self-play of net {net}"], size)
    pending = PendingShard()
    for game in games:
        pending.add(game.records, game.moves, game.colours,
                    GameTargets(game.komi, game.winner, game.margin, game.ownership, game.owned,
                                "counted as it stands" if game.owned else "resigned"))
    manifest["shards"].append(pending.write(temporary, SHARD))
    manifest["positions"] = len(pending)
    manifest["games"] = manifest["trees_done"] = len(games)
    pending.tally(manifest)
    no_visits = np.zeros(size * size + 1, np.float32)
    np.save(temporary / f"{SHARD}.visits.npy",
            np.stack([no_visits if v is None else v for game in games for v in game.visits]))
    np.save(temporary / f"{SHARD}.values.npy",
            np.array([v for game in games for v in game.values], np.float32))
    played_out = [game for game in games if game.would_have_resigned]
    manifest.update(search_targets=1, net=net, worker=worker,
                    resigned=sum(game.resigned for game in games),
                    checked_resignations=len(played_out),
                    wrong_resignations=sum(game.winner == game.would_have_resigned
                                           for game in played_out),
                    moves=sum(len(game.moves) for game in games),
                    black_wins=sum(game.winner > 0 for game in games))
    atomic_json(temporary / MANIFEST, manifest)
    os.replace(temporary, directory)
    return manifest


def chunk_directories(games_dir):
    """The whole chunks under games_dir, oldest first (by name: chunk_name()'s number first)."""
    games_dir = Path(games_dir)
    if not games_dir.is_dir():
        return []
    return sorted(path for path in games_dir.iterdir()
                  if not path.name.startswith(".") and (path / MANIFEST).is_file())


def chunk_name(number, net, worker):
    """The chunk numbered `number` in the order written, of games net `net` played in `worker`."""
    return f"{number:07d}-net{net:05d}-w{worker:03d}"


def chunk_number(directory):
    return int(Path(directory).name.split("-")[0])

