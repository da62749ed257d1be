"""Training the judging net (engine/nets/judge.py) on expert games: its PyTorch step, with the
four heads' losses, and its measures. The run itself (settings, checkpoints, resume, the log) is
the policy trainer's (engine/training/policytrain.py, `--kind judge`); the targets come from the
prepared data (engine/training/policydata.py: PolicyDataset.judge_targets()).

The losses, each a mean over the batch's positions (a position without that target adds 0, so a
batch's weight does not swing with how many of its games were counted):
- the move: cross-entropy, as the policy net's;
- the result: the logistic loss of the win logit against 1 (the side to move won) or 0; games
  lost on time and unknown results have none;
- the score: Huber's loss of the lead, in units of SCORE_SCALE points (quadratic within 20 points,
  so a game won by 80 points does not outweigh the rest), for games counted to the end;
- the ownership: each point's logistic loss of (1 + ownership) / 2 against (1 + owner) / 2, the
  mean over the board, for counted games whose dead stones the count explains.

Reading order: JudgeBackend.step(), then judgement_measures().
"""
import numpy as np

from engine.nets.judge import SCORE_SCALE, Judgement, judge_planes
from engine.nets.policy import played_ranks
from engine.training.policybackends import TorchBackend, torch_available

HEADS = ("value", "score", "ownership")
MEASURES = ("top1", "top5", "log_loss", "value_loss", "winner_right", "score_error",
            "ownership_loss", "owner_right")


class JudgeInputs:
    """A dataset's batches as the judging net takes them: the komi plane after the features."""

    def __init__(self, dataset):
        self.dataset, self.size, self.positions = dataset, dataset.size, dataset.positions

    def batch(self, feature_set_name, indices, symmetry=0):
        planes, moves = self.dataset.batch(feature_set_name, indices, symmetry)
        return judge_planes(planes, self.dataset.judge_targets(indices, symmetry).komi), moves


class JudgeBackend(TorchBackend):
    """TorchBackend's SGD, weights' average and state, over the judging net's heads.

    The heads beside the move's (value, score, ownership) learn at head_rate_scale times the
    schedule's rate, by the trunk's SGD or (head_optimizer "adam") by Adam: heads that start at
    zero on a trained trunk, without normalisation, learn slowly by SGD (the notebook,
    docs/notebook/judge.md: on frozen features Adam's value head reached a held-out loss SGD's
    did not)."""
    name = "torch"

    def __init__(self, net, settings, threads=None, precision="fp32", convolutions="auto"):
        super().__init__(net, settings, threads, precision, convolutions)
        self.weights = {head: getattr(settings, f"{head}_weight") for head in HEADS}
        self.head_losses = {}
        self.head_names = [name for name in self.params if name.split(".")[0] in HEADS]
        heads = [self.params[name] for name in self.head_names]
        trunk = [param for name, param in self.params.items() if name not in self.head_names]
        groups = [{"params": trunk, "scale": 1.0}]
        self.head_optimizer = None
        if settings.head_optimizer == "adam":
            self.head_optimizer = self.torch.optim.Adam(heads, lr=0.001)
        else:
            groups.append({"params": heads, "scale": settings.head_rate_scale})
        self.optimizer = self.torch.optim.SGD(groups, lr=0.1, momentum=settings.momentum,
                                              weight_decay=settings.weight_decay)
        self.head_scale = settings.head_rate_scale

    def _outputs(self, planes, p):
        """(policy logits, win logit, score / SCORE_SCALE, ownership logit (B, S, S))."""
        torch, functional = self.torch, self.torch.nn.functional
        hidden = self._trunk(planes, p)
        maps = torch.relu(functional.conv2d(hidden, p["value.conv.w"], p["value.conv.b"]))
        ownership = functional.conv2d(maps, p["ownership.w"], p["ownership.b"])[:, 0]
        mean = maps.mean(dim=(2, 3))
        pooled = torch.cat([mean, mean * ((maps.shape[-1] - 14) / 10.0), maps.amax(dim=(2, 3))], dim=1)
        summary = torch.relu(pooled @ p["value.fc.w"] + p["value.fc.b"])
        if self.net.architecture.get("owned_lead"):
            owned = torch.tanh(ownership).sum(dim=(1, 2))[:, None] / SCORE_SCALE
            summary = torch.cat([summary, owned.to(summary.dtype)], dim=1)
        outputs = summary @ p["value.out.w"] + p["value.out.b"]
        return self._policy_logits(hidden, p), outputs[:, 0], outputs[:, 1], ownership

    def _forward(self, planes, p):
        return self._outputs(planes, p)[0]

    def _head_losses(self, outputs, judged):
        """{head: (the batch's loss sum over positions with that target, how many had one)}."""
        torch, functional = self.torch, self.torch.nn.functional
        # float32 (bfloat16's outputs too), or float64 for the gradient checks
        dtype = torch.float64 if outputs[1].dtype == torch.float64 else torch.float32
        _, win, score, ownership = (output.to(dtype) for output in outputs)

        def tensor(array):
            return torch.as_tensor(np.asarray(array), dtype=dtype)

        known = {head: tensor(getattr(judged, f"{head}_known")) for head in HEADS}
        value = functional.binary_cross_entropy_with_logits(win, tensor(judged.value), reduction="none")
        lead = functional.huber_loss(score, tensor(judged.score) / SCORE_SCALE, reduction="none", delta=1.0)
        # (1 + tanh(x)) / 2 is sigmoid(2x): the ownership's logistic loss on its own logit
        owner = functional.binary_cross_entropy_with_logits(
            2.0 * ownership, (1.0 + tensor(judged.ownership)) / 2.0, reduction="none")
        per_position = {"value": value, "score": lead, "ownership": owner.mean(dim=(1, 2))}
        return {head: ((per_position[head] * known[head]).sum(), float(known[head].sum()))
                for head in HEADS}

    def step(self, planes, moves, rate, targets=None, judged=None):
        """TorchBackend's step on the four heads' weighted losses: (the move's loss, top-1), and
        each head's mean loss over its targets in head_losses."""
        return super().step(planes, moves, rate, targets, judged=judged)

    def _optimizers_at(self, rate):
        for group in self.optimizer.param_groups:
            group["lr"] = rate * group["scale"]
        if self.head_optimizer is None:
            return [self.optimizer]
        for group in self.head_optimizer.param_groups:
            group["lr"] = rate * self.head_scale
        return [self.optimizer, self.head_optimizer]

    def _extra_objective(self, outputs, batch, judged):
        heads = self._head_losses(outputs, judged)
        self.head_losses = {head: float(total.detach()) / count
                            for head, (total, count) in heads.items() if count}
        return sum(self.weights[head] * total / batch for head, (total, _) in heads.items())

    def state(self):
        state = super().state()
        if self.head_optimizer is not None:
            for name in self.head_names:
                for key, value in self.head_optimizer.state.get(self.params[name], {}).items():
                    state[f"adam/{name}/{key}"] = value.numpy().copy()
        return state

    def load_state(self, arrays):
        super().load_state(arrays)
        if self.head_optimizer is None:
            return
        for name in self.head_names:
            kept = {key.rsplit("/", 1)[1]: arrays[key] for key in arrays
                    if key.startswith(f"adam/{name}/")}
            if kept:
                self.head_optimizer.state[self.params[name]] = {
                    key: self.torch.from_numpy(value.copy()) for key, value in kept.items()}

    def judge(self, planes, averaged=False):
        """The Judgement of judge_planes() by the weights (or their average)."""
        torch = self.torch
        with torch.no_grad(), self.passes():
            policy, win, score, ownership = self._outputs(planes, self.average if averaged else self.params)
        return Judgement(policy.numpy(), torch.sigmoid(win).numpy(), score.numpy() * SCORE_SCALE,
                         torch.tanh(ownership).numpy())


def make_judge_backend(name, net, settings, threads=None, precision="fp32", convolutions="auto"):
    if name not in ("auto", "torch"):
        raise ValueError(f"backend {name}: the judging net trains in PyTorch only (--backend torch)")
    if not torch_available():
        raise ValueError("the judging net trains in PyTorch, which is not installed "
                         "(pip install -e '.[train]')")
    return JudgeBackend(net, settings, threads, precision, convolutions)


def judgement_measures(judge_of, dataset, feature_set_name, indices, batch_size=256):
    """A judging net's measures on the dataset's positions at indices (no symmetry): the move's
    top-1, top-5 and log-loss; the result's logistic loss and how often the side with the better chance
    won; the score's mean absolute error in points; the ownership's logistic loss and the points
    whose owner's sign it names. Each over the positions that have that target.
    judge_of: judge_planes() -> Judgement."""
    inputs = JudgeInputs(dataset)
    sums = dict.fromkeys(MEASURES, 0.0)
    counts = dict.fromkeys(("moves", "value", "score", "ownership", "owned_points"), 0)
    for start in range(0, len(indices), batch_size):
        chunk = indices[start:start + batch_size]
        planes, moves = inputs.batch(feature_set_name, chunk)
        judged = dataset.judge_targets(chunk)
        out = judge_of(planes)
        ranks, log_probabilities = played_ranks(out.policy, moves)
        sums["top1"] += float((ranks == 0).sum())
        sums["top5"] += float((ranks < 5).sum())
        sums["log_loss"] -= float(log_probabilities.sum())
        counts["moves"] += len(moves)
        win = np.clip(np.asarray(out.win, np.float64), 1e-7, 1 - 1e-7)
        known = judged.value_known
        target = judged.value[known]
        sums["value_loss"] -= float((target * np.log(win[known]) + (1 - target) * np.log(1 - win[known])).sum())
        sums["winner_right"] += float(((win[known] > 0.5) == (target > 0.5)).sum())
        counts["value"] += int(known.sum())
        known = judged.score_known
        sums["score_error"] += float(np.abs(out.score[known] - judged.score[known]).sum())
        counts["score"] += int(known.sum())
        known = judged.ownership_known
        owned = np.clip((1 + np.asarray(out.ownership[known], np.float64)) / 2, 1e-7, 1 - 1e-7)
        truth = (1 + judged.ownership[known]) / 2
        point_losses = -(truth * np.log(owned) + (1 - truth) * np.log(1 - owned))
        sums["ownership_loss"] += float(point_losses.mean(axis=(1, 2)).sum()) if len(owned) else 0.0
        decided = judged.ownership[known] != 0
        sums["owner_right"] += float(((owned > 0.5) == (truth > 0.5))[decided].sum())
        counts["ownership"] += len(owned)
        counts["owned_points"] += int(decided.sum())
    per = {"top1": "moves", "top5": "moves", "log_loss": "moves", "value_loss": "value", "winner_right": "value",
           "score_error": "score", "ownership_loss": "ownership", "owner_right": "owned_points"}
    result = {name: sums[name] / counts[per[name]] if counts[per[name]] else None for name in sums}
    result.update({f"{name}_positions": counts[name] for name in ("moves", "value", "score", "ownership")})
    return result
