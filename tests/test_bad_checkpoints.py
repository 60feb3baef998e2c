"""Every entry point answers a bad checkpoint with one line and exit 2: train, eval, play."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory, tiny_alphazero_checkpoint, tiny_maddison_checkpoint):
    """name -> (path, what the one line must say), for a Gomoku and a Go entry point each."""
    folder = tmp_path_factory.mktemp("bad")
    az = tiny_alphazero_checkpoint(folder / "az.ckpt")
    go = tiny_maddison_checkpoint(folder / "go.ckpt")
    truncated = folder / "truncated.ckpt"
    truncated.write_bytes(az.read_bytes()[: az.stat().st_size // 2])
    random_bytes = folder / "random.ckpt"
    random_bytes.write_bytes(os.urandom(4096))
    return {"missing": folder / "missing.ckpt", "truncated": truncated, "random": random_bytes,
            "az": az, "go": go}


def _one_line(capsys, path) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err, err
    return err


def _run(fn, cfg):
    from stonelab.cli import run_or_explain

    with pytest.raises(SystemExit) as info:
        run_or_explain(fn, cfg)
    assert info.value.code == 2


@pytest.mark.parametrize("kind", ["missing", "truncated", "random", "go"])
def test_train(kind, bad_files, tmp_path, capsys, compose_train):
    from stonelab.pipeline import train

    path = bad_files[kind]
    _run(train, compose_train([f"ckpt_path={path}", "logger=none"], tmp_path / "run"))
    err = _one_line(capsys, path)
    if kind == "go":
        assert "it holds a maddison_cnn Go model" in err


@pytest.mark.parametrize("task,other", [("match", "go"), ("gtp_match", "az")])
@pytest.mark.parametrize("kind", ["missing", "truncated", "random", "other game"])
def test_eval(task, other, kind, bad_files, tmp_path, capsys, compose_config):
    from stonelab.eval_tasks import run

    path = bad_files[other if kind == "other game" else kind]
    _run(run, compose_config("eval", [f"task={task}", f"ckpt_path={path}", f"paths.output_dir={tmp_path}"]))
    _one_line(capsys, path)


@pytest.mark.parametrize("protocol,other", [("gomocup", "go"), ("gtp", "az")])
@pytest.mark.parametrize("kind", ["missing", "truncated", "random", "other game"])
def test_play(protocol, other, kind, bad_files, capsys, compose_config):
    from stonelab.play import run

    path = bad_files[other if kind == "other game" else kind]
    _run(run, compose_config("play", [f"protocol={protocol}", f"ckpt_path={path}"]))
    _one_line(capsys, path)
