"""Gomoku (k in a row) rules as numba kernels: the one source of truth.

A position is a flat ``int8`` board of ``n * n`` points (0 empty, +1 black,
-1 white, black moves first) plus three integers: the colour to move, the last
move (-1 before the first) and the number of stones. Points are indexed
``row * n + col``. Search, encoders, protocols and tests all call these kernels.

The rule set (``game.rule``, Gomocup's ``INFO rule`` numbers): freestyle (0, k or more
wins, the kernels here), standard (1, exactly five) and renju (4: black exactly five and
no forbidden points, white five or more), whose kernels are in `stonelab.games.gomoku.renju`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from stonelab.errors import GameConfigError
from stonelab.games import registry
from stonelab.search.game import DRAW, MOVER_WINS, ONGOING  # the outcome of the move just played

BLACK = 1
WHITE = -1
EMPTY = 0


MIN_BOARD = 5
MAX_BOARD = 25  # Gomocup plays 20x20 (freestyle); Piskvork allows larger boards
NUM_PLANES = 4  # own stones, opponent stones, last move, colour to move

# The four line directions (row step, column step): horizontal, vertical, two diagonals.
DIRECTIONS = np.array([[0, 1], [1, 0], [1, 1], [1, -1]], dtype=np.int64)

# Rule sets, by Gomocup's ``INFO rule`` numbers.
FREESTYLE = 0  # k or more in a row wins
EXACT_FIVE = 1  # "standard": exactly five wins, an overline wins nothing (both sides)
RENJU = 4  # black: exactly five, and renju's forbidden points; white: five or more
RULE_NAMES = {FREESTYLE: "freestyle", EXACT_FIVE: "standard", RENJU: "renju"}


def rule_code(rule) -> int:
    """The rule set's number from its name or number (``game.rule``); refused in one line otherwise."""
    codes = {name: code for code, name in RULE_NAMES.items()}
    if isinstance(rule, str) and rule in codes:
        return codes[rule]
    if isinstance(rule, int) and not isinstance(rule, bool) and rule in RULE_NAMES:
        return rule
    raise GameConfigError(f"game.rule={rule!r}: choose freestyle (0), standard (1: exactly five) or renju (4), "
                          "Gomocup's INFO rule numbers")


@dataclass(frozen=True)
class GomokuRules:
    """Board size ``n`` (5..25), line length ``k`` that wins (3..n) and the rule set.

    Freestyle: a line of k *or more* wins; standard and renju (five in a row only): see the
    module doc. A full board with no winning line is a draw.
    """

    board_size: int
    win_length: int
    rule: int | str = FREESTYLE

    def __post_init__(self):
        object.__setattr__(self, "rule", rule_code(self.rule))  # one form: the number
        n, k = self.board_size, self.win_length
        if not isinstance(n, int) or not MIN_BOARD <= n <= MAX_BOARD:
            raise GameConfigError(
                f"game.board_size={n!r}: Gomoku boards must be {MIN_BOARD}..{MAX_BOARD}"
            )
        if not isinstance(k, int) or not 3 <= k <= n:
            raise GameConfigError(
                f"game.win_length={k!r}: needs 3 <= k <= board_size ({n}); "
                f"a line longer than the board could never be made"
            )
        if self.rule != FREESTYLE and k != 5:
            raise GameConfigError(f"game.rule={RULE_NAMES[self.rule]} is a rule of five in a row: "
                                  f"game.win_length={k} must be 5 (or game.rule=freestyle)")

    @property
    def n(self) -> int:
        return self.board_size

    @property
    def k(self) -> int:
        return self.win_length

    @property
    def num_actions(self) -> int:
        return self.n * self.n

    @property
    def name(self) -> str:
        suffix = "" if self.rule == FREESTYLE else f"_{RULE_NAMES[self.rule]}"
        return f"gomoku_{self.n}x{self.n}_c{self.k}{suffix}"

    def new_board(self) -> np.ndarray:
        return np.zeros(self.n * self.n, dtype=np.int8)

    def search_game(self, settings=None):
        """This game for `stonelab.search` (a `stonelab.games.gomoku.search.GomokuSearch`);
        ``settings``: its candidate restriction (`stonelab.games.gomoku.candidates.PruningConfig`)."""
        return registry.of(self).search(self, settings)


@njit(cache=True, nogil=True)
def run_through(board, n, move, colour, dr, dc):
    """The unbroken line of ``colour`` through ``move`` along direction (dr, dc).

    ``move`` itself counts as ``colour``. Returns (length, fr, fc, br, bc): the
    first point (row, col) beyond the forward end and beyond the backward end,
    possibly off the board.
    """
    r0 = move // n
    c0 = move % n
    length = 1
    r = r0 + dr
    c = c0 + dc
    while 0 <= r < n and 0 <= c < n and board[r * n + c] == colour:
        length += 1
        r += dr
        c += dc
    fr, fc = r, c
    r = r0 - dr
    c = c0 - dc
    while 0 <= r < n and 0 <= c < n and board[r * n + c] == colour:
        length += 1
        r -= dr
        c -= dc
    return length, fr, fc, r, c


@njit(cache=True, nogil=True)
def line_length(board, n, move):
    """Longest line through ``move`` made of the stone standing on ``move``."""
    best = 0
    for d in range(4):
        length, _, _, _, _ = run_through(board, n, move, board[move], DIRECTIONS[d, 0], DIRECTIONS[d, 1])
        if length > best:
            best = length
    return best


@njit(cache=True, nogil=True, inline="always")
def _run(board, n, r, c, dr, dc, colour, need):
    """How many ``colour`` stones follow (r, c) along (dr, dc), counting at most ``need``."""
    count = 0
    r += dr
    c += dc
    while count < need and 0 <= r < n and 0 <= c < n and board[r * n + c] == colour:
        count += 1
        r += dr
        c += dc
    return count


@njit(cache=True, nogil=True, inline="always")
def _line_along(board, n, k, r, c, dr, dc, colour):
    ahead = _run(board, n, r, c, dr, dc, colour, k - 1)
    return ahead + _run(board, n, r, c, -dr, -dc, colour, k - 1 - ahead) >= k - 1


@njit(cache=True, nogil=True)
def makes_line(board, n, k, move):
    """Whether the stone on ``move`` stands in a line of ``k`` or more of its colour.

    The question `outcome_after` asks after every move of every playout: it
    stops counting at ``k`` and after the first direction that has a line
    (`line_length` measures the longest line in full).
    """
    colour = board[move]
    r = move // n
    c = move % n
    return (_line_along(board, n, k, r, c, 0, 1, colour) or _line_along(board, n, k, r, c, 1, 0, colour)
            or _line_along(board, n, k, r, c, 1, 1, colour) or _line_along(board, n, k, r, c, 1, -1, colour))


@njit(cache=True, nogil=True)
def outcome_after(board, n, k, move, n_stones):
    """Outcome once ``move`` stands on ``board`` and the board holds ``n_stones``.

    Only lines through the last move are checked: a line elsewhere would have
    ended the game earlier.
    """
    if makes_line(board, n, k, move):
        return MOVER_WINS
    if n_stones >= n * n:
        return DRAW
    return ONGOING


@njit(cache=True, nogil=True)
def would_win(board, n, k, move, colour):
    """Whether ``colour`` playing on the empty point ``move`` makes k in a row."""
    board[move] = colour
    won = line_length(board, n, move) >= k
    board[move] = EMPTY
    return won


@njit(cache=True, nogil=True)
def legal_mask(board, out):
    """``out[a] = True`` for every empty point (every empty point is legal); returns their count."""
    count = 0
    for a in range(board.shape[0]):
        legal = board[a] == EMPTY
        out[a] = legal
        if legal:
            count += 1
    return count


@njit(cache=True, nogil=True)
def encode(board, n, to_play, last_move, out):
    """Seed 000's four planes from the mover's view into ``out[4, n, n]`` (float32).

    0: the mover's stones, 1: the opponent's, 2: the last move, 3: all ones
    when black is to move (the colour plane of AlphaZero_Gomoku).
    """
    colour_plane = 1.0 if to_play == BLACK else 0.0
    for a in range(n * n):
        r = a // n
        c = a % n
        s = board[a]
        out[0, r, c] = 1.0 if s == to_play else 0.0
        out[1, r, c] = 1.0 if s == -to_play else 0.0
        out[2, r, c] = 1.0 if a == last_move else 0.0
        out[3, r, c] = colour_plane


def encode_position(board: np.ndarray, n: int, to_play: int, last_move: int) -> np.ndarray:
    """Convenience wrapper returning a fresh ``[4, n, n]`` float32 array."""
    out = np.zeros((NUM_PLANES, n, n), dtype=np.float32)
    encode(board, n, to_play, last_move, out)
    return out


def board_from_rows(rows: list[str]) -> np.ndarray:
    """Build a board from text rows: ``X`` black, ``O`` white, ``.`` empty (tests, docs)."""
    n = len(rows)
    lookup = {"X": BLACK, "O": WHITE, ".": EMPTY}
    flat = [lookup[ch] for row in rows for ch in row.replace(" ", "")]
    if len(flat) != n * n:
        raise ValueError(f"board rows must form an {n}x{n} square")
    return np.array(flat, dtype=np.int8)
