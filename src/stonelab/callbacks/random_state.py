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

import logging
import math

import lightning as L
import torch

log = logging.getLogger(__name__)


class RandomState(L.Callback):
    """Save torch's CPU (and CUDA) generator states with each checkpoint; restore them on resume."""

    def on_train_start(self, trainer, pl_module) -> None:
        # Lightning warns, in words about "resumable" loaders, when a resume starts mid-epoch; the
        # pipeline silences that and this says what it means here, once.
        if trainer.ckpt_path and is_mid_epoch(trainer):
            log.info("resumed mid-epoch: the rest of this epoch's batches come from a fresh pass over the "
                     "games, shuffled from the saved random state (a game stream cannot be rewound to where "
                     "it stopped; two resumes of this checkpoint read the same batches)")

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


def is_mid_epoch(trainer) -> bool:
    """The restored step lies inside an epoch (Lightning's own test for its loader warning)."""
    batches = trainer.num_training_batches
    if batches == float("inf") or not batches:
        return False
    return trainer.global_step % math.ceil(batches / trainer.accumulate_grad_batches) != 0
