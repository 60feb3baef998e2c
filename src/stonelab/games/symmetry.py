"""The symmetries of a board, by name: the 8 of a square (4 rotations x optional reflection),
the 4 that keep a rectangle's shape on any other.

Each symmetry is a permutation of the flat point indices of a ``rows x columns`` grid:
``x_t = x[..., perm]`` transforms any per-point array (board, policy) whose last axis is
``rows * columns``. States with planes ``[..., C, H, W]`` go through `transform_planes`.
Extra actions past the grid (Go's pass) are left in place. Symmetry ``s`` is ``s % 4``
quarter turns of the grid (counter-clockwise, as ``np.rot90``), mirrored left-right first
when ``s >= 4``; `NAMES` says what each index is. A game declares the ones its rules keep
by name (its registry entry's ``symmetries``, checked by `group`); on a rectangle only
identity, rot180, mirror_lr and mirror_ud keep the shape (`SHAPE_KEEPING`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

NUM_SYMMETRIES = 8
# Symmetry index -> name: what the transform does to the board as a picture.
NAMES = ("identity", "rot90", "rot180", "rot270", "mirror_lr", "transpose", "mirror_ud", "antitranspose")
INDEX = {name: s for s, name in enumerate(NAMES)}

# The usual groups a game declares (tuples of names; a game may give any closed set).
SQUARE = NAMES  # a square board whose rules look the same turned or mirrored (Go, Gomoku, Othello)
RECTANGLE = ("identity", "rot180", "mirror_lr", "mirror_ud")  # a rectangle with no direction
LEFT_RIGHT = ("identity", "mirror_lr")  # a board with a "down" (Connect Four's gravity)
HALF_TURN = ("identity", "rot180")  # a board whose sides belong to players (Hex)
IDENTITY_ONLY = ("identity",)  # no augmentation

SHAPE_KEEPING = tuple(INDEX[name] for name in RECTANGLE)  # the symmetries defined on a grid that is not square


@lru_cache(maxsize=64)
def grid_permutation(rows: int, columns: int, sym: int) -> np.ndarray:
    """``[rows * columns]`` int64: symmetry ``sym`` of the grid, mapping a transformed point
    to its source point. A quarter turn of a grid that is not square is refused."""
    if rows != columns and sym not in SHAPE_KEEPING:
        raise ValueError(f"symmetry {NAMES[sym]} turns a {rows}x{columns} grid on its side; "
                         f"a rectangle keeps only {', '.join(RECTANGLE)}")
    grid = np.arange(rows * columns).reshape(rows, columns)
    perm = np.rot90(np.fliplr(grid) if sym >= 4 else grid, sym % 4).reshape(-1)
    perm.setflags(write=False)
    return perm


@lru_cache(maxsize=32)
def permutations(n: int) -> np.ndarray:
    """``[8, n*n]`` int64 for a square board; row ``s`` is `grid_permutation` ``(n, n, s)``."""
    out = np.stack([grid_permutation(n, n, s) for s in range(NUM_SYMMETRIES)])
    out.setflags(write=False)
    return out


@lru_cache(maxsize=32)
def inverse_permutations(n: int) -> np.ndarray:
    """``[8, n*n]``: ``inverse[s]`` undoes ``permutations(n)[s]``."""
    perms = permutations(n)
    inv = np.empty_like(perms)
    rows = np.arange(perms.shape[0])[:, None]
    inv[rows, perms] = np.arange(n * n)[None, :]
    inv.setflags(write=False)
    return inv


def transform_points(x: np.ndarray, shape: int | tuple[int, int], sym: int) -> np.ndarray:
    """Apply symmetry ``sym`` to the last axis of ``x``: the points of a ``shape`` grid
    (``(rows, columns)``, or ``n`` for ``n x n``), then any extras, which stay in place."""
    rows, columns = (shape, shape) if isinstance(shape, int) else shape
    points = rows * columns
    perm = grid_permutation(rows, columns, sym)
    if x.shape[-1] == points:
        return x[..., perm]
    head = x[..., :points][..., perm]
    return np.concatenate([head, x[..., points:]], axis=-1)


def transform_planes(planes: np.ndarray, sym: int) -> np.ndarray:
    """Apply symmetry ``sym`` to ``[..., C, H, W]`` planes."""
    height, width = planes.shape[-2:]
    flat = planes.reshape(*planes.shape[:-2], height * width)
    return transform_points(flat, (height, width), sym).reshape(planes.shape)


def group(names: Sequence[str]) -> tuple[int, ...]:
    """The symmetry indices of the transforms ``names`` (sorted), refusing a set the replay
    buffer could not use: an unknown name, no identity (every position is also kept as
    played), or a set not closed under composition (two kept symmetries one after the other
    are a symmetry too, so a gap means one of the declared ones is wrong)."""
    if not isinstance(names, tuple | list) or not all(isinstance(name, str) for name in names):
        raise ValueError(f"symmetries={names!r}: give a tuple of names, e.g. ('identity', 'mirror_lr')")
    unknown = [name for name in names if name not in INDEX]
    if unknown:
        raise ValueError(f"symmetries: {', '.join(map(repr, unknown))} not known; the names are {', '.join(NAMES)}")
    if "identity" not in names:
        raise ValueError(f"symmetries={tuple(names)!r} must hold 'identity' (every position is kept as played)")
    indices = tuple(sorted({INDEX[name] for name in names}))
    for first in indices:
        for then in indices:
            both = compose(first, then)
            if both not in indices:
                raise ValueError(f"symmetries={tuple(names)!r} are not closed under composition: {NAMES[first]} then "
                                 f"{NAMES[then]} is {NAMES[both]}, not declared (add it, or drop one of the two)")
    return indices


def compose(first: int, then: int) -> int:
    """The symmetry that is ``first`` followed by ``then``."""
    both = grid_permutation(3, 3, first)[grid_permutation(3, 3, then)]  # 3x3: all 8 differ
    return next(s for s in range(NUM_SYMMETRIES) if np.array_equal(grid_permutation(3, 3, s), both))


def group_on(names: Sequence[str], board_shape: tuple[int, int], action_shape: tuple[int, int]) -> tuple[int, ...]:
    """`group` of ``names`` on a board of ``board_shape`` whose actions lie on an
    ``action_shape`` grid: a quarter turn (or a diagonal mirror) of a grid that is not
    square would turn it on its side, so it is refused naming the grid."""
    indices = group(names)
    turning = [NAMES[s] for s in indices if s not in SHAPE_KEEPING]
    for what, (rows, columns) in (("board", board_shape), ("action grid", action_shape)):
        if rows != columns and turning:
            raise ValueError(f"symmetries {', '.join(turning)} turn the {rows}x{columns} {what} on its side: "
                             f"a grid that is not square keeps only {', '.join(RECTANGLE)}")
    return indices


def all_symmetries(planes: np.ndarray, policy: np.ndarray, symmetries: Sequence[int] = tuple(range(NUM_SYMMETRIES)),
                   action_shape: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The transformed copies of ``planes [B, C, H, W]`` and ``policy [B, A]`` under the
    symmetry indices ``symmetries`` (default all 8; a game's come from `group_on`); the
    actions lie on an ``action_shape`` grid (default: the board's points, as in Gomoku and Go).

    Returns ``[S * B, C, H, W]`` and ``[S * B, A]`` for ``S`` symmetries, symmetry-major.
    """
    action_shape = action_shape or tuple(planes.shape[-2:])
    states = np.concatenate([transform_planes(planes, s) for s in symmetries])
    policies = np.concatenate([transform_points(policy, action_shape, s) for s in symmetries])
    return states, policies
