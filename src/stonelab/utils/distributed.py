"""What DDP ranks share: sums after work of unequal length, and per-rank state for the checkpoint.

Sums go over a side gloo group, waited on by polling.

Ranks reach these sums after work that takes each rank its own time (a self-play
round, a share of an evaluation match): the early rank waits, for seconds. Two reasons
not to wait there in a blocking collective of the default process group:

- Lightning 2.6's SIGTERM handler broadcasts on the default group from inside the
  handler (lightning.pytorch.trainer.connectors.signal_connector). A Python signal
  handler runs only between bytecodes of the main thread, so a rank blocked in a
  collective runs it late, after the other ranks' handler broadcasts were paired with
  the collective it waits in: the ranks disagree on what comes next and hang until the
  timeout. On a group of its own the waiting rank's collective is not paired with a
  broadcast, and polling lets its own handler run (and broadcast) while it waits.
- a gloo group on the CPU keeps these few numbers off the GPU with NCCL.
"""

from __future__ import annotations

import time

import torch
import torch.distributed as dist

_side: tuple[object, object] | None = None  # (the default group it was made for, the side group)


def is_distributed(trainer) -> bool:
    """More than one rank, with torch.distributed set up (Lightning's DDP)."""
    return trainer is not None and trainer.world_size > 1 and dist.is_available() and dist.is_initialized()


def sum_over_ranks(trainer, values: list[float]) -> list[float]:
    """Each of ``values`` summed over all ranks (these values themselves with one rank).

    Every rank must call it at the same point of the run with as many values.
    """
    if not is_distributed(trainer):
        return [float(v) for v in values]
    tensor = torch.tensor([float(v) for v in values], dtype=torch.float64)
    _wait(dist.all_reduce(tensor, group=_side_group(trainer), async_op=True))
    return tensor.tolist()


def _side_group(trainer):
    global _side
    world = dist.group.WORLD
    if _side is None or _side[0] is not world:
        # Made by every rank at the same point (the first sum of a fit), as new_group requires;
        # a later fit in the same process with a new default group gets a new one.
        timeout = getattr(trainer.strategy, "_timeout", None)  # trainer.strategy.timeout in conf/trainer/ddp.yaml
        _side = (world, dist.new_group(backend="gloo", timeout=timeout))
    return _side[1]


def _wait(work) -> None:
    """Wait for ``work``, returning to Python between polls so that signal handlers run."""
    pause = 0.00002
    while not work.is_completed():
        time.sleep(pause)
        pause = min(1.5 * pause, 0.05)  # quick when the ranks are in step, 20 polls/s when one is late
    work.wait()  # raises what the collective met (the group's timeout, a rank gone)


def by_rank(trainer, key: str, mine) -> dict:
    """Every rank's ``mine`` for the one checkpoint: ``{key: rank 0's, "other_ranks": [rank 1's, ...]}``.

    Call it from a state_dict hook: Lightning calls those on every rank at each save, in
    step, and writes rank 0's checkpoint only, so the other ranks get ``{}``. With one
    process it is ``{key: mine}``, the state as it always was. The gather runs on the
    default group: Lightning's SLURM SIGUSR1 handler saves a checkpoint from inside the
    handler on every rank, and the default group is where collectives issued in handlers
    pair up with each other.
    """
    gathered = gather_to_rank_zero(trainer, mine)
    if gathered is None:
        return {}
    return {key: gathered[0], "other_ranks": gathered[1:]} if len(gathered) > 1 else {key: mine}


def gather_to_rank_zero(trainer, mine) -> list | None:
    """Every rank's ``mine`` on global rank 0 in rank order, None on the others ([mine] with one rank).

    Every rank must call it at the same point, with the ranks in step (not after work of
    unequal length: that is what `sum_over_ranks` is for).
    """
    if not is_distributed(trainer):
        return [mine]
    gathered = [None] * trainer.world_size if trainer.global_rank == 0 else None
    dist.gather_object(mine, gathered, dst=0)
    return gathered


def share_of(state: dict, key: str, rank: int):
    """This rank's part of a `by_rank` state; None for a rank the checkpoint holds nothing of
    (a run resumed with more ranks than it was saved with)."""
    if rank == 0:
        return state.get(key)
    others = state.get("other_ranks", [])
    return others[rank - 1] if rank - 1 < len(others) else None
