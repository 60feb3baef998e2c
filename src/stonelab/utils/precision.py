"""The training precision that is fastest where the run is: ``${fast_precision:}`` in a config.

bf16 (Lightning's ``bf16-mixed``: bfloat16 matmuls and convolutions, float32 weights and losses)
paid on the CPU this project first trained on only because it had bfloat16 instructions: 1.91x
the Go net's training update and a quarter more self-play games in the same minutes on 8x8
Gomoku (docs/gomoku_8x8_strength.md, rows C and D). A CPU without them emulates bfloat16 and is
far slower than float32 (14x for the 3x64 Go net's update on an AVX2-only EPYC, 2026-12-06:
``python -m stonelab.bench precision --threads 1 --steps 3``, 1.07 s against 15.4 s), so
the default asks the hardware: ``bf16-mixed`` on a GPU that supports bfloat16
or a CPU with AVX512-BF16 or AMX-BF16, else ``32-true``. ``trainer.precision=32-true`` (or any
Lightning value) overrides it.
"""

from __future__ import annotations

from omegaconf import OmegaConf

RESOLVER = "fast_precision"


def cpu_bf16_flags() -> list[str]:
    """The CPU's bfloat16 instruction sets named in /proc/cpuinfo (Linux; [] elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return []
    return sorted(flag for flag in set(flags) if flag in ("avx512_bf16", "amx_bf16"))


def fast_precision(accelerator: str = "auto") -> str:
    """``bf16-mixed`` where bfloat16 runs natively on the device ``accelerator`` picks, else ``32-true``."""
    if _on_gpu(accelerator):
        import torch

        return "bf16-mixed" if torch.cuda.is_bf16_supported() else "32-true"
    return "bf16-mixed" if cpu_bf16_flags() else "32-true"


def _on_gpu(accelerator: str) -> bool:
    """Whether Lightning's ``accelerator`` puts the run on a GPU here."""
    import torch  # here, not at import: composing a config must not wait for torch

    return accelerator in ("auto", "gpu", "cuda") and torch.cuda.is_available()


def emulated_bf16_warning(precision, accelerator: str = "auto") -> str | None:
    """What to tell a user who asked for bfloat16 where it would run emulated on the CPU
    (None where it is native or not asked for): an explicit ``trainer.precision=bf16-mixed``
    from a command written on another machine silently costs ~10x here."""
    if not str(precision).startswith("bf16") or _on_gpu(accelerator) or cpu_bf16_flags():
        return None
    return (f"trainer.precision={precision} on a CPU without bfloat16 instructions (AVX512-BF16, AMX): "
            f"emulated, about 10x slower than 32-true (14x for a Go net's update on an AVX2 EPYC: python -m stonelab.bench precision); "
            f"leave trainer.precision out to get the fastest one here")


def register_resolver() -> None:
    """Make ``${fast_precision:}`` (or ``${fast_precision:cpu}``) usable in every config."""
    if not OmegaConf.has_resolver(RESOLVER):
        OmegaConf.register_new_resolver(RESOLVER, fast_precision)
