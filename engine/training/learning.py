"""What the learner takes from one self-play game: `TrainingGame` (plain arrays, so that it
crosses process borders), its final targets, and for Blair's procedure the game's gradient.

Reading order: `play_training_game()` plays a game (engine/training/selfplay.py) and turns it
into a `TrainingGame`; `game_gradient()` is Blair's learning from it: the gradient of one game
against its TD(lambda) targets (engine/training/td.py), summed over points, outputs and positions.
`final_position_error()` measures a net on the final positions of games it has not trained on.
"""
import dataclasses
import time

import numpy as np

from engine.nets import network as isn
from engine.rules.board import BLACK, WHITE, opponent
from engine.training import td
from engine.training.recipes import recipe_of

@dataclasses.dataclass
class TrainingGame:
    """What learning needs from one self-play game (plain arrays: it crosses process borders)."""
    inputs: np.ndarray            # (T, num_locs) int32, (T, num_locs, max_active) if multi-hot
    black_to_move: np.ndarray     # (T,) bool
    trained: np.ndarray           # (T,) bool
    final_targets: np.ndarray     # (num_locs, num_outputs), real-Black frame: Table IV's seven,
                                  # then with the rich signal the final board's rich_targets()
    final_mask: np.ndarray        # (num_locs, num_outputs) bool
    summary: dict                 # length, result, score, capped, superko rejections, seconds
    observed: np.ndarray = None   # softseg: (T, num_locs, 21) int8, the signal present on the
                                  # board at each position (real-Black frame, -1 where none);
                                  # unitgraph with the rich signal: (T, num_locs), live points
    # unitgraph: inputs are the moves (T, 2) int32 (colour, loc), and final_targets / final_mask
    # are per loc (num_locs,): the final board's ownership (its network rebuilds each position)

    @classmethod
    def from_record(cls, record, settings, seconds):
        targets, mask = final_targets_of(record.final_board, settings)
        trained = ~record.explored if settings.procedure == "neurogo" else np.ones(record.length, bool)
        if record.capped and not settings.train_capped:
            trained = np.zeros(record.length, dtype=bool)
        summary = {"length": record.length, "result": record.result, "score": record.score,
                   "capped": record.capped, "superko_rejections": record.superko_rejections,
                   "explored": int(record.explored.sum()), "seconds": round(seconds, 4)}
        observed = record.extra.get("observed")
        keeps = recipe_of(settings).observed
        if keeps is not None and not keeps(settings):
            observed = None
        return cls(record.inputs, record.black_to_move, trained, targets, mask, summary, observed)


def final_targets_of(board, settings):
    """The TD targets and mask of a game's final board in the real-Black frame, as the run's
    architecture takes them (engine/training/recipes.py): the ISN's Table IV per point, with the
    rich signal's outputs after them; softseg's final signal of section 2.1; unitgraph's
    evaluation column of it, per loc."""
    return recipe_of(settings).final_targets(board, settings)


def game_gradient(network, game, lam, outputs=None):
    """(gradient, loss, entries) of one game under TD(lambda): the summed cross-entropy gradient of
    every trained position against its lambda-return targets. outputs: the outputs the game was
    played with, (T, num_locs, num_outputs) (recomputed from the inputs when None)."""
    grad = np.zeros(network.num_params)
    if not game.trained.any():
        return grad, 0.0, 0
    if outputs is None:
        outputs = np.array([network.forward(x) for x in game.inputs])
    targets, mask = td.lambda_targets(outputs, game.black_to_move, game.final_targets,
                                      game.final_mask, lam, game.trained)
    loss = 0.0
    for t in np.flatnonzero(game.trained):
        loss += network.loss_and_gradient(game.inputs[t], targets[t], mask[t], grad)
    return grad, loss, int(mask.sum())


def play_training_game(network, settings, phase, rng):
    """One self-play game and, for Blair's procedure, its gradient: (TrainingGame, gradient or
    None, loss, entries)."""
    start = time.perf_counter()
    record = recipe_of(settings).play_game(network, settings.selfplay_config(phase), rng)
    game = TrainingGame.from_record(record, settings, time.perf_counter() - start)
    if settings.procedure == "neurogo":
        return game, None, 0.0, 0
    grad, loss, entries = game_gradient(network, game, settings.lam, record.outputs)
    return game, grad, loss, entries


def final_position_error(network, positions):
    """Mean squared error of the territory outputs at final positions against their Table IV
    targets: how well the net predicts game ends it has not trained on (the rich outputs of a
    rich-signal net are not counted: the value comes from the seven). positions: (inputs,
    black_to_move, targets, mask) with targets and mask (num_locs, 7) in the real-Black frame
    (final_position())."""
    errors, count = 0.0, 0
    for inputs, black_to_move, targets, mask in positions:
        outputs = network.forward(inputs)[:, :isn.N_OUTPUTS]
        if not black_to_move:
            targets, mask = td.swap_frame(targets), td.swap_frame_mask(mask)
        errors += float(((outputs - targets)[mask] ** 2).sum())
        count += int(mask.sum())
    return errors / max(count, 1)


def final_position(network, record, capture_value):
    """A finished game's final position for final_position_error(): its inputs in network's
    feature set (the side to move next as Black, the recurrence of the game's last evaluation), whether Black is to
    move, and its Table IV targets and mask in the real-Black frame."""
    last = record.length - 1
    last_colour = BLACK if record.black_to_move[last] else WHITE
    weights = isn.liberty_weights(record.outputs[last], last_colour)
    to_move = opponent(last_colour)
    targets, mask = isn.final_targets(record.final_board, capture_value, BLACK)
    return network.encode(record.final_board, to_move, weights), to_move == BLACK, targets, mask
