"""The policy-value network of seed 000 (AlphaZero_Gomoku's small CNN), widenable.

Trunk: 3x3 convs ``channels`` (default 32-64-128) with ReLU, then optionally
``res_blocks`` residual blocks (two 3x3 convs + batch norm) at the last width.
Policy head: 1x1 conv to 4 planes, a linear layer to ``n * n`` log-probabilities.
Value head: 1x1 conv to 2 planes, linear 64, linear 1, tanh.

Go's auxiliary heads (KataGo's, off unless asked for; `heads` returns them):
``ownership_head`` a 1x1 conv to one plane, tanh: per point, +1 if the side to move owns
it at the end of the game; ``score_head`` one more output of the value MLP: the final area
margin for the side to move, in units of ``board_size`` points (so 9x9's +-81 is +-9).
They shape the trunk with 81 targets per position where the value has one, and the score
gives the search a utility that still moves when every position looks lost.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from stonelab.errors import ConfigError


class ResidualBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.conv1 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


class PolicyValueNet(nn.Module):
    """``planes [B, C, H, W]`` -> ``(log_policy [B, A], value [B])``, ``A = H*W`` unless ``num_actions`` is given.

    ``num_actions=n*n+1`` gives Go's pass a policy entry; Connect Four's 7 are its columns.
    The board is ``board_size x board_size``, or ``board_size`` rows by ``board_width``
    columns when a width is given (a rectangle).
    """

    def __init__(self, board_size: int, in_planes: int = 4,
                 channels: tuple[int, ...] = (32, 64, 128), res_blocks: int = 0,
                 policy_planes: int = 4, value_planes: int = 2, value_hidden: int = 64,
                 num_actions: int | None = None, ownership_head: bool = False, score_head: bool = False,
                 board_width: int | None = None):
        super().__init__()
        if not channels or min(channels) < 1 or res_blocks < 0:
            raise ConfigError(f"model.net: channels={list(channels)} must be a non-empty list of "
                             f"positive widths and res_blocks={res_blocks} must be >= 0")
        # Constructor arguments, so a checkpoint can rebuild the same net.
        self.config = {"board_size": board_size, "in_planes": in_planes, "channels": list(channels),
                       "res_blocks": res_blocks, "policy_planes": policy_planes,
                       "value_planes": value_planes, "value_hidden": value_hidden}
        if num_actions is not None:  # only then, so Gomoku checkpoints keep their config
            self.config["num_actions"] = num_actions
        if board_width is not None and board_width != board_size:  # a rectangle (the same reason)
            self.config["board_width"] = board_width
        for name, wanted in (("ownership_head", ownership_head), ("score_head", score_head)):
            if wanted:  # only then, so checkpoints without them keep their config
                self.config[name] = True
        points = board_size * (board_width or board_size)
        layers: list[nn.Module] = []
        width = in_planes
        for out in channels:
            layers += [nn.Conv2d(width, out, 3, padding=1), nn.ReLU()]
            width = out
        layers += [ResidualBlock(width) for _ in range(res_blocks)]
        self.trunk = nn.Sequential(*layers)
        self.policy_conv = nn.Conv2d(width, policy_planes, 1)
        self.policy_fc = nn.Linear(policy_planes * points, num_actions or points)
        self.value_conv = nn.Conv2d(width, value_planes, 1)
        self.value_fc1 = nn.Linear(value_planes * points, value_hidden)
        self.value_fc2 = nn.Linear(value_hidden, 1)
        self.ownership_conv = nn.Conv2d(width, 1, 1) if ownership_head else None
        self.score_fc = nn.Linear(value_hidden, 1) if score_head else None
        # Head convs start with zero bias. With PyTorch's default uniform bias and the
        # trunk's small initial outputs, all 4 policy ReLUs start below zero whenever
        # their 4 biases do (1 seed in 16; seed 1 on 8x8 here): the policy is then
        # uniform and gets no gradient until the trunk happens to revive it.
        for head in (self.policy_conv, self.value_conv):
            nn.init.zeros_(head.bias)

    @property
    def has_aux_heads(self) -> bool:
        return self.ownership_conv is not None or self.score_fc is not None

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.heads(planes, aux=False)
        return out["log_policy"], out["value"]

    def heads(self, planes: torch.Tensor, aux: bool = True) -> dict[str, torch.Tensor]:
        """``log_policy [B, A]``, ``value [B]`` and, with ``aux`` and the heads built,
        ``ownership [B, n*n]`` in [-1, 1] and ``score [B]`` (margin / board_size), all float32."""
        x = self.trunk(planes)
        p = F.relu(self.policy_conv(x)).flatten(1)
        # float32 outputs under any autocast (trainer.precision=bf16-mixed on CPU left
        # them bfloat16): bf16 log-probabilities have 8 bits of mantissa, so exp(log_p)
        # summed to 1 +- 5e-3 and the KL between two nearly equal policies, which drives
        # the adaptive learning rate, came out 8e-4 for a true 5e-4 (8x8 net, 2026-12-01).
        log_policy = F.log_softmax(self.policy_fc(p).float(), dim=-1)
        v = F.relu(self.value_conv(x)).flatten(1)
        hidden = F.relu(self.value_fc1(v))
        out = {"log_policy": log_policy, "value": torch.tanh(self.value_fc2(hidden).float()).squeeze(-1)}
        if aux and self.ownership_conv is not None:
            out["ownership"] = torch.tanh(self.ownership_conv(x).float()).flatten(1)
        if aux and self.score_fc is not None:
            out["score"] = self.score_fc(hidden).float().squeeze(-1)
        return out
