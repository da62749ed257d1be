"""benchmarks/softseg_figure4.py: issue 16's Figure-4 curve from the measured points it ships."""
import subprocess
import sys

from tests.paths import REPO

SCRIPT = REPO / "benchmarks" / "softseg_figure4.py"


def run_script(*arguments):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, arguments)],
                          capture_output=True, text=True, timeout=120)


def test_draws_the_shipped_points(tmp_path):
    out = tmp_path / "figure4.png"
    result = run_script("--out", out)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_refuses_a_malformed_row_naming_the_file(tmp_path):
    points = tmp_path / "points.csv"
    points.write_text("# a comment\nrun,games,opponent,wins,average_score,stderr\n"
                      "preprocessed,5000,gnugo-10,5,-29.2,2.4\n"
                      "preprocessed,lots,gnugo-10,5,-29.2,2.4\n")
    result = run_script("--points", points, "--out", tmp_path / "figure4.png")
    assert result.returncode != 0
    assert f"{points}: data row 2 is malformed" in result.stderr
    assert not (tmp_path / "figure4.png").exists()


def test_refuses_a_missing_points_file_naming_it(tmp_path):
    missing = tmp_path / "nowhere.csv"
    result = run_script("--points", missing, "--out", tmp_path / "figure4.png")
    assert result.returncode != 0
    assert f"{missing}: cannot read the points" in result.stderr
