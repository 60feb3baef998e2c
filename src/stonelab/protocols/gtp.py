"""The Go Text Protocol (GTP version 2), engine side: a trained Go model in any GTP GUI.

    python src/play.py ckpt_path=<maddison_cnn or belief_vit run>/checkpoints/last.ckpt

reads GTP commands on stdin and answers on stdout (nothing else is written there).
The engine plays without search: each ``genmove`` is `MovePredictor.play_moves` on
the current position (the most probable legal move; a belief_vit's gate applies, and
a belief_vit with a memory is given the game's previous positions).

Vertices follow GTP: columns A..T without I, row 1 at the bottom; internally a point
is ``row * n + col`` with row 0 the top row (the convention of `stonelab.games.go`).

Commands: protocol_version name version known_command list_commands quit boardsize
clear_board komi play genmove undo showboard final_score set_free_handicap
time_settings time_left. A malformed or unknown line gets a GTP failure response
("? ..." with the reason) and the engine goes on; it never exits on bad input.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import TextIO

from stonelab.games.go import GoRules, GoState, IllegalMove, area_score

GTP_LETTERS = "ABCDEFGHJKLMNOPQRST"  # no I
COLOURS = {"b": 1, "black": 1, "w": -1, "white": -1}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class GTPError(Exception):
    """A command that fails: its message becomes the "? ..." response."""


def move_name(move: int, n: int) -> str:
    """GTP vertex of a point (row 0 is the top row, so row r is number n - r), or "pass"."""
    if move >= n * n:
        return "pass"
    r, c = divmod(int(move), n)
    return f"{GTP_LETTERS[c]}{n - r}"


def parse_vertex(text: str, n: int) -> int:
    """The point of a GTP vertex (``D4``, ``pass``), case-insensitive."""
    word = text.strip().upper()
    if word == "PASS":
        return n * n
    match = re.fullmatch(r"([A-HJ-T])(\d{1,2})", word)
    if not match or GTP_LETTERS.index(match[1]) >= n or not 1 <= int(match[2]) <= n:
        raise GTPError(f"invalid vertex {text!r} for a {n}x{n} board")
    return (n - int(match[2])) * n + GTP_LETTERS.index(match[1])


def score_name(score: float) -> str:
    """A score (black - white - komi) as GTP's final_score and SGF's RE write it: B+3.5, W+0.5, 0."""
    return "0" if score == 0 else f"{'B' if score > 0 else 'W'}+{abs(score):g}"


def parse_colour(text: str) -> int:
    try:
        return COLOURS[text.strip().lower()]
    except KeyError:
        raise GTPError(f"invalid color {text!r} (b, w, black or white)") from None


class GTPEngine:
    """GTP state and commands around ``choose(states, histories) -> moves`` (a batch API)."""

    def __init__(self, board_size: int, choose: Callable, *, name: str = "stonelab", version: str = "",
                 komi: float = 7.5):
        self.board_size = board_size
        self.choose = choose
        self.engine_name = name
        self.engine_version = version
        self.komi = komi
        self.positions: list[GoState] = []  # every position of the game so far, the current one last
        self.finished = False
        self.commands: dict[str, Callable[[list[str]], str]] = {
            "protocol_version": lambda args: "2",
            "name": lambda args: self.engine_name,
            "version": lambda args: self.engine_version,
            "known_command": lambda args: "true" if args and args[0] in self.commands else "false",
            "list_commands": lambda args: "\n".join(self.commands),
            "quit": self.quit,
            "boardsize": self.boardsize,
            "clear_board": lambda args: self.clear_board(),
            "komi": self.set_komi,
            "play": self.play,
            "genmove": self.genmove,
            "undo": self.undo,
            "showboard": lambda args: "\n" + self.board_text(),
            "final_score": lambda args: self.final_score(),
            "set_free_handicap": self.set_free_handicap,
            "time_settings": lambda args: "",   # no clock: moves take milliseconds
            "time_left": lambda args: "",
        }
        self.clear_board()

    # -- the game
    @property
    def state(self) -> GoState:
        return self.positions[-1]

    def clear_board(self) -> str:
        self.positions = [GoRules(self.board_size).new_state()]
        return ""

    def quit(self, args: list[str]) -> str:
        self.finished = True
        return ""

    def boardsize(self, args: list[str]) -> str:
        if len(args) != 1 or not args[0].isdigit():
            raise GTPError("boardsize needs one integer")
        if int(args[0]) != self.board_size:
            raise GTPError("unacceptable size")  # the model was trained for one board size
        return self.clear_board()

    def set_komi(self, args: list[str]) -> str:
        try:
            self.komi = float(args[0])
        except (IndexError, ValueError):
            raise GTPError("komi needs one number") from None
        return ""

    def _move(self, colour: int, move: int) -> None:
        after = self.state.copy()
        after.to_play = colour  # GTP lets a colour move twice in a row (handicap, setup)
        try:
            after.play(move)
        except IllegalMove as exc:
            raise GTPError(f"illegal move ({exc.reason})") from None
        self.positions.append(after)

    def play(self, args: list[str]) -> str:
        if len(args) != 2:
            raise GTPError("play needs a color and a vertex")
        self._move(parse_colour(args[0]), parse_vertex(args[1], self.board_size))
        return ""

    def genmove(self, args: list[str]) -> str:
        if len(args) != 1:
            raise GTPError("genmove needs a color")
        colour = parse_colour(args[0])
        now = self.state.copy()
        now.to_play = colour
        move = int(self.choose([now], [self.positions[:-1]])[0])
        self._move(colour, move)
        return move_name(move, self.board_size)

    def undo(self, args: list[str]) -> str:
        if len(self.positions) == 1:
            raise GTPError("cannot undo")
        self.positions.pop()
        return ""

    def set_free_handicap(self, args: list[str]) -> str:
        if len(self.positions) != 1 or self.state.board.any():
            raise GTPError("board not empty")
        points = [parse_vertex(a, self.board_size) for a in args]
        if len(points) < 2 or len(set(points)) != len(points) or self.board_size ** 2 in points:
            raise GTPError("bad vertex list")
        self.state.setup(points, [])
        self.state.to_play = -1
        return ""

    def final_score(self) -> str:
        return score_name(float(area_score(self.state.arrays, self.komi)))  # Tromp-Taylor: black - white - komi

    def board_text(self) -> str:
        n, board = self.board_size, self.state.board
        chars = {1: "X", -1: "O", 0: "."}
        rows = [f"{n - r:>2} " + " ".join(chars[int(board[r * n + c])] for c in range(n)) for r in range(n)]
        return "\n".join(["   " + " ".join(GTP_LETTERS[:n]), *rows])

    # -- the protocol
    def respond(self, line: str) -> str | None:
        """The full response to one input line (None for a blank or comment line)."""
        line = _CONTROL.sub("", line.split("#", 1)[0]).replace("\t", " ").strip()
        if not line:
            return None
        words = line.split()
        ident = words.pop(0) if words[0].isdigit() else ""
        if not words:
            return f"?{ident} missing command\n\n"
        command, args = words[0].lower(), words[1:]
        handler = self.commands.get(command)
        if handler is None:
            return f"?{ident} unknown command\n\n"
        try:
            result = handler(args)
        except GTPError as exc:
            return f"?{ident} {exc}\n\n"
        return f"={ident} {result}".rstrip(" ") + "\n\n"

    def run(self, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> None:
        for line in stdin:
            response = self.respond(line)
            if response is None:
                continue
            stdout.write(response)
            stdout.flush()
            if self.finished:
                return
