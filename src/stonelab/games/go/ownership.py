"""Approximate end-of-game ownership of a Go game, by random playouts (numba).

Used at KGS cache-build time (`stonelab.data.kgs`) to give ``model=belief_vit`` its
belief-map target, and by the GTP engine's ``final_status_list`` and ``final_score``
(`dead_stones`: chain by chain, more playouts). From the game's final position (setup
stones and every move replayed; most KGS games end by resignation or time, so that
position is often far from settled), ``playouts`` random games are played to the end with a light policy:
capture an enemy chain in atari when one exists, else play a uniformly random legal
move that neither fills one's own single-point eye (an empty point whose on-board
neighbours are all its stones and whose diagonals hold at most one enemy stone, none
on the edge) nor puts one's own chain in self-atari. Each finished playout is scored
point by point with Tromp-Taylor rules (a stone belongs to its colour; an empty region
belongs to the only colour it reaches), and the per-point mean over playouts is kept.
Then the final position itself is scored: stones whose mean favours the other colour
are taken off as dead, and the cleaned board is scored with Tromp-Taylor rules; points
that this leaves undecided (empty regions reaching both colours) take the sign of their
playout mean when ``|mean| >= threshold``, else 0. Result: +1 black, -1 white, 0 unclear.

This is an APPROXIMATION of the real result: random playouts misjudge seki,
large unsettled groups and anything that needs reading, and a resigned game's
final position is not its end. It is a cheap, deterministic (seeded) stand-in for
a dead-stone list from a strong engine.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from stonelab.games.go.rules import (
    EMPTY,
    I_TO_PLAY,
    OK,
    GoState,
    board_size,
    copy_arrays,
    empty_regions,
    legal_reason,
    new_arrays,
    play,
    play_unchecked,
    resume_play,
    set_to_play,
    setup,
    to_play,
    tromp_taylor_owner,
)

OWNERSHIP_PLAYOUTS = 32  # part of the KGS cache format: change it and bump kgs.CACHE_FORMAT
OWNERSHIP_THRESHOLD = 0.5  # |mean ownership| below this is "unclear" (0): fewer than 75% agree


@njit(cache=True, nogil=True)
def diagonal_table(n):
    """``int32[n*n, 4]``: the on-board diagonal neighbours of each point, padded with -1."""
    N = n * n
    diag = np.full((N, 4), -1, dtype=np.int32)
    for p in range(N):
        r = p // n
        c = p % n
        k = 0
        for dr in (-1, 1):
            for dc in (-1, 1):
                rr = r + dr
                cc = c + dc
                if 0 <= rr < n and 0 <= cc < n:
                    diag[p, k] = rr * n + cc
                    k += 1
    return diag


def own_eyes(board: np.ndarray, nbr: np.ndarray, colour: int) -> np.ndarray:
    """bool[n*n]: the empty points that are single-point eyes of ``colour`` (see the module doc).

    A policy played without search uses it to stay out of its own eyes, so that it
    runs out of moves and passes when the game is over (`MovePredictor.play_moves`).
    """
    n = int(round(len(board) ** 0.5))
    diag = diagonal_table(n)
    return np.array([board[p] == EMPTY and is_own_eye(board, nbr, diag, p, colour) for p in range(n * n)])


@njit(cache=True, nogil=True)
def is_own_eye(board, nbr, diag, p, c):
    """Whether empty point ``p`` is a single-point eye of colour ``c`` (see the module doc)."""
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            break
        if board[q] != c:
            return False
    enemies = 0
    count = 0
    for k in range(4):
        q = diag[p, k]
        if q < 0:
            break
        count += 1
        if board[q] == -c:
            enemies += 1
    if count < 4:  # edge or corner
        return enemies == 0
    return enemies <= 1


@njit(cache=True, nogil=True)
def _only_liberty(libbits, h):
    """The liberty point of chain ``h`` when it has exactly one (its lowest liberty)."""
    for w in range(libbits.shape[1]):
        x = libbits[h, w]
        if x != 0:
            b = 0
            while (x >> np.uint64(b)) & np.uint64(1) == 0:
                b += 1
            return w * 64 + b
    return -1


@njit(cache=True, nogil=True)
def is_self_atari(st, p, c):
    """Whether ``c`` playing empty point ``p`` leaves its chain with one liberty and captures nothing."""
    board = st.board
    head = st.group_head
    libs = st.group_liberty_count
    libbits = st.group_liberty_bits
    nbr = st.neighbours
    W = libbits.shape[1]
    acc = np.zeros(W, dtype=np.uint64)
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            break
        s = board[q]
        if s == EMPTY:
            acc[q >> 6] |= np.uint64(1) << np.uint64(q & 63)
        elif s == c:
            for w in range(W):
                acc[w] |= libbits[head[q], w]
        elif libs[head[q]] == 1:
            return False  # captures: gains liberties
    acc[p >> 6] &= ~(np.uint64(1) << np.uint64(p & 63))
    count = 0
    for w in range(W):
        x = acc[w]
        while x != 0:
            x &= x - np.uint64(1)
            count += 1
            if count >= 2:
                return False
    return True


INVASION_SPACE = 8  # an empty area of the opponent's this large may still hold a living invader


@njit(cache=True, nogil=True)
def open_points_into(st, out, first_only=False):
    """``out[p]`` (bool[N]): the points the side to move still has to play for; returns how many
    (with ``first_only``, stops at the first: 1 or 0).

    A legal move that is no self-atari, in an empty region still to be played for: one
    Tromp-Taylor gives to nobody (the open board, dame, the area around dead stones, which
    area scoring wins by capturing them), or one of the opponent's of at least
    `INVASION_SPACE` points (room for an invader to live: the first stone on an otherwise
    empty board claims it all by the count, yet the other side has everything to play for;
    under area scoring an invasion that fails costs nothing). Also the liberty of one of its
    own chains in atari, when playing it is legal and no self-atari (it saves the chain for
    now). Seki's shared liberties are self-atari for both sides, so a seki is no open point.
    """
    board = st.board
    c = st.info[I_TO_PLAY]
    n_points = board.shape[0]
    region = np.empty(n_points, dtype=np.int32)
    size = np.empty(n_points, dtype=np.int32)
    reach = np.empty(n_points, dtype=np.int8)
    empty_regions(board, st.neighbours, region, size, reach)
    out[:] = False
    count = 0
    for p in range(n_points):
        r = region[p]
        if r < 0 or reach[r] == c or (reach[r] == -c and size[r] < INVASION_SPACE):
            continue
        if legal_reason(st, p) == OK and not is_self_atari(st, p, c):
            out[p] = True
            count += 1
            if first_only:
                return count
    for p in range(n_points):
        if board[p] == c and st.group_head[p] == p and st.group_liberty_count[p] == 1:
            liberty = _only_liberty(st.group_liberty_bits, p)
            if not out[liberty] and legal_reason(st, liberty) == OK and not is_self_atari(st, liberty, c):
                out[liberty] = True
                count += 1
                if first_only:
                    return count
    return count


@njit(cache=True, nogil=True)
def may_pass(st):
    """Whether the side to move may pass: no open point is left (`open_points_into`). The Go
    search leaves the pass out of its candidates until this holds, so every Go engine that
    searches and AlphaZero's self-play follow it; the engines' cleanup moves play the open
    points (`stonelab.protocols.gtp_search.cleanup_move`)."""
    out = np.empty(st.board.shape[0], dtype=np.bool_)
    return open_points_into(st, out, True) == 0


def open_points(state: GoState) -> np.ndarray:
    """bool[n*n]: the points ``state``'s side to move still has to play for (`open_points_into`)."""
    out = np.zeros(state.n * state.n, dtype=np.bool_)
    open_points_into(state.arrays, out)
    return out


@njit(cache=True, nogil=True)
def random_playout(st, diag, max_moves):
    """Play random moves until two passes in a row (or ``max_moves``).

    The light policy of Monte-Carlo Go programs: capture an enemy chain in atari when
    one exists (a random one of them), else a uniformly random legal move that neither
    fills one's own eye nor puts one's own chain in self-atari; pass when none is left.
    """
    board = st.board
    head = st.group_head
    libs = st.group_liberty_count
    libbits = st.group_liberty_bits
    nbr = st.neighbours
    N = board.shape[0]
    cand = np.empty(N, dtype=np.int32)
    caps = np.empty(N, dtype=np.int32)
    passes = 0
    for _ in range(max_moves):
        c = to_play(st)
        m = 0
        ncap = 0
        for p in range(N):
            s = board[p]
            if s == EMPTY:
                cand[m] = p
                m += 1
            elif s == -c and head[p] == p and libs[p] == 1:  # one entry per enemy chain in atari
                caps[ncap] = _only_liberty(libbits, p)
                ncap += 1
        chosen = N
        while ncap > 0:
            j = np.random.randint(0, ncap)
            p = caps[j]
            if legal_reason(st, p) == OK:
                chosen = p
                break
            ncap -= 1
            caps[j] = caps[ncap]
        while chosen == N and m > 0:
            j = np.random.randint(0, m)
            p = cand[j]
            if (not is_own_eye(board, nbr, diag, p, c) and legal_reason(st, p) == OK
                    and not is_self_atari(st, p, c)):
                chosen = p
                break
            m -= 1
            cand[j] = cand[m]
        play_unchecked(st, chosen)
        if chosen == N:
            passes += 1
            if passes >= 2:
                return
        else:
            passes = 0


@njit(cache=True, nogil=True)
def playout_ownership(st, playouts, seed):
    """Mean Tromp-Taylor ownership (float64 [N], +1 black) of ``playouts`` random games from ``st``."""
    np.random.seed(seed)
    N = st.board.shape[0]
    n = board_size(st)
    diag = diagonal_table(n)
    total = np.zeros(N, dtype=np.float64)
    owner = np.zeros(N, dtype=np.int8)
    for _ in range(playouts):
        s = copy_arrays(st)
        resume_play(s)
        random_playout(s, diag, 3 * N)
        tromp_taylor_owner(s.board, s.neighbours, owner)
        for p in range(N):
            total[p] += owner[p]
    if playouts > 0:
        total /= playouts
    return total


@njit(cache=True, nogil=True)
def dead_in_playouts(board, mean):
    """bool[N]: the stones whose playout mean favours the other colour (the playouts
    capture them more often than not): the dead stones of this module's estimate."""
    dead = np.zeros(board.shape[0], dtype=np.bool_)
    for p in range(board.shape[0]):
        dead[p] = board[p] != EMPTY and mean[p] * board[p] < 0
    return dead


# The GTP engine's dead-stone judgement (final_status_list, final_score), chosen against GNU
# Go's final_score on counted KGS games (scripts/final_score_vs_gnugo.py, docs/engines.md).
# More playouts than the KGS cache's 32, half with each colour moving first (one colour
# first, the side with the tempo wins local fights it would lose), misjudged the fewest
# stones. Blending in the aux net's ownership agreed with GNU Go less at every weight tried:
# it learnt these playouts' own targets on a small net and calls most dead groups alive. So
# a net's ownership only counts when a weight is asked for.
SCORING_PLAYOUTS = 128  # per colour moving first
NET_OWNERSHIP_WEIGHT = 0.0


def scoring_ownership(state: GoState, playouts: int = SCORING_PLAYOUTS, seed: int = 0) -> np.ndarray:
    """float64 [N] mean playout ownership in black's view (+1 black), ``playouts`` games
    with each colour moving first: a stone's fate should not hang on who has the move."""
    other = state.copy()
    other.to_play = -state.to_play
    return (playout_ownership(state.arrays, int(playouts), int(seed))
            + playout_ownership(other.arrays, int(playouts), int(seed))) / 2


def chain_means(state: GoState, values: np.ndarray) -> np.ndarray:
    """float64 [N]: on each stone, the mean of ``values`` over its chain (0 on empty points)."""
    stones = np.flatnonzero(state.board != EMPTY)
    heads = state.arrays.group_head[stones]
    sums = np.bincount(heads, weights=np.asarray(values, dtype=np.float64)[stones], minlength=state.board.size)
    counts = np.bincount(heads, minlength=state.board.size)
    out = np.zeros(state.board.size)
    out[stones] = sums[heads] / counts[heads]
    return out


def dead_stones(state: GoState, *, ownership: np.ndarray | None = None, net_weight: float = NET_OWNERSHIP_WEIGHT,
                playouts: int = SCORING_PLAYOUTS, seed: int = 0) -> np.ndarray:
    """bool[N]: the stones of ``state`` judged dead, whole chains at a time: a chain is dead
    when its mean ownership favours the opponent. That ownership is the playouts' mean
    (`scoring_ownership`), blended as ``(1 - net_weight) * playouts + net_weight * ownership``
    with ``ownership`` (a net's, black's view) when both are given.

    An APPROXIMATION (see the module doc): good at lone stones and small groups left
    inside settled territory; it misreads dead groups with room to make eyes in a large
    area (random play lets them live), and anything that needs reading.
    """
    mean = scoring_ownership(state, playouts, seed)
    if ownership is not None and net_weight > 0:
        mean = (1 - net_weight) * mean + net_weight * np.asarray(ownership, dtype=np.float64)
    return dead_by_mean(state, mean)


def dead_by_mean(state: GoState, mean: np.ndarray) -> np.ndarray:
    """bool[N]: the stones of ``state`` whose chain's mean ownership (black's view) favours the opponent."""
    return (state.board != EMPTY) & (chain_means(state, mean) * state.board < 0)


@njit(cache=True, nogil=True)
def final_ownership(n, setup_black, setup_white, moves, first_player, playouts, threshold, seed):
    """int8 [n*n] approximate owner of every point at the game's end: +1 black, -1 white, 0 unclear.

    The game is replayed (stopping at an illegal move, as the feature encoders do) and
    scored in two steps (see the module doc):

    1. dead stones: a stone whose playout mean favours the other colour (the playouts
       capture it more often than not) is removed from a copy of the final board;
    2. that cleaned board is scored statically with Tromp-Taylor rules: stones and
       empty regions reaching one colour only get that colour; every other point (an
       empty region reaching both, as in most resigned games) gets the sign of its
       playout mean if ``|mean| >= threshold``, else 0 (unclear).

    All zero when the setup stones are invalid.
    """
    N = n * n
    out = np.zeros(N, dtype=np.int8)
    st = new_arrays(n, moves.shape[0] + 2)
    if setup(st, setup_black, setup_white) != OK:
        return out
    set_to_play(st, first_player)
    for i in range(moves.shape[0]):
        if play(st, np.int64(moves[i])) != OK:
            break
    mean = playout_ownership(st, playouts, seed)
    board = st.board.copy()
    dead = dead_in_playouts(board, mean)
    for p in range(N):
        if dead[p]:
            board[p] = EMPTY
    static = np.zeros(N, dtype=np.int8)
    tromp_taylor_owner(board, st.neighbours, static)
    for p in range(N):
        if static[p] != 0:
            out[p] = static[p]
        elif mean[p] >= threshold:
            out[p] = 1
        elif mean[p] <= -threshold:
            out[p] = -1
    return out


def game_ownership(n: int, setup_black, setup_white, moves, first_player: int, *,
                   playouts: int = OWNERSHIP_PLAYOUTS, threshold: float = OWNERSHIP_THRESHOLD,
                   seed: int = 0) -> np.ndarray:
    """Python convenience for `final_ownership` (approximate; see the module doc)."""
    return final_ownership(n, np.asarray(setup_black, dtype=np.int16), np.asarray(setup_white, dtype=np.int16),
                           np.asarray(moves, dtype=np.int16), int(first_player), int(playouts),
                           float(threshold), int(seed))
