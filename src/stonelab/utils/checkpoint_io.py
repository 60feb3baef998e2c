"""Files written whole: checkpoints (and result.json, metrics.csv's rewrites) go to a temporary
file that is then renamed over the target, appends (metrics rows, evaluations.jsonl) are taken
back when the disk refuses part of them.

A kill or a full disk during a save leaves the previous file untouched: os.replace is atomic
on POSIX within one file system. A checkpoint is serialised in memory first: torch.save's own
zip writer reports a full disk as ``RuntimeError: [enforce fail at inline_container.cc] ...
PytorchStreamWriter failed writing file``, while Python's file I/O raises an OSError with
ENOSPC, which the callers turn into one line (`stonelab.callbacks.checkpoint`). The cost is a
second copy of the checkpoint in memory while it is written.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Iterator

import torch
from lightning.pytorch.plugins.io import TorchCheckpointIO


class AtomicCheckpointIO(TorchCheckpointIO):
    def save_checkpoint(self, checkpoint, path, storage_options=None) -> None:
        buffer = io.BytesIO()
        torch.save(checkpoint, buffer)  # nothing written yet: the disk's refusal comes below, as an OSError
        replace_atomically(path, buffer.getbuffer())


@contextlib.contextmanager
def temporary_beside(path) -> Iterator[str]:
    """A temporary file's name in ``path``'s folder, for the block to write; synced and renamed over
    ``path`` when the block ends, removed (``path`` as it was) when the block or the rename fails."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.splitext(path)[1], dir=folder)
    os.close(fd)
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)  # on disk before the rename: a crash then leaves the old file or the new one
        finally:
            os.close(fd)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the usual permissions
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)  # a full disk gets its space back
        raise


def replace_atomically(path, data: bytes | str | memoryview) -> None:
    """``data`` (str: UTF-8) as the whole new content of ``path``, or, if that fails, ``path`` as it was."""
    with temporary_beside(path) as tmp, open(tmp, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def append_whole(path, data: bytes | str) -> None:
    """``data`` (str: UTF-8) appended to ``path`` (made if missing), or, when the disk refuses any of
    it, ``path`` cut back to its previous length: no half line for a reader to trip on."""
    view = memoryview(data.encode() if isinstance(data, str) else data)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        start = os.fstat(fd).st_size
        try:
            while view:
                view = view[os.write(fd, view):]
        except BaseException:
            with contextlib.suppress(OSError):  # the write's own error is the one to report
                os.ftruncate(fd, start)
            raise
    finally:
        os.close(fd)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask
