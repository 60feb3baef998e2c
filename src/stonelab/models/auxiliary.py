"""KataGo's auxiliary targets for the Go move predictors: ownership and score.

A net built with ``aux_heads=True`` (`stonelab.models.nets.maddison.AuxHeads`) also
predicts who owns each point at the end and the final margin. KataGo's paper ("Accelerating
Self-Play Learning in Go", Wu 2019) found such targets speed up learning of the value and
policy; here they also give analysis tools a score and an ownership map.

- Ownership: binary cross-entropy per point with the game cache's APPROXIMATE
  end-of-game owner (+1 mover, -1 opponent, 0 unclear: target 1/2), averaged over the board.
- Score: the Gaussian negative log-likelihood of the counted margin (side to move's,
  komi included) under the head's mean and spread, in units of `SCORE_SCALE` points;
  positions of games that were not counted (NaN score) are left out.

`AuxMetrics` reports held-out ownership accuracy (the predicted owner's sign on points
whose owner is decided) and the score's mean absolute error in points.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torchmetrics import Metric

from stonelab.models.nets.maddison import SCORE_SCALE


def ownership_loss(ownership_logits: torch.Tensor, ownership: torch.Tensor) -> torch.Tensor:
    """Mean binary cross-entropy of logits [B, n, n] against owners [B, n, n] in {-1, 0, +1}."""
    return F.binary_cross_entropy_with_logits(ownership_logits.float(), (ownership.float() + 1) / 2)


def score_loss(score_lead: torch.Tensor, score_stdev: torch.Tensor, score: torch.Tensor) -> torch.Tensor:
    """Mean Gaussian negative log-likelihood of the counted scores (NaN: left out), in
    `SCORE_SCALE` units; 0 (graph kept) for a batch with no counted game."""
    counted = ~torch.isnan(score)
    if not counted.any():
        return score_lead.sum() * 0.0
    sigma = score_stdev[counted].float() / SCORE_SCALE
    z = (score[counted].float() - score_lead[counted].float()) / score_stdev[counted].float()
    return (torch.log(sigma) + 0.5 * z * z).mean() + 0.5 * math.log(2 * math.pi)


class AuxMetrics(Metric):
    """Held-out ownership accuracy (on decided points) and score error (on counted games)."""

    full_state_update = False

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        for name in ("owner_right", "owner_points", "score_abs_error", "score_positions", "score_nll_sum"):
            self.add_state(name, default=torch.tensor(0.0, dtype=torch.float64), dist_reduce_fx="sum")

    def update(self, ownership_logits: torch.Tensor, ownership: torch.Tensor, score_lead: torch.Tensor,
               score_stdev: torch.Tensor, score: torch.Tensor) -> None:
        decided = ownership != 0
        right = (torch.sign(ownership_logits.float()) == ownership.float()) & decided
        self.owner_right += right.sum().double()
        self.owner_points += decided.sum().double()
        counted = ~torch.isnan(score)
        if counted.any():
            self.score_abs_error += (score_lead[counted].float() - score[counted]).abs().sum().double()
            self.score_positions += counted.sum().double()
            self.score_nll_sum += score_loss(score_lead, score_stdev, score).double() * counted.sum()

    def compute(self) -> dict[str, float]:
        result = {"ownership_acc": float(self.owner_right / self.owner_points) if self.owner_points else math.nan,
                  "ownership_points": int(self.owner_points)}
        positions = float(self.score_positions)
        result.update(score_mae=float(self.score_abs_error) / positions if positions else math.nan,
                      score_nll=float(self.score_nll_sum) / positions if positions else math.nan,
                      score_positions=int(positions))
        return result
