"""The Gomoku tactics suite: positions whose right answers follow from the rules."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.games.gomoku.rules import BLACK, WHITE, GomokuRules, board_from_rows
from stonelab.games.gomoku.tactics import KINDS, classify, generate

RULES = GomokuRules(8, 5)


def points(*cells):
    return tuple(sorted(r * 8 + c for r, c in cells))


@pytest.mark.parametrize("rows,to_play,kind,answers", [
    # black completes the row on either end
    (["........", "........", "..XXXX..", "........", "..O.O...", "...O.O..", "........", "........"],
     BLACK, "win_in_1", points((2, 1), (2, 6))),
    # white must stop black's four on its one open end
    (["........", "........", "OXXXX...", "........", "..O.O...", "........", "........", "........"],
     WHITE, "block_four", points((2, 5))),
    # black makes an open four: the column point, or the point that extends the three upwards
    (["........", "........", "...X....", "...X....", "...X....", "........", ".O..O...", "O.....O."],
     BLACK, "double_threat", points((1, 3), (5, 3))),
])
def test_hand_checked_positions(rows, to_play, kind, answers):
    assert classify(RULES, board_from_rows(rows), to_play) == (kind, answers)


def test_an_open_three_must_be_stopped_at_a_point_that_kills_it():
    # white to move; black's open three in row 3 (cols 2-4) with the whole row empty around it
    rows = ["........", "........", "........", "..XXX...", "........", "...O....", "........", "O......."]
    kind, answers = classify(RULES, board_from_rows(rows), WHITE)
    assert kind == "stop_three"
    assert {3 * 8 + 1, 3 * 8 + 5} <= set(answers)  # the two adjacent points always save
    assert 0 * 8 + 0 not in answers and len(answers) < 64 - 6


def test_a_lost_block_is_no_tactic():
    # black has an open four: blocking one end cannot save white, so the position says nothing
    rows = ["........", "........", ".XXXX...", "........", "..O.O...", "........", "O.......", "........"]
    assert classify(RULES, board_from_rows(rows), WHITE) is None


def test_generated_suite_is_seeded_and_every_kind_has_a_strict_answer_set():
    a = generate(RULES, per_kind=3, seed=0)
    b = generate(RULES, per_kind=3, seed=0)
    assert [t.kind for t in a] == [k for k in KINDS for _ in range(3)]
    assert all(np.array_equal(x.board, y.board) and x.answers == y.answers for x, y in zip(a, b, strict=True))
    for t in a:
        legal = int((t.board == 0).sum())
        assert 0 < len(t.answers) < legal and all(t.board[p] == 0 for p in t.answers)
        assert classify(RULES, t.board, t.to_play) == (t.kind, t.answers)
