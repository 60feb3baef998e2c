"""Players that pick moves in many games at once, and the referee that pits two.

A player keeps its own view of each game: `observe` tells it every move
played (its own and the opponent's); `choose` asks for moves in some games.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from stonelab.games import registry
from stonelab.search import tree as T
from stonelab.search.game import MOVER_LOSES, MOVER_WINS, ONGOING
from stonelab.search.mcts import BatchedMCTS, Evaluator, MCTSConfig
from stonelab.search.pure_mcts import pure_mcts_at
from stonelab.search.selfplay import random_opening


class NeuralMCTSPlayer:
    """Network-guided batched search; plays the most visited move (no noise). ``settings``:
    the game's own search settings (`stonelab.search.mcts.BatchedMCTS`)."""

    def __init__(self, rules, evaluate: Evaluator, config: MCTSConfig, name: str = "neural",
                 settings=None):
        self.rules, self.evaluate, self.config, self.name = rules, evaluate, config, name
        self.settings = settings
        self.mcts: BatchedMCTS | None = None

    def reset(self, num_games: int) -> None:
        self.num_games = num_games
        self.mcts = BatchedMCTS(self.rules, num_games, self.config, settings=self.settings)

    def reset_game(self, g: int) -> None:
        """Game ``g`` back to the empty board, keeping the trees' memory: allocating a tree
        for 100,000 playouts on 15x15 takes seconds, too long inside a timed move."""
        self.mcts.reset(g)

    def choose(self, games: np.ndarray, *, deadline: float | None = None) -> np.ndarray:
        """The most visited move of each game in ``games`` after ``config.playouts`` playouts,
        or fewer where ``time.monotonic()`` passes ``deadline`` first."""
        visits = self.mcts.search(self.evaluate, games, add_noise=False, deadline=deadline)
        unvisited = games[visits[games].sum(axis=1) == 0]
        if len(unvisited):
            # out of time with only the root expanded: argmax of zero visits would be point 0,
            # maybe occupied; one playout more (one evaluation) makes it a searched move
            visits[unvisited] = self.mcts.search(self.evaluate, unvisited, add_noise=False, playouts=1)[unvisited]
        return np.argmax(visits[games], axis=1)

    def fit_memory(self, budget_bytes: int, least_playouts: int = 16) -> int | None:
        """Rebuild a smaller tree when this one's arrays exceed ``budget_bytes``: as many playouts
        a move as fit (at least ``least_playouts``), the games starting over. Returns those
        playouts, or None when the tree fits as it is."""
        used = self.mcts.tree_bytes()
        if used <= budget_bytes:
            return None
        per_node = used / self.mcts.max_nodes
        nodes = int(budget_bytes // per_node)
        playouts = max(least_playouts, (nodes - 8) // 2 - 2)  # the inverse of BatchedMCTS's 2 * (p + 2) + 8
        self.config = replace(self.config, playouts=playouts, max_nodes=None)
        self.mcts = None  # the old tree's memory goes back before the new one is allocated
        self.reset(self.num_games)
        return playouts

    def warm_up(self, moves: int = 4) -> None:
        """Compile every kernel a move runs (or load it from numba's cache) and run the net once,
        on a throwaway tree small enough to be compacted: a first search pays ~0.5 s for this
        with a warm numba cache, seconds with a cold one, which must not come out of a timed move."""
        mcts = BatchedMCTS(self.rules, 1, replace(self.config, playouts=4), settings=self.settings, max_nodes=16)
        for _ in range(moves):
            visits = mcts.search(self.evaluate, playouts=4)
            if mcts.play(0, int(np.argmax(visits[0]))) != ONGOING:
                break

    def observe(self, g: int, move: int) -> None:
        self.mcts.play(g, move)


class PureMCTSPlayer:
    """Seed 000's pure-MCTS opponent for any game: uniform priors, one random playout per
    leaf, a fresh tree every move, one game searched at a time (AlphaZero_Gomoku's MCTSPlayer)."""

    def __init__(self, rules, playouts: int, c_puct: float = 5.0, seed: int = 0):
        self.rules, self.playouts, self.c_puct, self.seed = rules, playouts, c_puct, seed
        self.game = rules.search_game()
        self.name = f"pure_mcts_{playouts}"

    def reset(self, num_games: int) -> None:
        self.positions = self.game.new_positions(num_games)
        self.plies = np.zeros(num_games, dtype=np.int64)
        self._legal = np.empty(self.game.num_actions, dtype=np.bool_)

    def choose(self, games: np.ndarray) -> np.ndarray:
        return np.array([self._move(int(g)) for g in games], dtype=np.int64)

    def _move(self, g: int) -> int:
        """The most visited move (ties: lowest index). With a single playout no move has been
        visited (it only expands the root): then a uniformly random legal move, seeded."""
        seed = (self.seed * 1_000_003 + g * 1009 + int(self.plies[g])) % (2**31 - 1)
        visits = pure_mcts_at(self.game.spec, self.positions, g, self.playouts, self.c_puct, seed)
        if visits.max() > 0:
            return int(np.argmax(visits))
        T.legal_at_root(self.game.spec, self.positions, g, self._legal)
        return int(np.random.default_rng(seed).choice(np.flatnonzero(self._legal)))

    def observe(self, g: int, move: int) -> None:
        T.play_position(self.game.spec, self.positions, g, move)
        self.plies[g] += 1


def pure_mcts_player(rules, playouts: int, c_puct: float = 5.0, seed: int = 0):
    """Pure MCTS (uniform priors, random playouts) of ``playouts`` per move, as the game's
    registry entry builds it (seed 000's player on Gomoku; on Go the shared batched search
    with one random playout per leaf)."""
    return registry.of(rules).pure_mcts(rules, playouts, c_puct, seed)


def play_match(rules, player, opponent, num_games: int, opening_moves: int = 0, seed: int = 0,
               games_out: list | None = None, clock_out: dict | None = None):
    """``num_games`` games of ``rules`` (Gomoku or Go, as its search game plays them),
    ``player`` black in even games; returns a `MatchResult` (wins, draws, losses).
    ``games_out``, when given, receives one dict per game, in game order: the player's
    colour (+1 black), the result for the player (+1, 0, -1) and the moves, opening included.

    All games advance together so batched players search them in one pass.
    ``opening_moves``: each pair of games (one per colour) starts from the same
    uniformly random opening of that many stones; two deterministic searchers (two
    checkpoints, no noise) would otherwise replay the same two games over and over.
    A move the rules refuse is an error naming the player.
    ``clock_out``, when given, receives each side's thinking: "player" and "opponent", each
    {"seconds", "moves"} (the seconds its ``choose`` calls took, all games of a call together).
    """
    from stonelab.arena.ratings import MatchResult

    game = rules if hasattr(rules, "spec") else rules.search_game()
    player.reset(num_games)
    opponent.reset(num_games)
    positions = game.new_positions(num_games)
    to_play = np.ones(num_games, dtype=np.int64)
    rng = np.random.default_rng(seed)
    moves: list[list[int]] = [[] for _ in range(num_games)]
    for pair in range(0, num_games, 2):
        opening = random_opening(game, rng, opening_moves)
        for g in range(pair, min(pair + 2, num_games)):
            for move in opening:
                T.play_position(game.spec, positions, g, int(move))
                moves[g].append(int(move))
                to_play[g] = -to_play[g]
                player.observe(g, int(move))
                opponent.observe(g, int(move))
    player_colour = np.where(np.arange(num_games) % 2 == 0, 1, -1)
    result = np.zeros(num_games, dtype=np.int64)  # +1 player won, -1 lost, 0 draw
    ongoing = np.ones(num_games, dtype=bool)
    clock = {"player": {"seconds": 0.0, "moves": 0}, "opponent": {"seconds": 0.0, "moves": 0}}
    while ongoing.any():
        for side in (player, opponent):
            colour_of_side = player_colour if side is player else -player_colour
            games = np.flatnonzero(ongoing & (to_play == colour_of_side))
            if len(games) == 0:
                continue
            started = time.perf_counter()
            chosen = side.choose(games)
            thought = clock["player" if side is player else "opponent"]
            thought["seconds"] += time.perf_counter() - started
            thought["moves"] += len(games)
            for g, move in zip(games, chosen, strict=True):
                move = int(move)
                reason = game.illegal_reason(positions, g, move)
                if reason is not None:
                    raise RuntimeError(f"{side.name} played an illegal move in game {g}: {reason}")
                player.observe(g, move)
                opponent.observe(g, move)
                outcome = T.play_position(game.spec, positions, g, move)
                moves[g].append(move)
                if outcome != ONGOING:
                    ongoing[g] = False
                    mover_is_player = to_play[g] == player_colour[g]
                    if outcome in (MOVER_WINS, MOVER_LOSES):
                        result[g] = 1 if (outcome == MOVER_WINS) == mover_is_player else -1
                to_play[g] = -to_play[g]
    if clock_out is not None:
        clock_out.update(clock)
    if games_out is not None:
        games_out.extend({"player_colour": int(player_colour[g]), "result": int(result[g]), "moves": moves[g]}
                         for g in range(num_games))
    return MatchResult(wins=int((result == 1).sum()), draws=int((result == 0).sum()),
                       losses=int((result == -1).sum()))


def seconds_per_move(clock: dict) -> dict:
    """Each side's mean seconds a move from `play_match`'s ``clock_out`` (None where it made none).
    A batched player searches the games of one call together: its figure is per move of that
    batch, below what one game alone would take."""
    return {f"{side}_seconds_per_move": (round(c["seconds"] / c["moves"], 4) if c["moves"] else None)
            for side, c in clock.items()}


