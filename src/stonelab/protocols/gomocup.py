"""The Gomocup "pbrain" protocol, brain side: a trained AlphaZero Gomoku model in Piskvork.

    python src/play.py protocol=gomocup ckpt_path=<alphazero run>/checkpoints/last.ckpt

reads manager commands on stdin and answers on stdout, one line each (the protocol of
https://plastovicka.github.io/protocl2en.htm, as Piskvork and the Gomocup managers speak
it). Every move is a neural MCTS search of the checkpoint's network (``search.playouts``,
no noise, the most visited move; ``pruning=...`` restricts it like in training).

Coordinates are ``X,Y``: column then row, 0-based from the top-left corner, so the point
is ``Y * n + X`` in `stonelab.games.gomoku`'s layout.

Commands: START, RECTSTART (square only), RESTART, BEGIN, TURN, BOARD ... DONE, TAKEBACK,
INFO (stored, never answered), ABOUT, END. The model plays only its own board size and
win length (freestyle: a longer line also wins); other sizes get ``ERROR``, and a rule or
win length the model was not trained for gets a ``MESSAGE`` warning. A malformed or
illegal line is answered ``ERROR <reason>`` (unknown commands ``UNKNOWN <reason>``) and
the brain goes on; it never exits on bad input. No clock: a move takes what its
playouts take, whatever ``INFO timeout_turn`` says.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import TextIO

import numpy as np

from stonelab.games.gomoku import BLACK, EMPTY, MOVER_WINS, ONGOING, GomokuRules, outcome_after

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
OWN, OPPONENT = 1, 2  # the fields of a BOARD line (3 = a stone of a continuous game)


class GomocupError(Exception):
    """A command that fails: its message becomes the ``ERROR ...`` line."""


class GomocupEngine:
    """Protocol state around a move chooser.

    ``choose(moves) -> point`` gets the game's moves from the empty board (black first)
    and returns the move for the side to play.
    """

    def __init__(self, rules: GomokuRules, choose: Callable[[list[int]], int], *,
                 about: dict[str, str] | None = None):
        self.rules = rules
        self.choose = choose
        self.about = about or {"name": "stonelab"}
        self.info: dict[str, str] = {}
        self.started = False
        self.moves: list[int] = []
        self.board = rules.new_board()
        self.outcome = ONGOING
        self.board_lines: list[str] | None = None  # collecting a BOARD ... DONE block
        self.finished = False
        self.commands: dict[str, Callable[[str], str | None]] = {
            "START": self.start, "RECTSTART": self.rectstart, "RESTART": self.restart,
            "BEGIN": self.begin, "TURN": self.turn, "BOARD": self.board_begin,
            "TAKEBACK": self.takeback, "INFO": self.set_info, "ABOUT": self.describe,
            "END": self.end,
        }

    # -- coordinates
    def point(self, text: str) -> int:
        """The point of ``X,Y`` (column, row; 0-based from the top-left)."""
        match = re.fullmatch(r"\s*(-?\d+)\s*,\s*(-?\d+)\s*", text)
        if not match:
            raise GomocupError(f"expected X,Y but got {text.strip()!r}")
        x, y, n = int(match[1]), int(match[2]), self.rules.n
        if not (0 <= x < n and 0 <= y < n):
            raise GomocupError(f"{x},{y} is off the {n}x{n} board")
        return y * n + x

    def coordinates(self, point: int) -> str:
        y, x = divmod(int(point), self.rules.n)
        return f"{x},{y}"

    # -- the game
    def new_game(self) -> None:
        self.moves, self.board, self.outcome = [], self.rules.new_board(), ONGOING

    def place(self, point: int) -> None:
        """Play ``point`` for the side to move, refusing occupied points and finished games."""
        if self.outcome != ONGOING:
            raise GomocupError("the game is over (" + ("a line is complete" if self.outcome == MOVER_WINS
                                                      else "the board is full") + ")")
        if self.board[point] != EMPTY:
            raise GomocupError(f"{self.coordinates(point)} is occupied")
        self.board[point] = BLACK if len(self.moves) % 2 == 0 else -BLACK
        self.moves.append(point)
        self.outcome = outcome_after(self.board, self.rules.n, self.rules.k, point, len(self.moves))

    def reply(self) -> str:
        """Search, play and name the brain's move."""
        if self.outcome != ONGOING:
            raise GomocupError("the game is over: no move to make")
        point = int(self.choose(list(self.moves)))
        self.place(point)
        return self.coordinates(point)

    def require_started(self) -> None:
        if not self.started:
            raise GomocupError(f"send START {self.rules.n} first")

    # -- commands
    def start(self, args: str) -> str:
        if not args.strip().isdigit():
            raise GomocupError(f"START needs a board size, got {args.strip()!r}")
        return self.open_board(int(args), int(args))

    def rectstart(self, args: str) -> str:
        match = re.fullmatch(r"\s*(\d+)\s*,\s*(\d+)\s*", args)
        if not match:
            raise GomocupError(f"RECTSTART needs WIDTH,HEIGHT, got {args.strip()!r}")
        return self.open_board(int(match[1]), int(match[2]))

    def open_board(self, width: int, height: int) -> str:
        n = self.rules.n
        if (width, height) != (n, n):
            raise GomocupError(f"unsupported size {width}x{height}: this model plays only {n}x{n}")
        self.started = True
        self.new_game()
        notes = []
        if self.rules.k != 5:
            notes.append(f"MESSAGE this model was trained for {self.rules.k} in a row, not 5")
        return "\n".join(["OK", *notes])

    def restart(self, args: str) -> str:
        self.require_started()
        self.new_game()
        return "OK"

    def begin(self, args: str) -> str:
        self.require_started()
        if self.moves:
            raise GomocupError("BEGIN needs an empty board (send RESTART first)")
        return self.reply()

    def turn(self, args: str) -> str:
        self.require_started()
        self.place(self.point(args))
        return self.reply()

    def takeback(self, args: str) -> str:
        self.require_started()
        point = self.point(args)
        if not self.moves or self.moves[-1] != point:
            raise GomocupError(f"{self.coordinates(point)} is not the last move")
        self.replay(self.moves[:-1])
        return "OK"

    def board_begin(self, args: str) -> None:
        self.require_started()
        self.board_lines = []

    def board_done(self) -> str:
        """The position of a BOARD block, rebuilt as a move sequence, then the brain's move."""
        lines, self.board_lines = self.board_lines, None
        own, theirs = [], []
        for line in lines:
            xy, _, field = line.rpartition(",")
            if field.strip() not in ("1", "2"):
                raise GomocupError(f"bad BOARD line {line!r}: expected X,Y,1 (own) or X,Y,2 (opponent)"
                                   + (" (continuous games are not supported)" if field.strip() == "3" else ""))
            (own if field.strip() == "1" else theirs).append(self.point(xy))
        if len(theirs) not in (len(own), len(own) + 1):
            raise GomocupError(f"BOARD has {len(own)} own and {len(theirs)} opponent stones: "
                               "with the brain to move the opponent must have as many or one more")
        first, second = (theirs, own) if len(theirs) > len(own) else (own, theirs)
        order = [p for pair in zip(first, second + [None], strict=False) for p in pair if p is not None]
        self.replay(order)
        return self.reply()

    def replay(self, moves: list[int]) -> None:
        """Rebuild the game from ``moves``; on a bad sequence the old game stays."""
        saved = (self.moves, self.board, self.outcome)
        self.new_game()
        try:
            for point in moves:
                self.place(point)
        except GomocupError:
            self.moves, self.board, self.outcome = saved
            raise

    def set_info(self, args: str) -> str | None:
        key, _, value = args.strip().partition(" ")
        self.info[key.lower()] = value.strip()
        if key.lower() == "rule" and value.strip().isdigit() and int(value) != 0:
            return f"MESSAGE this model plays free-style {self.rules.k} in a row; rule {value.strip()} is ignored"
        return None

    def describe(self, args: str) -> str:
        return ", ".join(f'{key}="{value}"' for key, value in self.about.items())

    def end(self, args: str) -> None:
        self.finished = True

    # -- the protocol
    def respond(self, line: str) -> str | None:
        """The answer to one input line (None where the protocol wants none)."""
        line = _CONTROL.sub("", line).strip()
        if self.board_lines is not None and line.upper() != "DONE":
            if line:
                self.board_lines.append(line)
            return None
        if not line:
            return None
        command, _, args = line.partition(" ")
        command = command.upper()
        try:
            if command == "DONE":
                if self.board_lines is None:
                    raise GomocupError("DONE without BOARD")
                return self.board_done()
            handler = self.commands.get(command)
            if handler is None:
                return f"UNKNOWN command {command!r}"
            return handler(args)
        except GomocupError as exc:
            return f"ERROR {exc}"

    def run(self, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> None:
        for line in stdin:
            answer = self.respond(line)
            if answer is not None:
                stdout.write(answer + "\n")
                stdout.flush()
            if self.finished:
                return


def search_chooser(player) -> Callable[[list[int]], int]:
    """``choose(moves)`` for a `stonelab.arena.players.NeuralMCTSPlayer`, keeping its tree.

    The player's single game follows the engine's: when the new sequence extends the
    one it has seen, only the new moves are played (the subtree is reused); otherwise
    (a new game, TAKEBACK, BOARD) it starts over and replays them.
    """
    seen: list[int] = []

    def choose(moves: list[int]) -> int:
        nonlocal seen
        if player.mcts is None or moves[:len(seen)] != seen:
            player.reset(1)
            seen = []
        for point in moves[len(seen):]:
            player.observe(0, point)
        move = int(player.choose(np.array([0]))[0])
        seen = list(moves)
        return move

    return choose

