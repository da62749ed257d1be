"""The judging net: one residual trunk, and four heads read from it in one pass: the move (as the
policy net's), the result (the side to move's chance to win), the final score (its lead in
points) and the final owner of every point. Trained on expert games by
engine/training/policytrain.py (`kosumi-train policy train --kind judge`).

Inputs: the `rich` feature planes of the policy net (engine/nets/policy_features.py) and one plane
more, the komi the side to move receives over KOMI_SCALE: a value or a score means nothing
without the komi, and the same position is a win or a loss by it.

The trunk is a `res` policy net's (engine/nets/policy.py: the first convolution, then pairs of
3x3 layers with a shortcut; no normalisation, Fixup's start), so Winograd's pass
(engine/nets/winograd.py) runs it at play, and the policy head is that net's (a 1x1 convolution,
pass from the trunk's mean). The other heads share a 1x1 convolution of the trunk to
`head_channels` maps with ReLU (KataGo's value head, in small):
- ownership: a 1x1 convolution of those maps, tanh: +1 the side to move owns the point at the
  end, -1 its opponent;
- value and score: the maps pooled over the board (their mean, the mean scaled by the board's
  width, (S - 14) / 10 as KataGo's, and their maximum: a fixed-length summary of any board size),
  a hidden layer of `value_hidden` units with ReLU, and two outputs: the win logit and the
  score lead over SCORE_SCALE. With `owned_lead` (architecture, 1; absent or 0: not) the two
  outputs also read the ownership head's sum over SCORE_SCALE, the lead in area the owners
  imply: the first run's ownership head named the held-out winners at move 150 more often than
  its result head (75% against 64%, docs/notebook/puct.md), and a pooled hidden layer has no
  cheap way to count.
Every layer is a convolution over the board or a function of the pooled maps, so one net judges
every board size from 5x5 to 19x19.

Weight files are the policy nets' (engine/nets/policy.py: save_policy, load_net) with the
architecture name "judge" and the head tensors after the policy's.

Reading order: JudgeNet.heads(), judge_planes(), symmetric_judgement(), judgement_in_symmetries().
"""
import math
from statistics import NormalDist
from dataclasses import dataclass

import numpy as np

from engine.nets.policy import PolicyNet, convolution, load_net, softmax, tensor_shapes
from engine.nets.policy_features import move_permutation, transform
from engine.rules.game import INVERSE_SYMMETRY

ARCHITECTURE_NAME = "judge"
KIND = "judge"
KOMI_SCALE = 15.0       # the komi plane: the komi the side to move receives, over this
SCORE_SCALE = 20.0      # the score output: the side to move's lead in points, over this
HEAD_SETTINGS = ("head_channels", "value_hidden")
JUDGE_VALUES = ("win", "lead")  # what the 1-ply player ranks a judging net's successors by
_STANDARD_NORMAL = NormalDist()


def head_shapes(architecture):
    """[(name, shape)] of the value, score and ownership heads, after the trunk's and policy's."""
    channels, maps, hidden = (architecture["channels"], architecture["head_channels"],
                              architecture["value_hidden"])
    owned = 1 if architecture.get("owned_lead") else 0
    return [("value.conv.w", (maps, channels, 1, 1)), ("value.conv.b", (maps,)),
            ("ownership.w", (1, maps, 1, 1)), ("ownership.b", (1,)),
            ("value.fc.w", (3 * maps, hidden)), ("value.fc.b", (hidden,)),
            ("value.out.w", (hidden + owned, 2)), ("value.out.b", (2,))]


def owned_lead(ownership):
    """The value outputs' extra input: the ownership (B, S, S) summed over each board, over
    SCORE_SCALE, (B, 1)."""
    return ownership.reshape(len(ownership), -1).sum(axis=1)[:, None] / SCORE_SCALE


def board_pooling(maps):
    """(B, S, S, C) -> (B, 3C): each map's mean, the mean scaled by the board's width, its max."""
    size = maps.shape[1]
    mean = maps.mean(axis=(1, 2))
    return np.concatenate([mean, mean * ((size - 14) / 10.0), maps.max(axis=(1, 2))], axis=1)


def judge_planes(planes, komi):
    """The net's input: feature planes (B, C, S, S) and a plane of the komi (B,) that the side to
    move receives (positive when White is to move under a positive komi)."""
    batch, _, size, _ = planes.shape
    plane = np.broadcast_to((np.asarray(komi, np.float32) / KOMI_SCALE)[:, None, None, None],
                            (batch, 1, size, size))
    return np.concatenate([np.asarray(planes, np.float32), plane], axis=1)


def lead_spread(empty_points):
    """The spread (points) of the final score around its expectation with `empty_points` points
    still open: half a point per square root of an open point, at least half a point. The one
    mapping between a lead and a chance to win: the GUIs' win rates for a lead
    (engine/play/player.py: win_probability) and a judging net's chance as a lead
    (win_as_lead)."""
    return max(0.5, 0.5 * math.sqrt(max(empty_points, 0)))


def win_as_lead(win, empty_points):
    """The lead (points) that a normal spread of lead_spread(empty_points) turns into the chance
    to win `win` (an array): what the 1-ply player ranks a judging net's successors by when it
    trusts the result head over the score head."""
    win = np.clip(np.asarray(win, dtype=float), 1e-6, 1 - 1e-6)
    return lead_spread(empty_points) * np.vectorize(_STANDARD_NORMAL.inv_cdf, otypes=[float])(win)


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


@dataclass
class Judgement:
    """A batch's outputs, each from the side to move's point of view."""
    policy: np.ndarray      # (B, S*S + 1) move logits, the points row by row, then pass
    win: np.ndarray         # (B,) the chance that the side to move wins
    score: np.ndarray       # (B,) its lead at the end, in points
    ownership: np.ndarray   # (B, S, S) +1: it owns the point at the end; -1: its opponent does

    def __len__(self):
        return len(self.win)


class JudgeNet(PolicyNet):
    """The judging net: a res trunk over the feature planes and the komi plane, and its heads."""
    architecture_name = ARCHITECTURE_NAME

    def _tensor_shapes(self):
        if self.architecture["kind"] != KIND:
            raise ValueError(f"a judging net's kind is {KIND!r}, not {self.architecture['kind']!r}")
        for name in HEAD_SETTINGS:
            if self.architecture.get(name, 0) < 1:
                raise ValueError(f"a judging net needs {name} of at least 1")
        if self.architecture.get("owned_lead", 0) not in (0, 1):
            raise ValueError("a judging net's owned_lead is 0 or 1")
        return tensor_shapes(self.architecture, self.feature_set.planes + 1) + \
            head_shapes(self.architecture)

    def _initial(self, seed):
        """The trunk and policy head as a res net's; He's spread for the heads' hidden layers (in,
        out matrices for the pooled layer), and the outputs at zero: a new net says 50%, a score
        of 0 and no owner anywhere."""
        params = super()._initial(seed)
        rng = np.random.default_rng([seed, 1])
        fan_in = params["value.fc.w"].shape[0]
        params["value.fc.w"] = (rng.standard_normal(params["value.fc.w"].shape)
                                * math.sqrt(2.0 / fan_in)).astype(np.float32)
        for name in ("value.out.w", "ownership.w"):
            params[name] = np.zeros_like(params[name])
        return params

    @staticmethod
    def join(outputs):
        return Judgement(*(np.concatenate([getattr(part, name) for part in outputs])
                           for name in ("policy", "win", "score", "ownership")))

    def forward(self, planes, keep=False):
        """The Judgement of judge_planes() (B, planes + 1, S, S): im2col's pass, the reference
        for Winograd's (engine/nets/winograd.py: play_forward())."""
        if keep:
            raise NotImplementedError("the judging net trains in PyTorch: no numpy backward pass")
        return super().forward(planes)

    def heads(self, hidden, cache=None):
        """The Judgement from the trunk's last layer (B, S, S, maps)."""
        p = self.params
        batch, size = hidden.shape[0], hidden.shape[1]
        policy = super().heads(hidden)
        maps = np.maximum(convolution(hidden, p["value.conv.w"], p["value.conv.b"])[0], 0.0)
        maps = maps.reshape(batch, size, size, -1)
        ownership = np.tanh(convolution(maps, p["ownership.w"], p["ownership.b"])[0])
        summary = np.maximum(board_pooling(maps) @ p["value.fc.w"] + p["value.fc.b"], 0.0)
        if self.architecture.get("owned_lead"):
            summary = np.concatenate([summary, owned_lead(ownership.reshape(batch, size, size))], axis=1)
        outputs = summary @ p["value.out.w"] + p["value.out.b"]
        return Judgement(policy, _sigmoid(outputs[:, 0]), outputs[:, 1] * SCORE_SCALE,
                         ownership.reshape(batch, size, size))

    def with_owned_lead(self):
        """This net with the value outputs reading the owned lead too (a copy; its weights there
        at zero, so that it judges as this one until it trains), or itself if they do."""
        if self.architecture.get("owned_lead"):
            return self
        params = {name: value.copy() for name, value in self.params.items()}
        params["value.out.w"] = np.concatenate(
            [params["value.out.w"], np.zeros((1, 2), np.float32)], axis=0)
        return JudgeNet(dict(self.architecture, owned_lead=1), self.feature_set.name, params=params)

    @classmethod
    def from_policy(cls, policy, head_channels, value_hidden, seed=0, owned=0):
        """A judging net whose trunk and policy head are a res policy net's (the komi plane's
        first-layer weights at zero, so its moves are the policy's at first) and whose other
        heads start as a new net's; owned: its owned_lead."""
        if policy.architecture["kind"] != "res":
            raise ValueError(f"a judging net grows from a res policy net, not a "
                             f"{policy.architecture['kind']} one")
        architecture = {name: policy.architecture[name] for name in ("channels", "layers", "first_kernel")}
        net = cls(dict(architecture, kind=KIND, head_channels=head_channels, value_hidden=value_hidden,
                       owned_lead=owned), policy.feature_set.name, seed=seed)
        for name, value in policy.params.items():
            if name == "conv0.w":
                net.params[name][:, :value.shape[1]] = value
                net.params[name][:, value.shape[1]:] = 0.0
            else:
                net.params[name] = value.copy()
        return net


def load_judge(path):
    """(JudgeNet, metadata) of a weight file; WeightFileError naming the file for one that is
    missing, damaged, not a judging net, or whose parameters do not fit its architecture."""
    return load_net(path, JudgeNet, "a policy net goes to --policy, a value net to --weights")


def symmetric_judgement(forward, planes, symmetries):
    """The Judgement of planes (B, C, S, S) averaged over the first `symmetries` board symmetries
    (in one batch): the move probabilities' mean (as log-probabilities in `policy`), the win
    chance's, the score's and each point's ownership brought back to the board's own frame."""
    if symmetries == 1:
        return forward(planes)
    size, count = planes.shape[-1], len(planes)
    batch = np.concatenate([np.ascontiguousarray(transform(planes, s)) for s in range(symmetries)])
    judged = forward(batch)
    policy = sum(softmax(judged.policy[s * count:(s + 1) * count])[:, move_permutation(size, s)]
                 for s in range(symmetries)) / symmetries
    ownership = sum(transform(judged.ownership[s * count:(s + 1) * count], INVERSE_SYMMETRY[s])
                    for s in range(symmetries)) / symmetries
    return Judgement(np.log(np.maximum(policy, 1e-300)),
                     judged.win.reshape(symmetries, count).mean(axis=0),
                     judged.score.reshape(symmetries, count).mean(axis=0),
                     np.ascontiguousarray(ownership))


def judgement_in_symmetries(forward, planes, symmetries):
    """The Judgement of planes (B, C, S, S), each position judged once under its own board
    symmetry symmetries[i] (0..7), in one batch, its moves and owners brought back to the board's
    own frame: the search's random symmetry (Leela Zero's and KataGo's), which spreads a net's
    errors that depend on the board's orientation over the tree instead of repeating them."""
    size = planes.shape[-1]
    symmetries = np.asarray(symmetries)
    mirrored = np.array(planes, dtype=np.float32)
    used = np.unique(symmetries)
    for s in used[used != 0]:
        chosen = symmetries == s
        mirrored[chosen] = transform(mirrored[chosen], s)
    judged = forward(mirrored)
    policy, ownership = np.array(judged.policy), np.array(judged.ownership)
    for s in used[used != 0]:
        chosen = symmetries == s
        policy[chosen] = policy[chosen][:, move_permutation(size, s)]
        ownership[chosen] = transform(ownership[chosen], INVERSE_SYMMETRY[s])
    return Judgement(policy, judged.win, judged.score, ownership)
