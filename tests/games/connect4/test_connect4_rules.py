"""Connect Four's rules and search adapter against a plain-Python reference written here:
lines in every direction, full columns, draws, move checks, planes, and whole random games
agreeing move by move."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.errors import GameConfigError
from stonelab.games.connect4.rules import BLACK, WHITE, Connect4Rules, board_from_rows
from stonelab.games.connect4.search import NUM_PLANES, OUTCOME, Connect4Position, Connect4Search
from stonelab.search import tree as T
from stonelab.search.game import DRAW, MOVER_WINS, ONGOING

# --- a plain-Python reference: a list of columns, each a list of discs from the bottom ----------


def ref_winner(columns: list[list[int]], rows: int, k: int) -> int:
    """+1 / -1 when that colour has k in a row anywhere, 0 otherwise."""
    width = len(columns)

    def at(r, c):
        return columns[c][r] if 0 <= c < width and 0 <= r < len(columns[c]) else 0

    for c in range(width):
        for r in range(rows):
            colour = at(r, c)
            if colour and any(all(at(r + i * dr, c + i * dc) == colour for i in range(k))
                              for dr, dc in ((0, 1), (1, 0), (1, 1), (-1, 1))):
                return colour
    return 0


def ref_play(columns, column, colour):
    return [col + [colour] if i == column else list(col) for i, col in enumerate(columns)]


@pytest.mark.parametrize("size", [{"rows": 3}, {"columns": 13}, {"rows": "6"}, {"connect": 2}, {"connect": 7},
                                  {"rows": 5, "columns": 4, "connect": 5}])
def test_bad_settings_are_refused_in_one_line(size):
    with pytest.raises(GameConfigError, match=r"game\.(rows|columns|connect)="):
        Connect4Rules(**size)


def test_rules_properties():
    rules = Connect4Rules()
    assert (rules.rows, rules.columns, rules.connect, rules.num_actions, rules.num_points) == (6, 7, 4, 7, 42)
    assert rules.name == "connect4_6x7"
    search = rules.search_game()
    assert search.board_shape == (6, 7) and search.action_shape == (1, 7) and search.num_planes == NUM_PLANES


@pytest.mark.parametrize("rows, winner", [
    # across, on the bottom row
    ([".......", ".......", ".......", ".......", "ooo....", "xxxx..."], BLACK),
    # up a column
    ([".......", ".......", "o......", "o.....x", "o.....x", "o....xx"], WHITE),
    # the rising diagonal
    ([".......", ".......", "...x...", "..xo...", ".xoo...", "xoox..."], BLACK),
    # the falling diagonal
    ([".......", ".......", "o......", "xo.....", "xxo....", "xxxo..."], WHITE),
    # three only: nobody has won
    ([".......", ".......", ".......", ".......", "ooo....", "xxx.x.."], 0),
])
def test_lines_in_every_direction_win(rows, winner):
    rules = Connect4Rules()
    search = rules.search_game()
    board = board_from_rows(rows)
    columns = [[int(board[r * 7 + c]) for r in range(6) if board[r * 7 + c]] for c in range(7)]
    assert ref_winner(columns, 6, 4) == winner
    if winner:
        with pytest.raises(ValueError, match="already holds a winning line"):
            search.position(board)


def test_dropping_the_last_disc_of_a_line_wins_and_a_full_column_is_refused():
    search = Connect4Search(Connect4Rules())
    positions = search.new_positions(1)
    for column in (0, 6, 1, 6, 2, 6):  # black builds 0-1-2 along the bottom, white stacks column 6
        T.play_position(search.spec, positions, 0, column)
        assert positions.info[0, OUTCOME] == ONGOING
    T.play_position(search.spec, positions, 0, 3)
    assert positions.info[0, OUTCOME] == MOVER_WINS
    assert search.illegal_reason(positions, 0, 4) == "column 4: the game is over"
    full = search.new_positions(1)
    for _ in range(6):
        T.play_position(search.spec, full, 0, 2)
    assert search.illegal_reason(full, 0, 2) == "column 2 is full"
    assert search.illegal_reason(full, 0, 7) == "column 7 is off the board (columns 0..6)"
    assert not search.legal_moves(full, 0)[2] and search.legal_moves(full, 0).sum() == 6


def test_a_full_board_without_a_line_is_a_draw():
    # columns in threes of one colour, the colour alternating every third row: no four anywhere
    rows = ["ooxxoox", "xxooxxo", "ooxxoox", "xxooxxo", "ooxxoox", "xxooxxo"]
    board = board_from_rows(rows)
    search = Connect4Search(Connect4Rules())
    columns = [[int(board[r * 7 + c]) for r in range(6)] for c in range(7)]
    assert ref_winner(columns, 6, 4) == 0
    position = search.position(board)
    assert position.info[OUTCOME] == DRAW and not search.legal_moves(
        Connect4Position(position.board[None], position.info[None]), 0).any()


@pytest.mark.parametrize("shape", [(6, 7, 4), (4, 5, 3), (7, 6, 4)])
def test_random_games_agree_with_the_reference_move_by_move(shape):
    rows, width, k = shape
    search = Connect4Search(Connect4Rules(rows, width, k))
    rng = np.random.default_rng(sum(shape))
    for _ in range(60):
        positions, columns, colour = search.new_positions(1), [[] for _ in range(width)], BLACK
        while True:
            legal = search.legal_moves(positions, 0)
            assert legal.tolist() == [len(col) < rows for col in columns]
            move = int(rng.choice(np.flatnonzero(legal)))
            T.play_position(search.spec, positions, 0, move)
            columns = ref_play(columns, move, colour)
            winner, full = ref_winner(columns, rows, k), all(len(col) == rows for col in columns)
            expected = MOVER_WINS if winner == colour else DRAW if full else ONGOING
            assert winner in (0, colour)  # a line is always the mover's
            assert positions.info[0, OUTCOME] == expected
            if expected != ONGOING:
                break
            colour = -colour


def test_planes_from_the_movers_view():
    search = Connect4Search(Connect4Rules())
    board = board_from_rows([".......", ".......", ".......", ".......", "...o...", "..xx..."])
    planes = np.zeros((NUM_PLANES, 6, 7), dtype=np.float32)
    position = search.position(board)  # three discs: white to move
    positions = Connect4Position(position.board[None], position.info[None])
    T.encode_root(search.spec, positions, 0, planes)
    assert planes[0, 1, 3] == 1 and planes[0].sum() == 1  # white's own disc, row 1 (from the bottom)
    assert planes[1, 0, 2] == planes[1, 0, 3] == 1 and planes[1].sum() == 2
    landing = {(int(r), int(c)) for r, c in np.argwhere(planes[2])}
    assert landing == {(0, 0), (0, 1), (1, 2), (2, 3), (0, 4), (0, 5), (0, 6)}
    assert planes[3].all() and not planes[4].any()  # the second player is to move
