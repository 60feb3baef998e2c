"""stonelab.callbacks.checkpoint and wall_clock: last.ckpt by time, failed saves, the run's time across resumes."""

from __future__ import annotations

import json

import pytest
import torch

from stonelab.callbacks.checkpoint import CheckpointSaveError, CurrentLastCheckpoint
from stonelab.errors import ConfigError, StonelabError
from stonelab.pipeline import train

TINY_NET = ["model.net.depth=3", "model.net.filters=8", "logger=none"]


def _state(path):
    return torch.load(path, map_location="cpu", weights_only=True)


def _crash_at_step(monkeypatch, step: int) -> None:
    """The supervised run dies (as if killed) when its update ``step`` would begin."""
    from stonelab.models.move_prediction import MovePredictionModule

    training_step = MovePredictionModule.training_step

    def crash(self, batch, batch_idx):
        if self.global_step == step:
            raise RuntimeError("killed")
        return training_step(self, batch, batch_idx)

    monkeypatch.setattr(MovePredictionModule, "training_step", crash)


def test_a_supervised_run_killed_mid_epoch_keeps_its_last_minutes(tmp_path, monkeypatch, compose_go, one_thread):
    _crash_at_step(monkeypatch, 2)
    every_batch = compose_go("maddison_cnn", [*TINY_NET, "callbacks.model_checkpoint.last_every_minutes=1e-6"],
                             tmp_path / "a")
    with pytest.raises(RuntimeError, match="killed"):
        train(every_batch)
    saved = _state(tmp_path / "a" / "out" / "checkpoints" / "last.ckpt")
    assert saved["global_step"] == 2  # the updates before the kill, not the epoch's start
    # Without saves by time the same kill a few seconds in leaves nothing.
    never = compose_go("maddison_cnn", [*TINY_NET, "callbacks.model_checkpoint.last_every_minutes=null",
                                        "callbacks.model_checkpoint.early_last_every_minutes=null"], tmp_path / "b")
    with pytest.raises(RuntimeError, match="killed"):
        train(never)
    assert not (tmp_path / "b" / "out" / "checkpoints" / "last.ckpt").exists()


def test_the_early_interval_saves_until_the_first_validation_then_gives_way(tmp_path, monkeypatch, compose_go,
                                                                            one_thread):
    default = compose_go("maddison_cnn", TINY_NET, tmp_path / "d")
    assert default.callbacks.model_checkpoint.early_last_every_minutes == 0.5
    assert default.callbacks.model_checkpoint.last_every_minutes == 10
    # Epoch 0 (3 steps, then its validation) saves at every step; epoch 1 only at the 10 minutes.
    early = [*TINY_NET, "callbacks.model_checkpoint.early_last_every_minutes=1e-6", "trainer.max_epochs=2"]
    _crash_at_step(monkeypatch, 5)
    with pytest.raises(RuntimeError, match="killed"):
        train(compose_go("maddison_cnn", early, tmp_path))
    folder = tmp_path / "out" / "checkpoints"
    assert _state(folder / "last.ckpt")["global_step"] == 3  # the epoch end's save, none by time after it
    monkeypatch.undo()
    _crash_at_step(monkeypatch, 2)
    with pytest.raises(RuntimeError, match="killed"):
        train(compose_go("maddison_cnn", early, tmp_path / "e"))
    assert _state(tmp_path / "e" / "out" / "checkpoints" / "last.ckpt")["global_step"] == 2


def test_a_resume_of_a_run_that_saved_nothing_says_so_and_how_to_start_again(tmp_path):
    from stonelab.models.identity import load_checkpoint_file

    run = tmp_path / "run"
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "overrides.yaml").write_text("- model=maddison_cnn\n- data=kgs\n")
    with pytest.raises(StonelabError) as refused:
        load_checkpoint_file(str(run / "checkpoints" / "last.ckpt"))
    text = str(refused.value)
    assert f"nothing was saved yet in {run}" in text
    assert text.endswith("start it again with python src/train.py model=maddison_cnn data=kgs")
    (run / "checkpoints").mkdir()
    (run / "checkpoints" / "best-epoch0-step3.ckpt").write_bytes(b"x")
    with pytest.raises(StonelabError, match="no such file; that run saved best-epoch0-step3.ckpt in "):
        load_checkpoint_file(str(run / "checkpoints" / "last.ckpt"))
    with pytest.raises(StonelabError, match=r"ckpt_path=\S+/elsewhere.ckpt: no such file$"):
        load_checkpoint_file(str(tmp_path / "elsewhere.ckpt"))


def test_saves_by_time_leave_the_best_checkpoint_and_the_run_resumes(tmp_path, compose_go, one_thread):
    often = [*TINY_NET, "callbacks.model_checkpoint.last_every_minutes=1e-6"]
    first = train(compose_go("maddison_cnn", often, tmp_path))
    folder = tmp_path / "out" / "checkpoints"
    # A last.ckpt written by time at the epoch's last step does not take the best checkpoint's place.
    assert first["best_checkpoint"] == str(folder / "best-epoch0-step3.ckpt")
    assert first["last_checkpoint"] == str(folder / "last.ckpt")
    assert sorted(p.name for p in folder.iterdir()) == ["best-epoch0-step3.ckpt", "last.ckpt"]
    assert _state(folder / "last.ckpt")["global_step"] == 3
    assert first["job_seconds"] <= first["seconds"] + 1  # the held-out test restored no earlier clock

    saved_seconds = next(v["elapsed_s"] for k, v in _state(folder / "last.ckpt")["callbacks"].items()
                         if k.startswith("WallClock"))
    resumed = train(compose_go("maddison_cnn", [*often, "trainer.max_epochs=2", f"ckpt_path={folder / 'last.ckpt'}"],
                               tmp_path))
    assert resumed["global_step"] == 6
    # The whole run's time, the part before the resume included (result.json rounds to 0.1 s).
    assert resumed["job_seconds"] + 0.1 > saved_seconds + 0.5 * resumed["seconds"]
    assert resumed["job_seconds"] > resumed["seconds"]
    assert json.loads((tmp_path / "out" / "result.json").read_text())["job_seconds"] == resumed["job_seconds"]


@pytest.mark.parametrize("minutes", [0, -5, "soon", True])
@pytest.mark.parametrize("key", ["last_every_minutes", "early_last_every_minutes"])
def test_minutes_between_saves_must_be_a_positive_number(key, minutes):
    with pytest.raises(ConfigError, match=f"{key}={minutes!r} must be a number of minutes > 0"):
        CurrentLastCheckpoint(dirpath="unused", **{key: minutes})


def _disk_full_once_last_exists(monkeypatch, folder):
    """torch.save raises ENOSPC for every checkpoint once a last.ckpt is in ``folder``."""
    save = torch.save

    def save_unless_full(obj, f, *args, **kwargs):
        if (folder / "last.ckpt").exists():
            raise OSError(28, "No space left on device")
        return save(obj, f, *args, **kwargs)

    monkeypatch.setattr(torch, "save", save_unless_full)


def test_a_save_on_a_full_disk_keeps_the_previous_last_ckpt_and_says_so_in_one_line(
        tmp_path, monkeypatch, capsys, compose_train, one_thread):
    from stonelab.cli import run_or_explain

    folder = tmp_path / "checkpoints"
    cfg = compose_train(["trainer.max_epochs=3", "logger=csv", "callbacks.evaluation.every_n_rounds=100",
                         "callbacks.evaluation.at_train_end=false"], tmp_path)
    with monkeypatch.context() as patch:
        _disk_full_once_last_exists(patch, folder)
        with pytest.raises(SystemExit) as stop:
            run_or_explain(train, cfg)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: could not save the checkpoint "), err
    assert "(No space left on device)" in err[0] and "the previous last.ckpt is intact" in err[0]
    # The first epoch's last.ckpt is whole and resumes; the failed save left no temporary file.
    assert _state(folder / "last.ckpt")["stonelab"]["train_steps"] == 2
    assert sorted(p.name for p in folder.iterdir()) == ["last.ckpt"]
    resumed = train(compose_train(["trainer.max_epochs=2", "logger=none", "callbacks.evaluation.every_n_rounds=100",
                                   "callbacks.evaluation.at_train_end=false", f"ckpt_path={folder / 'last.ckpt'}"],
                                  tmp_path))
    assert resumed["train_steps"] == 4


def test_the_failed_save_is_named_even_when_cleanup_then_fails_too():
    from stonelab.run_folder import RunFolderError, disk_trouble

    try:
        try:
            raise CheckpointSaveError("could not save the checkpoint last.ckpt (No space left on device)")
        except CheckpointSaveError:
            raise OSError(28, "No space left on device") from None  # the loggers' last flush
    except OSError as exc:
        flush = exc
    assert isinstance(disk_trouble(flush, "/run"), CheckpointSaveError)
    # A bare full disk names the run folder; other errors are not the disk's.
    assert isinstance(disk_trouble(OSError(28, "No space left on device"), "/run"), RunFolderError)
    assert disk_trouble(OSError(2, "No such file or directory", "/elsewhere/x"), "/run") is None
    assert disk_trouble(RuntimeError("a bug"), "/run") is None
