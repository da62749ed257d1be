"""Counting finished games: CSA*, the learned dead-stone classifier, with its cascade, doubtful
flag and a tree search's second opinion (csa.py), its block features (csa_features.py) and its
two counts (counting.py); the dead stones, seki, final scores and pass decisions built on Benson
and CSA* (deadstones.py); the teire points of territory counting (teire.py).

May import: engine.rules, engine.nets, engine.search."""
