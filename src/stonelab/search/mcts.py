"""Batched neural MCTS (AlphaZero PUCT) over many games at once.

Every step selects leaves in all games (``leaves_per_game`` each, kept apart by
virtual loss) and evaluates all of them in ONE call of the injected
``evaluate`` function. Trees live in a `stonelab.search.tree.Tree` and are
reused between moves. The game comes from ``rules.search_game(settings)`` (a
`stonelab.search.game.SearchGame`); nothing here knows its rules.

Tree threads (``search.threads``): selection, expansion and backup of a step run
on that many threads, each worker taking a contiguous block of games and its own
rows of scratch (`stonelab.search.tree.Scratch`); the kernels are ``nogil``, so
the threads run side by side while the caller waits. Each game selects into its own
slots ``g * leaves_per_game, ...`` and `stonelab.search.tree.pack_leaves` then
packs them in the order one thread would give, so batches, trees and visits are
the same for any thread count (these kernels draw no random numbers; root noise
stays on the calling thread). A step is one call per worker (expand the evaluated
batch, then select into the other of two batches), two while root noise or a
clock has to come between. Default 1: more pay off when the network is fast (a
GPU) and the tree becomes the bottleneck; see ``python -m stonelab.bench mcts
--evaluator null --threads N``.

Why Python threads over ``nogil`` kernels rather than numba's ``prange``
(measured 2026-12-01 on 2 cores busy with two training processes, tree only,
ratios of 2 threads to 1 in the same process):

* ``@njit(parallel=True)`` with ``prange`` over games does not compile for
  Gomoku: a parallel loop unpacks one level of namedtuple, and `GomokuGame` keeps
  its pruning parameters as a tuple inside the spec ("scalar type UniTuple(int64
  x 8) given for non scalar argument"). On 9x9 Go (16 games, 128 playouts) it ran,
  but under numba's default OpenMP layer 2 threads gave 1,000-2,400 playouts/s
  against 44,000-67,000 on one (OpenMP's spinning workers beside busy processes);
  with ``OMP_WAIT_POLICY=passive`` x1.02-1.11, where the Python threads of the
  time gave x0.86-0.89. It would also tie every user to a threading layer
  (GNU OpenMP is not fork-safe).
* Python threads work for any game's spec, leave numba's threading alone and keep
  ``cache=True`` hitting. Their cost is per step: a call through numba's
  dispatcher costs 12-20 µs (typing the namedtuple arguments) and a
  `concurrent.futures` pool 70-80 µs per round of 2 empty calls, so 2 threads first
  ran at x0.37-0.57 (8x8, 64 games, 400 playouts). Entry points bound once
  (`stonelab.search.workers.bind`: 2 µs a call), a small runner
  (`stonelab.search.workers.Workers`: 14-17 µs of CPU per round) and one round per
  step instead of two gave, with ``bench mcts --evaluator null --threads 2``
  (8x8, 400 playouts), x0.83-0.86 of wall clock at 64 games (x0.83-0.84 per CPU
  second), x0.96 at 256 games (x0.96), and x0.78 on 9x9 Go with 8 games (x0.76).
  On that machine the process never got more than about one core, with one
  thread or with two, so the wall-clock ratio could not pass 1; per CPU second is
  what the threads themselves cost: about 16% at 64 games, 4% at 256. On one
  thread the bound entry points made the tree faster than before (366k-403k
  against 340k playouts per CPU second, 64 games with 2 leaves each, null
  evaluator).
* What stays on one thread: at 64 games 79% of the tree-only self-play time is in
  the per-worker kernels (84% at 256); packing the batch, the evaluator call,
  move choice and building the trees are the rest, which bounds 2 threads near
  x1.65 (x1.72 at 256 games) even on idle cores.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from stonelab.errors import ConfigError, check
from stonelab.search import tree as T
from stonelab.search.game import ONGOING
from stonelab.search.workers import Workers, bind

# (planes [B, C, n, n] float32) -> (priors [B, A] float32, values [B] float32 in [-1, 1])
Evaluator = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


class PositionEvaluator:
    """An evaluator that reads the leaf positions themselves rather than the game's planes.

    For nets with their own input features (the Go move predictors' 36 planes, with
    liberties and ladders) and for leaf values from random playouts. `BatchedMCTS`
    calls ``evaluate_positions(positions, count)``: ``positions`` is a batch of the
    game's search positions of which the first ``count`` are the leaves; it returns
    (priors [count, A] float32, values [count] float32 in [-1, 1], for the side to move).
    """

    def evaluate_positions(self, positions, count: int) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError


class SearchConfigError(ConfigError):
    """A search setting outside its valid range."""


AUTO = "auto"  # search.c_puct / search.fpu_reduction: the searching player's own value
ALPHAZERO_C_PUCT = 5.0  # AlphaZero_Gomoku's, with unvisited moves at Q = 0: self-play and AlphaZero nets' engines


@dataclass(frozen=True)
class MCTSConfig:
    """Search knobs (see conf/search/mcts.yaml).

    playouts: new simulations per move (the subtree reused from the last move
      keeps its visits on top of these).
    leaves_per_game: leaves selected per game per batched evaluation; >1 needs
      virtual loss to spread them.
    threads: threads for the tree work of each step, games split between them
      (at most one per game); results do not depend on it.
    """

    playouts: int = 400
    c_puct: float = 5.0
    leaves_per_game: int = 1
    virtual_loss: float = 1.0
    dirichlet_alpha: float = 0.3
    dirichlet_epsilon: float = 0.25
    reuse_tree: bool = True
    seconds: float | None = None  # a time limit per move for engines (GTP); None: playouts only
    max_nodes: int | None = None  # tree size of an engine's search; None: twice the playouts
    threads: int = 1  # threads for selection, expansion and backup (games split between them; same results)
    fpu_reduction: float | None = None  # unvisited moves' Q: None = 0 (AlphaZero_Gomoku), r = node Q - r * sqrt(visited P)
    root_policy_temperature: float = 1.0  # self-play roots (with the noise): priors P^(1/T), renormalised (KataGo)
    score_utility: float = 0.0  # nets with a score head: leaf value = (1-w) value + w score utility (KataGo)

    def __post_init__(self):
        # "auto" left here (Go's move predictors resolve it first: games/go/settings.py) is AlphaZero's
        if self.c_puct == AUTO:
            object.__setattr__(self, "c_puct", ALPHAZERO_C_PUCT)
        if self.fpu_reduction == AUTO:
            object.__setattr__(self, "fpu_reduction", None)
        check([
            (lambda: isinstance(self.playouts, int) and self.playouts >= 1,
             f"search.playouts={self.playouts!r} must be an integer >= 1"),
            (lambda: self.c_puct > 0, f"search.c_puct={self.c_puct!r} must be > 0 or auto"),
            (lambda: isinstance(self.leaves_per_game, int) and self.leaves_per_game >= 1,
             f"search.leaves_per_game={self.leaves_per_game!r} must be an integer >= 1"),
            (lambda: self.virtual_loss >= 0, f"search.virtual_loss={self.virtual_loss!r} must be >= 0"),
            (lambda: self.dirichlet_alpha > 0, f"search.dirichlet_alpha={self.dirichlet_alpha!r} must be > 0"),
            (lambda: 0 <= self.dirichlet_epsilon <= 1,
             f"search.dirichlet_epsilon={self.dirichlet_epsilon!r} must be in [0, 1]"),
            (lambda: self.seconds is None or (isinstance(self.seconds, (int, float)) and self.seconds > 0),
             f"search.seconds={self.seconds!r} must be null or > 0"),
            (lambda: self.max_nodes is None or (isinstance(self.max_nodes, int) and self.max_nodes >= 16),
             f"search.max_nodes={self.max_nodes!r} must be null or an integer >= 16"),
            (lambda: isinstance(self.threads, int) and not isinstance(self.threads, bool) and self.threads >= 1,
             f"search.threads={self.threads!r} must be an integer >= 1"),
            (lambda: self.fpu_reduction is None or 0 <= self.fpu_reduction <= 2,
             f"search.fpu_reduction={self.fpu_reduction!r} must be null (unvisited Q = 0), auto or in [0, 2]"),
            (lambda: isinstance(self.root_policy_temperature, (int, float)) and 0.5 <= self.root_policy_temperature <= 5,
             f"search.root_policy_temperature={self.root_policy_temperature!r} must be in [0.5, 5] (1: off)"),
            (lambda: isinstance(self.score_utility, (int, float)) and 0 <= self.score_utility <= 1,
             f"search.score_utility={self.score_utility!r} must be a weight in [0, 1]"),
        ], SearchConfigError)


class BatchedMCTS:
    """``num_games`` search trees advanced in lockstep.

    Positions start at the game's start position; `play` advances a game
    (reusing its subtree), `search` runs ``config.playouts`` simulations in the
    chosen games and returns root visit counts ``[G, A]``. ``rules`` is a
    `stonelab.search.game.SearchGame`, or a rules object with
    ``search_game(settings)``; ``settings`` are the game's own search settings
    (`registry.own_settings`; Gomoku: `stonelab.games.gomoku.candidates.PruningConfig`).
    """

    def __init__(self, rules, num_games: int, config: MCTSConfig,
                 *, settings=None, max_nodes: int | None = None):
        self.rules = rules
        self.config = config
        self.num_games = num_games
        if hasattr(rules, "spec"):  # already a SearchGame
            if settings is not None:
                raise SearchConfigError("give the game's settings to the SearchGame, not to BatchedMCTS")
            self.game = rules
        else:
            self.game = rules.search_game(settings)
        a = self.game.num_actions
        # A tree needs a node per simulation; twice that leaves room for reuse.
        m = max_nodes or config.max_nodes or 2 * (config.playouts + 2) + 8
        if m < config.playouts + 2:
            raise SearchConfigError(f"max_nodes={m} cannot hold one search of "
                                    f"{config.playouts} playouts (needs >= {config.playouts + 2})")
        self.max_nodes = m
        self.tree = T.new_tree(num_games, m, m * a)
        self.roots = self.game.new_positions(num_games)
        self.outcomes = np.zeros(num_games, dtype=np.int32)
        self.workers = max(1, min(config.threads, num_games))  # a thread without a game would idle
        # Two leaf batches: a step expands one while its workers select into the other.
        self._batches = [self._new_batch(num_games * config.leaves_per_game, m) for _ in range(2)]
        self._current = 0  # the batch of the last selection
        rows = self.workers * T.SPREAD
        self._scratch = T.Scratch(self.game.new_positions(rows), np.zeros((rows, m + 1), dtype=np.int32),
                                  np.zeros((rows, a), dtype=np.bool_), np.zeros((rows, 3), dtype=np.int64))
        self._kernels: dict = {}  # kernel -> its entry point for the argument types of this object
        self._threads = Workers(self.workers) if self.workers > 1 else None
        self.evaluations = 0  # leaves sent to the network, for throughput stats
        self.simulations = 0
        self.search_seconds = 0.0  # wall time inside `search`, evaluations included
        self._root_allowed: dict[int, np.ndarray] = {}  # game -> root moves kept (`_root_restrictions`)
        for g in range(num_games):
            self.reset(g)

    def tree_bytes(self) -> int:
        """Bytes of the arrays that grow with ``max_nodes``: the trees and the leaves' paths
        (an engine under a memory limit sizes its tree by this)."""
        return (sum(array.nbytes for array in self.tree) + sum(batch.paths.nbytes for batch in self._batches)
                + self._scratch.paths.nbytes)

    def _new_batch(self, size: int, max_nodes: int) -> T.LeafBatch:
        g = self.num_games
        return T.LeafBatch(
            np.zeros((size, self.game.num_planes, *self.game.board_shape), dtype=np.float32),
            self.game.new_positions(size),
            np.zeros(size, dtype=np.int32), np.zeros(size, dtype=np.int32),
            # A path never holds more edges than the tree has nodes.
            np.zeros((size, max_nodes + 1), dtype=np.int32), np.zeros(size, dtype=np.int32),
            np.zeros(g, dtype=np.int32), np.zeros(g + 1, dtype=np.int32))

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

    def set_position(self, g: int, position) -> None:
        """Game ``g`` from ``position`` (one search position of the game) with an empty tree."""
        for field, value in zip(self.roots, position, strict=True):
            field[g] = value
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

    def best_value(self, g: int) -> float | None:
        """The mean value W/N of game ``g``'s most visited root move, for the side to move
        (in [-1, 1]); None before any visit. What self-play resigns on."""
        tree, root = self.tree, int(self.tree.root[g])
        start, count = int(tree.first_edge[g, root]), int(tree.num_children[g, root])
        if count <= 0:
            return None
        edges = np.arange(start, start + count)
        best = edges[np.argmax(tree.visits[g, edges])]
        visits = int(tree.visits[g, best])
        return float(tree.value_sum[g, best]) / visits if visits else None

    def root_planes(self, g: int) -> np.ndarray:
        """Network planes ``[C, H, W]`` float32 of game ``g``'s root position."""
        planes = np.zeros((self.game.num_planes, *self.game.board_shape), dtype=np.float32)
        T.encode_root(self.game.spec, self.roots, g, planes)
        return planes

    def search(self, evaluate: Evaluator, games: np.ndarray | None = None,
               *, add_noise: bool | np.ndarray = False, playouts: int | np.ndarray | None = None,
               deadline: float | None = None) -> np.ndarray:
        """Run ``playouts`` simulations (default ``config.playouts``) in each game of
        ``games`` (default: all ongoing), stopping early once ``time.monotonic()``
        passes ``deadline``.

        ``playouts`` and ``add_noise`` may also be given per game (``[G]`` arrays): self-play's
        playout cap randomization searches some games fully (with root noise) and the others
        cheaply (without), all in the same batched network calls.

        Returns root visit counts ``[G, A]`` float32 (zero rows for games not
        searched); with a reused tree they include the visits of earlier searches.
        Between batched evaluations the clock is read, so a search overshoots its
        deadline by at most one evaluation.
        """
        started = time.perf_counter()
        cfg = self.config
        playouts = np.broadcast_to(np.asarray(cfg.playouts if playouts is None else playouts, dtype=np.int64),
                                   (self.num_games,))
        most = int(playouts.max())
        if most + 2 > self.max_nodes:
            raise SearchConfigError(f"{most} playouts do not fit a tree of {self.max_nodes} nodes "
                                    f"(search in smaller steps, or build BatchedMCTS with max_nodes=)")
        tree, spec = self.tree, self.game.spec
        active = np.zeros(self.num_games, dtype=bool)
        if games is None:
            active[:] = True
        else:
            active[np.asarray(games, dtype=np.int64)] = True
        active &= self.outcomes == ONGOING
        a = self.game.num_actions
        self._on_workers(T.ensure_room_games, tree, active, most + 1, a)
        # A root not yet expanded takes one extra simulation, so the root
        # children always gain exactly `playouts` visits.
        root_fresh = tree.num_children[np.arange(self.num_games), tree.root] < 0
        sims_done = np.zeros(self.num_games, dtype=np.int64)
        sims_target = np.where(active, playouts + root_fresh, 0).astype(np.int64)
        noise_pending = active & np.broadcast_to(np.asarray(add_noise, dtype=bool), active.shape)
        restrict_pending = self._root_restrictions(active)
        noise_left = self._prepare_roots(restrict_pending, noise_pending)
        b = self._select(sims_done, sims_target)
        while True:
            if b > 0:
                priors, values = self._evaluate(evaluate, b)
                self.evaluations += b
                if not noise_left and deadline is None:
                    # Nothing needs to come between: each worker expands and selects in one call.
                    b = self._expand_and_select(priors, values, sims_done, sims_target)
                    if b > 0:
                        continue
                else:
                    self._on_workers(T.expand_games, tree, spec, self._batches[self._current],
                                     priors, values, sims_done, self._scratch)
            if noise_left:
                noise_left = self._prepare_roots(restrict_pending, noise_pending)
            if deadline is not None and time.monotonic() >= deadline:
                break
            if not (sims_done < sims_target).any():
                break
            b = self._select(sims_done, sims_target)
        self.simulations += int(sims_done.sum() - root_fresh[active].sum())  # playouts, as configured
        visits = np.zeros((self.num_games, a), dtype=np.float32)
        for g in np.flatnonzero(active):
            T.root_visits(tree, g, visits[g])
        self.search_seconds += time.perf_counter() - started
        return visits

    def _kernel(self, kernel, *args):
        """``kernel``'s entry point for the types of ``args``, resolved once per search object."""
        fn = self._kernels.get(kernel)
        if fn is None:
            fn = self._kernels[kernel] = bind(kernel, *args)
        return fn

    def _on_workers(self, kernel, *args) -> None:
        """``kernel(*args, worker, workers)`` on every worker at once (each takes its own games)."""
        w = self.workers
        fn = self._kernel(kernel, *args, 0, w)
        if w == 1:
            fn(*args, 0, 1)
        else:
            self._threads.run(lambda worker: fn(*args, worker, w))

    def _settings(self, sims_done, sims_target) -> tuple:
        cfg = self.config
        fpu = -1.0 if cfg.fpu_reduction is None else float(cfg.fpu_reduction)
        return (self.tree, self.game.spec, self.roots, cfg.c_puct, cfg.virtual_loss, fpu, cfg.leaves_per_game,
                sims_done, sims_target)

    def _pack(self) -> int:
        args = (self.game.spec, self._batches[self._current], self.config.leaves_per_game)
        return self._kernel(T.pack_leaves, *args)(*args)

    def _select(self, sims_done, sims_target) -> int:
        """Leaves of every game short of its target into the current batch; returns how many."""
        self._on_workers(T.select_games, *self._settings(sims_done, sims_target),
                         self._batches[self._current], self._scratch)
        return self._pack()

    def _expand_and_select(self, priors, values, sims_done, sims_target) -> int:
        """Expand the current batch, select into the other one (which becomes current)."""
        evaluated = self._batches[self._current]
        self._current = 1 - self._current
        self._on_workers(T.expand_and_select_games, *self._settings(sims_done, sims_target),
                         evaluated, priors, values, self._batches[self._current], self._scratch)
        return self._pack()

    def _evaluate(self, evaluate, b: int) -> tuple[np.ndarray, np.ndarray]:
        """Priors ``[b, A]`` and values ``[b]`` (float32, contiguous) of the current batch's leaves."""
        batch = self._batches[self._current]
        if isinstance(evaluate, PositionEvaluator):
            priors, values = evaluate.evaluate_positions(batch.positions, b)
        else:
            priors, values = evaluate(batch.planes[:b])
        priors = np.ascontiguousarray(priors, dtype=np.float32)
        values = np.ascontiguousarray(values, dtype=np.float32)
        a = self.game.num_actions
        if priors.shape != (b, a) or values.shape != (b,):
            raise ValueError(f"the evaluator returned priors {priors.shape} and values {values.shape} "
                             f"for {b} leaves: expected ({b}, {a}) and ({b},)")
        return priors, values

    @property
    def candidate_stats(self) -> np.ndarray:
        """[expansions, candidate moves, legal moves] summed over the expansions so far."""
        return self._scratch.stats.sum(axis=0)

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

    def _root_restrictions(self, active: np.ndarray) -> np.ndarray:
        """Ask the game which moves each active root may keep (`SearchGame.root_moves`, optional:
        a proof at the root, where the game has one); the games with a restriction to apply."""
        pending = np.zeros(self.num_games, dtype=bool)
        self._root_allowed.clear()
        root_moves = getattr(self.game, "root_moves", None)
        if root_moves is None:
            return pending
        for g in np.flatnonzero(active):
            allowed = root_moves(self.roots, int(g))
            if allowed is not None:
                self._root_allowed[int(g)] = allowed
                pending[g] = True
        return pending

    def _prepare_roots(self, restrict: np.ndarray, noise: np.ndarray) -> bool:
        """Each pending root, once expanded: its moves restricted, then its noise; returns whether
        any root still waits for its expansion."""
        for g in np.flatnonzero(restrict):
            if self.tree.num_children[g, self.tree.root[g]] >= 0:
                T.restrict_root(self.tree, g, self._root_allowed[int(g)])
                restrict[g] = False
        return self._apply_noise(noise) or bool(restrict.any())

    def _apply_noise(self, pending: np.ndarray) -> bool:
        """Noise each pending root once it has been expanded; returns whether any is left."""
        for g in np.flatnonzero(pending):
            if self.tree.num_children[g, self.tree.root[g]] >= 0:
                if self.config.root_policy_temperature != 1.0:
                    T.soften_root_priors(self.tree, g, float(self.config.root_policy_temperature))
                T.add_dirichlet_noise(self.tree, g, self.config.dirichlet_alpha,
                                      self.config.dirichlet_epsilon)
                pending[g] = False
        return bool(pending.any())


def visits_to_policy(visits: np.ndarray, temperature: float) -> np.ndarray:
    """Move probabilities from visit counts: N^(1/T) normalised; T -> 0 is argmax."""
    visits = np.asarray(visits, dtype=np.float64)
    if temperature <= 1e-3:
        probs = (visits == visits.max(axis=-1, keepdims=True)).astype(np.float64)
    else:
        scaled = np.where(visits > 0, visits / visits.max(axis=-1, keepdims=True), 0.0)
        probs = scaled ** (1.0 / temperature)
    return probs / probs.sum(axis=-1, keepdims=True)
