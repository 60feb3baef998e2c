"""A Gomoku tactics suite generated from the rules: positions whose right answers are a known set.

Five kinds, each decided by an exact, full-width proof search over the rules
(`stonelab.games.gomoku.rules`), never by a net or a pattern table:

  win_in_1     the mover can make k in a row; right: every move that does.
  block_four   the opponent threatens to win on exactly one point, the mover cannot win
               first, and after the block the opponent has no forced win within 3 plies;
               right: that point.
  double_threat the mover wins by force in 3 plies (a move that leaves two winning points:
               an open four or a double four) and not in 1; right: every such move.
  four_three   the mover wins by force in 5 plies and not in 3 (a four-three, a
               three-three that the opponent cannot answer); right: every move that
               forces the win within 5 plies.
  stop_three   the opponent would win by force in 3 plies if it were its move (an open
               three, or a broken one), and the mover can neither win nor make a four;
               right: every move after which the opponent has no forced win within 3
               plies. The set can hold more than the two or three "blocking" points (a
               point that breaks the line from the other side is one too).

"Wins by force in d plies" means: for every reply of the opponent there is a way to five
within d plies of the mover, every move of the board considered (freestyle rules: k or
more wins). Positions come from random games (uniformly random moves from the empty board,
seeded), deduplicated; each kind keeps positions where the answer set is a proper subset
of the legal moves, so a random mover does not score 100%.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from stonelab.games.gomoku.rules import EMPTY, GomokuRules, encode_position, would_win

KINDS = ("win_in_1", "block_four", "double_threat", "four_three", "stop_three")


@njit(cache=True, nogil=True)
def winning_points(board, n, k, colour, out):
    """Empty points where ``colour`` would make k in a row, into ``out``; returns how many."""
    count = 0
    for a in range(board.shape[0]):
        if board[a] == EMPTY and would_win(board, n, k, a, colour):
            out[count] = a
            count += 1
    return count


@njit(cache=True, nogil=True)
def _has_win(board, n, k, colour):
    for a in range(board.shape[0]):
        if board[a] == EMPTY and would_win(board, n, k, a, colour):
            return True
    return False


@njit(cache=True, nogil=True)
def _full(board):
    for a in range(board.shape[0]):
        if board[a] == EMPTY:
            return False
    return True


@njit(cache=True, nogil=True)
def first_wins(board, n, k, colour, limit, out):
    """Up to ``limit`` winning points of ``colour`` into ``out``; returns how many were found."""
    count = 0
    for a in range(board.shape[0]):
        if board[a] == EMPTY and would_win(board, n, k, a, colour):
            out[count] = a
            count += 1
            if count == limit:
                break
    return count


@njit(cache=True, nogil=True)
def _two_wins_through(board, n, k, a, colour):
    """Whether ``colour`` (a stone on ``a``) has two or more winning points on the four lines
    through ``a``, within k - 1 points of it."""
    r0, c0 = a // n, a % n
    count = 0
    for d in range(4):
        dr = 0 if d == 0 else 1  # directions: along a row, a column and the two diagonals
        dc = 1 if d == 0 or d == 2 else (0 if d == 1 else -1)
        for s in range(-(k - 1), k):
            r, c = r0 + s * dr, c0 + s * dc
            if s == 0 or r < 0 or r >= n or c < 0 or c >= n:
                continue
            p = r * n + c
            if board[p] == EMPTY and would_win(board, n, k, p, colour):
                count += 1
                if count == 2:
                    return True
    return False


# The proof search is unrolled by depth (1, 3, 5 plies) rather than recursive: numba's
# on-disk cache does not hold mutually recursive functions (a cached copy crashed here).
# It stays exact at 15x15 and 20x20 by three facts of freestyle Gomoku rather than by looking
# at every reply: an opponent's stone never gives a player a five nor takes a winning point
# away other than by filling it, so one reply stops one winning point; a player's new stone
# makes new winning points only on the lines through it; and a forced win that does not exist
# with the opponent passing does not exist after any opponent move (more opponent stones
# never help). The old full-width loops gave the same answers on the 8x8 suites (tested).

@njit(cache=True, nogil=True)
def _replies_all_lose_1(board, n, k, colour):
    """After ``colour``'s move: does it win on its next move whatever the opponent replies?
    Yes exactly when the opponent cannot win at once and ``colour`` has two winning points:
    a reply fills one of them."""
    if _has_win(board, n, k, -colour) or _full(board):
        return False  # the opponent wins first (or the board is full: a draw)
    spare = np.empty(2, dtype=np.int64)
    return first_wins(board, n, k, colour, 2, spare) == 2


@njit(cache=True, nogil=True)
def wins_within_3(board, n, k, colour):
    """Whether ``colour``, to move, makes k in a row by force within 3 plies."""
    if _has_win(board, n, k, colour):
        return True
    threats = np.empty(2, dtype=np.int64)
    opponent = first_wins(board, n, k, -colour, 2, threats)
    if opponent == 2:
        return False  # one move stops at most one of the opponent's fives
    empty = 0
    for a in range(board.shape[0]):
        empty += board[a] == EMPTY
    if empty < 3:
        return False  # no room for a move, a reply and a five
    for a in range(board.shape[0]):
        if board[a] != EMPTY or (opponent == 1 and a != threats[0]):
            continue
        # colour had no winning point: after ``a`` its winning points lie on the lines through ``a``
        board[a] = colour
        won = _two_wins_through(board, n, k, a, colour)
        board[a] = EMPTY
        if won:
            return True
    return False


@njit(cache=True, nogil=True)
def _replies_all_lose_3(board, n, k, colour):
    """After ``colour``'s move: does it win within 3 more plies whatever the opponent replies?"""
    if _has_win(board, n, k, -colour) or _full(board):
        return False
    fours = np.empty(2, dtype=np.int64)
    count = first_wins(board, n, k, colour, 2, fours)
    if count == 2:
        return True  # a reply stops one five
    if count == 1:  # every reply but the block loses at once
        board[fours[0]] = -colour
        holds = wins_within_3(board, n, k, colour)
        board[fours[0]] = EMPTY
        return holds
    if not wins_within_3(board, n, k, colour):
        return False  # no forced win even if the opponent passed: none after any reply
    for r in range(board.shape[0]):
        if board[r] != EMPTY:
            continue
        board[r] = -colour
        holds = wins_within_3(board, n, k, colour)
        board[r] = EMPTY
        if not holds:
            return False
    return True


@njit(cache=True, nogil=True)
def forcing_moves(board, n, k, colour, plies, out):
    """Moves of ``colour`` after which it wins by force within ``plies`` (1, 3, 5 or 7) plies
    counted from this move (1: wins at once); into ``out``, returns how many."""
    count = 0
    for a in range(board.shape[0]):
        if board[a] != EMPTY:
            continue
        ok = would_win(board, n, k, a, colour)
        if not ok and plies >= 3:
            board[a] = colour
            if plies == 3:
                ok = _replies_all_lose_1(board, n, k, colour)
            elif plies == 5:
                ok = _replies_all_lose_3(board, n, k, colour)
            else:
                ok = _replies_all_lose_5(board, n, k, colour)
            board[a] = EMPTY
        if ok:
            out[count] = a
            count += 1
    return count


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _replies_all_lose_5(board, n, k, colour):
    """After ``colour``'s move: does it win within 5 more plies whatever the opponent replies?
    (`_replies_all_lose_3` one level deeper, by the same facts.)"""
    if _has_win(board, n, k, -colour) or _full(board):
        return False
    fours = np.empty(2, dtype=np.int64)
    count = first_wins(board, n, k, colour, 2, fours)
    if count == 2:
        return True
    if count == 1:
        board[fours[0]] = -colour
        holds = wins_within_5(board, n, k, colour)
        board[fours[0]] = EMPTY
        return holds
    if not wins_within_5(board, n, k, colour):
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


@njit(cache=True, nogil=True)
def wins_within(board, n, k, colour, plies):
    """Whether ``colour``, to move, makes k in a row by force within ``plies`` (1, 3, 5 or 7) plies."""
    if plies <= 1:
        return _has_win(board, n, k, colour)
    if plies <= 3:
        return wins_within_3(board, n, k, colour)
    if plies <= 5:
        return wins_within_5(board, n, k, colour)
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


@njit(cache=True, nogil=True)
def proven_moves(board, n, k, colour, plies, out):
    """The moves an exact proof search of ``plies`` (1, 3, 5 or 7) plies allows ``colour`` (to move),
    marked in ``out``; returns (how many, whether they win).

    The moves that win by force within ``plies`` when there are some; else the moves after which
    the opponent has no forced win within ``plies`` of its own, when some but not all moves are
    such; when every move loses so, the same with ``plies - 2``, and so on down to 1 (the loss
    put off as long as the proof sees); else every legal move.
    """
    legal = 0
    for a in range(board.shape[0]):
        out[a] = False
        legal += board[a] == EMPTY
    winners = np.empty(board.shape[0], dtype=np.int64)
    won = forcing_moves(board, n, k, colour, plies, winners)
    if won > 0:
        for i in range(won):
            out[winners[i]] = True
        return won, True
    for depth in range(plies, 0, -2):
        # with colour passing, the weakest move: no forced win then means none after any move
        if not wins_within(board, n, k, -colour, depth):
            break
        count = 0
        for a in range(board.shape[0]):
            if board[a] != EMPTY:
                continue
            board[a] = colour
            out[a] = not wins_within(board, n, k, -colour, depth)
            board[a] = EMPTY
            count += out[a]
        if count > 0:
            return count, False
    for a in range(board.shape[0]):
        out[a] = board[a] == EMPTY
    return legal, False


@njit(cache=True, nogil=True)
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


@dataclass(frozen=True)
class Tactic:
    """One position: ``board`` int8 [n*n] (+1 black, -1 white), the colour to move, the
    last move, its kind and the right answers (sorted points)."""

    kind: str
    board: np.ndarray
    to_play: int
    last_move: int
    answers: tuple[int, ...]

    @property
    def legal_moves(self) -> int:
        """How many moves the mover has (a random mover's odds are ``len(answers) / legal_moves``)."""
        return int((self.board == EMPTY).sum())


def classify(rules: GomokuRules, board: np.ndarray, to_play: int) -> tuple[str, tuple[int, ...]] | None:
    """The kind of ``board`` with ``to_play`` to move and its right answers, or None if it is
    none of `KINDS` (or its answer set is every legal move)."""
    n, k = rules.n, rules.k
    b = board.copy()
    out = np.empty(n * n, dtype=np.int64)
    legal = int((b == EMPTY).sum())
    found = None
    wins = winning_points(b, n, k, to_play, out)
    if wins:
        found = ("win_in_1", tuple(out[:wins]))
    else:
        threats = winning_points(b, n, k, -to_play, out)
        if threats == 1 and _block_holds(b, n, k, to_play, int(out[0])):
            found = ("block_four", (int(out[0]),))
        elif threats == 0:
            found = _quiet_kind(b, n, k, to_play, out)
    if found is None or not 0 < len(found[1]) < legal:
        return None
    return found[0], tuple(sorted(int(a) for a in found[1]))


def _block_holds(b, n, k, to_play, point) -> bool:
    """Whether blocking on ``point`` leaves the opponent no forced win within 3 plies (a position
    lost whatever the mover does says nothing about blocking)."""
    b[point] = to_play
    holds = not wins_within_3(b, n, k, -to_play)
    b[point] = EMPTY
    return holds


def _quiet_kind(b, n, k, to_play, out):
    """Kinds of a position where neither side threatens to win at once."""
    count = forcing_moves(b, n, k, to_play, 3, out)
    if count:
        return "double_threat", tuple(out[:count])
    count = forcing_moves(b, n, k, to_play, 5, out)
    if count:
        return "four_three", tuple(out[:count])
    fours = np.empty(n * n, dtype=np.int64)
    for a in np.flatnonzero(b == EMPTY):  # the mover may not make a four: a forcing move would blur the set
        b[a] = to_play
        made = winning_points(b, n, k, to_play, fours)
        b[a] = EMPTY
        if made:
            return None
    if wins_within_3(b, n, k, -to_play):
        count = safe_moves(b, n, k, to_play, out)
        return "stop_three", tuple(out[:count])
    return None


def generate(rules: GomokuRules, per_kind: int = 20, seed: int = 0, max_games: int = 20_000) -> list[Tactic]:
    """Up to ``per_kind`` positions of each kind from seeded random games, deduplicated."""
    rng = np.random.default_rng(seed)
    found: dict[str, list[Tactic]] = {kind: [] for kind in KINDS}
    seen: set[bytes] = set()
    n2 = rules.num_actions
    for _ in range(max_games):
        if all(len(v) >= per_kind for v in found.values()):
            break
        board = rules.new_board()
        to_play, last = 1, -1
        for move in rng.permutation(n2):
            key = board.tobytes() + bytes([to_play & 0xFF])
            if key not in seen:
                seen.add(key)
                kind = classify(rules, board, to_play)
                if kind is not None and len(found[kind[0]]) < per_kind:
                    found[kind[0]].append(Tactic(kind[0], board.copy(), to_play, last, kind[1]))
            board[move] = to_play
            if would_win_now(rules, board, move):
                break
            to_play, last = -to_play, int(move)
    return [t for kind in KINDS for t in found[kind]]


def would_win_now(rules: GomokuRules, board: np.ndarray, move: int) -> bool:
    """Whether the stone just placed on ``move`` ends the game."""
    colour = board[move]
    board[move] = EMPTY
    won = would_win(board, rules.n, rules.k, move, colour)
    board[move] = colour
    return bool(won)


# --- answering and scoring (task=tactics) ------------------------------------------------------------


def policy_answers(rules: GomokuRules, evaluate, tactics: list[Tactic]) -> np.ndarray:
    """The net's most likely legal move in each position, one batched call."""
    planes = np.stack([encode_position(t.board, rules.n, t.to_play, t.last_move) for t in tactics])
    priors, _ = evaluate(planes)
    priors = np.where(np.stack([t.board == 0 for t in tactics]), priors, -np.inf)
    return np.argmax(priors, axis=1)


def search_answers(rules: GomokuRules, evaluate, tactics: list[Tactic], config, pruning=None) -> np.ndarray:
    """The most visited move after ``config.playouts`` playouts in each position, all searched together."""
    from stonelab.search.mcts import BatchedMCTS

    search = rules.search_game(pruning)
    mcts = BatchedMCTS(search, len(tactics), config)
    for g, t in enumerate(tactics):
        mcts.set_position(g, search.position(t.board, t.to_play, t.last_move))
    return np.argmax(mcts.search(evaluate, add_noise=False), axis=1)


def run_suite(cfg, path: str, playouts: list[int]) -> dict:
    """``task=tactics`` on a Gomoku net (a stonelab checkpoint or AlphaZero_Gomoku's file):
    the raw policy and the search at each of ``playouts`` (0: the raw policy)."""
    from stonelab.arena import tactics as scoring
    from stonelab.games import registry
    from stonelab.models.evaluator import net_evaluator
    from stonelab.search.mcts import MCTSConfig
    from stonelab.utils.device import resolve_device

    net, rules, label = _net_and_rules(path, cfg)
    evaluate = net_evaluator(net, resolve_device(cfg.device))
    tactics = generate(rules, per_kind=cfg.per_kind, seed=cfg.suite_seed)
    search = MCTSConfig(**cfg.search)
    pruning = registry.own_settings(registry.of(rules), cfg)  # another game's settings refused here
    rows = {"random move": scoring.random_baseline(tactics)}
    for p in playouts:
        answers = (policy_answers(rules, evaluate, tactics) if p == 0
                   else search_answers(rules, evaluate, tactics, replace(search, playouts=p), pruning))
        rows["raw policy" if p == 0 else f"search {p}"] = scoring.score(tactics, answers)
    return {"checkpoint": path, "net": label, "game": rules.name, "positions": scoring.counts(tactics),
            "suite_seed": cfg.suite_seed, "c_puct": search.c_puct, "pruning": dataclasses.asdict(pruning),
            "scores": rows}


def _net_and_rules(path: str, cfg):
    """The net to score and its game: a stonelab checkpoint names its game; AlphaZero_Gomoku's
    file gives only its board, so the line length is ``cfg.win_length``."""
    from stonelab.models import checkpoints
    from stonelab.models.nets import alphazero_gomoku

    if alphazero_gomoku.looks_like(path):
        net, n, label = alphazero_gomoku.load(path)
        return net, GomokuRules(n, int(cfg.win_length)), label
    loaded = checkpoints.load(path, game="gomoku")
    return loaded.net, loaded.game, f"checkpoint:{path}"
