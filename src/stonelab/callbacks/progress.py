"""RoundProgress: what a self-play run is doing, in rounds, games and updates.

Lightning's bars count batches of an "epoch" (``Epoch 0/999 14/50``), which means
nothing in a self-play run, and print nothing a pipe can read. This one logs one line
per self-play round at INFO (console and the run's train.log), e.g.::

    round 12 | 192 games | 96 updates | 6,104 playouts/s, 1,450 games/h | eval 0.70 [0.40, 0.89] vs pure_mcts_1000 (round 8) | 3:12 of 10:00

and, on a terminal, keeps a bar of the budget (time, or the update/round/game limit)
under those lines. Each callback adds its own part of the line through a
``progress_text()`` method (self-play speed, the latest evaluation, the budget).
"""

from __future__ import annotations

import logging
import sys

from lightning.pytorch.callbacks import ProgressBar, RichProgressBar

log = logging.getLogger(__name__)


class RoundProgress(ProgressBar):
    """One INFO line per round; a budget bar on a terminal (``bar: null`` -> auto)."""

    def __init__(self, bar: bool | None = None):
        super().__init__()
        self.bar_wanted = bar
        self._enabled = True
        self._bar = None
        self._redirect = None
        self._rounds_logged = -1

    # Lightning's ProgressBar interface
    def disable(self) -> None:
        self._enabled = False

    def enable(self) -> None:
        self._enabled = True

    def on_train_start(self, trainer, pl_module) -> None:
        wanted = sys.stderr.isatty() if self.bar_wanted is None else self.bar_wanted
        if wanted and self._enabled and trainer.is_global_zero:
            from tqdm import tqdm
            from tqdm.contrib.logging import logging_redirect_tqdm

            total, unit = self._bar_total(trainer)
            self._bar = tqdm(total=total, unit=unit, dynamic_ncols=True, leave=False,
                             bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} {unit}")
            # Log lines go above the bar instead of through it.
            self._redirect = logging_redirect_tqdm()
            self._redirect.__enter__()
        self.log_round(trainer, pl_module)  # the round(s) of the initial buffer fill

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if pl_module.rounds != self._rounds_logged:
            self.log_round(trainer, pl_module)
        if self._bar is not None:
            self._bar.n = self._bar_position(trainer, pl_module)
            self._bar.set_description(f"round {pl_module.rounds}, {pl_module.train_steps} updates", refresh=False)
            self._bar.refresh()

    def on_exception(self, trainer, pl_module, exception: BaseException) -> None:
        self.on_train_end(trainer, pl_module)  # a stop signal ends the fit with an exception: close the bar

    def on_train_end(self, trainer, pl_module) -> None:
        if self._bar is not None:
            self._bar.close()
            self._redirect.__exit__(None, None, None)
            self._bar = self._redirect = None

    def log_round(self, trainer, module) -> None:
        self._rounds_logged = module.rounds
        if not trainer.is_global_zero:
            return
        parts = [f"round {module.rounds}", f"{module.games_played} games", f"{module.train_steps} updates"]
        parts += [cb.progress_text() for cb in trainer.callbacks if hasattr(cb, "progress_text")]
        log.info(" | ".join(p for p in parts if p))

    def _budget(self, trainer):
        return next((cb for cb in trainer.callbacks if hasattr(cb, "max_seconds")), None)

    def _bar_total(self, trainer) -> tuple[float, str]:
        budget = self._budget(trainer)
        if budget is not None and budget.max_seconds is not None:
            return budget.max_seconds, "s"
        for attr, unit in [("max_updates", "updates"), ("max_rounds", "rounds"), ("max_games", "games")]:
            if budget is not None and getattr(budget, attr) is not None:
                return getattr(budget, attr), unit
        return trainer.max_epochs * trainer.num_training_batches, "updates"

    def _bar_position(self, trainer, module) -> float:
        budget = self._budget(trainer)
        unit = self._bar.unit
        if unit == "s":
            return min(budget.elapsed(), self._bar.total)
        return {"rounds": module.rounds, "games": module.games_played}.get(unit, module.train_steps)


class SupervisedProgress(RichProgressBar):
    """Lightning's rich bar for supervised runs, told in the run's own terms: ``pass N`` over
    the training games (not ``Epoch 0/999``: the budget ends a run long before that), with
    the budget (``3:12 of 10:00``) beside the metrics. (Each validation's line in the log:
    `stonelab.callbacks.wall_clock.WallClock`.)"""

    def _get_train_description(self, current_epoch: int) -> str:
        return f"pass {current_epoch}"

    def get_metrics(self, trainer, pl_module) -> dict:
        items = super().get_metrics(trainer, pl_module)
        budget = next((cb for cb in trainer.callbacks if hasattr(cb, "describe")), None)
        if budget is not None:
            items["budget"] = budget.describe()
        return items
