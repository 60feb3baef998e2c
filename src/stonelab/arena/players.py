"""Players that pick moves in many games at once, and the referee that pits two.

A player keeps its own view of each game: `observe` tells it every move
played (its own and the opponent's); `choose` asks for moves in some games.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from stonelab.games.go import GoRules
from stonelab.games.gomoku import GomokuRules
from stonelab.games.gomoku_candidates import PruningConfig
from stonelab.games.gomoku_search import pure_mcts_move
from stonelab.search import tree as T
from stonelab.search.game import MOVER_LOSES, MOVER_WINS, ONGOING
from stonelab.search.mcts import BatchedMCTS, Evaluator, MCTSConfig


class NeuralMCTSPlayer:
    """Network-guided batched search; plays the most visited move (no noise)."""

    def __init__(self, rules, evaluate: Evaluator, config: MCTSConfig, name: str = "neural",
                 pruning: PruningConfig | None = None):
        self.rules, self.evaluate, self.config, self.name = rules, evaluate, config, name
        self.pruning = pruning
        self.mcts: BatchedMCTS | None = None

    def reset(self, num_games: int) -> None:
        self.mcts = BatchedMCTS(self.rules, num_games, self.config, pruning=self.pruning)

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

    def warm_up(self, moves: int = 4) -> None:
        """Compile every kernel a move runs (or load it from numba's cache) and run the net once,
        on a throwaway tree small enough to be compacted: a first search pays ~0.5 s for this
        with a warm numba cache, seconds with a cold one, which must not come out of a timed move."""
        mcts = BatchedMCTS(self.rules, 1, replace(self.config, playouts=4), pruning=self.pruning, max_nodes=16)
        for _ in range(moves):
            visits = mcts.search(self.evaluate, playouts=4)
            if mcts.play(0, int(np.argmax(visits[0]))) != ONGOING:
                break

    def observe(self, g: int, move: int) -> None:
        self.mcts.play(g, move)


class PureMCTSPlayer:
    """Seed 000's pure-MCTS opponent: uniform priors, random rollouts."""

    def __init__(self, rules: GomokuRules, playouts: int, c_puct: float = 5.0, seed: int = 0):
        self.rules, self.playouts, self.c_puct, self.seed = rules, playouts, c_puct, seed
        self.name = f"pure_mcts_{playouts}"

    def reset(self, num_games: int) -> None:
        self.boards = np.zeros((num_games, self.rules.num_actions), dtype=np.int8)
        self.last = np.full(num_games, -1)
        self.to_play = np.ones(num_games, dtype=np.int64)
        self.plies = np.zeros(num_games, dtype=np.int64)

    def choose(self, games: np.ndarray) -> np.ndarray:
        moves = []
        for g in games:
            seed = (self.seed * 1_000_003 + int(g) * 1009 + int(self.plies[g])) % (2**31 - 1)
            moves.append(pure_mcts_move(self.rules, self.boards[g], int(self.to_play[g]),
                                        int(self.last[g]), playouts=self.playouts,
                                        c_puct=self.c_puct, seed=seed))
        return np.array(moves, dtype=np.int64)

    def observe(self, g: int, move: int) -> None:
        self.boards[g, move] = self.to_play[g]
        self.last[g] = move
        self.to_play[g] = -self.to_play[g]
        self.plies[g] += 1


def pure_mcts_player(rules: GomokuRules | GoRules, playouts: int, c_puct: float = 5.0, seed: int = 0):
    """Pure MCTS (uniform priors, random rollouts) of ``playouts`` per move: seed 000's
    player on Gomoku, the shared batched search with one random playout per leaf on Go."""
    if isinstance(rules, GomokuRules):
        return PureMCTSPlayer(rules, playouts, c_puct, seed=seed)
    from stonelab.models.go_evaluator import UniformEvaluator

    game = rules.search_game()
    config = MCTSConfig(playouts=playouts, c_puct=c_puct)
    return NeuralMCTSPlayer(game, UniformEvaluator(game, 1), config, name=f"pure_mcts_{playouts}")


def play_match(rules, player, opponent, num_games: int, opening_moves: int = 0, seed: int = 0,
               games_out: list | None = None):
    """``num_games`` games of ``rules`` (Gomoku or Go, as its search game plays them),
    ``player`` black in even games; returns a `MatchResult` (wins, draws, losses).
    ``games_out``, when given, receives one dict per game, in game order: the player's
    colour (+1 black), the result for the player (+1, 0, -1) and the moves, opening included.

    All games advance together so batched players search them in one pass.
    ``opening_moves``: each pair of games (one per colour) starts from the same
    uniformly random opening of that many stones; two deterministic searchers (two
    checkpoints, no noise) would otherwise replay the same two games over and over.
    A move the rules refuse is an error naming the player.
    """
    from stonelab.arena.ratings import MatchResult

    game = rules if hasattr(rules, "spec") else rules.search_game()
    player.reset(num_games)
    opponent.reset(num_games)
    positions = game.new_positions(num_games)
    to_play = np.ones(num_games, dtype=np.int64)
    rng = np.random.default_rng(seed)
    points = game.board_size ** 2
    moves: list[list[int]] = [[] for _ in range(num_games)]
    for pair in range(0, num_games, 2):
        opening = rng.choice(points, size=opening_moves, replace=False)
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
    while ongoing.any():
        for side in (player, opponent):
            colour_of_side = player_colour if side is player else -player_colour
            games = np.flatnonzero(ongoing & (to_play == colour_of_side))
            if len(games) == 0:
                continue
            for g, move in zip(games, side.choose(games), strict=True):
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
    if games_out is not None:
        games_out.extend({"player_colour": int(player_colour[g]), "result": int(result[g]), "moves": moves[g]}
                         for g in range(num_games))
    return MatchResult(wins=int((result == 1).sum()), draws=int((result == 0).sum()),
                       losses=int((result == -1).sum()))
