"""Policy rollouts: seeded ends, an exact count where nothing is left to play, the blend."""

import numpy as np
import pytest
import torch

from stonelab.games.go.rules import BLACK, WHITE, GoRules
from stonelab.models.inference import MovePredictor
from stonelab.models.nets.maddison import MaddisonNet
from stonelab.models.rollouts import ROLLOUT_SHARE, blend, policy_rollouts


@pytest.fixture(scope="module")
def predictor(one_thread):
    torch.manual_seed(0)
    return MovePredictor(MaddisonNet(36, 9, depth=2, filters=8), GoRules(9), "maddison")


def settled(komi: float = 7.5):
    """9x9: Black fills columns A-E, White F-J, each with three single-point eyes on its edge
    column: no move is left but filling one's own eye, which rollouts never do."""
    rules = GoRules(9, komi=komi)
    black = [r * 9 + c for r in range(9) for c in range(5) if not (c == 0 and r in (1, 4, 7))]
    white = [r * 9 + c for r in range(9) for c in range(5, 9) if not (c == 8 and r in (1, 4, 7))]
    return rules.new_state().setup(black, white)


def test_a_board_with_nothing_left_to_play_ends_as_its_area_count(predictor):
    ends = policy_rollouts(predictor, settled(komi=7.5), rollouts=4)
    assert ends.tolist() == [45 - 36 - 7.5] * 4  # Black's 45 points, White's 36, komi


def test_the_same_position_gets_the_same_ends_and_another_seed_others(predictor):
    state = GoRules(9, komi=7.5).new_state().play(40).play(20)
    first = policy_rollouts(predictor, state, rollouts=6, policy_moves=30)
    assert np.array_equal(first, policy_rollouts(predictor, state.copy(), rollouts=6, policy_moves=30))
    assert not np.array_equal(first, policy_rollouts(predictor, state, rollouts=6, policy_moves=30, seed=1))
    assert all(-81 - 7.5 <= e <= 81 - 7.5 for e in first)


def test_blend_mixes_the_ends_in_the_side_to_moves_view():
    ends = np.array([-5.0, -5.0, 3.0, -1.0])  # Black's margins: White wins three of four, by 2 on average
    lead, winrate, lcb = blend(10.0, 0.6, ends, WHITE, lcb=0.5)
    assert lead == pytest.approx((1 - ROLLOUT_SHARE) * 10.0 + ROLLOUT_SHARE * 2.0)
    assert winrate == pytest.approx((1 - ROLLOUT_SHARE) * 0.6 + ROLLOUT_SHARE * 0.75)
    assert lcb == pytest.approx((1 - ROLLOUT_SHARE) * 0.5 + ROLLOUT_SHARE * 0.75) and lcb <= winrate
    lead, winrate, lcb = blend(-10.0, 0.4, ends, BLACK)
    assert lead == pytest.approx((1 - ROLLOUT_SHARE) * -10.0 + ROLLOUT_SHARE * -2.0)
    assert winrate == pytest.approx((1 - ROLLOUT_SHARE) * 0.4 + ROLLOUT_SHARE * 0.25) and lcb is None


@pytest.mark.parametrize("kwargs", [{"rollouts": 0}, {"temperature": 0.0}, {"policy_moves": -1}])
def test_bad_settings_are_refused_by_name(predictor, kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        policy_rollouts(predictor, settled(), **kwargs)
