"""The RandomState callback: torch's random generators saved in the checkpoint, restored on resume.

Supervised Go runs read a streaming ``IterableDataset`` (``stonelab.data.kgs.GamePositions``)
whose every pass is shuffled from a number drawn from torch's global generator when the
pass starts. ``src/train.py`` seeds that generator afresh on every start, so without this
callback a resumed run would read the very first batches of the run again. With it, the
draw continues where the saved run left off:

- resumed from an end-of-epoch checkpoint, the run reads exactly the batches an
  uninterrupted run would have read next;
- resumed from a checkpoint written mid-epoch (a ``trainer.max_time`` or
  ``trainer.max_steps`` stop), Lightning finishes that epoch's batch count from a fresh
  pass, shuffled differently from the interrupted one (an ``IterableDataset`` cannot be
  rewound to the position it was at, and the shuffle buffer is not saved).

Either way two resumes of one checkpoint read the same batches.
"""

from __future__ import annotations

import lightning as L
import torch


class RandomState(L.Callback):
    """Save torch's CPU (and CUDA) generator states with each checkpoint; restore them on resume."""

    def state_dict(self) -> dict:
        # Tensors only: torch >= 2.6 loads checkpoints with weights_only=True.
        state = {"torch": torch.get_rng_state()}
        if torch.cuda.is_available():
            state["cuda"] = torch.cuda.get_rng_state_all()
        return state

    def load_state_dict(self, state: dict) -> None:
        if "torch" in state:
            torch.set_rng_state(state["torch"])
        # A checkpoint from a machine with other (or no) GPUs keeps this machine's seeding.
        cuda = state.get("cuda")
        if cuda and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(cuda)
