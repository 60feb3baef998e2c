"""Othello through the framework it was plugged into: training with exact resume, task=match
against its own positional player, and the benchmark."""

from __future__ import annotations

import json
import subprocess
import sys

import torch

from stonelab import bench
from stonelab.pipeline import train

OTHELLO = ["game=othello_6", "logger=none", "callbacks.evaluation.at_train_end=false"]


def test_othello_trains_and_resumes_exactly(straight_and_resumed):
    """2 epochs straight == 1 epoch then a resume; the checkpoint says Othello 6x6 and the buffer
    holds its 4 planes and 37 actions."""
    a, c, result = straight_and_resumed(OTHELLO)
    assert result["game"] == "othello_6x6"
    assert c["stonelab"]["identity"] == {"model": "alphazero", "game": "othello", "board_size": 6}
    assert a["stonelab"]["train_steps"] == c["stonelab"]["train_steps"] == 4
    buffer = c["SelfPlayDataModule"]["buffer"]
    assert buffer["states_bcnn"].shape[1:] == (4, 6, 6) and buffer["policies_ba"].shape[1] == 37
    assert torch.equal(a["SelfPlayDataModule"]["buffer"]["states_bcnn"], buffer["states_bcnn"])
    for key, value in a["state_dict"].items():
        assert torch.equal(value, c["state_dict"][key]), key


def test_match_against_the_positional_player_and_a_misspelt_opponent(tmp_path, compose_train, repo_root):
    train(compose_train(["trainer.max_epochs=1", *OTHELLO], tmp_path / "run"))
    ckpt = tmp_path / "run" / "checkpoints" / "last.ckpt"

    def run_eval(*args):
        return subprocess.run([sys.executable, str(repo_root / "src" / "eval.py"), "task=match", f"ckpt_path={ckpt}",
                               "search.playouts=8", f"paths.output_dir={tmp_path}", *args],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)

    proc = run_eval("opponent=positional", "games=2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "match.json").read_text())
    assert result["game"] == "othello_6x6" and result["opponent"] == "positional"
    assert result["opponent_playouts"] is None and "vs positional (no search)" in proc.stdout
    assert result["wins"] + result["draws"] + result["losses"] == 2
    proc = run_eval("opponent=positionl")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "opponent=positionl: no such file, and not an opponent of Othello (pure_mcts, positional, random)" \
        in proc.stderr


def test_bench_mcts_runs_othello(capsys):
    code = bench.main(["mcts", "--json", "--game", "othello_8", "--games", "1", "--parallel", "1", "--playouts", "2",
                       "--pure-playouts", "20", "--seconds", "0.05", "--threads", "1"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["game"] == "othello_8x8"
    for key in ["pure_playouts_per_s", "neural_playouts_per_s", "forward_states_per_s"]:
        assert out[key] > 0, key
