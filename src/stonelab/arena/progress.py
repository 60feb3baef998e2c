"""Progress of a long evaluation: a match game by game, or a count of work (positions scored).

    game 3/10: GNU Go 3.8 (B) vs stonelab (W): W+12.5 after 212 moves (two_passes, final_status_list) | 1W 0D 2L of 3: win ratio 0.333 [95% CI 0.061, 0.792]
    predict: 2,048/6,312 positions (32%), 301 positions/s, ETA 00:14

A match against GNU Go at full strength takes hours, so each game is reported as it
ends (`MatchProgress`). Scoring every position of thousands of games takes minutes
with nothing to report per item, so `RateProgress` writes its rate and time left
every few seconds. Piped to a file (a batch job, ``tee``) these are plain lines; on a
terminal they go above a tqdm bar.
"""

from __future__ import annotations

import logging
import sys
import time

from stonelab.arena.ratings import MatchResult

log = logging.getLogger(__name__)


def _bar(total: int, unit: str, wanted: bool | None):
    """A tqdm bar on stderr when ``wanted`` (None: only when stderr is a terminal), else None."""
    if not (sys.stderr.isatty() if wanted is None else wanted):
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, dynamic_ncols=True, leave=True)


class MatchProgress:
    """``update(index, text, result)`` after each game; ``bar``: None = a bar only on a terminal."""

    def __init__(self, games: int, *, bar: bool | None = None):
        self.games = games
        self._bar = _bar(games, "game", bar)

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


class RateProgress:
    """``update(n)`` after each ``n`` items of ``total``: every ``every`` seconds an INFO line
    with the rate and an ETA (so it reaches the console and the run's log file, e.g. eval.log),
    and on a terminal (``bar``: None = auto) a tqdm bar under those lines. ``close()`` logs the
    total time and rate; ``seconds`` is the time since the start."""

    def __init__(self, total: int, unit: str, *, label: str, bar: bool | None = None, every: float = 10.0,
                 clock=time.perf_counter):
        self.total, self.unit, self.label, self.every = total, unit, label, every
        self.done = 0
        self.clock = clock
        self.start = self.last = clock()  # work shorter than one interval logs only its final line
        self.end: float | None = None  # set by close(): seconds and rate stay those of the work
        self._bar = _bar(total, f" {unit}", bar)  # tqdm writes "12.5{unit}/s"
        self._redirect = None
        if self._bar is not None:  # log lines go above the bar instead of through it
            from tqdm.contrib.logging import logging_redirect_tqdm

            self._redirect = logging_redirect_tqdm()
            self._redirect.__enter__()

    @property
    def seconds(self) -> float:
        return (self.clock() if self.end is None else self.end) - self.start

    @property
    def rate(self) -> float:
        """Items per second since the start (the whole run, so one slow batch barely moves the ETA)."""
        return self.done / max(self.seconds, 1e-9)

    def update(self, n: int) -> str | None:
        """Count ``n`` more items; returns the line when one was due."""
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        now = self.clock()
        if now - self.last < self.every:
            return None
        self.last = now
        return self._log(self.text())

    def text(self) -> str:
        from tqdm import tqdm

        share = f" ({self.done / self.total:.0%})" if self.total else ""
        eta = max(self.total - self.done, 0) / self.rate if self.rate else float("inf")
        eta_text = tqdm.format_interval(eta) if eta != float("inf") else "?"
        return (f"{self.label}: {self.done:,}/{self.total:,} {self.unit}{share}, "
                f"{self.rate:,.0f} {self.unit}/s, ETA {eta_text}")

    def close(self) -> str | None:
        """Close the bar and log the total; returns that line (None if already closed)."""
        if self.end is not None:
            return None
        self.end = self.clock()
        if self._bar is not None:
            self._bar.close()
            self._redirect.__exit__(None, None, None)
            self._bar = self._redirect = None
        return self._log(f"{self.label}: {self.done:,} {self.unit} in {self.seconds:.1f} s "
                         f"({self.rate:,.0f} {self.unit}/s)")

    def _log(self, line: str) -> str:
        log.info(line)
        return line

    def __enter__(self) -> RateProgress:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
