"""What a checkpoint is for: every stonelab module stores an identity (model, game,
board, ...) under ``checkpoint["stonelab"]`` and refuses a checkpoint whose identity
differs, naming each difference."""

from __future__ import annotations

import os

import torch

from stonelab.errors import StonelabError

CHECKPOINT_KEY = "stonelab"


class CheckpointMismatchError(StonelabError):
    """A checkpoint made for another game or model."""


def check_identity(checkpoint: dict, expected: dict, source: str) -> None:
    """Refuse a checkpoint of another model, game or board with a specific message."""
    state = checkpoint.get(CHECKPOINT_KEY)
    if not isinstance(state, dict) or "identity" not in state:
        raise CheckpointMismatchError(f"{source} was not written by stonelab's {expected['model']} model")
    found = state["identity"]
    diffs = [f"{key}: checkpoint has {found.get(key)!r}, this run has {value!r}"
             for key, value in expected.items() if found.get(key) != value]
    if diffs:
        raise CheckpointMismatchError(f"{source} does not fit this run ({'; '.join(diffs)})")


def load_checkpoint_file(path: str) -> dict:
    """Read a checkpoint on the CPU with a clear error for a missing or broken file."""
    if not os.path.isfile(path):
        raise StonelabError(f"ckpt_path={path}: no such file")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a corrupt file
        raise CheckpointMismatchError(f"ckpt_path={path}: not a readable checkpoint ({exc})") from exc
