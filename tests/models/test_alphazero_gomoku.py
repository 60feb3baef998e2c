"""AlphaZero_Gomoku's published 8x8 net, read by our own loader (stonelab.models.nets.alphazero_gomoku)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from stonelab.games.gomoku.rules import GomokuRules, board_from_rows, encode_position
from stonelab.games.symmetry import all_symmetries
from stonelab.models import checkpoints
from stonelab.models.identity import CheckpointMismatchError
from stonelab.models.nets import alphazero_gomoku


@pytest.fixture(scope="module")
def published(repo_root):
    path = repo_root / "opponents" / "alphazero_gomoku" / "best_policy_8_8_5.model"
    net, n, label = alphazero_gomoku.load(str(path))
    return path, net, n, label


def policy_value(net, rows, to_play, last):
    board = board_from_rows(rows)
    planes = torch.from_numpy(encode_position(board, 8, to_play, last))[None]
    with torch.no_grad():
        log_p, v = net(planes)
    return log_p.exp()[0].numpy(), float(v)


EMPTY = ["........"] * 8


def test_the_file_is_recognised_by_its_hash(published):
    _, _, n, label = published
    assert n == 8 and label == "alphazero_gomoku:best_policy_8_8_5.model"


def test_empty_board_value_is_small_and_the_policy_favours_the_centre(published):
    _, net, _, _ = published
    p, v = policy_value(net, EMPTY, 1, -1)
    assert abs(v) < 0.5
    centre = [3 * 8 + 3, 3 * 8 + 4, 4 * 8 + 3, 4 * 8 + 4]
    assert p[centre].sum() > 0.5 and abs(p.sum() - 1) < 1e-5


@pytest.mark.parametrize("rows,to_play,last,blocks", [
    # white to move; black's four along a row, a column and a diagonal, one end already blocked
    (["........", "........", "OXXXX...", "........", "...O.O..", "........", "........", "........"],
     -1, 2 * 8 + 4, {2 * 8 + 5}),
    (["........", "..X.....", "..X.....", "..X.....", "..X..O..", "..O..O..", "........", "........"],
     -1, 4 * 8 + 2, {0 * 8 + 2}),
    (["O.......", ".X......", "..X.....", "...X....", "....X...", "......O.", "........", "........"],
     -1, 4 * 8 + 4, {5 * 8 + 5}),
])
def test_it_blocks_a_four_at_once(published, rows, to_play, last, blocks):
    """Its top policy move stops the four (the orientation of planes and outputs is right)."""
    _, net, _, _ = published
    p, v = policy_value(net, rows, to_play, last)
    assert int(np.argmax(p)) in blocks


def test_loaded_net_is_a_plain_policy_value_net_up_to_the_flip(published):
    """Flipping our planes upside down is what the net was trained on: without the flip, the
    net's answer on a position equals its answer (flipped) on the flipped position."""
    _, net, _, _ = published
    board = board_from_rows(["........", "..X.....", "..X.....", "..X.....", "..X..O..", "..O..O..",
                             "........", "........"])
    planes = encode_position(board, 8, -1, 4 * 8 + 2)[None]
    with torch.no_grad():
        direct, _ = net(torch.from_numpy(planes))
        inner, _ = net.net(torch.from_numpy(planes[:, :, ::-1, :].copy()))
    np.testing.assert_allclose(direct.numpy(), inner.numpy(), atol=1e-6)
    assert all_symmetries is not None  # the symmetry helper stays importable beside it


def test_load_opponent_accepts_it_for_8x8_gomoku_only(published):
    path, *_ = published
    net, label = checkpoints.load_opponent(str(path), {"model": "alphazero", "game": "gomoku",
                                                       "board_size": 8, "win_length": 5})
    assert label.startswith("alphazero_gomoku:")
    with pytest.raises(CheckpointMismatchError, match="AlphaZero_Gomoku's net for 8x8 Gomoku; this one plays "
                                                      "an alphazero Gomoku model \\(6x6, 4 in a row\\)"):
        checkpoints.load_opponent(str(path), {"model": "alphazero", "game": "gomoku",
                                              "board_size": 6, "win_length": 4})


def test_a_foreign_pickle_is_refused_without_running_it(tmp_path):
    evil = tmp_path / "evil.model"
    evil.write_bytes(pickle.dumps(print, protocol=2))  # names a callable: never called
    with pytest.raises(CheckpointMismatchError, match="asks for .*print"):
        alphazero_gomoku.load(str(evil))


def test_an_unknown_file_says_so_in_its_label(tmp_path):
    arrays = [np.zeros(s, dtype=np.float32) for s in alphazero_gomoku._expected_shapes(6)]
    other = tmp_path / "other.model"
    other.write_bytes(pickle.dumps(arrays, protocol=2))
    _, n, label = alphazero_gomoku.load(str(other))
    assert n == 6 and label.startswith("alphazero_gomoku:other.model (not a file we know: sha256 ")


def test_wrong_shapes_are_named(tmp_path):
    arrays = [np.zeros(s, dtype=np.float32) for s in alphazero_gomoku._expected_shapes(8)]
    arrays[2] = np.zeros((64, 16, 3, 3), dtype=np.float32)
    bad = tmp_path / "bad.model"
    bad.write_bytes(pickle.dumps(arrays, protocol=2))
    with pytest.raises(CheckpointMismatchError, match="array 2 has shape \\(64, 16, 3, 3\\)"):
        alphazero_gomoku.load(str(bad))
    bad.write_bytes(pickle.dumps([1, 2, 3], protocol=2))
    with pytest.raises(CheckpointMismatchError, match="not a list of 16 numpy arrays"):
        alphazero_gomoku.load(str(bad))
    assert GomokuRules(8, 5).num_actions == 64
