"""``task=match``: an alphazero checkpoint (any registered game), with search, against pure
MCTS, another checkpoint, a net that AlphaZero_Gomoku publishes or (Gomoku) an external
Gomocup brain such as Rapfi (``opponent=gomocup``, its settings ``gomocup.*``)."""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import replace

import numpy as np
from omegaconf import DictConfig

from stonelab.arena.gomocup_player import GomocupOpponent, GomocupPlayer, plays_gomocup
from stonelab.arena.players import NeuralMCTSPlayer, play_match, pure_mcts_player, seconds_per_move
from stonelab.errors import ConfigError
from stonelab.eval_tasks import require_checkpoint, write_result
from stonelab.games import registry
from stonelab.games.gomoku.rules import rule_code
from stonelab.models import checkpoints
from stonelab.models.alphazero import net_evaluator
from stonelab.search.mcts import ALPHAZERO_C_PUCT, MCTSConfig
from stonelab.utils.device import resolve_device
from stonelab.utils.threads import set_threads


def run(cfg: DictConfig) -> dict:
    """Play ``cfg.games`` games of ``cfg.ckpt_path`` against ``cfg.opponent``; the game comes from the checkpoint."""
    path = require_checkpoint(cfg)
    if cfg.games < 1:
        raise ConfigError(f"games={cfg.games} must be >= 1")
    gomocup = GomocupOpponent.from_config(cfg.get("gomocup")) if cfg.opponent == "gomocup" else None
    loaded, player, device = searching_player(cfg, path)
    game, search = loaded.game, player.config
    spec = registry.of(game)
    opponent_playouts = cfg.get("opponent_playouts") or None
    if opponent_playouts is not None and (not isinstance(opponent_playouts, int) or opponent_playouts < 1):
        raise ConfigError(f"opponent_playouts={opponent_playouts!r} must be a whole number >= 1 "
                          f"(or null: search.playouts)")
    if cfg.opponent == "pure_mcts":
        opponent = pure_mcts_player(game, cfg.pure_playouts, search.c_puct, seed=cfg.seed)
        opponent_name = f"pure_mcts_{cfg.pure_playouts}"
    elif gomocup is not None:  # an external brain, one process a game (stonelab.arena.gomocup_player)
        opponent = GomocupPlayer(game, gomocup, cfg.paths.output_dir)
        opponent_name = f"gomocup:{opponent.name}"
    elif cfg.opponent in spec.opponents:  # a search-free player of the game's own
        opponent = spec.opponents[cfg.opponent](game, seed=cfg.seed)
        opponent_name = opponent.name
    else:  # another checkpoint of the same game and board, or AlphaZero_Gomoku's published net
        if not os.path.isfile(str(cfg.opponent)):
            named = ", ".join(["pure_mcts", *(["gomocup"] if plays_gomocup(game) else []), *spec.opponents])
            raise ConfigError(f"opponent={cfg.opponent}: no such file, and not an opponent of {spec.title} "
                              f"({named}); give one of those or a checkpoint's path")
        net, opponent_name = checkpoints.load_opponent(str(cfg.opponent), loaded.identity)
        opponent = NeuralMCTSPlayer(game, net_evaluator(net, device),
                                    net_opponent_search(search, opponent_playouts, opponent_name), name="opponent")
    opening = opening_moves(cfg, game)
    start = time.perf_counter()
    games: list[dict] = []
    clock: dict = {}
    try:
        result = play_match(game, player, opponent, cfg.games, opening_moves=opening, seed=cfg.seed,
                            games_out=games, clock_out=clock)
    finally:
        if gomocup is not None:
            opponent.close()
    lo, hi = result.interval
    out = {"checkpoint": path, "game": game.name, "opponent": opponent_name,
           "playouts": search.playouts,
           "opponent_playouts": opponent_playouts_of(cfg, opponent),
           **({"gomocup": dataclasses.asdict(gomocup)} if gomocup is not None else {}),
           "opening_moves": opening, "games": result.games, "wins": result.wins,
           "draws": result.draws, "losses": result.losses, "win_ratio": result.win_ratio,
           "ci_low": lo, "ci_high": hi, "seconds": round(time.perf_counter() - start, 1),
           **seconds_per_move(clock), **by_colour(games), "median_plies": float(np.median([len(g["moves"]) for g in games])),
           "game_records": games}
    opponent_playouts = out["opponent_playouts"]
    searched = ("its own search" if gomocup is not None or getattr(opponent, "searches_itself", False)
                else "no search" if opponent_playouts is None else f"{opponent_playouts} playouts")
    print(f"{path} ({search.playouts} playouts) vs {opponent_name} ({searched}): {result}; "
          f"{colour_text(out)}, median {out['median_plies']:g} plies; {thinking_text(out, result.games)}")
    write_result(cfg, "match.json", out)
    return out


def thinking_text(per_move: dict, games: int) -> str:
    """Each side's seconds a move (`seconds_per_move`), ours noted as searched with the other games."""
    ours, theirs = per_move["player_seconds_per_move"], per_move["opponent_seconds_per_move"]
    return (f"{ours if ours is not None else '-'} s a move ours ({games} games searched together), "
            f"{theirs if theirs is not None else '-'} s the opponent's")


def searching_player(cfg: DictConfig, path: str):
    """The checkpoint at ``path`` (an alphazero one) and its player, searching with ``cfg.search``
    and the game's own settings (Gomoku: ``cfg.pruning``); also the device it runs on."""
    set_threads(cfg.torch_threads)
    device = resolve_device(cfg.device)
    loaded = checkpoints.load(path)
    if loaded.model != "alphazero":  # a Go move predictor plays GTP engines instead
        raise ConfigError(f"task={cfg.task} plays alphazero checkpoints; {path} holds "
                          f"{checkpoints.describe(loaded.identity)}: score it with task=predict, "
                          f"or against GNU Go with task=gtp_match")
    loaded = replace(loaded, game=played_rules(loaded.game, cfg.get("rule"), path))
    settings = registry.own_settings(registry.of(loaded.game), cfg)  # another game's settings are refused
    player = NeuralMCTSPlayer(loaded.game, net_evaluator(loaded.net, device), MCTSConfig(**cfg.search),
                              settings=settings)
    return loaded, player, device


def played_rules(game, rule, path: str):
    """The rules a match plays: the checkpoint's (``rule`` null), or a five-in-a-row model's under
    another rule set (freestyle, standard, renju), as the Gomocup brain plays after ``INFO rule``:
    black's search never chooses a forbidden point, and the candidate restriction, freestyle's
    own, follows the rules (`PruningConfig.for_rule`)."""
    if rule is None:
        return game
    if not plays_gomocup(game):
        raise ConfigError(f"rule={rule}: only a five-in-a-row Gomoku model plays under another rule set; "
                          f"{path} plays {game.name}")
    try:
        return replace(game, rule=rule_code(rule))
    except ConfigError:
        raise ConfigError(f"rule={rule!r}: choose freestyle, standard (exactly five) or renju, or null "
                          f"(the checkpoint's own)") from None


def opening_moves(cfg: DictConfig, game) -> int:
    """``cfg.opening_moves``, checked; null: 0 against pure MCTS, else 2 (two deterministic searchers
    would replay the same two games)."""
    opening = cfg.get("opening_moves")
    if opening is None:
        opening = 0 if cfg.get("opponent") == "pure_mcts" else 2
    longest = registry.of(game).max_opening(game)
    if not isinstance(opening, int) or not 0 <= opening <= longest:
        raise ConfigError(f"opening_moves={opening} must be an integer from 0 to {longest}")
    return opening


def net_opponent_search(search: MCTSConfig, playouts: int | None, opponent_name: str) -> MCTSConfig:
    """A net opponent's search: ours at ``playouts`` (None: ours). AlphaZero_Gomoku's published net
    searches as its own player does (human_play.py), whatever ours: c_puct 5, unvisited moves at
    Q = 0, a fresh tree every move."""
    own = replace(search, playouts=playouts or search.playouts)
    if opponent_name.startswith("alphazero_gomoku:"):
        return replace(own, c_puct=ALPHAZERO_C_PUCT, fpu_reduction=None, reuse_tree=False)
    return own


def opponent_playouts_of(cfg: DictConfig, opponent) -> int | None:
    """The opponent's playouts per move (None: a player without search)."""
    if cfg.opponent == "pure_mcts":
        return cfg.pure_playouts
    config = getattr(opponent, "config", None)
    return None if config is None else config.playouts


def colour_text(colours: dict) -> str:
    """``by_colour``'s wins as one phrase: "as black 3/5, as white 1/5"."""
    return ", ".join(f"as {side} {colours[side]['wins']}/{colours[side]['games']}" for side in ("black", "white"))


def by_colour(games: list[dict]) -> dict:
    """Wins, draws and losses of the player as black and as white."""
    out = {}
    for name, colour in (("black", 1), ("white", -1)):
        results = [g["result"] for g in games if g["player_colour"] == colour]
        out[name] = {"games": len(results), "wins": results.count(1), "draws": results.count(0),
                     "losses": results.count(-1)}
    return out
