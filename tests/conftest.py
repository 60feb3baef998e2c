"""Shared fixtures: compose the real Hydra config with tiny, fast settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"


def _snapshot(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")} if folder.exists() else set()


@pytest.fixture(scope="session", autouse=True)
def repo_logs_untouched():
    """No test writes into the repository's logs/: every run goes to a temporary folder."""
    before = _snapshot(ROOT / "logs")
    yield
    written = sorted(_snapshot(ROOT / "logs") - before)
    assert not written, f"tests wrote into {ROOT / 'logs'}: {written[:5]}"

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


def go_sample(folder: Path, games: int = 12) -> Path:
    """The first ``games`` committed KGS sample games, copied into ``folder``."""
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    for f in sorted((ROOT / "data" / "kgs").glob("*.sgf"))[:games]:
        shutil.copy(f, folder / f.name)
    return folder


def tiny_go(model: str, tmp_path: Path, games: int = 12) -> list[str]:
    """Overrides for a seconds-long supervised Go run of ``model`` on a few sample games."""
    sgf = go_sample(tmp_path / "sgf", games)
    return [
        f"model={model}", "data=kgs", f"data.sources=[{sgf}]", f"data.cache_dir={tmp_path / 'cache'}",
        "data.val_games=2", "data.test_games=2", "data.batch_size=16", "data.num_workers=0",
        "data.shuffle_buffer=64", "trainer.max_epochs=1", "trainer.limit_train_batches=3",
        "trainer.limit_val_batches=2", "trainer.limit_test_batches=2", "trainer.accelerator=cpu",
        "callbacks.progress_bar=null",
    ]


def compose_go(model: str, overrides: list[str], tmp_path: Path):
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("train", overrides=[*tiny_go(model, tmp_path), f"paths.output_dir={tmp_path / 'out'}",
                                           *overrides])


@pytest.fixture(scope="module")
def one_thread():
    """Tiny nets run fastest on one thread, and a busy machine's spinning threads cannot stall them."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def save_checkpoint(module, path: Path) -> Path:
    """``module`` saved the way Lightning writes it: state_dict plus the module's own keys."""
    import torch

    ckpt = {"state_dict": module.state_dict()}
    module.on_save_checkpoint(ckpt)
    torch.save(ckpt, path)
    return path


def tiny_maddison_checkpoint(path: Path) -> Path:
    """A 9x9, 3-layer maddison_cnn checkpoint file (seeded): a Go model for protocol tests."""
    import torch

    from stonelab.games.go import GoRules
    from stonelab.models.move_prediction import MovePredictionModule
    from stonelab.models.nets.maddison import MaddisonNet

    torch.manual_seed(0)
    module = MovePredictionModule(MaddisonNet(36, 9, depth=3, filters=8), GoRules(9), encoder="maddison")
    return save_checkpoint(module, path)


def tiny_alphazero_checkpoint(path: Path, n: int = 6, k: int = 4) -> Path:
    """An n x n, k-in-a-row alphazero checkpoint file (seeded): a Gomoku model for loader tests."""
    import torch

    from stonelab.games.gomoku import GomokuRules
    from stonelab.models.alphazero import AlphaZeroModule
    from stonelab.models.nets.policy_value import PolicyValueNet

    torch.manual_seed(0)
    return save_checkpoint(AlphaZeroModule(PolicyValueNet(n), GomokuRules(n, k)), path)
