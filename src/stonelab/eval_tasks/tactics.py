"""``task=tactics``: a net's raw policy and its search on its game's tactics suite (Gomoku or Go)."""

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
from stonelab.games.gomoku_tactics import generate
from stonelab.models import checkpoints
from stonelab.models.evaluator import net_evaluator
from stonelab.models.identity import load_checkpoint_file
from stonelab.models.nets import alphazero_gomoku
from stonelab.search.mcts import MCTSConfig
from stonelab.utils.device import resolve_device
from stonelab.utils.threads import set_threads


def run(cfg: DictConfig) -> dict:
    """Score ``cfg.ckpt_path`` (a stonelab Gomoku or Go checkpoint, or AlphaZero_Gomoku's net) on
    ``cfg.per_kind`` positions of each kind, at each of ``cfg.playouts`` (0: the raw policy)."""
    path = require_checkpoint(cfg, "the checkpoint (or AlphaZero_Gomoku weights file) to score")
    playouts = list(cfg.playouts)
    if not playouts or any(not isinstance(p, int) or p < 0 for p in playouts):
        raise ConfigError(f"playouts={playouts}: give a list of whole numbers >= 0 (0: the raw policy)")
    if not isinstance(cfg.per_kind, int) or cfg.per_kind < 1:
        raise ConfigError(f"per_kind={cfg.per_kind!r} must be a whole number >= 1")
    set_threads(cfg.torch_threads)
    start = time.perf_counter()
    out = _go(cfg, path, playouts) if _is_go(path) else _gomoku(cfg, path, playouts)
    out["seconds"] = round(time.perf_counter() - start, 1)
    _print_table(out)
    write_result(cfg, "tactics.json", out)
    return out


def _is_go(path: str) -> bool:
    if alphazero_gomoku.looks_like(path):
        return False
    identity = checkpoints.identity_of(load_checkpoint_file(path), path)
    return checkpoints.game_of(identity) == "go"


def _gomoku(cfg: DictConfig, path: str, playouts: list[int]) -> dict:
    net, rules, label = _net_and_rules(path, cfg)
    evaluate = net_evaluator(net, resolve_device(cfg.device))
    tactics = generate(rules, per_kind=cfg.per_kind, seed=cfg.suite_seed)
    search = MCTSConfig(**cfg.search)
    pruning = PruningConfig(**cfg.pruning)
    rows = {"random move": scoring.random_baseline(tactics)}
    for p in playouts:
        answers = (scoring.policy_answers(rules, evaluate, tactics) if p == 0
                   else scoring.search_answers(rules, evaluate, tactics, replace(search, playouts=p), pruning))
        rows["raw policy" if p == 0 else f"search {p}"] = scoring.score(tactics, answers)
    return {"checkpoint": path, "net": label, "game": rules.name, "positions": _counts(tactics),
            "suite_seed": cfg.suite_seed, "c_puct": search.c_puct, "pruning": dataclasses.asdict(pruning),
            "scores": rows}


def _go(cfg: DictConfig, path: str, playouts: list[int]) -> dict:
    from stonelab.games import go_tactics
    from stonelab.models.alphazero_go import go_model_from_checkpoint

    pruning = PruningConfig(**cfg.pruning)
    if pruning.enabled:
        changed = {k: v for k, v in dataclasses.asdict(pruning).items() if v != getattr(PruningConfig(), k)}
        raise ConfigError(f"pruning ({', '.join(f'{k}={v}' for k, v in changed.items())}) is Gomoku's candidate "
                          f"restriction and {path} is a Go checkpoint, whose search tries every legal move: "
                          "drop the pruning=... override")
    predictor = go_model_from_checkpoint(path, device=resolve_device(cfg.device))
    tactics = go_tactics.generate(predictor.rules, per_kind=cfg.per_kind, seed=cfg.suite_seed)
    settings = dict(cfg.search)
    MCTSConfig(**settings)  # a bad search setting is named before any search
    rows = {"random move": scoring.random_baseline(tactics)}
    for p in playouts:
        answers = (scoring.go_policy_answers(predictor, tactics) if p == 0
                   else scoring.go_search_answers(predictor, tactics, {**settings, "playouts": p}))
        rows["raw policy" if p == 0 else f"search {p}"] = scoring.score(tactics, answers)
    return {"checkpoint": path, "net": f"checkpoint:{path}", "game": predictor.rules.name,
            "positions": _counts(tactics), "suite_seed": cfg.suite_seed, "c_puct": settings["c_puct"],
            "go_value": settings["go_value"], "scores": rows}


def _counts(tactics: list) -> dict[str, int]:
    return {kind: sum(t.kind == kind for t in tactics) for kind in dict.fromkeys(t.kind for t in tactics)}


def _net_and_rules(path: str, cfg: DictConfig):
    """The net to score and its game: a stonelab checkpoint names its game; AlphaZero_Gomoku's
    file gives only its board, so the line length is ``cfg.win_length``."""
    if alphazero_gomoku.looks_like(path):
        net, n, label = alphazero_gomoku.load(path)
        return net, GomokuRules(n, int(cfg.win_length)), label
    loaded = checkpoints.load(path, game="gomoku")
    return loaded.net, loaded.game, f"checkpoint:{path}"


def _print_table(out: dict) -> None:
    kinds = [k for k in out["positions"] if out["positions"][k]] + ["all"]
    print(f"{out['net']} on {out['game']}: " + ", ".join(f"{k} {out['positions'][k]}" for k in kinds[:-1]))
    print(f"{'':<12}" + "".join(f"{k:>14}" for k in kinds))
    for name, row in out["scores"].items():
        print(f"{name:<12}" + "".join(f"{row[k]:>14.2f}" for k in kinds))
