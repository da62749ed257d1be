"""How kosumi-train trains each value-net architecture, one `TrainingRecipe` each: the settings a
new run of it starts from, the settings it refuses, its new net, its self-play game, the targets
of a game's end, and its replay of a recent game (NeuroGo's procedure). `RECIPES` lists them by the
names of engine/nets/architectures.py, which says how each net is saved, loaded and played.

Who asks: settings.py (TrainSettings' checks and new_network()), learning.py (the game and its
targets), trainer.py (the replay), train.py (--arch and a new run's defaults). Adding an
architecture to train: one recipe here.
"""
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from engine.nets import network as isn
from engine.nets import softseg
from engine.nets import unitnet
from engine.nets import weights as weight_files
from engine.nets.architectures import ISN, SOFTSEG, UNITGRAPH, NetArchitecture
from engine.rules.board import BLACK
from engine.training import td
from engine.training.selfplay import play_game, play_softseg_game, play_unitgraph_game

SOFTSEG_LEARNING_RATE = 3e-4        # NeuroGo's rate (Enzenberger 2003, section 4.1)
UNITGRAPH_LEARNING_RATE = 1e-3      # the 1996 paper gives none. 300 9x9 games at 3e-4, 1e-3,
                                    # 3e-3, 1e-2 predicted held-out game ends with cross-entropy
                                    # 0.382, 0.353, 0.334, 0.351 (1e-4: 0.387 after 600 games;
                                    # docs/notebook/unitgraph.md): the fastest rate short of
                                    # where the curve turns noisy, for a long run
UNITGRAPH_RECENT_GAMES = 1          # the 1996 paper trains the game just played (NeuroGo 3: 10)


@dataclass(frozen=True)
class TrainingRecipe:
    architecture: NetArchitecture
    check: Callable                 # (settings) -> None, ValueError for what cannot work
    new_network: Callable           # (settings) -> a fresh net, seeded by settings.seed
    play_game: Callable             # (network, SelfPlayConfig, rng) -> selfplay.GameRecord
    final_targets: Callable         # (final board, settings) -> (targets, mask), real-Black frame
    replay: Callable                # (network, TrainingGame, rate, settings, trainable): one
                                    # recent game by NeuroGo's TD(0) backwards, yielding (loss,
                                    # entries) of its steps as they are made
    defaults: dict = field(default_factory=dict)   # a new run's settings where the command line
                                                   # gives none (TrainSettings' otherwise)
    observed: Optional[Callable] = None            # (settings) -> whether a game's observed
                                                   # signal is kept (None: always)

    @property
    def name(self):
        return self.architecture.name

    def default(self, name, settings_defaults):
        """A new run's setting `name` when the command line leaves it out."""
        return self.defaults.get(name, getattr(settings_defaults, name))


def recipe_of(settings):
    return RECIPES[settings.arch]


# ---------------------------------------------------------------------------------------------
# Blair's Internal Symmetry Network: Blair's procedure by default, or NeuroGo's position by position

def _isn_check(settings):
    if settings.feature_set not in isn.FEATURE_SETS:
        hint = " (raw is --arch softseg's)" if settings.feature_set in softseg.FEATURE_SETS else ""
        raise ValueError(f"feature set must be one of {sorted(isn.FEATURE_SETS)}, "
                         f"not {settings.feature_set!r}{hint}")


def hidden_counts(settings):
    return dict(zip("TSDCF", settings.hidden))


def _isn_network(settings):
    return weight_files.new_network(settings.seed, hidden_counts(settings),
                                    feature_set=settings.feature_set, scale=settings.init_scale,
                                    rich_signal=settings.rich_signal)


def _isn_final_targets(board, settings):
    """Table IV's seven per point, followed with the rich signal by the rich outputs'
    (network.rich_targets)."""
    targets, mask = isn.final_targets(board, settings.capture_value, BLACK)
    if not settings.rich_signal:
        return targets, mask
    rich, rich_mask = isn.rich_targets(board, BLACK)
    return np.concatenate([targets, rich], axis=1), np.concatenate([mask, rich_mask], axis=1)


def _isn_replay(network, game, rate, settings, trainable):
    """Backward from the game's end, a step after each trained position towards the following
    position's outputs (the final targets at the end); only the trainable parameters move."""
    following = game.final_targets           # real-Black frame
    following_mask = game.final_mask
    for t in range(len(game.inputs) - 1, -1, -1):
        black = game.black_to_move[t]
        if game.trained[t]:
            target = following if black else td.swap_frame(following)
            mask = following_mask if black else td.swap_frame_mask(following_mask)
            grad = np.zeros(network.num_params)
            loss = network.loss_and_gradient(game.inputs[t], target, mask, grad)
            params = network.get_params()
            params[trainable] -= rate * grad[trainable]
            network.set_params(params)
            yield loss, int(mask.sum())
        outputs = network.forward(game.inputs[t])
        following = outputs if black else td.swap_frame(outputs)


ISN_RECIPE = TrainingRecipe(ISN, _isn_check, _isn_network, play_game, _isn_final_targets,
                            _isn_replay)


# ---------------------------------------------------------------------------------------------
# NeuroGo 3's soft-segmentation network: NeuroGo's procedure with the rich signal

def _softseg_check(settings):
    if settings.procedure != "neurogo":
        raise ValueError("--arch softseg trains by NeuroGo's procedure: --procedure neurogo")
    if settings.shortcut_games:
        raise ValueError("--arch softseg has no shortcut phase: --shortcut-games 0")
    if settings.feature_set not in softseg.FEATURE_SETS:
        raise ValueError(f"--arch softseg takes the input sets {softseg.FEATURE_SETS}, "
                         f"not {settings.feature_set!r}")
    if not settings.rich_signal:
        raise ValueError("--arch softseg is trained by the rich signal (rich_signal true)")
    if len(settings.softseg_hidden) != 2 or not 1 <= settings.softseg_hidden[0] <= 64 or \
            not 0 <= settings.softseg_hidden[1] <= 64 or not 1 <= settings.softseg_intervals <= 64:
        raise ValueError(f"softseg sizes out of range: hidden {settings.softseg_hidden}, "
                         f"intervals {settings.softseg_intervals}")


def _softseg_network(settings):
    return weight_files.new_softseg_network(settings.seed, settings.feature_set,
                                            *settings.softseg_hidden, settings.softseg_intervals,
                                            scale=settings.init_scale)


def _softseg_final_targets(board, settings):
    """The final signal of section 2.1 (softseg.rich_signal)."""
    return softseg.rich_signal(board, BLACK, final=True)


def _softseg_replay(network, game, rate, settings, trainable):
    """SoftSegNetwork.train_game(): the signal observed at the next position is its target where
    present, the event ending that unit's prediction (section 2.1); the final signal at the end;
    the update made in place, and a trained position's prediction, the target of the one before
    it, the forward pass its own step was computed from (one pass fewer, differing from the
    updated net's by one step of 3e-4)."""
    yield network.train_game(game.inputs, game.black_to_move, game.trained, game.observed,
                             game.final_targets, game.final_mask, rate)


SOFTSEG_RECIPE = TrainingRecipe(
    SOFTSEG, _softseg_check, _softseg_network, play_softseg_game, _softseg_final_targets,
    _softseg_replay,
    defaults={"procedure": "neurogo", "learning_rate": SOFTSEG_LEARNING_RATE,
              "weight_decay": 1.0, "shortcut_games": 0, "feature_set": "neurogo",
              "rich_signal": True})


# ---------------------------------------------------------------------------------------------
# NeuroGo 1996's network over units: TD(0) played backwards, the game replayed from its moves

def _unitgraph_check(settings):
    if settings.procedure != "neurogo":
        raise ValueError("--arch unitgraph trains by TD(0) played backwards: "
                         "--procedure neurogo")
    if settings.shortcut_games:
        raise ValueError("--arch unitgraph has no shortcut phase: --shortcut-games 0")
    if settings.feature_set not in unitnet.FEATURE_SETS:
        raise ValueError(f"--arch unitgraph takes the input sets "
                         f"{sorted(unitnet.FEATURE_SETS)}, not {settings.feature_set!r}")
    if not 1 <= settings.unitgraph_hidden <= unitnet.MAX_HIDDEN_UNITS or \
            not 1 <= settings.unitgraph_distance <= unitnet.MAX_DISTANCE:
        raise ValueError(f"unitgraph sizes out of range: hidden {settings.unitgraph_hidden}, "
                         f"distance {settings.unitgraph_distance}")


def _unitgraph_network(settings):
    return weight_files.new_unitgraph_network(settings.seed, settings.feature_set,
                                              settings.unitgraph_hidden,
                                              settings.unitgraph_distance,
                                              scale=settings.init_scale)


def _unitgraph_final_targets(board, settings):
    """The evaluation column of section 2.1's final signal alone, per loc (a point alive for
    Black 1, for White 0, else its area owner)."""
    targets, mask = softseg.rich_signal(board, BLACK, final=True)
    return (np.ascontiguousarray(targets[:, softseg.OUTPUT_EVAL]),
            np.ascontiguousarray(mask[:, softseg.OUTPUT_EVAL]))


def _unitgraph_replay(network, game, rate, settings, trainable):
    """UnitGraphNetwork.train_game(): the game replayed from its moves."""
    yield network.train_game(game.inputs, game.black_to_move, game.trained, game.observed,
                             game.final_targets, game.final_mask, rate, settings.size)


UNITGRAPH_RECIPE = TrainingRecipe(
    UNITGRAPH, _unitgraph_check, _unitgraph_network, play_unitgraph_game,
    _unitgraph_final_targets, _unitgraph_replay,
    defaults={"procedure": "neurogo", "learning_rate": UNITGRAPH_LEARNING_RATE,
              "weight_decay": 1.0, "shortcut_games": 0, "recent_games": UNITGRAPH_RECENT_GAMES,
              "feature_set": unitnet.DEFAULT_FEATURE_SET, "init_scale": unitnet.DEFAULT_INIT_SCALE},
    observed=lambda settings: settings.rich_signal)   # the live points, with the rich signal


RECIPES = {recipe.name: recipe for recipe in (ISN_RECIPE, SOFTSEG_RECIPE, UNITGRAPH_RECIPE)}
