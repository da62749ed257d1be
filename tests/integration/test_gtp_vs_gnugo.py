"""Whole games between `python gtp_server.py` and GNU Go 3.8, both on pipes: every move of each is
accepted by the other, the game ends in two passes, and the two engines agree on the score.

Both sides capture every dead stone before passing (kosumi --capture-all-dead, GNU Go
--capture-all-dead) and count by area (Chinese), so the final boards need no dead-stone
agreement to be scored alike, as on CGOS. kosumi plays with the uniform evaluator (an area count)
or a freshly initialised net, never the shipped weights.
"""
import sys

import pytest

from engine.tools.gtp_client import GtpClient, find_gnugo
from tests.paths import REPO

GNUGO = find_gnugo()
MOVE_CAP_PER_POINT = 4   # kosumi's own valve passes after 3 x points moves; this is only a guard

pytestmark = pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed")


def kosumi(*options):
    return GtpClient([sys.executable, "gtp_server.py", "--no-resign", "--capture-all-dead",
                      *options], cwd=REPO)


def gnugo(seed):
    return GtpClient([GNUGO, "--mode", "gtp", "--level", "1", "--chinese-rules",
                      "--capture-all-dead", "--seed", str(seed)])


def play_game(black, white, size, komi, timeout=30):
    """Play to two passes; returns the moves as (colour, vertex)."""
    for engine in (black, white):
        for command in (f"boardsize {size}", "clear_board", f"komi {komi}"):
            engine.send(command, timeout=timeout)
    players = {"b": (black, white), "w": (white, black)}
    moves, passes, colour = [], 0, "b"
    while passes < 2:
        assert len(moves) < MOVE_CAP_PER_POINT * size * size, "the game did not end"
        mover, other = players[colour]
        vertex = mover.send(f"genmove {colour}", timeout=timeout).strip().lower()
        assert vertex != "resign"
        other.send(f"play {colour} {vertex}", timeout=timeout)   # a refusal raises here
        moves.append((colour, vertex))
        passes = passes + 1 if vertex == "pass" else 0
        colour = "w" if colour == "b" else "b"
    return moves


def same_stones(first, second):
    for colour in ("black", "white"):
        assert sorted(first.send(f"list_stones {colour}").split()) == \
            sorted(second.send(f"list_stones {colour}").split())


# Seeds whose games end with stones of both colours on the board (GNU Go at level 1 and a seeded
# kosumi replay the same game every time), so that the agreement is not about an empty side.
@pytest.mark.parametrize("kosumi_colour, seed", [("b", 2), ("w", 4)])
def test_a_whole_game_against_gnugo_ends_in_agreed_scoring(kosumi_colour, seed):
    with kosumi("--evaluator", "uniform", "--seed", str(seed)) as ours, gnugo(seed) as theirs:
        black, white = (ours, theirs) if kosumi_colour == "b" else (theirs, ours)
        moves = play_game(black, white, size=9, komi=4.5)
        assert len(moves) > 40
        same_stones(ours, theirs)
        assert ours.send("list_stones black") and ours.send("list_stones white")
        our_score = ours.send("final_score")
        assert our_score == theirs.send("final_score", timeout=60)
        assert ours.send("final_status_list dead") == ""
        # kosumi's record of the game is the game that was played.
        from sgfmill import sgf
        from sgfmill.common import format_vertex
        record = sgf.Sgf_game.from_string(ours.send("printsgf"))
        recorded = [node.get_move() for node in record.get_main_sequence()[1:]]
        assert [(colour, format_vertex(move).lower()) for colour, move in recorded] == moves


def test_a_fresh_net_plays_a_legal_game_against_gnugo(tmp_path):
    from engine.nets.weights import new_network, save_weights
    weights = tmp_path / "fresh.npz"
    save_weights(weights, new_network(seed=3), board_size=9, games_trained=0)
    with kosumi("--weights", str(weights), "--seed", "4") as ours, gnugo(4) as theirs:
        moves = play_game(ours, theirs, size=9, komi=7)
        assert moves[-2:] == [("b", "pass"), ("w", "pass")] or \
            moves[-2:] == [("w", "pass"), ("b", "pass")]
        same_stones(ours, theirs)
        score = ours.send("final_score")
        assert score == "0" or score[:2] in ("B+", "W+")


def small_policy_net(path):
    """A freshly initialised small policy net (random moves with some structure)."""
    from engine.nets.policy import PolicyNet, save_policy
    save_policy(path, PolicyNet({"kind": "conv", "channels": 8, "layers": 2, "first_kernel": 3},
                                "rich", seed=5), 19, games_trained=0, positions_trained=0)
    return path


def test_the_policy_player_plays_a_legal_game_against_gnugo(tmp_path):
    policy = small_policy_net(tmp_path / "policy.npz")
    with kosumi("--player", "policy", "--policy", str(policy), "--evaluator", "uniform",
                "--policy-temperature", "1", "--seed", "3") as ours, gnugo(3) as theirs:
        moves = play_game(theirs, ours, size=9, komi=7)
        assert len(moves) > 20
        same_stones(ours, theirs)


@pytest.mark.slow
def test_the_search_with_the_policy_prior_plays_a_legal_game_against_gnugo(tmp_path):
    policy = small_policy_net(tmp_path / "policy.npz")
    with kosumi("--search", "mcts", "--playouts", "300", "--policy", str(policy),
                "--policy-prior", "on", "--evaluator", "uniform", "--seed", "5") as ours, \
            gnugo(5) as theirs:
        moves = play_game(ours, theirs, size=9, komi=7)
        assert len(moves) > 20
        same_stones(ours, theirs)
