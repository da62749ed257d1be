"""Learned evaluation: the input feature sets (features.pyx), the Internal Symmetry Network
(network.pyx), weight files (weights.py) and the evaluator interface the players use
(evaluator.py).

May import: engine.rules."""
