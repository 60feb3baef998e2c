"""Self-play: many games at once, one batched network call per search step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stonelab.games.gomoku import MOVER_WINS, NUM_PLANES, ONGOING, GomokuRules, encode
from stonelab.search import tree as T
from stonelab.search.mcts import BatchedMCTS, Evaluator, MCTSConfig, visits_to_policy
from stonelab.search.pruning import PruningConfig


@dataclass
class SelfPlayGames:
    """Positions of finished games, in play order.

    planes [P, 4, n, n] uint8, policies [P, A] float32 (root visit shares),
    values [P] float32 (+1 if the player to move there won, -1 lost, 0 draw),
    lengths [games] moves per game, winners [games] (+1 black, -1 white, 0 draw).
    """

    planes: np.ndarray
    policies: np.ndarray
    values: np.ndarray
    lengths: np.ndarray
    winners: np.ndarray
    simulations: int
    evaluations: int
    candidates_mean: float  # moves expanded per node
    candidate_reduction: float  # fraction of legal moves pruned at expansion


def play_games(rules: GomokuRules, evaluate: Evaluator, num_games: int, config: MCTSConfig,
               *, temperature_moves: int, rng: np.random.Generator,
               pruning: PruningConfig | None = None, parallel: int | None = None) -> SelfPlayGames:
    """Play ``num_games`` self-play games to the end with noisy root search.

    At most ``parallel`` games (default: all) are searched together; a slot
    whose game ends starts the next game at once, so search batches stay full
    until the last games drain. The first ``temperature_moves`` moves of a game
    are sampled in proportion to visits (temperature 1), later ones are the
    most visited move. Games are returned in the order they were started.
    """
    n, a = rules.n, rules.num_actions
    slots = min(parallel or num_games, num_games)
    T.seed_numba(int(rng.integers(2**31 - 1)))
    mcts = BatchedMCTS(rules, slots, config, pruning=pruning)
    history: list[list[tuple[np.ndarray, np.ndarray, int]]] = [[] for _ in range(num_games)]
    winners = np.zeros(num_games, dtype=np.int8)
    game_of_slot = np.arange(slots)  # which game each slot plays
    ongoing = np.ones(slots, dtype=bool)
    started = slots
    while ongoing.any():
        visits = mcts.search(evaluate, np.flatnonzero(ongoing), add_noise=True)
        for g in np.flatnonzero(ongoing):
            game = game_of_slot[g]
            to_play, last, _ = mcts.root_info[g]
            planes = np.zeros((NUM_PLANES, n, n), dtype=np.float32)
            encode(mcts.root_board[g], n, to_play, last, planes)
            target = visits[g] / visits[g].sum()
            temperature = 1.0 if len(history[game]) < temperature_moves else 0.0
            move = int(rng.choice(a, p=visits_to_policy(visits[g], temperature)))
            history[game].append((planes.astype(np.uint8), target, int(to_play)))
            outcome = mcts.play(g, move)
            if outcome != ONGOING:
                winners[game] = to_play if outcome == MOVER_WINS else 0
                if started < num_games:  # the slot takes the next game
                    mcts.reset(g)
                    game_of_slot[g] = started
                    started += 1
                else:
                    ongoing[g] = False
    planes, policies, values = [], [], []
    for g, moves in enumerate(history):
        for p, pi, mover in moves:
            planes.append(p)
            policies.append(pi)
            values.append(float(winners[g] * mover))
    return SelfPlayGames(
        planes=np.stack(planes), policies=np.stack(policies).astype(np.float32),
        values=np.array(values, dtype=np.float32),
        lengths=np.array([len(m) for m in history]), winners=winners,
        simulations=mcts.simulations, evaluations=mcts.evaluations,
        candidates_mean=mcts.candidates_mean, candidate_reduction=mcts.candidate_reduction)
