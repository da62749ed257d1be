"""A training run's directory: the names of its files, its lock, atomic writes, the JSON-lines
logs and the NeuroGo recent games a checkpoint keeps.

    settings.json          the training settings (the newest; a checkpoint's own are in its
                           weights' metadata, and resuming uses those)
    settings-changes.jsonl learning rate / decay changes made on resume, with their game
    log.jsonl              one line per game ({"type": "game", ...}), per --eval-every match
                           ("eval") and per settings change ("settings")
    evals.jsonl            the matches of `kosumi-train eval` and of --eval-in-background
                           (the plot reads both files)
    .lock                  flock of the process training the run (one trainer per run)
    checkpoints/NNNNNNNNN/ weights.npz (engine weight file, metadata: games trained, settings),
                           state.json (counter, generator, phase, statistics), recent.npz (NeuroGo)
    LATEST                 the name of the newest complete checkpoint
    evals/                 SGFs and summaries of the evaluation matches, and the output of
                           those played in the background (CHECKPOINT-PROTOCOL.log)
Each checkpoint's weights also carry the run's curves in brief (engine/training/history.py), so a
run started from them elsewhere (--from-weights) keeps its curves. A checkpoint is written to a
temporary directory and renamed, then LATEST is replaced atomically (Trainer.checkpoint() in
engine/training/trainer.py), so a kill -9 at any moment loses at most the games since the last
checkpoint. On resume the log is cut back to the checkpoint's game counter (truncate_log()).
"""
import datetime
import fcntl
import json
import os
from pathlib import Path

import numpy as np

from engine.training.learning import TrainingGame

SETTINGS_FILE = "settings.json"
SETTINGS_HISTORY_FILE = "settings-changes.jsonl"   # changes made on resume, with their game
LOG_FILE = "log.jsonl"
EVALS_FILE = "evals.jsonl"          # offline evaluations (kosumi-train eval)
LATEST_FILE = "LATEST"
LOCK_FILE = ".lock"                  # held (flock) by the process training the run
CHECKPOINTS = "checkpoints"


def lock_run(run_dir):
    """Hold an exclusive lock on the run for this process's lifetime (released by the kernel
    however the process ends): two trainers on one run would interleave their checkpoints."""
    stream = open(Path(run_dir) / LOCK_FILE, "a")
    try:
        fcntl.flock(stream, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        stream.close()
        raise SystemExit(f"kosumi-train: {run_dir} is being trained by another process") from None
    return stream


def timestamp():
    """Now in UTC, to the second (ISO 8601)."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def write_atomic(path, text):
    """Replace a file's text in one step: a temporary file, fsynced, then renamed."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "w") as stream:
        stream.write(text)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, path)


def fsync_directory(path):
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def truncate_log(path, games_trained):
    """Drop the log lines of games (and evaluations) after the checkpoint being resumed, and
    a line cut short by kill -9; returns the records kept."""
    kept = [record for record in read_jsonl(path) if record.get("game", 0) <= games_trained]
    write_atomic(path, "".join(json.dumps(record) + "\n" for record in kept))
    return kept


def read_jsonl(path):
    """The JSON lines of a file (none when it does not exist; a line cut short by kill -9 is
    skipped)."""
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


_RECENT_ARRAYS = ("inputs", "black_to_move", "trained", "final_targets", "final_mask")


def save_recent(path, games):
    """NeuroGo's recent games (TrainingGame) to a checkpoint's recent.npz, without pickle."""
    arrays = {}
    for i, game in enumerate(games):
        for name in _RECENT_ARRAYS:
            arrays[f"{i}_{name}"] = getattr(game, name)
        arrays[f"{i}_summary"] = np.frombuffer(json.dumps(game.summary).encode(), dtype=np.uint8)
        if game.observed is not None:
            arrays[f"{i}_observed"] = game.observed
    with open(path, "wb") as stream:
        np.savez_compressed(stream, count=np.array(len(games)), **arrays)


def load_recent(path):
    """The games save_recent() wrote."""
    with np.load(path, allow_pickle=False) as archive:
        return [TrainingGame(*(archive[f"{i}_{name}"] for name in _RECENT_ARRAYS),
                             json.loads(archive[f"{i}_summary"].tobytes().decode()),
                             archive[f"{i}_observed"] if f"{i}_observed" in archive.files else None)
                for i in range(int(archive["count"]))]
