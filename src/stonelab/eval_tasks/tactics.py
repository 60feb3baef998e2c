"""``task=tactics``: a net's raw policy and its search on its game's tactics suite (each game's
registry entry runs its own: `stonelab.games.gomoku.tactics`, `stonelab.games.go.tactics`)."""

from __future__ import annotations

import time

from omegaconf import DictConfig

from stonelab.errors import ConfigError
from stonelab.eval_tasks import require_checkpoint, write_result
from stonelab.games import registry
from stonelab.models import checkpoints
from stonelab.models.identity import load_checkpoint_file
from stonelab.models.nets import alphazero_gomoku
from stonelab.utils.threads import set_threads


def run(cfg: DictConfig) -> dict:
    """Score ``cfg.ckpt_path`` (a stonelab checkpoint, or AlphaZero_Gomoku's net) on
    ``cfg.per_kind`` positions of each kind, at each of ``cfg.playouts`` (0: the raw policy)."""
    path = require_checkpoint(cfg, "the checkpoint (or AlphaZero_Gomoku weights file) to score")
    playouts = list(cfg.playouts)
    if not playouts or any(not isinstance(p, int) or p < 0 for p in playouts):
        raise ConfigError(f"playouts={playouts}: give a list of whole numbers >= 0 (0: the raw policy)")
    if not isinstance(cfg.per_kind, int) or cfg.per_kind < 1:
        raise ConfigError(f"per_kind={cfg.per_kind!r} must be a whole number >= 1")
    spec = _game_of(path)
    if spec.tactics is None:
        raise ConfigError(f"{path} plays {spec.title}, which has no tactics suite yet")
    set_threads(cfg.torch_threads)
    start = time.perf_counter()
    out = spec.tactics(cfg, path, playouts)
    out["seconds"] = round(time.perf_counter() - start, 1)
    _print_table(out)
    write_result(cfg, "tactics.json", out)
    return out


def _game_of(path: str) -> registry.GameSpec:
    """The game of the net in ``path``: a stonelab checkpoint's identity names it."""
    if alphazero_gomoku.looks_like(path):
        return registry.get(alphazero_gomoku.GAME)
    identity = checkpoints.identity_of(load_checkpoint_file(path), path)
    return registry.get(checkpoints.game_of(identity))


def _print_table(out: dict) -> None:
    kinds = [k for k in out["positions"] if out["positions"][k]] + ["all"]
    print(f"{out['net']} on {out['game']}: " + ", ".join(f"{k} {out['positions'][k]}" for k in kinds[:-1]))
    print(f"{'':<12}" + "".join(f"{k:>14}" for k in kinds))
    for name, row in out["scores"].items():
        print(f"{name:<12}" + "".join(f"{row[k]:>14.2f}" for k in kinds))
