"""A training run's settings (`TrainSettings`: what defines how a run learns, kept in its
settings.json and in the metadata of every weight file it writes), and the new net they describe
(`new_network()`). The procedures they choose between are described in engine/training/trainer.py.

Inputs and outputs (new runs only; stored in the settings and so in every weight file):
--feature-set picks the net's inputs (isn14 one-hot, or the multi-hot neurogo / neurogo_lite of
engine/nets/features.pyx, whose positions are stored as (num_locs, max_active) active inputs).
--rich-signal adds NeuroGo 3's extra outputs (eyes, connections, live points), trained by the same
TD targets as the territory outputs with the final board's network.rich_targets() as their
outcome; values, moves and the recurrence still come from the seven territory outputs. With
--arch unitgraph (one output per unit) it makes the live points of each position (NeuroGo 3,
section 2.1) the targets of the position before, where present, instead of its prediction.
"""
import dataclasses
import math

import numpy as np

from engine.nets import softseg
from engine.nets import unitnet
from engine.nets import weights as weight_files
from engine.training.recipes import RECIPES, recipe_of
from engine.training.selfplay import PROCEDURES, SelfPlayConfig

ARCHITECTURES = tuple(RECIPES)      # Blair's ISN; NeuroGo 3's soft segmentation; NeuroGo 1996's
                                    # network over units (engine/training/recipes.py)


@dataclasses.dataclass(frozen=True)
class TrainSettings:
    """Everything that defines a run's learning; stored in settings.json and weight metadata."""
    size: int = 9
    procedure: str = "blair"
    lam: float = None                # TD lambda; None: 0.9 (blair) or 0 (neurogo)
    learning_rate: float = 5e-6      # Blair's rate, on the gradient summed over points
    weight_decay: float = 0.99999    # Blair's per-game decay factor
    beta: float = 4.0
    gibbs_fraction: float = 0.15
    gibbs_temperature: float = 4.0
    capture_value: float = 0.4
    stone_value: float = 0.4
    move_cap_factor: float = 3.0
    pass_rule: str = "forced"
    shortcut_games: int = 1000       # preliminary phase: shortcut weights only
    recent_games: int = 10           # NeuroGo: games retrained after each game
    train_capped: bool = False       # capped games have no real end: not trained by default
    hidden: tuple = (4, 2, 2, 0, 2)  # T, S, D, C, F hidden units (the paper's 714 parameters)
    feature_set: str = "isn14"       # the net's inputs (engine/nets/features.pyx)
    rich_signal: bool = False        # NeuroGo's extra outputs, trained by TD beside the seven
    init_scale: float = weight_files.DEFAULT_INIT_SCALE
    seed: int = 0
    komi: float = 7.0                # only for the logged results
    arch: str = "isn"                # "softseg": NeuroGo 3's network (hidden and rich_signal are
                                     # the ISN's; softseg always has the rich signal's outputs)
    softseg_hidden: tuple = (softseg.DEFAULT_HIDDEN1, softseg.DEFAULT_HIDDEN2)
    softseg_intervals: int = softseg.DEFAULT_INTERVALS
    unitgraph_hidden: int = unitnet.DEFAULT_HIDDEN          # hidden units per unit
    unitgraph_distance: int = unitnet.DEFAULT_MAX_DISTANCE  # the largest distance relation Dn

    def __post_init__(self):
        object.__setattr__(self, "softseg_hidden", tuple(int(h) for h in self.softseg_hidden))
        if self.arch not in ARCHITECTURES:
            raise ValueError(f"arch must be one of {ARCHITECTURES}, not {self.arch!r}")
        recipe_of(self).check(self)          # what the architecture cannot train with
        if self.lam is None:
            object.__setattr__(self, "lam", 0.9 if self.procedure == "blair" else 0.0)
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        if self.procedure not in PROCEDURES:
            raise ValueError(f"procedure must be one of {PROCEDURES}, not {self.procedure!r}")
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"lambda must be in [0, 1], not {self.lam}")
        if self.procedure == "neurogo" and self.lam != 0.0:
            raise ValueError("the neurogo procedure is TD(0): lambda must be 0")
        if not self.learning_rate > 0.0 or not math.isfinite(self.learning_rate):
            raise ValueError(f"learning rate must be a positive number, not {self.learning_rate}")
        if not 0.0 < self.weight_decay <= 1.0:
            raise ValueError(f"weight decay factor must be in (0, 1], not {self.weight_decay}")
        if self.shortcut_games < 0 or self.recent_games < 1:
            raise ValueError("shortcut_games must be >= 0 and recent_games >= 1")
        if len(self.hidden) != 5 or min(self.hidden) < 0 or sum(self.hidden) == 0:
            raise ValueError(f"hidden must be five counts T,S,D,C,F >= 0, not {self.hidden}")
        if not isinstance(self.rich_signal, bool):
            raise ValueError(f"rich_signal must be true or false, not {self.rich_signal!r}")
        self.selfplay_config("all")          # validates the self-play settings

    def selfplay_config(self, phase):
        return SelfPlayConfig(
            size=self.size, procedure=self.procedure, beta=self.beta,
            gibbs_fraction=self.gibbs_fraction, gibbs_temperature=self.gibbs_temperature,
            capture_value=self.capture_value, stone_value=self.stone_value,
            move_cap_factor=self.move_cap_factor, komi=self.komi,
            pass_rule="forced" if phase == "shortcut" else self.pass_rule)

    def to_json(self):
        values = dataclasses.asdict(self)
        values["hidden"] = list(self.hidden)
        values["softseg_hidden"] = list(self.softseg_hidden)
        return values

    @classmethod
    def from_json(cls, values):
        """Settings from settings.json or weight metadata; runs from before feature_set and
        rich_signal existed get their defaults (isn14, no rich signal), which they used."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown training settings {sorted(unknown)}")
        return cls(**values)


def new_network(settings):
    """The fresh net the settings describe (its architecture's recipe), seeded by settings.seed."""
    return recipe_of(settings).new_network(settings)


def shortcut_mask(network):
    """Boolean mask of the input->output shortcut parameters (the preliminary phase's)."""
    mask = np.zeros(network.num_params, dtype=bool)
    if "shortcut" not in network.parameter_blocks():     # softseg: no shortcut phase
        return mask
    start, stop, _ = network.parameter_blocks()["shortcut"]
    mask[start:stop] = True
    return mask
