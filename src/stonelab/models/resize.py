"""A trained net moved to another board size: ``python -m stonelab.models.resize SRC OUT --board-size 9``.

Two kinds of nets move. An alphazero net built with ``model/net=fully_conv``
(`stonelab.models.nets.fully_conv`) has no weight tied to the board: its file is only
relabelled (the game's board size in its identity), so that it plays, is evaluated and
seeds a run (``init_from``) on the new board, e.g. a 9x9 Gomoku net continuing on 15x15.
The Go move predictors need more:

The Go move predictors are convolutional: their filters and heads do not depend on the
board, only their per-point biases do (``policy_bias [2, n, n]`` of the residual net,
``biases.k [F, n, n]`` of seed 002's CNN). Resizing keeps every other weight as it is and
gives each point of the new board the bias of the point at the same distance from the
same edges on the old one (`edge_index`): a 9x9 board keeps the 19x19 net's first four
lines on every side and takes the fifth line for its centre. The value head averages over
the board (`stonelab.models.nets.maddison.ValueHead`), so it runs on any size too.

Why: a net trained on 19x19 KGS games knows shape, liberties and ladders, and those are
the same on 9x9. Played on 9x9 it is a trained 9x9 player at no extra training cost; what
it lacks is 9x9's own openings and its value knows nothing of 9x9's komi.

The written file is a shipped weights file (as `stonelab.models.export` writes): it plays,
evaluates and seeds a run (``init_from``), and records what it was resized from.
A belief_vit (position embeddings of one board's tokens) and alphazero nets with fully
connected heads (``model/net=policy_value``) are refused by name.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import hashlib
import os
import sys

import torch

from stonelab.errors import StonelabError
from stonelab.models.checkpoints import MODELS, build_net, identity_of
from stonelab.models.export import print_summary
from stonelab.models.identity import CHECKPOINT_KEY, EXPORT_KEY, load_checkpoint_file

RESIZED_KEY = "resized"  # under checkpoint["stonelab"]: the source file and board it came from
RESIZABLE_NETS = ("stonelab.models.nets.resnet.ResidualNet", "stonelab.models.nets.maddison.MaddisonNet")
SIZE_FREE_NET = "stonelab.models.nets.fully_conv.FullyConvNet"  # relabelled, weights unchanged
MIN_BOARD, MAX_BOARD = 5, 25


def edge_index(old: int, new: int) -> list[int]:
    """For each row (or column) of a ``new``-line board, the row of an ``old``-line board at
    the same distance from the same edge; distances beyond the old board's half take its
    middle line. ``edge_index(19, 9) == [0, 1, 2, 3, 4, 15, 16, 17, 18]``."""
    middle = (old - 1) // 2
    out = []
    for i in range(new):
        from_far_edge = new - 1 - i
        if i <= from_far_edge:
            out.append(min(i, middle))
        else:
            out.append(old - 1 - min(from_far_edge, middle))
    return out


def resize_weights(weights: dict[str, torch.Tensor], old: int, new: int) -> dict[str, torch.Tensor]:
    """``weights`` with every tensor whose last two dimensions are the ``old`` board moved
    to the ``new`` board by `edge_index`; other tensors unchanged (shared, not copied)."""
    index = torch.tensor(edge_index(old, new))
    out = {}
    for name, value in weights.items():
        if value.dim() >= 2 and tuple(value.shape[-2:]) == (old, old):
            value = value.index_select(-2, index).index_select(-1, index).clone()
        out[name] = value
    return out


def resized_net(net: torch.nn.Module, old: int, new: int) -> torch.nn.Module:
    """A copy of the loaded Go move predictor ``net`` (a `RESIZABLE_NETS` one, possibly
    wrapped, e.g. in `SymmetryAverage`) for a ``new``-line board: the same weights as
    `resize_weights` writes to a file, for an engine asked about another board size."""
    inner = getattr(net, "net", net)
    target = f"{type(inner).__module__}.{type(inner).__qualname__}"
    if target not in RESIZABLE_NETS:
        raise StonelabError(f"this engine's {type(inner).__name__} plays {old}x{old} only: only "
                            f"convolutional Go nets change board size")
    if new == old:
        return net
    twin = copy.deepcopy(net)
    moved = resize_weights(dict(twin.state_dict()), old, new)
    for module in twin.modules():
        for name, param in list(module.named_parameters(recurse=False)):
            if tuple(param.shape[-2:]) == (old, old):
                setattr(module, name, torch.nn.Parameter(moved[_qualified(twin, module, name)]))
        if hasattr(module, "board_size"):
            module.board_size = new
            module.config = {**getattr(module, "config", {}), "board_size": new}
    return twin


def _qualified(root: torch.nn.Module, module: torch.nn.Module, name: str) -> str:
    prefix = next(path for path, m in root.named_modules() if m is module)
    return f"{prefix}.{name}" if prefix else name


def resize(source: str, out: str, board_size: int) -> dict:
    """Write ``source``'s Go move predictor for ``board_size`` x ``board_size`` to ``out``;
    returns its summary (as `stonelab.models.export.export` does)."""
    if not isinstance(board_size, int) or not MIN_BOARD <= board_size <= MAX_BOARD:
        raise StonelabError(f"--board-size {board_size!r} must be an integer in [{MIN_BOARD}, {MAX_BOARD}]")
    checkpoint = load_checkpoint_file(source)
    identity = identity_of(checkpoint, source)
    state = dict(checkpoint[CHECKPOINT_KEY])
    target = state.get("net_target") or MODELS[identity["model"]][1]
    if target not in (*RESIZABLE_NETS, SIZE_FREE_NET):
        names = ", ".join(n.rsplit(".", 1)[1] for n in (SIZE_FREE_NET, *RESIZABLE_NETS))
        raise StonelabError(f"{source} holds {identity['model']}'s {target.rsplit('.', 1)[-1]}: only "
                            f"convolutional nets can change board size ({names})")
    old = int(identity["board_size"])
    weights = {k: v for k, v in checkpoint.get("state_dict", {}).items() if k.startswith("net.")}
    config = {**state.get("net_config", {}), "board_size": board_size}
    if target == SIZE_FREE_NET:
        resized = weights
        if "num_actions" in config:  # Go's: one per point and the pass
            config["num_actions"] = board_size * board_size + 1
    else:
        resized = resize_weights(weights, old, board_size)
    state["identity"] = {**identity, "board_size": board_size}
    state["net_config"] = config
    today = datetime.date.today().isoformat()
    state[RESIZED_KEY] = {"source": os.path.basename(source), "board_size": old, "date": today}
    state.setdefault(EXPORT_KEY, {"source": os.path.basename(source),
                                  "global_step": int(checkpoint.get("global_step", 0)), "date": today})
    shipped = {"state_dict": resized, CHECKPOINT_KEY: state,
               "hyper_parameters": dict(checkpoint.get("hyper_parameters") or {})}
    build_net(shipped, out)  # the new file's net must build before it is written
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    torch.save(shipped, out)
    with open(out, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {"out": out, "model": identity["model"], "board_size": board_size, "from_board_size": old,
            "parameters": sum(v.numel() for v in resized.values()), "bytes": os.path.getsize(out),
            "sha256": digest}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stonelab.models.resize", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", help="a Go move predictor's checkpoint (e.g. models/go19_resnet3x64_kgs_22k.ckpt) "
                                       "or an alphazero one trained with model/net=fully_conv")
    parser.add_argument("out", help="the file to write (e.g. models/go9_resnet3x64_from19.ckpt)")
    parser.add_argument("--board-size", type=int, required=True, help="the new board's side (5-25)")
    args = parser.parse_args(argv)
    return print_summary(lambda: resize(args.source, args.out, args.board_size))


if __name__ == "__main__":
    sys.exit(main())
