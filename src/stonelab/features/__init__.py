"""Go feature encoders: planes of uint8 [C, n, n] from the view of the side to move.

``ENCODERS[name]`` gives an `Encoder` (its id for the jitted kernels, plane count and
layout); an unknown name raises `ConfigError` naming the valid choices. `encode_game`
replays a whole game inside numba and writes every position's planes and move target:
it is the hot path of the SGF data pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from stonelab.errors import ConfigError
from stonelab.features.maddison import MADDISON_PLANES, encode_maddison_into, maddison_scratch
from stonelab.features.simple4 import SIMPLE4_PLANES, encode_simple4_into
from stonelab.games.go.rules import (
    BLACK,
    OK,
    SETUP_INVALID,
    WHITE,
    legal_reason,
    new_arrays,
    play_unchecked,
    set_to_play,
    setup,
    to_play,
)

ENC_MADDISON = 0
ENC_SIMPLE4 = 1


@dataclass(frozen=True)
class Encoder:
    """One feature encoder: ``encoder_id`` selects it inside `encode_game`."""

    name: str
    encoder_id: int
    planes: tuple[tuple[str, int], ...]

    @property
    def num_planes(self) -> int:
        return sum(count for _, count in self.planes)


class _Registry(dict):
    def __missing__(self, name):
        raise ConfigError(
            f"features.encoder={name!r}: unknown encoder; valid choices: {', '.join(sorted(self))}"
        )


ENCODERS = _Registry(
    maddison=Encoder("maddison", ENC_MADDISON, MADDISON_PLANES),
    simple4=Encoder("simple4", ENC_SIMPLE4, SIMPLE4_PLANES),
)


def get_encoder(name: str) -> Encoder:
    return ENCODERS[name]


@njit(cache=True, nogil=True)
def encode_game(n, setup_black, setup_white, moves, first_player, rank_black, rank_white, encoder_id, out, targets):
    """Replay a game and write the planes of the position before every move.

    moves: int [M] points, pass = n*n; colours alternate from ``first_player`` (+1/-1)
    after the setup stones. out: uint8 [M, C, n, n]; targets: int [M] (the move played,
    0..n*n, pass = n*n). rank_black / rank_white: dan rank 1..9, 0 unknown (maddison's
    rank planes). Returns -1 when the whole game is legal, the index of the first illegal
    move (positions before it are written), or ``SETUP_INVALID`` (-2).
    """
    if first_player != BLACK and first_player != WHITE:
        raise ValueError("first_player must be +1 (black) or -1 (white)")
    if encoder_id != ENC_MADDISON and encoder_id != ENC_SIMPLE4:
        raise ValueError("encoder_id must be ENC_MADDISON (0) or ENC_SIMPLE4 (1)")
    st = new_arrays(n, moves.shape[0] + 2)
    if setup(st, setup_black, setup_white) != OK:
        return SETUP_INVALID
    set_to_play(st, first_player)
    scratch = maddison_scratch(n)
    for i in range(moves.shape[0]):
        m = np.int64(moves[i])
        if legal_reason(st, m) != OK:
            return i
        if encoder_id == ENC_MADDISON:
            rank = rank_black if to_play(st) == BLACK else rank_white
            encode_maddison_into(st, rank, out[i], scratch)
        else:
            encode_simple4_into(st, out[i])
        targets[i] = m
        play_unchecked(st, m)
    return -1


def encode_game_arrays(encoder: str, n: int, setup_black, setup_white, moves, first_player: int,
                       rank_black: int = 0, rank_white: int = 0):
    """Python convenience: (planes uint8 [M, C, n, n], targets int16 [M], status)."""
    enc = ENCODERS[encoder]
    moves = np.asarray(moves, dtype=np.int16)
    out = np.zeros((moves.shape[0], enc.num_planes, n, n), dtype=np.uint8)
    targets = np.zeros(moves.shape[0], dtype=np.int16)
    status = encode_game(
        n, np.asarray(setup_black, dtype=np.int16), np.asarray(setup_white, dtype=np.int16), moves,
        first_player, rank_black, rank_white, enc.encoder_id, out, targets,
    )
    return out, targets, int(status)


__all__ = ["ENCODERS", "ENC_MADDISON", "ENC_SIMPLE4", "Encoder", "encode_game", "encode_game_arrays", "get_encoder"]
