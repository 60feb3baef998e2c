"""play_match: colours alternate, and random openings make deterministic searchers play different games."""

from __future__ import annotations

import time

import numpy as np
import torch

from stonelab.arena.players import NeuralMCTSPlayer, play_match, seconds_per_move
from stonelab.games.gomoku.rules import GomokuRules
from stonelab.models.alphazero import net_evaluator
from stonelab.models.nets.policy_value import PolicyValueNet
from stonelab.search.mcts import MCTSConfig


class Recorder(NeuralMCTSPlayer):
    """A deterministic searcher that remembers every game's moves."""

    def reset(self, num_games):
        super().reset(num_games)
        self.games = [[] for _ in range(num_games)]

    def observe(self, g, move):
        super().observe(g, move)
        self.games[g].append(move)


def players():
    torch.manual_seed(0)
    rules = GomokuRules(6, 4)
    evaluate = net_evaluator(PolicyValueNet(6))
    return rules, Recorder(rules, evaluate, MCTSConfig(playouts=16)), NeuralMCTSPlayer(rules, evaluate, MCTSConfig(playouts=16))


def test_without_an_opening_two_searchers_replay_one_game_per_colour():
    rules, a, b = players()
    result = play_match(rules, a, b, 4)
    assert result.games == 4
    assert a.games[0] == a.games[2] and a.games[1] == a.games[3]


def test_a_random_opening_is_shared_by_each_pair_and_differs_between_pairs():
    rules, a, b = players()
    play_match(rules, a, b, 6, opening_moves=2, seed=3)
    openings = [tuple(g[:2]) for g in a.games]
    assert openings[0] == openings[1] and openings[2] == openings[3] and openings[4] == openings[5]
    assert len({openings[0], openings[2], openings[4]}) == 3
    assert all(len(set(g)) == len(g) for g in a.games)   # no point played twice
    again = players()
    play_match(again[0], again[1], again[2], 6, opening_moves=2, seed=3)
    assert again[1].games == a.games                      # seeded: the same match again
    assert np.all([len(g) >= 7 for g in a.games])         # 4 in a row needs at least 7 stones


class Slow(NeuralMCTSPlayer):
    """A searcher that takes 20 ms more over each call of choose."""

    def choose(self, games):
        time.sleep(0.02)
        return super().choose(games)


def test_the_clock_counts_each_sides_moves_and_its_own_thinking():
    rules, a, _ = players()
    slow = Slow(rules, a.evaluate, MCTSConfig(playouts=16))
    games, clock = [], {}
    play_match(rules, a, slow, 4, opening_moves=2, seed=1, games_out=games, clock_out=clock)
    played = [(len(g["moves"]) - 2, g["player_colour"]) for g in games]
    # after the 2-stone opening black (the player in even games) moves first
    ours = sum((n + 1) // 2 if colour == 1 else n // 2 for n, colour in played)
    assert clock["player"]["moves"] == ours and clock["opponent"]["moves"] == sum(n for n, _ in played) - ours
    per_move = seconds_per_move(clock)
    # the slow side's calls each serve at most 4 games: at least 20 ms / 4 a move
    assert per_move["opponent_seconds_per_move"] >= 0.005 and per_move["player_seconds_per_move"] > 0
    assert seconds_per_move({"player": {"seconds": 0.0, "moves": 0}})["player_seconds_per_move"] is None


def test_out_of_time_the_searcher_still_plays_a_searched_legal_move():
    rules, player, _ = players()
    player.reset(1)
    for point in (0, 1, 2):                                  # the empty-visits argmax would be point 0
        player.observe(0, point)
    move = player.choose(np.array([0]), deadline=time.monotonic() - 1)[0]
    assert move not in (0, 1, 2) and player.mcts.simulations == 1   # one playout, not the configured 16
    player.choose(np.array([0]))                              # no deadline: the configured playouts
    assert player.mcts.simulations == 1 + 16


def test_reset_game_empties_the_board_in_the_same_tree_and_warm_up_leaves_the_player_alone():
    rules, player, _ = players()
    player.reset(1)
    tree = player.mcts
    player.observe(0, 5)
    player.reset_game(0)
    assert player.mcts is tree and not player.mcts.root_board.any()
    big = NeuralMCTSPlayer(rules, player.evaluate, MCTSConfig(playouts=100_000))
    big.warm_up()                                             # on a small tree of its own: nothing allocated
    assert big.mcts is None
