"""Gomoku's policy-value nets in numpy: a shipped ``.npz`` file plays without torch.

Why: a Gomocup brain runs under a memory limit (GomocupJudge's default: 350 MiB). torch
alone is ~145 MiB of private memory before a weight is read; numpy's forward pass of these
small nets needs none of it. ``python -m stonelab.models.export RUN_CKPT OUT.npz`` writes
the file: the net's weights as float32 arrays under their ``state_dict`` names and the
checkpoint's stonelab record (identity, net class and arguments, export record) as JSON.
`stonelab.models.identity.load_checkpoint_file` reads the same file for everything else
(eval, matches, resize, ``init_from``), so one file serves both.

The forward pass (`NumpyNet`) runs channels-last: a 3x3 convolution is one matrix product
of every point's 3x3 neighbourhood ([B*H*W, 9*C]) with the filters, batch norm folded into
the convolution before it at load. It gives the torch net's outputs to float32 rounding
(tests/models/test_numpy_net.py) for `stonelab.models.nets.fully_conv.FullyConvNet` and
`stonelab.models.nets.policy_value.PolicyValueNet` (the shipped 8x8 net); other nets are
refused by name. Nothing here imports torch.
"""

from __future__ import annotations

import json
import zipfile

import numpy as np

from stonelab.errors import StonelabError

SUFFIX = ".npz"
META_KEY = "__stonelab__"  # the npz entry holding the JSON record
NETS = ("stonelab.models.nets.fully_conv.FullyConvNet", "stonelab.models.nets.policy_value.PolicyValueNet")
BN_EPS = 1e-5  # torch's BatchNorm2d default, which every net here uses
# FullyConvNet's width-scaled mean pool: mean * (width - WIDTH_CENTRE) / WIDTH_SCALE, about +-1
# from 5x5 to 20x20. Here, not in the torch module, so that this one needs no torch.
WIDTH_CENTRE, WIDTH_SCALE = 12.0, 8.0


def save(path: str, weights: dict[str, np.ndarray], record: dict) -> None:
    """Write ``weights`` (float32 arrays by state_dict name, without the ``net.`` prefix) and ``record``."""
    if META_KEY in weights:
        raise StonelabError(f"a weight may not be named {META_KEY}")
    arrays = {name: np.ascontiguousarray(value, dtype=np.float32) for name, value in weights.items()}
    with open(path, "wb") as f:
        np.savez(f, **arrays, **{META_KEY: np.array(json.dumps(record))})


def read(path: str) -> tuple[dict[str, np.ndarray], dict]:
    """The weights and record of a ``.npz`` file `save` wrote; anything else is refused saying what it is."""
    if not zipfile.is_zipfile(path):  # numpy would read any other file as a pickle and say so
        raise StonelabError(f"ckpt_path={path} is not a readable .npz weights file (not a zip archive; "
                            f"python -m stonelab.models.export RUN.ckpt OUT.npz writes one)")
    try:
        with np.load(path, allow_pickle=False) as data:  # never unpickle what a file holds
            arrays = {name: data[name] for name in data.files}
        record = json.loads(str(arrays.pop(META_KEY))) if META_KEY in arrays else None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise StonelabError(f"ckpt_path={path} is not a readable .npz weights file "
                            f"({type(exc).__name__}: {' '.join(str(exc).split())[:120]})") from None
    if record is None:
        raise StonelabError(f"ckpt_path={path} is a numpy archive without stonelab's record "
                            f"({META_KEY}): not written by python -m stonelab.models.export")
    if not isinstance(record, dict) or not isinstance(record.get("stonelab"), dict):
        raise StonelabError(f"ckpt_path={path}: its {META_KEY} record is not stonelab's")
    return arrays, record


def batch_norm(weights: dict[str, np.ndarray], norm: str) -> tuple[np.ndarray, np.ndarray]:
    """Batch norm ``norm`` in eval mode as ``x * scale + shift`` per channel."""
    scale = weights[f"{norm}.weight"] / np.sqrt(weights[f"{norm}.running_var"] + BN_EPS)
    return scale, weights[f"{norm}.bias"] - weights[f"{norm}.running_mean"] * scale


def fold_batch_norm(weight: np.ndarray, bias: np.ndarray | None, weights: dict[str, np.ndarray],
                    norm: str) -> tuple[np.ndarray, np.ndarray]:
    """A convolution (``weight [O, C, kh, kw]``) followed by batch norm ``norm`` (eval mode) as one."""
    scale, shift = batch_norm(weights, norm)
    folded_bias = shift if bias is None else bias * scale + shift
    return weight * scale[:, None, None, None], folded_bias


class Conv:
    """A convolution channels-last: ``x [B, H, W, C]`` -> ``[B, H, W, O]`` (odd kernels, "same" padding)."""

    def __init__(self, weight: np.ndarray, bias: np.ndarray | None):
        out, channels, kh, kw = weight.shape
        self.kernel = (kh, kw)
        # rows ordered (dy, dx, c), matching the neighbourhood layout built in __call__
        self.matrix = np.ascontiguousarray(weight.transpose(2, 3, 1, 0).reshape(kh * kw * channels, out),
                                           dtype=np.float32)
        self.bias = np.zeros(out, np.float32) if bias is None else bias.astype(np.float32)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        b, h, w, c = x.shape
        kh, kw = self.kernel
        if (kh, kw) == (1, 1):
            return x @ self.matrix + self.bias
        ph, pw = kh // 2, kw // 2
        padded = np.zeros((b, h + 2 * ph, w + 2 * pw, c), np.float32)
        padded[:, ph:ph + h, pw:pw + w] = x
        columns = np.empty((b, h, w, kh, kw, c), np.float32)
        for dy in range(kh):
            for dx in range(kw):
                columns[:, :, :, dy, dx] = padded[:, dy:dy + h, dx:dx + w]
        return (columns.reshape(b * h * w, kh * kw * c) @ self.matrix).reshape(b, h, w, -1) + self.bias


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0, out=x)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


class Linear:
    def __init__(self, weights: dict[str, np.ndarray], name: str):
        self.matrix = np.ascontiguousarray(weights[f"{name}.weight"].T, dtype=np.float32)
        self.bias = weights[f"{name}.bias"].astype(np.float32)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return x @ self.matrix + self.bias


def conv_bn(weights: dict[str, np.ndarray], conv: str, norm: str) -> Conv:
    return Conv(*fold_batch_norm(weights[f"{conv}.weight"], weights.get(f"{conv}.bias"), weights, norm))


def conv(weights: dict[str, np.ndarray], name: str) -> Conv:
    return Conv(weights[f"{name}.weight"], weights.get(f"{name}.bias"))


def board_pools(x: np.ndarray) -> np.ndarray:
    """``x [B, H, W, C]`` -> ``[B, 3C]``: `stonelab.models.nets.fully_conv.board_pools` without a mask."""
    mean = x.mean(axis=(1, 2))
    width = np.sqrt(x.shape[1] * x.shape[2])
    return np.concatenate([mean, mean * (width - WIDTH_CENTRE) / WIDTH_SCALE, x.max(axis=(1, 2))], axis=1)


class FullyConvForward:
    """`stonelab.models.nets.fully_conv.FullyConvNet`'s forward (eval mode, no mask)."""

    def __init__(self, config: dict, w: dict[str, np.ndarray]):
        self.stem = conv_bn(w, "stem", "stem_bn")
        self.blocks = []
        for i in range(config["blocks"]):
            pooled = f"blocks.{i}.pool.norm.weight" in w
            first = conv(w, f"blocks.{i}.conv1")
            pool = None
            if pooled:
                scale, shift = batch_norm(w, f"blocks.{i}.pool.norm")
                pool = (len(scale), scale, shift, Linear(w, f"blocks.{i}.pool.linear"))
            after_first = batch_norm(w, f"blocks.{i}.bn1")
            self.blocks.append((first, pool, after_first, conv_bn(w, f"blocks.{i}.conv2", f"blocks.{i}.bn2")))
        self.policy = conv_bn(w, "policy_conv", "policy_bn")
        self.policy_out = conv(w, "policy_out")
        self.pass_fc = Linear(w, "pass_fc") if "pass_fc.weight" in w else None
        self.value = conv_bn(w, "value_conv", "value_bn")
        self.value_fc1, self.value_fc2 = Linear(w, "value_fc1"), Linear(w, "value_fc2")

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = relu(self.stem(x))
        for first, pool, (scale, shift), second in self.blocks:
            y = first(x)
            if pool is not None:
                pooled, p_scale, p_shift, linear = pool
                g = relu(y[..., :pooled] * p_scale + p_shift)
                y = y[..., pooled:] + linear(board_pools(g))[:, None, None, :]
            y = relu(y * scale + shift)
            x = relu(x + second(y))
        p = relu(self.policy(x))
        logits = self.policy_out(p).reshape(len(x), -1)
        if self.pass_fc is not None:
            logits = np.concatenate([logits, self.pass_fc(board_pools(p))], axis=1)
        v = relu(self.value(x))
        value = np.tanh(self.value_fc2(relu(self.value_fc1(board_pools(v))))).reshape(-1)
        return log_softmax(logits), value


class PolicyValueForward:
    """`stonelab.models.nets.policy_value.PolicyValueNet`'s forward (eval mode; no Go heads)."""

    def __init__(self, config: dict, w: dict[str, np.ndarray]):
        if config.get("ownership_head") or config.get("score_head"):
            raise StonelabError("the numpy forward pass has no Go ownership or score heads")
        self.trunk = [conv(w, f"trunk.{2 * i}") for i in range(len(config["channels"]))]
        first = 2 * len(self.trunk)  # the residual blocks follow the (conv, ReLU) pairs in torch's Sequential
        blocks = [f"trunk.{first + i}" for i in range(config.get("res_blocks", 0))]
        self.blocks = [(conv_bn(w, f"{b}.conv1", f"{b}.bn1"), conv_bn(w, f"{b}.conv2", f"{b}.bn2")) for b in blocks]
        self.policy_conv, self.value_conv = conv(w, "policy_conv"), conv(w, "value_conv")
        self.policy_fc, self.value_fc1, self.value_fc2 = (Linear(w, "policy_fc"), Linear(w, "value_fc1"),
                                                          Linear(w, "value_fc2"))

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        for layer in self.trunk:
            x = relu(layer(x))
        for first, second in self.blocks:
            x = relu(x + second(relu(first(x))))
        flat = len(x)

        def channels_first(y):  # torch flattens [C, H, W]
            return y.transpose(0, 3, 1, 2).reshape(flat, -1)

        logits = self.policy_fc(channels_first(relu(self.policy_conv(x))))
        hidden = relu(self.value_fc1(channels_first(relu(self.value_conv(x)))))
        return log_softmax(logits), np.tanh(self.value_fc2(hidden)).reshape(-1)


FORWARDS = {NETS[0]: FullyConvForward, NETS[1]: PolicyValueForward}


class NumpyNet:
    """A search `Evaluator` from a ``.npz`` file: planes float32 [B, C, H, W] -> (priors [B, A], values [B])."""

    def __init__(self, path: str):
        weights, record = read(path)
        self.path = path
        self.record = record["stonelab"]
        target = self.record.get("net_target") or NETS[1]  # alphazero files before net_target: PolicyValueNet
        if target not in FORWARDS:
            raise StonelabError(f"ckpt_path={path} holds a {target.rsplit('.', 1)[-1]}: the numpy runtime plays "
                                f"{' and '.join(n.rsplit('.', 1)[1] for n in NETS)} nets")
        self.config = dict(self.record.get("net_config", {}))
        self.size_free = target == NETS[0]
        try:
            self.forward = FORWARDS[target](self.config, weights)
        except KeyError as exc:
            raise StonelabError(f"ckpt_path={path}: its weights lack {exc} for a "
                                f"{target.rsplit('.', 1)[1]} of {self.config}") from None

    @property
    def identity(self) -> dict:
        return dict(self.record.get("identity", {}))

    def game(self):
        """The rules this net was trained for (its identity's game, as the registry builds it)."""
        from stonelab.games import registry

        identity = self.identity
        try:
            return registry.get(identity.get("game"), key="its identity's game").from_identity(identity)
        except KeyError as exc:
            raise StonelabError(f"{self.path}: its stonelab identity lacks {exc} ({identity})") from None

    def __call__(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = np.ascontiguousarray(np.asarray(planes, np.float32).transpose(0, 2, 3, 1))
        log_policy, value = self.forward(x)
        return np.exp(log_policy).astype(np.float32), value.astype(np.float32)
