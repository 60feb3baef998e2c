"""Send metrics from callbacks straight to every logger (outside self.log's hooks)."""

from __future__ import annotations


def log_metrics(trainer, metrics: dict, step: int) -> None:
    if not trainer.is_global_zero:
        return
    for logger in trainer.loggers:
        logger.log_metrics(metrics, step=step)
