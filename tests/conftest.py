"""The layers of the suite and their markers (pyproject.toml registers them):

    tests/unit/<subsystem>/   one folder per folder of engine/ (and benchmarks/)
    tests/integration/        kosumi with other programs: all marked `external`
    tests/regress/            GTP regression scripts, golden games, pinned fixed-seed results
    tests/test_*.py           the repository itself: the import layers, the README's commands

`external` tests drive another program (GNU Go, Lizzie under Xvfb, node with Sabaki's GTP
library, KaTrain, a local Ray cluster) and skip, saying why, without it: every test in
tests/integration/ carries the marker (added below), a test elsewhere that runs GNU Go or KaTrain
carries it by decorator. `slow` tests take more than a few seconds, by decorator. The everyday
loop leaves both out:

    python -m pytest -m "not external and not slow"

The shared helpers are modules of the `tests` package: tests.diagrams (boards as ASCII
diagrams), tests.paths (the repository and the data folders)."""
from pathlib import Path

import pytest

from tests.diagrams import load_board

INTEGRATION = Path(__file__).resolve().parent / "integration"


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.is_relative_to(INTEGRATION):
            item.add_marker(pytest.mark.external)


@pytest.fixture(name="load_board")
def load_board_fixture():
    return load_board
