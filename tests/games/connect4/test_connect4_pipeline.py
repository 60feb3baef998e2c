"""Connect Four through the framework: a 6x7 board and 7 column actions reach the nets, the
replay buffer's mirror, checkpoints with exact resume, task=match and the benchmark."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import torch

from stonelab import bench
from stonelab.arena.players import play_match, pure_mcts_player
from stonelab.data.selfplay import SelfPlayDataModule
from stonelab.games.connect4.rules import Connect4Rules, board_from_rows
from stonelab.pipeline import train

CONNECT4 = ["game=connect4", "logger=none", "callbacks.evaluation.at_train_end=false"]


def test_the_mirror_moves_columns_with_the_board():
    data = SelfPlayDataModule(Connect4Rules(), buffer_size=10)
    assert data.symmetries == ("identity", "mirror_lr")
    planes = np.zeros((1, 5, 6, 7), dtype=np.uint8)
    planes[0, 0, 0, 1] = 1  # own disc in column 1
    policy = np.array([[0.7, 0.1, 0.0, 0.0, 0.0, 0.0, 0.2]], dtype=np.float32)
    assert data.add_games(planes, policy, np.array([1.0], dtype=np.float32)) == 2
    stored_planes, stored_policies = data.buffer.states_bcnn[:2].numpy(), data.buffer.policies_ba[:2].numpy()
    np.testing.assert_array_equal(stored_policies[0], policy[0])
    np.testing.assert_array_equal(stored_policies[1], policy[0][::-1])  # column c -> 6 - c
    assert stored_planes[1, 0, 0, 5] == 1 and stored_planes[1, 0].sum() == 1


def test_pure_mcts_takes_the_win_and_blocks_the_loss():
    rules = Connect4Rules()
    search = rules.search_game()
    # black to move wins in column 3 (white threatens column 6 too); then white to move must block column 0
    win = [".......", ".......", ".......", "......o", "......o", "xxx...o"]
    block = [".......", ".......", ".......", "x......", "x......", "xoo.o.."]
    for rows, column in ((win, 3), (block, 0)):
        player = pure_mcts_player(rules, 400)
        player.reset(1)
        position = search.position(board_from_rows(rows))
        player.positions.board[0], player.positions.info[0] = position.board, position.info
        assert player.choose(np.array([0]))[0] == column, rows


def test_pure_mcts_1000_beats_pure_mcts_50():
    rules = Connect4Rules()
    result = play_match(rules, pure_mcts_player(rules, 1000), pure_mcts_player(rules, 50, seed=1), 6, opening_moves=2)
    assert result.wins >= 5, result


def test_connect4_trains_and_resumes_exactly(straight_and_resumed):
    """2 epochs straight == 1 epoch then a resume; the checkpoint says Connect Four 6x7, the buffer
    holds [5, 6, 7] planes and 7 actions, and the net's heads are sized for them."""
    a, c, result = straight_and_resumed(CONNECT4)
    assert result["game"] == "connect4_6x7"
    assert c["stonelab"]["identity"] == {"model": "alphazero", "game": "connect4", "rows": 6, "columns": 7,
                                         "connect": 4}
    buffer = c["SelfPlayDataModule"]["buffer"]
    assert buffer["states_bcnn"].shape[1:] == (5, 6, 7) and buffer["policies_ba"].shape[1] == 7
    assert c["state_dict"]["net.policy_fc.weight"].shape[0] == 7
    assert torch.equal(a["SelfPlayDataModule"]["buffer"]["states_bcnn"], buffer["states_bcnn"])
    for key, value in a["state_dict"].items():
        assert torch.equal(value, c["state_dict"][key]), key


def test_match_against_pure_mcts(tmp_path, compose_train, repo_root):
    train(compose_train(["trainer.max_epochs=1", *CONNECT4], tmp_path / "run"))
    ckpt = tmp_path / "run" / "checkpoints" / "last.ckpt"
    proc = subprocess.run([sys.executable, str(repo_root / "src" / "eval.py"), "task=match", f"ckpt_path={ckpt}",
                           "search.playouts=8", "pure_playouts=20", "games=2", f"paths.output_dir={tmp_path}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "match.json").read_text())
    assert result["game"] == "connect4_6x7" and result["wins"] + result["draws"] + result["losses"] == 2


def test_bench_mcts_runs_connect4(capsys):
    code = bench.main(["mcts", "--json", "--game", "connect4", "--games", "1", "--parallel", "1", "--playouts", "2",
                       "--pure-playouts", "20", "--seconds", "0.05", "--threads", "1"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["game"] == "connect4_6x7"
    for key in ["pure_playouts_per_s", "neural_playouts_per_s", "forward_states_per_s"]:
        assert out[key] > 0, key
