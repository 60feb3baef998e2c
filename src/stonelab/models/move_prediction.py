"""Supervised move prediction from expert games (seed 002's ``model=maddison_cnn``).

The net maps (planes, side to move) to logits over the board points; the loss
is cross-entropy with the expert's move. Pass targets are left out of loss and
metrics when the net has no pass output (the paper's 361-way softmax).
Accuracy is top-1/5/10 with micro averaging, as move-prediction papers report.

A net with a value output (``model.net.value_head=true``) also learns the game's
result for the side to move (`stonelab.models.value`):
``loss = policy + value_weight * value``. ``val/loss`` and ``test/loss`` stay the
policy's cross-entropy, comparable with runs without a value head; ``value_loss``,
``value_acc`` and ``value_brier`` (overall and by game phase) are logged beside them
and written to result.json (`result_fields`).

A net with auxiliary heads (``model.net.aux_heads=true``, `stonelab.models.auxiliary`)
also learns each point's end-of-game owner and the final score:
``+ ownership_weight * ownership + score_weight * score``; held-out ownership accuracy
and score error are logged (``ownership_acc``, ``score_mae``) and written to result.json.
"""

from __future__ import annotations

import logging
import math
import warnings
from functools import partial

import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torchmetrics import MeanMetric, MetricCollection
from torchmetrics.classification import MulticlassAccuracy

from stonelab.errors import ConfigError, check
from stonelab.features import ENCODERS
from stonelab.models.auxiliary import AuxMetrics, ownership_loss, score_loss
from stonelab.models.identity import CHECKPOINT_KEY, check_identity, net_target
from stonelab.models.outputs import GoModelOutput
from stonelab.models.value import ValueMetrics, value_log_values, value_loss

log = logging.getLogger(__name__)

TOP_K = (1, 5, 10)
AUX_LOGGED = ("ownership_acc", "score_mae")  # the auxiliary table's logged entries (all go to result.json)


def accuracy_metrics(num_classes: int, ignore_index: int | None) -> MetricCollection:
    return MetricCollection({
        f"top{k}": MulticlassAccuracy(num_classes=num_classes, top_k=k, average="micro",
                                      ignore_index=ignore_index)
        for k in TOP_K})


def check_net_input(net: nn.Module, encoder: str, game=None) -> None:
    """A clear error, not a shape crash, when the net was built for other planes or another board."""
    planes = ENCODERS[encoder].num_planes
    config = getattr(net, "config", {})
    if config.get("in_planes", planes) != planes:
        raise ConfigError(f"model.net.in_planes={config['in_planes']} but data.encoder={encoder!r} gives "
                          f"{planes} planes: set model.net.in_planes={planes}")
    if game is not None and config.get("board_size", game.n) != game.n:
        raise ConfigError(f"model.net.board_size={config['board_size']} but the game is "
                          f"{game.n}x{game.n}: set model.net.board_size={game.n}")


class MovePredictionModule(L.LightningModule):
    """``net(planes float [B, C, n, n], to_play [B]) -> GoModelOutput`` whose policy_logits
    [B, n*n (+1 with pass)] and value_logit [B] (when not None) are trained."""

    MODEL_NAME = "maddison_cnn"
    DATA = "kgs"  # learns from expert games (the data config it needs)
    GAME = "go"  # the game it plays (a game config of another one is refused)

    def __init__(self, net: nn.Module, game, *, encoder: str = "maddison", batch_size: int = 128,
                 optimizer: str = "sgd", lr: float = 0.128, momentum: float = 0.0,
                 weight_decay: float = 0.0, lr_halving_every_epochs: int | None = None,
                 warmup_steps: int = 0, cosine_steps: int | None = None, final_lr_fraction: float = 0.05,
                 label_smoothing: float = 0.0, value_weight: float = 1.0, ownership_weight: float = 1.0,
                 score_weight: float = 0.5, trainable: list[str] | None = None):
        super().__init__()
        if trainable is not None and not isinstance(trainable, str):
            trainable = list(trainable)  # Hydra hands a ListConfig
        check([
            (lambda: optimizer in ("sgd", "adamw"), f"model.optimizer={optimizer!r}: choose sgd or adamw"),
            (lambda: lr > 0, f"model.lr={lr!r} must be > 0"),
            (lambda: 0 <= momentum < 1, f"model.momentum={momentum!r} must be in [0, 1)"),
            (lambda: weight_decay >= 0, f"model.weight_decay={weight_decay!r} must be >= 0"),
            (lambda: lr_halving_every_epochs is None or lr_halving_every_epochs >= 1,
             f"model.lr_halving_every_epochs={lr_halving_every_epochs!r} must be >= 1 or null"),
            *lr_schedule_checks(warmup_steps, cosine_steps, final_lr_fraction),
            (lambda: not (lr_halving_every_epochs and (warmup_steps or cosine_steps)),
             "model.lr_halving_every_epochs is the paper's schedule, model.warmup_steps/cosine_steps "
             "the warmup-cosine one: set one of them"),
            (lambda: 0 <= label_smoothing < 1, f"model.label_smoothing={label_smoothing!r} must be in [0, 1)"),
            (lambda: value_weight >= 0,
             f"model.value_weight={value_weight!r} must be >= 0 (the weight of the value loss)"),
            (lambda: ownership_weight >= 0,
             f"model.ownership_weight={ownership_weight!r} must be >= 0 (the weight of the ownership loss)"),
            (lambda: score_weight >= 0, f"model.score_weight={score_weight!r} must be >= 0 (the weight of the score loss)"),
            (lambda: trainable is None or (isinstance(trainable, list) and trainable and all(isinstance(p, str) and p for p in trainable)),
             f"model.trainable={trainable!r} must be null (train every weight) or a non-empty list of "
             "parameter-name prefixes such as [aux_heads, value_head.komi_slope]"),
        ])
        check_net_input(net, encoder)
        self.save_hyperparameters(ignore=["net", "game"])
        self.net = net
        if trainable is not None:
            freeze_all_but(net, trainable)
        self.game = game
        self.encoder = encoder
        self.value_weight = float(value_weight)
        self.aux_weights = {"ownership": float(ownership_weight), "score": float(score_weight)}
        self.num_points = game.n * game.n
        self.num_classes = self.num_points  # no pass output
        ignore = self.num_points  # pass targets: not predicted by a 361-way softmax
        # Keyed "<split>_top": ModuleDict keys may not shadow nn.Module attributes such as train.
        self.metrics = nn.ModuleDict({
            f"{split}_top": accuracy_metrics(self.num_classes, ignore) for split in ("train", "val", "test")})
        self.losses = nn.ModuleDict({f"{split}_{name}": MeanMetric() for split in ("val", "test")
                                     for name in ("loss", "value_loss")})
        self.value_metrics = nn.ModuleDict({split: ValueMetrics() for split in ("val", "test")})
        self.value_results: dict[str, dict] = {}  # split -> ValueMetrics table, for result.json
        self.aux_metrics = nn.ModuleDict({split: AuxMetrics() for split in ("val", "test")})
        self.aux_results: dict[str, dict] = {}  # split -> AuxMetrics, for result.json
        # Lightning never calls train() itself: it keeps each submodule's mode around
        # validation, so the frozen norms must start in eval mode here.
        self.train(self.training)

    # -- identity, so a checkpoint of another model or board is refused by name
    def identity(self) -> dict:
        return {"model": self.MODEL_NAME, "game": "go", "board_size": self.game.n, "encoder": self.encoder}

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint[CHECKPOINT_KEY] = {"identity": self.identity(), "net_target": net_target(self.net),
                                      "net_config": dict(getattr(self.net, "config", {}))}

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        check_identity(checkpoint, self.identity(), source="checkpoint")

    def train(self, mode: bool = True):
        # A frozen part stays frozen in training mode too: its batch norms keep their
        # running statistics and normalise with them, so the heads learn on the features
        # the shipped net computes at play time.
        super().train(mode)
        if mode:
            for module in self.net.modules():
                if isinstance(module, nn.modules.batchnorm._BatchNorm) and not any(
                        p.requires_grad for p in module.parameters()):
                    module.eval()
        return self

    # -- the model
    def forward(self, planes: torch.Tensor, to_play: torch.Tensor, komi: torch.Tensor | None = None) -> GoModelOutput:
        # Outputs in float32 under trainer.precision=bf16-mixed too (heads such as the
        # value MLP come out bfloat16 there): losses and metrics are then computed and
        # summed in float32, not with bf16's 8 bits of mantissa.
        return self.net(planes.float(), to_play, komi=komi).apply(torch.Tensor.float)

    def _policy_loss(self, logits: torch.Tensor, target: torch.Tensor, smoothing: float = 0.0) -> torch.Tensor:
        """Cross-entropy with the expert's moves, passes left out when the net cannot play one."""
        valid = target < self.num_classes
        if not valid.any():  # a batch of passes only has no move to learn: a zero loss keeps the graph whole
            return logits.sum() * 0.0
        return F.cross_entropy(logits[valid], target[valid], label_smoothing=smoothing)

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        out = self(batch["planes"], batch["to_play"], batch.get("komi"))
        logits, target = out.policy_logits, batch["target"]
        # Label smoothing in training only: val/test losses stay the plain cross-entropy.
        loss = policy_loss = self._policy_loss(logits, target, self.hparams.label_smoothing)
        if out.value_logit is not None:
            v_loss = value_loss(out.value_logit, batch["value"])
            loss = policy_loss + self.value_weight * v_loss
            self.log_dict({"train/policy_loss": policy_loss.detach(), "train/value_loss": v_loss.detach()})
        for name, part in self._aux_losses(out, batch).items():
            loss = loss + self.aux_weights[name] * part
            self.log(f"train/{name}_loss", part.detach())
        batch_values = self.metrics["train_top"](logits.detach(), target)  # this batch's accuracies
        self.log("train/loss", loss, prog_bar=True)
        self.log_dict({f"train/{k}": v for k, v in batch_values.items()})
        return loss

    def _aux_losses(self, out: GoModelOutput, batch: dict) -> dict[str, torch.Tensor]:
        """The auxiliary heads' losses (a net without them, or a batch without targets: none)."""
        if out.score_lead is None or "score" not in batch:
            return {}
        return {"ownership": ownership_loss(out.ownership_logits, batch["ownership"]),
                "score": score_loss(out.score_lead, out.score_stdev, batch["score"])}

    def _eval_step(self, batch: dict, split: str) -> None:
        out = self(batch["planes"], batch["to_play"], batch.get("komi"))
        logits, target = out.policy_logits.detach(), batch["target"]
        metrics = self.metrics[f"{split}_top"]
        metrics.update(logits, target)
        mean_loss = self.losses[f"{split}_loss"]
        mean_loss.update(self._policy_loss(logits, target), weight=int((target < self.num_classes).sum()))
        self.log(f"{split}/loss", mean_loss, on_epoch=True, prog_bar=split == "val")
        self.log_dict({f"{split}/{k}": v for k, v in metrics.items()}, on_epoch=True,
                      prog_bar=split == "val")
        if out.value_logit is not None:
            self._update_value_metrics(out.value_logit.detach(), batch, split)
        if out.score_lead is not None and "score" in batch:
            self.aux_metrics[split].update(out.ownership_logits.detach(), batch["ownership"],
                                           out.score_lead.detach(), out.score_stdev.detach(), batch["score"])

    def validation_step(self, batch: dict, batch_idx: int) -> None:
        self._eval_step(batch, "val")

    def test_step(self, batch: dict, batch_idx: int) -> None:
        self._eval_step(batch, "test")

    def on_validation_epoch_end(self) -> None:
        self._log_epoch_metrics("val")

    def on_test_epoch_end(self) -> None:
        self._log_epoch_metrics("test")

    def _log_epoch_metrics(self, split: str) -> None:
        """Log the epoch's value table (accuracy, Brier) and auxiliary table (ownership
        accuracy, score error); keep them for result.json."""
        self._log_table(self.value_metrics[split], lambda t: value_log_values(t, split), self.value_results, split)
        self._log_table(self.aux_metrics[split], lambda t: {f"{split}/{k}": float(t[k]) for k in AUX_LOGGED},
                        self.aux_results, split)

    def _log_table(self, metric, logged, results: dict, split: str) -> None:
        """Compute and reset ``metric`` if it saw a batch (a net without that head: nothing),
        log ``logged(table)``, and keep the table in ``results`` (not the sanity check's)."""
        if not metric.update_called:
            return
        table = metric.compute()
        metric.reset()
        self.log_dict(logged(table))
        if not self.trainer.sanity_checking:
            results[split] = table

    # -- the value output (a net built with value_head=true)
    def _update_value_metrics(self, value_logit: torch.Tensor, batch: dict, split: str) -> None:
        known = int((batch["value"] != 0).sum())
        if known:
            mean_value_loss = self.losses[f"{split}_value_loss"]
            mean_value_loss.update(value_loss(value_logit, batch["value"]), weight=known)
            self.log(f"{split}/value_loss", mean_value_loss, on_epoch=True)
        self.value_metrics[split].update(value_logit, batch["value"], batch.get("move_number"))

    def result_fields(self, trainer) -> dict:
        """This model's part of result.json: the value's accuracy and Brier score, overall and
        by game phase, with position counts ("val": the last validation epoch, "test": the
        checkpoint tested); nothing for a net without a value output."""
        fields = {"value": dict(self.value_results)} if self.value_results else {}
        if self.aux_results:
            fields["auxiliary"] = dict(self.aux_results)
        return fields

    def configure_optimizers(self):
        hp = self.hparams
        trained = [p for p in self.parameters() if p.requires_grad]  # model.trainable's choice
        if hp.optimizer == "sgd":
            # The paper's 0.128 is for a minibatch of 128 with a mean loss: keep the
            # per-example step the same at other batch sizes (the data's batch wins).
            datamodule = getattr(self.trainer, "datamodule", None) if self._trainer else None
            batch = getattr(datamodule, "batch_size", None) or hp.batch_size
            lr = hp.lr * batch / 128
            opt = torch.optim.SGD(trained, lr=lr, momentum=hp.momentum, weight_decay=hp.weight_decay)
        else:
            opt = torch.optim.AdamW(trained, lr=hp.lr, weight_decay=hp.weight_decay)
        if hp.lr_halving_every_epochs:
            schedule = torch.optim.lr_scheduler.StepLR(opt, step_size=hp.lr_halving_every_epochs, gamma=0.5)
            return {"optimizer": opt, "lr_scheduler": {"scheduler": schedule, "interval": "epoch"}}
        return with_warmup_cosine(opt, hp.warmup_steps, hp.cosine_steps, hp.final_lr_fraction)


def freeze_all_but(net: nn.Module, prefixes: list[str]) -> None:
    """Stop the gradient of every parameter of ``net`` whose name starts with none of
    ``prefixes`` (``model.trainable``): new heads learn on a trained trunk left as it is,
    and the backward pass then stops at the heads (the trunk costs a forward only)."""
    def under(name: str, prefix: str) -> bool:  # "aux_heads" names aux_heads.conv.weight, not aux_heads2.x
        return name == prefix or name.startswith(prefix + ".")

    names = [name for name, _ in net.named_parameters()]
    for prefix in prefixes:
        if not any(under(name, prefix) for name in names):
            tops = sorted({name.split(".")[0] for name in names})
            raise ConfigError(f"model.trainable: {prefix!r} names no parameter of this net; "
                              f"its parts are {', '.join(tops)}")
    for name, param in net.named_parameters():
        param.requires_grad_(any(under(name, prefix) for prefix in prefixes))
    trained = sum(p.numel() for p in net.parameters() if p.requires_grad)
    frozen_norms = sum(isinstance(m, nn.modules.batchnorm._BatchNorm) and not any(p.requires_grad for p in m.parameters())
                       for m in net.modules())
    log.info("model.trainable=%s: %d of %d weights train; the %d batch norms of the frozen part keep their "
             "statistics (eval mode)", list(prefixes), trained, sum(p.numel() for p in net.parameters()), frozen_norms)
    # Lightning warns of modules in eval mode at the start of a fit: here that is the point.
    warnings.filterwarnings("ignore", message=r"Found \d+ module\(s\) in eval mode at the start of training")


def lr_schedule_checks(warmup_steps, cosine_steps, final_lr_fraction) -> list:
    """`check` rules for the warmup-cosine settings (``model.warmup_steps``, ...)."""
    return [
        (lambda: isinstance(warmup_steps, int) and warmup_steps >= 0,
         f"model.warmup_steps={warmup_steps!r} must be an int >= 0"),
        (lambda: cosine_steps is None or (isinstance(cosine_steps, int) and cosine_steps >= 1),
         f"model.cosine_steps={cosine_steps!r} must be an int >= 1 or null"),
        (lambda: 0 <= final_lr_fraction <= 1, f"model.final_lr_fraction={final_lr_fraction!r} must be in [0, 1]"),
    ]


def with_warmup_cosine(opt, warmup_steps: int, cosine_steps: int | None, final_lr_fraction: float):
    """What ``configure_optimizers`` returns: ``opt`` alone, or with the warmup-cosine factor
    (`warmup_cosine`) stepped every update when either length is set."""
    if not (warmup_steps or cosine_steps):
        return opt
    factor = partial(warmup_cosine, warmup=warmup_steps, cosine=cosine_steps, final=final_lr_fraction)
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    return {"optimizer": opt, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}


def warmup_cosine(step: int, *, warmup: int, cosine: int | None, final: float) -> float:
    """The learning rate's factor at ``step``: linear from 1/warmup to 1 over ``warmup`` steps,
    then a half cosine down to ``final`` over ``cosine`` steps, then ``final`` (no cosine: 1).
    Why warmup: Adam's first steps, with few gradients in its moments, are the largest."""
    if step < warmup:
        return (step + 1) / warmup
    if not cosine:
        return 1.0
    progress = min(1.0, (step - warmup) / cosine)
    return final + (1.0 - final) * 0.5 * (1.0 + math.cos(math.pi * progress))
