"""Seed 001's belief-guided Vision Transformer for Go (``model=belief_vit``).

    planes [B, 4, n, n] --1x1 conv (``stem_kernel``)--> n*n tokens + fixed 2D sinusoidal positions
      (+ one learned pass token) --nn.TransformerEncoder--> tokens
    belief head:  mean over the n*n board tokens -> MLP -> confidence logit,
                  value logit, n*n ownership ("belief map") logits (with
                  ``ownership_head="tokens"``, plus a per-token linear score)
    policy head:  Conv1d (kernel 1) over [board tokens ; pass token], each token
                  concatenated with the DETACHED belief ("advice") -> n*n + 1 logits

Gradient detachment (seed 001, eq. 1): the policy ("actor") loss never reaches the
belief head's parameters, because the belief output enters the policy head only
through ``.detach()``. Both heads' losses reach the shared transformer. The belief
losses do not reach the policy head either (the confidence target is built from the
detached policy, see `stonelab.models.belief_vit`).

Advice channels per token (when ``advice=True``): the token's own belief-map value
(tanh(o / 2) = 2 sigmoid(o) - 1: expected own-view ownership; 0 for the pass token), the confidence
sigmoid(c) and the value tanh(v / 2), the last two broadcast to every token.

Ownership head: ``"pooled"`` is the literal reading (one linear map from the pooled
MLP vector to all n*n logits); ``"tokens"`` (the default) adds a linear score of each
board token to that, so the map can follow the board: a single pooled vector carries
little of where the stones are (in a short run the pooled map stayed at chance).

``to_play`` is not an input of the trunk: the 4 planes are already from the side to
move's view (seed 001 has no colour input). Beyond the seed, ``score_head=True`` adds
KataGo's score target to the belief head: the mover's final margin and its spread from
the pooled MLP vector, the komi added exactly (`stonelab.models.nets.maddison.score_outputs`,
which reads ``to_play`` for whose komi it is), and a learned komi slope on the value
logit, so value and score move with the game's komi.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import torch
from torch import nn

from stonelab.errors import check
from stonelab.models.nets.maddison import komi_for_mover, score_outputs
from stonelab.models.outputs import GoModelOutput

ADVICE_CHANNELS = 3  # belief-map value at the token, confidence, value
MEMORY_KINDS = ("gru", "transformer")  # what reads the past positions (model.net.memory_kind)
# Positions per encoder call. A whole batch's attention and feed-forward tensors are too big
# for the C allocator's heap, so each call mapped and zeroed fresh pages (measured 2026-12-05,
# the 4x64 net on one core: 40% of an inference batch's CPU time in the kernel); slices of 16
# reuse the heap: inference 2x and a training step ~1.2x faster, the same outputs.
ENCODER_CHUNK = 16


@contextmanager
def without_fused_attention():
    """PyTorch's fused inference path for Transformer layers materialises each attention
    matrix whole; the plain path computes the same with scaled_dot_product_attention."""
    before = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        yield
    finally:
        torch.backends.mha.set_fastpath_enabled(before)


class Fixed2DPositionalEncoding(nn.Module):
    """A parameter-free 2D sine/cosine encoding of the n x n board points, ``[n*n, dim]``.

    Half of the channels encode the row, half the column, each with sin/cos pairs at
    geometric frequencies 1 / 10000^(2i/d) (d = dim / 2). Then
    ``<pe(r, c), pe(r', c')> = sum_i cos(w_i (r - r')) + sum_i cos(w_i (c - c'))``
    depends only on the offset between the two points: translation-consistent.
    Nothing is learned, and nothing is saved in a state_dict (a non-persistent buffer).
    """

    def __init__(self, dim: int, board_size: int):
        super().__init__()
        if dim % 4:
            raise ValueError(f"the positional encoding needs a dim divisible by 4, got {dim}")
        self.register_buffer("pe", self.table(dim, board_size), persistent=False)

    @staticmethod
    def table(dim: int, n: int) -> torch.Tensor:
        half = dim // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(0, half, 2, dtype=torch.float64) / half)
        coords = torch.arange(n, dtype=torch.float64)[:, None] * freqs[None, :]  # [n, half/2]
        axis = torch.cat([torch.sin(coords), torch.cos(coords)], dim=1)  # [n, half]
        rows = axis[:, None, :].expand(n, n, half)
        cols = axis[None, :, :].expand(n, n, half)
        return torch.cat([rows, cols], dim=2).reshape(n * n, dim).float()

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``tokens [B, n*n, dim]`` plus the encoding."""
        return tokens + self.pe.to(tokens.dtype)


class BeliefViT(nn.Module):
    """planes [B, C, n, n] float -> `GoModelOutput`: policy_logits [B, n*n + 1] (the pass
    action last), confidence_logit [B], value_logit [B], ownership_logits [B, n, n]."""

    def __init__(self, in_planes: int = 4, board_size: int = 19, *, embed_dim: int = 128, heads: int = 4,
                 layers: int = 4, ff_dim: int = 512, dropout: float = 0.0, belief_hidden: int = 256,
                 advice: bool = True, ownership_head: str = "tokens", memory: int = 0, score_head: bool = False,
                 stem_kernel: int = 1, memory_kind: str = "gru"):
        super().__init__()
        check([
            (lambda: isinstance(embed_dim, int) and embed_dim >= 4 and embed_dim % 4 == 0,
             f"model.net.embed_dim={embed_dim!r} must be a multiple of 4 (the 2D positional encoding)"),
            (lambda: isinstance(heads, int) and heads >= 1 and embed_dim % heads == 0,
             f"model.net.heads={heads!r} must divide model.net.embed_dim={embed_dim!r}"),
            (lambda: isinstance(layers, int) and layers >= 1, f"model.net.layers={layers!r} must be >= 1"),
            (lambda: isinstance(ff_dim, int) and ff_dim >= 1, f"model.net.ff_dim={ff_dim!r} must be >= 1"),
            (lambda: 0.0 <= dropout < 1.0, f"model.net.dropout={dropout!r} must be in [0, 1)"),
            (lambda: isinstance(belief_hidden, int) and belief_hidden >= 1,
             f"model.net.belief_hidden={belief_hidden!r} must be >= 1"),
            (lambda: ownership_head in ("tokens", "pooled"),
             f"model.net.ownership_head={ownership_head!r}: choose tokens or pooled"),
            (lambda: isinstance(memory, int) and memory >= 0,
             f"model.net.memory={memory!r} must be an int >= 0 (past positions read; 0 = off)"),
            (lambda: memory_kind in MEMORY_KINDS,
             f"model.net.memory_kind={memory_kind!r}: choose {' or '.join(MEMORY_KINDS)}"),
            (lambda: isinstance(score_head, bool), f"model.net.score_head={score_head!r} must be true or false"),
            (lambda: isinstance(stem_kernel, int) and stem_kernel >= 1 and stem_kernel % 2 == 1,
             f"model.net.stem_kernel={stem_kernel!r} must be an odd int >= 1 (1: the seed's per-point embedding)"),
        ])
        self.config = dict(in_planes=in_planes, board_size=board_size, embed_dim=embed_dim, heads=heads,
                           layers=layers, ff_dim=ff_dim, dropout=dropout, belief_hidden=belief_hidden,
                           advice=advice, ownership_head=ownership_head, memory=memory, score_head=score_head,
                           stem_kernel=stem_kernel, memory_kind=memory_kind)
        self.board_size = board_size
        self.num_points = board_size * board_size
        self.advice = advice
        # Trunk: a conv embedding, fixed positions, a learned pass token, the encoder. The seed
        # embeds each point alone (kernel 1); a 3x3 stem lets each token start from its
        # neighbourhood (a convolutional stem, as hybrid ViTs use: attention need not spend
        # its first layers finding adjacent stones).
        self.embed = nn.Conv2d(in_planes, embed_dim, kernel_size=stem_kernel, padding=stem_kernel // 2)
        self.positions = Fixed2DPositionalEncoding(embed_dim, board_size)
        self.pass_token = nn.Parameter(torch.randn(embed_dim) * 0.02)
        layer = nn.TransformerEncoderLayer(embed_dim, heads, dim_feedforward=ff_dim, dropout=dropout,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(embed_dim),
                                             enable_nested_tensor=False)
        self.encoder_slice: int | None = ENCODER_CHUNK  # None: the whole batch in one fused call
        # Memory (seed 001: history and ko): each of the last `memory` positions is
        # summarised by one linear map of all its planes (so where stones were, not just
        # how many); a GRU reads the summaries oldest first (its last state), or one
        # Transformer layer reads them at once, each tagged with how long ago it was (the
        # latest position's output); that joins the encoder's input as one more token
        # that every point can attend to.
        self.memory = memory
        self.memory_kind = memory_kind
        if memory:
            self.memory_summary = nn.Linear(in_planes * self.num_points, embed_dim)
            if memory_kind == "gru":
                self.memory_gru = nn.GRU(embed_dim, embed_dim, batch_first=True)
            else:
                self.memory_age = nn.Parameter(torch.randn(memory, embed_dim) * 0.02)
                reader = nn.TransformerEncoderLayer(embed_dim, heads, dim_feedforward=ff_dim, dropout=dropout,
                                                    activation="gelu", batch_first=True, norm_first=True)
                self.memory_reader = nn.TransformerEncoder(reader, 1, norm=nn.LayerNorm(embed_dim),
                                                           enable_nested_tensor=False)
        # Belief head: pooled board tokens -> MLP -> confidence, value, ownership map.
        self.belief = nn.ModuleDict({
            "mlp": nn.Sequential(nn.Linear(embed_dim, belief_hidden), nn.GELU(),
                                 nn.Linear(belief_hidden, belief_hidden), nn.GELU()),
            "confidence": nn.Linear(belief_hidden, 1),
            "value": nn.Linear(belief_hidden, 1),
            "ownership": nn.Linear(belief_hidden, self.num_points),
        })
        if ownership_head == "tokens":
            self.belief["ownership_tokens"] = nn.Linear(embed_dim, 1)
        if score_head:  # the margin and its spread; the komi's slope on the value starts at 0
            self.belief["score"] = nn.Linear(belief_hidden, 2)
            self.komi_slope = nn.Parameter(torch.tensor(0.0))
        # Policy head: one score per token (board points, then pass).
        self.policy = nn.Conv1d(embed_dim + (ADVICE_CHANNELS if advice else 0), 1, kernel_size=1)

    def belief_parameters(self):
        return self.belief.parameters()

    def policy_parameters(self):
        return self.policy.parameters()

    def memory_token(self, history: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor:
        """[B, 1, D]: the memory's summary of ``history`` [B, memory, C, n, n] (oldest first;
        None = no past positions, as at a game's start)."""
        b = like.shape[0]
        if history is None:
            history = like.new_zeros(b, self.memory, self.config["in_planes"] * self.num_points)
        elif tuple(history.shape[:2]) != (b, self.memory):
            raise ValueError(f"history has shape {tuple(history.shape)}; this net reads "
                             f"[{b}, {self.memory}, planes, n, n] (model.net.memory={self.memory})")
        summaries = self.memory_summary(history.flatten(2).to(like.dtype))
        if self.memory_kind == "transformer":
            return self.memory_reader(summaries + self.memory_age.to(like.dtype))[:, -1:]
        _, last = self.memory_gru(summaries)
        return last[-1][:, None]

    def trunk(self, planes: torch.Tensor, history: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(board tokens [B, N, D], pass token [B, D]) after the encoder."""
        x = self.embed(planes).flatten(2).transpose(1, 2)  # [B, N, D]
        x = self.positions(x)
        extra = [self.pass_token.to(x.dtype).expand(x.shape[0], 1, -1)]
        if self.memory:
            extra.append(self.memory_token(history, x))
        tokens = torch.cat([x, *extra], dim=1)
        if self.encoder_slice is None:
            out = self.encoder(tokens)
        else:
            with without_fused_attention():
                out = torch.cat([self.encoder(part) for part in tokens.split(self.encoder_slice)])
        return out[:, :self.num_points], out[:, self.num_points]

    def forward(self, planes: torch.Tensor, to_play: torch.Tensor | None = None,
                history: torch.Tensor | None = None, komi: torch.Tensor | None = None) -> GoModelOutput:
        """komi float [B]: each game's komi (the points white gets), read by the score head
        only (None: `REFERENCE_KOMI`)."""
        tokens, pass_tok = self.trunk(planes.float(), history)
        h = self.belief["mlp"](tokens.mean(dim=1))
        confidence = self.belief["confidence"](h).squeeze(1)
        value = self.belief["value"](h).squeeze(1)
        score_lead = score_stdev = None
        if "score" in self.belief:
            if to_play is None:
                raise ValueError("a belief_vit with a score head needs to_play: whose komi it is")
            value = value + self.komi_slope * komi_for_mover(komi, to_play, value.dtype).squeeze(1)
            score_lead, score_stdev = score_outputs(self.belief["score"](h), to_play, komi)
        ownership = self.belief["ownership"](h)  # [B, N]
        if "ownership_tokens" in self.belief:
            ownership = ownership + self.belief["ownership_tokens"](tokens).squeeze(2)
        seq = torch.cat([tokens, pass_tok[:, None]], dim=1)  # [B, N + 1, D]
        if self.advice:
            # The belief as a fixed input: no policy gradient flows back through it.
            own = torch.tanh(ownership.detach() / 2)  # expected ownership, 2 sigmoid - 1
            own = torch.cat([own, own.new_zeros(own.shape[0], 1)], dim=1)  # pass: no board point
            conf = torch.sigmoid(confidence.detach())[:, None].expand_as(own)
            val = torch.tanh(value.detach() / 2)[:, None].expand_as(own)
            seq = torch.cat([seq, torch.stack([own, conf, val], dim=2)], dim=2)
        policy = self.policy(seq.transpose(1, 2)).squeeze(1)  # [B, N + 1]
        n = self.board_size
        return GoModelOutput(policy_logits=policy, value_logit=value, confidence_logit=confidence,
                             ownership_logits=ownership.view(-1, n, n), score_lead=score_lead,
                             score_stdev=score_stdev)
