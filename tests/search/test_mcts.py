"""Batched neural MCTS with handmade evaluators (no network)."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.games.gomoku.rules import (
    BLACK,
    DRAW,
    MOVER_WINS,
    ONGOING,
    WHITE,
    GomokuRules,
    board_from_rows,
    line_length,
    outcome_after,
    would_win,
)
from stonelab.games.gomoku.search import NUM_STONES, TO_PLAY
from stonelab.search import tree as T
from stonelab.search.mcts import BatchedMCTS, MCTSConfig, SearchConfigError, visits_to_policy

# --- helpers -----------------------------------------------------------------------------------


def uniform_evaluator(num_actions: int):
    def evaluate(planes):
        b = planes.shape[0]
        return np.full((b, num_actions), 1.0 / num_actions, np.float32), np.zeros(b, np.float32)

    return evaluate


def planes_to_board(planes: np.ndarray) -> tuple[np.ndarray, int]:
    """Board (+1 black, -1 white) and colour to move from one ``[4, n, n]`` plane stack."""
    to_play = BLACK if planes[3, 0, 0] == 1.0 else WHITE
    own = planes[0].reshape(-1).astype(np.int8)
    opp = planes[1].reshape(-1).astype(np.int8)
    return (own - opp) * to_play, to_play


def win_aware_evaluator(rules: GomokuRules, *, terminal_check: bool = True):
    """Priors favour the mover's immediate wins (else uniform over empties); value 0.

    Also asserts that it is never handed a finished position.
    """
    n, k, a = rules.n, rules.k, rules.num_actions

    def evaluate(planes):
        b = planes.shape[0]
        priors = np.zeros((b, a), np.float32)
        for i in range(b):
            board, to_play = planes_to_board(planes[i])
            if terminal_check:
                assert_not_terminal(board, n, k)
            empty = board == 0
            priors[i, empty] = 1.0
            for m in np.flatnonzero(empty):
                if would_win(board, n, k, m, to_play):
                    priors[i, m] = 100.0
            priors[i] /= priors[i].sum()
        return priors, np.zeros(b, np.float32)

    return evaluate


def assert_not_terminal(board: np.ndarray, n: int, k: int) -> None:
    assert not (board != 0).all(), "a full (drawn) board was sent to the evaluator"
    for m in np.flatnonzero(board):
        assert line_length(board, n, int(m)) < k, "a won position was sent to the evaluator"


class Recorder:
    """Wraps an evaluator, recording every call's batch size; optionally checks for terminals."""

    def __init__(self, evaluate, rules: GomokuRules | None = None):
        self.evaluate = evaluate
        self.rules = rules
        self.batches: list[int] = []

    def __call__(self, planes):
        assert planes.ndim == 4 and planes.shape[1] == 4
        assert planes.dtype == np.float32
        if self.rules is not None:
            for p in planes:
                board, _ = planes_to_board(p)
                assert_not_terminal(board, self.rules.n, self.rules.k)
        self.batches.append(planes.shape[0])
        return self.evaluate(planes)


def set_position(mcts: BatchedMCTS, g: int, rows: list[str], to_play: int = BLACK) -> None:
    """Reach the position of ``rows`` in game ``g`` by alternating black and white moves."""
    board = board_from_rows(rows)
    blacks = [int(a) for a in np.flatnonzero(board == BLACK)]
    whites = [int(a) for a in np.flatnonzero(board == WHITE)]
    assert len(blacks) - len(whites) in (0, 1)
    mcts.reset(g)
    for i in range(len(blacks) + len(whites)):
        move = blacks[i // 2] if i % 2 == 0 else whites[i // 2]
        assert mcts.play(g, move) == ONGOING
    assert mcts.root_info[g, TO_PLAY] == to_play
    np.testing.assert_array_equal(mcts.root_board[g], board)


def root_priors(mcts: BatchedMCTS, g: int) -> np.ndarray:
    root = mcts.tree.root[g]
    start, count = mcts.tree.first_edge[g, root], mcts.tree.num_children[g, root]
    assert count > 0
    return mcts.tree.prior[g, start:start + count].copy()


def current_visits(mcts: BatchedMCTS, g: int) -> np.ndarray:
    out = np.zeros(mcts.rules.num_actions, np.float32)
    T.root_visits(mcts.tree, g, out)
    return out


def check_tree(mcts: BatchedMCTS, g: int) -> int:
    """Walk game ``g``'s tree from its root checking structural invariants; returns its size."""
    n, k = mcts.rules.n, mcts.rules.k
    tree = mcts.tree
    num_nodes, num_edges, root = int(tree.num_nodes[g]), int(tree.num_edges[g]), int(tree.root[g])
    assert 0 <= root < num_nodes <= tree.outcome.shape[1]
    assert 0 <= num_edges <= tree.move.shape[1]
    stones = int(mcts.root_info[g, NUM_STONES])
    assert stones == np.count_nonzero(mcts.root_board[g])
    stack = [(root, mcts.root_board[g].copy(), int(mcts.root_info[g, TO_PLAY]), stones, None)]
    seen = set()
    while stack:
        node, board, to_play, count_stones, incoming = stack.pop()
        assert node not in seen
        seen.add(node)
        assert 0 <= node < num_nodes
        start, count, outcome, pending = (int(field[g, node]) for field in
                                          (tree.first_edge, tree.num_children, tree.outcome, tree.pending))
        assert pending == 0
        if outcome != ONGOING or count < 0:
            assert count < 0
            if incoming is not None and outcome == ONGOING:
                assert incoming == 0, "an evaluated leaf was left unexpanded"
            continue
        assert 0 <= start and start + count <= num_edges
        moves = tree.move[g, start:start + count]
        np.testing.assert_array_equal(np.sort(moves), np.flatnonzero(board == 0))
        np.testing.assert_allclose(tree.prior[g, start:start + count].sum(), 1.0, rtol=1e-4)
        assert np.all(tree.vloss[g, start:start + count] == 0)
        child_visits = int(tree.visits[g, start:start + count].sum())
        if incoming is not None:
            assert child_visits == incoming - 1
        for e in range(start, start + count):
            move, visits, child = int(tree.move[g, e]), int(tree.visits[g, e]), int(tree.child[g, e])
            assert abs(tree.value_sum[g, e]) <= visits + 1e-4
            if child < 0:
                assert visits == 0
                continue
            nb = board.copy()
            nb[move] = to_play
            child_outcome = outcome_after(nb, n, k, move, count_stones + 1)
            assert tree.outcome[g, child] == child_outcome
            if child_outcome == MOVER_WINS:
                assert tree.value_sum[g, e] == pytest.approx(visits)
            stack.append((child, nb, -to_play, count_stones + 1, visits))
    return len(seen)


# Black to move: black's open four on row 6 wins at (6, 1) or (6, 6); white's open four on row 1
# threatens (1, 1) and (1, 6), so blocking instead of winning loses.
FORCED_WIN_8 = [
    "........",
    "..OOOO..",
    "........",
    "........",
    "........",
    "........",
    "..XXXX..",
    "........",
]
# Black to move; white threatens to complete column 6 at (5, 6) (top end blocked by black).
MUST_BLOCK_7 = [
    "......X",
    "......O",
    "X.....O",
    ".X....O",
    "......O",
    "..X....",
    ".......",
]


def winning_points(rows: list[str], k: int, colour: int) -> set[int]:
    board = board_from_rows(rows)
    n = len(rows)
    return {int(m) for m in np.flatnonzero(board == 0) if would_win(board, n, k, int(m), colour)}


# --- (1) forced win ----------------------------------------------------------------------------

@pytest.mark.parametrize("playouts", [60, 100])
def test_takes_forced_win_with_uniform_evaluator(playouts):
    rules = GomokuRules(8, 5)
    wins = winning_points(FORCED_WIN_8, 5, BLACK)
    assert wins == {6 * 8 + 1, 6 * 8 + 6}
    mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=playouts, dirichlet_epsilon=0.0))
    set_position(mcts, 0, FORCED_WIN_8)
    visits = mcts.search(uniform_evaluator(rules.num_actions))
    best = int(np.argmax(visits[0]))
    assert best in wins
    check_tree(mcts, 0)
    assert mcts.play(0, best) == MOVER_WINS


def test_takes_forced_win_as_white():
    rules = GomokuRules(8, 5)
    rows = [r for r in FORCED_WIN_8]
    rows[7] = ".......X"  # one more black stone: white to move, both sides have a four
    wins = winning_points(rows, 5, WHITE)
    assert wins == {1 * 8 + 1, 1 * 8 + 6}
    mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=80))
    set_position(mcts, 0, rows, to_play=WHITE)
    visits = mcts.search(uniform_evaluator(rules.num_actions))
    assert int(np.argmax(visits[0])) in wins


# --- (2) blocking ------------------------------------------------------------------------------

def test_blocks_the_opponents_four():
    rules = GomokuRules(7, 5)
    block = 5 * 7 + 6
    assert winning_points(MUST_BLOCK_7, 5, WHITE) == {block}
    assert winning_points(MUST_BLOCK_7, 5, BLACK) == set()
    mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=200))
    set_position(mcts, 0, MUST_BLOCK_7)
    evaluate = win_aware_evaluator(rules)
    visits = mcts.search(evaluate)
    assert int(np.argmax(visits[0])) == block
    check_tree(mcts, 0)
    # Every other root move was refuted by white's immediate win found one ply deeper.
    root = mcts.tree.root[0]
    start, count = mcts.tree.first_edge[0, root], mcts.tree.num_children[0, root]
    for e in range(start, start + count):
        visits_e = mcts.tree.visits[0, e]
        q = mcts.tree.value_sum[0, e] / max(visits_e, 1)
        if mcts.tree.move[0, e] == block:
            assert q == pytest.approx(0.0)
        elif visits_e >= 2:
            assert q < 0


def test_block_is_not_found_without_playouts_to_look_two_plies_deep():
    # Control for the test above: with too few playouts to look two plies deep the block is
    # not found, so the test above measures the search and not the evaluator.
    rules = GomokuRules(7, 5)
    mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=20))
    set_position(mcts, 0, MUST_BLOCK_7)
    visits = mcts.search(win_aware_evaluator(rules))
    assert int(np.argmax(visits[0])) != 5 * 7 + 6


# --- (3) batching across games -----------------------------------------------------------------

def test_one_evaluator_call_per_step_for_all_games():
    rules = GomokuRules(9, 5)
    games, playouts = 3, 25
    mcts = BatchedMCTS(rules, games, MCTSConfig(playouts=playouts, leaves_per_game=1))
    mcts.play(1, 40)  # games need not share a position
    mcts.play(2, 0)
    mcts.play(2, 80)
    rec = Recorder(uniform_evaluator(rules.num_actions))
    visits = mcts.search(rec)
    # No terminal can be reached this early, so every step evaluates one leaf of every game.
    # +1 step: expanding the fresh roots.
    assert rec.batches == [games] * (playouts + 1)
    assert mcts.evaluations == games * (playouts + 1)
    assert mcts.simulations == games * playouts
    assert visits.shape == (games, rules.num_actions)
    for g in range(games):
        assert visits[g].sum() > 0
        assert np.all(visits[g][mcts.root_board[g] != 0] == 0)
        check_tree(mcts, g)


def test_search_only_the_requested_games():
    rules = GomokuRules(7, 5)
    mcts = BatchedMCTS(rules, 3, MCTSConfig(playouts=15))
    rec = Recorder(uniform_evaluator(rules.num_actions))
    visits = mcts.search(rec, np.array([0, 2]))
    assert rec.batches == [2] * 16  # 15 playouts + expanding the fresh roots
    assert visits[0].sum() > 0 and visits[2].sum() > 0
    assert not visits[1].any()
    assert mcts.tree.num_children[1, mcts.tree.root[1]] == -1  # game 1 untouched


# --- (4) several leaves per game with virtual loss ----------------------------------------------

def test_leaves_per_game_batches_more_leaves_and_still_wins():
    rules = GomokuRules(8, 5)
    games, leaves, playouts = 2, 4, 100
    mcts = BatchedMCTS(rules, games, MCTSConfig(playouts=playouts, leaves_per_game=leaves,
                                                virtual_loss=1.0))
    for g in range(games):
        set_position(mcts, g, FORCED_WIN_8)
    rec = Recorder(uniform_evaluator(rules.num_actions), rules)
    visits = mcts.search(rec)
    assert max(rec.batches) > games
    assert all(1 <= b <= games * leaves for b in rec.batches)
    assert len(rec.batches) < playouts  # fewer calls than with one leaf per game
    assert mcts.simulations == games * playouts
    wins = winning_points(FORCED_WIN_8, 5, BLACK)
    for g in range(games):
        assert int(np.argmax(visits[g])) in wins
        check_tree(mcts, g)


def test_leaves_per_game_from_empty_board_fill_the_batch():
    rules = GomokuRules(7, 5)
    games, leaves = 2, 3
    mcts = BatchedMCTS(rules, games, MCTSConfig(playouts=31, leaves_per_game=leaves))
    rec = Recorder(uniform_evaluator(rules.num_actions))
    mcts.search(rec)
    # First step: only the root is a leaf. Then virtual loss spreads 3 leaves per game.
    assert rec.batches[0] == games
    assert rec.batches[1:] == [games * leaves] * 10 + [games]
    assert sum(rec.batches) == games * (31 + 1)
    for g in range(games):
        check_tree(mcts, g)


# --- (5) visit counts and tree reuse ------------------------------------------------------------

def test_search_adds_exactly_playouts_simulations_and_reuse_keeps_them():
    rules = GomokuRules(7, 5)
    playouts = 40
    mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=playouts, reuse_tree=True))
    evaluate = uniform_evaluator(rules.num_actions)
    first = mcts.search(evaluate)[0]
    # Expanding a fresh root is an extra simulation: the children get all `playouts` visits.
    assert first.sum() == playouts
    assert mcts.simulations == playouts  # the root expansion is not counted as a playout
    second = mcts.search(evaluate)[0]
    assert second.sum() == first.sum() + playouts
    assert np.all(second >= first)
    move = int(np.argmax(second))
    child_visits = int(second[move])
    assert child_visits >= 2
    mcts.play(0, move)
    kept = current_visits(mcts, 0)
    assert kept.sum() == child_visits - 1 > 0
    check_tree(mcts, 0)
    third = mcts.search(evaluate)[0]
    assert third.sum() == kept.sum() + playouts
    assert third[move] == 0  # occupied now


def test_without_reuse_the_tree_starts_afresh():
    rules = GomokuRules(7, 5)
    mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=40, reuse_tree=False))
    evaluate = uniform_evaluator(rules.num_actions)
    visits = mcts.search(evaluate)[0]
    mcts.play(0, int(np.argmax(visits)))
    assert current_visits(mcts, 0).sum() == 0
    assert mcts.tree.num_nodes[0] == 1
    assert mcts.search(evaluate)[0].sum() == 40


@pytest.mark.parametrize("playouts", [1, 30])
def test_fresh_tree_visits_sum_to_playouts(playouts):
    rules = GomokuRules(7, 5)
    mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=playouts))
    mcts.play(0, 0)
    visits = mcts.search(uniform_evaluator(rules.num_actions))[0]
    assert visits.sum() == playouts


def test_play_rejects_occupied_point():
    mcts = BatchedMCTS(GomokuRules(5, 4), 1, MCTSConfig(playouts=5))
    mcts.play(0, 3)
    with pytest.raises(ValueError, match="occupied"):
        mcts.play(0, 3)


# --- (6) terminal positions ---------------------------------------------------------------------

def test_terminal_positions_are_never_evaluated_near_a_win():
    rules = GomokuRules(8, 5)
    mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=150))
    set_position(mcts, 0, FORCED_WIN_8)
    rec = Recorder(uniform_evaluator(rules.num_actions), rules)
    mcts.search(rec)
    assert mcts.simulations == 150
    # Many simulations ended on black's winning move without a network call.
    assert mcts.evaluations == sum(rec.batches) < 150 - 30
    check_tree(mcts, 0)


def test_terminal_draws_are_never_evaluated():
    rules = GomokuRules(5, 4)
    full = ["XXOOX",
            "OOXXO",
            "XXOOX",
            "OOXXO",
            "XXOOX"]
    empties = [(0, 0), (2, 4), (3, 0)]  # two black stones and one white stone removed
    rows = [list(r) for r in full]
    for r, c in empties:
        rows[r][c] = "."
    rows = ["".join(r) for r in rows]
    mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=40))
    set_position(mcts, 0, rows)
    assert mcts.root_info[0, TO_PLAY] == BLACK
    rec = Recorder(uniform_evaluator(rules.num_actions), rules)
    visits = mcts.search(rec)[0]
    # 1 root + 3 + 6 non-terminal nodes can be evaluated, each at most once; the 6 full boards never.
    assert sum(rec.batches) <= 10
    assert mcts.simulations == 40
    assert visits.sum() == 40
    assert set(np.flatnonzero(visits)) == {0, 14, 15}
    check_tree(mcts, 0)
    root = mcts.tree.root[0]
    terminal = [o for o in mcts.tree.outcome[0, :mcts.tree.num_nodes[0]] if o != ONGOING]
    assert terminal and all(o == DRAW for o in terminal)
    assert mcts.tree.outcome[0, root] == ONGOING


def test_finished_games_are_not_searched():
    rules = GomokuRules(5, 3)
    mcts = BatchedMCTS(rules, 2, MCTSConfig(playouts=10))
    for move in (0, 5, 1, 6):
        mcts.play(0, move)
    assert mcts.play(0, 2) == MOVER_WINS
    rec = Recorder(uniform_evaluator(rules.num_actions), rules)
    visits = mcts.search(rec)
    assert not visits[0].any()
    assert visits[1].sum() == 10
    assert rec.batches == [1] * 11


# --- (7) Dirichlet noise ------------------------------------------------------------------------

def _search_priors(add_noise: bool, epsilon: float = 0.25, seed: int = 0):
    rules = GomokuRules(7, 5)
    T.seed_numba(seed)
    mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=30, dirichlet_epsilon=epsilon))
    mcts.play(0, 24)
    mcts.search(uniform_evaluator(rules.num_actions), add_noise=add_noise)
    return mcts, root_priors(mcts, 0)


def test_no_noise_keeps_uniform_root_priors():
    _, priors = _search_priors(add_noise=False)
    np.testing.assert_allclose(priors, 1.0 / 48, rtol=1e-5)


def test_noise_changes_root_priors_only():
    mcts, priors = _search_priors(add_noise=True)
    assert priors.size == 48
    assert priors.std() > 1e-4
    np.testing.assert_allclose(priors.sum(), 1.0, rtol=1e-4)
    assert np.all(priors >= 0.75 / 48 - 1e-6)  # (1 - eps) * P + eps * noise
    # Priors of expanded nodes below the root stay as the evaluator gave them.
    checked = 0
    for e in range(mcts.tree.num_edges[0]):
        child = mcts.tree.child[0, e]
        if child >= 0 and mcts.tree.num_children[0, child] > 0:
            start, count = mcts.tree.first_edge[0, child], mcts.tree.num_children[0, child]
            np.testing.assert_allclose(mcts.tree.prior[0, start:start + count], 1.0 / count,
                                       rtol=1e-5)
            checked += 1
    assert checked > 0


def test_noise_is_seeded_and_epsilon_zero_is_noise_free():
    _, a = _search_priors(add_noise=True, seed=7)
    _, b = _search_priors(add_noise=True, seed=7)
    _, c = _search_priors(add_noise=True, seed=8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    _, d = _search_priors(add_noise=True, epsilon=0.0)
    np.testing.assert_allclose(d, 1.0 / 48, rtol=1e-5)


def test_root_policy_temperature_flattens_the_root_prior_of_noised_searches_only():
    """A net sure of one move: temperature 2 takes its prior from 0.9 to sqrt(0.9) / (sqrt(0.9) + ...)."""
    rules = GomokuRules(7, 5)

    def confident(planes):
        b, a = planes.shape[0], rules.num_actions
        priors = np.full((b, a), 0.1 / (a - 1), np.float32)
        priors[:, 0] = 0.9
        return priors, np.zeros(b, np.float32)

    def root_prior_of_move_0(temperature, noise):
        T.seed_numba(0)
        mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=4, dirichlet_epsilon=0.0,
                                                root_policy_temperature=temperature))
        mcts.search(confident, add_noise=noise)
        priors = root_priors(mcts, 0)
        return priors.max(), priors.sum()

    soft = np.sqrt(0.9) / (np.sqrt(0.9) + 48 * np.sqrt(0.1 / 48))
    top, total = root_prior_of_move_0(2.0, noise=True)
    np.testing.assert_allclose([top, total], [soft, 1.0], rtol=1e-5)
    np.testing.assert_allclose(root_prior_of_move_0(2.0, noise=False)[0], 0.9, rtol=1e-5)  # engines: untouched
    np.testing.assert_allclose(root_prior_of_move_0(1.0, noise=True)[0], 0.9, rtol=1e-5)


# --- (8) config validation ----------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "key"), [
    ({"playouts": 0}, "search.playouts"),
    ({"playouts": -5}, "search.playouts"),
    ({"c_puct": 0.0}, "search.c_puct"),
    ({"c_puct": -1.0}, "search.c_puct"),
    ({"dirichlet_epsilon": 1.5}, "search.dirichlet_epsilon"),
    ({"dirichlet_epsilon": -0.1}, "search.dirichlet_epsilon"),
    ({"leaves_per_game": 0}, "search.leaves_per_game"),
    ({"virtual_loss": -1.0}, "search.virtual_loss"),
    ({"dirichlet_alpha": 0.0}, "search.dirichlet_alpha"),
    ({"playouts": "many"}, "search.playouts='many'"),
    ({"playouts": 2.5}, "search.playouts=2.5"),
    ({"c_puct": "high"}, "search.c_puct='high'"),
    ({"root_policy_temperature": 0.1}, "search.root_policy_temperature=0.1"),
    ({"score_utility": -0.5}, "search.score_utility=-0.5"),
])
def test_config_validation(kwargs, key):
    with pytest.raises(SearchConfigError, match=key.replace(".", r"\.")):
        MCTSConfig(**kwargs)


@pytest.mark.parametrize("kwargs", [
    {"playouts": 1}, {"dirichlet_epsilon": 0.0}, {"dirichlet_epsilon": 1.0}, {"virtual_loss": 0.0},
    {"c_puct": 1e-3},
])
def test_config_accepts_boundary_values(kwargs):
    MCTSConfig(**kwargs)


def test_max_nodes_too_small_for_one_search_is_rejected():
    with pytest.raises(ValueError):
        BatchedMCTS(GomokuRules(6, 4), 2, MCTSConfig(playouts=50), max_nodes=10)


# --- (9) visits_to_policy -----------------------------------------------------------------------

def test_visits_to_policy_temperature_zero_is_argmax():
    visits = np.array([[1, 7, 3, 0], [5, 0, 5, 2]], dtype=np.float32)
    probs = visits_to_policy(visits, 0.0)
    np.testing.assert_allclose(probs[0], [0, 1, 0, 0])
    np.testing.assert_allclose(probs[1], [0.5, 0, 0.5, 0])  # ties share
    np.testing.assert_allclose(visits_to_policy(visits[0], 1e-4), [0, 1, 0, 0])


def test_visits_to_policy_temperature_one_is_proportional():
    visits = np.array([1, 7, 2, 0], dtype=np.float32)
    np.testing.assert_allclose(visits_to_policy(visits, 1.0), visits / 10, rtol=1e-6)


def test_visits_to_policy_lower_temperature_sharpens():
    visits = np.array([1, 3, 0], dtype=np.float32)
    np.testing.assert_allclose(visits_to_policy(visits, 0.5), [0.1, 0.9, 0.0], rtol=1e-6)
    p2 = visits_to_policy(visits, 2.0)
    np.testing.assert_allclose(p2, np.sqrt(visits) / np.sqrt(visits).sum(), rtol=1e-6)
    assert p2[2] == 0.0


# --- (10) tree memory: ensure_room and compaction -----------------------------------------------

def peaked_evaluator(rules: GomokuRules, seed: int = 0):
    """Fixed, sharply peaked priors (deep trees, so reused subtrees are big); value 0."""
    w = np.random.default_rng(seed).random(rules.num_actions) ** 6 + 1e-3
    w = (w / w.sum()).astype(np.float32)

    def evaluate(planes):
        for p in planes:
            board, _ = planes_to_board(p)
            assert_not_terminal(board, rules.n, rules.k)
        return np.tile(w, (planes.shape[0], 1)), np.zeros(planes.shape[0], np.float32)

    return evaluate


@pytest.mark.parametrize("max_nodes", [22, 26, 32, 60])
def test_many_moves_with_small_max_nodes(max_nodes):
    rules = GomokuRules(6, 4)
    games, playouts = 2, 20
    mcts = BatchedMCTS(rules, games, MCTSConfig(playouts=playouts), max_nodes=max_nodes)
    assert mcts.tree.outcome.shape[1] == max_nodes
    evaluate = peaked_evaluator(rules)
    rng = np.random.default_rng(max_nodes)
    moves = reused = compacted = restarted = 0
    while (mcts.outcomes == ONGOING).any():
        ongoing = np.flatnonzero(mcts.outcomes == ONGOING)
        before = {g: current_visits(mcts, g).sum() for g in ongoing}
        roots = {g: int(mcts.tree.root[g]) for g in ongoing}
        visits = mcts.search(evaluate)
        for g in ongoing:
            assert mcts.tree.num_nodes[g] <= max_nodes
            assert mcts.tree.num_edges[g] <= mcts.tree.move.shape[1]
            check_tree(mcts, g)
            total = visits[g].sum()
            if total == before[g] + playouts and before[g] > 0:
                reused += 1
                compacted += roots[g] != 0 and mcts.tree.root[g] == 0
            else:
                # Not enough room even after compaction: the tree restarted from the root.
                assert total == playouts
                restarted += before[g] > 0
            legal = np.flatnonzero(mcts.root_board[g] == 0)
            assert set(np.flatnonzero(visits[g])) <= set(legal)
            best = np.flatnonzero(visits[g] == visits[g].max())
            mcts.play(g, int(rng.choice(best)))
            moves += 1
    assert moves > 2 * 10
    if max_nodes == 22:  # room for one search only: every kept subtree is dropped
        assert reused == 0 and restarted > 0
    else:
        assert compacted > 0


def test_compact_keeps_the_subtree_under_the_root():
    rules = GomokuRules(7, 5)
    mcts = BatchedMCTS(rules, 2, MCTSConfig(playouts=60))
    evaluate = uniform_evaluator(rules.num_actions)
    mcts.play(0, 10)
    for _ in range(2):
        visits = mcts.search(evaluate)
    move = int(np.argmax(visits[0]))
    mcts.play(0, move)
    old_root = int(mcts.tree.root[0])
    assert old_root != 0
    kept = current_visits(mcts, 0)
    size = check_tree(mcts, 0)
    assert 1 < size < mcts.tree.num_nodes[0]
    game1 = [field[1].copy() for field in mcts.tree]
    max_nodes = mcts.tree.outcome.shape[1]
    sims = max_nodes - size - 1  # fits only once the unreachable nodes are dropped
    T.ensure_room(mcts.tree, 0, sims, rules.num_actions)
    assert mcts.tree.root[0] == 0
    assert mcts.tree.num_nodes[0] == size
    np.testing.assert_array_equal(current_visits(mcts, 0), kept)
    assert check_tree(mcts, 0) == size
    # Other games' trees are untouched.
    for field, before in zip(mcts.tree, game1, strict=True):
        np.testing.assert_array_equal(field[1], before)
    # The compacted tree keeps searching correctly.
    after = mcts.search(evaluate)[0]
    assert after.sum() == kept.sum() + 60
    check_tree(mcts, 0)


def test_ensure_room_restarts_the_tree_when_compaction_is_not_enough():
    rules = GomokuRules(7, 5)
    mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=60))
    evaluate = uniform_evaluator(rules.num_actions)
    mcts.search(evaluate)
    mcts.search(evaluate)
    mcts.play(0, int(np.argmax(current_visits(mcts, 0))))
    assert current_visits(mcts, 0).sum() > 0
    max_nodes = mcts.tree.outcome.shape[1]
    T.ensure_room(mcts.tree, 0, max_nodes - 1, rules.num_actions)
    assert mcts.tree.num_nodes[0] == 1
    assert mcts.tree.num_children[0, mcts.tree.root[0]] == -1
    assert current_visits(mcts, 0).sum() == 0


# --- first-play urgency ------------------------------------------------------------------------


def constant_value_evaluator(num_actions: int, value: float):
    """Uniform priors; every leaf is worth ``value`` to the side to move there."""

    def evaluate(planes):
        b = planes.shape[0]
        return np.full((b, num_actions), 1.0 / num_actions, np.float32), np.full(b, value, np.float32)

    return evaluate


def test_fpu_reduction_scores_untried_moves_from_the_node_value():
    """Where every tried move loses (each leaf is worth +0.9 to the side to move there, so -0.9 to
    the root's mover), Q = 0 for untried moves (the default) makes each of them look better than
    any tried one and the search tries all 64; with FPU reduction an untried move is scored near
    the node's own value and the search keeps to fewer moves."""
    rules = GomokuRules(8, 5)
    evaluate = constant_value_evaluator(rules.num_actions, 0.9)
    tried = {}
    for fpu in (None, 0.2):
        mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=200, c_puct=1.0, fpu_reduction=fpu))
        tried[fpu] = int((mcts.search(evaluate)[0] > 0).sum())
    assert tried[None] == 64 and tried[0.2] < 40


def test_fpu_reduction_out_of_range_is_refused():
    with pytest.raises(SearchConfigError, match=r"search.fpu_reduction=-0.1 must be null"):
        MCTSConfig(fpu_reduction=-0.1)


# --- a proof at the root (Gomoku's pruning.root_proof) ----------------------------------------------


def test_a_root_proof_keeps_only_the_moves_it_allows_and_the_search_answers_the_tactics():
    """With a net that knows nothing (uniform priors, value 0), 200 playouts miss four-threes
    and open threes; a 5-ply proof at the root leaves only the winning moves, or the moves
    that survive, so the most visited move is a right answer in every position."""
    from stonelab.games.gomoku.candidates import PruningConfig
    from stonelab.games.gomoku.tactics import generate, proven_moves, search_answers

    rules = GomokuRules(6, 4)
    suite = [t for t in generate(rules, per_kind=12, seed=5) if t.kind in ("four_three", "stop_three")]
    config = MCTSConfig(playouts=200, dirichlet_epsilon=0.0)
    evaluate = uniform_evaluator(36)
    plain = search_answers(rules, evaluate, suite, config, PruningConfig(forced=True))
    proved = search_answers(rules, evaluate, suite, config, PruningConfig(forced=True, root_proof=5))
    assert all(int(m) in t.answers for m, t in zip(proved, suite, strict=True))
    assert sum(int(m) in t.answers for m, t in zip(plain, suite, strict=True)) < len(suite)

    t = next(t for t in suite if t.kind == "four_three")
    search = rules.search_game(PruningConfig(forced=True, root_proof=5))
    mcts = BatchedMCTS(search, 1, config)
    mcts.set_position(0, search.position(t.board, t.to_play, t.last_move))
    visits = mcts.search(evaluate)
    allowed = np.zeros(36, dtype=np.bool_)
    proven_moves(t.board.copy(), 6, 4, t.to_play, 5, allowed)
    assert set(np.flatnonzero(visits)) <= set(np.flatnonzero(allowed)) and visits.sum() == 200


def test_vcf_at_the_root_makes_a_net_that_knows_nothing_play_what_the_fours_prove():
    """Uniform priors and value 0 at 100 playouts often miss a win by continuous fours on 9x9
    (or the one defence against the opponent's); with the threat-space search at the root
    (pruning.vcf=root) the most visited move starts such a win, or else stops the opponent's."""
    from stonelab.games.gomoku.candidates import PruningConfig, root_vcf_moves
    from stonelab.games.gomoku.tactics import generate, search_answers

    rules = GomokuRules(9, 5)
    suite = [t for t in generate(rules, per_kind=12, seed=5)
             if root_vcf_moves(t.board, 9, 5, t.to_play, 12) is not None]
    wins = [set(np.flatnonzero(root_vcf_moves(t.board, 9, 5, t.to_play, 12))) for t in suite]
    config = MCTSConfig(playouts=100, dirichlet_epsilon=0.0)
    evaluate = uniform_evaluator(81)
    plain = search_answers(rules, evaluate, suite, config, PruningConfig(forced=True))
    rooted = search_answers(rules, evaluate, suite, config, PruningConfig(forced=True, vcf="root"))
    assert len(suite) >= 10 and all(int(m) in w for m, w in zip(rooted, wins, strict=True))
    assert sum(int(m) in w for m, w in zip(plain, wins, strict=True)) < len(suite)


def test_restricting_a_reused_root_keeps_the_visits_of_the_moves_kept():
    rules = GomokuRules(6, 4)
    mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=60, dirichlet_epsilon=0.0))
    visits = mcts.search(uniform_evaluator(36))
    keep = np.argsort(-visits[0])[:3]
    allowed = np.zeros(36, dtype=np.bool_)
    allowed[keep] = True
    assert T.restrict_root(mcts.tree, 0, allowed) == 3
    after = np.zeros(36, dtype=np.float32)
    T.root_visits(mcts.tree, 0, after)
    assert np.array_equal(np.flatnonzero(after), np.sort(keep)) and np.array_equal(after[keep], visits[0][keep])
    root = mcts.tree.root[0]
    start = mcts.tree.first_edge[0, root]
    assert mcts.tree.prior[0, start:start + 3].sum() == pytest.approx(1.0)
    assert T.restrict_root(mcts.tree, 0, np.zeros(36, dtype=np.bool_)) == 3  # nothing kept: unchanged
