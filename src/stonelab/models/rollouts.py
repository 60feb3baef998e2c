"""Policy rollouts: the net plays a position out against itself, and the ends are counted.

    margins = policy_rollouts(predictor, state, rollouts=8)   # Black's area margins, komi off

A score head reads the whole board in one forward pass and misses what needs reading: one
dead group it calls alive moves its count by 30-40 points (docs/analysis_engine.md). A
rollout reads by playing. From ``state``, ``rollouts`` games are played by sampling the
net's own move distribution (sharpened by ``temperature``; never into one's own
single-point eye, the rule of search-free bots, so the net passes when the game is over)
for up to ``policy_moves`` moves; what is left is finished by the light random playout of
`stonelab.games.go.ownership.random_playout` and counted by Tromp-Taylor area. A net that
imitates human players then plays on as they would, mistakes included: the spread of the
ends is the position's real uncertainty, and their mean the expected result (Maddison et
al. and AlphaGo mixed rollouts into their leaf values for the same reason).

All rollouts of one position move together (one batched forward pass a move, on a
channels-last copy of the net: ~1.45x faster convolutions on a CPU). Seeded by ``seed`` and
the position's hash, so one position always gets the same ends.

`blend` mixes the ends into a search's (or the net's) score and win rate with the weight
`ROLLOUT_SHARE`, the analysis engine's ``rollouts`` setting (docs/analysis_engine.md).
"""

from __future__ import annotations

import copy
import weakref

import numpy as np
import torch

from stonelab.games.go import rules as go
from stonelab.games.go.ownership import diagonal_table, random_playout
from stonelab.games.go.rules import GoState
from stonelab.search.tree import seed_numba

ROLLOUTS = 8
TEMPERATURE = 0.5  # the net's distribution squared: its own mistakes, not a uniform sprinkle of them
POLICY_MOVES = 200  # then random playouts finish whatever the net left open
# The ends' share of a blended score and win rate. Chosen on the first 8 counted even 19x19
# games of ../shared/data/kgs (53 positions from move 150 on, models/go19_resnet6x64_kgs_piece4_aux.ckpt:
# shares 0.1-0.4 named the winner in 0.81-0.93 of them, 0.3 the most, mean |error| 5.7 points).
# That sample flattered it: on 100 other games 0.704 of 695 positions, the net alone 0.655
# (docs/analysis_engine.md).
ROLLOUT_SHARE = 0.3

_FAST_NETS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def policy_rollouts(predictor, state: GoState, rollouts: int = ROLLOUTS, temperature: float = TEMPERATURE,
                    policy_moves: int = POLICY_MOVES, seed: int = 0) -> np.ndarray:
    """float64 [rollouts]: Black's Tromp-Taylor area margin, ``state``'s komi taken off, at the
    end of each rollout (see the module doc). ``predictor``: a `MovePredictor` of ``state``'s board."""
    if rollouts < 1 or temperature <= 0 or policy_moves < 0:
        raise ValueError(f"policy_rollouts: rollouts={rollouts} (>= 1), temperature={temperature} (> 0), "
                         f"policy_moves={policy_moves} (>= 0)")
    position_seed = [int(seed) & 0xFFFFFFFF, state.hash & 0xFFFFFFFF]
    rng = np.random.default_rng(position_seed)
    games = [state.copy().resume_play() for _ in range(rollouts)]
    for _ in range(policy_moves):
        live = [g for g in games if not g.is_over]
        if not live:
            break
        for game, move in zip(live, sample_moves(predictor, live, temperature, rng), strict=True):
            game.play(int(move))
    seed_numba(int(rng.integers(2**31)))
    return np.array([area_margin(game) for game in games])


def check_rollouts(rollouts, predictor) -> None:
    """Refuse, by name, an ``analysis.rollouts`` that is no whole number >= 0 or that a model
    without a move predictor's policy (an alphazero Go model) cannot play."""
    from stonelab.errors import ConfigError

    if isinstance(rollouts, bool) or not isinstance(rollouts, int) or rollouts < 0:
        raise ConfigError(f"analysis.rollouts={rollouts!r}: give a whole number >= 0 (0: none)")
    if rollouts and not hasattr(predictor, "masked_probabilities"):
        raise ConfigError(f"analysis.rollouts={rollouts}: rollouts need a move predictor's policy "
                          "(maddison_cnn, resnet or belief_vit checkpoints); this is an alphazero Go model")


def blend(lead: float, winrate: float, ends: np.ndarray, to_play: int,
          lcb: float | None = None) -> tuple[float, float, float | None]:
    """(score lead, win rate, its lower bound) of the side to move ``to_play``: ``lead``,
    ``winrate`` and ``lcb`` (a search's or the net's, that side's view; ``lcb`` None: none)
    mixed with the rollouts' ``ends`` (Black's margins) -- their mean margin and the share of
    them that side won, both for the bound -- at `ROLLOUT_SHARE`."""
    margins = np.asarray(ends, dtype=np.float64) * to_play
    won = float(np.mean(margins > 0))

    def mix(ours: float, theirs: float) -> float:
        return (1 - ROLLOUT_SHARE) * ours + ROLLOUT_SHARE * theirs

    return mix(lead, float(margins.mean())), mix(winrate, won), None if lcb is None else mix(lcb, won)


def policy_logits(predictor, states: list[GoState]) -> torch.Tensor:
    """The policy logits of ``states`` from a channels-last copy of ``predictor``'s net
    (made once per net); a net that reads past positions goes through ``predictor`` itself."""
    net = predictor.net
    if getattr(net, "memory", 0) or predictor.device.type != "cpu":
        return predictor.outputs(states).policy_logits
    if net not in _FAST_NETS:
        _FAST_NETS[net] = copy.deepcopy(net).to(memory_format=torch.channels_last).eval()
    planes, to_play, komi = predictor.net_inputs(states)
    with torch.inference_mode():
        out = _FAST_NETS[net](planes.contiguous(memory_format=torch.channels_last), to_play, komi=komi)
    return out.policy_logits


def sample_moves(predictor, states: list[GoState], temperature: float, rng: np.random.Generator) -> np.ndarray:
    """One move per state drawn from the net's legal, eye-sparing distribution to the power
    1 / ``temperature``: int [B]."""
    logits = policy_logits(predictor, states)
    probs = predictor.masked_probabilities(logits / temperature, states, avoid_own_eyes=True).double().numpy()
    cumulative = np.cumsum(probs, axis=1)
    draws = rng.random(len(states)) * cumulative[:, -1]
    return np.minimum((cumulative < draws[:, None]).sum(axis=1), probs.shape[1] - 1)


def area_margin(game: GoState) -> float:
    """Black's Tromp-Taylor area less the komi after a light random playout from ``game`` (a copy)."""
    arrays = go.copy_arrays(game.arrays)
    go.resume_play(arrays)
    random_playout(arrays, diagonal_table(game.n), 3 * game.n * game.n)
    owner = np.zeros(game.n * game.n, dtype=np.int8)
    go.tromp_taylor_owner(arrays.board, arrays.neighbours, owner)
    return float(owner.sum(dtype=np.int64)) - float(game.rules.komi)
