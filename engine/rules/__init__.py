"""The rules, the bottom layer: stones and chains on a fast board with simple ko, the Zobrist
hash, journaled play/undo and eyes (board.pyx, its contract in board.pxd; C-level constants in
types.pxd), the game state with positional superko, passes, undo, handicap and area or territory
scoring and Benson's pass-alive analysis (game.py), and coordinates: loc,
(row, col), GTP vertex, sgfmill (coords.py).

Imports nothing from the rest of the engine."""
