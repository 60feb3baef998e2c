"""Counted games of GNU Go against itself, as SGF: reference games on any board size.

    python scripts/gnugo_games.py OUT_DIR [--board-size 13] [--games 20] [--level 1]
        [--komi 7.5] [--opening 4] [--seed 0] [--gnugo /usr/games/gnugo]

KGS gives counted 19x19 games only; the board sizes a GUI also offers (9x9, 13x13) need
games played to the end and counted by a judge we did not write. Each game starts with
``--opening`` random moves (so that the games differ), then GNU Go plays both sides until
two passes (or 3 x the board's points moves), and GNU Go's ``final_score`` (Chinese
counting, its dead stones removed) is written as RE. scripts/score_calibration.py
reads the folder with ``--board-size``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys

from stonelab.data.sgf import game_sgf
from stonelab.errors import StonelabError
from stonelab.games.go.rules import BLACK, GoRules
from stonelab.protocols.gtp_client import RESIGN


def play_game(gnugo, n: int, komi: float, opening: int, rng: random.Random) -> tuple[list, str]:
    """One game: its moves [(colour, point)] and GNU Go's count of it."""
    gnugo.boardsize(n)
    gnugo.clear_board()
    gnugo.komi(komi)
    state = GoRules(n, komi=komi).new_state()
    moves, passes = [], 0
    while passes < 2 and len(moves) < 3 * n * n:
        colour = state.to_play
        if len(moves) < opening:
            move = rng.choice([p for p in range(n * n) if state.is_legal(p)])
            gnugo.play(colour, move)
        else:
            move = gnugo.genmove(colour)
            if move == RESIGN:  # GNU Go hardly ever resigns; such a game is written uncounted
                return moves, f"{'W' if colour == BLACK else 'B'}+R"
        state.play(move)
        moves.append((colour, move))
        passes = passes + 1 if move == n * n else 0
    return moves, gnugo.final_score()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--board-size", type=int, default=13)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--level", type=int, default=1)
    parser.add_argument("--komi", type=float, default=7.5)
    parser.add_argument("--opening", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gnugo", default="/usr/games/gnugo")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    try:
        from stonelab.protocols.gtp_client import GTPClient

        GoRules(args.board_size)  # a board Go's rules refuse is refused before GNU Go starts
        os.makedirs(args.out_dir, exist_ok=True)
        with GTPClient([args.gnugo, "--mode", "gtp", "--chinese-rules", "--level", str(args.level),
                        "--seed", str(args.seed)], label="GNU Go", timeout=120) as gnugo:
            for i in range(args.games):
                moves, result = play_game(gnugo, args.board_size, args.komi, args.opening, rng)
                path = os.path.join(args.out_dir, f"gnugo_{args.board_size}x{args.board_size}_{i:03d}.sgf")
                root, rest = game_sgf(args.board_size, args.komi, moves).split("\n", 1)
                with open(path, "w") as f:  # RE and the players on the root node
                    f.write(f"{root}PB[GNU Go]PW[GNU Go]RE[{result}]\n{rest}")
                print(f"{path}: {result} after {len(moves)} moves", flush=True)
    except (StonelabError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
