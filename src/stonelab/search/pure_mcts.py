"""Pure MCTS: the evaluation opponent of seed 000 (AlphaZero_Gomoku's MCTSPlayer).

Same PUCT tree kernels as the neural search, with uniform priors and the
game's random playout to the end as the leaf value. The whole move search is
one numba call; the tree is rebuilt every move, as in the reference. Any game
registered with `stonelab.search.game` can be searched; Gomoku's entry points
(board, colour, last move) are in `stonelab.games.gomoku.search`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from stonelab.search import game as G
from stonelab.search import tree as T
from stonelab.search.game import ONGOING


@njit(cache=True, nogil=True)
def pure_mcts_search(game, root, playouts, c_puct, seed):
    """Visit counts ``[A]`` float32 of a fresh pure-MCTS search from position ``root``.

    Every simulation expands the leaf over all legal moves (uniform priors) and
    scores it with one random playout; ``seed >= 0`` seeds numba's RNG first.
    """
    a = G.num_actions(game)
    if seed >= 0:
        np.random.seed(seed)
    max_nodes = playouts + 2
    tree = T.new_tree(1, max_nodes, max_nodes * a)
    T.reset_tree(tree, 0, ONGOING)
    scratch = G.clone_position(game, root)
    path = np.empty(max_nodes + 1, dtype=np.int32)  # depth never exceeds the node count
    candidates = np.empty(a, dtype=np.bool_)
    uniform = np.ones(a, dtype=np.float32)
    for _ in range(playouts):
        node, depth = T.descend(tree, game, root, 0, c_puct, 0.0, -1.0, scratch, path)
        outcome = tree.outcome[0, node]
        if outcome != ONGOING:
            value = T.terminal_value(outcome)
        else:
            G.legal_moves(game, scratch, candidates)
            T.expand(tree, 0, node, candidates, uniform)
            value = G.rollout(game, scratch)
        T.backup(tree, 0, path, depth, value)
    visits = np.zeros(a, dtype=np.float32)
    T.root_visits(tree, 0, visits)
    return visits


@njit(cache=True, nogil=True)
def mean_rollout_values(game, positions, count, rollouts, out):
    """``out[i]``: mean result of ``rollouts`` random playouts from position ``i`` of the
    batch, for its side to move (+1 won .. -1 lost); the positions are left unchanged.

    The leaf value of a search whose net has no value output (Go's ``go.leaf_value=playouts``).
    """
    if count == 0:
        return
    scratch = G.clone_position(game, G.position_at(game, positions, 0))
    for i in range(count):
        pos = G.position_at(game, positions, i)
        total = 0.0
        for _ in range(rollouts):
            G.copy_position(game, pos, scratch)
            total += G.rollout(game, scratch)
        out[i] = total / rollouts


@njit(cache=True, nogil=True)
def pure_mcts_at(game, positions, i, playouts, c_puct, seed):
    """`pure_mcts_search` from position ``i`` of a batch (left unchanged)."""
    return pure_mcts_search(game, G.position_at(game, positions, i), playouts, c_puct, seed)

