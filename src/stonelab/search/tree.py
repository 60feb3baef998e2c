"""Search trees in preallocated arrays, and the numba kernels that walk them.

Many games are searched at once; game ``g`` owns row ``g`` of every array. A
node's children are a contiguous block of edges. No Python object exists per
node. The kernels are game-agnostic: positions are played and scored through
the generic kernels of `stonelab.search.game`, with the game's ``spec`` passed
as the ``game`` argument.

A leaf's network value is from the view of the player to move there; backup
flips its sign at every ply. Terminal nodes are scored exactly and never sent
to the network.

The step kernels (`select_games`, `expand_games`, `expand_and_select_games`,
`ensure_room_games`) take ``worker, workers`` and touch only that worker's games
(`worker_games`) and its row of the `Scratch`, so `stonelab.search.mcts`
may run one per thread at once; `pack_leaves` (one thread) then lays the
selected leaves out as a single thread would have.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from stonelab.search import game as G
from stonelab.search.game import DRAW, MOVER_LOSES, MOVER_WINS, ONGOING

Tree = namedtuple("Tree", [
    "first_edge", "num_children", "outcome", "pending",
    "move", "visits", "child", "vloss", "prior", "value_sum",
    "num_nodes", "num_edges", "root"])
Tree.__doc__ = """The trees of ``G`` games: ``M`` nodes and ``E`` edges per game, all preallocated.

Nodes (``[G, M]``):
  first_edge    int32   [G, M]  index of the node's first child edge
  num_children  int32   [G, M]  child edges; -1 while the node is not expanded
  outcome       int32   [G, M]  outcome (`stonelab.search.game`) of the move that led here
  pending       int32   [G, M]  1 while the leaf waits for its network evaluation

Edges (``[G, E]``; the children of a node are ``first_edge .. first_edge + num_children``):
  move          int32   [G, E]  action index
  visits        int32   [G, E]  completed visits N
  child         int32   [G, E]  node reached by the move; -1 until created
  vloss         int32   [G, E]  pending visits (virtual loss) of selections in flight
  prior         float32 [G, E]  P, renormalised over the node's children
  value_sum     float32 [G, E]  W, from the view of the player making the move

Per game (``[G]``):
  num_nodes     int32   [G]     nodes in use (``0 .. num_nodes - 1``)
  num_edges     int32   [G]     edges in use
  root          int32   [G]     the root node
"""


@njit(cache=True, nogil=True)
def new_tree(num_games, max_nodes, max_edges):
    """Zeroed `Tree` arrays for ``num_games`` trees of ``max_nodes`` / ``max_edges``."""
    return Tree(
        np.zeros((num_games, max_nodes), dtype=np.int32),
        np.zeros((num_games, max_nodes), dtype=np.int32),
        np.zeros((num_games, max_nodes), dtype=np.int32),
        np.zeros((num_games, max_nodes), dtype=np.int32),
        np.zeros((num_games, max_edges), dtype=np.int32),
        np.zeros((num_games, max_edges), dtype=np.int32),
        np.zeros((num_games, max_edges), dtype=np.int32),
        np.zeros((num_games, max_edges), dtype=np.int32),
        np.zeros((num_games, max_edges), dtype=np.float32),
        np.zeros((num_games, max_edges), dtype=np.float32),
        np.zeros(num_games, dtype=np.int32),
        np.zeros(num_games, dtype=np.int32),
        np.zeros(num_games, dtype=np.int32))


@njit(cache=True, nogil=True)
def seed_numba(seed):
    """numba keeps its own RNG; seed it from the config's seed."""
    np.random.seed(seed)


@njit(cache=True, nogil=True, inline="always")
def terminal_value(outcome):
    """Value for the player to move at a node whose last move had ``outcome``."""
    if outcome == MOVER_WINS:
        return -1.0
    if outcome == MOVER_LOSES:
        return 1.0
    return 0.0


@njit(cache=True, nogil=True, inline="always")
def new_node(tree, g, outcome):
    idx = tree.num_nodes[g]
    tree.num_nodes[g] = idx + 1
    tree.first_edge[g, idx] = 0
    tree.num_children[g, idx] = -1
    tree.outcome[g, idx] = outcome
    tree.pending[g, idx] = 0
    return idx


@njit(cache=True, nogil=True)
def reset_tree(tree, g, root_outcome):
    """Forget game ``g``'s tree, keeping its root position."""
    tree.num_nodes[g] = 0
    tree.num_edges[g] = 0
    tree.root[g] = new_node(tree, g, root_outcome)


@njit(cache=True, nogil=True, inline="always")
def select_edge(tree, g, node, c_puct, virtual_loss, fpu_reduction):
    """PUCT: argmax Q + c_puct * P * sqrt(sum N) / (1 + N), pending visits as losses.

    An unvisited move's Q (first-play urgency) is 0 when ``fpu_reduction`` is negative
    (AlphaZero_Gomoku's rule), else the node's own mean value minus ``fpu_reduction *
    sqrt(prior mass already visited)`` (KataGo's FPU reduction): in a won position untried
    moves are not scored as a loss, in a lost one not as an escape.
    """
    start = tree.first_edge[g, node]
    count = tree.num_children[g, node]
    visits_all = tree.visits[g]
    vloss_all = tree.vloss[g]
    value_all = tree.value_sum[g]
    prior_all = tree.prior[g]
    total = 0
    for e in range(start, start + count):
        total += visits_all[e] + vloss_all[e]
    sqrt_total = math.sqrt(max(total, 1))
    unvisited_q = 0.0
    if fpu_reduction >= 0.0:  # off by default: the plain PUCT walk pays nothing for it
        unvisited_q = _fpu_value(visits_all, value_all, prior_all, start, count, fpu_reduction)
    best = start
    best_score = -1e30
    for e in range(start, start + count):
        pending = vloss_all[e]
        visits = visits_all[e] + pending
        q = unvisited_q
        if visits > 0:
            q = (value_all[e] - virtual_loss * pending) / visits
        score = q + c_puct * prior_all[e] * sqrt_total / (1.0 + visits)
        if score > best_score:
            best_score = score
            best = e
    return best


@njit(cache=True, nogil=True, inline="always")
def _fpu_value(visits_all, value_all, prior_all, start, count, fpu_reduction):
    """Q of an untried move under FPU reduction: the node's mean value over its completed
    visits minus ``fpu_reduction * sqrt(prior mass already visited)``."""
    done = 0
    value_total = 0.0
    visited_prior = 0.0
    for e in range(start, start + count):
        if visits_all[e] > 0:
            done += visits_all[e]
            value_total += value_all[e]
            visited_prior += prior_all[e]
    node_q = value_total / done if done > 0 else 0.0
    return node_q - fpu_reduction * math.sqrt(visited_prior)


@njit(cache=True, nogil=True, inline="always")
def descend(tree, game, root, g, c_puct, virtual_loss, fpu_reduction, pos, path):
    """Walk from the root to a leaf, adding a pending visit on every edge.

    ``root`` is game ``g``'s root position; ``pos`` receives the leaf position
    and ``path`` the edges taken. Returns (leaf node, depth).
    """
    G.copy_position(game, root, pos)
    node = tree.root[g]
    depth = 0
    while tree.outcome[g, node] == ONGOING and tree.num_children[g, node] >= 0:
        e = select_edge(tree, g, node, c_puct, virtual_loss, fpu_reduction)
        tree.vloss[g, e] += 1
        path[depth] = e
        depth += 1
        G.play(game, pos, tree.move[g, e])
        child = tree.child[g, e]
        if child < 0:
            child = new_node(tree, g, G.outcome(game, pos))
            tree.child[g, e] = child
        node = child
    return node, depth


@njit(cache=True, nogil=True, inline="always")
def backup(tree, g, path, depth, leaf_value):
    """Add one visit along ``path``, removing its pending visit; flip sign each ply."""
    v = -leaf_value  # the last edge was chosen by the leaf's opponent
    for d in range(depth - 1, -1, -1):
        e = path[d]
        tree.visits[g, e] += 1
        tree.vloss[g, e] -= 1
        tree.value_sum[g, e] += v
        v = -v


@njit(cache=True, nogil=True)
def revert_pending(tree, g, path, depth):
    for d in range(depth):
        tree.vloss[g, path[d]] -= 1


@njit(cache=True, nogil=True, inline="always")
def expand(tree, g, node, candidates, priors):
    """Create one edge per candidate move, priors renormalised over them."""
    start = tree.num_edges[g]
    count = 0
    total = 0.0
    for a in range(candidates.shape[0]):
        if candidates[a]:
            e = start + count
            tree.move[g, e] = a
            tree.visits[g, e] = 0
            tree.child[g, e] = -1
            tree.vloss[g, e] = 0
            tree.prior[g, e] = priors[a]
            tree.value_sum[g, e] = 0.0
            total += priors[a]
            count += 1
    for e in range(start, start + count):
        if total > 0.0:
            tree.prior[g, e] /= total
        else:
            tree.prior[g, e] = 1.0 / count
    tree.num_edges[g] = start + count
    tree.first_edge[g, node] = start
    tree.num_children[g, node] = count
    tree.pending[g, node] = 0


@njit(cache=True, nogil=True)
def add_dirichlet_noise(tree, g, alpha, epsilon):
    """Mix Dir(alpha) noise into the root priors: P = (1 - eps) P + eps * noise."""
    root = tree.root[g]
    start = tree.first_edge[g, root]
    count = tree.num_children[g, root]
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
        tree.prior[g, e] = (1.0 - epsilon) * tree.prior[g, e] + epsilon * noise[i] / total


@njit(cache=True, nogil=True)
def soften_root_priors(tree, g, temperature):
    """Root priors to the power 1 / ``temperature``, renormalised (KataGo's root policy temperature:
    above 1 it flattens a confident prior, so self-play's search still tries the moves it ranks low)."""
    root = tree.root[g]
    start = tree.first_edge[g, root]
    count = tree.num_children[g, root]
    total = 0.0
    for i in range(count):
        p = tree.prior[g, start + i] ** (1.0 / temperature)
        tree.prior[g, start + i] = p
        total += p
    if total <= 0.0:
        return
    for i in range(count):
        tree.prior[g, start + i] /= total


@njit(cache=True, nogil=True)
def restrict_root(tree, g, allowed):
    """Keep only the root edges whose move is ``allowed`` (bool ``[A]``), in their order, priors
    renormalised over them; returns how many are kept. Nothing changes when none would be.
    Subtrees under dropped edges stay in the arrays, unreachable, until the next `compact`."""
    root = tree.root[g]
    start = tree.first_edge[g, root]
    count = tree.num_children[g, root]
    kept = 0
    total = 0.0
    for e in range(start, start + max(count, 0)):
        if allowed[tree.move[g, e]]:
            kept += 1
            total += tree.prior[g, e]
    if kept == 0 or kept == count:
        return count
    dst = start
    for e in range(start, start + count):
        if allowed[tree.move[g, e]]:
            tree.move[g, dst] = tree.move[g, e]
            tree.visits[g, dst] = tree.visits[g, e]
            tree.child[g, dst] = tree.child[g, e]
            tree.vloss[g, dst] = tree.vloss[g, e]
            tree.prior[g, dst] = tree.prior[g, e] / total if total > 0.0 else 1.0 / kept
            tree.value_sum[g, dst] = tree.value_sum[g, e]
            dst += 1
    tree.num_children[g, root] = kept
    return kept


@njit(cache=True, nogil=True)
def root_visits(tree, g, out):
    """``out[a]`` = visits of root move ``a`` (0 for moves not in the tree)."""
    out[:] = 0.0
    root = tree.root[g]
    start = tree.first_edge[g, root]
    count = tree.num_children[g, root]
    for e in range(start, start + max(count, 0)):
        out[tree.move[g, e]] = tree.visits[g, e]


@njit(cache=True, nogil=True)
def _copy_node(tree, g, old, dst, new):
    """Node ``old`` of game ``g`` into node ``new`` of the one-game tree ``dst``."""
    dst.first_edge[0, new] = tree.first_edge[g, old]
    dst.num_children[0, new] = tree.num_children[g, old]
    dst.outcome[0, new] = tree.outcome[g, old]
    dst.pending[0, new] = tree.pending[g, old]


@njit(cache=True, nogil=True)
def compact(tree, g):
    """Keep only the subtree under the root, packed at the start of the arrays."""
    num_nodes = tree.num_nodes[g]
    num_edges = tree.num_edges[g]
    new = new_tree(1, num_nodes, num_edges)
    queue = np.empty(num_nodes, dtype=np.int32)  # old ids in new order
    queue[0] = tree.root[g]
    n_new = 1
    e_new = 0
    head = 0
    while head < n_new:
        old = queue[head]
        _copy_node(tree, g, old, new, head)
        count = tree.num_children[g, old]
        if count > 0:
            start = tree.first_edge[g, old]
            new.first_edge[0, head] = e_new
            for i in range(count):
                src = start + i
                dst = e_new + i
                new.move[0, dst] = tree.move[g, src]
                new.visits[0, dst] = tree.visits[g, src]
                new.vloss[0, dst] = tree.vloss[g, src]
                new.prior[0, dst] = tree.prior[g, src]
                new.value_sum[0, dst] = tree.value_sum[g, src]
                child = tree.child[g, src]
                new.child[0, dst] = child
                if child >= 0:
                    queue[n_new] = child
                    new.child[0, dst] = n_new
                    n_new += 1
            e_new += count
        head += 1
    tree.first_edge[g, :n_new] = new.first_edge[0, :n_new]
    tree.num_children[g, :n_new] = new.num_children[0, :n_new]
    tree.outcome[g, :n_new] = new.outcome[0, :n_new]
    tree.pending[g, :n_new] = new.pending[0, :n_new]
    tree.move[g, :e_new] = new.move[0, :e_new]
    tree.visits[g, :e_new] = new.visits[0, :e_new]
    tree.child[g, :e_new] = new.child[0, :e_new]
    tree.vloss[g, :e_new] = new.vloss[0, :e_new]
    tree.prior[g, :e_new] = new.prior[0, :e_new]
    tree.value_sum[g, :e_new] = new.value_sum[0, :e_new]
    tree.num_nodes[g] = n_new
    tree.num_edges[g] = e_new
    tree.root[g] = 0


@njit(cache=True, nogil=True)
def ensure_room(tree, g, simulations, num_actions):
    """Make room for ``simulations`` more expansions: compact, else start afresh."""
    max_nodes = tree.outcome.shape[1]
    max_edges = tree.move.shape[1]
    need_nodes = simulations + 1
    need_edges = (simulations + 1) * num_actions
    if (tree.num_nodes[g] + need_nodes <= max_nodes
            and tree.num_edges[g] + need_edges <= max_edges):
        return
    compact(tree, g)
    if (tree.num_nodes[g] + need_nodes > max_nodes
            or tree.num_edges[g] + need_edges > max_edges):
        reset_tree(tree, g, tree.outcome[g, tree.root[g]])


@njit(cache=True, nogil=True)
def ensure_room_games(tree, active, simulations, num_actions, worker, workers):
    """`ensure_room` for worker ``worker``'s games (`worker_games`) where bool ``active[g]``."""
    for g in worker_games(active.shape[0], worker, workers):
        if active[g]:
            ensure_room(tree, g, simulations, num_actions)


@njit(cache=True, nogil=True)
def advance_root(tree, game, roots, g, move):
    """Play ``move`` at game ``g``'s root, reusing its subtree. Returns the outcome."""
    root_pos = G.position_at(game, roots, g)
    G.play(game, root_pos, move)
    outcome = G.outcome(game, root_pos)
    root = tree.root[g]
    child = -1
    count = tree.num_children[g, root]
    start = tree.first_edge[g, root]
    for e in range(start, start + max(count, 0)):
        if tree.move[g, e] == move:
            child = tree.child[g, e]
    if child >= 0:
        tree.root[g] = child
    else:
        reset_tree(tree, g, outcome)
    return outcome


@njit(cache=True, nogil=True)
def play_position(game, positions, g, move):
    """Play ``move`` in position ``g`` of a batch (no tree); returns the outcome (a referee's move)."""
    pos = G.position_at(game, positions, g)
    G.play(game, pos, move)
    return G.outcome(game, pos)


@njit(cache=True, nogil=True)
def root_to_play(game, roots, g):
    """Colour to move (+1 / -1) at game ``g``'s root."""
    return G.to_play(game, G.position_at(game, roots, g))


@njit(cache=True, nogil=True)
def encode_root(game, roots, g, out):
    """Network planes of game ``g``'s root position into ``out[C, n, n]``."""
    G.encode(game, G.position_at(game, roots, g), out)


@njit(cache=True, nogil=True)
def legal_at_root(game, roots, g, out):
    """Legal moves of game ``g``'s root position into bool ``out[A]``; returns how many."""
    return G.legal_moves(game, G.position_at(game, roots, g), out)


LeafBatch = namedtuple("LeafBatch", ["planes", "positions", "game", "node", "paths", "depth", "count", "start"])
LeafBatch.__doc__ = """The leaves of one batched evaluation: ``B = G * leaves_per_game`` slots.

Per slot (after `pack_leaves` the first ``start[G]`` are in use, in game order):
  planes     float32 [B, C, n, n]  network planes of the leaf
  positions  the game's positions with a leading ``[B]`` axis: the leaf positions
  game       int32   [B]     the game the leaf belongs to
  node       int32   [B]     the leaf node (marked ``pending`` until expanded)
  paths      int32   [B, D]  edges from the root (``D`` = max nodes + 1)
  depth      int32   [B]     edges in use in ``paths``

Per game:
  count      int32   [G]     leaves game ``g`` selected in this step
  start      int32   [G + 1] after packing, game ``g``'s leaves are slots ``start[g] .. start[g + 1] - 1``
"""

Scratch = namedtuple("Scratch", ["positions", "paths", "candidates", "stats"])
Scratch.__doc__ = """Scratch of ``W`` workers, ``R = W * SPREAD`` rows; worker ``w`` uses row ``w * SPREAD`` only:
  positions   the game's positions with a leading ``[R]`` axis: the position of a walk
  paths       int32 [R, D]  the edges of a walk
  candidates  bool  [R, A]  the candidate mask of the leaf being expanded
  stats       int64 [R, 3]  [expansions, candidates, legal moves], summed over expansions
"""

# Rows of a `Scratch` between two workers: 16 rows of at least 4 bytes span a 64-byte cache
# line, so no two workers write the same line (Gomoku's position ``info`` row is 12 bytes).
SPREAD = 16


@njit(cache=True, nogil=True)
def worker_games(num_games, worker, workers):
    """The games of worker ``worker`` of ``workers``: one contiguous block each, so the
    per-game entries two workers write (``num_nodes``, ``sims_done``, leaf slots) share
    a cache line only at a block's edge."""
    return range(worker * num_games // workers, (worker + 1) * num_games // workers)


@njit(cache=True, nogil=True)
def select_in_game(tree, game, roots, g, c_puct, virtual_loss, fpu_reduction, leaves_per_game, sims_done, sims_target,
                   batch, slot, pos, path):
    """Up to ``leaves_per_game`` leaves of game ``g`` into ``batch`` slots ``slot, slot + 1, ...``;
    returns how many.

    Terminal leaves are backed up at once and take no slot. ``pos`` / ``path``
    are scratch (one position, int32 ``[D]``).
    """
    in_flight = 0
    for _ in range(leaves_per_game):
        if sims_done[g] + in_flight >= sims_target[g]:
            break
        node, depth = descend(tree, game, G.position_at(game, roots, g), g,
                              c_puct, virtual_loss, fpu_reduction, pos, path)
        outcome = tree.outcome[g, node]
        if outcome != ONGOING:
            backup(tree, g, path, depth, terminal_value(outcome))
            sims_done[g] += 1
            continue
        if tree.pending[g, node]:
            # Another selection of this step already waits on this leaf.
            revert_pending(tree, g, path, depth)
            break
        tree.pending[g, node] = 1
        b = slot + in_flight
        G.copy_position(game, pos, G.position_at(game, batch.positions, b))
        G.encode(game, pos, batch.planes[b])
        batch.game[b] = g
        batch.node[b] = node
        batch.paths[b, :depth] = path[:depth]
        batch.depth[b] = depth
        in_flight += 1
    return in_flight


@njit(cache=True, nogil=True)
def select_games(tree, game, roots, c_puct, virtual_loss, fpu_reduction, leaves_per_game, sims_done, sims_target,
                 batch, scratch, worker, workers):
    """Select leaves in worker ``worker``'s games (`worker_games`) that are still short of
    their target, game ``g`` into its own slots ``g * leaves_per_game, ...``; `pack_leaves`
    then packs them. Games are separate trees, so workers may run at once.
    """
    pos = G.position_at(game, scratch.positions, worker * SPREAD)
    path = scratch.paths[worker * SPREAD]
    for g in worker_games(tree.root.shape[0], worker, workers):
        batch.count[g] = select_in_game(tree, game, roots, g, c_puct, virtual_loss, fpu_reduction, leaves_per_game,
                                        sims_done, sims_target, batch, g * leaves_per_game, pos, path)


@njit(cache=True, nogil=True)
def pack_leaves(game, batch, leaves_per_game):
    """Move each game's leaves down to the packed game order (one game after the other,
    as a single thread selecting them in turn would place them); returns B."""
    b = 0
    for g in range(batch.count.shape[0]):
        batch.start[g] = b
        src = g * leaves_per_game
        if src != b:  # b < src: copying downwards never overwrites a slot still to be read
            for i in range(batch.count[g]):
                s = src + i
                d = b + i
                G.copy_position(game, G.position_at(game, batch.positions, s),
                                G.position_at(game, batch.positions, d))
                batch.planes[d] = batch.planes[s]
                batch.game[d] = batch.game[s]
                batch.node[d] = batch.node[s]
                depth = batch.depth[s]
                batch.paths[d, :depth] = batch.paths[s, :depth]
                batch.depth[d] = depth
        b += batch.count[g]
    batch.start[batch.count.shape[0]] = b
    return b


@njit(cache=True, nogil=True)
def expand_games(tree, game, batch, priors, values, sims_done, scratch, worker, workers):
    """Expand the evaluated leaves of worker ``worker``'s games (packed ``batch``, priors
    ``[B, A]``, values ``[B]``) over their candidate moves and back their values up.

    The game decides the candidate set (all legal moves unless it restricts
    them); the root's children are its candidates, so root move selection uses
    the same set.
    """
    candidates = scratch.candidates[worker * SPREAD]
    stats = scratch.stats[worker * SPREAD]
    for g in worker_games(tree.root.shape[0], worker, workers):
        for b in range(batch.start[g], batch.start[g + 1]):
            count, legal = G.candidates(game, G.position_at(game, batch.positions, b), priors[b], candidates)
            stats[0] += 1
            stats[1] += count
            stats[2] += legal
            expand(tree, g, batch.node[b], candidates, priors[b])
            backup(tree, g, batch.paths[b], batch.depth[b], values[b])
            sims_done[g] += 1


@njit(cache=True, nogil=True)
def expand_and_select_games(tree, game, roots, c_puct, virtual_loss, fpu_reduction, leaves_per_game,
                            sims_done, sims_target,
                            evaluated, priors, values, batch, scratch, worker, workers):
    """One step of one worker: `expand_games` of the ``evaluated`` batch, then `select_games`
    into the other ``batch`` (one call per step instead of two)."""
    expand_games(tree, game, evaluated, priors, values, sims_done, scratch, worker, workers)
    select_games(tree, game, roots, c_puct, virtual_loss, fpu_reduction, leaves_per_game, sims_done, sims_target,
                 batch, scratch, worker, workers)


def outcome_is_terminal(outcome: int) -> bool:
    return outcome in (MOVER_WINS, DRAW, MOVER_LOSES)
