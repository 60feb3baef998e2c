"""What a checkpoint is for: every stonelab module stores an identity (model, game,
board, ...) under ``checkpoint["stonelab"]`` and refuses a checkpoint whose identity
differs, naming each difference."""

from __future__ import annotations

import os
import warnings
import zipfile

import torch
import yaml
from torch import nn

from stonelab.errors import StonelabError
from stonelab.games import registry
from stonelab.models import numpy_net
from stonelab.resume import carried_overrides, run_folder_of

CHECKPOINT_KEY = "stonelab"
EXPORT_KEY = "exported"  # under checkpoint["stonelab"] of a shipped weights file: its source, step, date


def net_target(net: nn.Module) -> str:
    """The import path of ``net``'s class, saved in a checkpoint so that it can be rebuilt."""
    return f"{type(net).__module__}.{type(net).__qualname__}"


# Identity fields that say under which rules a net was trained, not what it reads or
# outputs: a five-in-a-row net of another rule set (freestyle, standard, renju) still fits
# as a warm start (init_from) or an opponent (task=match), never as a resume (ckpt_path).
RULE_FIELDS = ("rule",)


def net_fit(identity: dict) -> dict:
    """``identity`` without `RULE_FIELDS`: what another file's net must match to be used here."""
    return {key: value for key, value in identity.items() if key not in RULE_FIELDS}


class CheckpointMismatchError(StonelabError):
    """A checkpoint made for another game or model."""


def check_identity(checkpoint: dict, expected: dict, source: str) -> None:
    """Refuse a checkpoint of another model, game or board with a specific message."""
    state = checkpoint.get(CHECKPOINT_KEY)
    if not isinstance(state, dict) or "identity" not in state:
        raise CheckpointMismatchError(f"{source} was not written by stonelab's {expected['model']} model")
    found = state["identity"]
    if isinstance(found, dict) and found.get("game") != expected.get("game") and "game" in expected:
        raise CheckpointMismatchError(f"{source} does not fit this run: it holds {describe(found)}, "
                                      f"this run has {describe(expected)}")
    diffs = [f"{key}: checkpoint has {found.get(key)!r}, this run has {value!r}"
             for key, value in expected.items() if found.get(key) != value]
    if diffs:
        raise CheckpointMismatchError(f"{source} does not fit this run ({'; '.join(diffs)})")


def describe(identity: dict) -> str:
    """A model's identity in words: "an alphazero Gomoku model (6x6, 4 in a row)"."""
    model, game = identity.get("model", "unknown"), identity.get("game")
    a = "an" if str(model)[:1] in "aeiou" else "a"
    if game in registry.names():
        spec = registry.get(game)
        return f"{a} {model} {spec.title} model ({spec.describe(identity)})"
    return f"model {model!r}"


def load_checkpoint_file(path: str | os.PathLike) -> dict:
    """Read a checkpoint on the CPU; a file that is not one is refused saying what it is."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise StonelabError(f"ckpt_path={path} is a folder, not a checkpoint file")
    if not os.path.isfile(path):
        raise StonelabError(missing_checkpoint_text(path))
    if path.endswith(numpy_net.SUFFIX):  # the torch-free shipped format, as torch tensors
        weights, record = numpy_net.read(path)
        return {"state_dict": {f"net.{name}": torch.from_numpy(value) for name, value in weights.items()},
                CHECKPOINT_KEY: record[CHECKPOINT_KEY], "hyper_parameters": {}}
    try:
        with warnings.catch_warnings():  # torch warns about pickle protocols before failing
            warnings.simplefilter("ignore")
            checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a file that is not a checkpoint
        raise CheckpointMismatchError(f"ckpt_path={path} {unreadable_reason(path, exc)}") from exc
    if not isinstance(checkpoint, dict):
        raise CheckpointMismatchError(f"ckpt_path={path} holds a {type(checkpoint).__name__}, not a checkpoint "
                                      f"(a dict of weights and stonelab's identity, as training writes it)")
    return checkpoint


def missing_checkpoint_text(path: str) -> str:
    """Why ``path`` is not there: in a run folder that saved nothing yet (a run stopped before its
    first checkpoint), say so and give the command that starts it again; else "no such file"."""
    folder = run_folder_of(path)
    if folder is None:
        return f"ckpt_path={path}: no such file"
    saved = sorted(p.name for p in (folder / "checkpoints").glob("*.ckpt"))
    if saved:
        return f"ckpt_path={path}: no such file; that run saved {', '.join(saved)} in {folder / 'checkpoints'}"
    try:
        given = carried_overrides(folder)
    except (OSError, yaml.YAMLError):
        given = []
    again = " ".join(["python src/train.py", *given])
    return (f"ckpt_path={path}: nothing was saved yet in {folder} (the run stopped before its first "
            f"checkpoint, written after its first half minute of training): start it again with {again}")


def unreadable_reason(path: str, exc: Exception) -> str:
    """Why torch could not read ``path``, in words (what the file is, not torch's internals)."""
    with open(path, "rb") as f:
        head = f.read(4096)
    if not head:
        return "is empty (0 bytes), not a checkpoint: an interrupted copy or save?"
    if zipfile.is_zipfile(path):
        return "is a zip archive but not a readable PyTorch checkpoint (truncated or corrupted?)"
    if head[0] == 0x80 and 2 <= head[1] <= 5:  # a pickle's PROTO opcode
        return ("is a pickle of Python objects that no checkpoint holds; it was not written by stonelab "
                "(and loading it could run arbitrary code)")
    try:
        head.decode("utf-8")
        return "is a text file, not a checkpoint"
    except UnicodeDecodeError:
        return "is not a checkpoint: neither a PyTorch zip archive nor a pickle (random or corrupted bytes?)"
