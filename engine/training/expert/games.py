"""One self-play game of the PUCT search over a judging net (engine/search/puct.pyx), with what
the learner needs of every position: the search's visits (the policy's target), its value (for
TD(lambda)), and the game's end (result, Black's margin and the final owner of every point).

The exploration that keeps games diverse, as AlphaZero and KataGo have it:
- root noise: at every full search the root's priors are mixed with Dirichlet noise;
- the first `sampled_moves` moves drawn in proportion to the visits, later ones the most visited;
- playout-cap randomisation (KataGo): a share `full_share` of the moves get a full search of
  `visits`, the others a cheap one of `cheap_visits` without noise; only full searches are policy
  targets (a cheap search's visits say little more than the prior);
- resignation when the side to move's chance stays under `resign_below` for `resign_after` of its
  moves, but in a share `no_resign_share` of the games, played out to check how often a
  resignation would have been wrong.

Two passes end the game, counted as the board stands (Tromp-Taylor, as the search counts it: it
captures dead stones before it passes); so does `max_moves`.

Reading order: SelfPlaySettings, then play_game().
"""
import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from engine.nets.policy_inputs import PositionEncoder
from engine.nets.predictor import position_records
from engine.nets.winograd import PRECISIONS
from engine.play.search_player import judging_function
from engine.rules.board import BLACK, WHITE
from engine.rules.game import GameState, Rules, area_score
from engine.search.puct import PuctSearch
from engine.training.gametargets import owners
from engine.training.policydata import move_index

SEARCH_CACHE = 50_000      # judged positions a player remembers (a kept tree asks again)


def described(text):
    """A settings field's metadata: its help (the command line's option says it)."""
    return {"help": text}


@dataclass
class SelfPlaySettings:
    """How a self-play game is searched and explored (module docstring)."""
    visits: int = field(default=200, metadata=described("visits of a full search"))
    cheap_visits: int = field(default=40, metadata=described(
        "visits of a cheap search (playout-cap randomisation); 0: every move a full search"))
    full_share: float = field(default=0.25, metadata=described("the share of moves searched in full"))
    noise_alpha: float = field(default=0.0, metadata=described(
        "the root noise's Dirichlet alpha; 0: 10 / the board's points (AlphaZero's 0.03 on 19x19 "
        "is about 10 / 361)"))
    noise_fraction: float = field(default=0.25, metadata=described("the noise's share of a root prior"))
    sampled_moves: int = field(default=-1, metadata=described(
        "the first moves drawn in proportion to the visits; -1: a tenth of the board's points"))
    resign_below: float = field(default=0.05, metadata=described(
        "resign when the chance to win stays under this (0: never)"))
    resign_after: int = field(default=3, metadata=described("... for this many of the side's moves"))
    no_resign_share: float = field(default=0.1, metadata=described(
        "the share of games played out without resigning, to check the resignations"))
    max_moves: int = field(default=0, metadata=described("moves before the board is counted as it "
                                                     "stands; 0: three times the points"))
    komi: float = field(default=7.0, metadata=described("komi"))
    precision: str = field(default="bf16", metadata=described(
        "the net's products in play: bf16 (about twice as fast on one core) or fp32"))
    playout_weight: float = field(default=0.0, metadata=described(
        "the playouts' share of a new node's chance to win (the play search's "
        "--puct-playout-weight; 0: the net alone, faster)"))

    def __post_init__(self):
        for name in ("visits",):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        for name in ("cheap_visits", "resign_after", "max_moves"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be at least 0")
        for name in ("full_share", "noise_fraction", "resign_below", "no_resign_share",
                     "playout_weight"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} {getattr(self, name)}: must be in [0, 1]")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision {self.precision!r}: choose from {', '.join(PRECISIONS)}")
        if self.noise_alpha < 0 or self.sampled_moves < -1 or not math.isfinite(self.komi):
            raise ValueError("noise_alpha must be at least 0, sampled_moves -1 or more, komi finite")

    def alpha(self, size):
        return self.noise_alpha or 10.0 / (size * size)

    def sampled(self, size):
        return self.sampled_moves if self.sampled_moves >= 0 else size * size // 10

    def move_cap(self, size):
        return self.max_moves or 3 * size * size


def settings_from(mapping):
    """SelfPlaySettings of a dict, refusing names it does not have."""
    names = {spec.name for spec in dataclasses.fields(SelfPlaySettings)}
    unknown = set(mapping) - names
    if unknown:
        raise ValueError(f"unknown self-play settings {sorted(unknown)}")
    return SelfPlaySettings(**mapping)


@dataclass
class SelfPlayGame:
    """A finished self-play game, position by position (n positions) and its end."""
    size: int
    komi: float
    records: list            # n uint8 (RECORD_PLANES, S*S): each position before its move
    moves: list              # n move indices (row * S + col, S*S a pass): the move played
    colours: list            # n colours to move
    visits: list             # n float32 (S*S + 1,) visit shares of a full search, or None
    values: list             # n: the search's chance for Black at each position
    winner: int              # +1 Black, -1 White, 0 a draw
    margin: float            # Black's margin by the count; NaN after a resignation
    ownership: np.ndarray    # int8 (S*S,): the final owner of every point (zeros: resigned)
    resigned: bool
    would_have_resigned: int = 0   # a no-resign game: the colour that would have resigned first

    @property
    def owned(self):
        return not self.resigned


def _visit_shares(search, size):
    """float32 (S*S + 1,): the root children's share of the visits, by move index."""
    shares = np.zeros(size * size + 1, np.float32)
    children = search.root_children()
    total = sum(child["visits"] for child in children)
    for child in children:
        shares[move_index(child["move"], size)] = child["visits"] / max(total, 1)
    return shares


def _choose(search, rng, sample):
    """The move to play: drawn in proportion to the visits (sample), else the most visited."""
    children = [child for child in search.root_children() if child["visits"] > 0]
    if sample and len(children) > 1:
        weights = np.array([child["visits"] for child in children], float)
        return children[int(rng.choice(len(children), p=weights / weights.sum()))]["move"]
    return children[0]["move"]


class GameSearch:
    """One PUCT tree over a judging net's evaluator, kept from move to move of one game."""

    def __init__(self, evaluator, size, komi, settings, seed):
        self.evaluator, self.settings = evaluator, settings
        # the visits of one search, twice over (a kept subtree's), each with every move's child
        nodes = 2 * max(settings.visits, settings.cheap_visits) * (size * size + 1)
        self.search = PuctSearch(size, komi, max_nodes=nodes,
                                 playout_weight=settings.playout_weight, seed=seed)
        self.played = None           # the game's moves when the tree was last set

    def run(self, state, visits, noise=None):
        """Search state (the tree kept from the last call when the game went on from it) for
        visits more visits; noise: (Dirichlet values generator, fraction) for the root."""
        search = self.search
        moves = [loc for _, loc in state.history]
        seen = state.seen_positions()
        passes = state.consecutive_passes
        if self.played is None or moves[:len(self.played)] != self.played or \
                not search.advance(moves[len(self.played):], state.board, seen, passes):
            search.set_root(state.board, state.to_move, seen, moves[-1] if moves else None, passes)
        self.played = moves
        search.set_evaluation_function(judging_function(state, self.evaluator))
        if noise is not None:
            if not search.root_child_count:
                search.run(1, stop_early=False)
            draw, fraction = noise
            search.mix_root_priors(draw(search.root_child_count), fraction)
        done = search.root_visits
        search.run(max(visits - done, 1), stop_early=False)
        return search


def play_game(evaluators, size, settings, rng, record=True, stop=lambda: False):
    """A SelfPlayGame of the PUCT search over evaluators (one JudgeEvaluator for both sides, or
    a pair (Black's, White's) for a match between two nets), or None when stop() says so before
    its end. record: keep the positions' records (a gate's games need only the result)."""
    black, white = evaluators if isinstance(evaluators, (tuple, list)) else (evaluators, evaluators)
    komi = settings.komi
    state = GameState(size, Rules(komi=komi))
    searches = {BLACK: GameSearch(black, size, komi, settings, int(rng.integers(1 << 62))),
                WHITE: GameSearch(white, size, komi, settings, int(rng.integers(1 << 62)))}
    if black is white:
        searches[WHITE] = searches[BLACK]
    encoder = PositionEncoder()
    alpha, cap, sampled = settings.alpha(size), settings.move_cap(size), settings.sampled(size)
    may_resign = settings.resign_below > 0 and rng.random() >= settings.no_resign_share
    hopeless = {BLACK: 0, WHITE: 0}
    records, moves, colours, visits, values = [], [], [], [], []
    would_have_resigned, resigned_by = 0, None
    while not state.is_over() and len(moves) < cap:
        if stop():
            return None
        colour = state.to_move
        full = settings.cheap_visits == 0 or rng.random() < settings.full_share
        noise = (lambda count: rng.dirichlet(np.full(count, alpha)), settings.noise_fraction) \
            if full and settings.noise_fraction > 0 else None
        search = searches[colour].run(state, settings.visits if full else settings.cheap_visits,
                                      noise)
        chance = search.root_winrate
        hopeless[colour] = hopeless[colour] + 1 if chance < settings.resign_below else 0
        if hopeless[colour] >= max(settings.resign_after, 1) and settings.resign_below > 0:
            if may_resign:
                resigned_by = colour
                break
            would_have_resigned = would_have_resigned or (1 if colour == BLACK else -1)
        move = _choose(search, rng, full and len(moves) < sampled)
        if record:
            records.append(position_records(encoder, state, colour, 0)[0])
        moves.append(move_index(move, size))
        colours.append(colour)
        visits.append(_visit_shares(search, size) if full else None)
        values.append(chance if colour == BLACK else 1.0 - chance)
        state.play(move, colour)
    if resigned_by is not None:
        winner = -1 if resigned_by == BLACK else 1
        margin, ownership = math.nan, np.zeros(size * size, np.int8)
    else:
        margin = area_score(state.board, komi)
        winner = int(np.sign(margin))
        ownership = owners(state.board)
    return SelfPlayGame(size, komi, records, moves, colours, visits, values, winner, margin,
                        ownership, resigned_by is not None, would_have_resigned)
