"""What every text protocol engine here (GTP, Gomocup) needs from its stdin and stdout.

An engine is driven by a GUI or a referee that may send anything: a stray byte under a
strict UTF-8 locale, a 100,000-character line, "²" where a number belongs. These helpers
read and echo such input without raising, so one bad line gets one refusal and the
engine goes on.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import TextIO

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # dropped from input lines (tab and newline kept)
MAX_DIGITS = 18       # int() of 4,300+ digits raises; no size, count, id or time needs more
MAX_LINE = 1_000_000  # characters: no protocol line comes near, and a stream without newlines
                      # must not fill the memory


def shown(text: str, limit: int = 40) -> str:
    """``text`` to echo in a reply: quoted, ASCII-escaped (no newline or odd byte reaches the
    controller) and cut after ``limit`` characters (a 100,000-character line is not sent back)."""
    quoted = ascii(text.strip())
    return quoted if len(quoted) <= limit + 2 else quoted[:limit + 1] + "..."


def is_ascii_number(word: str) -> bool:
    """Whether ``word`` is ASCII digits only: str.isdigit and \\d also take "²" or "٣",
    which int() then refuses or reads as another number."""
    return word.isascii() and word.isdigit()


def forgiving(stream: TextIO, **settings) -> TextIO:
    """A real std stream set to replace, not raise on, a bad byte: under a strict locale one
    stray byte would kill the engine. Other streams (a test's StringIO) are left as they are."""
    if hasattr(stream, "reconfigure"):
        stream.reconfigure(**settings)
    return stream


def protocol_streams(stdin: TextIO | None, stdout: TextIO | None) -> tuple[TextIO | None, TextIO]:
    """The given streams, or where one is None the real one: stdin read as UTF-8 with bad
    bytes as U+FFFD and stdout writing '?' for what its encoding cannot hold, whatever the
    locale. The stdin returned is None when the process was started with fd 0 closed."""
    if stdin is None:
        stdin = forgiving(sys.stdin, encoding="utf-8", errors="replace") if sys.stdin is not None else None
    if stdout is None:
        stdout = forgiving(sys.stdout, errors="replace")
    return stdin, stdout


def input_lines(stdin, limit: int = MAX_LINE) -> Iterator[str | bytes | None]:
    """The lines of ``stdin`` (text, or bytes from a binary stream); None for one over
    ``limit`` characters (bytes), whose rest is skipped."""
    while line := stdin.readline(limit):
        newline = b"\n" if isinstance(line, bytes) else "\n"
        if len(line) < limit or line.endswith(newline):
            yield line
            continue
        while line and not line.endswith(newline):
            line = stdin.readline(limit)
        yield None
