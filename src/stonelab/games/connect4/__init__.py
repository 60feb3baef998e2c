"""Connect Four: a rectangular board (6 x 7) whose actions are its columns, not its points.

The rules kernels (`rules`) and the search adapter (`search`: `Connect4Search`). Like
Othello it is the whole game in one folder: registering its spec below is what makes
stonelab train, evaluate and bench it (docs/adding_a_game.md)."""

from __future__ import annotations

from stonelab.games import registry, symmetry
from stonelab.games.connect4.rules import Connect4Rules


def _search(rules: Connect4Rules, settings=None):
    from stonelab.games.connect4.search import Connect4Search

    return Connect4Search(rules, settings)


def _pure_mcts(rules: Connect4Rules, playouts: int, c_puct: float = 5.0, seed: int = 0):
    from stonelab.arena.players import PureMCTSPlayer

    return PureMCTSPlayer(rules, playouts, c_puct, seed=seed)


SPEC = registry.register(registry.GameSpec(
    name="connect4",
    title="Connect Four",
    rules=Connect4Rules,
    identity=lambda rules, model: {"rows": rules.rows, "columns": rules.columns, "connect": rules.connect},
    from_identity=lambda identity: Connect4Rules(identity["rows"], identity["columns"], identity["connect"]),
    describe=lambda identity: f"{identity.get('rows')}x{identity.get('columns')}, {identity.get('connect')} in a row",
    search=_search,
    pure_mcts=_pure_mcts,
    symmetries=symmetry.LEFT_RIGHT,  # the left-right mirror only: gravity has a "down"
    learned_by="model=alphazero (self-play)",
    max_opening=lambda rules: 2,  # one disc each: far from decided
    bench_playouts=200, bench_games=64, bench_parallel=32,  # games of ~25-40 plies
))
