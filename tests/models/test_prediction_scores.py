"""The shared scores of task=predict: accuracy, calibration, risk-coverage, the gate."""

import numpy as np
import pytest
import torch

from stonelab.models.figures import aurc
from stonelab.models.outputs import GoModelOutput
from stonelab.models.prediction_scores import PredictionScores

N = 16  # a 4x4 board: top-10 needs at least 10 classes


def logits_with_top(tops, num_actions, strength=5.0):
    logits = torch.zeros(len(tops), num_actions)
    logits[torch.arange(len(tops)), torch.tensor(tops)] = strength
    return logits


def test_accuracy_calibration_and_risk_coverage_of_the_max_softmax():
    scores = PredictionScores(num_points=N)
    logits = logits_with_top([0, 1, 2, 3], N)  # a net without a pass output
    logits[3, 3] = 1.0                          # the least confident position ...
    target = torch.tensor([0, 1, 2, 0])         # ... is the only miss
    scores.update(GoModelOutput(logits), target)
    out = scores.compute()
    assert out["top1"] == pytest.approx(0.75)
    assert list(out)[:3] == ["top1", "top5", "top10"]  # as printed and written: by k, not by name
    probs = torch.softmax(torch.cat([logits, torch.full((4, 1), -torch.inf)], 1), 1).max(1).values.numpy()
    correct = np.array([1, 1, 1, 0], dtype=float)
    assert out["aurc_softmax"] == pytest.approx(aurc(correct, probs))
    assert out["aurc_softmax"] == pytest.approx(0.25 / 4)  # the miss is answered last
    assert out["ece_softmax"] > 0 and "ece" not in out     # no belief head: no confidence scores


def test_expert_passes_are_counted_and_left_out():
    scores = PredictionScores(num_points=N)
    scores.update(GoModelOutput(logits_with_top([0, 1], N + 1)), torch.tensor([0, N]))  # N = pass
    out = scores.compute()
    assert scores.passes_not_scored == 1 and out["top1"] == 1.0


def test_belief_outputs_add_confidence_scores_and_the_gate():
    gate = {"enabled": True, "threshold": 0.5, "top_k": 2, "contested_weight": 0.0}
    scores = PredictionScores(num_points=N, gate=gate)
    policy = torch.zeros(2, N + 1)
    policy[0, :2] = torch.tensor([3.0, 2.9])
    policy[1, 0] = 3.0
    out = GoModelOutput(policy_logits=policy, confidence_logit=torch.tensor([-5.0, 5.0]),  # sigmoid: 0.007 (gated),
                        ownership_logits=torch.zeros(2, 4, 4), value_logit=torch.zeros(2))   # 0.993
    scores.update(out, torch.tensor([1, 0]))
    result = scores.compute()
    assert result["top1"] == 0.5                   # the policy's top move misses the first
    assert result["gate_rate"] == 0.5              # only the low-confidence position is gated ...
    assert result["gate_top1"] == 1.0              # ... and its second move is the expert's
    assert result["aurc"] == pytest.approx(aurc(np.array([0.0, 1.0]), np.array([0.007, 0.993])))
    assert "ece" in result and "aurc_gated" in result
    # the calibration table: below 0.007 nothing fires (top-1 0.5); from 0.02 up the first
    # position is re-chosen (rate 0.5, top-1 1.0); the confident one is gated only above 0.993
    sweep = result["gate_sweep"]
    assert set(sweep) == {"0.02", "0.05", "0.1", "0.15", "0.2", "0.3", "0.5"}
    assert sweep["0.02"] == {"rate": 0.5, "top1": 1.0} and sweep["0.5"] == sweep["0.02"]
    assert sweep["0.5"]["top1"] == result["gate_top1"]  # the checkpoint's own threshold, 0.5, agrees


def test_the_sweep_counts_what_the_gate_takes_away():
    scores = PredictionScores(num_points=N, gate={"enabled": True, "threshold": 0.2, "top_k": 2,
                                                  "contested_weight": 0.0})
    policy = torch.zeros(2, N + 1)
    policy[:, :2] = torch.tensor([3.0, 2.9])
    out = GoModelOutput(policy_logits=policy, confidence_logit=torch.tensor([-2.0, 0.0]),  # 0.12, 0.5
                        ownership_logits=torch.zeros(2, 4, 4), value_logit=torch.zeros(2))
    scores.update(out, torch.tensor([0, 0]))  # both top moves are right: gating only loses
    sweep = scores.compute()["gate_sweep"]
    assert sweep["0.1"] == {"rate": 0.0, "top1": 1.0}
    assert sweep["0.15"] == {"rate": 0.5, "top1": 0.5}
    assert sweep["0.5"] == {"rate": 0.5, "top1": 0.5} and sweep["0.3"] == sweep["0.15"]
