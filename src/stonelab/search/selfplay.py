"""Self-play: many games at once, one batched network call per search step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stonelab.search import tree as T
from stonelab.search.game import MOVER_LOSES, MOVER_WINS, ONGOING
from stonelab.search.mcts import BatchedMCTS, Evaluator, MCTSConfig, visits_to_policy


@dataclass
class SelfPlayGames:
    """Positions of finished games, in play order.

    planes [P, C, n, n] uint8, policies [P, A] float32 (root visit shares),
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
    search_seconds: float = 0.0  # wall time inside `BatchedMCTS.search`, network calls included


class SelfPlaySlots:
    """``slots`` games searched together; games outlive a call to `play`.

    A call plays until ``num_games`` games have finished; a slot whose game
    ends starts a new one at once, and games still going when the call
    returns carry on in the next call. Batches therefore stay full: no call
    ends by draining its last games one by one.

    Each call builds fresh search trees for the carried games (their moves
    are replayed): the network changed since their last search, and a run
    resumed from a checkpoint (which stores only moves and records) then
    plays exactly the games the uninterrupted run would have.
    """

    def __init__(self, rules, slots: int, config: MCTSConfig, *,
                 temperature_moves: int, pruning=None):
        self.rules = rules
        self.slots = slots
        self.config = config
        self.temperature_moves = temperature_moves
        self.pruning = pruning
        self.moves: list[list[int]] = [[] for _ in range(slots)]
        # per slot, per move: (planes uint8 [C, n, n], visit shares [A], mover)
        self.records: list[list[tuple[np.ndarray, np.ndarray, int]]] = [[] for _ in range(slots)]

    @property
    def carried_games(self) -> int:
        """Games with at least one move played and not finished."""
        return sum(1 for moves in self.moves if moves)

    def play(self, evaluate: Evaluator, num_games: int, rng: np.random.Generator,
             *, new_games: int | None = None) -> SelfPlayGames:
        """Play until ``num_games`` games finish (a few more if they end in the same step).

        ``new_games`` caps how many games may start in finished slots during
        this call (None: no cap); a slot that may not start one falls idle.
        """
        T.seed_numba(int(rng.integers(2**31 - 1)))
        mcts = BatchedMCTS(self.rules, self.slots, self.config, pruning=self.pruning)
        for g, moves in enumerate(self.moves):
            for move in moves:
                mcts.play(g, move)
        active = np.ones(self.slots, dtype=bool)
        may_start = np.inf if new_games is None else new_games
        finished: list[tuple[list, int]] = []
        while len(finished) < num_games and active.any():
            visits = mcts.search(evaluate, np.flatnonzero(active), add_noise=True)
            for g in np.flatnonzero(active):
                outcome, to_play = self._move(mcts, g, visits[g], rng)
                if outcome == ONGOING:
                    continue
                winner = to_play if outcome == MOVER_WINS else -to_play if outcome == MOVER_LOSES else 0
                finished.append((self.records[g], winner))
                self.moves[g], self.records[g] = [], []
                mcts.reset(g)
                active[g] = may_start > 0
                may_start -= 1
        return _collect(finished, mcts)

    def _move(self, mcts: BatchedMCTS, g: int, visits: np.ndarray,
              rng: np.random.Generator) -> tuple[int, int]:
        """Record the searched position of slot ``g`` and play a move from its visits."""
        to_play = mcts.to_play(g)
        planes = mcts.root_planes(g)
        temperature = 1.0 if len(self.moves[g]) < self.temperature_moves else 0.0
        move = int(rng.choice(self.rules.num_actions, p=visits_to_policy(visits, temperature)))
        self.records[g].append((planes.astype(np.uint8), visits / visits.sum(), int(to_play)))
        self.moves[g].append(move)
        return mcts.play(g, move), int(to_play)

    def state_dict(self) -> dict:
        """Games in progress as lists and tensors (checkpoint-safe with weights_only)."""
        import torch

        return {"moves": [list(m) for m in self.moves],
                "planes": [torch.from_numpy(np.stack([r[0] for r in rs])) if rs else None
                           for rs in self.records],
                "policies": [torch.from_numpy(np.stack([r[1] for r in rs])) if rs else None
                             for rs in self.records],
                "movers": [[r[2] for r in rs] for rs in self.records]}

    def load_state_dict(self, state: dict) -> int:
        """Restore games in progress; returns how many were dropped (0 unless the slot count differs)."""
        if len(state["moves"]) != self.slots:
            self.moves = [[] for _ in range(self.slots)]
            self.records = [[] for _ in range(self.slots)]
            return sum(1 for m in state["moves"] if m)
        self.moves = [list(m) for m in state["moves"]]
        self.records = [
            [] if planes is None else
            [(p, pi, int(mv)) for p, pi, mv in zip(planes.numpy(), policies.numpy(), movers, strict=True)]
            for planes, policies, movers in zip(state["planes"], state["policies"], state["movers"], strict=True)]
        return 0


def _collect(finished: list[tuple[list, int]], mcts: BatchedMCTS) -> SelfPlayGames:
    planes, policies, values = [], [], []
    for records, winner in finished:
        for p, pi, mover in records:
            planes.append(p)
            policies.append(pi)
            values.append(float(winner * mover))
    return SelfPlayGames(
        planes=np.stack(planes), policies=np.stack(policies).astype(np.float32),
        values=np.array(values, dtype=np.float32),
        lengths=np.array([len(r) for r, _ in finished]),
        winners=np.array([w for _, w in finished], dtype=np.int8),
        simulations=mcts.simulations, evaluations=mcts.evaluations,
        candidates_mean=mcts.candidates_mean, candidate_reduction=mcts.candidate_reduction,
        search_seconds=mcts.search_seconds)


def play_games(rules, evaluate: Evaluator, num_games: int, config: MCTSConfig,
               *, temperature_moves: int, rng: np.random.Generator,
               pruning=None, parallel: int | None = None) -> SelfPlayGames:
    """Play exactly ``num_games`` self-play games from the empty board to the end.

    At most ``parallel`` games (default: all) are searched together; a slot
    whose game ends starts the next game until ``num_games`` have started, then
    the last games drain. The first ``temperature_moves`` moves of a game are
    sampled in proportion to visits (temperature 1), later ones are the most
    visited move. Games are returned in the order they finished.
    """
    slots = min(parallel or num_games, num_games)
    session = SelfPlaySlots(rules, slots, config, temperature_moves=temperature_moves, pruning=pruning)
    return session.play(evaluate, num_games, rng, new_games=num_games - slots)
