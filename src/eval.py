"""Evaluate a trained model: python src/eval.py task=match ckpt_path=... [games=100 opponent=pure_mcts]."""

import sys

import hydra
from omegaconf import DictConfig

from stonelab.cli import run_or_explain


@hydra.main(version_base="1.3", config_path="../conf", config_name="eval")
def main(cfg: DictConfig) -> None:
    from stonelab.evaluate import run

    run_or_explain(run, cfg)


if __name__ == "__main__":
    sys.exit(main())
