"""A Go net evaluated in all 8 board symmetries, its outputs averaged (``symmetries=8``).

Inference only, for any Go move predictor's net without a memory: each position goes
through the net 8 times (4 rotations x reflection, `stonelab.games.symmetry`), every
output is turned back to the board's own orientation, and the 8 are averaged as
probabilities (move probabilities; the sigmoids of value, confidence and ownership),
then returned as logits again, so everything that reads a `GoModelOutput` reads this
one. Why: a net trained on randomly turned positions still answers each orientation a
little differently; the average of the 8 is a small ensemble for 8x the forward cost.
A pass output (the last logit past ``n * n``) stays where it is.
"""

from __future__ import annotations

import torch
from torch import nn

from stonelab.errors import ConfigError
from stonelab.games.symmetry import NUM_SYMMETRIES, inverse_permutations, permutations
from stonelab.models.outputs import GoModelOutput

SYMMETRY_CHOICES = (1, NUM_SYMMETRIES)


def _logit(p: torch.Tensor) -> torch.Tensor:
    p = p.clamp(1e-7, 1 - 1e-7)
    return torch.log(p) - torch.log1p(-p)


class SymmetryAverage(nn.Module):
    """``net``'s forward, averaged over the 8 symmetries of the board (see the module doc)."""

    def __init__(self, net: nn.Module):
        super().__init__()
        if getattr(net, "memory", 0):
            raise ConfigError("symmetries=8 needs a net without a memory over past positions "
                              f"(this one reads model.net.memory={net.memory}): use symmetries=1")
        self.net = net
        self._perms: dict = {}  # (n, device) -> the two index tensors: built once, not per move

    def _permutations(self, n: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        key = (n, str(device))
        if key not in self._perms:  # [8, n*n]: transformed <- source, and its inverse
            self._perms[key] = tuple(torch.from_numpy(p.copy()).to(device)
                                     for p in (permutations(n), inverse_permutations(n)))
        return self._perms[key]

    def forward(self, planes: torch.Tensor, to_play: torch.Tensor, komi: torch.Tensor | None = None) -> GoModelOutput:
        b, c, n, _ = planes.shape
        forward_perm, back_perm = self._permutations(n, planes.device)
        flat = planes.reshape(b, c, n * n)
        turned = torch.cat([flat[:, :, forward_perm[s]] for s in range(NUM_SYMMETRIES)]).reshape(-1, c, n, n)
        komi_given = {} if komi is None else {"komi": komi.repeat(NUM_SYMMETRIES)}  # nets without komi: none given
        out = self.net(turned, to_play.repeat(NUM_SYMMETRIES), **komi_given)

        def points_back(x: torch.Tensor) -> torch.Tensor:  # [8B, n*n (+ extra)] -> [8, B, ...] upright
            x = x.reshape(NUM_SYMMETRIES, b, -1)
            board = torch.stack([x[s, :, back_perm[s]] for s in range(NUM_SYMMETRIES)])
            return torch.cat([board, x[:, :, n * n:]], dim=2)

        policy = torch.softmax(points_back(out.policy_logits.float()), dim=-1).mean(0)
        scalar = {name: None if (t := getattr(out, name)) is None
                  else _logit(torch.sigmoid(t.float()).reshape(NUM_SYMMETRIES, b).mean(0))
                  for name in ("value_logit", "confidence_logit")}
        ownership = None
        if out.ownership_logits is not None:
            owned = torch.sigmoid(points_back(out.ownership_logits.float().reshape(-1, n * n))).mean(0)
            ownership = _logit(owned).reshape(b, n, n)
        points = {name: None if (t := getattr(out, name)) is None else t.float().reshape(NUM_SYMMETRIES, b).mean(0)
                  for name in ("score_lead", "score_stdev")}  # the mean's spread: the views' mean spread
        return GoModelOutput(policy_logits=torch.log(policy.clamp_min(1e-30)), ownership_logits=ownership,
                             **scalar, **points)


def with_symmetries(net: nn.Module, symmetries: int) -> nn.Module:
    """``net`` itself (``symmetries=1``) or wrapped in `SymmetryAverage` (``8``)."""
    if symmetries not in SYMMETRY_CHOICES:
        raise ConfigError(f"symmetries={symmetries!r}: choose 1 (the net as trained) or 8 (averaged over "
                          "the board's 8 symmetries, 8x the forward cost)")
    return net if symmetries == 1 else SymmetryAverage(net)
