"""python -m stonelab.models.export: weights and identity only, loaded like any checkpoint,
and refused by name as a run to resume."""

from __future__ import annotations

import pytest
import torch

from stonelab.errors import StonelabError
from stonelab.models import checkpoints
from stonelab.models.export import export, exported_from, main


def _same_net(a, b) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.mark.parametrize("game", ["go", "gomoku"])
def test_export_loads_to_the_same_net(tmp_path, game, tiny_maddison_checkpoint, tiny_alphazero_checkpoint):
    source = (tiny_maddison_checkpoint(tmp_path / "run.ckpt") if game == "go"
              else tiny_alphazero_checkpoint(tmp_path / "run.ckpt", 8, 5))
    raw = torch.load(source, weights_only=True)
    raw["optimizer_states"] = [{"state": {0: {"exp_avg": torch.zeros(100_000)}}}]  # as a training run has
    torch.save(raw, source)
    summary = export(str(source), str(tmp_path / "models" / "shipped.ckpt"))
    shipped = torch.load(tmp_path / "models" / "shipped.ckpt", weights_only=True)
    assert set(shipped) == {"state_dict", "stonelab", "hyper_parameters"}
    assert all(k.startswith("net.") for k in shipped["state_dict"])
    assert exported_from(shipped)["source"] == "run.ckpt" and summary["bytes"] < source.stat().st_size
    original, loaded = (checkpoints.load(str(p), game=game) for p in (source, tmp_path / "models" / "shipped.ckpt"))
    assert loaded.identity == original.identity and _same_net(loaded.net, original.net)


def test_a_file_without_weights_is_refused(tmp_path):
    path = tmp_path / "empty.ckpt"
    torch.save({"stonelab": {"identity": {"model": "maddison_cnn", "game": "go", "board_size": 9}},
                "state_dict": {}}, path)
    with pytest.raises(StonelabError, match="holds no network weights"):
        export(str(path), str(tmp_path / "out.ckpt"))


def test_cli_error_is_one_line(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("not a checkpoint")
    assert main([str(tmp_path / "notes.txt"), str(tmp_path / "out.ckpt")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and not (tmp_path / "out.ckpt").exists()


def test_resuming_from_shipped_weights_is_refused_by_name(tmp_path, compose_go):
    from stonelab.pipeline import train

    first = compose_go("maddison_cnn", ["model.net.depth=2", "model.net.filters=4", "logger=none"], tmp_path)
    train(first)
    shipped = tmp_path / "shipped.ckpt"
    export(str(tmp_path / "out" / "checkpoints" / "last.ckpt"), str(shipped))
    again = compose_go("maddison_cnn", ["model.net.depth=2", "model.net.filters=4", "logger=none",
                                        f"ckpt_path={shipped}"], tmp_path / "again")
    with pytest.raises(StonelabError, match="shipped weights only .* cannot resume a run"):
        train(again)
