import math

import pytest

from stonelab.protocols.gtp_clock import MARGIN, MIN_BUDGET, GTPClock, expected_moves_left


def test_no_time_settings_means_no_limit():
    assert GTPClock().move_budget(1, 100) is None


def test_gtp_zero_stones_with_a_period_means_no_limit():
    clock = GTPClock()
    clock.time_settings(0, 30, 0)
    assert clock.move_budget(1, 100) is None


def test_main_time_is_spread_over_the_moves_left():
    clock = GTPClock()
    clock.time_settings(600, 0, 0)
    assert clock.move_budget(1, 100) == pytest.approx(6.0)
    clock.time_left(1, 10, 0)
    assert clock.move_budget(1, 100) == pytest.approx(0.1)


def test_a_move_never_thinks_past_the_time_left_minus_the_margin():
    clock = GTPClock()
    clock.time_settings(300, 20, 5)
    for seconds in (0.3, 1.0, 2.5, 7.0, 19.0):
        for stones in (1, 2, 5):
            clock.time_left(-1, seconds, stones)
            budget = clock.move_budget(-1, 50)
            assert budget <= max(seconds - MARGIN, MIN_BUDGET)
            assert budget == pytest.approx(max(MIN_BUDGET, min(seconds / stones, seconds - MARGIN)))


def test_byo_yomi_after_main_time_counts_one_period_per_move():
    clock = GTPClock()
    clock.time_settings(0, 10, 1)
    assert clock.move_budget(1, 80) == pytest.approx(10 - MARGIN)


def test_sides_have_their_own_clocks():
    clock = GTPClock()
    clock.time_settings(100, 0, 0)
    clock.time_left(1, 2, 0)
    assert clock.move_budget(1, 20) == pytest.approx(0.1)
    assert clock.move_budget(-1, 20) == pytest.approx(5.0)


def test_kgs_time_settings():
    clock = GTPClock()
    clock.kgs_time_settings("absolute", [60])
    assert clock.move_budget(1, 30) == pytest.approx(2.0)
    clock.kgs_time_settings("byoyomi", [0, 30, 5])
    clock.time_left(1, 30, 5)  # japanese byo-yomi: the periods left come as stones
    assert clock.move_budget(1, 30) == pytest.approx(30 - MARGIN)
    clock.kgs_time_settings("none", [])
    assert clock.move_budget(1, 30) is None
    with pytest.raises(ValueError, match="unknown time system"):
        clock.kgs_time_settings("hourglass", [1])
    with pytest.raises(ValueError, match="takes 3 values"):
        clock.kgs_time_settings("canadian", [1])


def test_expected_moves_left_never_below_twenty():
    assert expected_moves_left(361, 0) == 126
    assert expected_moves_left(361, 400) == 20
    assert not math.isnan(expected_moves_left(81, 10))
