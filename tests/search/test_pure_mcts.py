"""Pure MCTS (uniform priors, random rollouts): tactics, strength against random play, seeding."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.arena.players import PureMCTSPlayer, play_match
from stonelab.games.gomoku.rules import BLACK, WHITE, GomokuRules, board_from_rows, would_win
from stonelab.games.gomoku.search import pure_mcts_move, pure_mcts_visits, random_rollout
from stonelab.search.tree import seed_numba

RULES = GomokuRules(6, 4)


class RandomPlayer:
    """Uniformly random legal moves, with its own view of every game."""

    def __init__(self, rules: GomokuRules, seed: int = 0):
        self.rules = rules
        self.rng = np.random.default_rng(seed)
        self.name = "random"

    def reset(self, num_games: int) -> None:
        self.boards = np.zeros((num_games, self.rules.num_actions), dtype=np.int8)

    def choose(self, games: np.ndarray) -> np.ndarray:
        return np.array([self.rng.choice(np.flatnonzero(self.boards[g] == 0)) for g in games],
                        dtype=np.int64)

    def observe(self, g: int, move: int) -> None:
        assert self.boards[g, move] == 0
        self.boards[g, move] = 1


def wins_for(board: np.ndarray, colour: int) -> set[int]:
    n, k = RULES.n, RULES.k
    return {int(m) for m in np.flatnonzero(board == 0) if would_win(board, n, k, int(m), colour)}


# Black to move with an open three: (1, 0) or (1, 4) wins.
WIN_ROWS = ["......",
            ".XXX..",
            "......",
            "..OO..",
            ".....O",
            "......"]
# Black to move; white's three in column 5 (top end blocked) completes only at (4, 5).
BLOCK_ROWS = [".....X",
              ".X...O",
              "..X..O",
              ".....O",
              "......",
              "......"]


@pytest.mark.parametrize("seed", range(5))
def test_takes_immediate_win(seed):
    board = board_from_rows(WIN_ROWS)
    assert wins_for(board, BLACK) == {6, 10}
    move = pure_mcts_move(RULES, board, BLACK, 29, playouts=400, seed=seed)
    assert move in {6, 10}


def test_takes_immediate_win_as_white():
    board = board_from_rows(WIN_ROWS)
    board = -board  # colours swapped: white has the open three and is to move
    board[35] = BLACK
    assert wins_for(board, WHITE) == {6, 10}
    assert pure_mcts_move(RULES, board, WHITE, 35, playouts=400, seed=0) in {6, 10}


@pytest.mark.parametrize("seed", range(5))
def test_blocks_immediate_loss(seed):
    board = board_from_rows(BLOCK_ROWS)
    assert wins_for(board, WHITE) == {29}
    assert wins_for(board, BLACK) == set()
    before = board.copy()
    move = pure_mcts_move(RULES, board, BLACK, 17, playouts=3000, seed=seed)
    assert move == 29
    np.testing.assert_array_equal(board, before)  # the search works on copies


def test_visits_count_playouts_and_only_empty_points():
    board = board_from_rows(BLOCK_ROWS)
    visits = pure_mcts_visits(board, 6, 4, BLACK, 17, int(np.count_nonzero(board)), 300, 5.0, 1)
    assert visits.shape == (36,)
    assert visits.sum() == 300 - 1  # the first playout expands the root
    assert np.all(visits[board != 0] == 0)
    assert np.all(visits[board == 0] >= 1)


def test_same_seed_same_move_and_visits():
    board = board_from_rows(BLOCK_ROWS)
    stones = int(np.count_nonzero(board))
    a = pure_mcts_visits(board, 6, 4, BLACK, 17, stones, 500, 5.0, 123)
    b = pure_mcts_visits(board, 6, 4, BLACK, 17, stones, 500, 5.0, 123)
    c = pure_mcts_visits(board, 6, 4, BLACK, 17, stones, 500, 5.0, 124)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)  # the seed does drive the rollouts
    empty = np.zeros(36, dtype=np.int8)
    moves = {pure_mcts_move(RULES, empty, BLACK, -1, playouts=100, seed=9) for _ in range(3)}
    assert len(moves) == 1


# Full but for (0, 3), which completes white's four, and (1, 5), which completes nothing.
ROLLOUT_ROWS = ["OOO.XX",
                "XXOOX.",
                "OOXXOO",
                "XXOOXX",
                "OOXXOO",
                "XXOOXX"]


def test_random_rollout_values_are_from_the_movers_view():
    board = board_from_rows(ROLLOUT_ROWS)
    a, b = 3, 11
    assert set(np.flatnonzero(board == 0)) == {a, b}
    assert wins_for(board, WHITE) == {a} and wins_for(board, BLACK) == set()
    for colour in (BLACK, WHITE):
        board[a] = colour
        assert wins_for(board, -colour) == set()
        board[a] = 0
    # Black to move: blocking at a draws, playing b lets white win.
    black_values = set()
    white_values = set()
    for seed in range(20):
        seed_numba(seed)
        scratch = board.copy()
        black_values.add(random_rollout(scratch, 6, 4, BLACK))
        assert np.count_nonzero(scratch) in (35, 36)
        seed_numba(seed)
        white_values.add(random_rollout(board.copy(), 6, 4, WHITE))
    assert black_values == {0.0, -1.0}
    # White to move: taking a wins, playing b lets black block.
    assert white_values == {0.0, 1.0}


def test_random_rollout_on_a_single_point():
    board = board_from_rows(ROLLOUT_ROWS)
    board[11] = BLACK
    assert random_rollout(board.copy(), 6, 4, WHITE) == 1.0
    assert random_rollout(board.copy(), 6, 4, BLACK) == 0.0


def test_pure_mcts_beats_random_player():
    pure = PureMCTSPlayer(RULES, playouts=200, seed=0)
    result = play_match(RULES, pure, RandomPlayer(RULES, seed=1), num_games=10)
    assert result.games == 10
    assert result.wins >= 8, str(result)


def test_pure_mcts_player_is_reproducible():
    moves = []
    for _ in range(2):
        player = PureMCTSPlayer(RULES, playouts=100, seed=5)
        player.reset(2)
        player.observe(1, 14)
        moves.append(player.choose(np.array([0, 1])))
    np.testing.assert_array_equal(moves[0], moves[1])
    assert moves[0][1] != 14


def test_one_playout_plays_a_random_empty_point():
    """One playout only expands the root: no move has a visit, so argmax would say point 0."""
    rules = GomokuRules(6, 4)
    board = np.zeros(36, dtype=np.int8)
    board[0] = 1
    moves = {pure_mcts_move(rules, board, -1, 0, playouts=1, seed=s) for s in range(20)}
    assert 0 not in moves and len(moves) > 3
