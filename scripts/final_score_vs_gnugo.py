"""Our GTP engine's final_score against GNU Go's on counted 19x19 games ended with dead stones on the board.

    python scripts/final_score_vs_gnugo.py [--games-dir ../shared/data/kgs] [--games 50]
        [--ckpt models/go19_resnet3x64_kgs_aux.ckpt] [--net-weight 0]
        [--gnugo "/usr/games/gnugo --mode gtp --chinese-rules"] [--all]

Takes the counted games of ``--games-dir`` (SGF files, read by stonelab.data.sgf; RE like
B+12.5 or W+3.5, not resignation, time or forfeit), in file-name order, and loads each
final position into our GTP engine (the checkpoint's net without search, in-process, as
``src/play.py ckpt_path=... search.playouts=0`` runs it) and into GNU Go (``loadsgf``, the
record's komi, Chinese rules). Games where GNU Go's ``final_status_list dead`` is empty are
passed over (their count needs no judgement) unless ``--all``. Both engines are asked
``final_score``; one row per game (KGS's own result for reference: Japanese counting, its
players' agreement on dead stones), then how often the winner and the margin agree.
``--net-weight`` blends the net's ownership into the dead-stone call (the engine's
``net_weight``; 0, the engine's default, uses the playouts alone). The 2015 KGS games in
../shared/data/kgs were never trained on; docs/engines.md has the numbers.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from stonelab.data.sgf import GameRecord, read_games, result_score
from stonelab.errors import StonelabError
from stonelab.protocols.gtp import score_name
from stonelab.protocols.gtp_client import GTPClient, GTPCommands, LocalEngine

GNUGO = "/usr/games/gnugo --mode gtp --chinese-rules"


@dataclass(frozen=True)
class Row:
    name: str
    kgs: str          # the record's RE
    gnugo: float      # black - white - komi, as final_score answers it
    ours: float
    gnugo_dead: frozenset
    ours_dead: frozenset


def counted_games(folder: Path) -> Iterator[tuple[Path, GameRecord]]:
    """The 19x19 games of ``folder`` with a counted result, in file-name order (read as needed)."""
    for path in sorted(folder.glob("*.sgf")):
        record = next(iter(read_games(path.read_bytes(), str(path), check_legal=False).games), None)
        if record is not None and record.board_size == 19 and np.isfinite(result_score(record.result)):
            yield path, record


def score_value(text: str) -> float:
    """``B+3.5`` -> 3.5, ``W+0.5`` -> -0.5, ``0`` -> 0."""
    text = text.strip()
    return 0.0 if text == "0" else float(text[2:]) * (1 if text[0].upper() == "B" else -1)


def judged(engine: GTPCommands, path: Path, komi: float) -> tuple[float, frozenset]:
    """``engine``'s final_score of the end of game ``path`` and the stones it calls dead."""
    engine.send(f"loadsgf {path}")
    engine.send(f"komi {komi}")  # both count with the record's komi, whatever their loadsgf read
    return score_value(engine.final_score()), frozenset(engine.final_status_list("dead"))


def our_engine(ckpt: str, net_weight: float):
    """The GTP engine src/play.py builds for ``ckpt`` without search, its net's ownership
    blended into the dead-stone call at ``net_weight``."""
    from stonelab.models.alphazero_go import go_model_from_checkpoint
    from stonelab.protocols.gtp_search import search_gtp_engine

    engine = search_gtp_engine(go_model_from_checkpoint(ckpt), None)
    engine.net_weight = net_weight
    return LocalEngine(engine)


def compare(games, ours: GTPCommands, gnugo: GTPCommands, wanted: int, every: bool) -> list[Row]:
    """Rows for the first ``wanted`` games GNU Go sees dead stones in (any game with ``every``)."""
    rows = []
    for path, record in games:
        theirs, their_dead = judged(gnugo, path, record.komi)
        if not their_dead and not every:
            continue
        score, dead = judged(ours, path, record.komi)
        rows.append(Row(path.name, record.result, theirs, score, their_dead, dead))
        print_row(rows[-1])
        if len(rows) == wanted:
            break
    return rows


def print_row(row: Row) -> None:
    same = "yes" if np.sign(row.ours) == np.sign(row.gnugo) else "NO"
    print(f"{row.name:22s} {row.kgs:9s} {score_name(row.gnugo):8s} {score_name(row.ours):8s} {same:4s} "
          f"{abs(row.ours - row.gnugo):5g} {len(row.gnugo_dead):5d} {len(row.ours_dead):5d} "
          f"{len(row.gnugo_dead ^ row.ours_dead):5d}", flush=True)


def summary(rows: list[Row]) -> str:
    same = sum(np.sign(r.ours) == np.sign(r.gnugo) for r in rows)
    kgs = sum(np.sign(result_score(r.kgs)) == np.sign(r.gnugo) for r in rows)
    errors = [abs(r.ours - r.gnugo) for r in rows]
    return (f"games={len(rows)} same_winner={same}/{len(rows)} ({same / len(rows):.1%}) "
            f"same_score={sum(e == 0 for e in errors)} mean_abs_diff={np.mean(errors):.2f} "
            f"median_abs_diff={np.median(errors):g} dead_stones_differing={sum(len(r.gnugo_dead ^ r.ours_dead) for r in rows)} "
            f"kgs_same_winner_as_gnugo={kgs}/{len(rows)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games-dir", default="../shared/data/kgs")
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--ckpt", default="models/go19_resnet3x64_kgs_aux.ckpt")
    parser.add_argument("--net-weight", type=float, default=0.0)
    parser.add_argument("--gnugo", default=GNUGO)
    parser.add_argument("--all", action="store_true", help="also games where GNU Go sees no dead stone")
    args = parser.parse_args(argv)
    if not Path(args.games_dir).is_dir():
        print(f"error: {args.games_dir}: no such folder", file=sys.stderr)
        return 2
    import torch

    torch.set_num_threads(1)
    started = time.perf_counter()
    try:
        ours = our_engine(args.ckpt, args.net_weight)
        print(f"{'game':22s} {'KGS':9s} {'GNU Go':8s} {'ours':8s} same {'diff':>5s} "
              f"{'dead':>5s} {'ours':>5s} {'xor':>5s}")
        with GTPClient(shlex.split(args.gnugo), timeout=300, label="GNU Go") as gnugo:
            rows = compare(counted_games(Path(args.games_dir)), ours, gnugo, args.games, args.all)
    except (StonelabError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not rows:
        print(f"error: {args.games_dir}: no counted 19x19 game to compare", file=sys.stderr)
        return 2
    print(f"{summary(rows)} net_weight={args.net_weight:g} seconds={time.perf_counter() - started:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
