"""9x9 Go through the game-agnostic search kernels (pure and batched neural MCTS)."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.games.go.rules import GoRules, state_from_rows
from stonelab.games.go.search import GO_PLANES, NUM_PLANES, GoSearch
from stonelab.search.game import MOVER_LOSES, MOVER_WINS, ONGOING
from stonelab.search.mcts import BatchedMCTS, MCTSConfig
from stonelab.search.pure_mcts import pure_mcts_search
from stonelab.search.selfplay import SelfPlaySlots

RULES = GoRules(9)
PASS = RULES.pass_move


def uniform(num_actions):
    def evaluate(planes):
        b = planes.shape[0]
        return np.full((b, num_actions), 1.0 / num_actions, np.float32), np.zeros(b, np.float32)

    return evaluate


def one(batch):
    return type(batch)(*(field[0] for field in batch))


def test_two_passes_end_the_game_scored_with_komi():
    mcts = BatchedMCTS(GoSearch(RULES), 1, MCTSConfig(playouts=4))
    assert mcts.play(0, PASS) == ONGOING
    assert mcts.play(0, PASS) == MOVER_WINS  # white passed last and wins by komi
    assert not mcts.search(uniform(RULES.num_actions)).any()


def test_move_cap_scores_the_game_and_the_mover_can_lose():
    mcts = BatchedMCTS(GoSearch(RULES, max_moves=2), 1, MCTSConfig(playouts=4))
    assert mcts.play(0, 40) == ONGOING
    assert mcts.play(0, PASS) == MOVER_LOSES  # white's pass ends it; black's stone owns the board


def test_pure_mcts_visits_only_legal_moves_and_is_seeded():
    search = GoSearch(RULES)
    state = state_from_rows([".X.......", "X........", *["........."] * 7], to_play=-1)
    root = search.position(state)
    a = pure_mcts_search(search.spec, root, 300, 5.0, 3)
    b = pure_mcts_search(search.spec, root, 300, 5.0, 3)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (RULES.num_actions,) and a.sum() == 299
    legal = state.legal_mask()
    assert not legal[0]  # suicide for white
    assert np.all(a[~legal] == 0) and np.all(a[legal] >= 1)
    np.testing.assert_array_equal(root.board, state.board)  # the search works on copies


def test_neural_search_expands_every_legal_move_and_reuses_the_tree():
    search = GoSearch(RULES)
    mcts = BatchedMCTS(search, 2, MCTSConfig(playouts=30, leaves_per_game=2))
    evaluate = uniform(RULES.num_actions)
    visits = mcts.search(evaluate)
    assert visits.shape == (2, RULES.num_actions)
    np.testing.assert_array_equal(visits.sum(1), [30, 30])
    root = mcts.tree.root[0]
    assert mcts.tree.num_children[0, root] == RULES.num_points  # 81 points; no pass on an open board
    move = int(np.argmax(visits[0]))
    mcts.play(0, move)
    kept = visits[0, move] - 1
    assert mcts.search(evaluate, [0])[0].sum() == kept + 30
    with pytest.raises(ValueError, match="occupied"):
        mcts.play(0, move)
    planes = mcts.root_planes(0)
    assert planes.shape == (NUM_PLANES, 9, 9) and planes[1].sum() == 1  # the opponent's stone
    assert mcts.to_play(0) == -1


def test_selfplay_finishes_go_games():
    search = GoSearch(RULES, max_moves=30)
    slots = SelfPlaySlots(search, 2, MCTSConfig(playouts=8), temperature_moves=30)
    games = slots.play(uniform(RULES.num_actions), 2, np.random.default_rng(0))
    assert len(games.lengths) >= 2 and np.all(games.lengths <= 30)
    assert games.policies.shape[1] == RULES.num_actions
    assert set(games.values.tolist()) <= {-1.0, 0.0, 1.0}


def reference_planes(state, moves, komi):
    """The AlphaZero Go planes of `GoState` ``state`` reached by ``moves``, in plain Python."""
    n, me = state.rules.n, state.to_play
    board = np.asarray(state.board).reshape(n, n)
    planes = {name: np.zeros((n, n), np.float32) for name in GO_PLANES}
    planes["own_stones"][board == me] = 1
    planes["opponent_stones"][board == -me] = 1
    for age, name in ((1, "last_move"), (2, "move_before_last")):
        if len(moves) >= age and moves[-age] != PASS:
            r, c = divmod(moves[-age], n)
            # the stone is shown while it stands and was not played on again since
            if board[r, c] != 0 and moves[-age] not in moves[len(moves) - age + 1:]:
                planes[name][r, c] = 1
    if state.ko_point >= 0:
        planes["ko_point"][divmod(state.ko_point, n)] = 1
    for p in range(n * n):
        r, c = divmod(p, n)
        if board[r, c] != 0 and liberties_by_flood_fill(board, r, c) == 1:
            planes["own_in_atari" if board[r, c] == me else "opponent_in_atari"][r, c] = 1
    planes["black_to_move"][:] = me == 1
    planes["komi_for_mover"][:] = komi * -me > 0
    planes["on_board"][:] = 1
    return np.stack([planes[name] for name in GO_PLANES])


def liberties_by_flood_fill(board, r, c):
    n, colour = board.shape[0], board[r, c]
    seen, libs, todo = {(r, c)}, set(), [(r, c)]
    while todo:
        i, j = todo.pop()
        for a, b in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):
            if 0 <= a < n and 0 <= b < n:
                if board[a, b] == 0:
                    libs.add((a, b))
                elif board[a, b] == colour and (a, b) not in seen:
                    seen.add((a, b))
                    todo.append((a, b))
    return len(libs)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_go_planes_match_a_python_reference_through_random_games(seed):
    rng = np.random.default_rng(seed)
    rules = GoRules(9, komi=7.5)
    search = GoSearch(rules, max_moves=400)
    mcts = BatchedMCTS(search, 1, MCTSConfig(playouts=2))
    state, moves, ataris = rules.new_state(), [], 0
    for _ in range(160):
        legal = np.flatnonzero(state.legal_mask()[:-1])
        move = int(rng.choice(legal)) if len(legal) and rng.random() > 0.03 else PASS
        if moves and moves[-1] == PASS and move == PASS:
            continue  # two passes would end the game
        state.play(move)
        mcts.play(0, move)
        moves.append(move)
        expected = reference_planes(state, moves, rules.komi)
        np.testing.assert_array_equal(mcts.root_planes(0), expected, err_msg=f"after moves {moves}")
        ataris += expected[GO_PLANES.index("own_in_atari")].any()
    assert ataris > 0  # the random games did reach the interesting planes


def test_a_ko_ban_shows_as_a_plane_for_the_side_it_binds():
    # White captures at E5 (row 4, col 4): black may not retake at D5 (row 4, col 3) at once.
    state = state_from_rows([".........", ".........", ".........", "...XO....", "..X.XO...",
                             "...XO....", ".........", ".........", "........."], to_play=-1)
    state.play(4 * 9 + 3)  # white captures the black stone at E5
    search = GoSearch(RULES)
    mcts = BatchedMCTS(search, 1, MCTSConfig(playouts=2))
    mcts.set_position(0, search.position(state))
    planes = mcts.root_planes(0)
    assert state.ko_point == 4 * 9 + 4
    assert planes[GO_PLANES.index("ko_point")].flatten().tolist() == [p == 4 * 9 + 4 for p in range(81)]
    assert planes[GO_PLANES.index("opponent_in_atari")][4, 3] == 1  # the capturing stone can be taken back later


def test_self_play_never_fills_its_own_eye_and_the_engine_may():
    # Black owns the corner point A9 (row 0, col 0): both its neighbours are black.
    state = state_from_rows([".X.......", "X........", *["........."] * 7], to_play=1)
    for fill, allowed in ((False, False), (True, True)):
        search = GoSearch(RULES, fill_own_eyes=fill)
        mcts = BatchedMCTS(search, 1, MCTSConfig(playouts=40))
        mcts.set_position(0, search.position(state))
        mcts.search(uniform(RULES.num_actions))
        root = mcts.tree.root[0]
        start, count = mcts.tree.first_edge[0, root], mcts.tree.num_children[0, root]
        children = set(mcts.tree.move[0, start:start + count].tolist())
        assert (0 in children) == allowed and PASS in children
    assert not RULES.search_game().fill_own_eyes  # AlphaZero's self-play Go


def test_alphazero_self_play_on_go_records_planes_pass_and_results():
    slots = SelfPlaySlots(RULES, 2, MCTSConfig(playouts=8), temperature_moves=4)
    games = slots.play(uniform(RULES.num_actions), 2, np.random.default_rng(1))
    assert games.planes.shape[1:] == (NUM_PLANES, 9, 9) and games.policies.shape[1] == RULES.num_actions
    assert np.all(games.lengths <= 2 * 81)  # two passes or the move cap end every game
    np.testing.assert_allclose(games.policies.sum(1), 1.0, rtol=1e-5)
    assert set(games.values.tolist()) <= {-1.0, 0.0, 1.0} and set(games.winners.tolist()) <= {-1, 0, 1}


def test_a_match_on_go_between_pure_mcts_and_a_uniform_net_is_refereed_by_the_rules():
    from stonelab.arena.players import NeuralMCTSPlayer, play_match, pure_mcts_player

    pure = pure_mcts_player(RULES, 24)
    net = NeuralMCTSPlayer(RULES, uniform(RULES.num_actions), MCTSConfig(playouts=8), name="uniform")
    result = play_match(RULES, net, pure, 2, opening_moves=2, seed=0)
    assert result.games == 2 and result.wins + result.draws + result.losses == 2


def root_moves(search, state, playouts=20):
    mcts = BatchedMCTS(search, 1, MCTSConfig(playouts=playouts))
    mcts.set_position(0, search.position(state))
    mcts.search(uniform(RULES.num_actions))
    root = mcts.tree.root[0]
    start, count = mcts.tree.first_edge[0, root], mcts.tree.num_children[0, root]
    return set(mcts.tree.move[0, start:start + count].tolist())


@pytest.mark.parametrize("fill_own_eyes", [False, True])
def test_the_search_never_passes_with_points_to_play_for_and_may_once_they_are_settled(fill_own_eyes):
    search = GoSearch(RULES, fill_own_eyes=fill_own_eyes)
    after_one_stone = RULES.new_state().play(40)  # white to move: the whole board is still open
    assert PASS not in root_moves(search, after_one_stone)
    settled = state_from_rows([".XXXOOOO.", "XXXXOOOOO"] * 4 + [".XXXOOOO."], to_play=-1)  # eyes only
    assert PASS in root_moves(search, settled)


def test_self_play_fills_a_false_eye_that_saves_a_chain_in_atari():
    # A9's neighbours are black, but black's B9 has no other liberty (white holds C9 and B8),
    # so A9 is a false eye: filling it joins B9 to A8 and saves it.
    state = state_from_rows([".XO......", "XO.......", *["........."] * 7], to_play=1)
    assert state.liberties(1) == 1  # B9 in atari, its liberty A9
    assert 0 in root_moves(GoSearch(RULES, fill_own_eyes=False), state)
    real_eye = state_from_rows([".X.......", "X........", *["........."] * 7], to_play=1)
    assert 0 not in root_moves(GoSearch(RULES, fill_own_eyes=False), real_eye)
