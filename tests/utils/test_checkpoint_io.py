"""stonelab.utils.checkpoint_io: a crash during a save never breaks the old checkpoint."""

from __future__ import annotations

import os

import pytest
import torch

from stonelab.utils.checkpoint_io import AtomicCheckpointIO


def test_save_replaces_atomically(tmp_path):
    io = AtomicCheckpointIO()
    path = tmp_path / "last.ckpt"
    io.save_checkpoint({"step": torch.tensor(1)}, path)
    io.save_checkpoint({"step": torch.tensor(2)}, path)
    assert int(torch.load(path, weights_only=True)["step"]) == 2
    assert sorted(os.listdir(tmp_path)) == ["last.ckpt"]  # no temporary files left
    assert oct(os.stat(path).st_mode & 0o777) != oct(0o600)


def test_a_crash_mid_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    io = AtomicCheckpointIO()
    path = tmp_path / "last.ckpt"
    io.save_checkpoint({"step": torch.tensor(1)}, path)

    real_save = torch.save

    def dying_save(obj, f, *args, **kwargs):
        f.write(b"half a checkpoint")
        raise KeyboardInterrupt("killed during save")

    monkeypatch.setattr(torch, "save", dying_save)
    with pytest.raises(KeyboardInterrupt):
        io.save_checkpoint({"step": torch.tensor(2)}, path)
    monkeypatch.setattr(torch, "save", real_save)
    assert int(torch.load(path, weights_only=True)["step"]) == 1
    assert sorted(os.listdir(tmp_path)) == ["last.ckpt"]
