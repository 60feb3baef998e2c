"""The 8 square-board symmetries, by name, applied to boards, planes and policy targets."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.games import symmetry
from stonelab.games.gomoku.rules import BLACK, board_from_rows, encode_position, line_length
from stonelab.games.symmetry import (
    NAMES,
    NUM_SYMMETRIES,
    all_symmetries,
    inverse_permutations,
    permutations,
    transform_planes,
    transform_points,
)

SIZES = [5, 6, 9]


@pytest.mark.parametrize("n", SIZES)
def test_eight_distinct_permutations(n):
    perms = permutations(n)
    assert perms.shape == (NUM_SYMMETRIES, n * n)
    for p in perms:
        np.testing.assert_array_equal(np.sort(p), np.arange(n * n))
    assert len({tuple(p) for p in perms}) == NUM_SYMMETRIES
    # One of them is the identity.
    assert any(np.array_equal(p, np.arange(n * n)) for p in perms)


@pytest.mark.parametrize("n", SIZES)
def test_permutations_are_the_dihedral_group_of_the_square(n):
    grid = np.arange(n * n).reshape(n, n)
    expected = set()
    for g in (grid, grid.T):
        for rot in range(4):
            expected.add(tuple(np.rot90(g, rot).reshape(-1)))
    assert {tuple(p) for p in permutations(n)} == expected


def pictures(m: np.ndarray) -> dict[str, np.ndarray]:
    """Each named transform of the picture ``m``, by numpy's own words."""
    return {"identity": m, "rot90": np.rot90(m), "rot180": np.rot90(m, 2), "rot270": np.rot90(m, 3),
            "mirror_lr": np.fliplr(m), "transpose": m.T, "mirror_ud": np.flipud(m), "antitranspose": np.rot90(m, 2).T}


def test_each_name_says_what_its_symmetry_does_to_the_picture():
    square, rectangle = np.arange(16).reshape(4, 4), np.arange(12).reshape(3, 4)
    assert tuple(pictures(square)) == NAMES
    for name, want in pictures(square).items():
        np.testing.assert_array_equal(transform_planes(square, symmetry.INDEX[name]), want)
    for name in symmetry.RECTANGLE:
        np.testing.assert_array_equal(transform_planes(rectangle, symmetry.INDEX[name]), pictures(rectangle)[name])


@pytest.mark.parametrize("group", [symmetry.SQUARE, symmetry.RECTANGLE, symmetry.LEFT_RIGHT,
                                   symmetry.HALF_TURN, symmetry.IDENTITY_ONLY])
def test_the_named_groups_are_groups(group):
    assert symmetry.group(group) == tuple(sorted(symmetry.INDEX[name] for name in group))


def test_compose_is_one_symmetry_after_the_other():
    x = np.arange(25)
    for first in range(NUM_SYMMETRIES):
        for then in range(NUM_SYMMETRIES):
            both = transform_points(transform_points(x, 5, first), 5, then)
            np.testing.assert_array_equal(both, transform_points(x, 5, symmetry.compose(first, then)))
    assert NAMES[symmetry.compose(symmetry.INDEX["mirror_lr"], symmetry.INDEX["mirror_ud"])] == "rot180"


@pytest.mark.parametrize("n", SIZES)
def test_inverse_undoes_each_permutation(n):
    perms, inv = permutations(n), inverse_permutations(n)
    for s in range(NUM_SYMMETRIES):
        np.testing.assert_array_equal(perms[s][inv[s]], np.arange(n * n))
        np.testing.assert_array_equal(inv[s][perms[s]], np.arange(n * n))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("sym", range(NUM_SYMMETRIES))
def test_transform_then_inverse_is_identity_for_boards_and_policies(n, sym):
    rng = np.random.default_rng(n * 10 + sym)
    board = rng.integers(-1, 2, size=n * n).astype(np.int8)
    policy = rng.random((3, n * n)).astype(np.float32)
    inv = inverse_permutations(n)[sym]
    tb = transform_points(board, n, sym)
    tp = transform_points(policy, n, sym)
    np.testing.assert_array_equal(tb[inv], board)
    np.testing.assert_array_equal(tp[..., inv], policy)
    # Multisets are preserved (it is a permutation of points).
    np.testing.assert_array_equal(np.sort(tb), np.sort(board))


@pytest.mark.parametrize("sym", range(NUM_SYMMETRIES))
def test_transform_planes_round_trip(sym):
    n = 7
    rng = np.random.default_rng(sym)
    planes = rng.random((2, 4, n, n)).astype(np.float32)
    out = transform_planes(planes, sym)
    assert out.shape == planes.shape
    inv = inverse_permutations(n)[sym]
    back = out.reshape(2, 4, n * n)[..., inv].reshape(planes.shape)
    np.testing.assert_array_equal(back, planes)


@pytest.mark.parametrize("sym", range(1, NUM_SYMMETRIES))
def test_non_identity_symmetries_move_an_asymmetric_pattern(sym):
    n = 6
    planes = np.zeros((1, n, n), dtype=np.float32)
    planes[0, 0, 1] = 1.0  # off every symmetry axis
    planes[0, 2, 0] = 2.0
    assert not np.array_equal(transform_planes(planes, sym), planes)


@pytest.mark.parametrize("sym", range(NUM_SYMMETRIES))
def test_planes_and_policy_move_together(sym):
    n = 7
    rng = np.random.default_rng(100 + sym)
    for _ in range(5):
        point = int(rng.integers(n * n))
        planes = np.zeros((1, 4, n, n), dtype=np.float32)
        planes[0, 0].flat[point] = 1.0  # marker stone
        planes[0, 3] = 1.0
        policy = np.zeros((1, n * n), dtype=np.float32)
        policy[0, point] = 1.0
        tpl = transform_planes(planes, sym)
        tpo = transform_points(policy, n, sym)
        marker = np.flatnonzero(tpl[0, 0].reshape(-1))
        assert marker.size == 1
        assert int(np.argmax(tpo[0])) == int(marker[0])
        assert tpo[0].sum() == 1.0
        assert np.all(tpl[0, 3] == 1.0)


def test_policy_target_stays_on_the_same_point_of_a_real_position():
    # The target is the point completing black's line; it must still complete it after any symmetry.
    rows = ["......",
            ".XXX..",
            "......",
            "..O...",
            "..O...",
            "......"]
    n = 6
    board = board_from_rows(rows)
    target = 1 * n + 4
    planes = encode_position(board, n, BLACK, 4 * n + 2)[None]
    policy = np.zeros((1, n * n), dtype=np.float32)
    policy[0, target] = 1.0
    for sym in range(NUM_SYMMETRIES):
        tpl = transform_planes(planes, sym)[0]
        t_target = int(np.argmax(transform_points(policy, n, sym)[0]))
        t_board = (tpl[0] - tpl[1]).reshape(-1).astype(np.int8)
        assert t_board[t_target] == 0
        t_board[t_target] = BLACK
        assert line_length(t_board, n, t_target) == 4
        # The last-move plane moved like the stones did.
        last = int(np.argmax(tpl[2].reshape(-1)))
        assert t_board[last] == -1


def test_all_symmetries_shapes_and_order():
    n, b, c = 5, 3, 4
    rng = np.random.default_rng(0)
    planes = rng.random((b, c, n, n)).astype(np.float32)
    policy = rng.random((b, n * n)).astype(np.float32)
    states, policies = all_symmetries(planes, policy)
    assert states.shape == (NUM_SYMMETRIES * b, c, n, n)
    assert policies.shape == (NUM_SYMMETRIES * b, n * n)
    for s in range(NUM_SYMMETRIES):
        np.testing.assert_array_equal(states[s * b:(s + 1) * b], transform_planes(planes, s))
        np.testing.assert_array_equal(policies[s * b:(s + 1) * b], transform_points(policy, n, s))
    # Each copy keeps its sample's policy mass.
    np.testing.assert_allclose(policies.reshape(NUM_SYMMETRIES, b, -1).sum(-1),
                               np.tile(policy.sum(-1), (NUM_SYMMETRIES, 1)), rtol=1e-6)


def test_all_symmetries_of_symmetric_position_are_equal():
    n = 5
    planes = np.zeros((1, 4, n, n), dtype=np.float32)
    planes[0, 0, 2, 2] = 1.0
    policy = np.zeros((1, n * n), dtype=np.float32)
    policy[0, 12] = 1.0
    states, policies = all_symmetries(planes, policy)
    for s in range(NUM_SYMMETRIES):
        np.testing.assert_array_equal(states[s], planes[0])
        np.testing.assert_array_equal(policies[s], policy[0])


def test_extra_actions_past_the_board_stay_in_place():
    n = 5
    rng = np.random.default_rng(3)
    policy = rng.random((2, n * n + 1)).astype(np.float32)
    policy[:, -1] = [0.123, 0.456]
    planes = rng.random((2, 4, n, n)).astype(np.float32)
    states, policies = all_symmetries(planes, policy)
    assert policies.shape == (NUM_SYMMETRIES * 2, n * n + 1)
    np.testing.assert_array_equal(policies[:, -1], np.tile(np.float32([0.123, 0.456]), NUM_SYMMETRIES))
    for s in range(NUM_SYMMETRIES):
        t = transform_points(policy, n, s)
        np.testing.assert_array_equal(t[:, : n * n], transform_points(policy[:, : n * n], n, s))
        np.testing.assert_array_equal(t[:, n * n:], policy[:, n * n:])
