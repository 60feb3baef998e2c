"""Torch's intra-op thread count, set for a stretch of work and restored after it.

Search evaluates small batches (one leaf per game): one thread is fastest, and on a
busy machine torch's spinning worker threads made such forwards up to 30x slower
(measured on 2 cores: 720 vs 6,248 self-play playouts/s, README "Threads"). Training
steps on a 512-position minibatch still use every thread torch was given.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch


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
