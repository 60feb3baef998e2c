"""SGF ingest: Go game records from files, folders, globs and u-go.net tar archives.

Parsing is sgfmill's (its tokeniser, grammar and property interpreters); this module
only decides what a game record is, which games to keep, and why the others are
skipped. Every skipped game is counted under one reason in ``SKIP_REASONS``; nothing
is dropped silently.

Point convention (the same as ``stonelab.games``): a point is ``row * n + col`` with
row 0 the *top* row as an SGF file draws it, so SGF ``aa`` is point 0 and SGF ``sa``
on 19x19 is point 18. (sgfmill's own ``(row, col)`` has row 0 at the bottom; it is
converted here as ``point = (n - 1 - row) * n + col``.) A pass is ``n * n``; colours
are +1 black, -1 white.

Writing: `game_sgf` turns one game back into SGF text (GTP's ``printsgf``).

Command line: ``python -m stonelab.data.sgf PATHS... [--json] [--board-size N]``
reports per file (per archive member) whether it loaded, why not, and how many
games and moves it gave, then the skip counts per reason.
"""

from __future__ import annotations

import argparse
import codecs
import glob
import importlib
import json
import math
import re
import tarfile
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import NamedTuple

import numpy as np
from sgfmill import sgf_grammar, sgf_properties

from stonelab.errors import StonelabError

BLACK = 1
WHITE = -1
MIN_BOARD = 9
MAX_BOARD = 19

# Why a game (or a whole file) was not loaded. One count per game; a file that yields
# no game at all (empty, unparsable) counts once.
SKIP_REASONS = (
    "empty_file",  # no bytes but whitespace
    "parse_error",  # not SGF, truncated, or broken brackets (sgfmill's parser says why)
    "not_go",  # GM[] other than 1
    "board_size",  # SZ outside 9..19, not a number, or not the size the caller asked for
    "bad_coordinate",  # a move or setup point off the board or malformed
    "setup_in_main_line",  # AB/AW/AE after the root: not a plain game record
    "no_moves",  # not a single B or W move in the main line
    "illegal_move",  # occupied point, suicide or ko when replayed (see first_illegal_move)
)

SGF_SUFFIXES = (".sgf",)
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".tar")

_GAME_START = re.compile(rb"\(\s*;")
_RANK = re.compile(r"\s*(\d+)\s*([dDpPkK])")
_PRESENTERS: dict[int, sgf_properties.Presenter] = {}
_MOVE_PAIRS: dict[int, tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]] = {}


@dataclass(frozen=True, slots=True)
class GameRecord:
    """One game's main line, ready to replay.

    Points are row-major with row 0 the top row (SGF ``aa`` is 0); pass is
    ``board_size ** 2``; colours are +1 black, -1 white.

    setup_black, setup_white: sorted points of the root's AB / AW stones (handicap).
    moves: ``(colour, point)`` per move in order, passes included. Two moves of the
        same colour in a row are kept as they are (KGS has them after handicap).
    first_player: PL if the root gives it, else the colour of the first move.
    black_rank, white_rank: BR / WR as written ("6d", "2k", "" if missing);
        rank_black_dan, rank_white_dan: 1..9 for "Nd", 9 for any "Np", else 0.
    result: RE as written; winner: +1 / -1 from "B+..." / "W+...", 0 otherwise
        (draw, jigo, void, unknown, missing).
    source: file (or ``archive/member``) plus ``#k``, the game's index in that file.
    """

    board_size: int
    komi: float
    handicap: int
    setup_black: tuple[int, ...]
    setup_white: tuple[int, ...]
    moves: tuple[tuple[int, int], ...]
    first_player: int
    black_rank: str
    white_rank: str
    rank_black_dan: int
    rank_white_dan: int
    result: str
    winner: int
    source: str
    black_player: str = ""
    white_player: str = ""

    @property
    def pass_move(self) -> int:
        return self.board_size * self.board_size


@dataclass(frozen=True, slots=True)
class Skip:
    """A game (or a whole file) that was not loaded, with its reason from SKIP_REASONS."""

    source: str
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class FileResult:
    """What one file (or one archive member) gave: its games and its skips."""

    file: str
    games: tuple[GameRecord, ...]
    skips: tuple[Skip, ...]

    @property
    def action(self) -> str:
        return "load" if self.games else "skip"

    @property
    def reason(self) -> str | None:
        """None when the file loaded; else the most common skip reason in it."""
        if self.games or not self.skips:
            return None
        return Counter(s.reason for s in self.skips).most_common(1)[0][0]

    @property
    def moves(self) -> int:
        """Moves in the loaded games, passes included."""
        return sum(len(g.moves) for g in self.games)

    def to_json(self) -> dict:
        first = next((s for s in self.skips if s.reason == self.reason), None)
        return {
            "file": self.file,
            "action": self.action,
            "reason": self.reason,
            "games": len(self.games),
            "moves": self.moves,
            "skipped": dict(Counter(s.reason for s in self.skips)),
            "detail": first.detail if first else None,
        }


class LoadResult(NamedTuple):
    """``games, skipped, files = load_games(paths)``."""

    games: list[GameRecord]
    skipped: Counter  # reason -> games skipped
    files: list[FileResult]


@dataclass
class SkipCounts:
    """Running totals over many files; ``add`` one FileResult at a time."""

    files: int = 0
    games: int = 0
    moves: int = 0
    skipped: Counter = field(default_factory=Counter)

    def add(self, result: FileResult) -> None:
        self.files += 1
        self.games += len(result.games)
        self.moves += result.moves
        self.skipped.update(s.reason for s in result.skips)

    def merge(self, other: SkipCounts) -> None:
        """Add the totals of ``other`` (counted over other files, e.g. in a worker process)."""
        self.files += other.files
        self.games += other.games
        self.moves += other.moves
        self.skipped.update(other.skipped)

    def as_dict(self) -> dict:
        return {
            "files": self.files,
            "games": self.games,
            "moves": self.moves,
            "skipped": {r: self.skipped.get(r, 0) for r in SKIP_REASONS},
        }


class _SkipGame(Exception):
    def __init__(self, reason: str, detail: str = ""):
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail


# ---------------------------------------------------------------------------------------
# Where the bytes come from


def _is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def _is_sgf(name: str) -> bool:
    return name.lower().endswith(SGF_SUFFIXES)


def _resolve(paths) -> list[Path]:
    """Every named file, folder, or glob match; a missing path is a StonelabError."""
    if isinstance(paths, str | PathLike):
        paths = [paths]
    resolved = []
    for raw in paths:
        path = Path(raw)
        if path.exists():
            resolved.append(path)
        elif glob.has_magic(str(raw)):
            matches = sorted(glob.glob(str(raw), recursive=True))
            if not matches:
                raise StonelabError(f"{raw}: no file matches this pattern")
            resolved.extend(Path(m) for m in matches)
        else:
            raise StonelabError(f"{raw}: no such file or folder")
    return resolved


def _archive_members(path: Path) -> list[tuple[str, bytes]]:
    """The archive's .sgf members, read by streaming (nothing written to disk).

    The members come back sorted by name, so a whole archive's SGF bytes are in memory
    at once (tens of MB for the largest u-go.net year).
    """
    members = []
    try:
        with tarfile.open(path, mode="r|*") as tar:
            for member in tar:
                if member.isfile() and _is_sgf(member.name):
                    handle = tar.extractfile(member)
                    members.append((f"{path}/{member.name}", handle.read()))
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise StonelabError(f"{path}: cannot read this archive ({exc or type(exc).__name__})") from exc
    members.sort(key=lambda item: item[0])
    return members


def iter_sources(paths) -> Iterator[tuple[str, bytes]]:
    """``(source_name, bytes)`` per SGF file or archive member, in a fixed order.

    paths: files (.sgf, or any name given explicitly), folders (searched recursively
    for .sgf files and archives, sorted), globs, and tar archives (.tar.gz, .tgz,
    .tar.bz2, ...; members ending .sgf, sorted by name, named ``archive/member``).
    All paths are checked before anything is read: a missing one raises StonelabError.
    """
    for path in iter_source_files(paths):
        yield from _file_sources(path)


def iter_source_files(paths) -> Iterator[Path]:
    """The files (SGF or archive) that `iter_sources` reads, in the same order."""
    for path in _resolve(paths):
        if path.is_dir():
            yield from sorted(
                p for p in path.rglob("*") if p.is_file() and (_is_sgf(p.name) or _is_archive(p.name))
            )
        else:
            yield path


def _file_sources(path: Path) -> Iterator[tuple[str, bytes]]:
    if _is_archive(path.name):
        yield from _archive_members(path)
    else:
        try:
            yield str(path), path.read_bytes()
        except OSError as exc:
            raise StonelabError(f"{path}: cannot read ({exc.strerror or exc})") from exc


# ---------------------------------------------------------------------------------------
# From bytes to game records


def _split_games(data: bytes) -> Iterator[sgf_grammar.Coarse_game_tree | Skip]:
    """Every top-level game tree of a collection ``(;...)(;...)``, in order.

    sgfmill's ``Sgf_game.from_bytes`` keeps only the first game. The whole collection
    is parsed in one pass; if a game in it is broken, the games are re-split one at a
    time with sgfmill's tokeniser (which knows brackets and ``\\]`` escapes), the good
    ones before the broken one are kept, and the rest of the file counts as one
    parse_error (after a broken game there is no safe place to resume).
    """
    try:
        yield from sgf_grammar.parse_sgf_collection(data)
        return
    except ValueError:
        pass
    position = 0
    while True:
        start = _GAME_START.search(data, position)
        if start is None:
            return
        _, end = sgf_grammar.tokenise(data, start.start())
        try:
            tree = sgf_grammar.parse_sgf_game(data[start.start() : end])
        except ValueError as exc:
            yield Skip("", "parse_error", str(exc))
            return
        yield tree
        position = end


def _charset(root: dict) -> str | None:
    """The Python codec named by CA[], or None if absent or unknown."""
    values = root.get("CA")
    if not values:
        return None
    try:
        return codecs.lookup(values[0].decode("ascii").strip()).name
    except (UnicodeDecodeError, LookupError):
        return None


def _text(root: dict, ident: str, charset: str | None) -> str:
    """A SimpleText root property, decoded by CA, else UTF-8, else latin-1 (never fails)."""
    values = root.get(ident)
    if not values:
        return ""
    raw = sgf_grammar.simpletext_value(values[0])
    for encoding in (charset, "utf-8"):
        if encoding:
            try:
                return raw.decode(encoding).strip()
            except UnicodeDecodeError:
                pass
    return raw.decode("latin-1").strip()


def _number(root: dict, ident: str, kind, default):
    values = root.get(ident)
    if not values:
        return default
    try:
        value = kind(values[0].decode("ascii").strip())
    except (ValueError, UnicodeDecodeError):
        return default
    if isinstance(value, float) and not math.isfinite(value):
        return default
    return value


def rank_dan(rank: str) -> int:
    """1..9 for an amateur dan rank "Nd", 9 for a professional "Np", 0 otherwise (kyu, "?", "")."""
    match = _RANK.match(rank)
    if match is None:
        return 0
    number, kind = int(match.group(1)), match.group(2).lower()
    if kind == "p":
        return 9
    if kind == "d" and 1 <= number <= 9:
        return number
    return 0


def result_score(result: str) -> float:
    """Black's counted margin from RE, komi included: "B+5.5" -> 5.5, "W+12" -> -12.0,
    "0" / "Draw" / "Jigo" -> 0.0; NaN when the game was not counted (resignation, time,
    forfeit, void, unknown), so no score is made up for it."""
    text = result.strip().upper()
    if text in ("0", "DRAW", "JIGO"):
        return 0.0
    if text[:2] not in ("B+", "W+"):
        return float("nan")
    try:
        margin = float(text[2:])
    except ValueError:
        return float("nan")
    if not np.isfinite(margin) or margin < 0:
        return float("nan")
    return margin if text[0] == "B" else -margin


def result_winner(result: str) -> int:
    """+1 for "B+...", -1 for "W+...", 0 for a draw, void or unknown result."""
    text = result.strip().upper()
    if text.startswith("B+"):
        return BLACK
    if text.startswith("W+"):
        return WHITE
    return 0


def sgf_coordinate(point: int, board_size: int) -> str:
    """The SGF value of a point in this module's convention ("" for a pass)."""
    if point == board_size * board_size:
        return ""
    row, col = divmod(point, board_size)
    return chr(97 + col) + chr(97 + row)


def _sgf_escaped(text: str) -> str:
    """A SimpleText value or one half of a composed value (AP[name:version]), escaped."""
    return text.replace("\\", "\\\\").replace("]", "\\]").replace(":", "\\:")


def game_sgf(board_size: int, komi: float, moves, *, setup_black=(), setup_white=(),
             application: tuple[str, str] = ("stonelab", "")) -> str:
    """A game as SGF text (FF[4], one game, no blank line), in this module's point convention.

    moves: ``(colour, point)`` pairs in order, a pass as ``board_size ** 2`` (written
    ``B[]``). setup_black / setup_white: AB / AW stones; HA[k] is written when the setup
    is k >= 2 black stones and no white one (a handicap). Nodes go ten to a line.
    `read_games` reads it back as the same game.
    """
    n = board_size
    komi_text = np.format_float_positional(float(komi), trim="-")  # SGF reals have no exponent
    name, version = application
    root = f"(;GM[1]FF[4]CA[UTF-8]AP[{_sgf_escaped(name)}:{_sgf_escaped(version)}]SZ[{n}]KM[{komi_text}]"
    if len(setup_black) >= 2 and len(setup_white) == 0:
        root += f"HA[{len(setup_black)}]"
    for ident, points in (("AB", setup_black), ("AW", setup_white)):
        if len(points):
            root += ident + "".join(f"[{sgf_coordinate(int(p), n)}]" for p in points)
    nodes = [f";{'B' if colour == BLACK else 'W'}[{sgf_coordinate(int(point), n)}]" for colour, point in moves]
    lines = [root] + ["".join(nodes[i:i + 10]) for i in range(0, len(nodes), 10)]
    return "\n".join(lines) + ")"


def _presenter(n: int) -> sgf_properties.Presenter:
    if n not in _PRESENTERS:
        _PRESENTERS[n] = sgf_properties.Presenter(n, "ISO-8859-1")
    return _PRESENTERS[n]


def _move_pairs(n: int):
    """Shared ``(colour, point)`` tuples, so a game's moves cost a pointer each."""
    if n not in _MOVE_PAIRS:
        points = range(n * n + 1)
        _MOVE_PAIRS[n] = (tuple((BLACK, p) for p in points), tuple((WHITE, p) for p in points))
    return _MOVE_PAIRS[n]


def _points(rows_cols, n: int) -> tuple[int, ...]:
    return tuple(sorted((n - 1 - row) * n + col for row, col in rows_cols))


def _setup(root: dict, n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    presenter = _presenter(n)
    stones = []
    for ident in ("AB", "AW"):
        values = root.get(ident)
        try:
            stones.append(_points(presenter.interpret(ident, values), n) if values else ())
        except ValueError as exc:
            written = "".join(f"[{v.decode('latin-1')}]" for v in values)
            raise _SkipGame("bad_coordinate", f"root {ident}{written}") from exc
    black, white = stones
    both = set(black) & set(white)
    if both:
        where = sgf_coordinate(min(both), n)
        raise _SkipGame("bad_coordinate", f"setup point {where} is both AB and AW")
    return black, white


def _game_record(tree, source: str, board_size: int | None) -> GameRecord:
    """A GameRecord from one sgfmill coarse game tree, or _SkipGame saying why not."""
    nodes = sgf_grammar.main_sequence_iter(tree)
    root = next(nodes)
    game = _number(root, "GM", int, 1)
    if game != 1:
        raise _SkipGame("not_go", f"GM[{game}]")
    n = 19
    if "SZ" in root:
        raw = root["SZ"][0]
        try:
            n = int(raw)
        except ValueError:
            raise _SkipGame("board_size", f"SZ[{raw.decode('latin-1')}]") from None
    if not MIN_BOARD <= n <= MAX_BOARD:
        raise _SkipGame("board_size", f"SZ[{n}] outside {MIN_BOARD}..{MAX_BOARD}")
    if board_size is not None and n != board_size:
        raise _SkipGame("board_size", f"SZ[{n}], only {board_size} wanted")
    setup_black, setup_white = _setup(root, n)

    black_pairs, white_pairs = _move_pairs(n)
    moves = []
    for index, props in enumerate((root, *nodes)):
        if index and ("AB" in props or "AW" in props or "AE" in props):
            raise _SkipGame("setup_in_main_line", f"setup stones after move {len(moves)}")
        if "B" in props:
            if "W" in props:
                raise _SkipGame("parse_error", f"one node has both B and W (after move {len(moves)})")
            colour, raw, pairs = BLACK, props["B"][0], black_pairs
        elif "W" in props:
            colour, raw, pairs = WHITE, props["W"][0], white_pairs
        else:
            continue
        try:
            row_col = sgf_properties.interpret_go_point(raw, n)
        except ValueError:
            letter = "B" if colour == BLACK else "W"
            value = raw.decode("latin-1")
            raise _SkipGame("bad_coordinate", f"move {len(moves) + 1}: {letter}[{value}]") from None
        point = n * n if row_col is None else (n - 1 - row_col[0]) * n + row_col[1]
        moves.append(pairs[point])
    if not moves:
        raise _SkipGame("no_moves")

    charset = _charset(root)
    player = _text(root, "PL", charset).upper()
    first_player = {"B": BLACK, "W": WHITE}.get(player[:1], moves[0][0])
    black_rank = _text(root, "BR", charset)
    white_rank = _text(root, "WR", charset)
    result = _text(root, "RE", charset)
    return GameRecord(
        board_size=n,
        komi=float(_number(root, "KM", float, 0.0)),
        handicap=_number(root, "HA", int, 0),
        setup_black=setup_black,
        setup_white=setup_white,
        moves=tuple(moves),
        first_player=first_player,
        black_rank=black_rank,
        white_rank=white_rank,
        rank_black_dan=rank_dan(black_rank),
        rank_white_dan=rank_dan(white_rank),
        result=result,
        winner=result_winner(result),
        source=source,
        black_player=_text(root, "PB", charset),
        white_player=_text(root, "PW", charset),
    )


def read_games(
    data: bytes, name: str, *, board_size: int | None = None, check_legal: bool = True
) -> FileResult:
    """The games in one SGF file's bytes (one game or a collection), and the skips.

    board_size: keep only games of this size (others skip as board_size).
    check_legal: replay each game (first_illegal_move) and skip illegal ones.
    """
    if not data.strip():
        return FileResult(name, (), (Skip(f"{name}#0", "empty_file"),))
    if _GAME_START.search(data) is None:
        return FileResult(name, (), (Skip(f"{name}#0", "parse_error", "no SGF game '(;' found"),))
    games, skips = [], []
    for k, tree in enumerate(_split_games(data)):
        source = f"{name}#{k}"
        if isinstance(tree, Skip):
            skips.append(Skip(source, tree.reason, tree.detail))
            continue
        try:
            record = _game_record(tree, source, board_size)
            if check_legal:
                bad = first_illegal_move(record)
                if bad is not None:
                    raise _SkipGame("illegal_move", _illegal_detail(record, bad))
        except _SkipGame as skip:
            skips.append(Skip(source, skip.reason, skip.detail))
            continue
        games.append(record)
    return FileResult(name, tuple(games), tuple(skips))


def _illegal_detail(record: GameRecord, index: int) -> str:
    if index < 0:
        return "setup stones rejected"
    colour, point = record.moves[index]
    letter = "B" if colour == BLACK else "W"
    return f"move {index + 1}: {letter}[{sgf_coordinate(point, record.board_size)}]"


def _check_board_size(board_size: int | None) -> None:
    if board_size is not None and (
        not isinstance(board_size, int) or not MIN_BOARD <= board_size <= MAX_BOARD
    ):
        raise StonelabError(f"board_size={board_size!r}: Go boards here are {MIN_BOARD}..{MAX_BOARD}")


def iter_files(paths, *, board_size: int | None = None, check_legal: bool = True) -> Iterator[FileResult]:
    """One FileResult per SGF file or archive member under ``paths`` (see iter_sources)."""
    _check_board_size(board_size)
    for name, data in iter_sources(paths):
        yield read_games(data, name, board_size=board_size, check_legal=check_legal)


def iter_games(paths, *, board_size: int | None = None) -> Iterator[GameRecord]:
    """Just the loaded games, streaming (skips are dropped: use iter_files to count them)."""
    for result in iter_files(paths, board_size=board_size):
        yield from result.games


def load_games(paths, *, board_size: int | None = None) -> LoadResult:
    """All games under ``paths`` in memory: ``games, skipped, files = load_games(...)``."""
    games, skipped, files = [], Counter(), []
    for result in iter_files(paths, board_size=board_size):
        games.extend(result.games)
        skipped.update(s.reason for s in result.skips)
        files.append(result)
    return LoadResult(games, skipped, files)


def even_games(paths, board_size: int = 19, min_moves: int = 0) -> list[GameRecord]:
    """The games under ``paths`` on ``board_size`` without handicap stones and with at least
    ``min_moves`` moves, in file order (the held-out sets the analysis scripts measure)."""
    return [g for g in load_games(paths).games
            if g.board_size == board_size and g.handicap == 0 and len(g.moves) >= min_moves]


def counted_even_games(paths, board_size: int = 19) -> list[GameRecord]:
    """The `even_games` under ``paths`` whose result is a counted margin (``RE[B+12.5]``: not
    resigned, timed out or a draw), in file order: the games a score is measured against."""
    return [g for g in even_games(paths, board_size)
            if not np.isnan(margin := result_score(g.result)) and margin != 0]


# ---------------------------------------------------------------------------------------
# Legality: one small function, so a faster (jitted) replay can replace it in one place.


def first_illegal_move(record: GameRecord) -> int | None:
    """Index into ``record.moves`` of the first illegal move, -1 if the setup stones
    themselves are rejected, or None if the whole game replays.

    The rules are stonelab.games.go.rules's (simple ko, suicide illegal, no superko). Colours
    come from the record, so two moves of one colour in a row (KGS has them after
    handicap) are replayed as written, and play that resumes after two passes (a KGS
    scoring dispute) is not "game over". The usual game (strictly alternating, no play
    after two passes) goes through go's jitted whole-game replay in one call; the rest
    move by move through GoState.
    """
    go = importlib.import_module("stonelab.games.go.rules")  # lazy: numba only when replaying
    n = record.board_size
    colours = [colour for colour, _ in record.moves]
    points = np.fromiter((point for _, point in record.moves), dtype=np.int64, count=len(colours))
    if _plain_game(colours, points, n):
        status, _ = go.replay_game_reason(
            n,
            np.asarray(record.setup_black, dtype=np.int64),
            np.asarray(record.setup_white, dtype=np.int64),
            points,
            colours[0],
            False,
        )
        return None if status == -1 else (-1 if status == go.SETUP_INVALID else int(status))
    state = go.GoRules(n).new_state()
    try:
        state.setup(record.setup_black, record.setup_white)
    except go.IllegalMove:
        return -1
    for index, (colour, point) in enumerate(record.moves):
        state.to_play = colour
        try:
            state.play(point)
        except go.IllegalMove:
            return index
        if point == n * n:  # a pass never ends the replay: play may resume after two
            state.resume_play()
    return None


def _plain_game(colours: list[int], points: np.ndarray, n: int) -> bool:
    """Colours strictly alternate and no move follows two passes in a row."""
    if any(a == b for a, b in zip(colours, colours[1:], strict=False)):
        return False
    passes = np.flatnonzero(points == n * n)
    if passes.size < 2:
        return True
    doubles = passes[1:][np.diff(passes) == 1]  # second pass of each pass-pass
    return doubles.size == 0 or doubles[0] == len(colours) - 1


# ---------------------------------------------------------------------------------------
# Command line


def _run(args) -> None:
    counts = SkipCounts()
    started = time.perf_counter()
    for result in iter_files(args.paths, board_size=args.board_size):
        counts.add(result)
        if args.json:
            print(json.dumps(result.to_json()))
        else:
            line = f"{result.action:4}  {result.file}  games={len(result.games)} moves={result.moves}"
            skipped = Counter(s.reason for s in result.skips)
            if skipped:
                first = result.skips[0]
                line += "  skipped " + ", ".join(f"{r}={c}" for r, c in sorted(skipped.items()))
                if first.detail:
                    line += f" ({first.detail})"
            print(line)
    seconds = time.perf_counter() - started
    summary = counts.as_dict()
    summary["seconds"] = round(seconds, 3)
    summary["moves_per_second"] = round(counts.moves / seconds) if seconds > 0 else None
    if args.json:
        print(json.dumps({"summary": summary}))
        return
    print()
    print(f"files {counts.files}, games loaded {counts.games}, moves {counts.moves} (passes included)")
    print(f"{'skip reason':<20} {'games':>7}")
    for reason in SKIP_REASONS:
        print(f"{reason:<20} {counts.skipped.get(reason, 0):>7}")
    print(f"{'total skipped':<20} {sum(counts.skipped.values()):>7}")
    print(f"{seconds:.1f} s, {summary['moves_per_second']} moves/s (parse + replay)")


def main(argv: list[str] | None = None) -> None:
    from stonelab.cli import run_or_explain

    parser = argparse.ArgumentParser(
        prog="python -m stonelab.data.sgf",
        description="Load SGF game records and report, per file, what loaded and what was skipped.",
    )
    parser.add_argument(
        "paths", nargs="+", help=".sgf files, folders, globs, or .tar.gz/.tgz/.tar.bz2 archives"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per file, then {'summary': ...}")
    parser.add_argument("--board-size", type=int, default=None, help="keep only games of this size")
    run_or_explain(_run, parser.parse_args(argv))


if __name__ == "__main__":
    main()
