"""A Go game searched by MCTS: the engine behind GTP ``genmove`` and the analysis commands.

    player = GoSearchPlayer(rules, GoNetEvaluator(predictor, search), MCTSConfig(playouts=800))
    player.sync(state)                       # the game's current position (a `GoState`)
    player.search(deadline=time.monotonic() + 5)
    player.best_move(), player.analysis()

One tree, kept between moves: `sync` recognises the position after one more move from
the root and keeps that subtree; any other position (undo, a new game, loadsgf, a colour
moving twice) starts a fresh tree. Superko is part of the position (the rules kernels
refuse a move that repeats a whole-board position), so the root's children are legal
under it. A finished game (two passes) is searched on: the search position resumes play,
as GUIs do for cleanup.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from stonelab.games.go import rules as go
from stonelab.games.go.rules import GoRules, GoState
from stonelab.games.go.search import GoSearch, go_position_at
from stonelab.search import tree as T
from stonelab.search.mcts import BatchedMCTS, MCTSConfig


@dataclass(frozen=True)
class MoveInfo:
    """One root move of a search, as the analysis commands report it.

    winrate and lcb are for the side to move, in [0, 1]; pv starts with ``move``;
    ``pv_visits[i]`` is the visits of the edge that plays ``pv[i]`` (``pv_visits[0] ==
    visits``; never more than the entry before); ``value_sq`` the sum, over the move's
    visits, of the square of the value each backed up (in [-1, 1]: `edge_squares`).
    """

    move: int
    visits: int
    winrate: float
    prior: float
    lcb: float
    pv: tuple[int, ...]
    pv_visits: tuple[int, ...] = ()
    value_sq: float = 0.0


LCB_Z = 1.96  # standard errors below the mean: a 97.5% one-sided bound (KataGo's lcbStdevs is 5)


def value_lcb(visits: int, winrate: float, value_sq: float, z: float = LCB_Z) -> float:
    """A lower confidence bound of a win rate from the search's own samples: ``winrate - z *
    s / sqrt(visits)``, ``s`` the sample standard deviation (Bessel's ``visits - 1``) of the
    values the visits backed up, in win-rate units (half the value's). One visit has no
    spread to measure: ``s`` is then the widest a value in [-1, 1] allows (0.5), so one
    lucky visit makes no tight bound. 0 without visits. Not clamped to [0, 1], as KataGo's
    (its docs: it "might lie outside of [0,1]")."""
    if visits <= 0:
        return 0.0
    spread = 0.5
    if visits > 1:
        mean = 2.0 * winrate - 1.0
        spread = 0.5 * math.sqrt(max(value_sq - visits * mean * mean, 0.0) / (visits - 1))
    return winrate - z * spread / math.sqrt(visits)


def combined_lcb(infos) -> float | None:
    """`value_lcb` of all the visits of ``infos`` (`MoveInfo`) together: the root's bound,
    as its win rate is their visit-weighted mean. None before any visit."""
    visits = sum(info.visits for info in infos)
    if visits <= 0:
        return None
    winrate = sum(info.visits * info.winrate for info in infos) / visits
    return value_lcb(visits, winrate, sum(info.value_sq for info in infos))


def edge_squares(tree, g: int = 0, edges: np.ndarray | None = None) -> np.ndarray:
    """float64 [len(edges)]: for each of ``edges`` (default: every edge in use) of game
    ``g``'s tree, the sum over its visits of the square of the value each visit backed up
    (the tree keeps only their sum, ``value_sum``).

    The values under an edge are those of its child node's own evaluation (one visit, or
    every visit of a terminal node, all equal) and those under the child's edges, sign
    flipped: so a node's own value is its edge's sum plus its child edges' sums, and each
    value's square counts on every edge above it. Exact for a whole subtree (but for the
    float32 rounding of the sums); a subtree `GoSearchPlayer.prune` dropped counts as its
    mean, every visit alike (no spread). Only the linked edges are read, not the tree's
    unvisited ones (most of a 19x19 tree's).
    """
    used, count = int(tree.num_edges[g]), int(tree.num_nodes[g])
    linked = np.flatnonzero(tree.child[g, :used] >= 0)
    nodes = tree.child[g, linked]
    visits = tree.visits[g, linked].astype(np.float64)
    sums = tree.value_sum[g, linked].astype(np.float64)
    owner = _edge_owners(tree, g, count, linked)
    # a node's own evaluation: its edge's visits and value less those of its child edges
    mine = owner >= 0
    below_n = np.bincount(owner[mine], weights=visits[mine], minlength=count)
    below_w = np.bincount(owner[mine], weights=sums[mine], minlength=count)
    own_n = visits - below_n[nodes]
    own_w = np.clip(sums + below_w[nodes], -own_n, own_n)  # float32 sums: |value| <= 1 each
    own = np.where(own_n > 0.5, own_w * own_w / np.maximum(own_n, 1.0), 0.0)
    # each node's own squares onto itself and every node above it
    parent = np.full(count, -1, dtype=np.int64)
    parent[nodes] = owner
    below = np.zeros(count)
    below[nodes] = own
    climbing, add = parent[nodes], own
    while (up := climbing >= 0).any():
        climbing, add = climbing[up], add[up]
        below += np.bincount(climbing, weights=add, minlength=count)
        climbing = parent[climbing]
    wanted = np.arange(used) if edges is None else np.asarray(edges, dtype=np.int64)
    n, w, child = (tree.visits[g, wanted].astype(np.float64), tree.value_sum[g, wanted].astype(np.float64),
                   tree.child[g, wanted])
    out = np.where(n > 0, w * w / np.maximum(n, 1.0), 0.0)  # no subtree: all at the mean
    out[child >= 0] = below[child[child >= 0]]
    return out


def _edge_owners(tree, g: int, count: int, edges: np.ndarray) -> np.ndarray:
    """int64 [len(edges)]: the node whose children ``edges`` are, -1 for an edge outside every
    node's run of children (a root edge `GoSearchPlayer.restrict_root` hid)."""
    counts = tree.num_children[g, :count]
    expanded = np.flatnonzero(counts > 0)
    starts = tree.first_edge[g, expanded].astype(np.int64)
    order = np.argsort(starts)
    expanded, starts = expanded[order], starts[order]
    at = np.searchsorted(starts, edges, side="right") - 1
    inside = (at >= 0) & (edges < starts[np.maximum(at, 0)] + counts[expanded[np.maximum(at, 0)]])
    return np.where(inside, expanded[np.maximum(at, 0)], -1)


class GoSearchPlayer:
    """MCTS over one Go game with a `PositionEvaluator` (a net's priors, or pure MCTS)."""

    def __init__(self, rules: GoRules, evaluator, config: MCTSConfig, *, max_nodes: int | None = None,
                 max_moves: int | None = None):
        self.rules = rules
        self.evaluator = evaluator
        self.config = config
        # A whole game plus the playouts from its last position fit the move cap.
        self.game = getattr(evaluator, "search", None) or GoSearch(rules, max_moves=max_moves or 3 * rules.num_points)
        # The tree may hold fewer nodes than a move's playouts: `search` goes in steps that fit.
        step = config if max_nodes is None else replace(config, playouts=min(config.playouts, max_nodes - 2))
        self.mcts = BatchedMCTS(self.game, 1, step, max_nodes=max_nodes)
        self.root_key: tuple | None = None

    # -- the position
    @staticmethod
    def key(arrays) -> tuple:
        """What makes two positions the same search root: stones, side to move, ko, moves so far."""
        return (int(go.current_hash(arrays)), int(go.to_play(arrays)), int(go.ko_point(arrays)),
                int(go.move_number(arrays)), int(go.is_over(arrays)))

    def sync(self, state: GoState) -> bool:
        """Make ``state`` the root; returns whether the tree was kept (one move on from the root)."""
        target = self.key(state.arrays)
        if target == self.root_key:
            return True
        move = int(go.last_move(state.arrays))
        if self.root_key is not None and move >= 0 and self._after(move) == target:
            self.mcts.play(0, move)
            self.root_key = target
            return True
        self.mcts.set_position(0, self.game.position(self._playable(state)))
        self.root_key = target
        return False

    def _playable(self, state: GoState) -> GoState:
        """The state, with play resumed if two passes ended it (the search plays on)."""
        if not state.is_over:
            return state
        return state.copy().resume_play()

    def _after(self, move: int) -> tuple | None:
        """The key of the root after ``move``, or None if the move is illegal there."""
        root = go_position_at(self.mcts.roots, 0)
        if go.legal_reason(root, move) != go.OK:
            return None
        after = go.copy_arrays(root)
        go.play_unchecked(after, move)
        return self.key(after)

    # -- searching
    def search(self, playouts: int | None = None, deadline: float | None = None) -> np.ndarray:
        """``playouts`` more simulations (default: the config's), stopping at ``deadline``
        (`time.monotonic()`); returns the root's visit counts [A], reused visits included."""
        playouts = self.config.playouts if playouts is None else playouts
        room = self.mcts.max_nodes - 2 - int(self.mcts.tree.num_nodes[0])
        if room < 1:
            return self.root_visits()
        visits = self.mcts.search(self.evaluator, np.array([0]), playouts=min(playouts, room), deadline=deadline)
        return visits[0]

    def root_visits(self) -> np.ndarray:
        visits = np.zeros(self.game.num_actions, dtype=np.float32)
        T.root_visits(self.mcts.tree, 0, visits)
        return visits

    @property
    def tree_full(self) -> bool:
        return self.mcts.max_nodes - 2 - int(self.mcts.tree.num_nodes[0]) < 1

    @property
    def root_visit_total(self) -> int:
        return int(self.root_visits().sum())

    def root_winrate(self) -> float | None:
        """The search's win rate of the root for the side to move (None before any visit)."""
        tree, root = self.mcts.tree, int(self.mcts.tree.root[0])
        start, count = int(tree.first_edge[0, root]), int(tree.num_children[0, root])
        visits = tree.visits[0, start:start + max(count, 0)].sum()
        if visits <= 0:
            return None
        return 0.5 * (1.0 + float(tree.value_sum[0, start:start + count].sum()) / float(visits))

    # -- a tree that outgrows its nodes: analysis searches on for as long as it is asked to
    def prune(self, keep: float = 0.5) -> None:
        """Free nodes so that a search can go on: the subtrees under the least visited edges
        are dropped until at most ``keep`` of the nodes are in use. The edges themselves keep
        their visits and values (the root's statistics are untouched); a later visit
        rebuilds a dropped node from one evaluation."""
        tree, target = self.mcts.tree, int(keep * self.mcts.max_nodes)
        threshold = 2
        T.compact(tree, 0)
        while int(tree.num_nodes[0]) > target:
            used = int(tree.num_edges[0])
            light = tree.visits[0, :used] < threshold
            tree.child[0, :used][light] = -1
            T.compact(tree, 0)  # keeps only what the root still reaches
            threshold *= 2

    def restrict_root(self, allowed: np.ndarray) -> None:
        """Only the root moves with ``allowed[move]`` stay searchable (``avoid`` / ``allow`` of
        the analysis commands): the others move behind the root's last child edge. The tree
        is then no longer the game's: `forget` it before the next move."""
        self._ensure_expanded()
        tree, root = self.mcts.tree, int(self.mcts.tree.root[0])
        start, count = int(tree.first_edge[0, root]), int(tree.num_children[0, root])
        if count <= 0:
            return
        edges = np.arange(start, start + count)
        keep = allowed[tree.move[0, edges]]
        if keep.all() or not keep.any():  # nothing to hide, or nothing left: search them all
            return
        order = np.concatenate([edges[keep], edges[~keep]])
        for field in (tree.move, tree.visits, tree.child, tree.vloss, tree.prior, tree.value_sum):
            field[0, edges] = field[0, order]
        tree.num_children[0, root] = int(keep.sum())

    def forget(self) -> None:
        """Drop the tree: the next `sync` starts afresh."""
        self.root_key = None

    def set_komi(self, komi: float) -> None:
        """Search with ``komi`` from now on; the tree's values counted the old one: dropped."""
        if float(komi) != float(self.game.rules.komi):
            self.game.set_komi(komi)
            self.rules = self.game.rules
            self.forget()

    def best_move(self) -> int:
        """The most visited root move (ties: the higher prior); the best prior before any visit."""
        infos = self.analysis()
        if not infos:
            return self.game.num_actions - 1  # no legal board move: pass
        return infos[0].move

    def analysis(self, max_moves: int | None = None, pv_length: int = 12) -> list[MoveInfo]:
        """The root's moves, most visited first (then by prior), with win rates and a PV."""
        tree = self.mcts.tree
        root = int(tree.root[0])
        self._ensure_expanded()
        start, count = int(tree.first_edge[0, root]), int(tree.num_children[0, root])
        if count <= 0:
            return []
        edges = np.arange(start, start + count)
        order = np.lexsort((-tree.prior[0, edges], -tree.visits[0, edges]))
        chosen = edges[order][:max_moves]
        infos = []
        for e, square in zip(chosen, edge_squares(tree, 0, chosen), strict=True):
            visits = int(tree.visits[0, e])
            winrate = 0.5 * (1.0 + float(tree.value_sum[0, e]) / visits) if visits else 0.5
            pv, pv_visits = self._pv(int(e), pv_length)
            infos.append(MoveInfo(int(tree.move[0, e]), visits, winrate, float(tree.prior[0, e]),
                                  value_lcb(visits, winrate, float(square)), pv, pv_visits, float(square)))
        return infos

    def replies(self, move: int) -> list[tuple[int, int]]:
        """The searched answers to root move ``move``: [(reply, visits)], visits > 0 (none
        when the move is no searched root edge)."""
        tree = self.mcts.tree
        root = int(tree.root[0])
        start, count = int(tree.first_edge[0, root]), int(tree.num_children[0, root])
        for e in range(start, start + max(count, 0)):
            node = int(tree.child[0, e])
            if int(tree.move[0, e]) == move and node >= 0 and tree.num_children[0, node] > 0:
                first, many = int(tree.first_edge[0, node]), int(tree.num_children[0, node])
                return [(int(tree.move[0, r]), int(tree.visits[0, r])) for r in range(first, first + many)
                        if tree.visits[0, r] > 0]
        return []

    def _ensure_expanded(self) -> None:
        """An unsearched root gets its priors (one evaluation), so analysis has moves to show."""
        tree = self.mcts.tree
        if tree.num_children[0, tree.root[0]] < 0 and self.mcts.outcomes[0] == 0:
            self.mcts.search(self.evaluator, np.array([0]), playouts=1)

    def _pv(self, edge: int, length: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The principal variation from root edge ``edge`` (most visited child at each ply)
        and the visits of each of its edges."""
        tree = self.mcts.tree
        pv, visited = [int(tree.move[0, edge])], [int(tree.visits[0, edge])]
        node = int(tree.child[0, edge])
        while node >= 0 and len(pv) < length and tree.num_children[0, node] > 0:
            start, count = int(tree.first_edge[0, node]), int(tree.num_children[0, node])
            visits = tree.visits[0, start:start + count]
            if visits.max() <= 0:
                break
            e = start + int(np.argmax(visits))
            pv.append(int(tree.move[0, e]))
            visited.append(int(tree.visits[0, e]))
            node = int(tree.child[0, e])
        return tuple(pv), tuple(visited)


def go_search_player(predictor, settings: dict) -> GoSearchPlayer:
    """The `GoSearchPlayer` of a Go move predictor with ``settings``: `MCTSConfig` fields, and
    Go's own (`stonelab.games.go.settings.GoSettings`) under ``"go"`` (`search_settings`)."""
    from stonelab.errors import ConfigError
    from stonelab.games.go.evaluator import GoNetEvaluator
    from stonelab.games.go.settings import resolved_search, split_settings
    from stonelab.models.alphazero_go import AlphaZeroGoModel

    alphazero = isinstance(predictor, AlphaZeroGoModel)
    search, go_settings = split_settings(resolved_search(settings, alphazero))
    config = MCTSConfig(**search)
    rules = predictor.rules
    if alphazero:  # its own planes and value output, in its own search
        if go_settings.leaf_value not in ("auto", "net"):
            raise ConfigError(f"go.leaf_value={go_settings.leaf_value}: an alphazero Go net searches with its "
                              "value output (go.leaf_value=net or auto)")
        predictor.evaluate.use_score_utility(config.score_utility)
        return GoSearchPlayer(rules, predictor, config, max_nodes=config.max_nodes)
    if config.score_utility:
        raise ConfigError(f"search.score_utility={config.score_utility!r} is for alphazero Go nets with a score "
                          "head; a move predictor's search has no score: use 0")
    # A whole game, then playouts to its end. Own eyes stay unfilled, as in self-play: when
    # the pass is no candidate (points still open), a search that may fill its own eyes can
    # pick that and kill its own groups (measured against GNU Go on 9x9, 2026-12-02).
    game = GoSearch(rules, max_moves=3 * rules.num_points, fill_own_eyes=False)
    evaluator = GoNetEvaluator(predictor, game, value=go_settings.leaf_value, rollouts=go_settings.leaf_playouts)
    return GoSearchPlayer(rules, evaluator, config, max_nodes=config.max_nodes)


def pure_mcts_player(rules: GoRules, search: dict, leaf_playouts: int = 1) -> GoSearchPlayer:
    """Pure MCTS on Go (uniform priors, the mean of ``leaf_playouts`` random playouts as value)
    with ``search`` settings (`MCTSConfig` fields)."""
    from stonelab.games.go.evaluator import UniformEvaluator

    config = MCTSConfig(**search)
    game = GoSearch(rules, max_moves=3 * rules.num_points)
    return GoSearchPlayer(rules, UniformEvaluator(game, leaf_playouts), config, max_nodes=config.max_nodes)
