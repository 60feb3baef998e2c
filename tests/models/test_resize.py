"""python -m stonelab.models.resize: a convolutional Go move predictor on another board size."""

from __future__ import annotations

import pytest
import torch

from stonelab.errors import StonelabError
from stonelab.games.go.rules import GoRules
from stonelab.models import checkpoints
from stonelab.models.inference import MovePredictor
from stonelab.models.resize import RESIZED_KEY, edge_index, main, resize


def test_edge_index_keeps_the_lines_nearest_each_edge():
    assert edge_index(19, 9) == [0, 1, 2, 3, 4, 15, 16, 17, 18]
    assert edge_index(9, 19) == [0, 1, 2, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 6, 7, 8]
    assert edge_index(9, 9) == list(range(9)) and edge_index(19, 13)[-4:] == [15, 16, 17, 18]


@pytest.mark.parametrize("net", ["maddison", "resnet"])
def test_a_resized_net_keeps_its_filters_and_maps_its_point_biases(tmp_path, net, tiny_maddison_checkpoint):
    source = tiny_maddison_checkpoint(tmp_path / "nine.ckpt")
    if net == "resnet":
        source = _tiny_resnet_checkpoint(source)
    summary = resize(str(source), str(tmp_path / "thirteen.ckpt"), 13)
    assert summary["board_size"] == 13 and summary["from_board_size"] == 9
    small, big = checkpoints.load(str(source), game="go"), checkpoints.load(str(tmp_path / "thirteen.ckpt"), game="go")
    assert big.game == GoRules(13) and big.identity["board_size"] == 13
    assert big.state[RESIZED_KEY]["board_size"] == 9 and big.state[RESIZED_KEY]["source"] == source.name
    index = torch.tensor(edge_index(9, 13))
    for name, value in small.net.state_dict().items():
        resized = big.net.state_dict()[name]
        if value.dim() >= 2 and value.shape[-2:] == (9, 9):
            assert torch.equal(resized, value[..., index, :][..., :, index])
        else:
            assert torch.equal(resized, value)
    predictor = MovePredictor(big.net, big.game, big.encoder)
    probs = predictor.probabilities([GoRules(13).new_state()])
    assert probs.shape == (1, 13 * 13 + 1) and abs(probs.sum() - 1) < 1e-5


def test_resize_refuses_what_it_cannot_move(tmp_path, tiny_maddison_checkpoint, tiny_alphazero_checkpoint):
    gomoku = tiny_alphazero_checkpoint(tmp_path / "gomoku.ckpt", 8, 5)
    with pytest.raises(StonelabError, match="holds alphazero.s PolicyValueNet: only convolutional nets"):
        resize(str(gomoku), str(tmp_path / "out.ckpt"), 9)
    go = tiny_maddison_checkpoint(tmp_path / "go.ckpt")
    with pytest.raises(StonelabError, match=r"--board-size 3 must be an integer in \[5, 25\]"):
        resize(str(go), str(tmp_path / "out.ckpt"), 3)
    raw = torch.load(go, weights_only=True)
    raw["stonelab"]["net_target"] = "stonelab.models.nets.belief_vit.BeliefViT"
    torch.save(raw, tmp_path / "vit.ckpt")
    with pytest.raises(StonelabError, match="holds maddison_cnn.s BeliefViT: only convolutional nets"):
        resize(str(tmp_path / "vit.ckpt"), str(tmp_path / "out.ckpt"), 9)
    assert not (tmp_path / "out.ckpt").exists()


def test_a_fully_convolutional_alphazero_net_is_relabelled_with_its_weights_unchanged(
        tmp_path, tiny_alphazero_checkpoint):
    from stonelab.models import checkpoints

    nine = tiny_alphazero_checkpoint(tmp_path / "nine.ckpt", 9, 5, rule="renju", fully_conv=True)
    summary = resize(str(nine), str(tmp_path / "fifteen.ckpt"), 15)
    assert (summary["board_size"], summary["from_board_size"]) == (15, 9)
    before, after = checkpoints.load(str(nine)), checkpoints.load(str(tmp_path / "fifteen.ckpt"))
    assert (after.game.n, after.game.k, after.game.rule) == (15, 5, before.game.rule)
    assert after.identity == {**before.identity, "board_size": 15}
    for name, weight in before.net.state_dict().items():
        assert torch.equal(weight, after.net.state_dict()[name])
    planes = torch.rand(2, 4, 15, 15)
    log_policy, value = after.net(planes)
    assert log_policy.shape == (2, 225) and value.shape == (2,)


def test_cli_prints_the_summary_or_one_error_line(tmp_path, capsys, tiny_maddison_checkpoint):
    go = tiny_maddison_checkpoint(tmp_path / "go.ckpt")
    assert main([str(go), str(tmp_path / "seven.ckpt"), "--board-size", "7"]) == 0
    assert "board_size=7 from_board_size=9" in capsys.readouterr().out
    assert main([str(tmp_path / "missing.ckpt"), str(tmp_path / "x.ckpt"), "--board-size", "9"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def _tiny_resnet_checkpoint(maddison_path):
    """The tiny maddison checkpoint's file with a small residual net in its place."""
    from stonelab.models.nets.resnet import ResidualNet

    torch.manual_seed(1)
    net = ResidualNet(36, 9, blocks=2, filters=8, pool_channels=4, value_head=True)
    raw = torch.load(maddison_path, weights_only=True)
    raw["state_dict"] = {f"net.{k}": v for k, v in net.state_dict().items()}
    raw["stonelab"]["net_target"] = "stonelab.models.nets.resnet.ResidualNet"
    raw["stonelab"]["net_config"] = net.config
    path = maddison_path.with_name("resnet.ckpt")
    torch.save(raw, path)
    return path


@pytest.mark.parametrize("symmetries", [1, 8])
def test_a_loaded_predictor_moves_to_another_board_with_the_weights_resize_writes(symmetries):
    from stonelab.models.nets.resnet import ResidualNet
    from stonelab.models.nets.symmetry_average import with_symmetries
    from stonelab.models.resize import resize_weights

    torch.manual_seed(0)
    net = ResidualNet(36, 19, blocks=1, filters=8, pool_channels=4, value_head=True, aux_heads=True)
    predictor = MovePredictor(with_symmetries(net, symmetries), GoRules(19, komi=6.5), "maddison")
    nine = predictor.for_board(9)
    assert nine.rules == GoRules(9, komi=6.5) and predictor.for_board(19) is predictor
    expected = resize_weights(net.state_dict(), 19, 9)
    got = getattr(nine.net, "net", nine.net).state_dict()
    assert got.keys() == expected.keys() and all(torch.equal(got[k], expected[k]) for k in expected)
    assert net.policy_bias.shape == (2, 19, 19)  # the 19x19 net is left as it was
    (estimate,) = nine.estimates([nine.rules.new_state()])
    assert estimate.ownership.shape == (81,) and nine.probabilities([nine.rules.new_state()]).shape == (1, 82)


def test_on_another_board_the_score_is_the_count_of_the_ownership_map():
    from stonelab.models.inference import ownership_count
    from stonelab.models.nets.resnet import ResidualNet

    torch.manual_seed(0)
    net = ResidualNet(36, 19, blocks=1, filters=8, pool_channels=4, value_head=True, aux_heads=True)
    predictor = MovePredictor(net, GoRules(19, komi=7.5), "maddison")
    nine = predictor.for_board(9)
    black = nine.rules.new_state()
    white = black.copy()
    white.play(40)  # black's tengen: white to move
    for state in (black, white):
        (est,) = nine.estimates([state])
        mover = 1.0 if state.to_play == 1 else -1.0
        assert est.score_lead == pytest.approx(float(est.ownership.sum()) - 7.5 * mover, abs=1e-4)
        assert est.score_stdev == pytest.approx(float(((1 - est.ownership ** 2).sum()) ** 0.5) + 0.5, abs=1e-4)
    (own,) = predictor.estimates([predictor.rules.new_state()])  # its own board: the score head's
    assert own.score_lead != pytest.approx(float(own.ownership.sum()) - 7.5, abs=1e-3)
    settled_black = torch.ones(1, 81)  # every point the mover's: 81 - komi, no spread left
    lead, spread = ownership_count(settled_black, torch.tensor([7.5]), torch.tensor([1.0]))
    assert lead.item() == 73.5 and spread.item() == 0.5
    lead, _ = ownership_count(-settled_black, torch.tensor([7.5]), torch.tensor([-1.0]))  # white to move owns nothing
    assert lead.item() == -73.5


def test_a_belief_vit_predictor_is_refused_by_name():
    from stonelab.models.nets.belief_vit import BeliefViT

    vit = BeliefViT(in_planes=36, board_size=9, embed_dim=16, heads=2, layers=1, ff_dim=16, belief_hidden=8)
    with pytest.raises(StonelabError, match="BeliefViT plays 9x9 only"):
        MovePredictor(vit, GoRules(9), "maddison").for_board(13)
