"""``task=gtp_match``: a Go move predictor, without search, against a GTP engine (GNU Go, Pachi, ...)."""

from __future__ import annotations

import time

from omegaconf import DictConfig

from stonelab.errors import ConfigError, check
from stonelab.eval_tasks import write_result
from stonelab.utils.device import resolve_device
from stonelab.utils.threads import set_threads


def run(cfg: DictConfig) -> dict:
    """Seed 002's test: a Go move predictor, without search, against a GTP engine (GNU Go, Pachi).

    ``task=gtp_match ckpt_path=... opponent_command="/usr/games/gnugo --mode gtp ..."``:
    ``games`` games on the checkpoint's board, colours alternating (the model is black
    in even games), refereed by `stonelab.arena.gtp_match` (its docstring: the rules,
    the scoring, and how to install GNU Go and Pachi). Writes gtp_match.json, and
    each game as SGF under ``sgf_dir`` when it is set.
    """
    from pathlib import Path

    from stonelab.arena import gtp_match as referee
    from stonelab.games.go import GoRules
    from stonelab.models.inference import MovePredictor

    check([(cfg.get("ckpt_path"), "ckpt_path=... is required: a maddison_cnn or belief_vit checkpoint to play with"),
           (cfg.get("opponent_command"), 'opponent_command="..." is required: the GTP engine to play against'),
           (lambda: isinstance(cfg.games, int) and cfg.games >= 1, f"games={cfg.games} must be >= 1"),
           (lambda: cfg.max_moves is None or isinstance(cfg.max_moves, int) and cfg.max_moves >= 1,
            f"max_moves={cfg.max_moves} must be >= 1 (or null)"),
           (lambda: cfg.opponent_timeout > 0, f"opponent_timeout={cfg.opponent_timeout} must be > 0 seconds"),
           (isinstance(cfg.komi, int | float), f"komi={cfg.komi} must be a number")])
    set_threads(cfg.torch_threads)
    device = resolve_device(cfg.device)
    predictor = MovePredictor.from_checkpoint(cfg.ckpt_path, device=device)  # refuses alphazero checkpoints
    rules = GoRules(predictor.rules.n, komi=float(cfg.komi))
    max_moves = int(cfg.max_moves or 2 * rules.num_points)
    sgf_dir = Path(str(cfg.sgf_dir)) if cfg.get("sgf_dir") else None
    start = time.perf_counter()
    with _opponent(cfg) as engine, referee.model_player(predictor) as model:
        opponent_name = engine.identity()
        engine.label = opponent_name
        scorer = engine if engine.known_command("final_score") else None
        scored_by = f"{opponent_name} final_score (area_score if it names no winner)" if scorer else "area_score"
        referee.start_game(engine, rules)  # a board size the engine refuses fails here, before any game
        result, games = referee.gtp_match(model, engine, rules, cfg.games, max_moves, scorer=scorer,
                                          sgf_dir=sgf_dir, on_game=_print_game)
    lo, hi = result.interval
    out = {"checkpoint": cfg.ckpt_path, "opponent": opponent_name, "opponent_command": cfg.opponent_command,
           "board_size": rules.n, "komi": rules.komi, "max_moves": max_moves, "scored_by": scored_by,
           "games": result.games, "void": sum(g.void for g in games), "wins": result.wins,
           "draws": result.draws, "losses": result.losses, "win_ratio": result.win_ratio,
           "ci_low": lo, "ci_high": hi, "seconds": round(time.perf_counter() - start, 1),
           "sgf_dir": str(sgf_dir) if sgf_dir else None,
           "records": [{"model": referee.COLOUR_WORDS[referee.player_colour(i)], **g.to_json()}
                       for i, g in enumerate(games)]}
    print(f"{cfg.ckpt_path} vs {opponent_name} ({rules.n}x{rules.n}, komi {rules.komi:g}, no search): {result}")
    write_result(cfg, "gtp_match.json", out)
    return out


def _opponent(cfg: DictConfig):
    """The opponent engine's client; one that cannot start is a ConfigError naming the command."""
    from stonelab.protocols.gtp_client import GTPClient, GTPEngineError

    try:
        return GTPClient(str(cfg.opponent_command), timeout=float(cfg.opponent_timeout))
    except GTPEngineError as exc:
        raise ConfigError(f"opponent_command={cfg.opponent_command!r}: {exc} "
                          "(GNU Go: apt-get install -y gnugo, then /usr/games/gnugo; see conf/task/gtp_match.yaml)") from None


def _print_game(index: int, game) -> None:
    """One progress line per game: a match against GNU Go at level 10 takes hours."""
    print(f"game {index + 1}: {game.black} (B) vs {game.white} (W): {game.result} "
          f"after {len(game.moves)} moves ({game.reason})", flush=True)
