"""Tactics, above the rules and below the nets and the search (Pachi's tactics/, Fuego's
GoLadder): local reading on the fast board, shared by the nets' input features and the playouts.

- ladder.pyx: the ladder reader (`LadderReader`: whether a block is captured in a ladder, by
  play and undo on the board, with the footprint of what a read depended on for the nets'
  incremental features; `ladder_captured()` from Python). Used by engine/nets/features.pyx (and
  through it policy_inputs.pyx and softseg_forward.pyx), the playouts' ladder check and the dead-stone
  check of the final count (engine/scoring/deadstones.py).
- selfatari.pyx: the liberties a move would have, counted without playing it, and the self-atari
  of a chain of two or more stones that the playouts never play.
- nakade.pyx: the vital point of a three-point eye space.

The one-point eye rule stays in the board (Board.is_eye_fast / Board.is_eye, as Pachi keeps
board_is_one_point_eye in board.h): the board's own uniform playout and every layer's Python
code use it, and the rules cannot import from above.

The reference the ladder reader is checked against, a plain Python reader, is a test oracle:
tests/unit/tactics/ladder_oracle.py.

May import: engine.rules."""
