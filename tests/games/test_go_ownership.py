"""Dead stones by random playouts: the estimate behind GTP's final_status_list."""

from __future__ import annotations

import numpy as np

from stonelab.games.go import point as pt
from stonelab.games.go import state_from_rows
from stonelab.games.go_ownership import dead_stones

# Black walls off the left side, white the right; one white stone sits deep in black's
# area and one black stone deep in white's: both are dead, every wall stone is alive.
SETTLED = [
    "...X.O...",
    "...X.O...",
    ".O.X.O...",
    "...X.O...",
    "...X.O...",
    "...X.O.X.",
    "...X.O...",
    "...X.O...",
    "...X.O...",
]


def test_lone_stones_inside_settled_territory_are_dead_and_the_walls_alive():
    state = state_from_rows(SETTLED)
    dead = dead_stones(state)
    assert sorted(np.flatnonzero(dead)) == [pt(9, 2, 1), pt(9, 5, 7)]
    assert dead_stones(state, seed=1).tolist() == dead.tolist()  # not luck of one seed


def test_no_stone_is_dead_on_an_empty_board_or_among_two_living_walls():
    assert not dead_stones(state_from_rows(["." * 9] * 9)).any()
    walls = ["...X.O..."] * 9
    assert not dead_stones(state_from_rows(walls)).any()
