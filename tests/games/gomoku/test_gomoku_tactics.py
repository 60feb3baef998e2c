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


def _forces(board, n, k, colour, plies):
    """Reference, straight from the definition: ``colour`` to move makes k in a row within
    ``plies`` of its own plies-count whatever the opponent replies, every point considered."""
    from stonelab.games.gomoku.rules import would_win

    empty = [a for a in range(n * n) if board[a] == 0]
    if any(would_win(board, n, k, a, colour) for a in empty):
        return True
    if plies < 3:
        return False
    for a in empty:
        board[a] = colour
        replies = [r for r in empty if r != a]
        holds = bool(replies) and not any(would_win(board, n, k, r, -colour) for r in replies)
        for r in replies if holds else ():
            board[r] = -colour
            holds = _forces(board, n, k, colour, plies - 2)
            board[r] = 0
            if not holds:
                break
        board[a] = 0
        if holds:
            return True
    return False


def _random_game_position(rng, n, k, stones):
    """A position of a random game after ``stones`` moves, or where a move would have ended it."""
    from stonelab.games.gomoku.rules import would_win

    board = np.zeros(n * n, dtype=np.int8)
    for i, a in enumerate(rng.permutation(n * n)[:stones]):
        colour = BLACK if i % 2 == 0 else WHITE
        if would_win(board, n, k, a, colour):
            break
        board[a] = colour
    return board


def test_the_pruned_3_ply_proof_agrees_with_the_definition():
    """wins_within_3 skips replies by facts of the rules (tactics.py); on positions of random
    games it answers as the full-width search of the definition does."""
    from stonelab.games.gomoku.tactics import wins_within_3

    n, k = 6, 4
    rng = np.random.default_rng(7)
    positives = 0
    for _ in range(60):
        board = _random_game_position(rng, n, k, int(rng.integers(4, n * n - 3)))
        for colour in (BLACK, WHITE):
            expected = _forces(board.copy(), n, k, colour, 3)
            assert wins_within_3(board.copy(), n, k, colour) == expected
            positives += expected
    assert positives >= 5  # the positions include forced wins, not only their absence


@pytest.mark.parametrize("n,k", [(6, 4), (8, 5)])
def test_the_pruned_proofs_agree_with_the_full_width_search_on_the_suites(n, k):
    """Every proof the suite uses (3 and 5 plies, the safe replies), for both colours, on the
    positions of the generated suite (all five kinds, four-threes included), equals the
    full-width search that looks at every reply (tests/games/gomoku/reference_tactics.py)."""
    import reference_tactics as full

    from stonelab.games.gomoku import tactics as pruned

    out, expected = np.empty(n * n, dtype=np.int64), np.empty(n * n, dtype=np.int64)
    for t in generate(GomokuRules(n, k), per_kind=20, seed=3):
        for colour in (BLACK, WHITE):
            for plies in (3, 5):
                got = out[:pruned.forcing_moves(t.board.copy(), n, k, colour, plies, out)].tolist()
                assert got == expected[:full.forcing_moves(t.board.copy(), n, k, colour, plies, expected)].tolist()
            got = out[:pruned.safe_moves(t.board.copy(), n, k, colour, out)].tolist()
            assert got == expected[:full.safe_moves(t.board.copy(), n, k, colour, expected)].tolist()


def test_the_15x15_suite_generates_every_kind():
    """At 225 points the proof search still finishes (it did not, full width, in 15 minutes)."""
    suite = generate(GomokuRules(15, 5), per_kind=3, seed=0)
    assert sorted({t.kind for t in suite}) == sorted(KINDS) and len(suite) == 15


def test_seven_ply_proofs_agree_with_the_full_width_search_late_in_random_games():
    """`wins_within(..., 7)` skips replies by the same facts as 3 and 5; full width at 7 plies
    is affordable only with few empty points, so the positions are late ones."""
    import reference_tactics as full

    from stonelab.games.gomoku.tactics import wins_within

    n, k = 5, 4
    rng = np.random.default_rng(11)
    positives = negatives = 0
    for _ in range(120):
        board = _random_game_position(rng, n, k, int(rng.integers(11, 17)))
        for colour in (BLACK, WHITE):
            expected = full.wins_within_7(board.copy(), n, k, colour)
            assert wins_within(board.copy(), n, k, colour, 7) == expected
            positives += expected and not full.wins_within_5(board.copy(), n, k, colour)
            negatives += not expected
    assert positives >= 2 and negatives >= 5  # wins that need all 7 plies, and positions without


@pytest.mark.parametrize("plies", [3, 5])
def test_proven_moves_are_the_wins_else_the_moves_that_survive_the_proof(plies):
    import reference_tactics as full

    from stonelab.games.gomoku.tactics import proven_moves

    n, k = 6, 4
    rng = np.random.default_rng(plies)
    kinds = set()
    for _ in range(60):
        board = _random_game_position(rng, n, k, int(rng.integers(4, 20)))
        colour = BLACK if np.count_nonzero(board) % 2 == 0 else WHITE
        out = np.zeros(n * n, dtype=np.bool_)
        count, wins = proven_moves(board.copy(), n, k, colour, plies, out)
        moves = np.empty(n * n, dtype=np.int64)
        winners = moves[:full.forcing_moves(board.copy(), n, k, colour, plies, moves)].tolist()
        empty = np.flatnonzero(board == 0).tolist()
        proofs = {1: full._has_win, 3: full.wins_within_3, 5: full.wins_within_5}
        safe = []
        for depth in range(plies, 0, -2):  # the loss put off as long as the proof sees
            for a in empty:
                board[a] = colour
                if not proofs[depth](board, n, k, -colour):
                    safe.append(a)
                board[a] = 0
            if safe:
                break
        expected = winners or safe or empty
        assert wins == bool(winners) and np.flatnonzero(out).tolist() == expected and count == len(expected)
        kinds.add("win" if winners else ("all" if len(expected) == len(empty) else "safe"))
    assert kinds == {"win", "safe", "all"}


def test_when_every_move_loses_the_proof_keeps_the_moves_that_lose_latest():
    from stonelab.games.gomoku.tactics import proven_moves, wins_within

    # a stop_three position where every move loses within 5 plies: the proof keeps the moves
    # that survive 3 plies, which are the suite's answers
    for t in generate(RULES_6, per_kind=12, seed=5):
        if t.kind != "stop_three":
            continue
        out = np.zeros(36, dtype=np.bool_)
        count, wins = proven_moves(t.board.copy(), 6, 4, t.to_play, 5, out)
        if all(_loses_within(t.board, t.to_play, a, 5) for a in np.flatnonzero(t.board == 0)):
            assert not wins and tuple(np.flatnonzero(out)) == t.answers and count == len(t.answers)
            assert wins_within(t.board.copy(), 6, 4, -t.to_play, 5)
            return
    pytest.fail("no stop_three position of seed 5 loses within 5 plies whatever the mover plays")


RULES_6 = GomokuRules(6, 4)


def _loses_within(board, colour, a, plies):
    from stonelab.games.gomoku.tactics import wins_within

    board = board.copy()
    board[a] = colour
    return wins_within(board, 6, 4, -colour, plies)
