"""An external Gomocup brain (Rapfi, any ``pbrain-*``) as a player of `play_match`.

The brain is talked to through the GomocupJudge-style manager's `Brain`
(`stonelab.protocols.gomocup_manager`): one process a game, ``START`` and the ``INFO`` lines
when it starts, ``BOARD ... DONE`` for its first move and ``TURN`` after. Unlike the
tournament manager it does not pause a brain between its moves (`Limits.pause`): a brain that
does not ponder (Rapfi by default) waits on its input meanwhile, off the CPU. A brain that
breaks the protocol, crashes, runs out of time or plays an illegal point stops the match with
one line naming it: a measurement against a faulty opponent is no measurement.

Strength at a fixed ``max_node`` (``INFO max_node``, which Rapfi honours) does not depend on
the machine's load; the clock (``timeout_turn``) is set generously so that it never decides.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from stonelab.errors import ConfigError, StonelabError, check
from stonelab.protocols.gomocup_manager import MIB, Brain, BrainLost, Limits
from stonelab.search import tree as T
from stonelab.search.game import ONGOING

# INFO lines `Brain` sends from the settings below; ``info`` may not repeat them.
MANAGED_INFO = ("timeout_turn", "timeout_match", "time_left", "max_memory", "game_type", "rule", "folder",
                "max_node")
_INFO_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class OpponentFailed(StonelabError):
    """The external brain broke the protocol, crashed, ran out of time or played an illegal point."""


@dataclass(frozen=True)
class GomocupOpponent:
    """How an external brain is run: the settings of ``conf/gomocup/*.yaml``."""

    command: str
    name: str | None = None        # in results and messages (None: the program's file name)
    max_node: int | None = None    # INFO max_node: nodes a move (None: the brain's own time control)
    timeout_turn: int = 60_000     # ms a move: generous, so that max_node sets the strength
    timeout_match: int = 3_600_000  # ms a game
    max_memory: int = 64           # MiB for INFO max_memory (Rapfi sizes its hash table to it)
    info: dict = field(default_factory=dict)  # further INFO lines, e.g. {thread_num: 1}

    @classmethod
    def from_config(cls, values, where: str = "gomocup") -> GomocupOpponent:
        """Checked settings from a config mapping; ``where`` is its key in messages."""
        values = dict(values or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"{where}.{unknown[0]} is not a setting of a Gomocup opponent "
                              f"(choose from {', '.join(sorted(known))})")
        if not values.get("command") or not isinstance(values["command"], str):
            raise ConfigError(f"{where}.command=... is required: the brain's command line "
                              f"(Rapfi: docs/evaluation.md#against-rapfi-and-other-gomocup-brains)")
        opponent = cls(**{**values, "info": dict(values.get("info") or {})})
        opponent.check(where)
        return opponent

    def check(self, where: str) -> None:
        whole = whole_number
        check([
            (lambda: self.max_node is None or (whole(self.max_node) and self.max_node >= 1),
             f"{where}.max_node={self.max_node!r} must be a whole number >= 1 (or null: the brain's own clock)"),
            (lambda: whole(self.timeout_turn) and self.timeout_turn >= 1,
             f"{where}.timeout_turn={self.timeout_turn!r} must be a whole number of ms >= 1"),
            (lambda: whole(self.timeout_match) and self.timeout_match >= 1,
             f"{where}.timeout_match={self.timeout_match!r} must be a whole number of ms >= 1"),
            (lambda: whole(self.max_memory) and self.max_memory >= 1,
             f"{where}.max_memory={self.max_memory!r} must be a whole number of MiB >= 1"),
        ])
        for key, value in self.info.items():
            if not _INFO_KEY.fullmatch(str(key)) or not re.fullmatch(r"[^\s]+", str(value)):
                raise ConfigError(f"{where}.info: {key}={value!r} cannot be an INFO line (a word and a value)")
            if str(key).lower() in MANAGED_INFO:
                raise ConfigError(f"{where}.info.{key}: set {where}.{key} instead" if hasattr(self, key)
                                  else f"{where}.info.{key}: the manager sends INFO {key} itself")
        self._check_program(where)

    def _check_program(self, where: str) -> None:
        try:
            words = shlex.split(self.command)
        except ValueError as exc:
            raise ConfigError(f"{where}.command={self.command!r} cannot be read: {exc}") from None
        program = words[0] if words else ""
        if shutil.which(program) is None:
            why = "is not executable" if os.path.isfile(program) else "does not exist (not a file, not on PATH)"
            raise ConfigError(f"{where}.command: {program!r} {why}; Rapfi is built with its build script, "
                              f"docs/evaluation.md#against-rapfi-and-other-gomocup-brains")

    @property
    def title(self) -> str:
        """The brain's name, or its program's file name."""
        return self.name or os.path.basename(shlex.split(self.command)[0])

    @property
    def label(self) -> str:
        """The brain and its budget, e.g. ``rapfi max_node 100``."""
        return f"{self.title} max_node {self.max_node}" if self.max_node else self.title

    def with_max_node(self, max_node: int) -> GomocupOpponent:
        opponent = GomocupOpponent(**{**asdict(self), "max_node": max_node})
        opponent.check("gomocup")
        return opponent

    def limits(self) -> Limits:
        # memory measured, not judged: INFO max_memory sizes the brain's hash table here, and
        # a brain's RSS (its code, its stack) is a little over it. Not paused between moves:
        # Rapfi, stopped just after printing its move, drops the next command (`Limits.pause`).
        return Limits(self.timeout_turn, self.timeout_match, self.max_memory * MIB, memory="none", pause=False)

    def info_lines(self) -> dict:
        return {**self.info, **({"max_node": self.max_node} if self.max_node else {})}


def whole_number(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # Hydra reads "true" as a bool


def plays_gomocup(rules) -> bool:
    """Whether a Gomocup brain plays this game: Gomoku, five in a row (freestyle, standard or renju)."""
    return getattr(rules, "k", None) == 5 and hasattr(rules, "rule")


def refuse_other_games(rules) -> None:
    if not plays_gomocup(rules):
        raise ConfigError(f"a Gomocup brain plays Gomoku, five in a row; this match is {rules.name}")


class GomocupPlayer:
    """`play_match`'s player interface (reset, choose, observe) over one brain process a game.

    ``folder``: the brains' ``INFO folder`` and their stderr (``gomocup_brain.stderr``).
    Call `close` when the match is over (or use ``with``): it ends the games' brains still running.
    """

    def __init__(self, rules, opponent: GomocupOpponent, folder: str):
        refuse_other_games(rules)
        self.rules, self.opponent, self.folder = rules, opponent, folder
        self.name = opponent.label
        self.game = rules.search_game()
        self.brains: list[Brain | None] = []
        self._stderr = None

    def reset(self, num_games: int) -> None:
        self.close()
        os.makedirs(self.folder, exist_ok=True)
        self.stderr_path = os.path.join(self.folder, "gomocup_brain.stderr")
        self._stderr = open(self.stderr_path, "a")  # noqa: SIM115 (closed by close())
        self.positions = self.game.new_positions(num_games)
        self.moves: list[list[int]] = [[] for _ in range(num_games)]
        self.brains = [None] * num_games

    def choose(self, games: np.ndarray) -> np.ndarray:
        return np.array([self._move(int(g)) for g in games], dtype=np.int64)

    def _move(self, g: int) -> int:
        question = self._question(g)
        try:
            point = self.brains[g].move(question)
        except BrainLost as lost:
            raise self._failure(g, f"{lost.reason}: {lost.detail}") from None
        reason = self.game.illegal_reason(self.positions, g, point)
        if reason is not None:
            raise self._failure(g, f"it played {point % self.rules.n},{point // self.rules.n}: {reason}")
        return point

    def _question(self, g: int) -> list[str]:
        """The brain's first move is asked with the whole board (its stones 1, the other's 2), later
        ones with the other side's last move; the brain starts when its first move is due."""
        n, moves = self.rules.n, self.moves[g]
        if self.brains[g] is None:
            self.brains[g] = Brain(self.opponent.command, n, self.rules.rule, self.opponent.limits(), self.folder,
                                   self._stderr, info=self.opponent.info_lines())
            mine = len(moves) % 2  # the brain's colour: 0 black, 1 white
            return ["BOARD", *(f"{p % n},{p // n},{1 if i % 2 == mine else 2}" for i, p in enumerate(moves)), "DONE"]
        return [f"TURN {moves[-1] % n},{moves[-1] // n}"]

    def observe(self, g: int, move: int) -> None:
        self.moves[g].append(move)
        if T.play_position(self.game.spec, self.positions, g, move) != ONGOING:
            self._end(g)  # the game is over: its brain goes now, not with the last game

    def _end(self, g: int) -> None:
        brain, self.brains[g] = self.brains[g], None
        if brain is not None:
            brain.close()

    def close(self) -> None:
        for g in range(len(self.brains)):
            self._end(g)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def __enter__(self) -> GomocupPlayer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _failure(self, g: int, what: str) -> OpponentFailed:
        """The error for a faulty brain, with the last line written to stderr (read before the other
        brains are ended and write their own); every brain is ended."""
        try:
            with open(self.stderr_path) as f:
                last = [line.strip() for line in f if line.strip()][-1:]
        except OSError:
            last = []
        self.close()
        said = f"; its stderr ends {last[0][:200]!r} ({self.stderr_path})" if last else ""
        return OpponentFailed(f"the Gomocup brain {self.opponent.command!r} failed in game {g + 1} at move "
                              f"{len(self.moves[g]) + 1}: {what}{said}")
