"""The one output type of the Go move predictors' nets.

`MaddisonNet` (``model=maddison_cnn``) and `BeliefViT` (``model=belief_vit``) both
return a `GoModelOutput` from ``forward``; training, inference, scoring and figures
read its fields by name, and a net without a belief head leaves those fields None.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

import torch
from torch import Tensor


@dataclass(frozen=True, eq=False)
class GoModelOutput:
    """A Go net's output for a batch of B positions on an n x n board (raw logits).

    - ``policy_logits``    float [B, A]: move logits, points ``row * n + col``; A = n*n
      for a net without a pass output (the paper's maddison_cnn), n*n + 1 with the pass
      last (belief_vit).
    - ``value_logit``      float [B] or None: the game's result for the side to move, as
      a logit of "wins" (`value` = tanh(logit / 2) in [-1, 1]).
    - ``confidence_logit`` float [B] or None: logit of "the policy's top move is the
      expert's" (`confidence` = its sigmoid).
    - ``ownership_logits`` float [B, n, n] or None: per point, logit of "the side to move
      owns it at the end" (`belief_map` = tanh(logit / 2) in [-1, 1]).
    - ``score_lead``       float [B] or None: the side to move's expected final margin in
      points, komi included (KataGo's scoreLead from the mover's view).
    - ``score_stdev``      float [B] or None: the spread (standard deviation) of that margin.

    None means the net has no such head (maddison_cnn has only the policy).
    """

    policy_logits: Tensor
    value_logit: Tensor | None = None
    confidence_logit: Tensor | None = None
    ownership_logits: Tensor | None = None
    score_lead: Tensor | None = None
    score_stdev: Tensor | None = None

    @property
    def has_belief(self) -> bool:
        """Whether the net has a belief head (confidence and belief map): the gate needs both."""
        return self.confidence_logit is not None and self.ownership_logits is not None

    @property
    def value(self) -> Tensor | None:
        """float32 [B] expected result for the side to move in [-1, 1], or None."""
        return None if self.value_logit is None else torch.tanh(self.value_logit.float() / 2)

    @property
    def confidence(self) -> Tensor | None:
        """float32 [B] probability that the policy's top move is the expert's, or None."""
        return None if self.confidence_logit is None else torch.sigmoid(self.confidence_logit.float())

    @property
    def belief_map(self) -> Tensor | None:
        """float32 [B, n, n] expected end-of-game owner of each point in [-1, 1] (+1: the
        side to move), or None."""
        return None if self.ownership_logits is None else torch.tanh(self.ownership_logits.float() / 2)

    def apply(self, fn: Callable[[Tensor], Tensor]) -> GoModelOutput:
        """The same output with ``fn`` applied to every tensor present (``.detach()``,
        ``.cpu()``, a row selection ``t[keep]``, ...)."""
        return GoModelOutput(**{f.name: None if (t := getattr(self, f.name)) is None else fn(t)
                                for f in fields(self)})
