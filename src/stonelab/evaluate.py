"""What `src/eval.py` runs: matches of a trained checkpoint against an opponent."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import torch
from omegaconf import DictConfig

from stonelab.arena.players import NeuralMCTSPlayer, PureMCTSPlayer, play_match
from stonelab.errors import ConfigError, check
from stonelab.games.gomoku import GomokuRules
from stonelab.games.gomoku_candidates import PruningConfig
from stonelab.models.alphazero import (
    CHECKPOINT_KEY,
    CheckpointMismatchError,
    load_checkpoint_file,
    load_policy_value_net,
    net_evaluator,
    net_from_checkpoint,
)
from stonelab.search.mcts import MCTSConfig
from stonelab.utils.device import resolve_device


def game_of_checkpoint(checkpoint: dict, path: str) -> GomokuRules:
    state = checkpoint.get(CHECKPOINT_KEY)
    if not isinstance(state, dict) or state.get("identity", {}).get("model") != "alphazero":
        raise CheckpointMismatchError(f"{path} is not a stonelab alphazero checkpoint")
    identity = state["identity"]
    return GomokuRules(identity["board_size"], identity["win_length"])


def match(cfg: DictConfig) -> dict:
    """Play ``cfg.games`` games of ``cfg.ckpt_path`` against ``cfg.opponent``."""
    if not cfg.get("ckpt_path"):
        raise ConfigError("ckpt_path=... is required: the checkpoint to evaluate")
    if cfg.games < 1:
        raise ConfigError(f"games={cfg.games} must be >= 1")
    torch.set_num_threads(cfg.torch_threads or os.cpu_count() or 1)
    device = resolve_device(cfg.device)
    checkpoint = load_checkpoint_file(cfg.ckpt_path)  # read once: game and net
    game = game_of_checkpoint(checkpoint, cfg.ckpt_path)
    search = MCTSConfig(**cfg.search)
    pruning = PruningConfig(**cfg.pruning)
    net = net_from_checkpoint(checkpoint, game, source=cfg.ckpt_path)
    player = NeuralMCTSPlayer(game, net_evaluator(net, device), search, pruning=pruning)
    if cfg.opponent == "pure_mcts":
        opponent = PureMCTSPlayer(game, cfg.pure_playouts, search.c_puct, seed=cfg.seed)
        opponent_name = f"pure_mcts_{cfg.pure_playouts}"
    else:
        opponent = NeuralMCTSPlayer(game, net_evaluator(load_policy_value_net(cfg.opponent, game), device),
                                    search, name="checkpoint")
        opponent_name = f"checkpoint:{cfg.opponent}"
    opening = cfg.get("opening_moves")
    if opening is None:  # two checkpoints search deterministically: vary the games
        opening = 0 if cfg.opponent == "pure_mcts" else 2
    if not isinstance(opening, int) or not 0 <= opening < game.k * 2 - 1:
        raise ConfigError(f"opening_moves={opening} must be an integer from 0 to {game.k * 2 - 2}")
    start = time.perf_counter()
    result = play_match(game, player, opponent, cfg.games, opening_moves=opening, seed=cfg.seed)
    lo, hi = result.interval
    out = {"checkpoint": cfg.ckpt_path, "game": game.name, "opponent": opponent_name,
           "playouts": search.playouts, "opening_moves": opening, "games": result.games, "wins": result.wins,
           "draws": result.draws, "losses": result.losses, "win_ratio": result.win_ratio,
           "ci_low": lo, "ci_high": hi, "seconds": round(time.perf_counter() - start, 1)}
    print(f"{cfg.ckpt_path} vs {opponent_name} ({search.playouts} playouts): {result}")
    write_result(cfg, "match.json", out)
    return out


def predict(cfg: DictConfig) -> dict:
    """Scores of a Go move predictor (`stonelab.models.prediction_scores`) on ``cfg.data.sources``.

    ``data.split``: ``all`` scores every game; ``train``/``val``/``test`` score that
    split of a training run's games (give the run's data.val_games, data.test_games
    and data.split_seed), so two models can be compared on their held-out games.
    """
    from pathlib import Path

    from stonelab.data.kgs import (
        GameCache,
        GamePositions,
        build_cache,
        cache_key,
        resolve_sources,
        split_games,
    )
    from stonelab.games.go import GoRules
    from stonelab.models.inference import net_from_checkpoint
    from stonelab.models.prediction_scores import PredictionScores

    if not cfg.get("ckpt_path"):
        raise ConfigError("ckpt_path=... is required: the checkpoint to evaluate")
    if not cfg.data.get("sources"):
        raise ConfigError("data.sources=[...] is required: the SGF files, folders or archives to score")
    split = cfg.data.get("split", "all")
    if split not in ("all", "train", "val", "test"):
        raise ConfigError(f"data.split={split!r}: choose all, train, val or test")
    torch.set_num_threads(cfg.torch_threads or os.cpu_count() or 1)
    device = resolve_device(cfg.device)
    checkpoint = load_checkpoint_file(cfg.ckpt_path)
    net, identity = net_from_checkpoint(checkpoint, source=cfg.ckpt_path)
    net.to(device)
    rules = GoRules(identity["board_size"])
    paths = resolve_sources(list(cfg.data.sources), Path(cfg.data.download_dir))
    folder = Path(cfg.data.cache_dir) / f"kgs-{cache_key(paths, rules.n)}"
    if not (folder / "summary.json").exists():
        build_cache(paths, folder, rules.n)
    cache = GameCache.load(folder, rules.n)
    games = np.arange(cache.num_games)
    if split != "all":
        games = split_games(cache.num_games, cfg.data.val_games, cfg.data.test_games, cfg.data.split_seed)[split]
    memory = getattr(net, "memory", 0)  # a belief_vit with a memory reads past positions too
    positions = GamePositions(cache, games, identity["encoder"], shuffle=False,
                              augment=False, batch_size=cfg.data.batch_size, history=memory)
    scores = PredictionScores(rules.num_points, gate=checkpoint[CHECKPOINT_KEY].get("gate"))
    start = time.perf_counter()
    with torch.inference_mode():
        for batch in positions:
            past = {"history": batch["history"].to(device)} if memory else {}
            scores.update(net(batch["planes"].to(device).float(), batch["to_play"].to(device), **past),
                          batch["target"])
    values = scores.compute()
    out = {"checkpoint": cfg.ckpt_path, "model": identity["model"], "sources": [str(p) for p in paths],
           "split": split, "games": len(games), "positions_scored": positions.positions - scores.passes_not_scored,
           "passes_not_scored": scores.passes_not_scored, **values,
           "seconds": round(time.perf_counter() - start, 1)}
    print(f"{cfg.ckpt_path} on {len(games)} games ({out['positions_scored']} positions): "
          + ", ".join(f"{k} {v:.4f}" for k, v in values.items()))
    write_result(cfg, "predict.json", out)
    return out


def inspect(cfg: DictConfig) -> dict:
    """Seed 001's Fig. 7 for one position: ``task=inspect ckpt_path=... sgf=FILE move=N``.

    The position after the first N moves of the SGF file's first game (0: the start;
    handicap stones included) is drawn as board | policy heatmap | belief map | value,
    confidence, gate and top-5 moves, into ``<output_dir>/inspect_<game>_move<N>.png``
    (and a .json of the same numbers). Any Go move predictor's checkpoint works; the
    belief panels need model=belief_vit.
    """
    from pathlib import Path

    from stonelab.data.sgf import read_games
    from stonelab.errors import StonelabError
    from stonelab.games.go import GoRules
    from stonelab.models import figures
    from stonelab.models.belief_vit import gate_moves
    from stonelab.models.inference import MovePredictor, encode_states, net_from_checkpoint

    if not cfg.get("ckpt_path"):
        raise ConfigError("ckpt_path=... is required: the checkpoint to inspect")
    if not cfg.get("sgf"):
        raise ConfigError("sgf=FILE is required: the SGF game to inspect")
    if cfg.get("move") is None:
        raise ConfigError("move=N is required: the position after the game's first N moves (0: the start)")
    checkpoint = load_checkpoint_file(cfg.ckpt_path)
    net, identity = net_from_checkpoint(checkpoint, source=cfg.ckpt_path)
    n = identity["board_size"]
    sgf = Path(str(cfg.sgf))
    if not sgf.is_file():
        raise StonelabError(f"sgf={cfg.sgf}: no such file")
    loaded = read_games(sgf.read_bytes(), str(sgf), board_size=n)
    if not loaded.games:
        reasons = ", ".join(sorted({s.reason for s in loaded.skips})) or "no game"
        raise StonelabError(f"sgf={sgf}: no usable {n}x{n} game ({reasons})")
    record = loaded.games[0]
    try:
        move = int(cfg.move)
    except (TypeError, ValueError):
        move = -1
    if not 0 <= move <= len(record.moves):
        raise ConfigError(f"move={cfg.move!r}: the game has {len(record.moves)} moves, choose 0..{len(record.moves)}")
    rules = GoRules(n, komi=record.komi)
    state = rules.new_state().setup(record.setup_black, record.setup_white)
    state.to_play = record.first_player
    for colour, point in record.moves[:move]:
        state.to_play = colour  # as recorded (KGS handicap games repeat a colour)
        state.play(point)
    if move < len(record.moves):
        state.to_play = record.moves[move][0]
        played = record.moves[move][1]
    else:
        played = None
    rank = record.rank_black_dan if state.to_play == 1 else record.rank_white_dan
    predictor = MovePredictor(net, rules, identity["encoder"])
    probs = predictor.probabilities([state], [rank])[0]  # illegal moves 0
    planes = torch.from_numpy(encode_states([state], identity["encoder"], [rank])).float()
    with torch.inference_mode():
        out = net(planes, torch.tensor([state.to_play]))
    view = {"belief": None, "value": None, "confidence": None, "gated_move": None,
            "gate_threshold": None}
    gate = (checkpoint.get(CHECKPOINT_KEY) or {}).get("gate")
    if isinstance(out, dict) and "confidence" in out:
        view["belief"] = torch.tanh(out["ownership"][0].float() / 2).numpy()
        view["value"] = float(torch.tanh(out["value"][0].float() / 2))
        view["confidence"] = float(torch.sigmoid(out["confidence"][0].float()))
        if gate and gate.get("enabled", True):
            moved, _, _ = gate_moves(torch.from_numpy(probs)[None].float(), torch.tensor([view["confidence"]]),
                                     torch.from_numpy(view["belief"]).reshape(1, -1), threshold=gate["threshold"],
                                     top_k=gate["top_k"], contested_weight=gate["contested_weight"])
            view["gated_move"], view["gate_threshold"] = int(moved[0]), float(gate["threshold"])
    title = (f"{sgf.name}: after {move} moves ({identity['model']}, "
             f"{record.black_player or 'black'} vs {record.white_player or 'white'}, {record.result or '?'})")
    fig = figures.position_view(state.board.copy(), state.to_play, probs, played=played, title=title, **view)
    os.makedirs(cfg.paths.output_dir, exist_ok=True)
    stem = os.path.join(cfg.paths.output_dir, f"inspect_{sgf.stem}_move{move}")
    figures.save(fig, stem + ".png")
    top = np.argsort(-probs, kind="stable")[:5]
    result = {"checkpoint": cfg.ckpt_path, "model": identity["model"], "sgf": str(sgf), "move": move,
              "to_play": "black" if state.to_play == 1 else "white",
              "played": figures.move_name(played, n) if played is not None else None,
              "top5": [[figures.move_name(int(m), n), float(probs[m])] for m in top],
              "value": view["value"], "confidence": view["confidence"],
              "gate_threshold": view["gate_threshold"],
              "gated": view["gated_move"] is not None and int(view["gated_move"]) != int(top[0]),
              "gated_move": figures.move_name(view["gated_move"], n) if view["gated_move"] is not None else None,
              "png": stem + ".png"}
    with open(stem + ".json", "w") as f:
        json.dump(result, f, indent=2)
    print(f"{sgf.name} after {move} moves: top-5 "
          + ", ".join(f"{name} {p:.3f}" for name, p in result["top5"])
          + (f"; value {result['value']:+.3f}, confidence {result['confidence']:.3f}" if view["value"] is not None
             else ""))
    print(f"figure: {stem}.png")
    return result


def gtp_match(cfg: DictConfig) -> dict:
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
    torch.set_num_threads(cfg.torch_threads or os.cpu_count() or 1)
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
                          "(GNU Go: apt-get install -y gnugo, then /usr/games/gnugo; see conf/eval.yaml)") from None


def _print_game(index: int, game) -> None:
    """One progress line per game: a match against GNU Go at level 10 takes hours."""
    print(f"game {index + 1}: {game.black} (B) vs {game.white} (W): {game.result} "
          f"after {len(game.moves)} moves ({game.reason})", flush=True)


def write_result(cfg: DictConfig, name: str, out: dict) -> str:
    """Write ``out`` as ``<output_dir>/<name>`` and say where."""
    path = os.path.join(cfg.paths.output_dir, name)
    os.makedirs(cfg.paths.output_dir, exist_ok=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=2)
    print(f"result: {path}")
    return path


TASKS = {"match": match, "predict": predict, "inspect": inspect, "gtp_match": gtp_match}


def run(cfg: DictConfig) -> dict:
    from stonelab.run_folder import remove_if_litter

    try:
        if cfg.task not in TASKS:
            raise ConfigError(f"task={cfg.task}: choose one of {sorted(TASKS)}")
        return TASKS[cfg.task](cfg)
    except BaseException:
        remove_if_litter(cfg.paths.output_dir)  # a failed evaluation leaves no empty run folder
        raise
