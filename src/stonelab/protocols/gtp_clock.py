"""The game clock a GTP controller describes, and how long one move may think.

GTP gives the clock three ways: ``time_settings main byo_yomi_time byo_yomi_stones``
(Canadian byo-yomi; ``byo_yomi_time > 0`` with ``byo_yomi_stones == 0`` means no time
limit), KGS's ``kgs-time_settings none | absolute M | byoyomi M T P | canadian M T S``,
and ``time_left colour seconds stones`` before each move (stones 0 while in main time;
for KGS's Japanese byo-yomi the controller sends the periods left in place of stones).

`move_budget` is the thinking time of the next move. It is never more than what is
left minus `MARGIN` (the time lost to protocol, process and a network relay), and it
spreads main time over the moves still to come (`expected_moves_left`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

MARGIN = 0.5  # seconds kept back from every limit
MIN_BUDGET = 0.05


@dataclass
class SideClock:
    """One colour's time: ``main`` seconds, then ``stones`` moves in every ``period`` seconds."""

    main: float = math.inf
    period: float = 0.0
    stones: int = 0  # stones per period (canadian); 1 per period for japanese byo-yomi
    periods: int = 0  # japanese byo-yomi periods left (0: canadian or none)
    in_overtime: bool = False
    overtime_left: float = 0.0  # seconds left in the current period
    stones_left: int = 0  # stones left in the current period


@dataclass
class GTPClock:
    """Both colours' clocks, kept from the controller's commands."""

    black: SideClock = field(default_factory=SideClock)
    white: SideClock = field(default_factory=SideClock)

    def side(self, colour: int) -> SideClock:
        return self.black if colour > 0 else self.white

    def settings(self, main: float, period: float, stones: int, periods: int = 0) -> None:
        """The same clock for both sides. GTP: a period with 0 stones means no time limit."""
        no_limit = period > 0 and stones == 0 and periods == 0
        self.black = SideClock() if no_limit else SideClock(main, period, stones, periods)
        self.white = SideClock() if no_limit else SideClock(main, period, stones, periods)

    def time_settings(self, main: float, period: float, stones: int) -> None:
        """GTP ``time_settings``."""
        self.settings(main, period, stones)

    def kgs_time_settings(self, system: str, values: list[float]) -> None:
        """KGS ``kgs-time_settings``; raises ValueError on a wrong count or system."""
        counts = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}
        if system not in counts:
            raise ValueError(f"unknown time system {system!r} (none, absolute, byoyomi, canadian)")
        if len(values) != counts[system]:
            raise ValueError(f"{system} takes {counts[system]} values")
        if system == "none":
            self.black, self.white = SideClock(), SideClock()
        elif system == "absolute":
            self.settings(values[0], 0.0, 0)
        elif system == "byoyomi":
            self.settings(values[0], values[1], 1, periods=int(values[2]))
        else:
            self.settings(values[0], values[1], int(values[2]))

    def time_left(self, colour: int, seconds: float, stones: int) -> None:
        """GTP ``time_left``: stones 0 means main time; else overtime with that many stones
        (periods left, for japanese byo-yomi) to play in ``seconds``."""
        clock = self.side(colour)
        if stones == 0:
            clock.in_overtime = False
            clock.main = seconds
        else:
            clock.in_overtime = True
            clock.main = 0.0
            clock.overtime_left = seconds
            if clock.periods:
                clock.periods = stones
                clock.stones_left = 1
            else:
                clock.stones_left = stones

    def move_budget(self, colour: int, expected_moves_left: int) -> float | None:
        """Seconds the next move of ``colour`` may think, or None without a time limit."""
        clock = self.side(colour)
        if math.isinf(clock.main) and clock.period <= 0 and not clock.in_overtime:
            return None
        if clock.in_overtime:
            spend = clock.overtime_left / max(clock.stones_left, 1)
            return max(MIN_BUDGET, min(spend, clock.overtime_left - MARGIN))
        per_move = clock.main / max(expected_moves_left, 1)
        if clock.period > 0:
            # Main time runs out into byo-yomi: a period per move is always there as well.
            per_move += clock.period / max(clock.stones, 1)
            limit = clock.main + clock.period / max(clock.stones, 1)
        else:
            limit = clock.main
        return max(MIN_BUDGET, min(per_move, limit - MARGIN))


def expected_moves_left(board_points: int, move_number: int) -> int:
    """Our moves still to come, roughly: games end near 0.7 moves per point (both sides),
    and a move keeps at least 1/20 of the main time for the rest (a long game)."""
    remaining_plies = 0.7 * board_points - move_number
    return max(20, int(remaining_plies / 2))
