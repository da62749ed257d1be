"""benchmarks/strength_table.py: pooling kosumi-match directories, and the games one match repeats
of another."""
import subprocess
import sys

from sgfmill import sgf

from tests.paths import REPO

SCRIPT = REPO / "benchmarks" / "strength_table.py"


def write_game(directory, number, a_is_black, result, moves):
    """A finished game as kosumi-match writes it: PB/PW name the engines A and B."""
    directory.mkdir(exist_ok=True)
    game = sgf.Sgf_game(size=9)
    root = game.get_root()
    root.set("PB", "kosumi (A)" if a_is_black else "GNU Go (B)")
    root.set("PW", "GNU Go (B)" if a_is_black else "kosumi (A)")
    root.set("RE", result)
    node = root
    for colour, move in moves:
        node = node.new_child()
        node.set_move(colour, move)
    (directory / f"game-{number:02d}.sgf").write_bytes(game.serialise())


def table(*rows):
    result = subprocess.run([sys.executable, str(SCRIPT), *(f"--row={row}" for row in rows)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


OPENING = [("b", (4, 4)), ("w", (2, 6)), ("b", (6, 2))]
MIRRORED = [(colour, (row, 8 - col)) for colour, (row, col) in OPENING]


def test_pools_the_directories_and_names_the_games_one_repeats_of_another(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    write_game(first, 1, True, "B+R", OPENING)
    write_game(first, 2, False, "B+3.5", OPENING)              # B had Black: another game
    write_game(second, 1, True, "B+R", MIRRORED)               # the first game, mirrored
    write_game(second, 2, True, "W+1.5", OPENING[:2])
    output = table(f"pooled||{first},{second}")
    assert "| pooled | 4 | 2 / 0 | 50.0% " in output
    assert ("pooled: 1 game(s) repeat an earlier one of the row; over the 3 distinct games "
            "A scored 1, 33.3% (") in output


def test_says_nothing_of_repeats_when_every_game_is_distinct(tmp_path):
    write_game(tmp_path / "only", 1, True, "B+R", OPENING)
    write_game(tmp_path / "only", 2, False, "B+R", OPENING)
    output = table(f"distinct||{tmp_path / 'only'}")
    assert "| distinct | 2 | 1 / 0 | 50.0% " in output
    assert "repeat" not in output
