"""model/net=resnet: the residual trunk's shapes and heads, and the recipe options beside it
(warmup + cosine learning rate, label smoothing, wall time with every validation)."""

from __future__ import annotations

import csv
import math

import pytest
import torch

from stonelab.errors import ConfigError
from stonelab.models.move_prediction import warmup_cosine
from stonelab.models.nets.resnet import ResidualNet


def test_output_shapes_with_and_without_value():
    planes, to_play = torch.randn(3, 36, 19, 19), torch.tensor([1, -1, 1])
    out = ResidualNet(blocks=2, filters=16, pool_channels=4)(planes, to_play)
    assert out.policy_logits.shape == (3, 361) and out.value_logit is None
    out = ResidualNet(blocks=2, filters=16, pool_channels=4, value_head=True)(planes, to_play)
    assert out.value_logit.shape == (3,)


def test_each_colour_has_its_own_head():
    net = ResidualNet(blocks=1, filters=8, pool_channels=2).eval()
    planes = torch.randn(1, 36, 19, 19)
    black, white = (net(planes, torch.tensor([c])).policy_logits for c in (1, -1))
    with torch.no_grad():
        net.policy_bias[1] += 1.0  # only white's map moves
    assert torch.equal(net(planes, torch.tensor([1])).policy_logits, black)
    assert torch.allclose(net(planes, torch.tensor([-1])).policy_logits, white + 1.0)


def test_global_pooling_lets_a_far_stone_change_a_corner():
    """Two blocks of 3x3s (plus the 5x5 stem) see 10 points across; the pooled bias sees the board."""
    torch.manual_seed(0)
    planes = torch.zeros(1, 36, 19, 19)
    moved = planes.clone()
    moved[0, 0, 18, 18] = 1.0  # a stone in the far corner
    for pool_every, changes in ((0, False), (1, True)):
        net = ResidualNet(blocks=2, filters=8, pool_every=pool_every, pool_channels=2).eval()
        corner = [net(p, torch.tensor([1])).policy_logits[0, 0].item() for p in (planes, moved)]
        assert (corner[0] != corner[1]) == changes


def test_bad_sizes_are_one_line():
    with pytest.raises(ConfigError, match="pool_channels=16 must be an int in"):
        ResidualNet(filters=16, pool_channels=16)
    with pytest.raises(ConfigError, match="blocks=0"):
        ResidualNet(blocks=0)


def test_warmup_then_cosine_then_the_floor():
    factor = [warmup_cosine(s, warmup=4, cosine=10, final=0.1) for s in range(20)]
    assert factor[:4] == [0.25, 0.5, 0.75, 1.0]
    assert factor[4] == 1.0 and factor[9] == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi / 2)))
    assert all(a >= b for a, b in zip(factor[3:], factor[4:], strict=False))
    assert factor[14:] == [pytest.approx(0.1)] * 6
    assert warmup_cosine(7, warmup=0, cosine=None, final=0.1) == 1.0


def test_paper_schedule_and_warmup_together_are_refused():
    from stonelab.games.go.rules import GoRules
    from stonelab.models.move_prediction import MovePredictionModule

    net = ResidualNet(36, 9, blocks=1, filters=4, pool_channels=2)
    with pytest.raises(ConfigError, match="set one of them"):
        MovePredictionModule(net, GoRules(9), lr_halving_every_epochs=2, warmup_steps=10)
    with pytest.raises(ConfigError, match="label_smoothing=1.0 must be in"):
        MovePredictionModule(net, GoRules(9), label_smoothing=1.0)


def test_residual_recipe_trains_logs_minutes_and_reloads(tmp_path, compose_go):
    from stonelab.models.checkpoints import load
    from stonelab.pipeline import train

    cfg = compose_go("maddison_cnn", ["model/net=resnet", "model.net.blocks=2", "model.net.filters=8",
                                      "model.net.pool_channels=2", "model.net.value_head=true",
                                      "model.optimizer=adamw", "model.lr=1e-3", "model.warmup_steps=2",
                                      "model.cosine_steps=4", "model.label_smoothing=0.1",
                                      "trainer.log_every_n_steps=1"], tmp_path)
    result = train(cfg)
    assert 0.0 <= result["metrics"]["val/top1"] <= 1.0
    rows = list(csv.DictReader(open(next((tmp_path / "out").rglob("metrics.csv")))))
    minutes = [float(r["time/train_minutes"]) for r in rows if r.get("time/train_minutes")]
    assert minutes and all(m > 0 for m in minutes)
    rates = [float(r["lr-AdamW"]) for r in rows if r.get("lr-AdamW")]
    assert rates[0] == pytest.approx(0.5e-3)  # the first warmup step: 1/2 of lr
    loaded = load(str(tmp_path / "out" / "checkpoints" / "last.ckpt"), game="go")
    assert type(loaded.net).__name__ == "ResidualNet" and not loaded.net.training
    planes, to_play = torch.randn(2, 36, 19, 19), torch.tensor([1, -1])
    out = loaded.net(planes, to_play)
    assert out.policy_logits.shape == (2, 361) and out.value_logit.shape == (2,)
