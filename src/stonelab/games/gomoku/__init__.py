"""Gomoku (k in a row; freestyle, standard or renju): the rules (`rules`, `renju`), the search
adapter (`search`), seed 000's candidate restriction (`candidates`) and the tactics suite (`tactics`)."""

from __future__ import annotations

from stonelab.games import registry
from stonelab.games.gomoku.rules import FREESTYLE, RULE_NAMES, GomokuRules


def _search(rules: GomokuRules, pruning=None):
    from stonelab.games.gomoku.candidates import PruningConfig
    from stonelab.games.gomoku.search import GomokuSearch

    if isinstance(pruning, dict):  # the pruning config group as Hydra gives it
        pruning = PruningConfig(**pruning)
    return GomokuSearch(rules, pruning)


def _settings(values=None):
    from stonelab.games.gomoku.candidates import PruningConfig

    return PruningConfig(**dict(values or {}))


def _pure_mcts(rules: GomokuRules, playouts: int, c_puct: float = 5.0, seed: int = 0):
    from stonelab.arena.players import PureMCTSPlayer

    return PureMCTSPlayer(rules, playouts, c_puct, seed=seed)


def _tactics(cfg, path: str, playouts: list[int]) -> dict:
    from stonelab.games.gomoku.tactics import run_suite

    return run_suite(cfg, path, playouts)


SPEC = registry.register(registry.GameSpec(
    name="gomoku",
    title="Gomoku",
    rules=GomokuRules,
    # The rule set only when it is not freestyle: checkpoints from before rule sets stay as they were.
    identity=lambda rules, model: {"board_size": rules.n, "win_length": rules.k,
                                   **({"rule": RULE_NAMES[rules.rule]} if rules.rule != FREESTYLE else {})},
    from_identity=lambda identity: GomokuRules(identity["board_size"], identity["win_length"],
                                               identity.get("rule", "freestyle")),
    describe=lambda identity: f"{identity.get('board_size')}x{identity.get('board_size')}, "
                              f"{identity.get('win_length')} in a row"
                              + (f", {identity['rule']}" if "rule" in identity else ""),
    search=_search,
    pure_mcts=_pure_mcts,
    symmetries=8,
    protocols=("gomocup",),
    tactics=_tactics,
    learned_by="model=alphazero (self-play)",
    max_opening=lambda rules: 2 * rules.k - 2,  # k - 1 stones a side: no line yet
    settings_group="pruning",
    settings=_settings,
))
