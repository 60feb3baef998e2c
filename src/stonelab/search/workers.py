"""Threads for the tree kernels of one search step, and cheap calls into jitted kernels.

`Workers` runs one function on ``count`` threads at once (the caller is worker 0) and
waits for all of them: `stonelab.search.mcts.BatchedMCTS` gives each worker its own
games and scratch, and the kernels (``nogil=True``) run side by side while the GIL
is free. `bind` resolves a kernel's compiled entry point once, so a call skips numba's
type dispatch, which for the tree kernels' namedtuple arguments costs more than the
work of a small step.
"""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Callable


def bind(kernel, *args) -> Callable:
    """The compiled entry point of the jitted ``kernel`` for the types of ``args``.

    Compiles (or loads from numba's cache) without running the kernel. Call it only
    with arguments of the same types: the entry point converts them without checking.
    Measured on the tree kernels (namedtuples of arrays): 12-20 µs per call through
    the dispatcher, 2 µs through the entry point.
    """
    if not hasattr(kernel, "compile"):  # NUMBA_DISABLE_JIT=1: a plain Python function
        return kernel
    return kernel.compile(tuple(kernel.typeof_pyval(a) for a in args))


def _serve(worker: int, jobs: queue.SimpleQueue, done: queue.SimpleQueue) -> None:
    while True:
        fn = jobs.get()
        if fn is None:
            return
        try:
            fn(worker)
        except BaseException as exc:  # handed to the caller of `Workers.run`
            done.put(exc)
        else:
            done.put(None)


def _stop(all_jobs: list[queue.SimpleQueue]) -> None:
    for jobs in all_jobs:
        jobs.put(None)


class Workers:
    """``count`` workers: the calling thread is worker 0, the others are daemon threads.

    `run` calls ``fn(worker)`` for every worker at once and returns when all have
    finished; the first exception raised in any of them is raised again in the caller.
    The threads end when the object is garbage-collected or `close` is called.
    """

    def __init__(self, count: int):
        self.count = count
        self._jobs = [queue.SimpleQueue() for _ in range(count - 1)]
        self._done: queue.SimpleQueue = queue.SimpleQueue()
        self._outstanding = 0  # jobs handed out whose end has not been collected
        for worker, jobs in enumerate(self._jobs, start=1):
            threading.Thread(target=_serve, args=(worker, jobs, self._done), daemon=True,
                             name=f"stonelab-tree-{worker}").start()
        self._finalizer = weakref.finalize(self, _stop, self._jobs)

    def run(self, fn: Callable[[int], object]) -> None:
        self._collect()  # a run interrupted while it waited (Ctrl-C) left jobs running
        for jobs in self._jobs:
            jobs.put(fn)
            self._outstanding += 1
        error = None
        try:
            fn(0)
        except BaseException as exc:
            error = exc
        collected = self._collect()
        error = error or collected
        if error is not None:
            raise error

    def _collect(self) -> BaseException | None:
        """Wait for every job handed out; the first exception one of them raised."""
        error = None
        while self._outstanding:
            exc = self._done.get()
            self._outstanding -= 1
            error = error or exc
        return error

    def close(self) -> None:
        """End the threads (also done when the object is garbage-collected)."""
        self._finalizer()
