"""How well the engine's ``final_score`` agrees with GNU Go's and Pachi's on recorded games.

    python -m stonelab.protocols.score_check docs/matches [--name stonelab]

Each match SGF under the folder (``**/sgf/*.sgf``) records in its comment both engines'
own ``final_score`` answers (``final_score black B+21.5, white W+17.5``). Every game that
has them is replayed into a `GTPEngine` and asked ``final_score``; the answer is compared
with the opponent's (the player not named ``--name``): the winner, and the margin.
Games that ended by resignation carry no final_score and are left out.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from stonelab.data.sgf import read_games
from stonelab.games.go.rules import area_score
from stonelab.protocols.gtp import GTPEngine

_FINAL = re.compile(r"final_score black ([BW]\+[0-9.]+|0)[;,]? white ([BW]\+[0-9.]+|0)")
_PLAYER = {"B": re.compile(r"PB\[([^\]]*)\]"), "W": re.compile(r"PW\[([^\]]*)\]")}


@dataclass(frozen=True)
class Comparison:
    path: str
    ours: float     # black - white - komi
    theirs: float   # the opponent's final_score, same sign convention
    plain: float    # a Tromp-Taylor count of every stone as it stands (what final_score was before)


def score_value(text: str) -> float:
    """``B+3.5`` -> 3.5, ``W+0.5`` -> -0.5, ``0`` -> 0."""
    if text == "0":
        return 0.0
    return float(text[2:]) * (1 if text[0] == "B" else -1)


def compare_game(path: Path, name: str) -> Comparison | None:
    """Our final_score and the opponent's for one recorded game (None: nothing to compare)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    found = _FINAL.search(text)
    if found is None:
        return None
    black = _PLAYER["B"].search(text)
    opponent_is_black = black is not None and black[1] != name
    theirs = score_value(found[1] if opponent_is_black else found[2])
    record = read_games(text.encode("utf-8"), str(path), check_legal=False).games[0]
    engine = GTPEngine(record.board_size, choose=None)
    engine.positions = engine._replayed(record, None)
    engine.komi = record.komi
    plain = float(area_score(engine.state.arrays, engine.komi))
    return Comparison(str(path), score_value(engine.final_score().split()[0]), theirs, plain)


def summary(results: list[Comparison]) -> dict:
    """Winner agreement and the margin's absolute error over ``results``."""
    def sign(x):
        return (x > 0) - (x < 0)

    errors = [abs(r.ours - r.theirs) for r in results]
    return {
        "games": len(results),
        "same_winner": sum(sign(r.ours) == sign(r.theirs) for r in results) / max(len(results), 1),
        "mean_abs_error": statistics.fmean(errors) if errors else 0.0,
        "median_abs_error": statistics.median(errors) if errors else 0.0,
        "plain_same_winner": sum(sign(r.plain) == sign(r.theirs) for r in results) / max(len(results), 1),
        "plain_mean_abs_error": statistics.fmean(abs(r.plain - r.theirs) for r in results) if results else 0.0,
    }


def check(folder: Path, name: str = "stonelab") -> tuple[dict, list[Comparison]]:
    results = [r for path in sorted(folder.glob("**/sgf/*.sgf")) if (r := compare_game(path, name))]
    return summary(results), results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--name", default="stonelab", help="our engine's name in PB / PW")
    parser.add_argument("--show", type=int, default=0, help="list this many of the worst disagreements")
    args = parser.parse_args(argv)
    stats, results = check(args.folder, args.name)
    print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in stats.items()))
    for r in sorted(results, key=lambda r: -abs(r.ours - r.theirs))[:args.show]:
        print(f"{r.path}: ours {r.ours:+g}, theirs {r.theirs:+g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
