"""Seconds from starting `src/play.py` to its first replies, as a GUI or a referee sees them.

    python scripts/first_move_latency.py [--cold | --compiled] [--engines go9 go9_alphazero go19 gomoku] [--playouts 400]

Each engine is started as a GUI would start it and driven the way a GUI opens a game:
GTP ``protocol_version``, ``name``, ``boardsize``, ``clear_board``, ``komi``, ``genmove b``;
Gomocup ``START 8``, ``BEGIN``. Each reply is timed from the start of the process (one
command at a time, each sent once the previous reply is in), beside the engine's CPU
seconds by then (all its threads: steadier than wall time on a shared machine, though a
busy one inflates them too, about 3x under a load of 3 on 2 cores), and so are its lines
on stderr: a compiling engine says so, and a GTP engine, whose first moves then come
from the net alone, says when its search is ready (the script waits for that line).

``--cold`` points ``NUMBA_CACHE_DIR`` at an empty folder: every numba kernel compiles, as on
a fresh clone, and the shared cache is left alone. Without it, the cache is used as it is
(run once first for a warm start). ``--compiled`` is a fresh clone set up as the README's
install line does it: an empty cache, then ``python -m stonelab.compile`` (timed), then the
engines. The load average is printed with each run: timings on
a busy machine are inflated.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GTP_OPENING = ["protocol_version", "name", "boardsize {n}", "clear_board", "komi 7.5", "genmove b"]
ENGINES = {  # name: (play.py arguments, board size, protocol)
    "go9": (["ckpt_path=models/go9_resnet3x64_from19_22k.ckpt", "go.leaf_value=mixed"], 9, "gtp"),
    "go9_alphazero": (["ckpt_path=models/go9_alphazero_1h.ckpt"], 9, "gtp"),
    "go19": (["ckpt_path=models/go19_resnet3x64_kgs_22k.ckpt"], 19, "gtp"),
    "gomoku": (["protocol=gomocup", "ckpt_path=models/gomoku8x8c5_alphazero_176min.ckpt"], 8, "gomocup"),
}


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


class Engine:
    """A started engine: its stdout lines read as they come, its first stderr line timed."""

    def __init__(self, args: list[str], env: dict[str, str]):
        self.started = time.monotonic()
        self.process = subprocess.Popen([sys.executable, "src/play.py", *args], cwd=ROOT, env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stderr: list[tuple[float, str]] = []  # (seconds since start, line)
        threading.Thread(target=self._watch_stderr, daemon=True).start()

    def _watch_stderr(self) -> None:
        for line in self.process.stderr:
            self.stderr.append((self.elapsed(), line.strip()))

    def wait_ready(self, limit: float) -> None:
        """Until the engine says its search is ready, if it said it compiles (at most ``limit`` s)."""
        if not any("compiling" in line for _, line in self.stderr):
            return
        stop = time.monotonic() + limit
        while not any("search is ready" in line for _, line in self.stderr) and time.monotonic() < stop:
            time.sleep(0.2)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def cpu_seconds(self) -> float | None:
        """The engine's CPU time so far (all its threads), from /proc (None where there is none)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def send(self, command: str) -> None:
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def gtp(self, command: str) -> tuple[float, float | None, str]:
        """When the reply to ``command`` was complete (seconds since start), the engine's CPU
        seconds by then, and the reply."""
        self.send(command)
        lines = []
        while (line := self.process.stdout.readline()) not in ("\n", ""):
            lines.append(line.strip())
        return self.elapsed(), self.cpu_seconds(), " ".join(lines)

    def gomocup(self, command: str) -> tuple[float, float | None, str]:
        self.send(command)
        reply = self.process.stdout.readline().strip()
        return self.elapsed(), self.cpu_seconds(), reply

    def close(self, last: str) -> None:
        try:
            self.send(last)
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        self.process.wait(timeout=60)


def measure(name: str, playouts: int | None, env: dict[str, str], ready_limit: float) -> None:
    args, n, protocol = ENGINES[name]
    args = args + ([f"search.playouts={playouts}"] if playouts is not None else [])
    print(f"{name} ({load()}): {' '.join(args)}", flush=True)
    engine = Engine(args, env)
    if protocol == "gtp":
        replies = [(command, *engine.gtp(command.format(n=n))) for command in GTP_OPENING]
        engine.wait_ready(ready_limit)
        engine.close("quit")
    else:
        replies = [(command, *engine.gomocup(command)) for command in ("START 8", "BEGIN")]
        engine.close("END")
    print("  seconds  CPU s  command            reply")
    for command, seconds, cpu, reply in replies:
        print(f"  {seconds:7.2f} {cpu or 0:6.1f}  {command.format(n=n):<18} {reply[:50]}")
    for seconds, line in engine.stderr[:4]:
        print(f"  {seconds:7.2f}         stderr: {line[:90]}")
    print(f"  first move {replies[-1][1]:.2f} s after start, {replies[-1][2] or 0:.1f} CPU s ({load()})", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engines", nargs="+", choices=sorted(ENGINES), default=["go9", "go19", "gomoku"])
    start = parser.add_mutually_exclusive_group()
    start.add_argument("--cold", action="store_true", help="an empty numba cache: everything compiles")
    start.add_argument("--compiled", action="store_true",
                       help="an empty numba cache filled by python -m stonelab.compile first (the install line)")
    parser.add_argument("--playouts", type=int, default=None, help="search.playouts (default: conf/play.yaml's)")
    parser.add_argument("--ready-limit", type=float, default=600.0,
                        help="GTP: seconds to wait, after the first move, for a compiling engine's search")
    options = parser.parse_args(argv)
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="numba_cold_") as cache:
        if options.compiled:
            env["NUMBA_CACHE_DIR"] = cache
            began = time.monotonic()
            subprocess.run([sys.executable, "-m", "stonelab.compile"], cwd=ROOT, env=env, check=True)
            print(f"python -m stonelab.compile: {time.monotonic() - began:.0f} s ({load()})", flush=True)
        for name in options.engines:
            if options.cold:  # a fresh empty cache each: no engine profits from another's compiling
                env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(dir=cache)
            measure(name, options.playouts, env, options.ready_limit)


if __name__ == "__main__":
    main()
