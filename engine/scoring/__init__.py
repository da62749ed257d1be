"""Counting finished games: CSA*, the learned dead-stone classifier (csa.py), and the dead
stones, seki and final scores built on it (deadstones.py).

May import: engine.rules, engine.nets, engine.search."""
