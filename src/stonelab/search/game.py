"""What the search needs from a game: a few numba kernels, chosen by the game's type.

The tree kernels (`stonelab.search.tree`, `stonelab.search.pure_mcts`) import no
game module. They take a ``game`` argument, a small namedtuple of the game's
static parameters (Gomoku: board side, line length, candidate knobs), and call
the generic kernels below with it. Each game module registers its own
implementations for its namedtuple class with `register_game`; numba picks the
implementation from the *type* of ``game`` at compile time.

Why this mechanism (measured with numba 0.68 on this machine; a tree-walk loop
calling ``play`` / ``copy`` kernels):

* dispatcher as argument (a namedtuple of the game's jitted functions passed to
  the tree kernels) and a factory of kernels closing over the game's functions
  both run at full speed, but ``cache=True`` never hits: the cache key holds the
  dispatchers, which pickle with a per-process id, so every process recompiled
  every tree kernel (about 1 s each) and wrote a new cache entry each time.
* first-class function objects (explicit signatures) compile the same way and
  missed the cache the same way.
* overloads chosen by the type of ``game`` (this module): run time equal to a
  direct call (0.041 s vs 0.039 s for 200k walks), and the second process loads
  from the cache (0.4 s instead of 3.5 s), because the cache key is the
  namedtuple *class*, which pickles by name. The default test suite keeps its
  warm-cache start-up.

Inlining (pure MCTS, 8x8 connect-5, playouts per CPU second on a loaded
2-core machine, the code before this interface at 215-225k): plain calls
gave ~165k (each call passed the 13-array `Tree` and the spec with reference
counting); numba IR inlining of the per-ply tree kernels and of Gomoku's small
position kernels, plus a spec without arrays, gives 185-207k; inlining these
overloads as well gave ~255k but the cold compile of the batched search then
took minutes of CPU instead of ~20 s, so they stay calls.

The kernels a game registers (``pos`` is one position, a namedtuple of arrays
the game defines; ``positions`` is the same namedtuple with a leading batch axis
on every array):

=================================  ===============================================
``position_at(game, positions, i)`` position ``i`` of a batch, as views (writes go through)
``copy_position(game, src, dst)``  copy ``src`` into ``dst`` (same-shaped positions)
``clone_position(game, pos)``      a new position equal to ``pos`` (allocates)
``play(game, pos, move)``          play a legal ``move`` (``0 <= move < num_actions``) in place
``outcome(game, pos)``             outcome of the last move played, from its mover's view:
                                   ONGOING, MOVER_WINS, DRAW or MOVER_LOSES
``to_play(game, pos)``             +1 / -1
``num_actions(game)``              size of the action space (n*n, or n*n+1 with a pass)
``legal_moves(game, pos, out)``    bool ``out[A]``: the legal moves; returns how many
``candidates(game, pos, priors, out)``  bool ``out[A]``: the moves a node may expand
                                   (legal, possibly restricted by the game's own rules,
                                   never empty while the game is on); returns
                                   (candidates, legal moves)
``encode(game, pos, out)``         network planes ``out[C, H, W]`` float32 from the mover's view
``rollout(game, pos)``             play ``pos`` out at random (``pos`` is overwritten); value
                                   +1 / 0 / -1 for the side to move at ``pos``
=================================  ===============================================

On the Python side a game hands the search a `SearchGame`: the ``spec``
namedtuple passed to the kernels, the action and plane counts, and how to make
batches of start positions.
"""

from __future__ import annotations

from typing import Protocol

from numba import types
from numba.extending import overload

# Outcome of the move just played, from the view of the player who made it.
ONGOING = 0
MOVER_WINS = 1
DRAW = 2
MOVER_LOSES = 3

_IMPLS: dict[tuple[str, type], object] = {}
KERNELS = ("position_at", "copy_position", "clone_position", "play", "outcome", "to_play",
           "num_actions", "legal_moves", "candidates", "encode", "rollout")


class SearchGame(Protocol):
    """A game as the search sees it from Python.

    spec: namedtuple of the game's static parameters; its class was given to
      `register_game`, and it is the ``game`` argument of every kernel.
    num_actions: moves the policy covers (``A``): one per point of the board, one per
      point and a pass (Go, Othello), or any other count (Connect Four: one per column).
    num_planes, board_shape: network input ``[num_planes, height, width]`` with
      ``board_shape = (height, width)``; a rectangle is fine.
    action_shape: the grid the actions lie on, ``(rows, columns)``, for the symmetries of
      the replay buffer: a symmetry moves action ``r * columns + c`` as it moves that point
      of such a grid (the board itself for point moves; Connect Four's ``(1, 7)`` columns);
      actions past ``rows * columns`` (a pass) stay where they are.
    """

    spec: tuple
    num_actions: int
    num_planes: int
    board_shape: tuple[int, int]
    action_shape: tuple[int, int]

    def new_positions(self, count: int):
        """``count`` start positions as one batched position namedtuple."""

    def reset_position(self, positions, i: int) -> None:
        """Position ``i`` of a batch back to the start position."""

    def illegal_reason(self, positions, i: int, move: int) -> str | None:
        """Why ``move`` may not be played in position ``i`` (None: it may)."""

    # Optional: ``root_moves(positions, i) -> bool [A] | None``, the moves the root of
    # position ``i`` may keep (a proof at the root); `BatchedMCTS` asks it once per search.


def register_game(spec_class: type, **kernels) -> None:
    """Make the generic kernels call ``kernels[name]`` for games of type ``spec_class``.

    Every name of `KERNELS` must be given, each a jitted function with the
    signature documented in the module docstring.
    """
    missing = set(KERNELS) - set(kernels)
    unknown = set(kernels) - set(KERNELS)
    if missing or unknown:
        raise TypeError(f"register_game({spec_class.__name__}): missing {sorted(missing)}, "
                        f"unknown {sorted(unknown)}")
    for name, fn in kernels.items():
        _IMPLS[(name, spec_class)] = fn


def _impl(name, game):
    if isinstance(game, types.BaseNamedTuple):
        return _IMPLS.get((name, game.instance_class))
    return None


# --- the generic kernels: stubs, resolved per game type by numba -----------------------------------


def position_at(game, positions, i):
    raise NotImplementedError("numba only")


def copy_position(game, src, dst):
    raise NotImplementedError("numba only")


def clone_position(game, pos):
    raise NotImplementedError("numba only")


def play(game, pos, move):
    raise NotImplementedError("numba only")


def outcome(game, pos):
    raise NotImplementedError("numba only")


def to_play(game, pos):
    raise NotImplementedError("numba only")


def num_actions(game):
    raise NotImplementedError("numba only")


def legal_moves(game, pos, out):
    raise NotImplementedError("numba only")


def candidates(game, pos, priors, out):
    raise NotImplementedError("numba only")


def encode(game, pos, out):
    raise NotImplementedError("numba only")


def rollout(game, pos):
    raise NotImplementedError("numba only")


@overload(position_at)
def _position_at(game, positions, i):
    f = _impl("position_at", game)
    if f is not None:
        return lambda game, positions, i: f(game, positions, i)
    return None


@overload(copy_position)
def _copy_position(game, src, dst):
    f = _impl("copy_position", game)
    if f is not None:
        return lambda game, src, dst: f(game, src, dst)
    return None


@overload(clone_position)
def _clone_position(game, pos):
    f = _impl("clone_position", game)
    if f is not None:
        return lambda game, pos: f(game, pos)
    return None


@overload(play)
def _play(game, pos, move):
    f = _impl("play", game)
    if f is not None:
        return lambda game, pos, move: f(game, pos, move)
    return None


@overload(outcome)
def _outcome(game, pos):
    f = _impl("outcome", game)
    if f is not None:
        return lambda game, pos: f(game, pos)
    return None


@overload(to_play)
def _to_play(game, pos):
    f = _impl("to_play", game)
    if f is not None:
        return lambda game, pos: f(game, pos)
    return None


@overload(num_actions)
def _num_actions(game):
    f = _impl("num_actions", game)
    if f is not None:
        return lambda game: f(game)
    return None


@overload(legal_moves)
def _legal_moves(game, pos, out):
    f = _impl("legal_moves", game)
    if f is not None:
        return lambda game, pos, out: f(game, pos, out)
    return None


@overload(candidates)
def _candidates(game, pos, priors, out):
    f = _impl("candidates", game)
    if f is not None:
        return lambda game, pos, priors, out: f(game, pos, priors, out)
    return None


@overload(encode)
def _encode(game, pos, out):
    f = _impl("encode", game)
    if f is not None:
        return lambda game, pos, out: f(game, pos, out)
    return None


@overload(rollout)
def _rollout(game, pos):
    f = _impl("rollout", game)
    if f is not None:
        return lambda game, pos: f(game, pos)
    return None
