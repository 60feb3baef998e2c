"""Othello as the search sees it: the `stonelab.search.game` kernels over `stonelab.games.othello.rules`.

A search position is an `OthelloPosition` namedtuple:

  board  int8  [A - 1]  0 empty, +1 black, -1 white (``n * n`` points, ``row * n + col``)
  info   int32 [4]      TO_PLAY (+1 / -1), LAST_MOVE (-1 before the first, ``n * n`` a pass),
                        STATE (`rules.MOVES`, `rules.MUST_PASS`, `rules.OVER`: what the side
                        to move may do), NUM_DISCS

and a batch of positions is the same namedtuple with a leading axis. Actions are
the ``n * n`` points and the pass ``n * n`` (``A = n * n + 1``). ``play`` works
out STATE once per move, so ``outcome`` and ``legal_moves`` need no look at the
other side's moves. Candidates are all legal moves.

Network planes (`OTHELLO_PLANES`, from the mover's view): own discs, opponent
discs, the mover's legal placing moves, all ones. Colour needs no plane: the
game has no komi and the start position with colours swapped is its own mirror
image, so the same position is worth the same to either colour. Legal moves get
a plane because they depend on whole lines across the board (a small conv net
would need many layers to find them), and an all-zero legal plane shows a forced
pass. The ones plane lets the convolutions' zero padding mark the edge, where
Othello's stable discs are.

Also `perft`: counting move sequences from a position, the move generator's test.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from stonelab.errors import ConfigError
from stonelab.games.othello import rules as R
from stonelab.games.othello.rules import BLACK, EMPTY, MOVES, MUST_PASS, OVER, OthelloRules
from stonelab.search import game as search_game
from stonelab.search import tree as T
from stonelab.search.game import ONGOING

OthelloGame = namedtuple("OthelloGame", ["n"])
OthelloGame.__doc__ = "Board side ``n``; scalars only, as every kernel call passes it (see `GomokuGame`)."
OthelloPosition = namedtuple("OthelloPosition", ["board", "info"])
OthelloPosition.__doc__ = "board int8 [..., n*n], info int32 [..., 4] (TO_PLAY, LAST_MOVE, STATE, NUM_DISCS)."

# info fields
TO_PLAY, LAST_MOVE, STATE, NUM_DISCS = 0, 1, 2, 3
INFO_LEN = 4

OTHELLO_PLANES = ("own_discs", "opponent_discs", "legal_moves", "on_board")
NUM_PLANES = len(OTHELLO_PLANES)


# --- the search kernels --------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _position_at(game, positions, i):
    return OthelloPosition(positions.board[i], positions.info[i])


@njit(cache=True, nogil=True, inline="always")
def _copy_position(game, src, dst):
    dst.board[:] = src.board
    dst.info[:] = src.info


@njit(cache=True, nogil=True)
def _clone_position(game, pos):
    return OthelloPosition(pos.board.copy(), pos.info.copy())


@njit(cache=True, nogil=True)
def _play(game, pos, move):
    n = game.n
    info = pos.info
    colour = info[TO_PLAY]
    info[TO_PLAY] = -colour
    info[LAST_MOVE] = move
    if move == n * n:
        # a pass is legal only when the other side has a placing move: it now moves
        info[STATE] = MOVES
        return
    R.place(pos.board, n, move, colour)
    info[NUM_DISCS] += 1
    info[STATE] = R.status(pos.board, n, -colour, info[NUM_DISCS])


@njit(cache=True, nogil=True, inline="always")
def _outcome(game, pos):
    if pos.info[STATE] != OVER:
        return ONGOING
    return R.final_outcome(pos.board, -pos.info[TO_PLAY])  # the mover: the side not to play


@njit(cache=True, nogil=True, inline="always")
def _to_play(game, pos):
    return pos.info[TO_PLAY]


@njit(cache=True, nogil=True, inline="always")
def _num_actions(game):
    return game.n * game.n + 1


@njit(cache=True, nogil=True)
def _legal_moves(game, pos, out):
    n = game.n
    state = pos.info[STATE]
    if state == MOVES:
        out[n * n] = False
        return R.placing_mask(pos.board, n, pos.info[TO_PLAY], out)
    out[:] = False
    if state == MUST_PASS:
        out[n * n] = True
        return 1
    return 0


@njit(cache=True, nogil=True)
def _candidates(game, pos, priors, out):
    count = _legal_moves(game, pos, out)
    return count, count


@njit(cache=True, nogil=True)
def _encode(game, pos, out):
    n = game.n
    me = pos.info[TO_PLAY]
    for a in range(n * n):
        r = a // n
        c = a % n
        s = pos.board[a]
        out[0, r, c] = 1.0 if s == me else 0.0
        out[1, r, c] = 1.0 if s == -me else 0.0
        out[2, r, c] = 1.0 if s == EMPTY and R.is_placing_move(pos.board, n, a, me) else 0.0
        out[3, r, c] = 1.0


@njit(cache=True, nogil=True)
def _rollout(game, pos):
    # only the board is played out; ``info`` is left as it was (the caller discards ``pos``)
    return R.random_playout(pos.board, game.n, pos.info[TO_PLAY])


search_game.register_game(
    OthelloGame, position_at=_position_at, copy_position=_copy_position, clone_position=_clone_position,
    play=_play, outcome=_outcome, to_play=_to_play, num_actions=_num_actions, legal_moves=_legal_moves,
    candidates=_candidates, encode=_encode, rollout=_rollout)


# --- perft ---------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _move_list(game, pos, mask, out):
    """The legal moves of ``pos`` into int32 ``out[A]`` (ascending); returns how many."""
    count = 0
    _legal_moves(game, pos, mask)
    for a in range(mask.shape[0]):
        if mask[a]:
            out[count] = a
            count += 1
    return count


@njit(cache=True, nogil=True)
def perft_kernel(game, root, depth):
    """Move sequences of length ``depth`` from ``root``; a forced pass is a move, and a game that
    ends sooner is a leaf counted once. An iterative depth-first walk, one position per level."""
    if depth == 0 or root.info[STATE] == OVER:
        return 1
    a = _num_actions(game)
    boards = np.empty((depth, root.board.shape[0]), dtype=np.int8)
    infos = np.empty((depth, INFO_LEN), dtype=np.int32)
    moves = np.empty((depth, a), dtype=np.int32)
    count = np.zeros(depth, dtype=np.int64)
    tried = np.zeros(depth, dtype=np.int64)
    mask = np.empty(a, dtype=np.bool_)
    boards[0] = root.board
    infos[0] = root.info
    count[0] = _move_list(game, OthelloPosition(boards[0], infos[0]), mask, moves[0])
    if depth == 1:
        return count[0]
    total = 0
    level = 0
    while level >= 0:
        if tried[level] == count[level]:
            level -= 1
            continue
        move = moves[level, tried[level]]
        tried[level] += 1
        child = level + 1
        boards[child] = boards[level]
        infos[child] = infos[level]
        pos = OthelloPosition(boards[child], infos[child])
        _play(game, pos, move)
        if pos.info[STATE] == OVER:
            total += 1
            continue
        found = _move_list(game, pos, mask, moves[child])
        if child == depth - 1:
            total += found  # the last ply: count the moves without playing them
            continue
        count[child] = found
        tried[child] = 0
        level = child
    return total


def perft(game_or_n, position: OthelloPosition | None = None, depth: int = 1) -> int:
    """`perft_kernel` from ``position`` (default: the start position) of an `OthelloGame`
    or a board side ``n``."""
    game = game_or_n if isinstance(game_or_n, OthelloGame) else OthelloGame(int(game_or_n))
    if position is None:
        position = OthelloSearch(OthelloRules(game.n)).new_positions(1)
        position = OthelloPosition(position.board[0], position.info[0])
    return int(perft_kernel(game, position, int(depth)))


# --- Python side ---------------------------------------------------------------------------------


class OthelloSearch:
    """Othello for `stonelab.search` (see `stonelab.search.game.SearchGame`)."""

    num_planes = NUM_PLANES

    def __init__(self, rules: OthelloRules, settings=None):
        # Othello has no search settings; Gomoku's candidate restriction is refused, not ignored
        if settings is not None and getattr(settings, "enabled", False):
            raise ConfigError("candidate pruning is Gomoku's; Othello searches all legal moves")
        self.rules = rules
        self.spec = OthelloGame(rules.n)
        self.num_actions = rules.num_actions
        self.board_shape = self.action_shape = (rules.n, rules.n)
        self.pass_move = rules.pass_move

    def new_positions(self, count: int) -> OthelloPosition:
        positions = OthelloPosition(np.zeros((count, self.rules.num_points), dtype=np.int8),
                                    np.zeros((count, INFO_LEN), dtype=np.int32))
        for i in range(count):
            self.reset_position(positions, i)
        return positions

    def reset_position(self, positions: OthelloPosition, i: int) -> None:
        positions.board[i] = R.start_board(self.rules.n)
        positions.info[i] = (BLACK, -1, MOVES, 4)

    def legal_moves(self, positions: OthelloPosition, i: int) -> np.ndarray:
        """bool ``[A]``: the legal moves of position ``i`` (the pass is the last)."""
        out = np.zeros(self.num_actions, dtype=np.bool_)
        T.legal_at_root(self.spec, positions, i, out)
        return out

    def illegal_reason(self, positions: OthelloPosition, i: int, move: int) -> str | None:
        n, colour = self.rules.n, int(positions.info[i, TO_PLAY])
        board, state = positions.board[i], int(positions.info[i, STATE])
        if not 0 <= move < self.num_actions:
            return f"point {move} is off the board"
        if state == OVER:
            return f"move {move}: the game is over"
        if move == self.pass_move:
            if state == MOVES:
                return f"move {move}: no pass while a move exists"
            return None
        if board[move] != EMPTY:
            return f"point {move} is occupied"
        if R.count_flips(board, n, move, colour) == 0:
            forced = " (the side to move must pass)" if state == MUST_PASS else ""
            return f"point {move} flips nothing{forced}"
        return None

    def position(self, board: np.ndarray, to_play: int, last_move: int = -1) -> OthelloPosition:
        """One search position from a board, the colour to move and the last move."""
        n = self.rules.n
        board = np.ascontiguousarray(board, dtype=np.int8).reshape(n * n).copy()
        discs = int(np.count_nonzero(board))
        info = np.array([to_play, last_move, R.status(board, n, int(to_play), discs), discs], dtype=np.int32)
        return OthelloPosition(board, info)
