"""Match statistics: win ratio with a Wilson score interval."""

from __future__ import annotations

import math
from dataclasses import dataclass


def wilson_interval(successes: float, trials: int, z: float = 1.96) -> tuple[float, float]:
    """95% (z=1.96) Wilson score interval for a proportion; (0, 1) with no trials."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class MatchResult:
    """Wins, draws and losses of the player under test."""

    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def win_ratio(self) -> float:
        """AlphaZero_Gomoku's score: (wins + draws / 2) / games."""
        return (self.wins + 0.5 * self.draws) / max(self.games, 1)

    @property
    def interval(self) -> tuple[float, float]:
        """Wilson interval of the score (a draw counts as half a win)."""
        return wilson_interval(self.wins + 0.5 * self.draws, self.games)

    def __str__(self) -> str:
        lo, hi = self.interval
        return (f"{self.wins}W {self.draws}D {self.losses}L of {self.games}: "
                f"win ratio {self.win_ratio:.3f} [95% CI {lo:.3f}, {hi:.3f}]")
