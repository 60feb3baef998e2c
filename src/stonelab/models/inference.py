"""Inference for Go move predictors: positions in, move probabilities out.

    predictor = MovePredictor.from_checkpoint("logs/.../best.ckpt")
    probs = predictor.probabilities([state1, state2])   # [B, n*n + 1], pass last

Illegal moves get probability 0. A net without a pass output (the paper's
361-way softmax) gives pass 0 unless no board move is legal. The GTP engine
and search use this API.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from stonelab.features import ENC_MADDISON, ENCODERS
from stonelab.features.maddison import PLAY_RANK, encode_maddison_into, maddison_scratch
from stonelab.features.simple4 import encode_simple4_into
from stonelab.games.go.ownership import own_eyes
from stonelab.games.go.rules import GoRules, GoState
from stonelab.models.gate import gate_output
from stonelab.models.outputs import GoModelOutput


def encode_states(states: Sequence[GoState], encoder: str, ranks: Sequence[int] | None = None) -> np.ndarray:
    """Planes uint8 [B, C, n, n] of ``states`` from the side to move's view.

    ranks: the dan rank (1..9, 0 kyu or unknown) the maddison net should imitate, per
    state; None: `PLAY_RANK` for each (the net's value and score read the rank too).
    """
    enc = ENCODERS[encoder]
    n = states[0].n
    out = np.zeros((len(states), enc.num_planes, n, n), dtype=np.uint8)
    scratch = maddison_scratch(n) if enc.encoder_id == ENC_MADDISON else None
    for i, state in enumerate(states):
        if enc.encoder_id == ENC_MADDISON:
            encode_maddison_into(state.arrays, int(ranks[i]) if ranks is not None else PLAY_RANK, out[i], scratch)
        else:
            encode_simple4_into(state.arrays, out[i])
    return out


@dataclass(frozen=True)
class BoardEstimate:
    """The net's whole-board judgement of one position, from the side to move's view
    (what KataGo's analysis reports beside each move; None where the net has no such head).

    - ``winrate``     float in [0, 1]: probability that the side to move wins, or None;
    - ``score_lead``  float: expected final score of the side to move minus the other's,
      in points, komi included, or None;
    - ``score_stdev`` float >= 0: the spread of that score, or None;
    - ``ownership``   float32 [n*n] in [-1, 1]: expected owner of each point at the end
      (+1 the side to move), or None.
    """

    winrate: float | None
    score_lead: float | None
    score_stdev: float | None
    ownership: np.ndarray | None


def ownership_count(ownership: torch.Tensor, komi: torch.Tensor, to_play: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(score lead [B], its spread [B]) in the side to move's view from an ownership map
    [B, points] in [-1, 1] (+1 the mover's): the expected area count less the komi the
    mover gives (+1 black gives it, -1 white gets it), and the spread of a count of
    independent points with those means (sqrt of the sum of 1 - o^2), plus half a point."""
    lead = ownership.sum(dim=1) - komi * to_play
    return lead, torch.sqrt((1.0 - ownership.square()).clamp(min=0).sum(dim=1)) + 0.5


class MovePredictor:
    """A trained move predictor on one device; batched, illegal moves masked."""

    def __init__(self, net: nn.Module, rules: GoRules, encoder: str, device: str | torch.device = "cpu",
                 gate: dict | None = None, score_from_ownership: bool = False):
        self.net = net.to(device).eval()
        self.rules = rules
        self.encoder = encoder
        self.device = torch.device(device)
        self.gate = gate  # seed 001's belief gate (belief_vit checkpoints): used by play_moves
        self.score_from_ownership = score_from_ownership  # see for_board

    @classmethod
    def from_checkpoint(cls, path: str, device: str | torch.device = "cpu") -> MovePredictor:
        from stonelab.models import checkpoints

        loaded = checkpoints.load(path, game="go", move_predictor=True)  # refuses an alphazero (Gomoku) checkpoint by name
        return cls(loaded.net, loaded.game, loaded.encoder, device, gate=loaded.gate)

    def for_board(self, n: int) -> MovePredictor:
        """This predictor on an ``n`` x ``n`` board (`stonelab.models.resize.resized_net`: the
        per-point biases moved by distance to the edges, every other weight shared in value);
        itself when ``n`` is its own size. A net that cannot move is refused by name.

        Its score is then the count of its ownership map (`ownership_count`), not the score
        head's: the head maps board-wide feature averages to points on the board it learned,
        while the ownership map is per point and carries over. Measured on 97 9x9 and 100
        13x13 games of GNU Go against itself (docs/analysis_engine.md): on their last
        positions the count names the winner in 92 and 92 games, the head in 81 and 81."""
        if n == self.rules.n:
            return self
        from stonelab.models.resize import resized_net

        net = resized_net(self.net, self.rules.n, n)
        rules = dataclasses.replace(self.rules, board_size=n)
        return MovePredictor(net, rules, self.encoder, self.device, gate=self.gate, score_from_ownership=True)

    @torch.inference_mode()
    def outputs(self, states: Sequence[GoState], ranks: Sequence[int] | None = None,
                histories: Sequence[Sequence[GoState]] | None = None) -> GoModelOutput:
        """The net's raw output (policy logits [B, n*n] or [B, n*n + 1], and the belief
        head's logits for a belief_vit).

        histories: for a net with a memory (belief_vit, model.net.memory > 0), the
        positions before each state, oldest first (the last ``memory`` are read; fewer
        are padded as at the game's start; None = no past positions).
        """
        planes, to_play, komi = self.net_inputs(states, ranks)
        memory = getattr(self.net, "memory", 0)
        if not memory:
            return self.net(planes, to_play, komi=komi)
        past = np.zeros((len(states), memory, *planes.shape[1:]), dtype=np.uint8)
        for i, history in enumerate(histories or [[] for _ in states]):
            recent = list(history)[-memory:]
            if recent:
                past[i, memory - len(recent):] = encode_states(recent, self.encoder)
        return self.net(planes, to_play, torch.from_numpy(past).to(self.device), komi=komi)

    def net_inputs(self, states: Sequence[GoState], ranks: Sequence[int] | None = None
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(planes float [B, C, n, n], side to move [B], komi [B]) of ``states`` on this device:
        what the net reads of the present position."""
        planes = torch.from_numpy(encode_states(states, self.encoder, ranks)).to(self.device).float()
        to_play = torch.tensor([s.to_play for s in states], device=self.device)
        komi = torch.tensor([float(s.rules.komi) for s in states], device=self.device)
        return planes, to_play, komi

    def estimates(self, states: Sequence[GoState]) -> list[BoardEstimate]:
        """The net's `BoardEstimate` of each state (one batched forward pass); the komi
        is each state's own (``state.rules.komi``)."""
        out = self.outputs(states).apply(lambda t: t.float().cpu())
        value = out.value
        belief = out.belief_map
        score, stdev = out.score_lead, out.score_stdev
        if self.score_from_ownership and belief is not None:
            komi = torch.tensor([float(s.rules.komi) for s in states])
            to_play = torch.tensor([float(s.to_play) for s in states])
            score, stdev = ownership_count(belief.flatten(1), komi, to_play)
        return [BoardEstimate(
            winrate=None if value is None else float((value[i] + 1) / 2),
            score_lead=None if score is None else float(score[i]),
            score_stdev=None if stdev is None else float(stdev[i]),
            ownership=None if belief is None else belief[i].flatten().numpy().astype(np.float32),
        ) for i in range(len(states))]

    def logits(self, states: Sequence[GoState], ranks: Sequence[int] | None = None) -> torch.Tensor:
        """Raw policy logits [B, n*n] or [B, n*n + 1] (nets with a pass output)."""
        return self.outputs(states, ranks).policy_logits

    def masked_probabilities(self, logits: torch.Tensor, states: Sequence[GoState],
                             avoid_own_eyes: bool = False) -> torch.Tensor:
        """Softmax of ``logits`` [B, actions] over each state's legal moves (and, with
        ``avoid_own_eyes``, off its own single-point eyes), pass last: float [B, n*n + 1]."""
        logits = logits.float().cpu()
        legal = torch.from_numpy(np.stack([s.legal_mask() for s in states]))
        if avoid_own_eyes:
            eyes = np.stack([own_eyes(s.board, s.arrays.neighbours, s.to_play) for s in states])
            legal[:, :-1] &= torch.from_numpy(~eyes)
        if logits.shape[1] == self.rules.num_actions - 1:
            # No pass output: pass is the move only when no board move is legal.
            no_board_move = ~legal[:, :-1].any(dim=1, keepdim=True)
            logits = torch.cat([logits, torch.where(no_board_move, 0.0, -torch.inf)], dim=1)
        return torch.softmax(logits.masked_fill(~legal, -torch.inf), dim=1)

    def probabilities(self, states: Sequence[GoState], ranks: Sequence[int] | None = None) -> np.ndarray:
        """Move probabilities [B, n*n + 1] (pass last), zero on illegal moves."""
        return self.masked_probabilities(self.logits(states, ranks), states).numpy()

    def best_moves(self, states: Sequence[GoState], k: int = 1, ranks: Sequence[int] | None = None) -> np.ndarray:
        """The ``k`` most probable legal moves per state, best first: int [B, k]."""
        return np.argsort(-self.probabilities(states, ranks), axis=1, kind="stable")[:, :k]

    def play_moves(self, states: Sequence[GoState], ranks: Sequence[int] | None = None,
                   histories: Sequence[Sequence[GoState]] | None = None) -> np.ndarray:
        """The move each state gets without search, int [B]: the most probable legal move,
        or, for a belief_vit whose gate is on, the gated move (a top move the belief
        distrusts is replaced, `stonelab.models.gate.gate_moves`). ``histories``: see `outputs`.

        Moves that fill one's own single-point eye are never played (the usual rule of
        search-free bots): a net without a pass output would otherwise fill its eyes
        and die instead of passing at the end of the game; with them gone it passes."""
        out = self.outputs(states, ranks, histories)
        probs = self.masked_probabilities(out.policy_logits, states, avoid_own_eyes=True)
        if not (out.has_belief and self.gate and self.gate.get("enabled")):
            return probs.argmax(dim=1).numpy()
        move, _, _ = gate_output(probs, out.apply(torch.Tensor.cpu), **self.gate)
        return move.numpy()
