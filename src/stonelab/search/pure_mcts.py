"""Pure MCTS: the evaluation opponent of seed 000 (AlphaZero_Gomoku's MCTSPlayer).

Same PUCT tree kernels as the neural search, with uniform priors and a random
rollout to the end of the game as the leaf value. The whole move search is one
numba call; the tree is rebuilt every move, as in the reference.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from stonelab.games.gomoku import MOVER_WINS, ONGOING, GomokuRules, outcome_after
from stonelab.search import tree as T


@njit(cache=True, nogil=True)
def random_rollout(board, n, k, to_play, stones):
    """Play uniformly random moves to the end; value for ``to_play`` (+1, 0, -1)."""
    empties = np.empty(board.shape[0], dtype=np.int32)
    count = 0
    for a in range(board.shape[0]):
        if board[a] == 0:
            empties[count] = a
            count += 1
    player = to_play
    while count > 0:
        i = np.random.randint(count)
        move = empties[i]
        count -= 1
        empties[i] = empties[count]
        board[move] = player
        stones += 1
        if outcome_after(board, n, k, move, stones) == MOVER_WINS:
            return 1.0 if player == to_play else -1.0
        player = -player
    return 0.0


@njit(cache=True, nogil=True)
def pure_mcts_visits(board, n, k, to_play, last_move, stones, playouts, c_puct, seed):
    """Visit counts ``[A]`` of a fresh pure-MCTS search from the given position."""
    a = board.shape[0]
    if seed >= 0:
        np.random.seed(seed)
    max_nodes = playouts + 2
    nodes = np.zeros((1, max_nodes, 4), dtype=np.int32)
    edges_i = np.zeros((1, max_nodes * a, 4), dtype=np.int32)
    edges_f = np.zeros((1, max_nodes * a, 2), dtype=np.float32)
    meta = np.zeros((1, 3), dtype=np.int32)
    root_board = np.empty((1, a), dtype=np.int8)
    root_board[0] = board
    root_info = np.empty((1, 3), dtype=np.int32)
    root_info[0, 0] = to_play
    root_info[0, 1] = last_move
    root_info[0, 2] = stones
    T.reset_tree(nodes, meta, 0, ONGOING)
    scratch = np.empty(a, dtype=np.int8)
    path = np.empty(a + 1, dtype=np.int32)
    candidates = np.empty(a, dtype=np.bool_)
    uniform = np.ones(a, dtype=np.float32)
    for _ in range(playouts):
        node, depth, player, last, count = T.descend(
            nodes, edges_i, edges_f, meta, root_board, root_info, 0, n, k,
            c_puct, 0.0, scratch, path)
        outcome = nodes[0, node, T.OUTCOME]
        if outcome != ONGOING:
            value = T.terminal_value(outcome)
        else:
            for p in range(a):
                candidates[p] = scratch[p] == 0
            T.expand(nodes, edges_i, edges_f, meta, 0, node, candidates, uniform)
            value = random_rollout(scratch, n, k, player, count)
        T.backup(edges_i, edges_f, 0, path, depth, value)
    visits = np.zeros(a, dtype=np.float32)
    T.root_visits(nodes, edges_i, meta, 0, visits)
    return visits


def pure_mcts_move(rules: GomokuRules, board: np.ndarray, to_play: int, last_move: int,
                   *, playouts: int, c_puct: float = 5.0, seed: int = -1) -> int:
    """The most visited move of a pure-MCTS search (ties: lowest index).

    With a single playout no move has been visited yet (it only expands the root):
    the move is then uniformly random among the empty points, seeded by ``seed``.
    """
    stones = int(np.count_nonzero(board))
    visits = pure_mcts_visits(board, rules.n, rules.k, to_play, last_move, stones,
                              playouts, c_puct, seed)
    if visits.max() <= 0:
        return int(np.random.default_rng(max(seed, 0)).choice(np.flatnonzero(board == 0)))
    return int(np.argmax(visits))
