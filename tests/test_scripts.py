"""scripts/: the side-by-side runner names real experiments and collects its runs."""

from __future__ import annotations

import csv
import re
import subprocess

import pytest


@pytest.fixture
def side_by_side(repo_root):
    return repo_root / "scripts" / "side_by_side.sh"


def test_documented_invocations_name_existing_experiments(side_by_side, conf_dir):
    text = side_by_side.read_text()
    names = set(re.findall(r"\b((?:ablation|table1)_[a-z0-9_]+)\b", text))
    assert len(names) >= 11
    for name in names:
        assert (conf_dir / "experiment" / f"{name}.yaml").exists(), name


@pytest.mark.slow  # two whole experiments side by side
def test_runs_two_experiments_side_by_side_and_collects_them(tmp_path, side_by_side, repo_root):
    out = tmp_path / "sbs"
    tiny = ["callbacks.selfplay.games_per_round=2", "callbacks.selfplay.steps_per_round=1",
            "callbacks.evaluation.games=2", "callbacks.evaluation.pure_playouts=20",
            "callbacks.evaluation.max_pure_playouts=20", "search.playouts=8", "trainer.max_epochs=1",
            "trainer.limit_train_batches=1", "data.batch_size=8"]
    proc = subprocess.run(["bash", str(side_by_side), str(out), "00:00:05:00", "2", "ablation_base",
                           "ablation_local6", "--", *tiny], cwd=repo_root, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "done ablation_base" in proc.stdout and "done ablation_local6" in proc.stdout
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert sorted(r["task_name"] for r in rows) == ["ablation_local6", "ablation_none"]
    assert (out / "pruning_tradeoff.png").exists()


def test_usage_without_arguments(side_by_side, repo_root):
    proc = subprocess.run(["bash", str(side_by_side)], cwd=repo_root, capture_output=True, text=True)
    assert proc.returncode == 2 and "side_by_side.sh OUT MAX_TIME PARALLEL" in proc.stdout
