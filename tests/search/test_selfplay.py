"""Self-play data: shapes, targets and values consistent with the games played, seeding."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.games.gomoku.rules import BLACK, WHITE, GomokuRules, line_length
from stonelab.search.mcts import MCTSConfig
from stonelab.search.selfplay import SelfPlayGames, SelfPlaySlots, play_games

RULES = GomokuRules(6, 4)
CONFIG = MCTSConfig(playouts=16)


class Counter:
    def __init__(self, a: int):
        self.a = a
        self.batches: list[int] = []

    def __call__(self, planes):
        b = planes.shape[0]
        self.batches.append(b)
        return np.full((b, self.a), 1.0 / self.a, np.float32), np.zeros(b, np.float32)


def run(seed: int, num_games: int = 3, temperature_moves: int = 4) -> tuple[SelfPlayGames, Counter]:
    evaluate = Counter(RULES.num_actions)
    data = play_games(RULES, evaluate, num_games, CONFIG, temperature_moves=temperature_moves,
                      rng=np.random.default_rng(seed))
    return data, evaluate


@pytest.fixture(scope="module")
def games() -> tuple[SelfPlayGames, Counter]:
    return run(0)


def boards_of(planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boards (+1 black, -1 white) ``[P, A]`` and colours to move ``[P]`` from uint8 planes."""
    to_play = np.where(planes[:, 3, 0, 0] == 1, BLACK, WHITE)
    own = planes[:, 0].reshape(len(planes), -1).astype(np.int8)
    opp = planes[:, 1].reshape(len(planes), -1).astype(np.int8)
    return (own - opp) * to_play[:, None].astype(np.int8), to_play


def test_shapes_and_dtypes(games):
    data, _ = games
    n, a = RULES.n, RULES.num_actions
    p = len(data.values)
    assert data.planes.shape == (p, 4, n, n) and data.planes.dtype == np.uint8
    assert data.policies.shape == (p, a) and data.policies.dtype == np.float32
    assert data.values.shape == (p,) and data.values.dtype == np.float32
    assert data.lengths.shape == (3,) and data.winners.shape == (3,)
    assert int(data.lengths.sum()) == p
    assert np.all(data.lengths >= RULES.k * 2 - 1)  # nobody wins before their k-th stone
    assert set(np.unique(data.planes)) <= {0, 1}


def test_policies_are_distributions_over_empty_points(games):
    data, _ = games
    np.testing.assert_allclose(data.policies.sum(axis=1), 1.0, rtol=1e-5)
    assert np.all(data.policies >= 0)
    boards, _ = boards_of(data.planes)
    assert np.all(data.policies[boards != 0] == 0)


def test_positions_follow_each_other_and_values_match_winners(games):
    data, _ = games
    boards, to_play = boards_of(data.planes)
    assert set(np.unique(data.values)) <= {-1.0, 0.0, 1.0}
    offset = 0
    for g, length in enumerate(data.lengths):
        b, tp = boards[offset:offset + length], to_play[offset:offset + length]
        planes = data.planes[offset:offset + length]
        values = data.values[offset:offset + length]
        # Game starts on the empty board with black to move, colours alternate.
        assert not b[0].any() and not planes[0, 2].any()
        np.testing.assert_array_equal(tp, np.where(np.arange(length) % 2 == 0, BLACK, WHITE))
        for i in range(1, length):
            diff = np.flatnonzero(b[i] != b[i - 1])
            last = np.flatnonzero(planes[i, 2].reshape(-1))
            assert diff.size == 1 and last.size == 1 and diff[0] == last[0]
            assert b[i - 1, diff[0]] == 0 and b[i, diff[0]] == tp[i - 1]
            # The move played had visits (it was sampled from, or was the argmax of, the target).
            assert data.policies[offset + i - 1, diff[0]] > 0
            # No position inside a game is already won.
            assert line_length(b[i], RULES.n, int(diff[0])) < RULES.k
        winner = int(data.winners[g])
        if winner == 0:
            assert length == RULES.num_actions
            assert np.all(values == 0)
        else:
            # The winner made the last move: black moves on even plies.
            assert winner == int(tp[-1])
            np.testing.assert_array_equal(values, np.where(tp == winner, 1.0, -1.0))
        offset += length


def test_stats_and_batching(games):
    data, counter = games
    p = len(data.values)
    assert data.simulations == p * CONFIG.playouts
    assert data.evaluations == sum(counter.batches) <= data.simulations
    assert max(counter.batches) <= 3  # one leaf per ongoing game per call


def test_same_seed_same_games(games):
    data, _ = games
    again, _ = run(0)
    for field in ("planes", "policies", "values", "lengths", "winners"):
        np.testing.assert_array_equal(getattr(again, field), getattr(data, field))
    other, _ = run(1)
    assert not (np.array_equal(other.lengths, data.lengths) and np.array_equal(other.planes, data.planes))
    # The first search of a game sees the empty board and a uniform evaluator: only the root's
    # Dirichlet noise, drawn from the rng, can make its targets differ between seeds.
    np.testing.assert_array_equal(again.policies[0], data.policies[0])
    assert not np.array_equal(other.policies[0], data.policies[0])


def test_late_moves_are_the_most_visited():
    data, _ = run(2, num_games=2, temperature_moves=0)
    boards, _ = boards_of(data.planes)
    offset = 0
    for length in data.lengths:
        for i in range(1, length):
            move = np.flatnonzero(boards[offset + i] != boards[offset + i - 1])[0]
            pi = data.policies[offset + i - 1]
            assert pi[move] == pi.max()
        offset += length


def test_slots_refill_until_all_games_are_played():
    from stonelab.games.gomoku.rules import GomokuRules
    from stonelab.search.mcts import MCTSConfig
    from stonelab.search.selfplay import play_games

    rules = GomokuRules(5, 4)
    calls = []

    def evaluate(planes):
        calls.append(len(planes))
        b = len(planes)
        return np.full((b, 25), 1 / 25, np.float32), np.zeros(b, np.float32)

    games = play_games(rules, evaluate, 5, MCTSConfig(playouts=8), temperature_moves=25,
                       rng=np.random.default_rng(3), parallel=2)
    assert len(games.lengths) == len(games.winners) == 5
    assert games.lengths.sum() == len(games.values) == len(games.planes)
    assert max(calls) <= 2  # never more than `parallel` games in one batch
    first = 0
    for length, winner in zip(games.lengths, games.winners, strict=True):
        stones = games.planes[first][:2].sum()
        assert stones == 0  # every game starts from the empty board
        values = games.values[first:first + length]
        if winner == 0:
            assert not values.any()
        else:
            assert set(np.unique(np.abs(values))) == {1.0}
        first += length


def uniform(a: int):
    def evaluate(planes):
        b = len(planes)
        return np.full((b, a), 1.0 / a, np.float32), np.zeros(b, np.float32)
    return evaluate


def test_games_in_progress_carry_over_to_the_next_call():
    from stonelab.search.selfplay import SelfPlaySlots

    slots = SelfPlaySlots(RULES, 4, CONFIG, temperature_moves=36)
    evaluate = uniform(RULES.num_actions)
    rng = np.random.default_rng(5)
    first = slots.play(evaluate, 2, rng)
    assert len(first.lengths) >= 2
    assert slots.carried_games >= 1  # games with moves played, waiting for the next call
    in_progress = [list(m) for m in slots.moves]
    second = slots.play(evaluate, 6, rng)
    assert len(second.lengths) >= 6
    # No position is lost or doubled: finished positions = moves carried in + moves
    # played in this call - moves carried out.
    carried_in = sum(len(m) for m in in_progress)
    carried_out = sum(len(m) for m in slots.moves)
    played = second.simulations // CONFIG.playouts
    assert carried_in > 0
    assert second.lengths.sum() == carried_in + played - carried_out == len(second.values)
    # A finished game's records start at the empty board, also for games begun in `first`.
    starts = second.planes[np.cumsum(np.r_[0, second.lengths[:-1]])]
    assert not starts[:, :2].any()


def test_state_dict_round_trip_continues_identically():
    from stonelab.search.selfplay import SelfPlaySlots

    evaluate = uniform(RULES.num_actions)
    a = SelfPlaySlots(RULES, 3, CONFIG, temperature_moves=36)
    a.play(evaluate, 2, np.random.default_rng(1))
    state = a.state_dict()
    b = SelfPlaySlots(RULES, 3, CONFIG, temperature_moves=36)
    assert b.load_state_dict(state) == 0
    assert b.moves == a.moves
    ga = a.play(evaluate, 4, np.random.default_rng(2))
    gb = b.play(evaluate, 4, np.random.default_rng(2))
    for field in ("planes", "policies", "values", "lengths", "winners"):
        np.testing.assert_array_equal(getattr(ga, field), getattr(gb, field))
    # Another slot count cannot place the games: they are reported as dropped.
    c = SelfPlaySlots(RULES, 2, CONFIG, temperature_moves=36)
    assert c.load_state_dict(a.state_dict()) == a.carried_games > 0
    assert c.carried_games == 0


def black_is_winning(planes):
    """Uniform priors; every position is worth +0.95 to black and -0.95 to white (Go plane 7: black to move)."""
    b, a = planes.shape[0], planes.shape[-1] ** 2 + 1
    values = np.where(planes[:, 7, 0, 0] == 1, 0.95, -0.95).astype(np.float32)
    return np.full((b, a), 1.0 / a, np.float32), values


def test_a_lost_side_resigns_unless_its_game_is_played_through():
    from stonelab.games.go.rules import GoRules

    rules, config = GoRules(9), MCTSConfig(playouts=8)
    resigning = SelfPlaySlots(rules, 3, config, temperature_moves=4, resign_below=-0.9, resign_playthrough=0.0)
    games = resigning.play(black_is_winning, 3, np.random.default_rng(0))
    assert games.winners.tolist() == [1, 1, 1] and games.lengths.tolist() == [2, 2, 2]  # white resigns at once
    assert resigning.resign_stats == {"resigned": 3, "playthrough_calls": 0, "false_positives": 0}
    played_on = SelfPlaySlots(rules, 3, config, temperature_moves=4, resign_below=-0.9, resign_playthrough=1.0)
    games = played_on.play(black_is_winning, 3, np.random.default_rng(0))
    stats = played_on.resign_stats
    assert stats["resigned"] == 0 and stats["playthrough_calls"] == len(games.winners) and min(games.lengths) > 2
    assert stats["false_positives"] == int((games.winners == -1).sum())  # white would have resigned a game it won
    resumed = SelfPlaySlots(rules, 3, config, temperature_moves=4, resign_below=-0.9, resign_playthrough=1.0)
    resumed.load_state_dict(played_on.state_dict())
    assert (resumed.resign_stats, resumed.playthrough, resumed.would_resign) == (
        stats, played_on.playthrough, played_on.would_resign)


def test_resignation_off_draws_no_random_numbers():
    from stonelab.games.go.rules import GoRules

    rules, config = GoRules(9), MCTSConfig(playouts=8)
    plain = SelfPlaySlots(rules, 2, config, temperature_moves=4).play(black_is_winning, 2, np.random.default_rng(5))
    off = SelfPlaySlots(rules, 2, config, temperature_moves=4, resign_below=None,
                        resign_playthrough=0.5).play(black_is_winning, 2, np.random.default_rng(5))
    np.testing.assert_array_equal(plain.planes, off.planes)


def test_playout_cap_randomization_trains_only_on_full_searches():
    """fast_playouts: most moves search cheaply and are not recorded; the recorded ones are full
    searches (their visit shares come from search.playouts visits) with root noise."""
    from stonelab.search.mcts import BatchedMCTS

    fresh = MCTSConfig(playouts=16, reuse_tree=False)  # so a root's visits are this search's alone
    full_only = SelfPlaySlots(RULES, 4, fresh, temperature_moves=4)
    capped = SelfPlaySlots(RULES, 4, fresh, temperature_moves=4, fast_playouts=2, full_search_share=0.25)
    evaluate = Counter(RULES.num_actions)
    a = full_only.play(evaluate, 6, np.random.default_rng(3))
    b = capped.play(evaluate, 6, np.random.default_rng(3))
    assert len(a.values) == a.lengths.sum()  # every position is a target
    assert 0 < len(b.values) < 0.6 * b.lengths.sum()  # about a quarter of them
    assert b.simulations < 0.6 * a.simulations * b.lengths.sum() / a.lengths.sum()
    # a recorded share is a multiple of 1/16 (16 playouts), never a cheap search's 1/2
    np.testing.assert_allclose(np.round(b.policies * 16), b.policies * 16, atol=1e-4)

    # per-game playouts in one batched search
    mcts = BatchedMCTS(RULES, 3, CONFIG)
    visits = mcts.search(evaluate, playouts=np.array([16, 3, 1]), add_noise=np.array([True, False, False]))
    assert visits.sum(axis=1).tolist() == [16, 3, 1]


def test_bad_playout_cap_settings_are_refused():
    from stonelab.callbacks.selfplay import SelfPlay
    from stonelab.errors import ConfigError

    with pytest.raises(ConfigError, match="callbacks.selfplay.fast_playouts=0 must be a whole number >= 1"):
        SelfPlay(CONFIG, fast_playouts=0)
    with pytest.raises(ConfigError, match=r"callbacks.selfplay.full_search_share=0.0 must be a share in \(0, 1\]"):
        SelfPlay(CONFIG, fast_playouts=8, full_search_share=0.0)


def test_go_games_carry_the_final_owner_and_margin_from_the_movers_view():
    from stonelab.games.go.rules import GoRules

    rules = GoRules(9, komi=7.0)
    games = SelfPlaySlots(rules, 2, MCTSConfig(playouts=8), temperature_moves=4).play(
        black_is_winning, 2, np.random.default_rng(3))
    movers = np.where(games.planes[:, 7, 0, 0] == 1, 1, -1)  # plane 7: black to move
    assert games.ownership.shape == (len(games.values), 81) and games.ownership.dtype == np.int8
    assert set(np.unique(games.ownership)) <= {-1, 0, 1} and (games.aux_weights == 1).all()
    # area margin = points owned - points the opponent owns - komi, from the mover's side
    np.testing.assert_allclose(games.scores, games.ownership.sum(axis=1) - 7.0 * movers)
    np.testing.assert_array_equal(np.sign(games.scores), games.values)  # the margin decides the result


def test_a_resigned_go_game_gives_no_ownership_or_score_target():
    from stonelab.games.go.rules import GoRules

    slots = SelfPlaySlots(GoRules(9), 2, MCTSConfig(playouts=8), temperature_moves=4, resign_below=-0.9,
                          resign_playthrough=0.0)
    games = slots.play(black_is_winning, 2, np.random.default_rng(0))
    assert len(games.values) > 0 and (games.aux_weights == 0).all()


def test_gomoku_games_have_no_ownership_targets(games):
    data, _ = games
    assert data.ownership is None and data.scores is None and data.aux_weights is None


def test_random_openings_open_a_share_of_games_and_are_not_trained_on():
    """opening_moves: a game that gets an opening starts from that many random stones, which
    are not training positions and do not count as searched; the rest start from the empty board."""
    rules = GomokuRules(8, 5)
    evaluate = Counter(rules.num_actions)
    opened = SelfPlaySlots(rules, 4, CONFIG, temperature_moves=2, opening_moves=2, opening_share=1.0)
    data = opened.play(evaluate, 4, np.random.default_rng(1))
    firsts = np.concatenate([[0], np.cumsum(data.lengths)[:-1]])
    stones = data.planes[firsts][:, :2].sum(axis=(1, 2, 3))
    assert stones.tolist() == [2, 2, 2, 2]  # each game's first searched position already holds the opening
    assert data.lengths.sum() == len(data.planes)  # the opening moves are neither searched nor recorded
    plain = SelfPlaySlots(rules, 4, CONFIG, temperature_moves=2, opening_moves=2, opening_share=0.0)
    data = plain.play(evaluate, 4, np.random.default_rng(1))
    firsts = np.concatenate([[0], np.cumsum(data.lengths)[:-1]])
    assert data.planes[firsts][:, :2].sum() == 0
    # a game in progress keeps its opening across a checkpoint
    carried = SelfPlaySlots(rules, 2, CONFIG, temperature_moves=2, opening_moves=2, opening_share=1.0)
    carried.play(evaluate, 1, np.random.default_rng(2))
    resumed = SelfPlaySlots(rules, 2, CONFIG, temperature_moves=2, opening_moves=2, opening_share=1.0)
    resumed.load_state_dict(carried.state_dict())
    assert resumed.opened == carried.opened and 2 in resumed.opened


@pytest.mark.parametrize("settings, words", [
    ({"opening_moves": -1}, "callbacks.selfplay.opening_moves=-1 must be a whole number >= 0"),
    ({"opening_moves": 2, "opening_share": 1.5}, r"callbacks.selfplay.opening_share=1.5 must be a share in \[0, 1\]"),
])
def test_bad_opening_settings_are_refused(settings, words):
    from stonelab.callbacks.selfplay import SelfPlay
    from stonelab.errors import ConfigError

    with pytest.raises(ConfigError, match=words):
        SelfPlay(CONFIG, **settings)


def test_an_opening_longer_than_the_game_allows_is_refused():
    """6x6 four in a row: at most 6 random stones (no line of four yet)."""
    from types import SimpleNamespace

    from stonelab.callbacks.selfplay import SelfPlay
    from stonelab.errors import ConfigError

    trainer, module = SimpleNamespace(global_rank=0), SimpleNamespace(game=RULES)
    with pytest.raises(ConfigError, match="callbacks.selfplay.opening_moves=7: at most 6 random moves open a game "
                                          "of gomoku_6x6_c4"):
        SelfPlay(CONFIG, opening_moves=7)._sessions(trainer, module)
    assert SelfPlay(CONFIG, opening_moves=6)._sessions(trainer, module)[0].opening_moves == 6
