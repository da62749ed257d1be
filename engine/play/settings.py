"""The players' settings, each declared once: its default, its range and its help.

Reading order: `PlayerSettings` (every player: the 1-ply Boltzmann choice, the rules about
resigning and dead stones, the policy player) and `SearchSettings` (the tree search, for
`--search mcts` and for every search an analysis command runs). The players hold these objects
and read them at every move, so a value changed at run time (GTP `kosumi-set-param`) counts from
the next move on. Both command lines (`kosumi`, `kosumi analysis`) are generated from the fields
(engine/gtp/options.py), and the GTP parameter commands list and set them
(engine/gtp/params.py); both parse a value with `parse_value()`, so a range is checked in one
place.

A field's metadata: `help` (the option's and the parameter's text), its range (`minimum`,
`maximum` inclusive, `above` exclusive, `finite`, `choices`), `none` (the word for None where
None means something, as "auto" or "off"), `startup` (fixed once the engine is built: it decides
which nets are loaded, or how they are averaged), `cli` (False: a setting for tests and
benchmarks only), and `flag`/`off_flag`/`metavar` for the command line.
"""
import dataclasses
import math
import re
from dataclasses import dataclass, field
from typing import Optional

from engine.nets.judge import JUDGE_VALUES
from engine.nets.winograd import PRECISIONS
from engine.search.playout import PLAYOUT_TACTICS
from engine.search.puct import (DEFAULT_BATCH_SIZE, DEFAULT_EXPLORATION, DEFAULT_FPU_REDUCTION,
                                DEFAULT_SCORE_UTILITY, MAX_BATCH_SIZE)
from engine.search.tree import (DEFAULT_EXPAND_THRESHOLD, DEFAULT_MAX_NODES, DEFAULT_NET_PRIOR,
                                DEFAULT_RAVE_EQUIVALENCE, DEFAULT_VALUE_WEIGHT, LARGE_BOARD_LINES)

INTEGER = re.compile(r"[+-]?[0-9]+")
TRUE_WORDS, FALSE_WORDS = ("1", "true", "on", "yes"), ("0", "false", "off", "no")

# Defaults that other settings' help texts and the players' rules name.
DEFAULT_PLAYOUTS = 3000          # simulations per move when neither --playouts nor a time is given
RULES_OF_THUMB_LINES = 13        # boards from this many lines search without the net's prior and
                                 # with LARGE_BOARD_KNOWLEDGE_PRIOR games of rules of thumb
LARGE_BOARD_KNOWLEDGE_PRIOR = 60.0
DEFAULT_PUCT_PLAYOUT_WEIGHT = 0.5   # AlphaGo's; the judgement of held-out games measured best
                                    # near it (docs/notebook/puct.md)
SOFTSEG_PRIOR_THRESHOLD = 64     # visits before a node asks the soft-segmentation net: 1.7 times the
                                 # ISN's time a simulation at the ISN's 8 (docs/notebook/softseg.md)
THREADED_BATCH_SIZE = 8          # leaves a PUCT tree judges at once beside other threads' trees: on
                                 # two cores two trees with one leaf a batch made fewer visits than
                                 # one tree alone (docs/notebook/puct.md, speed)


def setting(default, help, *, kind=None, minimum=None, maximum=None, above=None, finite=True,
            choices=None, none=None, startup=False, cli=True, flag=None, off_flag=None,
            metavar=None):
    """A settings field (module docstring). kind: int, float, str or bool (default: the type of
    default, which must then not be None)."""
    kind = kind or type(default)
    if kind not in (int, float, str, bool):
        raise TypeError(f"a setting is an int, float, str or bool, not {kind}")
    return field(default=default, metadata=dict(
        help=help, kind=kind, minimum=minimum, maximum=maximum, above=above, finite=finite,
        choices=choices, none=none, startup=startup, cli=cli, flag=flag, off_flag=off_flag,
        metavar=metavar))


@dataclass
class PlayerSettings:
    """How every player chooses: the 1-ply player's temperature, resigning, dead stones, the
    policy player. Read by the 1-ply, search and policy players alike."""

    beta: float = setting(
        20.0, "1-ply: Boltzmann inverse temperature over move values in points (Blair's "
        "tournament setting; training uses 4); inf always plays the best move",
        minimum=0, finite=False)
    seed: Optional[int] = setting(
        None, "random seed; the same seed replays the same moves (1-ply; the search with one "
        "thread); the engine's log names a fresh one", kind=int, minimum=0, none="fresh",
        startup=True)
    resign_threshold: Optional[float] = setting(
        0.5, "1-ply: resign after 3 moves in a row whose best expected score is below "
        "-FRACTION x the board's points (the policy player resigns only on the count after a "
        "pass, as every player does); off: never", kind=float, above=0, maximum=1, none="off",
        flag="--resign-threshold", off_flag="--no-resign", metavar="FRACTION")
    capture_all_dead: bool = setting(
        False, "capture every dead opponent stone before passing: for servers that count the "
        "board as it stands (CGOS)")
    symmetries: Optional[int] = setting(
        None, "1-ply play: average the net's values over N of the board's 8 rotations and "
        "reflections, at N times the cost (auto: 8 for the judging and soft-segmentation nets, "
        "which tell directions apart; 1 for the ISN, symmetric already); short of time, fewer "
        "are used",
        kind=int, minimum=1, maximum=8, none="auto", startup=True, metavar="N")
    judge_value: str = setting(
        "win", "1-ply with a judging net: rank the moves by its chance to win read as the lead "
        "that gives it (win), or by its score lead (lead)", choices=JUDGE_VALUES,
        startup=True)
    judge_move_weight: float = setting(
        1.0, "1-ply with a judging net: the Boltzmann draw is over each move's value plus W "
        "points times the log of the net's move head's probability for it, so that the move "
        "head's choice weighs against the values; 0: the values alone", minimum=0, metavar="W")
    policy_temperature: float = setting(
        0.0, "--player policy: 0 plays the net's top move; T > 0 draws a move with probability "
        "proportional to p^(1/T)", minimum=0, metavar="T")
    policy_symmetries: Optional[int] = setting(
        None, "average the policy net over N of the board's 8 rotations and reflections, at N "
        "times the cost (auto: 8 for --player policy, whose one pass a move is cheap; 1 for the "
        "search's prior, which asks the net at every new node)", kind=int, minimum=1, maximum=8,
        none="auto", startup=True, metavar="N")
    policy_precision: str = setting(
        "fp32", "the policy and judging nets' products: fp32, or bf16: operands rounded to bfloat16 and sums "
        "in float32, nearly twice as fast where the processor has AVX-512 BF16 (elsewhere the "
        "same numbers, slower), for about 0.2 points of top-1 accuracy",
        choices=PRECISIONS, startup=True)


@dataclass
class SearchSettings:
    """The Monte-Carlo tree search (engine/play/search_player.py over engine/search/tree.pyx):
    its budget, threads, priors, playouts and tree."""

    playouts: Optional[int] = setting(
        None, f"simulations per move (auto: {DEFAULT_PLAYOUTS} unless --time-per-move is given, "
        "else as many as the time allows); with a seed and one thread a search repeats exactly",
        kind=int, minimum=1, none="auto", metavar="N")
    time_per_move: Optional[float] = setting(
        None, "seconds per move (the GTP clock, when set, may shorten it); none or inf: no "
        "limit but the clock's", kind=float, above=0, finite=False, none="none", metavar="S")
    threads: int = setting(
        1, "search threads: root-parallel trees, each with its own copy of the net, whose "
        "statistics are added", minimum=1, maximum=64, metavar="N")
    tree: str = setting(
        "auto", "the search: rave = Monte-Carlo tree search with RAVE and pattern playouts, the "
        "nets' values and moves as its prior (engine/search/tree.pyx); puct = PUCT over a judging "
        "net (--weights of kind judge): every new node judged once by the net, its moves the "
        "priors, its win rate and lead backed up, no playouts (engine/search/puct.pyx); auto: "
        "puct when --weights is a judging net, else rave", choices=("auto", "rave", "puct"),
        startup=True)
    puct_exploration: float = setting(
        DEFAULT_EXPLORATION, "puct: C in Q + C x P x sqrt(N) / (1 + n), on utilities from 0 to 1 "
        "(KataGo's 1.0 on its -1 to 1)", minimum=0, metavar="C")
    fpu_reduction: float = setting(
        DEFAULT_FPU_REDUCTION, "puct: an unvisited move's value is its parent's mean less "
        "REDUCTION x sqrt(the priors of the moves visited) (KataGo's first-play urgency)",
        minimum=0, metavar="REDUCTION")
    score_utility: float = setting(
        DEFAULT_SCORE_UTILITY, "puct: the lead's share of a position's utility beside the chance "
        "to win, as 1/2 + atan(lead / half the board's width) / pi: a won game's moves still "
        "told apart by their points", minimum=0, maximum=1, metavar="SHARE")
    puct_playout_weight: float = setting(
        DEFAULT_PUCT_PLAYOUT_WEIGHT, "puct: the share of a playout's result in each new node's "
        "chance to win beside the net's (AlphaGo's mix; --playout-tactics plays it): the "
        "playouts count what the first judging net misjudges late in a game; 0: the net alone",
        minimum=0, maximum=1, metavar="W")
    puct_playout_lead_weight: float = setting(
        DEFAULT_PUCT_PLAYOUT_WEIGHT, "puct: the share of that playout's margin in each new "
        "node's lead beside the net's (kosumi analysis: 0 unless given, the net's lead alone: "
        "one playout's margin swings by tens of points, which a review's points lost by each "
        "move shows at a few visits a move)",
        minimum=0, maximum=1, metavar="W")
    puct_batch: Optional[int] = setting(
        None, "puct: leaves the net judges in one batch (virtual losses keep the descents "
        f"apart); auto: {DEFAULT_BATCH_SIZE} with one thread, {THREADED_BATCH_SIZE} with more, "
        "so that the trees' Python, which takes turns on the interpreter's lock, runs once a "
        "batch and the threads keep the cores busy", kind=int, minimum=1,
        maximum=MAX_BATCH_SIZE, none="auto", metavar="N")
    net_symmetry: str = setting(
        "fixed", "puct: the board symmetry each new position is judged in: fixed, the board as "
        "it stands; random, one of the eight drawn from the position's hash (Leela Zero's and "
        "KataGo's random symmetry, which spreads the net's errors of orientation over the tree; "
        "reproducible at fixed visits)", choices=("fixed", "random"))
    search_prior: str = setting(
        "auto", "the tree's prior: the net's successor values (net) or none; auto: the net's "
        f"below {RULES_OF_THUMB_LINES} lines, none from there (the shipped nets learnt 9x9, and "
        "a net's call costs more playouts the larger the board)", choices=("auto", "net", "none"))
    prior_visits: float = setting(
        DEFAULT_NET_PRIOR, "games of equivalent experience the net's prior is worth",
        minimum=0, metavar="GAMES")
    prior_threshold: Optional[int] = setting(
        None, "visits a node needs before the net gives its children their prior (the root: at "
        f"once); auto: {SOFTSEG_PRIOR_THRESHOLD} for a soft-segmentation net, 8 for an ISN (ten "
        "times cheaper a call), 16 where a policy net's prior goes alone",
        kind=int, minimum=0, none="auto", metavar="N")
    prior_scale: float = setting(
        5.0, "points: a successor value v becomes the prior win rate 1 / (1 + exp(-v / SCALE)); "
        "at 5 a 5-point better move starts at 73%", above=0, metavar="SCALE")
    knowledge_prior: Optional[float] = setting(
        None, "games of equivalent experience for rules of thumb in the tree (captures, escapes, "
        "self-ataris, patterns, empty edges and, from "
        f"{LARGE_BOARD_LINES} lines, empty third and fourth lines; engine/search/tree.pyx); "
        f"auto: 0 below {RULES_OF_THUMB_LINES} lines, {LARGE_BOARD_KNOWLEDGE_PRIOR:g} from there",
        kind=float, minimum=0, none="auto", metavar="GAMES")
    policy_prior: str = setting(
        "on", "the policy net's probabilities in the tree's prior, on every board size (it learnt "
        "19x19 games and measures stronger on 9x9 too); off: no policy net is loaded for the search",
        choices=("on", "off"))
    policy_visits: float = setting(
        40.0, "games of equivalent experience (wins) the policy's top move gets in the tree; "
        "each move gets GAMES x sqrt(p / p_top)", minimum=0, metavar="GAMES")
    playout_tactics: str = setting(
        "mogo", "the playouts' tactics: mogo = MoGo's (escape from atari, capture, 3x3 "
        "patterns); fuego = those and Fuego's (moves at the liberties of two-liberty chains, the "
        "nakade of a three-point eye space, no lone stone put in atari for nothing); "
        "fuego-ladders = fuego and no escape into a ladder (Pachi's check: it reads ladders, "
        "the dearest); engine/search/playout.pyx", choices=PLAYOUT_TACTICS)
    last_good_reply: bool = setting(
        False, "the playouts also play the replies that won the tree's recent simulations and "
        "forget those that lost (LGRF-2 and LGRF-1, Baier & Drake 2010), after escapes and "
        "captures, before the patterns")
    value_weight: float = setting(
        DEFAULT_VALUE_WEIGHT, "share of the net's win rate in each simulation's result (0: "
        "playouts only)", minimum=0, maximum=1, metavar="W")
    expand_threshold: int = setting(
        DEFAULT_EXPAND_THRESHOLD, "visits before a leaf gets children", minimum=0, metavar="N")
    rave_equivalence: float = setting(
        DEFAULT_RAVE_EQUIVALENCE, "simulations at which a move's own and its RAVE statistics "
        "weigh the same (Pachi's 3000)", above=0, metavar="N")
    max_nodes: int = setting(
        DEFAULT_MAX_NODES, "node budget per tree; the search stops growing there", minimum=2,
        metavar="N")
    resign_threshold: Optional[float] = setting(
        0.05, "--search mcts: resign after 3 moves in a row whose best move wins fewer than "
        "FRACTION of its simulations; off: never", kind=float, above=0, maximum=1, none="off",
        flag="--resign-threshold", off_flag="--no-resign", metavar="FRACTION")
    ponder: bool = setting(
        False, "search on the opponent's time: after the engine's move, until the next command "
        "arrives, in the tree the next search keeps (KataGo's ponderingEnabled); off by "
        "default: GTP has no ponder command, and the opponent may share the cores")
    reuse_tree: bool = setting(
        True, "keep the subtree of the moves played since the last search", cli=False)
    patterns: bool = setting(
        True, "the playouts' 3x3 patterns (off: lighter playouts, for benchmarks)", cli=False)


def settings_fields(settings_class):
    return dataclasses.fields(settings_class)


def field_named(settings_class, name):
    """The field called name, or None."""
    return next((f for f in dataclasses.fields(settings_class) if f.name == name), None)


def parse_value(settings_field, text):
    """The value text gives the field, or ValueError saying what the field takes."""
    meta = settings_field.metadata
    kind, what = meta["kind"], settings_field.name.replace("_", " ")
    word = text.strip().lower()
    if meta["none"] is not None and word == meta["none"]:
        return None
    if kind is bool:
        if word in TRUE_WORDS or word in FALSE_WORDS:
            return word in TRUE_WORDS
        raise ValueError(f"{what} must be true or false (1 or 0), not {text!r}")
    if kind is str:
        if word in meta["choices"]:
            return word
        raise ValueError(f"{what} must be one of {', '.join(meta['choices'])}, not {text!r}")
    value = None
    if kind is int and INTEGER.fullmatch(word):
        value = int(word)
    elif kind is float:
        try:
            value = float(word)
        except ValueError:
            pass
    if value is None or (kind is float and (math.isnan(value) or
                                            (meta["finite"] and math.isinf(value)))):
        raise ValueError(f"{what} must be {describe_range(settings_field)}, not {text!r}")
    minimum, maximum, above = meta["minimum"], meta["maximum"], meta["above"]
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum) \
            or (above is not None and value <= above):
        raise ValueError(f"{what} must be {describe_range(settings_field)}, not {text!r}")
    return value


def describe_range(settings_field):
    """What the field takes, in words: `1..64`, `> 0 and <= 1`, `one of mogo, fuego`, ..."""
    meta = settings_field.metadata
    kind = meta["kind"]
    if kind is bool:
        rule = "true or false"
    elif kind is str:
        rule = "one of " + ", ".join(meta["choices"])
    else:
        noun = "an integer" if kind is int else "a number"
        minimum, maximum, above = meta["minimum"], meta["maximum"], meta["above"]
        if minimum is not None and maximum is not None:
            rule = f"{noun} {minimum:g}..{maximum:g}"
        elif above is not None:
            rule = f"{noun} > {above:g}" + (f" and <= {maximum:g}" if maximum is not None else "")
        elif minimum is not None:
            rule = f"{noun} >= {minimum:g}"
        elif maximum is not None:
            rule = f"{noun} <= {maximum:g}"
        else:
            rule = noun
        if kind is float and not meta["finite"]:
            rule += " (or inf)"
    if meta["none"] is not None:
        rule += f", or {meta['none']}"
    return rule


def format_value(settings_field, value):
    """The value as a parameter's text: what parse_value() reads back."""
    if value is None:
        return settings_field.metadata["none"]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format(value, ".12g")
    return str(value)


def with_changes(settings, changes):
    """A copy of settings with changes (name -> value) made, each checked against its field's
    range; TypeError for a name the settings do not have, ValueError for a value out of range.
    No changes: settings itself, which its holders then share (a change at run time reaches all)."""
    if not changes:
        return settings
    for name, value in changes.items():
        settings_field = field_named(type(settings), name)
        if settings_field is None:
            raise TypeError(f"{type(settings).__name__} has no setting {name!r}")
        check_value(settings_field, value)
    return dataclasses.replace(settings, **changes)


def check_value(settings_field, value):
    """ValueError unless value is one the field takes (as parse_value() would give it)."""
    if value is None and settings_field.metadata["none"] is not None:
        return
    kind = settings_field.metadata["kind"]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{settings_field.name.replace('_', ' ')} must be "
                         f"{describe_range(settings_field)}, not {value!r}")
    if kind is not bool:
        parse_value(settings_field, format_value(settings_field, value))


def split_changes(changes, *settings_classes):
    """changes (name -> value) shared out among the settings classes that declare each name, the
    first class first; TypeError for a name none declares."""
    shares = [{} for _ in settings_classes]
    for name, value in changes.items():
        for share, settings_class in zip(shares, settings_classes):
            if field_named(settings_class, name) is not None:
                share[name] = value
                break
        else:
            known = ", ".join(f.name for c in settings_classes for f in dataclasses.fields(c))
            raise TypeError(f"unknown setting {name!r}; the settings are {known}")
    return shares
