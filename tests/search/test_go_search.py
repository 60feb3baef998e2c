"""9x9 Go through the game-agnostic search kernels (pure and batched neural MCTS)."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.games.go import GoRules, state_from_rows
from stonelab.games.go_search import GoSearch
from stonelab.search.game import MOVER_LOSES, MOVER_WINS, ONGOING
from stonelab.search.mcts import BatchedMCTS, MCTSConfig
from stonelab.search.pure_mcts import pure_mcts_search
from stonelab.search.selfplay import SelfPlaySlots

RULES = GoRules(9)
PASS = RULES.pass_move


def uniform(num_actions):
    def evaluate(planes):
        b = planes.shape[0]
        return np.full((b, num_actions), 1.0 / num_actions, np.float32), np.zeros(b, np.float32)

    return evaluate


def one(batch):
    return type(batch)(*(field[0] for field in batch))


def test_two_passes_end_the_game_scored_with_komi():
    mcts = BatchedMCTS(GoSearch(RULES), 1, MCTSConfig(playouts=4))
    assert mcts.play(0, PASS) == ONGOING
    assert mcts.play(0, PASS) == MOVER_WINS  # white passed last and wins by komi
    assert not mcts.search(uniform(RULES.num_actions)).any()


def test_move_cap_scores_the_game_and_the_mover_can_lose():
    mcts = BatchedMCTS(GoSearch(RULES, max_moves=2), 1, MCTSConfig(playouts=4))
    assert mcts.play(0, 40) == ONGOING
    assert mcts.play(0, PASS) == MOVER_LOSES  # white's pass ends it; black's stone owns the board


def test_pure_mcts_visits_only_legal_moves_and_is_seeded():
    search = GoSearch(RULES)
    state = state_from_rows([".X.......", "X........", *["........."] * 7], to_play=-1)
    root = search.position(state)
    a = pure_mcts_search(search.spec, root, 300, 5.0, 3)
    b = pure_mcts_search(search.spec, root, 300, 5.0, 3)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (RULES.num_actions,) and a.sum() == 299
    legal = state.legal_mask()
    assert not legal[0]  # suicide for white
    assert np.all(a[~legal] == 0) and np.all(a[legal] >= 1)
    np.testing.assert_array_equal(root.board, state.board)  # the search works on copies


def test_neural_search_expands_every_legal_move_and_reuses_the_tree():
    search = GoSearch(RULES)
    mcts = BatchedMCTS(search, 2, MCTSConfig(playouts=30, leaves_per_game=2))
    evaluate = uniform(RULES.num_actions)
    visits = mcts.search(evaluate)
    assert visits.shape == (2, RULES.num_actions)
    np.testing.assert_array_equal(visits.sum(1), [30, 30])
    root = mcts.tree.root[0]
    assert mcts.tree.num_children[0, root] == RULES.num_actions  # 81 points and the pass
    move = int(np.argmax(visits[0]))
    mcts.play(0, move)
    kept = visits[0, move] - 1
    assert mcts.search(evaluate, [0])[0].sum() == kept + 30
    with pytest.raises(ValueError, match="occupied"):
        mcts.play(0, move)
    planes = mcts.root_planes(0)
    assert planes.shape == (4, 9, 9) and planes[1].sum() == 1  # the opponent's stone
    assert mcts.to_play(0) == -1


def test_selfplay_finishes_go_games():
    search = GoSearch(RULES, max_moves=30)
    slots = SelfPlaySlots(search, 2, MCTSConfig(playouts=8), temperature_moves=30)
    games = slots.play(uniform(RULES.num_actions), 2, np.random.default_rng(0))
    assert len(games.lengths) >= 2 and np.all(games.lengths <= 30)
    assert games.policies.shape[1] == RULES.num_actions
    assert set(games.values.tolist()) <= {-1.0, 0.0, 1.0}
