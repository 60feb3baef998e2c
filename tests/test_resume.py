"""stonelab.resume: ckpt_path=<run>/checkpoints/last.ckpt continues the run as it was set up."""

from __future__ import annotations

import copy
import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stonelab.resume import launched_rank, override_key, resume_argv


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


def test_the_rank_a_launcher_gave_this_process(monkeypatch):
    for key in ("RANK", "LOCAL_RANK", "SLURM_PROCID"):
        monkeypatch.delenv(key, raising=False)
    assert launched_rank() == 0  # no launcher
    monkeypatch.setenv("SLURM_PROCID", "3")
    assert launched_rank() == 3  # srun
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert launched_rank() == 1  # a process Lightning started itself
    monkeypatch.setenv("RANK", "5")
    assert launched_rank() == 5  # torchrun


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


# -- supervised Go runs (model=maddison_cnn data=kgs) built up in pieces from last.ckpt

_TINY_CNN = ["model.net.depth=3", "model.net.filters=8", "model.optimizer=adamw", "model.lr=0.001",
             "model.lr_halving_every_epochs=1", "trainer.max_time=00:01:00:00", "trainer.log_every_n_steps=1"]


class _Recorder:
    """What each fit saw: the first targets of every training batch, and the state it started from."""

    def __init__(self):
        self.batches: list[tuple[int, tuple[int, ...], float]] = []  # (global step, first targets, rate)
        self.starts: list[dict] = []

    def callback(self):
        import lightning as L

        from stonelab.callbacks.budget import Budget

        recorder = self

        class Record(L.Callback):
            def on_train_start(self, trainer, pl_module):
                optimizer = trainer.optimizers[0]
                budget = next(c for c in trainer.callbacks if isinstance(c, Budget))  # the whole job's clock
                recorder.starts.append({
                    "step": trainer.global_step, "optimizer": copy.deepcopy(optimizer.state_dict()),  # updated in place
                    "scheduler": trainer.lr_scheduler_configs[0].scheduler.state_dict(),
                    "job_s": budget.elapsed()})

            def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
                lr = trainer.optimizers[0].param_groups[0]["lr"]
                recorder.batches.append((trainer.global_step, tuple(batch["target"][:8].tolist()), lr))

        return Record()


@pytest.fixture
def fit_go(tmp_path, compose_go, monkeypatch):
    """``fit_go(folder, overrides) -> result``: one tiny maddison_cnn session writing into
    ``tmp_path/folder`` (the sample games and their cache are shared); ``fit_go.recorder``
    holds what every session saw."""
    from stonelab import pipeline

    recorder, build = _Recorder(), pipeline.build

    def recording_build(cfg):
        *parts, trainer = build(cfg)
        trainer.callbacks.append(recorder.callback())
        return (*parts, trainer)

    monkeypatch.setattr(pipeline, "build", recording_build)

    def fit(folder: str, overrides: list[str]) -> dict:
        cfg = compose_go("maddison_cnn", [*_TINY_CNN, *overrides, f"paths.output_dir={tmp_path / folder}"], tmp_path)
        return pipeline.train(cfg)

    fit.recorder = recorder
    return fit


def _checkpoint(path: Path) -> dict:
    import torch

    return torch.load(path, map_location="cpu", weights_only=True)


def test_a_go_run_resumed_twice_trains_as_one_uninterrupted_run(tmp_path, fit_go, one_thread):
    import torch

    fit_go("straight", ["trainer.max_epochs=3"])
    straight = list(fit_go.recorder.batches)
    straight_weights = _checkpoint(tmp_path / "straight" / "checkpoints" / "last.ckpt")["state_dict"]
    fit_go.recorder.batches.clear()

    last = tmp_path / "pieced" / "checkpoints" / "last.ckpt"
    fit_go("pieced", ["trainer.max_epochs=1"])
    saved = _checkpoint(last)
    fit_go("pieced", ["trainer.max_epochs=2", f"ckpt_path={last}"])
    result = fit_go("pieced", ["trainer.max_epochs=3", f"ckpt_path={last}"])

    # The same steps on the same batches, and so the same weights, as the run that never stopped.
    assert [b[0] for b in fit_go.recorder.batches] == list(range(9))
    assert fit_go.recorder.batches == straight
    final = _checkpoint(last)
    assert final["global_step"] == 9  # last.ckpt is the latest epoch, not the best one
    weights = [k for k in final["state_dict"] if k.startswith("net.")]
    assert weights and all(torch.equal(final["state_dict"][k], straight_weights[k]) for k in weights)

    # The second session started from the first one's step, AdamW moments, schedule and clock.
    second = fit_go.recorder.starts[2]  # starts: straight, pieced x3
    assert second["step"] == saved["global_step"] == 3
    saved_moments = saved["optimizer_states"][0]["state"]
    assert all(torch.equal(second["optimizer"]["state"][i]["exp_avg"], saved_moments[i]["exp_avg"])
               for i in saved_moments)
    assert second["scheduler"] == saved["lr_schedulers"][0]
    assert second["scheduler"]["last_epoch"] == 1  # the rate was halved once already
    assert second["job_s"] >= saved["callbacks"]["Budget"]["elapsed_s"] > 0

    # One metrics.csv holding every session's updates once; best/last point at files of this run.
    rows = list(csv.DictReader((tmp_path / "pieced" / "csv" / "metrics.csv").open()))
    assert sorted(int(r["step"]) for r in rows if r.get("train/loss")) == list(range(9))
    assert result["global_step"] == 9 and result["last_checkpoint"] == str(last)
    best = list((tmp_path / "pieced" / "checkpoints").glob("best-*.ckpt"))
    assert [str(b) for b in best] == [result["best_checkpoint"]]  # save_top_k=1: the earlier best is gone


def test_a_go_run_resumed_mid_epoch_reads_a_fresh_pass_the_same_way_each_time(tmp_path, fit_go, one_thread):
    fit_go("run", ["trainer.max_epochs=1", "trainer.max_steps=2"])  # stops inside its 3-batch epoch
    first_batch = fit_go.recorder.batches[0][1]
    checkpoints = tmp_path / "run" / "checkpoints"
    assert _checkpoint(checkpoints / "last.ckpt")["global_step"] == 2
    for folder in ("again_a", "again_b"):
        shutil.copytree(checkpoints, tmp_path / folder / "checkpoints")

    resumed = {}
    for folder in ("again_a", "again_b"):
        fit_go.recorder.batches.clear()
        fit_go(folder, ["trainer.max_epochs=2", f"ckpt_path={tmp_path / folder / 'checkpoints' / 'last.ckpt'}"])
        resumed[folder] = list(fit_go.recorder.batches)
    assert resumed["again_a"] == resumed["again_b"]  # deterministic
    assert resumed["again_a"][0][0] == 2  # the step goes on
    assert resumed["again_a"][0][1] != first_batch  # not the run's first batches again
