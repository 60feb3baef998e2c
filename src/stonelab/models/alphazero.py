"""AlphaZero policy-value training (seed 000) as a LightningModule.

One update (training step) = one minibatch from the replay buffer, trained for up to
``epochs_per_step`` passes (AlphaZero_Gomoku's 5 epochs) with the KL-adaptive
learning-rate multiplier: passes stop early once the policy moved more than
4x the KL target, and the multiplier is divided by 1.5 when the step's KL
exceeded 2x target, multiplied by 1.5 when it stayed under half the target.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

import lightning as L
import torch
from torch import nn

from stonelab.errors import ConfigError, check
from stonelab.games import registry
from stonelab.models.evaluator import NetEvaluator, net_evaluator  # noqa: F401  (re-exported: one source of truth)
from stonelab.models.identity import (  # noqa: F401  (re-exported: one source of truth)
    CHECKPOINT_KEY,
    CheckpointMismatchError,
    check_identity,
    load_checkpoint_file,
    net_target,
)


class AlphaZeroModule(L.LightningModule):
    MODEL_NAME = "alphazero"
    DATA = "selfplay"  # learns from its own games (the data config it needs)
    GAME = None  # it plays every registered game

    def __init__(self, net: nn.Module | Callable[..., nn.Module], game, *, lr: float = 2e-3,
                 weight_decay: float = 1e-4, kl_target: float = 0.02, epochs_per_step: int = 5,
                 lr_multiplier_min: float = 0.1, lr_multiplier_max: float = 10.0,
                 warmup_steps: int = 0, ownership_weight: float = 1.5, score_weight: float = 0.1):
        super().__init__()
        check([
            (lambda: lr > 0, f"model.lr={lr!r} must be > 0"),
            (lambda: weight_decay >= 0, f"model.weight_decay={weight_decay!r} must be >= 0"),
            (lambda: kl_target > 0, f"model.kl_target={kl_target!r} must be > 0"),
            (lambda: epochs_per_step >= 1, f"model.epochs_per_step={epochs_per_step!r} must be >= 1"),
            (lambda: isinstance(warmup_steps, int) and warmup_steps >= 0,
             f"model.warmup_steps={warmup_steps!r} must be an int >= 0"),
            (lambda: ownership_weight >= 0, f"model.ownership_weight={ownership_weight!r} must be >= 0"),
            (lambda: score_weight >= 0, f"model.score_weight={score_weight!r} must be >= 0"),
            (lambda: 0 < lr_multiplier_min <= lr_multiplier_max,
             f"model: need 0 < lr_multiplier_min ({lr_multiplier_min!r}) <= lr_multiplier_max "
             f"({lr_multiplier_max!r})"),
        ])
        self.save_hyperparameters(ignore=["net", "game"])
        self.net = net_for_game(net, game)
        self.game = game
        self.automatic_optimization = False
        # Training state that must survive a resume (saved in on_save_checkpoint).
        self.lr_multiplier = 1.0
        self.rounds = 0  # self-play rounds played
        self.games_played = 0
        self.train_steps = 0

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.net(planes)

    def configure_optimizers(self):
        # Decoupled weight decay (AdamW), not Adam's L2-in-the-gradient: with the KL rule
        # pushing the lr up while the policy barely moves, Adam normalises the L2 gradient
        # into a fixed-size step towards zero and erased the 8x8 net within ~100 steps
        # (dead ReLU heads, entropy stuck at ln 64) in a measured run.
        return torch.optim.AdamW(self.net.parameters(), lr=self.hparams.lr,
                                 weight_decay=self.hparams.weight_decay)

    def training_step(self, dataloader_iter):
        # Pulling the batch here (not before the step) lets SelfPlay fill the
        # buffer in on_train_batch_start and have this step sample fresh games.
        batch, _, _ = next(dataloader_iter)  # yields (batch, batch_idx, dataloader_idx)
        states, policies, values, *aux = (t.to(self.device) for t in batch)
        opt = self.optimizers()
        hp = self.hparams
        for group in opt.param_groups:
            group["lr"] = self.current_lr()
        with torch.no_grad():
            old_log_p, _ = self.net(states)
        for _ in range(hp.epochs_per_step):
            out = self._heads(states, with_aux=bool(aux))
            log_p = out["log_policy"]
            value_loss = torch.mean((values - out["value"]) ** 2)
            policy_loss = -torch.mean(torch.sum(policies * log_p, dim=1))
            aux_losses = self._aux_losses(out, *aux) if aux else {}
            loss = value_loss + policy_loss + sum(aux_losses.values())
            opt.zero_grad()
            self.manual_backward(loss)
            opt.step()
            with torch.no_grad():
                new_log_p, _ = self.net(states)
                kl = torch.mean(torch.sum(old_log_p.exp() * (old_log_p - new_log_p), dim=1))
                kl = self.trainer.strategy.reduce(kl, reduce_op="mean")  # same decision on every rank
            if kl > 4 * hp.kl_target:
                break
        if kl > 2 * hp.kl_target:
            self.lr_multiplier = max(hp.lr_multiplier_min, self.lr_multiplier / 1.5)
        elif kl < hp.kl_target / 2 and self.train_steps >= hp.warmup_steps:
            self.lr_multiplier = min(hp.lr_multiplier_max, self.lr_multiplier * 1.5)
        self.train_steps += 1
        with torch.no_grad():
            entropy = -torch.mean(torch.sum(log_p.exp() * log_p, dim=1))
        self.log_dict({
            "train/loss": loss.detach(), "train/value_loss": value_loss.detach(),
            "train/policy_loss": policy_loss.detach(), "train/policy_entropy": entropy,
            "train/kl": kl, "train/lr_multiplier": self.lr_multiplier,
            "train/lr": self.current_lr(), **{f"train/{k}": v.detach() for k, v in aux_losses.items()},
        }, on_step=True, on_epoch=False, prog_bar=False, batch_size=len(states))
        self.log("loss", loss.detach(), prog_bar=True, logger=False, batch_size=len(states))
        return loss.detach()

    def _heads(self, states: torch.Tensor, with_aux: bool) -> dict[str, torch.Tensor]:
        """The net's outputs by name; Go's ownership and score too when the net has them."""
        if with_aux and getattr(self.net, "has_aux_heads", False):
            return self.net.heads(states)
        log_p, v = self.net(states)
        return {"log_policy": log_p, "value": v}

    def _aux_losses(self, out: dict, ownership: torch.Tensor, scores: torch.Tensor,
                    weights: torch.Tensor) -> dict[str, torch.Tensor]:
        """KataGo's auxiliary losses over positions with targets (``weights``): ownership as a
        per-point cross-entropy of "the mover owns it" (a neutral point's target is 1/2), and the
        final margin (in units of board_size points) under a Huber loss, which big wins and losses
        cannot dominate."""
        losses = {}
        norm = weights.sum().clamp(min=1.0)
        if "ownership" in out:
            own = ((1 + out["ownership"]) / 2).clamp(1e-4, 1 - 1e-4)
            target = (1 + ownership) / 2
            per_point = -(target * own.log() + (1 - target) * (1 - own).log())
            losses["ownership_loss"] = self.hparams.ownership_weight * (per_point.mean(1) * weights).sum() / norm
        if "score" in out:
            huber = nn.functional.smooth_l1_loss(out["score"], scores / self.game.n, reduction="none")
            losses["score_loss"] = self.hparams.score_weight * (huber * weights).sum() / norm
        return losses

    def current_lr(self) -> float:
        """Base rate x KL multiplier, ramped up linearly over the first ``warmup_steps``.

        Adam's first updates are about lr x sign(gradient) for every weight; on the
        128-channel trunk that pushed all 4 ReLUs of the policy head below zero after
        one step at the base rate (measured on 8x8), leaving a uniform policy for good.
        The ramp lets Adam's moment estimates settle first. The KL rule does not raise
        the multiplier during warmup.
        """
        ramp = min(1.0, (self.train_steps + 1) / self.hparams.warmup_steps) if self.hparams.warmup_steps else 1.0
        return self.hparams.lr * self.lr_multiplier * ramp

    @contextmanager
    def evaluation_mode(self):
        """Eval mode for search, restoring train mode afterwards."""
        was_training = self.net.training
        self.net.eval()
        try:
            yield
        finally:
            self.net.train(was_training)

    def evaluator(self, precision: str = "32", score_utility: float = 0.0) -> NetEvaluator:
        """Batched leaf evaluation on this module's device in ``precision`` ("32" or "bf16");
        call inside `evaluation_mode`. Build it once and keep it: it holds the net where
        Lightning put it and reuses its host buffer for every batch."""
        return NetEvaluator(self.net, self.device, precision=precision, score_utility=score_utility)

    def identity(self) -> dict:
        """What a checkpoint must match to be loaded into this module."""
        return alphazero_identity(self.game)

    def result_fields(self, trainer) -> dict:
        """This model's part of result.json: self-play's counters (every DDP rank plays its own games)."""
        games = trainer.strategy.reduce(torch.tensor(float(self.games_played)), reduce_op="sum")
        return {"rounds": self.rounds, "games_played": self.games_played, "train_steps": self.train_steps,
                "games_played_all_ranks": int(games.item())}

    @staticmethod
    def check_trainer_config(trainer_cfg) -> None:
        """Lightning's max_steps counts optimizer steps, not this model's updates: refuse it."""
        max_steps = trainer_cfg.get("max_steps", -1)
        if max_steps not in (-1, None):
            raise ConfigError(
                f"trainer.max_steps={max_steps!r} counts Lightning optimizer steps (up to model.epochs_per_step "
                f"per update) and is not used for model=alphazero: bound the run with "
                f"callbacks.budget.max_updates=N (or max_rounds / max_games / trainer.max_time)")

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint[CHECKPOINT_KEY] = {
            "identity": self.identity(), "net_config": dict(self.net.config), "net_target": net_target(self.net),
            "lr_multiplier": float(self.lr_multiplier),
            "rounds": self.rounds, "games_played": self.games_played,
            "train_steps": self.train_steps,
        }

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        check_identity(checkpoint, self.identity(), source="checkpoint")
        state = checkpoint[CHECKPOINT_KEY]
        self.lr_multiplier = state["lr_multiplier"]
        self.rounds = state["rounds"]
        self.games_played = state["games_played"]
        self.train_steps = state["train_steps"]


def net_for_game(net: nn.Module | Callable[..., nn.Module], game) -> nn.Module:
    """The policy-value net for ``game``'s search planes and actions.

    ``net`` is a net, or (conf/model/alphazero.yaml: ``_partial_: true``) a function that
    builds one given the game's board (``board_size`` rows, ``board_width`` columns when
    they differ), ``in_planes`` and ``num_actions`` (None: one per point, Gomoku's), so one
    model config serves Gomoku's 4 planes and n*n moves, Go's planes and pass, and any
    registered game's shapes. A built net whose shape does not fit the game is refused naming both.
    """
    search = game.search_game()
    height, width = search.board_shape
    actions = None if search.num_actions == height * width else search.num_actions
    if not isinstance(net, nn.Module):
        board = {"board_size": height, **({"board_width": width} if width != height else {})}
        try:
            net = net(**board, in_planes=search.num_planes, num_actions=actions)
        except ConfigError:  # the net's own check: already one line naming the setting
            raise
        except (TypeError, ValueError, RuntimeError) as exc:  # a word where a number belongs
            target = getattr(getattr(net, "func", None), "__qualname__", "the net")
            module = getattr(getattr(net, "func", None), "__module__", "")
            raise ConfigError(f"model.net ({module}.{target}) could not be built from its settings: "
                              f"{type(exc).__name__}: {' '.join(str(exc).split())}; check the values given "
                              "for model.net.* (python src/train.py --cfg job shows them)") from None
    config = getattr(net, "config", {})
    aux = [name for name in ("ownership_head", "score_head") if config.get(name)]
    if aux and not hasattr(search, "final_ownership"):
        raise ConfigError(f"model.net.{aux[0]}=true is for Go (a final owner and margin to learn); "
                          f"{game.name} games have none: set it to false")
    got = (config.get("in_planes"), config.get("num_actions"), config.get("board_size"),
           config.get("board_width", config.get("board_size")))
    if getattr(net, "size_free", False):  # weights fit any board: only the planes and the pass must agree
        if (config.get("in_planes"), net.has_pass) != (search.num_planes, actions is not None):
            raise ConfigError(f"model.net takes in_planes={config.get('in_planes')}"
                              f"{' and a pass' if net.has_pass else ', no pass'}, but {game.name} searches "
                              f"with {search.num_planes} planes{' and a pass' if actions else ', no pass'}")
        return net
    if got != (search.num_planes, actions, height, width):
        raise ConfigError(f"model.net takes in_planes={got[0]}, num_actions={got[1]} on a {got[2]}x{got[3]} "
                          f"board, but {game.name} searches with {search.num_planes} planes and "
                          f"{search.num_actions} actions on a {height}x{width} board")
    return net


def alphazero_identity(game) -> dict:
    """The identity an AlphaZero checkpoint of ``game`` carries."""
    return registry.identity(game, "alphazero")
