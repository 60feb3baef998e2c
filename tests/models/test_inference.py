"""The move-predictor inference API: batched probabilities, illegal moves masked."""

from __future__ import annotations

import numpy as np
import torch

from stonelab.features.maddison import OFFSETS, PLAY_RANK
from stonelab.games.go.rules import BLACK, WHITE, GoRules
from stonelab.models.inference import MovePredictor, encode_states
from stonelab.models.nets.maddison import MaddisonNet

AUX_NET = "go19_resnet3x64_kgs_aux.ckpt"  # the shipped Go net with a score head


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


def test_both_colours_are_encoded_with_the_play_rank_by_the_predictor_and_the_search():
    from stonelab.games.go.evaluator import GoNetEvaluator
    from stonelab.games.go.search import GoSearch

    rules = GoRules(9)
    net = predictor()
    search = GoSearch(rules)
    evaluator = GoNetEvaluator(net, search, value="none")
    state = rules.new_state()
    for colour in (BLACK, WHITE):
        rank_planes = encode_states([state], "maddison")[0][OFFSETS["rank"]:OFFSETS["rank"] + 9]
        assert rank_planes[PLAY_RANK - 1].all() and rank_planes.sum() == 81, f"to move: {colour}"
        positions = search.new_positions(1)
        for field, value in zip(positions, search.position(state), strict=True):
            field[0] = value
        # The search's leaves see the planes the predictor sees: one rank for both.
        torch.testing.assert_close(evaluator.outputs(positions, 1).policy_logits,
                                   net.outputs([state], ranks=[PLAY_RANK]).policy_logits)
        state.play(rules.pass_move)


def test_the_shipped_score_net_judges_the_same_stones_alike_with_either_side_to_move(repo_root, one_thread):
    # At rank 0 (a kyu player in its data, who lost by ~25 points) it called whoever was
    # to move far behind: black's score -32 on the empty board, +11 after black's K10.
    net = MovePredictor.from_checkpoint(str(repo_root / "models" / AUX_NET))  # 19x19, komi 7.5
    empty = net.rules.new_state()
    white_to_move = empty.copy().play(9 * 19 + 9)  # black K10
    black_to_move = white_to_move.copy().play(net.rules.pass_move)
    states = [empty, white_to_move, black_to_move]
    estimates = net.estimates(states)
    black_scores = [s.to_play * e.score_lead for s, e in zip(states, estimates, strict=True)]
    # within 3 points (2.4 since the mover's 1.3-point edge was taken out: a real move gains)
    assert max(black_scores) - min(black_scores) < 3.0, black_scores
    for e in estimates:  # the win rate and the score call the same side ahead
        assert (e.winrate - 0.5) * e.score_lead > 0, e
