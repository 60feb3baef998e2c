"""Match scores and their Wilson intervals."""

from __future__ import annotations

import math

import pytest

from stonelab.arena.ratings import MatchResult, wilson_interval


def test_wilson_known_value():
    lo, hi = wilson_interval(9, 10)
    assert lo == pytest.approx(0.596, abs=1e-3)
    assert hi == pytest.approx(0.982, abs=1e-3)


def test_wilson_half():
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3)
    assert hi == pytest.approx(0.5962, abs=1e-3)
    assert lo + hi == pytest.approx(1.0)


@pytest.mark.parametrize("trials", [0, -1])
def test_wilson_without_trials_is_uninformative(trials):
    assert wilson_interval(0, trials) == (0.0, 1.0)


def test_wilson_extremes_stay_in_unit_interval():
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and 0.0 < hi < 0.35
    lo, hi = wilson_interval(10, 10)
    assert 0.65 < lo < 1.0 and hi == pytest.approx(1.0)
    assert hi <= 1.0


def test_wilson_narrows_with_more_trials_and_contains_the_estimate():
    widths = []
    for n in (10, 100, 1000):
        lo, hi = wilson_interval(0.7 * n, n)
        assert lo < 0.7 < hi
        widths.append(hi - lo)
    assert widths[0] > widths[1] > widths[2]
    # z sets the confidence: a wider z gives a wider interval.
    lo90, hi90 = wilson_interval(7, 10, z=1.645)
    lo95, hi95 = wilson_interval(7, 10)
    assert lo95 < lo90 and hi90 < hi95


def test_match_result_counts_draws_as_half():
    r = MatchResult(wins=6, draws=2, losses=2)
    assert r.games == 10
    assert r.win_ratio == pytest.approx(0.7)
    assert r.interval == pytest.approx(wilson_interval(7, 10))
    assert MatchResult(wins=0, draws=4, losses=0).win_ratio == pytest.approx(0.5)
    assert MatchResult(wins=3, draws=0, losses=1).win_ratio == pytest.approx(0.75)


def test_match_result_without_games():
    r = MatchResult(0, 0, 0)
    assert r.games == 0 and r.win_ratio == 0.0
    assert r.interval == (0.0, 1.0)


def test_match_result_str():
    text = str(MatchResult(wins=9, draws=0, losses=1))
    assert "9W 0D 1L of 10" in text
    assert "0.900" in text and "0.596" in text and "0.982" in text
    assert not math.isnan(MatchResult(1, 1, 1).win_ratio)
