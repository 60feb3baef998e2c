"""Exact values of small freestyle boards (at most 36 points): who wins with perfect play.

    python -m stonelab.games.gomoku.solver 6 4        # 6x6, four in a row: the value, the winning first moves

A negamax with alpha-beta over the values win (+1), draw (0) and loss (-1) for the side to move,
with a transposition table, on bitboards (one int64 per colour). Three rules keep it exact and
small: a player with a point that completes a line wins at once; a player facing two such points
of the opponent's loses; facing one, that point is the only move worth searching (any other loses
at once). Other moves are ordered by how many open lines they extend for either side.

Used as a yardstick no net was trained against: `SolverPlayer` is a perfect opponent for
``task=match opponent=solver`` (6x6 four in a row, the default job's game), and `audit` replays
recorded games and marks every move that changed the game's value.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from numba import njit

from stonelab.errors import ConfigError, StonelabError
from stonelab.games.gomoku.rules import FREESTYLE, RULE_NAMES, GomokuRules
from stonelab.games.gomoku.tactics import proven_moves

MAX_POINTS = 36  # 6x6: solved in seconds; 7x7 boards are out of this search's reach
EMPTY_ENTRY = -1
EXACT, LOWER, UPPER = 0, 1, 2  # what a table entry's value is: exact, a lower or an upper bound
VALUE_NAMES = {1: "win", 0: "draw", -1: "loss"}


def line_masks(n: int, k: int) -> np.ndarray:
    """int64 [L]: one bit mask per line of k points on the n x n board (rows, columns, diagonals)."""
    masks = []
    for r in range(n):
        for c in range(n):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + i * dr, c + i * dc) for i in range(k)]
                if all(0 <= a < n and 0 <= b < n for a, b in cells):
                    masks.append(sum(1 << (a * n + b) for a, b in cells))
    return np.array(masks, dtype=np.int64)


@njit(cache=True, nogil=True)
def _bits(x):
    count = 0
    while x:
        x &= x - 1
        count += 1
    return count


@njit(cache=True, nogil=True)
def completing_points(own, opp, lines, k):
    """Bit mask of the empty points that complete a line of ``own`` (k - 1 own stones, no opponent's)."""
    out = np.int64(0)
    taken = own | opp
    for i in range(lines.shape[0]):
        m = lines[i]
        if (m & opp) == 0 and _bits(m & own) == k - 1:
            out |= m & ~taken
    return out


@njit(cache=True, nogil=True)
def _slot(own, opp, size):
    h = own * np.int64(-7046029254386353131) ^ opp * np.int64(-4417276706812531889)
    h ^= (h >> np.int64(31)) & np.int64(0x1FFFFFFFF)
    return h & (size - 1)


@njit(cache=True, nogil=True)
def _move_scores(own, opp, lines, points, moves, scores):
    """The empty points into ``moves`` and how many open lines each extends for either side (more
    for longer ones) into ``scores``; returns their count."""
    taken = own | opp
    count = 0
    for p in range(points):
        bit = np.int64(1) << p
        if taken & bit:
            continue
        score = 0
        for i in range(lines.shape[0]):
            m = lines[i]
            if m & bit:
                if (m & opp) == 0:
                    c = _bits(m & own)
                    score += 1 + 4 * c * c
                if (m & own) == 0:
                    c = _bits(m & opp)
                    score += 1 + 3 * c * c
        moves[count] = p
        scores[count] = score
        count += 1
    return count


@njit(cache=True, nogil=True)
def _ordered_moves(own, opp, lines, points, moves):
    """The empty points into ``moves``, best first by `_move_scores`; returns their count."""
    scores = np.empty(points, dtype=np.int64)
    count = _move_scores(own, opp, lines, points, moves, scores)
    order = np.argsort(-scores[:count], kind="mergesort")
    ordered = moves[:count][order].copy()
    moves[:count] = ordered
    return count


@njit(cache=True, nogil=True)
def negamax(own, opp, alpha, beta, lines, k, points, table_own, table_opp, table_entry, nodes):
    """The value for the side to move (own stones ``own``), +1 win, 0 draw, -1 loss, exact when it
    lies inside (alpha, beta), else a bound on the right side. ``nodes[0]`` counts the positions."""
    nodes[0] += 1
    if completing_points(own, opp, lines, k) != 0:
        return 1
    threats = completing_points(opp, own, lines, k)
    if threats != 0:
        if _bits(threats) >= 2:
            return -1
        return -negamax(opp, own | threats, -beta, -alpha, lines, k, points, table_own, table_opp, table_entry, nodes)
    full = (np.int64(1) << points) - 1 if points < 63 else np.int64(-1)
    if (own | opp) == full:
        return 0
    slot = _slot(own, opp, table_entry.shape[0])
    entry = table_entry[slot]
    if entry != EMPTY_ENTRY and table_own[slot] == own and table_opp[slot] == opp:
        value, kind = entry // 3 - 1, entry % 3
        if kind == EXACT or (kind == LOWER and value >= beta) or (kind == UPPER and value <= alpha):
            return value
        if kind == LOWER:
            alpha = max(alpha, value)
        else:
            beta = min(beta, value)
    first_alpha = alpha
    moves = np.empty(points, dtype=np.int64)
    count = _ordered_moves(own, opp, lines, points, moves)
    best = -2
    for i in range(count):
        value = -negamax(opp, own | (np.int64(1) << moves[i]), -beta, -alpha, lines, k, points,
                         table_own, table_opp, table_entry, nodes)
        if value > best:
            best = value
            if value > alpha:
                alpha = value
                if alpha >= beta:
                    break
    kind = UPPER if best <= first_alpha else LOWER if best >= beta else EXACT
    table_own[slot], table_opp[slot], table_entry[slot] = own, opp, (best + 1) * 3 + kind
    return best


class Solver:
    """Perfect play on a freestyle Gomoku board of at most `MAX_POINTS` points. The transposition
    table (2**table_bits entries, 24 bytes each) is kept between calls: later positions of the
    same games are answered from it."""

    def __init__(self, rules: GomokuRules, table_bits: int = 22):
        if rules.rule != FREESTYLE:
            raise ConfigError(f"the solver plays freestyle rules only (a line of k or more wins); "
                              f"this board is {RULE_NAMES[rules.rule]}")
        if not isinstance(table_bits, int) or not 10 <= table_bits <= 28:
            raise ConfigError(f"table_bits={table_bits!r} must be 10..28 (a table of 2**bits entries, 24 bytes each)")
        if rules.n * rules.n > MAX_POINTS:
            raise ConfigError(f"the solver reaches boards of at most {MAX_POINTS} points (6x6); "
                              f"this one is {rules.n}x{rules.n}")
        self.rules, self.n, self.k, self.points = rules, rules.n, rules.k, rules.n * rules.n
        self.lines = line_masks(rules.n, rules.k)
        size = 1 << table_bits
        self.table_own = np.zeros(size, dtype=np.int64)
        self.table_opp = np.zeros(size, dtype=np.int64)
        self.table_entry = np.full(size, EMPTY_ENTRY, dtype=np.int64)
        self.nodes = np.zeros(1, dtype=np.int64)

    def masks(self, board: np.ndarray) -> tuple[int, int, int]:
        """(the mover's stones, the other's, the mover's colour) of ``board`` (+1 black, -1 white,
        0 empty; black moves first, so the counts say whose turn it is)."""
        black = white = 0
        for p in np.flatnonzero(board == 1):
            black |= 1 << int(p)
        for p in np.flatnonzero(board == -1):
            white |= 1 << int(p)
        if int((board == 1).sum()) == int((board == -1).sum()):
            return black, white, 1
        return white, black, -1

    def value(self, board: np.ndarray) -> int:
        """+1, 0 or -1: the side to move's result with perfect play from ``board``."""
        own, opp, _ = self.masks(board)
        if self.has_line(own) or self.has_line(opp):
            raise StonelabError("this position is already won: a line of k stands on the board")
        return int(negamax(np.int64(own), np.int64(opp), -1, 1, self.lines, self.k, self.points,
                           self.table_own, self.table_opp, self.table_entry, self.nodes))

    def has_line(self, stones: int) -> bool:
        return any((int(m) & stones) == int(m) for m in self.lines)

    def best_move(self, board: np.ndarray, rng: np.random.Generator) -> tuple[int, int]:
        """(a move keeping the mover's best value, that value). Moves are tried in the search's
        order with ties broken at random, each only against the best value found so far (a
        narrowing window), so this costs about one search of ``board``'s value."""
        own, opp, _ = self.masks(board)
        moves, scores = np.empty(self.points, dtype=np.int64), np.empty(self.points, dtype=np.int64)
        count = _move_scores(np.int64(own), np.int64(opp), self.lines, self.points, moves, scores)
        order = moves[:count][np.lexsort((rng.random(count), -scores[:count]))]  # the search's order, ties shuffled
        best, best_value, alpha = -1, -2, -1
        for p in order:
            value = self._value_after(own, opp, int(p), alpha)
            if value > best_value:
                best, best_value, alpha = int(p), value, max(alpha, value)
                if value == 1:
                    break
        return best, best_value

    def _value_after(self, own: int, opp: int, point: int, alpha: int = -1) -> int:
        """The mover's result after playing ``point``: exact when above ``alpha``, else at most alpha."""
        after = own | (1 << point)
        if self.has_line(after):
            return 1
        if (after | opp) == (1 << self.points) - 1:
            return 0  # the last point, no line: a draw
        return -int(negamax(np.int64(opp), np.int64(after), -1, -alpha, self.lines, self.k, self.points,
                            self.table_own, self.table_opp, self.table_entry, self.nodes))

    def move_values(self, board: np.ndarray) -> np.ndarray:
        """int64 [n * n]: the mover's result with perfect play after each move (+1, 0, -1); -2 on
        occupied points."""
        own, opp, _ = self.masks(board)
        out = np.full(self.points, -2, dtype=np.int64)
        for p in np.flatnonzero(board == 0):
            out[p] = self._value_after(own, opp, int(p))
        return out


class SolverPlayer:
    """A perfect player (`Solver`) for `stonelab.arena.players.play_match`: it keeps the best
    value it can. Among moves of equal value it picks at random (``seed``); when every move
    loses, it picks among those an exact 7-ply proof says lose latest, so a loss comes as late
    as it can see."""

    def __init__(self, rules: GomokuRules, seed: int = 0, table_bits: int = 22):
        self.solver = Solver(rules, table_bits)
        self.rules, self.seed, self.name = rules, seed, "solver"
        self.searches_itself = True  # task=match: "its own search" (exact, to the end of the game)

    def reset(self, num_games: int) -> None:
        self.boards = np.zeros((num_games, self.solver.points), dtype=np.int8)
        self.colours = np.ones(num_games, dtype=np.int64)
        self.rng = np.random.default_rng(self.seed)

    def observe(self, g: int, move: int) -> None:
        self.boards[g, move] = self.colours[g]
        self.colours[g] = -self.colours[g]

    def choose(self, games: np.ndarray) -> np.ndarray:
        return np.array([self._move(int(g)) for g in games], dtype=np.int64)

    def _move(self, g: int) -> int:
        board = self.boards[g]
        move, value = self.solver.best_move(board, self.rng)
        if value == -1:  # every move loses: put the loss off as long as a 7-ply proof sees
            latest = np.zeros(self.solver.points, dtype=np.bool_)
            proven_moves(board.copy(), self.solver.n, self.solver.k, int(self.colours[g]), 7, latest)
            return int(self.rng.choice(np.flatnonzero(latest)))
        return move


def audit(rules: GomokuRules, moves: list[int], solver: Solver | None = None) -> list[dict]:
    """Each move of a game from the empty board: who played it, the mover's value before it and
    after it (perfect play from there on); a move whose value after is below its value before
    gave something away. One search a move: the value before a move is minus the one after the last."""
    solver = solver or Solver(rules)
    board = np.zeros(rules.n * rules.n, dtype=np.int8)
    out, colour = [], 1
    before = solver.value(board)
    for ply, move in enumerate(moves):
        if not (isinstance(move, int) and 0 <= move < board.size and board[move] == 0):
            raise StonelabError(f"move {ply + 1} ({move!r}) is not an empty point of the "
                                f"{rules.n}x{rules.n} board: not a game of this board")
        board[move] = colour
        if solver.has_line(sum(1 << int(p) for p in np.flatnonzero(board == colour))):
            after = 1
        elif not (board == 0).any():
            after = 0
        else:
            after = -solver.value(board)
        out.append({"colour": colour, "move": int(move), "before": before, "after": after})
        before, colour = -after, -colour
    return out


def audit_match(rules: GomokuRules, records: list[dict], solver: Solver | None = None) -> dict:
    """Over the games of a match.json (``game_records``): per side (the player, its opponent) the
    moves that gave value away, and the games the opponent played without one (so nothing the
    player could do would have changed their value from the start)."""
    solver = solver or Solver(rules)
    summary = {"games": len(records), "player_errors": 0, "opponent_errors": 0, "player_moves": 0,
               "opponent_moves": 0, "games_opponent_perfect": {"black": 0, "white": 0}, "per_game": []}
    for record in records:
        player = record["player_colour"]
        errors = {"player": [], "opponent": []}
        for ply, step in enumerate(audit(rules, record["moves"], solver)):
            side = "player" if step["colour"] == player else "opponent"
            summary[f"{side}_moves"] += 1
            if step["after"] < step["before"]:
                errors[side].append(ply)
        summary["player_errors"] += len(errors["player"])
        summary["opponent_errors"] += len(errors["opponent"])
        if not errors["opponent"]:
            summary["games_opponent_perfect"]["black" if player == 1 else "white"] += 1
        summary["per_game"].append({"player_colour": player, "result": record["result"],
                                    "player_error_plies": errors["player"],
                                    "opponent_error_plies": errors["opponent"]})
    return summary


def perfect_against_pure_mcts(rules: GomokuRules, playouts: int, games: int, seed: int, table_bits: int,
                              out: str | None = None) -> int:
    """Print what the perfect player scores against pure MCTS (the bar a net's match is held to)."""
    from stonelab.arena.players import play_match, pure_mcts_player
    from stonelab.eval_tasks.match import by_colour

    records: list[dict] = []
    result = play_match(rules, SolverPlayer(rules, seed, table_bits), pure_mcts_player(rules, playouts, seed=seed),
                        games, games_out=records)
    colours = by_colour(records)
    print(f"the perfect player vs pure_mcts_{playouts}, {rules.n}x{rules.n} {rules.k} in a row: {result}; "
          + ", ".join(f"as {c} {v['wins']}-{v['draws']}-{v['losses']}" for c, v in colours.items()))
    if out:
        with open(out, "w") as f:
            json.dump({"opponent": f"pure_mcts_{playouts}", "win_ratio": result.win_ratio, **colours,
                       "game_records": records}, f, indent=1)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("board_size", type=int)
    parser.add_argument("win_length", type=int)
    parser.add_argument("--audit", metavar="MATCH_JSON", help="a task=match result: mark every move that gave value away")
    parser.add_argument("--pure-mcts", type=int, metavar="PLAYOUTS",
                        help="play the perfect player against pure MCTS of PLAYOUTS a move (--games, both colours)")
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--out", metavar="JSON", help="with --pure-mcts: write the games there (as task=match's game_records)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--first-moves", action="store_true", help="every first move's value (6x6: hours)")
    parser.add_argument("--table-bits", type=int, default=24, help="a transposition table of 2**BITS entries (24 B each)")
    args = parser.parse_args(argv)
    try:
        rules = GomokuRules(args.board_size, args.win_length)
        solver = Solver(rules, args.table_bits)
        if args.audit:
            with open(args.audit) as f:
                records = json.load(f).get("game_records")
            if not isinstance(records, list):
                raise StonelabError(f"{args.audit}: no game_records (a task=match result's match.json holds them)")
            print(json.dumps(audit_match(rules, records, solver), indent=1))
            return 0
        if args.pure_mcts:
            return perfect_against_pure_mcts(rules, args.pure_mcts, args.games, args.seed, args.table_bits, args.out)
        empty = np.zeros(rules.n * rules.n, dtype=np.int8)
        start = time.perf_counter()
        value = solver.value(empty)
        seconds = time.perf_counter() - start
        first = solver.move_values(empty) if args.first_moves else None
    except (StonelabError, OSError, KeyError, TypeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    n = rules.n
    print(f"{n}x{n}, {rules.k} in a row, freestyle: the first player's {VALUE_NAMES[value]} with perfect play "
          f"({int(solver.nodes[0]):,} positions searched, {seconds:.0f} s)")
    if first is None:
        move, _ = solver.best_move(empty, np.random.default_rng(0))
        print(f"a first move that keeps it: ({move // n},{move % n}) (row, column from the top left; "
              f"--first-moves: every first move's value)")
        return 0
    for name, v in (("win", 1), ("draw", 0), ("lose", -1)):  # (row, column) from the top left
        points = [f"({p // n},{p % n})" for p in np.flatnonzero(first == v)]
        print(f"first moves that {name}: {' '.join(points) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
