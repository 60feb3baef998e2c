"""stonelab.callbacks.held_out and the pipeline's held-out test: its bound, its record across resumes,
and the end summary's word on a model near chance."""

from __future__ import annotations

import json

import pytest
import torch

from stonelab.callbacks.stop import StoppedBySignal
from stonelab.pipeline import held_out_lines, train

TINY_NET = ["model.net.depth=2", "model.net.filters=4", "logger=none"]


def _callback_state(path, name: str) -> dict:
    states = torch.load(path, map_location="cpu", weights_only=True)["callbacks"]
    return next(v for k, v in states.items() if k.startswith(name))


def test_the_test_is_recorded_in_last_ckpt_with_the_clock_that_includes_it(tmp_path, compose_go, one_thread):
    first = train(compose_go("maddison_cnn", TINY_NET, tmp_path))
    last = tmp_path / "out" / "checkpoints" / "last.ckpt"
    record = _callback_state(last, "HeldOutRecord")
    assert record["metrics"] == pytest.approx({k: v for k, v in first["metrics"].items() if k.startswith("test/")})
    assert record["checkpoint"] == "best-epoch0-step3.ckpt" and first["held_out"] == record
    # The clock a resume starts from counts the test: it is the job's time at the end, not at the last save.
    assert _callback_state(last, "WallClock")["elapsed_s"] == pytest.approx(first["job_seconds"], abs=0.5)
    assert first["test_batches"] == 2 and 2 < first["test_batches_all"] <= 40  # trainer.limit_test_batches=2 of 2 games


def test_a_piece_stopped_before_its_test_reports_the_latest_one(tmp_path, compose_go, one_thread, monkeypatch, caplog):
    first = train(compose_go("maddison_cnn", TINY_NET, tmp_path))
    last = tmp_path / "out" / "checkpoints" / "last.ckpt"
    import stonelab.pipeline as pipeline

    fit = pipeline.fit_or_stop

    def fit_then_sigint(*args):  # the piece trains, then Ctrl-C comes at its last safe point
        fit(*args)
        return StoppedBySignal("SIGINT", 0)

    monkeypatch.setattr(pipeline, "fit_or_stop", fit_then_sigint)
    with caplog.at_level("INFO", logger="stonelab.pipeline"), pytest.raises(StoppedBySignal):
        train(compose_go("maddison_cnn", [*TINY_NET, "trainer.max_epochs=2", f"ckpt_path={last}"], tmp_path))
    second = json.loads((tmp_path / "out" / "result.json").read_text())
    assert not any(k.startswith("test/") for k in second["metrics"])  # no test in this piece ...
    assert second["held_out"] == first["held_out"]  # ... and the latest one kept
    # the job clock carries the first piece's time (this piece's own may round away: tenths)
    assert second["job_seconds"] >= first["job_seconds"] > 0
    lines = [r.getMessage() for r in caplog.records if r.name == "stonelab.pipeline"]
    assert any(line.startswith("held-out games (the latest test, of best-epoch0-step3.ckpt): top1 ") for line in lines)


def test_the_summary_says_plainly_when_a_model_is_near_chance():
    result = {"metrics": {"test/top1": 0.0065, "test/top5": 0.03}, "seconds": 600.0, "job_seconds": 600.0,
              "global_step": 32, "model": "belief_vit", "test_batches": 20, "test_batches_all": 94}
    first, second = held_out_lines(result)
    assert first.startswith("held-out games (a subsample: the first 20 of 94 batches): top1 0.0065, top5 0.0300")
    assert second.startswith("that is near chance") and "32 updates in 10 minutes were too few" in second
    assert second.endswith("or try model=maddison_cnn, which learns fastest on a CPU")
    learned = {**result, "metrics": {"test/top1": 0.21}, "test_batches": 94}
    assert held_out_lines(learned) == ["held-out games: top1 0.2100"]
