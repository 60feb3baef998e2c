"""The fully convolutional policy-value net: any board, KataGo's masking, the model's shape checks."""

from __future__ import annotations

import functools

import pytest
import torch

from stonelab.errors import ConfigError
from stonelab.games.connect4.rules import Connect4Rules
from stonelab.games.go.rules import GoRules
from stonelab.games.gomoku.rules import GomokuRules
from stonelab.models.alphazero import net_for_game
from stonelab.models.nets.fully_conv import FullyConvNet


def small(board_size: int = 9, **kwargs) -> FullyConvNet:
    torch.manual_seed(0)
    net = FullyConvNet(board_size, filters=16, blocks=3, pool_every=2, pool_channels=4, **kwargs)
    for module in net.modules():  # batch norm statistics that are not the identity
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    return net.eval()


@pytest.mark.parametrize("size", [5, 9, 15, 20])
def test_one_net_gives_a_policy_over_every_point_of_any_board(size):
    log_policy, value = small()(torch.rand(3, 4, size, size))
    assert log_policy.shape == (3, size * size) and value.shape == (3,)
    assert torch.allclose(log_policy.exp().sum(dim=1), torch.ones(3), atol=1e-5)
    assert bool(((value > -1) & (value < 1)).all())


def test_a_board_padded_into_a_bigger_batch_with_its_mask_gives_what_it_gives_alone():
    net = small()
    nine = (torch.rand(2, 4, 9, 9) < 0.3).float()
    padded = torch.zeros(2, 4, 15, 15)
    padded[:, :, 3:12, 2:11] = nine
    mask = torch.zeros(2, 1, 15, 15)
    mask[:, :, 3:12, 2:11] = 1.0
    with torch.no_grad():
        alone, alone_value = net(nine)
        inside, inside_value = net(padded, mask)
    grid = inside.view(2, 15, 15)
    assert torch.allclose(grid[:, 3:12, 2:11].reshape(2, 81), alone, atol=1e-5)
    assert torch.allclose(inside_value, alone_value, atol=1e-6)
    assert bool(torch.isneginf(grid[:, 0]).all())  # off-board points get no probability


def test_go_gets_a_pass_logit_from_the_pooled_board():
    log_policy, _ = small(9, num_actions=82)(torch.rand(2, 4, 13, 13))
    assert log_policy.shape == (2, 13 * 13 + 1)


def test_the_model_takes_it_for_any_board_but_checks_planes_and_pass():
    net = small(9)
    assert net_for_game(net, GomokuRules(15, 5)) is net  # built for 9x9: fits 15x15
    built = net_for_game(functools.partial(FullyConvNet, filters=8, blocks=1, pool_channels=4), GomokuRules(20, 5))
    assert built.config["board_size"] == 20
    with pytest.raises(ConfigError, match="takes in_planes=4, no pass, but go_9x9.* a pass"):
        net_for_game(net, GoRules(9))
    with pytest.raises(ConfigError, match="one action per point .*7 actions on a 42-point board"):
        net_for_game(functools.partial(FullyConvNet, filters=8, blocks=1, pool_channels=4), Connect4Rules())


def test_bad_settings_are_refused_in_one_line():
    with pytest.raises(ConfigError, match="pool_channels=16 < filters"):
        FullyConvNet(9, filters=16, pool_channels=16)
    with pytest.raises(ConfigError, match="blocks=-1"):
        FullyConvNet(9, blocks=-1)
