"""A match's progress: one line per game with the running score, and a bar on a terminal.

    game 3/10: GNU Go 3.8 (B) vs stonelab (W): W+12.5 after 212 moves (two_passes, final_status_list) | 1W 0D 2L of 3: win ratio 0.333 [95% CI 0.061, 0.792]

A match against GNU Go at full strength takes hours, so each game is reported as it
ends. Piped to a file (a batch job, ``tee``) these are plain lines; on a terminal they
go above a tqdm bar of the games played.
"""

from __future__ import annotations

import sys

from stonelab.arena.ratings import MatchResult


class MatchProgress:
    """``update(index, text, result)`` after each game; ``bar``: None = a bar only on a terminal."""

    def __init__(self, games: int, *, bar: bool | None = None):
        self.games = games
        wanted = sys.stderr.isatty() if bar is None else bar
        self._bar = None
        if wanted:
            from tqdm import tqdm

            self._bar = tqdm(total=games, unit="game", dynamic_ncols=True, leave=True)

    def update(self, index: int, text: str, result: MatchResult) -> str:
        """Report game ``index`` (0-based), described by ``text``, and the result so far; returns the line."""
        line = f"game {index + 1}/{self.games}: {text} | {result}"
        if self._bar is None:
            print(line, flush=True)
        else:
            self._bar.write(line)
            lo, hi = result.interval
            self._bar.set_postfix_str(f"{result.wins}W {result.draws}D {result.losses}L "
                                      f"{result.win_ratio:.2f} [{lo:.2f}, {hi:.2f}]", refresh=False)
            self._bar.update(1)
        return line

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> MatchProgress:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
