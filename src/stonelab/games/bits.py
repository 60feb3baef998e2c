"""Bit tricks on uint64 words for numba kernels (liberty bitsets of `stonelab.games.go.rules`)."""

from __future__ import annotations

from numba.core import types
from numba.extending import intrinsic


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of an integer word (LLVM ctpop: one instruction on x86-64)."""
    if not isinstance(x, types.Integer):
        return None
    sig = x(x)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen
