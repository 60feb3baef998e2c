"""StopOnSignal: SIGTERM or SIGINT ends a run within seconds, with a last.ckpt that resumes it.

Schedulers ask a job to leave with SIGTERM (SLURM at the time limit or before
preemption, Kubernetes before it evicts a pod, torchrun when it shuts its workers
down) and kill it some seconds later (SLURM's KillWait and Kubernetes'
terminationGracePeriodSeconds are 30 s by default). Ctrl-C sends SIGINT.

Built on Lightning 2.6, not against it: Lightning's SIGTERM handler sets
``trainer.received_sigterm`` (and under SLURM auto-requeue its SIGUSR1 handler saves
an hpc checkpoint and requeues the job); its loops then raise SIGTERMException after
the batch in hand, without a checkpoint. This callback leaves Lightning's handlers as
they are and reads the same flag. For SIGINT it installs a handler of its own (Lightning
has none: Ctrl-C raised KeyboardInterrupt wherever the run was, even half-way through
an update); a second Ctrl-C interrupts at once, without a checkpoint.

Long work polls the flag through `stop_signal`: a self-play round and an evaluation
match check it before every batched search step and are abandoned when it is set.
At the safe points (after the first buffer fill, before and after every update) all
ranks agree, and any rank's signal stops them all at that point, so no rank is left
alone in a collective. last.ckpt is then written and StoppedBySignal ends the fit.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable

import lightning as L
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.utilities.exceptions import SIGTERMException

from stonelab.utils.distributed import sum_over_ranks

log = logging.getLogger(__name__)

SIGNALS = ("SIGTERM", "SIGINT")  # the order of the votes in `_agree`


class StopRequested(Exception):
    """A stop signal arrived: the round or match in hand is abandoned (and played again after a resume)."""


class StoppedBySignal(SystemExit):
    """The run stopped cleanly on a signal; last.ckpt resumes it.

    The exit status is 128 + the signal's number on global rank 0 (143 for SIGTERM, 130
    for SIGINT), as for a process the signal ended, because the job did not finish:
    ``train && evaluate`` does not go on, a Kubernetes Job retries the pod instead of
    counting it complete (exit 0 would complete it), SLURM shows the signal. The other
    ranks exit 0: Lightning's own launcher kills every process as soon as a child exits
    with another status, which would cut rank 0's result.json short.
    """

    def __init__(self, signal_name: str, rank: int, *, agreed: bool = True):
        super().__init__(128 + int(signal.Signals[signal_name]) if rank == 0 else 0)
        self.signal_name = signal_name
        self.agreed = agreed  # False: Lightning raised it on this rank alone, between safe points


def stop_signal(trainer) -> str | None:
    """The stop signal this process received ("SIGTERM", "SIGINT"), None if none.

    Cheap and local (no collective): long loops call it before every search step.
    """
    for cb in trainer.callbacks:
        if isinstance(cb, StopOnSignal):
            return cb.requested(trainer)
    return "SIGTERM" if trainer.received_sigterm else None


def stop_checking(evaluate: Callable, stop: Callable[[], object]) -> Callable:
    """The batched evaluator ``evaluate``, raising StopRequested first once ``stop()`` is true.

    Search calls it once per batched step (milliseconds apart), so a round of many
    games searched in lockstep ends within one step of the signal.
    """

    def evaluate_unless_stopped(planes):
        if stop():
            raise StopRequested
        return evaluate(planes)

    return evaluate_unless_stopped


def finish_the_batch(trainer) -> None:
    """What Lightning does after ``on_train_batch_end`` (lightning 2.6's
    ``_TrainingEpochLoop.advance`` and ``on_advance_end``, validation left out), done before
    stopping there: otherwise the update in hand never reaches the loggers, and the
    checkpoint's step-wise learning-rate schedule and logging counter stay one update behind
    its weights (a resumed run's rows then carry the step before theirs)."""
    loop = trainer.fit_loop.epoch_loop
    trainer._logger_connector.on_batch_end()
    loop.batch_progress.increment_completed()
    trainer._logger_connector.update_train_step_metrics()
    loop.update_lr_schedulers("step", update_plateau_schedulers=True)
    if not loop._should_accumulate():
        loop._batches_that_stepped += 1
    loop._save_loggers_on_train_batch_end()


class StopOnSignal(L.Callback):
    """At each safe point, stop all ranks if any received SIGTERM or SIGINT; write ``dirpath``/last.ckpt first."""

    def __init__(self, dirpath: str | None = None):
        self.dirpath = dirpath  # None: the ModelCheckpoint's folder
        self.sigint = False
        self.signal: str | None = None  # what the run stopped on
        self.checkpoint: str | None = None  # the last.ckpt written on stopping
        self._previous_sigint = None
        self._pid = os.getpid()

    # -- the SIGINT handler, only while fitting (SIGTERM's belongs to Lightning)

    def setup(self, trainer, pl_module, stage: str) -> None:
        if stage == "fit" and threading.current_thread() is threading.main_thread():
            self.sigint = False
            self._pid = os.getpid()
            self._previous_sigint = signal.signal(signal.SIGINT, self._on_sigint)

    def teardown(self, trainer, pl_module, stage: str) -> None:
        self._restore_sigint()

    def _on_sigint(self, signum, frame) -> None:
        if os.getpid() != self._pid:
            # A DataLoader worker forked with this handler: Ctrl-C reaches the whole process
            # group, and the worker must live on to serve batches until the safe point.
            return
        if self.sigint:  # a second Ctrl-C: the person wants out now
            self._restore_sigint()
            raise KeyboardInterrupt
        self.sigint = True
        log.warning("SIGINT: stopping at the next safe point, with last.ckpt written (Ctrl-C again: stop at once)")

    def _restore_sigint(self) -> None:
        if self._previous_sigint is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._previous_sigint)
        self._previous_sigint = None

    def requested(self, trainer) -> str | None:
        """This rank's stop signal, if any (SIGTERM wins: the scheduler's kill follows it)."""
        if trainer.received_sigterm:
            return "SIGTERM"
        return "SIGINT" if self.sigint else None

    # -- the safe points: between rounds, updates and matches, never inside one

    def on_train_start(self, trainer, pl_module) -> None:
        self._stop_if_signalled(trainer)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        self._stop_if_signalled(trainer)  # after the round (pipeline.build puts this callback last)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        self._stop_if_signalled(trainer, batch_in_hand=True)  # before Lightning's own SIGTERM check ends the batch

    def _stop_if_signalled(self, trainer, batch_in_hand: bool = False) -> None:
        received = self._agree(trainer)
        if received is None:
            return
        if batch_in_hand:
            finish_the_batch(trainer)
        self.signal = received
        self.checkpoint = self._save(trainer)
        raise StoppedBySignal(received, trainer.global_rank)

    def _agree(self, trainer) -> str | None:
        """The signal any rank received (SIGTERM first), the same answer on every rank."""
        mine = self.requested(trainer)
        votes = sum_over_ranks(trainer, [mine == name for name in SIGNALS])
        return next((name for name, count in zip(SIGNALS, votes, strict=True) if count), None)

    def _save(self, trainer) -> str:
        folder = self.dirpath or getattr(trainer.checkpoint_callback, "dirpath", None) \
            or os.path.join(trainer.default_root_dir, "checkpoints")
        path = os.path.join(folder, "last.ckpt")
        for cb in trainer.checkpoint_callbacks:
            if isinstance(cb, ModelCheckpoint) and cb.save_last and cb.dirpath \
                    and os.path.abspath(cb.dirpath) == os.path.abspath(folder):
                # Its own last.ckpt from now on (saved in this checkpoint's state): the resumed
                # run overwrites it, where a stranger's file would make it write last-v1.ckpt.
                cb.last_model_path = path
        trainer.save_checkpoint(path)  # every rank takes part; rank 0 writes (atomically)
        return path

    def on_exception(self, trainer, pl_module, exception: BaseException) -> None:
        self._restore_sigint()
        if isinstance(exception, SIGTERMException) and self.signal is None:
            # Lightning raised it after the batch in hand: SIGTERM came between two safe points.
            self.signal = "SIGTERM"
            if trainer.world_size == 1:  # with one process every state Lightning raises in is whole
                self.checkpoint = self._save(trainer)

    def result_fields(self, trainer) -> dict:
        """This callback's part of result.json: the checkpoint written on stopping."""
        return {"last_checkpoint": self.checkpoint} if self.checkpoint else {}
