"""Candidate-move restriction: window geometry, fallback, threat exceptions, adaptive, top-k."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.errors import ConfigError
from stonelab.games.gomoku.candidates import (
    NUM_PARAMS,
    P_ADAPTIVE,
    P_ADAPTIVE_STEP,
    P_FALLBACK,
    P_FORCED,
    P_THREAT_AWARE,
    P_THREAT_SPACE,
    P_TOP_K,
    P_TOP_K_MODE,
    P_WINDOW,
    SHAPE_NONE,
    SHAPE_OPEN_FOUR,
    SHAPE_OPEN_THREE,
    SHAPE_WIN,
    TOP_K_ALONE,
    TOP_K_UNION,
    PruningConfig,
    PruningConfigError,
    candidate_mask,
    candidates,
    is_tactical,
    shape_after,
)
from stonelab.games.gomoku.rules import BLACK, WHITE, GomokuRules, board_from_rows, would_win

# --- helpers -----------------------------------------------------------------------------------


def empty_board(n: int) -> np.ndarray:
    return np.zeros(n * n, dtype=np.int8)


def place(n: int, black=(), white=()) -> np.ndarray:
    board = empty_board(n)
    for r, c in black:
        board[r * n + c] = BLACK
    for r, c in white:
        board[r * n + c] = WHITE
    return board


def points(mask: np.ndarray, n: int) -> set[tuple[int, int]]:
    return {(int(a) // n, int(a) % n) for a in np.flatnonzero(mask)}


def square(board: np.ndarray, n: int, r0: int, c0: int, w: int) -> set[tuple[int, int]]:
    """Empty points of the w x w square with top-left corner (r0, c0)."""
    return {(r, c) for r in range(r0, r0 + w) for c in range(c0, c0 + w) if board[r * n + c] == 0}


def marked(rows: list[str]) -> set[tuple[int, int]]:
    """Points drawn as ``*`` in text rows."""
    return {(r, c) for r, row in enumerate(rows) for c, ch in enumerate(row.replace(" ", "")) if ch == "*"}


def legal(board: np.ndarray, n: int) -> set[tuple[int, int]]:
    return points(board == 0, n)


def run_kernel(board, n, k, to_play, config, priors=None, prefill=False):
    """Call the kernel directly; returns (mask, count)."""
    a = n * n
    if priors is None:
        priors = np.full(a, 1.0 / a, dtype=np.float32)
    out = np.full(a, prefill, dtype=np.bool_)
    count = candidate_mask(board, n, k, to_play, priors.astype(np.float32), config.params(), out)
    return out, int(count)


def random_board(rng, n: int, fill: float) -> np.ndarray:
    cells = rng.random(n * n) < fill
    colours = rng.choice(np.array([BLACK, WHITE], dtype=np.int8), size=n * n)
    return np.where(cells, colours, 0).astype(np.int8)


R8 = GomokuRules(8, 5)
R9 = GomokuRules(9, 5)


# --- config ------------------------------------------------------------------------------------


def test_defaults_restrict_nothing_and_params_layout():
    cfg = PruningConfig()
    assert not cfg.enabled
    p = cfg.params()
    assert p.dtype == np.int64 and p.shape == (NUM_PARAMS,)
    assert p[P_WINDOW] == 0 and p[P_TOP_K] == 0 and p[P_FALLBACK] == 1
    assert p[P_TOP_K_MODE] == TOP_K_UNION

    cfg = PruningConfig(window=6, threat_space=True, adaptive=True, adaptive_step=3,
                        top_k=4, top_k_mode="alone", fallback=False)
    assert cfg.enabled
    p = cfg.params()
    assert p[P_WINDOW] == 6
    assert p[P_THREAT_AWARE] == 1  # implied by threat_space
    assert p[P_THREAT_SPACE] == 1
    assert p[P_ADAPTIVE] == 1 and p[P_ADAPTIVE_STEP] == 3
    assert p[P_TOP_K] == 4 and p[P_TOP_K_MODE] == TOP_K_ALONE
    assert p[P_FALLBACK] == 0
    assert PruningConfig(top_k=3).enabled and PruningConfig(window=2).enabled


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"window": -1}, "pruning.window=-1"),
        ({"window": 2.5}, "pruning.window=2.5"),
        ({"top_k": -1}, "pruning.top_k=-1"),
        ({"window": 6, "top_k_mode": "both"}, "pruning.top_k_mode='both'"),
        ({"adaptive": True}, "pruning.adaptive=true"),
        ({"window": 6, "adaptive": True, "adaptive_step": 0}, "pruning.adaptive_step=0"),
        ({"threat_aware": True}, "pruning.threat_aware=true"),
        ({"threat_space": True}, "pruning.threat_space=true"),
        ({"threat_aware": True, "top_k": 3, "top_k_mode": "alone"}, "pruning.threat_aware=true"),
    ],
)
def test_invalid_values_raise_naming_the_key(kwargs, key):
    with pytest.raises(PruningConfigError, match=key.replace("(", r"\(")) as info:
        PruningConfig(**kwargs)
    assert isinstance(info.value, ConfigError)


def test_top_k_error_message_says_zero_means_off():
    with pytest.raises(PruningConfigError, match=r"pruning\.top_k=-1 must be >= 0 \(0 = off\)"):
        PruningConfig(top_k=-1)


def test_threat_exceptions_accept_top_k_union_without_window():
    cfg = PruningConfig(threat_aware=True, top_k=3)
    assert cfg.enabled


def test_window_larger_than_board_without_fallback_raises_at_validate_for_board():
    cfg = PruningConfig(window=9, fallback=False)  # fine on its own: the board is not known yet
    with pytest.raises(PruningConfigError,
                       match=r"pruning\.window=9 is larger than the 8x8 board and pruning\.fallback=false"):
        cfg.validate_for_board(8)
    with pytest.raises(PruningConfigError):
        candidates(R8, empty_board(8), BLACK, cfg)
    cfg.validate_for_board(9)  # fits
    PruningConfig(window=8, fallback=False).validate_for_board(8)  # not larger
    PruningConfig(window=9, fallback=True).validate_for_board(8)  # falls back
    PruningConfig(window=9, top_k=2, top_k_mode="alone", fallback=False).validate_for_board(8)  # unused


# --- window geometry ---------------------------------------------------------------------------


def test_n8_window6_stones_in_top_left_corner_exact_set():
    # centroid (1/3, 1/3) -> (0, 0); lo = 0 - 3 -> clipped to 0: rows and cols 0..5
    board = board_from_rows([
        "X O . . . . . .",
        "X . . . . . . .",
        ". . . . . . . .",
        ". . . . . . . .",
        ". . . . . . . .",
        ". . . . . . . .",
        ". . . . . . . .",
        ". . . . . . . .",
    ])
    expected = marked([
        "X O * * * * . .",
        "X * * * * * . .",
        "* * * * * * . .",
        "* * * * * * . .",
        "* * * * * * . .",
        "* * * * * * . .",
        ". . . . . . . .",
        ". . . . . . . .",
    ])
    mask = candidates(R8, board, BLACK, PruningConfig(window=6))
    assert points(mask, 8) == expected
    assert len(expected) == 33


def test_n8_window6_stones_in_bottom_right_corner_clipped_inside():
    # centroid (7, 6.5) -> (7, 7); lo = 7 - 3 = 4 -> clipped to 8 - 6 = 2
    board = place(8, black=[(7, 7)], white=[(7, 6)])
    mask = candidates(R8, board, WHITE, PruningConfig(window=6))
    assert points(mask, 8) == square(board, 8, 2, 2, 6)
    assert mask.sum() == 34


def test_n8_window6_middle_stones_exact_set():
    # rows (3+3+4+5)/4 = 3.75 -> 4; cols (2+3+3+4)/4 = 3 -> 3; lo_r = 1, lo_c = 0
    board = place(8, black=[(3, 2), (4, 3)], white=[(3, 3), (5, 4)])
    expected = marked([
        ". . . . . . . .",
        "* * * * * * . .",
        "* * * * * * . .",
        "* * X O * * . .",
        "* * * X * * . .",
        "* * * * O * . .",
        "* * * * * * . .",
        ". . . . . . . .",
    ])
    mask = candidates(R8, board, BLACK, PruningConfig(window=6))
    assert points(mask, 8) == expected


def test_empty_board_window_is_centred():
    # 8x8: centre (3.5, 3.5) -> 4; even w=6 takes the extra cell on the low side: rows 1..6
    mask = candidates(R8, empty_board(8), BLACK, PruningConfig(window=6))
    assert points(mask, 8) == square(empty_board(8), 8, 1, 1, 6)
    # 9x9: centre 4; odd w=5 -> rows 2..6, even w=4 -> rows 2..5
    mask = candidates(R9, empty_board(9), BLACK, PruningConfig(window=5))
    assert points(mask, 9) == square(empty_board(9), 9, 2, 2, 5)
    mask = candidates(R9, empty_board(9), BLACK, PruningConfig(window=4))
    assert points(mask, 9) == square(empty_board(9), 9, 2, 2, 4)


@pytest.mark.parametrize(("w", "lo"), [(2, 3), (3, 3), (4, 2), (5, 2), (6, 1), (7, 1), (8, 0)])
def test_odd_and_even_windows_around_one_stone(w, lo):
    # centroid (4, 4); lo = 4 - w // 2: odd w centred, even w one more cell above/left
    board = place(9, black=[(4, 4)])
    mask = candidates(R9, board, WHITE, PruningConfig(window=w))
    assert points(mask, 9) == square(board, 9, lo, lo, w)
    assert mask.sum() == w * w - 1


def test_window_of_one_on_a_stone_falls_back():
    board = place(9, black=[(4, 4)])
    mask = candidates(R9, board, WHITE, PruningConfig(window=1))
    assert points(mask, 9) == legal(board, 9)


def test_centroid_rounds_half_up():
    # mean row/col (2 + 3) / 2 = 2.5 -> 3 (floor would give 2): w=3 covers 2..4
    board = place(9, black=[(2, 2)], white=[(3, 3)])
    mask = candidates(R9, board, BLACK, PruningConfig(window=3))
    assert points(mask, 9) == square(board, 9, 2, 2, 3)
    # mean (2 + 2 + 3) / 3 = 2.33 -> 2: w=3 covers 1..3
    board = place(9, black=[(2, 2), (2, 3)], white=[(3, 2)])
    mask = candidates(R9, board, WHITE, PruningConfig(window=3))
    # rows: (2+2+3)/3 -> 2, cols: (2+3+2)/3 -> 2
    assert points(mask, 9) == square(board, 9, 1, 1, 3)


# --- fallback ----------------------------------------------------------------------------------


def test_fallback_when_board_not_larger_than_window():
    board = place(8, black=[(0, 0)], white=[(0, 1)])
    for w in (8, 9, 12):
        mask = candidates(R8, board, BLACK, PruningConfig(window=w))
        assert points(mask, 8) == legal(board, 8)
    # one smaller does restrict: 7x7 clipped into the corner
    mask = candidates(R8, board, BLACK, PruningConfig(window=7))
    assert points(mask, 8) == square(board, 8, 0, 0, 7)


def test_fallback_when_window_has_no_empty_point():
    # a full 3x3 block around (4, 4): no line of 5 anywhere
    black = [(3, 3), (3, 5), (4, 4), (5, 3), (5, 5)]
    white = [(3, 4), (4, 3), (4, 5), (5, 4)]
    board = place(9, black=black, white=white)
    mask, count = run_kernel(board, 9, 5, WHITE, PruningConfig(window=3))
    assert points(mask, 9) == legal(board, 9) and count == 72
    mask, count = run_kernel(board, 9, 5, WHITE, PruningConfig(window=3, fallback=False), prefill=True)
    assert count == 0 and not mask.any()
    # a window of 4 still holds empty points, so no fallback
    mask, count = run_kernel(board, 9, 5, WHITE, PruningConfig(window=4))
    assert points(mask, 9) == square(board, 9, 2, 2, 4) and count == 7


def test_window_equal_to_board_without_fallback_covers_the_board():
    board = place(8, black=[(2, 2)])
    mask = candidates(R8, board, WHITE, PruningConfig(window=8, fallback=False))
    assert points(mask, 8) == legal(board, 8)


# --- threat exceptions -------------------------------------------------------------------------

# Black (to move) wins at (0, 4); white's four in column 8 must be blocked at (4, 8).
# Centroid rows 26/8 = 3.25 -> 3, cols 38/8 = 4.75 -> 5: the 3x3 window is rows 2..4, cols 4..6.
WIN_BLOCK = place(9, black=[(0, 0), (0, 1), (0, 2), (0, 3)],
                  white=[(5, 8), (6, 8), (7, 8), (8, 8)])


def test_threat_aware_keeps_win_and_block_outside_the_window():
    window = square(WIN_BLOCK, 9, 2, 4, 3)
    assert (0, 4) not in window and (4, 8) not in window
    plain = points(candidates(R9, WIN_BLOCK, BLACK, PruningConfig(window=3)), 9)
    assert plain == window
    aware = points(candidates(R9, WIN_BLOCK, BLACK, PruningConfig(window=3, threat_aware=True)), 9)
    assert aware == window | {(0, 4), (4, 8)}
    # the same two points from white's side: its win and its block
    aware_w = points(candidates(R9, WIN_BLOCK, WHITE, PruningConfig(window=3, threat_aware=True)), 9)
    assert aware_w == window | {(0, 4), (4, 8)}


def test_threat_aware_leaves_the_board_unchanged():
    board = WIN_BLOCK.copy()
    run_kernel(board, 9, 5, BLACK, PruningConfig(window=3, threat_space=True))
    assert np.array_equal(board, WIN_BLOCK)


# Black (to move) makes an open four at (0, 1) or (0, 5); white makes an open three at
# (8, 4) or (8, 7), so black must consider blocking there. Centroid rows 20/6 -> 3,
# cols 24/6 = 4: the 3x3 window is rows 2..4, cols 3..5.
OPEN_SHAPES = place(9, black=[(0, 2), (0, 3), (0, 4)], white=[(8, 5), (8, 6), (4, 4)])


def test_threat_space_keeps_open_four_and_open_three_moves():
    window = square(OPEN_SHAPES, 9, 2, 3, 3)
    aware = points(candidates(R9, OPEN_SHAPES, BLACK, PruningConfig(window=3, threat_aware=True)), 9)
    assert aware == window  # no immediate win or block here
    space = points(candidates(R9, OPEN_SHAPES, BLACK, PruningConfig(window=3, threat_space=True)), 9)
    assert space == window | {(0, 1), (0, 5), (8, 4), (8, 7)}


def test_threat_space_includes_immediate_wins_and_blocks():
    window = square(WIN_BLOCK, 9, 2, 4, 3)
    space = points(candidates(R9, WIN_BLOCK, BLACK, PruningConfig(window=3, threat_space=True)), 9)
    assert {(0, 4), (4, 8)} <= space
    assert window <= space


def test_threat_space_drops_a_dead_three():
    # row 8: X . O O . . X -- white at (8, 6) makes .OOO. between (8, 3) and (8, 7), but
    # (8, 2) and (8, 8) are black, so it can never become an open four. Window rows 4..6.
    board = place(9, black=[(0, 2), (0, 3), (0, 4), (8, 2), (8, 8)], white=[(8, 4), (8, 5), (4, 4)])
    space = points(candidates(R9, board, BLACK, PruningConfig(window=3, threat_space=True)), 9)
    assert (8, 6) not in space and (8, 3) not in space and (8, 7) not in space
    assert {(0, 1), (0, 5)} <= space  # black's open fours are still kept


def row_board(row: str, n: int = 9) -> np.ndarray:
    rows = [row] + ["." * n] * (n - 1)
    return board_from_rows(rows)


@pytest.mark.parametrize(
    ("row", "col", "k", "shape"),
    [
        ("XXXX.....", 4, 5, SHAPE_WIN),
        ("XX.XX....", 2, 5, SHAPE_WIN),
        ("XXXXX.X..", 5, 5, SHAPE_WIN),       # overline wins in freestyle
        ("..XXX....", 1, 5, SHAPE_OPEN_FOUR),
        ("..XXX....", 5, 5, SHAPE_OPEN_FOUR),
        ("XXX......", 3, 5, SHAPE_NONE),      # closed four: one end is the edge
        ("OXXX.....", 4, 5, SHAPE_NONE),      # closed four: one end is white
        ("..XX.....", 4, 5, SHAPE_OPEN_THREE),
        (".XX......", 3, 5, SHAPE_OPEN_THREE),  # room on the far side only
        ("XX.......", 2, 5, SHAPE_NONE),      # touches the edge
        ("O.XX..O..", 4, 5, SHAPE_NONE),      # ends empty but no room to grow into an open four
        ("..XX.O...", 4, 5, SHAPE_NONE),      # one end blocked
        ("..X.X....", 5, 5, SHAPE_NONE),      # broken shapes (X.XX) are not counted
        ("...X.....", 4, 5, SHAPE_NONE),
        (".XX......", 3, 4, SHAPE_OPEN_FOUR),  # k=4: three open = open four
        ("..X......", 3, 4, SHAPE_OPEN_THREE),  # k=4: two open with room
        (".X.......", 2, 3, SHAPE_OPEN_FOUR),  # k=3: two open = open "four"
        ("....X....", 2, 3, SHAPE_NONE),      # k=3: no open three (a lone stone)
    ],
)
def test_shape_after_on_a_row(row, col, k, shape):
    board = row_board(row)
    assert shape_after(board, 9, k, col, BLACK) == shape
    assert (shape == SHAPE_WIN) == would_win(board.copy(), 9, k, col, BLACK)


def test_shape_after_in_every_direction():
    n = 9
    # open three made on a column, a diagonal and an anti-diagonal through (4, 4)
    for (dr, dc) in [(1, 0), (1, 1), (1, -1), (0, 1)]:
        board = place(n, black=[(4 + dr, 4 + dc), (4 + 2 * dr, 4 + 2 * dc)])
        assert shape_after(board, n, 5, 4 * n + 4, BLACK) == SHAPE_OPEN_THREE
        assert shape_after(board, n, 5, 4 * n + 4, WHITE) == SHAPE_NONE
        board[(4 + 3 * dr) * n + 4 + 3 * dc] = BLACK
        assert shape_after(board, n, 5, 4 * n + 4, BLACK) == SHAPE_OPEN_FOUR


# --- adaptive window ---------------------------------------------------------------------------


def test_adaptive_keeps_the_window_in_a_quiet_position():
    board = place(9, black=[(4, 4), (2, 6)], white=[(4, 5), (6, 3)])
    assert not is_tactical(board, 9, 5)
    plain = candidates(R9, board, BLACK, PruningConfig(window=3))
    adaptive = candidates(R9, board, BLACK, PruningConfig(window=3, adaptive=True))
    assert np.array_equal(plain, adaptive)


def test_adaptive_widens_the_window_in_a_tactical_position():
    # black's open diagonal three: (2, 2) or (6, 6) makes an open four. Centroid (4, 4).
    board = place(9, black=[(3, 3), (4, 4), (5, 5)], white=[(3, 5), (5, 3)])
    assert is_tactical(board, 9, 5)
    plain = points(candidates(R9, board, WHITE, PruningConfig(window=3)), 9)
    assert plain == square(board, 9, 3, 3, 3)
    adaptive = points(candidates(R9, board, WHITE, PruningConfig(window=3, adaptive=True)), 9)
    assert adaptive == square(board, 9, 2, 2, 5) and len(adaptive) == 20
    wider = points(candidates(R9, board, WHITE,
                              PruningConfig(window=3, adaptive=True, adaptive_step=4)), 9)
    assert wider == square(board, 9, 1, 1, 7)


def test_tactical_counts_either_colour_and_ignores_open_threes():
    # white (not to move) has the threat: still tactical
    board = place(9, black=[(0, 0)], white=[(4, 3), (4, 4), (4, 5)])
    assert is_tactical(board, 9, 5)
    # only open-three chances (pairs): not tactical
    board = place(9, black=[(4, 4), (4, 5)], white=[(2, 2), (2, 3)])
    assert not is_tactical(board, 9, 5)
    # an immediate win (closed four) is tactical
    board = place(9, black=[(0, 0), (0, 1), (0, 2), (0, 3)], white=[(0, 4), (8, 8), (7, 7)])
    assert not is_tactical(board, 9, 5)  # the four is dead: blocked by white at (0, 4)
    board[0 * 9 + 4] = 0
    board[1 * 9 + 1] = WHITE
    assert is_tactical(board, 9, 5)


def test_adaptive_widening_to_the_board_size_falls_back():
    board = place(8, black=[(2, 2), (3, 3), (4, 4)], white=[(2, 4), (4, 2)])
    plain = candidates(R8, board, WHITE, PruningConfig(window=6))
    assert plain.sum() < (board == 0).sum()
    mask = candidates(R8, board, WHITE, PruningConfig(window=6, adaptive=True))
    assert points(mask, 8) == legal(board, 8)


# --- top-k -------------------------------------------------------------------------------------


def test_top_k_alone_picks_the_highest_legal_priors():
    rng = np.random.default_rng(7)
    n = 8
    for _ in range(20):
        board = random_board(rng, n, 0.4)
        priors = rng.random(n * n).astype(np.float32)
        priors[board != 0] += 10.0  # occupied points get the highest priors: never chosen
        k = int(rng.integers(1, 12))
        mask, count = run_kernel(board, n, 5, BLACK, PruningConfig(top_k=k, top_k_mode="alone"), priors)
        legal_idx = np.flatnonzero(board == 0)
        order = legal_idx[np.argsort(-priors[legal_idx], kind="stable")]
        assert set(np.flatnonzero(mask)) == set(order[:k].tolist())
        assert count == min(k, legal_idx.size) == mask.sum()
        assert not mask[board != 0].any()


def test_top_k_alone_ignores_the_window_and_breaks_ties_by_lowest_index():
    board = place(8, black=[(0, 0), (0, 2)], white=[(0, 1)])
    mask = candidates(R8, board, WHITE, PruningConfig(window=2, top_k=4, top_k_mode="alone"))
    assert set(np.flatnonzero(mask).tolist()) == {3, 4, 5, 6}  # uniform priors: lowest legal indices
    priors = np.zeros(64, np.float32)
    priors[[63, 10, 0]] = [0.5, 0.5, 0.9]  # 0 is occupied
    mask = candidates(R8, board, WHITE, PruningConfig(top_k=3, top_k_mode="alone"), priors)
    assert set(np.flatnonzero(mask).tolist()) == {10, 63, 3}


def test_top_k_with_fewer_legal_moves_keeps_them_all():
    board = np.ones(64, dtype=np.int8)
    board[[5, 40]] = 0
    mask, count = run_kernel(board, 8, 5, BLACK, PruningConfig(top_k=5, top_k_mode="alone"))
    assert count == 2 and set(np.flatnonzero(mask).tolist()) == {5, 40}


def test_top_k_union_is_window_united_with_top_k():
    rng = np.random.default_rng(3)
    n = 9
    for _ in range(10):
        board = random_board(rng, n, 0.25)
        priors = rng.random(n * n).astype(np.float32)
        window = candidates(R9, board, BLACK, PruningConfig(window=4), priors)
        top = candidates(R9, board, BLACK, PruningConfig(top_k=5, top_k_mode="alone"), priors)
        union, count = run_kernel(board, n, 5, BLACK, PruningConfig(window=4, top_k=5), priors)
        assert np.array_equal(union, window | top)
        assert count == union.sum()


def test_top_k_union_adds_a_far_high_prior_move():
    board = place(9, black=[(4, 4)], white=[(4, 5)])
    priors = np.full(81, 0.01, np.float32)
    priors[80] = 0.9  # bottom-right corner, far outside a 3x3 window
    plain = candidates(R9, board, BLACK, PruningConfig(window=3), priors)
    union = candidates(R9, board, BLACK, PruningConfig(window=3, top_k=1), priors)
    assert not plain[80] and union[80]
    assert points(union, 9) == points(plain, 9) | {(8, 8)}


def test_top_k_union_without_window_is_top_k_plus_threats():
    priors = np.zeros(81, np.float32)
    priors[40] = 1.0
    mask = candidates(R9, WIN_BLOCK, BLACK, PruningConfig(top_k=1, threat_aware=True), priors)
    assert points(mask, 9) == {(4, 4), (0, 4), (4, 8)}
    mask = candidates(R9, WIN_BLOCK, BLACK, PruningConfig(top_k=1), priors)
    assert points(mask, 9) == {(4, 4)}


def test_top_k_within_keeps_the_best_window_moves_only():
    rng = np.random.default_rng(4)
    n = 9
    for _ in range(10):
        board = random_board(rng, n, 0.2)
        priors = rng.random(n * n).astype(np.float32)
        window = candidates(R9, board, BLACK, PruningConfig(window=5), priors)
        within, count = run_kernel(board, n, 5, BLACK, PruningConfig(window=5, top_k=4, top_k_mode="within"),
                                   priors)
        inside = np.flatnonzero(window)
        best = inside[np.argsort(-priors[inside], kind="stable")[:4]]
        assert set(np.flatnonzero(within)) == set(best.tolist())
        assert count == within.sum() == min(4, len(inside))


def test_top_k_within_never_cuts_a_threat_exception():
    priors = np.zeros(81, np.float32)
    priors[40] = 1.0  # the centre is the only high prior; the win and the block have prior 0
    mask = candidates(R9, WIN_BLOCK, BLACK, PruningConfig(window=3, top_k=1, top_k_mode="within",
                                                          threat_aware=True), priors)
    assert {(0, 4), (4, 8)} <= points(mask, 9)
    assert len(points(mask, 9)) == 3


def test_top_k_within_needs_a_window():
    with pytest.raises(PruningConfigError, match="top_k_mode=within needs pruning.window"):
        PruningConfig(top_k=8, top_k_mode="within")


# --- disabled config and invariants -------------------------------------------------------------


def test_disabled_config_gives_exactly_the_legal_mask():
    rng = np.random.default_rng(0)
    for n in (5, 8, 9, 15):
        for fill in (0.0, 0.3, 0.7, 1.0):
            board = random_board(rng, n, fill)
            priors = rng.random(n * n).astype(np.float32)
            mask, count = run_kernel(board, n, 5, BLACK, PruningConfig(), priors, prefill=True)
            assert np.array_equal(mask, board == 0)
            assert count == (board == 0).sum()


@pytest.mark.parametrize("seed", range(3))
def test_mask_is_legal_and_count_matches_for_random_configs(seed):
    rng = np.random.default_rng(100 + seed)
    n = 9
    for _ in range(25):
        board = random_board(rng, n, rng.uniform(0.0, 0.6))
        priors = rng.random(n * n).astype(np.float32)
        cfg = PruningConfig(window=int(rng.integers(1, 10)), threat_aware=bool(rng.integers(2)),
                            threat_space=bool(rng.integers(2)), adaptive=bool(rng.integers(2)),
                            top_k=int(rng.integers(0, 6)), fallback=True)
        to_play = BLACK if rng.integers(2) else WHITE
        mask, count = run_kernel(board, n, 5, to_play, cfg, priors, prefill=True)
        assert count == mask.sum()
        assert not mask[board != 0].any()
        if (board == 0).any():
            assert count >= 1
        # every immediate win and block stays whenever threats are on
        if cfg.threat_aware or cfg.threat_space:
            for a in np.flatnonzero(board == 0):
                if would_win(board, n, 5, a, to_play) or would_win(board, n, 5, a, -to_play):
                    assert mask[a]


# --- forced moves ---------------------------------------------------------------------------------


def test_forced_moves_are_the_wins_else_the_blocks_else_everything():
    rules = GomokuRules(8, 5)
    forced = PruningConfig(forced=True)
    assert forced.enabled and forced.params()[P_FORCED] == 1
    # black to move has a four (row 2) and white has one too (row 5): only black's wins
    both = board_from_rows(["........", "........", "XXXX....", "........", "........", "OOOO....",
                            "........", "........"])
    assert set(np.flatnonzero(candidates(rules, both, BLACK, forced))) == {2 * 8 + 4}
    # white to move, black threatens on both ends of an open four: only those two blocks
    open_four = board_from_rows(["........", "........", ".XXXX...", "........", "..O.O...", "........",
                                 "O.......", "........"])
    assert set(np.flatnonzero(candidates(rules, open_four, WHITE, forced))) == {2 * 8 + 0, 2 * 8 + 5}
    # nothing forced: every empty point, as without pruning
    quiet = board_from_rows(["........", "........", "..XX....", "...O....", "........", "........",
                             "........", "........"])
    assert candidates(rules, quiet, BLACK, forced).sum() == 64 - 3


def test_forced_moves_combine_with_a_window():
    """A forced block far outside the local window is the whole candidate set."""
    rules = GomokuRules(15, 5)
    board = np.zeros(15 * 15, dtype=np.int8)
    for c in range(4):
        board[0 * 15 + c] = BLACK  # black's four at the top edge
    for r, c in [(7, 7), (7, 8), (8, 7)]:
        board[r * 15 + c] = WHITE
    mask = candidates(rules, board, WHITE, PruningConfig(window=4, forced=True))
    assert set(np.flatnonzero(mask)) == {0 * 15 + 4}


def test_root_proof_auto_proves_5_plies_on_small_freestyle_boards_only():
    auto = PruningConfig(forced="auto", root_proof="auto")
    assert GomokuRules(6, 4).search_game(auto).pruning.root_proof == 5
    assert GomokuRules(8, 5).search_game(auto).pruning.root_proof == 0
    assert GomokuRules(6, 5, "standard").search_game(auto).pruning == PruningConfig()
    with pytest.raises(PruningConfigError, match=r"pruning.root_proof=4 must be 0 \(off\), 1, 3, 5 or 7"):
        PruningConfig(root_proof=4)
    with pytest.raises(PruningConfigError, match="pruning.vcf_fours=0 must be an integer >= 1"):
        PruningConfig(vcf=True, vcf_fours=0)
