"""The weights under models/: each loads on a fresh clone, has its model card in
models/README.md (name and sha256), and plays a legal move through the same code
src/play.py uses (GTP for Go, Gomocup for Gomoku)."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import numpy as np
import torch

from stonelab.models import checkpoints
from stonelab.models.export import exported_from
from stonelab.models.identity import load_checkpoint_file


def _shipped(repo_root):
    """The shipped files: torch checkpoints and the torch-free .npz files of Gomocup brains."""
    return sorted([*(repo_root / "models").glob("*.ckpt"), *(repo_root / "models").glob("*.npz")])


def _shipped_for(repo_root, game):
    return [p for p in _shipped(repo_root) if checkpoints.load(str(p)).identity["game"] == game]


def test_a_go_model_and_a_gomoku_model_ship(repo_root):
    assert _shipped_for(repo_root, "go"), "models/ should hold at least one trained Go model"
    assert _shipped_for(repo_root, "gomoku"), "models/ should hold at least one trained Gomoku model"


def test_each_shipped_file_has_a_model_card(repo_root):
    card = (repo_root / "models" / "README.md").read_text()
    for path in _shipped(repo_root):
        assert path.stat().st_size <= 20 * 2**20, f"{path.name} is over 20 MB"
        assert f"`{path.name}`" in card, f"models/README.md has no card for {path.name}"
        assert hashlib.sha256(path.read_bytes()).hexdigest() in card, f"{path.name}: sha256 not in its card"


def test_each_shipped_file_is_weights_only_and_plays(repo_root):
    from stonelab.models.alphazero_go import go_model_from_checkpoint

    for path in _shipped(repo_root):
        raw = load_checkpoint_file(str(path))
        assert exported_from(raw) and "optimizer_states" not in raw, f"{path.name} is not an exported file"
        loaded = checkpoints.load(str(path))
        if loaded.identity["game"] != "go":
            continue
        predictor = go_model_from_checkpoint(str(path))
        state = loaded.game.new_state()
        probs = predictor.probabilities([state])[0]
        assert np.isclose(float(np.sum(probs)), 1.0, atol=1e-3)
        assert state.is_legal(int(predictor.play_moves([state])[0]))


def test_play_answers_genmove_with_each_shipped_go_model(repo_root):
    for path in _shipped_for(repo_root, "go"):
        size = checkpoints.load(str(path)).game.n
        proc = subprocess.run([sys.executable, str(repo_root / "src" / "play.py"), f"ckpt_path={path}",
                               "search.playouts=8"], input=f"boardsize {size}\nclear_board\ngenmove b\nquit\n",
                              capture_output=True, text=True, timeout=120, cwd=repo_root)
        answers = [line for line in proc.stdout.splitlines() if line.startswith("=")]
        assert proc.returncode == 0 and len(answers) == 4, f"{path.name}: {proc.stderr[-2000:]}"
        move = answers[2][1:].strip()
        assert move and move.lower() not in ("resign", "pass"), f"{path.name} answered {move!r} on an empty board"


def test_each_shipped_gomoku_model_is_a_gomocup_brain_that_takes_a_win(repo_root):
    for path in _shipped_for(repo_root, "gomoku"):
        game = checkpoints.load(str(path)).game
        # our four in a row on the third line, open at both ends; the opponent's stones far away
        far = [(0, game.n - 1), (game.n - 1, game.n - 1), (0, game.n - 3), (game.n - 1, game.n - 3)]
        board = "".join(f"{x},2,1\n" for x in range(1, game.k)) + "".join(f"{x},{y},2\n" for x, y in far)
        lines = _brain_answers(repo_root, path, game.n, board)
        assert lines[1] in ("0,2", f"{game.k},2"), f"{path.name} missed the win: {lines}"


def _brain_answers(repo_root, path, size: int, board: str) -> list[str]:
    """The shipped brain's answers to START ``size`` and a BOARD block of ``board`` (stone lines)."""
    proc = subprocess.run([sys.executable, str(repo_root / "src" / "play.py"), "protocol=gomocup",
                           f"ckpt_path={path}", "search.playouts=64"],
                          input=f"START {size}\nBOARD\n{board}DONE\nEND\n", capture_output=True,
                          text=True, timeout=120, cwd=repo_root)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and lines[0] == "OK", f"{path.name}: {proc.stderr[-2000:]}"
    return lines

def test_each_shipped_npz_plays_as_its_checkpoint_does(repo_root):
    """A .npz beside a .ckpt of the same name is that net: numpy's forward pass gives the torch
    net's priors and values, and both files carry the same identity."""
    from stonelab.models.numpy_net import NumpyNet

    for path in (repo_root / "models").glob("*.npz"):
        lean = NumpyNet(str(path))
        twin = path.with_suffix(".ckpt")
        if not twin.exists():
            continue
        loaded = checkpoints.load(str(twin))
        assert lean.identity == loaded.identity
        n = loaded.game.n
        planes = (torch.rand(8, 4, n, n, generator=torch.Generator().manual_seed(0)) < 0.3).float()
        with torch.no_grad():
            log_policy, value = loaded.net(planes)
        priors, values = lean(planes.numpy())
        np.testing.assert_allclose(priors, log_policy.exp().numpy(), atol=1e-4)
        np.testing.assert_allclose(values, value.numpy(), atol=1e-4)


def test_each_shipped_any_size_brain_opens_20x20_and_takes_a_win_there(repo_root):
    """A shipped net with no size-bound layer (model/net=fully_conv) plays Gomocup's 20x20
    board from the same file: START 20, then an open four on the board is finished."""
    from stonelab.models.numpy_net import NumpyNet

    brains = [p for p in (repo_root / "models").glob("*.npz") if NumpyNet(str(p)).size_free]
    for path in brains:
        board = "".join(f"{x},10,1\n" for x in range(8, 12)) + "0,0,2\n19,19,2\n0,19,2\n19,0,2\n"
        lines = _brain_answers(repo_root, path, 20, board)
        assert lines[1] in ("7,10", "12,10"), f"{path.name} missed the win on 20x20: {lines}"


def test_play_averages_the_shipped_move_predictor_over_the_symmetries(repo_root):
    path = repo_root / "models" / "go19_resnet3x64_kgs.ckpt"

    def play(*args):
        return subprocess.run([sys.executable, str(repo_root / "src" / "play.py"), f"ckpt_path={path}", *args],
                              input="genmove b\nquit\n", capture_output=True, text=True, timeout=120, cwd=repo_root)

    proc = play("symmetries=8")
    answers = [line for line in proc.stdout.splitlines() if line.startswith("=")]
    assert proc.returncode == 0 and len(answers) == 2 and answers[0][1:].strip() not in ("", "pass"), proc.stderr[-2000:]
    bad = play("symmetries=3")
    assert bad.returncode == 2 and "symmetries=3: choose 1" in bad.stderr and "Traceback" not in bad.stderr


AUX_NET = "go19_resnet3x64_kgs_aux.ckpt"  # the Go net with ownership and score heads


def test_the_shipped_analysis_net_reports_ownership_and_a_score_and_its_win_rate_moves_with_komi(repo_root):
    path = repo_root / "models" / AUX_NET
    commands = "komi {}\nkata-analyze 10 ownership true maxmoves 3\n"
    lines = []
    for komi in (0.5, 20.5):
        proc = subprocess.run([sys.executable, str(repo_root / "src" / "play.py"), f"ckpt_path={path}",
                               "search.playouts=16"], input=commands.format(komi) + "quit\n",
                              capture_output=True, text=True, timeout=300, cwd=repo_root)
        assert proc.returncode == 0, proc.stderr[-2000:]
        lines.append(next(line for line in proc.stdout.splitlines() if line.startswith("info ")))
    for line in lines:
        owner = [float(v) for v in line.split(" ownership ")[1].split()]
        assert len(owner) == 361 and all(-1 <= v <= 1 for v in owner)
        assert " scoreLead " in line
    # Black to move on the empty board: 20 more points of komi make black's win rate fall.
    black = [float(line.split(" winrate ")[1].split()[0]) for line in lines]
    assert black[1] < black[0], lines
