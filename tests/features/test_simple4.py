"""simple4 encoder: own / opponent / empty / previous move, from the view of the side to move."""

from __future__ import annotations

import numpy as np

from stonelab.features import ENC_SIMPLE4, ENCODERS, encode_game_arrays
from stonelab.features.simple4 import NUM_PLANES, SIMPLE4_PLANES, encode_simple4
from stonelab.games.go.rules import BLACK, WHITE, GoRules, state_from_rows


def test_four_planes_registered():
    assert NUM_PLANES == 4 and sum(c for _, c in SIMPLE4_PLANES) == 4
    assert ENCODERS["simple4"].num_planes == 4 and ENCODERS["simple4"].encoder_id == ENC_SIMPLE4


def test_planes_of_a_position_and_perspective():
    rows = ["X.O" + "." * 6, ".X." + "." * 6] + ["." * 9] * 7
    for to_play in (BLACK, WHITE):
        s = state_from_rows(rows, to_play=to_play)
        planes = encode_simple4(s.arrays)
        assert planes.shape == (4, 9, 9) and planes.dtype == np.uint8
        grid = s.board.reshape(9, 9)
        np.testing.assert_array_equal(planes[0], grid == to_play)
        np.testing.assert_array_equal(planes[1], grid == -to_play)
        np.testing.assert_array_equal(planes[2], grid == 0)
        assert not planes[3].any()  # setup stones are not a move
        np.testing.assert_array_equal(planes[:3].sum(axis=0), 1)


def test_history_plane_marks_the_previous_move_and_is_empty_after_a_pass():
    s = GoRules(9).new_state()
    assert not encode_simple4(s.arrays)[3].any()
    s.play(40)
    planes = encode_simple4(s.arrays)
    assert planes[3, 4, 4] == 1 and planes[3].sum() == 1
    assert planes[1, 4, 4] == 1  # white to move: black's stone is the opponent's
    s.play(81)
    assert not encode_simple4(s.arrays)[3].any()


def test_encode_game_matches_position_by_position():
    moves = [40, 41, 31, 81, 32, 50]
    planes, targets, status = encode_game_arrays("simple4", 9, [], [], moves, BLACK)
    assert status == -1 and planes.shape == (6, 4, 9, 9)
    np.testing.assert_array_equal(targets, moves)
    s = GoRules(9).new_state()
    for i, m in enumerate(moves):
        np.testing.assert_array_equal(planes[i], encode_simple4(s.arrays))
        s.play(m)
