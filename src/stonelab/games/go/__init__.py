"""Go (area scoring, optional positional superko): the rules (`rules`), the search adapter
(`search`), ownership and the "points still open" rule (`ownership`), the tactics suite
(`tactics`)."""

from __future__ import annotations

from stonelab.games import registry, symmetry
from stonelab.games.go.rules import GoRules


def _search(rules: GoRules, settings=None):
    """Go as AlphaZero's self-play and in-run matches search it: games end on two passes or
    after twice the points in moves, and no move fills a single-point eye of its own, so a
    game ends by passing rather than by a side destroying its own groups. The GTP engine
    builds its own `GoSearch`, which may fill eyes. Go's own ``settings`` (`GoSettings`) are
    its evaluators' (the leaf value), not the tree's; another game's (pruning) is refused."""
    from stonelab.games.go.search import GoSearch
    from stonelab.games.go.settings import GoSettings

    return GoSearch(rules, None if isinstance(settings, GoSettings) else settings, fill_own_eyes=False)


def _pure_mcts(rules: GoRules, playouts: int, c_puct: float = 5.0, seed: int = 0):
    """Uniform priors and one random light playout per leaf, in the shared batched search."""
    from stonelab.arena.players import NeuralMCTSPlayer
    from stonelab.games.go.evaluator import UniformEvaluator
    from stonelab.search.mcts import MCTSConfig

    game = rules.search_game()
    return NeuralMCTSPlayer(game, UniformEvaluator(game, 1), MCTSConfig(playouts=playouts, c_puct=c_puct),
                            name=f"pure_mcts_{playouts}")


def _settings(values=None):
    from stonelab.games.go.settings import GoSettings

    return GoSettings.of(values)


def _tactics(cfg, path: str, playouts: list[int]) -> dict:
    from stonelab.games.go.tactics import run_suite

    return run_suite(cfg, path, playouts)


def _identity(rules: GoRules, model: str) -> dict:
    # alphazero's value was trained with its komi; the move predictors' planes carry none
    return {"board_size": rules.n, **({"komi": float(rules.komi)} if model == "alphazero" else {})}


SPEC = registry.register(registry.GameSpec(
    name="go",
    title="Go",
    rules=GoRules,
    identity=_identity,
    from_identity=lambda identity: GoRules(identity["board_size"], **(
        {"komi": identity["komi"]} if "komi" in identity else {})),
    describe=lambda identity: f"{identity.get('board_size')}x{identity.get('board_size')}",
    search=_search,
    pure_mcts=_pure_mcts,
    symmetries=symmetry.SQUARE,
    protocols=("gtp", "analysis"),
    tactics=_tactics,
    learned_by="model=maddison_cnn or model=belief_vit (expert games), model=alphazero (self-play)",
    bench_playouts=64, bench_games=8, bench_parallel=8,  # a Go move costs ~8x a Gomoku move
    settings_group="go",
    settings=_settings,
))
