"""One self-play training game over the ISN (engine/nets/network.pyx), and what training needs from it.

Reading order: `play_game()` is the loop; `_choose()` is the move policy of both procedures;
`GameRecord` is what the trainer gets back (the network inputs and outputs of every position where
a move was chosen, and the final board for Table IV's targets).

Rules of the training games (Blair 2008, section V; the issue's self-play rules):
- every legal move except filling one's own single-point eye, plus pass, is a candidate;
- positional superko: a candidate that would repeat an earlier arrangement of stones is dropped
  when drawn and the draw is repeated (cheaper than testing every candidate: repeats are rare);
- two passes in a row end the game; a pass is the only candidate when nothing else is allowed;
  otherwise `pass_rule` decides. "forced" (default) never passes while a move is left: games are
  played out, as Monte Carlo playouts are, so the open areas end carved into single-point eyes,
  every stone left on the board is alive and Table IV's targets (which count every final stone as
  alive) are exact. "better" passes exactly when the pass successor's value beats every move's:
  the natural rule for a trained net under c = s = 0.4 (a stone on a neutral point gains 0.4, a
  stone that will be captured loses), but an untrained net often finds every stone worse than
  nothing, passes at once, learns from empty boards that nothing is worth anything, and stays
  there. "boltzmann" makes the pass one more Boltzmann candidate (the same trap, by chance).
- a move cap of `move_cap_factor` x N^2 moves ends a game that does not terminate (capped).
Values come from the network's incremental successor evaluation under the training scoring
(c = s = 0.4 by default), for the player making the move; komi is the same for every successor and
so plays no part in the choice (it only enters the logged result).

Implicit recurrence: each position is evaluated with the liberty classes of its predecessor's
evaluation (the first with network.prior_liberty_weights), and its successors with its own: the
recurrence of engine/nets/evaluator.py's NetworkEvaluator, called here on the Network directly to spare
the hot loop GameState's per-candidate superko scan and the evaluation cache.
"""
import math
from dataclasses import dataclass, field

import numpy as np

from engine.rules.board import BLACK, PASS, Board, opponent
from engine.rules.game import area_score
from engine.nets import network as isn
from engine.nets import softseg

PROCEDURES = ("blair", "neurogo")
PASS_RULES = ("better", "forced", "boltzmann")


@dataclass(frozen=True)
class SelfPlayConfig:
    size: int = 9
    procedure: str = "blair"          # "blair": Boltzmann every move; "neurogo": greedy + Gibbs
    beta: float = 4.0                 # Blair's Boltzmann constant in training
    gibbs_fraction: float = 0.15      # NeuroGo: share of exploratory moves (not trained)
    gibbs_temperature: float = 4.0    # NeuroGo: T of the Gibbs sampling, P ~ exp(value / T)
    capture_value: float = 0.4        # c of the training scoring (Blair: 0.4)
    stone_value: float = 0.4          # s of the training scoring (Blair: 0.4)
    move_cap_factor: float = 3.0      # moves allowed: factor x N^2
    pass_rule: str = "forced"         # when a pass is a candidate (see PASS_RULES in the docstring)
    komi: float = 7.0                 # only for the logged result

    def __post_init__(self):
        if not 5 <= self.size <= 19:
            raise ValueError(f"board size must be from 5 to 19, not {self.size}")
        if self.procedure not in PROCEDURES:
            raise ValueError(f"procedure must be one of {PROCEDURES}, not {self.procedure!r}")
        if not self.beta >= 0.0 or not math.isfinite(self.beta):
            raise ValueError(f"beta must be a finite number >= 0, not {self.beta}")
        if not 0.0 <= self.gibbs_fraction <= 1.0:
            raise ValueError(f"gibbs_fraction must be in [0, 1], not {self.gibbs_fraction}")
        if not self.gibbs_temperature > 0.0:
            raise ValueError(f"gibbs_temperature must be > 0, not {self.gibbs_temperature}")
        if not self.capture_value >= 0.0:
            raise ValueError(f"capture value c must be >= 0, not {self.capture_value}")
        if not 0.0 <= self.stone_value <= 1.0:
            raise ValueError(f"stone value s must be in [0, 1], not {self.stone_value}")
        if self.pass_rule not in PASS_RULES:
            raise ValueError(f"pass_rule must be one of {PASS_RULES}, not {self.pass_rule!r}")
        if not self.move_cap_factor > 0.0:
            raise ValueError(f"move_cap_factor must be > 0, not {self.move_cap_factor}")

    @property
    def move_cap(self):
        return max(1, int(self.move_cap_factor * self.size * self.size))


@dataclass
class GameRecord:
    size: int
    inputs: np.ndarray            # (T, num_locs) int32: the inputs of each position before its
                                  # move (T, num_locs, max_active) for a multi-hot feature set
    outputs: np.ndarray           # (T, num_locs, num_outputs) the outputs the moves were chosen
                                  # with (7, or 17 with the rich signal; values use the first 7)
    black_to_move: np.ndarray     # (T,) bool
    explored: np.ndarray          # (T,) bool: the move was an exploratory draw (NeuroGo)
    moves: list                   # (colour, loc) per position, PASS included
    final_board: Board
    capped: bool
    score: float                  # Tromp-Taylor area score, Black - White - komi
    superko_rejections: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def length(self):
        return len(self.moves)

    @property
    def result(self):
        """'B+3.0', 'W+4.0', or '0' (jigo); capped games are scored as they stand."""
        if self.score > 0:
            return f"B+{self.score:g}"
        if self.score < 0:
            return f"W+{-self.score:g}"
        return "0"


def candidate_moves(board, colour):
    """Legal points (simple ko) that do not fill one of colour's own single-point eyes."""
    return [p for p in board.legal_moves(colour) if not board.is_eye(p, colour)]


def _choose(config, rng, values):
    """Index into values chosen by the procedure's policy, and whether it was exploratory."""
    if config.procedure == "neurogo":
        if rng.random() < config.gibbs_fraction:
            return _sample(rng, values / config.gibbs_temperature), True
        best = np.flatnonzero(values == values.max())
        return int(best[0]) if len(best) == 1 else int(rng.choice(best)), False
    return _sample(rng, config.beta * values), False


def _sample(rng, logits):
    """Draw an index with probability proportional to exp(logits) (-inf: never)."""
    shifted = np.exp(logits - logits.max())
    cumulative = np.cumsum(shifted)
    return int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))


def play_drawn_move(board, colour, candidates, values, draw, seen):
    """Draw a move (draw(values) -> (index, exploratory); candidates end with PASS) and play it,
    drawing again without any move that repeats a position in seen (positional superko; when
    every move does, pass). values is changed in place; seen gets the new position.
    Returns (move, exploratory, superko rejections)."""
    rejections = 0
    while True:
        if values.max() == -np.inf:                       # every move broke superko
            index, exploratory, move = len(candidates) - 1, False, PASS
        else:
            index, exploratory = draw(values)
            move = candidates[index]
        board.play(move, colour)
        if move == PASS:
            return move, exploratory, rejections
        if board.hash in seen:
            board.undo()
            values[index] = -np.inf
            rejections += 1
            continue
        seen.add(board.hash)
        return move, exploratory, rejections


def play_game(network, config, rng):
    """Play one self-play game with network (engine.nets.network.Network); rng: numpy Generator."""
    size = config.size
    board = Board(size)
    num_locs = board.num_locs
    c, s = config.capture_value, config.stone_value
    seen = {board.hash}
    # a cell's inputs: one index (one-hot sets), or its active inputs padded with -1 (multi-hot)
    input_shape = (network.max_active,) if network.multi_hot else ()
    weights = isn.prior_liberty_weights(num_locs)
    colour = BLACK
    passes = 0
    inputs, outputs, black_to_move, explored, moves = [], [], [], [], []
    superko_rejections = 0
    capped = False
    while passes < 2:
        if len(moves) >= config.move_cap:
            capped = True
            break
        position_outputs, position_inputs, _, _ = network.evaluate_board(board, colour, weights, c, s)
        weights = isn.liberty_weights(position_outputs, colour)     # this position's own classes
        candidates = candidate_moves(board, colour)
        pass_value, values = network.successor_values(board, colour, weights, candidates, c, s)
        candidates.append(PASS)
        values = np.append(values, pass_value)
        pass_index = len(candidates) - 1
        if config.pass_rule != "boltzmann" and pass_index > 0:
            if config.pass_rule == "better" and pass_value > values[:pass_index].max():
                values[:pass_index] = -np.inf             # passing beats every move
            else:
                values[pass_index] = -np.inf              # a move is left and passing is not better
        move, exploratory, rejected = play_drawn_move(
            board, colour, candidates, values, lambda v: _choose(config, rng, v), seen)
        superko_rejections += rejected
        passes = passes + 1 if move == PASS else 0
        inputs.append(position_inputs)
        outputs.append(position_outputs)
        black_to_move.append(colour == BLACK)
        explored.append(exploratory)
        moves.append((colour, move))
        colour = opponent(colour)
    return GameRecord(
        size=size,
        inputs=np.array(inputs, dtype=np.int32).reshape((len(inputs), num_locs) + input_shape),
        outputs=np.array(outputs).reshape(len(outputs), num_locs, network.num_outputs),
        black_to_move=np.array(black_to_move, dtype=bool),
        explored=np.array(explored, dtype=bool),
        moves=moves,
        final_board=board,
        capped=capped,
        score=area_score(board, config.komi),
        superko_rejections=superko_rejections,
    )


def play_softseg_game(network, config, rng):
    """One self-play game with NeuroGo's soft-segmentation network (engine/nets/softseg.pyx) under
    the paper's rules (section 2.1): no move into one's own single-point eye, no pass until every
    point is alive (or no other move is left), positional superko as above. Moves by
    config.procedure's policy over the successors' scores in the paper's unit, the sum of the
    evaluation layer (half the expected area margin, up to a constant that no choice sees): the
    Gibbs moves' P ~ exp(score / T) with T = 4 as in section 3.1. Komi plays no part.
    The record's inputs are the encoded positions (SoftSegNetwork.encode), its outputs empty
    (NeuroGo's procedure recomputes them while it trains), and extra["observed"] the signal
    present on the board at each position (softseg.events_of: real-Black frame)."""
    board, game = _play_under_section_2_1(network, config, rng, network.encode)
    return GameRecord(
        size=config.size,
        inputs=np.array(game["inputs"], dtype=np.int32).reshape(
            (len(game["inputs"]), board.num_locs, network.input_width)),
        outputs=np.zeros((len(game["inputs"]), 0, 0)),
        black_to_move=np.array(game["black_to_move"], dtype=bool),
        explored=np.array(game["explored"], dtype=bool),
        moves=game["moves"],
        final_board=board,
        capped=game["capped"],
        score=area_score(board, config.komi),
        superko_rejections=game["superko_rejections"],
        extra={"observed": np.array(game["observed"], dtype=np.int8).reshape(
            (len(game["observed"]), board.num_locs, softseg.NUM_OUTPUT_COLUMNS))},
    )


def play_unitgraph_game(network, config, rng):
    """One self-play game with NeuroGo's network over units (engine/nets/unitnet.pyx), under the
    rules of play_softseg_game() (no own-eye fills, no pass before every point is alive, the
    moves' scores half the expected area margin). The unit net rebuilds each position from the
    board, so the record's inputs are the moves, (T, 2) int32 (colour, loc; PASS -1), from
    which train_game() replays the game; extra["observed"] is each position's live points
    (real-Black frame: 1 alive for Black, 0 for White, -1 neither), NeuroGo 3's rich signal for
    an evaluation output, used when the run asks for it."""
    board, game = _play_under_section_2_1(network, config, rng, None)
    observed = np.array(game["observed"], dtype=np.int8).reshape(
        (len(game["observed"]), board.num_locs, softseg.NUM_OUTPUT_COLUMNS))
    return GameRecord(
        size=config.size,
        inputs=np.array([(colour, move) for colour, move in game["moves"]],
                        dtype=np.int32).reshape(len(game["moves"]), 2),
        outputs=np.zeros((len(game["moves"]), 0, 0)),
        black_to_move=np.array(game["black_to_move"], dtype=bool),
        explored=np.array(game["explored"], dtype=bool),
        moves=game["moves"],
        final_board=board,
        capped=game["capped"],
        score=area_score(board, config.komi),
        superko_rejections=game["superko_rejections"],
        extra={"observed": np.ascontiguousarray(observed[:, :, softseg.OUTPUT_EVAL])},
    )


def _play_under_section_2_1(network, config, rng, encode):
    """The game loop of play_softseg_game() and play_unitgraph_game(): (final board, lists of
    the game) with encode(board, colour) the per-position inputs (None: none)."""
    size = config.size
    board = Board(size)
    seen = {board.hash}
    colour = BLACK
    passes = 0
    game = {"inputs": [], "observed": [], "black_to_move": [], "explored": [], "moves": [],
            "superko_rejections": 0, "capped": False}
    while passes < 2:
        if len(game["moves"]) >= config.move_cap:
            game["capped"] = True
            break
        if encode is not None:
            game["inputs"].append(encode(board, colour))
        events = softseg.events_of(board)
        everything_alive = bool((events[board.points(), softseg.OUTPUT_EVAL] >= 0).all())
        eyes = softseg.own_eyes(board, colour)
        candidates = [p for p in board.legal_moves(colour) if not eyes[p]]
        pass_value, values = network.successor_values(board, colour, candidates)
        candidates.append(PASS)
        values = np.append(values, pass_value)
        pass_index = len(candidates) - 1
        if pass_index > 0 and not everything_alive:
            values[pass_index] = -np.inf
        move, exploratory, rejected = play_drawn_move(
            board, colour, candidates, values, lambda v: _choose(config, rng, v / 2.0), seen)
        game["superko_rejections"] += rejected
        passes = passes + 1 if move == PASS else 0
        game["observed"].append(events)
        game["black_to_move"].append(colour == BLACK)
        game["explored"].append(exploratory)
        game["moves"].append((colour, move))
        colour = opponent(colour)
    return board, game
