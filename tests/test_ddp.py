"""trainer=ddp with two CPU processes (gloo): both ranks reach every collective, in the same order,
play their own games, and resume from the one last.ckpt.

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

# Measured with seed 1 on 6x6 connect-4 (search.playouts=12, every legal move searched, float32):
# rank 0's first game adds 96 positions (8 symmetries), rank 1's 136, so with one game per round
# and a batch of 128 rank 0 needs two rounds to fill its buffer and rank 1 only one.
UNEVEN_FILL = ["seed=1", "callbacks.selfplay.games_per_round=1", "data.batch_size=128", "pruning=none",
               "trainer.precision=32-true"]


def _train(repo_root, args: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(repo_root / "src" / "train.py"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _load(path):
    return torch.load(path, map_location="cpu", weights_only=True)


def test_ddp_ranks_stay_in_step_play_their_own_games_and_resume_from_one_checkpoint(tmp_path, repo_root,
                                                                                    tiny_overrides):
    run = tmp_path / "run"
    proc = _train(repo_root, [*tiny_overrides, *UNEVEN_FILL, "trainer=ddp", "trainer.accelerator=cpu",
                              "trainer.devices=2", "trainer.limit_train_batches=3",
                              "trainer.strategy.timeout.minutes=1",  # a rank left alone in a collective fails in a minute
                              "callbacks.selfplay.torch_threads=1", "logger=none", f"hydra.run.dir={run}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads((run / "result.json").read_text())
    assert result["world_size"] == 2
    assert result["train_steps"] == 3
    # Both ranks filled for two rounds (rank 0's need), then played one round per step.
    assert result["rounds"] == 2 + 3
    assert result["games_played_all_ranks"] == 2 * result["games_played"]
    assert result["ddp_weights_max_abs_diff"] == 0.0  # gradients were averaged across ranks
    # Each rank played its own games (seeded by rank), not copies of rank 0's.
    ranks = result["selfplay_by_rank"]
    assert [r["rank"] for r in ranks] == [0, 1] and all(r["games"] == 5 for r in ranks)
    assert ranks[0]["games_digest"] != ranks[1]["games_digest"]
    # Round 4 (every_n_rounds=2) and the match at the end, each with both ranks' games.
    assert [e["round"] for e in result["evaluations"]] == [4, 5]
    assert all(e["wins"] + e["draws"] + e["losses"] == 2 for e in result["evaluations"])

    # The one last.ckpt holds both ranks' buffers and games in progress.
    first = _load(run / "checkpoints" / "last.ckpt")
    assert (first["stonelab"]["train_steps"], first["stonelab"]["rounds"]) == (3, 5)
    buffers = [first["SelfPlayDataModule"]["buffer"], *first["SelfPlayDataModule"]["other_ranks"]]
    assert len(buffers) == 2 and buffers[0]["positions_added"] != buffers[1]["positions_added"]
    assert len(first["callbacks"]["SelfPlay"]["other_ranks"]) == 1

    # A resume with trainer=ddp (the run's own settings) goes on from it, each rank from its own state.
    again = _train(repo_root, [f"ckpt_path={run / 'checkpoints' / 'last.ckpt'}", "trainer.max_epochs=2"], tmp_path)
    assert again.returncode == 0, again.stderr[-4000:]
    assert again.stderr.count("resuming ") == 1  # said by rank 0 only
    result = json.loads((run / "result.json").read_text())
    assert (result["world_size"], result["train_steps"], result["rounds"]) == (2, 6, 8)
    assert result["ddp_weights_max_abs_diff"] == 0.0
    final = _load(run / "checkpoints" / "last.ckpt")
    for before, after in zip(buffers, [final["SelfPlayDataModule"]["buffer"],
                                       *final["SelfPlayDataModule"]["other_ranks"]], strict=True):
        kept = len(before["states_bcnn"])  # the buffer (2000 positions) did not wrap: its old rows stay
        assert torch.equal(after["states_bcnn"][:kept], before["states_bcnn"])
        assert after["batches_drawn"] == before["batches_drawn"] + 3


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


@pytest.mark.slow  # test_signals.py stops one process the same way; tests/utils/test_distributed.py checks the vote
def test_ddp_ranks_stop_together_on_sigterm_in_a_round(tmp_path, repo_root, tiny_overrides):
    import signal
    import time

    run = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, str(repo_root / "src" / "train.py"), *tiny_overrides, "trainer=ddp", "trainer.accelerator=cpu",
         "trainer.devices=2", "trainer.strategy.timeout.minutes=1", "search.playouts=300",
         "callbacks.selfplay.games_per_round=8", "torch_threads=1", "logger=none", f"hydra.run.dir={run}"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = ""
    for line in proc.stdout:
        out += line
        if "] round 1 |" in line:  # the buffers are filled; round 2 has begun on both ranks
            time.sleep(0.5)
            proc.send_signal(signal.SIGTERM)  # rank 0; Lightning's launcher passes it on to rank 1
            sent = time.monotonic()
            break
    rest, _ = proc.communicate(timeout=120)
    out += rest
    assert proc.returncode == 128 + signal.SIGTERM, out[-4000:]
    assert time.monotonic() - sent < 30, out[-4000:]
    assert "self-play round 2 cut short" in out and "stopped by SIGTERM" in out
    last = _load(run / "checkpoints" / "last.ckpt")
    assert (last["stonelab"]["rounds"], last["stonelab"]["train_steps"]) == (1, 0)
    assert len(last["SelfPlayDataModule"]["other_ranks"]) == 1
    assert json.loads((run / "result.json").read_text())["stopped_by_signal"] == "SIGTERM"


def test_plugins_of_the_config_reach_the_trainer_beside_atomic_checkpoints(tmp_path, compose_train, monkeypatch):
    from lightning.pytorch.plugins.environments import SLURMEnvironment

    from stonelab.pipeline import build
    from stonelab.utils.checkpoint_io import AtomicCheckpointIO

    for key, value in {"SLURM_NTASKS": "2", "SLURM_NTASKS_PER_NODE": "2", "SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_NODEID": "0",
                       "SLURM_JOB_ID": "1", "SLURM_JOB_NAME": "train"}.items():
        monkeypatch.setenv(key, value)  # what srun gives the first of two tasks
    slurm = "{_target_: lightning.pytorch.plugins.environments.SLURMEnvironment, auto_requeue: false}"
    *_, trainer = build(compose_train(["trainer=ddp", "trainer.accelerator=cpu", "logger=none",
                                       f"+trainer.plugins=[{slurm}]"], tmp_path))
    environment = trainer.strategy.cluster_environment
    assert isinstance(environment, SLURMEnvironment) and not environment.auto_requeue  # Lightning's requeue off
    assert isinstance(trainer.strategy.checkpoint_io, AtomicCheckpointIO)
