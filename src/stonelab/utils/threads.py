"""Torch's intra-op thread count, set for a stretch of work and restored after it.

Search evaluates small batches (one leaf per game): one thread is fastest, and on a
busy machine torch's spinning worker threads made such forwards up to 30x slower
(measured on 2 cores: 720 vs 6,248 self-play playouts/s, docs/training.md "Threads"). Training
steps on a 512-position minibatch still use every thread torch was given.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch

from stonelab.errors import ConfigError


def check_threads(count, key: str) -> None:
    """Refuse a thread setting that is not a whole number >= 1 (None: torch's default)."""
    if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 1):
        raise ConfigError(f"{key}={count!r} must be a whole number >= 1 (or null: torch's default)")


def set_threads(count, key: str = "torch_threads") -> None:
    """Give torch ``count`` threads from here on (None: leave torch's default), checked first."""
    check_threads(count, key)
    if count is not None:
        torch.set_num_threads(count)


@contextmanager
def torch_threads(count: int | None):
    """Run the block with ``count`` torch threads (None: leave torch's setting alone)."""
    if not count:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(int(count))
    try:
        yield
    finally:
        torch.set_num_threads(before)
