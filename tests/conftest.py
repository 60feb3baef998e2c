"""Shared fixtures: compose the real Hydra config with tiny, fast settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"

# Small enough that a whole run takes seconds on one core.
TINY = [
    "search.playouts=12",
    "data.batch_size=32",
    "data.buffer_size=2000",
    "callbacks.selfplay.games_per_round=2",
    "callbacks.selfplay.steps_per_round=1",
    "callbacks.evaluation.games=2",
    "callbacks.evaluation.pure_playouts=20",
    "callbacks.evaluation.every_n_rounds=2",
    "callbacks.progress_bar=null",
    "trainer.max_epochs=1",
    "trainer.limit_train_batches=2",
    "trainer.accelerator=cpu",
    "model.epochs_per_step=2",
]


def compose_train(overrides: list[str], output_dir: Path):
    """The composed `train` config, writing under ``output_dir``."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("train", overrides=[*TINY, f"paths.output_dir={output_dir}", *overrides])


@pytest.fixture
def tiny_cfg(tmp_path):
    return lambda *overrides: compose_train(list(overrides), tmp_path)
