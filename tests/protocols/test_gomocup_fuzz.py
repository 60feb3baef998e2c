"""The Gomocup brain under thousands of random lines: it answers, never raises, never rambles.

Seeded, so a failure replays; a chooser that plays the lowest empty point, so no network.
"""

from __future__ import annotations

import io
import random
import re

import numpy as np

from stonelab.games.gomoku.rules import GomokuRules
from stonelab.protocols.gomocup import GomocupEngine

N = 15
COMMANDS = ("START", "RECTSTART", "RESTART", "BEGIN", "TURN", "BOARD", "TAKEBACK", "INFO", "ABOUT", "DONE")
ODD_DIGITS = "²³٣٨５߃۵𝟓"  # unicode digits that str.isdigit and \d accept
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
REPLY = re.compile(r"(OK|[0-9]+,[0-9]+|(ERROR|UNKNOWN|MESSAGE) .+|name=.*)")


def first_empty(moves: list[int], deadline: float | None = None) -> int:
    return min(set(range(N * N)) - set(moves))


def engine() -> GomocupEngine:
    return GomocupEngine(GomokuRules(N, 5), first_empty, about={"name": "fuzz"})


def number(rng: random.Random) -> str:
    """Mostly a plausible coordinate, sometimes negative, huge, zero-padded or not ASCII."""
    kind = rng.random()
    if kind < 0.6:
        return str(rng.randint(-2, N + 2))
    if kind < 0.7:
        return rng.choice("123456789") + "".join(rng.choices("0123456789", k=rng.randint(4300, 6000)))
    if kind < 0.8:
        return "0" * rng.randint(1, 5000) + str(rng.randint(0, N))
    return "".join(rng.choices("0123456789" + ODD_DIGITS, k=rng.randint(1, 3)))


def garbage(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.4:                                             # random bytes, as a forgiving stdin decodes them
        raw = bytes(rng.randrange(256) for _ in range(rng.randint(0, 40))).replace(b"\n", b"")
        return raw.decode("utf-8", "replace")
    if kind < 0.6:                                             # a valid-looking line, made very long
        return rng.choice(COMMANDS) + " " + rng.choice(" ,x1") * rng.randint(1000, 100_000)
    if kind < 0.8:                                             # blank, whitespace, NUL
        return rng.choice(["", " ", "\t \t", "\x00", "\x00\x00TURN 1,1", "   START\x00 15  "])
    return "".join(rng.choices("0123456789,- \t" + ODD_DIGITS, k=rng.randint(1, 12)))


def command(rng: random.Random, eng: GomocupEngine) -> list[str]:
    """A valid or nearly valid command (or a BOARD block, with or without DONE)."""
    word = rng.choice(COMMANDS)
    if rng.random() < 0.2:
        word = word.lower()
    if word.upper() == "BOARD":
        stones = [f"{number(rng)},{number(rng)},{rng.choice('12231')}" for _ in range(rng.randint(0, 8))]
        return [word, *stones, *(["DONE"] if rng.random() < 0.7 else [])]
    if word.upper() == "TAKEBACK" and eng.moves and rng.random() < 0.5:
        return [f"{word} {eng.coordinates(eng.moves[-1])}"]    # a real takeback
    args = {"START": lambda: rng.choice([str(N), str(N), number(rng)]),
            "RECTSTART": lambda: f"{number(rng)},{number(rng)}",
            "TURN": lambda: f"{number(rng)},{number(rng)}" + rng.choice(["", "", ",3", " x"]),
            "TAKEBACK": lambda: f"{number(rng)},{number(rng)}",
            "INFO": lambda: rng.choice(["timeout_turn", "time_left", "rule", "max_memory", "folder", ""])
            + " " + number(rng)}.get(word.upper(), lambda: "")
    return [f"{word} {args()}".rstrip()]


def script(seed: int, size: int) -> list[str]:
    rng = random.Random(seed)
    eng = engine()                                             # only to pick real TAKEBACKs now and then
    lines: list[str] = []
    while len(lines) < size:
        new = command(rng, eng) if rng.random() < 0.6 else [garbage(rng)]
        for line in new:
            eng.respond(line)
        lines += new
    return lines


def replies_expected(line: str, in_board: bool) -> tuple[int, int]:
    """(least, most) reply lines the protocol allows for ``line``."""
    words = CONTROL.sub("", line).split(maxsplit=1)
    word = words[0].upper() if words and words[0].isascii() else (words[0] if words else "")
    if in_board:
        if word == "INFO":
            return 0, 1
        return (1, 1) if word in COMMANDS else (0, 0)          # a stone line waits for DONE
    if not word:
        return 0, 0
    return (0, 1) if word in ("INFO", "BOARD") else (1, 1)


def test_thousands_of_random_lines_get_short_sane_replies():
    eng = engine()
    lines = script(seed=20240601, size=4000)
    for line in lines:
        in_board = eng.board_lines is not None
        reply = eng.respond(line)                              # no exception may escape
        least, most = replies_expected(line, in_board)
        count = 0 if reply is None else 1
        assert least <= count <= most, (line[:80], reply)
        if reply is not None:
            assert "\n" not in reply and "\r" not in reply and len(reply) <= 200, reply[:300]
            assert REPLY.fullmatch(reply) and "internal error" not in reply, reply
        # the game the engine tracks is always a real one
        assert np.count_nonzero(eng.board) == len(eng.moves) == len(set(eng.moves))
        assert eng.board_lines is None or len(eng.board_lines) <= N * N + 1
    # and the brain still plays after all that
    assert eng.respond("DONE") in (None, "ERROR DONE without BOARD") or eng.board_lines is None
    assert eng.respond("START 15") == "OK" and eng.respond("BEGIN") == "0,0"
    assert eng.respond("TURN 7,7") == "1,0" and eng.moves == [0, 112, 1]


def test_run_answers_the_same_stream_line_for_line(monkeypatch):
    # INFO max_memory's warning names the process's memory, which moves between the two readings
    monkeypatch.setattr(GomocupEngine, "resident_bytes", staticmethod(lambda: 200 * 2**20))
    # run() over the whole stream as one text says what respond() said line by line, and
    # stops at END, inside a BOARD block or not
    lines = script(seed=7, size=2000)
    replay = engine()
    expected = [reply for reply in map(replay.respond, lines) if reply is not None]
    out = io.StringIO()
    eng = engine()
    eng.run(io.StringIO("\n".join(lines) + "\nEND\nSTART 15\n"), out)
    assert out.getvalue().splitlines() == expected
    assert eng.finished and eng.moves == replay.moves
