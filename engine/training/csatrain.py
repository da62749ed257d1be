"""Training and measuring CSA* (engine/scoring/csa.py) on records of engine/training/scoredata.py,
which reads and writes the record files and imports this module (not the other way round).

Reading order: `examples()` turns records into boards, block labels and the blocks the
learning task covers (every block, or the paper's section 3.1 blocks); `fit_mlp()` trains one
step's MLP; `train()` builds the cascade (each step trained on features made from the previous
step's predictions, section 4.2); `evaluate()` scores held-out boards with every step, the
ownership scorer it replaced and GNU Go's own final_score.
"""
from dataclasses import dataclass

import numpy as np

from engine.rules.board import BLACK, WHITE, Board
from engine.rules.coords import board_points
from engine.scoring import counting, csa, csa_features

VALIDATION_SHARE = 0.15      # boards held back from fitting to pick each step's best epoch
# Which blocks the classifier learns. "relevant" is the paper's learning task (section 3.1): the
# blocks dead in the opponent's area and the living ones at the border of their own area. But
# scoring asks the classifier about every block, and a living block inside its own area (walled
# in by dead opponent stones, as on crushed boards) that it calls dead turns the count; trained
# on every block it learns those too (held-out 9x9 boards, docs/notebook/csa.md).
BLOCK_CHOICES = ("all", "relevant")
LEARNING_RATE = 0.01
WEIGHT_DECAY = 1e-4


@dataclass
class Example:
    record: dict
    board: Board
    features: csa_features.BlockFeatures
    dead: set           # true dead blocks
    classify: list      # blocks the learning task covers (indices into features.blocks)
    targets: np.ndarray  # 1 alive / 0 dead for `classify`


def board_of(record):
    size = record["size"]
    board = Board(size)
    for p, letter in zip(board_points(size), record["board"]):
        if letter != ".":
            board.play(p, BLACK if letter == "X" else WHITE)
    return board


def examples(records, blocks="all"):
    if blocks not in BLOCK_CHOICES:
        raise ValueError(f"blocks must be one of {', '.join(BLOCK_CHOICES)}, not {blocks!r}")
    out = []
    for record in records:
        if record.get("abandoned"):
            continue
        board = board_of(record)
        features = csa_features.BlockFeatures(board)
        points = board_points(record["size"])
        label_at = dict(zip(points, record["labels"]))
        dead = {b.index for b in features.blocks if label_at[next(iter(b.stones))] == "d"}
        classify = (list(range(len(features.blocks))) if blocks == "all"
                    else features.blocks_to_classify(dead))
        targets = np.array([0.0 if b in dead else 1.0 for b in classify])
        out.append(Example(record, board, features, dead, classify, targets))
    return out


def init_mlp(inputs, hidden, rng, x):
    x = csa.Classifier.squash(x)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    return {"mean": mean, "scale": scale,
            "w1": rng.normal(0, 1 / np.sqrt(inputs), (inputs, hidden)),
            "b1": np.zeros(hidden), "w2": rng.normal(0, 1 / np.sqrt(hidden), hidden),
            "b2": np.array(0.0)}


def _loss_and_grads(step, x, y):
    z = (csa.Classifier.squash(x) - step["mean"]) / step["scale"]
    h = np.tanh(z @ step["w1"] + step["b1"])
    logit = h @ step["w2"] + step["b2"]
    p = 1 / (1 + np.exp(-np.clip(logit, -50, 50)))
    eps = 1e-12
    loss = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
    d_logit = (p - y) / len(y)
    grads = {"w2": h.T @ d_logit + WEIGHT_DECAY * step["w2"], "b2": np.array(d_logit.sum())}
    d_h = np.outer(d_logit, step["w2"]) * (1 - h * h)
    grads["w1"] = z.T @ d_h + WEIGHT_DECAY * step["w1"]
    grads["b1"] = d_h.sum(axis=0)
    return loss, grads


def fit_mlp(x, y, x_val, y_val, hidden, epochs, rng, batch_size=None):
    """Adam on cross-entropy, full-batch (batch_size None: an update an epoch, validation
    every 10) or in shuffled mini-batches (updates through every block each epoch, validation
    after each: what makes 19x19 sets of 100,000 blocks and more trainable in minutes);
    returns the parameters of the checked epoch with the fewest validation errors (ties:
    lower validation loss)."""
    step = init_mlp(x.shape[1], hidden, rng, x)
    moments = {k: (np.zeros_like(step[k]), np.zeros_like(step[k])) for k in ("w1", "b1", "w2", "b2")}
    best, best_key = None, None
    updates = 0
    for epoch in range(1, epochs + 1):
        if batch_size is None:
            batches = [slice(None)]
        else:
            order = rng.permutation(len(y))
            batches = [order[i:i + batch_size] for i in range(0, len(y), batch_size)]
        for batch in batches:
            updates += 1
            _, grads = _loss_and_grads(step, x[batch], y[batch])
            for k, g in grads.items():
                m, v = moments[k]
                m = 0.9 * m + 0.1 * g
                v = 0.999 * v + 0.001 * g * g
                moments[k] = (m, v)
                step[k] = step[k] - LEARNING_RATE * (m / (1 - 0.9 ** updates)) / \
                    (np.sqrt(v / (1 - 0.999 ** updates)) + 1e-8)
        if batch_size is not None or epoch % 10 == 0 or epoch == epochs:
            check_x, check_y = (x_val, y_val) if len(y_val) else (x, y)
            p = csa.Classifier.forward(step, check_x)
            errors = int(np.sum((p >= 0.5) != (check_y >= 0.5)))
            loss = float(-np.mean(check_y * np.log(p + 1e-12) + (1 - check_y) * np.log(1 - p + 1e-12)))
            key = (errors, loss)
            if best_key is None or key < best_key:
                best_key, best = key, {k: np.array(v, dtype=np.float64) for k, v in step.items()}
    return best, best_key


def _stack(batch, matrices):
    xs = [m[e.classify] for e, m in zip(batch, matrices) if e.classify]
    ys = [e.targets for e in batch if e.classify]
    width = matrices[0].shape[1] if matrices else csa_features.NUM_BASE
    return (np.vstack(xs) if xs else np.zeros((0, width)),
            np.concatenate(ys) if ys else np.zeros(0))


def train(records, hidden=50, steps=csa.CASCADE_STEPS, epochs=600, seed=1, blocks="all",
          log=print, batch_size=None):
    """A trained csa.Classifier of `steps` steps and the number of games it saw.

    Stacking: the predictions a later step reads on the training boards are out-of-fold (each
    half of the fitting boards predicted by a network fitted on the other half), so that the
    later steps learn how far to trust predictions on boards the earlier network never saw, as
    on every board in play. The step that is kept is fitted on all the fitting boards; the
    validation boards (never fitted) pick each network's best epoch."""
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    rng = np.random.default_rng(seed)
    data = examples(records, blocks)
    order = rng.permutation(len(data))
    cut = int(len(data) * (1 - VALIDATION_SHARE))
    fit_set = [data[i] for i in order[:cut]]
    val_set = [data[i] for i in order[cut:]]
    folds = [fit_set[0::2], fit_set[1::2]]
    trained = []
    predictions = {id(e): None for e in data}

    def predict(step, batch, matrices, into):
        for e in batch:
            matrix = matrices[id(e)]
            into[id(e)] = csa.Classifier.forward(step, matrix) if len(matrix) else np.zeros(0)

    for k in range(steps):
        matrices = {id(e): e.features.features(predictions[id(e)]) for e in data}
        x, y = _stack(fit_set, [matrices[id(e)] for e in fit_set])
        x_val, y_val = _stack(val_set, [matrices[id(e)] for e in val_set])
        step, (errors, loss) = fit_mlp(x, y, x_val, y_val, hidden, epochs, rng, batch_size)
        trained.append(step)
        log(f"step {k + 1}: {len(y)} training blocks, validation {errors}/{len(y_val)} "
            f"blocks wrong (loss {loss:.4f})")
        if k == steps - 1:
            break
        following = {}
        predict(step, val_set, matrices, following)
        for held, other in ((folds[0], folds[1]), (folds[1], folds[0])):
            x_fold, y_fold = _stack(other, [matrices[id(e)] for e in other])
            fold_step, _ = fit_mlp(x_fold, y_fold, x_val, y_val, hidden, epochs, rng,
                                   batch_size)
            predict(fold_step, held, matrices, following)
        predictions = following
    return csa.Classifier(trained), len(data)


# ---------------------------------------------------------------------- measuring


def _parse_result(text):
    text = text.strip().upper()
    if text in ("0", "DRAW", "JIGO"):
        return 0.0
    sign = 1.0 if text.startswith("B+") else -1.0 if text.startswith("W+") else None
    if sign is None:
        raise ValueError(f"not a GTP result: {text!r}")
    return sign * float(text[2:])


def _sign(value):
    return (value > 1e-9) - (value < -1e-9)


def evaluate(records, classifier, ownership_evaluator=None, review=True):
    """Per scorer: boards, exactly right, right winner; and for CSA*'s last step how many wrong
    boards were flagged doubtful, with the tree search's review (csa.search_count) unless
    review is False. Returns a dict of rows."""
    rows = {}

    def tally(name, predicted, truth):
        row = rows.setdefault(name, {"boards": 0, "exact": 0, "winner": 0})
        row["boards"] += 1
        row["exact"] += abs(predicted - truth) < 1e-9
        row["winner"] += _sign(predicted) == _sign(truth)
        return abs(predicted - truth) < 1e-9

    flagged_wrong = wrong = flagged_right = counts_wrong = counts_right = 0
    search_wrong = search_right = 0
    hard = []
    for e in examples(records):
        truth = e.record["score"]
        komi = e.record["komi"]
        step_predictions = csa.predict_steps(e.features, classifier)
        for k, predictions in enumerate(step_predictions):
            dead = csa.dead_blocks_from(e.features, predictions)
            stones = [s for b in dead for s in e.features.blocks[b].stones]
            flood = counting.score_by_flood_fill(e.board, komi, stones)
            name = "CSA* direct" if k == 0 else f"CSA* step {k + 1}"
            right = tally(name, flood, truth)
            if k == len(step_predictions) - 1:
                result = csa.CsaResult(e.features, step_predictions, dead, flood,
                                       counting.score_by_distance(e.board, komi, stones),
                                       csa.search_count(e.board, komi) if review else None,
                                       classifier.doubt_rule)
                doubtful = result.doubtful
                if not right:
                    wrong += 1
                    flagged_wrong += doubtful
                    counts_wrong += result.counts_differ
                    search_wrong += result.search_disagrees
                    hard.append((e.record.get("index"), truth, flood, doubtful))
                else:
                    flagged_right += doubtful
                    counts_right += result.counts_differ
                    search_right += result.search_disagrees
        tally("GNU Go 3.8 final_score", _parse_result(e.record["gnugo_score"]), truth)
        if ownership_evaluator is not None:
            from engine.rules.game import GameState, Rules
            from engine.scoring import deadstones
            state = GameState.from_board(e.board, rules=Rules(komi=komi))
            dead = deadstones.assess_by_ownership(state, ownership_evaluator).dead
            tally("network ownership (replaced)", deadstones.score(state, dead), truth)
    return {"rows": rows, "wrong": wrong, "flagged_wrong": flagged_wrong,
            "flagged_right": flagged_right, "counts_wrong": counts_wrong,
            "counts_right": counts_right, "search_wrong": search_wrong,
            "search_right": search_right, "hard": hard}


def split_by_second_play_out(records, others):
    """(agreeing, differing, missing): the records whose labels a second play-out of the same
    game (a file `scoredata relabel` wrote from theirs) gives too, those it labels otherwise,
    and those it did not play out. On a board whose labels change with the play-out, a count
    cannot be right under both, so the share right on the agreeing boards is what a scorer
    can be held to."""
    second = {(r["seed"], r["size"], r["index"]): r for r in others if not r.get("abandoned")}
    agreeing, differing, missing = [], [], []
    for record in records:
        twin = second.get((record["seed"], record["size"], record["index"]))
        if twin is None:
            missing.append(record)
            continue
        if twin["moves"] != record["moves"]:
            raise ValueError(f"game {record['index']} of seed {record['seed']} is another game "
                             f"in the second file: not a relabelled copy of the same games")
        (agreeing if twin["labels"] == record["labels"] else differing).append(record)
    return agreeing, differing, missing
