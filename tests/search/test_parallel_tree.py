"""search.threads: the tree work of a search step split over threads gives exactly the serial search."""

from __future__ import annotations

import time

import numpy as np
import pytest

from stonelab.games.go.rules import GoRules
from stonelab.games.go.search import GoSearch
from stonelab.games.gomoku.candidates import PruningConfig
from stonelab.games.gomoku.rules import GomokuRules
from stonelab.search import tree as T
from stonelab.search.mcts import BatchedMCTS, MCTSConfig, PositionEvaluator, SearchConfigError

GOMOKU_OPENINGS = [[], [27, 28, 35], [0, 9, 18, 36, 45, 20, 21], [36], [10, 11], [63, 62, 61, 60]]


def planes_evaluator(num_actions: int, seed: int = 3):
    """Priors and values that depend only on the planes (a fixed pseudo-network)."""
    weights = None

    def evaluate(planes):
        nonlocal weights
        x = planes.reshape(planes.shape[0], -1)
        if weights is None:
            weights = np.random.default_rng(seed).normal(size=(x.shape[1], num_actions + 1)).astype(np.float32)
        x = x @ weights * 0.3
        logits = x[:, :num_actions]
        priors = np.exp(logits - logits.max(axis=1, keepdims=True))
        return (priors / priors.sum(axis=1, keepdims=True)).astype(np.float32), np.tanh(x[:, -1])

    return evaluate


class BoardEvaluator(PositionEvaluator):
    """Reads the leaf positions themselves (as Go's feature nets do): priors from the board."""

    def __init__(self, num_actions: int):
        self.num_actions = num_actions

    def evaluate_positions(self, positions, count):
        board = positions.board[:count].astype(np.float32)
        logits = np.zeros((count, self.num_actions), dtype=np.float32)
        logits[:, :board.shape[1]] = -np.abs(board) + 0.01 * np.arange(board.shape[1])
        priors = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        return priors.astype(np.float32), np.tanh(board.sum(axis=1) / 10).astype(np.float32)


def self_play(mcts: BatchedMCTS, evaluate, moves: int, *, noise: bool, subset: bool = False, deadline=None):
    """Root visits ``[moves, G, A]`` of a few searched moves (the most visited is played)."""
    T.seed_numba(11)
    out = []
    for step in range(moves):
        games = np.arange(0, mcts.num_games, 2) if subset and step % 2 else None  # idle games in between
        visits = mcts.search(evaluate, games, add_noise=noise, deadline=deadline)
        out.append(visits)
        for g in np.flatnonzero(visits.sum(axis=1)):
            if mcts.outcomes[g] == 0:
                mcts.play(g, int(np.argmax(visits[g])))
    return np.stack(out)


def gomoku_search(threads: int, leaves: int = 3, pruning=None) -> BatchedMCTS:
    config = MCTSConfig(playouts=40, leaves_per_game=leaves, virtual_loss=1.0, threads=threads)
    mcts = BatchedMCTS(GomokuRules(8, 5), len(GOMOKU_OPENINGS), config, settings=pruning)
    for g, moves in enumerate(GOMOKU_OPENINGS):
        for move in moves:
            mcts.play(g, move)
    return mcts


def assert_same_trees(a: BatchedMCTS, b: BatchedMCTS) -> None:
    for name, x, y in zip(T.Tree._fields, a.tree, b.tree, strict=True):
        np.testing.assert_array_equal(x, y, err_msg=name)
    np.testing.assert_array_equal(a.candidate_stats, b.candidate_stats)
    assert (a.simulations, a.evaluations) == (b.simulations, b.evaluations)


@pytest.mark.parametrize("threads", [2, 4])
def test_gomoku_threads_give_the_serial_search(threads):
    evaluate = planes_evaluator(64)
    one, many = gomoku_search(1), gomoku_search(threads)
    assert many.workers == threads
    np.testing.assert_array_equal(self_play(one, evaluate, 4, noise=True, subset=True),
                                  self_play(many, evaluate, 4, noise=True, subset=True))
    assert_same_trees(one, many)


def test_gomoku_threads_with_pruning_and_a_clock():
    pruning = PruningConfig(window=6, threat_aware=True)
    evaluate = planes_evaluator(64)
    one, two = gomoku_search(1, pruning=pruning), gomoku_search(2, pruning=pruning)
    deadline = time.monotonic() + 600  # the search with a clock takes the path that reads it every step
    np.testing.assert_array_equal(self_play(one, evaluate, 3, noise=False, deadline=deadline),
                                  self_play(two, evaluate, 3, noise=False, deadline=deadline))
    assert_same_trees(one, two)
    assert 0 < one.candidate_reduction < 1


def go_search(threads: int) -> BatchedMCTS:
    config = MCTSConfig(playouts=24, leaves_per_game=4, virtual_loss=1.0, threads=threads)
    mcts = BatchedMCTS(GoSearch(GoRules(9), max_moves=40), 5, config)
    for g in range(5):
        for move in range(g):
            mcts.play(g, 10 * move + g)
    return mcts


@pytest.mark.parametrize("evaluator,moves,noise", [
    ("planes", 3, True),     # a planes evaluator, root noise
    ("positions", 2, False),  # an evaluator of positions: the leaves packed after the threads are the serial ones
])
def test_go_threads_give_the_serial_search(evaluator, moves, noise):
    evaluate = planes_evaluator(82) if evaluator == "planes" else BoardEvaluator(82)
    one, two = go_search(1), go_search(2)
    np.testing.assert_array_equal(self_play(one, evaluate, moves, noise=noise, subset=True),
                                  self_play(two, evaluate, moves, noise=noise, subset=True))
    assert_same_trees(one, two)


def test_more_threads_than_games_use_one_per_game():
    config = MCTSConfig(playouts=8, threads=8)
    assert BatchedMCTS(GomokuRules(6, 4), 3, config).workers == 3


@pytest.mark.parametrize("threads", [0, -1, 1.5, "2", True, None])
def test_bad_threads_is_a_one_line_error(threads):
    with pytest.raises(SearchConfigError) as info:
        MCTSConfig(threads=threads)
    assert str(info.value) == f"search.threads={threads!r} must be an integer >= 1"


def test_hydra_config_has_search_threads(compose_config):
    cfg = compose_config("train", ["search.threads=2"])
    assert MCTSConfig(**cfg.search).threads == 2
    assert MCTSConfig(**compose_config("train", []).search).threads == 1


def test_wrong_evaluator_shapes_are_a_clear_error():
    mcts = gomoku_search(2, leaves=1)

    def evaluate(planes):
        return np.full((planes.shape[0], 64), 1 / 64, np.float32), np.zeros((planes.shape[0], 1), np.float32)

    with pytest.raises(ValueError, match=r"values \(6, 1\) for 6 leaves: expected \(6, 64\) and \(6,\)"):
        mcts.search(evaluate)
