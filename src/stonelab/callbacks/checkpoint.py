"""CurrentLastCheckpoint: Lightning's ModelCheckpoint with a last.ckpt that is always the latest state.

With a monitor (supervised runs keep the best ``val/top1``), Lightning 2.x rewrites
``last.ckpt`` only when a new best is saved, and at the end of training only when the
run saved nothing at all. A run whose validation stopped improving then kept a
``last.ckpt`` of its best epoch, and ``ckpt_path=<run>/checkpoints/last.ckpt`` silently
threw away every epoch trained since (measured with lightning 2.6 on 2026-12-01).
"""

from __future__ import annotations

from lightning.pytorch.callbacks import ModelCheckpoint


class CurrentLastCheckpoint(ModelCheckpoint):
    """Keeps the best ``save_top_k`` as ModelCheckpoint does, and writes ``last.ckpt`` at every
    save point (epoch end or validation end) and when training stops, whatever the monitor did."""

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        super().on_train_epoch_end(trainer, pl_module)
        if self._should_save_on_train_epoch_end(trainer):
            self._refresh_last(trainer)

    def on_validation_end(self, trainer, pl_module) -> None:
        super().on_validation_end(trainer, pl_module)
        if not self._should_save_on_train_epoch_end(trainer):
            self._refresh_last(trainer)

    def on_train_end(self, trainer, pl_module) -> None:
        super().on_train_end(trainer, pl_module)
        self._refresh_last(trainer)  # a stop between save points (max_steps, max_time)

    def _refresh_last(self, trainer) -> None:
        """Write last.ckpt unless it already holds this global step."""
        stale = self._last_global_step_saved != trainer.global_step or not self.last_model_path
        if self.save_last and stale and not self._should_skip_saving_checkpoint(trainer):
            self._save_last_checkpoint(trainer, self._monitor_candidates(trainer))
