"""Players: their settings, each declared once with its default, range and help
(settings.py: PlayerSettings, SearchSettings), the interface every player has and the 1-ply
Boltzmann move choice with its passing, cleanup and resigning rules (player.py: MovePlayer,
Player), the tree-search player with the net's and the policy net's prior, threads and tree
reuse (search_player.py), the policy player, the policy net's move with the same rules
(policy_player.py), the avoid/allow rules of the analysis commands (restriction.py), and the
clocks and per-move time budget (timecontrol.py).

May import: engine.rules, engine.nets, engine.search, engine.scoring."""
