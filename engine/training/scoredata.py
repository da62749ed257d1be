"""Labelled final positions for CSA*, the dead-stone classifier (engine/scoring/csa.py).

    kosumi-train csa generate --out /work/runs/csa/data9.jsonl --size 9 --games 2000
    kosumi-train csa train --data A.jsonl B.jsonl --out weights/csa_9x9.npz
    kosumi-train csa evaluate --data held_out.jsonl --weights weights/csa_9x9.npz
    kosumi-train csa relabel --data old.jsonl --out new.jsonl --level 10
    kosumi-train csa evaluate --data new.jsonl --agree-with old.jsonl
(`python -m engine.training.scoredata` is the same command line.)

Reading order: `play_one_game()` makes one record, `generate()` runs them on all cores,
`train_from_files()` fits the cascade (engine/training/csatrain.py's `train()`),
`evaluate_files()` measures scorers on held-out records (csatrain's `evaluate()`). This module
imports csatrain, never the other way round: csatrain works on records and reads no files.

How a record is made (van der Werf et al. used scored NNGS games; we make our own): a game is
played to two consecutive passes by GNU Go against itself (each side at a random level, after a
few random opening moves), by kosumi against GNU Go, or by kosumi against itself. That is the
final position. GNU Go (Chinese rules) gives its own final_score there. Then the game is played
out: GNU Go's kgs-genmove_cleanup for both sides, at level 10, until two passes. Every block of
the final position is labelled dead if any of its stones was captured in the play-out, alive
otherwise; blocks GNU Go calls seki at the end of the play-out are labelled seki. The true score
is the area count of the final position with the dead blocks taken off (flood fill). A weak
play-out fights on where a strong one just takes the dead stones off: on 19x19 boards of
unfinished games a level-5 play-out lost groups that level 10 kept (docs/notebook/csa.md), so `relabel`
plays the games of an older file out again at another level, and `evaluate --agree-with` that
file counts only the boards whose labels both play-outs give.

Record file: one JSON object per line (compact: a board is a string of '.XO', row by row from
the top, the labels a string of '.ads'), appended and fsynced as games finish. Game i of a run
uses the seed (seed, i), so a resumed run (the same command again) plays only the games missing
from the file and a killed run loses at most the games in flight. Runs with different seeds give
disjoint games: use one seed for training data and another for held-out data.
"""
import argparse
import json
import os
import sys
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import numpy as np

from engine.rules.board import BLACK, EMPTY, WHITE, IllegalMove, opponent
from engine.rules.coords import PASS, board_points, format_vertex, parse_vertex
from engine.rules.game import GameState, Rules, area_score
from engine.tools.gtp_client import GtpClient, GtpError, find_gnugo
from engine.scoring import csa
from engine.training import csatrain

SOURCES = ("gnugo-self", "kosumi-gnugo", "kosumi-self")
DEFAULT_MIX = {9: "gnugo-self:6,kosumi-gnugo:2,kosumi-self:2",
               19: "gnugo-self:8,kosumi-gnugo:1,kosumi-self:1"}
DEFAULT_KOMI = {9: 7.0, 19: 7.5}
GNUGO_LEVELS = {9: (0, 1, 2, 3, 5, 8), 19: (0, 1, 2, 3)}   # low levels: fast, and the most mistakes
CLEANUP_LEVEL = 10       # the play-out decides the labels: GNU Go at its default (strongest) level
MAX_RANDOM_OPENING = {9: 6, 19: 20}     # random moves before the engines take over
MOVE_CAP_FACTOR = 3                     # a game longer than 3 x points is abandoned (ko fights)
PLAYOUT_CAP_FACTOR = 2
STATUS_LETTER = {"alive": "a", "dead": "d", "seki": "s"}
BOARD_LETTER = {EMPTY: ".", BLACK: "X", WHITE: "O"}


# ---------------------------------------------------------------------- one game


@dataclass
class GameSetup:
    index: int
    seed: int
    size: int
    komi: float
    source: str


class _Worker:
    """One process's engines: a GNU Go subprocess (kept between games) and, if a game needs it,
    kosumi's player over the shipped ISN (loaded once)."""

    def __init__(self, gnugo_command=None):
        self.gnugo_command = gnugo_command or f"{find_gnugo()} --mode gtp --chinese-rules"
        self.gnugo = None
        self.player = None

    def engine(self):
        if self.gnugo is None or not self.gnugo.usable:
            self.gnugo = GtpClient(self.gnugo_command)
        return self.gnugo

    def kosumi(self, seed):
        if self.player is None:
            from engine.nets.evaluator import load_evaluator
            from engine.nets.weights import ISN_WEIGHTS
            from engine.play.player import Player
            # the ISN, the net the shipped classifiers' games were played with
            self.player = Player(load_evaluator(ISN_WEIGHTS), resign_threshold=None)
        self.player.rng = np.random.default_rng(seed)
        self.player.new_game()
        return self.player


def _random_opening_move(state, rng):
    """A random legal move that fills no own eye and stays off the first line."""
    board, colour, size = state.board, state.to_move, state.size
    moves = [p for p in state.legal_moves(colour) if not board.is_eye(p, colour)
             and 0 < board.row_col(p)[0] < size - 1 and 0 < board.row_col(p)[1] < size - 1]
    return moves[int(rng.integers(len(moves)))] if moves else PASS


def play_one_game(worker, setup):
    """The record of one game (a dict), or None when the game was abandoned (too long, an
    engine failed)."""
    rng = np.random.default_rng([setup.seed, setup.index])
    size = setup.size
    gnugo = worker.engine()
    gnugo.send(f"boardsize {size}")
    gnugo.send("clear_board")
    gnugo.send(f"komi {setup.komi:g}")
    gnugo.send(f"set_random_seed {int(rng.integers(1, 2**31))}")
    state = GameState(size, Rules(ko="simple", komi=setup.komi))   # GNU Go knows simple ko only
    choices = GNUGO_LEVELS.get(size, GNUGO_LEVELS[9])
    levels = {BLACK: int(rng.choice(choices)), WHITE: int(rng.choice(choices))}
    kosumi_colours = {"gnugo-self": (), "kosumi-self": (BLACK, WHITE),
                      "kosumi-gnugo": ((BLACK,) if rng.random() < 0.5 else (WHITE,))}[setup.source]
    player = worker.kosumi(int(rng.integers(2**31))) if kosumi_colours else None
    moves = []

    def play(colour, loc):
        state.play(loc, colour)
        moves.append(format_vertex(loc, size))

    for _ in range(int(rng.integers(0, MAX_RANDOM_OPENING.get(size, 10) + 1))):
        loc = _random_opening_move(state, rng)
        gnugo.send(f"play {'bw'[state.to_move - 1]} {format_vertex(loc, size)}")
        play(state.to_move, loc)
    cap = MOVE_CAP_FACTOR * size * size
    while state.consecutive_passes < 2:
        if len(moves) > cap:
            return None
        colour = state.to_move
        if colour in kosumi_colours:
            decision = player.choose(state, colour)
            loc = PASS if decision.move == "resign" else decision.move
            gnugo.send(f"play {'bw'[colour - 1]} {format_vertex(loc, size)}")
        else:
            gnugo.send(f"level {levels[colour]}")
            reply = gnugo.send(f"genmove {'bw'[colour - 1]}")
            if reply.lower() == "resign":
                gnugo.send(f"play {'bw'[colour - 1]} pass")
                loc = PASS
            else:
                loc = parse_vertex(reply, size)
        try:
            play(colour, loc)
        except IllegalMove:
            return None   # superko differences between the engines: drop the game
    final_board = state.board.copy()
    gnugo_score = gnugo.send("final_score")
    labelled = play_out(gnugo, state, CLEANUP_LEVEL)
    if labelled is None:
        return None
    return {
        "index": setup.index, "seed": setup.seed, "source": setup.source, "size": size,
        "komi": setup.komi, "levels": [levels[BLACK], levels[WHITE]],
        "kosumi": ["BW"[c - 1] for c in kosumi_colours],
        "moves": " ".join(moves),
        "board": "".join(BOARD_LETTER[final_board.get(p)] for p in board_points(size)),
        "gnugo_score": gnugo_score,
        **labelled,
    }


def play_out(gnugo, state, level):
    """Label the final position `state` by playing it out: GNU Go's kgs-genmove_cleanup at
    `level` for both sides until two passes (`state` is played on). Every block with a stone
    captured in the play-out is dead; blocks GNU Go calls seki at the end are seki, the rest
    alive. Returns the record's label fields, or None when the play-out ran too long or GNU Go
    played an illegal move."""
    size = state.size
    final_board = state.board.copy()
    points = board_points(size)
    original = {p: final_board.get(p) for p in points}
    stones = [p for p in points if original[p] != EMPTY]
    captured = set()
    gnugo.send(f"level {level}")
    playout_moves = 0
    passes = 0
    colour = state.to_move
    while passes < 2:
        if playout_moves > PLAYOUT_CAP_FACTOR * size * size:
            return None
        reply = gnugo.send(f"kgs-genmove_cleanup {'bw'[colour - 1]}")
        loc = PASS if reply.lower() in ("pass", "resign") else parse_vertex(reply, size)
        if reply.lower() == "resign":
            gnugo.send(f"play {'bw'[colour - 1]} pass")
        try:
            state.play(loc, colour)
        except IllegalMove:
            return None
        playout_moves += 1
        passes = passes + 1 if loc == PASS else 0
        board = state.board
        captured.update(p for p in stones if board.get(p) != original[p])
        colour = opponent(colour)
    seki = set()
    for vertex in gnugo.send("final_status_list seki").split():
        seki.add(parse_vertex(vertex, size))

    labels = {}
    for p in stones:
        if p in labels:
            continue
        block = final_board.chain(p)
        if any(q in captured for q in block):
            status = "dead"
        elif any(q in seki for q in block):
            status = "seki"
        else:
            status = "alive"
        for q in block:
            labels[q] = status
    dead = [p for p in stones if labels[p] == "dead"]
    return {
        "labels": "".join(STATUS_LETTER[labels[p]] if p in labels else "." for p in points),
        "score": area_score(final_board, state.rules.komi, dead),
        "playout_score": area_score(state.board, state.rules.komi),
        "playout_moves": playout_moves,
        "cleanup_level": level,
    }


def relabel_one(worker, record, level):
    """`record` with its labels made again by a play-out at `level` (its game replayed into a
    fresh GNU Go), or None when the play-out was abandoned."""
    size, komi = record["size"], record["komi"]
    rng = np.random.default_rng([record["seed"], record["index"], level])
    gnugo = worker.engine()
    gnugo.send(f"boardsize {size}")
    gnugo.send("clear_board")
    gnugo.send(f"komi {komi:g}")
    gnugo.send(f"set_random_seed {int(rng.integers(1, 2**31))}")
    state = GameState(size, Rules(ko="simple", komi=komi))
    for vertex in record["moves"].split():
        gnugo.send(f"play {'bw'[state.to_move - 1]} {vertex}")
        state.play(parse_vertex(vertex, size), state.to_move)
    labelled = play_out(gnugo, state, level)
    return None if labelled is None else {**record, **labelled}


_WORKER = None


def _init_worker(gnugo_command):
    global _WORKER
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _WORKER = _Worker(gnugo_command)


def _run(setup):
    return setup.index, _retried(lambda: play_one_game(_WORKER, setup), setup.index)


def _run_relabel(task):
    record, level = task
    if record.get("abandoned"):
        return record["index"], record
    return record["index"], _retried(lambda: relabel_one(_WORKER, record, level),
                                     record["index"])


def _retried(job, index):
    for attempt in range(2):      # one retry with a fresh GNU Go if the engine failed
        try:
            return job()
        except GtpError as error:
            print(f"game {index}: {error}", file=sys.stderr)
            if _WORKER.gnugo is not None:
                _WORKER.gnugo.kill()
            _WORKER.gnugo = None
    return None


# ---------------------------------------------------------------------- the record file


def read_records(path):
    """Records of a file; a torn last line (a killed writer) is skipped, any other bad line is
    an error naming the file and line."""
    records = []
    path = Path(path)
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number >= len(lines) - 1:
                continue
            raise ValueError(f"{path}: line {number} is not JSON") from None
        records.append(record)
    return records


def parse_mix(text):
    """'gnugo-self:6,kosumi-gnugo:2' -> {source: weight}."""
    mix = {}
    for part in text.split(","):
        name, _, weight = part.partition(":")
        if name not in SOURCES:
            raise argparse.ArgumentTypeError(f"unknown source {name!r}; known: {', '.join(SOURCES)}")
        mix[name] = float(weight or 1)
    return mix


def game_setups(games, seed, size, komi, mix):
    names = sorted(mix)
    weights = np.array([mix[name] for name in names], dtype=float)
    rng = np.random.default_rng([seed, 0xC5A])
    picks = rng.choice(len(names), size=games, p=weights / weights.sum())
    return [GameSetup(i, seed, size, komi, names[picks[i]]) for i in range(games)]


def generate(out, games, size, seed, workers, komi=None, mix=None, gnugo_command=None):
    """Play the games missing from `out` (appending), on `workers` processes, with a progress
    bar. Returns (games written now, games abandoned now)."""
    komi = DEFAULT_KOMI.get(size, 7.0) if komi is None else komi
    mix = parse_mix(mix or DEFAULT_MIX.get(size, DEFAULT_MIX[9]))
    done = _indices_on_file(out, seed, size)
    todo = [s for s in game_setups(games, seed, size, komi, mix) if s.index not in done]
    return _append_records(out, games, _run, todo, seed, size, workers, gnugo_command)


def relabel(data, out, level=CLEANUP_LEVEL, workers=1, gnugo_command=None):
    """Label the games of the record file `data` again by a play-out at GNU Go `level`, into
    `out` (appending; a resumed run does only the games missing there). Abandoned records are
    copied. Returns (records written now, play-outs abandoned now)."""
    records = read_records(data)
    if not records:
        raise ValueError(f"{data}: no records")
    seed, size = records[0]["seed"], records[0]["size"]
    done = _indices_on_file(out, seed, size)
    todo = [(r, level) for r in records if r["index"] not in done]
    return _append_records(out, len(records), _run_relabel, todo, seed, size, workers,
                           gnugo_command)


def _indices_on_file(out, seed, size):
    """The game indices `out` holds already (its torn last line dropped, so that appending
    goes on from a whole line); refuses a file of another seed or size."""
    out = Path(out)
    done = set()
    if out.exists():
        for record in read_records(out):
            if record.get("seed") != seed or record.get("size") != size:
                raise ValueError(f"{out} holds games of seed {record.get('seed')} size "
                                 f"{record.get('size')}; this run is seed {seed} size {size}")
            done.add(record["index"])
        with open(out, "rb+") as handle:
            data = handle.read()
            if data and not data.endswith(b"\n"):
                handle.truncate(data.rfind(b"\n") + 1)
    return done


def _append_records(out, total, runner, todo, seed, size, workers, gnugo_command):
    """Run `runner` over `todo` on a pool of GNU Go workers and append each record to `out`
    as it comes, fsynced."""
    from tqdm import tqdm
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    written = abandoned = 0
    with open(out, "a", encoding="utf-8") as handle, \
            tqdm(total=total, initial=total - len(todo), unit="game", desc=out.name) as bar, \
            get_context("fork").Pool(workers, _init_worker, (gnugo_command,)) as pool:
        for index, record in pool.imap_unordered(runner, todo):
            if record is None:
                # remembered as abandoned so a resumed run does not replay it forever
                record = {"index": index, "seed": seed, "size": size, "abandoned": True}
                abandoned += 1
            else:
                written += 1
            handle.write(json.dumps(record, separators=(",", ":")) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
            bar.update(1)
    return written, abandoned


# ---------------------------------------------------------------------- training and measuring
# engine/training/csatrain.py, on the records of files

def train_from_files(paths, out, hidden=50, steps=csa.CASCADE_STEPS, epochs=600, seed=1,
                     blocks="all", batch_size=None):
    records = [r for path in paths for r in read_records(path)]
    classifier, games = csatrain.train(records, hidden, steps, epochs, seed, blocks,
                                       log=lambda text: print(text, file=sys.stderr),
                                       batch_size=batch_size)
    sizes = sorted({r["size"] for r in records if not r.get("abandoned")})
    metadata = classifier.save(out, {"games_trained": games, "board_sizes": sizes,
                                     "trainer": {"hidden": hidden, "epochs": epochs, "seed": seed,
                                                 "blocks": blocks, "batch_size": batch_size,
                                                 "data": [str(p) for p in paths]}})
    print(f"wrote {out}: {metadata['steps']} steps, {metadata['hidden']} hidden units, "
          f"{games} games", file=sys.stderr)


def evaluate_files(paths, weights=None, ownership=False, review=True, agree_with=()):
    records = [r for path in paths for r in read_records(path) if not r.get("abandoned")]
    if agree_with:
        records, differing, missing = csatrain.split_by_second_play_out(
            records, [r for path in agree_with for r in read_records(path)])
        print(f"only the boards whose labels the play-outs of {', '.join(map(str, agree_with))} "
              f"give too; left out: {len(differing)} labelled otherwise there, {len(missing)} "
              f"not played out there")
        if not records:
            raise ValueError("no board's labels are the same in both play-outs")
    sizes = {r["size"] for r in records}
    classifier = csa.Classifier.load(weights) if weights else csa.classifier_for(max(sizes))
    evaluator = None
    if ownership:
        from engine.nets.evaluator import load_evaluator
        from engine.nets.weights import ISN_WEIGHTS
        evaluator = load_evaluator(ISN_WEIGHTS)   # the net docs/notebook/csa.md's ownership rows used
    result = csatrain.evaluate(records, classifier, evaluator, review)
    print(f"{len(records)} boards ({', '.join(str(s) for s in sorted(sizes))}), from "
          f"{', '.join(map(str, paths))}")
    print("| scorer | exactly right | right winner |")
    print("|---|---|---|")
    for name, row in result["rows"].items():
        n = row["boards"]
        print(f"| {name} | {row['exact']}/{n} ({100 * row['exact'] / n:.1f}%) | "
              f"{row['winner']}/{n} ({100 * row['winner'] / n:.1f}%) |")
    rule = classifier.doubt_rule
    search_check = (f", or the tree search counts more than {rule.review_gap:g} points away"
                    if review else "")
    steps_check = ", the cascade's steps disagree on a block" if rule.changed_mind else ""
    print(f"doubtful flag (counts more than {rule.counts_gap:g} points apart, a block between "
          f"{rule.band:g} and {1 - rule.band:g}{steps_check}{search_check}): "
          f"{result['flagged_wrong']} of {result['wrong']} wrong boards flagged; "
          f"{result['flagged_right']} right boards flagged too")
    print(f"  the paper's check alone (flood fill and distance differ): "
          f"{result['counts_wrong']} of {result['wrong']} wrong boards, "
          f"{result['counts_right']} right boards")
    if review:
        print(f"  the tree search's check alone (csa.search_count, {csa.REVIEW_SIMULATIONS} "
              f"simulations with each colour to move): {result['search_wrong']} of "
              f"{result['wrong']} wrong boards, {result['search_right']} right boards")
    for index, truth, flood, doubtful in result["hard"][:20]:
        print(f"  wrong: game {index}: true {truth:+g}, CSA* {flood:+g}"
              f"{' (doubtful)' if doubtful else ''}")
    return result


# ---------------------------------------------------------------------- command line

def main(argv=None, prog="python -m engine.training.scoredata"):
    """The command line (also `kosumi-train csa`)."""
    parser = argparse.ArgumentParser(prog=prog,
                                     description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate", help="play and label finished games")
    gen.add_argument("--out", required=True, help="record file (JSON lines), appended; keep it "
                                                  "outside the repository")
    gen.add_argument("--games", type=int, required=True, help="games in the run (resumed runs "
                                                              "play only the missing ones)")
    gen.add_argument("--size", type=int, default=9, choices=(9, 13, 19))
    gen.add_argument("--seed", type=int, default=1)
    gen.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    gen.add_argument("--komi", type=float, default=None)
    gen.add_argument("--mix", default=None, help="sources and weights, e.g. "
                                                 "gnugo-self:6,kosumi-gnugo:2,kosumi-self:2")
    gen.add_argument("--gnugo", default=None, help="GNU Go command line (default: gnugo --mode "
                                                   "gtp --chinese-rules)")
    relabel_parser = commands.add_parser(
        "relabel", help="label a record file's games again by a play-out at another GNU Go level")
    relabel_parser.add_argument("--data", required=True, help="record file to read")
    relabel_parser.add_argument("--out", required=True, help="record file to write (appended; "
                                                              "resumed runs do the missing games)")
    relabel_parser.add_argument("--level", type=int, default=CLEANUP_LEVEL)
    relabel_parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    relabel_parser.add_argument("--gnugo", default=None, help="GNU Go command line")
    train_parser = commands.add_parser("train", help="fit the CSA* cascade to record files")
    train_parser.add_argument("--data", nargs="+", required=True)
    train_parser.add_argument("--out", required=True)
    train_parser.add_argument("--hidden", type=int, default=50, help="tanh units per step")
    train_parser.add_argument("--steps", type=int, default=4)
    train_parser.add_argument("--epochs", type=int, default=600)
    train_parser.add_argument("--seed", type=int, default=1)
    train_parser.add_argument("--blocks", choices=csatrain.BLOCK_CHOICES, default="all",
                              help="blocks to learn: every block (default), or the paper's "
                                   "learning task, the blocks whose status decides the score")
    train_parser.add_argument("--batch-size", type=int, default=None,
                              help="mini-batches of this many blocks (default: full batch, an "
                                   "update an epoch; mini-batches for 19x19 sets of many "
                                   "boards, with far fewer epochs)")
    evaluate_parser = commands.add_parser("evaluate", help="score held-out records")
    evaluate_parser.add_argument("--data", nargs="+", required=True)
    evaluate_parser.add_argument("--weights", default=None)
    evaluate_parser.add_argument("--ownership", action="store_true",
                                 help="also the network-ownership scorer CSA* replaced")
    evaluate_parser.add_argument("--no-review", action="store_true",
                                 help="flag doubtful boards without the tree search's count "
                                      "(it costs about 0.2 s a 9x9 board, 0.7 s a 19x19 one)")
    evaluate_parser.add_argument("--agree-with", nargs="+", default=(), metavar="FILE",
                                 help="only the boards whose labels these relabelled copies of "
                                      "the same games (scoredata relabel) give too")
    args = parser.parse_args(argv)
    if args.command in ("generate", "relabel"):
        if find_gnugo() is None and args.gnugo is None:
            parser.error("GNU Go is not installed (apt-get install gnugo)")
        try:
            if args.command == "generate":
                written, abandoned = generate(args.out, args.games, args.size, args.seed,
                                              args.workers, args.komi, args.mix, args.gnugo)
            else:
                written, abandoned = relabel(args.data, args.out, args.level, args.workers,
                                             args.gnugo)
        except KeyboardInterrupt:
            # every finished game is already on file; the same command plays the rest
            on_file = len(read_records(args.out)) if Path(args.out).exists() else 0
            print(f"\ninterrupted; games on file in {args.out}: {on_file}; run the same "
                  f"command again to resume", file=sys.stderr)
            return 130
        except ValueError as error:      # a record file of another run, or none to relabel
            print(f"error: {error}", file=sys.stderr)
            return 2
        print(f"{written} games written, {abandoned} abandoned, to {args.out}", file=sys.stderr)
    elif args.command == "train":
        train_from_files(args.data, args.out, hidden=args.hidden, steps=args.steps,
                         epochs=args.epochs, seed=args.seed, blocks=args.blocks,
                         batch_size=args.batch_size)
    else:
        try:
            evaluate_files(args.data, args.weights, ownership=args.ownership,
                           review=not args.no_review, agree_with=args.agree_with)
        except ValueError as error:      # --agree-with files of other games
            print(f"error: {error}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
