"""Scoring a Gomoku player on the tactics suite (`stonelab.games.gomoku_tactics`).

Two ways to answer a position: the raw policy (the net's most likely legal move, no
search) and the search at a fixed number of playouts (the most visited move, no noise,
a fresh tree per position). A position is solved when the answer is in its known set.
"""

from __future__ import annotations

import numpy as np

from stonelab.games.gomoku import GomokuRules, encode_position
from stonelab.games.gomoku_candidates import PruningConfig
from stonelab.games.gomoku_tactics import KINDS, Tactic
from stonelab.search.mcts import BatchedMCTS, Evaluator, MCTSConfig


def policy_answers(rules: GomokuRules, evaluate: Evaluator, tactics: list[Tactic]) -> np.ndarray:
    """The net's most likely legal move in each position, one batched call."""
    planes = np.stack([encode_position(t.board, rules.n, t.to_play, t.last_move) for t in tactics])
    priors, _ = evaluate(planes)
    priors = np.where(np.stack([t.board == 0 for t in tactics]), priors, -np.inf)
    return np.argmax(priors, axis=1)


def search_answers(rules: GomokuRules, evaluate: Evaluator, tactics: list[Tactic], config: MCTSConfig,
                   pruning: PruningConfig | None = None) -> np.ndarray:
    """The most visited move after ``config.playouts`` playouts in each position, all searched together."""
    search = rules.search_game(pruning)
    mcts = BatchedMCTS(search, len(tactics), config)
    for g, t in enumerate(tactics):
        mcts.set_position(g, search.position(t.board, t.to_play, t.last_move))
    return np.argmax(mcts.search(evaluate, add_noise=False), axis=1)


def score(tactics: list[Tactic], answers: np.ndarray) -> dict[str, float]:
    """Share of positions solved, per kind and over all (kinds weigh by their positions)."""
    solved = np.array([int(a) in t.answers for t, a in zip(tactics, answers, strict=True)])
    out = {kind: float(solved[[t.kind == kind for t in tactics]].mean())
           for kind in KINDS if any(t.kind == kind for t in tactics)}
    out["all"] = float(solved.mean())
    return out


def random_baseline(tactics: list[Tactic]) -> dict[str, float]:
    """What a uniformly random legal move scores, in expectation: the floor of every row."""
    chance = np.array([len(t.answers) / int((t.board == 0).sum()) for t in tactics])
    out = {kind: float(chance[[t.kind == kind for t in tactics]].mean())
           for kind in KINDS if any(t.kind == kind for t in tactics)}
    out["all"] = float(chance.mean())
    return out
