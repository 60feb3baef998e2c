"""The move-predictor inference API: batched probabilities, illegal moves masked."""

from __future__ import annotations

import numpy as np
import torch

from stonelab.games.go.rules import GoRules
from stonelab.models.inference import MovePredictor
from stonelab.models.nets.maddison import MaddisonNet


def predictor(n: int = 9) -> MovePredictor:
    torch.manual_seed(0)
    return MovePredictor(MaddisonNet(36, n, depth=3, filters=8), GoRules(n), "maddison")


def test_probabilities_are_batched_and_zero_on_illegal_moves():
    rules = GoRules(9)
    empty = rules.new_state()
    busy = rules.new_state()
    for move in (0, 1, 10, 40, 9):  # black 0 and 10, white 1 and 40, black 9 ...
        busy.play(move)
    probs = predictor().probabilities([empty, busy])
    assert probs.shape == (2, 82)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    legal = busy.legal_mask()
    assert (probs[1][~legal] == 0).all()
    assert probs[0, 81] == 0.0  # no pass output and board moves exist: pass never proposed
    best = predictor().best_moves([busy], k=3)[0]
    assert all(legal[m] for m in best)
    # Without a belief head, the move played without search is the best legal move.
    assert predictor().play_moves([empty, busy]).tolist() == predictor().best_moves([empty, busy])[:, 0].tolist()


def test_pass_when_nothing_else_is_legal():
    rules = GoRules(9)
    state = rules.new_state()
    # Fill the board with black except single-point eyes that are suicide for white.
    black = [p for p in range(81) if p not in (0, 80)]
    state.setup(black, [])
    state.to_play = -1
    probs = predictor().probabilities([state])
    assert probs[0, 81] == 1.0


def test_play_moves_never_fills_its_own_eyes_and_passes_instead():
    rules = GoRules(9)
    state = rules.new_state()
    state.setup([p for p in range(81) if p not in (0, 80)], [])  # one black chain, two corner eyes
    state.to_play = 1
    assert set(np.flatnonzero(state.legal_mask()[:81])) == {0, 80}  # black may fill its eyes ...
    assert predictor().best_moves([state])[0, 0] in (0, 80)
    assert predictor().play_moves([state]).tolist() == [81]          # ... but passes instead
    state.to_play = -1                                               # for white they are suicide
    assert predictor().play_moves([state]).tolist() == [81]
