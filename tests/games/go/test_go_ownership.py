"""Dead stones by random playouts: the estimate behind GTP's final_status_list."""

from __future__ import annotations

import numpy as np

from stonelab.games.go.ownership import dead_stones, may_pass
from stonelab.games.go.rules import WHITE, GoRules, state_from_rows
from stonelab.games.go.rules import point as pt

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


def test_a_chain_lives_or_dies_whole_by_its_mean_ownership():
    """A net's ownership (net_weight 1: it alone) against three of the nine stones of black's
    wall: its mean favours white, so the whole wall is dead; a stone-by-stone call would
    have cut it in two. Ownership 0 (unsure) kills nothing."""
    state = state_from_rows(SETTLED)
    wall = state.chain(pt(9, 0, 3))
    ownership = np.zeros(81)
    ownership[wall[:3]] = -1.0
    assert sorted(np.flatnonzero(dead_stones(state, ownership=ownership, net_weight=1.0))) == wall
    assert dead_stones(state, ownership=ownership).tolist() == dead_stones(state).tolist()  # weight 0: playouts


def filled(*holes: tuple[int, int], stones: dict | None = None) -> list[str]:
    """A finished 9x9 game: black fills columns A-D, white E-J, each with single-point eyes
    down its edge (A9, A7, ..., J1); ``holes`` are extra empty points, ``stones`` points
    (row, col) set to "X" or "O"."""
    rows = [list("XXXXOOOOO") for _ in range(9)]
    for r in range(0, 9, 2):
        rows[r][0] = rows[r][8] = "."
    for r, c in holes:
        rows[r][c] = "."
    for (r, c), stone in (stones or {}).items():
        rows[r][c] = stone
    return ["".join(row) for row in rows]


def passes(rows, to_play=1) -> bool:
    return may_pass(state_from_rows(rows, to_play=to_play).arrays)


def test_no_pass_on_an_open_board_or_while_a_neutral_point_is_left():
    assert not may_pass(GoRules(9).new_state().arrays)
    assert passes(filled()) and passes(filled(), WHITE)  # every empty point an eye
    dame = filled((4, 3), (4, 4))  # D5 and E5 touch both colours
    assert not passes(dame) and not passes(dame, WHITE)


def test_no_pass_after_the_first_stone_while_the_opponent_owns_the_board():
    one_stone = GoRules(9).new_state().play(40)  # Tromp-Taylor gives black every point
    assert not may_pass(one_stone.arrays)  # white has all to play for


def test_an_opponent_area_big_enough_to_invade_stops_a_pass_a_small_one_does_not():
    big = filled(*[(r, c) for r in range(1, 5) for c in range(5, 7)])  # eight points in white's area
    assert not passes(big) and passes(big, WHITE)
    small = filled(*[(r, c) for r in range(1, 4) for c in range(5, 7)], (4, 5))  # seven points
    assert passes(small) and passes(small, WHITE)


def test_a_dead_stone_in_atari_stops_the_capturer_passing_but_not_its_owner():
    # A black stone on G5 inside white's area, its last liberty G4 (black's play there: suicide).
    rows = filled((5, 6), stones={(4, 6): "X"})
    assert passes(rows)
    assert not passes(rows, WHITE)  # white must capture it: G4 is neutral


def test_a_chain_in_atari_that_can_be_saved_stops_its_owner_passing():
    # A white stone on D8 puts black's D9 in atari; its liberty C9 is in black's own area,
    # and connecting there saves it.
    rows = filled((0, 2), stones={(1, 3): "O"})
    assert not passes(rows)
    assert passes(rows, WHITE)  # C9 is black's: white has nothing to play for
