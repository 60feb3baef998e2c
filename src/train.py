"""Train a stonelab model: python src/train.py [group=option ...] [key=value ...]."""

import sys

import hydra
from omegaconf import DictConfig

from stonelab.cli import run_or_explain


@hydra.main(version_base="1.3", config_path="../conf", config_name="train")
def main(cfg: DictConfig) -> None:
    from stonelab.pipeline import train

    run_or_explain(train, cfg)


if __name__ == "__main__":
    sys.exit(main())
