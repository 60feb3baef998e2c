"""KataGo's analysis fields that both analysis protocols report (the JSON engine,
`stonelab.protocols.analysis`, and GTP's kata-analyze, `stonelab.protocols.gtp_search`):
position hashes, the spread of ownership over the search, the engine's version and the
loaded model's facts.
"""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from stonelab.games.go.rules import GoState

CHECKPOINT_FORMAT = 1  # query_models' "version": stonelab's checkpoint format (one so far: class + arguments + weights)


def position_hashes(state: GoState) -> tuple[str, str]:
    """(``thisHash``, ``symHash``) of ``state`` as KataGo prints them: 128 bits in 32 hex digits.

    ``thisHash`` tells apart every (stones, side to move, simple ko ban) triple, as KataGo's
    does: a BLAKE2b digest of the board size, the side to move, the stones and the banned
    point. ``symHash`` is the smallest such digest over the board's 8 symmetries (the ko
    point turned with the stones), so a position and its mirror or rotation share it.
    Neither counts the superko history (nor does KataGo's symHash).
    """
    n = state.n
    board = np.asarray(state.board, dtype=np.int8).reshape(n, n)
    ko = np.zeros((n, n), dtype=np.int8)
    if state.ko_point >= 0:
        ko[divmod(state.ko_point, n)] = 1
    head = bytes([n, state.to_play & 0xFF])

    def digest(stones: np.ndarray, ban: np.ndarray) -> str:
        return hashlib.blake2b(head + stones.tobytes() + ban.tobytes(), digest_size=16).hexdigest().upper()

    this = digest(board, ko)
    return this, min(digest(turn(board), turn(ko)) for turn in SYMMETRIES)


def _symmetries():
    """The 8 symmetries of a square: 4 rotations, each with and without a transpose."""
    turns = []
    for k in range(4):
        turns.append(lambda a, k=k: np.ascontiguousarray(np.rot90(a, k)))
        turns.append(lambda a, k=k: np.ascontiguousarray(np.rot90(a, k).T))
    return tuple(turns)


SYMMETRIES = _symmetries()


def ownership_spread(samples: Iterable[tuple[float, np.ndarray]]) -> np.ndarray:
    """Per-point weighted standard deviation of ownership maps ``[(weight, map)]`` (all in one
    colour's view): ``sqrt(sum w (o - mean)^2 / sum w)``, in [0, 1] for maps in [-1, 1];
    0 where every map agrees."""
    weights, maps = zip(*[(float(w), np.asarray(m, dtype=np.float64)) for w, m in samples if w > 0], strict=True)
    w = np.asarray(weights)[:, None]
    stack = np.stack(maps)
    mean = (w * stack).sum(axis=0) / w.sum()
    return np.sqrt(np.maximum((w * (stack - mean) ** 2).sum(axis=0) / w.sum(), 0.0))


@functools.cache
def git_hash() -> str:
    """The commit of the checkout this package runs from (``-dirty`` after it when tracked
    files differ from it), or KataGo's ``<omitted>`` where there is none (a wheel, no git)."""
    here = Path(__file__).resolve().parent
    try:
        done = subprocess.run(["git", "-C", str(here), "describe", "--always", "--dirty", "--abbrev=40",
                               "--exclude=*"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return "<omitted>"
    text = done.stdout.strip()
    return text if done.returncode == 0 and text else "<omitted>"


def model_facts(predictor, path: str, max_batch: int) -> dict:
    """``query_models``' entry of the loaded checkpoint (KataGo's keys):

    - ``name``: the checkpoint file's name (KataGo: the model file's);
    - ``internalName``: the net's class, its input planes and its board;
    - ``maxBatchSize``: the positions one search step sends the net at once
      (``search.leaves_per_game``); scoring the shown moves of a report may send more;
    - ``usesHumanSLProfile``: false, no ``humanSLProfile`` setting reaches the net (a
      maddison net reads a rank, always the engine's own, `stonelab.features.maddison.PLAY_RANK`);
    - ``version``: stonelab's checkpoint format (`CHECKPOINT_FORMAT`);
    - ``usingFP16``: "true" where the net's weights are float16, else "false".
    """
    net = getattr(predictor, "net", None)
    inner = getattr(net, "net", net)  # under a symmetry average
    n = predictor.rules.n
    weights = next(iter(net.parameters()), None) if net is not None else None
    half = weights is not None and str(weights.dtype) == "torch.float16"
    return {"name": os.path.basename(str(path)) if path else type(inner).__name__,
            "internalName": f"{type(inner).__name__}-{getattr(predictor, 'encoder', None) or 'alphazero'}-{n}x{n}",
            "maxBatchSize": int(max_batch), "usesHumanSLProfile": False, "version": CHECKPOINT_FORMAT,
            "usingFP16": "true" if half else "false"}
