"""Seconds from starting `src/train.py` and `src/eval.py` to their first work, as a new user meets them.

    python scripts/start_times.py

Three starts of each command: ``cold`` (an empty numba cache of its own: everything
compiles), ``compiled`` (an empty cache filled by ``python -m stonelab.compile`` first, as
the README's install line does) and ``warm`` (the same cache again). Timed: the default
job's first self-play round line, and the whole of a 2-game match and of scoring the
committed sample's 30 test games. The engines' first moves: scripts/first_move_latency.py.
The load average is printed with each: timings on a busy machine are inflated.
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = Path(tempfile.gettempdir())  # the commands' run folders
CMDS = {  # name: (command, the line that marks its first work; None: the whole command)
    "train (first round line)": (
        [sys.executable, "src/train.py", "trainer.max_time=00:00:01:00", f"hydra.run.dir={RUNS / 'start_train'}"],
        "round 1 |"),
    "eval task=match, 2 games (end)": (
        [sys.executable, "src/eval.py", "task=match", "ckpt_path=models/gomoku8x8c5_alphazero_176min.ckpt",
         "games=2", f"hydra.run.dir={RUNS / 'start_match'}"], None),
    "eval task=predict, 30 games (end)": (
        [sys.executable, "src/eval.py", "task=predict", "ckpt_path=models/go19_resnet3x64_kgs_22k.ckpt",
         f"hydra.run.dir={RUNS / 'start_predict'}"], None),
}


def timed(cmd: list[str], marker: str | None, env: dict) -> float:
    """Seconds until a line holding ``marker`` (then the process is stopped), or until it ends."""
    began = time.monotonic()
    process = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in process.stdout:
        if marker and marker in line:
            seen = time.monotonic() - began
            process.kill()
            process.wait()
            return seen
    process.wait()
    return time.monotonic() - began


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="numba_start_") as scratch:
        cache = scratch
        for mode in ("cold", "compiled", "warm"):
            if mode == "compiled":
                cache = tempfile.mkdtemp(dir=scratch)
                env = {**os.environ, "NUMBA_CACHE_DIR": cache}
                began = time.monotonic()
                subprocess.run([sys.executable, "-m", "stonelab.compile"], cwd=ROOT, env=env, check=True,
                               capture_output=True)
                print(f"python -m stonelab.compile: {time.monotonic() - began:.0f} s", flush=True)
            for name, (cmd, marker) in CMDS.items():
                if mode == "cold":  # each cold command in its own empty cache
                    cache = tempfile.mkdtemp(dir=scratch)
                env = {**os.environ, "NUMBA_CACHE_DIR": cache}
                print(f"{mode:9s} {name:36s} {timed(cmd, marker, env):6.1f} s  load {os.getloadavg()[0]:.2f}",
                      flush=True)


if __name__ == "__main__":
    main()
