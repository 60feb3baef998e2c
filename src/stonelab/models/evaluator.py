"""A plain policy-value net as the search's `Evaluator`, without Lightning.

Kept apart from `stonelab.models.alphazero` (which re-exports it) so that playing a
checkpoint does not import Lightning: 4-5 s of a Gomocup brain's start-up on this
machine (``python -X importtime``, 2026-12-01), all before it could answer START.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from stonelab.search.mcts import Evaluator


def net_evaluator(net: nn.Module, device: torch.device | str = "cpu") -> Evaluator:
    """Batched leaf evaluation for a plain network (opponents, benchmarks, play)."""
    net = net.to(device).eval()

    def evaluate(planes: np.ndarray):
        with torch.inference_mode():
            log_p, v = net(torch.from_numpy(planes).to(device, non_blocking=True))
            return log_p.exp().float().cpu().numpy(), v.float().cpu().numpy()

    return evaluate
