"""The search player: Monte-Carlo tree search (engine/search/tree.pyx) with the learned evaluation
as the tree's prior, or over a judging net the PUCT search (engine/search/puct.pyx, SearchSettings
.tree; `judging_function()` is its evaluation function), behind the same interface as the 1-ply
player (engine/play/player.py), so every GTP command, analysis stream, passing, cleanup and
resign rule works with either.

Reading order: `SearchPlayer.choose()` (the rules about passing, cleanup and resigning around
`search()`), `search()` (the tree kept from the last move, the budget, root-parallel threads),
`_prior_function()` (the evaluator's successor values as the prior: win probabilities and
Boltzmann selection probabilities).

The prior. The evaluator's value of each successor, in points for the mover, becomes a win
probability 1 / (1 + exp(-value / prior_scale)) given to the child as net_prior_visits games
(Gelly & Silver's equivalent experience), and a Boltzmann probability exp(beta * value) shown as
the move's `prior` in analysis. The node's own win rate is the evaluator's chance to win where it
has one (Evaluation.win: the judging net's), else its value turned so. The evaluator is called
once per expanded node, so its cost per simulation falls as prior_threshold (the visits a node
needs before it asks) rises: by default 8 for the ISN and 64 for the soft-segmentation net, whose
calls cost about ten times as much (default_prior_threshold(): a simulation then costs 1.7 times
the ISN's at 8).

Settings. The player reads its SearchSettings and PlayerSettings (engine/play/settings.py) at
every search, so a value changed at run time counts from the next search on; a change that
concerns the trees (their options, the threads) makes new ones.

Threads. `threads` > 1 runs that many trees side by side (root parallelism: each with its own
seed and its own evaluator, a twin of the player's: the playouts and the networks' arithmetic
release the GIL), and their root statistics are added. One thread with a seed repeats a search
exactly.
"""
import copy
import logging
import math
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from engine.nets.policy import softmax
from engine.nets.predictor import by_loc
from engine.play.player import (Decision, GAME_LENGTH_VALVE, RESIGN, RESIGN_STREAK,
                                 after_opponent_passed, boltzmann, count_after_passing,
                                 dead_stone_liberties, move_text, state_for)
from engine.play.settings import (DEFAULT_PLAYOUTS, LARGE_BOARD_KNOWLEDGE_PRIOR,
                                  RULES_OF_THUMB_LINES, SOFTSEG_PRIOR_THRESHOLD,
                                  THREADED_BATCH_SIZE, PlayerSettings, SearchSettings,
                                  split_changes, with_changes)
from engine.rules.board import BLACK, PASS, opponent
from engine.search.puct import DEFAULT_BATCH_SIZE, PuctSearch
from engine.search.tree import DEFAULT_KNOWLEDGE_PRIOR, DEFAULT_NET_PRIOR_THRESHOLD, TreeSearch

log = logging.getLogger("kosumi.search")

SEARCH_CACHE_SIZE = 4096        # evaluator positions remembered: a node's parent must still be
                                # there when the node is expanded (else the recurrence replays)
DEFAULT_PRIOR_BETA = 1.0        # Boltzmann beta (per point) of the prior shown in analysis
CHANCE_WINRATE = 0.05           # a move that wins fewer than 1 in 20 simulations has no chance
PLAY_ON_SHARE = 0.01            # of the root's simulations: a move the search visited less, or
                                # that wins fewer than CHANCE_WINRATE of them, is not played
                                # instead of a pass that loses (a stone thrown away)
ANALYSIS_CHUNK_SECONDS = 0.5    # a streamed analysis reports at least this often
FIRST_ANALYSIS_SECONDS = 0.1    # ... and its first line comes sooner, for the GUI
TIME_SAFETY = 0.9               # of a clock budget: the search stops in time to answer
PLANNED_SHARE = 0.6             # of that: where a clear choice stops (_timed_search())
CLEAR_SHARE = 0.5               # of the visits: the most visited move's, when the choice is clear
POLICY_BASE_VISITS = 10.0       # games at an even win rate under a policy net's prior, when no
                                # value net speaks
POLICY_PRIOR_THRESHOLD = 16     # visits before a node asks the move predictor (the root: at once)
USE_PRIOR = {"auto": None, "net": True, "none": False}      # SearchSettings.search_prior


def load_prior_evaluator(weights=None, precision="fp32"):
    """The evaluator the search plays over, with the search's cache: the weight file's, by
    default the shipped judging nets by board size (weights.DEFAULT_JUDGES); a judging net's
    products in `precision`. Raises weights.WeightFileError naming the file."""
    from engine.nets.evaluator import JudgeEvaluator, load_evaluator
    if weights is None:
        from engine.nets.weights import DEFAULT_JUDGES
        return JudgeEvaluator.load_by_size(DEFAULT_JUDGES, precision, cache_size=SEARCH_CACHE_SIZE)
    return load_evaluator(weights, precision, cache_size=SEARCH_CACHE_SIZE)


def judges(evaluator):
    """Whether the evaluator gives the PUCT search what it needs: moves, a chance to win and a
    lead from one pass, for a batch of lines (JudgeEvaluator.judge_lines)."""
    return hasattr(evaluator, "judge_lines")


def uses_puct(settings, evaluator):
    """Whether SearchSettings.tree picks the PUCT search over this evaluator; ValueError for
    puct over an evaluator that does not judge."""
    if settings.tree == "puct" and not judges(evaluator):
        raise ValueError("--tree puct searches over a judging net: give one with --weights "
                         "(weights/judge_19x19_run.npz)")
    return settings.tree == "puct" or (settings.tree == "auto" and judges(evaluator))


def judging_function(root_state, evaluator, spread_symmetries=False):
    """The PUCT tree's evaluation function (engine/search/puct.pyx) for positions below
    root_state: the judging net's move probabilities by loc, its chance to win and lead for the
    side to move, its ownership, for a batch of lines from the root, each position under its own
    symmetry with spread_symmetries (SearchSettings.net_symmetry). Self-play's search uses it
    too (engine/training/expert/games.py)."""
    work = root_state.copy()

    def evaluate(lines, colours):
        judged = evaluator.judge_lines(work, lines, spread_symmetries)
        priors = by_loc(softmax(np.stack([policy for _, policy in judged])), work.size)
        return (priors, np.array([evaluation.win for evaluation, _ in judged]),
                np.array([evaluation.value for evaluation, _ in judged]),
                np.stack([evaluation.ownership for evaluation, _ in judged]))

    return evaluate


def default_prior_threshold(evaluator):
    """The visits a node needs before it asks `evaluator` for its children's prior: fewer calls
    for a costly one (Evaluator.costly: the soft-segmentation net; an evaluator that does not say
    is not)."""
    if getattr(evaluator, "costly", False):
        return SOFTSEG_PRIOR_THRESHOLD
    return DEFAULT_NET_PRIOR_THRESHOLD


@dataclass
class SearchAnalysis:
    """The search's view of the root, moves most visited first."""
    colour: int
    size: int
    moves: list                    # root moves (locs, PASS)
    visits: np.ndarray             # real simulations through each
    winrates: np.ndarray           # for `colour`
    score_leads: np.ndarray        # mean final margin for `colour` (nan: unvisited)
    priors: list                   # evaluator's probability or None
    pvs: list                      # principal variation from each move
    root_winrate: float
    total_visits: int
    ownership: np.ndarray          # (num_locs,), +1 Black
    simulations: int = 0           # made by the last search
    seconds: float = 0.0

    def ranked(self):
        return list(zip(self.moves, self.visits, self.winrates, self.score_leads, self.priors,
                        self.pvs))

    def value_of(self, move):
        """The mean final margin after move, in points for `colour` (nan if unvisited)."""
        return float(self.score_leads[self.moves.index(move)])

    def share_of(self, move):
        """move's share of the root's simulations."""
        if move not in self.moves or not self.total_visits:
            return 0.0
        return float(self.visits[self.moves.index(move)]) / self.total_visits

    def restricted(self, permitted):
        """The same analysis with only the permitted root moves."""
        keep = [i for i, move in enumerate(self.moves) if permitted(move)]
        visits = self.visits[keep]
        winrates = self.winrates[keep]
        total = int(visits.sum())
        root_winrate = float((winrates * visits).sum() / total) if total else self.root_winrate
        return SearchAnalysis(self.colour, self.size, [self.moves[i] for i in keep], visits,
                              winrates, self.score_leads[keep], [self.priors[i] for i in keep],
                              [self.pvs[i] for i in keep], root_winrate, total, self.ownership,
                              self.simulations, self.seconds)

    def best(self, permitted=lambda move: True):
        for move, visits, *_ in self.ranked():
            if permitted(move):
                return move
        return None


@dataclass
class _TreeOwner:
    """A tree and the game it was built for (what tree reuse checks)."""
    tree: TreeSearch
    history: list = field(default_factory=list)
    key: tuple = ()


class SearchPlayer:
    """Monte-Carlo tree search with the evaluator's prior (module docstring).

    settings: its SearchSettings, player_settings: the PlayerSettings it shares with the other
    players (seed, capture_all_dead), each default when None; changes: fields of either to
    replace in a copy (the search's first: resign_threshold is the search's), as tests and
    benchmarks build a player. predictor: a policy net (MovePredictor) for the prior, or None.

    search_prior and knowledge_prior auto (the defaults) depend on the board: below
    RULES_OF_THUMB_LINES lines the net's prior and no rules of thumb; from there no net prior
    and LARGE_BOARD_KNOWLEDGE_PRIOR games of rules of thumb. The shipped nets learnt 9x9: on
    19x19 their successor values hardly differ in the opening, so their prior (every move a
    likely loss) left the search to the playouts, which cannot tell the opening's points apart,
    and it opened on the second line; the rules of thumb favour the empty third and fourth lines
    from LARGE_BOARD_LINES (and the tree leaves the far edge moves out there,
    engine/search/tree.pyx). On 13x13 a net's call costs so many playouts that at equal time
    the search without it won most games against either net's prior (docs/notebook/search.md).
    prior_threshold auto: default_prior_threshold(evaluator), or POLICY_PRIOR_THRESHOLD where the
    move predictor's prior goes without the evaluator's (the value net's calls cost more)."""

    def __init__(self, evaluator, settings=None, player_settings=None, predictor=None,
                 **changes):
        search_changes, player_changes = split_changes(changes, SearchSettings, PlayerSettings)
        self.settings = with_changes(settings or SearchSettings(), search_changes)
        self.player_settings = with_changes(player_settings or PlayerSettings(), player_changes)
        self.evaluator = evaluator
        self.predictor = predictor
        self.rng = np.random.default_rng(self.player_settings.seed)
        self.hopeless_streak = 0
        self._owners = []
        # one evaluator per thread: a twin has its own buffers, so the threads' priors run at once
        self._thread_evaluators = [evaluator]
        self._thread_predictors = [predictor]

    @property
    def tree_options(self):
        """TreeSearch's keyword arguments that the settings give every tree (the board's own,
        the rules of thumb and the policy's threshold, are added in _trees_for)."""
        settings = self.settings
        threshold = settings.prior_threshold
        return dict(max_nodes=settings.max_nodes, expand_threshold=settings.expand_threshold,
                    rave_equivalence=settings.rave_equivalence,
                    net_prior_visits=settings.prior_visits,
                    net_prior_threshold=default_prior_threshold(self.evaluator)
                    if threshold is None else threshold,
                    value_weight=settings.value_weight, patterns=settings.patterns,
                    playout_tactics=settings.playout_tactics,
                    last_good_reply=settings.last_good_reply)

    @property
    def puct_options(self):
        """PuctSearch's keyword arguments from the settings."""
        settings = self.settings
        return dict(max_nodes=settings.max_nodes, exploration=settings.puct_exploration,
                    fpu_reduction=settings.fpu_reduction, score_utility=settings.score_utility,
                    batch_size=self.puct_batch, playout_weight=settings.puct_playout_weight,
                    playout_lead_weight=settings.puct_playout_lead_weight,
                    playout_tactics=settings.playout_tactics)

    @property
    def puct_batch(self):
        """The leaves each PUCT tree judges in one batch: the setting's, or by the threads."""
        if self.settings.puct_batch is not None:
            return self.settings.puct_batch
        return DEFAULT_BATCH_SIZE if self.settings.threads == 1 else THREADED_BATCH_SIZE

    def budget(self):
        """(simulations, seconds) per move by the settings; either may be None (no limit)."""
        playouts, seconds = self.settings.playouts, self.settings.time_per_move
        if playouts is None and seconds is None:
            playouts = DEFAULT_PLAYOUTS
        return playouts, seconds

    def new_game(self):
        self.hopeless_streak = 0
        self._owners = []

    # --- the search -------------------------------------------------------------------------

    def search(self, state, colour, max_playouts=None, max_seconds=None, restriction=None):
        """Search the position with colour to move; the SearchAnalysis of the root."""
        state = state_for(state, colour)
        own_playouts, own_seconds = self.budget()
        playouts = own_playouts if max_playouts is None else max_playouts
        seconds = max_seconds if max_seconds is not None else own_seconds
        if playouts is None:
            playouts = 1 << 40
        per_thread = max(1, math.ceil(playouts / self.settings.threads))
        owners = self._trees_for(state)
        if restriction is not None:
            for owner in owners:
                owner.tree.set_root_filter(self._permitted_array(state, colour, restriction))
        started = time.perf_counter()
        if len(owners) == 1:
            done = [owners[0].tree.run(per_thread, math.inf if seconds is None else seconds)]
        else:
            done = [0] * len(owners)
            errors = []

            def work(i):
                try:
                    done[i] = owners[i].tree.run(per_thread,
                                                 math.inf if seconds is None else seconds)
                except BaseException as error:   # re-raised in the caller's thread
                    errors.append(error)

            workers = [threading.Thread(target=work, args=(i,)) for i in range(len(owners))]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
            if errors:
                raise errors[0]
        analysis = self._merge(owners, state, sum(done), time.perf_counter() - started)
        if restriction is not None:      # a kept tree may hold visits of moves now barred
            analysis = analysis.restricted(lambda move: restriction.permits(colour, move))
        return analysis

    def settings_for(self, size):
        """(use the net's prior, use the move predictor's prior, games of rules of thumb) on a
        board of `size` lines."""
        large = size >= RULES_OF_THUMB_LINES
        chosen_prior = USE_PRIOR[self.settings.search_prior]
        use_prior = not large if chosen_prior is None else chosen_prior
        use_policy = self.predictor is not None and self.settings.policy_prior == "on"
        knowledge = self.settings.knowledge_prior
        if knowledge is None:
            knowledge = LARGE_BOARD_KNOWLEDGE_PRIOR if large else DEFAULT_KNOWLEDGE_PRIOR
        return use_prior, use_policy, knowledge

    def _trees_for(self, state):
        """One tree per thread, each kept from the last search when the game went on from its
        root (the subtree of the moves since), else new."""
        puct = uses_puct(self.settings, self.evaluator)
        use_prior, use_policy, knowledge = self.settings_for(state.size)
        threads = self.settings.threads
        if puct:
            options = self.puct_options
            key = (state.size, state.rules, "puct", tuple(sorted(options.items())))
        else:
            options = self.tree_options
            if use_policy and not use_prior and self.settings.prior_threshold is None:
                options["net_prior_threshold"] = POLICY_PRIOR_THRESHOLD
            options["knowledge_prior_visits"] = knowledge
            key = (state.size, state.rules, use_prior, use_policy,
                   tuple(sorted(options.items())))
        self._twins_for(threads)
        history = list(state.history)
        seen = state.seen_positions()
        last_move = history[-1][1] if history else None
        # after two passes the game is over; analysing it searches on as if play went on
        passes = state.consecutive_passes if state.consecutive_passes < 2 else 0
        if not self.settings.reuse_tree or len(self._owners) != threads or \
                any(owner.key != key for owner in self._owners):
            self._owners = []
            for i in range(threads):
                seed = int(self.rng.integers(1 << 62))
                tree = (PuctSearch if puct else TreeSearch)(state.size, state.rules.komi,
                                                            seed=seed, **options)
                self._owners.append(_TreeOwner(tree, None, key))
        for owner, evaluator, predictor in zip(self._owners, self._thread_evaluators,
                                               self._thread_predictors):
            tree = owner.tree
            if puct:
                tree.set_evaluation_function(judging_function(
                    state, evaluator, self.settings.net_symmetry == "random"))
            else:
                tree.set_prior_function(
                    self._prior_function(state, evaluator if use_prior else None,
                                         predictor if use_policy else None)
                    if use_prior or use_policy else None)
            old = owner.history
            if old is not None and history[:len(old)] == old and \
                    self._alternates(history[len(old):], tree.root_colour) and \
                    state.to_move == self._colour_after(tree.root_colour, len(history) - len(old)):
                moves = [loc for _, loc in history[len(old):]]
                reused = tree.advance(moves, state.board, seen, passes)
                log.debug("tree reuse: %s", "kept" if reused else "lost")
            else:
                tree.set_root(state.board, state.to_move, seen, last_move, passes)
            tree.set_root_filter(None)
            owner.history = history
        return self._owners

    def _twins_for(self, threads):
        """One evaluator and policy net per thread (the player's own first)."""
        evaluators, predictors = self._thread_evaluators, self._thread_predictors
        while len(evaluators) < threads:
            evaluators.append(self.evaluator.twin())
            predictors.append(self.predictor and self.predictor.twin())
        del evaluators[threads:], predictors[threads:]

    @staticmethod
    def _alternates(moves, colour):
        for mover, _ in moves:
            if mover != colour:
                return False
            colour = opponent(colour)
        return True

    @staticmethod
    def _colour_after(colour, count):
        return colour if count % 2 == 0 else opponent(colour)

    def _permitted_array(self, state, colour, restriction):
        board = state.board
        permitted = np.zeros(board.num_locs + 1, dtype=np.uint8)
        for move in state.legal_moves(colour) + [PASS]:
            if restriction.permits(colour, move):
                permitted[board.num_locs if move == PASS else move] = 1
        return permitted

    def _prior_function(self, root_state, evaluator, predictor):
        """The tree's prior (tree.pyx's set_prior_function) for positions below root_state, from
        the evaluator and the move predictor of the tree's thread (either may be None).

        The evaluator's successor values become win rates at prior_visits games each. The
        predictor's probabilities p add, as Pachi's DCNN prior does, wins worth policy_visits x
        sqrt(p / p_top) games to each move: the moves strong players would consider start with
        a lead that simulations must overturn, and every move stays searchable. Without an
        evaluator they sit on POLICY_BASE_VISITS games at an even rate. The `prior` shown in
        analysis is the predictor's probability when there is one."""
        scale, visits_of_net = self.settings.prior_scale, self.settings.prior_visits
        policy_visits = self.settings.policy_visits
        num_locs = root_state.board.num_locs
        work = root_state.copy()

        def prior(path, colour):
            for move in path:
                work.play(move)
            try:
                if evaluator is not None:
                    moves, values = evaluator.successor_values(work)
                    evaluation = evaluator.evaluate(work)
                policy = predictor.probabilities(work) if predictor is not None else None
            finally:
                for _ in path:
                    work.undo()
            win = np.full(num_locs + 1, 0.5)
            probability = np.zeros(num_locs + 1)
            black_win = None
            if evaluator is not None:
                values = np.asarray(values, dtype=float)
                index = np.array([num_locs if m == PASS else m for m in moves])
                win[index] = 1.0 / (1.0 + np.exp(-values / scale))
                probability[index] = boltzmann(values, np.ones(len(values), dtype=bool),
                                               DEFAULT_PRIOR_BETA)
                mover_win = evaluation.win if evaluation.win is not None else \
                    1.0 / (1.0 + math.exp(-evaluation.value / scale))
                black_win = mover_win if colour == BLACK else 1.0 - mover_win
            if policy is None:
                return win, probability, black_win
            base = visits_of_net if evaluator is not None else POLICY_BASE_VISITS
            extra = policy_visits * np.sqrt(policy / max(policy.max(), 1e-12))
            visits = base + extra
            win = (base * win + extra) / visits
            return win, np.array(policy, dtype=float), black_win, visits

        return prior

    def _merge(self, owners, state, simulations, seconds):
        """The trees' root statistics added move by move."""
        colour, size = state.to_move, state.size
        totals = {}
        for owner in owners:
            for child in owner.tree.root_children():
                entry = totals.setdefault(child["move"], {"visits": 0, "wins": 0.0, "score": 0.0,
                                                          "prior": child["prior"], "pv": None,
                                                          "pv_visits": -1, "prior_win":
                                                          child["winrate"]})
                visits = child["visits"]
                entry["visits"] += visits
                entry["wins"] += child["winrate"] * visits
                if visits:
                    entry["score"] += child["score_lead"] * visits
                if visits > entry["pv_visits"]:
                    entry["pv_visits"] = visits
                    entry["pv"] = owner.tree.principal_variation(child["index"])
        moves = sorted(totals, key=lambda m: (-totals[m]["visits"],
                                              -self._winrate(totals[m])))
        visits = np.array([totals[m]["visits"] for m in moves], dtype=int)
        winrates = np.array([self._winrate(totals[m]) for m in moves])
        scores = np.array([totals[m]["score"] / totals[m]["visits"] if totals[m]["visits"]
                           else math.nan for m in moves])
        ownership = sum(owner.tree.ownership() for owner in owners) / len(owners)
        total = int(visits.sum())
        root_winrate = float((winrates * visits).sum() / total) if total else 0.5
        return SearchAnalysis(colour, size, moves, visits, winrates, scores,
                              [totals[m]["prior"] for m in moves],
                              [totals[m]["pv"] for m in moves], root_winrate, total, ownership,
                              simulations, seconds)

    @staticmethod
    def _winrate(entry):
        return entry["wins"] / entry["visits"] if entry["visits"] else entry["prior_win"]

    # --- the interface the GTP engine uses ---------------------------------------------------

    def analyse(self, state, colour, capture_mode=None, restriction=None, max_seconds=None):
        """A search of the position (the configured budget, or max_seconds)."""
        return self.search(state, colour, max_seconds=max_seconds, restriction=restriction)

    def analysis_stream(self, state, colour, interval, restriction=None):
        """Analyses of a search that goes on (pondering) until the caller stops asking: one
        every `interval` seconds (at most ANALYSIS_CHUNK_SECONDS)."""
        chunk = min(max(interval, 0.05), ANALYSIS_CHUNK_SECONDS) if interval > 0 else \
            ANALYSIS_CHUNK_SECONDS
        first = min(chunk, FIRST_ANALYSIS_SECONDS)
        while True:
            yield self.search(state, colour, max_playouts=1 << 40, max_seconds=first,
                              restriction=restriction)
            first = chunk

    def choose(self, state, colour, cleanup=False, time_budget=None, dry_run=False,
               restriction=None):
        """Decision for colour in state (state is not changed). dry_run: the player's random
        state and trees are as if this call had not been made (a dry run searches a fresh tree,
        and so will the next real search), so the same call without dry_run decides the same."""
        if dry_run:
            saved = copy.deepcopy(self.rng.bit_generator.state), self.hopeless_streak
            self._owners = []
            try:
                return self._choose(state, colour, cleanup, time_budget, restriction)
            finally:
                self.rng.bit_generator.state, self.hopeless_streak = saved
                self._owners = []
        decision = self._choose(state, colour, cleanup, time_budget, restriction)
        analysis = decision.analysis
        if analysis is not None:      # --log-level debug: what each move's search could do
            log.debug("%s: %s (%s): %d simulations in %.2fs, root win rate %.3f",
                      "BW"[colour - 1], move_text(decision.move, state.size), decision.reason,
                      analysis.simulations, analysis.seconds, analysis.root_winrate)
        return decision

    def _choose(self, state, colour, cleanup, time_budget, restriction):
        size = state.size
        history = state.history
        capture_mode = cleanup or self.player_settings.capture_all_dead
        resign_threshold = self.settings.resign_threshold
        if len(history) >= GAME_LENGTH_VALVE * size * size:
            return Decision(PASS, None, "game length valve")
        opponent_passed = bool(history) and history[-1] == (opponent(colour), PASS)
        verdict = None
        if opponent_passed and not cleanup and \
                (restriction is None or restriction.permits(colour, PASS)):
            # Passing now ends the game: the count decides (engine/play/player.py), or else a
            # move the search gives a chance (below).
            verdict = after_opponent_passed(state, colour, self.evaluator, capture_mode,
                                            resign_threshold is not None)
            if verdict.move is not None:
                return Decision(verdict.move, None, verdict.reason)
        analysis = self._timed_search(state, colour, time_budget, restriction)
        permitted = (lambda move: True) if restriction is None else \
            (lambda move: restriction.permits(colour, move))
        if resign_threshold is not None and not cleanup:
            hopeless = analysis.total_visits > 0 and \
                max(analysis.winrates[:1], default=0.5) < resign_threshold
            self.hopeless_streak = self.hopeless_streak + 1 if hopeless else 0
            if self.hopeless_streak >= RESIGN_STREAK:
                return Decision(RESIGN, analysis, f"win rate below {resign_threshold:g} for "
                                                  f"{self.hopeless_streak} moves")
        move = analysis.best(permitted)
        reason = f"search: {analysis.total_visits} visits"
        if not cleanup and (verdict is not None or (move == PASS and count_after_passing(
                state, colour, self.evaluator, capture_mode) <= 0)):
            # A pass ends the game, or lets the opponent end it, on a count that does not win
            # (the tree's playouts may see a seki where a referee sees dead stones): play on,
            # but only a move the search gives a chance; a stone it rates as lost is thrown away.
            # A count CSA* doubts does not overrule the search's own count at two passes: a
            # move then has to be rated as good as passing.
            lost = verdict.reason if verdict is not None else "the count after passing does not win"
            doubted = verdict is not None and verdict.doubtful
            real = analysis.best(lambda m: m != PASS and permitted(m))
            if real is not None and self.has_a_chance(analysis, real) and \
                    not (doubted and self.rated_below_passing(analysis, real)):
                move, reason = real, lost
            else:
                move, reason = PASS, f"{lost}, and no move has a chance" if not doubted else \
                    f"{lost}, and no move is rated as good as passing"
        if move == PASS and capture_mode:
            capture = self._capture_dead(state, colour, analysis, permitted)
            if capture is not None:
                move, reason = capture, "capturing dead stones"
        if move is None:
            move, reason = PASS, "no permitted move"
        return Decision(move, analysis, reason, analysis.share_of(move))

    def _timed_search(self, state, colour, time_budget, restriction):
        """The move's search. Under a clock's budget (and no --time-per-move) a clear choice
        stops at PLANNED_SHARE of it: the search goes on, in the same tree, to the whole budget
        only while its most visited move has less than CLEAR_SHARE of the visits or another
        move, visited at least half as often, wins more often. Time saved on forced moves is
        there for the unclear ones (the clock's next budgets grow with it)."""
        seconds = self.settings.time_per_move
        if time_budget is None or seconds is not None:
            if time_budget is not None:
                seconds = min(seconds, time_budget * TIME_SAFETY)
            return self.search(state, colour, max_seconds=seconds, restriction=restriction)
        started = time.perf_counter()
        whole = time_budget * TIME_SAFETY
        analysis = self.search(state, colour, max_seconds=whole * PLANNED_SHARE,
                               restriction=restriction)
        rest = whole - (time.perf_counter() - started)
        if rest > 0 and self.settings.reuse_tree and not self.clear_choice(analysis):
            simulations = analysis.simulations
            analysis = self.search(state, colour, max_seconds=rest, restriction=restriction)
            analysis.simulations += simulations
            analysis.seconds = time.perf_counter() - started
        return analysis

    @staticmethod
    def clear_choice(analysis):
        """Whether more search would hardly change the move (_timed_search())."""
        if not analysis.total_visits or len(analysis.moves) < 2:
            return True
        visits, winrates = analysis.visits, analysis.winrates
        if visits[0] < CLEAR_SHARE * analysis.total_visits:
            return False
        rivals = visits >= 0.5 * visits[0]
        return not (winrates[rivals] > winrates[0]).any()

    @staticmethod
    def has_a_chance(analysis, move):
        """Whether the search rates move as worth playing instead of a losing pass: at least
        PLAY_ON_SHARE of the root's simulations and a win rate of CHANCE_WINRATE."""
        index = analysis.moves.index(move)
        return analysis.share_of(move) >= PLAY_ON_SHARE and \
            analysis.winrates[index] >= CHANCE_WINRATE

    @staticmethod
    def rated_below_passing(analysis, move):
        """Whether the search's win rate for move is below its win rate for passing (False when
        it did not visit passing)."""
        if PASS not in analysis.moves:
            return False
        passing = analysis.moves.index(PASS)
        return analysis.visits[passing] > 0 and \
            analysis.winrates[analysis.moves.index(move)] < analysis.winrates[passing]

    def _capture_dead(self, state, colour, analysis, permitted):
        """The most visited move (or any legal one) at a liberty of the opponent's dead stones."""
        liberties = dead_stone_liberties(state, colour, self.evaluator)
        for move in analysis.moves:
            if move in liberties and permitted(move):
                return move
        for move in sorted(liberties):
            if state.is_legal(move, colour) and permitted(move):
                return move
        return None
