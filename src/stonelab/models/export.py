"""A trained model as a file to ship: ``python -m stonelab.models.export RUN_CKPT OUT``.

A training checkpoint holds the optimizer's moments, the loops' and callbacks' states
and the module's weights: what a resume needs, three times the size of what playing
needs. The exported file keeps what `stonelab.models.checkpoints.load` reads (the net's
``net.*`` weights, stonelab's identity with the net's class and arguments, a
belief_vit's gate, the module's hyperparameters) plus where it came from, so `src/play.py`,
`src/eval.py` and the arena load it like any checkpoint, and a resume from it is refused
by name (it has nothing to resume).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import sys

import torch

from stonelab.errors import StonelabError
from stonelab.models.checkpoints import identity_of
from stonelab.models.identity import CHECKPOINT_KEY, EXPORT_KEY, load_checkpoint_file


def exported_from(checkpoint: dict) -> dict | None:
    """The export record of a shipped weights file (None for a training checkpoint)."""
    state = checkpoint.get(CHECKPOINT_KEY)
    return state.get(EXPORT_KEY) if isinstance(state, dict) else None


def export(source: str, out: str) -> dict:
    """Write ``source``'s model as weights and identity only to ``out``; returns its summary."""
    checkpoint = load_checkpoint_file(source)
    identity = identity_of(checkpoint, source)
    weights = {k: v.detach().clone().contiguous() for k, v in checkpoint.get("state_dict", {}).items()
               if k.startswith("net.")}
    if not weights:
        raise StonelabError(f"{source} holds no network weights (no state_dict entries 'net.*')")
    state = dict(checkpoint[CHECKPOINT_KEY])
    state[EXPORT_KEY] = {"source": os.path.basename(source), "global_step": int(checkpoint.get("global_step", 0)),
                         "date": datetime.date.today().isoformat()}
    shipped = {"state_dict": weights, CHECKPOINT_KEY: state,
               "hyper_parameters": dict(checkpoint.get("hyper_parameters") or {})}
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    torch.save(shipped, out)
    with open(out, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {"out": out, "model": identity["model"], "parameters": sum(v.numel() for v in weights.values()),
            "bytes": os.path.getsize(out), "sha256": digest, **state[EXPORT_KEY]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stonelab.models.export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", help="a training checkpoint (e.g. <run>/checkpoints/best-....ckpt)")
    parser.add_argument("out", help="the file to write (e.g. models/go19_resnet.ckpt)")
    args = parser.parse_args(argv)
    return print_summary(lambda: export(args.source, args.out))


def print_summary(write) -> int:
    """A model-file command's end: ``write()``'s summary as one line of ``key=value`` (exit 0),
    or its user error as one ``error:`` line on stderr (exit 2)."""
    try:
        summary = write()
    except StonelabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(" ".join(f"{k}={v}" for k, v in summary.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
