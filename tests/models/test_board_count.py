"""The count of a settled board: dead stones off, area, the open points the net's; the gate and the mix."""

import numpy as np
import pytest

from stonelab.errors import ConfigError
from stonelab.games.go.rules import BLACK, WHITE, GoRules
from stonelab.models.board_count import (
    GATE_FROM,
    GATE_MAX,
    GATE_TO,
    STONES_FROM,
    STONES_TO,
    WINRATE_SCALE,
    BoardCount,
    check_count_settled,
    late_count,
    settled_count,
    with_count,
)


def column(c: int) -> list[int]:
    return [r * 9 + c for r in range(9)]


def test_a_dead_stone_in_territory_is_taken_off_and_the_board_counted_by_area():
    """9x9: Black fills columns B-C, White D-E; a lone white stone sits on Black's column A.
    Counted: Black 18 + 9, White 18 + 36, komi 7.5; every empty point settled."""
    state = GoRules(9, komi=7.5).new_state().setup([*column(1), *column(2)], [*column(3), *column(4), 4 * 9 + 0])
    count = settled_count(state)
    assert count.margin == pytest.approx(27 - 54 - 7.5)
    assert count.settled == 1.0 and count.weight == GATE_MAX


def test_points_the_count_leaves_open_are_the_nets_ownership():
    """Black walls column C, White column E: column D reaches both colours and stays open (9
    of the 63 empty points); there the given ownership counts, everywhere else the board."""
    state = GoRules(9, komi=7.5).new_state().setup(column(2), column(4))
    ownership = np.full(81, 0.5)  # Black's view: +0.5 on every point, only column D's are read
    count = settled_count(state, ownership)
    assert count.margin == pytest.approx((9 + 18) - (9 + 36) + 9 * 0.5 - 7.5)
    assert count.settled == pytest.approx(54 / 63)
    without = settled_count(state)  # no net ownership: the playouts' mean on column D
    assert -27 - 7.5 <= without.margin <= -9 - 7.5


def test_an_opening_is_left_to_the_net():
    state = GoRules(19, komi=7.5).new_state().play(60).play(300).play(72).play(288)
    count = settled_count(state)
    assert count.settled < GATE_FROM and count.weight == 0.0
    assert with_count(3.0, 0.6, 0.55, count, state.to_play) == (3.0, 0.6, 0.55)


def test_a_lone_stone_whose_region_is_the_whole_board_is_not_counted():
    """Tromp-Taylor gives the whole 9x9 board to one black stone: settled, but far too empty to count."""
    count = settled_count(GoRules(9, komi=7.5).new_state().play(40))
    assert count.margin == pytest.approx(81 - 7.5) and count.settled == 1.0
    assert count.stones < STONES_FROM and count.weight == 0.0
    assert late_count(GoRules(9, komi=7.5).new_state().play(40)) is None  # the engines do not count it at all
    assert with_count(3.0, 0.6, None, None, BLACK) == (3.0, 0.6, None)


@pytest.mark.parametrize("settled, stones, weight", [
    (0.0, 1.0, 0.0), (GATE_FROM, 1.0, 0.0), ((GATE_FROM + GATE_TO) / 2, 1.0, GATE_MAX / 2), (GATE_TO, 1.0, GATE_MAX),
    (1.0, 1.0, GATE_MAX), (1.0, STONES_FROM, 0.0), (1.0, (STONES_FROM + STONES_TO) / 2, GATE_MAX / 2),
    (1.0, STONES_TO, GATE_MAX)])
def test_the_counts_weight_grows_with_the_settled_share_on_a_covered_board(settled, stones, weight):
    assert BoardCount(0.0, settled, stones).weight == pytest.approx(weight)


def test_with_count_mixes_in_the_side_to_moves_view():
    count = BoardCount(margin=10.0, settled=1.0)  # Black ahead by 10 on a settled board
    won = 1 / (1 + np.exp(10.0 / WINRATE_SCALE))  # White's chance by the count
    lead, winrate, lcb = with_count(2.0, 0.6, 0.5, count, WHITE)
    assert lead == pytest.approx((1 - GATE_MAX) * 2.0 + GATE_MAX * -10.0)
    assert winrate == pytest.approx((1 - GATE_MAX) * 0.6 + GATE_MAX * won)
    assert lcb == pytest.approx((1 - GATE_MAX) * 0.5 + GATE_MAX * won) and lcb <= winrate
    lead, winrate, lcb = with_count(-2.0, 0.4, None, count, BLACK)
    assert lead == pytest.approx((1 - GATE_MAX) * -2.0 + GATE_MAX * 10.0) and winrate > 0.5 and lcb is None


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_a_count_setting_that_is_not_true_or_false_is_refused_by_name(value):
    with pytest.raises(ConfigError, match="analysis.count_settled"):
        check_count_settled(value)
