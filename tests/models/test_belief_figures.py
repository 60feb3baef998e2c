"""belief_vit's figures: seed Fig. 6 (belief error vs accuracy), the risk-coverage curve
and seed Fig. 7 (position view), as PNG files and as TensorBoard images."""

from __future__ import annotations

import json

import numpy as np
import pytest

from stonelab.models import figures

PNG = b"\x89PNG\r\n\x1a\n"


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def test_move_names_are_gtp():
    assert figures.move_name(0, 19) == "A19"
    assert figures.move_name(360, 19) == "T1"
    assert figures.move_name(8, 19) == "J19"  # no I
    assert figures.move_name(361, 19) == "pass"


def test_risk_coverage_and_aurc():
    correct = np.array([1, 1, 0, 0])
    cov, risk = figures.risk_coverage(correct, np.array([4.0, 3.0, 2.0, 1.0]))
    np.testing.assert_allclose(cov, [0.25, 0.5, 0.75, 1.0])
    np.testing.assert_allclose(risk, [0, 0, 1 / 3, 1 / 2])
    assert figures.aurc(correct, np.array([4.0, 3.0, 2.0, 1.0])) == pytest.approx((1 / 3 + 1 / 2) / 4)
    assert figures.aurc(correct, np.array([1.0, 2.0, 3.0, 4.0])) == pytest.approx((1 + 1 + 2 / 3 + 1 / 2) / 4)
    # Full coverage is the plain error rate, whatever the ranking.
    rng = np.random.default_rng(0)
    c = rng.integers(0, 2, 500)
    assert figures.risk_coverage(c, rng.random(500))[1][-1] == pytest.approx(1 - c.mean())


def test_position_view_and_history_figures(tmp_path):
    rng = np.random.default_rng(1)
    board = rng.integers(-1, 2, 361)
    probs = rng.random(362)
    probs /= probs.sum()
    fig = figures.position_view(board, -1, probs, belief=rng.uniform(-1, 1, (19, 19)), value=0.3,
                                confidence=0.1, played=72, gated_move=int(np.argsort(-probs)[1]),
                                gate_threshold=0.2, title="test")
    path = figures.save(fig, tmp_path / "view.png")
    assert path.read_bytes()[:8] == PNG
    fig = figures.position_view(board, 1, probs)  # a net with no belief head
    assert figures.save(fig, tmp_path / "plain.png").read_bytes()[:8] == PNG
    train = [{"step": s, "belief_error": 0.5 - s / 100, "top1": s / 100, "top5": s / 50} for s in range(10)]
    val = [{"epoch": 0, "step": 9, "belief_error": 0.4, "top1": 0.1, "top5": 0.2}]
    path = figures.save(figures.belief_error_vs_accuracy(train, val), tmp_path / "fig6.png")
    assert path.read_bytes()[:8] == PNG


def test_a_run_saves_and_logs_its_figures(tmp_path, compose_go):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from stonelab.pipeline import train

    cfg = compose_go("belief_vit", ["model.net.embed_dim=16", "model.net.heads=2", "model.net.layers=1",
                                    "model.net.ff_dim=32", "model.net.belief_hidden=16", "model.history_window=1",
                                    "logger=tensorboard", "trainer.limit_val_batches=1",
                                    "trainer.limit_test_batches=1"], tmp_path)
    train(cfg)
    folder = tmp_path / "out" / "figures"
    for name in ("belief_error_vs_accuracy.png", "risk_coverage_test.png", "position_view_test.png"):
        assert (folder / name).read_bytes()[:8] == PNG, name
    history = json.loads((folder / "history.json").read_text())
    assert len(history["train"]) == 3 and len(history["val"]) == 1  # 3 steps, 1 epoch
    curve = json.loads((folder / "risk_coverage_test.json").read_text())
    assert set(curve["aurc"]) == {"belief confidence", "max softmax (baseline)", "gated moves, by confidence"}
    assert len(curve["coverage"]) == len(curve["belief confidence"]) == 100
    events = EventAccumulator(str(tmp_path / "out" / "tensorboard"), size_guidance={"images": 0})
    events.Reload()
    assert {"figures/belief_error_vs_accuracy", "figures/risk_coverage_test",
            "figures/position_view_test"} <= set(events.Tags()["images"])
