"""SymmetryAverage (symmetries=8): a Go net averaged over the board's 8 symmetries."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from stonelab.errors import ConfigError
from stonelab.games.symmetry import permutations
from stonelab.models.nets.maddison import MaddisonNet
from stonelab.models.nets.symmetry_average import SymmetryAverage, with_symmetries
from stonelab.models.outputs import GoModelOutput

N = 5


class AllHeads(nn.Module):
    """A net that is not symmetric, with a pass output and every belief head."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 2, 3, padding=1)
        self.pass_and_value = nn.Linear(3 * N * N, 3)

    def forward(self, planes, to_play):
        maps = self.conv(planes).flatten(2)                       # [B, 2, n*n], depends on orientation
        extra = self.pass_and_value(planes.flatten(1) * torch.arange(3 * N * N))  # not symmetric either
        return GoModelOutput(policy_logits=torch.cat([maps[:, 0], extra[:, :1]], dim=1),
                             value_logit=extra[:, 1] * to_play, confidence_logit=extra[:, 2],
                             ownership_logits=maps[:, 1].reshape(-1, N, N))


def _turned(planes: torch.Tensor, s: int) -> torch.Tensor:
    perm = torch.from_numpy(permutations(N)[s].copy())
    return planes.flatten(2)[:, :, perm].reshape(planes.shape)


def test_the_average_is_the_same_for_every_orientation_of_a_position():
    net = SymmetryAverage(AllHeads()).eval()
    planes, to_play = torch.rand(4, 3, N, N), torch.tensor([1.0, -1.0, 1.0, -1.0])
    base = net(planes, to_play)
    assert torch.allclose(base.policy_logits.exp().sum(1), torch.ones(4), atol=1e-5)
    for s in range(1, 8):
        other = net(_turned(planes, s), to_play)
        perm = torch.from_numpy(permutations(N)[s].copy())
        # turned position, turned answer: board points move with the board, pass and scalars stay
        assert torch.allclose(other.policy_logits[:, :N * N], base.policy_logits[:, perm], atol=1e-5)
        assert torch.allclose(other.policy_logits[:, N * N], base.policy_logits[:, N * N], atol=1e-5)
        assert torch.allclose(other.ownership_logits.flatten(1), base.ownership_logits.flatten(1)[:, perm], atol=1e-4)
        for name in ("value_logit", "confidence_logit"):
            assert torch.allclose(getattr(other, name), getattr(base, name), atol=1e-5), name
    # ... while the net alone answers a turned position differently
    plain, perm = AllHeads(), torch.from_numpy(permutations(N)[1].copy())
    assert not torch.allclose(plain(_turned(planes, 1), to_play).policy_logits[:, :N * N],
                              plain(planes, to_play).policy_logits[:, perm])


def test_a_net_that_is_already_symmetric_is_unchanged():
    torch.manual_seed(1)
    net = MaddisonNet(36, 9, depth=3, filters=8, symmetric=True, value_head=True).eval()
    planes, to_play = (torch.rand(2, 36, 9, 9) < 0.3).float(), torch.tensor([1.0, -1.0])
    with torch.no_grad():
        alone, averaged = net(planes, to_play), SymmetryAverage(net)(planes, to_play)
    assert torch.allclose(torch.log_softmax(alone.policy_logits, 1), averaged.policy_logits, atol=1e-4)
    assert torch.allclose(alone.value_logit, averaged.value_logit, atol=1e-4)


def test_bad_choices_are_refused_by_name():
    net = AllHeads()
    assert with_symmetries(net, 1) is net
    with pytest.raises(ConfigError, match=r"symmetries=3: choose 1 .* or 8"):
        with_symmetries(net, 3)
    net.memory = 4
    with pytest.raises(ConfigError, match="model.net.memory=4"):
        with_symmetries(net, 8)


def test_alphazero_go_checkpoints_refuse_symmetries(tmp_path, tiny_alphazero_go_checkpoint):
    from stonelab.models.alphazero_go import go_model_from_checkpoint

    path = tiny_alphazero_go_checkpoint(tmp_path / "az.ckpt")
    with pytest.raises(ConfigError, match="symmetries=8 is for Go move predictors"):
        go_model_from_checkpoint(str(path), symmetries=8)


def test_a_move_predictor_plays_with_the_average(tmp_path, tiny_maddison_checkpoint):
    from stonelab.games.go.rules import GoRules
    from stonelab.models.alphazero_go import go_model_from_checkpoint

    predictor = go_model_from_checkpoint(str(tiny_maddison_checkpoint(tmp_path / "m.ckpt")), symmetries=8)
    assert isinstance(predictor.net, SymmetryAverage)
    state = GoRules(9).new_state()
    probs = predictor.probabilities([state])
    assert probs.shape == (1, 82) and abs(float(probs.sum()) - 1.0) < 1e-5
