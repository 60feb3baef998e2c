"""Connect Four as the search sees it: the `stonelab.search.game` kernels over
`stonelab.games.connect4.rules`.

A search position is a `Connect4Position` namedtuple:

  board  int8  [rows * columns]  0 empty, +1 first player, -1 second (row 0 the bottom)
  info   int32 [4]               TO_PLAY (+1 / -1), LAST_POINT (-1 before the first move),
                                 NUM_DISCS, OUTCOME (of the last move, from its mover's view)

and a batch of positions is the same namedtuple with a leading axis. Actions are the
``columns`` columns (``A = columns``), on a ``(1, columns)`` action grid: the board's
left-right mirror moves column ``c`` to ``columns - 1 - c``, which is the one symmetry
of the game (gravity rules out the others). The board is ``rows x columns``, not square.

Network planes (`CONNECT4_PLANES`, ``[5, rows, columns]``, from the mover's view): own
discs, opponent discs, the points a disc would land on now, all ones (the convolutions'
zero padding then marks the edge), and all ones when the first player is to move (the
first player moves on even disc counts, a parity a small net would have to count to).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from stonelab.errors import ConfigError
from stonelab.games.connect4 import rules as R
from stonelab.games.connect4.rules import BLACK, EMPTY, Connect4Rules
from stonelab.search import game as search_game
from stonelab.search import tree as T
from stonelab.search.game import ONGOING

Connect4Game = namedtuple("Connect4Game", ["rows", "columns", "connect"])
Connect4Game.__doc__ = "Board rows, columns and the line length; scalars only (see `GomokuGame`)."
Connect4Position = namedtuple("Connect4Position", ["board", "info"])
Connect4Position.__doc__ = "board int8 [..., rows*columns], info int32 [..., 4] (TO_PLAY, LAST_POINT, NUM_DISCS, OUTCOME)."

TO_PLAY, LAST_POINT, NUM_DISCS, OUTCOME = 0, 1, 2, 3
INFO_LEN = 4

CONNECT4_PLANES = ("own_discs", "opponent_discs", "landing_points", "on_board", "first_player_to_move")
NUM_PLANES = len(CONNECT4_PLANES)


@njit(cache=True, nogil=True, inline="always")
def _position_at(game, positions, i):
    return Connect4Position(positions.board[i], positions.info[i])


@njit(cache=True, nogil=True, inline="always")
def _copy_position(game, src, dst):
    dst.board[:] = src.board
    dst.info[:] = src.info


@njit(cache=True, nogil=True)
def _clone_position(game, pos):
    return Connect4Position(pos.board.copy(), pos.info.copy())


@njit(cache=True, nogil=True)
def _play(game, pos, move):
    info = pos.info
    colour = info[TO_PLAY]
    point = R.drop(pos.board, game.rows, game.columns, move, colour)
    info[TO_PLAY] = -colour
    info[LAST_POINT] = point
    info[NUM_DISCS] += 1
    info[OUTCOME] = R.outcome_after(pos.board, game.rows, game.columns, game.connect, point, info[NUM_DISCS])


@njit(cache=True, nogil=True, inline="always")
def _outcome(game, pos):
    return pos.info[OUTCOME]


@njit(cache=True, nogil=True, inline="always")
def _to_play(game, pos):
    return pos.info[TO_PLAY]


@njit(cache=True, nogil=True, inline="always")
def _num_actions(game):
    return game.columns


@njit(cache=True, nogil=True)
def _legal_moves(game, pos, out):
    if pos.info[OUTCOME] != ONGOING:
        out[:] = False
        return 0
    top = (game.rows - 1) * game.columns
    count = 0
    for c in range(game.columns):
        out[c] = pos.board[top + c] == EMPTY
        count += out[c]
    return count


@njit(cache=True, nogil=True)
def _candidates(game, pos, priors, out):
    count = _legal_moves(game, pos, out)
    return count, count


@njit(cache=True, nogil=True)
def _encode(game, pos, out):
    rows, columns = game.rows, game.columns
    me = pos.info[TO_PLAY]
    first = 1.0 if me == BLACK else 0.0
    for r in range(rows):
        for c in range(columns):
            s = pos.board[r * columns + c]
            out[0, r, c] = 1.0 if s == me else 0.0
            out[1, r, c] = 1.0 if s == -me else 0.0
            below_filled = r == 0 or pos.board[(r - 1) * columns + c] != EMPTY
            out[2, r, c] = 1.0 if s == EMPTY and below_filled else 0.0
            out[3, r, c] = 1.0
            out[4, r, c] = first


@njit(cache=True, nogil=True)
def _rollout(game, pos):
    # only the board is played out; ``info`` is left as it was (the caller discards ``pos``)
    return R.random_playout(pos.board, game.rows, game.columns, game.connect, pos.info[TO_PLAY],
                            pos.info[NUM_DISCS])


search_game.register_game(
    Connect4Game, position_at=_position_at, copy_position=_copy_position, clone_position=_clone_position,
    play=_play, outcome=_outcome, to_play=_to_play, num_actions=_num_actions, legal_moves=_legal_moves,
    candidates=_candidates, encode=_encode, rollout=_rollout)


class Connect4Search:
    """Connect Four for `stonelab.search` (see `stonelab.search.game.SearchGame`)."""

    num_planes = NUM_PLANES

    def __init__(self, rules: Connect4Rules, settings=None):
        # Connect Four has no search settings; Gomoku's candidate restriction is refused, not ignored
        if settings is not None and getattr(settings, "enabled", False):
            raise ConfigError("candidate pruning is Gomoku's; Connect Four searches every open column")
        self.rules = rules
        self.spec = Connect4Game(rules.rows, rules.columns, rules.connect)
        self.num_actions = rules.num_actions
        self.board_shape = (rules.rows, rules.columns)
        self.action_shape = (1, rules.columns)

    def new_positions(self, count: int) -> Connect4Position:
        positions = Connect4Position(np.zeros((count, self.rules.num_points), dtype=np.int8),
                                     np.zeros((count, INFO_LEN), dtype=np.int32))
        for i in range(count):
            self.reset_position(positions, i)
        return positions

    def reset_position(self, positions: Connect4Position, i: int) -> None:
        positions.board[i] = EMPTY
        positions.info[i] = (BLACK, -1, 0, ONGOING)

    def legal_moves(self, positions: Connect4Position, i: int) -> np.ndarray:
        """bool ``[columns]``: the columns position ``i`` may play."""
        out = np.zeros(self.num_actions, dtype=np.bool_)
        T.legal_at_root(self.spec, positions, i, out)
        return out

    def illegal_reason(self, positions: Connect4Position, i: int, move: int) -> str | None:
        if not 0 <= move < self.num_actions:
            return f"column {move} is off the board (columns 0..{self.num_actions - 1})"
        if positions.info[i, OUTCOME] != ONGOING:
            return f"column {move}: the game is over"
        if positions.board[i, (self.rules.rows - 1) * self.rules.columns + move] != EMPTY:
            return f"column {move} is full"
        return None

    def position(self, board: np.ndarray, to_play: int | None = None) -> Connect4Position:
        """One search position from a board (the side to move follows from the disc counts
        unless given); a board that already holds a line is refused."""
        board = np.ascontiguousarray(board, dtype=np.int8).reshape(self.rules.num_points).copy()
        discs = int(np.count_nonzero(board))
        if to_play is None:
            to_play = BLACK if discs % 2 == 0 else -BLACK
        rows, columns, k = self.rules.rows, self.rules.columns, self.rules.connect
        if any(board[p] != EMPTY and R.wins_at(board, rows, columns, k, p) for p in range(board.size)):
            raise ValueError("this board already holds a winning line")
        info = np.array([to_play, -1, discs, ONGOING if discs < board.size else search_game.DRAW], dtype=np.int32)
        return Connect4Position(board, info)
