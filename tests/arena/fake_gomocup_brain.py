"""A tiny Gomocup brain for tests: ``python fake_gomocup_brain.py [THRESHOLD] [FAULT]``.

Honours ``INFO max_node``: at THRESHOLD nodes or more (default 10) it plays well enough to beat
a player that fills the board from the top-left point on (its own five if it has one, else a
block of the other side's five, else the point that makes its longest line); below it, it
plays a spread-out pattern from the bottom-right corner that never makes a line and never
blocks. FAULT makes it misbehave on its first move: ``crash`` (exit 3 after a line on stderr),
``garbage`` (a line that is no move), ``occupied`` (a taken point), ``slow`` (no answer for 30 s).
Every line it reads goes to stderr, so a test can see what the manager sent.
"""

import sys
import time

threshold = int(sys.argv[1]) if len(sys.argv) > 1 else 10
fault = sys.argv[2] if len(sys.argv) > 2 else None
n, max_node, board, mine, collecting = 15, 0, {}, 1, False
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def line_through(point: int, colour: int) -> int:
    """The longest line of ``colour`` through ``point`` were it played there."""
    r, c = divmod(point, n)
    best = 0
    for dr, dc in DIRECTIONS:
        count = 1
        for sign in (1, -1):
            rr, cc = r + sign * dr, c + sign * dc
            while 0 <= rr < n and 0 <= cc < n and board.get(rr * n + cc) == colour:
                count += 1
                rr, cc = rr + sign * dr, cc + sign * dc
        best = max(best, count)
    return best


def strong_move(empty: list[int]) -> int:
    for colour in (mine, 3 - mine):  # win, else block
        for point in empty:
            if line_through(point, colour) >= 5:
                return point
    return max(empty, key=lambda p: (line_through(p, mine), p))


def weak_move(empty: list[int]) -> int:
    pattern = [r * n + c for r in range(n - 1, -1, -2) for c in range(n - 1, -1, -2)]
    return next((p for p in pattern if p not in board), empty[0])


def reply() -> None:
    if fault == "crash":
        print("fake brain: crashing on purpose", file=sys.stderr, flush=True)
        sys.exit(3)
    if fault == "garbage":
        print("hello there", flush=True)
        return
    if fault == "slow":
        time.sleep(30)
    empty = [p for p in range(n * n) if p not in board]
    point = next(iter(board)) if fault == "occupied" else (
        strong_move(empty) if max_node >= threshold else weak_move(empty))
    board[point] = mine
    print(f"{point % n},{point // n}", flush=True)


for raw in sys.stdin:
    line = raw.strip()
    print(line, file=sys.stderr, flush=True)
    word = line.split(" ")[0].upper()
    if word == "START":
        n = int(line.split()[1])
        print("OK", flush=True)
    elif word == "INFO" and line.split()[1].lower() == "max_node":
        max_node = int(line.split()[2])
    elif word == "BOARD":
        collecting = True
    elif word == "DONE":
        collecting = False
        reply()
    elif collecting:
        x, y, who = (int(v) for v in line.split(","))
        board[y * n + x] = 1 if who == 1 else 2
    elif word == "TURN":
        x, y = (int(v) for v in line.split()[1].split(","))
        board[y * n + x] = 3 - mine
        reply()
    elif word == "END":
        break
