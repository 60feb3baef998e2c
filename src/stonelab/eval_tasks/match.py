"""``task=match``: an alphazero Gomoku checkpoint, with search, against pure MCTS or another checkpoint."""

from __future__ import annotations

import time

from omegaconf import DictConfig

from stonelab.arena.players import NeuralMCTSPlayer, PureMCTSPlayer, play_match
from stonelab.errors import ConfigError
from stonelab.eval_tasks import require_checkpoint, write_result
from stonelab.games.gomoku_candidates import PruningConfig
from stonelab.models import checkpoints
from stonelab.models.alphazero import net_evaluator
from stonelab.search.mcts import MCTSConfig
from stonelab.utils.device import resolve_device
from stonelab.utils.threads import set_threads


def run(cfg: DictConfig) -> dict:
    """Play ``cfg.games`` games of ``cfg.ckpt_path`` against ``cfg.opponent``; the game comes from the checkpoint."""
    path = require_checkpoint(cfg)
    if cfg.games < 1:
        raise ConfigError(f"games={cfg.games} must be >= 1")
    set_threads(cfg.torch_threads)
    device = resolve_device(cfg.device)
    loaded = checkpoints.load(path, game="gomoku")  # a Go checkpoint is refused by name
    game = loaded.game
    search = MCTSConfig(**cfg.search)
    pruning = PruningConfig(**cfg.pruning)
    player = NeuralMCTSPlayer(game, net_evaluator(loaded.net, device), search, pruning=pruning)
    if cfg.opponent == "pure_mcts":
        opponent = PureMCTSPlayer(game, cfg.pure_playouts, search.c_puct, seed=cfg.seed)
        opponent_name = f"pure_mcts_{cfg.pure_playouts}"
    else:  # another checkpoint of the same game and board
        other = checkpoints.load(str(cfg.opponent), game="gomoku", expect=loaded.identity)
        opponent = NeuralMCTSPlayer(game, net_evaluator(other.net, device), search, name="checkpoint")
        opponent_name = f"checkpoint:{cfg.opponent}"
    opening = cfg.get("opening_moves")
    if opening is None:  # two checkpoints search deterministically: vary the games
        opening = 0 if cfg.opponent == "pure_mcts" else 2
    if not isinstance(opening, int) or not 0 <= opening < game.k * 2 - 1:
        raise ConfigError(f"opening_moves={opening} must be an integer from 0 to {game.k * 2 - 2}")
    start = time.perf_counter()
    result = play_match(game, player, opponent, cfg.games, opening_moves=opening, seed=cfg.seed)
    lo, hi = result.interval
    out = {"checkpoint": path, "game": game.name, "opponent": opponent_name,
           "playouts": search.playouts, "opening_moves": opening, "games": result.games, "wins": result.wins,
           "draws": result.draws, "losses": result.losses, "win_ratio": result.win_ratio,
           "ci_low": lo, "ci_high": hi, "seconds": round(time.perf_counter() - start, 1)}
    print(f"{path} vs {opponent_name} ({search.playouts} playouts): {result}")
    write_result(cfg, "match.json", out)
    return out
