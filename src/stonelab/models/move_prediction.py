"""Supervised move prediction from expert games (seed 002's ``model=maddison_cnn``).

The net maps (planes, side to move) to logits over the board points; the loss
is cross-entropy with the expert's move. Pass targets are left out of loss and
metrics when the net has no pass output (the paper's 361-way softmax).
Accuracy is top-1/5/10 with micro averaging, as move-prediction papers report.
"""

from __future__ import annotations

import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torchmetrics import MeanMetric, MetricCollection
from torchmetrics.classification import MulticlassAccuracy

from stonelab.errors import ConfigError, check
from stonelab.features import ENCODERS
from stonelab.models.identity import CHECKPOINT_KEY, check_identity, net_target
from stonelab.models.outputs import GoModelOutput

TOP_K = (1, 5, 10)


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
    [B, n*n (+1 with pass)] are trained; any other head of the net is left alone."""

    MODEL_NAME = "maddison_cnn"
    DATA = "kgs"  # learns from expert games (the data config it needs)

    def __init__(self, net: nn.Module, game, *, encoder: str = "maddison", batch_size: int = 128,
                 optimizer: str = "sgd", lr: float = 0.128, momentum: float = 0.0,
                 weight_decay: float = 0.0, lr_halving_every_epochs: int | None = None):
        super().__init__()
        check([
            (lambda: optimizer in ("sgd", "adamw"), f"model.optimizer={optimizer!r}: choose sgd or adamw"),
            (lambda: lr > 0, f"model.lr={lr!r} must be > 0"),
            (lambda: 0 <= momentum < 1, f"model.momentum={momentum!r} must be in [0, 1)"),
            (lambda: weight_decay >= 0, f"model.weight_decay={weight_decay!r} must be >= 0"),
            (lambda: lr_halving_every_epochs is None or lr_halving_every_epochs >= 1,
             f"model.lr_halving_every_epochs={lr_halving_every_epochs!r} must be >= 1 or null"),
        ])
        check_net_input(net, encoder)
        self.save_hyperparameters(ignore=["net", "game"])
        self.net = net
        self.game = game
        self.encoder = encoder
        self.num_points = game.n * game.n
        self.num_classes = self.num_points  # no pass output
        ignore = self.num_points  # pass targets: not predicted by a 361-way softmax
        # Keyed "<split>_top": ModuleDict keys may not shadow nn.Module attributes such as train.
        self.metrics = nn.ModuleDict({
            f"{split}_top": accuracy_metrics(self.num_classes, ignore) for split in ("train", "val", "test")})
        self.losses = nn.ModuleDict({f"{split}_loss": MeanMetric() for split in ("val", "test")})

    # -- identity, so a checkpoint of another model or board is refused by name
    def identity(self) -> dict:
        return {"model": self.MODEL_NAME, "game": "go", "board_size": self.game.n, "encoder": self.encoder}

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint[CHECKPOINT_KEY] = {"identity": self.identity(), "net_target": net_target(self.net),
                                      "net_config": dict(getattr(self.net, "config", {}))}

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        check_identity(checkpoint, self.identity(), source="checkpoint")

    # -- the model
    def forward(self, planes: torch.Tensor, to_play: torch.Tensor) -> GoModelOutput:
        return self.net(planes.float(), to_play)

    def _step(self, batch: dict, split: str) -> torch.Tensor:
        logits = self(batch["planes"], batch["to_play"]).policy_logits
        target = batch["target"]
        valid = target < self.num_classes
        # A batch of passes only has no move to learn: a zero loss keeps the graph whole.
        loss = F.cross_entropy(logits[valid], target[valid]) if valid.any() else logits.sum() * 0.0
        metrics = self.metrics[f"{split}_top"]
        if split == "train":
            batch_values = metrics(logits.detach(), target)  # this batch's accuracies
            self.log("train/loss", loss, prog_bar=True)
            self.log_dict({f"train/{k}": v for k, v in batch_values.items()})
        else:
            metrics.update(logits.detach(), target)
            mean_loss = self.losses[f"{split}_loss"]
            mean_loss.update(loss.detach(), weight=int(valid.sum()))
            self.log(f"{split}/loss", mean_loss, on_epoch=True, prog_bar=split == "val")
            self.log_dict({f"{split}/{k}": v for k, v in metrics.items()}, on_epoch=True,
                          prog_bar=split == "val")
        return loss

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        return self._step(batch, "train")

    def validation_step(self, batch: dict, batch_idx: int) -> None:
        self._step(batch, "val")

    def test_step(self, batch: dict, batch_idx: int) -> None:
        self._step(batch, "test")

    def configure_optimizers(self):
        hp = self.hparams
        if hp.optimizer == "sgd":
            # The paper's 0.128 is for a minibatch of 128 with a mean loss: keep the
            # per-example step the same at other batch sizes (the data's batch wins).
            datamodule = getattr(self.trainer, "datamodule", None) if self._trainer else None
            batch = getattr(datamodule, "batch_size", None) or hp.batch_size
            lr = hp.lr * batch / 128
            opt = torch.optim.SGD(self.parameters(), lr=lr, momentum=hp.momentum, weight_decay=hp.weight_decay)
        else:
            opt = torch.optim.AdamW(self.parameters(), lr=hp.lr, weight_decay=hp.weight_decay)
        if not hp.lr_halving_every_epochs:
            return opt
        schedule = torch.optim.lr_scheduler.StepLR(opt, step_size=hp.lr_halving_every_epochs, gamma=0.5)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": schedule, "interval": "epoch"}}
