"""Shared behaviour of the entry points: user errors as one line, exit code 2.

The errors are ours (StonelabError, a constructor refusing a config value) or Hydra's
(a misspelt group option or key on the command line); ``STONELAB_TRACEBACK=1`` or
``HYDRA_FULL_ERROR=1`` shows the whole story instead.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from contextlib import contextmanager

from hydra._internal import utils as _hydra_utils
from hydra._internal.hydra import Hydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import (
    ConfigCompositionException,
    InstantiationException,
    MissingConfigException,
    OverrideParseException,
)
from omegaconf import DictConfig
from omegaconf.errors import ConfigAttributeError, ConfigKeyError

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


# --- Hydra's own errors: the config could not be composed from the command line ------------

def run_hydra_main(main):
    """Call a ``@hydra.main`` function; a config that cannot be composed is one line, exit 2.

    Hydra composes the config inside ``hydra.main`` before ``main``'s body runs, and
    prints its own errors there (a config search-path dump, a ``+`` hint, exit 1).
    Its reporter is wrapped so that these errors are explained first. ``--help``
    composes outside that reporter, so the call itself is wrapped too.
    """
    with _hydra_patched(_hydra_utils, "run_and_report", _reporter_explaining_config_errors), \
            _hydra_patched(Hydra, "format_config_groups", _format_groups_of_this_config):
        return _explain_config_errors(main)


@contextmanager
def _hydra_patched(owner, name: str, wrap):
    original = getattr(owner, name, None)
    if original is None:  # another Hydra version: its own output, nothing lost
        yield
        return
    setattr(owner, name, wrap(original))
    try:
        yield
    finally:
        setattr(owner, name, original)


def _reporter_explaining_config_errors(run_and_report):
    return lambda func: run_and_report(lambda: _explain_config_errors(func))


def _explain_config_errors(func):
    try:
        return func()
    except (ConfigCompositionException, OverrideParseException) as exc:
        if _developer_wants_traceback():
            raise
        print(f"error: {config_error(exc)}", file=sys.stderr)
        sys.exit(2)


def _developer_wants_traceback() -> bool:
    return bool(os.environ.get("STONELAB_TRACEBACK")) or os.environ.get("HYDRA_FULL_ERROR") == "1"


def config_error(exc: ConfigCompositionException | OverrideParseException) -> str:
    """One line for a command line Hydra could not compose into a config."""
    if isinstance(exc, MissingConfigException):
        return _missing_option(exc)
    if isinstance(exc, OverrideParseException):
        return f"cannot read {exc.override!r}: {_one_line(exc.message, '; ')}"
    if isinstance(exc.__cause__, (ConfigAttributeError, ConfigKeyError)):
        typed = re.search(r"use \+(.+)", str(exc))  # Hydra's hint repeats the override as typed
        return _unknown_key(exc.__cause__, typed.group(1) if typed else str(exc.__cause__.full_key))
    existing = re.search(r"already at '([^']+)'.*prefix: '([^']+)'", str(exc), re.DOTALL)
    if existing:
        key, assignment = existing.groups()
        return f"{key} is already a setting; drop the +: {assignment} (++{assignment} adds or overrides)"
    return _one_line(_without_search_path(str(exc)))


def _missing_option(exc: MissingConfigException) -> str:
    """``model=beliefvit``: name the group, its options and the closest one."""
    group, _, option = (exc.missing_cfg_file or "").rpartition("/")
    if not exc.options:  # no such group, or the primary config itself is missing
        return _first_line(_without_search_path(str(exc)).split(": ", 1)[-1])
    options = sorted(exc.options)
    text = f"{group}={option}: no such option of group {group} (choose {', '.join(options)})"
    closest = difflib.get_close_matches(option, options, n=1)
    return f"{text}; did you mean {closest[0]}?" if closest else text


# Settings that moved: the old key on a command line is answered with the new one.
MOVED_KEYS = {"search.go_value": "go.leaf_value", "search.go_value_playouts": "go.leaf_playouts"}


def _unknown_key(missing: ConfigAttributeError | ConfigKeyError, assignment: str) -> str:
    """``trainer.max_epoch=1``: the closest existing key, or how to add a new one.

    OmegaConf names the first missing part of the dotted key (``traner`` in
    ``traner.max_epochs``) and the config that lacks it; the rest of the key is kept.
    """
    key = assignment.split("=", 1)[0]
    if key in MOVED_KEYS:
        return (f"{key} is now {MOVED_KEYS[key]} (Go's own search settings, conf/go/default.yaml): "
                f"{MOVED_KEYS[key]}={assignment.partition('=')[2]}")
    parent = missing.parent_node
    known = [str(k) for k in parent.keys() if k != "hydra"] if isinstance(parent, DictConfig) else []
    closest = difflib.get_close_matches(str(missing.key), known, n=1)
    if not closest:
        return f"{key} is not a setting; a new key needs a leading +: +{assignment}"
    prefix = str(missing.full_key).rpartition(".")[0]
    suggestion = ".".join(filter(None, [prefix, closest[0]])) + key[len(str(missing.full_key)):]
    return f"{key} is not a setting; did you mean {suggestion}? (a new key needs a leading +)"


def _without_search_path(text: str) -> str:
    return text.split("\nConfig search path:")[0]


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def _one_line(text: str, joint: str = " ") -> str:
    return joint.join(line.strip() for line in text.splitlines() if line.strip())


# --- --help: the groups this config uses -------------------------------------------------------

def _format_groups_of_this_config(format_config_groups):
    """Hydra's help lists every group under conf/, which three entry points share
    (train's help would offer eval's task=...). Keep the groups this config composes
    (hydra.runtime.choices: train's model, game..., eval's task and what it pulls in)
    and their subgroups."""

    def format_groups(hydra_app, predicate, compact: bool = True) -> str:
        used = HydraConfig.get().runtime.choices if HydraConfig.initialized() else None
        if used is None:
            return format_config_groups(hydra_app, predicate, compact)
        return format_config_groups(
            hydra_app, lambda group: predicate(group) and (_is_hydra_group(group) or _within_used(group, used)),
            compact)

    return format_groups


def _within_used(group: str, used) -> bool:
    """``model/net`` counts once ``model`` is used: an option of it may choose a net."""
    while group:
        if group in used:
            return True
        group = group.rpartition("/")[0]
    return False


def _is_hydra_group(group: str) -> bool:
    return group == "hydra" or group.startswith("hydra/")
