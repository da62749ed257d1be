"""Which moves a player may consider: the `avoid` and `allow` of KataGo's and Leela Zero's
analysis commands (`kata-analyze b avoid w D4,E5 3`, `lz-analyze ... allow b C3,C4 1`).

A rule names a colour, a set of moves (locs; PASS is a move like any other) and an until-depth.
Depth 1 is the move about to be played, depth 2 the reply, and so on; a rule binds its colour's
moves at every depth up to and including its until-depth, as in KataGo (its search skips a move
when the moves already made below the root number fewer than the until-depth) and Leela Zero
(until-move counted from the current move). So `avoid b D4 1` bars D4 only for Black's move now.

- an `avoid` rule bars its moves;
- an `allow` rule bars every move it does not list, pass included unless listed (KataGo fills its
  table for every location, the pass location too, then clears the listed ones). When several
  allow rules of a colour are active at a depth, a move listed in any of them is permitted.

The GTP layer parses the rules (engine/gtp/formats.py) and checks the combinations each dialect
accepts; this module only answers `permits()`. Players take it as `restriction=None` (no rule).
"""
from dataclasses import dataclass

from engine.rules.board import BLACK, WHITE

AVOID = "avoid"
ALLOW = "allow"


@dataclass(frozen=True)
class MoveRule:
    kind: str              # AVOID or ALLOW
    colour: int            # BLACK or WHITE: the rule binds this colour's moves only
    moves: frozenset       # locs, PASS allowed
    until_depth: int       # >= 1

    def __post_init__(self):
        if self.kind not in (AVOID, ALLOW):
            raise ValueError(f"a move rule is {AVOID!r} or {ALLOW!r}, not {self.kind!r}")
        if self.colour not in (BLACK, WHITE):
            raise ValueError(f"a move rule needs BLACK or WHITE, not {self.colour!r}")
        if isinstance(self.until_depth, bool) or not isinstance(self.until_depth, int) or \
                self.until_depth < 1:
            raise ValueError(f"until-depth must be a whole number >= 1, not {self.until_depth!r}")
        object.__setattr__(self, "moves", frozenset(self.moves))


@dataclass(frozen=True)
class MoveRestriction:
    """A set of avoid/allow rules. `permits(colour, loc, depth)` is the whole interface."""
    rules: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "rules", tuple(self.rules))
        for rule in self.rules:
            if not isinstance(rule, MoveRule):
                raise ValueError(f"not a MoveRule: {rule!r}")

    def permits(self, colour, loc, depth=1):
        """Whether colour may play loc (a loc or PASS) `depth` moves from now (1 = now)."""
        active = [rule for rule in self.rules
                  if rule.colour == colour and depth <= rule.until_depth]
        if any(rule.kind == AVOID and loc in rule.moves for rule in active):
            return False
        allows = [rule for rule in active if rule.kind == ALLOW]
        return not allows or any(loc in rule.moves for rule in allows)

    def __bool__(self):
        return bool(self.rules)
