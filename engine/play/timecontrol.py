"""Clocks and the time budget of one move.

Reading order: `TimeControl.set_*` take the settings GTP describes, `update_from_time_left` takes
what a controller says about a clock, `budget()` says how long kosumi may think now, `charge()`
books the time a move took. The player (engine/play/player.py) compares the budget with what a full
1-ply evaluation costs and falls back to an instant move when it could not afford one, so kosumi
never loses on time.

Systems (all times in seconds):

| settings                              | meaning                                                    |
|---------------------------------------|------------------------------------------------------------|
| `time_settings M 0 0`                 | absolute: M for the whole game (CGOS: `time_settings 300 0 0`) |
| `time_settings M B S`, B>0, S>0       | Canadian: after M, S stones in every period of B seconds   |
| `time_settings M B 0`, B>0            | no time limit (GTP spec)                                   |
| `kgs-time_settings none`              | no time limit                                              |
| `kgs-time_settings absolute M`        | absolute                                                   |
| `kgs-time_settings byoyomi M P N`     | Japanese: after M, N periods of P seconds; a move that     |
|                                       | fits in a period keeps it, an overrun uses one up          |
| `kgs-time_settings canadian M B S`    | Canadian, as time_settings                                 |

`time_left colour T S`: with S = 0, T is the main time left (or the whole clock for absolute
time; CGOS sends this before every genmove); with S > 0 the player is in byo-yomi with T seconds
for S stones (Canadian) or T seconds of the current period with S periods left (Japanese).
Controllers that never send time_left (gogui-twogtp) rely on our own bookkeeping in `charge()`.
"""
import math
from dataclasses import dataclass

NO_LIMIT = "none"
ABSOLUTE = "absolute"
CANADIAN = "canadian"
JAPANESE = "byoyomi"

SAFETY_FRACTION = 0.8     # spend at most this share of a computed allowance: timing jitter, GC
LAG_MARGIN = 0.35         # seconds kept back per move for pipes and network (CGOS allows 0.25)
MIN_MOVES_TO_PLAN = 12    # main time is never spread over fewer of our moves than this
OPEN_POINT_SHARE = 0.5    # our remaining moves ~ half the empty points: a game fills most of them


@dataclass
class Clock:
    """One player's clock as far as we know it."""
    main_left: float = 0.0
    in_byoyomi: bool = False
    period_left: float = 0.0      # seconds left in the current byo-yomi period
    stones_left: int = 0          # Canadian: stones still to play in this period
    periods_left: int = 0         # Japanese: periods still available


class TimeControl:
    def __init__(self):
        self.system = NO_LIMIT
        self.main_time = 0.0
        self.byoyomi_time = 0.0
        self.byoyomi_stones = 0       # Canadian
        self.byoyomi_periods = 0      # Japanese
        self.clocks = {}
        self.reset_clocks()

    # --- settings -----------------------------------------------------------------------------

    def set_gtp(self, main_time, byoyomi_time, byoyomi_stones):
        """`time_settings`: GTP's Canadian form, with the spec's two special cases."""
        if byoyomi_time > 0 and byoyomi_stones == 0:
            self.set_none()
        elif byoyomi_time == 0:
            self.set_absolute(main_time)
        else:
            self.set_canadian(main_time, byoyomi_time, byoyomi_stones)

    def set_none(self):
        self._set(NO_LIMIT, 0.0, 0.0, 0, 0)

    def set_absolute(self, main_time):
        self._set(ABSOLUTE, main_time, 0.0, 0, 0)

    def set_canadian(self, main_time, byoyomi_time, byoyomi_stones):
        self._set(CANADIAN, main_time, byoyomi_time, byoyomi_stones, 0)

    def set_japanese(self, main_time, period_time, periods):
        if periods == 0 or period_time == 0:
            self.set_absolute(main_time)
        else:
            self._set(JAPANESE, main_time, period_time, 0, periods)

    def _set(self, system, main_time, byoyomi_time, byoyomi_stones, byoyomi_periods):
        for value in (main_time, byoyomi_time):
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"invalid time {value!r}")
        if byoyomi_stones < 0 or byoyomi_periods < 0:
            raise ValueError("negative stone or period count")
        self.system = system
        self.main_time = float(main_time)
        self.byoyomi_time = float(byoyomi_time)
        self.byoyomi_stones = int(byoyomi_stones)
        self.byoyomi_periods = int(byoyomi_periods)
        self.reset_clocks()

    def reset_clocks(self):
        """Both clocks back to the start of a game (a new game keeps the settings)."""
        self.clocks = {colour: self._fresh_clock() for colour in (1, 2)}

    def _fresh_clock(self):
        clock = Clock(main_left=self.main_time)
        if clock.main_left <= 0 and self.system in (CANADIAN, JAPANESE):
            self._enter_byoyomi(clock)
        return clock

    def _enter_byoyomi(self, clock):
        clock.in_byoyomi = True
        clock.main_left = 0.0
        clock.period_left = self.byoyomi_time
        clock.stones_left = self.byoyomi_stones
        clock.periods_left = self.byoyomi_periods

    @property
    def limited(self):
        return self.system != NO_LIMIT

    # --- what the controller tells us ---------------------------------------------------------

    def update_from_time_left(self, colour, seconds, stones):
        if not math.isfinite(seconds) or seconds < 0 or stones < 0:
            raise ValueError("invalid time_left values")
        clock = self.clocks[colour]
        if stones == 0:
            clock.in_byoyomi = False
            clock.main_left = float(seconds)
        else:
            clock.in_byoyomi = True
            clock.main_left = 0.0
            clock.period_left = float(seconds)
            if self.system == JAPANESE:
                clock.periods_left = stones
            else:
                clock.stones_left = stones
        if self.system == NO_LIMIT:
            # time_left without settings (some controllers do this): treat the clock as
            # absolute if main time, Canadian with these stones if byo-yomi.
            if stones == 0:
                self.system = ABSOLUTE
            else:
                self.system = CANADIAN
                self.byoyomi_time = float(seconds)
                self.byoyomi_stones = stones

    # --- budget and bookkeeping ---------------------------------------------------------------

    def budget(self, colour, empty_points):
        """Seconds we may spend on this move, or None when there is no limit."""
        if self.system == NO_LIMIT:
            return None
        clock = self.clocks[colour]
        moves_to_plan = max(MIN_MOVES_TO_PLAN, OPEN_POINT_SHARE * empty_points)
        if not clock.in_byoyomi:
            allowance = clock.main_left / moves_to_plan
            if self.system == CANADIAN:
                allowance += self.byoyomi_time / max(self.byoyomi_stones, 1)
            elif self.system == JAPANESE:
                allowance += self.byoyomi_time
            # never plan beyond what is really left on the clock
            reachable = clock.main_left + self._byoyomi_move_allowance(clock, fresh=True)
            allowance = min(allowance, reachable)
        else:
            allowance = self._byoyomi_move_allowance(clock, fresh=False)
        return max(0.0, allowance * SAFETY_FRACTION - LAG_MARGIN)

    def _byoyomi_move_allowance(self, clock, fresh):
        if self.system == CANADIAN:
            if fresh:
                return self.byoyomi_time / max(self.byoyomi_stones, 1)
            return clock.period_left / max(clock.stones_left, 1)
        if self.system == JAPANESE:
            return self.byoyomi_time if fresh else clock.period_left
        return 0.0

    def charge(self, colour, elapsed):
        """Book `elapsed` seconds to colour's clock (our own moves; time_left overrides)."""
        if self.system == NO_LIMIT:
            return
        clock = self.clocks[colour]
        if not clock.in_byoyomi:
            clock.main_left -= elapsed
            if clock.main_left >= 0 or self.system == ABSOLUTE:
                clock.main_left = max(clock.main_left, 0.0)
                return
            overrun = -clock.main_left
            self._enter_byoyomi(clock)
            elapsed = overrun
        if self.system == CANADIAN:
            clock.period_left -= elapsed
            clock.stones_left -= 1
            if clock.stones_left <= 0:
                clock.period_left = self.byoyomi_time
                clock.stones_left = self.byoyomi_stones
        elif self.system == JAPANESE:
            while elapsed > clock.period_left and clock.periods_left > 1:
                elapsed -= clock.period_left
                clock.periods_left -= 1
                clock.period_left = self.byoyomi_time
            clock.period_left = self.byoyomi_time  # a move within the period keeps it

    def describe(self):
        if self.system == NO_LIMIT:
            return "no time limit"
        if self.system == ABSOLUTE:
            return f"absolute {self.main_time:g}s"
        if self.system == CANADIAN:
            return (f"canadian {self.main_time:g}s + {self.byoyomi_stones} stones "
                    f"in {self.byoyomi_time:g}s")
        return f"byoyomi {self.main_time:g}s + {self.byoyomi_periods} x {self.byoyomi_time:g}s"
