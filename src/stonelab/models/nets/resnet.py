"""A residual Go trunk with batch norm and global-pooling biases (``model/net=resnet``).

Not in seed 002: an option beside its plain CNN, in the style of later Go nets
(AlphaGo Zero's residual tower, KataGo's global pooling). The same inputs and outputs
as `MaddisonNet`, so everything that loads, searches with or evaluates a Go move
predictor takes either:

- a 5x5 stem convolution, then ``blocks`` pre-activation residual blocks
  (BN-ReLU-conv3x3-BN-ReLU-conv3x3 plus the skip) of ``filters`` channels;
- in every ``pool_every``-th block a global-pooling bias (KataGo): the board mean and
  max of ``pool_channels`` of the first convolution's channels, through a linear layer,
  bias the other channels. Why: a 3x3 tower sees only a few points around each point
  after a few layers, while whose turn matters, whether a ko is on, and how many points
  each side has are whole-board facts; the pooled bias hands them to every point at
  once, for one small matrix multiply;
- a policy head of two 1x1 maps (one for black to move, one for white, as seed 002's
  net) plus a position-dependent bias, and the same optional `ValueHead`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from stonelab.errors import check
from stonelab.models.nets.maddison import AuxHeads, ValueHead, heads_output
from stonelab.models.outputs import GoModelOutput


class GlobalPoolBias(nn.Module):
    """x [B, F, n, n] -> x's first ``pooled`` channels turned into a per-channel bias of
    the other ``F - pooled`` ones: [B, F - pooled, n, n] (KataGo's global pooling)."""

    def __init__(self, filters: int, pooled: int):
        super().__init__()
        self.pooled = pooled
        self.norm = nn.BatchNorm2d(pooled)
        self.linear = nn.Linear(2 * pooled, filters - pooled)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = F.relu(self.norm(x[:, :self.pooled]))
        summary = torch.cat([g.mean(dim=(2, 3)), g.amax(dim=(2, 3))], dim=1)
        return x[:, self.pooled:] + self.linear(summary)[:, :, None, None]


class ResidualBlock(nn.Module):
    """Pre-activation residual block; with ``pool_channels`` its middle gets a global bias."""

    def __init__(self, filters: int, pool_channels: int = 0):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(filters)
        self.conv1 = nn.Conv2d(filters, filters, 3, padding=1, bias=False)
        self.pool = GlobalPoolBias(filters, pool_channels) if pool_channels else None
        middle = filters - pool_channels
        self.norm2 = nn.BatchNorm2d(middle)
        self.conv2 = nn.Conv2d(middle, filters, 3, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv1(F.relu(self.norm1(x)))
        if self.pool is not None:
            h = self.pool(h)
        return x + self.conv2(F.relu(self.norm2(h)))


class ResidualNet(nn.Module):
    """planes [B, C, n, n] float, to_play [B] (+1 black, -1 white) -> `GoModelOutput` with
    policy_logits [B, n*n] (no pass output), value_logit [B] with ``value_head=True``, and
    ownership_logits, score_lead and score_stdev with ``aux_heads=True`` (`AuxHeads`)."""

    def __init__(self, in_planes: int = 36, board_size: int = 19, *, blocks: int = 6, filters: int = 64,
                 pool_every: int = 2, pool_channels: int = 16, value_head: bool = False,
                 value_channels: int = 8, value_hidden: int = 64, aux_heads: bool = False):
        super().__init__()
        check([
            (lambda: isinstance(aux_heads, bool), f"model.net.aux_heads={aux_heads!r} must be true or false"),
            (lambda: isinstance(blocks, int) and blocks >= 1, f"model.net.blocks={blocks!r} must be an int >= 1"),
            (lambda: isinstance(filters, int) and filters >= 2, f"model.net.filters={filters!r} must be an int >= 2"),
            (lambda: isinstance(pool_every, int) and pool_every >= 0,
             f"model.net.pool_every={pool_every!r} must be an int >= 0 (0: no global pooling)"),
            (lambda: isinstance(pool_channels, int) and 0 < pool_channels < filters,
             f"model.net.pool_channels={pool_channels!r} must be an int in [1, filters={filters})"),
            (lambda: isinstance(value_head, bool), f"model.net.value_head={value_head!r} must be true or false"),
        ])
        self.config = dict(in_planes=in_planes, board_size=board_size, blocks=blocks, filters=filters,
                           pool_every=pool_every, pool_channels=pool_channels, value_head=value_head,
                           value_channels=value_channels, value_hidden=value_hidden, aux_heads=aux_heads)
        self.board_size = board_size
        self.stem = nn.Conv2d(in_planes, filters, 5, padding=2, bias=False)
        pooled = [bool(pool_every) and (i + 1) % pool_every == 0 for i in range(blocks)]
        self.blocks = nn.ModuleList(ResidualBlock(filters, pool_channels if p else 0) for p in pooled)
        self.norm = nn.BatchNorm2d(filters)
        self.policy = nn.Conv2d(filters, 2, 1, bias=False)
        self.policy_bias = nn.Parameter(torch.zeros(2, board_size, board_size))
        self.value_head = ValueHead(filters, value_channels, value_hidden, komi=aux_heads) if value_head else None
        self.aux_heads = AuxHeads(filters, value_channels, value_hidden) if aux_heads else None

    def start_as_identity(self, first: int) -> None:
        """Blocks ``first``, ``first + 1``, ... pass their input through unchanged (their last
        convolution zeroed), so a deeper net grown on a trained one (``init_from`` with more
        ``blocks``) starts as that net and learns from there (Net2Net's deeper net)."""
        with torch.no_grad():
            for block in self.blocks[first:]:
                block.conv2.weight.zero_()

    def forward(self, planes: torch.Tensor, to_play: torch.Tensor, komi: torch.Tensor | None = None) -> GoModelOutput:
        """komi float [B]: each game's komi (the points white gets), read by ``aux_heads`` only."""
        x = self.stem(planes)
        for block in self.blocks:
            x = block(x)
        hidden = F.relu(self.norm(x))
        moves = self.policy(hidden) + self.policy_bias  # [B, 2, n, n]
        head = (to_play < 0).long()  # channel 0: black to move, 1: white
        policy_logits = moves.flatten(2)[torch.arange(moves.shape[0], device=moves.device), head]
        return heads_output(policy_logits, hidden, to_play, komi, self.value_head, self.aux_heads)
