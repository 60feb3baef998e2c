"""Search trees in preallocated arrays, and the numba kernels that walk them.

Many games are searched at once; game ``g`` owns row ``g`` of every array. A
node is a row of ``nodes[g]``; its children are a contiguous block of edges in
``edges_i[g]`` / ``edges_f[g]``. No Python object exists per node.

Array layout (``G`` games, ``M`` nodes, ``E`` edges per game):
  nodes    int32   [G, M, 4]  EDGE_START, NUM_EDGES (-1: not expanded), OUTCOME, PENDING
  edges_i  int32   [G, E, 4]  MOVE, VISITS, CHILD (-1: not created), VLOSS (pending visits)
  edges_f  float32 [G, E, 2]  PRIOR, VALUE_SUM (from the view of the player making the move)
  meta     int32   [G, 3]     NUM_NODES, NUM_EDGES, ROOT
  root_board int8  [G, A]     position at the root
  root_info  int32 [G, 3]     TO_PLAY, LAST_MOVE, NUM_STONES at the root

A leaf's network value is from the view of the player to move there; backup
flips its sign at every ply. Terminal nodes are scored exactly and never sent
to the network.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from stonelab.games.gomoku import DRAW, MOVER_WINS, ONGOING, encode, outcome_after
from stonelab.search.pruning import candidate_mask

# nodes fields
EDGE_START, NUM_EDGES, OUTCOME, PENDING = 0, 1, 2, 3
# edges_i fields
MOVE, VISITS, CHILD, VLOSS = 0, 1, 2, 3
# edges_f fields
PRIOR, VALUE_SUM = 0, 1
# meta fields
NUM_NODES, NUM_EDGES_USED, ROOT = 0, 1, 2
# root_info fields
TO_PLAY, LAST_MOVE, NUM_STONES = 0, 1, 2


@njit(cache=True, nogil=True)
def seed_numba(seed):
    """numba keeps its own RNG; seed it from the config's seed."""
    np.random.seed(seed)


@njit(cache=True, nogil=True)
def terminal_value(outcome):
    """Value for the player to move at a node whose last move had ``outcome``."""
    if outcome == MOVER_WINS:
        return -1.0
    return 0.0


@njit(cache=True, nogil=True)
def new_node(nodes, meta, g, outcome):
    idx = meta[g, NUM_NODES]
    meta[g, NUM_NODES] = idx + 1
    nodes[g, idx, EDGE_START] = 0
    nodes[g, idx, NUM_EDGES] = -1
    nodes[g, idx, OUTCOME] = outcome
    nodes[g, idx, PENDING] = 0
    return idx


@njit(cache=True, nogil=True)
def reset_tree(nodes, meta, g, root_outcome):
    """Forget game ``g``'s tree, keeping its root position."""
    meta[g, NUM_NODES] = 0
    meta[g, NUM_EDGES_USED] = 0
    meta[g, ROOT] = new_node(nodes, meta, g, root_outcome)


@njit(cache=True, nogil=True)
def select_edge(nodes, edges_i, edges_f, g, node, c_puct, virtual_loss):
    """PUCT: argmax Q + c_puct * P * sqrt(sum N) / (1 + N), pending visits as losses."""
    start = nodes[g, node, EDGE_START]
    count = nodes[g, node, NUM_EDGES]
    total = 0
    for e in range(start, start + count):
        total += edges_i[g, e, VISITS] + edges_i[g, e, VLOSS]
    sqrt_total = math.sqrt(max(total, 1))
    best = start
    best_score = -1e30
    for e in range(start, start + count):
        pending = edges_i[g, e, VLOSS]
        visits = edges_i[g, e, VISITS] + pending
        q = 0.0
        if visits > 0:
            q = (edges_f[g, e, VALUE_SUM] - virtual_loss * pending) / visits
        score = q + c_puct * edges_f[g, e, PRIOR] * sqrt_total / (1.0 + visits)
        if score > best_score:
            best_score = score
            best = e
    return best


@njit(cache=True, nogil=True)
def descend(nodes, edges_i, edges_f, meta, root_board, root_info, g, n, k,
            c_puct, virtual_loss, board, path):
    """Walk from the root to a leaf, adding a pending visit on every edge.

    Fills ``board`` with the leaf position and ``path`` with the edges taken.
    Returns (leaf node, depth, to_play, last_move, num_stones) at the leaf.
    """
    board[:] = root_board[g]
    node = meta[g, ROOT]
    to_play = root_info[g, TO_PLAY]
    last = root_info[g, LAST_MOVE]
    stones = root_info[g, NUM_STONES]
    depth = 0
    while nodes[g, node, OUTCOME] == ONGOING and nodes[g, node, NUM_EDGES] >= 0:
        e = select_edge(nodes, edges_i, edges_f, g, node, c_puct, virtual_loss)
        edges_i[g, e, VLOSS] += 1
        path[depth] = e
        depth += 1
        move = edges_i[g, e, MOVE]
        board[move] = to_play
        stones += 1
        last = move
        child = edges_i[g, e, CHILD]
        if child < 0:
            child = new_node(nodes, meta, g, outcome_after(board, n, k, move, stones))
            edges_i[g, e, CHILD] = child
        to_play = -to_play
        node = child
    return node, depth, to_play, last, stones


@njit(cache=True, nogil=True)
def backup(edges_i, edges_f, g, path, depth, leaf_value):
    """Add one visit along ``path``, removing its pending visit; flip sign each ply."""
    v = -leaf_value  # the last edge was chosen by the leaf's opponent
    for d in range(depth - 1, -1, -1):
        e = path[d]
        edges_i[g, e, VISITS] += 1
        edges_i[g, e, VLOSS] -= 1
        edges_f[g, e, VALUE_SUM] += v
        v = -v


@njit(cache=True, nogil=True)
def revert_pending(edges_i, g, path, depth):
    for d in range(depth):
        edges_i[g, path[d], VLOSS] -= 1


@njit(cache=True, nogil=True)
def expand(nodes, edges_i, edges_f, meta, g, node, candidates, priors):
    """Create one edge per candidate point, priors renormalised over them."""
    start = meta[g, NUM_EDGES_USED]
    count = 0
    total = 0.0
    for a in range(candidates.shape[0]):
        if candidates[a]:
            e = start + count
            edges_i[g, e, MOVE] = a
            edges_i[g, e, VISITS] = 0
            edges_i[g, e, CHILD] = -1
            edges_i[g, e, VLOSS] = 0
            edges_f[g, e, PRIOR] = priors[a]
            edges_f[g, e, VALUE_SUM] = 0.0
            total += priors[a]
            count += 1
    for e in range(start, start + count):
        if total > 0.0:
            edges_f[g, e, PRIOR] /= total
        else:
            edges_f[g, e, PRIOR] = 1.0 / count
    meta[g, NUM_EDGES_USED] = start + count
    nodes[g, node, EDGE_START] = start
    nodes[g, node, NUM_EDGES] = count
    nodes[g, node, PENDING] = 0


@njit(cache=True, nogil=True)
def add_dirichlet_noise(nodes, edges_f, meta, g, alpha, epsilon):
    """Mix Dir(alpha) noise into the root priors: P = (1 - eps) P + eps * noise."""
    root = meta[g, ROOT]
    start = nodes[g, root, EDGE_START]
    count = nodes[g, root, NUM_EDGES]
    if count <= 0:
        return
    noise = np.empty(count, dtype=np.float64)
    total = 0.0
    for i in range(count):
        noise[i] = np.random.gamma(alpha, 1.0)
        total += noise[i]
    if total <= 0.0:
        return
    for i in range(count):
        e = start + i
        edges_f[g, e, PRIOR] = (1.0 - epsilon) * edges_f[g, e, PRIOR] + epsilon * noise[i] / total


@njit(cache=True, nogil=True)
def root_visits(nodes, edges_i, meta, g, out):
    """``out[a]`` = visits of root move ``a`` (0 for moves not in the tree)."""
    out[:] = 0.0
    root = meta[g, ROOT]
    start = nodes[g, root, EDGE_START]
    count = nodes[g, root, NUM_EDGES]
    for e in range(start, start + max(count, 0)):
        out[edges_i[g, e, MOVE]] = edges_i[g, e, VISITS]


@njit(cache=True, nogil=True)
def compact(nodes, edges_i, edges_f, meta, g):
    """Keep only the subtree under the root, packed at the start of the arrays."""
    num_nodes = meta[g, NUM_NODES]
    num_edges = meta[g, NUM_EDGES_USED]
    new_nodes = np.empty((num_nodes, 4), dtype=np.int32)
    new_ei = np.empty((num_edges, 4), dtype=np.int32)
    new_ef = np.empty((num_edges, 2), dtype=np.float32)
    queue = np.empty(num_nodes, dtype=np.int32)  # old ids in new order
    queue[0] = meta[g, ROOT]
    n_new = 1
    e_new = 0
    head = 0
    while head < n_new:
        old = queue[head]
        new_nodes[head, :] = nodes[g, old, :]
        count = nodes[g, old, NUM_EDGES]
        if count > 0:
            start = nodes[g, old, EDGE_START]
            new_nodes[head, EDGE_START] = e_new
            for i in range(count):
                new_ei[e_new + i, :] = edges_i[g, start + i, :]
                new_ef[e_new + i, :] = edges_f[g, start + i, :]
                child = edges_i[g, start + i, CHILD]
                if child >= 0:
                    queue[n_new] = child
                    new_ei[e_new + i, CHILD] = n_new
                    n_new += 1
            e_new += count
        head += 1
    nodes[g, :n_new, :] = new_nodes[:n_new]
    edges_i[g, :e_new, :] = new_ei[:e_new]
    edges_f[g, :e_new, :] = new_ef[:e_new]
    meta[g, NUM_NODES] = n_new
    meta[g, NUM_EDGES_USED] = e_new
    meta[g, ROOT] = 0


@njit(cache=True, nogil=True)
def ensure_room(nodes, edges_i, edges_f, meta, g, simulations, num_actions):
    """Make room for ``simulations`` more expansions: compact, else start afresh."""
    max_nodes = nodes.shape[1]
    max_edges = edges_i.shape[1]
    need_nodes = simulations + 1
    need_edges = (simulations + 1) * num_actions
    if (meta[g, NUM_NODES] + need_nodes <= max_nodes
            and meta[g, NUM_EDGES_USED] + need_edges <= max_edges):
        return
    compact(nodes, edges_i, edges_f, meta, g)
    if (meta[g, NUM_NODES] + need_nodes > max_nodes
            or meta[g, NUM_EDGES_USED] + need_edges > max_edges):
        root = meta[g, ROOT]
        reset_tree(nodes, meta, g, nodes[g, root, OUTCOME])


@njit(cache=True, nogil=True)
def advance_root(nodes, edges_i, meta, root_board, root_info, g, n, k, move):
    """Play ``move`` at game ``g``'s root, reusing its subtree. Returns the outcome."""
    to_play = root_info[g, TO_PLAY]
    root_board[g, move] = to_play
    stones = root_info[g, NUM_STONES] + 1
    root_info[g, TO_PLAY] = -to_play
    root_info[g, LAST_MOVE] = move
    root_info[g, NUM_STONES] = stones
    outcome = outcome_after(root_board[g], n, k, move, stones)
    root = meta[g, ROOT]
    child = -1
    count = nodes[g, root, NUM_EDGES]
    start = nodes[g, root, EDGE_START]
    for e in range(start, start + max(count, 0)):
        if edges_i[g, e, MOVE] == move:
            child = edges_i[g, e, CHILD]
    if child >= 0:
        meta[g, ROOT] = child
    else:
        reset_tree(nodes, meta, g, outcome)
    return outcome


@njit(cache=True, nogil=True)
def select_leaves(nodes, edges_i, edges_f, meta, root_board, root_info, n, k,
                  c_puct, virtual_loss, leaves_per_game, sims_done, sims_target,
                  leaf_planes, leaf_boards, leaf_game, leaf_node, leaf_paths, leaf_depth,
                  leaf_to_play, board, path):
    """Pick up to ``leaves_per_game`` leaves in every game still short of its target.

    Terminal leaves are backed up at once. Network leaves are encoded into
    ``leaf_planes[:B]`` for one batched evaluation; returns B.
    """
    b = 0
    for g in range(meta.shape[0]):
        in_flight = 0
        for _ in range(leaves_per_game):
            if sims_done[g] + in_flight >= sims_target[g]:
                break
            node, depth, to_play, last, stones = descend(
                nodes, edges_i, edges_f, meta, root_board, root_info, g, n, k,
                c_puct, virtual_loss, board, path)
            outcome = nodes[g, node, OUTCOME]
            if outcome != ONGOING:
                backup(edges_i, edges_f, g, path, depth, terminal_value(outcome))
                sims_done[g] += 1
                continue
            if nodes[g, node, PENDING]:
                # Another selection of this step already waits on this leaf.
                revert_pending(edges_i, g, path, depth)
                break
            nodes[g, node, PENDING] = 1
            leaf_boards[b, :] = board
            encode(board, n, to_play, last, leaf_planes[b])
            leaf_game[b] = g
            leaf_node[b] = node
            leaf_paths[b, :depth] = path[:depth]
            leaf_depth[b] = depth
            leaf_to_play[b] = to_play
            in_flight += 1
            b += 1
    return b


@njit(cache=True, nogil=True)
def expand_and_backup(nodes, edges_i, edges_f, meta, n, k, num_leaves, leaf_boards, leaf_game,
                      leaf_node, leaf_paths, leaf_depth, leaf_to_play, priors, values, sims_done,
                      pruning_params, candidates, candidate_stats):
    """Expand every evaluated leaf over its candidate moves and back its value up.

    The candidate set (`stonelab.search.pruning`) is all legal moves unless
    pruning is configured; the root's children are its candidates, so root
    move selection uses the same set. ``candidate_stats`` accumulates
    [expansions, candidates, legal moves].
    """
    for b in range(num_leaves):
        g = leaf_game[b]
        board = leaf_boards[b]
        count = candidate_mask(board, n, k, leaf_to_play[b], priors[b], pruning_params, candidates)
        legal = 0
        for a in range(candidates.shape[0]):
            if board[a] == 0:
                legal += 1
        if count == 0:  # nothing survived (fallback off): never leave a node without moves
            for a in range(candidates.shape[0]):
                candidates[a] = board[a] == 0
            count = legal
        candidate_stats[0] += 1
        candidate_stats[1] += count
        candidate_stats[2] += legal
        expand(nodes, edges_i, edges_f, meta, g, leaf_node[b], candidates, priors[b])
        backup(edges_i, edges_f, g, leaf_paths[b], leaf_depth[b], values[b])
        sims_done[g] += 1


def outcome_is_terminal(outcome: int) -> bool:
    return outcome in (MOVER_WINS, DRAW)
