"""Scores of a Go move predictor over many positions, the same for every model.

Used by ``src/eval.py task=predict``, so a maddison_cnn and a belief_vit are
compared on exactly the same positions and by exactly the same code:

- top1 / top5 / top10: micro accuracy over positions (as the papers report);
- ece_softmax: expected calibration error of the max softmax probability as a
  confidence in the top-1 move (15 equal-width bins, L1, Guo et al. 2017);
- aurc_softmax: area under the risk-coverage curve when positions are answered
  in order of that max softmax (lower is better; `stonelab.models.figures.aurc`);
- for a net with a belief head (belief_vit): ece and aurc of its confidence
  output, and the gate (`stonelab.models.gate.gate_moves` with the gate
  settings saved in the checkpoint): gate_rate (fraction of positions whose top
  move is suppressed), gate_top1 (accuracy of the gated moves) and aurc_gated;
  and ``gate_sweep``: the same rate and accuracy at each threshold of `GATE_SWEEP`
  (the re-chosen move does not depend on the threshold, only whether it is played),
  the table the threshold is calibrated from.

Only board moves are scored: an expert pass is left out for every model, since
the paper's 361-way net has no pass output (their count is reported).
"""

from __future__ import annotations

import numpy as np
import torch
from torchmetrics.classification import BinaryCalibrationError

from stonelab.models.figures import aurc
from stonelab.models.gate import gate_output
from stonelab.models.move_prediction import TOP_K, accuracy_metrics
from stonelab.models.outputs import GoModelOutput

CALIBRATION_BINS = 15
GATE_SWEEP = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5)  # thresholds of the calibration table


class PredictionScores:
    def __init__(self, num_points: int, gate: dict | None = None):
        self.num_points = num_points
        self.gate = gate
        self.accuracy = accuracy_metrics(num_points + 1, ignore_index=None)
        self.ece = {name: BinaryCalibrationError(n_bins=CALIBRATION_BINS, norm="l1")
                    for name in ("softmax", "confidence")}
        self.columns: dict[str, list[np.ndarray]] = {k: [] for k in ("correct", "softmax", "confidence",
                                                                    "gated", "gated_correct", "can_gate",
                                                                    "alternative_correct")}
        self.passes_not_scored = 0

    def update(self, out: GoModelOutput, target: torch.Tensor) -> None:
        """``out``: the net's output; ``target`` [B] action ids."""
        logits = out.policy_logits.float().cpu()
        keep = target < self.num_points
        self.passes_not_scored += int((~keep).sum())
        if not keep.any():
            return
        logits, target = logits[keep], target[keep]
        if logits.shape[1] == self.num_points:  # the paper's net: no pass output
            logits = torch.cat([logits, torch.full((len(target), 1), -torch.inf)], dim=1)
        probs = torch.softmax(logits, dim=1)
        self.accuracy.update(logits, target)
        top_prob, top = probs.max(dim=1)
        correct = (top == target)
        self.ece["softmax"].update(top_prob, correct.long())
        self._append(correct=correct, softmax=top_prob)
        if out.has_belief:
            self._update_belief(out.apply(lambda t: t.cpu()[keep]), probs, target, correct)

    def _update_belief(self, out: GoModelOutput, probs, target, correct) -> None:
        """``out``: the belief net's output on the scored positions only."""
        confidence = out.confidence
        self.ece["confidence"].update(confidence, correct.long())
        move, gated, _ = gate_output(probs, out, **self.gate)
        # the move the gate would play at any threshold, and where it has one to play
        alternative, can_gate, _ = gate_output(probs, out, **{**self.gate, "threshold": 2.0, "enabled": True})
        self._append(confidence=confidence, gated=gated, gated_correct=(move == target), can_gate=can_gate,
                     alternative_correct=(alternative == target))

    def _append(self, **columns: torch.Tensor) -> None:
        for name, values in columns.items():
            self.columns[name].append(values.float().numpy())

    def compute(self) -> dict:
        if not self.columns["correct"]:
            return {}
        col = {k: np.concatenate(v) for k, v in self.columns.items() if v}
        accuracy = self.accuracy.compute()  # keyed top1, top10, top5: reported in k's order instead
        scores = {f"top{k}": float(accuracy[f"top{k}"]) for k in TOP_K}
        scores["ece_softmax"] = float(self.ece["softmax"].compute())
        scores["aurc_softmax"] = aurc(col["correct"], col["softmax"])
        if "confidence" in col:
            scores["ece"] = float(self.ece["confidence"].compute())
            scores["aurc"] = aurc(col["correct"], col["confidence"])
            scores["gate_rate"] = float(col["gated"].mean())
            scores["gate_top1"] = float(col["gated_correct"].mean())
            scores["aurc_gated"] = aurc(col["gated_correct"], col["confidence"])
            scores["gate_sweep"] = gate_sweep(col)
        return scores


def gate_sweep(col: dict) -> dict:
    """{threshold: {"rate", "top1"}}: how often the gate fires at each `GATE_SWEEP` threshold and
    the accuracy of the moves then played, from the per-position columns."""
    out = {}
    for threshold in GATE_SWEEP:
        fires = (col["confidence"] < threshold) & (col["can_gate"] > 0)
        played = np.where(fires, col["alternative_correct"], col["correct"])
        out[str(threshold)] = {"rate": float(fires.mean()), "top1": float(played.mean())}
    return out
