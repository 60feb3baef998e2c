"""Training wall time beside every validation, and the whole run's time across resumes.

Recipes that cost different time per step (a residual trunk, a bigger net) can only be
compared fairly at equal wall time: this logs ``time/train_minutes`` (the training
stage's elapsed time as Lightning's own `Timer` keeps it where ``trainer.max_time`` is
set; otherwise this callback's clock) with each validation's metrics, so metrics.csv
has accuracy against minutes (``python -m stonelab.reporting recipes``).

Its clock adds up across resumes, as the AlphaZero runs' Budget does: the seconds so
far go into every checkpoint, and result.json's ``job_seconds`` (and the run's end
line) give the whole run's time, not just the part since the last resume.

It also times each validation pass, so that a whole-job budget (`Budget`) stops training
early enough for what follows it: one more validation (Lightning validates when a run is
stopped) and the held-out test, whose games are counted against the validation's. The test
may take at most ``max_test_share`` of the budget: on a busy machine all 30 test games took
3:45 of a 10-minute job (2026-12-04), so it reads the first batches that fit (its games in
order: a subsample of the first games), and result.json says how many it read.
"""

from __future__ import annotations

import logging
import time

import lightning as L
from lightning.pytorch.callbacks import Timer

log = logging.getLogger(__name__)


def format_duration(seconds: float) -> str:
    """``1:02:03`` / ``12:34``: a person's way of writing a span of seconds."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class JobClock:
    """A job's seconds across resumes: those of earlier parts of the run (from the checkpoint,
    ``elapsed_s``) plus this process's since `start_clock`. The one clock of `WallClock` and
    of the AlphaZero runs' `Budget`; the pipeline starts every such clock with the job."""

    def __init__(self):
        self.seconds_before = 0.0  # job seconds before this resume (from the checkpoint)
        self.started = time.monotonic()  # reset by the pipeline when the job starts

    def start_clock(self) -> None:
        """The job starts now (called before anything slow is built)."""
        self.started = time.monotonic()

    def elapsed(self) -> float:
        """Job seconds so far, across resumes."""
        return self.seconds_before + time.monotonic() - self.started


class WallClock(JobClock, L.Callback):
    def __init__(self, max_test_share: float | None = 0.1):
        from stonelab.errors import check

        check([(lambda: max_test_share is None or (not isinstance(max_test_share, bool) and 0 < max_test_share <= 1),
                f"callbacks.wall_clock.max_test_share={max_test_share!r} must be a share of the budget in (0, 1] "
                f"(or null: the test reads all its games)")])
        super().__init__()
        self.max_test_share = max_test_share
        self.max_seconds: float | None = None  # the whole job's budget (the Budget callback's), on_fit_start
        self.stage: str | None = None
        self.validation_seconds: float | None = None  # the latest validation pass's ...
        self.validation_batches = 1  # ... over this many batches (trainer.limit_val_batches may cut it) ...
        self.all_validation_batches = 1  # ... of these (the test reads every batch of its games)
        self._validation_started: float | None = None
        self.test_share = 0.0  # the held-out test's games per validation game (on_fit_start)

    def train_minutes(self, trainer: L.Trainer) -> float:
        timer = next((c for c in trainer.callbacks if isinstance(c, Timer)), None)
        seconds = timer.time_elapsed("train") if timer is not None else self.elapsed()
        return seconds / 60.0

    def on_validation_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._validation_started = time.monotonic()

    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not trainer.sanity_checking:
            pl_module.log("time/train_minutes", self.train_minutes(trainer))
            self.validation_seconds = time.monotonic() - self._validation_started
            self.validation_batches = max(1, int(sum(trainer.num_val_batches)))
            try:
                self.all_validation_batches = max(self.validation_batches, len(trainer.val_dataloaders))
            except TypeError:  # a loader without a length
                self.all_validation_batches = self.validation_batches

    def on_train_batch_end(self, trainer: L.Trainer, pl_module, outputs, batch, batch_idx) -> None:
        # Validation by time (trainer.val_check_interval="DD:HH:MM:SS") runs only when the
        # interval has passed: a pass over the games, or a run ending by max_steps, would end
        # unvalidated (no best checkpoint for a short run). Marking the last validation as
        # long ago makes Lightning validate after this batch, as it does by steps.
        if getattr(trainer, "_val_check_time_interval", None) is None:
            return
        last_step = 0 < trainer.max_steps <= trainer.global_step
        if last_step or batch_idx + 1 >= trainer.num_training_batches:
            trainer._last_val_time = float("-inf")

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """One line per validation in the log (a pipe or train.log shows the run's progress)."""
        if trainer.sanity_checking or not trainer.is_global_zero or trainer.state.fn != "fit":
            return
        metrics = trainer.callback_metrics
        shown = ", ".join(f"{k} {float(metrics['val/' + k]):.4f}" for k in ("top1", "top5", "top10")
                          if f"val/{k}" in metrics)
        log.info(f"validation at {format_duration(self.elapsed())} (step {trainer.global_step}): {shown}")

    def seconds_after_training(self) -> float:
        """What follows a stop, by the latest validation's time per batch: one more validation,
        and the test over all its games (``test_share``: its games per validation game, read
        in full where validation may read only the first batches). 0 before a validation."""
        if self.validation_seconds is None:
            return 0.0
        test_batches = self.all_validation_batches * self.test_share
        limit = self.test_batch_limit()
        return self._seconds_per_batch() * (self.validation_batches + min(test_batches, limit or test_batches))

    def _seconds_per_batch(self) -> float:
        return self.validation_seconds / self.validation_batches

    def test_batch_limit(self) -> int | None:
        """The most held-out test batches that fit in ``max_test_share`` of the budget, by the latest
        validation's time per batch (at least one); None: no bound (no budget, none measured yet)."""
        if self.max_test_share is None or self.max_seconds is None or self.validation_seconds is None:
            return None
        return max(1, int(self.max_test_share * self.max_seconds / self._seconds_per_batch()))

    def on_fit_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        data = trainer.datamodule
        val, test = getattr(data, "val_games", 0), getattr(data, "test_games", 0)
        self.test_share = test / val if val else 0.0
        self.max_seconds = next((cb.max_seconds for cb in trainer.callbacks if getattr(cb, "max_seconds", None)), None)

    def setup(self, trainer, pl_module, stage: str) -> None:
        self.stage = stage  # set before Lightning restores a checkpoint's states

    def state_dict(self) -> dict:
        return {"elapsed_s": self.elapsed()}

    def load_state_dict(self, state: dict) -> None:
        # Only a resume carries the clock on: the held-out test after training restores the
        # best epoch's checkpoint too, and its seconds are already in this clock.
        if self.stage in (None, "fit"):
            self.seconds_before = float(state.get("elapsed_s", 0.0))

    def result_fields(self, trainer) -> dict:
        """This callback's part of result.json: the whole run's seconds, resumes included."""
        return {"job_seconds": round(self.elapsed(), 1)}
