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


def test_a_net_of_another_rule_set_is_a_warm_start_and_an_opponent_but_never_a_resume(tmp_path, tiny_alphazero_checkpoint):
    from stonelab.models.alphazero import AlphaZeroModule

    freestyle = tiny_alphazero_checkpoint(tmp_path / "free.ckpt", 8, 5)
    renju = AlphaZeroModule(PolicyValueNet(8), GomokuRules(8, 5, "renju"))
    assert checkpoints.warm_start(renju, str(freestyle))["fresh"] == []
    saved = torch.load(freestyle, weights_only=True)["state_dict"]
    assert all(torch.equal(v, saved[f"net.{k}"]) for k, v in renju.net.state_dict().items())
    with pytest.raises(CheckpointMismatchError, match="rule: checkpoint has None, this run has 'renju'"):
        renju.on_load_checkpoint(torch.load(freestyle, weights_only=True))
    with pytest.raises(CheckpointMismatchError, match="board_size"):
        checkpoints.warm_start(AlphaZeroModule(PolicyValueNet(9), GomokuRules(9, 5, "renju")), str(freestyle))
    net, label = checkpoints.load_opponent(str(freestyle), renju.identity())  # an opponent under renju
    assert label == f"checkpoint:{freestyle}" and all(torch.equal(v, saved[f"net.{k}"]) for k, v in net.state_dict().items())


def _resnet_module(blocks: int, pool_every: int = 2, seed: int = 1):
    from stonelab.models.move_prediction import MovePredictionModule
    from stonelab.models.nets.resnet import ResidualNet

    torch.manual_seed(seed)
    net = ResidualNet(36, 9, blocks=blocks, filters=8, pool_every=pool_every, pool_channels=4, value_head=True)
    return MovePredictionModule(net, GoRules(9), encoder="maddison")


def _save_resnet(module, tmp_path, tiny_maddison_checkpoint):
    raw = torch.load(tiny_maddison_checkpoint(tmp_path / "m.ckpt"), weights_only=True)
    raw["state_dict"] = {f"net.{k}": v for k, v in module.net.state_dict().items()}
    raw["stonelab"]["net_target"] = "stonelab.models.nets.resnet.ResidualNet"
    raw["stonelab"]["net_config"] = module.net.config
    torch.save(raw, tmp_path / "shallow.ckpt")
    return str(tmp_path / "shallow.ckpt")


def test_init_from_grows_a_deeper_resnet_that_starts_as_the_shallower_one(tmp_path, tiny_maddison_checkpoint):
    shallow = _resnet_module(blocks=3)
    for param in shallow.net.parameters():  # trained-looking batch-norm statistics and weights
        torch.nn.init.normal_(param, std=0.3)
    for name, buffer in shallow.net.named_buffers():
        if name.endswith("running_var"):
            buffer.uniform_(0.5, 2.0)
    path = _save_resnet(shallow, tmp_path, tiny_maddison_checkpoint)
    deeper = _resnet_module(blocks=6, seed=2)
    source = checkpoints.warm_start(deeper, path)
    assert source["fresh"] and {k.split(".")[1] for k in source["fresh"]} == {"3", "4", "5"}
    assert all(not block.conv2.weight.any() for block in deeper.net.blocks[3:])
    assert all(block.conv1.weight.any() for block in deeper.net.blocks[3:])  # they can still learn
    planes, to_play = (torch.rand(4, 36, 9, 9) < 0.3).float(), torch.tensor([1, -1, 1, -1])
    with torch.no_grad():
        before, after = shallow.net.eval()(planes, to_play), deeper.net.eval()(planes, to_play)
    torch.testing.assert_close(after.policy_logits, before.policy_logits)
    torch.testing.assert_close(after.value_logit, before.value_logit)


def test_init_from_refuses_a_deeper_resnet_whose_first_blocks_do_not_fit(tmp_path, tiny_maddison_checkpoint):
    path = _save_resnet(_resnet_module(blocks=3), tmp_path, tiny_maddison_checkpoint)
    with pytest.raises(CheckpointMismatchError, match=r"does not fit this run's .*size mismatch for blocks\.0\.norm2"):
        checkpoints.warm_start(_resnet_module(blocks=6, pool_every=1), path)
    with pytest.raises(CheckpointMismatchError, match=r"(?i)unexpected key.*blocks\.2\."):  # a shallower run
        checkpoints.warm_start(_resnet_module(blocks=2), path)
