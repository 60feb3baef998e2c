"""Logger factories with behaviour Hydra configs cannot express on their own."""

from __future__ import annotations

import csv
import io
import netrc
import os

from lightning.pytorch.core.saving import save_hparams_to_yaml
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.loggers.csv_logs import ExperimentWriter
from lightning.pytorch.loggers.logger import rank_zero_experiment

from stonelab.run_folder import refused_in_one_line
from stonelab.utils.checkpoint_io import append_whole, replace_atomically, temporary_beside


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
    """Lightning's writer, except that it keeps an existing metrics.csv, and that a disk that refuses
    a write leaves the file as it was and ends the run in one line naming it: Lightning's rewrites
    metrics.csv in place when a column appears (half a file on a full disk) and its OSError names
    no file. Local files only: the run folder."""

    def _check_log_dir_exists(self) -> None:
        # Lightning's writer deletes an existing metrics.csv here; keep it and its columns.
        if self._fs.isfile(self.metrics_file_path):
            with self._fs.open(self.metrics_file_path, "r", newline="") as f:
                self.metrics_keys = sorted(next(csv.reader(f), []))

    def log_hparams(self, params) -> None:
        self.hparams.update(params)
        path = os.path.join(self.log_dir, self.NAME_HPARAMS_FILE)
        with refused_in_one_line(path, "the hyperparameters file"), temporary_beside(path) as tmp:
            save_hparams_to_yaml(tmp, self.hparams)

    def save(self) -> None:
        if not self.metrics:
            return
        path = self.metrics_file_path
        keys = sorted(set(self.metrics_keys).union(*self.metrics))
        with refused_in_one_line(path, "the metrics file"):
            if not os.path.isfile(path):
                append_whole(path, _csv_text(keys, self.metrics, header=True))
            elif keys != self.metrics_keys:  # a new column: the whole file again, under the new header
                with open(path, newline="") as f:
                    rows = [*csv.DictReader(f), *self.metrics]
                replace_atomically(path, _csv_text(keys, rows, header=True))
            else:
                append_whole(path, _csv_text(keys, self.metrics, header=False))
        # Only once written: a save tried again (Lightning's last flush) writes the same rows.
        self.metrics_keys, self.metrics = keys, []


def _csv_text(keys: list[str], rows: list[dict], header: bool) -> str:
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=keys)
    if header:
        writer.writeheader()
    writer.writerows(rows)
    return text.getvalue()


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
