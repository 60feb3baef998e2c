"""Seed 001's belief-guided decision model for Go (``model=belief_vit``).

The net (`stonelab.models.nets.belief_vit.BeliefViT`) has a policy head and a separate
belief head. Losses, per batch:

- policy: cross-entropy of the 362 logits (361 points + pass) with the expert's move.
- confidence (belief a): binary cross-entropy of the confidence logit with
  ``correct = [argmax(policy) == expert move]``, computed from the DETACHED policy: the
  belief learns to predict whether the policy's top move is the expert's, and this
  loss cannot change the policy.
- value (belief b): binary cross-entropy of the value logit with the game's result for
  the side to move (``batch["value"]``: +1 won -> 1, -1 lost -> 0); positions of games
  with no known result (0) are left out. The value is tanh(logit / 2) in [-1, 1].
- ownership (belief c): per-point binary cross-entropy of the ownership logits with the
  cache's APPROXIMATE end-of-game owner (``batch["ownership"]``, side to move's view,
  +1 -> 1, -1 -> 0; unclear points (0) are left out). The belief map is tanh(logit / 2).

- score (beyond the seed, a net built with ``score_head=True``): the Gaussian negative
  log-likelihood of the counted final margin (`stonelab.models.auxiliary.score_loss`;
  games not counted are left out), the komi given to value and score (``batch["komi"]``).

``loss = policy + w_c * confidence + w_v * value + w_o * ownership (+ w_s * score)``. The
policy loss never reaches the belief head's parameters (the belief enters the policy head detached).

The gate (inference, `stonelab.models.gate.gate_moves`): when the confidence is below
``gate.threshold`` the policy's top move is suppressed and the move is re-chosen among
the policy's next ``gate.top_k - 1`` moves by ``log p(m) + gate.contested_weight * (1 -
|b(m)|)``, b(m) being the belief map at m (pass: 0 bonus): the policy's preference,
tilted toward points whose end-of-game owner the belief finds undecided. Above the
threshold, or with ``gate.enabled=false``, the move is the policy's top move.

Metrics (val/test, torchmetrics, micro where move-prediction papers use micro): top1,
top5, top10 (Acc@k, micro), f1_macro, belief_error = mean |sigmoid(c) - correct|,
ece / brier of the confidence, ece_softmax of the max-softmax baseline, value_acc and
value_brier (overall and ``_moves_0_50`` etc. by game phase, `stonelab.models.value`),
ownership_acc, score_mae (a score head: mean absolute error in points on counted games),
gate_rate, gate_top1 (accuracy of the gated moves), and the
risk-coverage AURC when positions are ranked by confidence (aurc), by the max softmax
(aurc_softmax), and of the gated moves ranked by confidence (aurc_gated).
"""

from __future__ import annotations

import json
from pathlib import Path

import lightning as L
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torchmetrics import CatMetric, MeanMetric
from torchmetrics.classification import BinaryCalibrationError, MulticlassF1Score
from torchmetrics.functional.classification import multiclass_accuracy

from stonelab.errors import ConfigError, check
from stonelab.models import figures
from stonelab.models.auxiliary import score_loss
from stonelab.models.gate import DEFAULT_GATE, gate_output
from stonelab.models.identity import CHECKPOINT_KEY, check_identity, net_target
from stonelab.models.move_prediction import (
    accuracy_metrics,
    check_net_input,
    lr_schedule_checks,
    with_warmup_cosine,
)
from stonelab.models.outputs import GoModelOutput
from stonelab.models.value import ValueMetrics, value_log_values, value_loss

DEFAULT_LOSS_WEIGHTS = {"confidence": 1.0, "value": 1.0, "ownership": 1.0, "score": 0.5}


class BeliefViTModule(L.LightningModule):
    """``net(planes float [B, C, n, n], to_play [B]) -> GoModelOutput`` with every head:
    policy_logits, confidence_logit, value_logit, ownership_logits."""

    MODEL_NAME = "belief_vit"
    DATA = "kgs"  # learns from expert games (the data config it needs)
    GAME = "go"  # the game it plays (a game config of another one is refused)

    def __init__(self, net: nn.Module, game, *, encoder: str = "simple4", batch_size: int = 64,
                 optimizer: str = "adam", lr: float = 1e-4, weight_decay: float = 0.0,
                 warmup_steps: int = 0, cosine_steps: int | None = None, final_lr_fraction: float = 0.05,
                 loss_weights: dict | None = None,
                 gate: dict | None = None, calibration_bins: int = 15, history_window: int = 50,
                 figures_dir: str | None = None):
        super().__init__()
        weights = {**DEFAULT_LOSS_WEIGHTS, **dict(loss_weights or {})}
        gate = {**DEFAULT_GATE, **dict(gate or {})}
        check([
            (lambda: optimizer in ("adam", "adamw"), f"model.optimizer={optimizer!r}: choose adam or adamw"),
            (lambda: lr > 0, f"model.lr={lr!r} must be > 0"),
            (lambda: weight_decay >= 0, f"model.weight_decay={weight_decay!r} must be >= 0"),
            *lr_schedule_checks(warmup_steps, cosine_steps, final_lr_fraction),
            (lambda: set(weights) == set(DEFAULT_LOSS_WEIGHTS),
             f"model.loss_weights: keys must be {sorted(DEFAULT_LOSS_WEIGHTS)}, got {sorted(weights)}"),
            (lambda: all(float(w) >= 0 for w in weights.values()),
             f"model.loss_weights={weights} must all be >= 0"),
            (lambda: set(gate) == set(DEFAULT_GATE),
             f"model.gate: keys must be {sorted(DEFAULT_GATE)}, got {sorted(gate)}"),
            (lambda: 0.0 <= float(gate["threshold"]) <= 1.0,
             f"model.gate.threshold={gate['threshold']!r} must be in [0, 1] (a probability)"),
            (lambda: int(gate["top_k"]) >= 2, f"model.gate.top_k={gate['top_k']!r} must be >= 2"),
            (lambda: float(gate["contested_weight"]) >= 0,
             f"model.gate.contested_weight={gate['contested_weight']!r} must be >= 0"),
            (lambda: calibration_bins >= 1, f"model.calibration_bins={calibration_bins!r} must be >= 1"),
            (lambda: history_window >= 1, f"model.history_window={history_window!r} must be >= 1"),
        ])
        check_net_input(net, encoder, game)
        self.save_hyperparameters(ignore=["net", "game"])
        self.net = net
        self.game = game
        self.encoder = encoder
        self.loss_weights = {k: float(v) for k, v in weights.items()}
        self.gate = {"enabled": bool(gate["enabled"]), "threshold": float(gate["threshold"]),
                     "top_k": int(gate["top_k"]), "contested_weight": float(gate["contested_weight"])}
        self.num_points = game.n * game.n
        self.num_actions = self.num_points + 1
        self.figures_dir = figures_dir
        self.history_window = history_window
        self.metrics = nn.ModuleDict({split: self._split_metrics(calibration_bins) for split in ("val", "test")})
        # Seed Fig. 6: (belief error, Acc@1, Acc@5) per training window and per validation epoch.
        self.history: dict[str, list[dict]] = {"train": [], "val": []}
        self._window: list[torch.Tensor] = []
        self._view_sample: dict | None = None

    def _split_metrics(self, bins: int) -> nn.ModuleDict:
        return nn.ModuleDict({
            "acc": accuracy_metrics(self.num_actions, ignore_index=None),
            "f1_macro": MulticlassF1Score(num_classes=self.num_actions, average="macro"),
            "ece": BinaryCalibrationError(n_bins=bins, norm="l1"),
            "ece_softmax": BinaryCalibrationError(n_bins=bins, norm="l1"),
            **{name: MeanMetric() for name in ("loss", "policy_loss", "confidence_loss", "value_loss",
                                               "ownership_loss", "belief_error", "brier",
                                               "ownership_acc", "gate_rate", "gate_top1", "score_loss",
                                               "score_mae")},
            "value": ValueMetrics(),
            **{name: CatMetric() for name in ("cat_confidence", "cat_softmax", "cat_correct", "cat_gated_correct")},
        })

    # -- identity, so a checkpoint of another model or board is refused by name
    def identity(self) -> dict:
        return {"model": self.MODEL_NAME, "game": "go", "board_size": self.game.n, "encoder": self.encoder}

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint[CHECKPOINT_KEY] = {"identity": self.identity(), "net_target": net_target(self.net),
                                      "net_config": dict(getattr(self.net, "config", {})),
                                      "gate": dict(self.gate), "history": self.history}

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        check_identity(checkpoint, self.identity(), source="checkpoint")
        history = checkpoint[CHECKPOINT_KEY].get("history")
        if isinstance(history, dict):
            self.history = {"train": list(history.get("train", [])), "val": list(history.get("val", []))}

    # -- the model
    def forward(self, planes: torch.Tensor, to_play: torch.Tensor,
                history: torch.Tensor | None = None, komi: torch.Tensor | None = None) -> GoModelOutput:
        # float32 outputs under trainer.precision=bf16-mixed too (every head is bfloat16
        # there): the belief error, calibration and value metrics are then computed in
        # float32, not rounded to bf16's 8 bits of mantissa.
        return self.net(planes.float(), to_play, history, komi=komi).apply(torch.Tensor.float)

    @torch.no_grad()
    def gated_moves(self, planes: torch.Tensor, to_play: torch.Tensor, legal: torch.Tensor | None = None,
                    history: torch.Tensor | None = None, **gate) -> dict:
        """The gated move per position (`stonelab.models.gate`); ``gate`` overrides model.gate's keys.

        legal: optional bool [B, n*n + 1] (illegal moves get probability 0). Returns a
        dict of move, gated, top (the policy's top move), confidence, probs, belief, value.
        """
        settings = {**self.gate, **gate}
        out = self(planes, to_play, history)
        logits = out.policy_logits.float()
        if legal is not None:
            logits = logits.masked_fill(~legal.to(logits.device), -torch.inf)
        probs = torch.softmax(logits, dim=1)
        move, gated, top = gate_output(probs, out, **settings)
        return {"move": move, "gated": gated, "top": top, "confidence": out.confidence, "probs": probs,
                "belief": out.belief_map, "value": out.value}

    def _losses(self, batch: dict) -> tuple[dict, GoModelOutput, dict]:
        """(losses, net outputs, extras: correct, decided, own) of one batch."""
        memory = getattr(self.net, "memory", 0)
        if memory and batch.get("history") is None:
            raise ConfigError(f"model.net.memory={memory} reads past positions, but the batches have none: "
                              f"set data.history={memory}")
        out = self(batch["planes"], batch["to_play"], batch.get("history"), batch.get("komi"))
        logits, target = out.policy_logits, batch["target"]
        with torch.no_grad():  # the confidence target: the detached policy's correctness
            correct = (logits.detach().argmax(dim=1) == target).float()
        losses = {"policy_loss": F.cross_entropy(logits, target),
                  "confidence_loss": F.binary_cross_entropy_with_logits(out.confidence_logit, correct)}
        ownership_logits = out.ownership_logits
        losses["value_loss"] = value_loss(out.value_logit, batch["value"])
        own = batch.get("ownership")
        decided = None
        if own is not None:
            own = own.to(ownership_logits.dtype)
            decided = own != 0
        if decided is not None and decided.any():
            losses["ownership_loss"] = F.binary_cross_entropy_with_logits(ownership_logits[decided],
                                                                          (own[decided] + 1) / 2)
        else:
            losses["ownership_loss"] = ownership_logits.sum() * 0.0
        losses["loss"] = (losses["policy_loss"] + self.loss_weights["confidence"] * losses["confidence_loss"]
                          + self.loss_weights["value"] * losses["value_loss"]
                          + self.loss_weights["ownership"] * losses["ownership_loss"])
        if out.score_lead is not None and "score" in batch:
            losses["score_loss"] = score_loss(out.score_lead, out.score_stdev, batch["score"])
            losses["loss"] = losses["loss"] + self.loss_weights["score"] * losses["score_loss"]
        extras = {"correct": correct, "decided": decided, "own": own}
        return losses, out, extras

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        losses, out, extras = self._losses(batch)
        with torch.no_grad():
            logits, target = out.policy_logits.detach(), batch["target"]
            conf = torch.sigmoid(out.confidence_logit.detach())
            belief_error = (conf - extras["correct"]).abs().mean()
            top1 = extras["correct"].mean()
            top5 = multiclass_accuracy(logits, target, num_classes=self.num_actions, top_k=5, average="micro")
        self.log("train/loss", losses["loss"], prog_bar=True)
        self.log_dict({f"train/{k}": v.detach() for k, v in losses.items() if k != "loss"})
        self.log_dict({"train/top1": top1, "train/top5": top5, "train/belief_error": belief_error})
        self._window.append(torch.stack([belief_error, top1, top5]))
        if len(self._window) >= self.history_window:
            be, a1, a5 = torch.stack(self._window).mean(0).tolist()
            self.history["train"].append({"step": int(self.global_step), "belief_error": be, "top1": a1,
                                          "top5": a5})
            self._window = []
        return losses["loss"]

    def _eval_step(self, batch: dict, split: str) -> None:
        losses, out, extras = self._losses(batch)
        out = out.apply(torch.Tensor.detach)
        m = self.metrics[split]
        logits, target, correct = out.policy_logits.float(), batch["target"], extras["correct"]
        probs = torch.softmax(logits, dim=1)
        conf = out.confidence
        size = len(target)
        counted = None if out.score_lead is None or "score" not in batch else ~torch.isnan(batch["score"])
        for k, v in losses.items():
            weight = size if k != "score_loss" else int(counted.sum())  # the score's mean: counted games only
            if weight:
                m[k].update(v.detach(), weight=weight)
        m["acc"].update(logits, target)
        m["f1_macro"].update(logits, target)
        m["ece"].update(conf, correct.long())
        msp = probs.max(dim=1).values
        m["ece_softmax"].update(msp, correct.long())
        m["belief_error"].update((conf - correct).abs())
        m["brier"].update((conf - correct) ** 2)
        m["value"].update(out.value_logit, batch["value"], batch.get("move_number"))
        if extras["decided"] is not None and extras["decided"].any():
            d = extras["decided"]
            own_pred = torch.sign(out.ownership_logits[d])
            m["ownership_acc"].update((own_pred == extras["own"][d].sign()).float())
        if counted is not None and counted.any():
            m["score_mae"].update((out.score_lead[counted] - batch["score"][counted]).abs())
        move, gated, _ = gate_output(probs, out, **self.gate)
        gated_correct = (move == target).float()
        m["gate_rate"].update(gated.float())
        m["gate_top1"].update(gated_correct)
        m["cat_confidence"].update(conf)
        m["cat_softmax"].update(msp)
        m["cat_correct"].update(correct)
        m["cat_gated_correct"].update(gated_correct)
        if split == "test" and self._view_sample is None:
            stones = batch["planes"][:, :2].flatten(1).sum(1)
            i = int(stones.argmax())  # the fullest board of the first batch
            self._view_sample = {"planes": batch["planes"][i:i + 1].detach().cpu(),
                                 "to_play": batch["to_play"][i:i + 1].detach().cpu(), "target": int(target[i])}

    def validation_step(self, batch: dict, batch_idx: int) -> None:
        self._eval_step(batch, "val")

    def test_step(self, batch: dict, batch_idx: int) -> None:
        self._eval_step(batch, "test")

    def _epoch_values(self, split: str) -> tuple[dict, dict]:
        """(scalar metrics, risk-coverage arrays) of the epoch; resets the split's metrics."""
        m = self.metrics[split]
        if not m["belief_error"].update_called:  # (a MetricCollection member may share its group's state)
            return {}, {}
        values = {f"{split}/{k}": v for k, v in m["acc"].compute().items()}
        for name in ("f1_macro", "ece", "ece_softmax", "loss", "policy_loss", "confidence_loss", "value_loss",
                     "ownership_loss", "belief_error", "brier", "ownership_acc", "gate_rate", "gate_top1",
                     "score_loss", "score_mae"):
            if m[name].update_called:
                values[f"{split}/{name}"] = m[name].compute()
        values.update({k: torch.tensor(v) for k, v in value_log_values(m["value"].compute(), split).items()})
        arrays = {k: m[f"cat_{k}"].compute().float().cpu().numpy().reshape(-1)
                  for k in ("confidence", "softmax", "correct", "gated_correct")}
        values[f"{split}/aurc"] = torch.tensor(figures.aurc(arrays["correct"], arrays["confidence"]))
        values[f"{split}/aurc_softmax"] = torch.tensor(figures.aurc(arrays["correct"], arrays["softmax"]))
        values[f"{split}/aurc_gated"] = torch.tensor(figures.aurc(arrays["gated_correct"], arrays["confidence"]))
        for metric in m.values():
            metric.reset()
        return values, arrays

    def on_validation_epoch_end(self) -> None:
        values, _ = self._epoch_values("val")
        if not values:
            return
        top1 = values.pop("val/top1")
        self.log("val/top1", top1, prog_bar=True)  # ModelCheckpoint monitors it
        self.log_dict(values)
        if self.trainer.sanity_checking:
            return
        self.history["val"].append({"epoch": int(self.current_epoch), "step": int(self.global_step),
                                    "belief_error": float(values["val/belief_error"]),
                                    "top1": float(top1), "top5": float(values["val/top5"])})
        self._draw_training_figure()

    def on_test_epoch_end(self) -> None:
        values, arrays = self._epoch_values("test")
        if not values:
            return
        self.log_dict(values)
        if self.trainer.is_global_zero and self.figures_dir:
            self._draw_test_figures(values, arrays)
        self._view_sample = None

    def configure_optimizers(self):
        hp = self.hparams
        cls = torch.optim.Adam if hp.optimizer == "adam" else torch.optim.AdamW
        opt = cls(self.parameters(), lr=hp.lr, weight_decay=hp.weight_decay)
        return with_warmup_cosine(opt, hp.warmup_steps, hp.cosine_steps, hp.final_lr_fraction)

    # -- figures
    def _loggers(self):
        return self.trainer.loggers if self._trainer is not None else []

    def _draw_training_figure(self) -> None:
        if not self.figures_dir or not self.trainer.is_global_zero:
            return
        fig = figures.belief_error_vs_accuracy(self.history["train"], self.history["val"])
        path = figures.save(fig, Path(self.figures_dir) / "belief_error_vs_accuracy.png")
        figures.log_figure(self._loggers(), "figures/belief_error_vs_accuracy", fig, path, self.global_step)
        with open(Path(self.figures_dir) / "history.json", "w") as f:
            json.dump(self.history, f, indent=1)

    def _draw_test_figures(self, values: dict, arrays: dict) -> None:
        folder = Path(self.figures_dir)
        curves = {}
        for label, correct, score in (("belief confidence", arrays["correct"], arrays["confidence"]),
                                      ("max softmax (baseline)", arrays["correct"], arrays["softmax"]),
                                      ("gated moves, by confidence", arrays["gated_correct"], arrays["confidence"])):
            cov, risk = figures.risk_coverage(correct, score)
            curves[label] = (cov, risk, figures.aurc(correct, score))
        fig = figures.risk_coverage_figure(curves, f"risk-coverage on {len(arrays['correct'])} test positions")
        path = figures.save(fig, folder / "risk_coverage_test.png")
        figures.log_figure(self._loggers(), "figures/risk_coverage_test", fig, path, self.global_step)
        # The curves at 100 equal coverage levels, for tables next to other models.
        levels = np.linspace(0.01, 1.0, 100)
        table = {"coverage": levels.round(4).tolist(),
                 **{label: np.interp(levels, cov, risk).round(5).tolist() for label, (cov, risk, _) in curves.items()},
                 "aurc": {label: area for label, (_, _, area) in curves.items()},
                 "positions": len(arrays["correct"]), "gate": self.gate}
        (folder / "risk_coverage_test.json").write_text(json.dumps(table, indent=1))
        if self._view_sample is not None:
            fig = self.position_figure(self._view_sample["planes"], int(self._view_sample["to_play"][0]),
                                       played=self._view_sample["target"], title="a test position (fullest board "
                                       "of the first test batch)")
            path = figures.save(fig, folder / "position_view_test.png")
            figures.log_figure(self._loggers(), "figures/position_view_test", fig, path, self.global_step)

    def position_figure(self, planes: torch.Tensor, to_play: int, *, legal: torch.Tensor | None = None,
                        played: int | None = None, title: str = ""):
        """Seed Fig. 7 for one position (planes [1, C, n, n] of the simple4 encoder)."""
        was_training = self.training
        self.eval()
        device = next(self.parameters()).device
        out = self.gated_moves(planes.to(device), torch.tensor([to_play], device=device), legal)
        self.train(was_training)
        p = planes[0].float().cpu().numpy().reshape(planes.shape[1], -1)
        board = (p[0] - p[1]) * to_play  # own / opponent planes -> +1 black, -1 white
        return figures.position_view(board.astype(np.int8), to_play, out["probs"][0].cpu().numpy(),
                                     belief=out["belief"][0].cpu().numpy(), value=float(out["value"][0]),
                                     confidence=float(out["confidence"][0]), played=played,
                                     gated_move=int(out["move"][0]), gate_threshold=self.gate["threshold"]
                                     if self.gate["enabled"] else None, title=title)
