"""The Go tactics suite: positions whose right answers the rules decide."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.games.go.ownership import diagonal_table
from stonelab.games.go.rules import EMPTY, GoRules, state_from_rows
from stonelab.games.go.rules import point as pt
from stonelab.games.go.tactics import BIG_CHAIN, KINDS, classify, describe, generate

RULES = GoRules(9)
DIAG = diagonal_table(9)


def test_a_big_chain_in_atari_is_captured_on_its_last_liberty():
    rows = [".OOOX....", "XXXX.....", *["........."] * 7]  # white's B9-D9 touch only A9
    kind, answers = classify(state_from_rows(rows), DIAG, late=40)
    assert kind == "capture" and answers == (pt(9, 0, 0),)


# Black's E7-E5 column is in atari inside white's stones; its last liberty E4 opens downwards.
ESCAPE = [".........", "....O....", "...OXO...", "...OXO...", "...OXO...", *["........."] * 4]


def test_a_big_chain_in_atari_escapes_by_extending_into_the_open():
    kind, answers = classify(state_from_rows(ESCAPE), DIAG, late=40)
    assert kind == "escape" and answers == (pt(9, 5, 4),)
    closed = ESCAPE[:5] + ["...O.O...", "....O....", *["........."] * 2]  # E4 now leads nowhere
    assert classify(state_from_rows(closed), DIAG, late=40) is None


def test_generated_suite_is_seeded_and_every_answer_is_right_by_the_rules():
    suite = generate(RULES, per_kind=6, seed=3)
    again = generate(RULES, per_kind=6, seed=3)
    assert [(t.kind, t.answers) for t in suite] == [(t.kind, t.answers) for t in again]
    assert {t.kind for t in suite} == set(KINDS) and len(suite) == 6 * len(KINDS)
    for t in suite:
        legal = np.flatnonzero(t.state.legal_mask())
        assert set(t.answers) < set(legal.tolist()), describe(t)  # a strict subset: a random move can miss
        assert RULES.pass_move not in t.answers, describe(t)
        if t.kind == "capture":
            for move in legal[:-1]:
                after = t.state.copy().play(int(move))
                taken = int(((t.state.board == -t.state.to_play) & (after.board == EMPTY)).sum())
                assert (taken >= BIG_CHAIN) == (int(move) in t.answers), describe(t)
        if t.kind == "escape":
            big = [int(p) for p in np.flatnonzero(t.state.board == t.state.to_play)
                   if t.state.liberties(int(p)) == 1 and len(t.state.chain(int(p))) >= BIG_CHAIN]
            for move in legal[:-1]:
                after = t.state.copy().play(int(move))
                saved = after.board[big[0]] == t.state.to_play and after.liberties(big[0]) >= 3
                assert saved == (int(move) in t.answers), describe(t)


@pytest.mark.parametrize("kind", ["no_eye_fill", "no_pass"])
def test_quiet_kinds_refuse_only_own_eyes_and_the_pass(kind):
    suite = [t for t in generate(RULES, per_kind=4, seed=5) if t.kind == kind]
    for t in suite:
        legal = set(np.flatnonzero(t.state.legal_mask()[:-1]).tolist())
        wrong = legal - set(t.answers)
        assert (not wrong) == (kind == "no_pass"), describe(t)
        for p in wrong:  # the eyes: every neighbour is the mover's
            nbrs = [q for q in t.state.arrays.neighbours[p] if q >= 0]
            assert all(t.state.board[q] == t.state.to_play for q in nbrs), describe(t)
