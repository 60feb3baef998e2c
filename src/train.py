"""Train a stonelab model: python src/train.py [group=option ...] [key=value ...]."""

import sys

import hydra
from omegaconf import DictConfig

from stonelab.cli import run_hydra_main, run_or_explain
from stonelab.resume import launched_rank, resume_argv


@hydra.main(version_base="1.3", config_path="../conf", config_name="train")
def main(cfg: DictConfig) -> None:
    from stonelab.pipeline import train
    from stonelab.run_folder import log_file_failures_in_one_line

    log_file_failures_in_one_line()  # Hydra's train.log on a full disk: one warning, not a traceback per record
    run_or_explain(train, cfg)


if __name__ == "__main__":
    # ckpt_path=<run>/checkpoints/last.ckpt resumes with that run's settings, in its folder.
    args, note = resume_argv(sys.argv[1:])
    if note and launched_rank() == 0:  # once, not once per DDP process
        print(note, file=sys.stderr)
    sys.argv = [sys.argv[0], *args]
    sys.exit(run_hydra_main(main))
