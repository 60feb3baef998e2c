"""Go rules as numba kernels: the one source of truth for Go.

A position is a `GoArrays` named tuple of numpy arrays (built by `new_arrays`), so that
search, feature encoders and SGF replay can call the kernels inside numba with no
Python in between; numba reads its fields by name at the cost of a plain tuple.
Points are ``row * n + col`` (0..N-1, N = n*n); the pass move is N.
Colours: +1 black, -1 white, 0 empty. A group is a chain of connected same-coloured
stones; its id (its "head") is one of its points.

``GoArrays`` fields (other modules use these names, never positions):

- ``board``               int8[N]      colour on each point.
- ``group_head``          int32[N]     group id of each stone, -1 on empty points.
- ``group_next``          int32[N]     next stone of the same group: each group is a ring.
- ``group_size``          int32[N]     stones in the group, indexed by group id.
- ``group_liberty_count`` int32[N]     exact liberty count of the group, indexed by group id.
- ``group_liberty_bits``  uint64[N, W] the group's liberties as a bitset, indexed by group
                                       id (W = ceil(N / 64) words; `stonelab.games.bits`).
- ``placed_move``         int32[N]     move number at which the stone on that point was placed.
- ``info``                int64[INFO_LEN] the scalars: read them with the accessors
                                       (`board_size`, `to_play`, `ko_point`, `move_number`,
                                       `last_move`, `consecutive_passes`, `is_over`, ...),
                                       not by slot.
- ``position_hashes``     uint64[cap]  Zobrist hashes of the whole-board positions so far,
                                       oldest first; the current one is `current_hash`.
- ``neighbours``          int32[N, 4]  on-board neighbours of each point, -1 padded at the end.

Chains are kept incrementally: playing a stone merges the neighbouring chains of its
colour (relabelling the smaller one), removes it from its neighbours' liberty bitsets
and lifts opponent chains left with no liberty, giving their points back as liberties.
Nothing floods the board on a move. Liberty counts are exact (not pseudo-liberties).

Rules: captures, suicide illegal, simple ko, optional positional superko (a stone move
that recreates any earlier whole-board position is illegal), two passes in a row end the
game, area (Tromp-Taylor) scoring with komi, setup (handicap) stones.

Also here: `replay_game` (a whole game checked inside numba, for SGF ingest) and a
ladder reader (`ladder_capture`, `ladder_escape`) for the feature encoders.
`GoRules` / `GoState` wrap it all for Python callers and raise `IllegalMove`.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np
from numba import njit

from stonelab.errors import GameConfigError, StonelabError
from stonelab.games import registry
from stonelab.games.bits import popcount

BLACK = 1
WHITE = -1
EMPTY = 0

MIN_BOARD = 9
MAX_BOARD = 19

GoArrays = namedtuple("GoArrays", (
    "board", "group_head", "group_next", "group_size", "group_liberty_count", "group_liberty_bits",
    "placed_move", "info", "position_hashes", "neighbours",
))
GoArrays.__doc__ = "A Go position's arrays, see the module doc for each field's dtype and shape."

# Slots of the ``info`` array (read them through the accessors below).
I_SIZE = 0  # board side n
I_TO_PLAY = 1  # colour to move
I_KO = 2  # point of the single stone just captured in a ko shape, -1 if none
I_PASSES = 3  # consecutive passes just played
I_MOVE = 4  # moves (passes included) played since the start
I_OVER = 5  # 1 once two passes in a row ended the game
I_NHASH = 6  # number of valid entries in ``hashes``
I_SUPERKO = 7  # 1 when positional superko is enforced
I_LAST = 8  # last move (N for a pass), -1 before the first move
I_CAPS_BLACK = 9  # white stones captured by black so far
I_CAPS_WHITE = 10  # black stones captured by white so far
I_KO_COLOUR = 11  # the colour I_KO binds: that of the stone captured there (it may not retake at once)
INFO_LEN = 12

# Reasons a move is illegal, as returned by `legal_reason` / `play` (0 = legal).
OK = 0
OFF_BOARD = 1
OCCUPIED = 2
SUICIDE = 3
KO = 4
SUPERKO = 5
GAME_OVER = 6
REASONS = ("ok", "off_board", "occupied", "suicide", "ko", "superko", "game_over")

# `replay_game` status when the setup stones themselves are invalid.
SETUP_INVALID = -2

# Ladder reading limits (plies of the ladder sequence, nodes visited per question).
LADDER_MAX_DEPTH = 80
LADDER_MAX_NODES = 2000

# Zobrist keys: [colour index (0 black, 1 white), point]; fixed seed, so hashes are stable.
ZOBRIST = np.random.default_rng(0x60BA5E).integers(
    1, np.iinfo(np.uint64).max, size=(2, MAX_BOARD * MAX_BOARD), dtype=np.uint64
)

_ONE = np.uint64(1)


class IllegalMove(StonelabError):
    """A move the rules forbid; ``reason`` is one of `REASONS` (never "ok")."""

    def __init__(self, reason: str, move: int | None = None, detail: str = ""):
        self.reason = reason
        self.move = move
        where = "" if move is None else f" at {move}"
        super().__init__(f"illegal move{where}: {reason}{detail}")


# --- small helpers -------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _cidx(colour):
    return 0 if colour == BLACK else 1


@njit(cache=True, nogil=True)
def _add_lib(libbits, libs, h, p):
    """Make ``p`` a liberty of chain ``h`` (no-op if it already is one)."""
    w = p >> 6
    bit = _ONE << np.uint64(p & 63)
    if libbits[h, w] & bit == 0:
        libbits[h, w] |= bit
        libs[h] += 1


@njit(cache=True, nogil=True)
def _remove_lib(libbits, libs, h, p):
    """``p`` stops being a liberty of chain ``h`` (no-op if it was not one)."""
    w = p >> 6
    bit = _ONE << np.uint64(p & 63)
    if libbits[h, w] & bit != 0:
        libbits[h, w] &= ~bit
        libs[h] -= 1


@njit(cache=True, nogil=True)
def neighbour_table(n):
    """``int32[n*n, 4]``: the on-board neighbours of each point, padded with -1."""
    N = n * n
    nbr = np.full((N, 4), -1, dtype=np.int32)
    for p in range(N):
        r = p // n
        c = p % n
        k = 0
        if r > 0:
            nbr[p, k] = p - n
            k += 1
        if c > 0:
            nbr[p, k] = p - 1
            k += 1
        if c < n - 1:
            nbr[p, k] = p + 1
            k += 1
        if r < n - 1:
            nbr[p, k] = p + n
            k += 1
    return nbr


# --- state ----------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def new_arrays(n, hash_capacity):
    """An empty n x n position with black to move; room for ``hash_capacity`` hashes."""
    if n < MIN_BOARD or n > MAX_BOARD:
        raise ValueError("Go board size must be 9..19")
    N = n * n
    W = (N + 63) // 64
    board = np.zeros(N, dtype=np.int8)
    head = np.full(N, -1, dtype=np.int32)
    nxt = np.full(N, -1, dtype=np.int32)
    size = np.zeros(N, dtype=np.int32)
    libs = np.zeros(N, dtype=np.int32)
    libbits = np.zeros((N, W), dtype=np.uint64)
    placed = np.zeros(N, dtype=np.int32)
    info = np.zeros(INFO_LEN, dtype=np.int64)
    hashes = np.zeros(max(hash_capacity, 2), dtype=np.uint64)
    info[I_SIZE] = n
    info[I_TO_PLAY] = BLACK
    info[I_KO] = -1
    info[I_LAST] = -1
    info[I_NHASH] = 1  # hashes[0] = 0: the empty board
    return GoArrays(board, head, nxt, size, libs, libbits, placed, info, hashes, neighbour_table(n))


@njit(cache=True, nogil=True)
def copy_arrays(st):
    """A deep copy of a position (the neighbour table, never written, is shared)."""
    return GoArrays(
        st.board.copy(), st.group_head.copy(), st.group_next.copy(), st.group_size.copy(),
        st.group_liberty_count.copy(), st.group_liberty_bits.copy(), st.placed_move.copy(),
        st.info.copy(), st.position_hashes.copy(), st.neighbours,
    )


# --- the info scalars -----------------------------------------------------------------------------
#
# Inlined at numba IR level, so that reading a scalar by name costs what indexing ``info`` did.


@njit(cache=True, nogil=True, inline="always")
def board_size(st):
    """The board side n."""
    return st.info[I_SIZE]


@njit(cache=True, nogil=True, inline="always")
def to_play(st):
    """The colour to move (+1 black, -1 white)."""
    return st.info[I_TO_PLAY]


@njit(cache=True, nogil=True, inline="always")
def set_to_play(st, colour):
    """Make ``colour`` (+1 / -1) the side to move (setup positions, KGS colour repeats)."""
    st.info[I_TO_PLAY] = colour


@njit(cache=True, nogil=True, inline="always")
def ko_point(st):
    """The point the side to move may not retake (simple ko), -1 if none.

    The ban binds only the colour whose stone was just captured there: when the capturer
    moves again (GTP, SGF and KGS records let one colour move twice in a row), the ko
    point is an ordinary empty point for it.
    """
    return st.info[I_KO] if st.info[I_KO_COLOUR] == st.info[I_TO_PLAY] else -1


@njit(cache=True, nogil=True, inline="always")
def move_number(st):
    """Moves (passes included) played since the start."""
    return st.info[I_MOVE]


@njit(cache=True, nogil=True, inline="always")
def last_move(st):
    """The last move (N for a pass), -1 before the first move."""
    return st.info[I_LAST]


@njit(cache=True, nogil=True, inline="always")
def consecutive_passes(st):
    """Passes just played in a row."""
    return st.info[I_PASSES]


@njit(cache=True, nogil=True, inline="always")
def is_over(st):
    """Whether two passes in a row ended the game."""
    return st.info[I_OVER] != 0


@njit(cache=True, nogil=True, inline="always")
def resume_play(st):
    """Forget the passes just played and the end of the game, so that play may go on
    (a KGS scoring dispute, a random playout from a finished position)."""
    st.info[I_PASSES] = 0
    st.info[I_OVER] = 0


@njit(cache=True, nogil=True, inline="always")
def superko_enforced(st):
    return st.info[I_SUPERKO] != 0


@njit(cache=True, nogil=True, inline="always")
def set_superko(st, enforced):
    """Enforce positional superko (or not) from now on."""
    st.info[I_SUPERKO] = 1 if enforced else 0


@njit(cache=True, nogil=True, inline="always")
def captures(st):
    """(stones captured by black, stones captured by white)."""
    return st.info[I_CAPS_BLACK], st.info[I_CAPS_WHITE]


@njit(cache=True, nogil=True, inline="always")
def current_hash(st):
    """Zobrist hash of the current whole-board position."""
    return st.position_hashes[st.info[I_NHASH] - 1]


# --- legality -------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _hash_after(st, p, c):
    """Zobrist hash of the position after ``c`` plays the (non-suicidal) empty point ``p``."""
    board = st.board
    head = st.group_head
    nxt = st.group_next
    size = st.group_size
    libs = st.group_liberty_count
    info = st.info
    hashes = st.position_hashes
    nbr = st.neighbours
    h = hashes[info[I_NHASH] - 1] ^ ZOBRIST[_cidx(c), p]
    oi = _cidx(-c)
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            break
        if board[q] == -c and libs[head[q]] == 1:
            hq = head[q]
            dup = False
            for j in range(k):
                q2 = nbr[p, j]
                if board[q2] == -c and head[q2] == hq:
                    dup = True
            if not dup:
                s = hq
                for _ in range(size[hq]):
                    h ^= ZOBRIST[oi, s]
                    s = nxt[s]
    return h


@njit(cache=True, nogil=True)
def is_suicide(st, p, c):
    """Whether ``c`` playing the empty point ``p`` would leave its own chain without liberties."""
    board = st.board
    head = st.group_head
    libs = st.group_liberty_count
    nbr = st.neighbours
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            break
        s = board[q]
        if s == EMPTY:
            return False
        L = libs[head[q]]
        if s == c:
            if L >= 2:
                return False
        elif L == 1:
            return False  # captures
    return True


@njit(cache=True, nogil=True)
def legal_reason(st, move):
    """``OK`` (0) if the side to move may play ``move`` (N = pass), else the reason code."""
    board = st.board
    info = st.info
    hashes = st.position_hashes
    N = board.shape[0]
    if move < 0 or move > N:
        return OFF_BOARD
    if info[I_OVER] != 0:
        return GAME_OVER
    if move == N:
        return OK
    if board[move] != EMPTY:
        return OCCUPIED
    if move == ko_point(st):
        return KO
    c = info[I_TO_PLAY]
    if is_suicide(st, move, c):
        return SUICIDE
    if info[I_SUPERKO] != 0:
        h = _hash_after(st, move, c)
        for i in range(info[I_NHASH]):
            if hashes[i] == h:
                return SUPERKO
    return OK


@njit(cache=True, nogil=True)
def legal_mask(st, out):
    """``out[m] = True`` for every legal move m of the side to move (bool[N + 1]; N = pass)."""
    for m in range(out.shape[0]):
        out[m] = legal_reason(st, m) == OK


# --- making moves ---------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _merge(st, a, b):
    """Merge chains ``a`` and ``b`` (chain ids); returns the id of the merged chain."""
    head = st.group_head
    nxt = st.group_next
    size = st.group_size
    libs = st.group_liberty_count
    libbits = st.group_liberty_bits
    if size[a] < size[b]:
        a, b = b, a
    s = b
    for _ in range(size[b]):
        head[s] = a
        s = nxt[s]
    na = nxt[a]
    nxt[a] = nxt[b]
    nxt[b] = na
    size[a] += size[b]
    count = 0
    for w in range(libbits.shape[1]):
        libbits[a, w] |= libbits[b, w]
        count += popcount(libbits[a, w])
    libs[a] = count
    return a


@njit(cache=True, nogil=True)
def _remove_chain(st, h):
    """Lift chain ``h`` off the board; returns (stones removed, hash delta)."""
    board = st.board
    head = st.group_head
    nxt = st.group_next
    size = st.group_size
    libs = st.group_liberty_count
    libbits = st.group_liberty_bits
    nbr = st.neighbours
    colour = board[h]
    ci = _cidx(colour)
    count = size[h]
    delta = np.uint64(0)
    s = h
    for _ in range(count):
        board[s] = EMPTY
        head[s] = -1
        delta ^= ZOBRIST[ci, s]
        s = nxt[s]
    s = h
    for _ in range(count):
        for k in range(4):
            t = nbr[s, k]
            if t < 0:
                break
            if board[t] != EMPTY:  # a stone of the capturing colour
                _add_lib(libbits, libs, head[t], s)
        following = nxt[s]
        nxt[s] = -1
        s = following
    size[h] = 0
    libs[h] = 0
    return count, delta


@njit(cache=True, nogil=True)
def _place(st, p, c, capture):
    """Put a ``c`` stone on the empty point ``p``, updating chains.

    With ``capture`` opponent chains left without liberties are removed. Returns
    (stones captured, the last captured chain's id, hash delta).
    """
    board = st.board
    head = st.group_head
    nxt = st.group_next
    size = st.group_size
    libs = st.group_liberty_count
    libbits = st.group_liberty_bits
    placed = st.placed_move
    info = st.info
    nbr = st.neighbours
    board[p] = c
    head[p] = p
    nxt[p] = p
    size[p] = 1
    placed[p] = info[I_MOVE]
    for w in range(libbits.shape[1]):
        libbits[p, w] = 0
    libs[p] = 0
    delta = ZOBRIST[_cidx(c), p]
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            break
        if board[q] == EMPTY:
            _add_lib(libbits, libs, p, q)
        else:
            hq = head[q]
            dup = False
            for j in range(k):
                q2 = nbr[p, j]
                if board[q2] != EMPTY and head[q2] == hq:
                    dup = True
            if not dup:
                _remove_lib(libbits, libs, hq, p)
    me = p
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            break
        if board[q] == c and head[q] != me:
            me = _merge(st, me, head[q])
    captured = 0
    last = -1
    if capture:
        for k in range(4):
            q = nbr[p, k]
            if q < 0:
                break
            if board[q] == -c and libs[head[q]] == 0:
                last = head[q]
                removed, d = _remove_chain(st, last)
                captured += removed
                delta ^= d
    return captured, last, delta


@njit(cache=True, nogil=True)
def play_unchecked(st, move):
    """Play ``move`` for the side to move, which the caller knows to be legal."""
    board = st.board
    head = st.group_head
    size = st.group_size
    libs = st.group_liberty_count
    info = st.info
    hashes = st.position_hashes
    N = board.shape[0]
    c = info[I_TO_PLAY]
    if move == N:
        info[I_PASSES] += 1
        if info[I_PASSES] >= 2:
            info[I_OVER] = 1
        info[I_KO] = -1
    else:
        info[I_PASSES] = 0
        captured, last, delta = _place(st, move, c, True)
        h = head[move]
        if captured == 1 and size[h] == 1 and libs[h] == 1:
            info[I_KO] = last
            info[I_KO_COLOUR] = -c
        else:
            info[I_KO] = -1
        if c == BLACK:
            info[I_CAPS_BLACK] += captured
        else:
            info[I_CAPS_WHITE] += captured
        new_hash = hashes[info[I_NHASH] - 1] ^ delta
        if info[I_NHASH] < hashes.shape[0]:
            info[I_NHASH] += 1
        hashes[info[I_NHASH] - 1] = new_hash  # full: the newest hash overwrites the last slot
    info[I_LAST] = move
    info[I_MOVE] += 1
    info[I_TO_PLAY] = -c


@njit(cache=True, nogil=True)
def play(st, move):
    """Play ``move`` if legal; returns ``OK`` or the reason code (and leaves ``st`` unchanged)."""
    reason = legal_reason(st, move)
    if reason == OK:
        play_unchecked(st, move)
    return reason


@njit(cache=True, nogil=True)
def setup(st, black, white):
    """Put setup (handicap) stones on the board: no captures, no move, ko cleared.

    Returns ``OK``, or ``OFF_BOARD`` / ``OCCUPIED`` (a point off the board, taken or
    listed twice: nothing is placed) or ``SUICIDE`` (a chain left without liberties: the
    stones are placed and the position is unusable). Setup stones count as placed one
    move before the current move (``placed = move - 1``); the side to move is unchanged.
    """
    board = st.board
    head = st.group_head
    libs = st.group_liberty_count
    placed = st.placed_move
    info = st.info
    hashes = st.position_hashes
    N = board.shape[0]
    seen = np.zeros(N, dtype=np.bool_)
    for i in range(black.shape[0] + white.shape[0]):
        p = black[i] if i < black.shape[0] else white[i - black.shape[0]]
        if p < 0 or p >= N:
            return OFF_BOARD
        if board[p] != EMPTY or seen[p]:
            return OCCUPIED
        seen[p] = True
    delta = np.uint64(0)
    for i in range(black.shape[0] + white.shape[0]):
        if i < black.shape[0]:
            p = np.int64(black[i])
            colour = BLACK
        else:
            p = np.int64(white[i - black.shape[0]])
            colour = WHITE
        _, _, d = _place(st, p, colour, False)
        delta ^= d
        placed[p] = info[I_MOVE] - 1
    hashes[info[I_NHASH] - 1] ^= delta
    info[I_KO] = -1
    for p in range(N):
        if board[p] != EMPTY and libs[head[p]] == 0:
            return SUICIDE
    return OK


# --- scoring --------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def empty_regions(board, nbr, region, size, reach):
    """Label the empty regions: ``region[p]`` the region of empty point ``p`` (-1 on stones);
    ``size[r]`` its points, ``reach[r]`` +1 / -1 when it touches only black / white stones, 0
    when both or none (Tromp-Taylor's owner). Returns the number of regions."""
    n_points = board.shape[0]
    stack = np.empty(n_points, dtype=np.int32)
    region[:] = -1
    count = 0
    for p in range(n_points):
        if board[p] != EMPTY or region[p] >= 0:
            continue
        region[p] = count
        stack[0] = p
        top = 1
        points = 0
        black = False
        white = False
        while top > 0:
            top -= 1
            q = stack[top]
            points += 1
            for k in range(4):
                t = nbr[q, k]
                if t < 0:
                    break
                if board[t] == EMPTY:
                    if region[t] < 0:
                        region[t] = count
                        stack[top] = t
                        top += 1
                elif board[t] == BLACK:
                    black = True
                else:
                    white = True
        size[count] = points
        reach[count] = 1 if black and not white else -1 if white and not black else 0
        count += 1
    return count


@njit(cache=True, nogil=True)
def tromp_taylor_owner(board, nbr, out):
    """``out[p]``: +1 / -1 for a stone or an empty region reaching only black / white, else 0."""
    N = board.shape[0]
    region = np.empty(N, dtype=np.int32)
    size = np.empty(N, dtype=np.int32)
    reach = np.empty(N, dtype=np.int8)
    empty_regions(board, nbr, region, size, reach)
    for p in range(N):
        out[p] = board[p] if board[p] != EMPTY else reach[region[p]]


@njit(cache=True, nogil=True)
def area_counts(st):
    """(black area, white area), Tromp-Taylor: stones plus empty regions reaching one colour only."""
    owner = np.zeros(st.board.shape[0], dtype=np.int8)
    tromp_taylor_owner(st.board, st.neighbours, owner)
    return int(np.sum(owner == BLACK)), int(np.sum(owner == WHITE))


@njit(cache=True, nogil=True)
def area_score(st, komi):
    """Black area - white area - komi (positive: black wins)."""
    black, white = area_counts(st)
    return black - white - komi


# --- whole-game replay ----------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def replay_game_reason(n, setup_black, setup_white, moves, first_player, superko):
    """Replay a game; returns (status, reason code).

    status: -1 when every move is legal, the index of the first illegal move otherwise
    (with its reason), or ``SETUP_INVALID`` (-2) when the setup stones are (reason:
    ``OFF_BOARD``, ``OCCUPIED`` or ``SUICIDE``). ``moves`` holds points (pass = n*n) and
    colours alternate from ``first_player`` (+1 black, -1 white).
    """
    if first_player != BLACK and first_player != WHITE:
        raise ValueError("first_player must be +1 (black) or -1 (white)")
    st = new_arrays(n, moves.shape[0] + 2)
    set_superko(st, superko)
    reason = setup(st, setup_black, setup_white)
    if reason != OK:
        return SETUP_INVALID, reason
    set_to_play(st, first_player)
    for i in range(moves.shape[0]):
        reason = play(st, np.int64(moves[i]))
        if reason != OK:
            return i, reason
    return -1, OK


@njit(cache=True, nogil=True)
def replay_game(n, setup_black, setup_white, moves, first_player, superko):
    """`replay_game_reason`'s status only: -1 if the whole game is legal."""
    return replay_game_reason(n, setup_black, setup_white, moves, first_player, superko)[0]


# --- ladders --------------------------------------------------------------------------------------
#
# The ladder reader works on plain board copies (one int8[N] per ply, preallocated) and
# floods only the chains it asks about: the prey and its neighbours, a few stones each.


LadderScratch = namedtuple("LadderScratch", ("boards", "mark", "stack", "prey", "lbuf", "counters", "options", "tried"))
LadderScratch.__doc__ = "Work arrays of the ladder reader (`ladder_scratch`), see there for each one."


@njit(cache=True, nogil=True)
def ladder_scratch(n, max_depth):
    """Work arrays for `ladder_capture_into` (a `LadderScratch`): reuse them across calls on one board size."""
    N = n * n
    boards = np.zeros((max_depth + 3, N), dtype=np.int8)  # one board per ply
    mark = np.zeros(N, dtype=np.int32)  # flood-fill stamps
    stack = np.empty(N, dtype=np.int32)
    prey = np.empty(N, dtype=np.int32)
    lbuf = np.empty(8, dtype=np.int32)  # liberties found by the last flood
    counters = np.zeros(2, dtype=np.int64)  # [flood stamp, nodes left]
    options = np.zeros((max_depth // 2 + 2, 2), dtype=np.int32)  # the attacker's two ataris per step
    tried = np.zeros(max_depth // 2 + 2, dtype=np.int32)  # how many of them were tried
    return LadderScratch(boards, mark, stack, prey, lbuf, counters, options, tried)


@njit(cache=True, nogil=True)
def _chain_liberties(board, nbr, p, mark, counters, stack, lbuf, cap):
    """Liberties of the chain on ``p``, counted up to ``cap`` (<= 8); the first ones go in ``lbuf``."""
    counters[0] += 1
    stamp = counters[0]
    colour = board[p]
    mark[p] = stamp
    stack[0] = p
    top = 1
    found = 0
    while top > 0:
        top -= 1
        q = stack[top]
        for k in range(4):
            t = nbr[q, k]
            if t < 0:
                break
            if mark[t] == stamp:
                continue
            s = board[t]
            if s == EMPTY:
                mark[t] = stamp
                lbuf[found] = t
                found += 1
                if found >= cap:
                    return found
            elif s == colour:
                mark[t] = stamp
                stack[top] = t
                top += 1
    return found


@njit(cache=True, nogil=True)
def _chain_stones(board, nbr, p, mark, counters, out):
    """Stones of the chain on ``p`` into ``out``; returns their number."""
    counters[0] += 1
    stamp = counters[0]
    colour = board[p]
    mark[p] = stamp
    out[0] = p
    count = 1
    i = 0
    while i < count:
        q = out[i]
        i += 1
        for k in range(4):
            t = nbr[q, k]
            if t < 0:
                break
            if board[t] == colour and mark[t] != stamp:
                mark[t] = stamp
                out[count] = t
                count += 1
    return count


@njit(cache=True, nogil=True)
def _board_play(board, nbr, p, c, mark, counters, stack, lbuf):
    """Put ``c`` on ``p`` of a plain board and lift opponent chains without liberties."""
    board[p] = c
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            break
        if board[q] == -c and _chain_liberties(board, nbr, q, mark, counters, stack, lbuf, 1) == 0:
            count = _chain_stones(board, nbr, q, mark, counters, stack)
            for i in range(count):
                board[stack[i]] = EMPTY


_CAPTURED = 0
_ESCAPED = 1
_PENDING = 2


@njit(cache=True, nogil=True)
def _defender_step(boards, d, prey, attacker, nbr, scratch, max_depth):
    """The prey (in atari on ``boards[d]``) moves: ``_CAPTURED``, ``_ESCAPED`` or ``_PENDING``.

    Pending: it extended to two liberties (position in ``boards[d + 1]``), which are
    left in ``lbuf[0:2]`` as the attacker's options.
    """
    mark = scratch.mark
    stack = scratch.stack
    prey_stones = scratch.prey
    lbuf = scratch.lbuf
    counters = scratch.counters
    counters[1] -= 1
    if counters[1] < 0 or d + 2 >= max_depth:
        return _ESCAPED  # out of budget: count as escaped
    b = boards[d]
    # Escape by capturing an attacking chain in atari next to the prey.
    count = _chain_stones(b, nbr, prey, mark, counters, prey_stones)
    for i in range(count):
        s = prey_stones[i]
        for k in range(4):
            t = nbr[s, k]
            if t < 0:
                break
            if b[t] == attacker and _chain_liberties(b, nbr, t, mark, counters, stack, lbuf, 2) == 1:
                return _ESCAPED
    if _chain_liberties(b, nbr, prey, mark, counters, stack, lbuf, 2) != 1:
        return _ESCAPED
    # Extend on the single liberty.
    nb = boards[d + 1]
    nb[:] = b
    _board_play(nb, nbr, lbuf[0], -attacker, mark, counters, stack, lbuf)
    libs = _chain_liberties(nb, nbr, prey, mark, counters, stack, lbuf, 3)
    if libs <= 1:
        return _CAPTURED
    if libs >= 3:
        return _ESCAPED
    return _PENDING


@njit(cache=True, nogil=True)
def _ladder_read(boards, base, prey, attacker, nbr, scratch, max_depth):
    """Whether the prey chain (on ``prey``, in atari on ``boards[base]``, defender to move) is lost.

    Depth-first over the attacker's two ataris per step, with an explicit stack (numba's
    on-disk cache cannot hold recursive functions). The defender's move is forced, so the
    tree is an OR over the attacker's choices: the first captured line answers True.
    """
    mark = scratch.mark
    stack = scratch.stack
    lbuf = scratch.lbuf
    counters = scratch.counters
    options = scratch.options
    tried = scratch.tried
    level = 0
    evaluate = True
    while True:
        if evaluate:
            d = base + 2 * level
            result = _defender_step(boards, d, prey, attacker, nbr, scratch, max_depth)
            if result == _CAPTURED:
                return True
            if result == _PENDING:
                options[level, 0] = lbuf[0]
                options[level, 1] = lbuf[1]
                tried[level] = 0
            else:
                level -= 1
        while level >= 0 and tried[level] >= 2:
            level -= 1
        if level < 0:
            return False
        a = options[level, tried[level]]
        tried[level] += 1
        d = base + 2 * level
        nb2 = boards[d + 2]
        nb2[:] = boards[d + 1]
        _board_play(nb2, nbr, a, attacker, mark, counters, stack, lbuf)
        evaluate = False
        if _chain_liberties(nb2, nbr, a, mark, counters, stack, lbuf, 1) == 0:
            continue  # suicide for the attacker
        if nb2[prey] == -attacker and _chain_liberties(nb2, nbr, prey, mark, counters, stack, lbuf, 2) == 1:
            level += 1
            evaluate = True


@njit(cache=True, nogil=True)
def ladder_capture_into(st, point, scratch, max_depth, max_nodes):
    """`ladder_capture` with caller-owned scratch (from `ladder_scratch`); ``point`` must be legal."""
    board = st.board
    nbr = st.neighbours
    attacker = st.info[I_TO_PLAY]
    boards = scratch.boards
    mark = scratch.mark
    stack = scratch.stack
    lbuf = scratch.lbuf
    counters = scratch.counters
    counters[1] = max_nodes
    b = boards[0]
    b[:] = board
    _board_play(b, nbr, point, attacker, mark, counters, stack, lbuf)
    for k in range(4):
        q = nbr[point, k]
        if q < 0:
            break
        if b[q] == -attacker and _chain_liberties(b, nbr, q, mark, counters, stack, lbuf, 2) == 1:
            if _ladder_read(boards, 0, q, attacker, nbr, scratch, max_depth):
                return True
    return False


@njit(cache=True, nogil=True)
def ladder_capture(st, point):
    """Whether the side to move playing ``point`` ataris an opponent chain that a ladder captures.

    Standard ladder reading on copies of the board: the defender extends on its single
    liberty (or escapes by capturing an attacking chain in atari next to it, or by reaching
    3+ liberties); the attacker tries both ataris at each step. Reading stops (counted
    as an escape) after `LADDER_MAX_DEPTH` plies or `LADDER_MAX_NODES` positions. Ko is
    ignored inside the reading. An illegal ``point`` is never a ladder capture.
    """
    if legal_reason(st, point) != OK or point == st.board.shape[0]:
        return False
    scratch = ladder_scratch(st.info[I_SIZE], LADDER_MAX_DEPTH)
    return ladder_capture_into(st, point, scratch, LADDER_MAX_DEPTH, LADDER_MAX_NODES)


@njit(cache=True, nogil=True)
def ladder_escape(st, point):
    """Whether the side to move saves an adjacent own chain in atari by extending on ``point``.

    True if ``point`` is legal, touches an own chain in atari, and afterwards the extended
    chain has 3+ liberties or 2 that no ladder (as in `ladder_capture`) takes away.
    """
    board = st.board
    head = st.group_head
    libs = st.group_liberty_count
    info = st.info
    nbr = st.neighbours
    if legal_reason(st, point) != OK or point == board.shape[0]:
        return False
    me = info[I_TO_PLAY]
    in_atari = False
    for k in range(4):
        q = nbr[point, k]
        if q < 0:
            break
        if board[q] == me and libs[head[q]] == 1:
            in_atari = True
    if not in_atari:
        return False
    scratch = ladder_scratch(info[I_SIZE], LADDER_MAX_DEPTH)
    boards = scratch.boards
    mark = scratch.mark
    stack = scratch.stack
    lbuf = scratch.lbuf
    counters = scratch.counters
    counters[1] = LADDER_MAX_NODES
    b = boards[0]
    b[:] = board
    _board_play(b, nbr, point, me, mark, counters, stack, lbuf)
    libs_after = _chain_liberties(b, nbr, point, mark, counters, stack, lbuf, 3)
    if libs_after <= 1:
        return False
    if libs_after >= 3:
        return True
    a0 = lbuf[0]
    a1 = lbuf[1]
    for j in range(2):
        a = a0 if j == 0 else a1
        b2 = boards[1]
        b2[:] = b
        _board_play(b2, nbr, a, -me, mark, counters, stack, lbuf)
        if _chain_liberties(b2, nbr, a, mark, counters, stack, lbuf, 1) == 0:
            continue
        if b2[point] == me and _chain_liberties(b2, nbr, point, mark, counters, stack, lbuf, 2) == 1:
            if _ladder_read(boards, 1, point, -me, nbr, scratch, LADDER_MAX_DEPTH):
                return False
    return True


# --- Python API -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoRules:
    """Board size ``n`` (9..19), komi, and whether positional superko is enforced."""

    board_size: int
    komi: float = 7.5
    superko: bool = False

    def __post_init__(self):
        n = self.board_size
        if isinstance(n, bool) or not isinstance(n, int) or not MIN_BOARD <= n <= MAX_BOARD:
            raise GameConfigError(
                f"game.board_size={n!r}: Go boards must be {MIN_BOARD}..{MAX_BOARD} (an int)"
            )
        try:
            ok = float(self.komi) == float(self.komi)  # not NaN
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise GameConfigError(f"game.komi={self.komi!r}: komi must be a number")

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
        return f"go_{self.n}x{self.n}"

    def search_game(self, settings=None):
        """Go as self-play and in-run matches search it (`stonelab.games.go.SPEC.search`)."""
        return registry.of(self).search(self, settings)

    def new_state(self) -> GoState:
        return GoState(self)


class GoState:
    """A Go position: a thin Python wrapper over its `GoArrays` (``state.arrays``)."""

    def __init__(self, rules: GoRules, arrays=None):
        self.rules = rules
        if arrays is None:
            arrays = new_arrays(rules.n, 2 * rules.num_points + 2)
            set_superko(arrays, rules.superko)
        self.arrays: GoArrays = arrays

    # views (the info scalars read in Python: no numba call per property)
    @property
    def board(self) -> np.ndarray:
        """int8[N] view of the board (do not write to it)."""
        return self.arrays.board

    @property
    def n(self) -> int:
        return self.rules.n

    @property
    def to_play(self) -> int:
        return int(self.arrays.info[I_TO_PLAY])

    @to_play.setter
    def to_play(self, colour: int) -> None:
        if colour not in (BLACK, WHITE):
            raise ValueError(f"to_play must be BLACK (+1) or WHITE (-1), got {colour!r}")
        self.arrays.info[I_TO_PLAY] = colour

    @property
    def is_over(self) -> bool:
        return bool(self.arrays.info[I_OVER])

    @property
    def ko_point(self) -> int:
        """The point the side to move may not retake, -1 if none (the kernel `ko_point`)."""
        return int(ko_point(self.arrays))

    @property
    def move_number(self) -> int:
        return int(self.arrays.info[I_MOVE])

    @property
    def last_move(self) -> int:
        return int(self.arrays.info[I_LAST])

    @property
    def captures(self) -> tuple[int, int]:
        """(stones captured by black, stones captured by white)."""
        info = self.arrays.info
        return int(info[I_CAPS_BLACK]), int(info[I_CAPS_WHITE])

    @property
    def hash(self) -> int:
        return int(current_hash(self.arrays))

    def resume_play(self) -> GoState:
        """Forget the passes just played and the end of the game (the kernel `resume_play`). Returns self."""
        resume_play(self.arrays)
        return self

    def liberties(self, point: int) -> int:
        """Liberties of the chain on ``point`` (0 on an empty point)."""
        a = self.arrays
        return 0 if a.board[point] == EMPTY else int(a.group_liberty_count[a.group_head[point]])

    def chain(self, point: int) -> list[int]:
        """Sorted points of the chain on ``point`` ([] if empty)."""
        board, nxt = self.arrays.board, self.arrays.group_next
        if board[point] == EMPTY:
            return []
        out, s = [], int(point)
        while True:
            out.append(s)
            s = int(nxt[s])
            if s == point:
                return sorted(out)

    # moves
    def _check_move(self, move) -> int:
        if isinstance(move, bool) or not isinstance(move, int | np.integer):
            raise IllegalMove("off_board", None, f" (a move is an int 0..{self.rules.num_points}, got {move!r})")
        return int(move)

    def legal_reason(self, move: int) -> str:
        return REASONS[legal_reason(self.arrays, self._check_move(move))]

    def is_legal(self, move: int) -> bool:
        return legal_reason(self.arrays, self._check_move(move)) == OK

    def legal_mask(self) -> np.ndarray:
        out = np.zeros(self.rules.num_actions, dtype=np.bool_)
        legal_mask(self.arrays, out)
        return out

    def play(self, move: int) -> GoState:
        """Play ``move`` (N = pass) for the side to move; raises `IllegalMove`. Returns self."""
        move = self._check_move(move)
        hashes, info = self.arrays.position_hashes, self.arrays.info
        if info[I_NHASH] >= hashes.shape[0]:
            grown = np.zeros(2 * hashes.shape[0], dtype=np.uint64)
            grown[: hashes.shape[0]] = hashes
            self.arrays = self.arrays._replace(position_hashes=grown)
        reason = play(self.arrays, move)
        if reason != OK:
            raise IllegalMove(REASONS[reason], move)
        return self

    def setup(self, black_points=(), white_points=()) -> GoState:
        """Add setup (handicap) stones; no captures. Set `to_play` yourself. Returns self."""
        black = np.asarray(list(black_points), dtype=np.int64)
        white = np.asarray(list(white_points), dtype=np.int64)
        trial = copy_arrays(self.arrays)
        reason = setup(trial, black, white)
        if reason != OK:
            raise IllegalMove(REASONS[reason], None, " (setup stones)")
        self.arrays = trial
        return self

    def copy(self) -> GoState:
        return GoState(self.rules, copy_arrays(self.arrays))

    def score(self, dead_points=()) -> float:
        """Tromp-Taylor area score with komi: black area - white area - komi.

        ``dead_points``: stones taken off the board before counting (a referee's or an
        engine's dead-stone list), so their points count for whoever surrounds them.
        """
        komi = float(self.rules.komi)
        if len(dead_points) == 0:
            return float(area_score(self.arrays, komi))
        board = self.arrays.board.copy()
        board[np.asarray(dead_points, dtype=np.int64)] = EMPTY
        owner = np.zeros_like(board)
        tromp_taylor_owner(board, self.arrays.neighbours, owner)
        return float(np.sum(owner == BLACK) - np.sum(owner == WHITE) - komi)

    def ladder_capture(self, point: int) -> bool:
        return bool(ladder_capture(self.arrays, int(point)))

    def ladder_escape(self, point: int) -> bool:
        return bool(ladder_escape(self.arrays, int(point)))

    def __repr__(self) -> str:
        return f"GoState({self.rules.name}, move {self.move_number}, to_play {self.to_play:+d})\n" + to_text(self)


def to_text(state: GoState) -> str:
    """The board as text rows: ``X`` black, ``O`` white, ``.`` empty."""
    n = state.n
    chars = {BLACK: "X", WHITE: "O", EMPTY: "."}
    return "\n".join("".join(chars[int(v)] for v in state.board[r * n:(r + 1) * n]) for r in range(n))


def state_from_rows(rows: list[str], to_play: int = BLACK, komi: float = 7.5, superko: bool = False) -> GoState:
    """A position from text rows (``X``, ``O``, ``.``; spaces ignored) as setup stones (tests, docs)."""
    clean = [r.replace(" ", "") for r in rows]
    n = len(clean)
    if any(len(r) != n for r in clean):
        raise ValueError(f"board rows must form an {n}x{n} square")
    black = [r * n + c for r in range(n) for c in range(n) if clean[r][c] == "X"]
    white = [r * n + c for r in range(n) for c in range(n) if clean[r][c] == "O"]
    state = GoRules(n, komi=komi, superko=superko).new_state().setup(black, white)
    state.to_play = to_play
    return state


def point(n: int, row: int, col: int) -> int:
    """The point index of (row, col)."""
    return row * n + col
