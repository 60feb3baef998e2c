"""SIGTERM and SIGINT stop a run within seconds, mid-round if need be, with a last.ckpt that resumes it.

The two subprocess tests signal src/train.py from outside, as SLURM, Kubernetes or a
terminal do; the in-process ones signal from inside a round, a match or a Go epoch, at
a chosen search step, so what they check does not depend on timing.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from stonelab.callbacks.stop import StopOnSignal, StoppedBySignal
from stonelab.pipeline import train

# Rounds of 8 games x 200 playouts: 2-4 s each here, so a signal 0.5 s into one lands inside it.
LONG_ROUNDS = ["search.playouts=200", "callbacks.selfplay.games_per_round=8", "torch_threads=1", "logger=none"]


class _Train:
    """src/train.py in a subprocess, its output read line by line as it comes."""

    def __init__(self, repo_root: Path, args: list[str], cwd: Path, *, own_group: bool = False):
        self.proc = subprocess.Popen([sys.executable, str(repo_root / "src" / "train.py"), *args], cwd=cwd,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     process_group=0 if own_group else None)
        self.lines: queue.Queue = queue.Queue()
        self.text = ""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, words: str, timeout: float) -> float:
        """The time (time.monotonic) a line with ``words`` came out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                raise AssertionError(f"the run ended before {words!r}:\n{self.text[-4000:]}")
            self.text += line
            if words in line:
                return time.monotonic()
        self.proc.kill()
        raise AssertionError(f"no {words!r} within {timeout} s:\n{self.text[-4000:]}")

    def finish(self, timeout: float) -> int:
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        while (line := self.lines.get(timeout=5)) is not None:
            self.text += line
        return rc


def _checkpoint(path: Path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=True)


def test_sigterm_in_a_self_play_round_stops_within_seconds_and_the_run_resumes(tmp_path, repo_root,
                                                                               tiny_overrides):
    run = tmp_path / "run"
    first = _Train(repo_root, [*tiny_overrides, *LONG_ROUNDS, f"hydra.run.dir={run}"], tmp_path)
    first.wait_for("] round 2 |", timeout=300)  # logged after update 1; round 3 has begun
    time.sleep(0.5)
    sent = time.monotonic()
    first.proc.send_signal(signal.SIGTERM)
    stopped = first.wait_for("stopped by SIGTERM", timeout=60)
    rc = first.finish(timeout=60)
    exited = time.monotonic()
    assert rc == 128 + signal.SIGTERM, first.text[-3000:]
    assert "self-play round 3 cut short" in first.text
    assert stopped - sent < 5  # within a search step of the signal
    assert exited - sent < 20  # and the interpreter's teardown (2-6 s measured on a loaded 2-core machine)
    last = run / "checkpoints" / "last.ckpt"
    counters = _checkpoint(last)["stonelab"]
    assert (counters["rounds"], counters["train_steps"]) == (2, 1)  # the cut round is not counted
    result = json.loads((run / "result.json").read_text())
    assert result["stopped_by_signal"] == "SIGTERM" and result["last_checkpoint"] == str(last)

    # The resume (with a quicker search) plays round 3 again and makes the epoch's second update.
    again = subprocess.run([sys.executable, str(repo_root / "src" / "train.py"), f"ckpt_path={last}",
                            "search.playouts=12"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    result = json.loads((run / "result.json").read_text())
    assert (result["rounds"], result["train_steps"], result["stopped_by_signal"]) == (3, 2, None)
    assert not list((run / "checkpoints").glob("last-v*.ckpt"))  # last.ckpt went on being the last


def test_ctrl_c_in_a_terminal_stops_at_the_next_safe_point_with_status_130(tmp_path, repo_root, tiny_overrides):
    run = tmp_path / "run"
    proc = _Train(repo_root, [*tiny_overrides, *LONG_ROUNDS, f"hydra.run.dir={run}"], tmp_path, own_group=True)
    proc.wait_for("] round 1 |", timeout=300)  # the buffer is filled; round 2 has begun
    time.sleep(0.5)
    os.killpg(proc.proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole process group
    assert proc.finish(timeout=60) == 128 + signal.SIGINT, proc.text[-3000:]
    assert "self-play round 2 cut short" in proc.text
    counters = _checkpoint(run / "checkpoints" / "last.ckpt")["stonelab"]
    assert (counters["rounds"], counters["train_steps"]) == (1, 0)
    assert json.loads((run / "result.json").read_text())["stopped_by_signal"] == "SIGINT"


def _signal_in_round(monkeypatch, signum: int, round_number: int, after_steps: int = 3) -> None:
    """Send ``signum`` to this process at search step ``after_steps`` of self-play round ``round_number``."""
    from stonelab.search.selfplay import SelfPlaySlots

    play, rounds = SelfPlaySlots.play, []

    def play_and_signal(self, evaluate, *args, **kwargs):
        rounds.append(len(rounds) + 1)
        if rounds[-1] != round_number:
            return play(self, evaluate, *args, **kwargs)
        steps = []

        def evaluate_and_signal(planes):
            steps.append(1)
            if len(steps) == after_steps:
                os.kill(os.getpid(), signum)  # handled at the next bytecode, as one from outside
            return evaluate(planes)

        return play(self, evaluate_and_signal, *args, **kwargs)

    monkeypatch.setattr(SelfPlaySlots, "play", play_and_signal)


def test_a_round_cut_by_sigterm_is_played_again_so_the_resumed_run_matches_one_never_stopped(
        tmp_path, monkeypatch, compose_train, one_thread):
    settings = ["trainer.max_epochs=2", "logger=none", "callbacks.evaluation.at_train_end=false"]
    train(compose_train(settings, tmp_path / "straight"))
    with monkeypatch.context() as patch:
        _signal_in_round(patch, signal.SIGTERM, round_number=3)
        with pytest.raises(StoppedBySignal) as stop:
            train(compose_train(settings, tmp_path / "stopped"))
    assert stop.value.code == 143 and stop.value.signal_name == "SIGTERM"
    last = tmp_path / "stopped" / "checkpoints" / "last.ckpt"
    assert _checkpoint(last)["stonelab"]["rounds"] == 2
    train(compose_train([*settings, f"ckpt_path={last}"], tmp_path / "resumed"))

    straight = _checkpoint(tmp_path / "straight" / "checkpoints" / "last.ckpt")
    resumed = _checkpoint(tmp_path / "resumed" / "checkpoints" / "last.ckpt")
    assert straight["stonelab"] == resumed["stonelab"]  # rounds, games, updates, lr multiplier
    assert torch.equal(straight["SelfPlayDataModule"]["buffer"]["states_bcnn"],
                       resumed["SelfPlayDataModule"]["buffer"]["states_bcnn"])
    for key, value in straight["state_dict"].items():
        assert torch.equal(value, resumed["state_dict"][key]), key


def test_a_match_cut_by_ctrl_c_is_played_when_the_run_resumes(tmp_path, monkeypatch, compose_train, one_thread):
    from stonelab.arena.players import PureMCTSPlayer

    choose = PureMCTSPlayer.choose

    def choose_after_ctrl_c(self, games):
        os.kill(os.getpid(), signal.SIGINT)  # the first move of the first match (round 2)
        monkeypatch.setattr(PureMCTSPlayer, "choose", choose)
        return choose(self, games)

    monkeypatch.setattr(PureMCTSPlayer, "choose", choose_after_ctrl_c)
    with pytest.raises(StoppedBySignal) as stop:
        train(compose_train(["logger=none"], tmp_path))
    assert stop.value.code == 130
    last = tmp_path / "checkpoints" / "last.ckpt"
    saved = _checkpoint(last)
    assert (saved["stonelab"]["rounds"], saved["stonelab"]["train_steps"]) == (2, 1)
    assert not (tmp_path / "checkpoints" / "evaluations.jsonl").exists()  # nothing of the cut match

    result = train(compose_train(["logger=none", f"ckpt_path={last}"], tmp_path / "resumed"))
    assert [e["round"] for e in result["evaluations"]] == [2, 3]  # the cut match first, then the final one
    assert result["evaluations"][0]["train_step"] == 1  # with the network it was to measure


def _sigterm_in_second_update(patch) -> None:
    """Runs built by the pipeline get SIGTERM during their second update's backward pass."""
    import lightning as L

    from stonelab import pipeline

    class SignalInSecondUpdate(L.Callback):
        def on_before_backward(self, trainer, pl_module, loss):
            if trainer.global_step == 1:
                os.kill(os.getpid(), signal.SIGTERM)

    build = pipeline.build

    def build_with_signal(cfg):
        *parts, trainer = build(cfg)
        trainer.callbacks.insert(0, SignalInSecondUpdate())
        return (*parts, trainer)

    patch.setattr(pipeline, "build", build_with_signal)


def test_sigterm_stops_a_go_run_after_the_update_in_hand(tmp_path, monkeypatch, compose_go, one_thread):
    tiny = ["model.net.depth=3", "model.net.filters=8", "trainer.max_epochs=1", "logger=none",
            f"paths.output_dir={tmp_path / 'run'}"]
    with monkeypatch.context() as patch:
        _sigterm_in_second_update(patch)
        with pytest.raises(StoppedBySignal):
            train(compose_go("maddison_cnn", tiny, tmp_path))
    last = tmp_path / "run" / "checkpoints" / "last.ckpt"
    assert _checkpoint(last)["global_step"] == 2  # the second update finished, the third never began
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["stopped_by_signal"] == "SIGTERM"
    assert not any(k.startswith("test/") for k in result["metrics"])  # no held-out scoring after a stop

    result = train(compose_go("maddison_cnn", [*tiny, f"ckpt_path={last}"], tmp_path))
    assert result["global_step"] == 3 and result["stopped_by_signal"] is None  # the epoch's last batch


class _Trainer:
    received_sigterm = False
    world_size = 1


def test_a_second_ctrl_c_interrupts_at_once_and_the_handler_is_given_back():
    before = signal.getsignal(signal.SIGINT)
    stop = StopOnSignal()
    stop.setup(_Trainer(), None, "fit")
    assert signal.getsignal(signal.SIGINT) == stop._on_sigint
    stop._on_sigint(signal.SIGINT, None)
    assert stop.requested(_Trainer()) == "SIGINT"
    with pytest.raises(KeyboardInterrupt):
        stop._on_sigint(signal.SIGINT, None)
    assert signal.getsignal(signal.SIGINT) == before


def test_only_rank_zero_reports_the_signal_in_its_exit_status():
    assert StoppedBySignal("SIGTERM", rank=0).code == 143
    assert StoppedBySignal("SIGINT", rank=0).code == 130
    assert StoppedBySignal("SIGTERM", rank=1).code == 0  # Lightning's launcher kills all on a child's failure


def test_the_update_a_signal_stops_after_is_in_metrics_csv_and_resumed_rows_keep_their_steps(
        tmp_path, monkeypatch, compose_go, one_thread):
    import csv

    tiny = ["model.net.depth=3", "model.net.filters=8", "trainer.max_epochs=1", "logger=csv",
            "trainer.log_every_n_steps=1", f"paths.output_dir={tmp_path / 'run'}"]
    with monkeypatch.context() as patch:
        _sigterm_in_second_update(patch)
        with pytest.raises(StoppedBySignal):
            train(compose_go("maddison_cnn", tiny, tmp_path))
    metrics = tmp_path / "run" / "csv" / "metrics.csv"
    steps = [int(r["step"]) for r in csv.DictReader(metrics.open()) if r.get("train/loss")]
    assert steps == [0, 1]  # the update the signal came in is logged too
    last = tmp_path / "run" / "checkpoints" / "last.ckpt"
    train(compose_go("maddison_cnn", [*tiny, f"ckpt_path={last}"], tmp_path))
    steps = [int(r["step"]) for r in csv.DictReader(metrics.open()) if r.get("train/loss")]
    assert steps == [0, 1, 2]  # the resumed update keeps its own step, once
