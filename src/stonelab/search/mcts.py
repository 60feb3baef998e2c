"""Batched neural MCTS (AlphaZero PUCT) over many games at once.

Every step selects leaves in all games (``leaves_per_game`` each, kept apart by
virtual loss) and evaluates all of them in ONE call of the injected
``evaluate`` function. Trees live in a `stonelab.search.tree.Tree` and are
reused between moves. The game comes from ``rules.search_game(pruning)`` (a
`stonelab.search.game.SearchGame`); nothing here knows its rules.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from stonelab.errors import ConfigError, check
from stonelab.search import tree as T
from stonelab.search.game import ONGOING

# (planes [B, C, n, n] float32) -> (priors [B, A] float32, values [B] float32 in [-1, 1])
Evaluator = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


class SearchConfigError(ConfigError):
    """A search setting outside its valid range."""


@dataclass(frozen=True)
class MCTSConfig:
    """Search knobs (see conf/search/mcts.yaml).

    playouts: new simulations per move (the subtree reused from the last move
      keeps its visits on top of these).
    leaves_per_game: leaves selected per game per batched evaluation; >1 needs
      virtual loss to spread them.
    """

    playouts: int = 400
    c_puct: float = 5.0
    leaves_per_game: int = 1
    virtual_loss: float = 1.0
    dirichlet_alpha: float = 0.3
    dirichlet_epsilon: float = 0.25
    reuse_tree: bool = True

    def __post_init__(self):
        check([
            (lambda: isinstance(self.playouts, int) and self.playouts >= 1,
             f"search.playouts={self.playouts!r} must be an integer >= 1"),
            (lambda: self.c_puct > 0, f"search.c_puct={self.c_puct!r} must be > 0"),
            (lambda: isinstance(self.leaves_per_game, int) and self.leaves_per_game >= 1,
             f"search.leaves_per_game={self.leaves_per_game!r} must be an integer >= 1"),
            (lambda: self.virtual_loss >= 0, f"search.virtual_loss={self.virtual_loss!r} must be >= 0"),
            (lambda: self.dirichlet_alpha > 0, f"search.dirichlet_alpha={self.dirichlet_alpha!r} must be > 0"),
            (lambda: 0 <= self.dirichlet_epsilon <= 1,
             f"search.dirichlet_epsilon={self.dirichlet_epsilon!r} must be in [0, 1]"),
        ], SearchConfigError)


class BatchedMCTS:
    """``num_games`` search trees advanced in lockstep.

    Positions start at the game's start position; `play` advances a game
    (reusing its subtree), `search` runs ``config.playouts`` simulations in the
    chosen games and returns root visit counts ``[G, A]``. ``rules`` is a
    `stonelab.search.game.SearchGame`, or a rules object with
    ``search_game(pruning)`` (`GomokuRules`); ``pruning`` is the game's
    candidate restriction (Gomoku: `stonelab.games.gomoku_candidates.PruningConfig`).
    """

    def __init__(self, rules, num_games: int, config: MCTSConfig,
                 *, pruning=None, max_nodes: int | None = None):
        self.rules = rules
        self.config = config
        self.num_games = num_games
        if hasattr(rules, "spec"):  # already a SearchGame
            if pruning is not None:
                raise SearchConfigError("give pruning to the SearchGame, not to BatchedMCTS")
            self.game = rules
        else:
            self.game = rules.search_game(pruning)
        self.pruning = getattr(self.game, "pruning", None)
        # [expansions, candidate moves, legal moves] summed over expansions
        self.candidate_stats = np.zeros(3, dtype=np.int64)
        n, a = self.game.board_size, self.game.num_actions
        # A tree needs a node per simulation; twice that leaves room for reuse.
        m = max_nodes or 2 * (config.playouts + 2) + 8
        if m < config.playouts + 2:
            raise SearchConfigError(f"max_nodes={m} cannot hold one search of "
                                    f"{config.playouts} playouts (needs >= {config.playouts + 2})")
        self.max_nodes = m
        self.tree = T.new_tree(num_games, m, m * a)
        self.roots = self.game.new_positions(num_games)
        self.outcomes = np.zeros(num_games, dtype=np.int32)
        max_batch = num_games * config.leaves_per_game
        self._leaf_planes = np.zeros((max_batch, self.game.num_planes, n, n), dtype=np.float32)
        self._leaves = self.game.new_positions(max_batch)
        self._leaf_game = np.zeros(max_batch, dtype=np.int32)
        self._leaf_node = np.zeros(max_batch, dtype=np.int32)
        # A path never holds more edges than the tree has nodes.
        self._leaf_paths = np.zeros((max_batch, m + 1), dtype=np.int32)
        self._leaf_depth = np.zeros(max_batch, dtype=np.int32)
        batch = self.game.new_positions(1)
        self._pos = type(batch)(*(field[0] for field in batch))  # one position, scratch
        self._path = np.zeros(m + 1, dtype=np.int32)
        self._candidates = np.zeros(a, dtype=np.bool_)
        self.evaluations = 0  # leaves sent to the network, for throughput stats
        self.simulations = 0
        for g in range(num_games):
            self.reset(g)

    @property
    def root_board(self) -> np.ndarray:
        """Boards of the root positions ``[G, A]`` (the ``board`` field of the game's positions)."""
        return self.roots.board

    @property
    def root_info(self) -> np.ndarray:
        """The ``info`` field of the root positions (Gomoku: TO_PLAY, LAST_MOVE, NUM_STONES)."""
        return self.roots.info

    def reset(self, g: int) -> None:
        """Game ``g`` back to the start position with an empty tree."""
        self.game.reset_position(self.roots, g)
        self.outcomes[g] = ONGOING
        T.reset_tree(self.tree, g, ONGOING)

    def play(self, g: int, move: int) -> int:
        """Play ``move`` in game ``g``; returns the outcome code of `stonelab.search.game`."""
        reason = self.game.illegal_reason(self.roots, g, move)
        if reason is not None:
            raise ValueError(f"game {g}: {reason}")
        outcome = T.advance_root(self.tree, self.game.spec, self.roots, g, move)
        if not self.config.reuse_tree:
            T.reset_tree(self.tree, g, outcome)
        self.outcomes[g] = outcome
        return outcome

    def to_play(self, g: int) -> int:
        """Colour to move (+1 / -1) at game ``g``'s root."""
        return int(T.root_to_play(self.game.spec, self.roots, g))

    def root_planes(self, g: int) -> np.ndarray:
        """Network planes ``[C, n, n]`` float32 of game ``g``'s root position."""
        n = self.game.board_size
        planes = np.zeros((self.game.num_planes, n, n), dtype=np.float32)
        T.encode_root(self.game.spec, self.roots, g, planes)
        return planes

    def search(self, evaluate: Evaluator, games: np.ndarray | None = None,
               *, add_noise: bool = False, playouts: int | None = None,
               deadline: float | None = None) -> np.ndarray:
        """Run ``playouts`` simulations (default ``config.playouts``) in each game of
        ``games`` (default: all ongoing), stopping early once ``time.monotonic()``
        passes ``deadline``.

        Returns root visit counts ``[G, A]`` float32 (zero rows for games not
        searched); with a reused tree they include the visits of earlier searches.
        Between batched evaluations the clock is read, so a search overshoots its
        deadline by at most one evaluation.
        """
        cfg = self.config
        playouts = cfg.playouts if playouts is None else playouts
        if playouts + 2 > self.max_nodes:
            raise SearchConfigError(f"{playouts} playouts do not fit a tree of {self.max_nodes} nodes "
                                    f"(search in smaller steps, or build BatchedMCTS with max_nodes=)")
        tree, spec = self.tree, self.game.spec
        active = np.zeros(self.num_games, dtype=bool)
        if games is None:
            active[:] = True
        else:
            active[np.asarray(games, dtype=np.int64)] = True
        active &= self.outcomes == ONGOING
        a = self.game.num_actions
        for g in np.flatnonzero(active):
            T.ensure_room(tree, g, playouts + 1, a)
        # A root not yet expanded takes one extra simulation, so the root
        # children always gain exactly `playouts` visits.
        root_fresh = tree.num_children[np.arange(self.num_games), tree.root] < 0
        sims_done = np.zeros(self.num_games, dtype=np.int64)
        sims_target = np.where(active, playouts + root_fresh, 0).astype(np.int64)
        noise_pending = active.copy() if add_noise else np.zeros_like(active)
        self._apply_noise(noise_pending)
        while np.any(sims_done < sims_target):
            b = T.select_leaves(
                tree, spec, self.roots, cfg.c_puct, cfg.virtual_loss, cfg.leaves_per_game,
                sims_done, sims_target, self._leaf_planes, self._leaves, self._leaf_game,
                self._leaf_node, self._leaf_paths, self._leaf_depth, self._pos, self._path)
            if b > 0:
                priors, values = evaluate(self._leaf_planes[:b])
                T.expand_and_backup(
                    tree, spec, b, self._leaves, self._leaf_game, self._leaf_node, self._leaf_paths,
                    self._leaf_depth, np.ascontiguousarray(priors, dtype=np.float32),
                    np.ascontiguousarray(values, dtype=np.float32), sims_done,
                    self._candidates, self.candidate_stats)
                self.evaluations += b
            self._apply_noise(noise_pending)
            if deadline is not None and time.monotonic() >= deadline:
                break
        self.simulations += int(sims_done.sum() - root_fresh[active].sum())  # playouts, as configured
        visits = np.zeros((self.num_games, a), dtype=np.float32)
        for g in np.flatnonzero(active):
            T.root_visits(tree, g, visits[g])
        return visits

    @property
    def candidates_mean(self) -> float:
        """Mean number of moves expanded per node so far."""
        expansions, candidates, _ = self.candidate_stats
        return float(candidates / expansions) if expansions else float("nan")

    @property
    def candidate_reduction(self) -> float:
        """Fraction of legal moves that pruning removed at expansion so far."""
        _, candidates, legal = self.candidate_stats
        return float(1.0 - candidates / legal) if legal else float("nan")

    def _apply_noise(self, pending: np.ndarray) -> None:
        """Noise each pending root once it has been expanded."""
        for g in np.flatnonzero(pending):
            if self.tree.num_children[g, self.tree.root[g]] >= 0:
                T.add_dirichlet_noise(self.tree, g, self.config.dirichlet_alpha,
                                      self.config.dirichlet_epsilon)
                pending[g] = False


def visits_to_policy(visits: np.ndarray, temperature: float) -> np.ndarray:
    """Move probabilities from visit counts: N^(1/T) normalised; T -> 0 is argmax."""
    visits = np.asarray(visits, dtype=np.float64)
    if temperature <= 1e-3:
        probs = (visits == visits.max(axis=-1, keepdims=True)).astype(np.float64)
    else:
        scaled = np.where(visits > 0, visits / visits.max(axis=-1, keepdims=True), 0.0)
        probs = scaled ** (1.0 / temperature)
    return probs / probs.sum(axis=-1, keepdims=True)
