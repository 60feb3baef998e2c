"""The value output of the Go models: its training loss and its held-out metrics.

A value logit ``l`` [B] predicts the game's result for the side to move
(`GoModelOutput.value` = tanh(l / 2) = 2 sigmoid(l) - 1). The data gives that result
as ``batch["value"]`` float [B]: +1 won, -1 lost, 0 unknown (no result in the SGF, or
a jigo); positions with an unknown result are left out of the loss and the metrics.
Every model with a value output uses these (belief_vit; maddison_cnn with
``model.net.value_head=true``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torchmetrics import Metric

# (name, first move): game phases by ``batch["move_number"]`` (moves played before the
# position), each up to the next one's first move. Early positions say little about a
# KGS game's result and late ones much more, so one overall number hides what a value
# has learnt.
GAME_PHASES = (("moves_0_50", 0), ("moves_50_150", 50), ("moves_150_up", 150))
ALL_POSITIONS = "all"


def value_loss(value_logit: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    """Mean binary cross-entropy of ``value_logit`` [B] with "won" (result +1 -> 1, -1 -> 0)
    over the positions whose result is known; 0 (graph kept) when none is."""
    known = result != 0
    if not known.any():
        return value_logit.sum() * 0.0
    won = (result[known] > 0).to(value_logit.dtype)
    return F.binary_cross_entropy_with_logits(value_logit[known], won)


class ValueMetrics(Metric):
    """Held-out accuracy and Brier score of a value output, overall and by game phase.

    Accuracy: the sign of the value is the result's (a value of exactly 0 is wrong).
    Brier score: mean (p - won)^2 with p = sigmoid(logit), the predicted chance to win;
    0 is perfect, 0.25 is always saying 50%. Sums are kept per slot (slot 0 all
    positions, then one per `GAME_PHASES` entry) and summed over DDP ranks.
    """

    full_state_update = False
    higher_is_better = None

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        slots = 1 + len(GAME_PHASES)
        for name in ("positions", "correct", "squared_error"):
            self.add_state(name, default=torch.zeros(slots), dist_reduce_fx="sum")

    def update(self, value_logit: torch.Tensor, result: torch.Tensor,
               move_number: torch.Tensor | None = None) -> None:
        """value_logit float [B], result float [B] (+1 / -1 / 0 unknown), move_number int [B]
        (None: only the overall numbers)."""
        known = result != 0
        logit = value_logit.detach().float()[known]
        outcome = result[known].float()
        correct = (torch.sign(logit) == torch.sign(outcome)).float()
        squared_error = (torch.sigmoid(logit) - (outcome > 0).float()) ** 2
        slots = [torch.zeros_like(correct, dtype=torch.long)]
        if move_number is not None:
            starts = torch.tensor([start for _, start in GAME_PHASES[1:]], device=move_number.device)
            # right=True: a phase holds its first move, the phase before it does not.
            slots.append(1 + torch.bucketize(move_number[known], starts, right=True))
        for slot in slots:
            self.positions.index_add_(0, slot, torch.ones_like(correct))
            self.correct.index_add_(0, slot, correct)
            self.squared_error.index_add_(0, slot, squared_error)

    def compute(self) -> dict[str, dict[str, float]]:
        """{"all" | phase name: {"acc", "brier", "positions"}}, leaving out slots with no position."""
        names = [ALL_POSITIONS, *(name for name, _ in GAME_PHASES)]
        return {name: {"acc": float(self.correct[i] / self.positions[i]),
                       "brier": float(self.squared_error[i] / self.positions[i]),
                       "positions": int(self.positions[i])}
                for i, name in enumerate(names) if self.positions[i] > 0}


def value_log_values(table: dict[str, dict[str, float]], split: str) -> dict[str, float]:
    """`ValueMetrics.compute`'s table as logged: ``{split}/value_acc``, ``{split}/value_brier``,
    and the same with ``_<phase>`` for each phase (``val/value_acc_moves_0_50``)."""
    values = {}
    for name, row in table.items():
        suffix = "" if name == ALL_POSITIONS else f"_{name}"
        values[f"{split}/value_acc{suffix}"] = row["acc"]
        values[f"{split}/value_brier{suffix}"] = row["brier"]
    return values
