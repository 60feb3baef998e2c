"""Othello through the game-agnostic search kernels: perft against known counts and a plain-Python
reference, passes as actions, planes, move checks, and whole games in pure and batched MCTS."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.arena.players import play_match, pure_mcts_player
from stonelab.games.othello.players import RandomPlayer
from stonelab.games.othello.rules import BLACK, MOVES, MUST_PASS, OVER, WHITE, OthelloRules, board_from_rows
from stonelab.games.othello.search import (
    INFO_LEN,
    NUM_DISCS,
    NUM_PLANES,
    OTHELLO_PLANES,
    STATE,
    TO_PLAY,
    OthelloGame,
    OthelloPosition,
    OthelloSearch,
    perft,
)
from stonelab.search import tree as T
from stonelab.search.game import DRAW, MOVER_LOSES, MOVER_WINS, ONGOING
from stonelab.search.mcts import BatchedMCTS, MCTSConfig
from stonelab.search.pure_mcts import pure_mcts_search
from stonelab.search.selfplay import SelfPlaySlots

# --- a plain-Python reference: boards are tuples, its own flip logic ------------------------------

DIRECTIONS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]

# Black to move has no placing move (every white line ends off the board or on an empty
# point); white can take black's only disc from (3, 3), and then black has no disc left.
BLACK_MUST_PASS = ["OOO.",
                   "OOO.",
                   "OOX.",
                   "...."]


def ref_flips(board: tuple, n: int, p: int, colour: int) -> list[int]:
    """The points ``colour`` flips by playing on ``p`` (empty list: not a legal placement)."""
    if board[p] != 0:
        return []
    r, c = divmod(p, n)
    flips = []
    for dr, dc in DIRECTIONS:
        line, rr, cc = [], r + dr, c + dc
        while 0 <= rr < n and 0 <= cc < n and board[rr * n + cc] == -colour:
            line.append(rr * n + cc)
            rr, cc = rr + dr, cc + dc
        if line and 0 <= rr < n and 0 <= cc < n and board[rr * n + cc] == colour:
            flips += line
    return flips


def ref_children(board: tuple, n: int, colour: int) -> list[tuple[int, tuple, int]]:
    """(move, board, colour to play) after every legal move; the pass (``n * n``) when it is
    the only one; [] once the game is over."""
    children = []
    for p in range(n * n):
        flips = ref_flips(board, n, p, colour)
        if flips:
            after = list(board)
            for q in [p, *flips]:
                after[q] = colour
            children.append((p, tuple(after), -colour))
    if children:
        return children
    if any(ref_flips(board, n, p, -colour) for p in range(n * n)):
        return [(n * n, board, -colour)]
    return []


def ref_perft(board: tuple, n: int, colour: int, depth: int) -> int:
    if depth == 0:
        return 1
    children = ref_children(board, n, colour)
    if not children:
        return 1  # the game ended: one leaf
    if depth == 1:
        return len(children)
    return sum(ref_perft(b, n, c, depth - 1) for _, b, c in children)


def ref_start(n: int) -> tuple:
    board = [0] * (n * n)
    h = n // 2
    board[(h - 1) * n + h - 1] = board[h * n + h] = -1
    board[(h - 1) * n + h] = board[h * n + h - 1] = 1
    return tuple(board)


# --- perft ---------------------------------------------------------------------------------------

PERFT_8X8 = [4, 12, 56, 244, 1396, 8200, 55092, 390216]


@pytest.mark.parametrize("depth", range(1, 9))
def test_perft_from_the_8x8_start_matches_the_known_counts(depth):
    assert perft(8, depth=depth) == PERFT_8X8[depth - 1]
    assert perft(OthelloGame(8), depth=depth) == PERFT_8X8[depth - 1]


@pytest.mark.parametrize(("n", "depths"), [(8, range(1, 6)), (6, range(1, 7))])
def test_perft_matches_the_python_reference(n, depths):
    for depth in depths:
        assert perft(n, depth=depth) == ref_perft(ref_start(n), n, 1, depth), (n, depth)


def test_perft_of_whole_4x4_games_with_passes_and_early_ends():
    # 4x4 games end within 12 placements plus passes, many before the board is full
    for depth in (6, 9, 12, 30):
        assert perft(4, depth=depth) == ref_perft(ref_start(4), 4, 1, depth), depth


def test_perft_from_a_forced_pass_and_from_a_finished_game():
    search = OthelloSearch(OthelloRules(4))
    must_pass = search.position(board_from_rows(BLACK_MUST_PASS), BLACK)
    ref = tuple(int(s) for s in must_pass.board)
    for depth in range(0, 6):
        assert perft(4, must_pass, depth) == ref_perft(ref, 4, 1, depth)
    assert perft(4, must_pass, 1) == 1  # only the pass
    over = search.position(board_from_rows(["XXXX", "....", "OOOO", "OOOO"]), WHITE)
    assert [perft(4, over, d) for d in range(4)] == [1, 1, 1, 1]


# --- the kernels against the reference over random games -----------------------------------------


@pytest.mark.parametrize("n", [4, 6, 8])
def test_random_games_agree_with_the_reference_move_by_move(n):
    search = OthelloSearch(OthelloRules(n))
    rng = np.random.default_rng(n)
    for _ in range(30 if n < 8 else 15):
        positions = search.new_positions(1)
        board, colour = ref_start(n), 1
        while True:
            children = ref_children(board, n, colour)
            legal = search.legal_moves(positions, 0)
            assert set(np.flatnonzero(legal)) == {m for m, _, _ in children}
            move, board, colour = children[rng.integers(len(children))]
            outcome = T.play_position(search.spec, positions, 0, move)
            assert tuple(positions.board[0]) == board
            assert positions.info[0, TO_PLAY] == colour
            assert positions.info[0, NUM_DISCS] == sum(s != 0 for s in board)
            if ref_children(board, n, colour):
                assert outcome == ONGOING
                continue
            margin = sum(board) * -colour  # for the mover
            assert outcome == (MOVER_WINS if margin > 0 else MOVER_LOSES if margin < 0 else DRAW)
            assert not search.legal_moves(positions, 0).any()
            break


# --- passes, positions and move checks -----------------------------------------------------------


def test_the_pass_is_the_only_legal_move_when_a_side_must_pass():
    search = OthelloSearch(OthelloRules(4))
    pos = search.position(board_from_rows(BLACK_MUST_PASS), BLACK)
    positions = OthelloPosition(pos.board[None].copy(), pos.info[None].copy())
    assert positions.info[0, STATE] == MUST_PASS
    legal = search.legal_moves(positions, 0)
    assert np.flatnonzero(legal).tolist() == [16]
    assert search.illegal_reason(positions, 0, 16) is None
    assert "flips nothing" in search.illegal_reason(positions, 0, 3)
    assert "must pass" in search.illegal_reason(positions, 0, 3)
    assert T.play_position(search.spec, positions, 0, 16) == ONGOING
    assert positions.info[0, TO_PLAY] == WHITE and positions.info[0, STATE] == MOVES
    np.testing.assert_array_equal(positions.board[0], pos.board)  # a pass changes no disc
    assert search.legal_moves(positions, 0)[15]  # white takes the black disc from (3, 3)
    # ... which wipes black out: the game ends, white wins
    assert T.play_position(search.spec, positions, 0, 15) == MOVER_WINS
    assert positions.info[0, STATE] == OVER
    assert "game is over" in search.illegal_reason(positions, 0, 3)


def test_a_move_that_leaves_the_opponent_no_move_forces_its_pass():
    # white to move; (0, 0) flips (0, 1) and leaves BLACK_MUST_PASS: black has no placing move
    search = OthelloSearch(OthelloRules(4))
    pos = search.position(board_from_rows([".XO.",
                                           "OOO.",
                                           "OOX.",
                                           "...."]), WHITE)
    positions = OthelloPosition(pos.board[None].copy(), pos.info[None].copy())
    assert T.play_position(search.spec, positions, 0, 0) == ONGOING
    np.testing.assert_array_equal(positions.board[0], board_from_rows(BLACK_MUST_PASS))
    assert positions.info[0, STATE] == MUST_PASS
    assert np.flatnonzero(search.legal_moves(positions, 0)).tolist() == [16]


def test_illegal_reasons_name_the_rule():
    search = OthelloSearch(OthelloRules(8))
    positions = search.new_positions(2)
    assert "off the board" in search.illegal_reason(positions, 1, -1)
    assert "off the board" in search.illegal_reason(positions, 1, 65)
    assert "occupied" in search.illegal_reason(positions, 1, 27)
    assert "flips nothing" in search.illegal_reason(positions, 1, 0)
    assert "pass while a move exists" in search.illegal_reason(positions, 1, 64)
    assert search.illegal_reason(positions, 1, 19) is None  # d3
    with pytest.raises(ValueError, match="pass while a move exists"):
        BatchedMCTS(OthelloRules(8), 1, MCTSConfig(playouts=4)).play(0, 64)


def test_start_positions_and_position_helper_agree():
    search = OthelloSearch(OthelloRules(6))
    positions = search.new_positions(3)
    assert positions.board.shape == (3, 36) and positions.info.shape == (3, INFO_LEN)
    T.play_position(search.spec, positions, 1, 8)
    search.reset_position(positions, 1)
    one = search.position(OthelloRules(6).new_board(), BLACK)
    for i in range(3):
        np.testing.assert_array_equal(positions.board[i], one.board)
        np.testing.assert_array_equal(positions.info[i], one.info)


def test_planes_from_the_movers_view():
    search = OthelloSearch(OthelloRules(8))
    mcts = BatchedMCTS(search, 1, MCTSConfig(playouts=4))
    planes = mcts.root_planes(0)
    assert planes.shape == (NUM_PLANES, 8, 8) == (len(OTHELLO_PLANES), 8, 8)
    board = OthelloRules(8).new_board().reshape(8, 8)
    np.testing.assert_array_equal(planes[0], board == BLACK)
    np.testing.assert_array_equal(planes[1], board == WHITE)
    np.testing.assert_array_equal(planes[2].reshape(64), search.legal_moves(mcts.roots, 0)[:64])
    assert planes[3].all()
    mcts.play(0, 19)  # d3: white to move
    planes = mcts.root_planes(0)
    board = mcts.root_board[0].reshape(8, 8)
    np.testing.assert_array_equal(planes[0], board == WHITE)
    np.testing.assert_array_equal(planes[1], board == BLACK)
    assert planes[2].sum() == 3


# --- search ---------------------------------------------------------------------------------------


def uniform(num_actions):
    def evaluate(planes):
        b = planes.shape[0]
        return np.full((b, num_actions), 1.0 / num_actions, np.float32), np.zeros(b, np.float32)

    return evaluate


@pytest.mark.parametrize("n", [6, 8])
def test_batched_search_plays_a_whole_game_legally(n):
    search = OthelloSearch(OthelloRules(n))
    mcts = BatchedMCTS(search, 2, MCTSConfig(playouts=24, leaves_per_game=2))
    evaluate = uniform(search.num_actions)
    outcomes = [ONGOING, ONGOING]
    while ONGOING in outcomes:
        visits = mcts.search(evaluate)
        for g in range(2):
            if outcomes[g] != ONGOING:
                assert not visits[g].any()
                continue
            legal = search.legal_moves(mcts.roots, g)
            assert visits[g].sum() >= 24 and not visits[g][~legal].any()
            move = int(np.argmax(visits[g]))
            assert search.illegal_reason(mcts.roots, g, move) is None
            outcomes[g] = mcts.play(g, move)
    assert set(outcomes) <= {MOVER_WINS, DRAW, MOVER_LOSES}


def test_selfplay_finishes_othello_games():
    search = OthelloSearch(OthelloRules(6))
    slots = SelfPlaySlots(search, 2, MCTSConfig(playouts=8), temperature_moves=10)
    games = slots.play(uniform(search.num_actions), 2, np.random.default_rng(0))
    assert len(games.lengths) >= 2 and np.all(games.lengths > 0)
    assert games.policies.shape[1] == 37 and games.planes.shape[1:] == (NUM_PLANES, 6, 6)
    assert set(games.values.tolist()) <= {-1.0, 0.0, 1.0}


def test_pure_mcts_is_seeded():
    search = OthelloSearch(OthelloRules(6))
    root = search.new_positions(1)
    root = OthelloPosition(root.board[0], root.info[0])
    a = pure_mcts_search(search.spec, root, 300, 5.0, 3)
    b = pure_mcts_search(search.spec, root, 300, 5.0, 3)
    np.testing.assert_array_equal(a, b)
    assert a.sum() == 299 and np.count_nonzero(a) == 4


def test_pure_mcts_beats_random_play_on_6x6():
    rules = OthelloRules(6)
    games: list = []
    result = play_match(rules, pure_mcts_player(rules, 200, seed=1), RandomPlayer(rules, seed=2), 10,
                        games_out=games)
    assert result.wins >= 8, result
    search = rules.search_game()
    for game in games:  # every game was played to its end, and only then ended
        positions = search.new_positions(1)
        outcomes = [T.play_position(search.spec, positions, 0, m) for m in game["moves"]]
        assert outcomes[-1] != ONGOING and set(outcomes[:-1]) == {ONGOING}
