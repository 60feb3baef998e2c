"""How true the Go net's score, win rate and ownership are on counted games it never saw.

    python scripts/score_calibration.py [--ckpt models/go19_resnet3x64_kgs_aux.ckpt]
        [--games-dir ../shared/data/kgs] [--games 100] [--every 5] [--gnugo /usr/games/gnugo]
        [--board-size 19] [--visits 0] [--rollouts 0] [--count-settled] [--skip-games 0]

Reads the counted (``RE[B+12.5]``, not resigned or timed out) even ``--board-size`` games of
``--games-dir`` (the 2015 KGS games in ../shared/data/kgs were never trained on), replays
each, and asks the net (no search: the ``rawLead``/``rawWinrate`` every analysis answer
carries) for its score and win rate every ``--every`` moves; with ``--visits N`` the score
and win rate are instead the search's after N visits (``scoreLead``/``winrate``, what a GUI
shows), from the KataGo-style JSON engine (ownership stays the net's); with ``--rollouts N`` that
engine also mixes N policy rollouts into the root's numbers (its ``analysis.rollouts``; with
``--visits 0`` the engine runs one visit: the net and the rollouts); with ``--count-settled`` it
mixes in the count of the settled board (its ``analysis.count_settled``, on by default in the
engines, off in this script unless asked). ``--from-move M``
measures only positions from move M on (and the last), ``--skip-games K`` starts at the
K+1-th counted game. Per move-number bucket it
prints how often the score and the win rate name the real winner and the score's mean
absolute error against the recorded margin, in Black's view.

The ownership check needs a dead-stone judge we did not write: with GNU Go (``--gnugo``), each
game's final position is scored by GNU Go's ``final_status_list dead`` and Tromp-Taylor
regions (the reference owner of each point; dame and seki points are left out), and the
net's ownership of that final position is compared point by point.

The recorded margins are KGS's (Japanese counting for most games); the net counts area.
The two differ by a point or two (prisoners against stones, dame), well below the errors
measured here. docs/analysis_engine.md has the numbers.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field

import numpy as np
import torch

from stonelab.data.sgf import counted_even_games, result_score
from stonelab.errors import StonelabError
from stonelab.games.go.rules import EMPTY, GoState, tromp_taylor_owner
from stonelab.models.inference import MovePredictor
from stonelab.models.score_offset import positions
from stonelab.protocols.gtp import move_name

BUCKETS = (0, 50, 100, 150, 200, 250)  # move-number buckets: [0, 50), [50, 100), ..., [250, end]


@dataclass
class Bucket:
    """Sums over the positions of one move-number bucket."""

    positions: int = 0
    score_right: int = 0
    winrate_right: int = 0
    abs_error: float = 0.0
    owned_right: int = 0
    owned_abs_error: float = 0.0
    errors: list = field(default_factory=list)

    def add(self, lead: float, winrate: float, owned: float, margin: float) -> None:
        self.positions += 1
        self.score_right += np.nan if np.isnan(lead) else int(np.sign(lead) == np.sign(margin))
        self.winrate_right += int((winrate > 0.5) == (margin > 0))
        self.abs_error += abs(lead - margin)
        self.errors.append(lead - margin)
        self.owned_right += np.nan if np.isnan(owned) else int(np.sign(owned) == np.sign(margin))
        self.owned_abs_error += abs(owned - margin)


def black_view(predictor: MovePredictor, states: list[GoState]) -> tuple[np.ndarray, np.ndarray, list]:
    """The net's score lead, win rate and ownership (in [-1, 1]) of each state, Black's view."""
    leads, rates, owners = [], [], []
    for est, state in zip(predictor.estimates(states), states, strict=True):
        sign = 1.0 if state.to_play == 1 else -1.0
        leads.append(np.nan if est.score_lead is None else sign * est.score_lead)  # a value-only net: no score
        rates.append(est.winrate if sign > 0 else 1.0 - est.winrate)
        owners.append(None if est.ownership is None else sign * est.ownership)
    return np.array(leads), np.array(rates), owners


def search_view(engine, game, states: list[GoState]) -> tuple[np.ndarray, np.ndarray]:
    """The analysis engine's scoreLead and win rate (its search's) of each of ``states``
    (positions of ``game``), Black's view: one query per game."""
    from stonelab.protocols.analysis import turn_roots

    moves = [("B" if colour == 1 else "W", move_name(point, game.board_size)) for colour, point in game.moves]
    roots = turn_roots(engine, moves, game.komi, n=game.board_size, turns=[s.move_number for s in states])
    return np.array([r["scoreLead"] for r in roots]), np.array([r["winrate"] for r in roots])


def set_up(state: GoState, gnugo) -> None:
    """GNU Go's board made ``state``'s stones (placed one by one: a subset of a legal position's
    stones never captures), with its komi."""
    gnugo.clear_board()
    gnugo.komi(float(state.rules.komi))
    board = state.board
    for point in np.flatnonzero(board != EMPTY):
        gnugo.send(f"play {'b' if board[point] == 1 else 'w'} {move_name(int(point), state.n)}")


def reference_owner(state: GoState, gnugo) -> np.ndarray:
    """+1 black, -1 white, 0 dame or seki of each point of ``state``: GNU Go's dead stones
    taken off, then Tromp-Taylor regions."""
    set_up(state, gnugo)
    board = state.board
    cleaned = board.copy()
    cleaned[gnugo.final_status_list("dead")] = EMPTY
    seki = gnugo.final_status_list("seki")
    owner = np.zeros_like(cleaned)
    tromp_taylor_owner(cleaned, state.arrays.neighbours, owner)
    owner[seki] = 0
    return owner


def gnugo_estimate(state: GoState, gnugo) -> float:
    """GNU Go's ``estimate_score`` of ``state`` (its influence-based count), Black's margin."""
    set_up(state, gnugo)
    answer = gnugo.send("estimate_score").split()[0]  # "W+75.8 (upper bound: ..., lower: ...)"
    if answer == "0":
        return 0.0
    sign = 1.0 if answer[0].upper() == "B" else -1.0
    return sign * float(answer[2:])


def engine_words(args) -> str:
    searched = f"the search after {args.visits} visits" if args.visits else "the net (one visit)"
    mixed = [words for flag, words in ((args.count_settled, "the count of the settled board"),
                                       (args.rollouts, f"{args.rollouts} policy rollouts")) if flag]
    return searched + (" mixed with " + " and ".join(mixed) if mixed else "")


def bucket_of(move: int) -> int:
    return max(b for b in BUCKETS if move >= b)


def report(buckets: dict[int, Bucket]) -> None:
    print("moves      positions  score names winner  win rate names winner  mean |error|  median error"
          "  ownership sum names winner  its mean |error|")
    total = Bucket()
    for start in BUCKETS:
        b = buckets.get(start)
        if not b or not b.positions:
            continue
        label = f"{start}-{start + 50}" if start < BUCKETS[-1] else f"{start}+"
        print(f"{label:<10} {b.positions:>9}  {b.score_right / b.positions:>18.3f}  {b.winrate_right / b.positions:>21.3f}"
              f"  {b.abs_error / b.positions:>12.1f}  {np.median(b.errors):>12.1f}"
              f"  {b.owned_right / b.positions:>27.3f}  {b.owned_abs_error / b.positions:>16.1f}")
        if start >= 150:
            for name in ("positions", "score_right", "winrate_right", "abs_error", "owned_right", "owned_abs_error"):
                setattr(total, name, getattr(total, name) + getattr(b, name))
    if total.positions:
        print(f"{'150+':<10} {total.positions:>9}  {total.score_right / total.positions:>18.3f}"
              f"  {total.winrate_right / total.positions:>21.3f}  {total.abs_error / total.positions:>12.1f}"
              f"  {'':>12}  {total.owned_right / total.positions:>27.3f}  {total.owned_abs_error / total.positions:>16.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ckpt", default="models/go19_resnet3x64_kgs_aux.ckpt")
    parser.add_argument("--games-dir", default="../shared/data/kgs")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--gnugo", default=None, help="GNU Go's executable: also check ownership at the end")
    parser.add_argument("--board-size", type=int, default=19,
                        help="the games' board; a 19x19 net is resized to it (MovePredictor.for_board)")
    parser.add_argument("--gnugo-estimate-from", type=int, default=None, metavar="MOVE",
                        help="with --gnugo: also GNU Go's estimate_score of each position from this move on, "
                             "beside the net's (a yardstick from an evaluator we did not train)")
    parser.add_argument("--visits", type=int, default=0,
                        help="score and win rate from the analysis engine's search after this many visits "
                             "(0: the net alone)")
    parser.add_argument("--rollouts", type=int, default=0,
                        help="the analysis engine's analysis.rollouts: policy rollouts mixed into the root's numbers")
    parser.add_argument("--count-settled", action="store_true",
                        help="the analysis engine's analysis.count_settled: the count of the settled board mixed "
                             "into the root's numbers late in a game")
    parser.add_argument("--skip-games", type=int, default=0, help="leave out the first K counted games")
    parser.add_argument("--from-move", type=int, default=0, help="measure positions from this move on (and the last)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for flag in ("rollouts", "skip_games", "from_move"):
        if getattr(args, flag) < 0:
            print(f"error: --{flag.replace('_', '-')} {getattr(args, flag)}: give a number >= 0", file=sys.stderr)
            return 2
    if args.gnugo_estimate_from is not None and not args.gnugo:
        print("error: --gnugo-estimate-from needs --gnugo (GNU Go's executable)", file=sys.stderr)
        return 2
    if args.visits < 0:
        print(f"error: --visits {args.visits}: give 0 (the net alone) or a positive number of visits", file=sys.stderr)
        return 2
    try:
        predictor = MovePredictor.from_checkpoint(args.ckpt).for_board(args.board_size)
        engine = None
        if args.visits or args.rollouts or args.count_settled:  # the engine play.py protocol=analysis runs, on the same net
            from stonelab.models.alphazero_go import go_model_from_checkpoint
            from stonelab.protocols.analysis import analysis_engine

            engine = analysis_engine(go_model_from_checkpoint(args.ckpt), {"leaves_per_game": 4},
                                     max_visits=max(args.visits, 1), rollouts=args.rollouts,
                                     count_settled=args.count_settled)
        games = counted_even_games([args.games_dir], args.board_size)[args.skip_games:args.skip_games + args.games]
        if not games:
            raise StonelabError(f"{args.games_dir}: no counted even {args.board_size}x{args.board_size} game")
        gnugo = None
        if args.gnugo:
            from stonelab.protocols.gtp_client import GTPClient

            gnugo = GTPClient([args.gnugo, "--mode", "gtp", "--chinese-rules"], label="GNU Go")
            gnugo.boardsize(args.board_size)
    except (StonelabError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    buckets: dict[int, Bucket] = {}
    final, judged = Bucket(), Bucket()  # the net, and GNU Go's count, on each game's last position
    estimated, beside = Bucket(), Bucket()  # GNU Go's estimate and the net, on the same positions
    owner_right = owner_points = 0
    for game in games:
        margin = result_score(game.result)
        states = [s for s in positions(game, args.every)
                  if s.move_number >= args.from_move or s.move_number == len(game.moves)]
        leads, rates, owners = black_view(predictor, states)
        if engine is not None:
            leads, rates = search_view(engine, game, states)
        for state, lead, rate, owned in zip(states, leads, rates, owners, strict=True):
            area = np.nan if owned is None else float(owned.sum()) - game.komi
            buckets.setdefault(bucket_of(state.move_number), Bucket()).add(lead, rate, area, margin)
            if gnugo is not None and args.gnugo_estimate_from is not None and state.move_number >= args.gnugo_estimate_from:
                guess = gnugo_estimate(state, gnugo)
                estimated.add(guess, 0.5 + 0.5 * np.sign(guess), guess, margin)
                beside.add(lead, rate, area, margin)
        final.add(leads[-1], rates[-1], np.nan if owners[-1] is None else float(owners[-1].sum()) - game.komi, margin)
        if gnugo is not None and owners[-1] is not None:
            reference = reference_owner(states[-1], gnugo)
            count = float(reference.sum()) - game.komi
            judged.add(count, 0.5 + 0.5 * np.sign(count), count, margin)
            decided = reference != 0
            owner_right += int(np.sum(np.sign(owners[-1][decided]) == reference[decided]))
            owner_points += int(decided.sum())
    print(f"{len(games)} counted {args.board_size}x{args.board_size} games of {args.games_dir}, {args.ckpt}, "
          f"{engine_words(args) if engine else 'the net without search'}, Black's view")
    if np.isnan(final.abs_error):
        print("this net has a value head only: its score and ownership columns are nan")
    report(buckets)
    print(f"last position: the score names the winner in {final.score_right}/{final.positions} games, "
          f"mean |error| {final.abs_error / final.positions:.1f}; its win rate {final.winrate_right}/{final.positions}; "
          f"its ownership sum {final.owned_right}/{final.positions}, mean |error| {final.owned_abs_error / final.positions:.1f}")
    if judged.positions:
        print(f"last position counted with GNU Go's dead stones: the winner in {judged.score_right}/{judged.positions}"
              f" games, mean |error| {judged.abs_error / judged.positions:.1f} (the recorded margins' own noise)")
    if estimated.positions:
        n = estimated.positions
        print(f"from move {args.gnugo_estimate_from} on, {n} positions: GNU Go's estimate_score names the winner in "
              f"{estimated.score_right / n:.3f}, mean |error| {estimated.abs_error / n:.1f}; the net's score on the "
              f"same positions {beside.score_right / n:.3f}, {beside.abs_error / n:.1f}")
    if owner_points:
        print(f"ownership at the end agrees with GNU Go's final status on {owner_right / owner_points:.3f} "
              f"of {owner_points} decided points")
    if gnugo is not None:
        gnugo.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
