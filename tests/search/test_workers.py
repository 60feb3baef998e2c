"""stonelab.search.workers: one function on several threads at once, and bound kernel entry points."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from numba import njit

from stonelab.search.workers import Workers, bind


def test_every_worker_runs_once_on_its_own_thread():
    workers = Workers(3)
    seen = {}

    def record(worker):
        seen[worker] = threading.get_ident()

    for _ in range(5):
        seen.clear()
        workers.run(record)
        assert sorted(seen) == [0, 1, 2]
        assert seen[0] == threading.get_ident() and len(set(seen.values())) == 3
    workers.close()


def test_run_returns_after_every_worker_finished_and_raises_their_error():
    workers = Workers(2)
    done = []

    def slow(worker):
        if worker == 1:
            time.sleep(0.05)
        done.append(worker)

    workers.run(slow)
    assert sorted(done) == [0, 1]

    def fails(worker):
        if worker == 1:
            raise RuntimeError("worker 1 failed")

    with pytest.raises(RuntimeError, match="worker 1 failed"):
        workers.run(fails)
    workers.run(slow)  # still usable after an error
    assert sorted(done) == [0, 0, 1, 1]


def test_threads_end_when_the_workers_go():
    before = set(threading.enumerate())
    workers = Workers(3)
    started = set(threading.enumerate()) - before
    assert len(started) == 2 and all(t.daemon for t in started)
    del workers
    for thread in started:
        thread.join(timeout=5)
        assert not thread.is_alive()


@njit(nogil=True)
def _add(out, value, worker, workers):
    for i in range(worker, out.shape[0], workers):
        out[i] += value


def test_bind_gives_the_kernel_without_running_it():
    out = np.zeros(6)
    fn = bind(_add, out, 1.5, 0, 1)
    assert not out.any()
    fn(out, 1.5, 0, 1)
    np.testing.assert_array_equal(out, 1.5)
    Workers(2).run(lambda worker: fn(out, 1.0, worker, 2))
    np.testing.assert_array_equal(out, 2.5)


@pytest.fixture
def four_busy_processes():
    """Four processes spinning on the CPU, as on a machine shared with other jobs (load ~4 on top)."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(4)]
    yield
    for p in spinners:
        p.kill()
        p.wait()


@pytest.mark.parametrize("evaluator", ["net", "null"])
def test_the_search_bench_with_its_default_threads_finishes_beside_busy_processes(four_busy_processes, evaluator):
    """A liveness bound, not a speed claim: with its default threads (one torch thread for the net's
    small batches; two tree threads that wait on a queue, not a spin) the bench's search finishes
    beside 4 busy processes within minutes; torch's spinning workers once kept it from finishing in 10."""
    command = [sys.executable, "-m", "stonelab.bench", "mcts", "--json", "--evaluator", evaluator,
               "--board-size", "6", "--win-length", "4", "--games", "8", "--parallel", "4", "--playouts", "50",
               "--pure-playouts", "200", "--seconds", "0.2"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert out["tree_threads" if evaluator == "null" else "torch_threads"] == (2 if evaluator == "null" else 1)
