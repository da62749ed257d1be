"""Monte-Carlo tree search: the tree (tree.pyx: nodes in one C array, MC-RAVE selection, priors
as equivalent experience, rules of thumb, superko, the node budget, tree reuse), the playout
policy (playout.pyx: MoGo's escapes, captures and 3x3 patterns, optionally Fuego's and Pachi's
tactics and last good replies, the Tromp-Taylor count) and the 3x3 pattern table (patterns.py);
and the PUCT search over a judging net (puct.pyx: no playouts, the net's moves, win rate and
lead at every new node, asked through an evaluation function).
The player that drives it, with the net's prior, is engine/play/search_player.py.

May import: engine.rules, engine.tactics (the playouts' ladder reader, self-atari and nakade
tests). Not engine.nets: the net's prior reaches the tree through the player's prior function (PUCT:
its evaluation function)."""
