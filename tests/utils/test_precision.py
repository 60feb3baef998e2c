"""stonelab.utils.precision: the fastest precision where the run is, and a warning for bfloat16 emulated."""

from __future__ import annotations

import pytest

from stonelab.utils import precision


@pytest.fixture
def cpu_only(monkeypatch):
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)


def test_a_cpu_gets_bf16_only_with_bfloat16_instructions(monkeypatch, cpu_only):
    monkeypatch.setattr(precision, "cpu_bf16_flags", lambda: [])
    assert precision.fast_precision() == "32-true" and precision.fast_precision("cpu") == "32-true"
    monkeypatch.setattr(precision, "cpu_bf16_flags", lambda: ["avx512_bf16"])
    assert precision.fast_precision("cpu") == "bf16-mixed"


def test_bf16_asked_for_on_a_cpu_that_emulates_it_is_named(monkeypatch, cpu_only):
    monkeypatch.setattr(precision, "cpu_bf16_flags", lambda: [])
    message = precision.emulated_bf16_warning("bf16-mixed", "cpu")
    assert "trainer.precision=bf16-mixed" in message and "10x slower than 32-true" in message
    assert precision.emulated_bf16_warning("32-true", "cpu") is None
    monkeypatch.setattr(precision, "cpu_bf16_flags", lambda: ["amx_bf16"])
    assert precision.emulated_bf16_warning("bf16-mixed", "auto") is None
