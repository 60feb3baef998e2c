"""What `src/train.py` runs: build everything from the Hydra config, then fit."""

from __future__ import annotations

import json
import os
import time
import warnings

import lightning as L
import torch
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from stonelab.errors import ConfigError
from stonelab.models.alphazero import AlphaZeroModule
from stonelab.models.identity import check_identity, load_checkpoint_file
from stonelab.utils.checkpoint_io import AtomicCheckpointIO

# AlphaZeroModule.training_step(dataloader_iter) is deliberate (see its comment).
warnings.filterwarnings("ignore", message=".*dataloader_iter.*")
warnings.filterwarnings("ignore", message=".*LeafSpec.*")


def build(cfg: DictConfig):
    """Instantiate (game, datamodule, model, callbacks, loggers, trainer) from ``cfg``."""
    game = instantiate(cfg.game)
    datamodule = instantiate(cfg.data, game=game, _convert_="object")
    model = instantiate(cfg.model, game=game, _convert_="object")
    callbacks = [instantiate(c) for c in (cfg.get("callbacks") or {}).values() if c and "_target_" in c]
    loggers = [instantiate(c) for c in (cfg.get("logger") or {}).values() if c and "_target_" in c]
    if not loggers:  # LearningRateMonitor refuses to run without a logger; logger=none is valid
        from lightning.pytorch.callbacks import LearningRateMonitor

        callbacks = [c for c in callbacks if not isinstance(c, LearningRateMonitor)]
    for cb in callbacks:  # a window larger than the board is refused before any self-play
        pruning = getattr(cb, "pruning", None)
        if pruning is not None:
            pruning.validate_for_board(game.n)
    trainer = instantiate(cfg.trainer, callbacks=callbacks, logger=loggers or False,
                          plugins=[AtomicCheckpointIO()])
    return game, datamodule, model, callbacks, loggers, trainer


def train(cfg: DictConfig) -> dict:
    """Fit the configured model; returns (and writes to result.json) the final metrics."""
    check_model_data(cfg)
    L.seed_everything(cfg.seed, workers=True)
    game, datamodule, model, callbacks, loggers, trainer = build(cfg)
    if cfg.get("ckpt_path"):
        # Fail before any self-play if the checkpoint belongs to another run.
        check_identity(load_checkpoint_file(cfg.ckpt_path), model.identity(), source=cfg.ckpt_path)
    for lg in loggers:
        lg.log_hyperparams(OmegaConf.to_container(cfg, resolve=True))
    start = time.perf_counter()
    trainer.fit(model, datamodule=datamodule, ckpt_path=cfg.get("ckpt_path"))
    fit_metrics = dict(trainer.callback_metrics)  # trainer.test replaces them with test/*
    if hasattr(datamodule, "test_dataloader") and getattr(datamodule, "test_games", 0):
        # Held-out games, scored with the best checkpoint on val (the last if none was kept).
        best = trainer.checkpoint_callback.best_model_path if trainer.checkpoint_callback else ""
        trainer.test(model, datamodule=datamodule, ckpt_path=best or None, verbose=False)
    result = summarize(cfg, model, callbacks, trainer, time.perf_counter() - start, fit_metrics)
    if trainer.is_global_zero:
        path = os.path.join(cfg.paths.output_dir, "result.json")
        with open(path, "w") as f:
            json.dump(result, f, indent=2)
        print(f"result: {path}")
    return result


def summarize(cfg: DictConfig, model, callbacks, trainer, seconds: float, fit_metrics: dict | None = None) -> dict:
    """The run's final numbers, as written to result.json (sweeps collect these)."""
    from hydra.core.hydra_config import HydraConfig

    from stonelab.callbacks.evaluation import Evaluation
    from stonelab.callbacks.selfplay import SelfPlay

    result = {
        "task_name": cfg.task_name, "game": model.game.name, "seconds": round(seconds, 1),
        "overrides": list(HydraConfig.get().overrides.task) if HydraConfig.initialized() else [],
        "world_size": trainer.world_size, "global_step": trainer.global_step,
        "epochs": trainer.current_epoch,
    }
    if isinstance(model, AlphaZeroModule):
        result.update(rounds=model.rounds, games_played=model.games_played, train_steps=model.train_steps,
                      pruning=OmegaConf.to_container(cfg.pruning, resolve=True) if "pruning" in cfg else None)
        # Every DDP rank plays its own games; report them all.
        games = trainer.strategy.reduce(torch.tensor(float(model.games_played)), reduce_op="sum")
        result["games_played_all_ranks"] = int(games.item())
    else:
        result["parameters"] = sum(p.numel() for p in model.parameters())
        result["best_checkpoint"] = trainer.checkpoint_callback.best_model_path if trainer.checkpoint_callback else None
    if trainer.world_size > 1:
        # DDP must keep every rank's weights identical; say so if it did not.
        flat = torch.cat([p.detach().flatten() for p in model.parameters()])
        gathered = trainer.strategy.all_gather(flat)
        result["ddp_weights_max_abs_diff"] = float((gathered - gathered[0]).abs().max())
    merged = {**(fit_metrics or {}), **trainer.callback_metrics}
    metrics = {k: float(v) for k, v in merged.items() if v.numel() == 1}
    result["metrics"] = metrics
    for cb in callbacks:
        if isinstance(cb, SelfPlay):
            result["selfplay"] = cb.last_stats
        if isinstance(cb, Evaluation) and cb.history:
            ratios = [h["win_ratio"] for h in cb.history]
            result["evaluations"] = cb.history
            result["final_win_ratio"] = ratios[-1]
            result["best_win_ratio"] = max(ratios)
    return result


def check_model_data(cfg: DictConfig) -> None:
    model_target = str(cfg.model.get("_target_", ""))
    data_target = str(cfg.data.get("_target_", ""))
    if model_target.endswith("AlphaZeroModule") and not data_target.endswith("SelfPlayDataModule"):
        raise ConfigError("model=alphazero learns from self-play: use data=selfplay")
    if not model_target.endswith("AlphaZeroModule") and data_target.endswith("SelfPlayDataModule"):
        raise ConfigError(f"model {model_target.rsplit('.', 1)[-1]} learns from expert games: use data=kgs")
