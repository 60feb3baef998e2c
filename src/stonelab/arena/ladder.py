"""A ladder of rising opponent budgets, and the budget where the player scores 50%.

Each rung is a match at one budget (an external brain's ``max_node``); the ladder climbs
until a rung scores 0, since every stronger rung would only add games lost. The even
budget is interpolated linearly in log budget between the last rung scoring at least 50%
and the first below it: strength grows roughly with the log of the nodes searched.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from stonelab.arena.ratings import MatchResult


@dataclass(frozen=True)
class Rung:
    budget: int
    result: MatchResult

    def as_dict(self) -> dict:
        lo, hi = self.result.interval
        return {"budget": self.budget, "wins": self.result.wins, "draws": self.result.draws,
                "losses": self.result.losses, "games": self.result.games,
                "win_ratio": self.result.win_ratio, "ci_low": lo, "ci_high": hi}


def climb(budgets: list[int], play_rung: Callable[[int], MatchResult], log=print) -> list[Rung]:
    """``play_rung(budget)`` at each budget in turn, stopping after the first rung that scores 0."""
    rungs = []
    for budget in budgets:
        rung = Rung(budget, play_rung(budget))
        rungs.append(rung)
        log(f"max_node {budget}: {rung.result}")
        if rung.result.win_ratio == 0:
            break
    return rungs


def even_budget(rungs: list[Rung]) -> dict:
    """The budget where the score crosses 50%: ``budget`` (None when no rung pair brackets it),
    the two rungs around it (``above``: scoring >= 50%, ``below``: under it) and a sentence."""
    first_below = next((i for i, r in enumerate(rungs) if r.result.win_ratio < 0.5), None)
    if first_below is None:
        last = rungs[-1]
        return {"budget": None, "above": last.as_dict(), "below": None,
                "text": f"50% not reached: the player scores at least 50% up to max_node {last.budget}"}
    if first_below == 0:
        first = rungs[0]
        return {"budget": None, "above": None, "below": first.as_dict(),
                "text": f"under max_node {first.budget}: the player scores {first.result.win_ratio:.3f} there"}
    high, low = rungs[first_below - 1], rungs[first_below]
    budget = log_interpolated(high, low)
    return {"budget": budget, "above": high.as_dict(), "below": low.as_dict(),
            "text": f"50% at max_node {budget:.3g} (log-interpolated between max_node {high.budget}: "
                    f"{_score(high)} and {low.budget}: {_score(low)})"}


def log_interpolated(high: Rung, low: Rung) -> float:
    """Where the line through (log budget, score) of the two rungs crosses 0.5."""
    s_high, s_low = high.result.win_ratio, low.result.win_ratio
    share = (s_high - 0.5) / (s_high - s_low)  # s_high >= 0.5 > s_low: never a division by 0
    return math.exp(math.log(high.budget) + share * (math.log(low.budget) - math.log(high.budget)))


def _score(rung: Rung) -> str:
    lo, hi = rung.result.interval
    return f"{rung.result.win_ratio:.3f} [{lo:.3f}, {hi:.3f}]"
