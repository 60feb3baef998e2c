"""Gomoku's candidate moves: which points a search node may expand (seed 000 and its future work).

At expansion the search creates edges only for the points of a candidate set
C(s) instead of for every legal move. This is Gomoku shape logic, so it lives
beside Gomoku's rules; the search only asks the game (`stonelab.games.gomoku.search`)
which moves a node may expand. `candidate_mask` is the numba kernel that fills
that boolean mask; `PruningConfig` holds the knobs
and packs them with `PruningConfig.params` into an ``int64`` array (indexed by
the ``P_*`` constants below) so the kernel needs no Python object.

The candidate set, step by step (``w`` = ``window``):

0. Forced moves (``forced=True``, with or without any other option): if the mover
   can make k in a row, C is the points that do; else, if the opponent could make k
   in a row on some points, C is those points (the blocks). Every other move loses at
   once (or fails to win at once), so this removes nothing a perfect player would
   play, and the tree stops spending visits on moves whose refutation it has not yet
   found. Otherwise the steps below apply.
0b. Threat-space search (``vcf=True``, `stonelab.games.gomoku.threats`): if the mover
   wins by continuous fours (VCF), C is the moves that start such a win. Else the
   steps below make C, and if the opponent would win by a VCF were it its move, C
   keeps only the moves after which it has none (C is those moves when none of C's
   are; unchanged when no move stops it). Like step 0 this removes only moves that
   lose to, or fail to make, a win the rules prove.
1. Policy top-k "alone" (``top_k > 0`` and ``top_k_mode="alone"``): C is the
   ``top_k`` legal moves with the highest priors, ties broken by the lowest
   point index. Nothing else applies: window, adaptive and threat options are
   ignored. Fewer than ``top_k`` legal moves: all of them.
2. Nothing restricts (``window == 0`` and ``top_k == 0``): C = all legal moves.
3. Local window (``window >= 1``):

   * Centroid: mean row and mean column of all occupied points (both
     colours), each rounded to the nearest integer with halves rounded up,
     ``floor(x + 0.5)``, computed exactly in integers. Empty board: the board
     centre ``((n - 1) / 2, (n - 1) / 2)``, rounded the same way (row 4,
     column 4 on 8x8).
   * Adaptive (``adaptive=True``): if the position is *tactical* the side
     becomes ``w + adaptive_step`` (once, not per threat). Tactical means: for
     either colour, whoever is to move, some empty point would win at once
     (k or more in a row) or make an open four (definition below). Open
     threes do not count: almost any two nearby stones allow one, so the
     trigger would fire in nearly every position.
   * Placement: the window covers rows ``lo .. lo + w - 1`` with
     ``lo = cr - w // 2`` (columns likewise), then shifted to lie inside the
     board: ``lo = max(0, min(lo, n - w))``. For odd ``w`` the window is
     centred on the rounded centroid; for even ``w`` the extra cell goes to
     the low side (above / to the left), so an exact half-integer centroid
     such as the empty 8x8 centre (3.5, 3.5) gets an exactly centred window
     (rows and columns 1..6 for w = 6).
   * Fallback (``fallback=True``): if ``n <= w`` (the board is not larger
     than the window) or the window holds no legal move, C = all legal moves
     and the remaining steps change nothing. With ``fallback=False`` a window
     ``>= n`` covers the whole board and an empty window gives an empty local
     set; if no exception below adds a move the kernel returns 0 and the
     caller must decide (`PruningConfig.validate_for_board` rejects a window
     larger than the board up front).

   Without a window the local set is empty (so top-k "union" alone is plain
   top-k, united with the threat exceptions when they are on).
4. Threat exceptions, added to the local set (only lines through the point
   are scanned):

   * ``threat_aware``: every legal move where ``to_play`` would make k or more
     in a row (win) or where the opponent would (block).
   * ``threat_space`` (implies ``threat_aware``): also every legal move that
     makes an open four or an open three for ``to_play``, or that the
     opponent could use to make one (block).

   Top-k "within" (``top_k > 0``, ``top_k_mode="within"``, needs a window):
   before the exceptions are added, the window's set is cut to its ``top_k``
   highest-prior moves (ties: lowest index); the exceptions are then added
   in full, so a must-block outside the top-k is never lost. This reads
   seed 000's "local 4x4 + top-8" as top-8 inside the window.
5. Top-k "union" (``top_k > 0``, ``top_k_mode="union"``): the ``top_k``
   highest-prior legal moves are added.

Shapes, for a colour c placed on an empty point p and one of the four line
directions, where the run is the maximal unbroken line of c through p:

* win: the run is >= k long;
* open four: the run is exactly k - 1 long and the two points just beyond its
  ends are on the board and empty (two ways to make k);
* open three (only for k >= 4; for k = 3 it would be a lone stone): the run
  is exactly k - 2 long, the two points just beyond its ends are empty, and
  at least one of the points two beyond an end is on the board and empty, so
  one more stone makes an open four.

Broken shapes (a gap inside the run, e.g. ``X.XXX``) are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from stonelab.errors import ConfigError
from stonelab.games.gomoku.rules import DIRECTIONS, EMPTY, legal_mask, run_through, would_win
from stonelab.games.gomoku.threats import vcf_defences, vcf_moves, vct_defences, vct_moves

# --- packed parameters (`PruningConfig.params`) --------------------------------------------------
P_WINDOW = 0          # window side; 0 = no window
P_THREAT_AWARE = 1    # 1: add immediate wins and blocks
P_THREAT_SPACE = 2    # 1: also open fours / open threes (made or blocked)
P_ADAPTIVE = 3        # 1: widen the window in tactical positions
P_ADAPTIVE_STEP = 4   # cells added to the window side when tactical
P_TOP_K = 5           # 0 = off
P_TOP_K_MODE = 6      # TOP_K_UNION, TOP_K_ALONE or TOP_K_WITHIN
P_FALLBACK = 7        # 1: fall back to all legal moves
P_FORCED = 8          # 1: only the winning moves, else only the blocks, when either exists
P_VCF = 9             # fours a VCF may take (0 = off): only moves that start one, else only defences
NUM_PARAMS = 10

# Fours the VCF searches of one node may play before they answer "none found": the median
# 15x15 node needs a handful; the bound keeps a position full of fours (random games make
# them) from stalling a node for a third of a second.
VCF_BUDGET = 2000
# The same bound for the one search a move makes at its root (``vcf="root"``): ten times the
# node's, since it is paid once a move and not at every expansion.
ROOT_VCF_BUDGET = 20_000
# The bound (fours played and threats tried) of the root's search for wins by continuous
# threats (``vct``): the search for the mover's and the check of every defence share it.
ROOT_VCT_BUDGET = 60_000
MAX_VCT_THREATS = 3

# Boards on which ``root_proof="auto"`` proves 5 plies at the root: on 6x6 it costs ~8 ms a move
# (73 ms at most, the positions of 50 games); on 8x8 a position with threats on both sides
# took 0.2 s, on 15x15 seconds.
AUTO_PROOF_POINTS = 36

TOP_K_UNION = 0
TOP_K_ALONE = 1
TOP_K_WITHIN = 2
TOP_K_MODES = {"union": TOP_K_UNION, "alone": TOP_K_ALONE, "within": TOP_K_WITHIN}

# Shape codes returned by `shape_after`, weakest first.
SHAPE_NONE = 0
SHAPE_OPEN_THREE = 1
SHAPE_OPEN_FOUR = 2
SHAPE_WIN = 3



class PruningConfigError(ConfigError):
    """A candidate-restriction setting outside its valid range."""


def _is_int(value) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


@dataclass(frozen=True)
class PruningConfig:
    """Knobs of the candidate set (see the module docstring for the exact rules).

    window: side of the local window (0 = no window).
    threat_aware: add back immediate wins and must-blocks.
    threat_space: also add moves making or blocking open fours and open threes
      (implies threat_aware).
    adaptive: widen the window by ``adaptive_step`` in tactical positions
      (needs a window).
    top_k: keep the ``top_k`` highest-prior legal moves (0 = off).
    top_k_mode: "union" (local/threat set united with top-k), "within" (the
      top-k of the window's moves, then the threat exceptions) or "alone"
      (top-k only; window, adaptive and threat options are ignored).
    fallback: use all legal moves when the board is not larger than the
      window or the window holds no legal move.
    forced: when the mover can win at once, only the winning moves; else when
      the opponent threatens to, only the blocks (step 0 above). "auto": forced
      moves where they are built, freestyle rules (`for_rule`), none under the
      standard and renju rules, whose wins are not freestyle's.
    vcf: threat-space search at every node (step 0b above,
      `stonelab.games.gomoku.threats`): when the mover wins by continuous fours, only
      the moves that start such a win; else, when the opponent would, only the moves
      that leave it none (if any do), within the set the other options make. "root": the
      same once per search, at the root only (`root_vcf_moves`, with `ROOT_VCF_BUDGET`),
      so the playouts cost what they cost without it. "auto": "root" under freestyle rules on
      boards larger than `AUTO_PROOF_POINTS` points (where the root proof is off), else off
      (`for_rule`, `for_board`).
    vcf_fours: the most fours one VCF may take (its length in the mover's moves).
    vct: threats (moves that leave a VCF) a win by continuous threats may take before its VCF,
      searched once a move at the root under freestyle rules (`root_vct_moves`, with
      `ROOT_VCT_BUDGET`; 0 = off, at most `MAX_VCT_THREATS`): the root keeps the first moves
      of the mover's fastest such win when it has one, else the moves after which the opponent
      has none, when some are. Like ``vcf``, taken away under the other rules.
    root_proof: plies of an exact proof search at the root of each search (0 = off, 1, 3, 5
      or 7; `stonelab.games.gomoku.tactics.proven_moves`): the root keeps only the moves that
      win within them when there are some, else only the moves after which the opponent has
      no forced win within as many plies of its own, when some moves are such. Once per
      move, not per node: a 5-ply proof takes ~8 ms a move on 6x6, seconds on 15x15.
      "auto": 5 plies on boards of at most `AUTO_PROOF_POINTS` points, else off (`for_board`).

    The defaults restrict nothing.
    """

    window: int = 0
    threat_aware: bool = False
    threat_space: bool = False
    adaptive: bool = False
    adaptive_step: int = 2
    top_k: int = 0
    top_k_mode: str = "union"
    fallback: bool = True
    forced: bool | str = False
    vcf: bool | str = False
    vcf_fours: int = 12
    vct: int = 0
    root_proof: int | str = 0

    def __post_init__(self):
        if not (isinstance(self.forced, bool) or self.forced == "auto"):
            raise PruningConfigError(f"pruning.forced={self.forced!r} must be true, false or auto "
                                     f"(forced moves under freestyle rules, none under standard and renju)")
        w, k = self.window, self.top_k
        if not _is_int(w) or w < 0:
            raise PruningConfigError(
                f"pruning.window={w!r} must be an integer >= 1, or 0 for no window; "
                f"negative values are not allowed")
        if not _is_int(k) or k < 0:
            raise PruningConfigError(f"pruning.top_k={k!r} must be >= 0 (0 = off)")
        if self.top_k_mode not in TOP_K_MODES:
            raise PruningConfigError(
                f"pruning.top_k_mode={self.top_k_mode!r} must be one of {sorted(TOP_K_MODES)}")
        if self.root_proof not in (0, 1, 3, 5, 7, "auto") or isinstance(self.root_proof, bool):
            raise PruningConfigError(f"pruning.root_proof={self.root_proof!r} must be 0 (off), 1, 3, 5 or 7 "
                                     f"plies, or auto (5 on boards of at most {AUTO_PROOF_POINTS} points, else 0)")
        if not (isinstance(self.vcf, bool) or self.vcf in ("root", "auto")):
            raise PruningConfigError(f"pruning.vcf={self.vcf!r} must be true (a threat-space search at every node), "
                                     "root (at the root of each search only), false or auto (root on freestyle "
                                     f"boards of more than {AUTO_PROOF_POINTS} points)")
        if not _is_int(self.vct) or not 0 <= self.vct <= MAX_VCT_THREATS:
            raise PruningConfigError(f"pruning.vct={self.vct!r} must be 0 (off) or the threats a win by continuous "
                                     f"threats may take before its fours, 1..{MAX_VCT_THREATS}")
        if not _is_int(self.vcf_fours) or self.vcf_fours < 1:
            raise PruningConfigError(f"pruning.vcf_fours={self.vcf_fours!r} must be an integer >= 1")
        if not _is_int(self.adaptive_step) or self.adaptive_step < 1:
            raise PruningConfigError(
                f"pruning.adaptive_step={self.adaptive_step!r} must be an integer >= 1")
        if k > 0 and self.top_k_mode == "within" and w == 0:
            raise PruningConfigError(
                "pruning.top_k_mode=within needs pruning.window >= 1 (top-k of the window's moves)")
        if self.adaptive and w == 0:
            raise PruningConfigError(
                "pruning.adaptive=true needs pruning.window >= 1 (it widens the window)")
        base = w > 0 or (k > 0 and self.top_k_mode == "union")
        for key in ("threat_aware", "threat_space"):
            if getattr(self, key) and not base:
                raise PruningConfigError(
                    f"pruning.{key}=true needs pruning.window >= 1 (or pruning.top_k >= 1 with "
                    f"pruning.top_k_mode=union): it adds moves back to a restricted set")

    def for_rule(self, freestyle: bool) -> PruningConfig:
        """These settings for a rule set: ``forced="auto"`` becomes whether the rules are freestyle,
        and takes ``vcf`` away under the other rules (their wins are not freestyle's): an "auto"
        one always, any other with ``forced="auto"``."""
        resolved = self if freestyle or self.vcf != "auto" else replace(self, vcf=False)
        if resolved.forced != "auto":
            return resolved
        return replace(resolved, forced=freestyle, vcf=resolved.vcf if freestyle else False,
                       vct=resolved.vct if freestyle else 0, root_proof=resolved.root_proof if freestyle else 0)

    def for_board(self, n: int) -> PruningConfig:
        """These settings for an ``n`` x ``n`` board: ``root_proof="auto"`` becomes 5 plies or 0, and
        ``vcf="auto"`` the threat-space search at the root where the proof is off, or none."""
        small = n * n <= AUTO_PROOF_POINTS
        resolved = self if self.vcf != "auto" else replace(self, vcf=False if small else "root")
        if resolved.root_proof != "auto":
            return resolved
        return replace(resolved, root_proof=5 if small else 0)

    @property
    def enabled(self) -> bool:
        """False when the candidate set is always exactly the legal moves."""
        return (self.window > 0 or self.top_k > 0 or bool(self.forced) or bool(self.vcf) or self.vct > 0
                or bool(self.root_proof))

    @property
    def window_used(self) -> bool:
        """Whether the local window takes part (not in top-k "alone" mode)."""
        return self.window > 0 and not (self.top_k > 0 and self.top_k_mode == "alone")

    def validate_for_board(self, n: int) -> None:
        """Reject a window that cannot fit an ``n`` x ``n`` board when fallback is off."""
        if self.window_used and self.window > n and not self.fallback:
            raise PruningConfigError(
                f"pruning.window={self.window} is larger than the {n}x{n} board and "
                f"pruning.fallback=false")

    def params(self) -> np.ndarray:
        """The fields as an ``int64`` array indexed by the ``P_*`` constants."""
        p = np.zeros(NUM_PARAMS, dtype=np.int64)
        p[P_WINDOW] = self.window
        p[P_THREAT_AWARE] = int(bool(self.threat_aware or self.threat_space))
        p[P_THREAT_SPACE] = int(bool(self.threat_space))
        p[P_ADAPTIVE] = int(bool(self.adaptive))
        p[P_ADAPTIVE_STEP] = self.adaptive_step
        p[P_TOP_K] = self.top_k
        p[P_TOP_K_MODE] = TOP_K_MODES[self.top_k_mode]
        p[P_FALLBACK] = int(bool(self.fallback))
        p[P_FORCED] = int(bool(self.forced))
        p[P_VCF] = self.vcf_fours if self.vcf is True else 0  # "root": not in the tree (root_vcf_moves)
        return p


# --- kernels -------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _is_empty(board, n, r, c):
    return 0 <= r < n and 0 <= c < n and board[r * n + c] == EMPTY


@njit(cache=True, nogil=True)
def shape_after(board, n, k, move, colour):
    """Strongest shape (``SHAPE_*``) that ``colour`` would make on the empty point ``move``.

    Only the four lines through ``move`` are scanned; ``board`` is not written.
    """
    best = SHAPE_NONE
    for d in range(4):
        dr = DIRECTIONS[d, 0]
        dc = DIRECTIONS[d, 1]
        length, fr, fc, br, bc = run_through(board, n, move, colour, dr, dc)
        if length >= k:
            return SHAPE_WIN
        ends_open = _is_empty(board, n, fr, fc) and _is_empty(board, n, br, bc)
        if not ends_open:
            continue
        if length == k - 1:
            best = SHAPE_OPEN_FOUR
        elif k >= 4 and length == k - 2 and best < SHAPE_OPEN_THREE:
            if _is_empty(board, n, fr + dr, fc + dc) or _is_empty(board, n, br - dr, bc - dc):
                best = SHAPE_OPEN_THREE
    return best


@njit(cache=True, nogil=True)
def is_tactical(board, n, k):
    """Whether either colour has an empty point that wins or makes an open four."""
    for a in range(n * n):
        if board[a] == EMPTY:
            if shape_after(board, n, k, a, 1) >= SHAPE_OPEN_FOUR:
                return True
            if shape_after(board, n, k, a, -1) >= SHAPE_OPEN_FOUR:
                return True
    return False


@njit(cache=True, nogil=True)
def _mark_top_k(eligible, priors, top_k, out):
    """Mark the ``top_k`` highest-prior ``eligible`` points (ties: lowest index) in ``out``.

    Returns how many of them were not marked before. Points are taken in the
    order (prior descending, index ascending) without extra memory; NaN
    priors are never taken.
    """
    added = 0
    last_p = np.inf
    last_a = -1
    for _ in range(top_k):
        best = -1
        best_p = -np.inf
        for a in range(eligible.shape[0]):
            if not eligible[a]:
                continue
            p = priors[a]
            # Only points after the last one taken in the (prior desc, index asc) order.
            if p > last_p or (p == last_p and a <= last_a):
                continue
            if best < 0 or p > best_p:
                if p == p:  # not NaN
                    best = a
                    best_p = p
        if best < 0:
            break
        if not out[best]:
            out[best] = True
            added += 1
        last_p = best_p
        last_a = best
    return added


@njit(cache=True, nogil=True)
def _add_top_k(board, priors, top_k, out):
    """Mark the ``top_k`` highest-prior legal points in ``out``; returns how many were new."""
    return _mark_top_k(board == EMPTY, priors, top_k, out)


@njit(cache=True, nogil=True)
def _keep_top_k(priors, top_k, out):
    """Keep only the ``top_k`` highest-prior marked points of ``out``; returns how many."""
    kept = np.zeros(out.shape[0], dtype=np.bool_)
    count = _mark_top_k(out, priors, top_k, kept)
    out[:] = kept
    return count


@njit(cache=True, nogil=True)
def _window_origin(board, n, w):
    """Top-left (row, col) of the ``w``-wide window around the rounded centroid, clipped."""
    m = 0
    sum_r = 0
    sum_c = 0
    for a in range(n * n):
        if board[a] != EMPTY:
            m += 1
            sum_r += a // n
            sum_c += a % n
    if m == 0:  # board centre (n - 1) / 2, rounded half up
        cr = n // 2
        cc = n // 2
    else:  # floor(sum / m + 1/2), exactly
        cr = (2 * sum_r + m) // (2 * m)
        cc = (2 * sum_c + m) // (2 * m)
    lo_r = max(0, min(cr - w // 2, n - w))
    lo_c = max(0, min(cc - w // 2, n - w))
    return lo_r, lo_c


@njit(cache=True, nogil=True)
def forced_moves(board, n, k, to_play, out):
    """Mark in ``out`` the points where ``to_play`` wins at once, else those where the opponent
    would (the blocks); returns how many (0: nothing is forced, and ``out`` is all False)."""
    for side in range(2):
        colour = to_play if side == 0 else -to_play
        count = 0
        for a in range(n * n):
            hit = board[a] == EMPTY and would_win(board, n, k, a, colour)
            out[a] = hit
            if hit:
                count += 1
        if count > 0:
            return count
    return 0


def root_vcf_moves(board: np.ndarray, n: int, k: int, to_play: int, max_fours: int) -> np.ndarray | None:
    """The moves a search's root keeps under ``vcf="root"`` (bool ``[n * n]``): those that start a
    win by continuous fours when the mover has one, else those after which the opponent has
    none; None when neither restricts (no VCF either way, or no move stops the opponent's)."""
    board = np.ascontiguousarray(board, dtype=np.int8).copy()
    out = np.zeros(n * n, dtype=np.bool_)
    if vcf_moves(board, n, k, to_play, max_fours, ROOT_VCF_BUDGET, out) > 0:
        return out
    defences = vcf_defences(board, n, k, to_play, max_fours, ROOT_VCF_BUDGET, out)
    return None if defences in (0, np.count_nonzero(board == EMPTY)) else out


def root_vct_moves(board: np.ndarray, n: int, k: int, to_play: int, max_threats: int,
                   max_fours: int) -> np.ndarray | None:
    """The moves a search's root keeps under ``vct`` (bool ``[n * n]``): those that start the
    mover's fastest win by continuous threats when it has one (`vct_moves`), else those after
    which the opponent has none (`vct_defences`); None when neither restricts (no such win
    either way, or no move found that stops the opponent's)."""
    board = np.ascontiguousarray(board, dtype=np.int8).copy()
    out = np.zeros(n * n, dtype=np.bool_)
    if vct_moves(board, n, k, to_play, max_threats, max_fours, ROOT_VCT_BUDGET, out) > 0:
        return out
    defences = vct_defences(board, n, k, to_play, max_threats, max_fours, ROOT_VCT_BUDGET, out)
    return out if defences > 0 else None


@njit(cache=True, nogil=True)
def candidate_mask(board, n, k, to_play, priors, params, out):
    """Fill ``out`` (bool ``[n * n]``) with the candidate set; returns its size.

    ``board``: int8 ``[n * n]``; ``to_play``: +1 / -1; ``priors``: float32
    ``[n * n]`` network priors (read only by top-k); ``params``: from
    `PruningConfig.params`. Every entry of ``out`` is written.
    """
    if params[P_FORCED] != 0:
        count = forced_moves(board, n, k, to_play, out)
        if count > 0:
            return count
    fours = params[P_VCF]
    if fours == 0:
        return _restricted_mask(board, n, k, to_play, priors, params, out)
    count = vcf_moves(board, n, k, to_play, fours, VCF_BUDGET, out)
    if count > 0:
        return count
    safe = np.empty(out.shape[0], dtype=np.bool_)
    defences = vcf_defences(board, n, k, to_play, fours, VCF_BUDGET, safe)
    count = _restricted_mask(board, n, k, to_play, priors, params, out)
    legal = 0
    for a in range(out.shape[0]):
        legal += board[a] == EMPTY
    if defences == 0 or defences == legal:
        return count  # nothing to defend, or nothing defends: the set as it was
    kept = 0
    for a in range(out.shape[0]):
        out[a] = out[a] and safe[a]
        kept += out[a]
    if kept > 0:
        return kept
    out[:] = safe  # the defences lie outside the window or the top-k: they come first
    return defences


@njit(cache=True, nogil=True)
def _restricted_mask(board, n, k, to_play, priors, params, out):
    """Steps 1-5 of the module docstring: the window, top-k and threat exceptions."""
    top_k = params[P_TOP_K]
    window = params[P_WINDOW]
    if top_k > 0 and params[P_TOP_K_MODE] == TOP_K_ALONE:
        for a in range(n * n):
            out[a] = False
        return _add_top_k(board, priors, top_k, out)
    if window <= 0 and top_k <= 0:
        return legal_mask(board, out)
    fallback = params[P_FALLBACK] != 0

    count = 0
    for a in range(n * n):
        out[a] = False
    if window > 0:
        w = window
        if params[P_ADAPTIVE] != 0 and is_tactical(board, n, k):
            w += params[P_ADAPTIVE_STEP]
        if fallback and n <= w:
            return legal_mask(board, out)
        lo_r, lo_c = _window_origin(board, n, w)
        for r in range(lo_r, min(n, lo_r + w)):
            for c in range(lo_c, min(n, lo_c + w)):
                a = r * n + c
                if board[a] == EMPTY:
                    out[a] = True
                    count += 1
        if fallback and count == 0:
            return legal_mask(board, out)
        if top_k > 0 and params[P_TOP_K_MODE] == TOP_K_WITHIN and count > top_k:
            count = _keep_top_k(priors, top_k, out)

    if params[P_THREAT_AWARE] != 0:
        space = params[P_THREAT_SPACE] != 0
        for a in range(n * n):
            if board[a] != EMPTY or out[a]:
                continue
            keep = False
            if space:
                keep = (shape_after(board, n, k, a, to_play) != SHAPE_NONE
                        or shape_after(board, n, k, a, -to_play) != SHAPE_NONE)
            else:
                keep = would_win(board, n, k, a, to_play) or would_win(board, n, k, a, -to_play)
            if keep:
                out[a] = True
                count += 1

    if top_k > 0 and params[P_TOP_K_MODE] == TOP_K_UNION:
        count += _add_top_k(board, priors, top_k, out)
    return count


# --- plain-Python helper -------------------------------------------------------------------------


def candidates(rules, board: np.ndarray, to_play: int, config: PruningConfig,
               priors: np.ndarray | None = None) -> np.ndarray:
    """Boolean candidate mask for one position (tests, docs); uniform priors when none given."""
    config.validate_for_board(rules.n)
    a = rules.n * rules.n
    board = np.ascontiguousarray(board, dtype=np.int8).reshape(a)
    if priors is None:
        priors = np.full(a, 1.0 / a, dtype=np.float32)
    priors = np.ascontiguousarray(priors, dtype=np.float32).reshape(a)
    out = np.zeros(a, dtype=np.bool_)
    candidate_mask(board, rules.n, rules.k, int(to_play), priors, config.params(), out)
    return out
