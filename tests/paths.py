"""Where the tests find the repository and the data they share, wherever a test file sits."""
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
DATA = TESTS / "data"          # CSA*'s fixed boards, KaTrain's recorded queries
SGF = TESTS / "sgf"            # SGF files as real programs write them
