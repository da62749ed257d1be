"""The 1-ply Boltzmann player (Blair 2008, section V): every legal successor is evaluated and a
move is drawn with probability proportional to exp(beta * value).

Reading order: `Player.choose()` is the whole policy. It calls `analyse()` (the evaluator's
incremental successor call, candidates filtered, probabilities computed), then `_decide()`, which
applies the rules about passing, cleaning up dead stones and resigning, and draws the move.

Candidates: every legal move of the colour, minus its own single-point eyes and the points of its
own Benson-safe territory (filling them can only lose), plus pass. Values are in points, for the
player who made the move, komi included, as the evaluator returns them. Where the evaluator has
a move head (a judging net's) and `judge_move_weight` is W > 0, the draw is over each value plus
W times the log of the head's probability for the move (`_preference()`); the rules below read
the values alone.

Passing (in this order):
- after the opponent passed, `after_opponent_passed()` decides for every player (1-ply, search,
  policy): pass when the count wins (dead stones removed, or the board as it stands when dead
  stones are not removed by the counting, as on CGOS); when the count with dead stones removed
  loses by more than the margin of doubt, resign (or pass when resigning is off: playing on only
  throws stones into the opponent's area); in between, play on only with a move the player rates
  better than passing (here: by PASS_MARGIN) and whose stone the count would not take off at once
  (`thrown_away()`), else pass;
- otherwise do not pass while a real move gains (beats passing by PASS_MARGIN), nor while the
  evaluator's move head, where it has one (a judging net's), rates passing well below its
  likeliest move (`_move_head_plays_on()`);
- with `capture_all_dead` (CGOS) or in `kgs-genmove_cleanup`, capture the opponent's dead stones
  before passing: the candidates shrink to the liberties of the dead chains.
Resigning: when the best value stays below -resign_threshold x (board points) for RESIGN_STREAK
of our moves in a row; `resign_threshold=None` never resigns.

`MovePlayer` is what the GTP engine asks of every player (this one, engine/play/search_player.py,
engine/play/policy_player.py); each holds its settings (engine/play/settings.py) and reads them
at every move.
"""
import copy
import logging
import math
import time
from dataclasses import dataclass
from typing import Iterator, Optional, Protocol, runtime_checkable

import numpy as np

from engine.nets.judge import lead_spread
from engine.scoring import deadstones
from engine.rules.board import BLACK, PASS, opponent
from engine.rules.coords import format_vertex
from engine.rules.game import connected_parts, pass_alive
from engine.play.settings import PlayerSettings, with_changes

log = logging.getLogger("kosumi.player")

RESIGN = "resign"
PASS_MARGIN = 0.5              # real gains are whole points; smaller differences are noise
RESIGN_STREAK = 3              # one bad evaluation is not enough to give up
COUNT_DOUBT_MARGIN = 0.1       # of the board's points: a count lost by more (8 points on 9x9,
                               # 36 on 19x19) is not turned round by one misjudged block
MIN_DOUBT_MARGIN = 2.0         # points: one stone misjudged moves an area count by 2
THROWN_AWAY_TRIES = 8          # stones found dead after the opponent's pass before passing: the
                               # moves a player rates lower are no likelier to live
GAME_LENGTH_VALVE = 3          # after 3 x (board points) moves, passing is always allowed: a
                               # weak net must not be able to make a game endless
PREMATURE_PASS_SHARE = 0.25   # a move head that rates passing under this share of its likeliest
                               # move does not pass first
EMERGENCY_FACTOR = 2.0         # under twice the usual cost in the budget: a cheaper evaluator
                               # (fewer symmetries), or else an instant move


@dataclass
class MoveAnalysis:
    """The 1-ply view of a position for one colour."""
    colour: int
    size: int
    moves: list                 # every legal move (locs) and PASS last
    values: np.ndarray          # value after each move, for `colour`, in points
    candidate: np.ndarray       # bool: the player may choose it
    probabilities: np.ndarray   # Boltzmann selection probabilities (0 for non-candidates)
    preference: Optional[np.ndarray] = None   # what the Boltzmann draw is over (points): the
                                              # values plus the move head's share; None: values

    def ranked(self, candidates_only=True):
        """(move, value, probability) best first."""
        return [(self.moves[i], float(self.values[i]), float(self.probabilities[i]))
                for i in self.order() if self.candidate[i] or not candidates_only]

    def order(self):
        """The moves' indices, best first: by preference."""
        return np.argsort(-self.preferred(), kind="stable")

    def preferred(self):
        return self.values if self.preference is None else self.preference

    def value_of(self, move):
        return float(self.values[self.moves.index(move)])


@dataclass
class Decision:
    move: object                 # a loc, PASS, or RESIGN
    analysis: MoveAnalysis = None
    reason: str = ""
    probability: float = 1.0


def boltzmann(values, candidate, beta):
    """Probabilities proportional to exp(beta * value) over the candidates; beta = inf is greedy
    (ties shared equally)."""
    probabilities = np.zeros(len(values))
    if not candidate.any():
        return probabilities
    chosen = values[candidate]
    best = chosen.max()
    if math.isinf(beta):
        weights = (chosen == best).astype(float)
    else:
        weights = np.exp(beta * (chosen - best))   # shifted by the best: no overflow
    probabilities[candidate] = weights / weights.sum()
    return probabilities


def win_probability(score_lead, empty_points):
    """A display winrate for a score lead: a normal distribution around the expected score whose
    spread shrinks with the open points (0.5 points per sqrt(empty point), at least half a point).
    The evaluator predicts scores, not winrates; this mapping is only for GUIs."""
    spread = lead_spread(empty_points)
    return 0.5 * (1.0 + math.erf(score_lead / (spread * math.sqrt(2.0))))


def count_after_passing(state, colour, evaluator, capture_mode):
    """The final count for colour if the game ended now: dead stones removed, or (capture_mode:
    the board counted as it stands, as on CGOS) every stone alive."""
    count = deadstones.score(state) if capture_mode else \
        deadstones.assessed_score(state, deadstones.assess(state, evaluator))
    return count if colour == BLACK else -count


@dataclass
class PassVerdict:
    """What the count says once the opponent has passed (after_opponent_passed)."""
    move: object         # PASS or RESIGN when the count decides; None: play on, but only a move
                         # the player rates better than passing
    count: float         # the count after passing, for the player
    margin: float        # the margin of doubt, in points (inf: CSA* doubts its own count)
    reason: str

    @property
    def doubtful(self):
        """Whether CSA* doubts its own count (no margin makes it certain)."""
        return math.isinf(self.margin)


def after_opponent_passed(state, colour, evaluator, capture_mode, resigns):
    """The rule of all players once the opponent has passed, when a pass of ours ends the game:
    - the count wins (dead stones removed; with capture_mode the board as it stands): PASS;
    - the count with dead stones removed (the best capturing can do) loses by more than the
      margin of doubt, COUNT_DOUBT_MARGIN x the board's points (at least MIN_DOUBT_MARGIN):
      RESIGN when `resigns`, else PASS. A count CSA* flags as doubtful has no margin that makes
      it certain: never resign on it;
    - otherwise None: the count loses by little, or may be wrong; the player plays on only with a
      move it rates better than passing (never a stone thrown away), and passes when it has none.
    """
    assessment = deadstones.assess(state, evaluator)
    sign = 1 if colour == BLACK else -1
    settled = sign * deadstones.assessed_score(state, assessment)
    count = sign * deadstones.score(state, ()) if capture_mode else settled
    if count > 0:
        return PassVerdict(PASS, count, 0.0, f"opponent passed and the count wins by {count:g}")
    size = state.size
    margin = math.inf if assessment.doubtful else \
        max(COUNT_DOUBT_MARGIN * size * size, MIN_DOUBT_MARGIN)
    if settled < -margin:
        return PassVerdict(RESIGN if resigns else PASS, count, margin,
                           f"opponent passed and the count loses by {-settled:g}, more than "
                           f"the margin of doubt ({margin:g})")
    doubt = "a doubtful count" if assessment.doubtful else \
        f"within the margin of doubt ({margin:g})"
    return PassVerdict(None, count, margin,
                       f"opponent passed and the count loses by {-count:g}, {doubt}")


def thrown_away(state, colour, move):
    """Whether colour's stone at move would be counted dead as soon as it is played (CSA*): a
    stone thrown into the opponent's area, which gains nothing once the opponent has passed."""
    after = state.copy()
    after.play(move, colour)
    return move in deadstones.assess(after).dead


def dead_stone_liberties(state, colour, evaluator):
    """The liberties of the opponent's dead stones: where colour captures them."""
    board = state.board
    return {q for p in deadstones.assess(state, evaluator).dead
            if board.get(p) == opponent(colour) for q in board.liberties(p)}


def state_for(state, colour):
    """state itself if colour is to move, else a copy with colour to move (GTP lets a controller
    ask for either colour: setup stones, analysis of the other side)."""
    if state.to_move == colour:
        return state
    flipped = state.copy()
    flipped.to_move = colour
    return flipped


def safe_own_points(board, colour, keep_regions_with_opponent_stones):
    """Points of colour's Benson-safe regions where colour should never play."""
    _stones, safe = pass_alive(board, colour)
    points = set()
    for region in connected_parts(safe, board.size + 2):
        if keep_regions_with_opponent_stones and \
                any(board.get(p) == opponent(colour) for p in region):
            continue   # the stones inside still have to be captured for a count as it stands
        points.update(region)
    return points


@runtime_checkable
class MovePlayer(Protocol):
    """What the GTP engine (engine/gtp/commands.py) asks of a player. Implemented by the 1-ply
    `Player`, `SearchPlayer` and `PolicyPlayer`."""

    def new_game(self) -> None:
        """Forget what the last game taught (resign streaks, kept trees)."""

    def choose(self, state, colour, cleanup=False, time_budget=None, dry_run=False,
               restriction=None) -> "Decision":
        """The Decision for colour in state (state unchanged). cleanup: kgs-genmove_cleanup;
        time_budget: seconds, or None; dry_run: the player's random state and streaks are
        restored afterwards, so the same call without it decides the same; restriction: a
        MoveRestriction of the analysis commands."""

    def analyse(self, state, colour, capture_mode=None, restriction=None):
        """The player's view of the position for colour: a MoveAnalysis or SearchAnalysis."""

    def analysis_stream(self, state, colour, interval, restriction=None) -> Iterator:
        """Analyses of the position, one every `interval` seconds for as long as the caller asks
        (a search ponders on); a player that does not search gives one."""


class Player:
    """The 1-ply move choice: an evaluator, the Boltzmann temperature, a seeded random generator,
    and the passing, cleanup and resigning rules of the module docstring. settings: its
    PlayerSettings (default: PlayerSettings()); changes: settings fields to replace in a copy of
    them (as tests and benchmarks build a player)."""

    def __init__(self, evaluator, settings=None, **changes):
        self.settings = with_changes(settings or PlayerSettings(), changes)
        self.evaluator = evaluator
        self.rng = np.random.default_rng(self.settings.seed)
        self.hopeless_streak = 0
        self.seconds_per_size = {}   # measured cost of one choose() per board size

    def new_game(self):
        self.hopeless_streak = 0

    # --- analysis -------------------------------------------------------------------------------

    def analyse(self, state, colour, capture_mode=None, restriction=None, evaluator=None):
        """The 1-ply view for colour, by the player's evaluator unless another is given. A move
        that `restriction` (a MoveRestriction, see engine/play/restriction.py) does not permit
        now is not a candidate."""
        if capture_mode is None:
            capture_mode = self.settings.capture_all_dead
        state = state_for(state, colour)
        moves, values = (evaluator or self.evaluator).successor_values(state)
        moves = list(moves)
        if not moves or moves[-1] != PASS:
            raise ValueError("the evaluator's successor_values must list PASS last")
        values = np.asarray(values, dtype=float)
        board = state.board
        excluded = safe_own_points(board, colour, keep_regions_with_opponent_stones=capture_mode)
        candidate = np.array([m == PASS or (m not in excluded and not board.is_eye(m, colour))
                              for m in moves], dtype=bool)
        if restriction:
            candidate &= np.array([restriction.permits(colour, m) for m in moves], dtype=bool)
        preference = self._preference(state, moves, values, evaluator or self.evaluator)
        probabilities = boltzmann(values if preference is None else preference, candidate,
                                  self.settings.beta)
        return MoveAnalysis(colour, board.size, moves, values, candidate, probabilities,
                            preference)

    def _preference(self, state, moves, values, evaluator):
        """The values plus judge_move_weight points times the log of the evaluator's move head's
        probability for each move, or None (no weight, or no move head). The draw then is over
        p^(beta W) exp(beta value): the move head's choice weighed against the values, which
        alone play weaker (AlphaGo's finding for its policy and value nets; docs/PLAYING.md)."""
        weight = self.settings.judge_move_weight
        if weight == 0:
            return None
        log_probabilities = evaluator.move_log_probabilities(state, moves)
        return None if log_probabilities is None else values + weight * log_probabilities

    def analysis_stream(self, state, colour, interval, restriction=None):
        """The 1-ply analysis, once: it does not change while the caller waits."""
        yield self.analyse(state, colour, restriction=restriction)

    # --- the policy ---------------------------------------------------------------------------

    def choose(self, state, colour, cleanup=False, time_budget=None, dry_run=False,
               restriction=None):
        """Decision for `colour` in `state` (state is not changed). With dry_run the player's
        random state and resign count are restored afterwards: the same call without dry_run
        would make the same decision. A move `restriction` does not permit is never chosen,
        except a pass when it leaves no legal move."""
        if dry_run:
            saved = copy.deepcopy(self.rng.bit_generator.state), self.hopeless_streak
            try:
                return self.choose(state, colour, cleanup, time_budget, restriction=restriction)
            finally:
                self.rng.bit_generator.state, self.hopeless_streak = saved
        size = state.size
        expected = self.seconds_per_size.get(size)
        evaluator, cost = self.evaluator, 1.0
        if time_budget is not None:
            # an unknown cost is timed on the cheapest stand-in (fewer symmetries)
            fraction = 0.0 if expected is None else time_budget / (EMERGENCY_FACTOR * expected)
            if fraction < 1:
                evaluator, cost = self.evaluator.within(fraction)
                if cost > fraction and expected is not None:
                    return self._instant_move(state, colour, time_budget, restriction)
        started = time.perf_counter()
        capture_mode = cleanup or self.settings.capture_all_dead
        analysis = self.analyse(state, colour, capture_mode, restriction, evaluator)
        decision = self._decide(state, colour, analysis, cleanup, capture_mode)
        if restriction and decision.move == PASS and not restriction.permits(colour, PASS):
            decision = self._permitted_move_instead_of_pass(analysis, decision)
        elapsed = time.perf_counter() - started
        full_cost = elapsed / cost      # what the player's own evaluator would have taken
        previous = self.seconds_per_size.get(size, full_cost)
        self.seconds_per_size[size] = max(full_cost, 0.8 * previous + 0.2 * full_cost)
        log.debug("%s: %s (%s) in %.3fs%s", "BW"[colour - 1], move_text(decision.move, size),
                  decision.reason, elapsed, "" if cost == 1.0 else f" at {cost:g} of the cost")
        return decision

    def _decide(self, state, colour, analysis, cleanup, capture_mode):
        size = state.size
        moves, values = analysis.moves, analysis.values
        pass_index = len(moves) - 1
        mask = analysis.candidate.copy()
        mask[pass_index] = False
        best_real = float(values[mask].max()) if mask.any() else -math.inf
        pass_value = float(values[pass_index])
        gains = best_real > pass_value + PASS_MARGIN

        resign_threshold = self.settings.resign_threshold
        if resign_threshold is not None and not cleanup:
            hopeless = max(best_real, pass_value) < -resign_threshold * size * size
            self.hopeless_streak = self.hopeless_streak + 1 if hopeless else 0
            if self.hopeless_streak >= RESIGN_STREAK:
                return Decision(RESIGN, analysis, f"hopeless for {self.hopeless_streak} moves")

        history = state.history
        if len(history) >= GAME_LENGTH_VALVE * size * size:
            return Decision(PASS, analysis, "game length valve")
        opponent_passed = bool(history) and history[-1] == (opponent(colour), PASS)
        capture_candidates = mask
        no_gain = "no move gains"
        if opponent_passed and not cleanup:
            # Passing now ends the game: the count decides, or a move that beats passing.
            verdict = after_opponent_passed(state, colour, self.evaluator, capture_mode,
                                            resign_threshold is not None)
            if verdict.move is not None:
                return Decision(verdict.move, analysis, verdict.reason)
            mask = mask & (values > pass_value + PASS_MARGIN)
            reason, no_gain = verdict.reason, f"{verdict.reason}, and no move gains"
        else:
            reason = "boltzmann"
        must_move = gains or (not opponent_passed and not cleanup
                              and self._move_head_plays_on(state, colour))

        if capture_mode and not gains:
            # About to pass (or losing after a pass): first take the opponent's dead stones off.
            capture_points = dead_stone_liberties(state, colour, self.evaluator)
            capture_mask = capture_candidates & np.array([m in capture_points for m in moves],
                                                         dtype=bool)
            if capture_mask.any():
                mask, must_move, reason = capture_mask, True, "capturing dead stones"
        if not must_move:
            return Decision(PASS, analysis, no_gain)
        if not mask.any():
            return Decision(PASS, analysis, "no candidate move")
        for _ in range(THROWN_AWAY_TRIES):
            probabilities = boltzmann(analysis.preferred(), mask, self.settings.beta)
            index = int(self.rng.choice(len(moves), p=probabilities))
            if not opponent_passed or cleanup or not thrown_away(state, colour, moves[index]):
                return Decision(moves[index], analysis, reason, float(probabilities[index]))
            mask[index] = False
            if not mask.any():
                break
        return Decision(PASS, analysis, f"{reason}, and the moves that gain throw stones away")

    def _move_head_plays_on(self, state, colour):
        """Whether the evaluator's move head (a judging net's) rates passing under
        PREMATURE_PASS_SHARE of its likeliest move: the game is not over, whatever the values'
        small differences say (on the empty 9x9 board they are within a point of passing)."""
        share = self.evaluator.pass_share(state_for(state, colour))
        return share is not None and share < PREMATURE_PASS_SHARE

    def _permitted_move_instead_of_pass(self, analysis, decision):
        """The restriction bars passing: a Boltzmann draw among the permitted real moves (the
        candidates), or the pass after all when there is none."""
        real = analysis.candidate.copy()
        real[len(analysis.moves) - 1] = False
        if not real.any():
            return Decision(PASS, analysis, "no permitted move")
        probabilities = boltzmann(analysis.preferred(), real, self.settings.beta)
        index = int(self.rng.choice(len(analysis.moves), p=probabilities))
        return Decision(analysis.moves[index], analysis,
                        f"pass not permitted ({decision.reason})", float(probabilities[index]))

    def _instant_move(self, state, colour, time_budget, restriction=None):
        """Out of time: a random legal move that fills no own eye, or pass; no evaluation."""
        board = state.board
        moves = [m for m in state.legal_moves(colour) if not board.is_eye(m, colour)
                 and (not restriction or restriction.permits(colour, m))]
        history = state.history
        if not moves or (history and history[-1][1] == PASS):
            return Decision(PASS, None, f"instant pass: budget {time_budget:.3f}s")
        move = moves[int(self.rng.integers(len(moves)))]
        return Decision(move, None, f"instant move: budget {time_budget:.3f}s",
                        1.0 / len(moves))


def move_text(move, size):
    """A decision's move as GTP writes it: a vertex, pass, or resign."""
    return move if isinstance(move, str) else format_vertex(move, size)

