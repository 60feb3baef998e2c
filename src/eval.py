"""Evaluate a trained model: python src/eval.py task=<match|ladder|predict|inspect|gtp_match|tactics> ckpt_path=...

``python src/eval.py --help`` lists the tasks; each task's settings are in conf/task/<task>.yaml.
"""

import sys

import hydra
from omegaconf import DictConfig

from stonelab.cli import run_hydra_main, run_or_explain


@hydra.main(version_base="1.3", config_path="../conf", config_name="eval")
def main(cfg: DictConfig) -> None:
    from stonelab.eval_tasks import run

    run_or_explain(run, cfg)


if __name__ == "__main__":
    sys.exit(run_hydra_main(main))
