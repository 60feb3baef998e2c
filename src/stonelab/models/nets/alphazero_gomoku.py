"""The trained nets that AlphaZero_Gomoku (seed 000's baseline code) publishes, as stonelab nets.

That project ships its Theano/Lasagne weights as a Python 2 pickle of 16 float32 numpy
arrays (``best_policy_8_8_5.model``: 8x8, five in a row). The layers are exactly those of
`stonelab.models.nets.policy_value.PolicyValueNet` at its default widths (32-64-128 convs,
4-plane policy head, 2-plane value head with 64 hidden units), and its four input planes
are ours (own stones, opponent stones, last move, all ones when black is to move). So the
file becomes a `PolicyValueNet` with three changes of layout, none of which is learned:

- Theano's conv2d flips its kernels (a true convolution): each kernel is turned by 180
  degrees to serve PyTorch's cross-correlation.
- Its dense layers compute ``x @ W + b``: ``nn.Linear`` stores ``W`` transposed.
- It was trained on planes flipped upside down (``planes[:, ::-1, :]``) while its 64 policy
  outputs index the unflipped points (``row * n + col``): `UpsideDownInput` flips our planes
  the same way before the net sees them, and leaves the outputs alone.

These nets are evaluation opponents (``task=match opponent=<file>``,
``callbacks.evaluation.opponent_checkpoint=<file>``), never a start for training: the
project measures itself against a net it did not train.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle

import numpy as np
import torch
from torch import nn

from stonelab.models.identity import CheckpointMismatchError
from stonelab.models.nets.policy_value import PolicyValueNet

# The files we know, by sha256: what they hold (their README's words).
GAME = "gomoku"  # the registered game its files play (freestyle five in a row)
KNOWN_FILES = {
    "c089392ec7aa62d34c4cc9c710603d84263388d35901e5cac81ebb3eb3fa996d":
        "best_policy_8_8_5.model: 8x8, five in a row (AlphaZero_Gomoku, commit 0b4917c)",
}
PICKLE_PROTOCOL_2 = b"\x80\x02"


def _expected_shapes(n: int) -> list[tuple[int, ...]]:
    """Layer shapes in file order for an n x n board: conv1-3 (W, b), policy conv, policy fc,
    value conv, value fc1, value fc2."""
    return [(32, 4, 3, 3), (32,), (64, 32, 3, 3), (64,), (128, 64, 3, 3), (128,),
            (4, 128, 1, 1), (4,), (4 * n * n, n * n), (n * n,),
            (2, 128, 1, 1), (2,), (2 * n * n, 64), (64,), (64, 1), (1,)]


class _NumpyOnly(pickle.Unpickler):
    """An unpickler that builds numpy arrays and nothing else: a pickle can name any
    callable, and this file comes from outside the project."""

    # Python 3 writes an array's bytes at protocol 2 through _codecs.encode (str -> bytes).
    ALLOWED = {("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
               ("numpy._core.multiarray", "_reconstruct"), ("_codecs", "encode")}

    def find_class(self, module: str, name: str):
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"it asks for {module}.{name}, which a file of numpy weights never needs")
        if module == "_codecs":
            import codecs

            return codecs.encode
        if name == "_reconstruct":
            from numpy._core.multiarray import _reconstruct

            return _reconstruct
        return getattr(np, name)


def looks_like(path: str) -> bool:
    """Whether ``path`` starts like an AlphaZero_Gomoku weights file (a protocol-2 pickle);
    stonelab's own checkpoints are zip archives."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == PICKLE_PROTOCOL_2
    except OSError:
        return False


def read_weights(path: str) -> tuple[list[np.ndarray], int]:
    """The 16 arrays of an AlphaZero_Gomoku weights file and its board size, checked layer by layer."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        weights = _NumpyOnly(io.BytesIO(data), encoding="bytes").load()
    except Exception as exc:  # a truncated or foreign pickle raises many types
        raise CheckpointMismatchError(f"{path} is not an AlphaZero_Gomoku weights file: "
                                      f"{type(exc).__name__}: {exc}") from None
    if not (isinstance(weights, list) and len(weights) == 16
            and all(isinstance(w, np.ndarray) for w in weights)):
        raise CheckpointMismatchError(f"{path} is not an AlphaZero_Gomoku weights file: it holds "
                                      f"{type(weights).__name__}, not a list of 16 numpy arrays")
    points = weights[9].shape[0] if weights[9].ndim == 1 else 0
    n = int(round(points ** 0.5))
    if n * n != points:
        raise CheckpointMismatchError(f"{path}: its policy layer has {points} outputs, not one per point of a square board")
    for i, (w, shape) in enumerate(zip(weights, _expected_shapes(n), strict=True)):
        if w.shape != shape:
            raise CheckpointMismatchError(f"{path}: array {i} has shape {w.shape}, AlphaZero_Gomoku's net "
                                          f"for {n}x{n} has {shape} there")
    return [np.asarray(w, dtype=np.float32) for w in weights], n


class UpsideDownInput(nn.Module):
    """``net`` fed our planes flipped top to bottom, as AlphaZero_Gomoku's nets were trained."""

    def __init__(self, net: PolicyValueNet):
        super().__init__()
        self.net = net
        self.config = net.config

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.net(planes.flip(2))


def load(path: str) -> tuple[nn.Module, int, str]:
    """AlphaZero_Gomoku's net in ``path``: (net on the CPU in eval mode, board size, a label).

    The label names the file, and says so when its sha256 is none of `KNOWN_FILES`.
    """
    weights, n = read_weights(path)
    net = PolicyValueNet(n)
    state = {}
    layers = [("trunk.0", True), ("trunk.2", True), ("trunk.4", True), ("policy_conv", True),
              ("policy_fc", False), ("value_conv", True), ("value_fc1", False), ("value_fc2", False)]
    for i, (name, is_conv) in enumerate(layers):
        w, b = weights[2 * i], weights[2 * i + 1]
        w = w[:, :, ::-1, ::-1] if is_conv else w.T
        state[f"{name}.weight"] = torch.from_numpy(w.copy())
        state[f"{name}.bias"] = torch.from_numpy(b)
    net.load_state_dict(state)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    known = "" if digest in KNOWN_FILES else f" (not a file we know: sha256 {digest[:12]})"
    return UpsideDownInput(net).eval(), n, f"alphazero_gomoku:{os.path.basename(path)}{known}"
