"""The evaluator interface: what the player, the GTP engine and the trainer call to judge positions.

Reading order: `Evaluator` (the two calls every implementation provides), `NetworkEvaluator`
(Blair's Internal Symmetry Network: `evaluate()`, `successor_values()` and `_position()`, the
implicit recurrence over the game), `SoftSegEvaluator` (NeuroGo 3's soft-segmentation network,
engine/nets/softseg.pyx: no recurrence, a position is evaluated alone), `UnitGraphEvaluator`
(NeuroGo 1996's network over strings and empty points, engine/nets/unitnet.pyx), `JudgeEvaluator`
(the judging net, engine/nets/judge.py: a score lead, a chance to win and the owners in one
pass), `SymmetricEvaluator` (another evaluator averaged over the board's symmetries),
`UniformEvaluator` (a trivial area count for tests), and `load_evaluator()`, which builds the one
a weight file's architecture names (each value net's evaluator says which architecture it plays
with @evaluates; the architectures are engine/nets/architectures.py's; a judging net's file is
the policy nets' kind, read by engine/nets/judge.py).

Values are in points, komi included, for the side to move (`evaluate`) or for the player who made
the move (`successor_values`). The network evaluator scores with Blair's parameters c (value of a
captured stone) and s (value of a stone on the board at the end); play uses Chinese scoring,
c = 0 and s = 1, where the value is the expected area margin.

The implicit recurrence. The network's input classifies every chain by its liberties, weighted by
the PREVIOUS evaluation's outputs (paper, section IV.B). The previous evaluation of a position is
that of its predecessor in the game, so the evaluation of a GameState is a function of its whole
history: position 0 (the empty board, or the set-up position of GameState.from_board) has no
predecessor and is bootstrapped from the prior (network.prior_liberty_weights: classes by liberty
count alone), evaluated, and then evaluated again with its own outputs as the previous ones; every
later position uses its predecessor's evaluation. The first position of a normal game is the empty
board, which has no chains, so the prior does not influence its evaluation at all. Evaluations are
remembered by history (an LRU cache), so playing a game forward costs one new evaluation per
position, while undo, loadsgf or a position never seen before walk back to the nearest remembered
position (at worst position 0) and evaluate forward from there: the result never depends on what
the evaluator happened to see before.
"""
import copy
import functools
from abc import ABC, abstractmethod
from collections import OrderedDict
from dataclasses import dataclass
from typing import Optional

import numpy as np

from engine.rules.board import BLACK, EMPTY, PASS, WHITE, opponent
from engine.rules.coords import board_points
from engine.rules.game import SYMMETRIES, symmetric_loc
from engine.nets import judge
from engine.nets import network as isn
from engine.nets import softseg
from engine.nets.architectures import ISN, SOFTSEG, UNITGRAPH, architecture_of
from engine.nets.policy_features import features
from engine.nets.policy import softmax
from engine.nets.policy_inputs import MOVE_LIBERTIES, RECORD_PLANES, PositionEncoder
from engine.nets.predictor import RECENT_MOVES, by_loc, position_records
from engine.nets.winograd import play_forward

DEFAULT_CACHE_SIZE = 256      # positions remembered; a game needs two per move, undo a few more
CHINESE_CAPTURE_VALUE = 0.0   # Blair's c and s for Chinese scoring (play)
CHINESE_STONE_VALUE = 1.0
TRAINING_CAPTURE_VALUE = 0.4  # Blair's training score (section IV.B): c = s = 0.4
TRAINING_STONE_VALUE = 0.4
EVALUATORS = {}               # architecture name -> the evaluator of its nets (@evaluates)
_MASK64, _GOLDEN_GAMMA = (1 << 64) - 1, 0x9E3779B97F4A7C15   # position_symmetry(): splitmix64's
                                                             # odd multiplier, its top 3 bits
JUDGE_ALL_SUCCESSORS = 81     # board points up to which the judging net judges every successor
JUDGE_CANDIDATES = 32         # ... and above, only its policy head's likeliest moves (and pass)
UNJUDGED_MARGIN = 1.0         # points below the lowest judged successor for the moves not judged


def evaluates(architecture):
    """Class decorator: the evaluator load_evaluator() builds for nets of `architecture`
    (engine/nets/architectures.py); it takes (network, metadata=..., **options)."""
    def register(evaluator_type):
        EVALUATORS[architecture.name] = evaluator_type
        return evaluator_type
    return register


@dataclass(frozen=True)
class Evaluation:
    """The result of evaluate(). Arrays are read-only (they may be shared with the cache)."""
    value: float                  # expected final score for the side to move, in points, komi included
    ownership: np.ndarray         # (num_locs,): -1 (white) .. +1 (black), 0 off the board
    outputs: np.ndarray           # (num_locs, n_outputs) raw per-point outputs
    inputs: Optional[np.ndarray] = None   # the network's inputs (recurrence applied), for the
                                          # trainer: (num_locs,) for isn14, (num_locs, max_active)
                                          # for a multi-hot set (Network.forward's format); None
                                          # for evaluators without a network, and the judging net's
    win: Optional[float] = None           # the side to move's chance to win, for evaluators that
                                          # have one (the judging net); None: only the value speaks


class Evaluator(ABC):
    """What every evaluator provides. Implementations must not change the state they are given."""

    # True when a position and its mirror image can get different values: such an evaluator
    # plays better averaged over the board's symmetries (SymmetricEvaluator).
    tells_directions_apart = False
    # True when its ownership predicts the final owners (a net's), False when it counts the board
    # as it stands (UniformEvaluator): only a prediction's spread estimates the score's.
    predicts_ownership = True

    @abstractmethod
    def evaluate(self, state) -> Evaluation:
        """Evaluation of state, value for state.to_move."""

    @abstractmethod
    def successor_values(self, state):
        """(moves, values): every legal move of state.to_move under the full rules (superko
        included) and PASS last; values[i] is the value of the position after moves[i] for the
        player who made it, in points, komi included."""

    def pass_share(self, state):
        """For evaluators with a move head (the judging net): its probability of passing in state
        over that of its likeliest move (1: passing is its first choice); None: no move head."""
        return None

    def move_log_probabilities(self, state, moves):
        """For evaluators with a move head: the log of its probability for each of `moves`
        (legal moves of state.to_move, PASS among them), normalised over them; None: no move
        head."""
        return None

    def twin(self):
        """An evaluator giving the same values with its own working memory (network buffers,
        cache), so that another search thread can call it at the same time as this one. An
        evaluator that keeps nothing between calls is its own twin."""
        return self

    def within(self, fraction):
        """For time trouble: (a stand-in giving this evaluator's kind of values, the share of
        this evaluator's cost it takes), the best that costs at most `fraction` of it, else the
        cheapest there is."""
        return self, 1.0

    # True when connectivity() gives a map (evaluators with a global connectivity layer).
    has_connectivity = False

    # True when a call costs about ten times the ISN's (the soft-segmentation net): a tree search
    # then asks it for a prior at fewer nodes (engine/play/search_player.py).
    costly = False

    def connectivity(self, state, loc, colour):
        """(num_locs,): colour's connection values, 0 to 1, from the point loc to every point of
        state (NeuroGo 3's global connectivity, the paper's Figure 6; 0 off the board and below
        the net's cut-off). Only for evaluators whose has_connectivity is True."""
        raise NotImplementedError(f"{type(self).__name__} has no connectivity layer")


def _komi_for(colour, komi):
    """Komi from colour's point of view."""
    return komi if colour == WHITE else -komi


def _read_only(array):
    array.flags.writeable = False
    return array


@dataclass(frozen=True)
class _Position:
    """One remembered network evaluation, in the frame where to_move is Black."""
    board_hash: int
    to_move: int
    outputs: np.ndarray          # (num_locs, 7)
    inputs: np.ndarray           # (num_locs,) or (num_locs, max_active), as Network.encode
    total: float                 # sum of rewards for the player not to move, komi excluded
    ownership: np.ndarray        # real colours, +1 black
    weights: np.ndarray          # recurrence weights for the positions that follow this one


@evaluates(ISN)
class NetworkEvaluator(Evaluator):
    """Blair's Internal Symmetry Network behind the Evaluator interface."""

    def __init__(self, network, capture_value=CHINESE_CAPTURE_VALUE, stone_value=CHINESE_STONE_VALUE,
                 cache_size=DEFAULT_CACHE_SIZE, metadata=None):
        if network.feature_set not in isn.FEATURE_SETS:
            raise ValueError(f"NetworkEvaluator cannot encode the inputs of feature set "
                             f"{network.feature_set!r}")
        if not capture_value >= 0 or not 0 <= stone_value <= 1:
            raise ValueError(f"scoring needs c >= 0 and 0 <= s <= 1, got c={capture_value}, "
                             f"s={stone_value}")
        if cache_size < 2:
            raise ValueError(f"cache_size must be at least 2 (a position and its predecessor), "
                             f"not {cache_size}")
        self.network = network
        self.capture_value = float(capture_value)
        self.stone_value = float(stone_value)
        self.cache_size = int(cache_size)
        self.metadata = metadata or {}
        self._cache = OrderedDict()
        self._params_version = network.params_version   # the cache is valid for these parameters
        self.evaluations = 0      # full network evaluations made (for tests and statistics)

    def clear_cache(self):
        self._cache.clear()

    def twin(self):
        return NetworkEvaluator(copy_network(self.network), self.capture_value, self.stone_value,
                                self.cache_size, self.metadata)

    # --------------------------------------------------------------- the interface

    def evaluate(self, state):
        position = self._position(state)
        value = -position.total + _komi_for(state.to_move, state.rules.komi)
        return Evaluation(value, position.ownership, position.outputs, position.inputs)

    def successor_values(self, state):
        position = self._position(state)
        moves = state.legal_moves()
        mover = state.to_move
        pass_value, values = self.network.successor_values(
            state.board.copy(), mover, position.weights, moves, self.capture_value,
            self.stone_value, state.rules.suicide)
        return list(moves) + [PASS], np.append(values, pass_value) + _komi_for(mover, state.rules.komi)

    # --------------------------------------------------------------- the recurrence

    def _position(self, state):
        """The network evaluation of state, from its predecessor's (see the module docstring)."""
        if self.network.params_version != self._params_version:   # the trainer changed the net
            self._cache.clear()
            self._params_version = self.network.params_version
        prefix = (state.size, state.rules.suicide)
        history = tuple(state.history)
        key = (prefix, history, state.to_move)
        known = self._lookup(key, state.board.hash)
        if known is not None:
            return known
        # Common case: the predecessor is remembered (a game played forward).
        # An earlier position k is seen with history[k]'s colour to move: the side that did move
        # from it. (GameState's own to_move may differ, e.g. White's first move of a game played
        # with colours swapped; this choice keeps the recurrence colour-symmetric.)
        if history:
            previous = self._lookup((prefix, history[:-1], history[-1][0]), state.previous_hash())
            if previous is not None:
                return self._evaluate_and_remember(key, state.board, state.to_move, previous.weights)
        # Walk back through the history to the nearest remembered position, then forward again.
        pending = [(key, state.board.copy(), state.to_move)]
        walker = state.copy()
        previous = None
        while walker.history:
            walker.undo()
            length = len(walker.history)
            earlier_key = (prefix, history[:length], history[length][0])
            previous = self._lookup(earlier_key, walker.board.hash)
            if previous is not None:
                break
            pending.append((earlier_key, walker.board.copy(), history[length][0]))
        if previous is None:
            _, first_board, first_to_move = pending[-1]
            weights = self._bootstrap_weights(first_board, first_to_move)
        else:
            weights = previous.weights
        for earlier_key, board, to_move in reversed(pending):
            previous = self._evaluate_and_remember(earlier_key, board, to_move, weights)
            weights = previous.weights
        return previous

    def _bootstrap_weights(self, board, to_move):
        """Recurrence weights for a position without a predecessor: its own outputs when it is
        evaluated from the prior."""
        prior = isn.prior_liberty_weights(board.num_locs)
        outputs, _, _, _ = self.network.evaluate_board(board, to_move, prior, self.capture_value,
                                                       self.stone_value)
        self.evaluations += 1
        return isn.liberty_weights(outputs, to_move)

    def _evaluate_and_remember(self, key, board, to_move, previous_weights):
        outputs, inputs, _, total = self.network.evaluate_board(
            board, to_move, previous_weights, self.capture_value, self.stone_value)
        self.evaluations += 1
        position = _Position(board.hash, to_move, _read_only(outputs), _read_only(inputs), total,
                             _read_only(self._ownership(outputs, inputs, to_move)),
                             _read_only(isn.liberty_weights(outputs, to_move)))
        self._cache[key] = position
        self._cache.move_to_end(key)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return position

    def _lookup(self, key, board_hash):
        position = self._cache.get(key)
        if position is None or position.board_hash != board_hash:
            return None
        self._cache.move_to_end(key)
        return position

    @staticmethod
    def _ownership(outputs, inputs, to_move):
        """Per point, the Chinese-scoring reward (c = 0, s = 1) in real colours, +1 for Black."""
        if inputs.ndim == 2:        # multi-hot: every set's first input is the isn14 one
            inputs = inputs[:, 0]
        states = np.full(len(inputs), EMPTY)
        states[(inputs >= isn.INPUT_WHITE_C1) & (inputs < isn.INPUT_BLACK_C1)] = WHITE
        states[(inputs >= isn.INPUT_BLACK_C1) & (inputs < isn.INPUT_EMPTY_POINT)] = BLACK
        frame_white = isn.point_rewards(outputs, states, 0.0, 1.0)
        frame_white[inputs == isn.INPUT_OFF_BOARD_POINT] = 0.0
        return -frame_white if to_move == BLACK else frame_white


class _RememberingNetEvaluator(Evaluator):
    """What the soft-segmentation and unit-graph evaluators share: a net evaluated by position
    (board, side to move) through a small LRU cache, emptied when the trainer changes the net's
    parameters, and the net's own successor values. A subclass gives _compute(state), the
    cached tuple for a position, and evaluate(), which reads it."""

    def __init__(self, network, cache_size=DEFAULT_CACHE_SIZE, metadata=None):
        if cache_size < 1:
            raise ValueError(f"cache_size must be at least 1, not {cache_size}")
        self.network = network
        self.cache_size = int(cache_size)
        self.metadata = metadata or {}
        self._cache = OrderedDict()
        self._params_version = network.params_version
        self.evaluations = 0

    def clear_cache(self):
        self._cache.clear()

    def twin(self):
        return type(self)(copy_network(self.network), self.cache_size, self.metadata)

    def _remembered(self, state):
        if self.network.params_version != self._params_version:
            self._cache.clear()
            self._params_version = self.network.params_version
        key = (state.size, state.board.hash, state.to_move)
        known = self._cache.get(key)
        if known is None:
            known = self._compute(state)
            self.evaluations += 1
            self._cache[key] = known
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        self._cache.move_to_end(key)
        return known

    def successor_values(self, state):
        moves = state.legal_moves()
        mover = state.to_move
        pass_value, values = self.network.successor_values(state.board.copy(), mover, moves,
                                                           state.rules.suicide)
        return list(moves) + [PASS], np.append(values, pass_value) + _komi_for(mover, state.rules.komi)


@evaluates(SOFTSEG)
class SoftSegEvaluator(_RememberingNetEvaluator):
    """NeuroGo 3's soft-segmentation network behind the Evaluator interface. The sum of its
    evaluation layer is the expected number of points alive for the side to move (section 2.2),
    so the value is the expected area margin (Chinese scoring), komi included. Evaluations are
    remembered by position (board, side to move) in a small LRU cache."""

    tells_directions_apart = True     # a receptive-field weight per position in the 3x3 window
    costly = True

    def _compute(self, state):
        outputs, inputs, total = self.network.evaluate_board(state.board, state.to_move)
        points = state.size * state.size
        alive = outputs[:, softseg.OUTPUT_EVAL]
        ownership = np.zeros(len(alive))      # real colours, +1 black
        on_board = inputs[:, 0] >= 0
        frame = 2.0 * alive[on_board] - 1.0
        ownership[on_board] = frame if state.to_move == BLACK else -frame
        return (2.0 * total - points, _read_only(outputs), _read_only(inputs), _read_only(ownership))

    def evaluate(self, state):
        margin, outputs, inputs, ownership = self._remembered(state)
        return Evaluation(margin + _komi_for(state.to_move, state.rules.komi), ownership, outputs,
                          inputs)

    has_connectivity = True

    def connectivity(self, state, loc, colour):
        self.network.evaluate_board(state.board, state.to_move)
        frame = 0 if colour == state.to_move else 1     # the net sees the side to move as Black
        return self.network.connectivity()[frame, loc]


@evaluates(UNITGRAPH)
class UnitGraphEvaluator(_RememberingNetEvaluator):
    """NeuroGo's network over units (Enzenberger 1996) behind the Evaluator interface. Its outputs
    are, per point, the probability that the side to move owns it at the end (Benson's verdict
    where there is one), so the value is the expected area margin (Chinese scoring), komi
    included. Its relations are distances, adjacency and groups, which no symmetry of the board
    changes: it needs no symmetry averaging. An evaluation's outputs are (num_locs, 1), the
    probability that the side to move owns each point; its inputs, per loc, the anchor of the
    point's unit (the points the network took as one). Evaluations are remembered by position
    (board, side to move) in a small LRU cache."""

    def _compute(self, state):
        owned, _, total = self.network.evaluate_board(state.board, state.to_move)
        on_board = np.zeros(len(owned), dtype=bool)
        on_board[state.board.points()] = True
        frame = np.where(on_board, 2.0 * owned - 1.0, 0.0)
        ownership = frame if state.to_move == BLACK else -frame      # real colours
        return (2.0 * total - state.size * state.size, _read_only(owned[:, None].copy()),
                _read_only(ownership), _read_only(self.network.unit_anchors()))

    def evaluate(self, state):
        margin, outputs, ownership, units = self._remembered(state)
        return Evaluation(margin + _komi_for(state.to_move, state.rules.komi), ownership, outputs,
                          units)


class JudgeEvaluator(Evaluator):
    """The judging net (engine/nets/judge.py) behind the Evaluator interface: one pass judges a
    position (its moves, the side to move's chance to win, its score lead and the final owner of
    every point). A position is encoded as the policy nets' (engine/nets/predictor.py: the same
    records, its RECENT_MOVES last moves), with the komi the side to move receives; the pass is
    play_forward()'s (Winograd's, in `precision`).

    evaluate(): the value is the net's score lead for the side to move (points, komi included),
    `win` its chance to win, the ownership the net's in real colours (+1 Black), the outputs
    (num_locs, 1) the side to move's ownership of each point; no inputs. Evaluations are
    remembered in an LRU cache by (board, side to move, recent moves, komi).

    successor_values(): the successors are judged in one batch, each valued by `value`: "lead",
    the net's score lead for the player who moved, or "win", its chance to win as the lead that
    gives that chance (judge.win_as_lead: the result head, the better trained, in points for the
    1-ply player's rules). On a board of more than
    JUDGE_ALL_SUCCESSORS points only `candidates` of them are (default JUDGE_CANDIDATES; 0: every
    one): the legal moves the net's own policy head finds likeliest in the position, and pass.
    Every other legal move gets the lowest judged value minus UNJUDGED_MARGIN points, so that it
    never outranks a judged move (a player may still choose it: the Boltzmann draw gives it a
    small chance, and the search's prior only starts it lower)."""

    tells_directions_apart = True     # convolutions whose kernels are not symmetric
    costly = True

    def __init__(self, net, cache_size=DEFAULT_CACHE_SIZE, metadata=None, candidates=None,
                 precision="fp32", forward=None, value="lead"):
        if value not in judge.JUDGE_VALUES:
            raise ValueError(f"a judging net's 1-ply value is one of "
                             f"{', '.join(judge.JUDGE_VALUES)}, not {value!r}")
        if cache_size < 1:
            raise ValueError(f"cache_size must be at least 1, not {cache_size}")
        if candidates is not None and candidates < 0:
            raise ValueError(f"candidates must be 0 (every move) or more, not {candidates}")
        self.net = net
        self.forward = forward or play_forward(net, precision)
        self.cache_size = int(cache_size)
        self.candidates = candidates
        self.value = value
        self.metadata = metadata or {}
        self.encoder = PositionEncoder()
        self._cache = OrderedDict()
        self.evaluations = 0      # positions judged (for tests and statistics)

    @classmethod
    def load(cls, path, **options):
        """The evaluator of a judging net's weight file; WeightFileError naming the file."""
        net, metadata = judge.load_judge(path)
        return cls(net, metadata=metadata, **options)

    @classmethod
    def load_by_size(cls, paths_by_size, precision="fp32", **options):
        """The evaluator of several judging nets' weight files, [(largest size, path)]: each net
        judges the boards of up to its size that no smaller one does, the largest also every
        larger board (ForwardBySize); `net` and `metadata` are the largest's. The nets must read
        the same inputs; WeightFileError naming the file that does not, or cannot be loaded."""
        from engine.nets.weights import WeightFileError
        loaded = [(size, path, *judge.load_judge(path))
                  for size, path in sorted(paths_by_size, key=lambda pair: pair[0])]
        _, largest_path, net, metadata = loaded[-1]
        for _, path, other, _ in loaded:
            if (other.feature_set.name, other.feature_set.history) != \
                    (net.feature_set.name, net.feature_set.history):
                raise WeightFileError(path, f"reads the {other.feature_set.name} inputs with "
                                            f"{other.feature_set.history} earlier positions, "
                                            f"{largest_path} the {net.feature_set.name} inputs "
                                            f"with {net.feature_set.history}: nets for the board "
                                            f"sizes of one engine read the same inputs")
        forward = ForwardBySize([(size, play_forward(other, precision))
                                 for size, _, other, _ in loaded])
        return cls(net, metadata=metadata, forward=forward, **options)

    def twin(self):
        """Its own cache and encoder over the same forward pass (its transformed kernels)."""
        return JudgeEvaluator(self.net, self.cache_size, self.metadata, self.candidates,
                              forward=self.forward, value=self.value)

    def clear_cache(self):
        self._cache.clear()

    def candidate_count(self, size):
        """How many moves successor_values() judges on a board of `size` lines (0: all)."""
        if self.candidates is not None:
            return self.candidates
        return 0 if size * size <= JUDGE_ALL_SUCCESSORS else JUDGE_CANDIDATES

    def evaluate(self, state):
        return self._judged(state)[0]

    def successor_values(self, state):
        moves = state.legal_moves()
        judged = moves
        limit = self.candidate_count(state.size)
        if 0 < limit < len(moves):
            logits = self._judged(state)[1][_point_index(moves, state.size)]
            judged = [moves[i] for i in sorted(np.argsort(-logits, kind="stable")[:limit])]
        judgement = self._judge_successors(state, judged + [PASS])
        if self.value == "win":
            values = judge.win_as_lead(1.0 - judgement.win, state.board.empty_points)
        else:
            values = -judgement.score.astype(float)
        if len(judged) == len(moves):
            return moves + [PASS], values
        result = np.full(len(moves) + 1, values.min() - UNJUDGED_MARGIN)
        position = {move: i for i, move in enumerate(moves)}
        result[[position[move] for move in judged]] = values[:-1]
        result[-1] = values[-1]
        return moves + [PASS], result

    def pass_share(self, state):
        probabilities = softmax(self._judged(state)[1][None])[0]
        return float(probabilities[-1] / probabilities.max())

    def move_log_probabilities(self, state, moves):
        moves = np.asarray(moves, dtype=np.int64)
        index = np.where(moves == PASS, state.size * state.size, _point_index(moves, state.size))
        logits = self._judged(state)[1][index]
        shifted = logits - logits.max()
        return shifted - np.log(np.exp(shifted).sum())

    def _judged(self, state):
        """(Evaluation, the policy head's logits (S*S + 1,)) of state, remembered."""
        return self.judge_lines(state, [()])[0]

    def judge_lines(self, state, lines, spread_symmetries=False):
        """[(Evaluation, the policy head's logits (S*S + 1,))] of the positions after each line
        of moves from state, those not remembered judged in one batch, each as the board stands
        or, with spread_symmetries, under its position_symmetry() (a remembered position is
        answered as it was judged). The lines are played on state and taken back: it is as it
        was when this returns."""
        history = self.net.feature_set.history
        keys, missing = [], {}
        for line in lines:
            played = 0
            try:
                for move in line:
                    state.play(move)
                    played += 1
                key = (state.size, state.board.hash, state.to_move,
                       tuple(state.history[-RECENT_MOVES:]), state.rules.komi)
                keys.append(key)
                if key not in self._cache and key not in missing:
                    missing[key] = (state.to_move, position_records(
                        self.encoder, state, state.to_move, history))
            finally:
                for _ in range(played):
                    state.undo()
        if missing:
            colours = np.array([colour for colour, _ in missing.values()])
            symmetries = [position_symmetry(board_hash, to_move)
                          for _, board_hash, to_move, *_ in missing] if spread_symmetries else None
            judged = self._judge(np.stack([records for _, records in missing.values()]), colours,
                                 state.rules.komi, symmetries)
            points = _points(state.size)
            for i, (key, colour) in enumerate(zip(missing, colours)):
                ownership = np.zeros(state.board.num_locs)
                ownership[points] = judged.ownership[i].ravel()
                outputs = _read_only(ownership[:, None].copy())
                real = ownership if colour == BLACK else -ownership
                self._cache[key] = (Evaluation(float(judged.score[i]), _read_only(real), outputs,
                                               None, float(judged.win[i])),
                                    _read_only(judged.policy[i].copy()))
        answers = []
        for key in keys:
            self._cache.move_to_end(key)
            answers.append(self._cache[key])
        while len(self._cache) > max(self.cache_size, len(keys)):
            self._cache.popitem(last=False)
        return answers

    def _judge_successors(self, state, moves):
        """The Judgement of the positions after each of moves, in one batch."""
        work, history = state.copy(), self.net.feature_set.history
        records = np.zeros((len(moves), history + 1, RECORD_PLANES, state.size ** 2), np.uint8)
        for i, move in enumerate(moves):
            work.play(move)
            position_records(self.encoder, work, work.to_move, history, out=records[i])
            work.undo()
        return self._judge(records, opponent(state.to_move), state.rules.komi)

    def averaged_moves(self, state, symmetries):
        """The move head's log-probabilities (S*S + 1,) for the side to move in state, averaged
        over the first `symmetries` board symmetries in one batch (judge.symmetric_judgement);
        not remembered."""
        records = position_records(self.encoder, state, state.to_move, self.net.feature_set.history)
        planes = self._planes(records[None], state.to_move, state.rules.komi)
        self.evaluations += symmetries
        return judge.symmetric_judgement(self.forward, planes, symmetries).policy[0]

    def _judge(self, records, colours, komi, symmetries=None):
        """The Judgement of records (B, history + 1, RECORD_PLANES, S*S) with colours (one, or
        one a record) to move, each under its symmetry (None: the board as it stands)."""
        planes = self._planes(records, colours, komi)
        self.evaluations += len(records)
        if symmetries is None:
            return self.forward(planes)
        return judge.judgement_in_symmetries(self.forward, planes, symmetries)

    def _planes(self, records, colours, komi):
        """The net's input (judge.judge_planes) for records with colours (one, or one a record)
        to move."""
        colours = np.array(np.broadcast_to(np.asarray(colours), (len(records),)))
        return judge.judge_planes(features(self.net.feature_set.name, records, colours),
                                  np.where(colours == WHITE, komi, -komi))


def position_symmetry(board_hash, to_move):
    """The board symmetry (0..7) a position is judged in when a search spreads its evaluations
    over the eight (JudgeEvaluator.judge_lines): drawn from the position's hash rather than a
    random generator, so that a search at fixed visits replays exactly and a position is judged
    alike however it is reached."""
    mixed = (((board_hash ^ to_move) & _MASK64) * _GOLDEN_GAMMA) & _MASK64
    return mixed >> 61


class ForwardBySize:
    """The forward pass of several judging nets, each the judge of the boards of up to its size
    that no smaller one judges, the largest also of every larger board: a batch of planes
    (B, C, S, S) goes to the net for S lines."""

    def __init__(self, forwards):
        self.forwards = sorted(forwards, key=lambda pair: pair[0])   # [(largest size, forward)]

    def __call__(self, planes):
        size = planes.shape[-1]
        forward = next((forward for largest, forward in self.forwards if size <= largest),
                       self.forwards[-1][1])
        return forward(planes)


@functools.lru_cache(maxsize=None)
def _points(size):
    """The locs of a board's points, row by row: the judging net's grid read as locs."""
    return np.array(board_points(size))


def _point_index(moves, size):
    """The row-by-row point index (as the policy head's) of each loc in moves."""
    rows, cols = np.divmod(np.asarray(moves, dtype=np.int64), size + 2)
    return (rows - 1) * size + cols - 1


class JudgeMoves:
    """The judging net's move head behind the move predictor's interface (predictor.py's
    MovePredictor: probabilities(), twin(), description(), cache): the policy that the analysis
    answers (`includePolicy`, KaTrain's policy views) and GoGui's policy views show when the
    PUCT search plays over a judging net and no policy net is named, and the policy player's
    moves for a judging net's file given to --policy, averaged over `symmetries`. With one, the
    evaluator's own cache remembers the positions, so the search's evaluations serve it too."""

    def __init__(self, evaluator, symmetries=1):
        if not 1 <= symmetries <= SYMMETRIES:
            raise ValueError(f"symmetries must be 1..{SYMMETRIES}, not {symmetries}")
        self.evaluator = evaluator
        self.net = evaluator.net
        self.symmetries = symmetries

    @property
    def cache(self):
        return self.evaluator._cache

    def twin(self, symmetries=None):
        return JudgeMoves(self.evaluator.twin(), symmetries or self.symmetries)

    def description(self):
        architecture = self.net.architecture
        averaged = f", {self.symmetries} symmetries" if self.symmetries > 1 else ""
        return f"judge {architecture['layers']} x {architecture['channels']}, its move head{averaged}"

    def probabilities(self, state, colour=None):
        """(num_locs + 1,) probabilities of colour's moves (default: the side to move), indexed
        by loc and num_locs for pass; zero on occupied points, suicides and the simple-ko
        retake."""
        if colour is not None and colour != state.to_move:
            state = state.copy()
            state.to_move = colour
        logits = self.evaluator._judged(state)[1] if self.symmetries == 1 else \
            self.evaluator.averaged_moves(state, self.symmetries)
        records = position_records(self.evaluator.encoder, state, state.to_move, 0)
        legal = np.append(records[0, MOVE_LIBERTIES] > 0, True)
        result = by_loc(softmax(logits, legal), state.size)
        result.flags.writeable = False
        return result

    def move_probability(self, probabilities, move):
        return float(probabilities[-1 if move == PASS else move])


class SymmetricEvaluator(Evaluator):
    """Another evaluator's values averaged over the first `count` of the board's eight symmetries
    (engine/rules/game.py: symmetric_point; 1 the evaluator alone, 8 all), each symmetry an
    evaluation of the whole game mirrored. For nets whose weights tell directions apart: the
    soft-segmentation net's receptive fields have a weight per field index, and on the empty 9x9
    board its four 3-3 points differ by 3.3 points. (Blair's ISN is symmetric by construction.)
    Costs `count` evaluations. evaluate() averages values, ownership, outputs and the chance to
    win (where the inner evaluator has one), and keeps the unmirrored position's inputs."""

    def __init__(self, inner, count=SYMMETRIES):
        if not 1 <= count <= SYMMETRIES:
            raise ValueError(f"symmetries must be from 1 to {SYMMETRIES}, not {count}")
        self.inner = inner
        self.count = int(count)
        self.metadata = getattr(inner, "metadata", {})
        self._back = {}        # (size, symmetry) -> index array: a mirrored array, read back
        self._fewer = {}       # count -> the same average over fewer symmetries (within)

    def twin(self):
        return SymmetricEvaluator(self.inner.twin(), self.count)

    def within(self, fraction):
        """Fewer symmetries: their cost is proportional to their count."""
        count = max(1, min(self.count, int(self.count * fraction)))
        if count == self.count:
            return self, 1.0
        if count not in self._fewer:   # the inner net is shared: one thread calls either
            self._fewer[count] = self.inner if count == 1 else SymmetricEvaluator(self.inner, count)
        return self._fewer[count], count / self.count

    def _read_back(self, size, symmetry):
        """Index array: mirrored[index[loc]] is the value at loc of the unmirrored position."""
        key = (size, symmetry)
        if key not in self._back:
            num_locs = (size + 2) * (size + 2)
            index = np.arange(num_locs)
            for row in range(size):
                for col in range(size):
                    loc = (row + 1) * (size + 2) + col + 1
                    index[loc] = symmetric_loc(loc, size, symmetry)
            self._back[key] = index
        return self._back[key]

    def evaluate(self, state):
        plain = self.inner.evaluate(state)
        value, ownership, outputs = plain.value, plain.ownership.copy(), plain.outputs.copy()
        win = plain.win
        for symmetry in range(1, self.count):
            mirrored = self.inner.evaluate(state.transformed(symmetry))
            back = self._read_back(state.size, symmetry)
            value += mirrored.value
            ownership += mirrored.ownership[back]
            outputs += mirrored.outputs[back]
            if win is not None:
                win += mirrored.win
        return Evaluation(value / self.count, _read_only(ownership / self.count),
                          _read_only(outputs / self.count), plain.inputs,
                          None if win is None else win / self.count)

    def successor_values(self, state):
        moves, values = self.inner.successor_values(state)
        values = np.array(values, dtype=float)
        for symmetry in range(1, self.count):
            mirrored_moves, mirrored_values = self.inner.successor_values(
                state.transformed(symmetry))
            value_of = dict(zip(mirrored_moves, mirrored_values))
            values += [value_of[symmetric_loc(move, state.size, symmetry)] for move in moves]
        return moves, values / self.count

    def pass_share(self, state):
        return self.inner.pass_share(state)

    @property
    def predicts_ownership(self):
        return self.inner.predicts_ownership

    def move_log_probabilities(self, state, moves):
        total = self.inner.move_log_probabilities(state, moves)
        if total is None:
            return None
        for symmetry in range(1, self.count):
            total = total + self.inner.move_log_probabilities(
                state.transformed(symmetry),
                [symmetric_loc(move, state.size, symmetry) for move in moves])
        return total / self.count

    @property
    def has_connectivity(self):
        return self.inner.has_connectivity

    def connectivity(self, state, loc, colour):
        values = self.inner.connectivity(state, loc, colour).copy()
        for symmetry in range(1, self.count):
            mirrored = self.inner.connectivity(state.transformed(symmetry),
                                               symmetric_loc(loc, state.size, symmetry), colour)
            values += mirrored[self._read_back(state.size, symmetry)]
        return values / self.count


class UniformEvaluator(Evaluator):
    """A trivial evaluator for tests: the Tromp-Taylor area count of the position as it stands
    (every stone alive). ownership is +1/-1 for black/white stones and one-colour regions."""

    predicts_ownership = False

    def evaluate(self, state):
        from engine.rules.game import area_score
        black_margin = area_score(state.board, state.rules.komi)
        value = black_margin if state.to_move == BLACK else -black_margin
        ownership = self._ownership(state.board)
        return Evaluation(float(value), ownership, ownership[:, None].copy())

    def successor_values(self, state):
        from engine.rules.game import area_score
        mover = state.to_move
        moves = state.legal_moves() + [PASS]
        board = state.board.copy()
        values = np.empty(len(moves))
        for i, move in enumerate(moves):
            board.play(move, mover, state.rules.suicide)
            black_margin = area_score(board, state.rules.komi)
            values[i] = black_margin if mover == BLACK else -black_margin
            board.undo()
        return moves, values

    @staticmethod
    def _ownership(board):
        value_of = {"black_stone": 1.0, "black_empty": 1.0, "white_stone": -1.0,
                    "white_empty": -1.0, "neutral_empty": 0.0, None: 0.0}
        return np.array([value_of[status] for status in isn.final_status(board)])


def copy_network(network):
    """A network of network's architecture with a copy of its parameters and its own buffers:
    every network pickles by its sizes and parameters (its __reduce__)."""
    return copy.deepcopy(network)


def load_evaluator(path=None, precision="fp32", value="lead", **options):
    """The evaluator of a weight file (None: weights.DEFAULT_WEIGHTS): NetworkEvaluator for an
    ISN, SoftSegEvaluator for a soft-segmentation net, UnitGraphEvaluator for a unit-graph net,
    JudgeEvaluator for a judging net, whose products are in `precision` and whose successors
    are valued by `value` (the other nets have no choice of either). options go to it
    (NetworkEvaluator: capture_value, stone_value, cache_size; JudgeEvaluator: cache_size,
    candidates; the others: cache_size). Raises weights.WeightFileError (a ValueError) naming
    the file and the problem."""
    from engine.nets import weights
    path = weights.DEFAULT_WEIGHTS if path is None else path
    if weights.architecture_name(path) == judge.ARCHITECTURE_NAME:
        return JudgeEvaluator.load(path, precision=precision, value=value, **options)
    network, metadata = weights.load_weights(path)
    return EVALUATORS[architecture_of(network).name](network, metadata=metadata, **options)
