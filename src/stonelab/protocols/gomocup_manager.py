"""A Gomocup manager on Linux, run as GomocupJudge (Gomocup's tournament manager) runs brains.

    python -m stonelab.protocols.gomocup_manager \\
        --brain "python src/play.py protocol=gomocup ckpt_path=models/gomoku15x15_any_size.npz" \\
        --brain "python src/play.py protocol=gomocup ckpt_path=models/gomoku8x8c5_alphazero_176min.npz" \\
        --size 15 --games 10 --out /tmp/judge.json

What it copies from GomocupJudge's pbrain client, because a brain that passes here passes
there: each game starts both brains afresh; ``START n`` and the ``INFO`` lines
(``timeout_turn``, ``timeout_match``, ``max_memory``, ``game_type``, ``rule``, ``folder``)
go out at once, unanswered; a brain's first move is asked with ``BOARD ... DONE`` (the
opening stones), later ones with ``TURN``, each after ``INFO time_left``. A brain runs
only on its move: it is resumed (SIGCONT) when asked and suspended (SIGSTOP) once it
answered, so its start-up (import, load, compile) runs on its first move's clock. A move
may take ``tolerance + min(timeout_turn, match time left)``; more is a loss on time
(TLE); the second brain is started only when its first move is due. After each move the brain's memory is read and a peak over ``max_memory`` is a
loss (MLE). GomocupJudge reads psutil's memory figures; this reads /proc: unique set size
(USS, its older file protocol's measure) and resident set size (RSS), and by default
judges by RSS, the larger.

What it adds: the referee is stonelab's (freestyle, standard or renju: an occupied, off
board or forbidden point loses); a brain's ``ERROR``/``UNKNOWN`` answer or unreadable
line is a protocol loss, where GomocupJudge would wait it out as a loss on time; every
game's moves, times and memory peaks go to ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from stonelab.errors import StonelabError
from stonelab.games.gomoku import renju
from stonelab.games.gomoku.rules import MOVER_WINS, RENJU, GomokuRules

MIB = 1024 * 1024
_MOVE = re.compile(r"\s*(\d+)\s*,\s*(\d+)\s*")
_EOF = None


def process_memory(pid: int) -> tuple[int, int]:
    """(USS, RSS) in bytes of process ``pid`` and its children, from /proc (0, 0 once it is gone)."""
    uss = rss = 0
    for p in [pid, *children(pid)]:
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line and not line[0].isdigit())
        except OSError:
            continue
        kib = {key: int(value.split()[0]) for key, value in fields.items() if value.strip().endswith("kB")}
        uss += (kib.get("Private_Clean", 0) + kib.get("Private_Dirty", 0)) * 1024
        rss += kib.get("Rss", 0) * 1024
    return uss, rss


def children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (a shell wrapper's brain, a brain's helper processes)."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            found += kids
            todo += kids
    return found


class BrainLost(Exception):
    """A brain lost the game by the manager's rules: ``reason`` is TLE, MLE, protocol or illegal."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


@dataclass
class Limits:
    timeout_turn: int = 2000        # ms
    timeout_match: int = 180_000    # ms
    max_memory: int = 350 * MIB     # bytes
    tolerance: int = 1000           # ms
    memory: str = "rss"             # which figure max_memory judges: rss, uss, or none (measured only:
                                    # an opponent outside a tournament, whose INFO max_memory sizes its hash)
    pause: bool = True              # SIGSTOP a brain once it answered (GomocupJudge's way). Off for an
                                    # opponent outside a tournament: Rapfi prints its move before its search
                                    # thread clears its "thinking" flag, and stopped in between, it drops the
                                    # next command once resumed (answering "ERROR Unknown command: TIME_LEFT")


@dataclass
class BrainRecord:
    command: str
    peak_uss: int = 0
    peak_rss: int = 0
    move_ms: list[int] = field(default_factory=list)
    time_used: int = 0              # ms, as the manager counts it against timeout_match
    messages: list[str] = field(default_factory=list)


class Brain:
    """One brain process for one game, run by GomocupJudge's rules (see the module doc)."""

    def __init__(self, command: str, size: int, rule: int, limits: Limits, folder: str, stderr,
                 info: dict | None = None):
        """``info``: more ``INFO key value`` lines after the standard ones (Rapfi's ``max_node``)."""
        self.limits, self.size = limits, size
        self.record = BrainRecord(command)
        try:
            self.proc = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=stderr, text=True, bufsize=1)
        except (OSError, ValueError) as exc:  # ValueError: shlex's unclosed quote
            raise StonelabError(f"the brain {command!r} cannot be started: {exc}") from None
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        for line in (f"START {size}", f"INFO timeout_turn {limits.timeout_turn}",
                     f"INFO timeout_match {limits.timeout_match}", f"INFO max_memory {limits.max_memory}",
                     "INFO game_type 1", f"INFO rule {rule}", f"INFO folder {folder}",
                     *(f"INFO {key} {value}" for key, value in (info or {}).items())):
            self.send(line)

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\r\n"))
        self.lines.put(_EOF)

    def send(self, line: str) -> None:
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # a dead brain is found when its move is awaited

    def signal(self, sig: int) -> None:
        for pid in [self.proc.pid, *children(self.proc.pid)]:
            try:
                os.kill(pid, sig)
            except OSError:
                pass

    def move(self, commands: list[str]) -> int:
        """Send ``commands``, resume the brain, and return the point it answers (y * n + x)."""
        limits, record = self.limits, self.record
        self.send(f"INFO time_left {limits.timeout_match - record.time_used}")
        for line in commands:
            self.send(line)
        allowed = (limits.tolerance + min(limits.timeout_match - record.time_used, limits.timeout_turn)) / 1000
        started = time.monotonic()
        self.signal(signal.SIGCONT)
        point = self._answer(started + allowed, allowed)
        spent = time.monotonic() - started
        uss, rss = process_memory(self.proc.pid)
        if limits.pause:
            self.signal(signal.SIGSTOP)
        record.peak_uss, record.peak_rss = max(record.peak_uss, uss), max(record.peak_rss, rss)
        record.move_ms.append(round(spent * 1000))
        record.time_used += int(max(0.0, spent - 0.01) * 1000)
        peak = record.peak_rss if limits.memory == "rss" else record.peak_uss
        if limits.memory != "none" and peak > limits.max_memory:
            raise BrainLost("MLE", f"{limits.memory.upper()} {peak / MIB:.0f} MiB over {limits.max_memory / MIB:.0f} MiB")
        return point

    def _answer(self, deadline: float, allowed: float) -> int:
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise BrainLost("TLE", f"no move within {allowed * 1000:.0f} ms") from None
            if line is _EOF:
                raise BrainLost("protocol", f"the brain exited (code {self._exit_code()})")
            word = line.split(" ", 1)[0].upper()
            if word in ("MESSAGE", "DEBUG", "OK"):       # START's OK comes late when loading is slow
                self.record.messages.append(line[:200])
                continue
            match = _MOVE.fullmatch(line)
            if not match:
                raise BrainLost("protocol", f"answered {line[:80]!r}")
            x, y = int(match[1]), int(match[2])
            if not (0 <= x < self.size and 0 <= y < self.size):
                raise BrainLost("illegal", f"{x},{y} is off the {self.size}x{self.size} board")
            return y * self.size + x

    def _exit_code(self) -> int | None:
        """The exit code of a brain whose output ended: it may take a moment to be reaped."""
        try:
            return self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return None  # it closed its output and lives on

    def close(self) -> None:
        self.signal(signal.SIGCONT)
        self.send("END")
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def play_game(commands: tuple[str, str], rules: GomokuRules, opening: list[int], limits: Limits,
              folder: str, stderr) -> dict:
    """One game: ``commands[0]`` plays black (the first stone after the opening's), by GomocupJudge's flow."""
    n = rules.n
    board, moves = rules.new_board(), list(opening)
    for i, point in enumerate(opening):
        board[point] = 1 if i % 2 == 0 else -1
    # A brain starts when its first move is due (GomocupJudge's order): the other one is
    # paused meanwhile, so the start-up being timed does not share the CPU with another's.
    brains: list[Brain | None] = [None, None]
    result = {"winner": None, "reason": "draw", "loser_detail": ""}
    asked = [False, False]
    try:
        turn = len(opening) % 2  # brain 0 plays black, so the brain to move is the colour to move
        while True:
            if brains[turn] is None:
                brains[turn] = Brain(commands[turn], n, rules.rule, limits, folder, stderr)
            brain = brains[turn]
            if not asked[turn]:  # its first move: the position so far, 1 its own stones, 2 the other's
                ask = ["BOARD", *(f"{p % n},{p // n},{1 if i % 2 == turn else 2}" for i, p in enumerate(moves)),
                       "DONE"]
                asked[turn] = True
            else:
                ask = [f"TURN {moves[-1] % n},{moves[-1] // n}"]
            try:
                point = brain.move(ask)
                colour = 1 if len(moves) % 2 == 0 else -1
                if board[point] != 0:
                    raise BrainLost("illegal", f"{point % n},{point // n} is occupied")
                if rules.rule == RENJU and colour == 1 and renju.forbidden(board, n, point, 0):
                    raise BrainLost("illegal", f"{point % n},{point // n} is forbidden to black (renju)")
            except BrainLost as lost:
                result.update(winner=1 - turn, reason=lost.reason, loser_detail=lost.detail)
                break
            board[point] = colour
            moves.append(point)
            outcome = renju.outcome_after(board, n, rules.k, rules.rule, point, len(moves))
            if outcome == MOVER_WINS:
                result.update(winner=turn, reason="five")
                break
            if len(moves) == n * n:
                break
            turn = 1 - turn
    finally:
        for brain in brains:
            if brain is not None:
                brain.close()
    return {**result, "moves": [f"{p % n},{p // n}" for p in moves], "opening": len(opening),
            "brains": [asdict(b.record) if b is not None else asdict(BrainRecord(c))
                       for b, c in zip(brains, commands, strict=True)]}


def random_opening(rules: GomokuRules, stones: int, rng: np.random.Generator) -> list[int]:
    """``stones`` random points within 2 of the centre: a varied start with no line yet."""
    n, centre = rules.n, rules.n // 2
    near = [r * n + c for r in range(max(0, centre - 2), min(n, centre + 3))
            for c in range(max(0, centre - 2), min(n, centre + 3))]
    return [int(p) for p in rng.choice(near, size=min(stones, len(near)), replace=False)]


def run_match(commands: list[str], rules: GomokuRules, games: int, limits: Limits, opening_stones: int,
              seed: int, folder: str, log=print) -> dict:
    """``games`` games, colours alternating (each opening played from both sides)."""
    rng = np.random.default_rng(seed)
    records, score = [], [0, 0, 0]  # wins of brain 0, brain 1, draws
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "brains.stderr"), "w") as stderr:
        for game in range(games):
            if game % 2 == 0:
                opening = random_opening(rules, opening_stones, rng)
            black = game % 2
            order = (commands[black], commands[1 - black])
            record = play_game(order, rules, opening, limits, folder, stderr)
            winner = None if record["winner"] is None else (black if record["winner"] == 0 else 1 - black)
            score[2 if winner is None else winner] += 1
            records.append({"game": game + 1, "black": black, "winner": winner, **record})
            peaks = ", ".join(f"brain {i} USS {b['peak_uss'] / MIB:.0f} MiB RSS {b['peak_rss'] / MIB:.0f} MiB "
                              f"slowest {max(b['move_ms'], default=0)} ms"
                              for i, b in zip((black, 1 - black), record["brains"], strict=True))
            result = "a draw (the board is full)" if winner is None else f"brain {winner} wins by {record['reason']}"
            detail = f" ({record['loser_detail']})" if record["loser_detail"] else ""
            log(f"game {game + 1}: {result}{detail} in {len(record['moves'])} moves; {peaks}")
    losses = [r for r in records if r["reason"] in ("TLE", "MLE", "protocol", "illegal")]
    return {"brains": commands, "rules": rules.name, "limits": asdict(limits), "score": score,
            "faults": len(losses), "games": records}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stonelab.protocols.gomocup_manager", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--brain", action="append", required=True, help="a brain's command line (twice: the two players)")
    parser.add_argument("--size", type=int, default=15)
    parser.add_argument("--rule", type=int, default=0, help="Gomocup's rule: 0 freestyle, 1 exactly five, 4 renju")
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--timeout-turn", type=int, default=2000, help="ms per move (GomocupJudge's default here)")
    parser.add_argument("--timeout-match", type=int, default=180_000, help="ms per game")
    parser.add_argument("--max-memory", type=int, default=350, help="MiB")
    parser.add_argument("--tolerance", type=int, default=1000, help="ms a move may run over")
    parser.add_argument("--memory", choices=("rss", "uss"), default="rss", help="the figure --max-memory judges")
    parser.add_argument("--opening-stones", type=int, default=2, help="random stones near the centre before the brains play")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folder", default="/tmp/stonelab_gomocup", help="the brains' INFO folder; brains.stderr goes here")
    parser.add_argument("--out", help="write every game as JSON here")
    args = parser.parse_args(argv)
    try:
        if len(args.brain) != 2:
            raise StonelabError(f"--brain is given {len(args.brain)} times: a match needs two (the same twice is fine)")
        rule = 4 if args.rule & 4 else 1 if args.rule & 1 else 0
        rules = GomokuRules(args.size, 5, rule)
        limits = Limits(args.timeout_turn, args.timeout_match, args.max_memory * MIB, args.tolerance, args.memory)
        summary = run_match(args.brain, rules, args.games, limits, args.opening_stones, args.seed, args.folder)
    except StonelabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"score {summary['score'][0]}-{summary['score'][1]} ({summary['score'][2]} draws), "
          f"{summary['faults']} games lost on time, memory or protocol")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(summary, f, indent=1)
    return 0 if summary["faults"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
