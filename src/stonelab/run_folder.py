"""House-keeping of a run folder (``logs/<task>/runs/<date>/``).

Two kinds of litter a run must not leave: the ``.tmp-*.ckpt`` of a save that was
killed half-way (`stonelab.utils.checkpoint_io` writes checkpoints to a temporary
file, then renames it), and a folder holding nothing but what Hydra wrote before
a run that then failed on a user error.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

# What Hydra (and the CSV logger's hyperparameters) write before any training; Hydra's
# log file is named after the entry point (train.log, eval.log).
_BEFORE_TRAINING = [".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml", "csv/hparams.yaml"]


def remove_partial_checkpoints(output_dir: str) -> list[Path]:
    """Delete the half-written checkpoints a killed save left in ``<output_dir>/checkpoints``."""
    removed = sorted(Path(output_dir, "checkpoints").glob(".tmp-*.ckpt"))
    for path in removed:
        path.unlink()
        log.info("removed %s: a checkpoint save that was interrupted", path)
    return removed


def remove_if_litter(output_dir: str) -> bool:
    """Remove ``output_dir`` if it holds only files written before training; True if removed.

    Only the known files are deleted and only empty folders removed, so a folder with
    anything else in it (a user's own files, an earlier run's checkpoints) stays.
    """
    root = Path(output_dir)
    # Only a folder Hydra made for this run: never the folder we work in, nor one without .hydra.
    if not (root / ".hydra").is_dir() or root.resolve() == Path.cwd().resolve():
        return False
    files = [p for p in root.rglob("*") if p.is_file()]
    known = {root / name for name in _BEFORE_TRAINING}
    if any(p not in known and not (p.parent == root and p.suffix == ".log") for p in files):
        return False
    for p in files:
        p.unlink()
    for folder in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        folder.rmdir()
    os.rmdir(root)
    return True


def remove_litter_of_failed_run(output_dir: str, log_dir: str | None = None) -> None:
    """After a failure: remove the run folder (and Hydra's, where ``paths.output_dir`` was moved
    elsewhere) if nothing but the files written before any work is in it, then the folders
    above it inside ``log_dir`` (``logs/<task>/runs``) that it leaves empty."""
    from hydra.core.hydra_config import HydraConfig

    folders = {output_dir}
    if HydraConfig.initialized():
        folders.add(HydraConfig.get().runtime.output_dir)
    for folder in folders:
        if remove_if_litter(folder) and log_dir:
            _remove_empty_parents(Path(folder), Path(log_dir))


def _remove_empty_parents(removed: Path, log_dir: Path) -> None:
    top = log_dir.resolve()
    parent = removed.resolve().parent
    while parent.is_dir() and (parent == top or top in parent.parents) and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent
