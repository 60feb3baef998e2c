"""The torch device an entry point's ``device`` setting names."""

from __future__ import annotations

import torch


def resolve_device(name: str) -> str:
    """``auto`` -> ``cuda`` when a GPU is visible, else ``cpu``; any other name as given."""
    if name != "auto":
        return name
    return "cuda" if torch.cuda.is_available() else "cpu"
