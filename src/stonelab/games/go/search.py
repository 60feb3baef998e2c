"""Go as the search sees it: `stonelab.search.game` kernels over `stonelab.games.go.rules`.

An adapter only: the rules stay in `stonelab.games.go.rules`, whose kernels take its
named position arrays `GoArrays` (``board``, ``group_head``, ..., ``info``,
``position_hashes``, ``neighbours``). A search position is that namedtuple; a
batch of positions has a leading axis on every field (``board int8 [G, N]``,
``group_liberty_bits uint64 [G, N, W]``, ...).

Actions are the ``N = n * n`` points and the pass ``N`` (``A = N + 1``). A game
ends after two passes in a row or after ``max_moves`` moves (passes included),
and is then scored by Tromp-Taylor area with komi; the outcome is reported
from the view of the player who made the last move (MOVER_WINS, MOVER_LOSES
or DRAW). The move cap bounds random playouts and tree depth.

Network planes (`GO_PLANES`, from the mover's view; the input of AlphaZero
on Go): own and opponent stones, the last two moves, the point simple ko
forbids the mover, own and opponent stones in atari, all ones when black is to
move, all ones when komi favours the mover, and all ones on the board (the
convolutions' zero padding then marks the edge). A search position carries no
board history, so the planes give what AlphaGo Zero's past positions give a
net for ko and fights: where the last stones went and which point is banned.

Candidates are all legal moves, or with ``fill_own_eyes=False`` (self-play) all
but the points whose on-board neighbours are all the mover's own stones (unless one of
those chains is in atari: then the point is a false eye, and filling it saves the chain):
then games end by passing, never by a side filling its own eyes. The pass is no candidate
while points are still to be played for (`stonelab.games.go.ownership.may_pass`: a
neutral point, an opponent area big enough to invade, a chain in atari to save), so no search passes on an open board or
leaves dead stones standing that area scoring would count. The random playout
keeps the same eye rule (so playouts end), ignores positional superko (simple
ko holds), and passes when no other move is left.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import replace

import numpy as np
from numba import njit

from stonelab.errors import ConfigError
from stonelab.games.go import rules as go
from stonelab.games.go.ownership import may_pass
from stonelab.games.go.rules import BLACK, EMPTY, I_MOVE, I_OVER, I_SUPERKO, I_TO_PLAY, OK, GoRules
from stonelab.search import game as search_game
from stonelab.search.game import DRAW, MOVER_LOSES, MOVER_WINS, ONGOING

GoGame = namedtuple("GoGame", ["n", "komi", "max_moves", "fill_own_eyes"])
GoGame.__doc__ = ("Board side ``n``, ``komi`` (float), ``max_moves``: the game is scored after that many moves; "
                  "``fill_own_eyes`` (bool): whether a move may fill a single-point eye of its own.")
# A search position is `stonelab.games.go.rules`'s own named arrays: the rules kernels read them by name.
GoPosition = go.GoArrays

GO_PLANES = ("own_stones", "opponent_stones", "last_move", "move_before_last", "ko_point",
             "own_in_atari", "opponent_in_atari", "black_to_move", "komi_for_mover", "on_board")
NUM_PLANES = len(GO_PLANES)


@njit(cache=True, nogil=True)
def go_position_at(positions, i):
    """Position ``i`` of a batch of Go search positions, as views (writes go through)."""
    p = positions
    return GoPosition(p.board[i], p.group_head[i], p.group_next[i], p.group_size[i], p.group_liberty_count[i],
                      p.group_liberty_bits[i], p.placed_move[i], p.info[i], p.position_hashes[i], p.neighbours[i])


@njit(cache=True, nogil=True)
def _position_at(game, positions, i):
    return go_position_at(positions, i)


@njit(cache=True, nogil=True)
def _copy_position(game, src, dst):
    dst.board[:] = src.board
    dst.group_head[:] = src.group_head
    dst.group_next[:] = src.group_next
    dst.group_size[:] = src.group_size
    dst.group_liberty_count[:] = src.group_liberty_count
    dst.group_liberty_bits[:] = src.group_liberty_bits
    dst.placed_move[:] = src.placed_move
    dst.info[:] = src.info
    dst.position_hashes[:] = src.position_hashes
    # nbr is never written and the same for every position of one board size


@njit(cache=True, nogil=True)
def _clone_position(game, pos):
    return GoPosition(pos.board.copy(), pos.group_head.copy(), pos.group_next.copy(), pos.group_size.copy(), pos.group_liberty_count.copy(),
                      pos.group_liberty_bits.copy(), pos.placed_move.copy(), pos.info.copy(), pos.position_hashes.copy(), pos.neighbours)


@njit(cache=True, nogil=True)
def _play(game, pos, move):
    go.play_unchecked(pos, move)


@njit(cache=True, nogil=True)
def _finished(game, pos):
    return pos.info[I_OVER] != 0 or pos.info[I_MOVE] >= game.max_moves


@njit(cache=True, nogil=True)
def _outcome(game, pos):
    if not _finished(game, pos):
        return ONGOING
    score = go.area_score(pos, game.komi) * -pos.info[I_TO_PLAY]  # for the player who just moved
    if score > 0:
        return MOVER_WINS
    if score < 0:
        return MOVER_LOSES
    return DRAW


@njit(cache=True, nogil=True)
def _to_play(game, pos):
    return pos.info[I_TO_PLAY]


@njit(cache=True, nogil=True)
def _num_actions(game):
    return game.n * game.n + 1


@njit(cache=True, nogil=True)
def _legal_moves(game, pos, out):
    go.legal_mask(pos, out)
    count = 0
    for m in range(out.shape[0]):
        if out[m]:
            count += 1
    return count


@njit(cache=True, nogil=True)
def _candidates(game, pos, priors, out):
    legal = _legal_moves(game, pos, out)
    count = legal
    if not game.fill_own_eyes:
        colour = pos.info[I_TO_PLAY]
        for p in range(game.n * game.n):
            if out[p] and _own_eye(pos, p, colour) and not _joins_chain_in_atari(pos, p):
                out[p] = False
                count -= 1
    pass_move = game.n * game.n
    if count > 1 and out[pass_move] and not may_pass(pos):
        out[pass_move] = False  # points are still to be played for: passing would give them away
        count -= 1
    return count, legal  # never empty: pass is left when nothing else is


@njit(cache=True, nogil=True)
def _encode(game, pos, out):
    n = game.n
    to_play = pos.info[I_TO_PLAY]
    moves_played = pos.info[I_MOVE]
    ko = go.ko_point(pos)
    black_plane = 1.0 if to_play == BLACK else 0.0
    # komi counts for white: it favours the mover when white moves with komi > 0 (or black with komi < 0)
    komi_plane = 1.0 if game.komi * -to_play > 0 else 0.0
    for a in range(n * n):
        r = a // n
        c = a % n
        s = pos.board[a]
        age = moves_played - pos.placed_move[a] if s != EMPTY else -1  # 1: the last move's stone
        in_atari = s != EMPTY and pos.group_liberty_count[pos.group_head[a]] == 1
        out[0, r, c] = 1.0 if s == to_play else 0.0
        out[1, r, c] = 1.0 if s == -to_play else 0.0
        out[2, r, c] = 1.0 if age == 1 else 0.0
        out[3, r, c] = 1.0 if age == 2 else 0.0
        out[4, r, c] = 1.0 if a == ko else 0.0
        out[5, r, c] = 1.0 if in_atari and s == to_play else 0.0
        out[6, r, c] = 1.0 if in_atari and s == -to_play else 0.0
        out[7, r, c] = black_plane
        out[8, r, c] = komi_plane
        out[9, r, c] = 1.0


@njit(cache=True, nogil=True)
def _own_eye(pos, p, colour):
    """Whether every on-board neighbour of the empty point ``p`` is ``colour``'s stone."""
    for k in range(4):
        q = pos.neighbours[p, k]
        if q < 0:
            break
        if pos.board[q] != colour:
            return False
    return True


@njit(cache=True, nogil=True)
def _joins_chain_in_atari(pos, p):
    """Whether a neighbouring chain of the empty point ``p`` has ``p`` as its last liberty: then
    ``p`` is a false eye, and filling it is what saves that chain."""
    for k in range(4):
        q = pos.neighbours[p, k]
        if q < 0:
            break
        if pos.board[q] != EMPTY and pos.group_liberty_count[pos.group_head[q]] == 1:
            return True
    return False


@njit(cache=True, nogil=True)
def _rollout(game, pos):
    # Playouts ignore positional superko, as light playouts do: its check scans every earlier
    # position of the game at every candidate move. Simple ko still holds.
    go.set_superko(pos, False)
    start = pos.info[I_TO_PLAY]
    n_points = pos.board.shape[0]
    empties = np.empty(n_points, dtype=np.int32)
    while not _finished(game, pos):
        colour = pos.info[I_TO_PLAY]
        count = 0
        for p in range(n_points):
            if pos.board[p] == EMPTY:
                empties[count] = p
                count += 1
        move = n_points  # pass unless a move is found
        while count > 0:
            i = np.random.randint(count)
            p = empties[i]
            count -= 1
            empties[i] = empties[count]
            if not _own_eye(pos, p, colour) and go.legal_reason(pos, p) == OK:
                move = p
                break
        go.play_unchecked(pos, move)
    score = go.area_score(pos, game.komi) * start
    if score > 0:
        return 1.0
    if score < 0:
        return -1.0
    return 0.0


search_game.register_game(
    GoGame, position_at=_position_at, copy_position=_copy_position, clone_position=_clone_position,
    play=_play, outcome=_outcome, to_play=_to_play, num_actions=_num_actions, legal_moves=_legal_moves,
    candidates=_candidates, encode=_encode, rollout=_rollout)


class GoSearch:
    """Go for `stonelab.search` (see `stonelab.search.game.SearchGame`).

    Pass it where the search takes ``rules`` (`BatchedMCTS`, `SelfPlaySlots`):
    ``BatchedMCTS(GoSearch(GoRules(9)), games, config)``.
    """

    num_planes = NUM_PLANES

    def __init__(self, rules: GoRules, settings=None, max_moves: int | None = None, *, fill_own_eyes: bool = True):
        # the tree takes no settings of Go's (`GoSettings` are its evaluators'); Gomoku's candidate
        # restriction is refused, not ignored
        if settings is not None and getattr(settings, "enabled", False):
            raise ConfigError("candidate pruning is Gomoku's; Go searches all legal moves")
        self.rules = rules
        self.board_shape = self.action_shape = (rules.n, rules.n)
        self.num_actions = rules.num_actions
        self.max_moves = int(max_moves or 2 * rules.num_points)
        self.fill_own_eyes = bool(fill_own_eyes)
        self.spec = GoGame(rules.n, float(rules.komi), self.max_moves, self.fill_own_eyes)

    def set_komi(self, komi: float) -> None:
        """Count games with ``komi`` from now on (a GTP ``komi`` command): the playouts'
        scores and the net's komi input both read it."""
        self.rules = replace(self.rules, komi=float(komi))
        self.spec = self.spec._replace(komi=float(komi))

    def new_positions(self, count: int) -> GoPosition:
        one = go.new_arrays(self.rules.n, self.max_moves + 2)
        positions = GoPosition(*(np.repeat(field[None], count, axis=0) for field in one))
        for i in range(count):
            self.reset_position(positions, i)
        return positions

    def reset_position(self, positions: GoPosition, i: int) -> None:
        one = go.new_arrays(self.rules.n, self.max_moves + 2)
        one.info[I_SUPERKO] = 1 if self.rules.superko else 0
        for field, value in zip(positions, one, strict=True):
            field[i] = value

    def illegal_reason(self, positions: GoPosition, i: int, move: int) -> str | None:
        pos = GoPosition(*(field[i] for field in positions))
        reason = go.legal_reason(pos, int(move))
        return None if reason == OK else f"move {move} is illegal ({go.REASONS[reason]})"

    def final_ownership(self, positions: GoPosition, i: int) -> tuple[np.ndarray, float]:
        """Position ``i`` scored as the game ends: its Tromp-Taylor owner of every point
        (int8 [N], +1 black, -1 white, 0 neutral) and the area margin black - white - komi.
        Self-play's ownership and score targets (`SelfPlaySlots`)."""
        owner = np.empty(self.rules.num_points, dtype=np.int8)
        go.tromp_taylor_owner(positions.board[i], positions.neighbours[i], owner)
        return owner, float(owner.sum(dtype=np.int64)) - float(self.rules.komi)

    def position(self, state: go.GoState) -> GoPosition:
        """A search position from a `GoState` (its hash history is kept up to the move cap)."""
        one = go.new_arrays(self.rules.n, self.max_moves + 2)
        arrays = list(go.copy_arrays(state.arrays))
        hashes = one.position_hashes
        used = min(len(state.arrays.position_hashes), len(hashes))
        hashes[:used] = state.arrays.position_hashes[:used]
        return GoPosition(*arrays)._replace(position_hashes=hashes)
