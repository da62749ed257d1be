"""Differential test against GNU Go 3.8, the real peer: random games played in both engines.

kosumi's board (simple ko, suicide forbidden, the rules GNU Go plays) must accept exactly the
moves GNU Go accepts, and after every move both must hold the same stones and capture counts.
kosumi's game state under positional superko (the default rules) must accept the same moves
except those that repeat an earlier position, which GNU Go's simple ko lets through.
Candidate moves are drawn from kosumi's legal moves, from all empty points (suicides, ko
retakes) and from occupied points, so refusals are compared as well as acceptances.
"""
import random

import pytest

from engine.rules.board import BLACK, EMPTY, NO_LOC, PASS, WHITE, Board
from engine.rules.coords import format_vertex, parse_vertex
from engine.rules.game import GameState
from engine.tools.gtp_client import GtpClient, find_gnugo

GNUGO = find_gnugo()
pytestmark = pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed "
                                "(apt-get install -y gnugo); the differential test needs it")

COLOUR_NAME = {BLACK: "black", WHITE: "white"}


def gnugo_stones(gnugo, colour, size):
    reply = gnugo.send(f"list_stones {COLOUR_NAME[colour]}", timeout=10)
    return sorted(parse_vertex(v, size) for v in reply.split())


def candidate_move(board, colour, rng):
    roll = rng.random()
    if roll < 0.03:
        return PASS
    if roll < 0.75:
        legal = board.legal_moves(colour)
        if legal:
            return rng.choice(legal)
    points = board.points()
    if roll < 0.95:
        empty = [p for p in points if board.get(p) == EMPTY]
        if empty:
            return rng.choice(empty)
    return rng.choice(points)


@pytest.mark.parametrize("size,moves", [(5, 300), (7, 300), (9, 300), (13, 300), (19, 400)])
def test_random_games_agree_with_gnugo(size, moves):
    rng = random.Random(size * 7919)
    board = Board(size)
    game = GameState(size)  # positional superko
    with GtpClient([GNUGO, "--mode", "gtp"]) as gnugo:
        gnugo.send(f"boardsize {size}", timeout=10)
        gnugo.send("clear_board", timeout=10)
        colour = BLACK
        refusals = accepted = superko_refusals = 0
        earlier_positions = {board.hash}
        for _ in range(moves * 4):
            if accepted == moves:
                break
            move = candidate_move(board, colour, rng)
            vertex = format_vertex(move, size)
            ours = board.is_legal(move, colour)
            theirs = gnugo.send(f"is_legal {COLOUR_NAME[colour]} {vertex}", timeout=10) == "1"
            assert ours == theirs, (
                f"{COLOUR_NAME[colour]} {vertex}: kosumi says {'legal' if ours else 'illegal'}, "
                f"GNU Go says {'legal' if theirs else 'illegal'}\n{board}")
            if not ours:
                refusals += 1
                assert not game.is_legal(move, colour)
                continue
            if not game.is_legal(move, colour):
                # Only a repetition may be refused on top of GNU Go's rules.
                board.play(move, colour)
                repeated = board.hash
                board.undo()
                assert repeated in earlier_positions, f"{vertex} refused but repeats nothing"
                superko_refusals += 1
                continue
            accepted += 1
            game.play(move, colour)
            board.play(move, colour)
            earlier_positions.add(board.hash)
            board.check_consistency()
            gnugo.send(f"play {COLOUR_NAME[colour]} {vertex}", timeout=10)
            for side in (BLACK, WHITE):
                assert board.stones(side) == gnugo_stones(gnugo, side, size), \
                    f"stones differ after {COLOUR_NAME[colour]} {vertex}\n{board}"
                assert board.captures(side) == int(
                    gnugo.send(f"captures {COLOUR_NAME[side]}", timeout=10))
            colour = BLACK + WHITE - colour
        assert refusals > 10 and accepted == moves, "the game must exercise both answers"
        assert board.captures(BLACK) + board.captures(WHITE) > 0, "the game must capture"


# A ko fought in both engines: the capture, the refused retake, a pass (which lifts the ban in
# GNU Go as in kosumi), threats, the retake and a second refusal. Every empty point is compared.
KO_FIGHT = ["B B5", "W C5", "B A4", "W B4", "B B3", "W D4", "B E1", "W C3",
            "B C4", "W PASS", "B PASS", "W B4", "B E2", "W A1", "B C4", "W D1"]


def test_ko_legality_agrees_with_gnugo():
    size = 5
    board = Board(size)
    colours = {"B": BLACK, "W": WHITE}
    kos_seen = 0
    with GtpClient([GNUGO, "--mode", "gtp"]) as gnugo:
        gnugo.send(f"boardsize {size}", timeout=10)
        gnugo.send("clear_board", timeout=10)
        for step in KO_FIGHT:
            name, vertex = step.split()
            board.play(parse_vertex(vertex, size), colours[name])
            board.check_consistency()
            gnugo.send(f"play {name} {vertex}", timeout=10)
            kos_seen += board.ko_loc != NO_LOC
            for colour in (BLACK, WHITE):
                for p in board.points():
                    if board.get(p) != EMPTY:
                        continue
                    theirs = gnugo.send(
                        f"is_legal {COLOUR_NAME[colour]} {format_vertex(p, size)}", timeout=10)
                    assert board.is_legal(p, colour) == (theirs == "1"), \
                        f"after {step}: {COLOUR_NAME[colour]} {format_vertex(p, size)}\n{board}"
    assert kos_seen >= 2, "the sequence must create a ko, twice"
