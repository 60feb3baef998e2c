"""How much the analysis engine's scoreLead moves from one turn to the next on real games.

    python scripts/score_swing.py [--ckpt models/go19_resnet3x64_kgs_aux.ckpt]
        [--games-dir ../shared/data/kgs] [--games 10] [--moves 60] [--visits 50] [--komi 7.5]
        [--symmetries 1|8] [--board-size 19]

Sends each even 19x19 game of ``--games-dir`` (SGF files, read by stonelab.data.sgf) to the
KataGo-style JSON engine (stonelab.protocols.analysis) as one query analysing turns 0..moves,
and prints the median and mean |scoreLead(t+1) - scoreLead(t)| in Black's view, the median
|winrate(t+1) - winrate(t)|, in how many turns the win rate and scoreLead favour different
sides, and KaTrain's points lost by the players' moves (the mover's sign times the drop in
Black's scoreLead: a constant favour to the side to move shows here as a median far from 0). The 2015 KGS games in
../shared/data/kgs were never trained on; docs/analysis_engine.md has the numbers.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import torch

from stonelab.data.sgf import even_games
from stonelab.errors import StonelabError
from stonelab.models.alphazero_go import go_model_from_checkpoint
from stonelab.models.score_offset import katrain_points_lost
from stonelab.protocols.analysis import AnalysisEngine, turn_roots
from stonelab.protocols.gtp import move_name


def roots_of(engine: AnalysisEngine, game, moves: int, komi: float) -> list[dict]:
    """rootInfo of turns 0..moves of ``game``, in turn order."""
    n = game.board_size
    return turn_roots(engine, [("B" if c == 1 else "W", move_name(p, n)) for c, p in game.moves[:moves]], komi, n=n)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ckpt", default="models/go19_resnet3x64_kgs_aux.ckpt")
    parser.add_argument("--games-dir", default="../shared/data/kgs")
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--moves", type=int, default=60)
    parser.add_argument("--visits", type=int, default=50)
    parser.add_argument("--komi", type=float, default=7.5)
    parser.add_argument("--symmetries", type=int, default=1, choices=(1, 8),
                        help="8: the net averaged over the board's symmetries (as play.py's symmetries=8)")
    parser.add_argument("--board-size", type=int, default=19,
                        help="the games' board (e.g. GNU Go's games from scripts/gnugo_games.py); a 19x19 net is resized")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    try:
        engine = AnalysisEngine(go_model_from_checkpoint(args.ckpt, symmetries=args.symmetries), {"leaves_per_game": 4},
                                max_visits=args.visits)
        games = even_games([args.games_dir], args.board_size, args.moves)[:args.games]
        if not games:
            n = args.board_size
            raise StonelabError(f"{args.games_dir}: no even {n}x{n} game of {args.moves} moves or more")
    except (StonelabError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    steps, rate_steps, lost, disagree, turns = [], [], [], 0, 0
    for game in games:
        roots = roots_of(engine, game, args.moves, args.komi)
        lead = np.array([r["scoreLead"] for r in roots])
        winrate = np.array([r["winrate"] for r in roots])
        steps += list(np.abs(np.diff(lead)))
        rate_steps += list(np.abs(np.diff(winrate)))
        lost += list(katrain_points_lost(lead, [colour for colour, _ in game.moves[:len(lead) - 1]]))
        disagree += int(np.sum(np.sign(winrate - 0.5) != np.sign(lead)))
        turns += len(roots)
    print(f"{len(games)} games x {args.moves + 1} turns, {args.visits} visits, komi {args.komi}: "
          f"median |dScoreLead| {np.median(steps):.2f}, mean {np.mean(steps):.2f}; "
          f"median |dWinrate| {np.median(rate_steps):.3f}; "
          f"winrate and scoreLead on different sides in {disagree}/{turns} turns; "
          f"KaTrain's points lost for the players' moves: median {np.median(lost):.2f}, mean {np.mean(lost):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
