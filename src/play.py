"""Play a trained Go model over GTP: python src/play.py ckpt_path=... (see conf/play.yaml)."""

import sys

import hydra
from omegaconf import DictConfig

from stonelab.cli import run_hydra_main, run_or_explain


@hydra.main(version_base="1.3", config_path="../conf", config_name="play")
def main(cfg: DictConfig) -> None:
    from stonelab.play import run

    run_or_explain(run, cfg)


if __name__ == "__main__":
    sys.exit(run_hydra_main(main))
