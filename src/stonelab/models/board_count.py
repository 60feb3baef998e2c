"""The count of a nearly finished Go board, mixed into a net's score and win rate.

    count = settled_count(state, ownership)          # Black's margin, and how settled the board is
    lead, winrate, lcb = with_count(lead, winrate, lcb, count, state.to_play)

A score head reads the board in one pass and misses whole groups: on the last positions of
120 counted KGS games the shipped aux nets' scoreLead named the winner in 77 and 86 of them,
where counting the board (these playouts' dead stones off, then area) names it in 110 (a
one-off snippet; docs/analysis_engine.md has the shipped commands).
Late in a game most of the board is settled and can simply be counted; what is left open
is the net's to judge. So:

1. the dead stones are judged by light random playouts, half with each colour moving first
   (`stonelab.games.go.ownership.scoring_ownership`, whole chains at a time, as the GTP
   engine's ``final_score``), and taken off;
2. the cleaned board is counted by Tromp-Taylor area: stones, and empty regions that reach
   one colour only, are settled;
3. every other point is the net's ownership (the playouts' mean for a net without one);
4. the margin (komi off) is mixed into the net's or the search's numbers with a weight that
   grows with the share of the position's empty points that step 2 settled: nothing below
   `GATE_FROM` (in the opening and middle game the share is ~0: at move 150 of the KGS
   games the median is 0.02), up to `GATE_MAX` from `GATE_TO` on; and only on a board
   whose stones cover more than `STONES_FROM` of its points (a lone stone's region is the
   whole board, which Tromp-Taylor gives to it; the KGS games cover over 0.35 from move
   150 on).

The gate (its three numbers) was chosen on the LAST 120 counted even 19x19 games of
../shared/data/kgs with models/go19_resnet6x64_kgs_piece4_aux.ckpt and is reported on the
first 120 (docs/analysis_engine.md), the split `stonelab.models.score_offset` uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stonelab.games.go.ownership import dead_by_mean, scoring_ownership
from stonelab.games.go.rules import EMPTY, GoState, tromp_taylor_owner

COUNT_PLAYOUTS = 32  # per colour moving first: the dead-stone judgement the gate was fitted with
GATE_FROM = 0.2  # settled share of the empty points where the count starts to weigh
GATE_TO = 0.75  # ... and where its weight is full
GATE_MAX = 0.75  # the count's full weight: the net still reads what the count cannot (a group in atari)
STONES_FROM, STONES_TO = 0.15, 0.3  # the share of the points with stones where the count may weigh, fully
WINRATE_SCALE = 10.0  # points: a count's win rate is sigmoid(margin / this), the spread of its error


@dataclass(frozen=True)
class BoardCount:
    """Black's area margin (komi off) of a position, settled points counted and the rest
    judged by a net; ``settled``: the share of its empty points the count settled;
    ``stones``: the share of its points with a stone on them."""

    margin: float
    settled: float
    stones: float = 1.0

    @property
    def weight(self) -> float:
        """The count's weight in a blended score: 0 up to `GATE_FROM` settled, `GATE_MAX` from
        `GATE_TO` on, times 0 up to `STONES_FROM` covered, 1 from `STONES_TO` on."""
        return (GATE_MAX * float(np.clip((self.settled - GATE_FROM) / (GATE_TO - GATE_FROM), 0.0, 1.0))
                * float(np.clip((self.stones - STONES_FROM) / (STONES_TO - STONES_FROM), 0.0, 1.0)))


def settled_count(state: GoState, ownership: np.ndarray | None = None, playouts: int = COUNT_PLAYOUTS,
                  seed: int = 0) -> BoardCount:
    """The `BoardCount` of ``state`` (see the module doc). ``ownership``: a net's, Black's view
    (+1 black), for the points the count leaves open; None: the playouts' mean there."""
    mean = scoring_ownership(state, playouts, seed)
    board = state.board
    cleaned = board.copy()
    cleaned[dead_by_mean(state, mean)] = EMPTY
    owner = np.zeros(board.shape[0], dtype=np.int8)
    tromp_taylor_owner(cleaned, state.arrays.neighbours, owner)
    settled = owner != 0
    open_judged = mean if ownership is None else np.asarray(ownership, dtype=np.float64)
    margin = float(owner.sum(dtype=np.int64)) + float(open_judged[~settled].sum()) - float(state.rules.komi)
    empty = board == EMPTY
    return BoardCount(margin, float((empty & settled).sum()) / max(int(empty.sum()), 1), 1.0 - float(empty.mean()))


def late_count(state: GoState, ownership: np.ndarray | None = None) -> BoardCount | None:
    """`settled_count` where it can weigh; None (no playouts played) on a board covered less
    than `STONES_FROM`, where its weight is 0 whatever it counts: the engines' first ~50
    moves of a 19x19 game are spared its ~0.05-0.08 s."""
    if np.count_nonzero(state.board) < STONES_FROM * state.board.size:
        return None
    return settled_count(state, ownership)


def check_count_settled(count_settled) -> None:
    """Refuse, by name, an ``analysis.count_settled`` that is not true or false."""
    if not isinstance(count_settled, bool):
        from stonelab.errors import ConfigError

        raise ConfigError(f"analysis.count_settled={count_settled!r}: give true or false")


def with_count(lead: float, winrate: float, lcb: float | None, count: BoardCount | None,
               to_play: int) -> tuple[float, float, float | None]:
    """(score lead, win rate, its lower bound) of the side to move ``to_play``: ``lead``,
    ``winrate`` and ``lcb`` (a search's or the net's, that side's view; ``lcb`` None: none)
    mixed with ``count`` at its weight (None: unchanged, `late_count`); the count's win rate
    is sigmoid(margin / `WINRATE_SCALE`)."""
    weight = 0.0 if count is None else count.weight
    if weight == 0.0:
        return lead, winrate, lcb
    margin = to_play * count.margin
    won = 1.0 / (1.0 + np.exp(-margin / WINRATE_SCALE))

    def mix(ours: float, theirs: float) -> float:
        return (1 - weight) * ours + weight * theirs

    return mix(lead, margin), mix(winrate, won), None if lcb is None else mix(lcb, won)
