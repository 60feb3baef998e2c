"""Othello (Reversi) rules as numba kernels: the one source of truth for Othello.

A board is a flat ``int8`` array of ``n * n`` points (0 empty, +1 black, -1
white; black moves first), points indexed ``row * n + col``. The game starts
from the four centre discs (white on (n/2-1, n/2-1) and (n/2, n/2), black on
(n/2-1, n/2) and (n/2, n/2-1): d4/e5 white, d5/e4 black on 8x8).

A placing move puts a disc on an empty point and flips every unbroken line of
opponent discs it brackets against another disc of the mover's, in the 8
directions; it must flip at least one. A side with no placing move must pass
(the action ``n * n``), and may pass only then. The game ends when neither side
has a placing move (a full board is one such case); more discs wins, equal
counts draw.

`status` says what the side to move may do (`MOVES`, `MUST_PASS`) or that the
game is `OVER`; the search keeps it in its position so that outcomes and legal
moves need no second scan (`stonelab.games.othello.search`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from stonelab.errors import GameConfigError
from stonelab.games import registry
from stonelab.search.game import DRAW, MOVER_LOSES, MOVER_WINS, ONGOING

BLACK = 1
WHITE = -1
EMPTY = 0

MIN_BOARD = 4
MAX_BOARD = 16

# What the side to move may do, as returned by `status`.
MOVES = 0  # it has a placing move
MUST_PASS = 1  # it has none, the other side has one: its only legal move is the pass
OVER = 2  # neither side has one: the game has ended


@dataclass(frozen=True)
class OthelloRules:
    """Board size ``n``: even, 4..16 (8 is standard Othello).

    Actions are the ``n * n`` points and the pass ``n * n`` (legal only when the
    side to move has no placing move).
    """

    board_size: int = 8

    def __post_init__(self):
        n = self.board_size
        if isinstance(n, bool) or not isinstance(n, int) or n % 2 or not MIN_BOARD <= n <= MAX_BOARD:
            # an odd board has no centre square of four discs to start from
            raise GameConfigError(f"game.board_size={n!r}: Othello boards are even, {MIN_BOARD}..{MAX_BOARD}")

    @property
    def n(self) -> int:
        return self.board_size

    @property
    def num_points(self) -> int:
        return self.n * self.n

    @property
    def pass_move(self) -> int:
        return self.num_points

    @property
    def num_actions(self) -> int:
        return self.num_points + 1

    @property
    def name(self) -> str:
        return f"othello_{self.n}x{self.n}"

    def new_board(self) -> np.ndarray:
        """The start position's board, int8 ``[n * n]``."""
        return start_board(self.n)

    def search_game(self, settings=None):
        """This game for `stonelab.search` (a `stonelab.games.othello.search.OthelloSearch`)."""
        return registry.of(self).search(self, settings)


@njit(cache=True, nogil=True)
def start_board(n):
    """int8 ``[n * n]``: the four centre discs of the standard setup."""
    board = np.zeros(n * n, dtype=np.int8)
    h = n // 2
    board[(h - 1) * n + h - 1] = WHITE
    board[h * n + h] = WHITE
    board[(h - 1) * n + h] = BLACK
    board[h * n + h - 1] = BLACK
    return board


@njit(cache=True, nogil=True, inline="always")
def bracketed(board, n, r0, c0, dr, dc, colour):
    """Opponent discs a ``colour`` disc on (r0, c0) would flip along (dr, dc).

    The board test is spelled out: numba compiles the chained ``0 <= r < n and
    0 <= c < n`` into code 4x slower (legal moves of the 8x8 start: 9.9 us
    against 2.4 us), and this loop is where perft and the playouts spend their time.
    """
    r = r0 + dr
    c = c0 + dc
    count = 0
    while r >= 0 and r < n and c >= 0 and c < n:
        s = board[r * n + c]
        if s == colour:
            return count
        if s == EMPTY:
            return 0
        count += 1
        r += dr
        c += dc
    return 0  # ran off the board: nothing closes the line


@njit(cache=True, nogil=True)
def is_placing_move(board, n, move, colour):
    """Whether ``colour`` may place a disc on ``move``: empty, and it flips something."""
    if board[move] != EMPTY:
        return False
    r = move // n
    c = move % n
    return (bracketed(board, n, r, c, -1, -1, colour) > 0 or bracketed(board, n, r, c, -1, 0, colour) > 0
            or bracketed(board, n, r, c, -1, 1, colour) > 0 or bracketed(board, n, r, c, 0, -1, colour) > 0
            or bracketed(board, n, r, c, 0, 1, colour) > 0 or bracketed(board, n, r, c, 1, -1, colour) > 0
            or bracketed(board, n, r, c, 1, 0, colour) > 0 or bracketed(board, n, r, c, 1, 1, colour) > 0)


@njit(cache=True, nogil=True)
def count_flips(board, n, move, colour):
    """Discs ``colour`` would flip by placing on the empty point ``move`` (0: not a placing move)."""
    r = move // n
    c = move % n
    return (bracketed(board, n, r, c, -1, -1, colour) + bracketed(board, n, r, c, -1, 0, colour)
            + bracketed(board, n, r, c, -1, 1, colour) + bracketed(board, n, r, c, 0, -1, colour)
            + bracketed(board, n, r, c, 0, 1, colour) + bracketed(board, n, r, c, 1, -1, colour)
            + bracketed(board, n, r, c, 1, 0, colour) + bracketed(board, n, r, c, 1, 1, colour))


@njit(cache=True, nogil=True, inline="always")
def _flip(board, n, r0, c0, dr, dc, colour):
    """Flip the discs `bracketed` counts along (dr, dc); returns how many."""
    k = bracketed(board, n, r0, c0, dr, dc, colour)
    for i in range(1, k + 1):
        board[(r0 + i * dr) * n + c0 + i * dc] = colour
    return k


@njit(cache=True, nogil=True)
def place(board, n, move, colour):
    """Place ``colour`` on the empty point ``move`` and flip; returns the discs flipped.

    Nothing changes when it flips nothing (the move is no placing move), so a
    caller may try a point and test the result. The 8 rays from one point share
    no point, so flipping one ray leaves the count of the next one unchanged.
    """
    r = move // n
    c = move % n
    total = (_flip(board, n, r, c, -1, -1, colour) + _flip(board, n, r, c, -1, 0, colour)
             + _flip(board, n, r, c, -1, 1, colour) + _flip(board, n, r, c, 0, -1, colour)
             + _flip(board, n, r, c, 0, 1, colour) + _flip(board, n, r, c, 1, -1, colour)
             + _flip(board, n, r, c, 1, 0, colour) + _flip(board, n, r, c, 1, 1, colour))
    if total > 0:
        board[move] = colour
    return total


@njit(cache=True, nogil=True)
def placing_mask(board, n, colour, out):
    """``out[p]`` for the ``n * n`` points (``out`` may be longer): whether ``colour`` may place
    there; returns how many may."""
    count = 0
    for p in range(n * n):
        ok = is_placing_move(board, n, p, colour)
        out[p] = ok
        if ok:
            count += 1
    return count


@njit(cache=True, nogil=True)
def has_placing_move(board, n, colour):
    """Whether ``colour`` has a placing move anywhere (stops at the first)."""
    for p in range(n * n):
        if is_placing_move(board, n, p, colour):
            return True
    return False


@njit(cache=True, nogil=True)
def status(board, n, to_play, discs):
    """`MOVES`, `MUST_PASS` or `OVER` for ``to_play`` on ``board`` holding ``discs`` discs."""
    if discs >= n * n:
        return OVER  # a full board: no need to look for moves
    if has_placing_move(board, n, to_play):
        return MOVES
    if has_placing_move(board, n, -to_play):
        return MUST_PASS
    return OVER


@njit(cache=True, nogil=True)
def final_outcome(board, mover):
    """MOVER_WINS / DRAW / MOVER_LOSES of a finished game by disc count, from ``mover``'s view."""
    diff = 0
    for p in range(board.shape[0]):
        diff += board[p]
    diff *= mover
    if diff > 0:
        return MOVER_WINS
    if diff < 0:
        return MOVER_LOSES
    return DRAW


@njit(cache=True, nogil=True)
def outcome_after(board, n, mover):
    """Outcome of ``mover``'s move that left ``board``: ONGOING unless the game has ended."""
    discs = 0
    for p in range(n * n):
        if board[p] != EMPTY:
            discs += 1
    if status(board, n, -mover, discs) != OVER:
        return ONGOING
    return final_outcome(board, mover)


@njit(cache=True, nogil=True)
def random_playout(board, n, to_play):
    """Play uniformly random legal moves from ``board`` (overwritten) to the end of the game;
    value +1 / 0 / -1 for ``to_play``, the side to move.

    Each ply tries the empty points in random order and plays the first placing
    move: the first hit of a random order is uniform over the placing moves, and
    most plies test only a few points instead of listing them all.
    """
    empties = np.empty(n * n, dtype=np.int32)
    count = 0
    for p in range(n * n):
        if board[p] == EMPTY:
            empties[count] = p
            count += 1
    colour = to_play
    passes = 0  # in a row: two end the game
    while count > 0 and passes < 2:
        untried = count
        played = False
        while untried > 0:
            i = np.random.randint(untried)
            p = empties[i]
            untried -= 1
            empties[i] = empties[untried]  # tried points go to the back of the list
            empties[untried] = p
            if place(board, n, p, colour) > 0:
                count -= 1
                empties[untried] = empties[count]  # drop p (now at `untried`) from the empties
                played = True
                break
        passes = 0 if played else passes + 1
        colour = -colour
    result = final_outcome(board, to_play)
    if result == MOVER_WINS:
        return 1.0
    if result == MOVER_LOSES:
        return -1.0
    return 0.0


def board_from_rows(rows: list[str]) -> np.ndarray:
    """A board from text rows: ``X`` black, ``O`` white, ``.`` empty (tests, docs)."""
    n = len(rows)
    lookup = {"X": BLACK, "O": WHITE, ".": EMPTY}
    flat = [lookup[ch] for row in rows for ch in row.replace(" ", "")]
    if len(flat) != n * n:
        raise ValueError(f"board rows must form an {n}x{n} square")
    return np.array(flat, dtype=np.int8)


def board_to_rows(board: np.ndarray, n: int) -> list[str]:
    """The inverse of `board_from_rows`."""
    chars = {BLACK: "X", WHITE: "O", EMPTY: "."}
    return ["".join(chars[int(s)] for s in board[r * n:(r + 1) * n]) for r in range(n)]
