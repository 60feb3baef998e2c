"""What `src/play.py` runs: a trained Go move predictor as a GTP engine on stdin/stdout."""

from __future__ import annotations

import torch
from omegaconf import DictConfig

from stonelab import __version__
from stonelab.errors import ConfigError


def gtp_engine(cfg: DictConfig):
    from stonelab.models.inference import MovePredictor
    from stonelab.protocols.gtp import GTPEngine

    if not cfg.get("ckpt_path"):
        raise ConfigError("ckpt_path=... is required: a maddison_cnn or belief_vit checkpoint to play with")
    device = cfg.device if cfg.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    predictor = MovePredictor.from_checkpoint(cfg.ckpt_path, device=device)
    return GTPEngine(predictor.rules.n, lambda states, histories: predictor.play_moves(states, histories=histories),
                     name=cfg.name, version=__version__)


def run(cfg: DictConfig) -> None:
    if cfg.protocol != "gtp":
        raise ConfigError(f"protocol={cfg.protocol!r}: only gtp is built (Go models)")
    if cfg.torch_threads:
        torch.set_num_threads(int(cfg.torch_threads))
    gtp_engine(cfg).run()
