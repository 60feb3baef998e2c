"""What the engine tests share."""

import sys

import pytest


def _compiled_signatures() -> int:
    """How many (kernel, argument types) pairs numba holds, over stonelab's kernels: a call
    that adds one compiled (or loaded from the cache) a kernel for new types."""
    from numba.core.dispatcher import Dispatcher

    kernels = {id(v): v for name, module in list(sys.modules.items()) if name.startswith("stonelab")
               for v in list(vars(module).values()) if isinstance(v, Dispatcher)}
    return sum(len(kernel.overloads) for kernel in kernels.values())


@pytest.fixture
def compiled_signatures():
    """``compiled_signatures() -> int``: equal before and after some calls when a warm-up
    has already compiled everything they run."""
    return _compiled_signatures
