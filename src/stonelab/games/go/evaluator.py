"""Leaf evaluation for the Go search: a Go model's policy as prior, and a leaf value.

    evaluator = GoNetEvaluator(predictor, GoSearch(rules), value="auto", rollouts=4)
    mcts = BatchedMCTS(GoSearch(rules), 1, config)
    visits = mcts.search(evaluator)

The search hands over the leaf positions themselves (`PositionEvaluator`): the
checkpoint's own encoder (seed 002's 36 planes, with liberties and ladders, or
simple4) turns them into the net's input inside numba.

The leaf value (``go.leaf_value``, `stonelab.games.go.settings`):

- ``net``: the model's value output (belief_vit; a maddison_cnn trained with a value
  head); one forward pass gives prior and value.
- ``playouts``: the mean result of ``rollouts`` random light playouts from the leaf
  (moves that never fill a single-point eye of their own, Tromp-Taylor with the game's
  komi, `stonelab.games.go.search`). Costs ``rollouts`` playouts per leaf on top of the
  forward pass.
- ``mixed``: the mean of the two (AlphaGo's leaf value with its weight 1/2): the net's
  judgement of the whole board and the playouts' exact count with the game's komi.
  Why: a net trained on 19x19 and played on 9x9 (`stonelab.models.resize`) never saw
  9x9's komi, which the playouts count.
- ``none``: 0 for every leaf: the search then only spreads visits by the prior and by
  finished games.
- ``auto``: ``net`` when the model has a value output, else ``playouts``.

A net without a pass output (the paper's 361-way softmax) gives pass the prior
`PASS_PRIOR`: small, so the search tries it without being steered to it.
`UniformEvaluator` is pure MCTS on Go: uniform priors and playout values.
"""

from __future__ import annotations

import numpy as np
import torch
from numba import njit

from stonelab.errors import ConfigError
from stonelab.features import ENC_MADDISON, ENCODERS
from stonelab.features.maddison import PLAY_RANK, encode_maddison_into, maddison_scratch
from stonelab.features.simple4 import encode_simple4_into
from stonelab.games.go.rules import I_TO_PLAY
from stonelab.games.go.search import GoSearch, go_position_at
from stonelab.games.go.settings import LEAF_VALUES
from stonelab.models.evaluator import HostStaging
from stonelab.search.mcts import PositionEvaluator
from stonelab.search.pure_mcts import mean_rollout_values

ROLLOUT_WEIGHT = 0.5  # leaf_value=mixed: the playouts' share of the leaf value (AlphaGo's lambda)
PASS_PRIOR = 0.01


@njit(cache=True, nogil=True)
def encode_positions_into(positions, count, encoder_id, rank, out, scratch):
    """Planes uint8 ``out[:count]`` of the first ``count`` positions of a Go search batch,
    the maddison planes with ``rank`` for the side to move."""
    for i in range(count):
        pos = go_position_at(positions, i)
        if encoder_id == ENC_MADDISON:
            encode_maddison_into(pos, rank, out[i], scratch)
        else:
            encode_simple4_into(pos, out[i])


class UniformEvaluator(PositionEvaluator):
    """Pure MCTS on Go: uniform priors, the mean of ``rollouts`` random playouts as value."""

    def __init__(self, search: GoSearch, rollouts: int = 1):
        if rollouts < 1:
            raise ConfigError(f"go.leaf_playouts={rollouts!r} must be >= 1 for pure MCTS")
        self.search = search
        self.rollouts = rollouts

    def evaluate_positions(self, positions, count):
        priors = np.full((count, self.search.num_actions), 1.0 / self.search.num_actions, dtype=np.float32)
        values = np.zeros(count, dtype=np.float32)
        mean_rollout_values(self.search.spec, positions, count, self.rollouts, values)
        return priors, values


class GoNetEvaluator(PositionEvaluator):
    """Priors and values of leaf positions from a Go move predictor (`MovePredictor`)."""

    def __init__(self, predictor, search: GoSearch, value: str = "auto", rollouts: int = 4):
        if value not in LEAF_VALUES:
            raise ConfigError(f"go.leaf_value={value!r}: choose one of {', '.join(LEAF_VALUES)}")
        self.has_value_output = _has_value_output(predictor)
        if value == "auto":
            value = "net" if self.has_value_output else "playouts"
        if value in ("net", "mixed") and not self.has_value_output:
            raise ConfigError(f"go.leaf_value={value}: this checkpoint's net has no value output "
                              "(use go.leaf_value=playouts or none)")
        if value in ("playouts", "mixed") and rollouts < 1:
            raise ConfigError(f"go.leaf_playouts={rollouts!r} must be >= 1 with go.leaf_value={value}")
        if getattr(predictor.net, "memory", 0):
            raise ConfigError("a belief_vit with a memory of past positions cannot be searched yet "
                              "(its leaves have no history): use it without search (search.playouts=0)")
        self.predictor = predictor
        self.search = search
        self.value = value
        self.rollouts = rollouts
        self.encoder = ENCODERS[predictor.encoder]
        self.scratch = maddison_scratch(search.board_shape[0])  # Go boards are square
        self.staging = HostStaging(predictor.device)  # leaves to a GPU through one pinned buffer
        self.forward_calls = 0

    @torch.inference_mode()
    def outputs(self, positions, count: int):
        """The net's `GoModelOutput` for the first ``count`` positions of a search batch."""
        n = self.search.board_shape[0]
        planes = np.zeros((count, self.encoder.num_planes, n, n), dtype=np.uint8)
        # The rank is an argument, not a global the kernel reads: numba's cache would keep
        # a global's old value after it changed in another module.
        encode_positions_into(positions, count, self.encoder.encoder_id, PLAY_RANK, planes, self.scratch)
        device = self.predictor.device
        to_play = torch.from_numpy(positions.info[:count, I_TO_PLAY].astype(np.int64)).to(device)
        self.forward_calls += 1
        komi = torch.full((count,), float(self.search.rules.komi), device=device)
        # uint8 planes cross the bus (a quarter of float32's bytes), then become float there.
        return self.predictor.net(self.staging.upload(planes).float(), to_play, komi=komi)

    def priors_from_logits(self, logits: torch.Tensor) -> np.ndarray:
        """Move probabilities [B, n*n + 1] (pass last) from the net's logits, over all moves
        (the search keeps the legal ones and renormalises)."""
        probs = torch.softmax(logits.float().cpu(), dim=1).numpy()
        if probs.shape[1] == self.search.num_actions:
            return probs.astype(np.float32)
        with_pass = np.empty((probs.shape[0], self.search.num_actions), dtype=np.float32)
        with_pass[:, :-1] = probs * (1.0 - PASS_PRIOR)
        with_pass[:, -1] = PASS_PRIOR
        return with_pass

    def evaluate_positions(self, positions, count):
        out = self.outputs(positions, count)
        priors = self.priors_from_logits(out.policy_logits)
        values = np.zeros(count, dtype=np.float32)
        if self.value in ("playouts", "mixed"):
            mean_rollout_values(self.search.spec, positions, count, self.rollouts, values)
        if self.value in ("net", "mixed"):
            net = out.value.float().cpu().numpy().astype(np.float32)
            values = net if self.value == "net" else (1 - ROLLOUT_WEIGHT) * net + ROLLOUT_WEIGHT * values
        return priors, values


def _has_value_output(predictor) -> bool:
    """Whether the net returns a value (one probe on the empty board)."""
    from stonelab.games.go.rules import GoRules

    state = GoRules(predictor.rules.n).new_state()
    return predictor.outputs([state]).value_logit is not None
