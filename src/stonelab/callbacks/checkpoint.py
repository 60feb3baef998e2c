"""Checkpoints a run can always resume from: a current last.ckpt, written every few minutes too,
and a failed save that says so in one line and leaves the previous file whole.

With a monitor (supervised runs keep the best ``val/top1``), Lightning 2.x rewrites
``last.ckpt`` only when a new best is saved, and at the end of training only when the
run saved nothing at all. A run whose validation stopped improving then kept a
``last.ckpt`` of its best epoch, and ``ckpt_path=<run>/checkpoints/last.ckpt`` silently
threw away every epoch trained since (measured with lightning 2.6 on 2026-12-01).

An epoch over many KGS games takes hours, so a kill between two epoch ends lost all of
them: ``last_every_minutes`` rewrites last.ckpt every that many minutes of training. And a
run killed before its first validation (~3 minutes into a 10-minute job) had saved nothing:
``early_last_every_minutes`` writes last.ckpt that often until the first save point.
Lightning's own ``train_time_interval`` does not serve here: it cannot be combined with
``every_n_epochs``, and with a validation-only monitor it waits for the next validation.
"""

from __future__ import annotations

import os
import time

from lightning.pytorch.callbacks import ModelCheckpoint

from stonelab.errors import StonelabError, check
from stonelab.run_folder import last_checkpoint_text
from stonelab.utils.checkpoint_io import AtomicCheckpointIO


class CheckpointSaveError(StonelabError):
    """A checkpoint could not be written (no space, read-only, permissions); the previous file is whole."""


class CheckedCheckpointIO(AtomicCheckpointIO):
    """AtomicCheckpointIO (a temporary file, then an atomic rename) whose failed save ends the run
    with one line naming the file and the OS error, instead of a traceback."""

    def save_checkpoint(self, checkpoint, path, storage_options=None) -> None:
        try:
            super().save_checkpoint(checkpoint, path, storage_options)
        except OSError as exc:
            raise CheckpointSaveError(save_failure_text(os.fspath(path), exc)) from exc


def save_failure_text(path: str, exc: OSError) -> str:
    """``could not save the checkpoint <path> (No space left on device): ...``, what is left (the
    last.ckpt beside it, by its path) and what to do."""
    kept = f"the previous {os.path.basename(path)} is intact" if os.path.exists(path) else \
        "this checkpoint did not exist before"
    resume = last_checkpoint_text(os.path.dirname(os.path.abspath(path))) or \
        "the run has no last.ckpt yet: start it again"
    return (f"could not save the checkpoint {path} ({exc.strerror or exc}): {kept} and the run stopped; "
            f"free space on that disk or make the folder writable; {resume}")


class CurrentLastCheckpoint(ModelCheckpoint):
    """Keeps the best ``save_top_k`` as ModelCheckpoint does (0: none), and writes ``last.ckpt`` at
    every save point (epoch end or validation end), every ``last_every_minutes`` of training
    (None: not by time), every ``early_last_every_minutes`` until the first save point (None: not
    before it) and when training stops, whatever the monitor did."""

    def __init__(self, *args, last_every_minutes: float | None = None,
                 early_last_every_minutes: float | None = None, **kwargs):
        check([(lambda m=minutes: m is None or (isinstance(m, int | float) and not isinstance(m, bool) and m > 0),
                f"callbacks.model_checkpoint.{key}={minutes!r} must be a number of minutes > 0 (or null: {off})")
               for key, minutes, off in (
                   ("last_every_minutes", last_every_minutes, "last.ckpt only at epoch ends and stops"),
                   ("early_last_every_minutes", early_last_every_minutes, "none before the first save point"))])
        super().__init__(*args, **kwargs)
        self.last_every_minutes = last_every_minutes
        self.early_last_every_minutes = early_last_every_minutes
        self._last_written_at = time.monotonic()
        self._stage: str | None = None
        self._reached_save_point = False

    def setup(self, trainer, pl_module, stage: str) -> None:
        super().setup(trainer, pl_module, stage)
        self._stage = stage  # set before Lightning restores a checkpoint's states

    def load_state_dict(self, state_dict) -> None:
        # Only a resume takes the saved paths: the held-out test after training restores the
        # best epoch's checkpoint, whose state knows no later last.ckpt (result.json lost it).
        if self._stage in (None, "fit"):
            super().load_state_dict(state_dict)

    def on_train_start(self, trainer, pl_module) -> None:
        super().on_train_start(trainer, pl_module)
        self._last_written_at = time.monotonic()  # minutes of training, not of setup

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        super().on_train_batch_end(trainer, pl_module, outputs, batch, batch_idx)
        if self._time_for_last(trainer):
            self._write_last_between_save_points(trainer)

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        super().on_train_epoch_end(trainer, pl_module)
        self._reached_save_point = True
        if self._should_save_on_train_epoch_end(trainer):
            self._refresh_last(trainer)
        elif getattr(trainer, "_val_check_time_interval", None) is not None and self.save_last and \
                not trainer.fast_dev_run:
            # Validation by time saved last.ckpt inside the epoch's last batch, before the epoch
            # counted as done: rewritten now, a resume starts the next epoch instead of reading on.
            self._save_last_checkpoint(trainer, self._monitor_candidates(trainer))

    def on_validation_end(self, trainer, pl_module) -> None:
        super().on_validation_end(trainer, pl_module)
        self._reached_save_point = True
        if not self._should_save_on_train_epoch_end(trainer):
            self._refresh_last(trainer)

    def on_train_end(self, trainer, pl_module) -> None:
        super().on_train_end(trainer, pl_module)
        self._refresh_last(trainer)  # a stop between save points (max_steps, max_time)

    def _save_last_checkpoint(self, trainer, monitor_candidates) -> None:
        super()._save_last_checkpoint(trainer, monitor_candidates)
        self._last_written_at = time.monotonic()  # any write of last.ckpt restarts the clock

    def _time_for_last(self, trainer) -> bool:
        # Before this process's first save point (a validation or an epoch end) the early interval applies too.
        intervals = [self.last_every_minutes, None if self._reached_save_point else self.early_last_every_minutes]
        minutes = min((m for m in intervals if m is not None), default=None)
        if minutes is None or not self.save_last:
            return False
        due = time.monotonic() - self._last_written_at >= 60.0 * minutes
        return bool(trainer.strategy.broadcast(due))  # rank 0's clock decides: every rank takes part in a save

    def _write_last_between_save_points(self, trainer) -> None:
        """last.ckpt now, without counting as this step's save: a best checkpoint due at this
        step (its validation ends right after) must still be written."""
        saved_step = self._last_global_step_saved
        if self._should_skip_saving_checkpoint(trainer):
            return
        self._save_last_checkpoint(trainer, self._monitor_candidates(trainer))
        self._last_global_step_saved = saved_step

    def _refresh_last(self, trainer) -> None:
        """Write last.ckpt unless it already holds this global step."""
        stale = self._last_global_step_saved != trainer.global_step or not self.last_model_path
        if self.save_last and stale and not self._should_skip_saving_checkpoint(trainer):
            self._save_last_checkpoint(trainer, self._monitor_candidates(trainer))
