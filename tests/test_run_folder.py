"""stonelab.run_folder: no half-written checkpoints, no empty run folders."""

from __future__ import annotations

import subprocess
import sys

from stonelab.run_folder import remove_if_litter, remove_partial_checkpoints


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
