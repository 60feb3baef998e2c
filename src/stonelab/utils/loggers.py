"""Logger factories with behaviour Hydra configs cannot express on their own."""

from __future__ import annotations

import csv
import netrc
import os

from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.loggers.csv_logs import ExperimentWriter
from lightning.pytorch.loggers.logger import rank_zero_experiment


def wandb_logged_in() -> bool:
    """An API key in the environment or in ~/.netrc (where `wandb login` puts it)."""
    if os.environ.get("WANDB_API_KEY"):
        return True
    try:
        return netrc.netrc().authenticators("api.wandb.ai") is not None
    except (FileNotFoundError, netrc.NetrcParseError):
        return False


def wandb_logger(**kwargs):
    """A WandbLogger that runs offline unless the user is logged in (or WANDB_MODE says so)."""
    from lightning.pytorch.loggers import WandbLogger

    if "offline" not in kwargs or kwargs["offline"] is None:
        kwargs["offline"] = os.environ.get("WANDB_MODE") == "offline" or not wandb_logged_in()
    return WandbLogger(**kwargs)



class _ContinuingWriter(ExperimentWriter):
    def _check_log_dir_exists(self) -> None:
        # Lightning's writer deletes an existing metrics.csv here; keep it and its columns.
        if self._fs.isfile(self.metrics_file_path):
            with self._fs.open(self.metrics_file_path, "r", newline="") as f:
                self.metrics_keys = sorted(next(csv.reader(f), []))


class ContinuingCSVLogger(CSVLogger):
    """Lightning's CSVLogger, except that an existing metrics.csv is continued, not deleted.

    A resumed run writes into its own folder again (src/train.py ckpt_path=...), and
    Lightning's writer would delete the rows of the earlier sessions there.
    """

    @property
    @rank_zero_experiment
    def experiment(self):
        if self._experiment is None:
            self._fs.makedirs(self.root_dir, exist_ok=True)
            self._experiment = _ContinuingWriter(log_dir=self.log_dir)
        return self._experiment
