"""An exponential moving average of the weights (``callbacks.weight_average.decay``), on
Lightning's own ``WeightAveraging`` callback.

Why: a run trained in pieces keeps its rate flat between pieces (a restart then costs no
decayed progress), so each piece ends on weights that still jump with the last batches. The
average of the recent weights is the net a decayed rate would have reached, at no extra
training: validation, the held-out test, the best checkpoint and ``python -m
stonelab.models.export`` all see the average, while the optimiser goes on stepping the raw
weights. A checkpoint keeps both (Lightning's layout: ``state_dict`` the average,
``current_model_state`` the raw weights), so ``ckpt_path=...`` resumes both, and
``init_from`` starts the next piece from the average.

``decay`` d keeps a fraction d of the average at each update: its time constant is
1 / (1 - d) updates (0.998: the last ~500). Batch-norm statistics are averaged with the
weights, so the average is usable as it is.
"""

from __future__ import annotations

from lightning.pytorch.callbacks import WeightAveraging
from torch.optim.swa_utils import get_ema_multi_avg_fn

from stonelab.errors import ConfigError


class ExponentialMovingAverage(WeightAveraging):
    """Lightning's ``WeightAveraging`` with an exponential average, updated after every
    optimiser step from ``start_step`` on (the first update copies the weights)."""

    def __init__(self, decay: float, start_step: int = 0):
        super().__init__(multi_avg_fn=get_ema_multi_avg_fn(decay), use_buffers=True)
        self.decay, self.start_step = decay, start_step

    def should_update(self, step_idx: int | None = None, epoch_idx: int | None = None) -> bool:
        return step_idx is not None and step_idx >= self.start_step


def weight_average(decay: float | None = None, start_step: int = 0) -> ExponentialMovingAverage | None:
    """The callback ``callbacks.weight_average`` builds: None (off) when ``decay`` is null."""
    if decay is None:
        return None
    if isinstance(decay, bool) or not isinstance(decay, (int, float)) or not 0.0 < decay < 1.0:
        raise ConfigError(f"callbacks.weight_average.decay={decay!r} must be a number in (0, 1) (0.998: an "
                          "average over the last ~500 updates) or null (off)")
    if isinstance(start_step, bool) or not isinstance(start_step, int) or start_step < 0:
        raise ConfigError(f"callbacks.weight_average.start_step={start_step!r} must be an int >= 0")
    return ExponentialMovingAverage(float(decay), start_step)
