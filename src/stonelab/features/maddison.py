"""Maddison et al. (2015) 36-plane Go features, from the view of the side to move.

Planes (``MADDISON_PLANES``, the one source of truth for the layout; a "bin" plane is 1
where the value falls in that bin):

====================  ==  =====================================================================
stones                 3  own stone, opponent stone, empty
liberties              4  liberties of the chain on the point (either colour): 1, 2, 3, >=4
liberties_after        6  for each legal point: liberties of the mover's chain after playing
                          there, captures included: 1, 2, 3, 4, 5, >=6
legal                  1  legal move for the side to move (ko and suicide respected; no
                          sensible-eye filter; superko is not looked at)
turns_since            5  stone placed 1, 2, 3, 4, >=5 moves ago (passes count as moves;
                          setup stones count as placed the move before the first move)
capture_size           7  opponent stones a legal move here captures: 1, 2, 3, 4, 5, 6, >=7
                          (0 captures: no plane set)
ladder_capture         1  playing here ataris an opponent chain that a ladder captures
rank                   9  all ones on plane r-1 for the mover's rank r = 1..9 (1d..9d);
                          all zero when the rank is unknown or kyu (rank 0)
====================  ==  =====================================================================

`encode_maddison_into` is the jitted kernel (no allocation; reuse `maddison_scratch`);
`encode_maddison` allocates for one-off use.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from stonelab.games.bits import popcount
from stonelab.games.go.rules import (
    EMPTY,
    LADDER_MAX_DEPTH,
    LADDER_MAX_NODES,
    board_size,
    ko_point,
    ladder_capture_into,
    ladder_scratch,
    move_number,
    to_play,
)

MADDISON_PLANES = (
    ("stones", 3),
    ("liberties", 4),
    ("liberties_after", 6),
    ("legal", 1),
    ("turns_since", 5),
    ("capture_size", 7),
    ("ladder_capture", 1),
    ("rank", 9),
)
NUM_PLANES = sum(count for _, count in MADDISON_PLANES)
OFFSETS = {}
_start = 0
for _name, _count in MADDISON_PLANES:
    OFFSETS[_name] = _start
    _start += _count
del _start, _name, _count

# Plane offsets as plain ints so numba freezes them as constants.
P_STONES = OFFSETS["stones"]
P_LIBS = OFFSETS["liberties"]
P_LIBS_AFTER = OFFSETS["liberties_after"]
P_LEGAL = OFFSETS["legal"]
P_TURNS = OFFSETS["turns_since"]
P_CAPTURE = OFFSETS["capture_size"]
P_LADDER = OFFSETS["ladder_capture"]
P_RANK = OFFSETS["rank"]
_TOTAL = NUM_PLANES

# The rank plane an engine sets for the side to move, whichever colour it is (a position
# has no rank of its own). Not 0: in the KGS archives (a 7d+ player, or two 6d) a rank-0
# player is a kyu or unranked one facing a high dan, who wins 24% of the games and loses
# the counted ones by 25 points on average, so a net given rank 0 calls whoever is to
# move far behind (the aux net: 32 points and a 0.04 win rate on the empty board), and
# its score and win rate in one colour's view flip sign with every move. 7d is the
# archives' most common rank (39% of the players); at it the shipped nets judge both
# colours alike and predict held-out KGS moves better than at rank 0 (top-1 0.449
# against 0.442 for the 22k net, 0.446 against 0.425 for the aux net).
PLAY_RANK = 7


@njit(cache=True, nogil=True)
def maddison_scratch(n):
    """Work arrays for `encode_maddison_into` on an n x n board (reuse them across positions)."""
    N = n * n
    W = (N + 63) // 64
    bits = np.zeros(W, dtype=np.uint64)
    return bits, ladder_scratch(n, LADDER_MAX_DEPTH)


@njit(cache=True, nogil=True)
def _set_bit(bits, p):
    bits[p >> 6] |= np.uint64(1) << np.uint64(p & 63)


@njit(cache=True, nogil=True)
def encode_maddison_into(st, rank, out, scratch):
    """Write the 36 planes of position ``st`` into ``out`` (uint8 [36, n, n], C order).

    ``rank`` is the dan rank (1..9) of the side to move, 0 when unknown or kyu.
    """
    board = st.board
    head = st.group_head
    nxt = st.group_next
    size = st.group_size
    libs = st.group_liberty_count
    libbits = st.group_liberty_bits
    placed = st.placed_move
    nbr = st.neighbours
    bits, lscratch = scratch
    n = board_size(st)
    N = n * n
    W = libbits.shape[1]
    me = to_play(st)
    ko = ko_point(st)
    move_no = move_number(st)
    o = out.reshape(_TOTAL * N)
    o[:] = 0
    if 1 <= rank <= 9:
        base = (P_RANK + rank - 1) * N
        o[base:base + N] = 1
    for p in range(N):
        s = board[p]
        if s != EMPTY:
            o[(P_STONES + (0 if s == me else 1)) * N + p] = 1
            L = libs[head[p]]
            if L >= 1:
                o[(P_LIBS + min(L, 4) - 1) * N + p] = 1
            t = move_no - placed[p]
            if t >= 1:
                o[(P_TURNS + min(t, 5) - 1) * N + p] = 1
            continue
        o[(P_STONES + 2) * N + p] = 1
        if p == ko:
            continue
        # Look at the four neighbours once: empties, own chains, opponent chains.
        empties = 0
        n_own = 0
        own_safe = False
        captured = 0
        two_lib_opp = False
        h0 = -1
        h1 = -1
        h2 = -1
        h3 = -1
        for k in range(4):
            q = nbr[p, k]
            if q < 0:
                break
            sq = board[q]
            if sq == EMPTY:
                empties += 1
                continue
            hq = head[q]
            if hq == h0 or hq == h1 or hq == h2 or hq == h3:
                continue
            if k == 0:
                h0 = hq
            elif k == 1:
                h1 = hq
            elif k == 2:
                h2 = hq
            else:
                h3 = hq
            L = libs[hq]
            if sq == me:
                n_own += 1
                if L >= 2:
                    own_safe = True
            elif L == 1:
                captured += size[hq]
            elif L == 2:
                two_lib_opp = True
        if empties == 0 and captured == 0 and not own_safe:
            continue  # suicide
        o[P_LEGAL * N + p] = 1
        if captured > 0:
            o[(P_CAPTURE + min(captured, 7) - 1) * N + p] = 1
        # Liberties after the move.
        if n_own == 0 and captured == 0:
            after = empties
        else:
            for w in range(W):
                bits[w] = 0
            for k in range(4):
                q = nbr[p, k]
                if q < 0:
                    break
                sq = board[q]
                if sq == EMPTY:
                    _set_bit(bits, q)
                elif sq == me:
                    hq = head[q]
                    for w in range(W):
                        bits[w] |= libbits[hq, w]
            if captured > 0:
                # A captured stone becomes a liberty if it touches p or a merged chain.
                for k in range(4):
                    q = nbr[p, k]
                    if q < 0:
                        break
                    if board[q] != -me or libs[head[q]] != 1:
                        continue
                    hq = head[q]
                    dup = False
                    for j in range(k):
                        q2 = nbr[p, j]
                        if board[q2] == -me and head[q2] == hq:
                            dup = True
                    if dup:
                        continue
                    x = hq
                    for _ in range(size[hq]):
                        touches = False
                        for kk in range(4):
                            t = nbr[x, kk]
                            if t < 0:
                                break
                            if t == p:
                                touches = True
                            elif board[t] == me:
                                ht = head[t]
                                for k2 in range(4):
                                    q3 = nbr[p, k2]
                                    if q3 < 0:
                                        break
                                    if board[q3] == me and head[q3] == ht:
                                        touches = True
                        if touches:
                            _set_bit(bits, x)
                        x = nxt[x]
            bits[p >> 6] &= ~(np.uint64(1) << np.uint64(p & 63))
            after = 0
            for w in range(W):
                after += popcount(bits[w])
        if after >= 1:
            o[(P_LIBS_AFTER + min(after, 6) - 1) * N + p] = 1
        if two_lib_opp and ladder_capture_into(st, p, lscratch, LADDER_MAX_DEPTH, LADDER_MAX_NODES):
            o[P_LADDER * N + p] = 1


@njit(cache=True, nogil=True)
def encode_maddison(st, rank):
    """The 36 planes of ``st`` as a fresh uint8 [36, n, n] array."""
    n = board_size(st)
    out = np.zeros((_TOTAL, n, n), dtype=np.uint8)
    encode_maddison_into(st, rank, out, maddison_scratch(n))
    return out
