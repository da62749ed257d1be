"""The test oracle of the ladder reader: a plain Python reader, as short as the reading it
defines, that test_ladder.py (beside it, in tests/unit/tactics/) checks engine/tactics/ladder.pyx
against on many positions.
Slow (Python lists of liberties, every move played); nothing in engine/ uses it.

The reading: the attacker plays only ataris (at the chain's liberties), the defender extends at
its liberty or captures an attacking chain in atari, and with two liberties may also play
elsewhere. Up to max_depth moves and MAX_LADDER_NODES positions; unresolved counts as escaped.
The ko point at the root is the board's.
"""
from engine.rules.board import BLACK, WHITE, opponent

MAX_LADDER_NODES = 5000   # real ladders read in tens to a few hundred nodes; caps pathological trees


class _LadderBudgetExhausted(Exception):
    pass


class _LadderReader:
    """Reads a ladder on the board itself with play/undo (no copies). The defending chain is
    identified by one of its stones, which stays put until the chain is captured."""

    def __init__(self, board, stone, max_depth):
        self.board = board
        self.stone = stone
        self.defender = board.get(stone)
        self.attacker = opponent(self.defender)
        self.max_depth = max_depth
        self.nodes = 0

    def _visit(self):
        self.nodes += 1
        if self.nodes > MAX_LADDER_NODES:
            raise _LadderBudgetExhausted

    def attacker_captures(self, depth):
        """Attacker to move: can the chain be captured by a sequence of ataris?"""
        self._visit()
        board = self.board
        liberties = board.liberties(self.stone)
        if len(liberties) == 1:
            return board.is_legal(liberties[0], self.attacker)
        if len(liberties) > 2 or depth >= self.max_depth:
            return False
        for liberty in liberties:
            if not board.is_legal(liberty, self.attacker):
                continue
            board.play(liberty, self.attacker)
            try:
                captured = self.defender_loses(depth + 1)
            finally:
                board.undo()
            if captured:
                return True
        return False

    def _escape_moves(self, liberties):
        """The chain's liberties, then the last liberty of every adjacent attacking chain in atari."""
        board = self.board
        stride = board.stride
        moves = list(liberties)
        checked = set()
        for stone in board.chain(self.stone):
            for q in (stone - stride, stone - 1, stone + 1, stone + stride):
                if board.get(q) != self.attacker or q in checked:
                    continue
                attacking_chain = board.chain(q)
                checked.update(attacking_chain)
                attacking_liberties = board.liberties(q)
                if len(attacking_liberties) == 1 and attacking_liberties[0] not in moves:
                    moves.append(attacking_liberties[0])
        return moves

    def defender_loses(self, depth):
        """Defender to move: is the chain captured whatever the defender does (extend at a
        liberty, capture an attacking chain in atari, or, with two liberties, play elsewhere)?"""
        self._visit()
        board = self.board
        liberties = board.liberties(self.stone)
        if len(liberties) > 2 or depth >= self.max_depth:
            return False
        if len(liberties) == 2 and not self.attacker_captures(depth):
            return False        # even doing nothing here saves the chain
        for move in self._escape_moves(liberties):
            if not board.is_legal(move, self.defender):
                continue
            board.play(move, self.defender)
            try:
                captured = self.attacker_captures(depth + 1)
            finally:
                board.undo()
            if not captured:
                return False
        return True


def ladder_captured(board, loc, attacker_moves_first=True, max_depth=100):
    """Whether the chain at loc is captured in a ladder: the attacker plays only ataris (at the
    chain's liberties), the defender extends at its liberty or captures an attacking chain in
    atari. attacker_moves_first=False gives the defender the first move. Chains with more than
    two liberties are never captured in a ladder. max_depth bounds the moves read; a ladder
    still unresolved at that depth (or after MAX_LADDER_NODES positions) counts as escaped.
    The board is played on and restored exactly (same stones, ko, hash and undo history)."""
    if board.get(loc) not in (BLACK, WHITE):
        raise ValueError(f"no stone at point {loc}")
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0:
        raise ValueError(f"max_depth must be a non-negative integer, not {max_depth!r}")
    reader = _LadderReader(board, loc, max_depth)
    try:
        if attacker_moves_first:
            return reader.attacker_captures(0)
        return reader.defender_loses(0)
    except _LadderBudgetExhausted:
        return False
