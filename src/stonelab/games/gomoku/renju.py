"""Gomocup's rule sets for five in a row, and renju's forbidden points, as numba kernels.

Rule numbers are Gomocup's (``INFO rule``, `stonelab.games.gomoku.rules.RULE_NAMES`):
freestyle (0) five or more wins; standard (1) exactly five wins, an overline wins
nothing, for both sides; renju (4) black wins with exactly five and may not play a
forbidden point, white wins with five or more.

Renju's forbidden points for black (the Renju International Federation's rules), where a
move that makes a five is never forbidden:

- overline: six or more black stones in a line;
- double four: two or more fours at once. A *four* is a line in which one more black stone
  makes exactly five; a straight four (``.XXXX.``, two ways to five) is one four, while
  ``X.XXX.X`` holds two fours in one line;
- double three: two or more *true* threes at once, in different lines. A *three* is a line
  that one more black stone turns into a straight four; it is *true* only if some such
  stone may itself be played (is not forbidden, judged the same way, recursively), which
  is what makes some apparent threes "false".

All kernels look at lines through one point only, through `line_cells`: the 13 cells
of a line centred on that point (off the board: `WALL`), enough to see a five through the
centre and the stones just beyond it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from stonelab.games.gomoku.rules import BLACK, DIRECTIONS, EMPTY, FREESTYLE, RENJU, makes_line
from stonelab.search.game import DRAW, MOVER_WINS, ONGOING

WALL = 2  # a cell off the board in `line_cells`
SPAN = 6  # cells on each side of the centre
CENTRE = SPAN
MAX_DEPTH = 6  # nested "is that point forbidden too?" questions a true-three test may ask


@njit(cache=True, nogil=True)
def line_cells(board, n, move, dr, dc, out):
    """The cells of the line through ``move`` along (dr, dc): ``out[CENTRE + i]`` is the
    point ``i`` steps ahead (behind for negative ``i``), `WALL` off the board."""
    r0 = move // n
    c0 = move % n
    for i in range(-SPAN, SPAN + 1):
        r = r0 + i * dr
        c = c0 + i * dc
        out[CENTRE + i] = board[r * n + c] if 0 <= r < n and 0 <= c < n else WALL


@njit(cache=True, nogil=True)
def run_through(cells, i, colour):
    """(first, last) cell indices of the unbroken run of ``colour`` through cell ``i``."""
    first = i
    while first > 0 and cells[first - 1] == colour:
        first -= 1
    last = i
    while last < cells.shape[0] - 1 and cells[last + 1] == colour:
        last += 1
    return first, last


@njit(cache=True, nogil=True)
def exact_five_at(cells, i):
    """Whether black on the empty cell ``i`` makes a run of exactly five through ``i``."""
    cells[i] = BLACK
    first, last = run_through(cells, i, BLACK)
    cells[i] = EMPTY
    return last - first + 1 == 5


@njit(cache=True, nogil=True)
def fours_through_centre(cells):
    """How many fours the black stone on the centre cell stands in along this line: the
    empty cells where one more black stone makes exactly five through the centre, a
    straight four's two ends counted once."""
    fours = 0
    ends = 0  # bit i - (CENTRE - 4): the cell i completes a five (no array: this runs per candidate point)
    for i in range(CENTRE - 4, CENTRE + 5):
        if cells[i] == EMPTY:
            cells[i] = BLACK
            first, last = run_through(cells, i, BLACK)
            cells[i] = EMPTY
            if last - first + 1 == 5 and first <= CENTRE <= last:
                fours += 1
                bit = i - (CENTRE - 4)
                ends |= 1 << bit
                if bit >= 5 and ends & (1 << (bit - 5)):  # .XXXX. : both ends complete the same four
                    fours -= 1
    return fours


@njit(cache=True, nogil=True)
def straight_four_through_centre(cells):
    """Whether the centre's black stone stands in a straight four: exactly four in a row,
    both ends empty, and black on either end makes exactly five."""
    first, last = run_through(cells, CENTRE, BLACK)
    if last - first + 1 != 4 or first < 1 or last > cells.shape[0] - 2:
        return False
    if cells[first - 1] != EMPTY or cells[last + 1] != EMPTY:
        return False
    return exact_five_at(cells, first - 1) and exact_five_at(cells, last + 1)


@njit(cache=True, nogil=True)
def makes_exact_five(board, n, move):
    """Whether the black stone on ``move`` stands in a run of exactly five (any line)."""
    cells = np.empty(2 * SPAN + 1, dtype=np.int8)
    for d in range(4):
        line_cells(board, n, move, DIRECTIONS[d, 0], DIRECTIONS[d, 1], cells)
        first, last = run_through(cells, CENTRE, BLACK)
        if last - first + 1 == 5:
            return True
    return False


@njit("boolean(int8[:], int64, int64, int64)", cache=True, nogil=True)
def forbidden(board, n, move, depth):
    """Whether black may not play the empty point ``move`` under renju (see the module doc);
    ``depth``: how many true-three tests asked this one (0 from outside; past `MAX_DEPTH`
    only overlines and double fours count). One self-recursive function with a declared
    signature: numba cannot infer the types of mutually recursive ones."""
    cells = np.empty(2 * SPAN + 1, dtype=np.int8)
    board[move] = BLACK
    overline = False
    fours = 0
    for d in range(4):
        line_cells(board, n, move, DIRECTIONS[d, 0], DIRECTIONS[d, 1], cells)
        first, last = run_through(cells, CENTRE, BLACK)
        length = last - first + 1
        if length == 5:
            board[move] = EMPTY
            return False  # a five wins, whatever else the move makes
        if length >= 6:
            overline = True
        fours += fours_through_centre(cells)
    if overline or fours >= 2:
        board[move] = EMPTY
        return True
    threes = 0
    if depth < MAX_DEPTH:
        r0 = move // n
        c0 = move % n
        for d in range(4):
            dr, dc = DIRECTIONS[d, 0], DIRECTIONS[d, 1]
            line_cells(board, n, move, dr, dc, cells)
            if fours_through_centre(cells) > 0:
                continue  # a four in this line, not a three
            # A true three: some empty point within four steps where black makes a straight
            # four through ``move``, and may play there.
            for i in range(-4, 5):
                if i == 0 or cells[CENTRE + i] != EMPTY:
                    continue
                cells[CENTRE + i] = BLACK
                straight = straight_four_through_centre(cells)
                cells[CENTRE + i] = EMPTY
                if straight and not forbidden(board, n, (r0 + i * dr) * n + (c0 + i * dc), depth + 1):
                    threes += 1
                    break
    board[move] = EMPTY
    return threes >= 2


@njit(cache=True, nogil=True)
def wins(board, n, k, rule, move):
    """Whether the stone on ``move`` wins under ``rule``: k or more in a row (freestyle, and
    renju's white), exactly five (standard, and renju's black)."""
    colour = board[move]
    if rule == FREESTYLE or (rule == RENJU and colour != BLACK):
        return makes_line(board, n, k, move)
    cells = np.empty(2 * SPAN + 1, dtype=np.int8)
    for d in range(4):
        line_cells(board, n, move, DIRECTIONS[d, 0], DIRECTIONS[d, 1], cells)
        first, last = run_through(cells, CENTRE, colour)
        if last - first + 1 == k:
            return True
    return False


@njit(cache=True, nogil=True)
def outcome_after(board, n, k, rule, move, n_stones):
    """`stonelab.games.gomoku.rules.outcome_after` under ``rule``."""
    if wins(board, n, k, rule, move):
        return MOVER_WINS
    if n_stones >= n * n:
        return DRAW
    return ONGOING


@njit(cache=True, nogil=True)
def drop_forbidden(board, n, out):
    """Clear ``out[a]`` (a bool mask of moves for black) where ``a`` is forbidden; returns how
    many stay. The caller checks the rule (renju) and the colour (black)."""
    count = 0
    for a in range(n * n):
        if out[a]:
            if forbidden(board, n, a, 0):
                out[a] = False
            else:
                count += 1
    return count


@njit(cache=True, nogil=True)
def rule_rollout(board, n, k, rule, to_play):
    """A random playout under ``rule`` (black never plays a forbidden point in renju: a drawn
    one is drawn again); value for ``to_play`` (+1, 0, -1). ``board`` is overwritten."""
    empties = np.empty(board.shape[0], dtype=np.int32)
    count = 0
    for a in range(board.shape[0]):
        if board[a] == EMPTY:
            empties[count] = a
            count += 1
    player = to_play
    while count > 0:
        tries = count  # black may have to skip forbidden points; none left to try: a draw
        i = np.random.randint(count)
        while rule == RENJU and player == BLACK and forbidden(board, n, empties[i], 0):
            tries -= 1
            if tries == 0:
                return 0.0
            i = np.random.randint(count)
        move = empties[i]
        count -= 1
        empties[i] = empties[count]
        board[move] = player
        if wins(board, n, k, rule, move):
            return 1.0 if player == to_play else -1.0
        player = -player
    return 0.0


@njit(cache=True, nogil=True)
def forbidden_mask(board, n, colour, rule, out):
    """``out[a] = True`` where ``colour`` may not play the empty point ``a`` (renju's black
    only; every other rule and colour: none); returns how many."""
    out[:] = False
    if rule != RENJU or colour != BLACK:
        return 0
    count = 0
    for a in range(n * n):
        if board[a] == EMPTY and forbidden(board, n, a, 0):
            out[a] = True
            count += 1
    return count
