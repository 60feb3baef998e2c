"""Go rules kernels: captures, suicide, ko, superko, passes, scoring, setup, chains, ladders."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.errors import StonelabError
from stonelab.games.go.rules import (
    BLACK,
    EMPTY,
    GAME_OVER,
    KO,
    LADDER_MAX_DEPTH,
    OK,
    REASONS,
    SETUP_INVALID,
    WHITE,
    ZOBRIST,
    GameConfigError,
    GoRules,
    GoState,
    IllegalMove,
    area_counts,
    board_size,
    captures,
    consecutive_passes,
    is_over,
    ko_point,
    last_move,
    legal_reason,
    move_number,
    new_arrays,
    replay_game,
    replay_game_reason,
    set_superko,
    set_to_play,
    state_from_rows,
    to_play,
)
from stonelab.games.go.rules import point as pt


def where(state, ch: str) -> list[int]:
    colour = {"X": BLACK, "O": WHITE, ".": EMPTY}[ch]
    return [int(p) for p in np.flatnonzero(state.board == colour)]


def pad9(rows: list[str]) -> list[str]:
    """Pad a small top-left diagram to a 9x9 board."""
    rows = [r.replace(" ", "") for r in rows]
    return [r + "." * (9 - len(r)) for r in rows] + ["." * 9] * (9 - len(rows))


# --- brute-force references ----------------------------------------------------------------------

def flood_chain(board: np.ndarray, n: int, p: int) -> tuple[set[int], set[int]]:
    """(stones, liberties) of the chain on p, by plain flood fill."""
    colour = board[p]
    stones, libs, todo = {p}, set(), [p]
    while todo:
        q = todo.pop()
        r, c = divmod(q, n)
        for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= rr < n and 0 <= cc < n:
                t = rr * n + cc
                if board[t] == EMPTY:
                    libs.add(t)
                elif board[t] == colour and t not in stones:
                    stones.add(t)
                    todo.append(t)
    return stones, libs


def reference_play(board: np.ndarray, n: int, p: int, colour: int) -> np.ndarray | None:
    """Board after ``colour`` plays ``p`` (captures first, then suicide check); None if suicide/occupied."""
    if board[p] != EMPTY:
        return None
    b = board.copy()
    b[p] = colour
    r, c = divmod(p, n)
    for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
        if 0 <= rr < n and 0 <= cc < n and b[rr * n + cc] == -colour:
            stones, libs = flood_chain(b, n, rr * n + cc)
            if not libs:
                b[list(stones)] = EMPTY
    if not flood_chain(b, n, p)[1]:
        return None
    return b


def zobrist_of(board: np.ndarray) -> int:
    h = np.uint64(0)
    for p in np.flatnonzero(board):
        h ^= ZOBRIST[0 if board[p] == BLACK else 1, p]
    return int(h)


def check_chains(state) -> None:
    """Every incremental chain field against a flood fill of the board."""
    a = state.arrays
    board, head, nxt = a.board, a.group_head, a.group_next
    size, libs, libbits = a.group_size, a.group_liberty_count, a.group_liberty_bits
    n = state.n
    assert np.all(head[board == EMPTY] == -1)
    seen: set[int] = set()
    heads: set[int] = set()
    for p in np.flatnonzero(board):
        if p in seen:
            continue
        stones, flibs = flood_chain(board, n, int(p))
        seen |= stones
        h = head[p]
        assert all(head[s] == h for s in stones), f"chain ids differ in the chain on {p}"
        assert h not in heads, f"two chains share the id {h}"
        heads.add(h)
        assert size[h] == len(stones)
        assert libs[h] == len(flibs), f"chain {h}: {libs[h]} liberties kept, {len(flibs)} real"
        ring, s = [], h
        for _ in range(len(stones) + 1):
            ring.append(int(s))
            s = nxt[s]
        assert set(ring[:-1]) == stones and ring[-1] == h
        bits = np.unpackbits(libbits[h].view(np.uint8), bitorder="little")
        assert set(np.flatnonzero(bits).tolist()) == flibs
    assert state.hash == zobrist_of(board)


def random_game_states(n: int, moves: int, seed: int, superko: bool = False, boards: list | None = None):
    """Yield (state, move) along random legal games (mostly stone moves), restarting at game end.

    The generator plays ``move`` itself once the consumer resumes it. ``boards``, if
    given, is kept as the list of the current game's boards so far (the last is current).
    """
    rng = np.random.default_rng(seed)
    state = GoRules(n, superko=superko).new_state()
    if boards is not None:
        boards[:] = [state.board.copy()]
    for _ in range(moves):
        mask = state.legal_mask()
        legal = np.flatnonzero(mask[:-1])
        if state.is_over or len(legal) == 0 or rng.random() < 0.01:
            move = n * n
        else:
            move = int(rng.choice(legal))
        yield state, move
        state.play(move)
        if state.is_over or state.move_number > 3 * n * n:
            state = GoRules(n, superko=superko).new_state()
            if boards is not None:
                boards.clear()
        if boards is not None:
            boards.append(state.board.copy())


# --- captures ------------------------------------------------------------------------------------

def test_single_stone_capture_in_the_middle():
    s = state_from_rows(pad9([
        "....",
        "..X.",
        ".XO.",
        "..X.",
    ]))
    target = pt(9, 2, 2)
    assert s.liberties(target) == 1
    s.play(pt(9, 2, 3))
    assert s.board[target] == EMPTY
    assert s.captures == (1, 0)
    assert s.liberties(pt(9, 2, 3)) == 4
    check_chains(s)


def test_group_capture_frees_its_points_as_liberties():
    s = state_from_rows(pad9([
        ".XXX.",
        "XOOOX",
        ".XX..",
    ]))
    assert s.liberties(pt(9, 1, 1)) == 1
    s.play(pt(9, 2, 3))
    assert where(s, "O") == [] and s.captures == (3, 0)
    # the top chain: (0,0), (0,4) and the freed (1,1), (1,2), (1,3)
    assert s.liberties(pt(9, 0, 2)) == 5
    check_chains(s)


def test_group_capture_counts_and_chain_merges():
    s = state_from_rows(pad9([
        ".XX..",
        "XOOX.",
        ".X...",
    ]))
    assert s.liberties(pt(9, 1, 1)) == 1
    s.play(pt(9, 2, 2))
    assert s.board[pt(9, 1, 1)] == EMPTY and s.board[pt(9, 1, 2)] == EMPTY
    assert s.captures == (2, 0)
    check_chains(s)


@pytest.mark.parametrize(("rows", "move", "captured"), [
    (["OX", ".."], (1, 0), [(0, 0)]),  # corner stone
    (["..OOX", "..XX."], (0, 1), [(0, 2), (0, 3)]),  # two stones on the top edge
    (["OOX", "OX.", ".X."], (2, 0), [(0, 0), (0, 1), (1, 0)]),  # corner group of three
])
def test_capture_at_edges_and_corners(rows, move, captured):
    s = state_from_rows(pad9(rows))
    s.play(pt(9, *move))
    for r, c in captured:
        assert s.board[pt(9, r, c)] == EMPTY
    assert where(s, "O") == []
    assert s.captures == (len(captured), 0)
    check_chains(s)


# --- suicide, ko, superko ------------------------------------------------------------------------

def test_suicide_is_illegal_single_stone_and_group():
    s = state_from_rows(pad9([
        ".X...",
        "X.X..",
        ".X...",
    ]), to_play=WHITE)
    assert s.legal_reason(pt(9, 1, 1)) == "suicide"
    with pytest.raises(IllegalMove) as info:
        s.play(pt(9, 1, 1))
    assert info.value.reason == "suicide"
    # a group suicide: white filling its own last liberty
    s = state_from_rows(pad9([
        "O.X",
        "OXX",
        "X..",
    ]), to_play=WHITE)
    assert s.legal_reason(pt(9, 0, 1)) == "suicide"
    assert not s.legal_mask()[pt(9, 0, 1)]


def test_move_that_looks_suicidal_but_captures_is_legal():
    s = state_from_rows(pad9([
        ".XO..",
        "XO.O.",
        ".XO..",
    ]))
    p = pt(9, 1, 2)  # surrounded by white, but captures the white stone on (1,1)
    assert s.is_legal(p)
    s.play(p)
    assert s.board[pt(9, 1, 1)] == EMPTY and s.board[p] == BLACK
    assert s.liberties(p) == 1
    check_chains(s)


KO_ROWS = pad9([
    ".XO..",
    "XO.O.",
    ".XO..",
])


def test_simple_ko_forbidden_then_allowed_after_an_exchange():
    s = state_from_rows(KO_ROWS)
    take, back = pt(9, 1, 2), pt(9, 1, 1)
    s.play(take)
    assert s.ko_point == back
    assert s.legal_reason(back) == "ko"
    with pytest.raises(IllegalMove, match="ko") as info:
        s.play(back)
    assert info.value.reason == "ko"
    s.play(pt(9, 8, 8))  # white ko threat elsewhere
    assert s.ko_point == -1
    s.play(pt(9, 8, 7))  # black answers
    assert s.is_legal(back)
    s.play(back)  # white retakes
    assert s.board[take] == EMPTY and s.ko_point == take
    check_chains(s)


def test_the_ko_ban_binds_only_the_colour_that_would_retake():
    # GTP and SGF records let one colour move twice in a row: after black takes the ko,
    # black may fill the ko point itself; white still may not retake there at once
    s = state_from_rows(KO_ROWS)
    take, back = pt(9, 1, 2), pt(9, 1, 1)
    s.play(take)
    s.to_play = BLACK
    assert s.ko_point == -1 and ko_point(s.arrays) == -1
    assert s.legal_reason(back) == "ok" and s.legal_mask()[back]
    s.to_play = WHITE
    assert s.ko_point == back and s.legal_reason(back) == "ko" and not s.legal_mask()[back]
    s.to_play = BLACK
    s.play(back)  # black connects: no ko left for anyone
    s.to_play = WHITE
    assert s.ko_point == -1 and s.board[back] == BLACK
    check_chains(s)


def test_capturing_two_stones_is_not_ko():
    s = state_from_rows(pad9([
        ".XXO.",
        "XOO.O",
        ".XXO.",
    ]))
    s.play(pt(9, 1, 3))  # one stone takes two and is left with one liberty
    assert s.captures == (2, 0) and s.liberties(pt(9, 1, 3)) == 1
    assert s.ko_point == -1
    assert s.is_legal(pt(9, 1, 2))  # white may take back at once: a new position, not ko
    s.play(pt(9, 1, 2))
    assert s.board[pt(9, 1, 3)] == EMPTY
    check_chains(s)


def triple_ko_position(superko: bool):
    """Three kos: (white-in, white-in, black-in); a 6-move cycle of captures repeats it."""
    n = 9
    black, white = [], []

    def frame(r0, c0, state):
        black.extend([pt(n, r0, c0 + 1), pt(n, r0 + 1, c0), pt(n, r0 + 2, c0 + 1)])
        white.extend([pt(n, r0, c0 + 2), pt(n, r0 + 1, c0 + 3), pt(n, r0 + 2, c0 + 2)])
        left, right = pt(n, r0 + 1, c0 + 1), pt(n, r0 + 1, c0 + 2)
        (white if state == "w" else black).append(left if state == "w" else right)
        return left, right

    k1 = frame(0, 0, "w")
    k2 = frame(0, 5, "w")
    k3 = frame(5, 0, "b")
    s = GoRules(n, superko=superko).new_state().setup(black, white)
    # black takes at R, white at L
    cycle = [k1[1], k3[0], k2[1], k1[0], k3[1], k2[0]]
    return s, cycle


def test_triple_ko_cycle_is_legal_without_superko_and_repeats_the_position():
    s, cycle = triple_ko_position(superko=False)
    start = s.board.copy()
    for m in cycle:
        before = s.captures
        s.play(m)
        assert sum(s.captures) == sum(before) + 1
        check_chains(s)
    np.testing.assert_array_equal(s.board, start)


def test_triple_ko_cycle_last_move_is_superko_when_enforced():
    s, cycle = triple_ko_position(superko=True)
    for m in cycle[:-1]:
        s.play(m)
    assert s.legal_reason(cycle[-1]) == "superko"
    assert not s.legal_mask()[cycle[-1]]
    with pytest.raises(IllegalMove) as info:
        s.play(cycle[-1])
    assert info.value.reason == "superko"
    assert s.is_legal(9 * 9)  # passing is always allowed


def test_superko_history_grows_past_its_first_capacity():
    s, cycle = triple_ko_position(superko=True)
    small = new_arrays(9, 2)
    set_superko(small, True)
    t = GoState(s.rules, small).setup(where(s, "X"), where(s, "O"))
    for m in cycle[:-1]:
        t.play(m)
    assert t.arrays.position_hashes.shape[0] > 2
    assert t.legal_reason(cycle[-1]) == "superko"


# --- passes, scoring, setup ----------------------------------------------------------------------

def test_two_passes_end_the_game_and_a_move_between_resets_the_count():
    s = GoRules(9).new_state()
    PASS = 81
    s.play(PASS)
    assert not s.is_over and s.to_play == WHITE
    s.play(40)
    s.play(PASS)
    assert not s.is_over
    s.play(PASS)
    assert s.is_over
    assert s.last_move == PASS
    assert legal_reason(s.arrays, 0) == GAME_OVER
    assert not s.legal_mask().any()
    with pytest.raises(IllegalMove) as info:
        s.play(PASS)
    assert info.value.reason == "game_over"


@pytest.mark.parametrize(("rows", "komi", "expected"), [
    (["." * 9] * 9, 7.5, -7.5),  # empty board: no one's area
    (["X.XXO...."] * 9, 7.5, 36 - 45 - 7.5),  # black owns 4 columns (one empty), white 5
    (["X...O...."] * 9, 0.5, 9 - 45 - 0.5),  # columns 1..3 touch both: neutral
    (pad9(["X"]), 6.5, 81 - 6.5),  # one black stone owns the board
])
def test_tromp_taylor_area_score(rows, komi, expected):
    s = state_from_rows(rows, komi=komi)
    assert s.score() == pytest.approx(expected)


def test_area_score_counts_eyes_and_leaves_dame_out():
    s = state_from_rows([
        ".X.XO.O.O",
        "XXXXO.OOO",
        ".....OO..",
    ] + ["." * 9] * 6, komi=0.0)
    black, white = area_counts(s.arrays)
    assert black == 6 + 2  # stones + the points (0,0) and (0,2)
    assert white == 9 + 3  # stones + (0,5), (1,5) and (0,7); the open area touches both
    assert s.score() == pytest.approx(8 - 12)


def test_area_score_after_taking_dead_stones_off():
    rows = ["....XO...", ".O..XO...", "....XO..X"] + ["....XO..."] * 6  # a white stone in black's area, a black in white's
    s = state_from_rows(rows, komi=7.5)
    assert s.score() == pytest.approx(10 - 10 - 7.5)  # both areas touch both colours: only stones count
    dead = [pt(9, 1, 1), pt(9, 2, 8)]
    assert s.score(dead) == pytest.approx(45 - 36 - 7.5)  # their points go to the side around them
    assert s.board[dead].tolist() == [-1, 1]  # the position itself is untouched


def test_handicap_setup_places_stones_without_moves():
    rules = GoRules(19, komi=0.5)
    s = rules.new_state()
    stars = [pt(19, 3, 3), pt(19, 15, 15), pt(19, 3, 15), pt(19, 15, 3)]
    s.setup(stars, [])
    s.to_play = WHITE
    assert s.move_number == 0 and s.to_play == WHITE
    assert where(s, "X") == sorted(stars)
    assert all(s.liberties(p) == 4 for p in stars)
    assert s.captures == (0, 0)
    s.play(pt(19, 9, 9))
    assert s.board[pt(19, 9, 9)] == WHITE and s.to_play == BLACK
    check_chains(s)


def test_setup_errors_leave_the_state_unchanged():
    s = GoRules(9).new_state().setup([0, 1], [2])
    with pytest.raises(IllegalMove) as info:
        s.setup([1], [])
    assert info.value.reason == "occupied"
    with pytest.raises(IllegalMove) as info:
        s.setup([5, 5], [])
    assert info.value.reason == "occupied"
    with pytest.raises(IllegalMove) as info:
        s.setup([81], [])
    assert info.value.reason == "off_board"
    with pytest.raises(IllegalMove) as info:  # a white stone with no liberty
        s.setup([22, 30, 32, 40], [31])
    assert info.value.reason == "suicide"
    assert where(s, "X") == [0, 1] and where(s, "O") == [2]
    check_chains(s)


def test_to_play_setter_rejects_other_values():
    s = GoRules(9).new_state()
    with pytest.raises(ValueError):
        s.to_play = 0


# --- illegal move reasons and rules validation ---------------------------------------------------

def test_illegal_move_reasons():
    s = state_from_rows(KO_ROWS)
    for move, reason in [(-1, "off_board"), (82, "off_board"), (pt(9, 0, 1), "occupied")]:
        with pytest.raises(IllegalMove) as info:
            s.play(move)
        assert info.value.reason == reason and info.value.move == move
        assert isinstance(info.value, StonelabError)
    for bad in ("a1", 3.0, None, True):
        with pytest.raises(IllegalMove) as info:
            s.play(bad)
        assert info.value.reason == "off_board"
    assert set(REASONS) == {"ok", "off_board", "occupied", "suicide", "ko", "superko", "game_over"}
    # a failed play leaves the state as it was
    before = s.board.copy()
    with pytest.raises(IllegalMove):
        s.play(pt(9, 0, 1))
    np.testing.assert_array_equal(s.board, before)
    assert s.to_play == BLACK and s.move_number == 0


@pytest.mark.parametrize("n", [9, 13, 19])
def test_rules_accept_board_sizes(n):
    rules = GoRules(n)
    assert (rules.n, rules.num_points, rules.pass_move, rules.num_actions) == (n, n * n, n * n, n * n + 1)
    s = rules.new_state()
    assert s.board.shape == (n * n,) and s.board.dtype == np.int8 and not s.board.any()
    assert s.to_play == BLACK and not s.is_over
    assert s.legal_mask().all()
    assert rules.name == f"go_{n}x{n}"


@pytest.mark.parametrize("n", [8, 20, 0, -9, "19", 19.0, True])
def test_rules_reject_bad_board_sizes(n):
    with pytest.raises(GameConfigError, match=r"game\.board_size.*9\.\.19"):
        GoRules(n)


@pytest.mark.parametrize("komi", ["lots", None, float("nan")])
def test_rules_reject_bad_komi(komi):
    with pytest.raises(GameConfigError, match=r"game\.komi"):
        GoRules(9, komi=komi)


def test_copy_is_independent():
    s = GoRules(9).new_state()
    s.play(40)
    c = s.copy()
    c.play(41)
    assert s.board[41] == EMPTY and c.board[41] == WHITE
    assert s.move_number == 1 and c.move_number == 2


# --- incremental chains against flood fill, legality against a reference ------------------------

@pytest.mark.parametrize(("n", "moves", "seed"), [(9, 2000, 0), (13, 1000, 1), (19, 800, 2)])
def test_incremental_chains_match_flood_fill_over_random_games(n, moves, seed):
    captures = 0
    history: list[np.ndarray] = []
    for i, (state, _) in enumerate(random_game_states(n, moves, seed, boards=history)):
        check_chains(state)
        captures += len(history) > 1 and np.count_nonzero(history[-2]) >= np.count_nonzero(state.board)
        if i % 4:
            continue
        # legality against a reference: not suicide, and no immediate position repetition (ko)
        mask = state.legal_mask()
        assert mask[n * n]
        for p in range(n * n):
            after = reference_play(state.board, n, p, state.to_play)
            ref_legal = after is not None and not (len(history) >= 2 and np.array_equal(after, history[-2]))
            assert mask[p] == ref_legal, f"point {p}: kernel {mask[p]}, reference {ref_legal}"
    assert captures > 30  # the random games did exercise captures  # the random games did exercise captures


def test_positions_hash_matches_zobrist_of_the_board_after_captures():
    for state, _ in random_game_states(9, 400, seed=9):
        assert state.hash == zobrist_of(state.board)


# --- whole-game replay ---------------------------------------------------------------------------

def test_replay_game_accepts_a_legal_game_and_finds_the_first_illegal_move():
    n = 9
    moves = np.array([40, 41, 31, 81, 81], dtype=np.int16)
    empty = np.zeros(0, dtype=np.int16)
    assert replay_game(n, empty, empty, moves, BLACK, False) == -1
    bad = np.array([40, 41, 40, 3], dtype=np.int16)
    assert replay_game_reason(n, empty, empty, bad, BLACK, False) == (2, 2)  # occupied
    assert REASONS[replay_game_reason(n, empty, empty, bad, BLACK, False)[1]] == "occupied"
    after_end = np.array([81, 81, 3], dtype=np.int16)
    assert replay_game_reason(n, empty, empty, after_end, BLACK, False) == (2, GAME_OVER)


def test_replay_game_with_handicap_and_ko():
    # The KO_ROWS fight replayed from setup stones: take, immediate retake is illegal.
    s = state_from_rows(KO_ROWS)
    black = np.array(where(s, "X"), dtype=np.int16)
    white = np.array(where(s, "O"), dtype=np.int16)
    moves = np.array([pt(9, 1, 2), pt(9, 1, 1)], dtype=np.int16)
    assert replay_game_reason(9, black, white, moves, BLACK, False) == (1, KO)
    moves = np.array([pt(9, 1, 2), 80, 79, pt(9, 1, 1)], dtype=np.int16)
    assert replay_game(9, black, white, moves, BLACK, False) == -1
    assert replay_game(9, black, black, moves, BLACK, False) == SETUP_INVALID
    assert replay_game(9, black, white, moves[:0], WHITE, False) == -1


def test_replay_game_rejects_a_bad_first_player():
    empty = np.zeros(0, dtype=np.int16)
    with pytest.raises(ValueError):
        replay_game(9, empty, empty, np.array([1], dtype=np.int16), 0, False)


# --- ladders -------------------------------------------------------------------------------------

def ladder_position(extra_black=(), extra_white=()):
    """White (9,9) with two liberties; black plays (9,10) and the ladder runs to the lower left."""
    n = 19
    s = GoRules(n).new_state()
    s.setup([pt(n, 8, 9), pt(n, 9, 8), pt(n, 10, 10), *extra_black], [pt(n, 9, 9), *extra_white])
    return s, pt(n, 9, 10)


def test_classic_ladder_works():
    s, atari = ladder_position()
    before = [a.copy() for a in s.arrays]
    assert s.ladder_capture(atari)
    for a, b in zip(s.arrays, before, strict=True):
        np.testing.assert_array_equal(a, b)  # reading works on copies
    # a white stone far from the ladder's path changes nothing
    s2, _ = ladder_position(extra_white=[pt(19, 2, 16)])
    assert s2.ladder_capture(atari)
    # an extra black stone on the path does not break it either
    s3, _ = ladder_position(extra_black=[pt(19, 14, 5)])
    assert s3.ladder_capture(atari)


@pytest.mark.parametrize("breaker", [(14, 5), (16, 2), (12, 7)])
def test_ladder_breaker_breaks_it(breaker):
    s, atari = ladder_position(extra_white=[pt(19, *breaker)])
    assert not s.ladder_capture(atari)


def test_ladder_fails_when_the_prey_can_capture_an_attacker_in_atari():
    # Black (9,8) is in atari (white on (8,8) and (9,7)): white takes it instead of running.
    s, atari = ladder_position(extra_white=[pt(19, 8, 8), pt(19, 9, 7)])
    assert s.liberties(pt(19, 9, 8)) == 1
    assert not s.ladder_capture(atari)
    assert python_ladder(s, atari) is False


def test_ladder_capture_false_for_non_atari_and_illegal_points():
    s, atari = ladder_position()
    assert not s.ladder_capture(pt(19, 0, 0))  # ataris nothing
    assert not s.ladder_capture(pt(19, 9, 9))  # occupied
    assert not s.ladder_capture(19 * 19)  # pass


def test_ladder_escape():
    s, atari = ladder_position()
    s.play(atari)  # white to move, (9,9) in atari
    assert not s.ladder_escape(pt(19, 10, 9))  # running does not help
    s2, atari2 = ladder_position(extra_white=[pt(19, 14, 5)])
    s2.play(atari2)
    assert s2.ladder_escape(pt(19, 10, 9))  # with a breaker it does
    assert not s2.ladder_escape(pt(19, 0, 0))  # not next to a chain in atari


def neighbours(n: int, p: int):
    r, c = divmod(p, n)
    return [rr * n + cc for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)) if 0 <= rr < n and 0 <= cc < n]


def python_ladder(state, point, depth=LADDER_MAX_DEPTH) -> bool:
    """Reference ladder reader on plain boards, written from the rules in the docstring."""
    n = state.n
    if point == n * n or not state.is_legal(point):
        return False
    attacker = state.to_play

    def lost(b, prey, d):  # prey in atari, defender to move
        if d + 2 >= depth:
            return False
        stones, libs = flood_chain(b, n, prey)
        for x in stones:
            for t in neighbours(n, x):
                if b[t] == attacker and len(flood_chain(b, n, t)[1]) == 1:
                    return False  # captures an attacker in atari
        if len(libs) != 1:
            return False
        b1 = reference_play(b, n, libs.pop(), -attacker)
        if b1 is None:
            return True
        libs2 = flood_chain(b1, n, prey)[1]
        if len(libs2) != 2:
            return len(libs2) <= 1
        for a in sorted(libs2):
            b2 = reference_play(b1, n, a, attacker)
            if b2 is not None and b2[prey] == -attacker and len(flood_chain(b2, n, prey)[1]) == 1:
                if lost(b2, prey, d + 2):
                    return True
        return False

    b0 = reference_play(state.board, n, point, attacker)
    return any(
        b0[q] == -attacker and len(flood_chain(b0, n, q)[1]) == 1 and lost(b0, q, 0)
        for q in neighbours(n, point)
    )


def test_ladder_reader_matches_a_python_reference_on_random_positions():
    checked = ladders = 0
    for state, _ in random_game_states(9, 700, seed=4):
        if state.move_number % 3:
            continue
        n = state.n
        for p in range(n * n):
            if state.board[p] != EMPTY or not state.is_legal(p):
                continue
            two = any(state.board[q] == -state.to_play and state.liberties(q) == 2 for q in neighbours(n, p))
            if not two:
                continue
            expected = python_ladder(state, p)
            assert state.ladder_capture(p) == expected, f"point {p}\n{state}"
            checked += 1
            ladders += expected
    assert checked > 100 and ladders > 10


def test_info_last_move_starts_at_minus_one():
    s = GoRules(9).new_state()
    assert last_move(s.arrays) == -1 and s.last_move == -1
    assert legal_reason(s.arrays, 0) == OK


def test_named_fields_and_info_accessors_agree_with_the_state():
    s = GoRules(9).new_state().play(pt(9, 2, 2)).play(pt(9, 2, 3))
    a = s.arrays
    assert a._fields == ("board", "group_head", "group_next", "group_size", "group_liberty_count",
                         "group_liberty_bits", "placed_move", "info", "position_hashes", "neighbours")
    assert (board_size(a), to_play(a), move_number(a), last_move(a), ko_point(a)) == (
        9, s.to_play, s.move_number, s.last_move, s.ko_point)
    assert captures(a) == s.captures and not is_over(a)
    s.play(81).play(81)
    assert is_over(s.arrays) and consecutive_passes(s.arrays) == 2 and s.is_over
    s.resume_play()
    assert not s.is_over and consecutive_passes(s.arrays) == 0 and s.is_legal(0)
    set_to_play(s.arrays, WHITE)
    assert s.to_play == WHITE
