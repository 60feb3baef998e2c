"""Classic Othello opponents without search, for matches and tests.

Same interface as the players of `stonelab.arena.players` (``name``,
``reset(num_games)``, ``choose(games)``, ``observe(g, move)``): each keeps its own
view of every game as a batch of `OthelloPosition` and plays the moves it is
told of.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from stonelab.games.othello import rules as R
from stonelab.games.othello.rules import OthelloRules
from stonelab.games.othello.search import TO_PLAY, OthelloSearch
from stonelab.search import tree as T

# The weights of Norvig's "Paradigms of AI Programming", ch. 18 (after Rosenbloom's IAGO):
# corners are never flipped back, X and C squares (next to an empty corner) hand it over,
# edges are hard to flip.
PAIP_WEIGHTS_8X8 = np.array([
    [120, -20, 20, 5, 5, 20, -20, 120],
    [-20, -40, -5, -5, -5, -5, -40, -20],
    [20, -5, 15, 3, 3, 15, -5, 20],
    [5, -5, 3, 3, 3, 3, -5, 5],
    [5, -5, 3, 3, 3, 3, -5, 5],
    [20, -5, 15, 3, 3, 15, -5, 20],
    [-20, -40, -5, -5, -5, -5, -40, -20],
    [120, -20, 20, 5, 5, 20, -20, 120],
], dtype=np.float64)


def positional_weights(n: int) -> np.ndarray:
    """float64 ``[n * n]``: the weight of each point by its role, which on 8x8 is the PAIP table.

    With ``a <= b`` the point's distances to its two nearest edges (rows, columns):
    corner (0, 0) 120; C square (0, 1) -20; edge two from a corner (0, 2) 20; other edge
    points 5; X square (1, 1) -40; the rest of the second ring -5; the square diagonal
    from an X square (2, 2) 15; everything else 3.
    """
    table = np.empty((n, n), dtype=np.float64)
    for r in range(n):
        for c in range(n):
            a, b = sorted((min(r, n - 1 - r), min(c, n - 1 - c)))
            if a == 0:
                table[r, c] = {0: 120, 1: -20, 2: 20}.get(b, 5)
            elif a == 1:
                table[r, c] = -40 if b == 1 else -5
            else:
                table[r, c] = 15 if (a, b) == (2, 2) else 3
    return table.reshape(n * n)


@njit(cache=True, nogil=True)
def positional_scores(board, n, colour, weights, scratch, out):
    """``out[p]`` (float64 ``[n * n]``): the weight sum of ``colour``'s discs minus the opponent's
    after ``colour`` places on ``p``, -inf where it may not; ``scratch`` int8 ``[n * n]``.
    Returns how many points may be played."""
    count = 0
    for p in range(n * n):
        out[p] = -np.inf
        if not R.is_placing_move(board, n, p, colour):
            continue
        scratch[:] = board
        R.place(scratch, n, p, colour)
        total = 0.0
        for q in range(n * n):
            total += weights[q] * scratch[q]
        out[p] = total * colour
        count += 1
    return count


class PositionalPlayer:
    """Plays the placing move with the best `positional_weights` sum afterwards (own discs minus the
    opponent's); ties are broken at random (``seed``), and it passes when it must."""

    def __init__(self, rules: OthelloRules, seed: int = 0, name: str = "positional"):
        self.rules, self.seed, self.name = rules, seed, name
        self.search = OthelloSearch(rules)
        self.weights = positional_weights(rules.n)

    def reset(self, num_games: int) -> None:
        self.positions = self.search.new_positions(num_games)
        self.rng = np.random.default_rng(self.seed)

    def choose(self, games: np.ndarray) -> np.ndarray:
        n = self.rules.n
        scores = np.empty(n * n, dtype=np.float64)
        scratch = np.empty(n * n, dtype=np.int8)
        moves = []
        for g in games:
            colour = int(self.positions.info[g, TO_PLAY])
            if positional_scores(self.positions.board[g], n, colour, self.weights, scratch, scores) == 0:
                moves.append(self.rules.pass_move)
                continue
            best = np.flatnonzero(scores == scores.max())
            moves.append(int(self.rng.choice(best)))
        return np.array(moves, dtype=np.int64)

    def observe(self, g: int, move: int) -> None:
        T.play_position(self.search.spec, self.positions, g, move)


class RandomPlayer:
    """Uniformly random legal moves (``seed``): the baseline every player should beat."""

    def __init__(self, rules: OthelloRules, seed: int = 0, name: str = "random"):
        self.rules, self.seed, self.name = rules, seed, name
        self.search = OthelloSearch(rules)

    def reset(self, num_games: int) -> None:
        self.positions = self.search.new_positions(num_games)
        self.rng = np.random.default_rng(self.seed)

    def choose(self, games: np.ndarray) -> np.ndarray:
        return np.array([self.rng.choice(np.flatnonzero(self.search.legal_moves(self.positions, g)))
                         for g in games], dtype=np.int64)

    def observe(self, g: int, move: int) -> None:
        T.play_position(self.search.spec, self.positions, g, move)
