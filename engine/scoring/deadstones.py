"""Dead stones at the end of a game (final_status_list, final_score) and the score that follows.

Reading order: `assess()` gives every chain a status, `score()` counts a board with some stones
removed (and some in seki) under the game's rules, `count()` under any rule set (area, or
territory with prisoners, seki and teire, as the agreed counts of engine/training/agreedcounts.py
need), `format_score()` writes the GTP result.

`assess()` is CSA* (engine/scoring/csa.py, van der Werf et al.'s cascaded block classifier):
1. Benson (engine.rules.game.pass_alive): a pass-alive chain is alive; a chain standing inside the
   other colour's pass-alive safe region is dead. Both are certain and CSA* never overrides them.
2. Every other chain: CSA*'s probability of life after its last cascade step; below 0.5 dead.
The assessment carries CSA*'s doubtful flag (the flood-fill and distance counts differ: open
regions are still unsettled; some block's probability of life is far from certain; or, when
asked to review, a tree search from the board expects a count far from CSA*'s).
`assess_by_ownership()` is the scorer CSA* replaced (the network's predicted ownership, then a
board check), kept for comparison in the benchmarks:
- the mean predicted ownership of the chain's stones, seen from the chain's colour (+1 = its
  own). At least +DOUBT_MARGIN: alive; at most -DOUBT_MARGIN: dead.
- doubtful chains (in between) are read on the board: a chain with one or two liberties that
  is captured even if its owner moves first (engine.tactics.ladder.ladder_captured: ataris, ladders) is
  dead; otherwise the sign of its ownership decides (a tie keeps the stones).
Seki (both scorers): of the chains left alive and not pass-alive, two of opposite colours are in
seki when they share a liberty that neither side can fill without leaving itself in atari.
"""
from dataclasses import dataclass, field

import numpy as np

from engine.rules.board import BLACK, WALL, WHITE, opponent
from engine.rules.game import area_score, pass_alive
from engine.scoring import csa
from engine.scoring.teire import must_fill, territory, without_dead
from engine.tactics.ladder import ladder_captured

ALIVE, DEAD, SEKI = "alive", "dead", "seki"
AREA, TERRITORY = "area", "territory"    # Rules.scoring
DOUBT_MARGIN = 0.4   # |mean ownership| below this: the net is unsure and the board decides


@dataclass
class Chain:
    colour: int
    stones: list
    status: str
    source: str          # "benson", "csa", "network", "board check", "seki"
    ownership: float     # CSA*: probability of life; ownership scorer: mean predicted ownership


@dataclass
class Assessment:
    chains: list = field(default_factory=list)
    doubtful: bool = False   # CSA*: flood fill and distance counts differ, a block is unsure,
                             # or (reviewed) a tree search expects another count
    csa_result: object = None    # CSA*'s csa.CsaResult (its counts and doubt signs), if CSA*

    def stones(self, status):
        return {p for chain in self.chains if chain.status == status for p in chain.stones}

    @property
    def dead(self):
        return self.stones(DEAD)

    def chains_with(self, status):
        return [chain for chain in self.chains if chain.status == status]


def all_chains(board):
    """Every chain on the board as (colour, sorted stones), top-left first."""
    seen, chains = set(), []
    for p in board.points():
        colour = board.get(p)
        if colour in (BLACK, WHITE) and p not in seen:
            stones = sorted(board.chain(p))
            seen.update(stones)
            chains.append((colour, stones))
    return chains


def assess(state, evaluator=None, ownership=None, classifier=None, review=False):
    """CSA*'s assessment of every chain of state's board. `evaluator` and `ownership` are
    accepted for the callers' sake and not used: CSA* reads the board only. `classifier`
    defaults to the shipped one for the board size (csa.classifier_for). `review`: a tree
    search's count also decides whether the assessment is doubtful (csa.search_count: a fifth
    of a second on 9x9, for a reported score, not for every pass decision)."""
    board = state.board
    classifier = classifier or csa.classifier_for(board.size)
    result = csa.analyse(board, state.rules.komi, classifier, review=review)
    features = result.features
    final = result.step_predictions[-1] if result.step_predictions else []
    dead = set(result.dead_blocks)
    assessment = Assessment(doubtful=result.doubtful, csa_result=result)
    for block in sorted(features.blocks, key=lambda b: min(b.stones)):
        if features.pass_alive[block.index]:
            status, source = ALIVE, "benson"
        elif features.in_safe_region[block.index]:
            status, source = DEAD, "benson"
        else:
            status, source = (DEAD if block.index in dead else ALIVE), "csa"
        assessment.chains.append(Chain(block.colour, sorted(block.stones), status, source,
                                       float(final[block.index])))
    _mark_seki(board, assessment)
    return assessment


def assess_by_ownership(state, evaluator, ownership=None):
    """The scorer CSA* replaced: assessment of every chain of state's board from the network's
    ownership. `ownership` (per loc, -1 white .. +1 black) defaults to the evaluator's
    prediction for the position."""
    board = state.board
    if ownership is None:
        ownership = evaluator.evaluate(state).ownership
    certain_alive, inside_safe = {}, {}
    for colour in (BLACK, WHITE):
        certain_alive[colour], inside_safe[colour] = pass_alive(board, colour)

    assessment = Assessment()
    for colour, stones in all_chains(board):
        sign = 1.0 if colour == BLACK else -1.0
        own = float(np.mean([ownership[p] for p in stones])) * sign
        if stones[0] in certain_alive[colour]:
            status, source = ALIVE, "benson"
        elif stones[0] in inside_safe[opponent(colour)]:
            status, source = DEAD, "benson"
        elif own >= DOUBT_MARGIN:
            status, source = ALIVE, "network"
        elif own <= -DOUBT_MARGIN:
            status, source = DEAD, "network"
        else:
            status, source = _check_doubtful(board, colour, stones, own), "board check"
        assessment.chains.append(Chain(colour, stones, status, source, own))
    _mark_seki(board, assessment)
    return assessment


def _check_doubtful(board, colour, stones, own):
    """A chain with at most two liberties that the opponent captures even when the chain's owner
    moves first (an atari it cannot escape, a ladder) is dead; otherwise the ownership's sign
    decides, a tie keeping the stones."""
    if board.liberty_count(stones[0]) <= 2 and \
            ladder_captured(board, stones[0], attacker_moves_first=False):
        return DEAD
    return ALIVE if own >= 0 else DEAD


def _mark_seki(board, assessment):
    """Chains left alive only by the net or the board check, sharing a liberty with a living
    chain of the other colour that neither side can fill without self-atari: seki."""
    living = {}
    for chain in assessment.chains:
        if chain.status == ALIVE and chain.source != "benson":
            for p in chain.stones:
                living[p] = chain
    for chain in list(living.values()):
        for liberty in board.liberties(chain.stones[0]):
            neighbours = [q for q in _neighbours(board, liberty) if q in living]
            other = [living[q] for q in neighbours if living[q].colour != chain.colour]
            if not other:
                continue
            if board.liberties_if_played(liberty, chain.colour) <= 1 and \
                    board.liberties_if_played(liberty, opponent(chain.colour)) <= 1:
                for partner in [chain, *other]:
                    partner.status, partner.source = SEKI, "seki"


def _neighbours(board, p):
    stride = board.size + 2
    return [q for q in (p - 1, p + 1, p - stride, p + stride) if board.get(q) != WALL]


def score(state, dead=(), seki=()):
    """Black's score minus White's, komi included, with `dead` stones taken off, counted by the
    state's rules: area (Chinese / Tromp-Taylor; eyes in seki are their owner's), or territory
    (Japanese: prisoners count, no territory touches a stone of `seki`, and a false eye its
    owner must fill is no territory: `count(..., teire=True)`)."""
    board, rules = state.board, state.rules
    if rules.scoring == TERRITORY:
        return count(board, TERRITORY, rules.komi, (board.captures(BLACK), board.captures(WHITE)),
                     dead, seki, teire=True)
    return area_score(board, rules.komi, dead)


def assessed_score(state, assessment):
    """score() of the state with the assessment's dead stones taken off and its seki chains
    counted as seki (which matters under territory rules)."""
    return score(state, assessment.dead, assessment.stones(SEKI))


def count(board, scoring, komi, captures=(0, 0), dead=(), seki=(), teire=False):
    """Black's margin, komi included, with the chains of `dead` stones taken off (one stone
    marks its chain). AREA: stones and the empty regions that reach one colour only (Chinese:
    eyes in seki are the owner's). TERRITORY: empty regions (dead stones taken off) bordered by
    one colour and touching no stone of `seki`, plus prisoners: `captures` (Black's, White's)
    and the dead stones; with `teire`, less the false eyes the owner must fill
    (engine/scoring/teire.py `must_fill()`)."""
    colours, dead_count = without_dead(board, dead)
    seki = set(seki)
    stride = board.stride

    def counts(region):
        # under territory rules no region touching a stone in seki is anybody's
        return not (scoring == TERRITORY and seki and any(
            q in seki for p in region for q in (p - stride, p - 1, p + 1, p + stride)))

    owner_of = territory(board, colours, counts)
    if scoring == TERRITORY and teire:
        for p in must_fill(board, colours, owner_of):
            del owner_of[p]
    points = {BLACK: 0, WHITE: 0}
    for owner in owner_of.values():
        points[owner] += 1
    if scoring == AREA:
        for p in board.points():
            if colours[p] in (BLACK, WHITE):
                points[colours[p]] += 1
    else:
        points[BLACK] += captures[0] + dead_count[WHITE]
        points[WHITE] += captures[1] + dead_count[BLACK]
    return points[BLACK] - points[WHITE] - komi


def format_score(value):
    """GTP's result text: B+3.5, W+0.5, or 0 for a draw."""
    if abs(value) < 1e-9:
        return "0"
    return f"{'B' if value > 0 else 'W'}+{abs(value):.1f}"

