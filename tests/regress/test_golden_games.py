"""Behaviour does not change: the fixed-seed games of golden_games.py, played again through the
real command line and in-process GTP, are move for move what tests/regress/golden_games.json
recorded (`python tests/regress/golden_games.py` rewrites it, only for a change meant to alter
moves). Some scenarios play the shipped nets."""
import json

import pytest

from tests.regress import golden_games


@pytest.mark.parametrize("name", sorted(golden_games.SCENARIOS))
def test_fixed_seed_games_are_move_for_move_as_recorded(name):
    recorded = json.loads(golden_games.RECORD.read_text(encoding="utf-8"))[name]
    assert golden_games.play(*golden_games.SCENARIOS[name]) == recorded
