"""stonelab.resume: ckpt_path=<run>/checkpoints/last.ckpt continues the run as it was set up."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stonelab.resume import override_key, resume_argv


def _run_folder(tmp_path: Path, overrides: list[str]) -> Path:
    run = tmp_path / "run"
    (run / ".hydra").mkdir(parents=True)
    (run / "checkpoints").mkdir()
    (run / "checkpoints" / "last.ckpt").write_bytes(b"x")
    (run / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(overrides))
    return run


def test_override_key_strips_append_and_delete_marks():
    assert override_key("+trainer.max_steps=5") == "trainer.max_steps"
    assert override_key("~callbacks.progress_bar=null") == "callbacks.progress_bar"
    assert override_key("game=gomoku_8x8_c5") == "game"


def test_resume_reapplies_the_runs_overrides_and_lets_the_command_line_win(tmp_path):
    run = _run_folder(tmp_path, ["game=gomoku_8x8_c5", "callbacks.selfplay.parallel_games=4",
                                 "search.playouts=200", "ckpt_path=old.ckpt", "hydra.run.dir=elsewhere"])
    argv, note = resume_argv([f"ckpt_path={run}/checkpoints/last.ckpt", "search.playouts=100", "seed=3"])
    assert argv[:2] == ["game=gomoku_8x8_c5", "callbacks.selfplay.parallel_games=4"]
    assert "search.playouts=100" in argv and "search.playouts=200" not in argv
    assert f"hydra.run.dir={run}" in argv  # the same run folder
    assert not any(a.startswith("ckpt_path=old") or a == "hydra.run.dir=elsewhere" for a in argv)
    assert "changed now: search.playouts=200 -> 100" in note and "added now: seed=3" in note


def test_resume_leaves_other_command_lines_alone(tmp_path):
    assert resume_argv(["game=gomoku_8x8_c5"]) == (["game=gomoku_8x8_c5"], None)
    lone = tmp_path / "lone.ckpt"
    lone.write_bytes(b"x")
    assert resume_argv([f"ckpt_path={lone}"]) == ([f"ckpt_path={lone}"], None)  # no run folder beside it
    run = _run_folder(tmp_path, ["seed=2"])
    argv, _ = resume_argv(["-m", f"ckpt_path={run}/checkpoints/last.ckpt"])
    assert argv == ["-m", f"ckpt_path={run}/checkpoints/last.ckpt"]  # a multirun is many runs


@pytest.fixture
def run_train(repo_root):
    """``run_train(args, cwd)``: src/train.py in a subprocess."""
    train_py = str(repo_root / "src" / "train.py")
    return lambda args, cwd: subprocess.run([sys.executable, train_py, *args], cwd=cwd,
                                            capture_output=True, text=True, timeout=600)


@pytest.mark.slow  # two train.py runs; resume_argv above and test_train.py's exact resume are faster
def test_resume_with_no_overrides_continues_the_run_in_its_folder(tmp_path, run_train, tiny_overrides):
    run = tmp_path / "run"
    first = run_train([*tiny_overrides, "callbacks.selfplay.parallel_games=3",
                       "callbacks.evaluation.every_n_rounds=1", f"hydra.run.dir={run}"], tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    (run / "checkpoints" / ".tmp-killed.ckpt").write_bytes(b"half a checkpoint")  # a save killed midway
    again = run_train([f"ckpt_path={run}/checkpoints/last.ckpt", "trainer.max_epochs=2"], tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"resuming {run} with its settings" in again.stderr
    assert "changed now: trainer.max_epochs=1 -> 2" in again.stderr
    result = json.loads((run / "result.json").read_text())
    assert "callbacks.selfplay.parallel_games=3" in result["overrides"]  # the run's own settings
    assert result["train_steps"] == 4
    assert not list((run / "checkpoints").glob(".tmp-*"))
    evaluations = [json.loads(line) for line in (run / "checkpoints" / "evaluations.jsonl").read_text().splitlines()]
    assert len({e["round"] for e in evaluations}) == len(evaluations) >= 2  # both sessions, once each
    rows = list(csv.DictReader((run / "csv" / "metrics.csv").open()))
    steps = {int(r["step"]) for r in rows if r.get("train/loss")}
    assert steps == {0, 1, 2, 3}  # both sessions' updates in one metrics.csv
    assert not (tmp_path / "logs").exists()  # no second run folder
