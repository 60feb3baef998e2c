"""stonelab.run_folder: no half-written checkpoints, no empty run folders, unwritable folders in one line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from stonelab.run_folder import RunFolderError, check_writable, remove_if_litter, remove_partial_checkpoints


def test_partial_checkpoints_are_removed_and_real_ones_kept(tmp_path):
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    (folder / ".tmp-abc.ckpt").write_bytes(b"half")
    (folder / "last.ckpt").write_bytes(b"whole")
    assert [p.name for p in remove_partial_checkpoints(str(tmp_path))] == [".tmp-abc.ckpt"]
    assert [p.name for p in folder.iterdir()] == ["last.ckpt"]


def test_only_a_folder_of_hydras_files_is_litter(tmp_path):
    run = tmp_path / "run"
    (run / ".hydra").mkdir(parents=True)
    for name in [".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml", "train.log"]:
        (run / name).write_text("x")
    assert remove_if_litter(str(run)) and not run.exists()
    kept = tmp_path / "kept"
    (kept / ".hydra").mkdir(parents=True)
    (kept / ".hydra" / "config.yaml").write_text("x")
    (kept / "notes.txt").write_text("mine")
    assert not remove_if_litter(str(kept)) and (kept / "notes.txt").exists() and (kept / ".hydra").exists()
    assert not remove_if_litter(str(tmp_path / "missing"))


def test_a_run_refused_before_training_leaves_no_folder(tmp_path, repo_root, tiny_overrides):
    proc = subprocess.run([sys.executable, str(repo_root / "src" / "train.py"), *tiny_overrides,
                           "data.batch_size=abc"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr.strip() == "error: data.batch_size='abc' must be a whole number >= 1"
    assert list(tmp_path.iterdir()) == []  # not even an empty logs/train/runs/


def test_a_run_folder_under_a_file_is_one_line_before_any_work(tmp_path, capsys, compose_train):
    from stonelab.cli import run_or_explain
    from stonelab.pipeline import train

    (tmp_path / "afile").write_text("a file where a folder belongs")
    cfg = compose_train(["logger=csv"], tmp_path / "afile" / "run")
    with pytest.raises(SystemExit) as stop:
        run_or_explain(train, cfg)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: the run folder {tmp_path / 'afile' / 'run'} cannot be written: Not a directory; "
                   "choose a folder that can be written with hydra.run.dir=... or paths.log_dir=..."]


def test_a_full_disk_is_named_with_what_to_do(tmp_path, monkeypatch):
    import os

    def full(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(RunFolderError, match=r"cannot be written: No space left on device; free space on that disk"):
        check_writable(str(tmp_path / "run"))
    assert list(tmp_path.iterdir()) == []  # no probe, and no folder made for it, left behind


@pytest.mark.parametrize("where", ["hydra.run.dir", "paths.output_dir"])
def test_cli_names_an_unwritable_run_folder_in_one_line(where, tmp_path, repo_root, tiny_overrides):
    (tmp_path / "afile").write_text("a file where a folder belongs")
    run = tmp_path / "afile" / "run"
    # The Hydra callback that checks hydra.run.dir before Hydra makes it (a no-op where conf/hydra has it).
    check = "++hydra.callbacks.run_folder._target_=stonelab.run_folder.RunFolderCheck"
    proc = subprocess.run([sys.executable, str(repo_root / "src" / "train.py"), *tiny_overrides, check,
                           f"{where}={run}", f"paths.log_dir={tmp_path / 'logs'}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines() == [
        f"error: the run folder {run} cannot be written: Not a directory; "
        "choose a folder that can be written with hydra.run.dir=... or paths.log_dir=..."]
    assert not (tmp_path / "logs").exists()  # no run folder elsewhere either


def test_runs_started_in_the_same_second_get_folders_of_their_own(tmp_path):
    """Two runs whose time-stamped folder names are the same (started in the same second) each
    get a folder of their own, and a folder given on the command line is kept as given."""
    from omegaconf import OmegaConf

    from stonelab.run_folder import claim_time_stamped_folder

    def config(run_dir):
        return OmegaConf.create({"hydra": {"run": {"dir": run_dir}}})

    stamped = f"{tmp_path}/runs/${{now:%Y-%m-%d_%H-%M-%S}}"
    first, second = config(stamped), config(stamped)
    OmegaConf.set_readonly(second, True)  # as Hydra hands it to its callbacks
    claimed = [claim_time_stamped_folder(first), claim_time_stamped_folder(second)]
    assert claimed[1] == claimed[0] + "_2" and all(os.path.isdir(folder) for folder in claimed)
    assert [first.hydra.run.dir, second.hydra.run.dir] == claimed
    given = config(str(tmp_path / "runs"))  # exists already: going on in it
    assert claim_time_stamped_folder(given) is None and given.hydra.run.dir == str(tmp_path / "runs")
