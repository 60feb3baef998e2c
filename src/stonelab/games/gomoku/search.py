"""Gomoku as the search sees it: the `stonelab.search.game` kernels for Gomoku.

A search position is a `GomokuPosition` namedtuple:

  board  int8  [A]  0 empty, +1 black, -1 white (``A = n * n``, points ``row * n + col``)
  info   int32 [3]  TO_PLAY (+1 / -1), LAST_MOVE (-1 before the first), NUM_STONES

and a batch of positions is the same namedtuple with a leading axis (``board
[G, A]``, ``info [G, 3]``). The ``game`` argument of the kernels is a
`GomokuGame` (n, k and the packed `PruningConfig` parameters; `GomokuRuleGame` adds the
rule set for standard and renju); Gomoku has no
pass, so the action space is the ``n * n`` points. A node may expand the
candidate moves of `stonelab.games.gomoku.candidates` (all empty points unless
pruning is configured).

Also the Gomoku-shaped entry points of pure MCTS (`pure_mcts_visits`,
`pure_mcts_move`) and its random playout (`random_rollout`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from stonelab.errors import ConfigError
from stonelab.games.gomoku import candidates as C
from stonelab.games.gomoku import renju
from stonelab.games.gomoku.rules import (
    BLACK,
    DRAW,
    EMPTY,
    FREESTYLE,
    MOVER_WINS,
    NUM_PLANES,
    ONGOING,
    RENJU,
    RULE_NAMES,
    GomokuRules,
    encode,
    legal_mask,
    makes_line,
    outcome_after,
)
from stonelab.games.gomoku.tactics import proven_moves
from stonelab.search import game as search_game
from stonelab.search.pure_mcts import pure_mcts_search

# Gomoku's outcome codes are the search's.
assert (ONGOING, MOVER_WINS, DRAW) == (search_game.ONGOING, search_game.MOVER_WINS, search_game.DRAW)

GomokuGame = namedtuple("GomokuGame", ["n", "k", "pruning"])
GomokuGame.__doc__ = """Freestyle: board side ``n``, line length ``k``, ``pruning``: `PruningConfig.params` as a tuple of ints.

A tuple, not an array: the spec is passed to every kernel call, and a spec of
scalars only costs no reference counting (pure MCTS ran ~10% faster so).
"""
GomokuRuleGame = namedtuple("GomokuRuleGame", ["n", "k", "rule", "pruning"])
GomokuRuleGame.__doc__ = """Standard or renju (``rule``: `rules.RULE_NAMES`'s numbers), the other fields as
`GomokuGame`'s. A type of its own, so that numba compiles freestyle's kernels without a
rule test in them: with one, the tree alone ran ~5% slower on 8x8 (bench mcts --evaluator null)."""
GomokuPosition = namedtuple("GomokuPosition", ["board", "info"])
GomokuPosition.__doc__ = "board int8 [..., n*n], info int32 [..., 3] (TO_PLAY, LAST_MOVE, NUM_STONES)."

# info fields
TO_PLAY, LAST_MOVE, NUM_STONES = 0, 1, 2


@njit(cache=True, nogil=True)
def random_rollout(board, n, k, to_play):
    """Play uniformly random moves to the end; value for ``to_play`` (+1, 0, -1).

    Lines are only looked for once the mover has ``k`` stones on the board.
    """
    empties = np.empty(board.shape[0], dtype=np.int32)
    count = 0
    mine = 0  # stones of the player to move next, then of the other one
    theirs = 0
    for a in range(board.shape[0]):
        if board[a] == 0:
            empties[count] = a
            count += 1
        elif board[a] == to_play:
            mine += 1
        else:
            theirs += 1
    player = to_play
    while count > 0:
        i = np.random.randint(count)
        move = empties[i]
        count -= 1
        empties[i] = empties[count]
        board[move] = player
        mine += 1
        if mine >= k and makes_line(board, n, k, move):
            return 1.0 if player == to_play else -1.0
        player = -player
        mine, theirs = theirs, mine
    return 0.0


# --- the search kernels --------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _position_at(game, positions, i):
    return GomokuPosition(positions.board[i], positions.info[i])


@njit(cache=True, nogil=True, inline="always")
def _copy_position(game, src, dst):
    dst.board[:] = src.board
    dst.info[:] = src.info


@njit(cache=True, nogil=True)
def _clone_position(game, pos):
    return GomokuPosition(pos.board.copy(), pos.info.copy())


@njit(cache=True, nogil=True, inline="always")
def _play(game, pos, move):
    info = pos.info
    pos.board[move] = info[TO_PLAY]
    info[TO_PLAY] = -info[TO_PLAY]
    info[LAST_MOVE] = move
    info[NUM_STONES] += 1


@njit(cache=True, nogil=True, inline="always")
def _outcome(game, pos):
    last = pos.info[LAST_MOVE]
    if last < 0:
        return ONGOING
    return outcome_after(pos.board, game.n, game.k, last, pos.info[NUM_STONES])


@njit(cache=True, nogil=True, inline="always")
def _to_play(game, pos):
    return pos.info[TO_PLAY]


@njit(cache=True, nogil=True, inline="always")
def _num_actions(game):
    return game.n * game.n


@njit(cache=True, nogil=True)
def _legal_moves(game, pos, out):
    return legal_mask(pos.board, out)


@njit(cache=True, nogil=True)
def _candidates(game, pos, priors, out):
    board = pos.board
    count = C.candidate_mask(board, game.n, game.k, pos.info[TO_PLAY], priors, game.pruning, out)
    legal = 0
    for a in range(board.shape[0]):
        if board[a] == EMPTY:
            legal += 1
    if count == 0:  # nothing survived (fallback off): never leave a node without moves
        for a in range(board.shape[0]):
            out[a] = board[a] == EMPTY
        count = legal
    return count, legal


@njit(cache=True, nogil=True)
def _encode(game, pos, out):
    encode(pos.board, game.n, pos.info[TO_PLAY], pos.info[LAST_MOVE], out)


@njit(cache=True, nogil=True)
def _rollout(game, pos):
    return random_rollout(pos.board, game.n, game.k, pos.info[TO_PLAY])


search_game.register_game(
    GomokuGame, position_at=_position_at, copy_position=_copy_position, clone_position=_clone_position,
    play=_play, outcome=_outcome, to_play=_to_play, num_actions=_num_actions, legal_moves=_legal_moves,
    candidates=_candidates, encode=_encode, rollout=_rollout)


# --- standard and renju (`GomokuRuleGame`): the rule's wins, black's forbidden points -----------------


@njit(cache=True, nogil=True, inline="always")
def _outcome_rule(game, pos):
    last = pos.info[LAST_MOVE]
    if last < 0:
        return ONGOING
    return renju.outcome_after(pos.board, game.n, game.k, game.rule, last, pos.info[NUM_STONES])


@njit(cache=True, nogil=True)
def _legal_moves_rule(game, pos, out):
    count = legal_mask(pos.board, out)
    if game.rule == RENJU and pos.info[TO_PLAY] == BLACK:
        count = renju.drop_forbidden(pos.board, game.n, out)
    return count


@njit(cache=True, nogil=True)
def _candidates_rule(game, pos, priors, out):
    # Every legal move: the candidate restriction is freestyle's, refused with other rules.
    count = _legal_moves_rule(game, pos, out)
    if count == 0:  # only forbidden points left (rare): black must play one, and loses by it
        count = legal_mask(pos.board, out)
    return count, count


@njit(cache=True, nogil=True)
def _rollout_rule(game, pos):
    return renju.rule_rollout(pos.board, game.n, game.k, game.rule, pos.info[TO_PLAY])


search_game.register_game(
    GomokuRuleGame, position_at=_position_at, copy_position=_copy_position, clone_position=_clone_position,
    play=_play, outcome=_outcome_rule, to_play=_to_play, num_actions=_num_actions,
    legal_moves=_legal_moves_rule, candidates=_candidates_rule, encode=_encode, rollout=_rollout_rule)


# --- Python side ---------------------------------------------------------------------------------


class GomokuSearch:
    """Gomoku for `stonelab.search` (see `stonelab.search.game.SearchGame`)."""

    num_planes = NUM_PLANES

    def __init__(self, rules: GomokuRules, pruning: C.PruningConfig | None = None):
        self.rules = rules
        self.pruning = (pruning or C.PruningConfig()).for_rule(rules.rule == FREESTYLE).for_board(rules.n)
        self.pruning.validate_for_board(rules.n)
        if rules.rule != FREESTYLE and self.pruning.enabled:
            # The restriction's threats and forced wins are freestyle's (k or more in a row).
            raise ConfigError(f"pruning=... is built on freestyle's threats; game.rule={RULE_NAMES[rules.rule]} "
                              "searches every legal move: use pruning=none")
        params = tuple(int(p) for p in self.pruning.params())
        self.spec = (GomokuGame(rules.n, rules.k, params) if rules.rule == FREESTYLE
                     else GomokuRuleGame(rules.n, rules.k, rules.rule, params))
        self.num_actions = rules.num_actions
        self.board_shape = self.action_shape = (rules.n, rules.n)

    def new_positions(self, count: int) -> GomokuPosition:
        positions = GomokuPosition(np.zeros((count, self.num_actions), dtype=np.int8),
                                   np.zeros((count, 3), dtype=np.int32))
        for i in range(count):
            self.reset_position(positions, i)
        return positions

    def reset_position(self, positions: GomokuPosition, i: int) -> None:
        positions.board[i] = EMPTY
        positions.info[i] = (1, -1, 0)

    def illegal_reason(self, positions: GomokuPosition, i: int, move: int) -> str | None:
        if not 0 <= move < self.num_actions:
            return f"point {move} is off the board"
        if positions.board[i, move] != EMPTY:
            return f"point {move} is occupied"
        if (self.rules.rule == RENJU and positions.info[i, TO_PLAY] == BLACK
                and renju.forbidden(positions.board[i], self.rules.n, move, 0)):
            return f"point {move} is forbidden to black (renju: an overline, a double four or a double three)"
        return None

    def root_moves(self, positions: GomokuPosition, i: int) -> np.ndarray | None:
        """The moves the root of position ``i`` may keep (`BatchedMCTS`), or None for all: those
        the exact proof search of ``pruning.root_proof`` plies allows and, with
        ``pruning.vcf=root``, those the search for fours allows (`C.root_vcf_moves`), and with
        ``pruning.vct``, those the search for threats allows (`C.root_vct_moves`); each narrows
        the set before it when some move is in both, else leaves it (`_narrowed`)."""
        if self.rules.rule != FREESTYLE:
            return None
        board, n, k = positions.board[i], self.rules.n, self.rules.k
        to_play, allowed = int(positions.info[i, TO_PLAY]), None
        if self.pruning.root_proof:
            proven = np.zeros(self.num_actions, dtype=np.bool_)
            count, _ = proven_moves(board.copy(), n, k, to_play, self.pruning.root_proof, proven)
            allowed = proven if count < np.count_nonzero(board == EMPTY) else None
        if self.pruning.vcf == "root":
            allowed = _narrowed(allowed, C.root_vcf_moves(board, n, k, to_play, self.pruning.vcf_fours))
        if self.pruning.vct:
            allowed = _narrowed(allowed, C.root_vct_moves(board, n, k, to_play, self.pruning.vct,
                                                          self.pruning.vcf_fours))
        return allowed

    def position(self, board: np.ndarray, to_play: int, last_move: int) -> GomokuPosition:
        """One search position from a board, the colour to move and the last move."""
        board = np.ascontiguousarray(board, dtype=np.int8).reshape(self.num_actions).copy()
        info = np.array([to_play, last_move, np.count_nonzero(board)], dtype=np.int32)
        return GomokuPosition(board, info)


def _narrowed(allowed: np.ndarray | None, by: np.ndarray | None) -> np.ndarray | None:
    """``allowed`` narrowed by a later search's moves ``by`` (either None: no restriction): both
    when some move is in both, else ``allowed`` (the earlier search's, e.g. a win in a few plies
    that the later one does not see)."""
    if allowed is None:
        return by
    if by is not None and np.any(allowed & by):
        return allowed & by
    return allowed


def pure_mcts_visits(board, n, k, to_play, last_move, stones, playouts, c_puct, seed,
                     rule: int = FREESTYLE) -> np.ndarray:
    """Visit counts ``[A]`` of a fresh pure-MCTS search from the given position."""
    game = (GomokuGame(int(n), int(k), (0,) * C.NUM_PARAMS) if rule == FREESTYLE
            else GomokuRuleGame(int(n), int(k), int(rule), (0,) * C.NUM_PARAMS))
    root = GomokuPosition(np.ascontiguousarray(board, dtype=np.int8).copy(),
                          np.array([to_play, last_move, stones], dtype=np.int32))
    return pure_mcts_search(game, root, int(playouts), float(c_puct), int(seed))


def pure_mcts_move(rules: GomokuRules, board: np.ndarray, to_play: int, last_move: int,
                   *, playouts: int, c_puct: float = 5.0, seed: int = -1) -> int:
    """The most visited move of a pure-MCTS search (ties: lowest index).

    With a single playout no move has been visited yet (it only expands the root):
    the move is then uniformly random among the empty points, seeded by ``seed``.
    """
    stones = int(np.count_nonzero(board))
    visits = pure_mcts_visits(board, rules.n, rules.k, to_play, last_move, stones,
                              playouts, c_puct, seed, rules.rule)
    if visits.max() <= 0:
        return int(np.random.default_rng(max(seed, 0)).choice(np.flatnonzero(board == 0)))
    return int(np.argmax(visits))
