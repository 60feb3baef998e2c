"""stonelab.models: the policy-value net and the AlphaZero LightningModule."""

from __future__ import annotations

import pytest
import torch

from stonelab.errors import ConfigError
from stonelab.games.gomoku.rules import GomokuRules
from stonelab.models.alphazero import AlphaZeroModule, CheckpointMismatchError, check_identity
from stonelab.models.nets.policy_value import PolicyValueNet


@pytest.mark.parametrize("n,res_blocks", [(6, 0), (8, 0), (15, 2)])
def test_net_shapes(n, res_blocks):
    net = PolicyValueNet(n, res_blocks=res_blocks)
    log_p, v = net(torch.zeros(3, 4, n, n))
    assert log_p.shape == (3, n * n) and v.shape == (3,)
    assert torch.allclose(log_p.exp().sum(-1), torch.ones(3), atol=1e-5)
    assert torch.all(v.abs() <= 1)


def test_net_rejects_bad_widths():
    with pytest.raises(ConfigError, match="channels"):
        PolicyValueNet(8, channels=())


def test_module_rejects_bad_hyperparameters():
    with pytest.raises(ConfigError, match="lr=0"):
        AlphaZeroModule(PolicyValueNet(6), GomokuRules(6, 4), lr=0)


def test_checkpoint_identity_mismatch_is_specific():
    module = AlphaZeroModule(PolicyValueNet(6), GomokuRules(6, 4))
    ckpt = {}
    module.on_save_checkpoint(ckpt)
    check_identity(ckpt, module.identity(), source="x")  # same run: fine
    other = AlphaZeroModule(PolicyValueNet(8), GomokuRules(8, 5))
    with pytest.raises(CheckpointMismatchError, match="board_size: checkpoint has 6, this run has 8"):
        check_identity(ckpt, other.identity(), source="x")
    with pytest.raises(CheckpointMismatchError, match="not written by stonelab"):
        check_identity({"state_dict": {}}, other.identity(), source="x")


def test_evaluator_returns_probabilities_and_restores_train_mode():
    module = AlphaZeroModule(PolicyValueNet(6, res_blocks=1), GomokuRules(6, 4))
    module.train()
    with module.evaluation_mode():
        assert not module.net.training
        priors, values = module.evaluator()(torch.zeros(5, 4, 6, 6).numpy())
    assert module.net.training
    assert priors.shape == (5, 36) and values.shape == (5,)
    assert abs(float(priors.sum(1).mean()) - 1.0) < 1e-5


def test_net_gives_float32_log_probabilities_under_bf16_autocast():
    """trainer.precision=bf16-mixed: the KL-adaptive rate reads log_p, which must not be rounded to bf16."""
    torch.manual_seed(0)
    net = PolicyValueNet(8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        log_p, v = net(torch.randint(0, 2, (16, 4, 8, 8)).float())
    assert log_p.dtype == torch.float32 and v.dtype == torch.float32
    assert torch.allclose(log_p.exp().sum(dim=1), torch.ones(16), atol=1e-5)


def test_bf16_mixed_run_searches_in_bf16_with_one_evaluator_per_callback(tmp_path, compose_train, monkeypatch,
                                                                         cpu_bf16):
    """trainer.precision=bf16-mixed: training under autocast, self-play and evaluation search in bf16
    (they follow the trainer), each with one evaluator for the whole fit: the net is not moved per round."""
    from stonelab.pipeline import train

    built, moved = [], []
    evaluator, to = AlphaZeroModule.evaluator, PolicyValueNet.to
    monkeypatch.setattr(AlphaZeroModule, "evaluator", lambda self, precision="32", score_utility=0.0:
                        built.append(precision) or evaluator(self, precision, score_utility))
    monkeypatch.setattr(PolicyValueNet, "to", lambda self, *a, **k: moved.append(a) or to(self, *a, **k))
    result = train(compose_train(["trainer.precision=bf16-mixed", "logger=none"], tmp_path))
    assert result["rounds"] >= 3 and len(result["evaluations"]) >= 1
    assert built == ["bf16", "bf16"] and len(moved) == 2  # self-play's and the arena's, once each
    for key in ("train/loss", "train/kl", "train/policy_entropy"):
        assert torch.isfinite(torch.tensor(result["metrics"][key])), key


def test_aux_losses_reward_the_true_owner_and_margin_and_skip_positions_without_targets():
    from stonelab.games.go.rules import GoRules

    module = AlphaZeroModule(lambda **kw: PolicyValueNet(channels=(8,), ownership_head=True, score_head=True, **kw),
                             GoRules(9))
    owner = torch.tensor([[1.0] * 40 + [-1.0] * 41])
    right = {"ownership": owner * 0.9, "score": torch.tensor([-1 / 9])}
    wrong = {"ownership": -owner * 0.9, "score": torch.tensor([5.0])}
    target = (owner, torch.tensor([-1.0]), torch.ones(1))
    good, bad = module._aux_losses(right, *target), module._aux_losses(wrong, *target)
    assert good["ownership_loss"] < bad["ownership_loss"] and good["score_loss"] < 1e-6 < bad["score_loss"]
    none = module._aux_losses(wrong, *target[:2], torch.zeros(1))
    assert none["ownership_loss"] == 0 and none["score_loss"] == 0


def test_go_heads_on_a_gomoku_net_are_refused():
    with pytest.raises(ConfigError, match="ownership_head=true is for Go"):
        AlphaZeroModule(lambda **kw: PolicyValueNet(ownership_head=True, **kw), GomokuRules(6, 4))
