"""An engine's first start: numba compiling its kernels, said on stderr, done on a thread.

The rules and the search are numba kernels with ``cache=True``: once compiled they load
from numba's cache in a fraction of a second, but on a fresh clone (or after a kernel
changed) each compiles on its first call, tens of seconds in all. An engine must not
go silent for that long: a GUI gives up on it or shows it hung. So

- `CompileNotice` writes one line on stderr as soon as numba starts compiling (a cache
  miss; loading from the cache says nothing), and
- `Background` runs the warm-up on a daemon thread, while the engine already answers
  the protocol (`stonelab.protocols.gtp_search.SearchGTPEngine.search_when_ready`).

A thread does not make the compiling itself any faster: numba's typing and lowering
hold the GIL, as does torch's import, and compiling on a thread during that import
gained nothing measurable on 2 cores. What it buys is an engine that answers meanwhile.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from numba.core import event

T = TypeVar("T")


class CompileNotice(event.Listener):
    """Writes ``message`` on stderr once, when numba first compiles a function (not when it
    loads one from its cache), from whichever thread compiles; `ready` then says when the
    engine is done with it."""

    def __init__(self, message: str):
        self.message = message
        self.said = False
        self.started = time.monotonic()

    def on_start(self, evt: event.Event) -> None:
        if not self.said:  # compilation runs under numba's global lock: one thread at a time here
            self.said = True
            print(self.message, file=sys.stderr, flush=True)

    def ready(self, what: str = "the search is ready") -> None:
        """One more line, ``what`` and the seconds since the start, if the notice was given."""
        if self.said:
            print(f"stonelab: {what} ({time.monotonic() - self.started:.0f} s after the start)",
                  file=sys.stderr, flush=True)

    def on_end(self, evt: event.Event) -> None:
        pass

    def __enter__(self) -> CompileNotice:
        event.register("numba:compile", self)
        return self

    def __exit__(self, *exc) -> None:
        event.unregister("numba:compile", self)


class Background(Generic[T]):
    """``step()`` run on a daemon thread, started at once: a quit while it compiles ends
    the engine without waiting for it."""

    def __init__(self, step: Callable[[], T], name: str = "warm-up"):
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(step,), name=name, daemon=True)
        self._thread.start()

    def _run(self, step: Callable[[], T]) -> None:
        try:
            self._value = step()
        except BaseException as exc:  # kept for the engine's thread, which re-raises it
            self._error = exc
        finally:
            self._done.set()

    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def result(self) -> T:
        """The step's return value once done (waiting for it), or its exception raised here."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value
