"""Expert iteration, `kosumi-train selfplay`: the PUCT search's self-play teaches the judging net.

Reading order, bottom up: games.py (one self-play game and its targets), chunks.py (games on
disk as the trainer's data), run.py (the learner, its gate, the run directory), pool.py (local
and Ray workers and the driver that feeds them), strength.py (matches of the nets against fixed
opponents), plot.py (the history's picture), cli.py (the command line).

May import: engine.rules, engine.nets, engine.search, engine.scoring, engine.play, engine.tools
and the training modules below it (policydata, policytrain, gametargets, evaluation)."""
