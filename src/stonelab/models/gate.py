"""Seed 001's belief gate: a move chosen from the policy, overruled when the belief distrusts it.

When the net's confidence is below ``threshold`` the policy's top move is suppressed
and the move is re-chosen among the policy's next ``top_k - 1`` moves by
``log p(m) + contested_weight * (1 - |b(m)|)``, b(m) being the belief map at m (pass:
0 bonus): the policy's preference, tilted toward points whose end-of-game owner the
belief finds undecided. Above the threshold, or with ``enabled=False``, the move is
the policy's top move. Used by `stonelab.models.belief_vit` (training metrics),
`stonelab.models.inference` (play) and `stonelab.models.prediction_scores` (eval).
"""

from __future__ import annotations

import torch

from stonelab.models.outputs import GoModelOutput

DEFAULT_GATE = {"enabled": True, "threshold": 0.2, "top_k": 5, "contested_weight": 1.0}


def gate_moves(probs: torch.Tensor, confidence: torch.Tensor, belief: torch.Tensor, *, threshold: float,
               top_k: int = 5, contested_weight: float = 1.0, enabled: bool = True
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(move [B], gated [B] bool, top move [B]) under the belief gate (see the module doc).

    probs [B, N + 1] move probabilities (illegal moves already 0), confidence [B] in
    [0, 1], belief [B, N] expected ownership in [-1, 1] from the side to move's view.
    A position is gated when ``enabled`` and confidence < threshold and some other of
    its top-k moves has probability > 0; a gated position never plays its top move.
    """
    k = min(int(top_k), probs.shape[1])
    p, idx = probs.topk(k, dim=1)
    top = idx[:, 0]
    contested = torch.cat([1.0 - belief.abs(), belief.new_zeros(belief.shape[0], 1)], dim=1)
    score = torch.log(p.clamp_min(1e-30)) + contested_weight * contested.gather(1, idx)
    score = score.masked_fill(p <= 0, -torch.inf)
    score[:, 0] = -torch.inf  # the overconfident top move is suppressed
    best = score.argmax(dim=1, keepdim=True)
    has_alternative = torch.isfinite(score.gather(1, best).squeeze(1))
    gated = (confidence < threshold) & has_alternative & bool(enabled)
    move = torch.where(gated, idx.gather(1, best).squeeze(1), top)
    return move, gated, top


def gate_output(probs: torch.Tensor, out: GoModelOutput, **gate) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`gate_moves` with the confidence and belief map of a net's output (which must have a
    belief head); ``probs`` [B, n*n + 1] as there, ``gate`` its keyword settings."""
    confidence = out.confidence.to(probs.device)
    belief = out.belief_map.to(probs.device).flatten(1)
    return gate_moves(probs, confidence, belief, **gate)
