"""An AlphaZero Go checkpoint as a Go player: the GTP engine (src/play.py) and the GTP arena
(``task=gtp_match``) drive it as they drive a move predictor.

    model = AlphaZeroGoModel(loaded.net, loaded.game)
    model.probabilities([state]), model.play_moves([state])      # search-free
    go_search_player(model, search_settings)                     # its own planes in the search

Its planes are the self-play search's (`stonelab.games.go.search`, ``GO_PLANES``), read
from the leaf positions themselves, so the net sees in play what it saw in training. Its
search keeps self-play's rule that no move fills a single-point eye of its own, with
room for a whole game (three times the points in moves) rather than self-play's cap.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from stonelab.errors import ConfigError
from stonelab.games.go.rules import GoRules, GoState
from stonelab.games.go.search import GoPosition, GoSearch
from stonelab.models.evaluator import NetEvaluator
from stonelab.models.outputs import GoModelOutput
from stonelab.search import tree as T


class AlphaZeroGoModel:
    """An AlphaZero policy-value net of Go behind the interface of `MovePredictor` that the
    GTP engine uses (``rules``, ``probabilities``, ``play_moves``, ``outputs``)."""

    encoder = None  # its planes are the search's, not a move predictor's encoder

    def __init__(self, net: nn.Module, rules: GoRules, device: str | torch.device = "cpu"):
        self.rules = rules
        self.device = torch.device(device)
        self.search = GoSearch(rules, max_moves=3 * rules.num_points, fill_own_eyes=False)
        self.evaluate = NetEvaluator(net, self.device)  # moves the net once, eval mode
        self.net = self.evaluate.net

    def __call__(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Leaf evaluation for `BatchedMCTS`: planes [B, C, n, n] -> (priors [B, A], values [B])."""
        return self.evaluate(planes)

    def planes(self, states: Sequence[GoState]) -> np.ndarray:
        """The net's input planes of ``states`` [B, C, n, n] float32, as the search encodes them."""
        n = self.rules.n
        out = np.zeros((len(states), self.search.num_planes, n, n), dtype=np.float32)
        for i, state in enumerate(states):
            one = self.search.position(state)
            batch = GoPosition(*(field[None] for field in one))
            T.encode_root(self.search.spec, batch, 0, out[i])
        return out

    def probabilities(self, states: Sequence[GoState], ranks=None) -> np.ndarray:
        """Move probabilities [B, n*n + 1] (pass last), zero on illegal moves."""
        priors, _ = self.evaluate(self.planes(states))
        legal = np.stack([s.legal_mask() for s in states])
        priors = np.where(legal, priors, 0.0)
        return priors / np.maximum(priors.sum(axis=1, keepdims=True), 1e-12)

    def values(self, states: Sequence[GoState]) -> np.ndarray:
        """The value output [B] in [-1, 1], for the side to move."""
        return self.evaluate(self.planes(states))[1]

    def play_moves(self, states: Sequence[GoState], ranks=None, histories=None) -> np.ndarray:
        """The most probable legal move of each state, never filling a single-point eye of
        its own (as in self-play, where such moves were never searched)."""
        from stonelab.games.go.ownership import own_eyes

        probs = self.probabilities(states)
        for i, state in enumerate(states):
            eyes = own_eyes(state.board, state.arrays.neighbours, state.to_play)
            probs[i, :-1][eyes] = 0.0
            if not probs[i].any():
                probs[i, -1] = 1.0  # nothing else left: pass
        return probs.argmax(axis=1)

    def outputs(self, states: Sequence[GoState], ranks=None, histories=None) -> GoModelOutput:
        """Policy logits, and the ownership map of a net with an ownership head (None without):
        what kata-analyze asks a model for."""
        planes = self.planes(states)
        if getattr(self.net, "ownership_conv", None) is None:
            priors, _ = self.evaluate(planes)
            return GoModelOutput(policy_logits=torch.from_numpy(np.log(np.maximum(priors, 1e-30))))
        with torch.inference_mode():  # one forward for the policy and the ownership map
            out = self.net.heads(torch.from_numpy(planes).to(self.device))
        owned = out["ownership"].float().cpu()
        n = self.rules.n  # tanh(logit / 2) = owned, so logit = 2 atanh(owned)
        return GoModelOutput(policy_logits=out["log_policy"].float().cpu(),
                             ownership_logits=2 * torch.atanh(owned.clamp(-0.999999, 0.999999)).reshape(-1, n, n))


GATE_SETTINGS = {  # a belief_vit's gate (`stonelab.models.gate`): setting -> (check, what it must be)
    "enabled": (lambda v: isinstance(v, bool), "true or false"),
    "threshold": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1,
                  "a number in [0, 1]"),
    "top_k": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 2, "an integer >= 2"),
    "contested_weight": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0,
                         "a number >= 0"),
}


def gate_with(saved: dict | None, changes, path: str) -> dict | None:
    """The checkpoint's gate with the entry point's ``gate.*`` settings over it (none, or each
    null: as saved); a setting for a checkpoint without a gate, an unknown one or a bad value is
    refused by name."""
    changes = {key: value for key, value in dict(changes or {}).items() if value is not None}
    if not changes:
        return saved
    if saved is None:
        raise ConfigError(f"gate.{next(iter(changes))} is for belief_vit checkpoints: {path} has no belief gate")
    for key, value in changes.items():
        if key not in GATE_SETTINGS:
            raise ConfigError(f"gate.{key}: unknown gate setting (choose from {', '.join(GATE_SETTINGS)})")
        check, wanted = GATE_SETTINGS[key]
        if not check(value):
            raise ConfigError(f"gate.{key}={value!r} must be {wanted}")
    return {**saved, **changes}


def go_model_from_checkpoint(path: str, device: str | torch.device = "cpu", symmetries: int = 1, gate=None):
    """The Go player of checkpoint ``path``: a `MovePredictor` (maddison_cnn, belief_vit) or
    an `AlphaZeroGoModel`; a Gomoku checkpoint is refused naming the file. ``symmetries=8``
    averages a move predictor's net over the board's 8 symmetries (`SymmetryAverage`);
    ``gate`` (a belief_vit's): settings over the checkpoint's own (`gate_with`)."""
    from stonelab.models import checkpoints
    from stonelab.models.inference import MovePredictor
    from stonelab.models.nets.symmetry_average import with_symmetries

    loaded = checkpoints.load(path, game="go")
    if loaded.model == "alphazero":
        gate_with(None, gate, path)  # gate settings: refused by name
        if symmetries != 1:
            raise ConfigError(f"symmetries={symmetries!r} is for Go move predictors (maddison_cnn, belief_vit); "
                              f"{path} holds an alphazero net: use symmetries=1")
        return AlphaZeroGoModel(loaded.net, loaded.game, device)
    return MovePredictor(with_symmetries(loaded.net, symmetries), loaded.game, loaded.encoder, device,
                         gate=gate_with(loaded.gate, gate, path))
