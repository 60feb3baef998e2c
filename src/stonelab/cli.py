"""Shared behaviour of the entry points: user errors as one line, exit code 2."""

from __future__ import annotations

import os
import re
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


def construction_error(exc: InstantiationException) -> str:
    """One line for a config value a constructor could not take (a word where a number belongs).

    Hydra's message names the target and the config key; the constructor's own
    error follows on the next line.
    """
    text = str(exc)
    target = re.search(r"target '([^']+)'", text)
    key = re.search(r"full_key: (\S+)", text)
    cause = exc.__cause__
    what = f"{type(cause).__name__}: {cause}" if cause is not None else text.splitlines()[-1]
    where = key.group(1) if key else "the config"
    built = f" ({target.group(1)})" if target else ""
    return (f"{where}{built} could not be built from its settings: {' '.join(what.split())}; "
            f"check the values given for {where}.* (python src/train.py --cfg job shows them)")


def _is_value_error(cause: BaseException | None) -> bool:
    """Errors a constructor raises for a bad value (torch says RuntimeError for a negative size)."""
    if os.environ.get("STONELAB_TRACEBACK"):  # a developer wants the whole story
        return False
    return isinstance(cause, (TypeError, ValueError, RuntimeError)) or \
        type(cause).__name__ == "MisconfigurationException"


def run_or_explain(fn, *args):
    try:
        return fn(*args)
    except (StonelabError, InstantiationException) as exc:
        cause = user_error(exc)
        if cause is not None:
            message = str(cause)
        elif isinstance(exc, InstantiationException) and _is_value_error(exc.__cause__):
            message = construction_error(exc)
        else:
            raise
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)
