"""Compile the engines' numba kernels once, ahead of their first start.

    python -m stonelab.compile            # every shipped engine, one process per core
    python -m stonelab.compile go19 gomoku

The rules and the search are numba kernels with ``cache=True``: compiled on their first
call (tens of seconds for an engine on a fresh clone), then loaded from numba's on-disk
cache in a fraction of a second. An engine started cold still answers at once and says on
stderr that it compiles (`stonelab.protocols.warmup`), but its first move waits for the
rules and features to compile (~20 s on an idle 2-core machine) and its search for much
longer. Run this once after installing (the README's install line does) and every
engine's first move comes within seconds of its start.

Each engine is built exactly as ``src/play.py`` builds it (the same config, composed by
Hydra) and driven through a scratch game by its own warm-up, so the kernels compile with
the argument types the engine will call them with. The engines compile in separate
processes, one per game and core (numba's compiler holds the GIL, so threads would not
overlap); the engines of one game share most kernels, so they compile one after another.

The cache lives beside the sources (``__pycache__``); editing a kernel makes numba compile
it again on its next call (``NUMBA_CACHE_DIR`` moves the cache elsewhere).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository (src/stonelab/compile.py)
# name: (game, src/play.py arguments), one engine per shipped model kind (features and search differ)
ENGINES = {
    "go19": ("go", ["ckpt_path=models/go19_resnet3x64_kgs_22k.ckpt"]),
    "go9": ("go", ["ckpt_path=models/go9_resnet3x64_from19_22k.ckpt", "go.leaf_value=mixed"]),
    "go9_alphazero": ("go", ["ckpt_path=models/go9_alphazero_1h.ckpt"]),
    "gomoku": ("gomoku", ["protocol=gomocup", "ckpt_path=models/gomoku8x8c5_alphazero_176min.ckpt"]),
}


def compile_engine(overrides: list[str]) -> None:
    """Build the engine ``src/play.py overrides`` builds and run its warm-up to the end."""
    from hydra import compose, initialize_config_dir

    from stonelab.play import gomocup_engine, gtp_engine
    from stonelab.protocols.warmup import CompileNotice
    from stonelab.utils.threads import set_threads

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("play", overrides=overrides)
    set_threads(cfg.torch_threads)
    with CompileNotice("") as notice:
        notice.said = True  # no stderr line: this command says what it does itself
        if cfg.protocol == "gomocup":
            gomocup_engine(cfg, notice)  # warms up before it returns
        else:
            engine = gtp_engine(cfg, notice)
            if engine.pending_player is not None:
                engine.pending_player.result()  # the thread compiling the search; its error, if any


def run_all(names: list[str], processes: int) -> int:
    """Each game's engines in a process of their own, ``processes`` at a time; 0 if all compiled."""
    os.chdir(ROOT)  # the models/ paths above are the repository's
    games = {}  # game: its engines, in order (a Go engine after the first mostly loads from the cache)
    for name in names:
        games.setdefault(ENGINES[name][0], []).append(name)
    waiting, running, failed = list(games.values()), {}, []
    started = time.monotonic()
    while waiting or running:
        while waiting and len(running) < processes:
            group = waiting.pop(0)
            cmd = [sys.executable, "-m", "stonelab.compile", "--in-process", *group]
            running[" ".join(group)] = (subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                                         text=True), time.monotonic())
        time.sleep(0.2)
        for name, (proc, since) in list(running.items()):
            if proc.poll() is None:
                continue
            del running[name]
            if proc.returncode == 0:
                print(f"{name}: compiled in {time.monotonic() - since:.0f} s", flush=True)
            else:
                failed.append(name)
                last = (proc.stderr.read().strip().splitlines() or ["(no message)"])[-1]
                print(f"{name}: failed ({last})", file=sys.stderr, flush=True)
    print(f"{len(names) - len(failed)} of {len(names)} engines compiled in "
          f"{time.monotonic() - started:.0f} s ({processes} at a time)", flush=True)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stonelab.compile", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("engines", nargs="*", metavar="ENGINE",
                        help=f"which engines (default: all of {', '.join(ENGINES)})")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                        help="engines compiled at once (default: one per core)")
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    unknown = [name for name in args.engines if name not in ENGINES]
    if unknown:
        parser.error(f"unknown engine {unknown[0]!r}: choose from {', '.join(ENGINES)}")
    if args.processes < 1:
        parser.error(f"--processes={args.processes} must be at least 1")
    if args.in_process:
        os.chdir(ROOT)
        for name in args.engines:
            compile_engine(ENGINES[name][1])
        return 0
    return run_all(args.engines or list(ENGINES), args.processes)


if __name__ == "__main__":
    sys.exit(main())
