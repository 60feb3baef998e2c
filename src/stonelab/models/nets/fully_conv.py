"""A policy-value net with no layer tied to the board's size (``model/net=fully_conv``).

`PolicyValueNet`'s heads end in linear layers over ``n * n`` points, so a file plays the
one board it was trained on. Here every weight is a convolution or acts on a board-wide
summary (KataGo's design), so one file plays 9x9, 15x15 and 20x20 Gomoku:

- trunk: a 3x3 stem, then ``blocks`` residual blocks (conv-BN-ReLU-conv-BN plus the skip)
  of ``filters`` channels; every ``pool_every``-th block adds a global-pooling bias
  (the board mean and max of some channels through a linear layer) so that whole-board
  facts (how full the board is, who is ahead) reach every point;
- policy: a 1x1 conv to one logit per point; a game with a pass (Go) gets its logit
  from the pooled summary;
- value: a 1x1 conv, pooled to the board mean, the mean scaled by the board's width
  and the max (KataGo's three pools: the scaled mean tells a 9x9 board from a 19x19),
  then an MLP to ``tanh``.

``mask`` (``[B, 1, H, W]``, 1 on the board): boards of several sizes padded into one
batch. Every layer's output is zeroed off the board, pools read only board points and
off-board points get no policy (KataGo's masking), so a 9x9 board padded to 15x15
gives, in eval mode, the outputs it gives alone (tested). Without a mask the whole
input is the board.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from stonelab.errors import ConfigError
from stonelab.models.numpy_net import WIDTH_CENTRE, WIDTH_SCALE  # the scaled-mean pool's constants


def board_pools(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """``x [B, C, H, W]`` -> ``[B, 3C]``: board mean, mean scaled by the board's width, board max."""
    if mask is None:
        area = torch.full((x.shape[0], 1), float(x.shape[2] * x.shape[3]), device=x.device, dtype=x.dtype)
        mean, peak = x.mean(dim=(2, 3)), x.amax(dim=(2, 3))
    else:
        area = mask.sum(dim=(2, 3)).clamp(min=1.0)
        mean = (x * mask).sum(dim=(2, 3)) / area
        peak = (x - (1.0 - mask) * 1e4).amax(dim=(2, 3))  # off-board points never the max
    width = area.sqrt()
    return torch.cat([mean, mean * (width - WIDTH_CENTRE) / WIDTH_SCALE, peak], dim=1)


def masked(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    return x if mask is None else x * mask


class PoolBias(nn.Module):
    """The first ``pooled`` channels, pooled over the board, bias the others: [B, F - pooled, H, W]."""

    def __init__(self, filters: int, pooled: int):
        super().__init__()
        self.pooled = pooled
        self.norm = nn.BatchNorm2d(pooled)
        self.linear = nn.Linear(3 * pooled, filters - pooled)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        g = masked(F.relu(self.norm(x[:, :self.pooled])), mask)
        return x[:, self.pooled:] + self.linear(board_pools(g, mask))[:, :, None, None]


class Block(nn.Module):
    """conv-BN-ReLU-conv-BN plus the skip; with ``pooled`` channels, a pooling bias in the middle."""

    def __init__(self, filters: int, pooled: int = 0):
        super().__init__()
        self.conv1 = nn.Conv2d(filters, filters, 3, padding=1, bias=False)
        self.pool = PoolBias(filters, pooled) if pooled else None
        self.bn1 = nn.BatchNorm2d(filters - pooled)
        self.conv2 = nn.Conv2d(filters - pooled, filters, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(filters)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        y = self.conv1(x)
        if self.pool is not None:
            y = self.pool(y, mask)
        y = masked(F.relu(self.bn1(y)), mask)
        return masked(F.relu(x + self.bn2(self.conv2(y))), mask)


class FullyConvNet(nn.Module):
    """``planes [B, C, H, W]`` (any H, W) -> ``(log_policy [B, H*W (+1 pass)], value [B])``.

    ``board_size`` / ``board_width`` name the board it is built for (the checkpoint's
    game); the weights fit any other. ``num_actions`` = points + 1 gives a pass logit.
    """

    size_free = True  # `stonelab.models.alphazero.net_for_game`: any board shape fits

    def __init__(self, board_size: int, in_planes: int = 4, filters: int = 64, blocks: int = 6,
                 pool_every: int = 3, pool_channels: int = 16, value_channels: int = 16,
                 value_hidden: int = 64, num_actions: int | None = None, board_width: int | None = None):
        super().__init__()
        if filters < 1 or blocks < 0 or pool_every < 0 or not 0 <= pool_channels < filters:
            raise ConfigError(f"model.net: filters={filters} must be >= 1, blocks={blocks} and "
                              f"pool_every={pool_every} >= 0, and 0 <= pool_channels={pool_channels} < filters")
        points = board_size * (board_width or board_size)
        if num_actions not in (None, points, points + 1):
            raise ConfigError(f"model.net (fully_conv) gives one action per point (+ a pass): "
                              f"{num_actions} actions on a {points}-point board do not fit")
        self.config = {"board_size": board_size, "in_planes": in_planes, "filters": filters, "blocks": blocks,
                       "pool_every": pool_every, "pool_channels": pool_channels,
                       "value_channels": value_channels, "value_hidden": value_hidden}
        if num_actions is not None:
            self.config["num_actions"] = num_actions
        if board_width is not None and board_width != board_size:
            self.config["board_width"] = board_width
        self.has_pass = num_actions == points + 1
        self.stem = nn.Conv2d(in_planes, filters, 3, padding=1, bias=False)
        self.stem_bn = nn.BatchNorm2d(filters)
        self.blocks = nn.ModuleList(
            Block(filters, pool_channels if pool_every and (i + 1) % pool_every == 0 else 0)
            for i in range(blocks))
        self.policy_conv = nn.Conv2d(filters, filters // 2, 1, bias=False)
        self.policy_bn = nn.BatchNorm2d(filters // 2)
        self.policy_out = nn.Conv2d(filters // 2, 1, 1)
        self.pass_fc = nn.Linear(3 * (filters // 2), 1) if self.has_pass else None
        self.value_conv = nn.Conv2d(filters, value_channels, 1, bias=False)
        self.value_bn = nn.BatchNorm2d(value_channels)
        self.value_fc1 = nn.Linear(3 * value_channels, value_hidden)
        self.value_fc2 = nn.Linear(value_hidden, 1)

    has_aux_heads = False

    def forward(self, planes: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.heads(planes, mask=mask)
        return out["log_policy"], out["value"]

    def heads(self, planes: torch.Tensor, aux: bool = True, mask: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        """``log_policy [B, H*W (+1)]`` and ``value [B]``, float32 under any autocast."""
        x = masked(F.relu(self.stem_bn(self.stem(planes))), mask)
        for block in self.blocks:
            x = block(x, mask)
        p = masked(F.relu(self.policy_bn(self.policy_conv(x))), mask)
        logits = self.policy_out(p).flatten(1).float()
        if mask is not None:  # off-board points: no probability at all
            logits = logits.masked_fill(mask.flatten(1) < 0.5, -math.inf)
        if self.pass_fc is not None:
            logits = torch.cat([logits, self.pass_fc(board_pools(p, mask)).float()], dim=1)
        v = masked(F.relu(self.value_bn(self.value_conv(x))), mask)
        hidden = F.relu(self.value_fc1(board_pools(v, mask)))
        value = torch.tanh(self.value_fc2(hidden).float()).squeeze(-1)
        return {"log_policy": F.log_softmax(logits, dim=-1), "value": value}
