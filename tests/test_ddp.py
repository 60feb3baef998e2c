"""trainer=ddp with two CPU processes (gloo): both ranks reach every collective, in the same order.

Each rank plays its own games, so its buffer fills at its own pace. When the first fill
took one rank a round more than the other, the rank ahead reached Evaluation's
every_n_rounds match (a collective) alone while the other waited in Lightning's
max_time check: both processes hung, idle, and SIGTERM could not end them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

# Measured with seed 1 on 6x6 connect-4 (search.playouts=12): rank 0's first game adds
# 96 positions (8 symmetries), rank 1's 136, so with one game per round and a batch of
# 128 rank 0 needs two rounds to fill its buffer and rank 1 only one.
UNEVEN_FILL = ["seed=1", "callbacks.selfplay.games_per_round=1", "data.batch_size=128"]


def test_ddp_ranks_stay_in_step_when_their_buffers_fill_unevenly(tmp_path, repo_root, tiny_overrides):
    proc = subprocess.run(
        [sys.executable, str(repo_root / "src" / "train.py"), *tiny_overrides, *UNEVEN_FILL,
         "trainer=ddp", "trainer.accelerator=cpu", "trainer.devices=2", "trainer.limit_train_batches=3",
         "trainer.strategy.timeout.minutes=1",  # a rank left alone in a collective fails in a minute
         "callbacks.selfplay.torch_threads=1", "logger=none",
         f"paths.output_dir={tmp_path}", f"hydra.run.dir={tmp_path}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["world_size"] == 2
    assert result["train_steps"] == 3
    # Both ranks filled for two rounds (rank 0's need), then played one round per step.
    assert result["rounds"] == 2 + 3
    assert result["games_played_all_ranks"] == 2 * result["games_played"]
    assert result["ddp_weights_max_abs_diff"] == 0.0  # gradients were averaged across ranks
    # Round 4 (every_n_rounds=2) and the match at the end, each with both ranks' games.
    assert [e["round"] for e in result["evaluations"]] == [4, 5]
    assert all(e["wins"] + e["draws"] + e["losses"] == 2 for e in result["evaluations"])
    last = torch.load(tmp_path / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=True)
    assert last["stonelab"]["train_steps"] == 3
    assert last["stonelab"]["rounds"] == 5


@pytest.mark.slow  # the uneven-fill DDP run above checks the same counters and weights
def test_ddp_two_cpu_processes_each_play_their_own_games(tmp_path, repo_root, tiny_overrides):
    proc = subprocess.run(
        [sys.executable, str(repo_root / "src" / "train.py"), *tiny_overrides, "trainer=ddp",
         "trainer.accelerator=cpu", "trainer.devices=2", f"paths.output_dir={tmp_path}",
         f"hydra.run.dir={tmp_path}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["world_size"] == 2
    assert result["train_steps"] == 2  # equal batch counts on both ranks (DDP would hang otherwise)
    assert result["games_played_all_ranks"] == 2 * result["games_played"]
    assert result["ddp_weights_max_abs_diff"] == 0.0  # gradients were averaged across ranks
    assert sum(e["wins"] + e["draws"] + e["losses"] for e in result["evaluations"][:1]) == 2
