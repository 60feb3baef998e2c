"""Scoring a player on a tactics suite (`stonelab.games.gomoku_tactics`, `stonelab.games.go_tactics`).

Two ways to answer a position: the raw policy (the net's most likely legal move, no
search) and the search at a fixed number of playouts (the most visited move, no noise,
a fresh tree per position). A position is solved when the answer is in its known set.
"""

from __future__ import annotations

import numpy as np

from stonelab.games.go_tactics import GoTactic
from stonelab.games.gomoku import GomokuRules, encode_position
from stonelab.games.gomoku_candidates import PruningConfig
from stonelab.games.gomoku_tactics import Tactic
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


def go_policy_answers(predictor, tactics: list[GoTactic]) -> np.ndarray:
    """A Go model's most likely legal move (the pass included) in each position, one batched call."""
    return np.argmax(predictor.probabilities([t.state for t in tactics]), axis=1)


def go_search_answers(predictor, tactics: list[GoTactic], search: dict) -> np.ndarray:
    """The most visited move of a Go model's search (``search``: the search settings, its
    playouts included) in each position, a fresh tree for each."""
    from stonelab.models.go_player import go_search_player

    player = go_search_player(predictor, search)
    answers = []
    for t in tactics:
        player.sync(t.state)
        player.search()
        answers.append(player.best_move())
    return np.array(answers)


def score(tactics: list, answers: np.ndarray) -> dict[str, float]:
    """Share of positions solved, per kind and over all (kinds weigh by their positions)."""
    solved = np.array([int(a) in t.answers for t, a in zip(tactics, answers, strict=True)], dtype=float)
    return _per_kind(tactics, solved)


def random_baseline(tactics: list) -> dict[str, float]:
    """What a uniformly random legal move scores, in expectation: the floor of every row."""
    return _per_kind(tactics, np.array([len(t.answers) / t.legal_moves for t in tactics]))


def _per_kind(tactics: list, values: np.ndarray) -> dict[str, float]:
    kinds = dict.fromkeys(t.kind for t in tactics)  # in the suite's order
    out = {kind: float(values[[t.kind == kind for t in tactics]].mean()) for kind in kinds}
    out["all"] = float(values.mean())
    return out
