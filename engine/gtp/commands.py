"""kosumi's GTP commands: `KosumiEngine`, the game a controller drives, over the protocol of
protocol.py.

Reading order: __init__ (the state a controller can change), then the commands in GTP spec order
(setup, core play with `cmd_genmove()` -> `_choose()` -> the player, tournament, regression,
debug), then the extensions, then the analysis commands: GoGui's, and the streamed ones for
Sabaki and Lizzie, then the parameters (the players' settings at run time, params.py). The
analysis commands get their analysis here and leave the writing of it to formats.py; colours and
vertices as arguments come from goargs.py, SGF files from sgffile.py. Every player is a
MovePlayer (engine/play/player.py): the commands ask nothing else of it.
"""
import logging
import time

from engine import __version__
from engine.scoring import deadstones
from engine.scoring.csa import DOUBT_REASONS
from engine.rules.board import BLACK, PASS, WHITE, IllegalMove
from engine.rules.coords import format_vertex
from engine.rules.game import GameState, Rules, fixed_handicap_points
from engine.play.player import RESIGN, state_for
from engine.play.policy_player import PolicyPlayer
from engine.play.timecontrol import TimeControl
from engine.gtp.protocol import (STREAM, STREAM_UNTIL_INPUT, FloatArg, GtpEngineBase, GtpError,
                                 IntArg, OptionalArg, RestArg, WordArg, gtp_command, syntax_error)
from engine.gtp.goargs import (BAD_VERTEX_LIST, BOARD_NOT_EMPTY, CANNOT_LOAD, CANNOT_UNDO, COLOUR,
                               ILLEGAL_MOVE, INVALID_NUMBER_OF_STONES, POINT, UNACCEPTABLE_SIZE,
                               VERTEX, colour_letter, colour_word)
from engine.gtp.formats import (black_view, chosen_move_gfx, connectivity_gfx,
                                gogui_analyze_commands, info_line, move_values_gfx,
                                move_values_pspairs, ownership_gfx, parse_analysis_options,
                                policy_gfx, policy_pspairs, score_text, search_gfx)
from engine.gtp.params import ParameterTable
from engine.gtp.sgffile import game_to_sgf, load_sgf, parse_until

log = logging.getLogger("kosumi.gtp")

MIN_SIZE, MAX_SIZE = 2, 25
RULE_SETS = {"chinese": "area", "japanese": "territory"}
PONDER_STEP_SECONDS = 0.1       # a pondering search's step: the longest wait a command has


class KosumiEngine(GtpEngineBase):
    """kosumi's GTP commands. The engine owns the game (a GameState), the player, the clocks."""

    engine_name = "kosumi"

    def __init__(self, evaluator, player, komi=7.0, rules="chinese", size=19, one_ply=None,
                 searcher=None, parameters=None, policy=None):
        """player chooses the moves (a MovePlayer: 1-ply, search or policy); one_ply, the 1-ply
        player that the move value commands show (default: player, which must then be a 1-ply
        Player); searcher, a function giving the SearchPlayer of kosumi-search (called on its
        first use; default: a search over evaluator with the default settings); parameters, the
        ParameterTable of the players' settings (default: none); policy, a function giving the
        policy net (MovePredictor, or None) that kosumi-policy shows (default: kosumi-search's
        prior)."""
        super().__init__()
        if rules not in RULE_SETS:
            raise ValueError(f"unknown rules {rules!r}; expected one of {', '.join(RULE_SETS)}")
        self.engine_version = __version__
        self.evaluator = evaluator
        self.player = player
        self.one_ply = player if one_ply is None else one_ply

        self.scoring = RULE_SETS[rules]
        self.rules_name = rules
        self.komi = float(komi)
        self.time_control = TimeControl()
        self._make_searcher = searcher or self._default_searcher
        self._policy = policy or (lambda: self._searcher().predictor)
        self._analysis_searcher = None
        self._ponder_pending = False   # the engine has just moved: ponder_steps() may search on
        self.parameters = parameters or ParameterTable()
        self._new_game(size)

    # --- state helpers --------------------------------------------------------------------------

    def _rules(self):
        return Rules(ko="positional", suicide=False, scoring=self.scoring, komi=self.komi)

    def _new_game(self, size):
        self.size = size
        self.state = GameState(size, self._rules())
        self.handicap_stones = 0       # leading history entries that are handicap placements
        self.setup = {BLACK: [], WHITE: []}   # stones loadsgf set up before the history starts
        self.time_control.reset_clocks()
        self._new_game_for_players()

    def _new_game_for_players(self):
        self.player.new_game()
        if self._analysis_searcher is not None:      # kosumi-search's trees are of the last game
            self._analysis_searcher.new_game()

    def _board_is_empty(self):
        board = self.state.board
        return not self.state.history and not board.stones(BLACK) and not board.stones(WHITE)

    def _vertex(self, loc):
        return format_vertex(loc, self.size)

    def _vertices(self, locs):
        return " ".join(self._vertex(p) for p in sorted(locs))

    def _play(self, loc, colour, tolerant=False):
        try:
            return self.state.play(loc, colour, tolerant)
        except IllegalMove:
            raise GtpError(ILLEGAL_MOVE) from None

    # --- setup (GTP spec 6.3.1, 6.3.2) ----------------------------------------------------------

    @gtp_command("boardsize", WordArg())
    def cmd_boardsize(self, size_text):
        """Set the board size (2..25) and clear the board; komi is kept."""
        value = IntArg().parse(size_text, self)
        if not MIN_SIZE <= value <= MAX_SIZE:
            raise GtpError(UNACCEPTABLE_SIZE)
        self._new_game(value)

    @gtp_command("clear_board")
    def cmd_clear_board(self):
        """Empty the board; size, komi and time settings are kept, the clocks restart."""
        self._new_game(self.size)

    @gtp_command("komi", FloatArg())
    def cmd_komi(self, komi):
        """Set komi; it survives boardsize and clear_board."""
        self.komi = komi
        self.state.rules = self._rules()

    @gtp_command("fixed_handicap", IntArg())
    def cmd_fixed_handicap(self, count):
        """Place the GTP spec's fixed handicap stones; returns their vertices."""
        if not self._board_is_empty():
            raise GtpError(BOARD_NOT_EMPTY)
        try:
            points = fixed_handicap_points(self.size, count)
        except ValueError:
            raise GtpError(INVALID_NUMBER_OF_STONES) from None
        return self._place_handicap(points)

    @gtp_command("place_free_handicap", IntArg())
    def cmd_place_free_handicap(self, count):
        """Place `count` handicap stones where kosumi likes them; returns their vertices."""
        if not self._board_is_empty():
            raise GtpError(BOARD_NOT_EMPTY)
        if not 2 <= count <= self.size * self.size - 1:
            raise GtpError(INVALID_NUMBER_OF_STONES)
        try:
            points = fixed_handicap_points(self.size, count)
        except ValueError:   # no standard pattern: pick the points Black values most, one by one
            points = self._greedy_handicap(count)
        return self._place_handicap(points)

    def _greedy_handicap(self, count):
        trial = GameState(self.size, self._rules())
        points = []
        for _ in range(count):
            # the 1-ply values, whatever the player (a search's analysis ranks by visits)
            analysis = self.one_ply.analyse(trial, BLACK)
            choices = [(value, move) for move, value, _ in analysis.ranked() if move != PASS]
            if not choices:
                break
            _, move = max(choices)
            trial.play(move, BLACK)
            points.append(move)
        return points

    @gtp_command("set_free_handicap", RestArg())
    def cmd_set_free_handicap(self, vertex_texts):
        """Black handicap stones on the given vertices; White moves next."""
        if not self._board_is_empty():
            raise GtpError(BOARD_NOT_EMPTY)
        try:
            points = [POINT.parse(text, self) for text in vertex_texts]
        except GtpError:
            raise GtpError(BAD_VERTEX_LIST) from None
        if len(points) < 2 or len(set(points)) != len(points) or \
                len(points) > self.size * self.size - 1:
            raise GtpError(BAD_VERTEX_LIST)
        self._place_handicap(points)

    def _place_handicap(self, points):
        self.state.place_handicap(points)
        self.handicap_stones = len(points)
        return self._vertices(points)

    # --- core play (6.3.3) ----------------------------------------------------------------------

    @gtp_command("play", COLOUR, VERTEX)
    def cmd_play(self, colour, loc):
        """Play a move (any colour, any order: setup stones come as consecutive plays)."""
        # The controller referees its players' moves (GNU Go knows only simple ko), so a
        # repetition or a multi-stone suicide is played, as KataGo's play does; kosumi's own
        # moves keep its rules.
        broken = self._play(loc, colour, tolerant=True)
        if broken:
            log.warning("play %s %s breaks kosumi's rules (%s): played, as the controller asks",
                        colour_letter(colour), self._vertex(loc), broken)

    @gtp_command("genmove", COLOUR)
    def cmd_genmove(self, colour):
        """Choose a move for colour, play it and return it (or `resign`)."""
        return self._genmove(colour, cleanup=False)

    def _genmove(self, colour, cleanup, play=True):
        """The chosen move as GTP text; played (and its time booked) unless play is False, in
        which case nothing changes at all, the player's random state included."""
        decision, started = self._choose(colour, cleanup, dry_run=not play)
        if play:
            self._commit(colour, decision, started)
        return self._move_text(decision.move)

    def _choose(self, colour, cleanup, dry_run, restriction=None):
        started = time.monotonic()
        budget = self.time_control.budget(colour, self._empty_points())
        decision = self.player.choose(self.state, colour, cleanup=cleanup, time_budget=budget,
                                      dry_run=dry_run, restriction=restriction)
        return decision, started

    def _commit(self, colour, decision, started):
        """Play the decision (resigning plays nothing) and book the time since `started`."""
        if decision.move != RESIGN:
            self._play(decision.move, colour)
        self.time_control.charge(colour, time.monotonic() - started)
        self._ponder_pending = decision.move != RESIGN

    def ponder_steps(self):
        """The search on the opponent's time (SearchSettings.ponder) right after the engine's own
        move: a generator that the command loop steps (PONDER_STEP_SECONDS of search each) until
        the next input line arrives, in the tree the next search keeps; None when there is
        nothing to ponder (another command last, pondering off, a player that does not search,
        the game over)."""
        pending, self._ponder_pending = self._ponder_pending, False
        settings = getattr(self.player, "settings", None)
        if not pending or not getattr(settings, "ponder", False) or \
                self.state.consecutive_passes >= 2:
            return None
        state = self.state.copy()
        return self.player.analysis_stream(state, state.to_move, PONDER_STEP_SECONDS)

    def _move_text(self, move):
        return move if isinstance(move, str) else self._vertex(move)

    def _empty_points(self):
        return self.state.board.empty_points

    @gtp_command("undo")
    def cmd_undo(self):
        """Take back the last move."""
        try:
            self.state.undo()
        except IndexError:
            raise GtpError(CANNOT_UNDO) from None
        self.handicap_stones = min(self.handicap_stones, len(self.state.history))

    # --- tournament (6.3.4) ---------------------------------------------------------------------

    @gtp_command("time_settings", FloatArg(0), FloatArg(0), IntArg(0))
    def cmd_time_settings(self, main_time, byoyomi_time, byoyomi_stones):
        """Canadian byo-yomi (0 byo-yomi time: absolute; byo-yomi time with 0 stones: no limit)."""
        self.time_control.set_gtp(main_time, byoyomi_time, byoyomi_stones)

    @gtp_command("time_left", COLOUR, FloatArg(0), IntArg(0))
    def cmd_time_left(self, colour, seconds, stones):
        """Time left for colour: main time if stones is 0, else byo-yomi with that many stones."""
        self.time_control.update_from_time_left(colour, seconds, stones)

    @gtp_command("final_score")
    def cmd_final_score(self):
        """Score with dead stones removed (Benson, then CSA*, the learned classifier): B+n, W+n or 0."""
        assessment = deadstones.assess(self.state, self.evaluator, review=True)
        score = deadstones.format_score(deadstones.assessed_score(self.state, assessment))
        if assessment.doubtful:
            # On stderr, which GoGui's shell shows: the reply itself has no room for it.
            log.warning("final_score %s is doubtful for CSA* (%s): check the dead stones",
                        score, DOUBT_REASONS)
        return score

    @gtp_command("final_status_list", WordArg(("alive", "dead", "seki")))
    def cmd_final_status_list(self, status):
        """Stones with that status, one chain per line."""
        assessment = deadstones.assess(self.state, self.evaluator)
        return "\n".join(self._vertices(chain.stones)
                         for chain in assessment.chains_with(status))

    # --- regression (6.3.5) ---------------------------------------------------------------------

    @gtp_command("loadsgf", WordArg(), OptionalArg(WordArg()))
    def cmd_loadsgf(self, filename, until_text):
        """FILE [N | VERTEX]: load an SGF file's main line, up to (not including) move N or the
        first move at VERTEX; kept as it was on any failure."""
        until = None
        if until_text is not None:
            try:
                until = parse_until(until_text)
            except ValueError as error:
                raise syntax_error(str(error)) from None
        try:
            loaded = load_sgf(filename, until, self.scoring, self.komi)
        except (OSError, ValueError) as error:
            raise GtpError(f"{CANNOT_LOAD}: {error}") from None
        self.size = loaded.state.size
        self.komi = loaded.state.rules.komi
        self.scoring = loaded.scoring
        self.rules_name = next(name for name, scoring in RULE_SETS.items()
                               if scoring == loaded.scoring)
        self.state = loaded.state
        self.handicap_stones = loaded.handicap_stones
        self.setup = loaded.setup
        self.time_control.reset_clocks()
        self._new_game_for_players()

    @gtp_command("reg_genmove", COLOUR)
    def cmd_reg_genmove(self, colour):
        """The move genmove would choose now (the same random draw), without playing it."""
        return self._genmove(colour, cleanup=False, play=False)

    # --- debug (6.3.6) --------------------------------------------------------------------------

    @gtp_command("showboard")
    def cmd_showboard(self):
        """The board diagram (X black, O white), captures and the side to move."""
        board = self.state.board
        lines = str(board).splitlines()
        lines.append(f"Black (X) captured {board.captures(BLACK)}, White (O) captured "
                     f"{board.captures(WHITE)}; komi {self.komi:g}; {colour_word(self.state.to_move)} "
                     f"to move")
        return "\n" + "\n".join(lines)

    # --- extensions ---------------------------------------------------------------------------

    @gtp_command("kgs-genmove_cleanup", COLOUR)
    def cmd_kgs_genmove_cleanup(self, colour):
        """genmove that captures every dead opponent stone before it passes."""
        return self._genmove(colour, cleanup=True)

    @gtp_command("kgs-time_settings", WordArg(("none", "absolute", "byoyomi", "canadian")),
                 RestArg(FloatArg(0)))
    def cmd_kgs_time_settings(self, system, numbers):
        """none | absolute MAIN | byoyomi MAIN PERIOD PERIODS | canadian MAIN TIME STONES."""
        expected = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}[system]
        if len(numbers) != expected:
            raise syntax_error(f"{system} takes {expected} numbers")
        control = self.time_control
        if system == "none":
            control.set_none()
        elif system == "absolute":
            control.set_absolute(numbers[0])
        else:
            main_time, period_time, count = numbers
            if count != int(count):
                raise syntax_error(f"{system} needs a whole number of periods or stones")
            if system == "byoyomi":
                control.set_japanese(main_time, period_time, int(count))
            elif period_time > 0 and count > 0:
                control.set_canadian(main_time, period_time, int(count))
            else:
                control.set_absolute(main_time)

    @gtp_command("cputime")
    def cmd_cputime(self):
        """CPU seconds used by the engine process."""
        return f"{time.process_time():.3f}"

    @gtp_command("printsgf", OptionalArg(WordArg()))
    def cmd_printsgf(self, filename):
        """The game as SGF (to the file if one is named, else in the reply)."""
        text = game_to_sgf(self)
        if filename is None:
            return text
        try:
            with open(filename, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as error:
            raise GtpError(f"cannot write file: {error}") from None

    @gtp_command("is_legal", COLOUR, VERTEX)
    def cmd_is_legal(self, colour, loc):
        """1 if colour may play there now (superko included), else 0."""
        return "1" if self.state.is_legal(loc, colour) else "0"

    @gtp_command("list_stones", COLOUR)
    def cmd_list_stones(self, colour):
        """The vertices of colour's stones."""
        return self._vertices(self.state.board.stones(colour))

    # --- analysis: GoGui ----------------------------------------------------------------------

    @gtp_command("gogui-analyze_commands")
    def cmd_gogui_analyze_commands(self):
        """GoGui's analysis menu: type/label/command per line."""
        try:
            has_policy = self._policy() is not None
        except GtpError:        # the search's nets do not load: kosumi-policy will say why
            has_policy = False
        return gogui_analyze_commands(self.evaluator.has_connectivity, has_policy)

    @gtp_command("kosumi-ownership")
    def cmd_kosumi_ownership(self):
        """gfx: the net's predicted ownership of every point (INFLUENCE, +1 black .. -1 white)."""
        return ownership_gfx(self.state, self.evaluator.evaluate(self.state))

    @gtp_command("kosumi-connectivity", POINT, OptionalArg(COLOUR))
    def cmd_kosumi_connectivity(self, loc, colour):
        """gfx: the net's connection values for a colour from a point to every point."""
        if not self.evaluator.has_connectivity:
            raise GtpError("the connectivity map needs a soft-segmentation net (--weights)")
        if colour is None:      # a stone's own colour; on an empty point, the side to move's
            stone = self.state.board.get(loc)
            colour = stone if stone in (BLACK, WHITE) else self.state.to_move
        connection = self.evaluator.connectivity(self.state, loc, colour)
        return connectivity_gfx(self.size, loc, colour, connection)

    @gtp_command("kosumi-move_values", COLOUR)
    def cmd_kosumi_move_values(self, colour):
        """gfx: the 1-ply value (points, for colour) of every legal move as a label."""
        return move_values_gfx(self.size, self.one_ply.analyse(self.state, colour), colour)

    @gtp_command("kosumi-move_values_list", COLOUR)
    def cmd_kosumi_move_values_list(self, colour):
        """pspairs: vertex and 1-ply value of every legal move, best first."""
        return move_values_pspairs(self.size, self.one_ply.analyse(self.state, colour))

    @gtp_command("kosumi-chosen_move", COLOUR)
    def cmd_kosumi_chosen_move(self, colour):
        """gfx: the move genmove would play now, with its probability and value."""
        decision, _ = self._choose(colour, cleanup=False, dry_run=True)
        return chosen_move_gfx(colour, decision, self._move_text(decision.move))

    @gtp_command("kosumi-search", COLOUR)
    def cmd_kosumi_search(self, colour):
        """gfx: a search of the position for colour: visits of the root moves as labels, the
        principal variation, and the root's win rate (the engine's search settings: the search
        player itself with --search mcts, else one built alike)."""
        return search_gfx(self.size, self._searcher().search(self.state, colour), colour)

    @gtp_command("kosumi-policy", COLOUR)
    def cmd_kosumi_policy(self, colour):
        """gfx: the policy net's probability of each of colour's moves as a heat map, percent
        labels and the likeliest move (the net the engine follows: the policy player's, or the
        search's prior)."""
        predictor, probabilities = self._policy_probabilities(colour)
        return policy_gfx(self.size, probabilities, colour, predictor.description())

    @gtp_command("kosumi-policy_list", COLOUR)
    def cmd_kosumi_policy_list(self, colour):
        """pspairs: vertex and percent of each of colour's moves by the policy net, likeliest
        first."""
        return policy_pspairs(self.size, self._policy_probabilities(colour)[1])

    def _policy_probabilities(self, colour):
        """(the policy net, its probabilities of colour's moves here)."""
        predictor = self._policy()
        if predictor is None:
            raise GtpError("no policy net: give one with --policy PATH (--policy none and "
                           "--policy-prior off leave the engine without)")
        return predictor, predictor.probabilities(state_for(self.state, colour), colour)

    def _searcher(self):
        if self._analysis_searcher is None:
            self._analysis_searcher = self._make_searcher()
        return self._analysis_searcher

    def _default_searcher(self):
        from engine.play.search_player import SearchPlayer
        return SearchPlayer(self.evaluator)

    @gtp_command("kosumi-score_estimate")
    def cmd_kosumi_score_estimate(self):
        """The net's expected final score and the count with its dead stones removed."""
        evaluation = self.evaluator.evaluate(self.state)
        assessment = deadstones.assess(self.state, self.evaluator, evaluation.ownership)
        count = deadstones.assessed_score(self.state, assessment)
        return (f"expected {score_text(black_view(self.state, evaluation.value))}, counted now "
                f"{deadstones.format_score(count)} with {len(assessment.dead)} dead stones")

    # --- analysis: Sabaki, Lizzie (KataGo's and Leela Zero's streamed formats) ----------------

    @gtp_command("kata-analyze", RestArg(), kind=STREAM_UNTIL_INPUT)
    def cmd_kata_analyze(self, words):
        """[colour] [interval] [key value ...]: KataGo info lines until the next command."""
        colour, options = parse_analysis_options(words, "kata", self.state.to_move, self)
        yield from self._analysis_lines(colour, "kata", options)

    @gtp_command("lz-analyze", RestArg(), kind=STREAM_UNTIL_INPUT)
    def cmd_lz_analyze(self, words):
        """[colour] [interval] [key value ...]: Leela Zero info lines until the next command."""
        colour, options = parse_analysis_options(words, "lz", self.state.to_move, self)
        yield from self._analysis_lines(colour, "lz", options)

    @gtp_command("kata-genmove_analyze", RestArg(), kind=STREAM)
    def cmd_kata_genmove_analyze(self, words):
        """genmove that also streams KataGo info lines, then `play <vertex>`."""
        yield from self._genmove_analyze(words, "kata")

    @gtp_command("lz-genmove_analyze", RestArg(), kind=STREAM)
    def cmd_lz_genmove_analyze(self, words):
        """genmove that also streams Leela Zero info lines, then `play <vertex>`."""
        yield from self._genmove_analyze(words, "lz")

    def _genmove_analyze(self, words, dialect):
        colour, options = parse_analysis_options(words, dialect, self.state.to_move, self)
        decision, started = self._choose(colour, cleanup=False, dry_run=False,
                                         restriction=options["restriction"])
        # The info line describes the position before the move, so it is made first. The policy
        # player decides by its net alone; its analysis (the net's probabilities beside the 1-ply
        # values) is made here for the stream only, so that plain genmove stays one net pass.
        analysis = decision.analysis
        if analysis is None and isinstance(self.player, PolicyPlayer):
            analysis = self.player.analyse(self.state, colour, restriction=options["restriction"])
        info = None if analysis is None else self._info_line(analysis, dialect, options)
        self._commit(colour, decision, started)
        if info is not None:
            yield info
        yield f"play {self._move_text(decision.move)}"

    def _analysis_lines(self, colour, dialect, options):
        """The search player ponders, a line every interval, until the next command arrives;
        the 1-ply player's analysis is one line."""
        for analysis in self.player.analysis_stream(self.state, colour,
                                                    options["interval"] / 100.0,
                                                    options["restriction"]):
            yield self._info_line(analysis, dialect, options)

    def _info_line(self, analysis, dialect, options):
        return info_line(analysis, dialect, options, self.state, self.evaluator)

    # --- parameters: the players' settings at run time (params.py) -------------------------------

    @gtp_command("kosumi-list-params")
    def cmd_kosumi_list_params(self):
        """`name value` of every parameter (the players' and the search's settings)."""
        return self.parameters.listing()

    @gtp_command("kosumi-get-param", WordArg())
    def cmd_kosumi_get_param(self, name):
        """NAME: the parameter's value."""
        return self.parameters.get(name)

    @gtp_command("kosumi-set-param", WordArg(), WordArg())
    def cmd_kosumi_set_param(self, name, value):
        """NAME VALUE: change a parameter from the next move or search on."""
        self.parameters.set(name, value)

    @gtp_command("kosumi-param", RestArg())
    def cmd_kosumi_param(self, words):
        """GoGui's param type: no arguments lists `[type] name value`, NAME VALUE sets one."""
        if not words:
            return self.parameters.gogui_listing()
        if len(words) != 2:
            raise syntax_error("kosumi-param takes no arguments (the list) or NAME VALUE")
        self.parameters.set(*words)
