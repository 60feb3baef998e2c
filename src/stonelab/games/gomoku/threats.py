"""Threat-space search for freestyle Gomoku: victory by continuous fours (VCF) and, built on it,
by continuous threats (VCT, `vct`: threes as well as fours; at the root, ``pruning.vct``).

A *four* is a move after which its player has a point that would make k in a row (for
k = 5 the usual four; for k = 4 three in a row with the point free). The opponent must
fill that point at once or lose, so a four buys its player a move without giving the
opponent one. A VCF is a sequence of fours, each answered by the forced fill, that ends
in a move with two such points (the opponent can fill one) or in k in a row. Rapfi and
KataGomo search VCFs before and inside their trees; here it serves the candidate set
(`stonelab.games.gomoku.candidates`, ``pruning.vcf``): a node whose mover has a VCF
expands only the moves that start one, and a node whose opponent has one expands only the
moves after which it has none (when there are such moves).

The search is exact for what it looks at, by three facts of freestyle rules: a player's
stones never make a line for the other, so the answer to a four with one point is that
point and nothing else (any other move loses at once, the opponent having no point of
its own: it would have been the attacker's duty to fill it first); a new stone makes new
winning points only on the four lines through it; and a VCF that the opponent's extra
stones do not stop is one the opponent cannot stop by playing elsewhere, so "the opponent
has no VCF if the mover passed" means no move of the mover's gives it one.

It is bounded, not exhaustive: ``max_fours`` fours per line of attack and ``budget``
fours played in all by one call (of `vcf_moves`, `vcf_defences`). A search cut by either
answers "no VCF found", never a wrong "yes"; a defence may then be one that the cut search
missed the refutation of.
Written without recursion: numba's on-disk cache does not hold recursive functions.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from stonelab.games.gomoku.rules import DIRECTIONS, EMPTY, would_win
from stonelab.games.gomoku.tactics import first_wins

NOT_FOUND = -1


@njit(cache=True, nogil=True)
def _window_start(n, k, r0, c0, dr, dc, s):
    """The first point of the k-long window along (``dr``, ``dc``) that starts ``s`` steps from
    (``r0``, ``c0``), or -1 when the window leaves the board."""
    rs = r0 + s * dr
    cs = c0 + s * dc
    re = rs + (k - 1) * dr
    ce = cs + (k - 1) * dc
    if rs < 0 or rs >= n or cs < 0 or cs >= n or re < 0 or re >= n or ce < 0 or ce >= n:
        return -1
    return rs * n + cs


@njit(cache=True, nogil=True)
def _completions(board, n, k, a, colour, out):
    """Up to two points that would make k in a row for ``colour`` with ``colour`` on ``a``,
    among the points of the k-long windows through ``a``; into ``out``, returns how many.

    ``a`` counts as ``colour`` whether it is empty (a four ``colour`` could play) or
    already ``colour``'s. A window counts when it holds no stone of the other colour and
    k - 2 of ``colour``'s besides ``a``: its one other empty point completes it. When
    ``colour`` had no winning point before ``a``, these are all of its winning points after
    it (a new one lies on a window through ``a``).
    """
    r0 = a // n
    c0 = a % n
    count = 0
    for d in range(4):
        dr = DIRECTIONS[d, 0]
        dc = DIRECTIONS[d, 1]
        for s in range(-(k - 1), 1):
            start = _window_start(n, k, r0, c0, dr, dc, s)
            if start < 0:
                continue
            own = 0
            gap = -1
            blocked = False
            for t in range(k):
                p = start + t * (dr * n + dc)
                v = board[p]
                if p == a:
                    continue
                if v == colour:
                    own += 1
                elif v == EMPTY:
                    gap = p
                else:
                    blocked = True
                    break
            if blocked or own != k - 2 or gap < 0 or (count == 1 and out[0] == gap):
                continue
            out[count] = gap
            count += 1
            if count == 2:
                return count
    return count


@njit(cache=True, nogil=True)
def vcf(board, n, k, colour, max_fours, budget):
    """A move that starts a VCF for ``colour`` (to move), or `NOT_FOUND`.

    A point where ``colour`` makes k in a row at once counts (a VCF of no fours). ``board``
    (int8 ``[n * n]``) is written during the search and restored before returning.
    """
    line = np.empty(2 * max(max_fours, 1) + 3, dtype=np.int64)
    spent = np.zeros(1, dtype=np.int64)
    return line[0] if vcf_line(board, n, k, colour, max_fours, budget, line, spent) > 0 else NOT_FOUND


@njit(cache=True, nogil=True)
def vcf_line(board, n, k, colour, max_fours, budget, line, spent):
    """Search a VCF for ``colour`` (to move); returns how many points of ``line`` it wrote, 0
    when none was found.

    ``line`` (int64, at least ``2 * max_fours + 3`` long) receives the VCF's points in order:
    each four and the opponent's fill of it, then the last move and the two points it leaves
    (the opponent fills one); just the point when ``colour`` makes k at once. ``spent[0]``
    counts the fours played; none is played once it reaches ``budget`` (callers share it
    between searches to bound their total work).
    """
    points = np.empty(2, dtype=np.int64)
    if first_wins(board, n, k, colour, 2, points) > 0:
        line[0] = points[0]
        return 1
    depth_max = max(max_fours, 1)
    attack = np.full(depth_max, -1, dtype=np.int64)   # the four played at each level
    reply = np.full(depth_max, -1, dtype=np.int64)    # the opponent's forced fill
    forced = np.full(depth_max, -1, dtype=np.int64)   # the point the attacker must fill, or -1
    nxt = np.zeros(depth_max, dtype=np.int64)         # next point to try at each level
    found = NOT_FOUND
    level = 0
    opened = True
    while level >= 0:
        if opened:  # a new level: what the opponent's last fill left
            opened = False
            nxt[level] = 0
            forced[level] = -1
            # the opponent's winning points: at the root any, later only through its last fill
            if level == 0:
                opp = first_wins(board, n, k, -colour, 2, points)
            else:
                opp = _completions(board, n, k, reply[level - 1], -colour, points)
            if opp >= 2:
                nxt[level] = board.shape[0]  # two points to fill: this line of attack fails
            elif opp == 1:
                forced[level] = points[0]
        a = nxt[level]
        advanced = False
        while a < board.shape[0]:
            if board[a] != EMPTY or (forced[level] >= 0 and a != forced[level]):
                a += 1
                continue
            nxt[level] = a + 1
            wins = _completions(board, n, k, a, colour, points)
            if wins >= 2:  # the opponent fills one, the other makes k
                found = a
                break
            if wins == 1 and level + 1 < max_fours and spent[0] < budget:
                board[a] = colour
                spent[0] += 1
                attack[level] = a
                reply[level] = points[0]
                board[points[0]] = -colour
                level += 1
                opened = True
                advanced = True
                break
            a += 1
        if found != NOT_FOUND:
            break
        if advanced:
            continue
        level -= 1  # every four here tried: back to the level above and its next four
        if level >= 0:
            board[reply[level]] = EMPTY
            board[attack[level]] = EMPTY
    if found == NOT_FOUND:
        return 0
    for lv in range(level):
        line[2 * lv] = attack[lv]
        line[2 * lv + 1] = reply[lv]
    line[2 * level] = found
    line[2 * level + 1] = points[0]
    line[2 * level + 2] = points[1]
    for lv in range(level - 1, -1, -1):  # undo the line that found the VCF
        board[reply[lv]] = EMPTY
        board[attack[lv]] = EMPTY
    return 2 * level + 3


@njit(cache=True, nogil=True)
def vcf_moves(board, n, k, colour, max_fours, budget, out):
    """Mark in ``out`` (bool ``[n * n]``) every move that starts a VCF for ``colour`` (to
    move); returns how many. Each four is followed by its forced fill and a VCF search, all of
    them within one ``budget`` of fours."""
    points = np.empty(2, dtype=np.int64)
    line = np.empty(2 * max(max_fours, 1) + 3, dtype=np.int64)
    spent = np.zeros(1, dtype=np.int64)
    for a in range(board.shape[0]):
        out[a] = False
    count = 0
    if first_wins(board, n, k, -colour, 2, points) >= 2 and not first_wins(board, n, k, colour, 2, points):
        return 0
    for a in range(board.shape[0]):
        if board[a] != EMPTY:
            continue
        if would_win(board, n, k, a, colour):
            out[a] = True
            count += 1
    if count > 0:
        return count
    opp = first_wins(board, n, k, -colour, 2, points)
    must = points[0] if opp == 1 else -1
    for a in range(board.shape[0]):
        if board[a] != EMPTY or (must >= 0 and a != must):
            continue
        wins = _completions(board, n, k, a, colour, points)
        won = wins >= 2
        if wins == 1 and max_fours > 1:
            fill = points[0]
            board[a] = colour
            board[fill] = -colour
            won = vcf_line(board, n, k, colour, max_fours - 1, budget, line, spent) > 0
            board[fill] = EMPTY
            board[a] = EMPTY
        if won:
            out[a] = True
            count += 1
    return count


@njit(cache=True, nogil=True)
def _near_a_fill(n, k, x, line, fours):
    """Whether ``x`` lies within k - 1 points, along a line, of one of the opponent's fills in
    ``line`` (the odd entries of its first ``2 * fours``)."""
    r0 = x // n
    c0 = x % n
    for i in range(fours):
        p = line[2 * i + 1]
        dr = p // n - r0
        dc = p % n - c0
        if (dr == 0 or dc == 0 or dr == dc or dr == -dc) and max(abs(dr), abs(dc)) < k:
            return True
    return False


@njit(cache=True, nogil=True)
def vcf_defences(board, n, k, colour, max_fours, budget, out):
    """Mark in ``out`` the moves of ``colour`` (to move) after which the opponent has no VCF;
    returns how many. Every empty point when the opponent has none even with ``colour``
    passing; 0 when no move stops it. ``budget`` bounds the fours of this call's searches."""
    spent = np.zeros(1, dtype=np.int64)
    return vcf_defences_within(board, n, k, colour, max_fours, budget, out, spent)


@njit(cache=True, nogil=True)
def vcf_defences_within(board, n, k, colour, max_fours, budget, out, spent):
    """`vcf_defences` with its fours counted in ``spent[0]`` (shared with the caller's other
    searches, all bounded by one ``budget``).

    Only some moves need a search of their own: with the opponent's VCF found (``colour``
    passing), a move on none of its points, that makes no four for ``colour`` and lies on no
    line within k - 1 of one of ``colour``'s fills leaves that VCF standing: every four of it
    still leaves its one point, and ``colour`` never gets a point of its own to answer with.
    """
    opponent = -colour
    line = np.empty(2 * max(max_fours, 1) + 3, dtype=np.int64)
    other = np.empty(2 * max(max_fours, 1) + 3, dtype=np.int64)
    length = vcf_line(board, n, k, opponent, max_fours, budget, line, spent)
    fours = (length - 3) // 2 if length >= 3 else 0
    points = np.empty(2, dtype=np.int64)
    count = 0
    for a in range(board.shape[0]):
        out[a] = board[a] == EMPTY
        if not out[a] or length == 0 or would_win(board, n, k, a, colour):
            count += out[a]
            continue  # nothing to stop, or a move that makes k ends the game first
        on_line = False
        for i in range(length):
            on_line = on_line or line[i] == a
        if not on_line and _completions(board, n, k, a, colour, points) == 0 and not _near_a_fill(n, k, a, line, fours):
            out[a] = False
            continue
        board[a] = colour
        out[a] = vcf_line(board, n, k, opponent, max_fours, budget, other, spent) == 0
        board[a] = EMPTY
        count += out[a]
    return count


# --- victory by continuous threats (VCT) -----------------------------------------------------
# A *threat* is a move after which its player has a VCF: the opponent must answer it (or win
# first by fours of its own). A VCT is a threat every answer to which leaves a VCT (of one
# threat fewer) or a VCF. The answers are exactly `vcf_defences_within`'s moves: any other one
# leaves the VCF that the threat made. Rapfi wins most games against our nets this way, with
# threes (threats that need two more moves) where a search for fours sees nothing.

_OPEN, _NEXT_THREAT, _NEXT_ANSWER, _RETURN = 0, 1, 2, 3
_REFUTED, _PROVEN, _ANSWERS = 0, 1, 2


@njit(cache=True, nogil=True)
def threat_points(board, n, k, colour, out):
    """Mark in ``out`` the empty points that lie in a k-long window holding none of the other
    colour's stones and at least k - 3 of ``colour``'s: the moves that make a three or more,
    where a VCT's threats are looked for; returns how many."""
    count = 0
    for a in range(board.shape[0]):
        out[a] = board[a] == EMPTY and _most_in_a_window(board, n, k, a, colour) >= k - 3
        count += out[a]
    return count


@njit(cache=True, nogil=True)
def _most_in_a_window(board, n, k, a, colour):
    """The most stones of ``colour`` in a k-long window through ``a`` that holds none of the
    other colour's (-1 when every window through ``a`` holds some)."""
    most = -1
    for w in range(4 * k):  # each of the four directions, each of the k windows along it
        dr = DIRECTIONS[w // k, 0]
        dc = DIRECTIONS[w // k, 1]
        start = _window_start(n, k, a // n, a % n, dr, dc, w % k - (k - 1))
        if start < 0:
            continue
        own = 0
        for t in range(k):
            v = board[start + t * (dr * n + dc)]
            if v == colour:
                own += 1
            elif v != EMPTY:
                own = -1
                break
        most = max(most, own)
    return most


@njit(cache=True, nogil=True)
def _answers(board, n, k, colour, max_fours, budget, spent, deeper, answers, mask, line):
    """The node after ``colour``'s threat, the opponent to move: `_PROVEN` when no answer
    stops ``colour``'s VCF, `_REFUTED` when the move was no threat (no VCF follows it), the
    opponent wins first by fours, or answers remain and ``deeper`` is False; else `_ANSWERS`
    with the answers in ``answers`` (their count in ``answers[-1]``)."""
    if vcf_line(board, n, k, -colour, max_fours, budget, line, spent) > 0:
        return _REFUTED
    count = vcf_defences_within(board, n, k, -colour, max_fours, budget, mask, spent)
    empty = 0
    for a in range(board.shape[0]):
        empty += board[a] == EMPTY
    if count == empty:
        return _REFUTED
    if count == 0:
        return _PROVEN
    if not deeper:
        return _REFUTED
    m = 0
    for a in range(board.shape[0]):
        if mask[a]:
            answers[m] = a
            m += 1
    answers[answers.shape[0] - 1] = m
    return _ANSWERS


@njit(cache=True, nogil=True)
def vct(board, n, k, colour, max_threats, max_fours, budget, spent):
    """A move that starts a VCT for ``colour`` (to move) of at most ``max_threats`` threats
    before its VCF, or `NOT_FOUND`; a VCF's first move when there is one (`_vct`)."""
    return _vct(board, n, k, colour, max_threats, max_fours, budget, spent, -1)


@njit(cache=True, nogil=True)
def vct_moves(board, n, k, colour, max_threats, max_fours, budget, out):
    """Mark in ``out`` the moves that start a win for ``colour`` (to move) of the fewest threats
    it has: those that start a VCF when it has one (`vcf_moves`), else those that start a VCT
    of one threat, else of two, ... up to ``max_threats``; returns how many (0: none found).
    The fastest wins only: a search that may choose among them cannot wander into a slower one."""
    count = vcf_moves(board, n, k, colour, max_fours, budget, out)
    if count > 0:
        return count
    spent = np.zeros(1, dtype=np.int64)
    places = np.empty(board.shape[0], dtype=np.bool_)
    points = np.empty(2, dtype=np.int64)
    opp = first_wins(board, n, k, -colour, 2, points)
    if opp >= 2:
        return 0
    if opp == 1:
        places[:] = False
        places[points[0]] = True
    else:
        threat_points(board, n, k, colour, places)
    for threats in range(1, max_threats + 1):
        for t in range(board.shape[0]):
            if places[t] and spent[0] < budget:
                out[t] = _vct(board, n, k, colour, threats, max_fours, budget, spent, t) == t
                count += out[t]
        if count > 0:
            return count
    return 0


@njit(cache=True, nogil=True)
def _vct(board, n, k, colour, max_threats, max_fours, budget, spent, only):
    """`vct`, or with ``only`` >= 0 whether ``only`` starts one (``only`` when it does): the
    caller (`vct_moves`) has found no VCF and picked ``only`` among the threats `vct` would
    try, so neither is searched again at the first level.

    Exact for what it looks at, as `vcf_line` is: threats are looked for on `threat_points`
    only (or, when the opponent has a four, on the point that fills it), and once ``spent[0]``
    (fours played and threats tried) reaches ``budget`` the search answers `NOT_FOUND`. An
    answer that is itself a four must be filled; the filling move must then be a threat
    again, so a run of the opponent's fours uses up the threats it may take.
    """
    size = board.shape[0]
    depth = max(max_threats, 0) + 1
    line = np.empty(2 * max(max_fours, 1) + 3, dtype=np.int64)
    points = np.empty(2, dtype=np.int64)
    mask = np.empty(size, dtype=np.bool_)
    threats = np.empty((depth, size + 1), dtype=np.int64)   # each level's threats, count last
    answers = np.empty((depth, size + 1), dtype=np.int64)   # the answers to its current threat
    next_threat = np.zeros(depth, dtype=np.int64)
    next_answer = np.zeros(depth, dtype=np.int64)
    threat = np.full(depth, -1, dtype=np.int64)
    answer = np.full(depth, -1, dtype=np.int64)
    level = 0
    mode = _OPEN
    proven = False
    first = NOT_FOUND
    while True:
        if mode == _OPEN:  # ``colour`` to move at ``level``
            mode = _RETURN
            asked = level == 0 and only >= 0
            proven = not asked and vcf_line(board, n, k, colour, max_fours, budget, line, spent) > 0
            if proven:
                if level == 0:
                    first = line[0]
            elif level < max_threats and spent[0] < budget:
                m = 0
                opp = 2 if asked else first_wins(board, n, k, -colour, 2, points)
                if asked:
                    threats[0, 0] = only
                    m = 1
                elif opp == 1:
                    threats[level, 0] = points[0]
                    m = 1
                elif opp == 0:
                    threat_points(board, n, k, colour, mask)
                    for a in range(size):
                        if mask[a]:
                            threats[level, m] = a
                            m += 1
                threats[level, size] = m
                next_threat[level] = 0
                mode = _NEXT_THREAT
        elif mode == _NEXT_THREAT:
            mode = _RETURN
            proven = False
            while next_threat[level] < threats[level, size] and spent[0] < budget:
                t = threats[level, next_threat[level]]
                next_threat[level] += 1
                board[t] = colour
                spent[0] += 1
                status = _answers(board, n, k, colour, max_fours, budget, spent, level + 1 < max_threats,
                                  answers[level], mask, line)
                if status == _PROVEN:
                    board[t] = EMPTY
                    proven = True
                    if level == 0:
                        first = t
                    break
                if status == _ANSWERS:
                    threat[level] = t
                    next_answer[level] = 0
                    mode = _NEXT_ANSWER
                    break
                board[t] = EMPTY
        elif mode == _NEXT_ANSWER:  # every answer so far lost: the next one, or the threat wins
            if next_answer[level] == answers[level, size]:
                board[threat[level]] = EMPTY
                proven = True
                if level == 0:
                    first = threat[level]
                mode = _RETURN
            else:
                r = answers[level, next_answer[level]]
                next_answer[level] += 1
                board[r] = -colour
                answer[level] = r
                level += 1
                mode = _OPEN
        else:  # _RETURN: ``proven`` is the result of ``level``, for the answer above it
            if level == 0:
                return first if proven else NOT_FOUND
            level -= 1
            board[answer[level]] = EMPTY
            if proven:
                mode = _NEXT_ANSWER
            else:
                board[threat[level]] = EMPTY
                mode = _NEXT_THREAT


@njit(cache=True, nogil=True)
def vct_defences(board, n, k, colour, max_threats, max_fours, budget, out):
    """Mark in ``out`` the moves of ``colour`` (to move) after which the opponent has no VCT
    found (nor VCF); returns how many, or -1 when the opponent has none with ``colour``
    passing (nothing to defend). Only `threat_points` of either side are searched: a move
    that makes no three and touches none of the opponent's is not counted as a defence; those
    left when ``budget`` runs out are counted, unexamined."""
    spent = np.zeros(1, dtype=np.int64)
    size = board.shape[0]
    for a in range(size):
        out[a] = False
    if vct(board, n, k, -colour, max_threats, max_fours, budget, spent) == NOT_FOUND:
        return -1
    mine = np.empty(size, dtype=np.bool_)
    theirs = np.empty(size, dtype=np.bool_)
    threat_points(board, n, k, colour, mine)
    threat_points(board, n, k, -colour, theirs)
    count = 0
    for a in range(size):
        if not (mine[a] or theirs[a]):
            continue
        if spent[0] >= budget:  # not examined: kept, as a search cut short keeps what it cannot refute
            out[a] = True
            count += 1
            continue
        board[a] = colour
        out[a] = vct(board, n, k, -colour, max_threats, max_fours, budget, spent) == NOT_FOUND
        board[a] = EMPTY
        count += out[a]
    return count
