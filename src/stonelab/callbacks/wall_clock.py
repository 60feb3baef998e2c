"""Training wall time beside every validation, so runs compare by minutes, not steps.

Recipes that cost different time per step (a residual trunk, a bigger net) can only be
compared fairly at equal wall time: this logs ``time/train_minutes`` (the training
stage's elapsed time as Lightning's own `Timer` keeps it, carried over resumes in the
checkpoint; without a Timer, this callback's own clock) with each validation's metrics,
so metrics.csv has accuracy against minutes (``python -m stonelab.reporting recipes``).
"""

from __future__ import annotations

import time

import lightning as L
from lightning.pytorch.callbacks import Timer


class WallClock(L.Callback):
    def __init__(self):
        self._started = time.monotonic()

    def train_minutes(self, trainer: L.Trainer) -> float:
        timer = next((c for c in trainer.callbacks if isinstance(c, Timer)), None)
        seconds = timer.time_elapsed("train") if timer is not None else time.monotonic() - self._started
        return seconds / 60.0

    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not trainer.sanity_checking:
            pl_module.log("time/train_minutes", self.train_minutes(trainer))
