"""Blunders per 100 moves of one player in recorded games, judged by a score net that did not play;
and when it passed.

    python scripts/blunders.py MATCH_DIR [MATCH_DIR ...] [--player stonelab]
        [--judge models/go19_resnet3x64_kgs_aux.ckpt] [--visits 50] [--moves 200] [--threshold 10]
        [--from-move 0] [--paired]
    python scripts/blunders.py --kgs-dir ../shared/data/kgs --games 20    # the same judge on experts

A MATCH_DIR is a ``task=gtp_match`` run folder (its games.jsonl). Each game's first ``--moves``
moves go to the KataGo-style JSON engine (stonelab.protocols.analysis) with the judge's
checkpoint, one query analysing every turn; a move's points lost is KaTrain's (the mover's sign
times the drop in Black's scoreLead across the move), and a blunder is a move that loses
``--threshold`` points or more. The random opening moves a match starts from are nobody's and
are left out; ``--from-move N`` leaves out the first N moves too (``--from-move 150 --moves 1000``
judges the endgame, passes included). The interval is a bootstrap over games (moves of one game
are not independent). ``--paired`` takes the folders as arms of one comparison played from the
same openings (a setting on and off): each later folder's blunder rate is also given as a ratio
to the first's, with an interval from resampling the openings.
``--kgs-dir`` judges both players of even 19x19 KGS games instead: how often the judge calls a
strong amateur's move a blunder is the floor under every other number it gives. (Measured
2026-12-05 at 16 visits: 1.5 per 100 moves over 20 held-out games, 55 of the 61 in one game's ko
fight, where each ko threat looks to the judge like a move that gives the ko away.)

For match folders a second line gives the player's pass timing in the endgame, from the whole
records: the median number of the opponent's moves (passes not counted) after the player's
first pass -- points it left open -- and of the player's own moves after the opponent's first
pass -- play it went on with when the opponent thought the game over.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

from stonelab.data.sgf import even_games
from stonelab.errors import StonelabError
from stonelab.models.alphazero_go import go_model_from_checkpoint
from stonelab.models.score_offset import katrain_points_lost
from stonelab.protocols.analysis import AnalysisEngine, turn_roots
from stonelab.protocols.gtp import move_name


def turn_leads(engine: AnalysisEngine, moves: list[str], komi: float, first: int = 0) -> np.ndarray:
    """Black's scoreLead (the search's) before each of ``moves[first:]`` and after the last."""
    try:
        roots = turn_roots(engine, [("B" if t % 2 == 0 else "W", move) for t, move in enumerate(moves)], komi,
                           first=first)
    except ValueError as exc:
        raise StonelabError(str(exc)) from None
    return np.array([root["scoreLead"] for root in roots])


def match_games(folder: Path, player: str, moves: int, first: int = 0) -> list[tuple[list[str], list[bool]]]:
    """Each game of a gtp_match folder: its first ``moves`` moves and which of them, from move
    ``first`` on, ``player`` chose (the match's random opening moves: nobody's)."""
    settings, records = _journal(folder)
    if settings.get("board_size", 19) != 19:
        raise StonelabError(f"{folder}: a {settings['board_size']}x{settings['board_size']} match; the judge is 19x19")
    opening = max(int(settings.get("opening_moves") or 0), first)
    games = []
    for game in records:
        if player not in (game["black"], game["white"]):
            raise StonelabError(f"{folder}: no player named {player!r} (its players: {game['black']}, {game['white']})")
        colour = 0 if game["black"] == player else 1
        chosen = game["moves"][:moves]
        games.append((chosen, [t >= opening and t % 2 == colour for t in range(len(chosen))]))
    return games


def _journal(folder: Path) -> tuple[dict, list[dict]]:
    journal = folder / "games.jsonl"
    if not journal.is_file():
        raise StonelabError(f"{folder}: no games.jsonl (give a task=gtp_match run folder)")
    try:
        lines = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise StonelabError(f"{journal}: not a match journal ({exc})") from None
    if len(lines) < 2 or not all(isinstance(g, dict) and {"black", "white", "moves"} <= g.keys() for g in lines[1:]):
        raise StonelabError(f"{journal}: no games played yet, or not a match journal (each game needs "
                            "black, white and moves)")
    return lines[0].get("settings", {}), lines[1:]


def moves_after_first_pass(moves: list[str], passer: int, mover: int) -> int:
    """``mover``'s moves (0 Black, 1 White; passes not counted) after ``passer``'s first pass."""
    first = next((t for t, m in enumerate(moves) if t % 2 == passer and m.lower() == "pass"), len(moves))
    return sum(1 for t in range(first + 1, len(moves)) if t % 2 == mover and moves[t].lower() != "pass")


def pass_timing(folder: Path, player: str) -> dict:
    """Per game: the opponent's moves after ``player``'s first pass, and ``player``'s moves after
    the opponent's first pass (passes not counted; a game with no such pass counts 0)."""
    left_open, played_on = [], []
    for game in _journal(folder)[1]:
        colour = 0 if game["black"] == player else 1
        left_open.append(moves_after_first_pass(game["moves"], colour, 1 - colour))
        played_on.append(moves_after_first_pass(game["moves"], 1 - colour, colour))
    return {"opponent_moves_after_its_first_pass": {"median": float(np.median(left_open)), "mean": round(float(np.mean(left_open)), 1)},
            "its_moves_after_the_opponents_first_pass": {"median": float(np.median(played_on)), "mean": round(float(np.mean(played_on)), 1)}}


def kgs_games(folder: str, games: int, moves: int, first: int = 0) -> list[tuple[list[str], list[bool]]]:
    """Even 19x19 games of ``folder``, every move from move ``first`` on judged (both players)."""
    chosen = even_games([folder], 19, moves)[:games]
    if not chosen:
        raise StonelabError(f"{folder}: no even 19x19 game of {moves} moves or more")
    return [([move_name(p, 19) for _, p in g.moves[:moves]], [t >= first for t in range(min(moves, len(g.moves)))])
            for g in chosen]


def blunder_rate(lost_per_game: list[np.ndarray], threshold: float, resamples: int = 2000) -> dict:
    """Blunders per 100 moves over the games, with a 95% bootstrap interval over games."""
    blunders = np.array([int(np.sum(lost >= threshold)) for lost in lost_per_game])
    moves = np.array([len(lost) for lost in lost_per_game])
    rng = np.random.default_rng(0)
    picks = rng.integers(0, len(moves), size=(resamples, len(moves)))
    rates = 100 * blunders[picks].sum(axis=1) / np.maximum(moves[picks].sum(axis=1), 1)
    every = np.concatenate(lost_per_game) if lost_per_game else np.zeros(0)
    return {"games": len(moves), "moves": int(moves.sum()), "blunders": int(blunders.sum()),
            "per_100_moves": round(100 * blunders.sum() / max(moves.sum(), 1), 2),
            "interval_95": [round(float(np.percentile(rates, 2.5)), 2), round(float(np.percentile(rates, 97.5)), 2)],
            "median_points_lost": round(float(np.median(every)), 2) if len(every) else None,
            "mean_points_lost": round(float(np.mean(every)), 2) if len(every) else None,
            "blunders_per_game": blunders.tolist(), "moves_per_game": moves.tolist()}


def judged(engine: AnalysisEngine, games, komi: float) -> list[np.ndarray]:
    """Points lost by each judged move of each game."""
    lost = []
    for moves, mine in games:
        if not any(mine):
            lost.append(np.zeros(0))
            continue
        first = mine.index(True)  # the turns before it are not analysed
        leads = turn_leads(engine, moves, komi, first)
        colours = [1 if t % 2 == 0 else -1 for t in range(first, len(moves))]
        lost.append(katrain_points_lost(leads, colours)[np.array(mine[first:], dtype=bool)])
    return lost


def passes_judged(games, lost: list[np.ndarray], threshold: float) -> tuple[int, int]:
    """How many of the judged moves were passes, and how many of those were blunders."""
    passes = blunders = 0
    for (moves, mine), points in zip(games, lost, strict=True):
        chosen = [m.lower() == "pass" for m, judged_move in zip(moves, mine, strict=True) if judged_move]
        passes += sum(chosen)
        blunders += int(np.sum(points[np.array(chosen, dtype=bool)] >= threshold)) if chosen else 0
    return passes, blunders


def paired_ratio(base: list[np.ndarray], other: list[np.ndarray], threshold: float, resamples: int = 2000) -> dict:
    """``other``'s blunder rate over ``base``'s, games paired by opening, with a 95% interval from
    resampling the openings (a resample where ``base`` has no blunder is left out)."""
    counts = np.array([[np.sum(g >= threshold) for g in arm] for arm in (base, other)], dtype=np.float64)
    moves = np.array([[len(g) for g in arm] for arm in (base, other)], dtype=np.float64)
    picks = np.random.default_rng(0).integers(0, counts.shape[1], size=(resamples, counts.shape[1]))
    rate = counts[:, picks].sum(axis=2) / np.maximum(moves[:, picks].sum(axis=2), 1)
    kept = rate[0] > 0
    whole = counts.sum(axis=1) / np.maximum(moves.sum(axis=1), 1)
    return {"ratio": round(float(whole[1] / whole[0]), 2) if whole[0] > 0 else None,
            "interval_95": [round(float(np.percentile(rate[1, kept] / rate[0, kept], q)), 2) for q in (2.5, 97.5)]
            if kept.any() else None, "resamples_kept": int(kept.sum())}


def same_openings(folders: list[Path]) -> None:
    """Refuses ``--paired`` arms whose games do not start from the same openings and colours."""
    settings, base = _journal(folders[0])
    opening = int(settings.get("opening_moves") or 0)
    for folder in folders[1:]:
        games = _journal(folder)[1]
        if len(games) != len(base) or any(a["black"] != b["black"] or a["moves"][:opening] != b["moves"][:opening]
                                          for a, b in zip(base, games, strict=True)):
            raise StonelabError(f"--paired: {folder} does not play {folders[0]}'s games from the same openings "
                                f"and colours ({len(games)} and {len(base)} games)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("matches", nargs="*", type=Path, help="task=gtp_match run folders")
    parser.add_argument("--player", default="stonelab", help="the player judged (its name in games.jsonl)")
    parser.add_argument("--kgs-dir", help="judge both players of this folder's even 19x19 games instead")
    parser.add_argument("--games", type=int, default=20, help="with --kgs-dir: how many games")
    parser.add_argument("--judge", default="models/go19_resnet3x64_kgs_aux.ckpt")
    parser.add_argument("--visits", type=int, default=50)
    parser.add_argument("--moves", type=int, default=200, help="the first this many moves of each game")
    parser.add_argument("--from-move", type=int, default=0, help="judge moves from this one on (150: the endgame)")
    parser.add_argument("--threshold", type=float, default=10.0, help="points lost that make a blunder")
    parser.add_argument("--paired", action="store_true",
                        help="the folders are arms played from the same openings: compare each with the first")
    parser.add_argument("--komi", type=float, default=7.5)
    parser.add_argument("--out", type=Path, help="also write the numbers here as JSON")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    try:
        if bool(args.matches) == bool(args.kgs_dir):
            raise StonelabError("give match folders or --kgs-dir (one of the two)")
        if args.paired:
            same_openings(args.matches)
        sources = ({str(f): match_games(f, args.player, args.moves, args.from_move) for f in args.matches}
                   if args.matches else {args.kgs_dir: kgs_games(args.kgs_dir, args.games, args.moves, args.from_move)})
        engine = AnalysisEngine(go_model_from_checkpoint(args.judge), {"leaves_per_game": 4}, max_visits=args.visits)
        results, lost = {}, {}
        for name, games in sources.items():
            lost[name] = judged(engine, games, args.komi)
            results[name] = r = blunder_rate(lost[name], args.threshold)
            r["passes_judged"], r["pass_blunders"] = passes_judged(games, lost[name], args.threshold)
            print(f"{name}: {r['games']} games, {r['moves']} moves judged, {r['blunders']} blunders "
                  f"(>= {args.threshold:g} points): {r['per_100_moves']:.2f} per 100 moves "
                  f"[{r['interval_95'][0]:.2f}, {r['interval_95'][1]:.2f}], {r['pass_blunders']} of them passes "
                  f"(of {r['passes_judged']} passes judged); points lost per move: median {r['median_points_lost']}, "
                  f"mean {r['mean_points_lost']}")
            if args.matches:
                r["passes"] = timing = pass_timing(Path(name), args.player)
                opened, went_on = timing["opponent_moves_after_its_first_pass"], timing["its_moves_after_the_opponents_first_pass"]
                print(f"{name}: passes: the opponent's moves after {args.player}'s first pass: median {opened['median']:g} "
                      f"(mean {opened['mean']:g}); {args.player}'s moves after the opponent's first pass: "
                      f"median {went_on['median']:g} (mean {went_on['mean']:g})")
        if args.paired:
            base = str(args.matches[0])
            for name in list(lost)[1:]:
                results[name]["ratio_to_first"] = r = paired_ratio(lost[base], lost[name], args.threshold)
                print(f"{name}: blunder rate / {base}'s: {r['ratio']} (95%: {r['interval_95']}, paired by opening)")
        if args.out:
            args.out.write_text(json.dumps({"judge": args.judge, "visits": args.visits, "moves": args.moves,
                                            "from_move": args.from_move, "threshold": args.threshold,
                                            "results": results}, indent=1) + "\n")
    except (StonelabError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
