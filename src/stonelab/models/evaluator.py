"""A plain policy-value net as the search's `Evaluator`, without Lightning.

Kept apart from `stonelab.models.alphazero` (which re-exports it) so that playing a
checkpoint does not import Lightning: 4-5 s of a Gomocup brain's start-up on this
machine (``python -X importtime``, 2026-12-01), all before it could answer START.

Search precision (``callbacks.selfplay.precision``, ``callbacks.evaluation.precision``):
``32`` runs the net's forward in float32, ``bf16`` under bfloat16 autocast (the GPU's
fast path: tensor cores, half the activation traffic), ``null`` follows
``trainer.precision`` (bf16 when it is ``bf16-mixed`` or ``bf16-true``). Priors and values
come back as float32 numpy whatever the precision: the search's numba kernels read
float32.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from stonelab.errors import ConfigError
from stonelab.search.mcts import Evaluator

SEARCH_PRECISIONS = ("32", "bf16")


def check_search_precision(value, key: str) -> str | None:
    """``value`` as "32" / "bf16", or None (follow the trainer); a one-line error otherwise."""
    if value is None:
        return None
    text = str(value)
    if isinstance(value, bool) or text not in SEARCH_PRECISIONS:
        raise ConfigError(f"{key}={value!r}: choose 32, bf16 or null (follow trainer.precision)")
    return text


def search_precision(setting: str | None, trainer_precision) -> str:
    """The precision search uses: ``setting``, or with None the trainer's (bf16 for bf16-*, else 32).

    Following the trainer by default: a run trained under bf16-mixed already sees its
    net's forward in bf16, so search sees the same net; an fp32 run keeps fp32 search
    and exactly the games it played before this setting existed. 16-mixed (float16)
    training keeps float32 search: float16 inference without loss scaling can overflow
    in the value head and there is no fp16 search path.
    """
    if setting is not None:
        return setting
    return "bf16" if str(trainer_precision).startswith("bf16") else "32"


class HostStaging:
    """One host buffer that leaf batches are copied through on their way to ``device``.

    On a CUDA device the buffer is pinned (page-locked) memory, allocated once, grown
    only when a larger batch arrives, and reused: a copy from pinned memory can run
    asynchronously (``non_blocking=True``) and at full bus speed, where pageable numpy
    memory is first copied by the driver into a pinned bounce buffer of its own. On
    any other device there is no copy at all: ``torch.from_numpy`` shares the array.

    Reuse is safe because every caller reads the net's output back to the host
    (``.cpu()``) before the next upload, and that read waits for all earlier work on
    the stream, the upload included.
    """

    def __init__(self, device: torch.device | str, *, pin: bool | None = None):
        self.device = torch.device(device)
        # pin=False (tests on CPU) exercises the same buffer reuse without pinned memory.
        self.stage = self.device.type == "cuda" if pin is None else True
        self.pin = self.device.type == "cuda" if pin is None else pin
        self.buffer: torch.Tensor | None = None
        self.allocations = 0

    def upload(self, array: np.ndarray) -> torch.Tensor:
        """``array`` [B, ...] as a tensor on ``device`` (same dtype)."""
        host = torch.from_numpy(np.ascontiguousarray(array))
        if not self.stage:
            return host.to(self.device)
        staged = self._room_for(host)[:len(host)]
        staged.copy_(host)
        return staged.to(self.device, non_blocking=True)

    def _room_for(self, host: torch.Tensor) -> torch.Tensor:
        buf = self.buffer
        if buf is None or buf.dtype != host.dtype or buf.shape[1:] != host.shape[1:] or len(buf) < len(host):
            self.buffer = torch.empty(host.shape, dtype=host.dtype, pin_memory=self.pin)
            self.allocations += 1
        return self.buffer


def score_utility_values(values: np.ndarray, scores: np.ndarray, weight: float) -> np.ndarray:
    """KataGo's score-aware utility as a leaf value in [-1, 1]: ``(1 - weight) * value + weight *
    (2/pi) atan(score)``, ``score`` the predicted margin in units of board_size points (9 points on
    9x9 count 0.5). Where the value saturates (every position lost for one side) the score still
    ranks moves: losing by 5 beats losing by 50."""
    return ((1.0 - weight) * values + weight * (2.0 / np.pi) * np.arctan(scores)).astype(np.float32)


class NetEvaluator:
    """Batched leaf evaluation for a plain network: planes float32 [B, C, n, n] ->
    (priors float32 [B, A], values float32 [B]) as numpy.

    The net is moved to ``device`` and put in eval mode once, here; a call moves only
    the leaves (through `HostStaging`). Build one per net and keep it: self-play and
    the arena reuse theirs for every round. ``precision``: "32" or "bf16" (autocast).
    ``score_utility`` (a weight in [0, 1], `score_utility_values`) needs a net with a score head.
    """

    def __init__(self, net: nn.Module, device: torch.device | str = "cpu", *, precision: str = "32",
                 score_utility: float = 0.0):
        precision = check_search_precision(precision, "precision") or "32"
        self.net = net
        self.use_score_utility(score_utility)
        self.device = torch.device(device)
        if precision == "bf16":
            check_bf16_device(self.device)
        self.net = net.to(self.device).eval()
        self.precision = precision
        self.staging = HostStaging(self.device)

    def use_score_utility(self, weight: float) -> None:
        """Leaf values mix in the score head's utility with ``weight`` (`score_utility_values`)."""
        if weight and getattr(self.net, "score_fc", None) is None:
            raise ConfigError(f"search.score_utility={weight!r} needs a net with a score head "
                              f"(trained with model.net.score_head=true); use 0 for this one")
        self.score_utility = float(weight)

    def __call__(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with torch.inference_mode(), torch.autocast(self.device.type, dtype=torch.bfloat16,
                                                    enabled=self.precision == "bf16"):
            if self.score_utility:
                out = self.net.heads(self.staging.upload(planes))
                log_p, v = out["log_policy"], out["value"]
            else:
                log_p, v = self.net(self.staging.upload(planes))
        # float() before numpy(): numpy has no bfloat16, and the search reads float32.
        priors, values = log_p.float().exp().cpu().numpy(), v.float().cpu().numpy()
        if self.score_utility:
            values = score_utility_values(values, out["score"].float().cpu().numpy(), self.score_utility)
        return priors, values


def net_evaluator(net: nn.Module, device: torch.device | str = "cpu", *, precision: str = "32") -> Evaluator:
    """Batched leaf evaluation for a plain network (opponents, benchmarks, play): a `NetEvaluator`."""
    return NetEvaluator(net, device, precision=precision)


def check_bf16_device(device: torch.device) -> None:
    """bf16 search needs a device with bfloat16 arithmetic: refuse it on older GPUs in one line."""
    if device.type == "cuda" and not torch.cuda.is_bf16_supported():
        raise ConfigError(f"precision bf16: {torch.cuda.get_device_name(device)} has no bfloat16 "
                          f"arithmetic; use precision 32")
