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
from stonelab.models import numpy_net
from stonelab.models.checkpoints import MODELS, identity_of
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
    # A file exported before (a .ckpt re-written as .npz) keeps the record of its training run.
    state[EXPORT_KEY] = state.get(EXPORT_KEY) or {
        "source": os.path.basename(source), "global_step": int(checkpoint.get("global_step", 0)),
        "date": datetime.date.today().isoformat()}
    shipped = {"state_dict": weights, CHECKPOINT_KEY: state,
               "hyper_parameters": dict(checkpoint.get("hyper_parameters") or {})}
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    if out.endswith(numpy_net.SUFFIX):
        write_numpy(shipped, source, out)
    else:
        torch.save(shipped, out)
    with open(out, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {"out": out, "model": identity["model"], "parameters": sum(v.numel() for v in weights.values()),
            "bytes": os.path.getsize(out), "sha256": digest, **state[EXPORT_KEY]}


def write_numpy(shipped: dict, source: str, out: str) -> None:
    """``shipped`` as the torch-free ``.npz`` file (`stonelab.models.numpy_net`); a net its
    forward pass does not cover is refused before anything is written."""
    state = shipped[CHECKPOINT_KEY]
    target = state.get("net_target") or MODELS[state["identity"]["model"]][1]
    if target not in numpy_net.NETS:
        raise StonelabError(f"{source} holds a {target.rsplit('.', 1)[1]}: the torch-free {numpy_net.SUFFIX} "
                            f"format holds {' or '.join(n.rsplit('.', 1)[1] for n in numpy_net.NETS)} nets "
                            f"(alphazero's); write a .ckpt for this one")
    weights = {name[len("net."):]: value.float().numpy() for name, value in shipped["state_dict"].items()}
    numpy_net.save(out, weights, {CHECKPOINT_KEY: {**state, "net_target": target}})
    numpy_net.NumpyNet(out)  # the file must play before it is called shipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stonelab.models.export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", help="a training checkpoint (e.g. <run>/checkpoints/best-....ckpt)")
    parser.add_argument("out", help="the file to write (e.g. models/go19_resnet.ckpt; a name ending in .npz "
                                    "writes the torch-free file a Gomocup brain plays within 350 MiB)")
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
