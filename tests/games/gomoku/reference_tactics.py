"""The full-width proof search of the Gomoku tactics suite, as first written: every reply at
every ply, no shortcut. stonelab.games.gomoku.tactics prunes replies by facts of the rules
(so that 15x15 finishes); the tests check it against this on the suites' own positions."""

from __future__ import annotations

from numba import njit

from stonelab.games.gomoku.rules import EMPTY, would_win


@njit
def _has_win(board, n, k, colour):
    for a in range(board.shape[0]):
        if board[a] == EMPTY and would_win(board, n, k, a, colour):
            return True
    return False


@njit
def _full(board):
    for a in range(board.shape[0]):
        if board[a] == EMPTY:
            return False
    return True


# The proof search is unrolled by depth (1, 3, 5, 7 plies) rather than recursive: numba's
# on-disk cache does not hold mutually recursive functions (a cached copy crashed here).

@njit
def _replies_all_lose_1(board, n, k, colour):
    """After ``colour``'s move: does it win on its next move whatever the opponent replies?"""
    if _has_win(board, n, k, -colour) or _full(board):
        return False  # the opponent wins first (or the board is full: a draw)
    for r in range(board.shape[0]):
        if board[r] != EMPTY:
            continue
        board[r] = -colour
        holds = _has_win(board, n, k, colour)
        board[r] = EMPTY
        if not holds:
            return False
    return True


@njit
def wins_within_3(board, n, k, colour):
    """Whether ``colour``, to move, makes k in a row by force within 3 plies."""
    if _has_win(board, n, k, colour):
        return True
    for a in range(board.shape[0]):
        if board[a] != EMPTY:
            continue
        board[a] = colour
        won = _replies_all_lose_1(board, n, k, colour)
        board[a] = EMPTY
        if won:
            return True
    return False


@njit
def _replies_all_lose_3(board, n, k, colour):
    """After ``colour``'s move: does it win within 3 more plies whatever the opponent replies?"""
    if _has_win(board, n, k, -colour) or _full(board):
        return False
    for r in range(board.shape[0]):
        if board[r] != EMPTY:
            continue
        board[r] = -colour
        holds = wins_within_3(board, n, k, colour)
        board[r] = EMPTY
        if not holds:
            return False
    return True


@njit
def wins_within_5(board, n, k, colour):
    """Whether ``colour``, to move, makes k in a row by force within 5 plies."""
    if _has_win(board, n, k, colour):
        return True
    for a in range(board.shape[0]):
        if board[a] != EMPTY:
            continue
        board[a] = colour
        won = _replies_all_lose_3(board, n, k, colour)
        board[a] = EMPTY
        if won:
            return True
    return False


@njit
def _replies_all_lose_5(board, n, k, colour):
    """After ``colour``'s move: does it win within 5 more plies whatever the opponent replies?"""
    if _has_win(board, n, k, -colour) or _full(board):
        return False
    for r in range(board.shape[0]):
        if board[r] != EMPTY:
            continue
        board[r] = -colour
        holds = wins_within_5(board, n, k, colour)
        board[r] = EMPTY
        if not holds:
            return False
    return True


@njit
def wins_within_7(board, n, k, colour):
    """Whether ``colour``, to move, makes k in a row by force within 7 plies."""
    if _has_win(board, n, k, colour):
        return True
    for a in range(board.shape[0]):
        if board[a] != EMPTY:
            continue
        board[a] = colour
        won = _replies_all_lose_5(board, n, k, colour)
        board[a] = EMPTY
        if won:
            return True
    return False


@njit
def forcing_moves(board, n, k, colour, plies, out):
    """Moves of ``colour`` after which it wins by force within ``plies`` (1, 3 or 5) plies
    counted from this move (1: wins at once); into ``out``, returns how many."""
    count = 0
    for a in range(board.shape[0]):
        if board[a] != EMPTY:
            continue
        ok = would_win(board, n, k, a, colour)
        if not ok and plies >= 3:
            board[a] = colour
            ok = _replies_all_lose_1(board, n, k, colour) if plies == 3 else _replies_all_lose_3(board, n, k, colour)
            board[a] = EMPTY
        if ok:
            out[count] = a
            count += 1
    return count


@njit
def safe_moves(board, n, k, colour, out):
    """Moves of ``colour`` after which the opponent has no forced win within 3 plies; returns how many."""
    count = 0
    for a in range(board.shape[0]):
        if board[a] != EMPTY:
            continue
        board[a] = colour
        lost = wins_within_3(board, n, k, -colour)
        board[a] = EMPTY
        if not lost:
            out[count] = a
            count += 1
    return count
