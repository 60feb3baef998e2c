"""``task=gtp_match``: a Go move predictor, with or without search, against a GTP engine (GNU Go, Pachi, ...)
or our pure MCTS on Go."""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter

from omegaconf import DictConfig

from stonelab.errors import ConfigError, check
from stonelab.eval_tasks import write_result
from stonelab.utils.device import resolve_device
from stonelab.utils.threads import set_threads

PURE_MCTS = "pure_mcts"  # opponent_command naming our pure MCTS on Go instead of a program
INSTALL_HINT = "GNU Go: apt-get install -y gnugo, then /usr/games/gnugo; see conf/task/gtp_match.yaml"


def run(cfg: DictConfig) -> dict:
    """Seed 002's test: a Go move predictor, without search, against a GTP engine (GNU Go, Pachi).

    ``task=gtp_match ckpt_path=... opponent_command="/usr/games/gnugo --mode gtp ..."``:
    ``games`` games on the checkpoint's board, colours alternating (the model is black
    in even games), refereed by `stonelab.arena.gtp_match` (its docstring: the rules,
    how games are counted, and how to install GNU Go and Pachi). Prints one line per
    game with the running score, writes gtp_match.json, and each game as SGF under
    ``sgf_dir`` (the run folder's sgf/ by default).
    """
    from pathlib import Path

    from stonelab.arena import gtp_match as referee
    from stonelab.arena.progress import MatchProgress
    from stonelab.games.go.rules import GoRules
    from stonelab.games.go.settings import entry_point_settings, resolved_search
    from stonelab.models.alphazero_go import AlphaZeroGoModel, go_model_from_checkpoint

    _check(cfg)
    set_threads(cfg.torch_threads)
    device = resolve_device(cfg.device)
    settings = entry_point_settings(cfg)  # our engine's search: the generic settings and Go's own
    predictor = go_model_from_checkpoint(cfg.ckpt_path, device=device, symmetries=cfg.symmetries,
                                         gate=cfg.get("gate"))  # refuses Gomoku checkpoints
    settings = resolved_search(settings, isinstance(predictor, AlphaZeroGoModel))  # the journal names what plays
    rules = GoRules(predictor.rules.n, komi=float(cfg.komi))
    max_moves = int(cfg.max_moves or 2 * rules.num_points)
    sgf_dir = Path(str(cfg.sgf_dir)) if cfg.get("sgf_dir") else None
    journal = MatchJournal(Path(str(cfg.paths.output_dir)) / JOURNAL,
                           match_settings(cfg, settings, rules, max_moves, gate=getattr(predictor, "gate", None)))
    played = journal.played()
    if played:
        print(f"continuing the match in {cfg.paths.output_dir}: {len(played)} of {cfg.games} games played")
    start = time.perf_counter()
    with _opponent(cfg, rules) as engine, _judge(cfg, rules) as judge, \
            referee.model_player(predictor, settings, resign=_resign_rule(cfg)) as model, \
            MatchProgress(cfg.games, bar=cfg.bar) as progress:
        opponent_name = engine.identity()
        engine.label = opponent_name
        referee.start_game(engine, rules)  # a board size the engine refuses fails here, before any game
        result, games = referee.gtp_match(
            model, engine, rules, cfg.games, max_moves, judge=judge, cleanup_moves=cfg.cleanup_moves,
            opening_moves=cfg.opening_moves, seed=cfg.seed, sgf_dir=sgf_dir, played=played,
            on_game=lambda index, game, so_far: (journal.add(game), progress.update(index, _game_text(game), so_far)))
    lo, hi = result.interval
    scored_by = Counter(g.scored_by for g in games if g.scored_by)
    open_passes = [g.passes_with_open_points(referee.player_colour(i)) for i, g in enumerate(games)]
    out = {"checkpoint": cfg.ckpt_path, "symmetries": cfg.symmetries, "search": settings, "opponent": opponent_name, "opponent_command": cfg.opponent_command,
           "judge": judge.label if judge else None, "board_size": rules.n, "komi": rules.komi,
           "max_moves": max_moves, "opening_moves": cfg.opening_moves,
           "resign_below": cfg.resign_below, "resign_moves": cfg.resign_moves, "scored_by": {way: scored_by[way] for way in referee.SCORED_BY},
           "games": result.games, "void": sum(g.void for g in games), "wins": result.wins,
           "draws": result.draws, "losses": result.losses, "win_ratio": result.win_ratio,
           "ci_low": lo, "ci_high": hi, "seconds": round(time.perf_counter() - start, 1),
           "games_continued": len(played),
           "model_passes_with_open_points": sum(open_passes),
           "sgf_dir": str(sgf_dir) if sgf_dir else None,
           "records": [{"model": referee.COLOUR_WORDS[referee.player_colour(i)], **g.to_json(),
                        "model_passes_with_open_points": open_passes[i]} for i, g in enumerate(games)]}
    playouts = cfg.search.playouts
    searched = f"{playouts} playouts" if playouts else "no search"
    print(f"{cfg.ckpt_path} vs {opponent_name} ({rules.n}x{rules.n}, komi {rules.komi:g}, {searched}): {result}")
    print(f"passes by {cfg.ckpt_path} while points were open (a neutral point, room to invade, "
          f"a chain to save): {sum(open_passes)} in {sum(map(bool, open_passes))} game(s)")
    if scored_by["tromp_taylor"]:
        print(f"warning: {scored_by['tromp_taylor']} game(s) scored by a plain Tromp-Taylor count "
              "(no engine listed dead stones, no cleanup phase finished): dead stones may have counted as alive")
    write_result(cfg, "gtp_match.json", out)
    return out


JOURNAL = "games.jsonl"  # the run folder's record of a match, one game per line, to continue it


def match_settings(cfg: DictConfig, search: dict, rules, max_moves: int, gate: dict | None = None) -> dict:
    """What makes two runs the same match: the players (``search``: our engine's settings,
    `stonelab.games.go.settings.entry_point_settings`; ``gate``: a belief_vit's gate as it
    plays), the rules and the openings."""
    import hashlib

    with open(cfg.ckpt_path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {"checkpoint_sha256": digest, "opponent_command": str(cfg.opponent_command),
            "judge_command": cfg.judge_command, "search": search,
            "resign_below": cfg.resign_below, "resign_moves": cfg.resign_moves,
            "pure_playouts": cfg.pure_playouts, "board_size": rules.n, "komi": rules.komi, "max_moves": max_moves,
            "cleanup_moves": cfg.cleanup_moves, "opening_moves": cfg.opening_moves, "seed": cfg.seed,
            # only when set, so the journals of matches played before the option continue
            **({"symmetries": cfg.symmetries} if cfg.symmetries != 1 else {}),
            **({"gate": dict(gate)} if gate else {})}


class MatchJournal:
    """``games.jsonl`` in the run folder: the match's settings, then each game as it ends.

    A match run again in the same folder (``hydra.run.dir=<it>``) with the same settings
    plays on from the next game: long matches are built up in pieces, and a killed one
    loses at most the game in progress. Other settings there are refused, naming them.
    """

    def __init__(self, path, settings: dict):
        self.path, self.settings = path, settings

    def played(self) -> list:
        from stonelab.arena.gtp_match import game_from_json

        if not self.path.is_file():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps({"settings": self.settings}) + "\n")
            return []
        lines = [line for line in self.path.read_text().splitlines() if line.strip()]
        try:
            header, games = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
        except (IndexError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{self.path}: not a match journal ({exc}); give another hydra.run.dir") from None
        old, new = _what_plays(header.get("settings", {})), _what_plays(self.settings)
        changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        if changed:
            raise ConfigError(f"{self.path} holds {len(games)} games of another match (it differs in "
                              f"{', '.join(changed)}): give another hydra.run.dir, or the same settings to continue it")
        return [game_from_json(g) for g in games]

    def add(self, game) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(game.to_json()) + "\n")


def _what_plays(settings: dict) -> dict:
    """A journal's settings as they decide its games: a search-free engine's search knobs play no part."""
    search = settings.get("search") or {}
    return {**settings, "search": {"playouts": 0}} if search.get("playouts") == 0 else settings


def _check(cfg: DictConfig) -> None:
    check([(cfg.get("ckpt_path"), "ckpt_path=... is required: a Go checkpoint to play with"),
           (cfg.get("opponent_command"), 'opponent_command="..." is required: the GTP engine to play against'),
           (lambda: isinstance(cfg.games, int) and cfg.games >= 1, f"games={cfg.games} must be >= 1"),
           (lambda: isinstance(cfg.opening_moves, int) and 0 <= cfg.opening_moves <= 20,
            f"opening_moves={cfg.opening_moves!r} must be an int in 0..20 (random moves before the engines play)"),
           (lambda: cfg.max_moves is None or isinstance(cfg.max_moves, int) and cfg.max_moves >= 1,
            f"max_moves={cfg.max_moves} must be >= 1 (or null)"),
           (lambda: cfg.cleanup_moves is None or isinstance(cfg.cleanup_moves, int) and cfg.cleanup_moves >= 0,
            f"cleanup_moves={cfg.cleanup_moves} must be >= 0 (0: no cleanup phase; null: one per point)"),
           (lambda: cfg.opponent_timeout > 0, f"opponent_timeout={cfg.opponent_timeout} must be > 0 seconds"),
           (isinstance(cfg.komi, int | float), f"komi={cfg.komi} must be a number"),
           (cfg.bar in (None, True, False), f"bar={cfg.bar} must be true, false or null (a bar on a terminal)")])


def _resign_rule(cfg: DictConfig):
    """Our engine's resignation (None: it never resigns); only a search gives a win rate to resign on."""
    from stonelab.protocols.gtp_search import ResignRule

    if cfg.resign_below is None:
        return None
    if not cfg.search.playouts:
        raise ConfigError(f"resign_below={cfg.resign_below} needs search.playouts > 0: "
                          "without search there is no win rate to resign on")
    try:
        return ResignRule(float(cfg.resign_below), int(cfg.resign_moves))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _opponent(cfg: DictConfig, rules):
    """The opponent: a GTP engine's client, or ``pure_mcts`` (our pure MCTS on Go, in-process)."""
    from stonelab.arena import gtp_match as referee

    if str(cfg.opponent_command).strip() != PURE_MCTS:
        return _engine(cfg, "opponent_command")
    settings = {**cfg.search, "playouts": cfg.pure_playouts, "max_nodes": None}  # one playout per leaf
    return referee.pure_mcts_side(rules, settings, label=f"pure_mcts_{cfg.pure_playouts}")


def _engine(cfg: DictConfig, key: str):
    """The client of the engine ``cfg[key]`` names; one that cannot start is a ConfigError naming it."""
    from stonelab.protocols.gtp_client import GTPClient, GTPEngineError

    try:
        return GTPClient(str(cfg[key]), timeout=float(cfg.opponent_timeout))
    except GTPEngineError as exc:
        raise ConfigError(f"{key}={cfg[key]!r}: {exc} ({INSTALL_HINT})") from None


@contextlib.contextmanager
def _judge(cfg: DictConfig, rules):
    """The judge engine (None without judge_command): it must know final_status_list and take the board."""
    if not cfg.get("judge_command"):
        yield None
        return
    from stonelab.arena.gtp_match import start_game

    with _engine(cfg, "judge_command") as judge:
        if not judge.known_command("final_status_list"):
            raise ConfigError(f"judge_command={cfg.judge_command!r}: {judge.identity()} does not know "
                              "final_status_list, so it cannot judge dead stones (GNU Go does)")
        judge.label = f"{judge.identity()} (judge)"
        start_game(judge, rules)
        yield judge


def _game_text(game) -> str:
    how = f"{game.reason}, {game.scored_by}" if game.scored_by else game.reason
    return f"{game.black} (B) vs {game.white} (W): {game.result} after {len(game.moves)} moves ({how})"
