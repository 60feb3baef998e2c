"""Connect Four rules as numba kernels: the one source of truth for Connect Four.

A board is a flat ``int8`` array of ``rows * columns`` points (0 empty, +1 the first
player, "black"; -1 the second), indexed ``row * columns + column`` with row 0 at the
bottom. A move names a column (actions ``0 .. columns - 1``): the disc falls to the
lowest empty point of that column; a full column may not be chosen. The first line of
``connect`` discs of one colour (across, up or along either diagonal) wins; a full board
without one is a draw. The standard game is 6 rows by 7 columns, four in a row.

Why it is here: it is the game whose board is not square and whose actions are not the
board's points, so it keeps the framework honest about shapes (`stonelab.search.game`'s
``board_shape`` and ``action_shape``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from stonelab.errors import GameConfigError
from stonelab.games import registry
from stonelab.search.game import DRAW, MOVER_WINS, ONGOING

BLACK = 1  # the first player
WHITE = -1
EMPTY = 0

MIN_SIDE = 4
MAX_SIDE = 12


@dataclass(frozen=True)
class Connect4Rules:
    """``rows`` x ``columns`` board (4..12 each), ``connect`` in a row wins (3..min side).

    Actions are the ``columns`` columns.
    """

    rows: int = 6
    columns: int = 7
    connect: int = 4

    def __post_init__(self):
        for key, value in (("rows", self.rows), ("columns", self.columns)):
            if isinstance(value, bool) or not isinstance(value, int) or not MIN_SIDE <= value <= MAX_SIDE:
                raise GameConfigError(f"game.{key}={value!r}: Connect Four boards are {MIN_SIDE}..{MAX_SIDE} "
                                      "points on each side (an int)")
        k = self.connect
        if isinstance(k, bool) or not isinstance(k, int) or not 3 <= k <= min(self.rows, self.columns):
            raise GameConfigError(f"game.connect={k!r} must be an int in 3..{min(self.rows, self.columns)} "
                                  f"(it has to fit on a {self.rows}x{self.columns} board)")

    @property
    def num_points(self) -> int:
        return self.rows * self.columns

    @property
    def num_actions(self) -> int:
        return self.columns

    @property
    def name(self) -> str:
        return f"connect{self.connect}_{self.rows}x{self.columns}"

    def search_game(self, settings=None):
        """This game for `stonelab.search` (a `stonelab.games.connect4.search.Connect4Search`)."""
        return registry.of(self).search(self, settings)


# --- kernels --------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def landing_row(board, rows, columns, column):
    """The row a disc dropped in ``column`` lands on; ``rows`` when the column is full."""
    for r in range(rows):
        if board[r * columns + column] == EMPTY:
            return r
    return rows


@njit(cache=True, nogil=True)
def line_through(board, rows, columns, point, dr, dc):
    """Discs of ``point``'s colour in an unbroken line through ``point`` along (dr, dc)."""
    colour = board[point]
    r0, c0 = point // columns, point % columns
    count = 1
    for sign in (1, -1):
        r, c = r0 + sign * dr, c0 + sign * dc
        while 0 <= r < rows and 0 <= c < columns and board[r * columns + c] == colour:
            count += 1
            r += sign * dr
            c += sign * dc
    return count


@njit(cache=True, nogil=True)
def wins_at(board, rows, columns, connect, point):
    """Whether the disc on ``point`` completes a line of ``connect`` (or more)."""
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        if line_through(board, rows, columns, point, dr, dc) >= connect:
            return True
    return False


@njit(cache=True, nogil=True)
def drop(board, rows, columns, column, colour):
    """Drop a ``colour`` disc in ``column`` (not full); returns the point it landed on."""
    point = landing_row(board, rows, columns, column) * columns + column
    board[point] = colour
    return point


@njit(cache=True, nogil=True)
def outcome_after(board, rows, columns, connect, point, discs):
    """ONGOING, MOVER_WINS or DRAW after the disc on ``point`` was dropped (``discs`` on the board now)."""
    if wins_at(board, rows, columns, connect, point):
        return MOVER_WINS
    if discs == rows * columns:
        return DRAW
    return ONGOING


@njit(cache=True, nogil=True)
def random_playout(board, rows, columns, connect, to_play, discs):
    """Play ``board`` out with uniformly random columns (``board`` is overwritten); returns
    +1 / 0 / -1 for ``to_play``."""
    colour = to_play
    open_columns = np.empty(columns, dtype=np.int64)
    while discs < rows * columns:
        count = 0
        for c in range(columns):
            if board[(rows - 1) * columns + c] == EMPTY:
                open_columns[count] = c
                count += 1
        point = drop(board, rows, columns, open_columns[np.random.randint(count)], colour)
        discs += 1
        if wins_at(board, rows, columns, connect, point):
            return 1 if colour == to_play else -1
        colour = -colour
    return 0


# --- text boards (tests and docs) -----------------------------------------------------------------


def board_from_rows(rows: list[str]) -> np.ndarray:
    """A board from text rows, TOP row first: ``x`` first player, ``o`` second, ``.`` empty."""
    values = {"x": BLACK, "o": WHITE, ".": EMPTY}
    return np.array([values[ch] for line in reversed(rows) for ch in line], dtype=np.int8)
