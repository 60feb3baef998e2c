"""Shared fixtures: the repository's folders, and the real Hydra config composed with tiny, fast settings.

Test modules ask for these fixtures by name and never import this file: pytest loads it
once, and an import under another name (``conftest``, ``tests.conftest``) would load it a
second time, with its own copy of every constant.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

ROOT = Path(__file__).resolve().parents[1]

# Small enough that a whole self-play run takes seconds on one core.
TINY = (
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
)


def _snapshot(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")} if folder.exists() else set()


@pytest.fixture(scope="session", autouse=True)
def repo_logs_untouched():
    """No test writes into the repository's logs/: every run goes to a temporary folder."""
    before = _snapshot(ROOT / "logs")
    yield
    written = sorted(_snapshot(ROOT / "logs") - before)
    assert not written, f"tests wrote into {ROOT / 'logs'}: {written[:5]}"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The checkout's root: src/train.py, conf/, data/, README.md lie under it."""
    return ROOT


@pytest.fixture(scope="session")
def conf_dir(repo_root) -> Path:
    return repo_root / "conf"


@pytest.fixture(scope="session")
def tiny_overrides() -> tuple[str, ...]:
    """Overrides for a seconds-long self-play run (a tuple, so no test can change it for the next)."""
    return TINY


@pytest.fixture(scope="session")
def compose_config(conf_dir):
    """``compose_config(name, overrides)``: conf/<name>.yaml composed as the entry point composes it."""

    def compose_config(name: str, overrides):
        GlobalHydra.instance().clear()
        with initialize_config_dir(config_dir=str(conf_dir), version_base="1.3"):
            return compose(name, overrides=list(overrides))

    return compose_config


@pytest.fixture(scope="session")
def compose_train(compose_config, tiny_overrides):
    """``compose_train(overrides, output_dir)``: the tiny `train` config, writing under ``output_dir``."""

    def compose_train(overrides: list[str], output_dir: Path):
        return compose_config("train", [*tiny_overrides, f"paths.output_dir={output_dir}", *overrides])

    return compose_train


@pytest.fixture
def straight_and_resumed(compose_train, tmp_path):
    """``straight_and_resumed(overrides)``: train 2 epochs straight, and 1 epoch then a resume
    to 2, with the same ``overrides``; returns (the straight run's last checkpoint, the
    resumed run's, the resumed run's result), the checkpoints as loaded state dicts."""
    import torch

    from stonelab.pipeline import train

    def run(overrides: list[str]):
        train(compose_train(["trainer.max_epochs=2", *overrides], tmp_path / "a"))
        train(compose_train(["trainer.max_epochs=1", *overrides], tmp_path / "b"))
        last = tmp_path / "b" / "checkpoints" / "last.ckpt"
        result = train(compose_train(["trainer.max_epochs=2", f"ckpt_path={last}", *overrides], tmp_path / "c"))
        straight, resumed = (torch.load(tmp_path / run / "checkpoints" / "last.ckpt", map_location="cpu",
                                        weights_only=True) for run in ("a", "c"))
        return straight, resumed, result

    return run


def _go_sample(root: Path, folder: Path, games: int) -> Path:
    """The first ``games`` committed KGS sample games, copied into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in sorted((root / "data" / "kgs").glob("*.sgf"))[:games]:
        shutil.copy(f, folder / f.name)
    return folder


def _tiny_go(root: Path, model: str, tmp_path: Path, games: int = 12) -> list[str]:
    """Overrides for a seconds-long supervised Go run of ``model`` on a few sample games."""
    sgf = _go_sample(root, tmp_path / "sgf", games)
    return [
        f"model={model}", "data=kgs", f"data.sources=[{sgf}]", f"data.cache_dir={tmp_path / 'cache'}",
        "data.val_games=2", "data.test_games=2", "data.batch_size=16", "data.num_workers=0",
        "data.shuffle_buffer=64", "trainer.max_epochs=1", "trainer.limit_train_batches=3",
        "trainer.limit_val_batches=2", "trainer.limit_test_batches=2", "trainer.accelerator=cpu",
        "callbacks.progress_bar=null",
    ]


@pytest.fixture(scope="session")
def compose_go(compose_config, repo_root):
    """``compose_go(model, overrides, tmp_path)``: a tiny supervised Go `train` config.

    It copies 12 sample games into ``tmp_path/sgf``, caches under ``tmp_path/cache`` and
    writes the run under ``tmp_path/out``.
    """

    def compose_go(model: str, overrides: list[str], tmp_path: Path):
        tiny = _tiny_go(repo_root, model, tmp_path)
        return compose_config("train", [*tiny, f"paths.output_dir={tmp_path / 'out'}", *overrides])

    return compose_go


@pytest.fixture(scope="module")
def one_thread():
    """Tiny nets run fastest on one thread, and a busy machine's spinning threads cannot stall them."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _save_checkpoint(module, path: Path) -> Path:
    """``module`` saved the way Lightning writes it: state_dict plus the module's own keys."""
    import torch

    ckpt = {"state_dict": module.state_dict()}
    module.on_save_checkpoint(ckpt)
    torch.save(ckpt, path)
    return path


@pytest.fixture(scope="session")
def save_checkpoint():
    """``save_checkpoint(module, path)``: ``module`` written as Lightning writes it; returns ``path``."""
    return _save_checkpoint


@pytest.fixture(scope="session")
def tiny_maddison_checkpoint():
    """``tiny_maddison_checkpoint(path, aux_heads=False)``: a seeded 9x9, 3-layer maddison_cnn
    checkpoint (a Go model); with ``aux_heads`` also value, ownership and score heads."""
    import torch

    from stonelab.games.go.rules import GoRules
    from stonelab.models.move_prediction import MovePredictionModule
    from stonelab.models.nets.maddison import MaddisonNet

    def tiny_maddison_checkpoint(path: Path, aux_heads: bool = False) -> Path:
        torch.manual_seed(0)
        net = MaddisonNet(36, 9, depth=3, filters=8, value_head=aux_heads, aux_heads=aux_heads)
        module = MovePredictionModule(net, GoRules(9), encoder="maddison")
        return _save_checkpoint(module, path)

    return tiny_maddison_checkpoint


@pytest.fixture(scope="session")
def tiny_alphazero_checkpoint():
    """``tiny_alphazero_checkpoint(path, n=6, k=4, rule="freestyle", fully_conv=False)``: a seeded
    n x n, k-in-a-row alphazero checkpoint (``fully_conv``: a net that plays any board size)."""
    import torch

    from stonelab.games.gomoku.rules import GomokuRules
    from stonelab.models.alphazero import AlphaZeroModule
    from stonelab.models.nets.policy_value import PolicyValueNet

    def tiny_alphazero_checkpoint(path: Path, n: int = 6, k: int = 4, rule: str = "freestyle",
                                  fully_conv: bool = False) -> Path:
        torch.manual_seed(0)
        if fully_conv:  # any board size: stonelab.models.nets.fully_conv
            from stonelab.models.nets.fully_conv import FullyConvNet

            net = FullyConvNet(n, filters=8, blocks=2, pool_every=2, pool_channels=4, value_channels=4,
                               value_hidden=8)
        else:
            net = PolicyValueNet(n)
        return _save_checkpoint(AlphaZeroModule(net, GomokuRules(n, k, rule)), path)

    return tiny_alphazero_checkpoint


@pytest.fixture(scope="session")
def tiny_alphazero_go_checkpoint():
    """``tiny_alphazero_go_checkpoint(path, aux_heads=False)``: a seeded 9x9 alphazero Go checkpoint
    (komi 7), with ``aux_heads`` also ownership and score heads."""
    import torch

    from stonelab.games.go.rules import GoRules
    from stonelab.models.alphazero import AlphaZeroModule
    from stonelab.models.nets.policy_value import PolicyValueNet

    def tiny_alphazero_go_checkpoint(path: Path, aux_heads: bool = False) -> Path:
        torch.manual_seed(0)

        def net(**shape):
            return PolicyValueNet(channels=(8,), ownership_head=aux_heads, score_head=aux_heads, **shape)

        return _save_checkpoint(AlphaZeroModule(net, GoRules(9, komi=7.0)), path)

    return tiny_alphazero_go_checkpoint


@pytest.fixture(scope="session")
def cpu_bf16():
    """Skips the test where this torch cannot run a convolution under CPU bfloat16 autocast
    (trainer.precision=bf16-mixed on CPU needs it; torch 2.13 here can)."""
    import torch

    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = torch.nn.Conv2d(2, 2, 3)(torch.ones(1, 2, 4, 4))
    except (RuntimeError, AssertionError) as exc:
        pytest.skip(f"no CPU bfloat16 autocast in torch {torch.__version__}: {exc}")
    if out.dtype != torch.bfloat16:
        pytest.skip(f"CPU autocast in torch {torch.__version__} does not run convolutions in bfloat16")
