"""What `src/eval.py` runs: one module per task, its settings in ``conf/task/<task>.yaml``.

    match      an alphazero Gomoku checkpoint, with search, against pure MCTS, another checkpoint,
               AlphaZero_Gomoku's published net or an external Gomocup brain (Rapfi)
    ladder     an alphazero Gomoku checkpoint against a Gomocup brain at rising node budgets:
               the budget where it scores 50%
    predict    a Go move predictor's scores on SGF games (a training run's split, or all of them)
    inspect    one position of an SGF game as a figure: policy, belief, value, gate
    gtp_match  a Go move predictor, without search, against a GTP engine (GNU Go, Pachi, ...)
    tactics    a Gomoku net's raw policy and search on positions with known right answers

Each module has ``run(cfg) -> dict``, the result it also writes as JSON.
"""

from __future__ import annotations

import importlib
import json
import os

from omegaconf import DictConfig

from stonelab.errors import ConfigError

TASKS = ("match", "ladder", "predict", "inspect", "gtp_match", "tactics")


def run(cfg: DictConfig) -> dict:
    """Run ``cfg.task``; a failed evaluation leaves no empty run folder."""
    from stonelab.run_folder import remove_litter_of_failed_run

    try:
        if cfg.get("task") not in TASKS:
            raise ConfigError(f"task={cfg.get('task')}: choose one of {sorted(TASKS)}")
        return importlib.import_module(f"stonelab.eval_tasks.{cfg.task}").run(cfg)
    except BaseException:
        remove_litter_of_failed_run(cfg.paths.output_dir, cfg.paths.get("log_dir"))
        raise


def require_checkpoint(cfg: DictConfig, what: str = "the checkpoint to evaluate") -> str:
    if not cfg.get("ckpt_path"):
        raise ConfigError(f"ckpt_path=... is required: {what}")
    return str(cfg.ckpt_path)


def write_result(cfg: DictConfig, name: str, out: dict) -> str:
    """Write ``out`` as ``<output_dir>/<name>`` and say where."""
    path = os.path.join(cfg.paths.output_dir, name)
    os.makedirs(cfg.paths.output_dir, exist_ok=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=2)
    print(f"result: {path}")
    return path
