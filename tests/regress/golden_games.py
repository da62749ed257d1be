"""Fixed-seed games whose moves must not change when the code around the players does: the
scenarios, how they are played (in-process GTP, built by the real command line), and the record
they are compared with (tests/regress/golden_games.json, written before the settings were
refactored).

    python tests/regress/golden_games.py           # rewrite the record (when moves SHOULD change)
    python tests/regress/golden_games.py NAME...   # only these (a new shipped net: the policy ones)

tests/regress/test_golden_games.py replays every scenario and compares move for move.
"""
import io
import json
import sys
from pathlib import Path

RECORD = Path(__file__).parent / "golden_games.json"

# name -> (command-line options, board size, genmove commands at most[, komi]); each game
# alternates genmove b / genmove w from the empty board, komi 7 unless given, until two passes, a
# resignation or the cap.
SCENARIOS = {
    "1ply-softseg-9x9": (["--weights", "weights/softseg_9x9.npz", "--seed", "1"], 9, 14),
    "1ply-default-nets-9x9": (["--seed", "1"], 9, 14),
    "1ply-default-nets-13x13": (["--seed", "2"], 13, 4),
    "1ply-uniform-9x9-whole-game": (["--evaluator", "uniform", "--seed", "2"], 9, 250),
    "1ply-uniform-beta-resign": (["--evaluator", "uniform", "--seed", "3", "--beta", "2",
                                  "--resign-threshold", "0.1"], 9, 250),
    "mcts-uniform-9x9": (["--evaluator", "uniform", "--search", "mcts", "--playouts", "300",
                          "--seed", "1", "--policy", "none"], 9, 16),
    "mcts-uniform-9x9-whole-game": (["--evaluator", "uniform", "--search", "mcts",
                                     "--playouts", "100", "--seed", "4", "--policy", "none"],
                                    9, 250),
    "mcts-softseg-prior-9x9": (["--weights", "weights/softseg_9x9.npz", "--search", "mcts",
                                "--playouts", "300", "--seed", "1", "--policy-prior", "off"],
                               9, 6),
    "mcts-options-9x9": (["--evaluator", "uniform", "--search", "mcts", "--playouts", "300",
                          "--seed", "5", "--policy", "none", "--playout-tactics", "fuego",
                          "--last-good-reply", "--knowledge-prior", "10", "--prior-visits", "30",
                          "--value-weight", "0.2", "--expand-threshold", "3",
                          "--max-nodes", "50000", "--prior-threshold", "16"], 9, 10),
    "mcts-uniform-policy-prior-19x19": (["--evaluator", "uniform", "--search", "mcts",
                                         "--playouts", "200", "--seed", "1"], 19, 4),
    "mcts-two-threads-capture-all-dead": (["--evaluator", "uniform", "--search", "mcts",
                                           "--playouts", "200", "--seed", "6", "--threads", "2",
                                           "--policy", "none", "--capture-all-dead",
                                           "--no-resign"], 7, 120),
    "mcts-komi-60-passes": (["--evaluator", "uniform", "--search", "mcts", "--playouts",
                                 "200", "--seed", "7", "--policy", "none"], 7, 40, 60),
    "puct-judge-9x9": (["--weights", "weights/judge_19x19_run.npz", "--search", "mcts",
                        "--playouts", "60", "--seed", "1"], 9, 12),
    "puct-default-nets-9x9": (["--search", "mcts", "--playouts", "60", "--seed", "1"], 9, 12),
    "puct-default-nets-13x13": (["--search", "mcts", "--playouts", "40", "--seed", "2"], 13, 6),
    "policy-19x19-temperature": (["--evaluator", "uniform", "--player", "policy",
                                  "--policy-temperature", "1", "--seed", "1"], 19, 10),
}


def play(options, size, cap, komi=7):
    """The replies to the game's genmove commands."""
    from engine.gtp.main import build_engine, build_parser
    from engine.gtp.protocol import GtpLoop
    session = GtpLoop(build_engine(build_parser().parse_args(options)), io.BytesIO(b""),
                      io.BytesIO())
    for line in (f"boardsize {size}", "clear_board", f"komi {komi}"):
        assert session.handle_line(line + "\n").startswith("=")
    moves = []
    for turn in range(cap):
        reply = session.handle_line(f"genmove {'bw'[turn % 2]}\n")
        assert reply.startswith("= "), reply
        moves.append(reply[2:].strip())
        if moves[-1] == "resign" or moves[-2:] == ["pass", "pass"]:
            break
    return moves


def record(names=()):
    """Plays the named scenarios (all without names) again and writes them into the record."""
    unknown = set(names) - set(SCENARIOS)
    if unknown:
        raise SystemExit(f"unknown scenarios: {', '.join(sorted(unknown))}; known: {', '.join(SCENARIOS)}")
    games = json.loads(RECORD.read_text(encoding="utf-8")) if names and RECORD.exists() else {}
    for name in names or SCENARIOS:
        games[name] = play(*SCENARIOS[name])
        print(f"{name}: {len(games[name])} moves, last {games[name][-1]}", file=sys.stderr)
    RECORD.write_text(json.dumps(games, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    record(sys.argv[1:])
