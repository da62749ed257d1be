"""Regression: GTP scripts in gogui-regress's form (gtp/*.tst), the golden fixed-seed games
(golden_games.py records them), the pinned fixed-seed results of the tactics."""
