"""Maddison 36-plane encoder: layout, each plane against a brute-force reference, encode_game."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.errors import ConfigError
from stonelab.features import (
    ENC_MADDISON,
    ENCODERS,
    encode_game,
    encode_game_arrays,
    get_encoder,
)
from stonelab.features.maddison import (
    MADDISON_PLANES,
    NUM_PLANES,
    OFFSETS,
    encode_maddison,
)
from stonelab.games.go.rules import BLACK, EMPTY, SETUP_INVALID, WHITE, GoRules, state_from_rows
from stonelab.games.go.rules import point as pt

GROUPS = dict(MADDISON_PLANES)


def group(planes: np.ndarray, name: str) -> np.ndarray:
    return planes[OFFSETS[name]:OFFSETS[name] + GROUPS[name]]


def pad(rows: list[str], n: int = 9) -> list[str]:
    rows = [r.replace(" ", "") for r in rows]
    return [r + "." * (n - len(r)) for r in rows] + ["." * n] * (n - len(rows))


# --- brute-force reference -----------------------------------------------------------------------

def neighbours(n: int, p: int) -> list[int]:
    r, c = divmod(p, n)
    return [rr * n + cc for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)) if 0 <= rr < n and 0 <= cc < n]


def flood(board: np.ndarray, n: int, p: int) -> tuple[set[int], set[int]]:
    colour, stones, libs, todo = board[p], {p}, set(), [p]
    while todo:
        q = todo.pop()
        for t in neighbours(n, q):
            if board[t] == EMPTY:
                libs.add(t)
            elif board[t] == colour and t not in stones:
                stones.add(t)
                todo.append(t)
    return stones, libs


def reference_play(board: np.ndarray, n: int, p: int, colour: int) -> np.ndarray | None:
    if board[p] != EMPTY:
        return None
    b = board.copy()
    b[p] = colour
    for q in neighbours(n, p):
        if b[q] == -colour:
            stones, libs = flood(b, n, q)
            if not libs:
                b[list(stones)] = EMPTY
    return b if flood(b, n, p)[1] else None


def bins(value: int, first: int, count: int) -> int | None:
    """Plane index (within a group) of ``value`` for bins first, first+1, ..., >= first+count-1."""
    if value < first:
        return None
    return min(value - first, count - 1)


def reference_planes(state, boards: list[np.ndarray], rank: int) -> np.ndarray:
    """All 36 planes from flood fills and the board history (``boards[-1]`` is the current board)."""
    n, N = state.n, state.n * state.n
    board, me = state.board, state.to_play
    out = np.zeros((NUM_PLANES, N), dtype=np.uint8)
    legal = state.legal_mask()[:N]

    def put(name, index, p):
        if index is not None:
            out[OFFSETS[name] + index, p] = 1

    for p in range(N):
        s = board[p]
        if s != EMPTY:
            put("stones", 0 if s == me else 1, p)
            put("liberties", bins(len(flood(board, n, p)[1]), 1, 4), p)
            age = next((k for k in range(1, len(boards)) if boards[-1 - k][p] != s), len(boards))
            put("turns_since", bins(age, 1, 5), p)
            continue
        put("stones", 2, p)
        if not legal[p]:
            continue
        put("legal", 0, p)
        after = reference_play(board, n, p, me)
        put("liberties_after", bins(len(flood(after, n, p)[1]), 1, 6), p)
        taken = int(np.count_nonzero(board == -me) - np.count_nonzero(after == -me))
        put("capture_size", bins(taken, 1, 7), p)
        if state.ladder_capture(p):
            put("ladder_capture", 0, p)
    if 1 <= rank <= 9:
        out[OFFSETS["rank"] + rank - 1] = 1
    return out.reshape(NUM_PLANES, n, n)


def random_positions(n: int, moves: int, seed: int, every: int = 1):
    """Yield (state, boards so far) along a random legal game (restarting when it ends)."""
    rng = np.random.default_rng(seed)
    state = GoRules(n).new_state()
    boards = [state.board.copy()]
    for i in range(moves):
        if i % every == 0:
            yield state, boards
        legal = np.flatnonzero(state.legal_mask()[:-1])
        move = int(rng.choice(legal)) if len(legal) and rng.random() > 0.02 else n * n
        state.play(move)
        boards.append(state.board.copy())
        if state.is_over or state.move_number > 3 * n * n:
            state = GoRules(n).new_state()
            boards = [state.board.copy()]


# --- layout and registry -------------------------------------------------------------------------

def test_plane_layout_is_36_planes_in_the_documented_groups():
    assert NUM_PLANES == 36
    assert [name for name, _ in MADDISON_PLANES] == [
        "stones", "liberties", "liberties_after", "legal", "turns_since", "capture_size",
        "ladder_capture", "rank",
    ]
    assert [count for _, count in MADDISON_PLANES] == [3, 4, 6, 1, 5, 7, 1, 9]
    assert OFFSETS["stones"] == 0 and OFFSETS["rank"] == 27
    assert ENCODERS["maddison"].num_planes == 36
    assert get_encoder("maddison").encoder_id == ENC_MADDISON


def test_unknown_encoder_names_the_valid_choices():
    with pytest.raises(ConfigError, match=r"'alphago'.*maddison, simple4"):
        ENCODERS["alphago"]
    with pytest.raises(ConfigError, match="valid choices"):
        get_encoder("")


# --- planes against the reference ----------------------------------------------------------------

@pytest.mark.parametrize(("n", "moves", "seed", "every"), [(9, 600, 0, 3), (19, 500, 1, 10)])
def test_every_plane_matches_a_brute_force_reference(n, moves, seed, every):
    checked = 0
    seen = np.zeros(NUM_PLANES, dtype=np.int64)
    for state, boards in random_positions(n, moves, seed, every):
        rank = (state.move_number % 11)  # 0..10: 10 is out of range, no rank plane
        planes = encode_maddison(state.arrays, rank)
        assert planes.shape == (NUM_PLANES, n, n) and planes.dtype == np.uint8
        expected = reference_planes(state, boards, rank)
        for name, _ in MADDISON_PLANES:
            np.testing.assert_array_equal(group(planes, name), group(expected, name), err_msg=f"{name}\n{state}")
        seen += planes.reshape(NUM_PLANES, -1).sum(axis=1, dtype=np.int64)
        checked += 1
    assert checked >= 50
    # the random positions exercised most planes (not the big capture or ladder bins on 19x19)
    assert (seen[:OFFSETS["capture_size"] + 2] > 0).all()


def test_one_hot_groups_sum_to_at_most_one_per_point():
    for state, _ in random_positions(9, 300, seed=5, every=5):
        planes = encode_maddison(state.arrays, 3)
        for name, _ in MADDISON_PLANES:
            total = group(planes, name).sum(axis=0)
            assert total.max() <= 1, name
        np.testing.assert_array_equal(group(planes, "stones").sum(axis=0), 1)
        assert set(np.unique(planes)) <= {0, 1}


def test_capture_size_and_liberties_after_on_known_captures():
    s = state_from_rows(pad([".XO..", "XO.O.", ".XO.."]))
    planes = encode_maddison(s.arrays, 0)
    cap = group(planes, "capture_size")
    # (1,2) takes the ko stone (1,1): one stone; its chain then has the single liberty (1,1)
    assert cap[0, 1, 2] == 1 and cap[:, 1, 2].sum() == 1
    assert group(planes, "liberties_after")[0, 1, 2] == 1
    assert cap.sum() == 1  # the only capture on the board
    s2 = state_from_rows(pad([
        ".XXX.",
        "XOOOX",
        ".XX..",
    ]))
    p2 = encode_maddison(s2.arrays, 0)
    assert group(p2, "capture_size")[2, 2, 3] == 1  # three stones
    # after (2,3): chain (2,1),(2,2),(2,3) has (2,0),(2,4),(3,1..3) plus the freed (1,1..3)
    libs = len({18, 22, 28, 29, 30, 10, 11, 12})
    assert group(p2, "liberties_after")[min(libs, 6) - 1, 2, 3] == 1


def test_legality_plane_equals_legal_mask_and_ko_is_respected():
    s = state_from_rows(pad([".XO..", "XO.O.", ".XO.."]))
    s.play(pt(9, 1, 2))  # black takes the ko; white may not retake at once
    planes = encode_maddison(s.arrays, 0)
    legal = group(planes, "legal")[0].reshape(-1)
    np.testing.assert_array_equal(legal, s.legal_mask()[:-1])
    assert legal[pt(9, 1, 1)] == 0
    # illegal points get no liberties-after, capture or ladder planes
    illegal = legal == 0
    for name in ("liberties_after", "capture_size", "ladder_capture"):
        assert not group(planes, name).reshape(GROUPS[name], -1)[:, illegal].any()


def test_turns_since_counts_moves_including_passes():
    s = GoRules(9).new_state()
    for m in [0, 80, 1, 81, 2, 79]:  # 81 is a pass
        s.play(m)
    turns = group(encode_maddison(s.arrays, 0), "turns_since").reshape(5, -1)
    expected = {79: 1, 2: 2, 1: 4, 80: 5, 0: 5}  # 79 is the last move, 0 six moves ago
    for p, age in expected.items():
        assert turns[age - 1, p] == 1 and turns[:, p].sum() == 1, p
    assert turns.sum() == len(expected)


def test_rank_planes():
    s = GoRules(9).new_state()
    for rank in range(1, 10):
        ranks = group(encode_maddison(s.arrays, rank), "rank")
        assert ranks[rank - 1].all() and ranks.sum() == 81
    for rank in (0, -1, 10):
        assert not group(encode_maddison(s.arrays, rank), "rank").any()


def test_planes_are_from_the_view_of_the_side_to_move():
    s = state_from_rows(pad(["XO.", "X.O", ".X."]), to_play=BLACK)
    w = state_from_rows(pad(["XO.", "X.O", ".X."]), to_play=WHITE)
    pb, pw = encode_maddison(s.arrays, 0), encode_maddison(w.arrays, 0)
    np.testing.assert_array_equal(pb[0], pw[1])
    np.testing.assert_array_equal(pb[1], pw[0])
    np.testing.assert_array_equal(pb[2], pw[2])
    np.testing.assert_array_equal(group(pb, "liberties"), group(pw, "liberties"))
    assert pb[0, 0, 0] == 1 and pw[1, 0, 0] == 1


def test_ladder_plane_marks_the_ladder_atari():
    n = 19
    s = GoRules(n).new_state().setup([pt(n, 8, 9), pt(n, 9, 8), pt(n, 10, 10)], [pt(n, 9, 9)])
    ladder = group(encode_maddison(s.arrays, 0), "ladder_capture")[0]
    assert ladder[9, 10] == 1 and ladder[10, 9] == 1 and ladder.sum() == 2
    s.setup([], [pt(n, 14, 5)])  # breaks the ladder running to the lower left only
    ladder = group(encode_maddison(s.arrays, 0), "ladder_capture")[0]
    assert ladder[9, 10] == 0 and ladder[10, 9] == 1 and ladder.sum() == 1


def test_encoding_leaves_the_state_unchanged():
    s = GoRules(19).new_state().setup([pt(19, 8, 9), pt(19, 9, 8), pt(19, 10, 10)], [pt(19, 9, 9)])
    before = [a.copy() for a in s.arrays]
    encode_maddison(s.arrays, 4)
    for a, b in zip(s.arrays, before, strict=True):
        np.testing.assert_array_equal(a, b)


# --- whole-game kernel ---------------------------------------------------------------------------

def random_game_moves(n: int, length: int, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    s = GoRules(n).new_state()
    moves = []
    while len(moves) < length and not s.is_over:
        legal = np.flatnonzero(s.legal_mask()[:-1])
        m = int(rng.choice(legal)) if len(legal) and rng.random() > 0.03 else n * n
        s.play(m)
        moves.append(m)
    return moves


@pytest.mark.parametrize("n", [9, 19])
def test_encode_game_matches_position_by_position_encoding(n):
    moves = random_game_moves(n, 150, seed=n)
    setup_black = [pt(n, 2, 2), pt(n, n - 3, n - 3)]
    ranks = {BLACK: 7, WHITE: 3}
    planes, targets, status = encode_game_arrays(
        "maddison", n, setup_black, [], moves, WHITE, rank_black=7, rank_white=3
    )
    assert status == -1 or status > 0  # the random game was made without the setup stones
    upto = len(moves) if status == -1 else status
    assert planes.shape == (len(moves), 36, n, n)
    s = GoRules(n).new_state().setup(setup_black, [])
    s.to_play = WHITE
    for i in range(upto):
        np.testing.assert_array_equal(planes[i], encode_maddison(s.arrays, ranks[s.to_play]), err_msg=f"move {i}")
        assert targets[i] == moves[i]
        s.play(moves[i])
    assert upto > 20


def test_encode_game_reports_the_first_illegal_move_and_bad_setup():
    n = 9
    moves = np.array([40, 41, 40, 3], dtype=np.int16)
    out = np.zeros((4, 36, n, n), dtype=np.uint8)
    targets = np.full(4, -1, dtype=np.int16)
    empty = np.zeros(0, dtype=np.int16)
    assert encode_game(n, empty, empty, moves, BLACK, 0, 0, ENC_MADDISON, out, targets) == 2
    assert list(targets) == [40, 41, -1, -1]
    assert out[1, 0].sum() == 0 and out[1, 1].sum() == 1 and out[1, 1, 4, 4] == 1  # white to move
    same = np.array([5], dtype=np.int16)
    assert encode_game(n, same, same, moves, BLACK, 0, 0, ENC_MADDISON, out, targets) == SETUP_INVALID
    with pytest.raises(ValueError):
        encode_game(n, empty, empty, moves, 0, 0, 0, ENC_MADDISON, out, targets)
    with pytest.raises(ValueError):
        encode_game(n, empty, empty, moves, BLACK, 0, 0, 7, out, targets)


def test_encode_game_pass_target_and_rank_of_the_player_to_move():
    n = 9
    planes, targets, status = encode_game_arrays("maddison", n, [], [], [40, 81, 41], BLACK, 5, 2)
    assert status == -1
    assert list(targets) == [40, 81, 41]
    ranks = [group(p, "rank") for p in planes]
    assert ranks[0][4].all() and ranks[0].sum() == 81  # black (5d) to move
    assert ranks[1][1].all() and ranks[1].sum() == 81  # white (2d) to move
    assert ranks[2][4].all()
