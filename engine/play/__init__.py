"""Players: 1-ply Boltzmann move choice with its passing, cleanup and resigning rules
(player.py), and the clocks and per-move time budget (timecontrol.py).

May import: engine.rules, engine.nets, engine.search, engine.scoring."""
