"""CSA*, the Cascaded Scoring Architecture of van der Werf et al., "Learning to Score Final
Positions in the Game of Go" (sections 3 and 4): which blocks are dead on a finished board.

Reading order: `analyse()` is the whole method. `BlockFeatures` (engine/scoring/csa_features.py)
gives every block its feature vector, given the previous step's predictions. `Classifier` is the
cascade of one-hidden-layer tanh MLPs, read from a versioned .npz. `score_by_flood_fill()` /
`score_by_distance()` (engine/scoring/counting.py) count the board with the dead blocks taken
off; when they differ the board is doubtful (the paper's check), and so it is when a block's
final prediction is far from certain, when the cascade's steps disagree on a block, or (where
the classifier's rule asks) when a false eye its owner may have to fill leaves the count one
point apart between rules and players (ours). `analyse(..., review=True)` also asks a tree
search for a second opinion (`search_count()`, the "local search" the paper proposes for the
positions its classifier gets wrong): a board whose count the search expects far from CSA*'s is
doubtful too.

A block's prediction is the probability that it is alive. Benson's pass-alive blocks are alive
and blocks standing in the other colour's pass-alive safe region dead, whatever the net says.
"""
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.rules.board import BLACK, WHITE
from engine.nets.weights import read_npz, shipped_weights_path
from engine.scoring.counting import score_by_distance, score_by_flood_fill
from engine.scoring.csa_features import (ALIVE_THRESHOLD, FEATURE_VERSION, NUM_BASE, NUM_RECURSIVE,
                                         BlockFeatures)
from engine.scoring.teire import teire_points
from engine.search.tree import TreeSearch

FORMAT_NAME = "kosumi-csa"
FORMAT_VERSION = 1
CASCADE_STEPS = 4          # the paper's CSA*: direct classification and three recursive steps
NAKADE_LIMIT = 3           # capturing 3+ stones and the filling one leaves 4+ points, mostly two eyes;
                           # 2 stones leave a killable three-point eye (the nakade of a semeai)
DOUBT_BAND = 0.2           # a block predicted between 0.2 and 0.8 makes the board doubtful
DOUBT_REASONS = ("its counts by flood fill and by distance differ, it is unsure of a block, a "
                 "false eye may have to be filled, or a tree search expects another count")
REVIEW_SIMULATIONS = 3000  # per colour to move: 0.17 s a 9x9 board, 0.7 s a 19x19 one
REVIEW_GAP = 10            # points between CSA*'s count and the search's that make a board doubtful
REVIEW_SEED = 1            # fixed: the same board always gets the same review


@dataclass(frozen=True)
class DoubtRule:
    """When a count is doubtful: the paper's check (flood fill and distance counts more than
    `counts_gap` points apart), a decided block whose final probability of life lies within
    `band` of neither 0 nor 1, the cascade's steps disagreeing on a block (`changed_mind`), a
    false eye in some territory that its owner may have to fill (`teire`: counts with and
    without teire, and the players who filled it or not, are a point apart), or, when reviewed,
    the tree search's count more than `review_gap` points from CSA*'s. The
    defaults are the rule chosen on held-out 9x9 boards (docs/notebook/csa.md); a classifier
    file may carry its own (metadata "doubt", `agreedcounts tune-flag` chooses one on boards
    the classifier never learnt), so that a 19x19 classifier tuned on counted 19x19 games keeps
    the 9x9 rule for 9x9."""
    counts_gap: float = 0.0        # points; the paper's check is any difference
    band: float = DOUBT_BAND       # 0.5: no block's probability makes the board doubtful
    changed_mind: bool = True
    review_gap: float = REVIEW_GAP
    teire: bool = False            # files written before the sign existed keep their flag

    FIELDS = ("counts_gap", "band", "changed_mind", "review_gap", "teire")

    @classmethod
    def from_metadata(cls, value, path="<metadata>"):
        """The rule of a classifier file's metadata "doubt" (None: the default rule);
        ClassifierFileError naming the file for anything else than the four known fields of
        the right types and ranges (a record without "teire" leaves it off)."""
        if value is None:
            return cls()
        if not isinstance(value, dict) or set(value) - set(cls.FIELDS):
            raise ClassifierFileError(path, f"doubt should be a record of {', '.join(cls.FIELDS)}, "
                                            f"got {value!r}")
        rule = {}
        for name, default in zip(cls.FIELDS, (cls.counts_gap, cls.band, cls.changed_mind,
                                              cls.review_gap, cls.teire)):
            item = value.get(name, default)
            if name in ("changed_mind", "teire"):
                if not isinstance(item, bool):
                    raise ClassifierFileError(path, f"doubt.{name} should be true or "
                                                    f"false, got {item!r}")
            elif isinstance(item, bool) or not isinstance(item, (int, float)) or \
                    not 0 <= item <= (0.5 if name == "band" else 1e6):
                raise ClassifierFileError(path, f"doubt.{name} out of range: {item!r}")
            rule[name] = item
        return cls(**rule)

    def to_metadata(self):
        return {name: getattr(self, name) for name in self.FIELDS}

    def flags(self, signs):
        """Whether a board with these doubt signs (CsaResult.doubt_signs()) is doubtful."""
        return (signs["counts_gap"] > self.counts_gap + 1e-9
                or signs["least_sure"] < 0.5 - self.band
                or (self.changed_mind and signs["changed_mind"])
                or (self.teire and signs.get("teire_points", 0) > 0)
                or (signs["search_gap"] is not None and signs["search_gap"] > self.review_gap))


class ClassifierFileError(ValueError):
    """A CSA* classifier file that cannot be used; the message names the file."""

    def __init__(self, path, problem):
        super().__init__(f"CSA* classifier file {path}: {problem}")
        self.path = path
        self.problem = problem

    def __reduce__(self):
        # rebuilt from its own arguments, so the message survives the trip from a worker process
        return type(self), (self.path, self.problem)


# ---------------------------------------------------------------------- the classifier


class Classifier:
    """The cascade: one MLP (inputs squashed and standardised, one tanh hidden layer, a sigmoid output: the
    probability that the block is alive) per step. Step 0 reads the NUM_BASE features, the
    later steps NUM_RECURSIVE."""

    ARRAYS = ("mean", "scale", "w1", "b1", "w2", "b2")

    def __init__(self, steps, metadata=None):
        self.steps = steps            # list of dicts with the ARRAYS
        self.metadata = metadata or {}
        self.doubt_rule = DoubtRule.from_metadata(self.metadata.get("doubt"))

    @staticmethod
    def squash(x):
        """sign(x) log(1 + |x|): counts on a 19x19 board (region sizes, liberties of big
        chains) stay near the range a 9x9-trained network has seen."""
        return np.sign(x) * np.log1p(np.abs(x))

    @staticmethod
    def forward(step, x):
        x = Classifier.squash(x)
        h = np.tanh(((x - step["mean"]) / step["scale"]) @ step["w1"] + step["b1"])
        z = h @ step["w2"] + step["b2"]
        return 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))

    def params_digest(self):
        digest = hashlib.sha256()
        for step in self.steps:
            for name in self.ARRAYS:
                digest.update(np.ascontiguousarray(step[name], dtype=np.float64).tobytes())
        return digest.hexdigest()

    def save(self, path, metadata):
        """Write atomically: arrays step{k}_{name} and a JSON metadata record, no pickle."""
        path = Path(path)
        metadata = dict(metadata, format=FORMAT_NAME, format_version=FORMAT_VERSION,
                        feature_version=FEATURE_VERSION, num_base_features=NUM_BASE,
                        num_recursive_features=NUM_RECURSIVE, steps=len(self.steps),
                        hidden=int(self.steps[0]["w1"].shape[1]),
                        params_sha256=self.params_digest())
        arrays = {f"step{k}_{name}": np.asarray(step[name], dtype=np.float64)
                  for k, step in enumerate(self.steps) for name in self.ARRAYS}
        arrays["metadata"] = np.frombuffer(json.dumps(metadata, sort_keys=True).encode("utf-8"),
                                           dtype=np.uint8)
        directory = path.parent if str(path.parent) else Path(".")
        descriptor, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp",
                                                 dir=directory)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                np.savez(handle, **arrays)
            os.chmod(temporary, 0o644)
            os.replace(temporary, path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
        self.metadata = metadata
        self.doubt_rule = DoubtRule.from_metadata(metadata.get("doubt"), path)
        return metadata

    @classmethod
    def load(cls, path):
        """A classifier from a file; ClassifierFileError naming the file for anything missing,
        damaged, pickled, of another version or of the wrong shapes."""
        path = Path(path)
        arrays = read_npz(path, ClassifierFileError)
        raw = arrays.pop("metadata", None)
        if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
            raise ClassifierFileError(path, "no metadata record (UTF-8 JSON bytes)")
        try:
            metadata = json.loads(raw.tobytes().decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ClassifierFileError(path, f"metadata is not valid JSON: {error}") from None
        if not isinstance(metadata, dict) or metadata.get("format") != FORMAT_NAME:
            raise ClassifierFileError(path, "not a kosumi CSA* classifier file")
        for key, expected in (("format_version", FORMAT_VERSION),
                              ("feature_version", FEATURE_VERSION),
                              ("num_base_features", NUM_BASE),
                              ("num_recursive_features", NUM_RECURSIVE)):
            if metadata.get(key) != expected:
                raise ClassifierFileError(path, f"{key} is {metadata.get(key)!r}, this kosumi "
                                                f"needs {expected}")
        count = metadata.get("steps")
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 16:
            raise ClassifierFileError(path, f"steps should be 1..16, got {count!r}")
        steps = []
        for k in range(count):
            step = {}
            for name in cls.ARRAYS:
                key = f"step{k}_{name}"
                if key not in arrays:
                    raise ClassifierFileError(path, f"missing array {key!r}")
                value = arrays[key]
                if value.dtype != np.float64:
                    raise ClassifierFileError(path, f"{key} should be float64, got {value.dtype}")
                if not np.all(np.isfinite(value)):
                    raise ClassifierFileError(path, f"{key} holds NaN or infinity")
                step[name] = value
            inputs = NUM_BASE if k == 0 else NUM_RECURSIVE
            hidden = step["w1"].shape[1] if step["w1"].ndim == 2 else -1
            shapes = {"mean": (inputs,), "scale": (inputs,), "w1": (inputs, hidden),
                      "b1": (hidden,), "w2": (hidden,), "b2": ()}
            for name, shape in shapes.items():
                if step[name].shape != shape or hidden < 1:
                    raise ClassifierFileError(path, f"step{k}_{name} has shape "
                                                    f"{step[name].shape}, expected {shape}")
            if np.any(step["scale"] <= 0):
                raise ClassifierFileError(path, f"step{k}_scale has a value <= 0")
            steps.append(step)
        DoubtRule.from_metadata(metadata.get("doubt"), path)   # names the file when wrong
        classifier = cls(steps, metadata)
        if classifier.params_digest() != metadata.get("params_sha256"):
            raise ClassifierFileError(path, "arrays do not match their recorded checksum "
                                            "(corrupt or altered)")
        return classifier


# ---------------------------------------------------------------------- the whole method


@dataclass
class CsaResult:
    features: BlockFeatures
    step_predictions: list        # per cascade step: probability of life per block
    dead_blocks: list             # indices of blocks taken off (after the last step)
    flood_fill_score: float
    distance_score: float
    search_score: float = None    # search_count() of the board when analysed with review=True
    rule: DoubtRule = DoubtRule()  # when the board is doubtful (the classifier's rule)

    @property
    def counts_differ(self):
        """The paper's check: flood fill and distance disagree (by more than the rule's
        counts_gap), open regions are unsettled."""
        return abs(self.flood_fill_score - self.distance_score) > self.rule.counts_gap + 1e-9

    @property
    def uncertain(self):
        """Some block the classifier decides has a final probability of life within the rule's
        band (DOUBT_BAND by default) of a coin flip's distance from 0 and 1 (our addition:
        most of our wrong boards are settled ones)."""
        return self._least_sure() < 0.5 - self.rule.band

    def _least_sure(self):
        """The smallest distance from 0.5 of a decided block's final probability (0.5 when
        there is none)."""
        final = self.step_predictions[-1] if self.step_predictions else []
        return min((abs(float(final[b]) - 0.5) for b in self._decided_blocks()), default=0.5)

    def doubt_signs(self):
        """What the doubtful flag reads, as numbers (for choosing a DoubtRule on measured
        boards): the flood-fill and distance counts' gap, the least sure decided block's
        distance from 0.5, whether the steps changed their mind, how many false eyes may have
        to be filled, and the review search's gap (None when not reviewed)."""
        return {"counts_gap": abs(self.flood_fill_score - self.distance_score),
                "least_sure": round(self._least_sure(), 6),
                "changed_mind": bool(self._changed_mind()),
                "teire_points": len(self._teire_points()),
                "search_gap": (None if self.search_score is None
                               else abs(self.search_score - self.flood_fill_score))}

    @property
    def changed_mind(self):
        """Some block the classifier decides is called alive by one cascade step and dead by
        another (ours: on held-out 9x9 boards most wrong counts had such a block, few right ones
        did; docs/notebook/csa.md), where the rule reads it."""
        return self.rule.changed_mind and self._changed_mind()

    def _changed_mind(self):
        return any(min(p[b] for p in self.step_predictions) < ALIVE_THRESHOLD
                   <= max(p[b] for p in self.step_predictions) for b in self._decided_blocks())

    def _decided_blocks(self):
        """The blocks whose status the classifier decides: not Benson's pass-alive blocks, nor
        the blocks inside the opponent's pass-alive area (dead whatever it says)."""
        if not self.step_predictions:
            return []
        return [b for b in range(len(self.features.blocks))
                if not self.features.pass_alive[b] and not self.features.in_safe_region[b]]

    @property
    def teire_doubt(self):
        """The rule asks about teire and some territory holds a false eye its owner may have to
        fill (engine/scoring/teire.py): rules with teire count the board one point apart from
        rules without, and players filled such points or not (ours: on the 19x19 development
        boards of the agreed counts, most boards counted one point off have one, few right
        ones do; docs/notebook/csa.md)."""
        return self.rule.teire and bool(self._teire_points())

    def _teire_points(self):
        return teire_points(self.features.board, self.dead_stones)

    @property
    def search_disagrees(self):
        """The tree search's count is more than the rule's review_gap points (REVIEW_GAP by
        default) from CSA*'s (ours: it reads the races and eye shapes whose outcome the block
        features cannot see)."""
        return self.search_score is not None and \
            abs(self.search_score - self.flood_fill_score) > self.rule.review_gap

    @property
    def doubtful(self):
        return (self.counts_differ or self.uncertain or self.changed_mind or self.teire_doubt
                or self.search_disagrees)

    @property
    def dead_stones(self):
        blocks = self.features.blocks
        return sorted(s for b in self.dead_blocks for s in blocks[b].stones)


def killing_shape(points, stride):
    """Whether an eyespace of these points, wholly enclosed by one block, makes one eye at most
    when the opponent plays its vital point: every space of three points or fewer, the square
    and pyramid fours, the bulky and crossed fives and the rabbity six (the nakade shapes)."""
    points = set(points)
    if len(points) <= 3:
        return True
    if len(points) > 6:
        return False
    most_neighbours = max(sum(q in points for q in (p - stride, p - 1, p + 1, p + stride))
                          for p in points)
    square = any({p + 1, p + stride, p + stride + 1} <= points for p in points)
    if len(points) == 4:
        return square or most_neighbours == 3
    if len(points) == 5:
        return square or most_neighbours == 4
    return square and most_neighbours == 4


def dead_blocks_from(features, predictions):
    """The blocks taken off: predicted dead (or in the opponent's Benson-safe region), never
    pass-alive, and not in a seki the board shows plainly, which the classifier, having seen few
    sekis, tends to miss. A block predicted dead is kept next to an opponent block when every
    liberty they share is self-atari for both colours (neither side can attack) and either both
    are predicted dead, or both have the same two or more liberties and no other, hold at
    least NAKADE_LIMIT stones each (capturing a smaller one leaves a three-point killing shape),
    and the living block cannot kill by sacrifice (filling a shared liberty and being captured
    would leave its stones and that point as the dead block's only eyespace, and if that space
    is a killing shape it is no seki) nor gain liberties by taking another dead block first."""
    dead = {b for b in range(len(features.blocks))
            if not features.pass_alive[b]
            and (features.in_safe_region[b] or predictions[b] < ALIVE_THRESHOLD)}
    board = features.board
    rescued = set()
    for b in dead:
        block = features.blocks[b]
        if features.in_safe_region[b]:
            continue
        for o in block.opponents:
            other = features.blocks[o]
            if features.in_safe_region[o] or features.pass_alive[o]:
                continue
            shared = block.liberties & other.liberties
            if not shared or (o not in dead and (
                    len(shared) < 2 or other.liberties != shared or block.liberties != shared
                    or min(len(block.stones), len(other.stones)) < NAKADE_LIMIT
                    or any(killing_shape(other.stones | {q}, features.stride) for q in shared)
                    or any(x in dead for x in other.opponents if x != b))):
                continue
            if all(board.liberties_if_played(q, block.colour) <= 1
                   and board.liberties_if_played(q, other.colour) <= 1 for q in shared):
                rescued.add(b)
                if o in dead:
                    rescued.add(o)
    dead -= rescued
    # A block can only be dead in the opponent's area: with no living opponent stone left,
    # nothing of a colour is dead (a lone stone on an empty board owns it; the paper notes its
    # classifier learned this, ours is told).
    living_colours = {block.colour for block in features.blocks if block.index not in dead}
    return sorted(b for b in dead
                  if BLACK + WHITE - features.blocks[b].colour in living_colours)


def predict_steps(features, classifier, steps=None):
    """Probability of life of every block after each cascade step (a list of arrays)."""
    steps = len(classifier.steps) if steps is None else steps
    results = []
    predictions = None
    for k in range(steps):
        if not features.blocks:
            results.append(np.zeros(0))
            continue
        x = features.features(predictions)
        predictions = Classifier.forward(classifier.steps[k], x)
        results.append(predictions)
    return results


def analyse(board, komi, classifier, steps=None, review=False):
    """CSA* on a finished board: predictions, dead blocks, both scores (komi included), and with
    review the tree search's count (search_count: it takes far longer than the rest, so the
    pass decisions go without it)."""
    features = BlockFeatures(board)
    step_predictions = predict_steps(features, classifier, steps)
    final = step_predictions[-1] if step_predictions else np.zeros(0)
    dead = dead_blocks_from(features, final)
    stones = [s for b in dead for s in features.blocks[b].stones]
    return CsaResult(features, step_predictions, dead, score_by_flood_fill(board, komi, stones),
                     score_by_distance(board, komi, stones),
                     search_count(board, komi) if review else None, classifier.doubt_rule)


def search_count(board, komi, simulations=REVIEW_SIMULATIONS, seed=REVIEW_SEED):
    """The area count (komi included) a tree search expects from a finished board: every point
    goes to the colour that owns it at the end of most of the search's simulations, averaged
    over two searches, one with each colour to move (the board does not say whose turn it is,
    and an unsettled race goes to the side that moves first). The search plays on past passes
    and sees no net: its playouts take dead stones off and its tree reads what the playouts get
    wrong."""
    counts = []
    for colour in (BLACK, WHITE):
        tree = TreeSearch(board.size, komi, seed=seed)
        tree.set_root(board, colour, (board.hash,))
        tree.run(simulations, stop_early=False)
        ownership = tree.ownership()
        counts.append(sum(np.sign(ownership[p]) for p in board.points()) - komi)
    return float(np.mean(counts))


# ---------------------------------------------------------------------- shipped classifiers

_LOADED = {}


def default_classifier_path(size):
    """weights/csa_19x19.npz for boards of 15 and more lines when it exists, else
    weights/csa_9x9.npz (the paper scores 19x19 boards with a 9x9-trained cascade); from the
    checkout, or after a plain `pip install .` from <prefix>/share/kosumi/weights."""
    large = shipped_weights_path("csa_19x19.npz")
    if size >= 15 and large.exists():
        return large
    return shipped_weights_path("csa_9x9.npz")


def classifier_for(size, path=None):
    """The classifier for a board size (loaded once per file)."""
    path = Path(path) if path is not None else default_classifier_path(size)
    key = str(path)
    if key not in _LOADED:
        _LOADED[key] = Classifier.load(path)
    return _LOADED[key]
