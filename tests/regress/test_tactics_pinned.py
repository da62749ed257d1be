"""Behaviour pinned across refactorings of the tactics (engine/tactics/) and of what uses them:
fixed-seed searches with each set of playout tactics, fixed-seed playouts, the policy's move
distribution and the nets' board features (base and incremental) on seeded positions give the
results they gave when the ladder reader, the self-atari test and the nakade test still lived
in engine/nets/features.pyx and engine/search/playout.pyx. A digest of each stands in for the
results; a change of behaviour changes it (run this file as a script to print them)."""
import hashlib

import numpy as np
import pytest

from engine.nets import features as F
from engine.nets.policy_inputs import PositionEncoder, new_record
from engine.rules.board import BLACK, EMPTY, Board
from engine.search import playout
from engine.search.tree import TreeSearch


def digest(values):
    return hashlib.sha256(repr(values).encode()).hexdigest()[:16]


def seeded_board(size, moves, seed):
    """A position of moves seeded random moves that fill no own eye, and the side to move."""
    rng = np.random.default_rng(seed)
    board, colour = Board(size), BLACK
    for _ in range(moves):
        legal = [m for m in board.legal_moves(colour) if not board.is_eye(m, colour)]
        if legal:
            board.play(legal[rng.integers(len(legal))], colour)
        colour = 3 - colour
    return board, colour


POSITIONS = [(9, 0, 1), (9, 30, 2), (9, 55, 3), (13, 70, 4), (13, 110, 5), (19, 150, 6)]


def search_summary(playout_tactics):
    results = []
    for size, moves, seed in POSITIONS[:5]:
        board, colour = seeded_board(size, moves, seed)
        tree = TreeSearch(size, 7.5, seed=seed, playout_tactics=playout_tactics)
        tree.set_root(board, colour, [board.hash])
        tree.run(400, stop_early=False)
        results.append([(c["move"], c["visits"], c["rave_visits"]) for c in tree.root_children()])
    return digest(results)


def playout_summary(playout_tactics):
    results = []
    for size, moves, seed in POSITIONS:
        board, colour = seeded_board(size, moves, seed)
        for run in range(4):
            margin, owner, length = playout.playout_score(board, colour, komi=7.5, seed=run,
                                                          playout_tactics=playout_tactics)
            results.append((margin, length, owner.tobytes()))
        points = [p for p in board.points() if board.get(p) != EMPTY][-6:]
        for p in points:
            results.append(sorted(playout.policy_moves(board, colour, p, samples=40, seed=p,
                                                       playout_tactics=playout_tactics)))
    return digest(results)


def features_summary():
    results = []
    for size, moves, seed in POSITIONS:
        board, colour = seeded_board(size, moves, seed)
        computer = F.BoardFeatures()
        results.append(computer.compute(board).tobytes())
        legal = [m for m in board.legal_moves(colour) if not board.is_eye(m, colour)]
        for move in legal[::max(1, len(legal) // 12)]:
            slots, cells = computer.successor_slots(board, move, colour)
            results.append((slots.tobytes(), sorted(cells)))
        results.append((computer.ladders.reads_made, computer.ladders.nodes_visited,
                        computer.ladder_queries))
        record = new_record(size)
        PositionEncoder().encode(board, colour, [], record)
        results.append(record.tobytes())
    return digest(results)


PINNED = {
    "search mogo": "9cbd6aff06908edb",
    "search fuego": "c3738c168ae72092",
    "search fuego-ladders": "c9ceea25373fe674",
    "playout mogo": "72b98cd88a78ed2f",
    "playout fuego": "e927ecaa9c0135ea",
    "playout fuego-ladders": "7fcacf42bd32371c",
    "features": "2a4e142b6168d8e2",
}


def summary(name):
    kind, _, tactics = name.partition(" ")
    if kind == "search":
        return search_summary(tactics)
    if kind == "playout":
        return playout_summary(tactics)
    return features_summary()


@pytest.mark.parametrize("name", sorted(PINNED))
def test_results_are_the_pinned_ones(name):
    assert summary(name) == PINNED[name]


if __name__ == "__main__":
    for name in PINNED:
        print(f"    {name!r}: {summary(name)!r},")
