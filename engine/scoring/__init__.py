"""Counting finished games: dead stones, seki and final scores (deadstones.py).

May import: engine.rules, engine.nets, engine.search."""
