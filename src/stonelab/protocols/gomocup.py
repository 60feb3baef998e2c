"""The Gomocup "pbrain" protocol, brain side: a trained AlphaZero Gomoku model in Piskvork.

    python src/play.py protocol=gomocup ckpt_path=<alphazero run>/checkpoints/last.ckpt

reads manager commands on stdin and answers on stdout, one line each (the protocol of
https://plastovicka.github.io/protocl2en.htm, as Piskvork and the Gomocup managers speak
it). Every move is a neural MCTS search of the checkpoint's network (``search.playouts``,
no noise, the most visited move; ``pruning=...`` restricts it like in training).

Coordinates are ``X,Y``: column then row, 0-based from the top-left corner, so the point
is ``Y * n + X`` in `stonelab.games.gomoku.rules`'s layout.

Commands: START, RECTSTART (square boards only), RESTART, BEGIN, TURN, BOARD ... DONE, TAKEBACK,
INFO (stored, answered only to warn or refuse), ABOUT, END. A model whose net has a layer
tied to the board (``model/net=policy_value``) plays only its own board size; one trained
with ``model/net=fully_conv`` plays any square board (``START n``, ``RECTSTART n,n``) from
5x5 to 25x25 with its win length. Other sizes get ``ERROR``. ``INFO rule`` (Gomocup's bits: 1
exactly five, 4 renju; 2, a continuous game, changes nothing here) switches the rules the
brain referees and searches by, when a factory for other rules was given (src/play.py gives
one): a five-in-a-row model then plays standard or renju, its search never choosing a
forbidden point, with a ``MESSAGE`` when the model learned another rule set. Caro (8) and
rules for another line length are refused with a ``MESSAGE``; the brain keeps its rules.

Time: ``INFO timeout_turn``, ``timeout_match`` and ``time_left`` (milliseconds) set each
move's budget (`GomocupClock`); the search stops on it, or after ``search.playouts``,
whichever comes first. Without them a move takes what its playouts take. The protocol
times a move from its command (TURN, BEGIN, BOARD) to the reply, but not START: the
brain loads the model and compiles the search before it reads its first command. A
manager that times the first move from the brain's launch (GomocupJudge does) would see
that start-up as move time, so the brain's first move of the process gives it back: its
budget is cut by the start-up seconds it was given (``startup_seconds``).

Bad input never stops the brain: a malformed or illegal line is answered with one
``ERROR <reason>`` line (unknown commands ``UNKNOWN <reason>``) and it goes on. Numbers
are ASCII digits only (not ``²`` or ``٣``), at most 18 of them; control characters are
ignored; stdin is read as UTF-8 with bad bytes as U+FFFD, whatever the locale; input
echoed in a reply is ASCII-escaped and cut to about 40 characters; a line over a
million characters is refused whole. A BOARD block collects up to n*n stone lines until
DONE; a command line in it (other than INFO) drops the block with an ERROR and is not
run, except END, which still ends the brain, and BOARD, which starts the block over.
INFO inside a block is applied and the block goes on.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TextIO

import numpy as np

from stonelab.games.gomoku import renju
from stonelab.games.gomoku.rules import (
    BLACK,
    EMPTY,
    EXACT_FIVE,
    FREESTYLE,
    MOVER_WINS,
    ONGOING,
    RENJU,
    RULE_NAMES,
    GomokuRules,
)
from stonelab.protocols.streams import CONTROL, MAX_DIGITS, MAX_LINE, input_lines, protocol_streams, shown

# ASCII only: \d and str.isdigit also take "²" or "٣", which int() then refuses or misreads
_NUMBER = re.compile(r"\s*(-?[0-9]+)\s*", re.ASCII)
_PAIR = re.compile(r"\s*(-?[0-9]+)\s*,\s*(-?[0-9]+)\s*", re.ASCII)  # a negative X,Y is off the board
_SIZE = re.compile(r"\s*([0-9]+)\s*", re.ASCII)
_SIZES = re.compile(r"\s*([0-9]+)\s*,\s*([0-9]+)\s*", re.ASCII)
_SPACE = re.compile(r"[ \t]+")
NUMERIC_INFO = ("timeout_turn", "timeout_match", "time_left", "max_memory", "game_type", "rule")
OWN, OPPONENT = 1, 2  # the fields of a BOARD line (3 = a stone of a continuous game)
UNLIMITED_MS = 2147483647  # the time_left of a match without a time limit
MARGIN_S, MARGIN_FRACTION = 0.1, 0.1  # a move's safety margin: 0.1 s + 10 % of its time
MEMORY_MARGIN = 16 * 2**20  # bytes kept free under INFO max_memory beside the tree (batches, Python)
MIN_BUDGET_S = 0.01  # out of time (or timeout_turn 0): a move still gets a search of one playout
MOVES_EXPECTED_MAX = 30  # own moves a match is planned for; time_left / 30 early in a game


class GomocupError(Exception):
    """A command that fails: its message becomes the ``ERROR ...`` line."""


@dataclass(frozen=True)
class GomocupClock:
    """The time limits the manager sent (``INFO``, milliseconds; None: not sent), and the
    time the next move may take.

    timeout_turn: each move's limit; 0 asks for a move "as fast as possible".
    timeout_match: the whole match's limit, 0 for none; stands in for time_left until
      the manager sends that (it must, before every move of a timed match).
    time_left: the match time remaining; 2147483647 means unlimited, and it goes
      negative once the brain has overrun.

    A move's time is the least of the turn limit and an even share of the match time
    left over the own moves still expected (half the empty points, at most 30), less a
    margin of 0.1 s + 10 %, and at least 10 ms. The margin covers what the budget does
    not see: the search stops only between batched network evaluations, so it overshoots
    by up to one; the move is then played and written back; the manager's clock runs
    while the lines cross the pipes; and on a busy machine the brain can wait for a core.
    """

    timeout_turn: int | None = None
    timeout_match: int | None = None
    time_left: int | None = None

    def updated(self, key: str, ms: int) -> GomocupClock:
        """This clock after ``INFO key ms`` (key: one of the three fields)."""
        if key in ("timeout_turn", "timeout_match") and ms < 0:
            raise GomocupError(f"INFO {key} must be >= 0 milliseconds, got {ms}")
        return replace(self, **{key: ms})

    def match_left(self) -> int | None:
        """Milliseconds left in the match, None without a match limit."""
        if self.time_left is not None:
            return None if self.time_left >= UNLIMITED_MS else self.time_left
        return self.timeout_match or None

    def budget(self, empty_points: int) -> float | None:
        """Seconds the next move may take with ``empty_points`` empty points on the board;
        None without any limit (the configured playouts decide)."""
        limits_s = []
        if self.timeout_turn is not None:
            limits_s.append(self.timeout_turn / 1000)
        match_left = self.match_left()
        if match_left is not None:
            moves_expected = min(MOVES_EXPECTED_MAX, max(1, (empty_points + 1) // 2))
            limits_s.append(match_left / 1000 / moves_expected)
        if not limits_s:
            return None
        limit_s = min(limits_s)
        return max(MIN_BUDGET_S, limit_s - MARGIN_S - MARGIN_FRACTION * limit_s)


def integer(text: str, what: str) -> int:
    """An ASCII ``-?[0-9]+`` as an int, refusing absurd lengths before int() raises on them."""
    sign, digits = ("-", text[1:]) if text.startswith("-") else ("", text)
    digits = digits.lstrip("0") or "0"
    if len(digits) > MAX_DIGITS:
        raise GomocupError(f"{what} too large ({len(digits)} digits)")
    return int(sign + digits)


class GomocupEngine:
    """Protocol state around a move chooser.

    ``choose(moves, deadline) -> point`` gets the game's moves from the empty board (black
    first) and returns the move for the side to play, by ``time.monotonic()`` ``deadline``
    (None: no time limit). ``chooser_for(rules) -> choose``, when given, builds the chooser
    for other rules (``INFO rule``) and, with ``board_sizes`` (the smallest and largest square
    board the model plays: a fully convolutional net's), for another board (``START n``);
    without them the brain keeps ``rules`` and plays only their board.
    """

    def __init__(self, rules: GomokuRules, choose: Callable[[list[int], float | None], int], *,
                 about: dict[str, str] | None = None,
                 chooser_for: Callable[[GomokuRules], Callable[[list[int], float | None], int]] | None = None,
                 board_sizes: tuple[int, int] | None = None, startup_seconds: float = 0.0):
        self.rules = rules
        self.board_sizes = board_sizes  # the square boards the model plays (None: only its own)
        self.startup_seconds = startup_seconds  # charged to the first move this process makes
        self.trained_rules = rules
        self.choose = choose
        self.chooser_for = chooser_for
        self.about = about or {"name": "stonelab"}
        self.info: dict[str, str] = {}
        self.max_memory = 0  # INFO max_memory in bytes (0: no limit)
        self.clock = GomocupClock()
        self.turn_started = time.monotonic()  # when the command of the move to make arrived
        self.started = False
        self.moves: list[int] = []
        self.board = rules.new_board()
        self.outcome = ONGOING
        self.board_lines: list[str] | None = None  # collecting a BOARD ... DONE block
        self.finished = False
        renju.outcome_after(self.board, rules.n, rules.k, rules.rule, 0, 1)  # compiled (or read from numba's cache) now, not in a timed TURN
        self.commands: dict[str, Callable[[str], str | None]] = {
            "START": self.start, "RECTSTART": self.rectstart, "RESTART": self.restart,
            "BEGIN": self.begin, "TURN": self.turn, "BOARD": self.board_begin,
            "TAKEBACK": self.takeback, "INFO": self.set_info, "ABOUT": self.describe,
            "END": self.end,
        }

    # -- coordinates
    def point(self, text: str) -> int:
        """The point of ``X,Y`` (column, row; 0-based from the top-left)."""
        match = _PAIR.fullmatch(text)
        if not match:
            raise GomocupError(f"expected X,Y but got {shown(text)}")
        x, y, n = integer(match[1], "coordinate"), integer(match[2], "coordinate"), self.rules.n
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
        colour = BLACK if len(self.moves) % 2 == 0 else -BLACK
        if self.rules.rule == RENJU and colour == BLACK and renju.forbidden(self.board, self.rules.n, point, 0):
            raise GomocupError(f"{self.coordinates(point)} is forbidden to black (renju)")
        self.board[point] = colour
        self.moves.append(point)
        self.outcome = renju.outcome_after(self.board, self.rules.n, self.rules.k, self.rules.rule, point,
                                           len(self.moves))

    def deadline(self) -> float | None:
        """The ``time.monotonic()`` by which the move must be chosen (None: no limit)."""
        budget = self.clock.budget(self.rules.n ** 2 - len(self.moves))
        if budget is None:
            return None
        return self.turn_started + max(MIN_BUDGET_S, budget - self.startup_seconds)

    def reply(self) -> str:
        """Search, play and name the brain's move."""
        if self.outcome != ONGOING:
            raise GomocupError("the game is over: no move to make")
        point = int(self.choose(list(self.moves), self.deadline()))
        self.startup_seconds = 0.0  # paid back once
        self.place(point)
        return self.coordinates(point)

    def require_started(self) -> None:
        if not self.started:
            raise GomocupError(f"send START {self.rules.n} first")

    # -- commands
    def start(self, args: str) -> str:
        match = _SIZE.fullmatch(args)
        if not match:
            raise GomocupError(f"START needs a board size, got {shown(args)}")
        size = integer(match[1], "board size")
        return self.open_board(size, size)

    def rectstart(self, args: str) -> str:
        match = _SIZES.fullmatch(args)
        if not match:
            raise GomocupError(f"RECTSTART needs WIDTH,HEIGHT, got {shown(args)}")
        return self.open_board(integer(match[1], "board width"), integer(match[2], "board height"))

    def open_board(self, width: int, height: int) -> str:
        n = self.rules.n
        if self.board_sizes is None or self.chooser_for is None:
            if (width, height) != (n, n):
                raise GomocupError(f"unsupported size {width}x{height}: this model plays only {n}x{n}")
        elif width != height or not self.board_sizes[0] <= width <= self.board_sizes[1]:
            low, high = self.board_sizes
            raise GomocupError(f"unsupported size {width}x{height}: this model plays square boards "
                               f"{low}x{low} to {high}x{high}")
        elif width != n:  # a net that plays any size: the rules and the search for this board
            rules = replace(self.rules, board_size=width)
            self.choose, self.rules = self.chooser_for(rules), rules
        self.started = True
        self.new_game()
        notes = [note] if (note := self.fit_tree()) else []
        if self.rules.k != 5:
            notes.append(f"MESSAGE this model was trained for {self.rules.k} in a row, not 5")
        return "\n".join(["OK", *notes])

    def restart(self, args: str) -> str:
        self.require_started()
        self.new_game()
        return "OK"

    def begin(self, args: str) -> str:
        self.turn_started = time.monotonic()
        self.require_started()
        if self.moves:
            raise GomocupError("BEGIN needs an empty board (send RESTART first)")
        return self.reply()

    def turn(self, args: str) -> str:
        self.turn_started = time.monotonic()
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
        self.turn_started = time.monotonic()  # the reply comes at DONE, but the move's time runs from here
        # Collected even before a START was accepted (a refused START 20, say), so that its
        # stone lines are not read as unknown commands; DONE then answers the one ERROR.
        self.board_lines = []

    def board_line(self, line: str, command: str, args: str) -> str | None:
        """A line inside a BOARD block: a stone line is kept (judged at DONE), a command ends
        the block. A manager that never sends DONE must not leave the brain deaf to commands."""
        if command == "DONE":
            return self.board_done()
        if command == "INFO":                                   # needs no answer: the block goes on
            return self.set_info(args)
        if command not in self.commands:
            if line and len(self.board_lines) <= self.rules.n ** 2:   # one past the cap: DONE refuses
                self.board_lines.append(line)
            return None
        self.board_lines = None
        if command == "END":
            return self.end(args)
        if command == "BOARD":
            self.board_lines = []
            raise GomocupError("BOARD before DONE: the earlier block is dropped, collecting the new one")
        raise GomocupError(f"{command} before DONE of a BOARD block: the block and the {command} are dropped")

    def board_done(self) -> str:
        """The position of a BOARD block, rebuilt as a move sequence, then the brain's move."""
        lines, self.board_lines = self.board_lines, None
        self.require_started()
        if len(lines) > self.rules.n ** 2:
            raise GomocupError(f"BOARD block has more than {self.rules.n ** 2} lines")
        own, theirs = [], []
        for line in lines:
            xy, _, field = line.rpartition(",")
            if field.strip() not in ("1", "2"):
                raise GomocupError(f"bad BOARD line {shown(line)}: expected X,Y,1 (own) or X,Y,2 (opponent)"
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
        key, value = key.lower(), value.strip()
        if not key:
            raise GomocupError("INFO needs a KEY and a VALUE")
        number = None
        if key in NUMERIC_INFO:                                 # refused, not stored: the old value stays
            match = _NUMBER.fullmatch(value)
            if not match:
                raise GomocupError(f"INFO {key} needs a number, got {shown(value)}")
            number = integer(match[1], f"INFO {key}")
        if key in ("timeout_turn", "timeout_match", "time_left"):
            self.clock = self.clock.updated(key, number)
        self.info[key] = value
        if key == "rule":
            return self.set_rule(number)
        if key == "max_memory":
            return self.check_memory(number)
        return None

    def check_memory(self, limit: int) -> str | None:
        """``INFO max_memory`` (bytes; 0: no limit): the search's tree shrinks to fit beside what
        the process holds (`fit_tree`); a MESSAGE when the process alone already holds more (a
        torch checkpoint does: the .npz file plays the same net without torch)."""
        self.max_memory = max(0, limit)
        used = self.resident_bytes()
        if limit <= 0 or used <= limit:
            return self.fit_tree() if limit > 0 else None
        return (f"MESSAGE this brain already uses {used / 2**20:.0f} MiB, over max_memory {limit / 2**20:.0f} MiB; "
                f"a .npz export of the model (python -m stonelab.models.export) plays without torch")

    def fit_tree(self) -> str | None:
        """Under ``INFO max_memory``, the search tree's arrays get what the process does not already
        hold, less `MEMORY_MARGIN` (the evaluator's batches, Python's own growth); a bigger tree is
        rebuilt with fewer playouts and a MESSAGE says so. The tree is counted in full though its
        untouched pages are not yet resident: a limit kept, never a move lost to it."""
        fit = getattr(self.choose, "fit_memory", None)
        if not self.max_memory or fit is None:
            return None
        playouts = fit(self.max_memory - self.resident_bytes() - MEMORY_MARGIN)
        if playouts is None:
            return None
        return (f"MESSAGE search capped at {playouts} playouts a move: a bigger tree would pass "
                f"max_memory {self.max_memory / 2**20:.0f} MiB")

    def set_rule(self, bits: int) -> str | None:
        """``INFO rule``: play by Gomocup's rule ``bits`` where this brain can (see the module doc)."""
        rule = RENJU if bits & 4 else EXACT_FIVE if bits & 1 else FREESTYLE
        if bits & 8:
            return f"MESSAGE caro (rule {bits}) is not supported; playing {RULE_NAMES[self.rules.rule]}"
        if rule == self.rules.rule:
            return None
        if self.rules.k != 5 or self.chooser_for is None:
            return (f"MESSAGE this model plays {RULE_NAMES[self.rules.rule]} {self.rules.k} in a row; "
                    f"rule {bits} is ignored")
        old = (self.rules, self.choose)
        self.rules = replace(self.rules, rule=rule)
        try:
            self.replay(list(self.moves))  # the game so far, refereed by the new rules
        except GomocupError as exc:
            self.rules = old[0]
            raise GomocupError(f"rule {bits}: the game so far breaks it ({exc}); keeping "
                               f"{RULE_NAMES[self.rules.rule]}") from None
        self.choose = self.chooser_for(self.rules)
        notes = [note] if (note := self.fit_tree()) else []
        if rule != self.trained_rules.rule:
            notes.append(f"MESSAGE playing {RULE_NAMES[rule]} (rule {bits}) with a model trained on "
                         f"{RULE_NAMES[self.trained_rules.rule]}")
        return "\n".join(notes) or None

    @staticmethod
    def resident_bytes() -> int:
        """This process's resident set size (Linux's /proc; elsewhere 0: nothing to check)."""
        try:
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            return 0

    def describe(self, args: str) -> str:
        return ", ".join(f'{key}="{value}"' for key, value in self.about.items())

    def end(self, args: str) -> None:
        self.finished = True

    # -- the protocol
    def respond(self, line: str) -> str | None:
        """The answer to one input line (None where the protocol wants none)."""
        line = CONTROL.sub("", line).strip()
        command, args = split_command(line)
        try:
            if self.board_lines is not None:
                return self.board_line(line, command, args)
            if not line:
                return None
            if command == "DONE":
                raise GomocupError("DONE without BOARD")
            handler = self.commands.get(command)
            if handler is None:
                return f"UNKNOWN command {shown(command)}"
            return handler(args)
        except GomocupError as exc:
            return f"ERROR {exc}"
        except Exception as exc:  # a bug (or the chooser failing) must not end a match
            return f"ERROR internal error on {shown(line)}: {type(exc).__name__} {shown(str(exc))}"

    def run(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        """Answer the lines of ``stdin`` (default: the real stdin, as forgiving UTF-8) until END or EOF."""
        stdin, stdout = protocol_streams(stdin, stdout)
        if stdin is None:                                       # started with fd 0 closed: nothing will come
            return
        for line in input_lines(stdin):
            answer = self.respond(line) if line is not None else self.too_long()
            if answer is not None:
                stdout.write(answer + "\n")
                stdout.flush()
            if self.finished:
                return

    def too_long(self) -> str | None:
        """The answer to a line over MAX_LINE characters (skipped unread)."""
        if self.board_lines is not None:                        # a bad stone line: DONE refuses the block
            return self.board_line("(a line too long)", "", "")
        return f"ERROR line too long (over {MAX_LINE} characters)"


def split_command(line: str) -> tuple[str, str]:
    """The command word (upper case) and its arguments. Only an ASCII word is upper-cased:
    "ſtart".upper() is "START", and such a spelling is no command."""
    command, args = (_SPACE.split(line, maxsplit=1) + [""])[:2]
    return (command.upper() if command.isascii() else command), args


class search_chooser:  # noqa: N801  (used as the function it was: search_chooser(player))
    """``choose(moves, deadline)`` for a `stonelab.arena.players.NeuralMCTSPlayer`, keeping its tree.

    The player's single game follows the engine's: when the new sequence extends the
    one it has seen, only the new moves are played (the subtree is reused); otherwise
    (a new game, TAKEBACK, BOARD) it starts over and replays them. The tree is allocated
    here, once, and not in a timed move; `fit_memory` shrinks it to a memory budget.
    """

    def __init__(self, player):
        self.player = player
        player.reset(1)
        self.seen: list[int] = []

    def __call__(self, moves: list[int], deadline: float | None) -> int:
        if moves[:len(self.seen)] != self.seen:
            self.player.reset_game(0)
            self.seen = []
        for point in moves[len(self.seen):]:
            self.player.observe(0, point)
        move = int(self.player.choose(np.array([0]), deadline=deadline)[0])
        self.seen = list(moves)
        return move

    def fit_memory(self, budget_bytes: int) -> int | None:
        """The search's tree within ``budget_bytes``: the playouts a move now has, or None if it fitted."""
        playouts = self.player.fit_memory(budget_bytes)
        if playouts is not None:
            self.seen = []  # a new tree: the game is replayed into it at the next move
        return playouts

