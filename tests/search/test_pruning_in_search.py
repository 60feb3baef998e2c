"""Pruning inside the search: expansion and root selection share one candidate set."""

from __future__ import annotations

import numpy as np
from reference_search import deterministic_evaluator

from stonelab.games.gomoku.candidates import PruningConfig, candidates
from stonelab.games.gomoku.rules import BLACK, GomokuRules, encode_position
from stonelab.search.mcts import BatchedMCTS, MCTSConfig


def root_moves(mcts: BatchedMCTS, g: int) -> set[int]:
    root = mcts.tree.root[g]
    start, count = mcts.tree.first_edge[g, root], mcts.tree.num_children[g, root]
    return {int(m) for m in mcts.tree.move[g, start:start + count]}


def setup(moves, pruning, playouts=80):
    rules = GomokuRules(8, 5)
    mcts = BatchedMCTS(rules, 1, MCTSConfig(playouts=playouts), settings=pruning)
    for move in moves:
        mcts.play(0, move)
    return rules, mcts


# Black stones along the top-left: the centroid window (6x6) is clipped into rows/cols 0..5.
CORNER = [0, 63, 1, 62, 2, 54, 9, 55, 10]


def test_root_children_are_exactly_the_candidate_set():
    pruning = PruningConfig(window=6, threat_aware=True)
    rules, mcts = setup(CORNER, pruning)
    evaluate = deterministic_evaluator(rules.num_actions)
    visits = mcts.search(evaluate)[0]
    board = mcts.root_board[0].copy()
    to_play, last, _ = mcts.root_info[0]
    priors, _ = evaluate(encode_position(board, 8, int(to_play), int(last))[None])
    expected = set(np.flatnonzero(candidates(rules, board, int(to_play), pruning, priors[0])).tolist())
    assert root_moves(mcts, 0) == expected
    assert set(np.flatnonzero(visits).tolist()) <= expected  # root selection never leaves the set
    assert len(expected) < int((board == 0).sum())


def test_every_expanded_node_respects_pruning():
    rules, mcts = setup(CORNER, PruningConfig(window=4))
    mcts.search(deterministic_evaluator(rules.num_actions))
    expansions, cands, legal = mcts.candidate_stats
    assert expansions > 10 and cands < legal
    assert 0 < mcts.candidate_reduction < 1
    assert mcts.candidates_mean == cands / expansions
    _, plain = setup(CORNER, None)
    plain.search(deterministic_evaluator(rules.num_actions))
    assert plain.candidate_reduction == 0.0


def test_threat_exception_lets_the_search_take_a_win_outside_the_window():
    # Black has four in a row on the right edge (rows 1-4, column 7); White's stones pull
    # the centroid (and the 4x4 window) to the left. Black to move wins at (0,7) or (5,7).
    black = [15, 23, 31, 39]
    white = [16, 17, 24, 25]
    moves = []
    for b, w in zip(black, white, strict=True):
        moves += [b, w]
    wins = {7, 47}
    plain_rules, plain = setup(moves, PruningConfig(window=4), playouts=60)
    assert plain.root_info[0, 0] == BLACK
    assert not wins & set(np.flatnonzero(candidates(plain_rules, plain.root_board[0], BLACK,
                                                     PruningConfig(window=4))).tolist())
    visits = plain.search(deterministic_evaluator(64))[0]
    assert int(np.argmax(visits)) not in wins  # the plain window cannot even see the win
    _, aware = setup(moves, PruningConfig(window=4, threat_aware=True), playouts=60)
    visits = aware.search(deterministic_evaluator(64))[0]
    assert int(np.argmax(visits)) in wins
