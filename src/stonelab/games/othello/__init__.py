"""Othello (Reversi) on even boards 4..16: the rules kernels (`rules`), the search adapter
(`search`: `OthelloSearch`, `perft`) and search-free opponents (`players`: the positional-
weights player and a random one).

This package is the whole game: registering its spec below is what makes stonelab train,
evaluate and bench it (docs/adding_a_game.md walks through it)."""

from __future__ import annotations

from stonelab.games import registry, symmetry
from stonelab.games.othello.rules import OthelloRules


def _search(rules: OthelloRules, settings=None):
    from stonelab.games.othello.search import OthelloSearch

    return OthelloSearch(rules, settings)


def _pure_mcts(rules: OthelloRules, playouts: int, c_puct: float = 5.0, seed: int = 0):
    from stonelab.arena.players import PureMCTSPlayer

    return PureMCTSPlayer(rules, playouts, c_puct, seed=seed)


def _positional(rules: OthelloRules, seed: int):
    from stonelab.games.othello.players import PositionalPlayer

    return PositionalPlayer(rules, seed=seed)


def _random(rules: OthelloRules, seed: int):
    from stonelab.games.othello.players import RandomPlayer

    return RandomPlayer(rules, seed=seed)


SPEC = registry.register(registry.GameSpec(
    name="othello",
    title="Othello",
    rules=OthelloRules,
    identity=lambda rules, model: {"board_size": rules.n},
    from_identity=lambda identity: OthelloRules(identity["board_size"]),
    describe=lambda identity: f"{identity.get('board_size')}x{identity.get('board_size')}",
    search=_search,
    pure_mcts=_pure_mcts,
    # the rules treat all 8 alike; the start position's 4 centre discs are their own image
    # with colours swapped, and the planes carry no colour
    symmetries=symmetry.SQUARE,
    opponents={"positional": lambda rules, seed=0: _positional(rules, seed),
               "random": lambda rules, seed=0: _random(rules, seed)},
    learned_by="model=alphazero (self-play)",
    max_opening=lambda rules: rules.n // 2,  # a few discs each: the game is far from decided
    bench_playouts=64, bench_games=16, bench_parallel=16,  # games of 60 plies (Gomoku 8x8: ~20)
))
