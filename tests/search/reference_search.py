"""A fixed, deterministic search used to pin MCTS results (see test_reference_search.py).

`python tests/search/reference_search.py` rewrites data/reference_visits.npz; do that
only when a change of search results is intended, and say so in the commit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from stonelab.games.gomoku.rules import GomokuRules
from stonelab.search.mcts import BatchedMCTS, MCTSConfig

DATA = Path(__file__).parent / "data" / "reference_visits.npz"
OPENINGS = [[], [27, 28, 35], [0, 9, 18, 36, 45, 20, 21]]


def deterministic_evaluator(num_actions: int):
    """Priors and values that depend only on the planes (a fixed pseudo-network)."""
    weights = np.random.default_rng(1234).normal(size=(4 * num_actions, num_actions + 1)).astype(np.float32)

    def evaluate(planes):
        x = planes.reshape(planes.shape[0], -1) @ weights * 0.3
        logits = x[:, :num_actions]
        priors = np.exp(logits - logits.max(axis=1, keepdims=True))
        priors /= priors.sum(axis=1, keepdims=True)
        return priors.astype(np.float32), np.tanh(x[:, -1]).astype(np.float32)

    return evaluate


def run_reference(threads: int = 1, **mcts_kwargs) -> np.ndarray:
    """Root visits ``[games, moves, A]``: 3 games, 6 searched moves each, with reuse and virtual loss
    (the tree work on ``threads`` threads; the result must not depend on it)."""
    rules = GomokuRules(8, 5)
    config = MCTSConfig(playouts=60, leaves_per_game=2, threads=threads)
    mcts = BatchedMCTS(rules, len(OPENINGS), config, **mcts_kwargs)
    for g, moves in enumerate(OPENINGS):
        for move in moves:
            mcts.play(g, move)
    evaluate = deterministic_evaluator(rules.num_actions)
    out = []
    for _ in range(6):
        visits = mcts.search(evaluate)
        out.append(visits.copy())
        for g in range(len(OPENINGS)):
            if mcts.outcomes[g] == 0:
                mcts.play(g, int(np.argmax(visits[g])))
    return np.stack(out, axis=1)


if __name__ == "__main__":
    DATA.parent.mkdir(exist_ok=True)
    np.savez_compressed(DATA, visits=run_reference())
    print(f"wrote {DATA}")
