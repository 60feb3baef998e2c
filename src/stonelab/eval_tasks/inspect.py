"""``task=inspect``: one position of an SGF game as a figure (policy, belief map, value, gate)."""

from __future__ import annotations

import json
import os

import numpy as np
import torch
from omegaconf import DictConfig

from stonelab.errors import ConfigError
from stonelab.eval_tasks import require_checkpoint


def run(cfg: DictConfig) -> dict:
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
    from stonelab.games.go.rules import GoRules
    from stonelab.models import checkpoints, figures
    from stonelab.models.gate import gate_output
    from stonelab.models.inference import MovePredictor

    require_checkpoint(cfg, "the checkpoint to inspect")
    if not cfg.get("sgf"):
        raise ConfigError("sgf=FILE is required: the SGF game to inspect")
    if cfg.get("move") is None:
        raise ConfigError("move=N is required: the position after the game's first N moves (0: the start)")
    model = checkpoints.load(str(cfg.ckpt_path), game="go", move_predictor=True)
    net, identity = model.net, model.identity
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
    out = predictor.outputs([state], [rank])
    view = {"belief": None, "value": None, "confidence": None, "gated_move": None,
            "gate_threshold": None}
    gate = model.gate
    if out.has_belief:
        view["belief"] = out.belief_map[0].numpy()
        view["value"] = float(out.value[0]) if out.value is not None else None
        view["confidence"] = float(out.confidence[0])
        if gate and gate.get("enabled", True):
            moved, _, _ = gate_output(torch.from_numpy(probs)[None].float(), out, threshold=gate["threshold"],
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
