"""Where the games of a ladder were lost: each colour's score and, for every lost game, the first
position in which the winner (to move) had a win by continuous threats.

    python scripts/ladder_losses.py LADDER_JSON [--threats 3]

Reads the game records of a ladder run's ``ladder.json`` (``python src/eval.py task=ladder``
writes one) and replays each lost game, asking at every move of the winner whether it has a
win by continuous threats of at most ``--threats`` threes before its fours
(`stonelab.games.gomoku.threats.vct`, freestyle: the search ``pruning.vct`` runs at the root).
A loss whose winner had such a win early was lost before it; one with none until the end was
lost to something the threat search does not see. The search is bounded: "none" means none
found within its budget.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from gomocup_move_seconds import board_of  # scripts/ is on the path when a script runs

from stonelab.eval_tasks.match import by_colour, colour_text
from stonelab.games.gomoku import threats

MAX_FOURS = 12
BUDGET = 200_000  # fours and threats tried by one search: about the root search's, for one question


def first_winning_threats(size: int, k: int, moves: list[int], winner: int, max_threats: int) -> int | None:
    """The first ply (0-based, counting the opening stones) at which ``winner`` (+1 black, -1
    white), to move, has a win by continuous threats; None when it never has one found."""
    board = np.zeros(size * size, dtype=np.int8)
    colour = 1
    for ply, point in enumerate(moves):
        if colour == winner:
            spent = np.zeros(1, dtype=np.int64)
            if threats.vct(board.copy(), size, k, np.int8(colour), max_threats, MAX_FOURS, BUDGET, spent) >= 0:
                return ply
        board[point] = colour
        colour = -colour
    return None


def report(ladder: dict, max_threats: int) -> list[str]:
    """One line a rung (each colour's score), one a lost game."""
    size, k = board_of(ladder)
    lines = []
    for rung in ladder["rungs"]:
        games = rung["game_records"]
        colours = by_colour(games)
        lines.append(f"max_node {rung['budget']}: "
                     + colour_text(colours))
        for number, game in enumerate(games):
            if game["result"] != -1:
                continue
            moves, ours = game["moves"], game["player_colour"]
            ply = first_winning_threats(size, k, moves, -ours, max_threats)
            found = (f"its win by continuous threats from ply {ply}, {len(moves) - ply} plies before the end"
                     if ply is not None else "no win by continuous threats found before the end")
            lines.append(f"  game {number}: ours {'black' if ours == 1 else 'white'}, lost in {len(moves)} plies; {found}")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ladder", type=Path, help="a ladder.json written by python src/eval.py task=ladder")
    parser.add_argument("--threats", type=int, default=3, choices=(1, 2, 3),
                        help="the most threes before the fours of a win searched (default 3)")
    options = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        lines = report(json.loads(options.ladder.read_text()), options.threats)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as error:
        parser.error(f"{options.ladder}: not a ladder.json with game records of a gomoku_NxN_cK game "
                     f"(python src/eval.py task=ladder writes one): {error}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
