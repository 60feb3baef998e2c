"""The latest held-out test of a supervised run, kept in its checkpoints and its result.json.

A run in pieces (``ckpt_path=...``) tests its held-out games only when a piece ends by its
budget; a piece stopped by SIGTERM or Ctrl-C does not test, and its result.json used to hold
no held-out numbers at all. `HeldOutRecord` keeps the latest test's metrics (and which
checkpoint they scored) in every checkpoint written after it, so every piece's result.json
reports them (``held_out``) beside what that piece measured itself.

`refresh_after_test` writes that record, and the job clock that now includes the test's
seconds, into the run's last.ckpt: a resume from it counts the earlier test in the run's time.
"""

from __future__ import annotations

import os

import lightning as L
import torch

from stonelab.callbacks.wall_clock import JobClock


class HeldOutRecord(L.Callback):
    def __init__(self):
        self.record: dict | None = None  # {"checkpoint": file name, "metrics": {"test/top1": ...}}
        self._stage: str | None = None

    def setup(self, trainer, pl_module, stage: str) -> None:
        self._stage = stage  # set before Lightning restores a checkpoint's states

    def on_test_end(self, trainer, pl_module) -> None:
        metrics = {k: float(v) for k, v in trainer.callback_metrics.items()
                   if k.startswith("test/") and v.numel() == 1}
        if metrics:
            tested = trainer.ckpt_path or (trainer.checkpoint_callback.last_model_path if trainer.checkpoint_callback
                                           else None)
            self.record = {"checkpoint": os.path.basename(tested) if tested else None, "metrics": metrics}

    def state_dict(self) -> dict:
        return dict(self.record) if self.record else {}

    def load_state_dict(self, state: dict) -> None:
        # Only a resume takes the record: the test restores the best checkpoint, whose record is older.
        if self._stage in (None, "fit") and state.get("metrics"):
            self.record = {"checkpoint": state.get("checkpoint"), "metrics": dict(state["metrics"])}

    def result_fields(self, trainer) -> dict:
        return {"held_out": self.record} if self.record else {}


def refresh_after_test(last_path: str | None, callbacks, checkpoint_io) -> None:
    """Rewrite the job clocks and the held-out record in ``last_path`` (the weights untouched)."""
    if not last_path or not os.path.isfile(last_path):
        return
    refreshed = [cb for cb in callbacks if isinstance(cb, JobClock | HeldOutRecord)]
    if not refreshed:
        return
    checkpoint = torch.load(last_path, map_location="cpu", weights_only=True)
    states = checkpoint.setdefault("callbacks", {})
    for cb in refreshed:
        states[cb.state_key] = cb.state_dict()
    checkpoint_io.save_checkpoint(checkpoint, last_path)
