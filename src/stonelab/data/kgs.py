"""KGS expert games for supervised move prediction (``data=kgs``).

Pipeline: SGF sources (u-go.net ``.tar.gz`` archives as downloaded, folders and
globs of ``.sgf``, or the whole u-go.net archive list when online) -> a compact
game cache -> positions streamed with features computed on the fly.

The cache stores games, not positions: per game its setup stones, moves (int16,
pass = n*n), ranks, result, komi and an approximate end-of-game ownership map (int8
[n*n], random playouts from the final position: `stonelab.games.go.ownership`),
about 4 bytes per position. Features are
computed while streaming by replaying each game in numba (`features.encode_game`,
~70,000 maddison positions/s per core), which is why the cache key holds the
sources, the board size and the cache format, but not the encoder: one cache
serves every encoder. Splits are by game with a fixed seed, never by position.

The cache is built on first use by ``data.cache_workers`` processes (default: every
core), byte-identical to a one-process build; its ownership playouts are most of the
build's time (`build_cache`).
"""

from __future__ import annotations

import contextlib
import hashlib
import html.parser
import json
import math
import multiprocessing
import os
import shutil
import sys
import time
import urllib.parse
import urllib.request
import warnings
from collections import Counter, deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

import lightning as L
import numpy as np
import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from stonelab.data.sgf import result_score
from stonelab.errors import ConfigError, StonelabError, check
from stonelab.features import ENCODERS, encode_game
from stonelab.games.symmetry import NUM_SYMMETRIES, inverse_permutations, permutations
from stonelab.run_folder import refused_in_one_line

CACHE_FORMAT = 3  # 2: + ownership (OWNERSHIP_PLAYOUTS playouts per game); 3: + score
UGO_INDEX_URL = "https://u-go.net/gamerecords/"
UGO_SOURCE = "u-go.net"  # a data.sources entry meaning: every archive on UGO_INDEX_URL


# --------------------------------------------------------------------------------------
# The game cache


@dataclass
class GameCache:
    """Games as flat arrays; game ``g`` is ``moves[move_offsets[g]:move_offsets[g + 1]]``.

    moves int16 [total moves] (pass = n*n), move_offsets int64 [G + 1],
    setup int16 [total setup stones] with setup_offsets int64 [G + 1] and
    setup_colour int8 (+1 black, -1 white), first_player int8 [G],
    rank_black / rank_white int8 [G] (dan 1..9, 0 unknown or kyu),
    winner int8 [G] (+1 black, -1 white, 0 unknown), komi float32 [G],
    score float32 [G]: black's counted margin from RE, komi included (B+5.5: 5.5), NaN
    when the game was not counted (resignation, time, unknown: `sgf.result_score`),
    ownership int8 [G, n*n]: APPROXIMATE owner of each point at the game's end (+1 black,
    -1 white, 0 unclear), from random playouts of the final position (see
    `stonelab.games.go.ownership`; resigned games are scored from where they stopped).
    """

    board_size: int
    moves: np.ndarray
    move_offsets: np.ndarray
    setup: np.ndarray
    setup_offsets: np.ndarray
    setup_colour: np.ndarray
    first_player: np.ndarray
    rank_black: np.ndarray
    rank_white: np.ndarray
    winner: np.ndarray
    komi: np.ndarray
    score: np.ndarray
    ownership: np.ndarray

    ARRAYS = ("moves", "move_offsets", "setup", "setup_offsets", "setup_colour", "first_player",
              "rank_black", "rank_white", "winner", "komi", "score", "ownership")

    @property
    def num_games(self) -> int:
        return len(self.first_player)

    def game_lengths(self) -> np.ndarray:
        return np.diff(self.move_offsets)

    def game(self, g: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(setup_black, setup_white, moves) of game ``g``."""
        s = slice(self.setup_offsets[g], self.setup_offsets[g + 1])
        stones, colours = self.setup[s], self.setup_colour[s]
        moves = self.moves[self.move_offsets[g]:self.move_offsets[g + 1]]
        return stones[colours == 1], stones[colours == -1], moves

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for name in self.ARRAYS:
            np.save(folder / f"{name}.npy", getattr(self, name))

    @classmethod
    def load(cls, folder: Path, board_size: int) -> GameCache:
        # Memory-mapped: a cache of the full KGS set stays out of RAM until read.
        arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in cls.ARRAYS}
        return cls(board_size=board_size, **arrays)

    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in self.ARRAYS)


class _CacheWriter:
    """Accumulates GameRecords (without ownership) into GameCache arrays; counts what it cannot use.

    Picklable: a worker process fills one per chunk of files and the parent `extend`s its
    own with them in the files' order.
    """

    def __init__(self, board_size: int):
        self.n = board_size
        self.moves: list[np.ndarray] = []
        self.setups: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
        self.fields: list[tuple[int, int, int, int, float, float]] = []
        self.skipped: Counter = Counter()

    def add(self, record) -> None:
        colours = [c for c, _ in record.moves]
        # The encoders replay with alternating colours from the first player; a game
        # that breaks that cannot be replayed faithfully, so it is counted, not bent.
        expected = [record.first_player * (1 if i % 2 == 0 else -1) for i in range(len(colours))]
        if colours != expected:
            self.skipped["colours_not_alternating"] += 1
            return
        self.moves.append(np.array([p for _, p in record.moves], dtype=np.int16))
        self.setups.append((record.setup_black, record.setup_white))
        self.fields.append((record.first_player, record.rank_black_dan, record.rank_white_dan,
                            record.winner, record.komi, result_score(record.result)))

    def extend(self, part: _CacheWriter) -> None:
        """Append the games of ``part`` (the next chunk of files) after these."""
        self.moves.extend(part.moves)
        self.setups.extend(part.setups)
        self.fields.extend(part.fields)
        self.skipped.update(part.skipped)

    def ownership_inputs(self, first: int, stop: int) -> list[tuple]:
        """(setup_black, setup_white, moves, first_player) of games ``first..stop - 1``."""
        return [(*self.setups[g], self.moves[g], self.fields[g][0]) for g in range(first, stop)]

    def finish(self, ownership: np.ndarray) -> GameCache:
        """The cache of the games added; ``ownership`` int8 [games, n*n] in the same order."""
        lengths = np.array([len(m) for m in self.moves], dtype=np.int64)
        setup = [np.array(b + w, dtype=np.int16) for b, w in self.setups]
        colour = [np.array([1] * len(b) + [-1] * len(w), dtype=np.int8) for b, w in self.setups]
        fields = np.array(self.fields, dtype=np.float64).reshape(-1, 6)
        return GameCache(
            board_size=self.n,
            moves=np.concatenate(self.moves) if self.moves else np.zeros(0, np.int16),
            move_offsets=np.r_[0, np.cumsum(lengths)].astype(np.int64),
            setup=np.concatenate(setup) if setup else np.zeros(0, np.int16),
            setup_offsets=np.r_[0, np.cumsum([len(s) for s in setup])].astype(np.int64),
            setup_colour=np.concatenate(colour) if colour else np.zeros(0, np.int8),
            first_player=fields[:, 0].astype(np.int8), rank_black=fields[:, 1].astype(np.int8),
            rank_white=fields[:, 2].astype(np.int8), winner=fields[:, 3].astype(np.int8),
            komi=fields[:, 4].astype(np.float32), score=fields[:, 5].astype(np.float32),
            ownership=ownership.astype(np.int8))


# Work units of the parallel build. Their size changes nothing in the cache, only how
# evenly the workers are loaded and how often progress is reported.
FILES_PER_TASK = 32  # SGF files (or archive members) parsed and replayed per task (~30 ms)
GAMES_PER_TASK = 8  # games scored by ownership playouts per task (~15 ms a game per core)


def all_cores() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _read_part(sources: list[tuple[str, bytes]], board_size: int):
    """Worker: parse and replay one chunk of files -> (SkipCounts, _CacheWriter of its games)."""
    from stonelab.data.sgf import SkipCounts, read_games

    counts, part = SkipCounts(), _CacheWriter(board_size)
    for name, data in sources:
        result = read_games(data, name, board_size=board_size)
        counts.add(result)
        for record in result.games:
            part.add(record)
    return counts, part


def _ownership_part(first: int, games: list[tuple], board_size: int) -> np.ndarray:
    """Worker: int8 [len(games), n*n] ownership of consecutive cached games ``first, first + 1, ...``."""
    from stonelab.games.go.ownership import game_ownership

    # Seeded by the game's index in the cache: the same sources always give the same
    # cache, whichever worker scores a game.
    maps = [game_ownership(board_size, black, white, moves, first_player, seed=first + i)
            for i, (black, white, moves, first_player) in enumerate(games)]
    return np.stack(maps) if maps else np.zeros((0, board_size * board_size), np.int8)


def _chunks(items, size: int):
    """Lists of ``size`` consecutive items (the last one shorter), lazily."""
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _in_order(pool, fn, tasks, ahead: int):
    """``fn(*task)`` for each task, in the tasks' order: here when ``pool`` is None, else on
    the pool with at most ``ahead`` tasks submitted and unread (bounded memory when the
    tasks are a stream of files). An exception from ``tasks`` (an unreadable archive)
    raises here, in the parent; one from ``fn`` is re-raised here by its future."""
    if pool is None:
        for task in tasks:
            yield fn(*task)
        return
    pending: deque = deque()
    try:
        for task in tasks:
            pending.append(pool.submit(fn, *task))
            if len(pending) >= ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except BrokenProcessPool as exc:  # a worker was killed (out of memory, a signal)
        raise StonelabError(f"a game cache worker process died ({exc}); if memory is short, "
                            f"set data.cache_workers=1 to build in one process") from exc


@contextlib.contextmanager
def _worker_pool(workers: int):
    """A process pool of ``workers``, or None (work in this process) for one worker.

    Forked where the platform allows: workers inherit the imported modules and the
    numba kernels already loaded, and run only sgfmill and numba code (no torch, no
    OpenMP), which is what makes forking a process with threads safe here. A
    ProcessPoolExecutor, not a multiprocessing.Pool: a killed worker then breaks the
    build with an error instead of leaving it waiting forever.
    """
    if workers <= 1:
        yield None
        return
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    try:
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method))
    except OSError as exc:  # no semaphores (a locked-down container): say so, build anyway
        print(f"kgs cache: cannot start {workers} worker processes ({exc}); building in this process",
              file=sys.stderr)
        yield None
        return
    try:
        yield pool
    finally:  # after an error, tasks not started yet are dropped, not run
        pool.shutdown(wait=True, cancel_futures=True)


class _Progress:
    """The build's status line on stderr: rewritten in place on a terminal every
    TTY_SECONDS; in a log file (not a terminal) a new line every LOG_SECONDS."""

    TTY_SECONDS = 0.5
    LOG_SECONDS = 10.0

    def __init__(self, enabled: bool = True, stream=None, clock=time.perf_counter):
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        self.tty = self.stream.isatty()
        self.interval = self.TTY_SECONDS if self.tty else self.LOG_SECONDS
        self.clock = clock
        self.last = clock()  # a build shorter than one interval prints only its final line
        self.width = 0

    def update(self, text_fn) -> None:
        """Write ``text_fn()`` if an interval has passed since the last line."""
        now = self.clock()
        if self.enabled and now - self.last >= self.interval:
            self.last = now
            self._write(text_fn(), final=False)

    def finish(self, text: str) -> None:
        if self.enabled:
            self._write(text, final=True)

    def _write(self, text: str, final: bool) -> None:
        if self.tty:  # pad over the longer line before it; the final line ends it
            self.stream.write("\r" + text.ljust(self.width) + ("\n" if final else ""))
            self.width = 0 if final else len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def _duration(seconds: float) -> str:
    """``42 s``, ``12 min 05 s``, ``3 h 07 min``."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def _since(start: float) -> float:
    return time.perf_counter() - start


def _rates(games: int, positions: int, seconds: float, workers: int) -> str:
    seconds = max(seconds, 1e-9)
    return (f"{games / seconds:,.0f} games/s, {positions / seconds:,.0f} positions/s, "
            f"{workers} worker{'s' if workers > 1 else ''}")


def resolve_sources(sources, download_dir: Path) -> list[Path]:
    """Local paths for ``data.sources``: paths and globs as they are; URLs and the
    ``u-go.net`` entry are downloaded into ``download_dir`` first (once)."""
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    if not sources:
        raise ConfigError("data.sources is empty: give SGF files, folders, globs or .tar.gz archives")
    paths: list[Path] = []
    for source in sources:
        source = str(source)
        if source == UGO_SOURCE:
            paths.extend(download(ugo_archive_urls(UGO_INDEX_URL), download_dir))
        elif urllib.parse.urlparse(source).scheme in ("http", "https", "file"):
            paths.extend(download([source], download_dir))
        else:
            paths.append(Path(os.path.expanduser(source)))
    return paths


def cache_key(paths: list[Path], board_size: int) -> str:
    """Hash of the sources' contents, the board size and the cache format."""
    from stonelab.data.sgf import iter_source_files

    digest = hashlib.sha256(f"format={CACHE_FORMAT};n={board_size}".encode())
    for file in iter_source_files(paths):
        digest.update(str(file.name).encode())
        with open(file, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def build_cache(paths: list[Path], folder: Path, board_size: int, *, workers: int | None = None,
                progress: bool = True) -> dict:
    """Read every game under ``paths`` into a GameCache in ``folder``; returns its summary.

    ``workers`` processes (None: `all_cores`; 1: this process only) first parse and
    replay chunks of files, then score chunks of games with ownership playouts (most
    of the time). Results are joined in the files' order and each game's playouts are
    seeded by its index, so the cache is byte-identical for any number of workers.
    Written to a temporary folder and renamed, so an interrupted build never leaves a
    cache that looks complete; a disk that refuses it is one line naming the cache folder
    (RunFolderError), and the partial folder is removed.
    """
    from stonelab.data.sgf import SkipCounts, iter_sources

    workers = all_cores() if workers is None else workers
    report = _Progress(progress)
    start = time.perf_counter()
    writer, counts = _CacheWriter(board_size), SkipCounts()
    with _worker_pool(workers) as pool:
        tasks = ((chunk, board_size) for chunk in _chunks(iter_sources(paths), FILES_PER_TASK))
        for part_counts, part in _in_order(pool, _read_part, tasks, ahead=4 * workers):
            counts.merge(part_counts)
            writer.extend(part)
            report.update(lambda: f"kgs cache: reading {counts.files:,} files: {counts.games:,} games, "
                          f"{counts.moves:,} positions ({_rates(counts.games, counts.moves, _since(start), workers)})")
        ownership = _score_ownership(writer, pool, workers, report)
    cache = writer.finish(ownership)
    if cache.num_games == 0:
        raise StonelabError(f"data.sources gave no usable {board_size}x{board_size} games "
                            f"(skipped: {dict(counts.skipped) or 'none'}); check the paths and data.board_size")
    summary = counts.as_dict()
    summary["skipped"].update(writer.skipped)
    seconds = time.perf_counter() - start
    summary.update(games_cached=cache.num_games, positions=int(cache.move_offsets[-1]),
                   cache_bytes=cache.nbytes(), seconds=round(seconds, 2), workers=workers,
                   board_size=board_size, format=CACHE_FORMAT,
                   sources=[str(p) for p in paths])
    summary["cache_bytes_per_position"] = summary["cache_bytes"] / max(summary["positions"], 1)
    from stonelab.games.go.ownership import OWNERSHIP_PLAYOUTS, OWNERSHIP_THRESHOLD

    summary["ownership"] = {"approximate": True, "playouts": OWNERSHIP_PLAYOUTS,
                            "threshold": OWNERSHIP_THRESHOLD,
                            "decided_fraction": float(np.abs(cache.ownership).mean()) if cache.num_games else 0.0}
    _save_whole(cache, summary, folder)
    skipped = {k: v for k, v in summary["skipped"].items() if v}
    report.finish(f"kgs cache: {summary['games_cached']:,} games, {summary['positions']:,} positions in "
                  f"{_duration(seconds)} ({_rates(summary['games_cached'], summary['positions'], seconds, workers)}), "
                  f"{summary['cache_bytes_per_position']:.1f} bytes/position; skipped {skipped or 'none'} -> {folder}")
    return summary


def _save_whole(cache: GameCache, summary: dict, folder: Path) -> None:
    """The cache and its summary.json (the mark of a complete cache) into a temporary folder, then renamed
    to ``folder``; a write the disk refuses is one line, and the temporary folder gives its space back."""
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    with refused_in_one_line(folder, "the KGS game cache", settings="data.cache_dir=..."):
        try:
            cache.save(tmp)
            (tmp / "summary.json").write_text(json.dumps(summary, indent=2))
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(tmp, folder)


def _score_ownership(writer: _CacheWriter, pool, workers: int, report: _Progress) -> np.ndarray:
    """int8 [games, n*n]: `_ownership_part` over chunks of the writer's games, in order."""
    n, total = writer.n, len(writer.moves)
    total_positions = sum(len(m) for m in writer.moves)
    starts = range(0, total, GAMES_PER_TASK)
    tasks = ((first, writer.ownership_inputs(first, min(first + GAMES_PER_TASK, total)), n) for first in starts)
    parts, done, positions, start = [], 0, 0, time.perf_counter()

    def status() -> str:
        seconds = _since(start)
        eta = (total - done) * seconds / max(done, 1)  # playouts cost about the same per game
        return (f"kgs cache: ownership {done:,}/{total:,} games, {positions:,}/{total_positions:,} positions "
                f"({_rates(done, positions, seconds, workers)}), ETA {_duration(eta)}")

    for part in _in_order(pool, _ownership_part, tasks, ahead=4 * workers):
        parts.append(part)
        positions += sum(len(m) for m in writer.moves[done:done + len(part)])
        done += len(part)
        report.update(status)
    return np.concatenate(parts) if parts else np.zeros((0, n * n), np.int8)


# --------------------------------------------------------------------------------------
# Downloads (u-go.net)


class _LinkParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.links.extend(v for k, v in attrs if k == "href" and v)


def ugo_archive_urls(index_url: str = UGO_INDEX_URL) -> list[str]:
    """The ``.tar.gz`` archive links on the u-go.net game records page (19x19 KGS archives)."""
    try:
        with urllib.request.urlopen(index_url, timeout=60) as response:
            page = response.read().decode("utf-8", "replace")
    except OSError as exc:
        raise StonelabError(f"cannot read the archive list {index_url}: {exc}; download the "
                            f".tar.gz files by hand and put their paths in data.sources") from exc
    parser = _LinkParser()
    parser.feed(page)
    urls = [urllib.parse.urljoin(index_url, link) for link in parser.links
            if link.endswith(".tar.gz") and "KGS" in os.path.basename(link)]
    if not urls:
        raise StonelabError(f"no KGS .tar.gz archive links found on {index_url}")
    return sorted(set(urls))


def download(urls: list[str], folder: Path) -> list[Path]:
    """Fetch each URL into ``folder`` unless a complete copy is already there."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for url in urls:
        target = folder / os.path.basename(urllib.parse.urlparse(url).path)
        if not target.exists():
            tmp = target.with_suffix(target.suffix + ".part")
            print(f"downloading {url} -> {target}", file=sys.stderr)
            try:
                with urllib.request.urlopen(url, timeout=120) as response, open(tmp, "wb") as out:
                    shutil.copyfileobj(response, out)
            except OSError as exc:
                tmp.unlink(missing_ok=True)
                raise StonelabError(f"cannot download {url}: {exc}") from exc
            os.replace(tmp, target)
        paths.append(target)
    return paths


# --------------------------------------------------------------------------------------
# Streaming positions


def split_games(num_games: int, val_games: int, test_games: int, seed: int) -> dict[str, np.ndarray]:
    """Disjoint game ids per split, from one permutation with a fixed seed."""
    order = np.random.default_rng(seed).permutation(num_games)
    test, val = order[:test_games], order[test_games:test_games + val_games]
    return {"test": np.sort(test), "val": np.sort(val), "train": np.sort(order[test_games + val_games:])}


def _shard_info() -> tuple[int, int]:
    """(index, count) of this reader among all DDP ranks x DataLoader workers."""
    rank, world = 0, 1
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        rank, world = torch.distributed.get_rank(), torch.distributed.get_world_size()
    worker = get_worker_info()
    workers, wid = (worker.num_workers, worker.id) if worker else (1, 0)
    return rank * workers + wid, world * workers


def hide_length_caution() -> None:
    """Filter Lightning's one warning about GamePositions.__len__ (it checks each loader it is given).

    Lightning warns on every run that an IterableDataset's __len__ "could be inaccurate" with
    several DataLoader workers unless each is configured on its own. GamePositions is: each
    reader takes its own share of the games (_shard_info) and yields the same count, which
    __len__ adds up exactly; and Lightning needs that length for the progress bar, a
    fractional val_check_interval and its count of batches per epoch. (Set again with each
    loader, not once at import: a filter set at import does not outlive an enclosing
    ``warnings.catch_warnings``; setting it again replaces it, no duplicate.)
    """
    warnings.filterwarnings("ignore", message=r"Your `IterableDataset` has `__len__` defined")


class GamePositions(IterableDataset):
    """Positions of the cached games ``game_ids``, encoded on the fly.

    Every reader (DDP rank x DataLoader worker) takes its own fixed share of the
    games, replays them in a shuffled order and yields ``samples_per_reader``
    positions from a shuffle buffer of ``shuffle_buffer`` positions (RAM is
    bounded by that buffer, whatever the dataset size). Every reader yields the
    same count, so DDP ranks see equal batch counts. With ``augment`` each sample
    gets a random one of the 8 symmetries (targets moved with it; pass stays).
    Evaluation readers (shuffle=False) read games and positions in order.

    Yields whole batches (so the DataLoader runs with batch_size=None), dicts of
    planes uint8 [B, C, n, n], target int64 [B] (0..n*n, pass = n*n), value
    float32 [B] (the game's result for the side to move: +1 won, -1 lost, 0
    unknown), to_play int64 [B] (+1 black, -1 white) and ownership float32
    [B, n, n]: the cache's APPROXIMATE end-of-game owner of each point from the side
    to move's view (+1 own, -1 opponent's, 0 unclear), turned by the same symmetry
    as the planes, and move_number int64 [B]: the moves played in the game before
    the position (0: the first move; passes count, handicap setup stones do not), so
    metrics can be split by game phase. With ``history=H > 0`` a batch also holds
    history uint8 [B, H, C, n, n]: the planes of the H positions before each one in
    its game, oldest first, all-zero before the game's start, turned by the same
    symmetry (for a model with a memory over past positions; the shuffle buffer then
    holds H + 1 positions per item).
    """

    def __init__(self, cache: GameCache, game_ids: np.ndarray, encoder: str, *, shuffle: bool,
                 augment: bool, batch_size: int = 128, shuffle_buffer: int = 8192, seed: int = 0,
                 num_workers: int = 0, history: int = 0, komi_augment: float = 0.0):
        self.cache = cache
        self.komi_augment = komi_augment if shuffle else 0.0  # evaluation keeps every game's own komi
        self.game_ids = np.asarray(game_ids)
        self.encoder = ENCODERS[encoder]
        self.shuffle = shuffle
        self.augment = augment
        self.shuffle_buffer = shuffle_buffer
        self.seed = seed
        self.num_workers = num_workers
        self.batch_size = batch_size
        self.history = history
        self.positions = int(cache.game_lengths()[self.game_ids].sum())

    def __len__(self) -> int:
        """Batches this DDP rank reads per epoch (all its DataLoader workers together)."""
        world = torch.distributed.get_world_size() if (
            torch.distributed.is_available() and torch.distributed.is_initialized()) else 1
        workers = max(self.num_workers, 1)
        return math.ceil(self.samples_per_reader(world * workers) / self.batch_size) * workers

    def samples_per_reader(self, readers: int) -> int:
        return self.positions // readers if self.shuffle else math.ceil(self.positions / readers)

    def _games(self, reader: int, readers: int, rng: np.random.Generator):
        """This reader's games: shuffled each epoch and cycled when training."""
        mine = self.game_ids[reader::readers]
        while True:
            yield from (rng.permutation(mine) if self.shuffle else mine)
            if not self.shuffle:
                return

    def _positions(self, games):
        n, c = self.cache.board_size, self.encoder.num_planes
        for g in games:
            black, white, moves = self.cache.game(int(g))
            planes = np.zeros((len(moves), c, n, n), dtype=np.uint8)
            targets = np.zeros(len(moves), dtype=np.int16)
            status = encode_game(n, black, white, moves, int(self.cache.first_player[g]),
                                 int(self.cache.rank_black[g]), int(self.cache.rank_white[g]),
                                 self.encoder.encoder_id, planes, targets)
            # The cache holds only games that replayed legally, so status is -1 here.
            to_play = int(self.cache.first_player[g]) * np.where(np.arange(len(moves)) % 2 == 0, 1, -1)
            values = (to_play * int(self.cache.winner[g])).astype(np.float32)
            end = len(moves) if status == -1 else max(int(status), 0)
            ownership = np.array(self.cache.ownership[g])  # black's view, int8 [n*n]
            counted = (float(self.cache.score[g]), float(self.cache.komi[g]))  # black's margin, komi
            h = self.history
            padded = np.concatenate([np.zeros((h, c, n, n), dtype=np.uint8), planes]) if h else None
            for i in range(end):
                past = padded[i:i + h] if h else None  # positions i-h .. i-1 (zeros before the start)
                yield planes[i], int(targets[i]), values[i], to_play[i], ownership, past, i, counted

    def __iter__(self):
        reader, readers = _shard_info()
        if self.shuffle:
            # Fresh each epoch (torch's generator advances), reproducible under seed_everything.
            base = int(torch.randint(2**31 - 1, ()).item()) if get_worker_info() is None else get_worker_info().seed
            rng = np.random.default_rng([self.seed, reader, base % (2**32)])
        else:
            rng = np.random.default_rng([self.seed, reader])
        count = self.samples_per_reader(readers)
        stream = self._positions(self._games(reader, readers, rng))
        if self.shuffle:
            stream = _shuffled(stream, self.shuffle_buffer, rng)
        yield from self._batches(stream, count, rng)

    def _batches(self, stream, count: int, rng: np.random.Generator):
        """Batches of ``batch_size`` from the first ``count`` items of ``stream``."""
        n, c, size = self.cache.board_size, self.encoder.num_planes, self.batch_size
        planes = np.empty((size, c, n, n), dtype=np.uint8)
        targets = np.empty(size, dtype=np.int64)
        values = np.empty(size, dtype=np.float32)
        to_play = np.empty(size, dtype=np.int64)
        ownership = np.empty((size, n * n), dtype=np.int8)
        history = np.empty((size, self.history, c, n, n), dtype=np.uint8) if self.history else None
        move_numbers = np.empty(size, dtype=np.int64)
        counted = np.empty((size, 2), dtype=np.float32)  # black's margin (NaN: not counted), komi
        k = 0
        for i, (p, t, v, colour, o, past, move, margin_komi) in enumerate(stream):
            if i >= count:
                break
            planes[k], targets[k], values[k], to_play[k], move_numbers[k] = p, t, v, colour, move
            counted[k] = margin_komi
            ownership[k] = o if colour == 1 else -o  # the side to move's view
            if history is not None:
                history[k] = past
            k += 1
            if k == size:
                yield self._finish(planes, targets, values, to_play, k, rng, ownership, history,
                                   move_numbers=move_numbers, counted=counted)
                k = 0
        if k:
            yield self._finish(planes, targets, values, to_play, k, rng, ownership, history,
                               move_numbers=move_numbers, counted=counted)

    def _finish(self, planes, targets, values, to_play, k: int, rng: np.random.Generator,
                ownership: np.ndarray | None = None, history: np.ndarray | None = None, *,
                move_numbers: np.ndarray | None = None, counted: np.ndarray | None = None) -> dict:
        """The batch of the first ``k`` rows; ``ownership`` int8 [>= k, n*n] (side to move's view),
        ``move_numbers`` int64 [>= k] (a symmetry leaves them as they are), ``counted``
        float32 [>= k, 2]: black's counted margin (NaN: not counted) and the komi."""
        n = self.cache.board_size
        planes, targets = planes[:k].copy(), targets[:k].copy()
        own = ownership[:k].copy() if ownership is not None else None
        past = history[:k].copy() if history is not None else None
        if self.augment:
            perms, inverse = permutations(n), inverse_permutations(n)
            syms = rng.integers(NUM_SYMMETRIES, size=k)
            for sym in np.unique(syms):
                rows = np.flatnonzero(syms == sym)
                flat = planes[rows].reshape(len(rows), -1, n * n)
                planes[rows] = flat[:, :, perms[sym]].reshape(len(rows), -1, n, n)
                if own is not None:  # the ownership map turns with the stones
                    own[rows] = own[rows][:, perms[sym]]
                if past is not None:  # and so do the past positions
                    flat = past[rows].reshape(len(rows), self.history, -1, n * n)
                    past[rows] = flat[..., perms[sym]].reshape(past[rows].shape)
                board_moves = rows[targets[rows] < n * n]  # pass stays pass
                targets[board_moves] = inverse[sym][targets[board_moves]]
        values = values[:k].copy()
        batch = {"planes": torch.from_numpy(planes), "target": torch.from_numpy(targets),
                 "value": torch.from_numpy(values), "to_play": torch.from_numpy(to_play[:k].copy())}
        if counted is not None:
            batch.update(self._komi_and_score(counted[:k].copy(), to_play[:k], values, rng))
        if own is not None:
            batch["ownership"] = torch.from_numpy(own.reshape(k, n, n).astype(np.float32))
        if past is not None:
            batch["history"] = torch.from_numpy(past)
        if move_numbers is not None:
            batch["move_number"] = torch.from_numpy(move_numbers[:k].copy())
        return batch


    def _komi_and_score(self, counted: np.ndarray, to_play: np.ndarray, values: np.ndarray,
                        rng: np.random.Generator) -> dict:
        """"komi" float32 [B] (the game's komi, or with ``komi_augment`` a random one) and
        "score" float32 [B] (the side to move's final lead, komi included; NaN when the game
        was not counted); ``values`` (side to move's result) follow a changed komi in place.

        Why a random komi: KGS games are almost all played at 6.5 or 0.5, so a net given the
        komi would learn little about it. A counted game says the board's margin before komi
        (black's margin + komi), so its result under any other komi is known: KataGo's
        trick of training with varied komi, at no cost in playing new games. Only counted
        games are changed; a resigned one keeps its komi and result.
        """
        margin, komi = counted[:, 0], counted[:, 1]
        if self.komi_augment > 0:
            change = ~np.isnan(margin) & (rng.random(len(komi)) < self.komi_augment)
            # Half points: no jigo, so every changed game keeps a winner.
            new_komi = np.floor(rng.uniform(-KOMI_AUGMENT_RANGE, KOMI_AUGMENT_RANGE, len(komi))) + 0.5
            margin = np.where(change, margin + komi - new_komi, margin)
            komi = np.where(change, new_komi, komi).astype(np.float32)
            values[change] = (np.sign(margin[change]) * to_play[change]).astype(np.float32)
        score = (margin * to_play).astype(np.float32)
        return {"komi": torch.from_numpy(komi.astype(np.float32)), "score": torch.from_numpy(score)}


KOMI_AUGMENT_RANGE = 20.0  # data.komi_augment draws komi from [-20, 20) points


def _shuffled(stream, size: int, rng: np.random.Generator):
    """A shuffle buffer: yield a random held item as each new one arrives."""
    buffer = []
    for item in stream:
        if len(buffer) < size:
            buffer.append(item)
            continue
        j = int(rng.integers(size))
        yield buffer[j]
        buffer[j] = item
    rng.shuffle(buffer)
    yield from buffer


# --------------------------------------------------------------------------------------
# The DataModule


class KGSDataModule(L.LightningDataModule):
    """``data=kgs``: KGS (or any SGF) games -> batches of (planes, target, value).

    ``prepare_data`` builds the game cache once per set of sources (reused while
    the files are unchanged); ``setup`` memory-maps it and splits it by game.
    """

    DATA = "kgs"  # the data config that builds it (models name the one they learn from)

    def __init__(self, sources, *, game=None, encoder: str = "maddison", board_size: int | None = None,
                 batch_size: int = 128, num_workers: int = 0, val_games: int = 30,
                 test_games: int = 30, split_seed: int = 0, shuffle_buffer: int = 8192,
                 augment: bool = True, cache_dir: str = "data/cache",
                 download_dir: str = "data/downloads", seed: int = 0, history: int = 0,
                 cache_workers: int | None = None, komi_augment: float = 0.0):
        super().__init__()
        # The board comes from the game config (one source of truth); board_size is for
        # use without Hydra.
        board_size = game.n if game is not None else (19 if board_size is None else board_size)
        check([
            (lambda: encoder in ENCODERS.keys(),
             f"data.encoder={encoder!r}: valid choices are {', '.join(sorted(ENCODERS.keys()))}"),
            (lambda: isinstance(board_size, int) and 9 <= board_size <= 19,
             f"data.board_size={board_size!r} must be an int in 9..19"),
            (lambda: isinstance(batch_size, int) and batch_size >= 1, f"data.batch_size={batch_size!r} must be >= 1"),
            (lambda: isinstance(num_workers, int) and num_workers >= 0,
             f"data.num_workers={num_workers!r} must be >= 0"),
            (lambda: isinstance(komi_augment, (int, float)) and 0 <= komi_augment <= 1,
             f"data.komi_augment={komi_augment!r} must be a fraction in [0, 1] (counted games given a random komi)"),
            (lambda: isinstance(val_games, int) and val_games >= 1, f"data.val_games={val_games!r} must be >= 1"),
            (lambda: isinstance(test_games, int) and test_games >= 0,
             f"data.test_games={test_games!r} must be >= 0"),
            (lambda: isinstance(shuffle_buffer, int) and shuffle_buffer >= 1,
             f"data.shuffle_buffer={shuffle_buffer!r} must be >= 1"),
            (lambda: isinstance(history, int) and history >= 0,
             f"data.history={history!r} must be an int >= 0 (past positions per sample)"),
            (lambda: cache_workers is None or (isinstance(cache_workers, int) and cache_workers >= 1),
             f"data.cache_workers={cache_workers!r} must be an int >= 1 (processes that build the game "
             f"cache; null: all cores)"),
        ])
        self.sources = list(sources) if not isinstance(sources, str) else [sources]
        self.encoder = encoder
        self.board_size = board_size
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.val_games = val_games
        self.test_games = test_games
        self.split_seed = split_seed
        self.shuffle_buffer = shuffle_buffer
        self.augment = augment
        self.cache_dir = Path(cache_dir)
        self.download_dir = Path(download_dir)
        self.seed = seed
        self.history = history
        self.komi_augment = float(komi_augment)
        self.cache_workers = cache_workers
        self.cache: GameCache | None = None
        self.splits: dict[str, np.ndarray] = {}
        self.summary: dict = {}

    @property
    def num_planes(self) -> int:
        return ENCODERS[self.encoder].num_planes

    def cache_folder(self) -> Path:
        paths = resolve_sources(self.sources, self.download_dir)
        return self.cache_dir / f"kgs-{cache_key(paths, self.board_size)}"

    def prepare_data(self) -> None:
        paths = resolve_sources(self.sources, self.download_dir)
        folder = self.cache_dir / f"kgs-{cache_key(paths, self.board_size)}"
        if (folder / "summary.json").exists():
            return
        build_cache(paths, folder, self.board_size, workers=self.cache_workers)

    def load_cache(self) -> GameCache:
        """The sources' game cache (built first if needed), memory-mapped; no split yet."""
        if self.cache is None:
            folder = self.cache_folder()
            if not (folder / "summary.json").exists():  # setup() without prepare_data()
                self.prepare_data()
            self.summary = json.loads((folder / "summary.json").read_text())
            self.cache = GameCache.load(folder, self.board_size)
        return self.cache

    def setup(self, stage: str | None = None) -> None:
        if self.splits:
            return
        g = self.load_cache().num_games
        if g < self.val_games + self.test_games + 1:
            raise ConfigError(f"the sources hold {g} usable games: too few for data.val_games="
                              f"{self.val_games} + data.test_games={self.test_games} + training games")
        self.splits = split_games(g, self.val_games, self.test_games, self.split_seed)

    def game_ids(self, split: str) -> np.ndarray:
        """The games of ``split`` (train, val, test), or every game of the sources (all)."""
        if split == "all":
            return np.arange(self.load_cache().num_games)
        self.setup()
        return self.splits[split]

    def dataset(self, split: str, *, train: bool | None = None) -> GamePositions:
        """The positions of ``split``'s games; ``train`` (default: split == "train")
        shuffles and augments them, as training reads them."""
        train = split == "train" if train is None else train
        return GamePositions(self.load_cache(), self.game_ids(split), self.encoder, shuffle=train,
                             augment=train and self.augment, shuffle_buffer=self.shuffle_buffer,
                             batch_size=self.batch_size, seed=self.seed, num_workers=self.num_workers,
                             history=self.history, komi_augment=self.komi_augment if train else 0.0)

    def _loader(self, split: str) -> DataLoader:
        hide_length_caution()
        return DataLoader(self.dataset(split), batch_size=None, num_workers=self.num_workers,
                          persistent_workers=False, pin_memory=torch.cuda.is_available())

    def train_dataloader(self) -> DataLoader:
        return self._loader("train")

    def val_dataloader(self) -> DataLoader:
        return self._loader("val")

    def test_dataloader(self) -> DataLoader:
        if not len(self.splits["test"]):
            raise ConfigError("data.test_games=0: there is no test split to evaluate")
        return self._loader("test")
