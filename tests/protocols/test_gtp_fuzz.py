"""The GTP engine under ~15,600 random lines: one well-formed answer each, never an exit.

Seeded, so a failure replays; a chooser that plays the lowest legal point, so no network.
The lines are commands from list_commands with plausible, garbage, unicode-digit, huge
and control-byte arguments, plus raw garbage; a real subprocess reads invalid UTF-8.
"""

from __future__ import annotations

import io
import os
import random
import re
import subprocess
import sys

import numpy as np

from stonelab.protocols.gtp import GTPEngine, move_name

N = 9
ODD_DIGITS = "²³٣٨５߃۵𝟓١٢"  # digits that str.isdigit (and float()) accept, int() does not or misreads
# "=" or "?", an optional id, optional text; more lines only if none is empty; then a blank line
RESPONSE = re.compile(r"([=?])([0-9]*)(?: [^\n]*)?(?:\n[^\n]+)*\n\n")
RESETS = ("clear_board", "boardsize", "loadsgf")  # commands that start the game over
GAME = "(;GM[1]FF[4]SZ[9]KM[6.5]HA[2]AB[cg][gc];W[ee];B[ef];W[fe];B[])"


def first_legal(states, histories):
    return [int(np.flatnonzero(state.legal_mask())[0]) for state in states]


def engine() -> GTPEngine:
    return GTPEngine(N, first_legal)


def number(rng: random.Random) -> str:
    """Mostly small, sometimes huge, zero-padded, signed or not ASCII."""
    kind = rng.random()
    if kind < 0.5:
        return str(rng.randint(0, 12))
    if kind < 0.6:
        return rng.choice("123456789") + "".join(rng.choices("0123456789", k=rng.randint(19, 6000)))
    if kind < 0.7:
        return "0" * rng.randint(1, 3000) + str(rng.randint(0, 9))
    if kind < 0.8:
        return rng.choice(["-1", "+3", "1.5", "1e3", "0x10", "1_0"])
    return "".join(rng.choices("0123456789" + ODD_DIGITS, k=rng.randint(1, 3)))


def vertex(rng: random.Random) -> str:
    if rng.random() < 0.85:
        word = move_name(rng.randrange(N * N + 1), N) if rng.random() < 0.9 else "pass"  # passes end games
        return word.lower() if rng.random() < 0.3 else word
    return rng.choice(["I5", "Z1", "A0", "A10", "T19", "E", "5E", "E٥", "Ｅ5", "E²", "PASS", "resign", ""])


def garbage(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.4:  # random bytes, as the forgiving stdin decodes them
        raw = bytes(rng.randrange(256) for _ in range(rng.randint(0, 30))).replace(b"\n", b"")
        return raw.decode("utf-8", "replace")
    if kind < 0.7:  # unicode that splits, folds or looks like digits and letters
        return "".join(rng.choices(ODD_DIGITS + "\u2028\x85\xa0\u200b\u212a\u017f\u0301\u202e#\t ", k=rng.randint(1, 8)))
    return rng.choice(["\x00", "\x1b[2J", "\x7f", "#", "  # only a comment", "\r", "\x0c\x0b"])


def real(rng: random.Random) -> str:
    return rng.choice(["6.5", "-0.5", "0", "nan", "inf", "-inf", "1e999", "1e-999", ".5", "5.", "٣.٥", "1_0"])


def argument(rng: random.Random) -> str:
    """Any argument: of some command, or garbage."""
    kind = rng.random()
    if kind < 0.25:
        return rng.choice(["b", "w", "black", "white", "B", "x", "bw"])
    if kind < 0.5:
        return vertex(rng)
    if kind < 0.65:
        return number(rng)
    if kind < 0.75:
        return real(rng)
    if kind < 0.85:
        return rng.choice(["alive", "dead", "seki", "game.sgf", "bad.sgf", "missing.sgf", "out.sgf", "."])
    return garbage(rng).replace("/", "_").replace("\\", "_")  # file arguments stay in the test's folder


def fitting(rng: random.Random, command: str) -> list[str]:
    """Arguments of the right kind for ``command`` (still often refused: occupied, too many...)."""
    small = str(rng.randint(0, 12))
    return {
        "play": lambda: [rng.choice("bw"), vertex(rng)],
        "genmove": lambda: [rng.choice("bw")],
        "boardsize": lambda: [rng.choice(["9", "19", number(rng)])],
        "komi": lambda: [real(rng)],
        "fixed_handicap": lambda: [small],
        "place_free_handicap": lambda: [small],
        "set_free_handicap": lambda: [vertex(rng) for _ in range(rng.randint(0, 6))],
        "loadsgf": lambda: [rng.choice(["game.sgf", "out.sgf", "bad.sgf", "missing.sgf"]), small][:rng.randint(1, 2)],
        "printsgf": lambda: ["out.sgf"][:rng.randint(0, 1)],
        "final_status_list": lambda: [rng.choice(["alive", "dead", "seki"])],
        "known_command": lambda: [rng.choice(["play", "frobnicate", "loadsgf"])],
    }.get(command, lambda: [])()


def command_line(rng: random.Random, commands: list[str]) -> str:
    kind = rng.random()
    if kind < 0.3:  # mostly real moves, so games get long, with captures and kos
        command = "play"
    elif kind < 0.4:
        command = "genmove"
    else:
        command = rng.choice(commands)
        if command in RESETS and rng.random() < 0.9:  # rarely: long games have captures and kos
            command = "showboard"
    if rng.random() < 0.7:
        args = fitting(rng, command)
    else:
        args = [argument(rng) for _ in range(rng.choice([0, 1, 1, 1, 2, 3]))]
    ident = rng.choice(["", "", "", str(rng.randint(0, 999)), "007", rng.choice(ODD_DIGITS)])
    comment = rng.choice(["", "", "", " # a comment", "#"])
    return " ".join(filter(None, [ident, command, *args])) + comment


def script(seed: int, size: int, commands: list[str]) -> list[str]:
    rng = random.Random(seed)
    lines: list[str] = []
    while len(lines) < size:
        if rng.random() < 0.003:  # a fresh board, so the handicap commands can work
            handicap = rng.choice(["fixed_handicap", "place_free_handicap", "set_free_handicap"])
            lines += ["clear_board", " ".join([handicap, *fitting(rng, handicap)])]
        else:
            lines.append(command_line(rng, commands) if rng.random() < 0.8 else garbage(rng))
    return lines[:size]


def words(line: str) -> list[str]:
    """The words GTP reads in ``line``: control characters and the comment dropped.
    A line without words (blank, comment only) gets no answer."""
    return re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "", line.split("#", 1)[0]).split()


def test_fifteen_thousand_random_lines_get_one_well_formed_answer_each(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # loadsgf and printsgf read and write here
    (tmp_path / "game.sgf").write_text(GAME)
    (tmp_path / "bad.sgf").write_text("(;SZ[9];B[aa")
    eng = engine()
    commands = sorted(set(eng.commands) - {"quit"})
    assert {"fixed_handicap", "loadsgf", "printsgf", "final_status_list"} <= set(commands)
    failures = 0
    for line in script(seed=20261201, size=15_600, commands=commands):
        reply = eng.respond(line)  # no exception may escape
        read = words(line)
        if not read:
            assert reply is None, (line, reply)
            continue
        assert reply is not None and RESPONSE.fullmatch(reply), (line[:80], reply[:200])
        assert reply.isascii() and "internal error" not in reply, (line[:80], reply[:200])
        ident = read[0] if read[0].isascii() and read[0].isdigit() else ""
        assert RESPONSE.fullmatch(reply)[2] == ident, (line[:80], reply[:80])  # the id comes back, only it
        failures += reply.startswith("?")
        assert eng.positions and not eng.finished
    assert 0.2 < failures / 15_600 < 0.9  # both kinds of answer were exercised
    # and the engine still plays after all that
    assert eng.respond("clear_board") == "=\n\n" and eng.respond("5 genmove b") == "=5 A9\n\n"


def test_the_real_stdin_takes_invalid_utf8_under_a_utf8_locale(repo_root):
    # LC_ALL=C.UTF-8 alone gives Python a surrogateescape stdin; PYTHONIOENCODING=utf-8:strict
    # is the strict reading that made the first bad byte kill the engine (UnicodeDecodeError)
    rng = random.Random(5)
    lines = [command_line(rng, ["name", "play", "showboard", "komi", "boardsize"]).encode()
             + bytes(rng.randrange(128, 256) for _ in range(rng.randint(0, 3))) for _ in range(150)]
    data = b"\n".join([b"1 name \xff", b"\xc3\x28 play", b"2 play b \xed\xa0\x80", *lines, b"3 quit", b"4 name"]) + b"\n"
    expected = io.StringIO()
    engine().run(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace"), expected)
    assert expected.getvalue().startswith("=1 stonelab\n\n? unknown command\n\n?2 invalid vertex '\\ufffd")
    program = ("from stonelab.protocols.gtp import GTPEngine\nimport numpy as np\n"
               "GTPEngine(9, lambda states, histories: [int(np.flatnonzero(s.legal_mask())[0]) for s in states]).run()")
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "PYTHONUTF8")}
    for extra in ({}, {"PYTHONIOENCODING": "utf-8:strict"}):
        proc = subprocess.run([sys.executable, "-c", program], cwd=repo_root, input=data, capture_output=True, timeout=120,
                              env={**base, "LC_ALL": "C.UTF-8", **extra})
        assert proc.returncode == 0 and proc.stderr == b"", proc.stderr.decode(errors="replace")[-2000:]
        assert proc.stdout.decode("ascii") == expected.getvalue()  # ends at quit: "4 name" is not read
        assert proc.stdout.endswith(b"=3\n\n")
