"""How often a search changes the net's own move, by search setting: whether a budget can help at all.

    python scripts/search_divergence.py [--ckpt models/go19_resnet3x64_kgs_22k.ckpt]
        [--games-dir data/kgs] [--positions 60] [--playouts 64] [--settings 5:none 2:0.2 1:0.2] [--seed 0]

Takes one position from each of ``--positions`` even 19x19 games of ``--games-dir`` (a move
between 20 and 220 drawn with ``--seed``; the 2015 KGS games were never trained on), asks the
GTP engine of src/play.py for its move there with no search, then with ``--playouts`` playouts
under each ``c_puct:fpu_reduction`` setting (``none``: an unvisited move scores Q = 0), and
prints per setting: the share of positions where the searched move differs from the net's top
move, the share that match the move played in the game, and the seconds per move on one torch
thread. A search that never leaves the net's top move cannot play better than the net; with
PUCT's c * P * sqrt(N) / (1 + n) a prior of 0.4 at 64 playouts is worth 3.2 c of the Q range of
2, so at c_puct 5 the visits follow the prior (docs/results_maddison_go_cnn.md has the numbers).
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import torch

from stonelab.arena.gtp_match import model_player
from stonelab.data.sgf import even_games
from stonelab.errors import StonelabError
from stonelab.models.alphazero_go import go_model_from_checkpoint
from stonelab.protocols.gtp import move_name

FIRST_MOVE, LAST_MOVE = 20, 220  # past the opening book, before the endgame's forced sequences


def setting(text: str) -> tuple[float, float | None]:
    """``c_puct:fpu`` (fpu a number or none) as an argparse type."""
    try:
        c, fpu = text.split(":")
        pair = float(c), None if fpu.lower() == "none" else float(fpu)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected c_puct:fpu_reduction such as 2:0.2 or 5:none, got {text!r}") from None
    if not pair[0] > 0 or (pair[1] is not None and pair[1] < 0):
        raise argparse.ArgumentTypeError(f"c_puct must be > 0 and fpu_reduction >= 0, got {text!r}")
    return pair


def sample_positions(games, count: int, seed: int) -> list[tuple[list[tuple[str, str]], str]]:
    """(moves before, the move played) at one drawn move of each of the first ``count`` games."""
    rng = random.Random(seed)
    out = []
    for game in games[:count]:
        moves = [("B" if c == 1 else "W", move_name(p, 19)) for c, p in game.moves]
        k = rng.randrange(FIRST_MOVE, min(len(moves), LAST_MOVE))
        out.append((moves[:k], moves[k]))
    return out


def engine_moves(predictor, search: dict | None, positions) -> tuple[list[str], float]:
    """The engine's move at each position, and its seconds per move (after one warm-up move)."""
    engine = model_player(predictor, search)
    engine.send("boardsize 19")
    engine.send("komi 7.5")
    engine.send("clear_board")
    engine.send("genmove B")  # compiles or loads the search's kernels outside the timing
    moves, start = [], time.perf_counter()
    for before, (colour, _) in positions:
        engine.send("clear_board")
        for c, vertex in before:
            engine.send(f"play {c} {vertex}")
        moves.append(engine.send(f"genmove {colour}").strip().upper())
    return moves, (time.perf_counter() - start) / len(positions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ckpt", default="models/go19_resnet3x64_kgs_22k.ckpt")
    parser.add_argument("--games-dir", default="data/kgs")
    parser.add_argument("--positions", type=int, default=60)
    parser.add_argument("--playouts", type=int, default=64)
    parser.add_argument("--settings", type=setting, nargs="+", default=[(5.0, None), (2.0, 0.2), (1.0, 0.2)],
                        metavar="C:FPU", help="c_puct:fpu_reduction pairs (default 5:none 2:0.2 1:0.2)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.positions < 1 or args.playouts < 1:
        parser.error("--positions and --playouts must be at least 1")
    torch.set_num_threads(1)
    try:
        predictor = go_model_from_checkpoint(args.ckpt)
        games = even_games([args.games_dir], 19, LAST_MOVE // 2)
        if not games:
            raise StonelabError(f"{args.games_dir}: no even 19x19 game of {LAST_MOVE // 2} moves or more")
    except (StonelabError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    positions = sample_positions(games, args.positions, args.seed)
    raw, raw_seconds = engine_moves(predictor, None, positions)
    played = [move.upper() for _, (_, move) in positions]
    print(f"{len(positions)} positions, {args.playouts} playouts a move, {args.ckpt}")
    print(f"net alone           differs from the net 0.00  matches the game {_share(raw, played):.2f}  "
          f"{raw_seconds:.3f} s/move")
    for c_puct, fpu in args.settings:
        search = {"playouts": args.playouts, "c_puct": c_puct, "fpu_reduction": fpu, "leaves_per_game": 8}
        moves, seconds = engine_moves(predictor, search, positions)
        label = f"c_puct {c_puct:g} fpu {'none' if fpu is None else f'{fpu:g}'}"
        print(f"{label:19s} differs from the net {1 - _share(moves, raw):.2f}  matches the game "
              f"{_share(moves, played):.2f}  {seconds:.3f} s/move")
    return 0


def _share(moves: list[str], others: list[str]) -> float:
    return sum(a == b for a, b in zip(moves, others, strict=True)) / len(moves)


if __name__ == "__main__":
    sys.exit(main())
