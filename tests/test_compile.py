"""python -m stonelab.compile: the engines it compiles are the shipped ones, as src/play.py
builds them; a bad engine name is one line; a compiled engine's first start loads every
kernel from the cache (slow: it compiles into an empty cache)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from stonelab.compile import ENGINES, ROOT, main


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_every_engine_is_a_shipped_model_with_a_valid_play_config(name):
    game, overrides = ENGINES[name]
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("play", overrides=overrides)
    assert (ROOT / cfg.ckpt_path).is_file()
    assert cfg.protocol == ("gomocup" if game == "gomoku" else "gtp")


def test_an_unknown_engine_is_one_line_with_the_choices(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["go13"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "unknown engine 'go13': choose from go19, go9, go9_alphazero, gomoku" in err


def test_zero_processes_is_refused(capsys):
    with pytest.raises(SystemExit):
        main(["--processes", "0"])
    assert "--processes=0 must be at least 1" in capsys.readouterr().err


@pytest.mark.slow
def test_after_compiling_the_brain_compiles_nothing_at_its_start(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "stonelab.compile", "gomoku"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "1 of 1 engines compiled" in done.stdout
    assert any(Path(tmp_path).rglob("*.nbi"))
    brain = subprocess.run([sys.executable, "src/play.py", *ENGINES["gomoku"][1]], cwd=ROOT, env=env,
                           input="START 8\nBEGIN\nEND\n", capture_output=True, text=True, timeout=300)
    assert brain.stdout.splitlines()[:1] == ["OK"]
    assert "compiling" not in brain.stderr  # numba loaded every kernel the brain ran from the cache
