"""The policy player (`--player policy`): the move-prediction net's move, with no search: its top
move, or one drawn from its probabilities at a temperature. Fast on every board size.

Reading order: `PolicyPlayer.choose()` calls `candidates()` (legal under the game's rules, not an
own single-point eye or a point of an own Benson-safe region), then `_decide()`, which applies the
passing, cleanup and resigning rules, and draws the move.

The net learnt from human games, which rarely record a pass, so passing is ruled by the count:
- after the opponent passed, the rule all players share (engine/play/player.py,
  `after_opponent_passed()`): pass when the count wins; when it loses by more than the margin of
  doubt, resign (or, never resigning, pass: playing on would only throw stones into the
  opponent's area); in between, the net's likeliest move among those the 1-ply analysis rates
  better than passing and whose stone the count would not take off at once, or a pass when
  there is none;
- otherwise pass when the net's pass is its top choice, or when no candidate is left;
- with `capture_all_dead` or in `kgs-genmove_cleanup`, capture the opponent's dead stones before
  passing, as the other players do.
Analysis commands (`analyse()`) show the net's probabilities beside the 1-ply player's values (the
policy has no values of its own): a PolicyAnalysis, likeliest move first, so that Lizzie's and
Sabaki's visits and priors are the net's and their best move is the one this player plays;
`choose()` makes none (one net pass a move), so `kata-genmove_analyze` asks for it.
"""
import copy
import logging

import numpy as np

from engine.play.player import (Decision, GAME_LENGTH_VALVE, PASS_MARGIN, THROWN_AWAY_TRIES,
                                MoveAnalysis, after_opponent_passed, dead_stone_liberties,
                                move_text, safe_own_points, state_for, thrown_away)
from engine.play.settings import PlayerSettings, with_changes
from engine.rules.board import PASS, opponent

log = logging.getLogger("kosumi.policy")


class PolicyAnalysis(MoveAnalysis):
    """The policy player's view: the 1-ply values of the moves, and as their probabilities the
    net's, shared over the 1-ply candidates; ranked likeliest first."""

    def order(self):
        return np.argsort(-self.probabilities, kind="stable")


class PolicyPlayer:
    """Moves by the policy net (module docstring). evaluator: the value net or the uniform
    evaluator, for the dead stones of the count; one_ply: the 1-ply player whose analysis the
    analysis commands show; settings: its PlayerSettings (policy_temperature, seed,
    capture_all_dead; resign_threshold None: never resign), default PlayerSettings(); changes:
    fields to replace in a copy of them."""

    def __init__(self, predictor, evaluator, one_ply, settings=None, **changes):
        self.settings = with_changes(settings or PlayerSettings(), changes)
        self.predictor = predictor
        self.evaluator = evaluator
        self.one_ply = one_ply
        self.rng = np.random.default_rng(self.settings.seed)

    def new_game(self):
        self.one_ply.new_game()

    def analyse(self, state, colour, capture_mode=None, restriction=None, evaluator=None):
        """A PolicyAnalysis: the 1-ply analysis with the net's probabilities."""
        values = self.one_ply.analyse(state, colour, capture_mode, restriction, evaluator)
        net = self.predictor.probabilities(state_for(state, colour), colour)
        probabilities = values.candidate * np.array([net[-1] if m == PASS else net[m]
                                                     for m in values.moves])
        if probabilities.sum() > 0:
            probabilities /= probabilities.sum()
        return PolicyAnalysis(values.colour, values.size, values.moves, values.values,
                              values.candidate, probabilities)

    def analysis_stream(self, state, colour, interval, restriction=None):
        """The analysis, once: it does not change while the caller waits."""
        yield self.analyse(state, colour, restriction=restriction)

    def candidates(self, state, colour, capture_mode, restriction=None):
        """Legal moves (superko included) worth playing: no own eye, no own safe point."""
        board = state.board
        excluded = safe_own_points(board, colour, keep_regions_with_opponent_stones=capture_mode)
        return [m for m in state.legal_moves(colour)
                if m not in excluded and not board.is_eye(m, colour)
                and (restriction is None or restriction.permits(colour, m))]

    def choose(self, state, colour, cleanup=False, time_budget=None, dry_run=False,
               restriction=None):
        """Decision for colour (state unchanged); dry_run restores the random state afterwards."""
        if dry_run:
            saved = copy.deepcopy(self.rng.bit_generator.state)
            try:
                return self.choose(state, colour, cleanup, time_budget, restriction=restriction)
            finally:
                self.rng.bit_generator.state = saved
        state = state_for(state, colour)
        capture_mode = cleanup or self.settings.capture_all_dead
        probabilities = self.predictor.probabilities(state, colour)
        moves = self.candidates(state, colour, capture_mode, restriction)
        decision = self._decide(state, colour, moves, probabilities, cleanup, capture_mode)
        if restriction and decision.move == PASS and not restriction.permits(colour, PASS) and moves:
            decision = self._draw(moves, probabilities, "pass not permitted")
        log.debug("%s: %s (%s)", "BW"[colour - 1], move_text(decision.move, state.size), decision.reason)
        return decision

    def _decide(self, state, colour, moves, probabilities, cleanup, capture_mode):
        size = state.size
        history = state.history
        if len(history) >= GAME_LENGTH_VALVE * size * size:
            return Decision(PASS, None, "game length valve")
        opponent_passed = bool(history) and history[-1] == (opponent(colour), PASS)
        all_moves, reason, no_move = moves, "policy", "no candidate"
        if opponent_passed and not cleanup:
            verdict = after_opponent_passed(state, colour, self.evaluator, capture_mode,
                                            self.settings.resign_threshold is not None)
            if verdict.move is not None:
                return Decision(verdict.move, None, verdict.reason)
            # lost by little: only a move the values rate better than passing, never a stone
            # thrown into the opponent's area
            analysis = self.one_ply.analyse(state, colour, capture_mode)
            pass_value = analysis.values[-1]
            gaining = {m for m, value in zip(analysis.moves, analysis.values)
                       if m != PASS and value > pass_value + PASS_MARGIN}
            moves = [m for m in moves if m in gaining]
            reason, no_move = verdict.reason, f"{verdict.reason}, and no move gains"
        wants_pass = not moves or probabilities[-1] >= max(probabilities[m] for m in moves)
        if capture_mode and wants_pass:
            capture_points = dead_stone_liberties(state, colour, self.evaluator)
            capture = [m for m in all_moves if m in capture_points]
            if capture:
                return self._draw(capture, probabilities, "capturing dead stones")
        if wants_pass and not opponent_passed:
            return Decision(PASS, None, "no candidate" if not moves else "the net passes")
        if not moves:
            return Decision(PASS, None, no_move)
        if not opponent_passed or cleanup:
            return self._draw(moves, probabilities, reason)
        for _ in range(THROWN_AWAY_TRIES):
            decision = self._draw(moves, probabilities, reason)
            if not thrown_away(state, colour, decision.move):
                return decision
            moves.remove(decision.move)
            if not moves:
                break
        return Decision(PASS, None, f"{reason}, and the moves that gain throw stones away")

    def _draw(self, moves, probabilities, reason):
        weights = np.array([probabilities[m] for m in moves], dtype=float)
        temperature = self.settings.policy_temperature
        if temperature == 0 or weights.sum() <= 0:
            index = int(np.argmax(weights))
            return Decision(moves[index], None, reason, float(weights[index]))
        weights = np.power(weights / weights.max(), 1.0 / temperature)
        weights /= weights.sum()
        index = int(self.rng.choice(len(moves), p=weights))
        return Decision(moves[index], None, reason, float(weights[index]))
