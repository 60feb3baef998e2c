"""``task=tactics``: a Gomoku net's raw policy and its search on the tactics suite."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import replace

from omegaconf import DictConfig

from stonelab.arena import tactics as scoring
from stonelab.errors import ConfigError
from stonelab.eval_tasks import require_checkpoint, write_result
from stonelab.games.gomoku import GomokuRules
from stonelab.games.gomoku_candidates import PruningConfig
from stonelab.games.gomoku_tactics import KINDS, generate
from stonelab.models import checkpoints
from stonelab.models.evaluator import net_evaluator
from stonelab.models.nets import alphazero_gomoku
from stonelab.search.mcts import MCTSConfig
from stonelab.utils.device import resolve_device
from stonelab.utils.threads import set_threads


def run(cfg: DictConfig) -> dict:
    """Score ``cfg.ckpt_path`` (a stonelab Gomoku checkpoint or AlphaZero_Gomoku's net) on
    ``cfg.per_kind`` positions of each kind, at each of ``cfg.playouts`` (0: the raw policy)."""
    path = require_checkpoint(cfg, "the Gomoku checkpoint (or AlphaZero_Gomoku weights file) to score")
    playouts = list(cfg.playouts)
    if not playouts or any(not isinstance(p, int) or p < 0 for p in playouts):
        raise ConfigError(f"playouts={playouts}: give a list of whole numbers >= 0 (0: the raw policy)")
    if not isinstance(cfg.per_kind, int) or cfg.per_kind < 1:
        raise ConfigError(f"per_kind={cfg.per_kind!r} must be a whole number >= 1")
    set_threads(cfg.torch_threads)
    net, rules, label = _net_and_rules(path, cfg)
    evaluate = net_evaluator(net, resolve_device(cfg.device))
    start = time.perf_counter()
    tactics = generate(rules, per_kind=cfg.per_kind, seed=cfg.suite_seed)
    counts = {kind: sum(t.kind == kind for t in tactics) for kind in KINDS}
    search = MCTSConfig(**cfg.search)
    pruning = PruningConfig(**cfg.pruning)
    rows = {"random move": scoring.random_baseline(tactics)}
    for p in playouts:
        answers = (scoring.policy_answers(rules, evaluate, tactics) if p == 0
                   else scoring.search_answers(rules, evaluate, tactics, replace(search, playouts=p), pruning))
        rows["raw policy" if p == 0 else f"search {p}"] = scoring.score(tactics, answers)
    out = {"checkpoint": path, "net": label, "game": rules.name, "positions": counts,
           "suite_seed": cfg.suite_seed, "c_puct": search.c_puct, "pruning": dataclasses.asdict(pruning),
           "scores": rows,
           "seconds": round(time.perf_counter() - start, 1)}
    _print_table(out)
    write_result(cfg, "tactics.json", out)
    return out


def _net_and_rules(path: str, cfg: DictConfig):
    """The net to score and its game: a stonelab checkpoint names its game; AlphaZero_Gomoku's
    file gives only its board, so the line length is ``cfg.win_length``."""
    if alphazero_gomoku.looks_like(path):
        net, n, label = alphazero_gomoku.load(path)
        return net, GomokuRules(n, int(cfg.win_length)), label
    loaded = checkpoints.load(path, game="gomoku")
    return loaded.net, loaded.game, f"checkpoint:{path}"


def _print_table(out: dict) -> None:
    kinds = [k for k in KINDS if out["positions"][k]] + ["all"]
    print(f"{out['net']} on {out['game']}: " + ", ".join(f"{k} {out['positions'][k]}" for k in kinds[:-1]))
    print(f"{'':<12}" + "".join(f"{k:>14}" for k in kinds))
    for name, row in out["scores"].items():
        print(f"{name:<12}" + "".join(f"{row[k]:>14.2f}" for k in kinds))
