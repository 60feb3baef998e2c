"""Gomoku (k in a row; freestyle, standard or renju): the rules (`rules`, `renju`), the search
adapter (`search`), seed 000's candidate restriction (`candidates`) and the tactics suite (`tactics`)."""

from __future__ import annotations

from stonelab.games import registry, symmetry
from stonelab.games.gomoku.rules import FREESTYLE, RULE_NAMES, GomokuRules


def _search(rules: GomokuRules, settings=None):
    """Gomoku's search; its ``settings`` are seed 000's candidate restriction (a `PruningConfig`,
    or the ``pruning`` config group's values as Hydra gives them)."""
    from stonelab.games.gomoku.candidates import PruningConfig
    from stonelab.games.gomoku.search import GomokuSearch

    pruning = PruningConfig(**settings) if isinstance(settings, dict) else settings
    return GomokuSearch(rules, pruning)


def _settings(values=None):
    """The ``pruning`` group's values as a PruningConfig, over the game's default search: forced
    moves where they are built, a root proof where it is cheap (freestyle rules, boards up to
    6x6) and the threat-space search at the root on larger freestyle boards
    (conf/pruning/auto.yaml, every entry point's default option; pruning=none turns them off)."""
    from dataclasses import replace

    from stonelab.games.gomoku.candidates import PruningConfig

    return replace(PruningConfig(forced="auto", root_proof="auto", vcf="auto"), **dict(values or {}))


def _pure_mcts(rules: GomokuRules, playouts: int, c_puct: float = 5.0, seed: int = 0):
    from stonelab.arena.players import PureMCTSPlayer

    return PureMCTSPlayer(rules, playouts, c_puct, seed=seed)


def _solver(rules: GomokuRules, seed: int = 0):
    from stonelab.games.gomoku.solver import SolverPlayer

    return SolverPlayer(rules, seed=seed)


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
    symmetries=symmetry.SQUARE,  # every rule set, renju's too, looks the same turned or mirrored
    protocols=("gomocup",),
    tactics=_tactics,
    opponents={"solver": _solver},  # perfect play, freestyle boards of at most 6x6 (gomoku.solver)
    learned_by="model=alphazero (self-play)",
    max_opening=lambda rules: 2 * rules.k - 2,  # k - 1 stones a side: no line yet
    settings_group="pruning",
    settings=_settings,
))
