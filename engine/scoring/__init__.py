"""Counting finished games: CSA*, the learned dead-stone classifier with its block features,
cascade, doubtful flag and a tree search's second opinion (csa.py), and the dead stones, seki,
final scores and pass decisions built on Benson and CSA* (deadstones.py).

May import: engine.rules, engine.nets, engine.search."""
