"""The replay buffer of self-play positions, and the dataset that samples it.

Positions are stored as uint8 planes (they are 0/1), float32 policy targets and
float32 game results, all torch tensors so the buffer goes into a Lightning
checkpoint as it is (torch >= 2.6 loads checkpoints with ``weights_only=True``).
"""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import IterableDataset

from stonelab.errors import StonelabError


class ReplayBufferError(StonelabError):
    """A buffer state that does not fit this buffer (other game or shape)."""


class ReplayBuffer:
    """Ring buffer of ``capacity`` positions: the oldest are overwritten first.

    states_bcnn uint8 [capacity, C, H, W] (``board_shape = (H, W)``, or ``n`` for n x n),
    policies_ba float32 [capacity, A] (A: ``num_actions``, default one per point; Go adds the pass),
    values_b float32 [capacity] (result for the player to move).
    With ``aux_targets`` (Go) also KataGo's auxiliary targets, for the player to move:
    ownership_bn int8 [capacity, H*W], scores_b float32 [capacity] (final margin) and
    aux_weights_b float32 [capacity] (0: no target, a resigned game's position).
    """

    def __init__(self, capacity: int, planes: int, board_shape: int | tuple[int, int],
                 num_actions: int | None = None, aux_targets: bool = False):
        if capacity < 1:
            raise ReplayBufferError(f"data.buffer_size={capacity} must be >= 1")
        height, width = (board_shape, board_shape) if isinstance(board_shape, int) else board_shape
        points = height * width
        self.capacity = capacity
        self.states_bcnn = torch.zeros((capacity, planes, height, width), dtype=torch.uint8)
        self.policies_ba = torch.zeros((capacity, num_actions or points), dtype=torch.float32)
        self.values_b = torch.zeros(capacity, dtype=torch.float32)
        self.aux_targets = aux_targets
        if aux_targets:
            self.ownership_bn = torch.zeros((capacity, points), dtype=torch.int8)
            self.scores_b = torch.zeros(capacity, dtype=torch.float32)
            self.aux_weights_b = torch.zeros(capacity, dtype=torch.float32)
        self.size = 0
        self.next_slot = 0
        self.positions_added = 0  # ever, including overwritten ones
        self.batches_drawn = 0  # seeds the sampling stream, so resume replays it

    def __len__(self) -> int:
        return self.size

    def add(self, states: np.ndarray, policies: np.ndarray, values: np.ndarray,
            aux: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> None:
        """Append ``[P, C, H, W]`` planes, ``[P, A]`` policies and ``[P]`` results, and with
        ``aux_targets`` their (ownership [P, H*W], scores [P], weights [P])."""
        if self.aux_targets != (aux is not None):
            raise ReplayBufferError("this buffer stores ownership and score targets: give them" if self.aux_targets
                                    else "this buffer has no room for ownership and score targets")
        count = len(values)
        columns = [(self.states_bcnn, states, np.uint8), (self.policies_ba, policies, np.float32),
                   (self.values_b, values, np.float32)]
        if aux is not None:
            columns += [(self.ownership_bn, aux[0], np.int8), (self.scores_b, aux[1], np.float32),
                        (self.aux_weights_b, aux[2], np.float32)]
        count = min(count, self.capacity)  # only the newest fit
        slots = (self.next_slot + np.arange(count)) % self.capacity
        idx = torch.from_numpy(slots)
        for store, array, dtype in columns:
            store[idx] = torch.from_numpy(np.ascontiguousarray(array[len(array) - count:], dtype=dtype))
        self.next_slot = int((self.next_slot + count) % self.capacity)
        self.size = min(self.capacity, self.size + count)
        self.positions_added += len(values)

    def sample(self, batch_size: int, rng: np.random.Generator):
        """A uniform minibatch: float32 planes, policies, values."""
        if self.size == 0:
            raise ReplayBufferError("cannot sample an empty replay buffer; play games first")
        replace = self.size < batch_size
        idx = torch.from_numpy(rng.choice(self.size, size=batch_size, replace=replace))
        batch = (self.states_bcnn[idx].float(), self.policies_ba[idx], self.values_b[idx])
        if self.aux_targets:
            batch += (self.ownership_bn[idx].float(), self.scores_b[idx], self.aux_weights_b[idx])
        return batch

    def _columns(self) -> tuple[str, ...]:
        aux = ("ownership_bn", "scores_b", "aux_weights_b") if self.aux_targets else ()
        return ("states_bcnn", "policies_ba", "values_b", *aux)

    def state_dict(self) -> dict:
        return {
            **{name: getattr(self, name)[: self.size].clone() for name in self._columns()},
            "next_slot": self.next_slot,
            "positions_added": self.positions_added,
            "batches_drawn": self.batches_drawn,
        }

    def load_state_dict(self, state: dict) -> None:
        if "by_size" in state:
            raise ReplayBufferError(
                f"checkpoint replay buffer mixes board sizes {list(state['by_size'])}, this run plays one: "
                f"set data.board_sizes as that run did, or continue from its weights with init_from=<checkpoint>")
        states = state["states_bcnn"]
        if (tuple(states.shape[1:]) != tuple(self.states_bcnn.shape[1:])
                or state["policies_ba"].shape[1:] != self.policies_ba.shape[1:]):
            raise ReplayBufferError(
                f"checkpoint replay buffer holds positions of shape {tuple(states.shape[1:])}, "
                f"this run expects {tuple(self.states_bcnn.shape[1:])} (another board size?)")
        size = states.shape[0]
        if size > self.capacity:
            raise ReplayBufferError(
                f"checkpoint replay buffer holds {size} positions, more than "
                f"data.buffer_size={self.capacity}; resume with the same buffer size")
        missing = [name for name in self._columns() if name not in state]
        if missing:
            raise ReplayBufferError(
                f"checkpoint replay buffer has no {', '.join(missing)}: it was saved before Go self-play "
                f"recorded ownership and score targets; continue from its weights with "
                f"init_from=<checkpoint> (a fresh buffer) instead of ckpt_path")
        for name in self._columns():
            getattr(self, name)[:size] = state[name]
        self.size = size
        self.next_slot = int(state["next_slot"])
        self.positions_added = int(state["positions_added"])
        self.batches_drawn = int(state["batches_drawn"])


class MixedSizeReplay:
    """Replay of a run that plays several board sizes (``data.board_sizes``): one
    `ReplayBuffer` per size, ``capacities[size]`` positions each.

    `add` routes positions by their planes' board; `sample` draws each minibatch from one
    size, chosen in proportion to the positions each size holds, so every stored position
    is as likely to be drawn as in one buffer. A minibatch never mixes sizes: padding
    small boards into a big one would put off-board zeros into batch norm's training
    statistics (a masked batch norm, as KataGo has, would be needed).
    """

    def __init__(self, capacities: dict[int, int], planes: int, num_actions: dict[int, int | None],
                 aux_targets: bool = False):
        self.buffers = {size: ReplayBuffer(capacity, planes, size, num_actions[size], aux_targets)
                        for size, capacity in sorted(capacities.items())}
        self.capacity = sum(capacities.values())
        self.batches_drawn = 0

    def __len__(self) -> int:
        return sum(len(buffer) for buffer in self.buffers.values())

    @property
    def positions_added(self) -> int:
        return sum(buffer.positions_added for buffer in self.buffers.values())

    def add(self, states: np.ndarray, policies: np.ndarray, values: np.ndarray,
            aux: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> None:
        """Positions of one board (``states [P, C, n, n]``) into that size's buffer."""
        size = states.shape[-1]
        if size not in self.buffers or states.shape[-2] != size:
            raise ReplayBufferError(f"positions of a {states.shape[-2]}x{size} board, but this buffer "
                                    f"holds the sizes {list(self.buffers)}")
        self.buffers[size].add(states, policies, values, aux)

    def sample(self, batch_size: int, rng: np.random.Generator):
        """A uniform minibatch of one board size (chosen by the positions each holds)."""
        sizes = np.array([len(buffer) for buffer in self.buffers.values()], dtype=np.float64)
        if sizes.sum() == 0:
            raise ReplayBufferError("cannot sample an empty replay buffer; play games first")
        size = list(self.buffers)[int(rng.choice(len(sizes), p=sizes / sizes.sum()))]
        return self.buffers[size].sample(batch_size, rng)

    def state_dict(self) -> dict:
        return {"by_size": {str(size): buffer.state_dict() for size, buffer in self.buffers.items()},
                "batches_drawn": self.batches_drawn}

    def load_state_dict(self, state: dict) -> None:
        mine = [str(size) for size in self.buffers]
        theirs = list(state.get("by_size", {}))
        if "by_size" not in state or sorted(theirs) != sorted(mine):
            held = f"the sizes {[int(s) for s in theirs]}" if "by_size" in state else "one board size"
            raise ReplayBufferError(
                f"checkpoint replay buffer holds {held}, this run plays data.board_sizes="
                f"{[int(s) for s in mine]}: resume with the sizes it was saved with, or continue from "
                f"its weights with init_from=<checkpoint> (a fresh buffer)")
        for size, buffer in self.buffers.items():
            buffer.load_state_dict(state["by_size"][str(size)])
        self.batches_drawn = int(state["batches_drawn"])


class ReplayBatches(IterableDataset):
    """Endless minibatches sampled from a live buffer (use with num_workers=0).

    Workers would fork a snapshot of the buffer and never see new games, so the
    sampling happens in the main process; the stream is seeded by
    (seed, rank, batches drawn so far) and so continues exactly after a resume.
    """

    def __init__(self, buffer: ReplayBuffer, batch_size: int, seed: int, rank: int = 0):
        self.buffer = buffer
        self.batch_size = batch_size
        self.seed = seed
        self.rank = rank

    def __iter__(self):
        while True:
            rng = np.random.default_rng([self.seed, self.rank, self.buffer.batches_drawn])
            self.buffer.batches_drawn += 1
            yield self.buffer.sample(self.batch_size, rng)
