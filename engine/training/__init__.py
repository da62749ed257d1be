"""Training nets: one self-play game (selfplay.py), TD targets (td.py), and `kosumi-train`
(train.py, the command line) with its settings (settings.py), how each architecture is trained
(recipes.py), learner (trainer.py), what it learns from a game (learning.py), self-play workers
(workers.py; on a Ray cluster with --ray, raypool.py), evaluation matches (evaluation.py), run
directory (rundir.py, history.py) and plots (plots.py); CSA*'s labelled data (scoredata.py) and
trainer (csatrain.py); the move-prediction network's game records in bulk (sgfdata.py), training
data (policydata.py), trainer (policytrain.py) with its numpy and PyTorch backends
(policybackends.py, policywinograd.py) and `kosumi-train policy` command line (policycli.py); the
judging net's targets from a game's end (gametargets.py), its PyTorch step and measures
(judging.py) and its judgement of counted games (judgeeval.py); expert iteration, the PUCT
search's self-play teaching the judging net (expert/, `kosumi-train selfplay`).

May import: engine.rules, engine.nets, engine.search, engine.scoring, engine.play, engine.tools."""
