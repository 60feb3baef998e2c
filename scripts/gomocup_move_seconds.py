"""Seconds a move of a Gomocup brain, as a manager times it, on positions of real games.

    python scripts/gomocup_move_seconds.py LADDER_JSON [--positions 30] -- protocol=gomocup ckpt_path=... [search.playouts=...]

Starts `src/play.py` with the arguments after ``--`` (a Gomocup brain), then sends it
positions taken from the game records of a ladder run's ``ladder.json`` (``task=ladder``
writes one: the games against Rapfi, so the positions are the ones the brain meets there),
each as a ``BOARD ... DONE`` block, and times each reply from the ``DONE`` to the move, beside
the brain's CPU seconds for it. A ``BOARD`` starts the brain's tree afresh, where a game's
``TURN`` reuses the subtree of the move before: these are the slower moves of the two. The
load average is printed too: a busy machine inflates the times.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from first_move_latency import Engine, load  # scripts/ is on the path when a script runs


def board_of(ladder: dict) -> tuple[int, int]:
    """(size, win length) of the ladder's game name, e.g. gomoku_15x15_c5."""
    parts = ladder["game"].split("_")
    return int(parts[1].split("x")[0]), int(parts[2].lstrip("c"))


def positions(ladder: dict, count: int) -> list[tuple[int, list[int]]]:
    """(board size, moves so far) for ``count`` positions spread over the ladder's game records:
    every game's positions from its 4th ply on, every other ply, in turn across games."""
    size, _ = board_of(ladder)
    records = [r["moves"] for rung in ladder["rungs"] for r in rung["game_records"]]
    spread = [(size, moves[:ply]) for moves in records for ply in range(4, len(moves), 2)]
    step = max(1, len(spread) // count)
    return spread[::step][:count]


def board_block(size: int, moves: list[int]) -> list[str]:
    """The BOARD block of the position after ``moves``: field 1 for the side to move, 2 for the other."""
    to_move_parity = len(moves) % 2  # black moved at even plies
    lines = ["BOARD"]
    for ply, point in enumerate(moves):
        y, x = divmod(point, size)
        lines.append(f"{x},{y},{1 if ply % 2 == to_move_parity else 2}")
    return lines + ["DONE"]


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    ours, brain = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ladder", type=Path, help="a ladder.json written by python src/eval.py task=ladder")
    parser.add_argument("--positions", type=int, default=30)
    options = parser.parse_args(ours)
    try:
        chosen = positions(json.loads(options.ladder.read_text()), options.positions)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as error:
        parser.error(f"{options.ladder}: not a ladder.json with game records of a gomoku_NxN game "
                     f"(python src/eval.py task=ladder writes one): {error}")
    if not chosen:
        parser.error(f"{options.ladder}: its game records have no position from the 4th ply on")
    print(f"src/play.py {' '.join(brain)}: {len(chosen)} positions of {options.ladder} ({load()})", flush=True)
    engine = Engine(brain, env=None)
    try:
        *_, ready = engine.gomocup(f"START {chosen[0][0]}")  # loads the model and compiles: not a move
    except BrokenPipeError:
        ready = ""
    if ready != "OK":
        engine.process.wait(timeout=60)
        said = " / ".join(line for _, line in engine.stderr[-3:]) or "nothing on stderr"
        sys.exit(f"the brain did not start (START answered {ready!r}): {said}")
    seconds, cpu = [], []
    for size, moves in chosen:
        lines = board_block(size, moves)
        for line in lines[:-1]:
            engine.send(line)
        began, began_cpu = engine.elapsed(), engine.cpu_seconds() or 0.0
        done, done_cpu, reply = engine.gomocup(lines[-1])
        if not reply or reply.startswith(("ERROR", "UNKNOWN")):
            sys.exit(f"the brain answered {reply!r} to the position after {moves}")
        seconds.append(done - began)
        cpu.append((done_cpu or 0.0) - began_cpu)
    engine.close("END")
    print(f"seconds a move: median {statistics.median(seconds):.2f}, mean {statistics.mean(seconds):.2f}, "
          f"max {max(seconds):.2f}; CPU seconds: median {statistics.median(cpu):.2f}, max {max(cpu):.2f} ({load()})")


if __name__ == "__main__":
    main()
