"""Shared behaviour of the entry points: user errors as one line, exit code 2."""

from __future__ import annotations

import sys

from hydra.errors import InstantiationException

from stonelab.errors import StonelabError


def user_error(exc: BaseException) -> StonelabError | None:
    """The StonelabError behind ``exc`` (Hydra wraps errors raised in constructors)."""
    while exc is not None:
        if isinstance(exc, StonelabError):
            return exc
        if not isinstance(exc, InstantiationException):
            return None
        exc = exc.__cause__
    return None


def run_or_explain(fn, *args):
    try:
        return fn(*args)
    except (StonelabError, InstantiationException) as exc:
        cause = user_error(exc)
        if cause is None:
            raise
        print(f"error: {cause}", file=sys.stderr)
        sys.exit(2)
