"""The value output's loss and metrics, shared by belief_vit and maddison_cnn."""

from __future__ import annotations

import math

import pytest
import torch

from stonelab.models.value import ValueMetrics, value_log_values, value_loss


def test_loss_is_cross_entropy_with_the_known_results_only():
    logit = torch.tensor([2.0, -1.0, 0.5, 7.0])
    result = torch.tensor([1.0, 1.0, -1.0, 0.0])  # the last game's result is unknown
    expected = -(math.log(torch.sigmoid(torch.tensor(2.0))) + math.log(torch.sigmoid(torch.tensor(-1.0)))
                 + math.log(1 - torch.sigmoid(torch.tensor(0.5)))) / 3
    assert value_loss(logit, result).item() == pytest.approx(expected, rel=1e-6)
    moved = logit.clone()
    moved[3] = -7.0  # an unknown result has no say
    assert value_loss(moved, result).item() == pytest.approx(expected, rel=1e-6)


def test_loss_without_known_results_is_zero_and_keeps_the_graph():
    logit = torch.tensor([0.3, -0.2], requires_grad=True)
    loss = value_loss(logit, torch.zeros(2))
    loss.backward()
    assert loss.item() == 0.0 and torch.equal(logit.grad, torch.zeros(2))


def test_metrics_by_game_phase():
    metric = ValueMetrics()
    logit = torch.tensor([3.0, -3.0, 1.0, 0.0, -2.0, 4.0])
    result = torch.tensor([1.0, 1.0, -1.0, 1.0, -1.0, 0.0])
    moves = torch.tensor([0, 49, 50, 149, 150, 10])  # phase edges; the last result is unknown
    metric.update(logit, result, moves)
    table = metric.compute()
    p = torch.sigmoid(logit).tolist()
    brier = [(p[0] - 1) ** 2, (p[1] - 1) ** 2, p[2] ** 2, (p[3] - 1) ** 2, p[4] ** 2]
    assert table["all"]["positions"] == 5
    assert table["all"]["acc"] == pytest.approx(2 / 5)  # a value of exactly 0 is wrong
    assert table["all"]["brier"] == pytest.approx(sum(brier) / 5, rel=1e-6)
    assert table["moves_0_50"] == pytest.approx({"acc": 0.5, "brier": (brier[0] + brier[1]) / 2, "positions": 2})
    assert table["moves_50_150"] == pytest.approx({"acc": 0.0, "brier": (brier[2] + brier[3]) / 2,
                                                   "positions": 2})
    assert table["moves_150_up"] == pytest.approx({"acc": 1.0, "brier": brier[4], "positions": 1})
    logged = value_log_values(table, "val")
    assert logged["val/value_acc"] == table["all"]["acc"]
    assert logged["val/value_brier_moves_150_up"] == table["moves_150_up"]["brier"]


def test_metrics_sum_over_batches_and_skip_empty_phases():
    metric = ValueMetrics()
    metric.update(torch.tensor([1.0]), torch.tensor([1.0]), torch.tensor([3]))
    metric.update(torch.tensor([1.0]), torch.tensor([-1.0]), torch.tensor([7]))
    table = metric.compute()
    assert set(table) == {"all", "moves_0_50"}
    assert table["moves_0_50"]["acc"] == 0.5 and table["moves_0_50"]["positions"] == 2
    without_moves = ValueMetrics()
    without_moves.update(torch.tensor([1.0]), torch.tensor([1.0]))
    assert set(without_moves.compute()) == {"all"}
