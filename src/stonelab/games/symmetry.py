"""The symmetries of a board: 8 on a square (4 rotations x optional reflection), the 4
that keep a rectangle's shape on any other.

Each symmetry is a permutation of the flat point indices of a ``rows x columns`` grid:
``x_t = x[..., perm]`` transforms any per-point array (board, policy) whose last axis is
``rows * columns``. States with planes ``[..., C, H, W]`` go through `transform_planes`.
Extra actions past the grid (Go's pass) are left in place. Symmetry ``s`` is ``s % 4``
quarter turns of the grid, mirrored left-right first when ``s >= 4``; on a rectangle only
0 (identity), 2 (half turn), 4 (left-right mirror) and 6 (up-down mirror) keep the shape.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

NUM_SYMMETRIES = 8
# The symmetries a game keeps (its registry entry's ``symmetries``), as symmetry indices:
# all 8 on a square board; 4 keep a rectangle (identity, half turn and the two mirrors);
# 2: identity and the left-right mirror (a board with a "down", as Connect Four's); 1: none.
SYMMETRY_GROUPS = {8: tuple(range(8)), 4: (0, 2, 4, 6), 2: (0, 4), 1: (0,)}
SHAPE_KEEPING = (0, 2, 4, 6)  # the symmetries defined on a grid that is not square


@lru_cache(maxsize=64)
def grid_permutation(rows: int, columns: int, sym: int) -> np.ndarray:
    """``[rows * columns]`` int64: symmetry ``sym`` of the grid, mapping a transformed point
    to its source point. A quarter turn of a grid that is not square is refused."""
    if rows != columns and sym not in SHAPE_KEEPING:
        raise ValueError(f"symmetry {sym} turns a {rows}x{columns} grid on its side; "
                         f"a rectangle keeps only {SHAPE_KEEPING}")
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


def all_symmetries(planes: np.ndarray, policy: np.ndarray, group: int = NUM_SYMMETRIES,
                   action_shape: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The transformed copies of ``planes [B, C, H, W]`` and ``policy [B, A]`` under the
    ``group`` symmetries of `SYMMETRY_GROUPS`; the actions lie on an ``action_shape`` grid
    (default: the board's points, as in Gomoku and Go).

    Returns ``[group * B, C, H, W]`` and ``[group * B, A]``, symmetry-major.
    """
    action_shape = action_shape or tuple(planes.shape[-2:])
    syms = SYMMETRY_GROUPS[group]
    states = np.concatenate([transform_planes(planes, s) for s in syms])
    policies = np.concatenate([transform_points(policy, action_shape, s) for s in syms])
    return states, policies
