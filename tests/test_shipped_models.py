"""The weights under models/: each loads on a fresh clone, has its model card in
models/README.md (name and sha256), and plays a legal move through the same code
src/play.py uses."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import torch

from stonelab.models import checkpoints
from stonelab.models.export import exported_from


def _shipped(repo_root):
    return sorted((repo_root / "models").glob("*.ckpt"))


def test_a_go_model_ships(repo_root):
    games = {checkpoints.load(str(p)).identity["game"] for p in _shipped(repo_root)}
    assert "go" in games, "models/ should hold at least one trained Go model"


def test_each_shipped_file_has_a_model_card(repo_root):
    card = (repo_root / "models" / "README.md").read_text()
    for path in _shipped(repo_root):
        assert path.stat().st_size <= 20 * 2**20, f"{path.name} is over 20 MB"
        assert f"`{path.name}`" in card, f"models/README.md has no card for {path.name}"
        assert hashlib.sha256(path.read_bytes()).hexdigest() in card, f"{path.name}: sha256 not in its card"


def test_each_shipped_file_is_weights_only_and_plays(repo_root):
    from stonelab.models.inference import MovePredictor

    for path in _shipped(repo_root):
        raw = torch.load(path, map_location="cpu", weights_only=True)
        assert exported_from(raw) and "optimizer_states" not in raw, f"{path.name} is not an exported file"
        loaded = checkpoints.load(str(path))
        if loaded.identity["game"] != "go":
            continue
        predictor = MovePredictor.from_checkpoint(str(path))
        state = loaded.game.new_state()
        probs = predictor.probabilities([state])[0]
        assert np.isclose(float(np.sum(probs)), 1.0, atol=1e-3)
        assert state.is_legal(int(predictor.play_moves([state])[0]))


@pytest.mark.parametrize("protocol_input", ["boardsize 19\nclear_board\ngenmove b\nquit\n"])
def test_play_answers_genmove_with_the_shipped_go_model(repo_root, protocol_input):
    import subprocess
    import sys

    go = [p for p in _shipped(repo_root) if checkpoints.load(str(p)).identity["game"] == "go"]
    proc = subprocess.run([sys.executable, str(repo_root / "src" / "play.py"), f"ckpt_path={go[0]}",
                           "search.playouts=8"], input=protocol_input, capture_output=True, text=True,
                          timeout=120, cwd=repo_root)
    answers = [line for line in proc.stdout.splitlines() if line.startswith("=")]
    assert proc.returncode == 0 and len(answers) == 4, proc.stderr[-2000:]
    move = answers[2][1:].strip()
    assert move and move.lower() != "resign"
