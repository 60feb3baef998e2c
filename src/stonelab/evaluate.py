"""What `src/eval.py` runs: matches of a trained checkpoint against an opponent."""

from __future__ import annotations

import json
import os
import time

import torch
from omegaconf import DictConfig

from stonelab.arena.players import NeuralMCTSPlayer, PureMCTSPlayer, play_match
from stonelab.errors import ConfigError
from stonelab.games.gomoku import GomokuRules
from stonelab.models.alphazero import (
    CHECKPOINT_KEY,
    CheckpointMismatchError,
    load_checkpoint_file,
    load_policy_value_net,
    net_evaluator,
    net_from_checkpoint,
)
from stonelab.search.mcts import MCTSConfig
from stonelab.search.pruning import PruningConfig


def game_of_checkpoint(checkpoint: dict, path: str) -> GomokuRules:
    state = checkpoint.get(CHECKPOINT_KEY)
    if not isinstance(state, dict) or state.get("identity", {}).get("model") != "alphazero":
        raise CheckpointMismatchError(f"{path} is not a stonelab alphazero checkpoint")
    identity = state["identity"]
    return GomokuRules(identity["board_size"], identity["win_length"])


def match(cfg: DictConfig) -> dict:
    """Play ``cfg.games`` games of ``cfg.ckpt_path`` against ``cfg.opponent``."""
    if not cfg.get("ckpt_path"):
        raise ConfigError("ckpt_path=... is required: the checkpoint to evaluate")
    if cfg.games < 1:
        raise ConfigError(f"games={cfg.games} must be >= 1")
    torch.set_num_threads(cfg.torch_threads or os.cpu_count() or 1)
    device = cfg.device if cfg.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    checkpoint = load_checkpoint_file(cfg.ckpt_path)  # read once: game and net
    game = game_of_checkpoint(checkpoint, cfg.ckpt_path)
    search = MCTSConfig(**cfg.search)
    pruning = PruningConfig(**cfg.pruning)
    net = net_from_checkpoint(checkpoint, game, source=cfg.ckpt_path)
    player = NeuralMCTSPlayer(game, net_evaluator(net, device), search, pruning=pruning)
    if cfg.opponent == "pure_mcts":
        opponent = PureMCTSPlayer(game, cfg.pure_playouts, search.c_puct, seed=cfg.seed)
        opponent_name = f"pure_mcts_{cfg.pure_playouts}"
    else:
        opponent = NeuralMCTSPlayer(game, net_evaluator(load_policy_value_net(cfg.opponent, game), device),
                                    search, name="checkpoint")
        opponent_name = f"checkpoint:{cfg.opponent}"
    start = time.perf_counter()
    result = play_match(game, player, opponent, cfg.games)
    lo, hi = result.interval
    out = {"checkpoint": cfg.ckpt_path, "game": game.name, "opponent": opponent_name,
           "playouts": search.playouts, "games": result.games, "wins": result.wins,
           "draws": result.draws, "losses": result.losses, "win_ratio": result.win_ratio,
           "ci_low": lo, "ci_high": hi, "seconds": round(time.perf_counter() - start, 1)}
    print(f"{cfg.ckpt_path} vs {opponent_name} ({search.playouts} playouts): {result}")
    path = os.path.join(cfg.paths.output_dir, "match.json")
    os.makedirs(cfg.paths.output_dir, exist_ok=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=2)
    print(f"result: {path}")
    return out


TASKS = {"match": match}


def run(cfg: DictConfig) -> dict:
    if cfg.task not in TASKS:
        raise ConfigError(f"task={cfg.task}: choose one of {sorted(TASKS)}")
    return TASKS[cfg.task](cfg)
