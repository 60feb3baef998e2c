"""Who takes Black in a set of Go games, and how Black does: per komi, the counted even games,
Black's mean margin and share of wins, and Black's mean rank minus White's (in dan).

    python scripts/colour_strength.py ../shared/data/kgs-archives/KGS-2003-19-7582-.tar.gz [--board-size 19]

The score and value heads learn from these results with only the mover's rank as input
(stonelab.features.maddison), so where the weaker player takes Black they learn to call
Black behind; stonelab.models.score_offset measures that on held-out games and takes it out.
docs/analysis_engine.md ("Black's edge") has the numbers.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from stonelab.data.sgf import counted_even_games, result_score
from stonelab.errors import StonelabError


def by_komi(games) -> list[tuple[float, int, float, float, float]]:
    """(komi, games, Black's mean margin, Black's share of wins, mean rank B - W) per komi."""
    rows = []
    for komi in sorted({g.komi for g in games}):
        chosen = [g for g in games if g.komi == komi]
        margins = np.array([result_score(g.result) for g in chosen])
        gaps = np.array([np.nan if None in (g.rank_black_dan, g.rank_white_dan) else g.rank_black_dan - g.rank_white_dan
                         for g in chosen], dtype=float)
        gap = float(np.nanmean(gaps)) if np.isfinite(gaps).any() else float("nan")
        rows.append((komi, len(chosen), float(margins.mean()), float((margins > 0).mean()), gap))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", help="SGF files, folders or archives")
    parser.add_argument("--board-size", type=int, default=19)
    args = parser.parse_args(argv)
    try:
        games = counted_even_games(args.paths, args.board_size)
    except (StonelabError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not games:
        print(f"error: no counted even {args.board_size}x{args.board_size} game in {' '.join(args.paths)}",
              file=sys.stderr)
        return 2
    print("komi  games  Black's mean margin  Black wins  rank B - W (dan)")
    for komi, n, margin, wins, gap in by_komi(games):
        print(f"{komi:4}  {n:5}  {margin:19.2f}  {wins:10.3f}  {gap:16.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
