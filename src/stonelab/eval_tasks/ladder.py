"""``task=ladder``: a Gomoku checkpoint, with search, against an external Gomocup brain (Rapfi by
default, ``gomocup.*``) at each of rising node budgets (``budgets``, the brain's ``max_node``),
``games`` a rung; reports each rung's score and the budget where ours crosses 50%
(`stonelab.arena.ladder`)."""

from __future__ import annotations

import itertools
import time

from omegaconf import DictConfig, ListConfig

from stonelab.arena.gomocup_player import GomocupOpponent, GomocupPlayer, refuse_other_games
from stonelab.arena.ladder import climb, even_budget
from stonelab.arena.players import play_match, seconds_per_move
from stonelab.errors import ConfigError
from stonelab.eval_tasks import require_checkpoint, write_result
from stonelab.eval_tasks.match import by_colour, colour_text, opening_moves, searching_player, thinking_text


def run(cfg: DictConfig) -> dict:
    path = require_checkpoint(cfg)
    budgets = checked_budgets(cfg.budgets)
    if not isinstance(cfg.games, int) or cfg.games < 1:
        raise ConfigError(f"games={cfg.games} must be a whole number >= 1")
    brain = GomocupOpponent.from_config(cfg.gomocup)
    loaded, player, _ = searching_player(cfg, path)
    game = loaded.game
    refuse_other_games(game)
    opening = opening_moves(cfg, game)
    start = time.perf_counter()
    records: dict[int, list[dict]] = {}  # each rung's games: colour, result, moves
    clocks: dict[int, dict] = {}  # each rung's thinking time, both sides

    def play_rung(budget: int):
        # the same seed at every rung: the same openings, so rungs differ only by the budget
        with GomocupPlayer(game, brain.with_max_node(budget), cfg.paths.output_dir) as opponent:
            result = play_match(game, player, opponent, cfg.games, opening_moves=opening, seed=cfg.seed,
                                games_out=records.setdefault(budget, []), clock_out=clocks.setdefault(budget, {}))
        colours = by_colour(records[budget])
        print(f"max_node {budget} thinking: {thinking_text(seconds_per_move(clocks[budget]), cfg.games)}; "
              + colour_text(colours))
        return result

    print(f"{path} ({player.config.playouts} playouts) vs {brain.title}, {cfg.games} games a rung:")
    rungs = climb(budgets, play_rung)
    even = even_budget(rungs)
    print(even["text"])
    out = {"checkpoint": path, "game": game.name, "opponent": brain.title, "command": brain.command,
           "playouts": player.config.playouts, "games_per_rung": cfg.games, "opening_moves": opening,
           "budgets": budgets, "even_budget": even["budget"],
           "even": even, "seconds": round(time.perf_counter() - start, 1),
           "rungs": [{**r.as_dict(), **seconds_per_move(clocks[r.budget]), **by_colour(records[r.budget]),
                      "game_records": records[r.budget]}
                     for r in rungs]}
    write_result(cfg, "ladder.json", out)
    return out


def checked_budgets(budgets) -> list[int]:
    """``budgets``: whole numbers >= 1, rising."""
    values = list(budgets) if isinstance(budgets, (list, tuple, ListConfig)) else None
    if (not values or any(not isinstance(b, int) or isinstance(b, bool) or b < 1 for b in values)
            or any(a >= b for a, b in itertools.pairwise(values))):
        raise ConfigError(f"budgets={budgets}: give rising whole numbers >= 1, e.g. '[1,3,10,30,100]'")
    return values
