"""The evaluation callback's clock: time-to-strength survives a resume."""

from __future__ import annotations

import time

from stonelab.callbacks.evaluation import Evaluation
from stonelab.search.mcts import MCTSConfig


def test_elapsed_time_continues_across_a_resume():
    first = Evaluation(MCTSConfig())
    first._fit_start = time.perf_counter() - 50.0  # 50 s into the first session
    state = first.state_dict()
    assert 50.0 <= state["elapsed_s"] < 51.0
    resumed = Evaluation(MCTSConfig())
    resumed.load_state_dict(state)
    assert resumed.elapsed() == state["elapsed_s"]  # before fit starts again: nothing added
    resumed._fit_start = time.perf_counter() - 10.0
    assert 60.0 <= resumed.elapsed() < 61.5
    # A checkpoint written before the clock existed resumes from 0.
    old = {k: v for k, v in state.items() if k != "elapsed_s"}
    fresh = Evaluation(MCTSConfig())
    fresh.load_state_dict(old)
    assert fresh.elapsed() == 0.0
