"""Maddison, Huang, Sutskever & Silver's move-prediction CNN (seed 002).

``depth`` convolution layers in all: a 5x5 first layer, 3x3 layers after it,
zero padding and no pooling (every layer keeps the n x n board), ReLU, and a
position-dependent bias on every layer (a learned [C, n, n] map instead of one
bias per filter). The last layer has 2 filters: one n*n-way move distribution
for black to move and one for white, selected by the side to move. No pass.

Weight symmetry (``symmetric=True``): every kernel and bias map is averaged
over the 8 rotations and reflections before use, so the net's output turns
with the board (the paper's tied filters). The rank conditioning of the paper
lives in the input: the maddison encoder's 9 rank planes.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from stonelab.errors import check
from stonelab.models.outputs import GoModelOutput


def symmetrize(x: torch.Tensor) -> torch.Tensor:
    """Average ``x [..., k, k]`` over the 8 symmetries of its last two axes."""
    flipped = x.flip(-1)
    views = [torch.rot90(v, r, dims=(-2, -1)) for v in (x, flipped) for r in range(4)]
    return torch.stack(views).mean(0)


class MaddisonNet(nn.Module):
    """planes [B, C, n, n] float, to_play [B] (+1 black, -1 white) -> `GoModelOutput` with
    policy_logits [B, n*n] only (no pass output, no value, no belief)."""

    def __init__(self, in_planes: int = 36, board_size: int = 19, *, depth: int = 12,
                 filters: int = 128, symmetric: bool = False, init_range: float = 0.05):
        super().__init__()
        check([
            (lambda: isinstance(depth, int) and depth >= 2,
             f"model.net.depth={depth!r} must be an int >= 2 (the paper: 3..13)"),
            (lambda: isinstance(filters, int) and filters >= 1,
             f"model.net.filters={filters!r} must be an int >= 1 (the paper: 64..192)"),
            (lambda: init_range > 0, f"model.net.init_range={init_range!r} must be > 0"),
        ])
        self.config = dict(in_planes=in_planes, board_size=board_size, depth=depth, filters=filters,
                           symmetric=symmetric, init_range=init_range)
        self.board_size = board_size
        self.symmetric = symmetric
        widths = [in_planes] + [filters] * (depth - 1) + [2]
        self.kernels = nn.ParameterList()
        self.biases = nn.ParameterList()
        for i in range(depth):
            k = 5 if i == 0 else 3
            self.kernels.append(nn.Parameter(torch.empty(widths[i + 1], widths[i], k, k)))
            self.biases.append(nn.Parameter(torch.zeros(widths[i + 1], board_size, board_size)))
        for w in self.kernels:  # the paper's uniform init in +-0.05
            nn.init.uniform_(w, -init_range, init_range)

    def _param(self, p: torch.Tensor) -> torch.Tensor:
        return symmetrize(p) if self.symmetric else p

    def forward(self, planes: torch.Tensor, to_play: torch.Tensor) -> GoModelOutput:
        x = planes
        last = len(self.kernels) - 1
        for i, (w, b) in enumerate(zip(self.kernels, self.biases, strict=True)):
            w = self._param(w)
            x = F.conv2d(x, w, padding=w.shape[-1] // 2) + self._param(b)
            if i < last:
                x = F.relu(x)
        head = (to_play < 0).long()  # channel 0: black to move, 1: white
        return GoModelOutput(policy_logits=x.flatten(2)[torch.arange(x.shape[0], device=x.device), head])
