"""House-keeping of a run folder (``logs/<task>/runs/<date>/``).

Two kinds of litter a run must not leave: the ``.tmp-*.ckpt`` of a save that was
killed half-way (`stonelab.utils.checkpoint_io` writes checkpoints to a temporary
file, then renames it), and a folder holding nothing but what Hydra wrote before
a run that then failed on a user error.

And a folder that cannot be made or written (a read-only disk, no permission, no
space, a file where a folder belongs) is named with its OS error in one line before
any work starts (`check_writable`, and `RunFolderCheck` before Hydra makes the folder).
A disk that fills during the run is one line too, naming the file it refused and the
last checkpoint to resume from (`refused_in_one_line`, `disk_trouble`); the log file is
one warning, and the log goes on at the console (`log_file_failures_in_one_line`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import logging
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from hydra.experimental.callback import Callback

from stonelab.errors import StonelabError

log = logging.getLogger(__name__)


class RunFolderError(StonelabError):
    """The run folder, a file a run writes (metrics, result.json) or the game cache cannot be made or written."""


def check_writable(folder: str, what: str = "the run folder") -> None:
    """Make ``folder`` and write a small file in it, then take away what this made (a run refused
    later on a bad value leaves no folder); RunFolderError naming the OS error if that fails."""
    missing = _missing_folders(Path(os.path.abspath(folder)))
    try:
        os.makedirs(folder, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".tmp-probe-", dir=folder)
        try:
            os.write(fd, b"\0" * 4096)  # a full disk refuses data, not always a new empty file
            os.fsync(fd)
        finally:
            os.close(fd)
            os.remove(probe)
    except OSError as exc:
        raise RunFolderError(unwritable_text(folder, exc, what)) from exc
    finally:
        for made in missing:  # deepest first
            with contextlib.suppress(OSError):
                made.rmdir()


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist yet, deepest first."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


RUN_FOLDER_SETTINGS = "hydra.run.dir=... or paths.log_dir=..."


def unwritable_text(folder: str, exc: OSError, what: str = "the run folder",
                    settings: str = RUN_FOLDER_SETTINGS) -> str:
    """``<what> <folder> cannot be written: <OS error>: <path>; <what to do>`` in one line;
    ``settings`` are those that choose another folder."""
    # A path above the folder is the part in the way; the folder itself or a probe in it says nothing new.
    where = f" ({exc.filename})" if exc.filename and not _inside(exc.filename, folder) else ""
    elsewhere = f"choose a folder that can be written with {settings}"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        elsewhere = f"free space on that disk, or {elsewhere}"
    return f"{what} {folder} cannot be written: {exc.strerror or exc}{where}; {elsewhere}"


@contextlib.contextmanager
def refused_in_one_line(path, what: str, settings: str = RUN_FOLDER_SETTINGS) -> Iterator[None]:
    """An OSError in the block (a full disk: ENOSPC names no file) is a RunFolderError naming ``path``
    and the OS error, so the entry point prints one line (`disk_trouble` adds the checkpoint to resume)."""
    try:
        yield
    except OSError as exc:
        raise RunFolderError(unwritable_text(os.fspath(path), exc, what, settings)) from exc


def last_checkpoint_text(checkpoints: str) -> str | None:
    """The resume point a run stopped by its disk leaves in its ``checkpoints`` folder, or None."""
    last = os.path.join(checkpoints, "last.ckpt")
    if not os.path.isfile(last):
        return None
    # Every checkpoint is written to a temporary file and renamed (stonelab.utils.checkpoint_io): whole.
    return f"the last checkpoint {last} is whole: resume from it with python src/train.py ckpt_path={last}"


def _inside(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or something in it."""
    named, root = Path(os.path.abspath(path)), Path(os.path.abspath(folder))
    return named == root or root in named.parents


# What a disk says when it stops taking a run's files.
DISK_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR)


def disk_trouble(exc: BaseException, output_dir: str) -> StonelabError | None:
    """The one-line error behind a run that the disk stopped, or None.

    A failed checkpoint save is a CheckpointSaveError, but on a full disk Lightning's
    cleanup (the loggers' last flush) then fails too, and its error comes out on
    top: the first user error in the chain is the one to show. A bare OSError of a
    file in the run folder names the folder. A file other than a checkpoint that the
    disk refused also names the run's last checkpoint, the one to resume from.
    """
    if isinstance(exc, StonelabError) and not isinstance(exc, RunFolderError):
        return exc
    if not isinstance(exc, RunFolderError) and not (isinstance(exc, OSError) and exc.errno in DISK_ERRNOS):
        return None
    first = _first_user_error(exc)
    if first is None:
        # A write to a full disk names no file: the run folder is what this process writes.
        in_run_folder = _inside(exc.filename, output_dir) if exc.filename else exc.errno in (errno.ENOSPC, errno.EDQUOT)
        if not in_run_folder:
            return None
        first = RunFolderError(unwritable_text(output_dir, exc))
    resume = last_checkpoint_text(os.path.join(output_dir, "checkpoints"))  # conf/callbacks/*: dirpath
    if not isinstance(first, RunFolderError) or resume is None:
        return first  # a CheckpointSaveError names its own
    return RunFolderError(f"{first}; {resume}")


def _first_user_error(exc: BaseException) -> StonelabError | None:
    """The earliest StonelabError among ``exc`` and the errors it was raised while handling."""
    first, seen = None, exc
    while seen is not None:
        if isinstance(seen, StonelabError):
            first = seen
        seen = seen.__context__
    return first


def log_file_failures_in_one_line(logger: logging.Logger | None = None) -> None:
    """Make a log file the disk refuses (Hydra's train.log on a full disk) one warning on stderr,
    after which the log goes on through the other handlers (the console). Logging's own
    handleError prints a ``--- Logging error ---`` traceback for every record instead."""
    for handler in (logger or logging.getLogger()).handlers:
        if isinstance(handler, logging.FileHandler) and not getattr(handler, "_stonelab_quiet", False):
            handler.handleError = functools.partial(_log_file_refused, handler, handler.handleError)
            handler._stonelab_quiet = True


def _log_file_refused(handler: logging.FileHandler, handle_error, record: logging.LogRecord) -> None:
    exc = sys.exc_info()[1]
    if not isinstance(exc, OSError):
        handle_error(record)  # a record that cannot be formatted: logging's own report
        return
    # Not removed from its logger (which is iterating over its handlers now): silenced.
    handler.emit = lambda record: None
    text = unwritable_text(handler.baseFilename, exc, "the log file")
    print(f"warning: {text}; the log continues on the console only", file=sys.stderr)


class RunFolderCheck(Callback):
    """A Hydra callback: the run (or multirun) folder checked before Hydra makes it, so a folder
    that cannot be written is one ``error: ...`` line and exit status 2, not Hydra's traceback.

    Registered in the Hydra config: ``hydra.callbacks.run_folder._target_=stonelab.run_folder.RunFolderCheck``.
    """

    def on_run_start(self, config, **kwargs) -> None:
        self._check(config, "hydra.run.dir", "the run folder")
        claim_time_stamped_folder(config)

    def on_multirun_start(self, config, **kwargs) -> None:
        self._check(config, "hydra.sweep.dir", "the multirun folder")

    @staticmethod
    def _check(config, key: str, what: str) -> None:
        from omegaconf import OmegaConf

        try:
            folder = str(OmegaConf.select(config, key, throw_on_missing=True))
        except Exception:  # an unresolvable folder is Hydra's to report
            return
        try:
            check_writable(folder, what)
        except RunFolderError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise SystemExit(2) from exc


def claim_time_stamped_folder(config) -> str | None:
    """Make the run's time-stamped folder (``logs/<task>/runs/<date>_<time>``) this run's alone.

    Two runs started in the same second get the same name, and each would write its results
    into the other's folder (two ladders, one ladder.json: one of them lost). The first to make
    the folder keeps the name, a later one takes ``<name>_2``, ``_3``, ... (``os.mkdir`` decides
    atomically). A folder given on the command line (``hydra.run.dir=...``, to go on in it) is
    left as it is. Returns the folder claimed (None where none was).
    """
    from omegaconf import OmegaConf, open_dict, read_write

    given = OmegaConf.to_container(config.hydra.run, resolve=False).get("dir")
    if not isinstance(given, str) or "${now:" not in given:
        return None
    base = str(OmegaConf.select(config, "hydra.run.dir"))
    os.makedirs(os.path.dirname(os.path.abspath(base)), exist_ok=True)
    for number in itertools.count(1):
        folder = base if number == 1 else f"{base}_{number}"
        try:
            os.mkdir(folder)
        except FileExistsError:
            continue
        break
    with read_write(config.hydra.run), open_dict(config.hydra.run):
        config.hydra.run.dir = folder
    return folder


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
