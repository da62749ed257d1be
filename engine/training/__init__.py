"""Training nets: one self-play game (selfplay.py), TD targets (td.py), and `kosumi-train` with
its workers, learner, checkpoints, logs, evaluation matches and plots (train.py), its workers on a
Ray cluster with --ray (raypool.py); CSA*'s labelled data (scoredata.py) and trainer
(csatrain.py); the move-prediction network's game records in bulk (sgfdata.py), training data
(policydata.py), trainer (policytrain.py) and `kosumi-train policy` command line (policycli.py).

May import: engine.rules, engine.nets, engine.search, engine.scoring, engine.play, engine.tools."""
