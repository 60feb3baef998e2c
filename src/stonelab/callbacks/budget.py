"""The Budget callback: what ends a training run, in the units users count.

Lightning's ``max_time`` counts only the fitting loop (not the buffer fill or the game
cache built before the first step, nor the match or the held-out test after the last)
and its ``max_steps`` counts optimizer steps, of which one AlphaZero update makes up to
``model.epochs_per_step``. This callback replaces both:

- ``max_time`` (DD:HH:MM:SS) covers the whole job from the start of training code
  to the end of the run's last work: numba compilation, the first buffer fill or the
  KGS game cache are inside it, and training stops early enough to leave room for what
  comes after it (``seconds_after_training()`` of the other callbacks: AlphaZero's final
  evaluation, as long as the longest so far; a supervised run's last validation and its
  held-out test, `stonelab.callbacks.wall_clock.WallClock`). The clock adds up across
  resumes, like Lightning's own timer. Every model has it.
- ``max_updates`` / ``max_rounds`` / ``max_games`` (AlphaZero only): updates (one
  minibatch, up to ``epochs_per_step`` passes), self-play rounds, finished self-play games.
  Supervised runs count steps and epochs with Lightning's ``trainer.max_steps`` / ``max_epochs``.

Whichever limit comes first ends the run. Limits are checked after every update and
between the rounds that first fill the buffer (`stonelab.callbacks.selfplay`), so a run
stops at most one self-play round plus one update past ``max_time`` (the round is never
cut: its games are the data of the next updates); what comes after training may take
longer than the reserve when the machine gets slower.
"""

from __future__ import annotations

import logging
import re
from datetime import timedelta

import lightning as L

from stonelab.callbacks.wall_clock import JobClock, format_duration
from stonelab.errors import ConfigError, check

log = logging.getLogger(__name__)

_DURATION = re.compile(r"(\d+):(\d\d):(\d\d):(\d\d)")


def parse_duration(text: str | None, name: str = "trainer.max_time") -> float | None:
    """Seconds of a ``DD:HH:MM:SS`` string (None: no limit)."""
    if text is None:
        return None
    match = _DURATION.fullmatch(str(text).strip())
    if not match:
        raise ConfigError(f"{name}={text!r} is not a duration: write DD:HH:MM:SS, e.g. 00:00:10:00 "
                          f"for ten minutes (or null for no limit)")
    days, hours, minutes, seconds = (int(g) for g in match.groups())
    return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds).total_seconds()


def max_time_text(seconds: float) -> str:
    """``DD:HH:MM:SS``, the form trainer.max_time takes (parse_duration's inverse)."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    return f"{days:02d}:{hours:02d}:{minutes:02d}:{secs:02d}"


class Budget(JobClock, L.Callback):
    """Stop training when the first of the configured limits is reached (None: no limit)."""

    def __init__(self, *, max_time: str | None = None, max_updates: int | None = None,
                 max_rounds: int | None = None, max_games: int | None = None, steps_per_round: int = 1):
        for name, value in [("max_updates", max_updates), ("max_rounds", max_rounds),
                            ("max_games", max_games)]:
            check([(lambda v=value: v is None or (isinstance(v, int) and v >= 1),
                    f"callbacks.budget.{name}={value!r} must be a whole number >= 1 (or null: no limit)")])
        self.max_seconds = parse_duration(max_time)
        self.max_time = max_time
        self.max_updates = max_updates
        self.max_rounds = max_rounds
        self.max_games = max_games
        self.steps_per_round = steps_per_round  # rounds and games are counted where a round would start
        JobClock.__init__(self)
        self.stop_reason: str | None = None

    def describe(self) -> str:
        """``3:12 of 10:00`` or the counters this run is bounded by."""
        if self.max_seconds is not None:
            return f"{format_duration(self.elapsed())} of {format_duration(self.max_seconds)}"
        return format_duration(self.elapsed())

    def result_fields(self, trainer) -> dict:
        return {"stop_reason": self.stop_reason, "job_seconds": round(self.elapsed(), 1)}

    def progress_text(self) -> str:
        return self.describe()

    def state_dict(self) -> dict:
        return {"elapsed_s": self.elapsed()}

    def load_state_dict(self, state: dict) -> None:
        self.seconds_before = float(state.get("elapsed_s", 0.0))

    def on_train_start(self, trainer, pl_module) -> None:
        if self.seconds_before and self.stop_if_reached(trainer, pl_module):
            log.warning("this run had already reached its budget (%s) before this resume: it trains no further; "
                        "raise the limit on the command line to continue", self.stop_reason)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        self.stop_if_reached(trainer, pl_module)

    def stop_if_reached(self, trainer, pl_module) -> bool:
        reason = self.reached(pl_module, trainer)
        # Every DDP rank must stop after the same step: rank 0 decides for all.
        reason = trainer.strategy.broadcast(reason)
        if reason:
            self.stop_reason = reason
            trainer.should_stop = True
        return bool(reason)

    def counts_self_play(self) -> bool:
        """Whether a limit in self-play's units is set (only an AlphaZero module counts them)."""
        return any(limit is not None for limit in (self.max_updates, self.max_rounds, self.max_games))

    def reached(self, module, trainer) -> str | None:
        """Which limit the run has reached, in words (None: none yet)."""
        if not self.counts_self_play():
            return self._time(trainer)
        if self.max_updates is not None and module.train_steps >= self.max_updates:
            return f"{module.train_steps} updates (callbacks.budget.max_updates={self.max_updates})"
        if module.train_steps % self.steps_per_round == 0:
            return self._rounds_or_games(module) or self._time(trainer)
        return self._time(trainer)

    def _rounds_or_games(self, module) -> str | None:
        """Checked only before a round would start, so every round gets its updates."""
        if self.max_rounds is not None and module.rounds >= self.max_rounds:
            return f"{module.rounds} rounds (callbacks.budget.max_rounds={self.max_rounds})"
        if self.max_games is not None and module.games_played >= self.max_games:
            return f"{module.games_played} games (callbacks.budget.max_games={self.max_games})"
        return None

    def _time(self, trainer) -> str | None:
        if self.max_seconds is not None:
            reserve = sum(cb.seconds_after_training() for cb in trainer.callbacks
                          if hasattr(cb, "seconds_after_training"))
            if self.elapsed() + reserve >= self.max_seconds:
                kept = f", {format_duration(reserve)} kept for what comes after training" if reserve else ""
                return f"{format_duration(self.elapsed())} of trainer.max_time={self.max_time}{kept}"
        return None
