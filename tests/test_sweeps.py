"""The W&B sweep and its offline Hydra twin define the same grid."""

from __future__ import annotations

import yaml


def test_wandb_sweep_and_hydra_multirun_share_the_grid(repo_root, conf_dir):
    wandb = yaml.safe_load((repo_root / "sweeps" / "pruning_grid.yaml").read_text())
    hydra = yaml.safe_load((conf_dir / "hparams_search" / "pruning_grid.yaml").read_text())
    wandb_grid = {k: [int(v) for v in spec["values"]] for k, spec in wandb["parameters"].items()}
    hydra_grid = {k: [int(v) for v in str(spec).split(",")]
                  for k, spec in hydra["hydra"]["sweeper"]["params"].items()}
    assert wandb_grid == hydra_grid == {"pruning.window": [4, 5, 6, 8], "pruning.top_k": [0, 4, 8, 16]}
    assert wandb["method"] == "grid"
    assert wandb["command"][-1] == "${args_no_hyphens}"  # values reach Hydra as overrides
    experiment = [c for c in wandb["command"] if str(c).startswith("experiment=")]
    assert experiment == [f"experiment={hydra['defaults'][0]['override /experiment']}"]
