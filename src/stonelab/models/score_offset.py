"""The score head's favour to the side to move, measured and taken out:
``python -m stonelab.models.score_offset SRC OUT [--games-dir ../shared/data/kgs] [--games 40]``.

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
The written file records the offset, the games and the date.
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


def measure(source: str, games_dir: str, games: int, moves: int) -> dict:
    """The mover's edge ``c`` of ``source``'s score head, in points, and what it rests on."""
    from stonelab.models.inference import MovePredictor

    predictor = MovePredictor.from_checkpoint(source).for_board(19)  # the games' board
    if predictor.estimates([predictor.rules.new_state()])[0].score_lead is None:
        raise StonelabError(f"{source} has no score head (train with model.net.aux_heads=true)")
    chosen = held_out_games(games_dir, games, moves)
    lost = np.concatenate([points_lost(predictor, g, moves) for g in chosen])
    return {"points": round(float(lost.mean()) / 2, 3), "moves": int(lost.size), "games": len(chosen),
            "games_dir": os.path.basename(os.path.normpath(games_dir)), "first_moves": moves,
            "date": datetime.date.today().isoformat()}


def remove_offset(source: str, out: str, offset: dict) -> dict:
    """Write ``source`` with its score head lowered by ``offset["points"]`` for the mover."""
    checkpoint = load_checkpoint_file(source)
    weights = checkpoint["state_dict"]
    if SCORE_BIAS not in weights:
        raise StonelabError(f"{source} has no score head ({SCORE_BIAS} missing)")
    weights[SCORE_BIAS] = weights[SCORE_BIAS].clone()
    weights[SCORE_BIAS][0] -= offset["points"] / SCORE_SCALE
    state = checkpoint[CHECKPOINT_KEY]
    earlier = state.get(OFFSET_KEY, {}).get("points", 0.0)  # a second pass adds to the first
    state[OFFSET_KEY] = {**offset, "points": round(earlier + offset["points"], 3)}
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
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    return print_summary(lambda: remove_offset(args.source, args.out,
                                               measure(args.source, args.games_dir, args.games, args.moves)))


if __name__ == "__main__":
    sys.exit(main())
