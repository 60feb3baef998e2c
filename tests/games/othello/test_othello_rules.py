"""Othello rules kernels: setup, flips, passes, the end of the game and its result."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.errors import ConfigError
from stonelab.games.othello.rules import (
    BLACK,
    MOVES,
    MUST_PASS,
    OVER,
    WHITE,
    OthelloRules,
    board_from_rows,
    board_to_rows,
    count_flips,
    is_placing_move,
    outcome_after,
    place,
    placing_mask,
    random_playout,
    start_board,
    status,
)
from stonelab.search.game import DRAW, MOVER_LOSES, MOVER_WINS, ONGOING
from stonelab.search.tree import seed_numba


def at(n: int, r: int, c: int) -> int:
    return r * n + c


def discs(board: np.ndarray) -> int:
    return int(np.count_nonzero(board))


# --- configuration -------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [2, 3, 5, 7, 9, 15, 18, 0, -8, "8", 8.0, True, None])
def test_bad_board_sizes_are_refused_in_one_line(size):
    with pytest.raises(ConfigError) as err:
        OthelloRules(size)
    message = str(err.value)
    assert message == f"game.board_size={size!r}: Othello boards are even, 4..16"
    assert "\n" not in message


@pytest.mark.parametrize("n", [4, 6, 8, 10, 16])
def test_rules_properties(n):
    rules = OthelloRules(n)
    assert (rules.n, rules.num_points, rules.pass_move, rules.num_actions) == (n, n * n, n * n, n * n + 1)
    assert rules.name == f"othello_{n}x{n}"
    assert OthelloRules().n == 8


def test_standard_start_position():
    board = OthelloRules().new_board()
    assert board.dtype == np.int8 and board.shape == (64,)
    assert board_to_rows(board, 8)[3:5] == ["...OX...", "...XO..."]  # d4 e5 white, d5 e4 black
    assert discs(board) == 4
    mask = np.zeros(64, dtype=bool)
    assert placing_mask(board, 8, BLACK, mask) == 4
    # d3, c4, f5, e6
    assert set(np.flatnonzero(mask)) == {at(8, 2, 3), at(8, 3, 2), at(8, 4, 5), at(8, 5, 4)}


@pytest.mark.parametrize("n", [4, 6, 10, 16])
def test_start_position_is_the_centre_square_on_every_size(n):
    board = start_board(n)
    h = n // 2
    assert board[at(n, h - 1, h - 1)] == board[at(n, h, h)] == WHITE
    assert board[at(n, h - 1, h)] == board[at(n, h, h - 1)] == BLACK
    assert discs(board) == 4
    assert status(board, n, BLACK, 4) == MOVES


# --- flips ---------------------------------------------------------------------------------------

# Black on (3, 3) has white lines in all 8 directions; the one to the right runs off the
# board and the one down-left ends on an empty point, so only the other six flip.
STAR = ["X..X..X",
        ".O.O.O.",
        "..OOO..",
        "XOO.OOO",
        "..OOO..",
        ".O.O.O.",
        "...X..X"]


def test_flips_in_every_direction_that_is_closed():
    board = board_from_rows(STAR)
    n = 7
    move = at(n, 3, 3)
    assert count_flips(board, n, move, BLACK) == 6 * 2
    before = board.copy()
    assert place(board, n, move, BLACK) == 12
    changed = set(np.flatnonzero(board != before))
    assert move in changed and board[move] == BLACK
    assert all(board[p] == BLACK for p in changed)
    assert len(changed) == 13
    assert board[at(n, 3, 4)] == board[at(n, 4, 2)] == WHITE  # the two open lines stay white
    assert board[at(n, 3, 1)] == board[at(n, 3, 2)] == BLACK


def test_a_move_that_flips_nothing_changes_nothing():
    board = start_board(8)
    before = board.copy()
    for p in (0, at(8, 2, 2), at(8, 2, 4)):
        assert not is_placing_move(board, 8, p, BLACK)
        assert count_flips(board, 8, p, BLACK) == 0
        assert place(board, 8, p, BLACK) == 0
    np.testing.assert_array_equal(board, before)


def test_occupied_point_is_never_a_placing_move():
    board = start_board(8)
    assert not is_placing_move(board, 8, at(8, 3, 3), BLACK)


# --- passes and the end of the game --------------------------------------------------------------

# Black to move has no placing move (every white line ends off the board or on an empty point);
# white can take black's only disc from (3, 3).
BLACK_MUST_PASS = ["OOO.",
                   "OOO.",
                   "OOX.",
                   "...."]


def test_a_side_without_a_placing_move_must_pass():
    board = board_from_rows(BLACK_MUST_PASS)
    mask = np.zeros(16, dtype=bool)
    assert placing_mask(board, 4, BLACK, mask) == 0
    assert placing_mask(board, 4, WHITE, mask) > 0
    assert status(board, 4, BLACK, discs(board)) == MUST_PASS
    assert status(board, 4, WHITE, discs(board)) == MOVES


def test_wiping_out_the_opponent_ends_the_game_before_the_board_is_full():
    board = board_from_rows(["....",
                             "XO..",
                             "....",
                             "...."])
    place(board, 4, at(4, 1, 2), BLACK)
    assert discs(board) == 3 and (board == WHITE).sum() == 0
    assert status(board, 4, WHITE, 3) == OVER
    assert outcome_after(board, 4, BLACK) == MOVER_WINS
    # the same with colours swapped: the white mover wins
    assert outcome_after(-board, 4, WHITE) == MOVER_WINS


@pytest.mark.parametrize("mover", [BLACK, WHITE])
def test_blocked_board_with_both_colours_ends_the_game(mover):
    # after (0, 3) no empty point brackets anything: the black row and the white rows never meet
    board = board_from_rows(["XXO.",
                             "....",
                             "OOOO",
                             "OOOO"]) * mover
    assert place(board, 4, at(4, 0, 3), mover) == 1
    assert status(board, 4, -mover, discs(board)) == OVER
    assert status(board, 4, mover, discs(board)) == OVER
    assert outcome_after(board, 4, mover) == MOVER_LOSES  # 4 discs against 8


@pytest.mark.parametrize(("rows", "expected"), [
    # the last point: black flips 3 but keeps 6 against 10
    ([".OXO",
      "OOOO",
      "OOOO",
      "XOOO"], MOVER_LOSES),
    # the last point: black flips 1, 8 against 8
    ([".OXO",
      "XXOO",
      "OOXO",
      "OXXO"], DRAW),
    # the last point: black flips two on the top row, 9 against 7
    ([".OOX",
      "XXXX",
      "OOOO",
      "XOOO"], MOVER_WINS),
])
def test_filling_the_board_scores_the_game_from_the_movers_view(rows, expected):
    for mover in (BLACK, WHITE):
        board = board_from_rows(rows) * mover
        assert place(board, 4, 0, mover) > 0
        assert discs(board) == 16
        assert status(board, 4, -mover, 16) == OVER
        assert outcome_after(board, 4, mover) == expected


def test_a_move_that_leaves_the_opponent_a_move_is_ongoing():
    board = start_board(8)
    place(board, 8, at(8, 2, 3), BLACK)
    assert outcome_after(board, 8, BLACK) == ONGOING
    assert status(board, 8, WHITE, 5) == MOVES


@pytest.mark.parametrize("n", [4, 6, 8])
def test_random_playouts_end_the_game_and_score_it(n):
    seed_numba(7)
    values = set()
    for _ in range(50):
        board = start_board(n)
        value = random_playout(board, n, BLACK)
        values.add(value)
        assert status(board, n, BLACK, discs(board)) == OVER
        diff = int(board.sum())
        assert value == float(np.sign(diff))
    assert values <= {-1.0, 0.0, 1.0} and len(values) >= 2
