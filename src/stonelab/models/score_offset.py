"""The score head's favour to the side to move, and the heads' disfavour to Black,
measured and taken out:
``python -m stonelab.models.score_offset SRC OUT [--games-dir ../shared/data/kgs] [--games 40] [--counted-games 120]``.

A Go move predictor's planes give the rank of the side to move only
(`stonelab.features.maddison.PLAY_RANK`); its opponent's strength is the archives'
average for that rank, so the score head (`stonelab.models.nets.maddison.AuxHeads`)
gives the side to move a small constant edge. In one colour's view that edge changes
side with every move, and an analysis GUI reads it as points lost by every move (KaTrain)
or a score graph that zigzags (Sabaki).

Measured on consecutive positions of real games: if the side to move gets ``c`` points
too many, the mover of each move appears to lose ``2c`` points by it, on average over
many moves (real mistakes and gains average out of this mean far less than the constant
does; KaTrain's ``points_lost`` is exactly this drop). So ``c`` = half the mean drop, and
the head's mover-margin output is lowered by ``c`` (its last bias: an exact shift, the
net otherwise unchanged). The games are the LAST ``--games`` even 19x19 games of
``--games-dir`` (the 2015 KGS games, never trained on), so that the first ones stay for
measuring the result (scripts/score_swing.py, scripts/score_calibration.py).

Black's edge: in the KGS archives the nets learn from, the weaker player takes Black
(even games at komi 6.5: Black 0.23 dan weaker on average and behind by 2.2 points at the
end; at komi 0.5, 1.4 dan and 3.8 points), and the net is not told the opponent's rank. So
it calls Black behind in a game between equals. Measured on the LAST ``--counted-games``
counted even 19x19 games of ``--games-dir`` (again never trained on, and disjoint from the
first 120 that scripts/score_calibration.py reports), every 5th position: the score's edge
is minus the median of (the net's lead - the recorded margin) in Black's view (the median:
the one shift that lowers the mean absolute error most), the value's is the logit shift
that best predicts the winner (a one-parameter logistic fit). Both are written into the
heads' `BlackEdge` buffers.

The written file records the offsets, the games and the date.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import sys

import numpy as np
import torch

from stonelab.errors import StonelabError
from stonelab.models.export import print_summary
from stonelab.models.identity import CHECKPOINT_KEY, load_checkpoint_file
from stonelab.models.nets.maddison import SCORE_SCALE

SCORE_BIAS = "net.aux_heads.mlp.2.bias"  # row 0: the mover's margin on the board, in SCORE_SCALE points
SCORE_BLACK_EDGE = "net.aux_heads.black_edge.edge"  # points Black gets beyond the net's reading
VALUE_BLACK_EDGE = "net.value_head.black_edge.edge"  # value logit Black gets beyond it
EVERY = 5  # a position every 5 moves: odd, so both colours are measured alike
OFFSET_KEY = "score_offset"  # under checkpoint["stonelab"]: what was taken out, and on which games


def held_out_games(games_dir: str, games: int, moves: int) -> list:
    """The last ``games`` even 19x19 games of ``games_dir`` with more than ``moves`` moves."""
    from stonelab.data.sgf import even_games

    found = even_games([games_dir], 19, moves + 1)
    if not found:
        raise StonelabError(f"{games_dir}: no even 19x19 game of more than {moves} moves")
    return found[-games:]


def points_lost(predictor, game, moves: int) -> np.ndarray:
    """KaTrain's points lost by each of the game's first ``moves`` moves, by the raw net."""
    from stonelab.games.go.rules import GoRules

    state = GoRules(19, komi=game.komi).new_state()
    states = [state.copy()]
    for colour, point in game.moves[:moves]:
        state.to_play = colour
        state.play(point)
        states.append(state.copy())
    sign = np.array([s.to_play for s in states], dtype=np.float64)
    lead = sign * np.array([e.score_lead for e in predictor.estimates(states)])  # Black's view
    return katrain_points_lost(lead, [c for c, _ in game.moves[:moves]])


def katrain_points_lost(lead: np.ndarray, colours) -> np.ndarray:
    """KaTrain's points lost by each move (``GameNode.points_lost``): the mover's sign times
    the drop in Black's score lead from before the move (``lead[t]``) to after it."""
    lead = np.asarray(lead, dtype=np.float64)
    return np.asarray(colours, dtype=np.float64) * (lead[:len(colours)] - lead[1:len(colours) + 1])


def head_on_19x19(source: str):
    """``source`` as a predictor on the games' board (19x19) whose score is its score head's,
    the thing measured and shifted here, also where a net of another size would otherwise
    count its ownership map there (`MovePredictor.for_board`)."""
    from stonelab.models.inference import MovePredictor

    predictor = MovePredictor.from_checkpoint(source).for_board(19)
    predictor.score_from_ownership = False
    return predictor


def measure(source: str, games_dir: str, games: int, moves: int) -> dict:
    """The mover's edge ``c`` of ``source``'s score head, in points, and what it rests on."""
    predictor = head_on_19x19(source)
    if predictor.estimates([predictor.rules.new_state()])[0].score_lead is None:
        raise StonelabError(f"{source} has no score head (train with model.net.aux_heads=true)")
    chosen = held_out_games(games_dir, games, moves)
    lost = np.concatenate([points_lost(predictor, g, moves) for g in chosen])
    return {"points": round(float(lost.mean()) / 2, 3), "moves": int(lost.size), "games": len(chosen),
            "games_dir": os.path.basename(os.path.normpath(games_dir)), "first_moves": moves,
            "date": datetime.date.today().isoformat()}


def positions(game, every: int = EVERY) -> list:
    """The game's position every ``every`` moves from the start, and its final position, in
    move order (its own rules and komi). Keep ``every`` odd: both colours then get turns to
    move (an even one measures only the positions with the first player to move)."""
    from stonelab.games.go.rules import GoRules

    rules = GoRules(game.board_size, komi=game.komi, superko=False)
    state = rules.new_state().setup(game.setup_black, game.setup_white)
    state.to_play = game.first_player
    out = [state.copy()]
    for i, (colour, point) in enumerate(game.moves, 1):
        state.to_play = colour
        state.play(point)
        if i % every == 0 or i == len(game.moves):
            out.append(state.copy())
    return out


def logistic_shift(logits: np.ndarray, black_won: np.ndarray, steps: int = 30) -> float:
    """The ``d`` that maximises the likelihood of ``black_won`` under sigmoid(logits + d)
    (Newton's method on a concave one-parameter log-likelihood)."""
    d = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(logits + d)))
        gradient, curvature = float(np.sum(black_won - p)), float(np.sum(p * (1 - p)))
        if curvature <= 0:
            break
        d += gradient / curvature
    return d


def measure_black_edge(source: str, games_dir: str, counted: int) -> dict:
    """Black's edge in ``source``'s score (points) and value (logit), measured on the last
    ``counted`` counted even 19x19 games of ``games_dir``."""
    from stonelab.data.sgf import counted_even_games, result_score

    predictor = head_on_19x19(source)
    found = counted_even_games([games_dir])[-counted:]
    if not found:
        raise StonelabError(f"{games_dir}: no counted even 19x19 game (RE[B+12.5], not resigned)")
    errors, logits, black_won = [], [], []
    for game in found:
        margin = result_score(game.result)
        states = positions(game)
        out = predictor.outputs(states)
        if out.score_lead is None or out.value_logit is None:
            raise StonelabError(f"{source} has no score head (train with model.net.aux_heads=true)")
        sign = np.array([s.to_play for s in states], dtype=np.float64)
        errors.append(sign * out.score_lead.float().numpy() - margin)
        logits.append(sign * out.value_logit.float().numpy())
        black_won.append(np.full(len(states), float(margin > 0)))
    return {"black_points": round(-float(np.median(np.concatenate(errors))), 3),
            "black_logit": round(logistic_shift(np.concatenate(logits), np.concatenate(black_won)), 4),
            "counted_games": len(found), "positions": int(sum(len(e) for e in errors))}


def remove_offset(source: str, out: str, offset: dict) -> dict:
    """Write ``source`` with its score head lowered by ``offset["points"]`` for the mover and,
    where ``offset`` has them, Black's edges added (``black_points``, ``black_logit``)."""
    checkpoint = load_checkpoint_file(source)
    weights = checkpoint["state_dict"]
    if SCORE_BIAS not in weights:
        raise StonelabError(f"{source} has no score head ({SCORE_BIAS} missing)")
    weights[SCORE_BIAS] = weights[SCORE_BIAS].clone()
    weights[SCORE_BIAS][0] -= offset["points"] / SCORE_SCALE
    state = checkpoint[CHECKPOINT_KEY]
    earlier = state.get(OFFSET_KEY, {})  # a second pass adds to the first
    added = {"points": round(earlier.get("points", 0.0) + offset["points"], 3)}
    for key, name, digits in (("black_points", SCORE_BLACK_EDGE, 3), ("black_logit", VALUE_BLACK_EDGE, 4)):
        if key in offset:
            weights[name] = weights.get(name, torch.zeros(())) + offset[key]
            added[key] = round(earlier.get(key, 0.0) + offset[key], digits)
    state[OFFSET_KEY] = {**offset, **added}
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    torch.save(checkpoint, out)
    with open(out, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {"out": out, "sha256": digest, **state[OFFSET_KEY]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stonelab.models.score_offset", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", help="a Go checkpoint with a score head (model.net.aux_heads=true)")
    parser.add_argument("out", help="the file to write")
    parser.add_argument("--games-dir", default="../shared/data/kgs")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--moves", type=int, default=200, help="the first moves of each game measured")
    parser.add_argument("--counted-games", type=int, default=120,
                        help="the last counted games Black's edge is measured on (0: leave it as it is)")
    args = parser.parse_args(argv)
    if args.counted_games < 0:
        print(f"error: --counted-games={args.counted_games} must be >= 0", file=sys.stderr)
        return 2
    torch.set_num_threads(1)

    def measured() -> dict:
        offset = measure(args.source, args.games_dir, args.games, args.moves)
        if args.counted_games:
            offset.update(measure_black_edge(args.source, args.games_dir, args.counted_games))
        return offset

    return print_summary(lambda: remove_offset(args.source, args.out, measured()))


if __name__ == "__main__":
    sys.exit(main())
