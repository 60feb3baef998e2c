"""The Go Text Protocol, controller side: drive any GTP engine (GNU Go, Pachi, src/play.py).

    with GTPClient("/usr/games/gnugo --mode gtp --level 0") as gnugo:
        gnugo.boardsize(19)
        gnugo.play(BLACK, point)          # our points: row * n + col, row 0 the top
        reply = gnugo.genmove(WHITE)      # a point, n * n for pass, or RESIGN

The engine runs as a subprocess with pipes. Each command goes out with a numeric id;
the answer ("=id text" or "?id message", possibly several lines, ended by an empty
line) is read by a thread, so a command that gets no answer in ``timeout`` seconds
fails instead of hanging the match. stderr is drained by another thread (Pachi and
GNU Go write a lot there; a full pipe would stall them) and its last lines go into
the error message when the engine dies.

Errors are `GTPEngineError` (a StonelabError: entry points print one line):
`GTPFailure` for an engine's "? ..." answer, `GTPBadAnswer` for an answer that
should list vertices but does not (`GTPBadMove` when it is a genmove's); the base
class for a missing executable, an engine that exits or stops answering, or output
that is not GTP (after which the client is closed: the stream can no longer be trusted).

The client keeps no game state of its own: ``play`` and ``genmove`` go on after two
passes (GNU Go plays on; a referee's cleanup phase needs it), and whether an engine
does is the engine's business.

`LocalEngine` puts an in-process `GTPEngine` (our model) behind the same
commands, so a referee treats both sides alike.
"""

from __future__ import annotations

import os
import queue
import re
import shlex
import subprocess
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import NamedTuple

from stonelab.errors import StonelabError
from stonelab.protocols.gtp import GTPEngine, GTPError, move_name, parse_vertex

RESIGN = -1  # what genmove returns when the engine resigns (points are 0..n*n)
COLOUR_NAMES = {1: "b", -1: "w"}
_HEAD = re.compile(r"([=?])(\d*)(?:[ \t](.*))?")  # "=", "=12", "= text", "?3 message"
_EOF = None  # what the reader thread queues when the engine's stdout closes


class GTPEngineError(StonelabError):
    """A GTP engine that cannot be started, dies, stops answering, or breaks the protocol."""


class GTPEngineDied(GTPEngineError):
    """The engine exited or stopped answering mid-conversation: its process is gone, and
    `GTPClient.restart` starts a fresh one."""


class GTPFailure(GTPEngineError):
    """The engine answered "? message": ``message`` is its text, ``command`` what was sent."""

    def __init__(self, label: str, command: str, message: str):
        self.command, self.message = command, message
        super().__init__(f"{label} refused {command!r}: {message}")


class GTPBadAnswer(GTPEngineError):
    """An answer that should name vertices of the board but does not."""


class GTPBadMove(GTPBadAnswer):
    """A genmove answer that is neither a vertex of the board, nor pass, nor resign."""


class GTPResponse(NamedTuple):
    ok: bool
    ident: int | None
    text: str


def parse_response(lines: Sequence[str]) -> GTPResponse:
    """One response's lines (without the closing empty line): success, id and text.

    The first line is ``=[id] text`` or ``?[id] text``; further lines belong to a
    multi-line answer (list_commands, showboard) and are kept as they are.
    """
    match = _HEAD.fullmatch(lines[0]) if lines else None
    if match is None:
        raise ValueError(f"not a GTP response: {lines[0] if lines else ''!r}")
    text = "\n".join([(match[3] or "").strip(), *lines[1:]]).strip("\n")
    return GTPResponse(match[1] == "=", int(match[2]) if match[2] else None, text)


class GTPCommands:
    """The commands a referee needs, over ``send(command) -> text`` of any GTP speaker.

    Moves are our points (``row * n + col``, row 0 the top; ``n * n`` = pass) and
    colours +1 / -1; vertices are converted with the board size of `boardsize`.
    """

    label = "engine"
    board_size = 19  # GTP's default until boardsize is sent

    def send(self, command: str) -> str:
        raise NotImplementedError

    def name(self) -> str:
        return self.send("name")

    def version(self) -> str:
        return self.send("version")

    def identity(self) -> str:
        """The engine's own "name version" (for records and SGF player names)."""
        return engine_label(self.name(), self.version())

    def known_command(self, command: str) -> bool:
        return self.send(f"known_command {command}").strip().lower() == "true"

    def boardsize(self, n: int) -> None:
        try:
            self.send(f"boardsize {n}")
        except GTPFailure as exc:
            raise GTPFailure(self.label, f"boardsize {n}", f"{exc.message} (it refuses a {n}x{n} board)") from None
        self.board_size = n

    def clear_board(self) -> None:
        self.send("clear_board")

    def komi(self, komi: float) -> None:
        self.send(f"komi {komi:g}")

    def play(self, colour: int, move: int) -> None:
        self.send(f"play {COLOUR_NAMES[colour]} {move_name(move, self.board_size)}")

    def genmove(self, colour: int, *, cleanup: bool = False) -> int:
        """The engine's move for ``colour`` (it plays it on its own board): a point, pass, or RESIGN.

        cleanup: ask with ``kgs-genmove_cleanup`` (KGS's cleanup phase: the engine captures the
        stones it thinks dead instead of passing); check `known_command` first.
        """
        command = "kgs-genmove_cleanup" if cleanup else "genmove"
        reply = self.send(f"{command} {COLOUR_NAMES[colour]}")
        if reply.strip().lower() == "resign":
            return RESIGN
        try:
            return parse_vertex(reply, self.board_size)
        except GTPError as exc:
            raise GTPBadMove(f"{self.label} answered {command} with {reply!r}: {exc}") from None

    def final_score(self) -> str:
        """The engine's own count ("B+3.5", "W+12", "0"); GNU Go removes dead stones first."""
        return self.send("final_score").strip()

    def final_status_list(self, status: str = "dead") -> list[int]:
        """The points of the stones the engine calls ``status`` (dead, alive, seki), in its order.

        GTP answers one line per chain, vertices separated by spaces; any layout of vertices is
        read. A word that is not a board vertex (pass included) raises GTPBadAnswer.
        """
        command = f"final_status_list {status}"
        reply = self.send(command)
        points = []
        for word in reply.split():
            try:
                point = parse_vertex(word, self.board_size)
            except GTPError as exc:
                raise GTPBadAnswer(f"{self.label} answered {command!r} with {word!r}: {exc}") from None
            if point == self.board_size ** 2:
                raise GTPBadAnswer(f"{self.label} answered {command!r} with a pass, not a stone")
            points.append(point)
        return points

    def close(self) -> None:
        """Nothing to release by default."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def engine_label(name: str, version: str) -> str:
    """The engine's "name version" for records, without what some engines append to their version:
    Pachi answers ``11.99 (Genjo-devel): If you believe you have won ...`` (a chat greeting)."""
    version = version.split("\n")[0].split(": ")[0]
    return f"{name} {version}".strip()


class GTPClient(GTPCommands):
    """A GTP engine subprocess: ``command`` is an argument list or a shell-like string (shlex)."""

    def __init__(self, command: str | Sequence[str], *, timeout: float = 60.0, label: str | None = None,
                 cwd: str | os.PathLike | None = None):
        self.argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        if not self.argv:
            raise GTPEngineError("empty engine command")
        self.timeout = timeout
        self.label = label or shlex.join(self.argv)  # errors name the whole command
        self.cwd = cwd
        self._launch()

    def _launch(self) -> None:
        """Start the engine process and the threads that read its pipes."""
        self.process = _start(self.argv, self.cwd)
        self.closed = False
        self._next_id = 1
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=20)
        self._threads = [
            threading.Thread(target=_pump, args=(self.process.stdout, self._lines.put, True), daemon=True),
            threading.Thread(target=_pump, args=(self.process.stderr, self._stderr.append, False), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def restart(self) -> None:
        """A fresh process of the same command, after the last one died (or to start over)."""
        if not self.closed:
            self.close()
        self._launch()

    def send(self, command: str, timeout: float | None = None) -> str:
        """The engine's answer to ``command`` (ids are added and checked here); GTPFailure on "? ..."."""
        if self.closed:
            raise GTPEngineError(f"{self.label}: {command!r} sent after the engine was closed")
        ident = self._next_id
        self._next_id += 1
        try:
            self.process.stdin.write(f"{ident} {command}\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._died(command) from None
        response = self._read(command, self.timeout if timeout is None else timeout)
        if response.ident is not None and response.ident != ident:
            raise self._broken(f"the answer to {command!r} has id {response.ident}, not {ident}")
        if not response.ok:
            raise GTPFailure(self.label, command, response.text)
        return response.text

    def _read(self, command: str, timeout: float) -> GTPResponse:
        """Lines up to the empty line that ends a response; leading empty lines are skipped."""
        lines: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(deadline - time.monotonic(), 0))
            except queue.Empty:
                raise self._broken(f"no answer to {command!r} within {timeout:g} s") from None
            if line is _EOF:
                raise self._died(command)
            if line.strip():
                lines.append(line)
            elif lines:
                break
        try:
            return parse_response(lines)
        except ValueError as exc:
            raise self._broken(f"the answer to {command!r} is {exc}") from None

    def _died(self, command: str) -> GTPEngineDied:
        """The error for an engine that exited; waits a moment for its exit code and last stderr."""
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        self._stop()  # kills it if it closed stdout but lives on; joins the stderr thread
        return GTPEngineDied(f"{self.label} exited (code {code}) before answering {command!r}{self._stderr_tail()}")

    def _broken(self, what: str) -> GTPEngineDied:
        """The error for an engine that cannot be trusted any more: it is stopped first."""
        self._stop()
        return GTPEngineDied(f"{self.label}: {what} (engine stopped){self._stderr_tail()}")

    def _stderr_tail(self, lines: int = 3) -> str:
        tail = [line for line in self._stderr if line.strip()][-lines:]
        return f"; its stderr ends: {' | '.join(tail)}" if tail else "; nothing on its stderr"

    def close(self) -> None:
        """Send quit, give the engine 2 s to exit, then kill it."""
        if self.closed:
            return
        if self.process.poll() is None:
            try:
                self.send("quit", timeout=2)
            except GTPEngineError:
                pass
        self._stop(grace=2)

    def _stop(self, grace: float = 0) -> None:
        """Wait ``grace`` seconds for the engine to exit, kill it if it has not, release the pipes."""
        try:
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._release()

    def _release(self) -> None:
        """Mark closed and let the pump threads see EOF before the pipes are closed."""
        self.closed = True
        for thread in self._threads:
            thread.join(timeout=1)
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                pipe.close()
            except OSError:
                pass


class LocalEngine(GTPCommands):
    """An in-process GTPEngine (our model) behind the same commands as a GTPClient."""

    def __init__(self, engine: GTPEngine, label: str = "stonelab"):
        self.engine, self.label = engine, label

    def send(self, command: str) -> str:
        reply = self.engine.respond(command + "\n")
        response = parse_response(reply.rstrip("\n").split("\n"))
        if not response.ok:
            raise GTPFailure(self.label, command, response.text)
        return response.text


def _start(argv: list[str], cwd) -> subprocess.Popen:
    """The engine process, or a one-line GTPEngineError saying why it cannot start."""
    try:
        return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, encoding="utf-8", errors="replace", bufsize=1, cwd=cwd)
    except FileNotFoundError:
        raise GTPEngineError(f"engine command not found: {argv[0]}") from None
    except PermissionError:
        raise GTPEngineError(f"engine command not executable: {argv[0]}") from None
    except OSError as exc:
        raise GTPEngineError(f"engine command cannot start: {argv[0]} ({exc.strerror or exc})") from None


def _pump(stream, put, mark_eof: bool) -> None:
    """Copy a pipe's lines (without line ends) to ``put`` until EOF; then ``put(_EOF)`` if asked."""
    try:
        for line in stream:
            put(line.rstrip("\r\n"))
    except (OSError, ValueError):  # the pipe was closed under us
        pass
    if mark_eof:
        put(_EOF)
