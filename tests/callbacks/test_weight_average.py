"""stonelab.callbacks.weight_average: the moving average of a supervised run's weights, what its
checkpoints hold, a resume that continues it, an export that ships it, and its settings."""

from __future__ import annotations

import pytest
import torch

from stonelab.callbacks.weight_average import ExponentialMovingAverage, weight_average
from stonelab.errors import ConfigError
from stonelab.models.export import export
from stonelab.pipeline import train

TINY_NET = ["model.net.depth=2", "model.net.filters=4", "logger=none"]
EMA = ["callbacks.weight_average.decay=0.5"]


def _net(state: dict) -> dict:
    return {k: v for k, v in state.items() if k.startswith("net.")}


def _fit(compose_go, tmp_path, folder: str, overrides: list[str]) -> dict:
    cfg = compose_go("maddison_cnn", [*TINY_NET, *overrides, f"paths.output_dir={tmp_path / folder}"], tmp_path)
    train(cfg)
    return torch.load(tmp_path / folder / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=True)


def test_off_by_default_and_bad_settings_are_refused_naming_the_key():
    assert weight_average() is None and weight_average(None, 5) is None
    assert isinstance(weight_average(0.998), ExponentialMovingAverage)
    for decay in (0, 1, 1.5, -0.1, "0.9", True):
        with pytest.raises(ConfigError, match=r"callbacks.weight_average.decay=.* must be a number in \(0, 1\)"):
            weight_average(decay)
    with pytest.raises(ConfigError, match="callbacks.weight_average.start_step=-1 must be an int >= 0"):
        weight_average(0.9, -1)


def test_the_checkpoint_holds_the_average_and_the_raw_weights_and_a_resume_continues_both(
        tmp_path, compose_go, one_thread):
    plain = _fit(compose_go, tmp_path, "plain", ["trainer.max_epochs=2"])
    straight = _fit(compose_go, tmp_path, "straight", [*EMA, "trainer.max_epochs=2"])
    assert "current_model_state" not in plain
    # The raw weights are the plain run's (the average does not touch training) ...
    raw = _net(straight["current_model_state"])
    assert raw.keys() == _net(plain["state_dict"]).keys()
    assert all(torch.equal(raw[k], plain["state_dict"][k]) for k in raw)
    # ... and the weights the checkpoint names are another net: the average.
    average = _net(straight["state_dict"])
    assert average.keys() == raw.keys()
    assert any(not torch.equal(average[k], raw[k]) for k in raw if average[k].is_floating_point())

    last = tmp_path / "pieced" / "checkpoints" / "last.ckpt"
    _fit(compose_go, tmp_path, "pieced", [*EMA, "trainer.max_epochs=1"])
    pieced = _fit(compose_go, tmp_path, "pieced", [*EMA, "trainer.max_epochs=2", f"ckpt_path={last}"])
    for key in ("state_dict", "current_model_state"):
        assert all(torch.allclose(pieced[key][k].float(), straight[key][k].float()) for k in _net(straight[key]))


def test_an_export_ships_the_average(tmp_path, compose_go, one_thread):
    run = _fit(compose_go, tmp_path, "run", [*EMA, "trainer.max_epochs=1"])
    export(str(tmp_path / "run" / "checkpoints" / "last.ckpt"), str(tmp_path / "net.ckpt"))
    shipped = torch.load(tmp_path / "net.ckpt", map_location="cpu", weights_only=True)
    assert "current_model_state" not in shipped
    assert shipped["state_dict"].keys() == _net(run["state_dict"]).keys()
    assert all(torch.equal(shipped["state_dict"][k], run["state_dict"][k]) for k in shipped["state_dict"])
