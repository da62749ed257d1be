"""kosumi: a Go engine with a learned evaluation.

The subpackages, bottom to top; a module imports only from its own subpackage and from those
below it (tests/test_layout.py keeps it so; docs/ARCHITECTURE.md has one line per module and the
reading order):

    rules      the board, the game and its rules, coordinates, Benson
    tactics    local reading on the board: the ladder reader, self-atari, nakade
    nets       input features, the networks (ISN, soft segmentation, move prediction), weight
               files, the evaluator
    search     Monte-Carlo tree search and its playout policy
    scoring    dead stones and final counts (CSA*)
    play       players over the evaluator and the search, move restrictions, time control
    training   self-play, TD targets, the trainer and its Ray workers, training data (CSA*'s, game
               records), CSA*'s trainer
    gtp        the GTP front end and the `kosumi` command line (the top: only entry points import it)

    tools      the match tool, the GTP client, shared argparse types: programs over GTP that import
               nothing of the engine but scoring and rules (the match tool counts finished games
               with CSA* when no referee is given), so any layer from play up may use them

`python -m engine.train` and `python -m engine.match` are kept as entry points (engine/train.py,
engine/match.py).
"""

__version__ = "0.1.0"
