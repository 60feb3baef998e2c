"""stonelab.models.checkpoints: one loader from a checkpoint file to its game and net."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from stonelab.errors import StonelabError
from stonelab.games.go.rules import GoRules
from stonelab.games.gomoku.rules import GomokuRules
from stonelab.models import checkpoints
from stonelab.models.identity import CHECKPOINT_KEY, CheckpointMismatchError
from stonelab.models.nets.maddison import MaddisonNet
from stonelab.models.nets.policy_value import PolicyValueNet


def test_alphazero_checkpoint_gives_its_gomoku_game_and_net(tmp_path, tiny_alphazero_checkpoint):
    path = tiny_alphazero_checkpoint(tmp_path / "az.ckpt", n=6, k=4)
    loaded = checkpoints.load(str(path), game="gomoku")
    assert loaded.model == "alphazero" and loaded.encoder is None and loaded.gate is None
    assert isinstance(loaded.game, GomokuRules) and (loaded.game.n, loaded.game.k) == (6, 4)
    assert isinstance(loaded.net, PolicyValueNet) and not loaded.net.training
    saved = torch.load(path, weights_only=True)["state_dict"]
    for key, value in loaded.net.state_dict().items():
        assert torch.equal(value, saved[f"net.{key}"]), key
    as_lightning_writes_it = {**torch.load(path, weights_only=True), "hyper_parameters": {"lr": 2e-3}}
    assert checkpoints.from_dict(as_lightning_writes_it, str(path)).hparams == {"lr": 2e-3}
    with pytest.raises(dataclasses.FrozenInstanceError):
        loaded.net = None


def test_go_checkpoint_gives_its_board_encoder_and_net(tmp_path, tiny_maddison_checkpoint):
    path = tiny_maddison_checkpoint(tmp_path / "go.ckpt")
    loaded = checkpoints.load(str(path))
    assert loaded.identity == {"model": "maddison_cnn", "game": "go", "board_size": 9, "encoder": "maddison"}
    assert isinstance(loaded.game, GoRules) and loaded.game.n == 9
    assert isinstance(loaded.net, MaddisonNet) and loaded.encoder == "maddison"
    planes, to_play = torch.zeros(2, 36, 9, 9), torch.tensor([1, -1])
    torch.manual_seed(0)
    again = MaddisonNet(36, 9, depth=3, filters=8).eval()  # the same seeded net tiny_maddison_checkpoint saved
    torch.testing.assert_close(loaded.net(planes, to_play).policy_logits, again(planes, to_play).policy_logits)


def test_a_checkpoint_of_the_other_game_is_refused_by_name(tmp_path, tiny_alphazero_checkpoint,
                                                           tiny_maddison_checkpoint):
    az = tiny_alphazero_checkpoint(tmp_path / "az.ckpt")
    go = tiny_maddison_checkpoint(tmp_path / "go.ckpt")
    with pytest.raises(CheckpointMismatchError) as info:
        checkpoints.load(str(go), game="gomoku")
    assert str(info.value) == (f"{go} is not a stonelab alphazero checkpoint of Gomoku: "
                               "it holds a maddison_cnn Go model (9x9)")
    with pytest.raises(CheckpointMismatchError) as info:
        checkpoints.load(str(az), game="go")
    assert str(info.value).startswith(f"{az} holds 'alphazero', not a Go move predictor (maddison_cnn, belief_vit)")
    assert "an alphazero Gomoku model (6x6, 4 in a row)" in str(info.value)


def test_expected_identity_names_each_difference(tmp_path, tiny_alphazero_checkpoint):
    az = tiny_alphazero_checkpoint(tmp_path / "az.ckpt", n=6, k=4)
    expect = {"model": "alphazero", "game": "gomoku", "board_size": 8, "win_length": 5}
    with pytest.raises(CheckpointMismatchError, match="board_size: checkpoint has 6, this run has 8; "
                                                      "win_length: checkpoint has 4, this run has 5"):
        checkpoints.load(str(az), expect=expect)


def test_files_that_are_not_checkpoints_keep_their_one_line(tmp_path):
    text = tmp_path / "notes.ckpt"
    text.write_text("hello\n")
    with pytest.raises(CheckpointMismatchError, match="is a text file, not a checkpoint"):
        checkpoints.load(str(text))
    bare = tmp_path / "bare.ckpt"
    torch.save({"state_dict": {}}, bare)
    with pytest.raises(CheckpointMismatchError, match="holds no stonelab model"):
        checkpoints.load(str(bare))
    with pytest.raises(CheckpointMismatchError, match="is not a stonelab alphazero checkpoint"):
        checkpoints.load(str(bare), game="gomoku")


def test_only_stonelab_nets_are_rebuilt(tmp_path, tiny_maddison_checkpoint):
    path = tiny_maddison_checkpoint(tmp_path / "go.ckpt")
    ckpt = torch.load(path, weights_only=True)
    ckpt[CHECKPOINT_KEY]["net_target"] = "os.system"
    with pytest.raises(CheckpointMismatchError, match="is not one of stonelab's nets"):
        checkpoints.from_dict(ckpt, "evil.ckpt")
    ckpt[CHECKPOINT_KEY]["net_target"] = "stonelab.models.nets.maddison.MaddisonNet"
    ckpt[CHECKPOINT_KEY]["net_config"]["filters"] = 16  # weights of another width
    with pytest.raises(CheckpointMismatchError, match="its weights do not fit MaddisonNet"):
        checkpoints.from_dict(ckpt, "wide.ckpt")


def _fresh_maddison(filters: int = 8):
    from stonelab.models.move_prediction import MovePredictionModule

    torch.manual_seed(1)  # not the fixture's seed: the weights must differ before the copy
    return MovePredictionModule(MaddisonNet(36, 9, depth=3, filters=filters), GoRules(9), encoder="maddison")


def test_warm_start_copies_the_net_weights(tmp_path, tiny_maddison_checkpoint):
    source = tiny_maddison_checkpoint(tmp_path / "a.ckpt")
    module = _fresh_maddison()
    trained = checkpoints.load(str(source), game="go").net
    assert not torch.equal(module.net.state_dict()["kernels.0"], trained.state_dict()["kernels.0"])
    assert checkpoints.warm_start(module, str(source)) == {"path": str(source), "global_step": 0, "fresh": []}
    assert all(torch.equal(v, trained.state_dict()[k]) for k, v in module.net.state_dict().items())


def test_warm_start_refuses_another_net_game_or_file(tmp_path, tiny_maddison_checkpoint, tiny_alphazero_checkpoint):
    source = tiny_maddison_checkpoint(tmp_path / "a.ckpt")
    with pytest.raises(CheckpointMismatchError, match=r"init_from=.*a\.ckpt: its net .* does not fit this run's"):
        checkpoints.warm_start(_fresh_maddison(filters=4), str(source))
    gomoku = tiny_alphazero_checkpoint(tmp_path / "g.ckpt", 8, 5)
    with pytest.raises(CheckpointMismatchError, match="does not fit this run"):
        checkpoints.warm_start(_fresh_maddison(), str(gomoku))
    with pytest.raises(StonelabError, match="missing.ckpt"):
        checkpoints.warm_start(_fresh_maddison(), str(tmp_path / "missing.ckpt"))
