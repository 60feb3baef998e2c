"""Seed 001's four Go planes, from the view of the side to move.

0: own stones, 1: opponent stones, 2: empty points, 3: history, a single 1 on the
point of the previous move (all zero before the first move and after a pass).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from stonelab.games.go.rules import EMPTY, board_size, last_move, to_play

SIMPLE4_PLANES = (("own", 1), ("opponent", 1), ("empty", 1), ("last_move", 1))
NUM_PLANES = 4


@njit(cache=True, nogil=True)
def encode_simple4_into(st, out):
    """Write the 4 planes of position ``st`` into ``out`` (uint8 [4, n, n], C order)."""
    board = st.board
    n = board_size(st)
    N = n * n
    me = np.int8(to_play(st))  # int8 like the board: the comparisons below vectorize
    opp = np.int8(-me)
    last = last_move(st)  # read before the writes to ``out``, which numba cannot prove apart from it
    o = out.reshape(NUM_PLANES * N)
    o[N * 3:] = 0
    for p in range(N):
        s = board[p]
        o[p] = 1 if s == me else 0
        o[N + p] = 1 if s == opp else 0
        o[2 * N + p] = 1 if s == EMPTY else 0
    if 0 <= last < N:
        o[3 * N + last] = 1


@njit(cache=True, nogil=True)
def encode_simple4(st):
    """The 4 planes of ``st`` as a fresh uint8 [4, n, n] array."""
    n = board_size(st)
    out = np.zeros((NUM_PLANES, n, n), dtype=np.uint8)
    encode_simple4_into(st, out)
    return out
