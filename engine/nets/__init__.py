"""Learned evaluation and move prediction: the registered, versioned input feature sets
(features.pyx), Blair's Internal Symmetry Network (network.pyx: its training, over
network_forward.pyx, its forward pass; network_symmetry.py, its weight tying; network_targets.pyx,
its targets), NeuroGo 3's soft-segmentation network (softseg.pyx: its training, over
softseg_forward.pyx, its forward pass, and softseg_pathfinder.pyx, its global connectivity;
softseg_targets.pyx, its training targets), NeuroGo 1996's network over units (unitgraph.pyx,
unitnet.pyx), one descriptor per value-net architecture (architectures.py), weight files with
their metadata (weights.py), and the evaluator interface the players, the search and the trainer
use, with an evaluator for each network, the symmetric average and a trivial one for tests
(evaluator.py). The move-prediction (policy) network: its raw position records
(policy_inputs.pyx), its feature sets (policy_features.py), the net itself (policy.py), and the
predictor that gives a game position's move probabilities at play (predictor.py). The judging net
(judge.py): the policy's res trunk with heads for the result, the score and the final owners.

May import: engine.rules, engine.tactics (the features' ladders)."""
