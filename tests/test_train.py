"""src/train.py and stonelab.pipeline: whole runs, resume, and user errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from conftest import ROOT, TINY, compose_train
from stonelab.pipeline import build, train

GAMES = ["gomoku_6x6_c4", "gomoku_8x8_c4", "gomoku_8x8_c5", "gomoku_15x15_c5"]


@pytest.mark.parametrize("game", GAMES)
def test_fast_dev_run_every_game(game, tmp_path):
    cfg = compose_train([f"game={game}", "+trainer.fast_dev_run=true", "logger=none"], tmp_path)
    result = train(cfg)
    assert result["train_steps"] == 1
    assert result["game"] == game
    assert result["rounds"] >= 1


def test_run_writes_checkpoints_metrics_and_result(tmp_path):
    cfg = compose_train(["trainer.max_epochs=2"], tmp_path)
    result = train(cfg)
    assert (tmp_path / "checkpoints" / "last.ckpt").is_file()
    assert (tmp_path / "checkpoints" / "best.ckpt").is_file()
    evals = [json.loads(line) for line in (tmp_path / "checkpoints" / "evaluations.jsonl").read_text().splitlines()]
    assert [e["round"] for e in evals][:2] == [2, 4]
    assert all(0.0 <= e["ci_low"] <= e["win_ratio"] <= e["ci_high"] <= 1.0 for e in evals)
    header = (tmp_path / "csv" / "metrics.csv").read_text().splitlines()[0].split(",")
    for key in ["train/loss", "train/policy_entropy", "train/kl", "train/lr_multiplier",
                "selfplay/game_length", "selfplay/buffer_size", "selfplay/games_per_hour",
                "search/playouts_per_s", "eval/win_ratio"]:
        assert key in header, key
    saved = json.loads((tmp_path / "result.json").read_text())
    assert saved["train_steps"] == result["train_steps"] == 4
    assert saved["final_win_ratio"] == evals[-1]["win_ratio"]


def _state(path):
    return torch.load(path, map_location="cpu", weights_only=True)


def test_resume_continues_exactly(tmp_path):
    """2 epochs straight == 1 epoch, then resume for the second: same weights, buffer, counters."""
    extra = ["callbacks.evaluation.at_train_end=false"]
    straight = compose_train(["trainer.max_epochs=2", "logger=none", *extra], tmp_path / "a")
    train(straight)
    first = compose_train(["trainer.max_epochs=1", "logger=none", *extra], tmp_path / "b")
    train(first)
    resumed = compose_train(["trainer.max_epochs=2", "logger=none",
                             f"ckpt_path={tmp_path / 'b' / 'checkpoints' / 'last.ckpt'}", *extra],
                            tmp_path / "c")
    train(resumed)
    a = _state(tmp_path / "a" / "checkpoints" / "last.ckpt")
    c = _state(tmp_path / "c" / "checkpoints" / "last.ckpt")
    assert a["stonelab"]["rounds"] == c["stonelab"]["rounds"]
    assert a["stonelab"]["train_steps"] == c["stonelab"]["train_steps"] == 4
    assert a["stonelab"]["lr_multiplier"] == c["stonelab"]["lr_multiplier"]
    dm_a = a["SelfPlayDataModule"]["buffer"]
    dm_c = c["SelfPlayDataModule"]["buffer"]
    assert dm_a["positions_added"] == dm_c["positions_added"]
    assert dm_a["batches_drawn"] == dm_c["batches_drawn"]
    assert torch.equal(dm_a["states_bcnn"], dm_c["states_bcnn"])
    for key, value in a["state_dict"].items():
        assert torch.equal(value, c["state_dict"][key]), key


def test_bad_values_give_one_line_errors(tmp_path):
    for override, words in [
        (["game.win_length=9"], "game.win_length=9"),
        (["game.board_size=4"], "game.board_size=4"),
        (["search.playouts=0"], "search.playouts=0"),
        (["search.playouts=abc"], "search.playouts='abc'"),
        (["model.lr=-1"], "model.lr=-1"),
        (["callbacks.selfplay.games_per_round=0"], "callbacks.selfplay.games_per_round=0"),
        (["callbacks.evaluation.games=x"], "callbacks.evaluation.games='x'"),
        (["pruning.window=-2"], "pruning.window=-2"),
        (["pruning=local", "pruning.window=9", "pruning.fallback=false", "game=gomoku_8x8_c5"],
         "pruning.window=9 is larger than the 8x8 board"),
        (["data.num_workers=2"], "data.num_workers"),
    ]:
        cfg = compose_train([*override, "logger=none"], tmp_path)
        with pytest.raises(Exception) as info:
            build(cfg)
        from stonelab.cli import user_error

        assert user_error(info.value) is not None, override
        assert words in str(user_error(info.value))


def _run_cli(args, cwd):
    return subprocess.run([sys.executable, str(ROOT / "src" / "train.py"), *TINY, *args],
                          cwd=cwd, capture_output=True, text=True, timeout=600)


def test_cli_reports_user_errors_without_traceback(tmp_path):
    proc = _run_cli(["game=gomoku_6x6_c4", "game.win_length=7", f"paths.output_dir={tmp_path}"], tmp_path)
    assert proc.returncode == 2
    assert "error: game.win_length=7" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_unknown_key_is_refused(tmp_path):
    proc = _run_cli(["trainer.max_epochz=3", f"paths.output_dir={tmp_path}"], tmp_path)
    assert proc.returncode != 0
    assert "max_epochz" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_checkpoint_of_other_board_is_refused(tmp_path):
    six = tmp_path / "six"
    train(compose_train(["logger=none"], six))
    proc = _run_cli(["game=gomoku_8x8_c5", f"ckpt_path={six / 'checkpoints' / 'last.ckpt'}",
                     f"paths.output_dir={tmp_path / 'eight'}"], tmp_path)
    assert proc.returncode == 2
    assert "board_size: checkpoint has 6, this run has 8" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "eight" / "checkpoints").exists()  # refused before training


def test_tiny_end_to_end_cli_run(tmp_path):
    proc = _run_cli([f"paths.output_dir={tmp_path}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["train_steps"] == 2
    assert "final_win_ratio" in result


@pytest.mark.parametrize("logger", ["tensorboard", "wandb"])
def test_other_loggers(logger, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    cfg = compose_train([f"logger={logger}", "+trainer.fast_dev_run=true"], tmp_path)
    train(cfg)
    written = [p.name for p in tmp_path.rglob("*") if p.is_file()]
    marker = "events.out.tfevents" if logger == "tensorboard" else ".wandb"
    assert any(marker in name for name in written), written
