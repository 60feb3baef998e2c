"""Gomoku rules kernels: wins, draws, masks, encoding and rule validation."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.games.gomoku.rules import (
    BLACK,
    DRAW,
    EMPTY,
    MOVER_WINS,
    NUM_PLANES,
    ONGOING,
    WHITE,
    GameConfigError,
    GomokuRules,
    board_from_rows,
    encode,
    encode_position,
    legal_mask,
    line_length,
    outcome_after,
    would_win,
)


def idx(n: int, r: int, c: int) -> int:
    return r * n + c


def stones(board: np.ndarray) -> int:
    return int(np.count_nonzero(board))


# --- wins in every direction, at edges and corners -------------------------------------------

WIN_CASES = {
    "horizontal_middle": (
        [".......",
         ".......",
         ".......",
         ".XXXXX.",
         ".......",
         "...O...",
         "OOO...."], (3, 3)),
    "horizontal_top_edge_corner": (
        ["XXXXX..",
         ".......",
         ".......",
         ".......",
         "OOOO...",
         ".......",
         "......."], (0, 0)),
    "vertical_left_edge": (
        [".......",
         "X......",
         "X......",
         "X....O.",
         "X....O.",
         "X....O.",
         ".....O."], (5, 0)),
    "vertical_bottom_right_corner": (
        [".......",
         ".......",
         "......X",
         "......X",
         "OOOO..X",
         "......X",
         "......X"], (6, 6)),
    "diagonal_down_right_from_corner": (
        ["X......",
         ".X.....",
         "..X....",
         "...X...",
         "....X..",
         "OOOO...",
         "......."], (2, 2)),
    "diagonal_down_right_to_corner": (
        [".......",
         ".......",
         "..X....",
         "...X...",
         "....X..",
         "OOOO.X.",
         "......X"], (6, 6)),
    "anti_diagonal_top_right_corner": (
        ["......X",
         ".....X.",
         "....X..",
         "...X...",
         "..X....",
         ".......",
         "OOOO..."], (0, 6)),
    "anti_diagonal_bottom_left_corner": (
        [".......",
         ".......",
         "....X..",
         "...X...",
         "..X....",
         ".X.OOOO",
         "X......"], (6, 0)),
}


@pytest.mark.parametrize("name", sorted(WIN_CASES))
@pytest.mark.parametrize("which_stone", ["given", "every"])
def test_five_in_a_row_wins_in_every_direction(name, which_stone):
    rows, move = WIN_CASES[name]
    board = board_from_rows(rows)
    n = len(rows)
    line = [a for a in range(n * n) if board[a] == BLACK]
    assert len(line) == 5
    moves = [idx(n, *move)] if which_stone == "given" else line
    for m in moves:
        assert board[m] == BLACK
        assert line_length(board, n, m) == 5
        assert outcome_after(board, n, 5, m, stones(board)) == MOVER_WINS


@pytest.mark.parametrize("name", sorted(WIN_CASES))
def test_four_of_the_five_is_not_a_win(name):
    rows, move = WIN_CASES[name]
    board = board_from_rows(rows)
    n = len(rows)
    m = idx(n, *move)
    line = [a for a in range(n * n) if board[a] == BLACK]
    # Remove one end of the line (not the move itself): k - 1 remain.
    other_end = line[-1] if line[0] == m else line[0]
    board[other_end] = EMPTY
    assert line_length(board, n, m) == 4
    assert outcome_after(board, n, 5, m, stones(board)) == ONGOING
    # ...but with k = 4 the same four stones win.
    assert outcome_after(board, n, 4, m, stones(board)) == MOVER_WINS


def test_line_of_k_minus_one_is_not_a_win_for_white_either():
    board = board_from_rows(
        ["......",
         ".O....",
         "..O...",
         "...O..",
         "......",
         "XX.X.X"])
    n = 6
    for r in (1, 2, 3):
        assert outcome_after(board, n, 4, idx(n, r, r), stones(board)) == ONGOING
    board[idx(n, 4, 4)] = WHITE
    assert outcome_after(board, n, 4, idx(n, 4, 4), stones(board)) == MOVER_WINS
    assert outcome_after(board, n, 4, idx(n, 1, 1), stones(board)) == MOVER_WINS


def test_broken_line_is_not_a_win():
    board = board_from_rows(
        [".......",
         "XXX.XX.",
         ".......",
         "OOOO...",
         ".......",
         ".......",
         "......."])
    n = 7
    for c in (0, 1, 2, 4, 5):
        assert line_length(board, n, idx(n, 1, c)) in (2, 3)
        assert outcome_after(board, n, 5, idx(n, 1, c), stones(board)) == ONGOING


def test_line_is_counted_through_the_move_only():
    # White's five stands on the board; a black move elsewhere is judged on its own lines.
    board = board_from_rows(
        [".......",
         "OOOOO..",
         ".......",
         ".......",
         "X.X.X.X",
         ".......",
         "......X"])
    n = 7
    assert outcome_after(board, n, 5, idx(n, 6, 6), stones(board)) == ONGOING
    assert outcome_after(board, n, 5, idx(n, 1, 2), stones(board)) == MOVER_WINS


@pytest.mark.parametrize("extra", [6, 7])
def test_overline_wins_freestyle(extra):
    n = 9
    rows = ["." * n for _ in range(n)]
    rows[4] = "X" * extra + "." * (n - extra)
    rows[8] = "OOOO....."
    board = board_from_rows(rows)
    for c in range(extra):
        assert line_length(board, n, idx(n, 4, c)) == extra
        assert outcome_after(board, n, 5, idx(n, 4, c), stones(board)) == MOVER_WINS


def test_overline_made_by_joining_two_lines():
    board = board_from_rows(
        [".........",
         ".........",
         ".........",
         ".........",
         "XXX.XXX..",
         ".........",
         ".........",
         "OOO......",
         "OOO......"])
    n = 9
    move = idx(n, 4, 3)
    assert would_win(board, n, 5, move, BLACK)
    board[move] = BLACK
    assert line_length(board, n, move) == 7
    assert outcome_after(board, n, 5, move, stones(board)) == MOVER_WINS


def _drawn_board_5x5() -> np.ndarray:
    # No three in a row of one colour in any direction (k=4 can never be made).
    return board_from_rows(
        ["XXOOX",
         "OOXXO",
         "XXOOX",
         "OOXXO",
         "XXOOX"])


def test_full_board_without_line_is_a_draw():
    board = _drawn_board_5x5()
    n = 5
    assert stones(board) == n * n
    for move in range(n * n):
        assert line_length(board, n, move) < 4
        assert outcome_after(board, n, 4, move, n * n) == DRAW


def test_board_not_full_is_ongoing_and_last_stone_makes_draw():
    board = _drawn_board_5x5()
    n = 5
    last = idx(n, 2, 2)
    colour = board[last]
    board[last] = EMPTY
    assert not would_win(board, n, 4, last, colour)
    assert outcome_after(board, n, 4, idx(n, 0, 0), n * n - 1) == ONGOING
    board[last] = colour
    assert outcome_after(board, n, 4, last, n * n) == DRAW


def test_win_with_the_last_stone_is_a_win_not_a_draw():
    board = _drawn_board_5x5()
    n = 5
    # With k = 2 every stone has a same-coloured neighbour: the mover wins even on a full board.
    assert outcome_after(board, n, 2, idx(n, 4, 4), n * n) == MOVER_WINS


# --- would_win ---------------------------------------------------------------------------------

def test_would_win_detects_wins_and_leaves_board_unchanged():
    board = board_from_rows(
        [".......",
         ".XXXX..",
         ".......",
         "..O....",
         "..O....",
         "..O....",
         "..O...."])
    n = 7
    before = board.copy()
    assert would_win(board, n, 5, idx(n, 1, 0), BLACK)
    assert would_win(board, n, 5, idx(n, 1, 5), BLACK)
    assert not would_win(board, n, 5, idx(n, 1, 6), BLACK)
    assert not would_win(board, n, 5, idx(n, 1, 0), WHITE)
    assert would_win(board, n, 5, idx(n, 2, 2), WHITE)
    assert not would_win(board, n, 5, idx(n, 2, 2), BLACK)
    np.testing.assert_array_equal(board, before)
    assert board.dtype == np.int8


# --- legal moves and encoding ------------------------------------------------------------------

def test_legal_mask_marks_exactly_the_empty_points():
    board = board_from_rows(
        ["X...O",
         ".....",
         "..X..",
         ".....",
         "O...X"])
    out = np.ones(25, dtype=np.bool_)
    legal_mask(board, out)
    expected = np.ones(25, dtype=bool)
    expected[[0, 4, 12, 20, 24]] = False
    np.testing.assert_array_equal(out, expected)
    empty = np.zeros(25, dtype=np.bool_)
    legal_mask(np.zeros(25, dtype=np.int8), empty)
    assert empty.all()


ENC_ROWS = [
    "X....",
    ".O...",
    "..X..",
    ".....",
    "....O",
]


def test_encode_from_black_view():
    n = 5
    board = board_from_rows(ENC_ROWS)
    board[idx(n, 3, 1)] = WHITE  # white just played here; black to move
    last = idx(n, 3, 1)
    planes = encode_position(board, n, BLACK, last)
    assert planes.shape == (NUM_PLANES, n, n) and planes.dtype == np.float32
    grid = board.reshape(n, n)
    np.testing.assert_array_equal(planes[0], (grid == BLACK).astype(np.float32))
    np.testing.assert_array_equal(planes[1], (grid == WHITE).astype(np.float32))
    expected_last = np.zeros((n, n), dtype=np.float32)
    expected_last[3, 1] = 1
    np.testing.assert_array_equal(planes[2], expected_last)
    assert np.all(planes[3] == 1.0)


def test_encode_from_white_view():
    n = 5
    board = board_from_rows(ENC_ROWS)
    board[idx(n, 0, 4)] = BLACK
    board[idx(n, 4, 0)] = BLACK  # black just played here; white to move
    last = idx(n, 4, 0)
    planes = encode_position(board, n, WHITE, last)
    grid = board.reshape(n, n)
    np.testing.assert_array_equal(planes[0], (grid == WHITE).astype(np.float32))
    np.testing.assert_array_equal(planes[1], (grid == BLACK).astype(np.float32))
    assert planes[2].sum() == 1 and planes[2, 4, 0] == 1
    assert np.all(planes[3] == 0.0)


def test_encode_empty_board_and_overwrites_output():
    n = 5
    out = np.full((NUM_PLANES, n, n), 7.0, dtype=np.float32)
    encode(np.zeros(n * n, dtype=np.int8), n, BLACK, -1, out)
    assert np.all(out[:3] == 0.0)
    assert np.all(out[3] == 1.0)


def test_encode_swaps_own_and_opponent_planes_between_views():
    n = 5
    board = board_from_rows(ENC_ROWS)
    black_view = encode_position(board, n, BLACK, 12)
    white_view = encode_position(board, n, WHITE, 12)
    np.testing.assert_array_equal(black_view[0], white_view[1])
    np.testing.assert_array_equal(black_view[1], white_view[0])
    np.testing.assert_array_equal(black_view[2], white_view[2])
    assert not np.array_equal(black_view[3], white_view[3])


def test_board_from_rows_reads_text_and_rejects_non_squares():
    board = board_from_rows(["X.O", "...", "O.X"])
    assert board.dtype == np.int8
    np.testing.assert_array_equal(board, [1, 0, -1, 0, 0, 0, -1, 0, 1])
    with pytest.raises(ValueError):
        board_from_rows(["X..", "...."])


# --- rules validation --------------------------------------------------------------------------

def test_rules_properties():
    rules = GomokuRules(board_size=9, win_length=5)
    assert (rules.n, rules.k, rules.num_actions) == (9, 5, 81)
    board = rules.new_board()
    assert board.shape == (81,) and board.dtype == np.int8 and not board.any()
    assert "9" in rules.name and "5" in rules.name


@pytest.mark.parametrize("n", [5, 19])
def test_rules_accept_board_size_bounds(n):
    assert GomokuRules(board_size=n, win_length=5).n == n


@pytest.mark.parametrize("n", [4, 26, 0, -3])
def test_rules_reject_board_size_outside_5_to_25(n):
    with pytest.raises(GameConfigError, match=r"game\.board_size=.*must be 5\.\.25"):
        GomokuRules(board_size=n, win_length=3)


def test_gomocups_20x20_board_is_a_board():
    assert GomokuRules(board_size=20, win_length=5).name == "gomoku_20x20_c5"


@pytest.mark.parametrize(("n", "k"), [(5, 6), (9, 10), (15, 19)])
def test_rules_reject_win_length_longer_than_board(n, k):
    with pytest.raises(GameConfigError, match=r"game\.win_length") as info:
        GomokuRules(board_size=n, win_length=k)
    assert "game.board_size" not in str(info.value).split(":")[0]


@pytest.mark.parametrize("k", [0, 2])
def test_rules_reject_win_length_below_3(k):
    with pytest.raises(GameConfigError, match=r"game\.win_length"):
        GomokuRules(board_size=9, win_length=k)


def test_game_config_error_is_a_value_error():
    assert issubclass(GameConfigError, ValueError)
