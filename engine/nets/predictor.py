"""The policy network at play: move probabilities of a game position, for the policy player
(engine/play/policy_player.py) and the search's prior (engine/play/search_player.py).

`MovePredictor.probabilities(state)` encodes the position the way the training data was encoded
(engine/nets/policy_inputs.pyx, engine/nets/policy_features.py: the same record, the same
features), runs the net, optionally averaged over the board's symmetries, and returns a
probability for every point (by loc) and pass, zero where the move is illegal under simple ko
(superko is the caller's: the players and the tree check it).
"""
from collections import OrderedDict

import numpy as np

from engine.nets.policy import STACKS, load_policy, softmax
from engine.nets.policy_features import features, move_permutation, transform
from engine.nets.policy_inputs import MOVE_LIBERTIES, RECORD_PLANES, PositionEncoder
from engine.nets.winograd import play_forward, precision_of
from engine.rules.coords import PASS
from engine.rules.game import SYMMETRIES

RECENT_MOVES = 15               # the AGE plane's memory (as engine/training/policydata.py)
CACHE_SIZE = 1024               # positions remembered (a search asks again after tree reuse)


def symmetric_log_probabilities(forward, planes, symmetries):
    """(B, S*S + 1) scores of the moves of planes (B, C, S, S) in the board's own frame: the net's
    logits for symmetries=1, else the log of its probabilities averaged over the first
    `symmetries` board symmetries (point i of the board is point permutation[i] of the
    transformed one). softmax() of either gives the move probabilities."""
    if symmetries == 1:
        return np.asarray(forward(planes), np.float64)
    size, count = planes.shape[-1], len(planes)
    batch = np.concatenate([np.ascontiguousarray(transform(planes, s)) for s in range(symmetries)])
    logits = np.asarray(forward(batch), np.float64).reshape(symmetries, count, -1)
    mean = sum(softmax(logits[s])[:, move_permutation(size, s)] for s in range(symmetries))
    return np.log(np.maximum(mean / symmetries, 1e-300))


def by_loc(values, size):
    """A net's per-move values (..., S*S + 1), the points row by row and pass last, indexed by
    loc instead (..., num_locs + 1), pass last, zero off the board."""
    values = np.asarray(values)
    stride = size + 2
    rows, cols = np.divmod(np.arange(size * size), size)
    result = np.zeros(values.shape[:-1] + (stride * stride + 1,))
    result[..., (rows + 1) * stride + cols + 1] = values[..., :-1]
    result[..., -1] = values[..., -1]
    return result


def _recent(history):
    return [loc for _, loc in reversed(history[-RECENT_MOVES:])]


def position_records(encoder, state, colour, history, out=None):
    """(history + 1, RECORD_PLANES, S*S) uint8 records of a game position with colour to move
    (a PositionEncoder's, its RECENT_MOVES last moves most recent first, as the training data's)
    and of the `history` positions before it (zeros before the game's start), into `out` when
    given. The policy nets and the judging net (engine/nets/evaluator.py) read these."""
    size = state.size
    records = np.zeros((history + 1, RECORD_PLANES, size * size), np.uint8) if out is None else out
    encoder.encode(state.board, colour, _recent(state.history), records[0])
    if history and state.history:
        work = state.copy()
        for t in range(1, history + 1):
            if not work.history:
                break
            work.undo()
            encoder.encode(work.board, work.to_move, _recent(work.history), records[t])
    return records


class MovePredictor:
    """A policy net with its encoder, symmetry averaging and a small cache. Not thread-safe: each
    search thread takes a twin()."""

    def __init__(self, net, symmetries=1, metadata=None, forward=None, precision="fp32"):
        if not 1 <= symmetries <= SYMMETRIES:
            raise ValueError(f"symmetries must be 1..{SYMMETRIES}, not {symmetries}")
        self.net = net
        self.forward = forward or play_forward(net, precision)
        self.metadata = metadata or {}
        self.symmetries = symmetries
        self.encoder = PositionEncoder()
        self.cache = OrderedDict()

    @classmethod
    def load(cls, path, symmetries=1, precision="fp32"):
        net, metadata = load_policy(path)
        return cls(net, symmetries, metadata, precision=precision)

    def twin(self, symmetries=None):
        """A predictor of its own (cache, encoder) over the same net, averaging over
        `symmetries` (default: as many as this one)."""
        return MovePredictor(self.net, symmetries or self.symmetries, self.metadata, self.forward)

    def description(self):
        """The net and its averaging in a few words, as "res 13 x 80, 8 symmetries", and its
        precision where it is not float32 ("..., bf16")."""
        architecture = self.net.architecture
        kind = architecture["kind"]
        shape = f" {architecture['layers']} x {architecture['channels']}" if kind in STACKS else ""
        precision = precision_of(self.forward)
        return (f"{kind}{shape}, {self.symmetries} symmetr{'y' if self.symmetries == 1 else 'ies'}"
                + ("" if precision == "fp32" else f", {precision}"))

    def records(self, state, colour):
        """(history + 1, RECORD_PLANES, S*S) records of the position and the ones before it."""
        return position_records(self.encoder, state, colour, self.net.feature_set.history)

    def probabilities(self, state, colour=None):
        """(num_locs + 1,) probabilities of colour's moves (default: the side to move), indexed
        by loc and num_locs for pass; zero on occupied points, suicides and the simple-ko
        retake."""
        colour = state.to_move if colour is None else colour
        key = (state.board.hash, colour, tuple(state.history[-RECENT_MOVES:]))
        cached = self.cache.get(key)
        if cached is not None:
            self.cache.move_to_end(key)
            return cached
        size = state.size
        records = self.records(state, colour)
        planes = features(self.net.feature_set.name, records[None], np.array([colour]))
        scores = symmetric_log_probabilities(self.forward, planes, self.symmetries)[0]
        legal = np.append(records[0, MOVE_LIBERTIES] > 0, True)
        result = by_loc(softmax(scores, legal), size)
        result.flags.writeable = False
        self.cache[key] = result
        if len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)
        return result

    def move_probability(self, probabilities, move):
        return float(probabilities[-1 if move == PASS else move])
