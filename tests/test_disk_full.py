"""A disk that fills at any write of a training run: one ``error:`` line naming the file and the
OS error, exit status 2, and the last good checkpoint named, loadable and resumable.

Each write is refused by an injected ENOSPC at the narrowest function; one run fills a real
small tmpfs (root only) so that the next checkpoint meets a real ENOSPC.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import io
import json
import logging
import os
import shutil
import subprocess

import pytest
import torch

from stonelab.cli import run_or_explain
from stonelab.pipeline import train
from stonelab.utils import checkpoint_io

EVAL_OFF = ["callbacks.evaluation.every_n_rounds=100", "callbacks.evaluation.at_train_end=false"]
FULL = "No space left on device"


def _full_disk() -> OSError:
    return OSError(errno.ENOSPC, FULL)


def _refuse_once_last_exists(monkeypatch, owner, name: str, folder, target: str) -> None:
    """``owner.name(path, ...)`` raises ENOSPC for paths ending in ``target`` once ``folder`` holds a last.ckpt."""
    write = getattr(owner, name)

    def refused(path, *args, **kwargs):
        if os.fspath(path).endswith(target) and (folder / "last.ckpt").exists():
            raise _full_disk()
        return write(path, *args, **kwargs)

    monkeypatch.setattr(owner, name, refused)


def _stopped_by_the_disk(cfg, capsys) -> str:
    """Run ``cfg`` as src/train.py does; the one stderr line it ends with (exit status 2)."""
    with pytest.raises(SystemExit) as stop:
        run_or_explain(train, cfg)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert FULL in err[0]
    return err[0]


def _resumes(compose_train, run, epochs: int) -> int:
    """The run's last.ckpt loads, and a resume from it trains to ``epochs``; its update count."""
    last = run / "checkpoints" / "last.ckpt"
    assert torch.load(last, map_location="cpu", weights_only=True)["stonelab"]["train_steps"] > 0
    resumed = train(compose_train([f"trainer.max_epochs={epochs}", "logger=none", *EVAL_OFF, f"ckpt_path={last}"],
                                  run))
    return resumed["train_steps"]


def _names_last(line: str, run) -> None:
    last = run / "checkpoints" / "last.ckpt"
    assert f"the last checkpoint {last} is whole: resume from it with python src/train.py ckpt_path={last}" in line


class _HalfThenFull:
    """A file that takes half of what is written to it, then says the disk is full."""

    def __init__(self, f):
        self.f = f

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()

    def write(self, data):
        self.f.write(bytes(memoryview(data)[: len(data) // 2]))
        self.f.flush()
        raise _full_disk()


def test_a_checkpoint_the_disk_takes_half_of_leaves_the_previous_one(tmp_path, monkeypatch, capsys,
                                                                     compose_train, one_thread):
    folder = tmp_path / "checkpoints"

    def open_filling(file, mode="r", *args, **kwargs):
        f = builtins.open(file, mode, *args, **kwargs)
        full = "w" in mode and str(file).endswith(".ckpt") and (folder / "last.ckpt").exists()
        return _HalfThenFull(f) if full else f

    with monkeypatch.context() as patch:
        patch.setattr(checkpoint_io, "open", open_filling, raising=False)
        line = _stopped_by_the_disk(compose_train(["trainer.max_epochs=3", "logger=none", *EVAL_OFF], tmp_path),
                                    capsys)
    assert line.startswith(f"error: could not save the checkpoint {folder / 'last.ckpt'} ({FULL})")
    _names_last(line, tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["last.ckpt"]  # the half-written temporary file is gone
    assert _resumes(compose_train, tmp_path, epochs=2) == 4


def test_metrics_the_disk_refuses_end_the_run_in_one_line_and_stay_whole(tmp_path, monkeypatch, capsys,
                                                                         compose_train, one_thread):
    from stonelab.utils import loggers

    metrics = tmp_path / "csv" / "metrics.csv"
    written = {}

    def append_until_full(path, data):
        if (tmp_path / "checkpoints" / "last.ckpt").exists():
            written["before"] = metrics.read_text()
            raise _full_disk()
        checkpoint_io.append_whole(path, data)

    cfg = compose_train(["trainer.max_epochs=3", "logger=csv", "logger.csv.flush_logs_every_n_steps=1", *EVAL_OFF],
                        tmp_path)
    with monkeypatch.context() as patch:
        patch.setattr(loggers, "append_whole", append_until_full)
        line = _stopped_by_the_disk(cfg, capsys)
    assert line.startswith(f"error: the metrics file {metrics} cannot be written: {FULL}; free space on that disk")
    _names_last(line, tmp_path)
    assert metrics.read_text() == written["before"] and written["before"].count("\n") >= 2  # header and rows
    assert _resumes(compose_train, tmp_path, epochs=2) == 4


def test_hyperparameters_the_disk_refuses_are_one_line(tmp_path, monkeypatch, capsys, compose_train):
    from stonelab.utils import loggers

    def full(path, hparams):
        raise _full_disk()

    monkeypatch.setattr(loggers, "save_hparams_to_yaml", full)
    line = _stopped_by_the_disk(compose_train(["logger=csv", *EVAL_OFF], tmp_path), capsys)
    assert line.startswith(f"error: the hyperparameters file {tmp_path / 'csv' / 'hparams.yaml'} cannot be written")
    assert not (tmp_path / "csv").exists() or not any((tmp_path / "csv").iterdir())  # no temporary file left


def test_an_evaluation_record_the_disk_refuses_is_one_line(tmp_path, monkeypatch, capsys, compose_train, one_thread):
    from stonelab.callbacks import evaluation

    folder = tmp_path / "checkpoints"
    _refuse_once_last_exists(monkeypatch, evaluation, "append_whole", folder, "evaluations.jsonl")
    line = _stopped_by_the_disk(compose_train(["trainer.max_epochs=3", "logger=none",
                                               "callbacks.evaluation.every_n_rounds=2"], tmp_path), capsys)
    assert line.startswith(f"error: the evaluation record {folder / 'evaluations.jsonl'} cannot be written: {FULL}")
    _names_last(line, tmp_path)
    monkeypatch.undo()
    assert _resumes(compose_train, tmp_path, epochs=3) > 0


def test_a_result_json_the_disk_refuses_is_one_line_and_no_half_file(tmp_path, monkeypatch, capsys,
                                                                     compose_train, one_thread):
    from stonelab import pipeline

    _refuse_once_last_exists(monkeypatch, pipeline, "replace_atomically", tmp_path / "checkpoints", "result.json")
    line = _stopped_by_the_disk(compose_train(["trainer.max_epochs=2", "logger=none", *EVAL_OFF], tmp_path), capsys)
    assert line.startswith(f"error: the result file {tmp_path / 'result.json'} cannot be written: {FULL}")
    _names_last(line, tmp_path)
    assert not (tmp_path / "result.json").exists()
    monkeypatch.undo()
    assert _resumes(compose_train, tmp_path, epochs=3) == 6
    assert json.loads((tmp_path / "result.json").read_text())["train_steps"] == 6


def test_a_game_cache_the_disk_refuses_is_one_line_and_leaves_nothing(tmp_path, monkeypatch, capsys, compose_go):
    from stonelab.data.kgs import GameCache

    save = GameCache.save

    def written_then_full(self, folder):
        save(self, folder)  # the disk fills as the cache's summary.json is written
        raise _full_disk()

    cfg = compose_go("maddison_cnn", ["model.net.depth=3", "model.net.filters=8", "logger=none"], tmp_path)
    with monkeypatch.context() as patch:
        patch.setattr(GameCache, "save", written_then_full)
        line = _stopped_by_the_disk(cfg, capsys)
    assert line.startswith(f"error: the KGS game cache {tmp_path / 'cache'}/kgs-")
    assert f"cannot be written: {FULL}; free space on that disk, or choose a folder that can be written with " \
           f"data.cache_dir=..." in line
    assert list((tmp_path / "cache").iterdir()) == []  # no half cache, nor its temporary folder
    assert train(cfg)["global_step"] > 0  # and the next run builds it


def test_a_log_file_the_disk_refuses_is_one_warning_and_the_log_goes_on(capsys):
    from stonelab.run_folder import log_file_failures_in_one_line

    logger = logging.getLogger("stonelab.tests.full_log")
    logger.propagate, logger.level = False, logging.INFO
    console = io.StringIO()
    full = logging.FileHandler("/dev/full")  # every write: ENOSPC
    logger.handlers = [full, logging.StreamHandler(console)]
    try:
        log_file_failures_in_one_line(logger)
        log_file_failures_in_one_line(logger)  # installed twice (a multirun's jobs): still one warning
        for step in range(3):
            logger.info("step %d", step)
    finally:
        logger.handlers = []
        with contextlib.suppress(OSError):
            full.close()
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"warning: the log file /dev/full cannot be written: {FULL}; free space on that disk, or choose "
                   "a folder that can be written with hydra.run.dir=... or paths.log_dir=...; the log continues on "
                   "the console only"]
    assert console.getvalue().splitlines() == ["step 0", "step 1", "step 2"]


def test_a_failed_write_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    target = tmp_path / "result.json"
    target.write_text("previous")
    real_write = os.write

    def half_then_full(fd, data):
        if len(data) > 1:
            return real_write(fd, bytes(memoryview(data)[: len(data) // 2]))
        raise _full_disk()

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(OSError, match=FULL):
        checkpoint_io.append_whole(target, "a row that does not fit\n")
    monkeypatch.undo()
    assert target.read_text() == "previous"  # cut back: no half line

    def open_filling(file, mode="r", *args, **kwargs):
        return _HalfThenFull(builtins.open(file, mode, *args, **kwargs))

    monkeypatch.setattr(checkpoint_io, "open", open_filling, raising=False)
    with pytest.raises(OSError, match=FULL):
        checkpoint_io.replace_atomically(target, "new content")
    assert target.read_text() == "previous" and [p.name for p in tmp_path.iterdir()] == ["result.json"]


# --- a real full disk ----------------------------------------------------------------------------------------

@pytest.fixture
def small_tmpfs(tmp_path):
    """A 16 MiB tmpfs mounted under ``tmp_path``; skipped where it cannot be mounted (not root)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(disk)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill(path) -> None:
    """Write ``path`` until the disk refuses, so that the next write of anything meets ENOSPC."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    chunk = b"\0" * (1 << 20)
    try:
        while True:
            os.write(fd, chunk)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)


def test_a_real_full_disk_stops_the_run_in_one_line_and_it_resumes(small_tmpfs, monkeypatch, capsys,
                                                                   compose_train, one_thread):
    from stonelab.callbacks.checkpoint import CheckedCheckpointIO
    from stonelab.run_folder import log_file_failures_in_one_line

    run, filler = small_tmpfs / "run", small_tmpfs / "filler"
    save = CheckedCheckpointIO.save_checkpoint

    def save_then_fill(self, checkpoint, path, storage_options=None):
        save(self, checkpoint, path, storage_options)
        if not filler.exists():  # the first last.ckpt is on disk: the disk fills up now
            _fill(filler)
            logging.getLogger("stonelab").info("the disk is full %s", "." * 8192)  # a page more for train.log

    root = logging.getLogger()
    log_file = logging.FileHandler(small_tmpfs / "train.log")  # as Hydra's job logging has it
    level, root.level = root.level, logging.INFO
    root.addHandler(log_file)
    try:
        log_file_failures_in_one_line()
        with pytest.raises(SystemExit) as stop, monkeypatch.context() as patch:
            patch.setattr(CheckedCheckpointIO, "save_checkpoint", save_then_fill)
            run_or_explain(train, compose_train(["trainer.max_epochs=3", "logger=csv", *EVAL_OFF], run))
    finally:
        root.removeHandler(log_file)
        root.level = level
        filler.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            log_file.close()
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    last = run / "checkpoints" / "last.ckpt"
    # The first error is the one shown (the loggers' last flush failed after it), and train.log is one warning.
    assert [line for line in err if line.startswith("error: ")] == [
        f"error: could not save the checkpoint {last} ({FULL}): the previous last.ckpt is intact and the run "
        f"stopped; free space on that disk or make the folder writable; the last checkpoint {last} is whole: "
        f"resume from it with python src/train.py ckpt_path={last}"], err
    assert len(err) == 2 and err[0].startswith(f"warning: the log file {small_tmpfs / 'train.log'} cannot be "
                                               f"written: {FULL}"), err
    assert sorted(p.name for p in last.parent.iterdir()) == ["last.ckpt"]
    assert _resumes(compose_train, run, epochs=3) == 6  # space freed: the run goes on from its epoch 1


def test_torch_save_reports_a_full_disk_as_an_os_error_only_through_stonelab(small_tmpfs):
    """Why checkpoints are serialised in memory first: torch's zip writer says RuntimeError."""
    _fill(small_tmpfs / "filler")
    big = {"w": torch.zeros(1 << 16)}
    with pytest.raises(RuntimeError, match="PytorchStreamWriter|unexpected pos|file write failed"):
        torch.save(big, small_tmpfs / "direct.ckpt")
    with pytest.raises(OSError) as refused:
        checkpoint_io.AtomicCheckpointIO().save_checkpoint(big, small_tmpfs / "last.ckpt")
    assert refused.value.errno == errno.ENOSPC
    assert not (small_tmpfs / "last.ckpt").exists() and not list(small_tmpfs.glob(".tmp-*"))
