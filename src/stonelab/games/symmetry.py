"""The 8 symmetries of a square board (4 rotations x optional reflection).

Each symmetry is a permutation of the flat point indices: ``x_t = x[..., perm]``
transforms any per-point array (board, policy) whose last axis is ``n * n``.
States with planes ``[..., C, n, n]`` go through `transform_planes`. Extra
actions past ``n * n`` (e.g. Go's pass) are left in place.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

NUM_SYMMETRIES = 8
# The symmetries a game keeps (its registry entry's ``symmetries``), as indices into
# `permutations`: all 8 on a square board; 4 keep a rectangle (identity, half turn and the
# two mirrors); 2: identity and the half turn; 1: none.
SYMMETRY_GROUPS = {8: tuple(range(8)), 4: (0, 2, 4, 6), 2: (0, 2), 1: (0,)}


@lru_cache(maxsize=32)
def permutations(n: int) -> np.ndarray:
    """``[8, n*n]`` int64; row ``s`` maps a transformed point to its source point."""
    grid = np.arange(n * n).reshape(n, n)
    perms = []
    for flip in (False, True):
        g = np.fliplr(grid) if flip else grid
        for rot in range(4):
            perms.append(np.rot90(g, rot).reshape(-1))
    out = np.stack(perms)
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


def transform_points(x: np.ndarray, n: int, sym: int) -> np.ndarray:
    """Apply symmetry ``sym`` to the last axis of ``x`` (length n*n, or n*n + extras)."""
    perm = permutations(n)[sym]
    if x.shape[-1] == n * n:
        return x[..., perm]
    head = x[..., : n * n][..., perm]
    return np.concatenate([head, x[..., n * n :]], axis=-1)


def transform_planes(planes: np.ndarray, sym: int) -> np.ndarray:
    """Apply symmetry ``sym`` to ``[..., C, n, n]`` planes."""
    n = planes.shape[-1]
    flat = planes.reshape(*planes.shape[:-2], n * n)
    return transform_points(flat, n, sym).reshape(planes.shape)


def all_symmetries(planes: np.ndarray, policy: np.ndarray, group: int = NUM_SYMMETRIES
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The transformed copies of ``planes [B, C, n, n]`` and ``policy [B, A]`` under the
    ``group`` symmetries of `SYMMETRY_GROUPS`.

    Returns ``[group * B, C, n, n]`` and ``[group * B, A]``, symmetry-major.
    """
    n = planes.shape[-1]
    syms = SYMMETRY_GROUPS[group]
    states = np.concatenate([transform_planes(planes, s) for s in syms])
    policies = np.concatenate([transform_points(policy, n, s) for s in syms])
    return states, policies
