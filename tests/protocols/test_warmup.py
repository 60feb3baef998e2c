"""An engine's first start: the note on stderr while numba compiles, and the warm-up thread."""

import subprocess
import sys
import threading

import pytest
from numba import njit

from stonelab.protocols.warmup import Background, CompileNotice


def test_the_notice_is_one_line_and_only_when_numba_compiles(capsys):
    @njit
    def plus_one(x):
        return x + 1

    @njit
    def twice(x):
        return 2 * x

    with CompileNotice("compiling the search") as notice:
        notice.ready()
        assert capsys.readouterr().err == ""  # nothing compiled yet: nothing to say
        plus_one(1), plus_one(2), twice(1), twice(2.5)  # three compilations, one line
        assert capsys.readouterr().err == "compiling the search\n"
        plus_one(3)  # compiled already: silent
        notice.ready("the search is ready")
    err = capsys.readouterr().err
    assert err.startswith("stonelab: the search is ready (") and err.endswith(" s after the start)\n")

    @njit
    def thrice(x):
        return 3 * x

    thrice(1)  # the notice is removed with its block
    assert capsys.readouterr().err == ""


def test_background_returns_its_result_or_raises_its_error_in_the_caller():
    release = threading.Event()
    job = Background(lambda: release.wait(60) and 42)
    assert not job.done()
    release.set()
    assert job.result() == 42 and job.done()

    def broken():
        raise ValueError("no such kernel")

    failed = Background(broken)
    assert failed.wait(60)
    with pytest.raises(ValueError, match="no such kernel"):
        failed.result()


def test_the_first_move_latency_script_times_a_brain_from_its_start(repo_root):
    proc = subprocess.run([sys.executable, "scripts/first_move_latency.py", "--engines", "gomoku", "--playouts", "8"],
                          cwd=repo_root, text=True, capture_output=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("gomoku (load average ") and any(" START 8 " in line and "OK" in line for line in lines)
    assert lines[-1].startswith("  first move ") and " s after start, " in lines[-1]
