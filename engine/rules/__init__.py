"""The rules: stones and chains on a fast board (board.pyx, C-level constants in types.pxd), the
game state with superko, passes, handicap and scoring, Benson's pass-alive analysis and the ladder
reader (game.py), and coordinates (coords.py).

The bottom layer: imports nothing from the rest of the engine."""
