"""Training nets: one self-play game (selfplay.py), TD targets (td.py), and `kosumi-train`
with its workers, learner, checkpoints, logs, evaluation matches and plots (train.py), its
workers on a Ray cluster with --ray (raypool.py).

May import: engine.rules, engine.nets, engine.search, engine.scoring, engine.play, engine.tools."""
