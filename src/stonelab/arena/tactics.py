"""Scoring a player on a tactics suite (each game's own ``tactics`` module generates the
positions and answers them: `stonelab.games.gomoku.tactics`, `stonelab.games.go.tactics`).

A position is solved when the answer is in its known set.
"""

from __future__ import annotations

import numpy as np


def score(tactics: list, answers: np.ndarray) -> dict[str, float]:
    """Share of positions solved, per kind and over all (kinds weigh by their positions)."""
    solved = np.array([int(a) in t.answers for t, a in zip(tactics, answers, strict=True)], dtype=float)
    return _per_kind(tactics, solved)


def random_baseline(tactics: list) -> dict[str, float]:
    """What a uniformly random legal move scores, in expectation: the floor of every row."""
    return _per_kind(tactics, np.array([len(t.answers) / t.legal_moves for t in tactics]))


def _per_kind(tactics: list, values: np.ndarray) -> dict[str, float]:
    kinds = dict.fromkeys(t.kind for t in tactics)  # in the suite's order
    out = {kind: float(values[[t.kind == kind for t in tactics]].mean()) for kind in kinds}
    out["all"] = float(values.mean())
    return out


def counts(tactics: list) -> dict[str, int]:
    """Positions of each kind, in the suite's order."""
    return {kind: sum(t.kind == kind for t in tactics) for kind in dict.fromkeys(t.kind for t in tactics)}
