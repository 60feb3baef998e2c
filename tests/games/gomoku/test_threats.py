"""Victory by continuous fours and by continuous threats: the numba searches against recursive
searches written from the definitions, and their use in the candidate set and at the root."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.games.gomoku.candidates import (
    PruningConfig,
    PruningConfigError,
    candidates,
    root_vcf_moves,
    root_vct_moves,
)
from stonelab.games.gomoku.rules import BLACK, WHITE, GomokuRules, board_from_rows, would_win
from stonelab.games.gomoku.tactics import proven_moves
from stonelab.games.gomoku.threats import (
    NOT_FOUND,
    threat_points,
    vcf,
    vcf_defences,
    vcf_moves,
    vct,
    vct_defences,
    vct_moves,
)

BIG = 1_000_000


def _wins(board, n, k, colour):
    return [a for a in range(n * n) if board[a] == 0 and would_win(board, n, k, a, colour)]


def vcf_reference(board, n, k, colour, fours):
    """Whether ``colour`` (to move) wins by at most ``fours`` fours, each answered by its fill."""
    if _wins(board, n, k, colour):
        return True
    threats = _wins(board, n, k, -colour)
    if len(threats) >= 2:
        return False
    return any(_four_wins(board, n, k, colour, a, fours) for a in threats or
               [a for a in range(n * n) if board[a] == 0])


def _four_wins(board, n, k, colour, a, fours):
    """Whether ``colour`` playing ``a`` leaves two winning points, or one whose fill leaves it
    a VCF of ``fours - 1`` fours."""
    board[a] = colour
    mine = _wins(board, n, k, colour)
    won = len(mine) >= 2
    if len(mine) == 1 and fours > 1:
        board[mine[0]] = -colour
        won = vcf_reference(board, n, k, colour, fours - 1)
        board[mine[0]] = 0
    board[a] = 0
    return won


def random_positions(n, k, count, seed):
    """Positions from random games, none over yet, the player to move after them."""
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        board = np.zeros(n * n, dtype=np.int8)
        colour = BLACK
        for _ in range(int(rng.integers(4, n * n // 2))):
            a = int(rng.choice(np.flatnonzero(board == 0)))
            if would_win(board, n, k, a, colour):
                break
            board[a] = colour
            colour = -colour
        else:
            found.append((board, colour))
    return found


@pytest.mark.parametrize("n,k,fours", [(6, 4, 4), (8, 5, 3), (9, 5, 4)])
def test_vcf_agrees_with_the_definition_on_random_positions(n, k, fours):
    positions = random_positions(n, k, 150, seed=n * 10 + k)
    found = 0
    for board, colour in positions:
        before = board.copy()
        move = vcf(board, n, k, colour, fours, BIG)
        assert np.array_equal(board, before), "the search must leave the board as it found it"
        assert (move != NOT_FOUND) == vcf_reference(board, n, k, colour, fours)
        out = np.zeros(n * n, dtype=np.bool_)
        count = vcf_moves(board, n, k, colour, fours, BIG, out)
        assert np.array_equal(board, before)
        for a in range(n * n):  # every first move it lists starts a VCF, and only those
            starts = board[a] == 0 and _starts_vcf(board, n, k, colour, a, fours)
            assert out[a] == starts, (board.reshape(n, n), colour, a)
        assert count == out.sum()
        found += move != NOT_FOUND
    assert 10 <= found < len(positions)  # the sample holds both answers


def _starts_vcf(board, n, k, colour, a, fours):
    if _wins(board, n, k, colour):
        return would_win(board, n, k, a, colour)
    threats = _wins(board, n, k, -colour)
    if len(threats) >= 2 or (threats and a != threats[0]):
        return False
    return _four_wins(board, n, k, colour, a, fours)


def test_a_four_three_is_found_and_its_defences_are_the_points_that_break_it():
    # black: a column of three (rows 3-5, col 4) and two in row 2 (cols 2-3); (2,4) is an open four
    rows = ["..........", "..........", "..XX......", "....X.....", "....X.....", "....X.....",
            "..........", "..........", "..........", ".........."]
    board = board_from_rows(rows)
    n = 10
    assert vcf(board, n, 5, BLACK, 10, BIG) != NOT_FOUND
    out = np.zeros(n * n, dtype=np.bool_)
    vcf_moves(board, n, 5, BLACK, 10, BIG, out)
    assert set(np.flatnonzero(out)) == {2 * n + 4, 6 * n + 4, 7 * n + 4}
    # white's only move that leaves black no VCF: the point that is both the column's end and the row's
    assert vcf_defences(board, n, 5, WHITE, 10, BIG, out) == 1 and np.flatnonzero(out).tolist() == [2 * n + 4]


def test_no_threat_leaves_every_move_a_defence():
    board = board_from_rows(["......", "......", "..X...", "...O..", "......", "......"])
    out = np.zeros(36, dtype=np.bool_)
    assert vcf_defences(board, 6, 4, BLACK, 8, BIG, out) == 34 and out.sum() == 34


def test_a_cut_search_says_not_found_rather_than_guessing():
    # the VCF above needs three fours (a broken four, then the column, then the row)
    rows = ["..........", "..........", "..XX......", "....X.....", "....X.....", "....X.....",
            "..........", "..........", "..........", ".........."]
    board = board_from_rows(rows)
    board[2 * 10 + 4] = WHITE  # white took the open-four point: the row and the column are cut
    board[6 * 10 + 4] = WHITE
    assert vcf(board, 10, 5, BLACK, 10, BIG) == NOT_FOUND
    assert vcf(board_from_rows(rows), 10, 5, BLACK, 10, 0) != NOT_FOUND  # an open four in one move needs no budget


def test_the_candidate_set_keeps_only_vcf_moves_or_only_defences():
    rules = GomokuRules(10, 5)
    rows = ["..........", "..........", "..XX......", "....X.....", "....X.....", "....X.....",
            "..........", "..........", "..........", ".........."]
    board = board_from_rows(rows)
    config = PruningConfig(forced=True, vcf=True)
    assert set(np.flatnonzero(candidates(rules, board, BLACK, config))) == {24, 64, 74}
    assert np.flatnonzero(candidates(rules, board, WHITE, config)).tolist() == [24]
    assert candidates(rules, board, WHITE, PruningConfig(forced=True)).sum() == 95


def test_vcf_at_the_root_restricts_the_root_as_vcf_in_the_tree_would_and_leaves_the_tree_alone():
    rules = GomokuRules(10, 5)
    rows = ["..........", "..........", "..XX......", "....X.....", "....X.....", "....X.....",
            "..........", "..........", "..........", ".........."]
    board = board_from_rows(rows)
    assert set(np.flatnonzero(root_vcf_moves(board, 10, 5, BLACK, 12))) == {24, 64, 74}
    assert np.flatnonzero(root_vcf_moves(board, 10, 5, WHITE, 12)).tolist() == [24]
    assert root_vcf_moves(np.zeros(100, dtype=np.int8), 10, 5, BLACK, 12) is None  # nothing either way
    root_only = PruningConfig(forced=True, vcf="root")
    assert candidates(rules, board, WHITE, root_only).sum() == 95  # inside the tree: as without VCF
    search = rules.search_game(root_only)
    assert np.flatnonzero(search.root_moves(_one(search, board, WHITE), 0)).tolist() == [24]
    assert search.root_moves(_one(search, np.zeros(100, dtype=np.int8), BLACK), 0) is None


def _one(search, board, to_play):
    positions = search.new_positions(1)
    positions.board[0] = board
    positions.info[0] = (to_play, -1, int(np.count_nonzero(board)))
    return positions


def test_vcf_takes_true_false_or_root_and_only_under_freestyle_rules():
    with pytest.raises(PruningConfigError, match=r"pruning.vcf='yes' must be true .*, root .*, false or auto"):
        PruningConfig(vcf="yes")
    assert GomokuRules(10, 5, "standard").search_game(PruningConfig(forced="auto", vcf="root")).pruning.vcf is False
    assert GomokuRules(10, 5).search_game(PruningConfig(forced="auto", vcf="root")).pruning.vcf == "root"


@pytest.mark.parametrize("n,k,fours", [(6, 4, 4), (9, 5, 4)])
def test_defences_are_the_moves_after_which_no_vcf_is_left(n, k, fours):
    checked = 0
    for board, colour in random_positions(n, k, 120, seed=n * 7 + k):
        if vcf(board, n, k, -colour, fours, BIG) == NOT_FOUND:
            continue  # nothing to defend: every move is a defence (tested above)
        out = np.zeros(n * n, dtype=np.bool_)
        count = vcf_defences(board, n, k, colour, fours, BIG, out)
        for a in range(n * n):
            expected = False
            if board[a] == 0:
                expected = would_win(board, n, k, a, colour)
                if not expected:
                    board[a] = colour
                    expected = not vcf_reference(board, n, k, -colour, fours)
                    board[a] = 0
            assert out[a] == expected, (board.reshape(n, n), colour, a)
        assert count == out.sum()
        checked += 1
    assert checked >= 10


def test_the_default_searches_fours_at_the_root_on_freestyle_boards_above_6x6_only():
    from stonelab.games.gomoku import _settings

    assert GomokuRules(15, 5).search_game(_settings()).pruning.vcf == "root"
    assert GomokuRules(8, 5).search_game(_settings()).pruning.vcf == "root"
    assert GomokuRules(6, 4).search_game(_settings()).pruning.vcf is False  # the 5-ply proof instead
    assert GomokuRules(15, 5, "renju").search_game(_settings()).pruning.vcf is False
    assert GomokuRules(15, 5, "standard").search_game(_settings({"forced": False})).pruning.vcf is False
    assert GomokuRules(15, 5).search_game(_settings({"vcf": False})).pruning.vcf is False


# --- victory by continuous threats ---------------------------------------------------------------


def vct_reference(board, n, k, colour, threats, fours):
    """Whether ``colour`` (to move) wins by a VCF, or by a threat on one of `threat_points` (the
    fill when the opponent has a four) every answer to which leaves a win of one threat fewer.
    An answer is a move after which ``colour`` has no VCF, or one that makes k for the opponent."""
    if vcf_reference(board, n, k, colour, fours):
        return True
    if threats == 0:
        return False
    theirs = _wins(board, n, k, -colour)
    if len(theirs) >= 2:
        return False
    places = np.zeros(n * n, dtype=np.bool_)
    threat_points(board, n, k, colour, places)
    for t in theirs or np.flatnonzero(places).tolist():
        board[t] = colour
        won = _threat_wins(board, n, k, colour, threats, fours)
        board[t] = 0
        if won:
            return True
    return False


def _threat_wins(board, n, k, colour, threats, fours):
    """After ``colour``'s threat, the opponent to move: whether every answer loses."""
    if vcf_reference(board, n, k, -colour, fours) or not vcf_reference(board, n, k, colour, fours):
        return False  # the opponent wins first by fours, or the move threatened nothing
    for r in [a for a in range(n * n) if board[a] == 0]:
        if would_win(board, n, k, r, -colour):
            return False
        board[r] = -colour
        answered = not vcf_reference(board, n, k, colour, fours)
        won = not answered or (threats > 1 and vct_reference(board, n, k, colour, threats - 1, fours))
        board[r] = 0
        if not won:
            return False
    return True


@pytest.mark.parametrize("n,k,threats,fours", [(6, 4, 2, 3), (8, 5, 1, 3)])
def test_vct_agrees_with_the_definition_on_random_positions(n, k, threats, fours):
    positions = random_positions(n, k, 60, seed=n * 13 + k)
    found = beyond_fours = 0
    for board, colour in positions:
        before = board.copy()
        move = vct(board, n, k, colour, threats, fours, BIG, np.zeros(1, dtype=np.int64))
        assert np.array_equal(board, before), "the search must leave the board as it found it"
        assert (move != NOT_FOUND) == vct_reference(board, n, k, colour, threats, fours), (board.reshape(n, n), colour)
        found += move != NOT_FOUND
        beyond_fours += move != NOT_FOUND and vcf(board, n, k, colour, fours, BIG) == NOT_FOUND
    assert beyond_fours >= 3 and found < len(positions)  # wins that need a threat, and positions without


def test_vct_moves_are_the_first_moves_of_the_fastest_wins():
    n, k, most = 6, 4, 2
    checked = 0
    for board, colour in random_positions(n, k, 50, seed=11):
        out = np.zeros(n * n, dtype=np.bool_)
        count = vct_moves(board, n, k, colour, most, 3, BIG, out)
        assert count == out.sum()
        if vcf(board, n, k, colour, 3, BIG) != NOT_FOUND:
            continue  # `vcf_moves`'s set, tested above
        theirs = _wins(board, n, k, -colour)
        places = np.zeros(n * n, dtype=np.bool_)
        threat_points(board, n, k, colour, places)
        starts = set()
        for threats in range(1, most + 1):
            for t in ([] if len(theirs) >= 2 else theirs or np.flatnonzero(places).tolist()):
                board[t] = colour
                if _threat_wins(board, n, k, colour, threats, 3):
                    starts.add(t)
                board[t] = 0
            if starts:
                break
        assert set(np.flatnonzero(out).tolist()) == starts, (board.reshape(n, n), colour)
        checked += bool(starts)
    assert checked >= 5


def test_every_vct_found_wins_within_the_plies_an_exact_proof_sees():
    n, k = 6, 4  # one threat and at most two fours: the win is at most 2 + 2 * 2 + 1 = 7 plies away
    checked = 0
    for board, colour in random_positions(n, k, 80, seed=5):
        move = vct(board, n, k, colour, 1, 2, BIG, np.zeros(1, dtype=np.int64))
        if move == NOT_FOUND:
            continue
        proven = np.zeros(n * n, dtype=np.bool_)
        proven_moves(board.copy(), n, k, colour, 7, proven)
        assert proven[move], (board.reshape(n, n), colour, move)
        checked += 1
    assert checked >= 10


def _double_three():
    # black: two in row 7 (cols 5-6) and two in column 7 (rows 5-6); (7,7) makes two open threes
    board = np.zeros(15 * 15, dtype=np.int8)
    for r, c in [(7, 5), (7, 6), (5, 7), (6, 7)]:
        board[r * 15 + c] = BLACK
    for r, c in [(0, 0), (0, 14), (14, 0), (14, 14)]:
        board[r * 15 + c] = WHITE
    return board


def test_a_double_three_is_a_vct_of_one_threat_and_no_vcf():
    board = _double_three()
    assert vcf(board, 15, 5, BLACK, 12, BIG) == NOT_FOUND
    spent = np.zeros(1, dtype=np.int64)
    assert vct(board, 15, 5, BLACK, 1, 12, BIG, spent) == 7 * 15 + 7
    assert spent[0] > 0
    assert vct(board, 15, 5, BLACK, 1, 12, 0, np.zeros(1, dtype=np.int64)) == NOT_FOUND  # a cut search finds none
    out = np.zeros(15 * 15, dtype=np.bool_)
    count = vct_defences(board, 15, 5, WHITE, 1, 12, BIG, out)
    assert out[7 * 15 + 7] and 0 < count < 12 and not out[3 * 15 + 3]
    assert vct_defences(np.zeros(225, dtype=np.int8), 15, 5, WHITE, 1, 12, BIG, out) == -1  # nothing to stop
    spent = np.zeros(1, dtype=np.int64)
    vct(board, 15, 5, BLACK, 1, 12, BIG, spent)
    tight = np.zeros(15 * 15, dtype=np.bool_)  # a budget that finds the win but checks few defences
    assert vct_defences(board, 15, 5, WHITE, 1, 12, int(spent[0]) + 1, tight) >= count
    assert np.all(tight[out]), "a point it had no budget left to examine is kept, not dropped"


def test_vct_at_the_root_keeps_the_winning_threat_or_the_defences():
    board = _double_three()
    search = GomokuRules(15, 5).search_game(PruningConfig(forced=True, vct=1))
    assert np.flatnonzero(search.root_moves(_one(search, board, BLACK), 0)).tolist() == [7 * 15 + 7]
    defences = search.root_moves(_one(search, board, WHITE), 0)
    assert defences[7 * 15 + 7] and defences.sum() < 12
    assert search.root_moves(_one(search, np.zeros(225, dtype=np.int8), BLACK), 0) is None
    assert root_vct_moves(board, 15, 5, BLACK, 1, 12).sum() == 1


def test_vct_takes_0_to_3_threats_and_only_under_freestyle_rules():
    for bad in (-1, 4, "two", True):
        with pytest.raises(PruningConfigError, match=r"pruning.vct=.* must be 0 \(off\) or the threats .* 1..3"):
            PruningConfig(vct=bad)
    assert GomokuRules(15, 5, "renju").search_game(PruningConfig(forced="auto", vct=2)).pruning.vct == 0
    assert GomokuRules(15, 5).search_game(PruningConfig(forced="auto", vct=2)).pruning.vct == 2
