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

Value head (``value_head=True``, not in the paper; off by default so the published
net and its checkpoints stay as they are): `ValueHead` reads the trunk's last hidden
layer and gives one logit of "the side to move wins" (`GoModelOutput.value_logit`).

Auxiliary heads (``aux_heads=True``, KataGo's auxiliary targets, not in the paper):
`AuxHeads` adds an ownership map and a final score (mean and spread), and the game's
komi reaches the value and the score (`komi_for_mover`).

Black's edge (`BlackEdge`, both heads): a constant that the value logit and the score
give Black beyond the trunk's reading, 0 until `stonelab.models.score_offset` measures it
on held-out games. Why: in the KGS archives the weaker player takes Black, so a net
trained on them calls Black behind in a game between equals.
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


REFERENCE_KOMI = 6.5  # the komi of most KGS games: what a net without a komi input learned
SCORE_SCALE = 20.0  # points per unit of the score head's raw outputs (keeps them near 1)


def komi_for_mover(komi: torch.Tensor | None, to_play: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """float [B, 1]: the points the side to move gets from komi (+komi for white, -komi for
    black), relative to `REFERENCE_KOMI`; komi None (a caller that does not know it) is the reference."""
    if komi is None:
        return torch.zeros(to_play.shape[0], 1, dtype=dtype, device=to_play.device)
    return ((komi.to(dtype) - REFERENCE_KOMI) * -to_play.to(dtype)).unsqueeze(1)


class BlackEdge(nn.Module):
    """``edge * to_play``: what Black gets (and White gives up) beyond the net's reading, in
    the head's own unit (a logit for the value, points for the score). A buffer, not a
    weight: training never moves it; it is measured on games the net never saw and written
    by `stonelab.models.score_offset`. Files written before it existed load with 0."""

    def __init__(self):
        super().__init__()
        self.register_buffer("edge", torch.zeros(()))

    def forward(self, to_play: torch.Tensor) -> torch.Tensor:
        return self.edge * to_play.to(self.edge.dtype)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        state_dict.setdefault(prefix + "edge", torch.zeros(()))  # a file from before the edge existed
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)


class ValueHead(nn.Module):
    """hidden [B, F, n, n] (the trunk's last hidden layer), to_play [B] -> value logit [B].

    A 1x1 convolution to ``channels`` per-point features, their average over the board,
    then an MLP with one hidden layer to one logit. Why an average: a game's result is
    roughly a count over the board (whose points are whose), and an average of per-point
    features is such a count; it keeps the head small on any board size (no n*n-wide
    layer), and since a 1x1 kernel and a board average ignore orientation, a symmetric
    trunk gives a value that is the same under the 8 symmetries. The side to move
    enters the MLP because the planes are from the mover's view with no colour in them,
    while komi makes the same shape a win for white and a loss for black.
    """

    def __init__(self, filters: int, channels: int, hidden: int, komi: bool = False):
        super().__init__()
        self.conv = nn.Conv2d(filters, channels, kernel_size=1)
        self.mlp = nn.Sequential(nn.Linear(channels + 1, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        # With komi: the logit moves by a learned slope per point of komi for the mover. A
        # separate linear term (not one more MLP input) keeps a trained head's weights
        # loadable as they are; it starts at 0, so a loaded head's calls stay as they were
        # (KGS's 0.5-komi games are mostly handicap games, where more komi for the mover
        # is not the whole story), and is learned from games given a random komi
        # (data.komi_augment).
        self.komi_slope = nn.Parameter(torch.tensor(0.0)) if komi else None
        self.black_edge = BlackEdge()  # logits

    def forward(self, hidden: torch.Tensor, to_play: torch.Tensor, komi: torch.Tensor | None = None) -> torch.Tensor:
        pooled = F.relu(self.conv(hidden)).mean(dim=(2, 3))
        colour = to_play.to(pooled.dtype).unsqueeze(1)
        logit = self.mlp(torch.cat([pooled, colour], dim=1)).squeeze(1) + self.black_edge(to_play).to(pooled.dtype)
        if self.komi_slope is None:
            return logit
        return logit + self.komi_slope * komi_for_mover(komi, to_play, pooled.dtype).squeeze(1)


class AuxHeads(nn.Module):
    """hidden [B, F, n, n], to_play [B], komi [B] -> (ownership_logits [B, n, n],
    score_lead [B], score_stdev [B]): KataGo's auxiliary targets.

    - Ownership: a 1x1 convolution, one logit per point of "the side to move owns it at
      the end" (trained on the game cache's approximate end-of-game map).
    - Score: the mover's final margin in points, komi included, and its spread. The head
      predicts the margin on the board (before komi) from the board mean and max of
      per-point features; the komi is then added exactly, so the score moves point for
      point with komi whatever the data's komi were. The spread is a softplus, trained
      with the mean by a Gaussian likelihood on counted games only.
    """

    def __init__(self, filters: int, channels: int, hidden: int):
        super().__init__()
        self.ownership = nn.Conv2d(filters, 1, kernel_size=1)
        self.conv = nn.Conv2d(filters, channels, kernel_size=1)
        self.mlp = nn.Sequential(nn.Linear(2 * channels + 1, hidden), nn.ReLU(), nn.Linear(hidden, 2))
        self.black_edge = BlackEdge()  # points

    def forward(self, hidden: torch.Tensor, to_play: torch.Tensor, komi: torch.Tensor | None):
        ownership_logits = self.ownership(hidden).squeeze(1)
        features = F.relu(self.conv(hidden))
        pooled = torch.cat([features.mean(dim=(2, 3)), features.amax(dim=(2, 3)),
                            to_play.to(features.dtype).unsqueeze(1)], dim=1)
        score_lead, score_stdev = score_outputs(self.mlp(pooled), to_play, komi)
        return ownership_logits, score_lead + self.black_edge(to_play), score_stdev


def score_outputs(raw: torch.Tensor, to_play: torch.Tensor,
                  komi: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """(score_lead [B], score_stdev [B]) in points from a score head's raw outputs [B, 2]:
    the mover's margin on the board plus the komi added exactly, and a spread."""
    raw = raw.float()
    given = torch.full_like(raw[:, 0], REFERENCE_KOMI) if komi is None else komi.float()
    komi_points = -given * to_play.float()  # white gets the komi, black gives it
    score_lead = SCORE_SCALE * raw[:, 0] + komi_points
    score_stdev = SCORE_SCALE * F.softplus(raw[:, 1]) + 0.5  # never 0: a result is never certain to the point
    return score_lead, score_stdev


class MaddisonNet(nn.Module):
    """planes [B, C, n, n] float, to_play [B] (+1 black, -1 white) -> `GoModelOutput` with
    policy_logits [B, n*n] (no pass output), and value_logit [B] with ``value_head=True``."""

    def __init__(self, in_planes: int = 36, board_size: int = 19, *, depth: int = 12,
                 filters: int = 128, symmetric: bool = False, init_range: float = 0.05,
                 value_head: bool = False, value_channels: int = 8, value_hidden: int = 64,
                 aux_heads: bool = False):
        super().__init__()
        check([
            (lambda: isinstance(aux_heads, bool), f"model.net.aux_heads={aux_heads!r} must be true or false"),
            (lambda: isinstance(depth, int) and depth >= 2,
             f"model.net.depth={depth!r} must be an int >= 2 (the paper: 3..13)"),
            (lambda: isinstance(filters, int) and filters >= 1,
             f"model.net.filters={filters!r} must be an int >= 1 (the paper: 64..192)"),
            (lambda: init_range > 0, f"model.net.init_range={init_range!r} must be > 0"),
            (lambda: isinstance(value_head, bool), f"model.net.value_head={value_head!r} must be true or false"),
            (lambda: isinstance(value_channels, int) and value_channels >= 1,
             f"model.net.value_channels={value_channels!r} must be an int >= 1"),
            (lambda: isinstance(value_hidden, int) and value_hidden >= 1,
             f"model.net.value_hidden={value_hidden!r} must be an int >= 1"),
        ])
        self.config = dict(in_planes=in_planes, board_size=board_size, depth=depth, filters=filters,
                           symmetric=symmetric, init_range=init_range, value_head=value_head,
                           value_channels=value_channels, value_hidden=value_hidden, aux_heads=aux_heads)
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
        # Built after the trunk, so the trunk's initial weights do not depend on value_head.
        self.value_head = ValueHead(filters, value_channels, value_hidden, komi=aux_heads) if value_head else None
        self.aux_heads = AuxHeads(filters, value_channels, value_hidden) if aux_heads else None

    def _param(self, p: torch.Tensor) -> torch.Tensor:
        return symmetrize(p) if self.symmetric else p

    def _layer(self, i: int, x: torch.Tensor) -> torch.Tensor:
        w = self._param(self.kernels[i])
        return F.conv2d(x, w, padding=w.shape[-1] // 2) + self._param(self.biases[i])

    def forward(self, planes: torch.Tensor, to_play: torch.Tensor, komi: torch.Tensor | None = None) -> GoModelOutput:
        """komi float [B]: each game's komi (the points white gets); None: `REFERENCE_KOMI`.
        Only a net with ``aux_heads`` reads it."""
        hidden = planes
        for i in range(len(self.kernels) - 1):
            hidden = F.relu(self._layer(i, hidden))
        moves = self._layer(len(self.kernels) - 1, hidden)  # [B, 2, n, n]
        head = (to_play < 0).long()  # channel 0: black to move, 1: white
        policy_logits = moves.flatten(2)[torch.arange(moves.shape[0], device=moves.device), head]
        return heads_output(policy_logits, hidden, to_play, komi, self.value_head, self.aux_heads)


def heads_output(policy_logits: torch.Tensor, hidden: torch.Tensor, to_play: torch.Tensor,
                 komi: torch.Tensor | None, value_head: ValueHead | None,
                 aux_heads: AuxHeads | None) -> GoModelOutput:
    """The `GoModelOutput` of a trunk's policy logits and whichever heads it has."""
    value_logit = None if value_head is None else value_head(hidden, to_play, komi)
    if aux_heads is None:
        return GoModelOutput(policy_logits=policy_logits, value_logit=value_logit)
    ownership_logits, score_lead, score_stdev = aux_heads(hidden, to_play, komi)
    return GoModelOutput(policy_logits=policy_logits, value_logit=value_logit, ownership_logits=ownership_logits,
                         score_lead=score_lead, score_stdev=score_stdev)
