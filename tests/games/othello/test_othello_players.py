"""The search-free Othello players: the positional weights, corners, passes, strength and seeding."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.arena.players import play_match
from stonelab.games.othello.players import (
    PAIP_WEIGHTS_8X8,
    PositionalPlayer,
    RandomPlayer,
    positional_weights,
)
from stonelab.games.othello.rules import BLACK, WHITE, OthelloRules, board_from_rows


@pytest.mark.parametrize("n", [4, 6, 8, 10, 16])
def test_weights_by_role_are_symmetric_and_prize_corners(n):
    table = positional_weights(n).reshape(n, n)
    for k in range(4):
        np.testing.assert_array_equal(np.rot90(table, k), table)
    np.testing.assert_array_equal(table, table.T)
    assert table[0, 0] == table.max() == 120
    assert table[1, 1] == table.min() == -40  # the X square
    assert table[0, 1] == table[1, 0] == -20  # the C squares


def test_weights_by_role_are_the_paip_table_on_8x8():
    np.testing.assert_array_equal(positional_weights(8), PAIP_WEIGHTS_8X8.reshape(64))


# Black to move may take the corner (0, 0) over white's X square, or flip a centre disc.
CORNER = ["........",
          ".O......",
          "..X.....",
          "...XO...",
          "...OX...",
          "........",
          "........",
          "........"]


def rotated(rows: list[str], k: int) -> np.ndarray:
    n = len(rows)
    return np.ascontiguousarray(np.rot90(board_from_rows(rows).reshape(n, n), k)).reshape(n * n)


@pytest.mark.parametrize("colour", [BLACK, WHITE])
@pytest.mark.parametrize("k", range(4))
def test_takes_a_corner_when_one_is_available(colour, k):
    rules = OthelloRules(8)
    player = PositionalPlayer(rules, seed=k)
    player.reset(2)
    pos = player.search.position(rotated(CORNER, k) * colour, colour)
    player.positions.board[1], player.positions.info[1] = pos.board, pos.info
    corner = int(np.flatnonzero(rotated(["X" + "." * 7] + ["." * 8] * 7, k))[0])
    legal = player.search.legal_moves(player.positions, 1)
    assert legal[corner] and legal.sum() >= 4
    assert player.choose(np.array([1])).tolist() == [corner]


def test_passes_when_it_must():
    rules = OthelloRules(4)
    player = PositionalPlayer(rules)
    player.reset(1)
    pos = player.search.position(board_from_rows(["OOO.", "OOO.", "OOX.", "...."]), BLACK)
    player.positions.board[0], player.positions.info[0] = pos.board, pos.info
    assert player.choose(np.array([0])).tolist() == [rules.pass_move]


@pytest.mark.parametrize("n", [6, 8])
def test_positional_beats_random_play(n):
    rules = OthelloRules(n)
    result = play_match(rules, PositionalPlayer(rules, seed=n), RandomPlayer(rules, seed=n + 1), 20)
    assert result.wins >= 13, result


def test_matches_are_seeded():
    rules = OthelloRules(6)
    runs = []
    for _ in range(2):
        games: list = []
        play_match(rules, PositionalPlayer(rules, seed=5), RandomPlayer(rules, seed=6), 4, games_out=games)
        runs.append([g["moves"] for g in games])
    assert runs[0] == runs[1]
    games = []
    play_match(rules, PositionalPlayer(rules, seed=5), RandomPlayer(rules, seed=7), 4, games_out=games)
    assert [g["moves"] for g in games] != runs[0]
