"""The Go Text Protocol (GTP version 2), engine side: a trained Go model in any GTP GUI.

    python src/play.py ckpt_path=<maddison_cnn or belief_vit run>/checkpoints/last.ckpt

reads GTP commands on stdin and answers on stdout (nothing else is written there).
The engine plays without search: each ``genmove`` is `MovePredictor.play_moves` on
the current position (the most probable legal move; a belief_vit's gate applies, and
a belief_vit with a memory is given the game's previous positions).

Vertices follow GTP: columns A..T without I, row 1 at the bottom; internally a point
is ``row * n + col`` with row 0 the top row (the convention of `stonelab.games.go.rules`).

Commands: protocol_version name version known_command list_commands quit boardsize
clear_board komi play genmove undo showboard final_score set_free_handicap
fixed_handicap place_free_handicap loadsgf printsgf final_status_list time_settings
time_left.

- ``fixed_handicap N`` and ``place_free_handicap N`` put black stones on the standard
  points of the GTP specification (section 4.1.1; 2..9 stones on odd boards, 2..4 on
  even ones; place_free_handicap places the largest standard set not over N).
- ``loadsgf FILE [MOVE]`` loads the first game of an SGF file (`stonelab.data.sgf`):
  its size must be the model's, its komi is taken, and the position is the one before
  move MOVE (after MOVE - 1 moves), or the end of the game. Only a regular file is read,
  and ``printsgf`` writes to one only: opening a FIFO blocks the engine until the other
  end opens it, and /dev/zero never ends.
- ``printsgf [FILE]`` writes the game so far (size, komi, handicap stones, moves) as
  SGF to FILE, or answers with it.
- ``final_score``: area scoring once the stones that ``final_status_list dead`` reports
  are off the board, the dame filled in turn from the side to move (`estimated_score`),
  not a plain Tromp-Taylor count of every stone.
- ``final_status_list alive|dead|seki``: dead stones are the chains whose mean ownership
  favours the opponent, ownership by random playouts from the current position with each
  colour moving first (`stonelab.games.go.ownership.dead_stones`, an approximation that
  needs no search; a net's ownership is blended in only at ``net_weight`` > 0); alive is
  every other stone; seki is always empty (a seki's stones are alive). One chain per line.

GTP lets one colour move twice in a row, and play goes on after two passes (a GUI's
cleanup phase, a scoring dispute), as with GNU Go.

Bad input never stops the engine: a malformed or unknown line gets a GTP failure
response ("? ..." with the reason) and the engine goes on. Ids and whole-number
arguments are ASCII digits only (not "²" or "١٢"); komi must be finite; control
characters are ignored; stdin is read as UTF-8 with bad bytes as U+FFFD, whatever the
locale; input echoed in a reply is ASCII-escaped and cut short; a line over a million
characters is refused whole; a bug inside a command answers "? internal error ...".
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Callable
from typing import BinaryIO, TextIO

import numpy as np

from stonelab.data.sgf import game_sgf, read_games
from stonelab.games.go.ownership import NET_OWNERSHIP_WEIGHT, dead_stones, is_self_atari
from stonelab.games.go.rules import (
    BLACK,
    EMPTY,
    MAX_BOARD,
    MIN_BOARD,
    WHITE,
    GoRules,
    GoState,
    IllegalMove,
    tromp_taylor_owner,
)
from stonelab.protocols.streams import (
    CONTROL,
    MAX_DIGITS,
    MAX_LINE,
    input_lines,
    is_ascii_number,
    protocol_streams,
    shown,
)

GTP_LETTERS = "ABCDEFGHJKLMNOPQRST"  # no I
COLOURS = {"b": 1, "black": 1, "w": -1, "white": -1}
_REAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")  # ASCII: float() also takes "٣"
MAX_SGF_BYTES = 16 * 2**20  # loadsgf reads no more: a game record is kilobytes, /dev/zero is endless
STATUSES = ("alive", "dead", "seki")

# GTP's fixed handicap (specification section 4.1.1): for each number of stones, the star
# lines of each stone as (row, column), 0 the low line, 1 the middle, 2 the high one,
# counted from the bottom left: 2 stones are D4 Q16 on 19x19, 3 add D16, 4 add Q4.
_CORNERS = ((0, 0), (2, 2), (2, 0), (0, 2))
_SIDES = ((1, 0), (1, 2))
FIXED_HANDICAP_LINES = {
    2: _CORNERS[:2], 3: _CORNERS[:3], 4: _CORNERS, 5: (*_CORNERS, (1, 1)),
    6: (*_CORNERS, *_SIDES), 7: (*_CORNERS, *_SIDES, (1, 1)),
    8: (*_CORNERS, *_SIDES, (0, 1), (2, 1)), 9: (*_CORNERS, *_SIDES, (0, 1), (2, 1), (1, 1)),
}


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
    word = text.strip().upper() if text.isascii() else text  # "ſ5".upper() is "S5"
    if word == "PASS":
        return n * n
    match = re.fullmatch(r"([A-HJ-T])([0-9]{1,2})", word)
    if not match or GTP_LETTERS.index(match[1]) >= n or not 1 <= int(match[2]) <= n:
        raise GTPError(f"invalid vertex {shown(text)} for a {n}x{n} board")
    return (n - int(match[2])) * n + GTP_LETTERS.index(match[1])


def number_argument(text: str, what: str) -> int:
    """A whole-number argument (board size, stone count, move number, seconds) in ASCII
    digits: str.isdigit also takes "²", which int() then refuses."""
    if not is_ascii_number(text):
        raise GTPError(f"{what} must be a whole number in ASCII digits, got {shown(text)}")
    if len(text.lstrip("0")) > MAX_DIGITS:
        raise GTPError(f"{what} too large ({len(text.lstrip('0'))} digits)")
    return int(text)


def max_fixed_handicap(n: int) -> int:
    """Most stones GTP's fixed handicap places on an n x n board: 9 (odd n), 4 (even n)."""
    return 9 if n % 2 else 4


def fixed_handicap_points(n: int, count: int) -> list[int]:
    """The points of GTP's fixed handicap of ``count`` stones: the 3-3 star points below
    13x13, the 4-4 ones from 13x13, and the middle lines on odd boards."""
    if not 2 <= count <= max_fixed_handicap(n):
        raise GTPError(f"invalid number of stones: {n}x{n} takes 2..{max_fixed_handicap(n)}")
    edge = 3 if n < 13 else 4
    line = (edge - 1, (n - 1) // 2, n - edge)  # 0-based from the bottom (rows) or the left (columns)
    return [(n - 1 - line[row]) * n + line[col] for row, col in FIXED_HANDICAP_LINES[count]]


def position_for(state: GoState, colour: int) -> GoState:
    """A copy of ``state`` with ``colour`` to move. GTP lets one colour move twice in a row,
    and play goes on after two passes (a GUI's cleanup, a dispute), as GNU Go allows."""
    now = state.copy()
    now.to_play = colour
    return now.resume_play() if now.is_over else now


ANALYSIS_DIALECT = "1.15.0"  # the KataGo GTP analysis (kata-analyze, rootInfo, movesOwnership) this engine speaks


def gtp_version(version: str) -> str:
    """The ``version`` answer: KataGo's version format with the package's version after a
    ``+``. Lizzie reads the number between the first two dots as Leela Zero's minor version
    and wants 15 or more (and fails on a non-number there), so ``1.15.0+stonelab.0.3.1``
    passes where ``0.3.1`` would warn and ``0+unknown`` would break its reader."""
    return f"{ANALYSIS_DIALECT}+stonelab.{version}" if version else ANALYSIS_DIALECT


def score_name(score: float) -> str:
    """A score (black - white - komi) as GTP's final_score and SGF's RE write it: B+3.5, W+0.5, 0."""
    return "0" if score == 0 else f"{'B' if score > 0 else 'W'}+{abs(score):g}"


def estimated_score(state: GoState, komi: float, dead: np.ndarray) -> float:
    """Black - white - komi by area once the ``dead`` stones (bool[N]) are off the board:
    stones plus empty regions reaching one colour only (Tromp-Taylor), plus the dame.
    Playing on under area rules, as GNU Go's final_score does, the sides fill the dame in
    turn from the side to move, so an odd number of them gives the mover one point; a
    seki's shared liberties are no dame (filling one is self-atari for both sides). With
    GNU Go's own dead stones this equals its final_score on 88% of counted KGS games
    (counting the dame for nobody: 48%); the rest are endgame points its play-out wins."""
    board = state.board.copy()
    board[dead] = EMPTY
    owner = np.zeros(board.shape[0], dtype=np.int8)
    tromp_taylor_owner(board, state.arrays.neighbours, owner)
    return float(owner.sum()) + state.to_play * (fillable_dame(state, board, owner) % 2) - komi


def fillable_dame(state: GoState, board: np.ndarray, owner: np.ndarray) -> int:
    """How many points of ``board`` (the position cleaned of its dead stones) that Tromp-
    Taylor gives to nobody (``owner`` 0) one side or the other can fill without self-atari.
    An empty board has none: its one region reaches no stone, the open board, not dame."""
    if not board.any():
        return 0
    cleaned = GoRules(state.n).new_state().setup(np.flatnonzero(board == BLACK), np.flatnonzero(board == WHITE))
    return sum(1 for p in np.flatnonzero((board == EMPTY) & (owner == 0)).tolist()
               if not (is_self_atari(cleaned.arrays, p, BLACK) and is_self_atari(cleaned.arrays, p, WHITE)))


class NotRegularFile(OSError):
    """A path that names a FIFO, a device, a socket or a directory: what it is."""


def regular_file(name: str, flags: int) -> BinaryIO:
    """``name`` opened with ``flags`` (os.O_RDONLY, or os.O_WRONLY | os.O_CREAT), if it is a
    regular file: opening a FIFO blocks until the other end opens it (for ever, in an
    engine), and /dev/zero never ends. Checked before opening, for the message, and once
    open without blocking, so that a path swapped in between cannot slip through."""
    try:
        _require_regular(os.stat(name).st_mode)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    fd = os.open(name, flags | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0), 0o666)
    try:
        _require_regular(os.fstat(fd).st_mode)
    except NotRegularFile:
        os.close(fd)
        raise
    return os.fdopen(fd, "wb" if flags & os.O_WRONLY else "rb")


def _require_regular(mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise NotRegularFile(_FILE_KINDS.get(stat.S_IFMT(mode), "not a plain file"))


_FILE_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
               stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a directory"}


def parse_colour(text: str) -> int:
    try:
        return COLOURS[text.strip().lower()]
    except KeyError:
        raise GTPError(f"invalid color {shown(text)} (b, w, black or white)") from None


class GTPEngine:
    """GTP state and commands around ``choose(states, histories) -> moves`` (a batch API)."""

    def __init__(self, board_size: int, choose: Callable, *, name: str = "stonelab", version: str = "",
                 komi: float = 7.5, estimates: Callable | None = None):
        """``estimates(states) -> [BoardEstimate]`` (`MovePredictor.estimates`): the net's
        judgement, whose ownership the dead-stone call blends in at ``net_weight`` > 0."""
        self.board_size = board_size
        self.choose = choose
        self.estimates = estimates
        self.net_weight = NET_OWNERSHIP_WEIGHT
        self.judged: tuple | None = None  # (position key, dead stones) of the last judgement
        self.engine_name = name
        self.engine_version = version
        self.positions: list[GoState] = []  # every position of the game so far, the current one last
        self.komi = komi
        self.finished = False
        self.commands: dict[str, Callable[[list[str]], str]] = {
            "protocol_version": lambda args: "2",
            "name": lambda args: self.engine_name,
            "version": lambda args: gtp_version(self.engine_version),
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
            "fixed_handicap": self.fixed_handicap,
            "place_free_handicap": self.place_free_handicap,
            "loadsgf": self.loadsgf,
            "printsgf": self.printsgf,
            "final_status_list": self.final_status_list,
            "time_settings": lambda args: "",   # no clock: moves take milliseconds
            "time_left": lambda args: "",
        }
        self.clear_board()

    # -- the game
    @property
    def state(self) -> GoState:
        return self.positions[-1]

    @property
    def komi(self) -> float:
        return self._komi

    @komi.setter
    def komi(self, komi: float) -> None:
        """The game's komi, in its positions' rules too: the net's komi input and any
        search count it (`komi_changed`)."""
        self._komi = float(komi)
        rules = self._rules()
        for position in self.positions:
            position.rules = rules
        self.komi_changed()

    def komi_changed(self) -> None:
        """Called when the komi is set; an engine that searches hands it on."""

    def _rules(self) -> GoRules:
        return GoRules(self.board_size, komi=self._komi)

    def clear_board(self) -> str:
        self.positions = [self._rules().new_state()]
        return ""

    def quit(self, args: list[str]) -> str:
        self.finished = True
        return ""

    def boardsize(self, args: list[str]) -> str:
        if len(args) != 1:
            raise GTPError("boardsize needs one integer")
        n = number_argument(args[0], "board size")
        if n != self.board_size:
            self.change_board(n)
        return self.clear_board()

    def change_board(self, n: int) -> None:
        """Play on an ``n`` x ``n`` board from the next clear_board; an engine that cannot
        (one model, one board) answers GTP's ``unacceptable size``."""
        raise GTPError("unacceptable size")

    def set_komi(self, args: list[str]) -> str:
        # finite only: komi nan made final_score answer "W+nan"
        if len(args) != 1 or not _REAL.fullmatch(args[0]) or not math.isfinite(float(args[0])):
            raise GTPError(f"komi needs one finite number such as 6.5, got {shown(' '.join(args))}")
        self.komi = float(args[0])
        return ""

    def _move(self, colour: int, move: int) -> None:
        after = position_for(self.state, colour)
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
        now = position_for(self.state, colour)
        move = int(self.choose([now], [self.positions[:-1]])[0])
        self._move(colour, move)
        return move_name(move, self.board_size)

    def undo(self, args: list[str]) -> str:
        if len(self.positions) == 1:
            raise GTPError("cannot undo")
        self.positions.pop()
        return ""

    # -- handicap
    def set_free_handicap(self, args: list[str]) -> str:
        self._require_empty_board()
        points = [parse_vertex(a, self.board_size) for a in args]
        full = self.board_size ** 2
        if not 2 <= len(points) < full or len(set(points)) != len(points) or full in points:
            raise GTPError(f"bad vertex list: 2..{full - 1} distinct points, no pass")
        self._place_handicap(points)
        return ""

    def fixed_handicap(self, args: list[str]) -> str:
        if len(args) != 1:
            raise GTPError("fixed_handicap needs a number of stones")
        points = fixed_handicap_points(self.board_size, number_argument(args[0], "number of stones"))
        self._require_empty_board()
        return self._place_handicap(points)

    def place_free_handicap(self, args: list[str]) -> str:
        """The engine's own choice is the standard set; past its size (9 or 4 stones) it places
        that many: the GTP specification lets an engine place fewer than asked."""
        if len(args) != 1:
            raise GTPError("place_free_handicap needs a number of stones")
        count, n = number_argument(args[0], "number of stones"), self.board_size
        if not 2 <= count < n * n:
            raise GTPError(f"invalid number of stones: 2..{n * n - 1}")
        self._require_empty_board()
        return self._place_handicap(fixed_handicap_points(n, min(count, max_fixed_handicap(n))))

    def _require_empty_board(self) -> None:
        if len(self.positions) != 1 or self.state.board.any():
            raise GTPError("board not empty")

    def _place_handicap(self, points: list[int]) -> str:
        """Black stones on ``points``, white to move; the vertices placed."""
        try:
            self.state.setup(points, [])  # leaves the position as it was when it raises
        except IllegalMove as exc:  # every point filled: a chain without liberties
            raise GTPError(f"bad vertex list ({exc.reason})") from None
        self.state.to_play = WHITE
        return " ".join(move_name(p, self.board_size) for p in points)

    # -- game records
    def loadsgf(self, args: list[str]) -> str:
        if len(args) not in (1, 2):
            raise GTPError("loadsgf needs a file name and optionally a move number")
        stop = number_argument(args[1], "move number") if len(args) == 2 else None
        if stop == 0:
            raise GTPError("move number must be 1 or more (the position before that move is loaded)")
        record = self._sgf_game(args[0])
        positions = self._replayed(record, stop)  # on the record's board: a bad file changes nothing
        if record.board_size != self.board_size:
            try:
                self.change_board(record.board_size)
            except GTPError:
                raise GTPError(f"cannot load file {shown(args[0], 200)} (SZ[{record.board_size}]: this model "
                               f"plays {self.board_size}x{self.board_size})") from None
        self.positions = positions
        self.komi = record.komi
        return ""

    def _sgf_game(self, name: str):
        """The first game of SGF file ``name`` (a `stonelab.data.sgf.GameRecord`)."""
        cannot = f"cannot load file {shown(name, 200)}"
        try:
            with regular_file(name, os.O_RDONLY) as handle:
                data = handle.read(MAX_SGF_BYTES + 1)
        except NotRegularFile as exc:
            raise GTPError(f"{cannot} (not a regular file: {exc})") from None
        except OSError as exc:
            raise GTPError(f"{cannot} ({exc.strerror or type(exc).__name__})") from None
        if len(data) > MAX_SGF_BYTES:
            raise GTPError(f"{cannot} (over {MAX_SGF_BYTES} bytes)")
        result = read_games(data, name, check_legal=False)
        if not result.games:
            skip = result.skips[0]
            raise GTPError(f"{cannot} ({skip.reason}{': ' + shown(skip.detail) if skip.detail else ''})")
        record = result.games[0]
        return record

    def _replayed(self, record, stop: int | None) -> list[GoState]:
        """The positions of ``record`` from its setup stones up to before move ``stop`` (1-based)."""
        if not MIN_BOARD <= record.board_size <= MAX_BOARD:
            raise GTPError(f"cannot load file (SZ[{record.board_size}]: Go boards here are {MIN_BOARD}..{MAX_BOARD})")
        try:
            first = GoRules(record.board_size, komi=record.komi).new_state().setup(record.setup_black, record.setup_white)
        except IllegalMove as exc:
            raise GTPError(f"cannot load file (illegal setup stones: {exc.reason})") from None
        first.to_play = record.first_player
        positions = [first]
        for number, (colour, point) in enumerate(record.moves[:None if stop is None else stop - 1], start=1):
            after = position_for(positions[-1], colour)
            try:
                after.play(point)
            except IllegalMove as exc:
                raise GTPError(f"cannot load file (move {number} is illegal: {exc.reason})") from None
            positions.append(after)
        return positions

    def printsgf(self, args: list[str]) -> str:
        if len(args) > 1:
            raise GTPError("printsgf takes at most a file name")
        text = self.game_sgf()
        if not args:
            return text
        try:
            with regular_file(args[0], os.O_WRONLY | os.O_CREAT) as handle:
                handle.truncate()
                handle.write((text + "\n").encode("utf-8"))
        except NotRegularFile as exc:
            raise GTPError(f"cannot write {shown(args[0], 200)} (not a regular file: {exc})") from None
        except OSError as exc:
            raise GTPError(f"cannot write {shown(args[0], 200)} ({exc.strerror or type(exc).__name__})") from None
        return ""

    def game_sgf(self) -> str:
        """The game so far as SGF: the first position's stones as setup (AB, AW), then every move."""
        board = self.positions[0].board
        moves = [(-after.to_play, after.last_move) for after in self.positions[1:]]  # the mover hands over
        return game_sgf(self.board_size, self.komi, moves, setup_black=np.flatnonzero(board == BLACK).tolist(),
                        setup_white=np.flatnonzero(board == WHITE).tolist(),
                        application=(self.engine_name, self.engine_version))

    # -- scoring
    def final_status_list(self, args: list[str]) -> str:
        """Stones of one status, one chain per line (see the module doc for how dead is judged)."""
        if len(args) != 1 or args[0].lower() not in STATUSES:
            raise GTPError("final_status_list needs alive, dead or seki")
        status = args[0].lower()
        if status == "seki":
            return ""  # random playouts do not tell seki from other living groups
        dead = self.dead_stones()
        wanted = dead if status == "dead" else (self.state.board != 0) & ~dead
        lines, seen = [], set()
        for point in np.flatnonzero(wanted).tolist():
            if point not in seen:
                chain = [p for p in self.state.chain(point) if wanted[p]]
                seen.update(chain)
                lines.append(" ".join(move_name(p, self.board_size) for p in chain))
        return "\n".join(lines)

    def final_score(self) -> str:
        return score_name(estimated_score(self.state, self.komi, self.dead_stones()))

    def dead_stones(self) -> np.ndarray:
        """bool[N]: the stones final_status_list dead lists and final_score takes off: one
        judgement for both (`stonelab.games.go.ownership.dead_stones`). Kept for the
        position: a GUI asks dead, alive and the score in a row, and each judgement plays
        256 games (~0.1 s on 19x19)."""
        state = self.state
        key = (state.board.tobytes(), state.to_play, state.ko_point, self.net_weight)
        if self.judged is None or self.judged[0] != key:
            ownership = self.net_ownership() if self.net_weight > 0 else None
            self.judged = key, dead_stones(state, ownership=ownership, net_weight=self.net_weight)
        return self.judged[1]

    def net_ownership(self) -> np.ndarray | None:
        """The net's ownership of the current position in black's view (+1 black), or None
        without a net or an ownership head. The net answers for the side to move."""
        estimate = self.estimates([self.state])[0] if self.estimates is not None else None
        if estimate is None or estimate.ownership is None:
            return None
        return np.asarray(estimate.ownership, dtype=np.float64) * self.state.to_play

    def board_text(self) -> str:
        n, board = self.board_size, self.state.board
        chars = {1: "X", -1: "O", 0: "."}
        rows = [f"{n - r:>2} " + " ".join(chars[int(board[r * n + c])] for c in range(n)) for r in range(n)]
        return "\n".join(["   " + " ".join(GTP_LETTERS[:n]), *rows])

    # -- the protocol
    def respond(self, line: str) -> str | None:
        """The full response to one input line (None for a blank or comment line)."""
        line = CONTROL.sub("", line.split("#", 1)[0]).replace("\t", " ").strip()
        if not line:
            return None
        words = line.split()
        ident = words.pop(0) if is_ascii_number(words[0]) else ""  # "١٢" is no id: a command
        if not words:
            return f"?{ident} missing command\n\n"
        command, args = (words[0].lower() if words[0].isascii() else words[0]), words[1:]
        handler = self.commands.get(command)
        if handler is None:
            return f"?{ident} unknown command\n\n"
        try:
            result = handler(args)
        except GTPError as exc:
            return f"?{ident} {exc}\n\n"
        except Exception as exc:  # a bug (or the chooser failing) must not end a game
            return f"?{ident} internal error on {shown(command)}: {type(exc).__name__} {shown(str(exc))}\n\n"
        return f"={ident} {result}".rstrip(" ") + "\n\n"

    def run(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        """Answer the lines of ``stdin`` (default: the real stdin, as forgiving UTF-8) until quit or EOF."""
        stdin, stdout = protocol_streams(stdin, stdout)
        if stdin is None:  # started with fd 0 closed: nothing will come
            return
        for line in input_lines(stdin):
            response = self.respond(line) if line is not None else f"? line too long (over {MAX_LINE} characters)\n\n"
            if response is None:
                continue
            stdout.write(response)
            stdout.flush()
            if self.finished:
                return
