"""Speed, measured side by side in one run: ``python -m stonelab.bench <suite> [--json]``.

Suites:
  mcts     pure-MCTS playouts/s (one thread), neural-MCTS playouts/s in batched
           self-play, the forward ceiling of the same net at the same batch size,
           and self-play games/hour (8x8 connect-5, 400 playouts by default), all
           in steady state: `--parallel` slots whose games carry over, timed
           while `--games` games finish. `--game go_9` runs the same search
           kernels on 9x9 Go (pure MCTS with random playouts, and an untrained
           PolicyValueNet with n*n+1 outputs; smaller defaults: 64 playouts,
           8 games, 8 parallel). `--device cuda` runs the net there (the
           search stays on one CPU thread), `--precision bf16` under bf16
           autocast, `--forward-batches 256 1024` adds the forward ceiling at
           those batch sizes. Beside the network's share of self-play time,
           the tree's share (selection, expansion, backup on one thread) and
           playouts/s without the network: what is left once a GPU makes the
           net fast.
           `--evaluator null` times the tree alone (uniform priors over the
           candidate moves, value 0, no network), the same self-play on 1 tree
           thread and on `--threads` (here the `search.threads` count, not
           torch's), replayed from the same state and seed: playouts/s of both,
           their ratio, and whether both played the same games. It stands for
           the GPU case, so it searches 1,024 games at once unless `--parallel`
           says otherwise.
  kgs      positions/s of SGF parse + replay and of each Go feature encoder
           (one thread, features of every position of every game), the game
           cache's bytes per position, and positions/s of the whole cache build
           (parse, replay, ownership playouts) with 1 worker and with
           `--cache-workers` (default: all cores), checked byte-identical.
  train    maddison_cnn training samples/s in the Lightning loop and in a plain
           PyTorch loop over the same batches, and the share of time a Lightning
           run on the KGS stream waits for data (`--device cuda`, `--precision
           bf16` for Lightning's bf16-mixed and autocast in the plain loop).
  pruning  moves expanded per node and neural-MCTS playouts/s, unpruned vs each
           candidate-restriction variant of seed 000's ablation, on the same
           fixed positions with the same (untrained, seeded) network.
  engine   the Go engine's search (one thread, 8 leaves per network call) in playouts/s on
           9x9 and 19x19, from the empty board and two random 10%-full positions:
           pure MCTS (one random playout per leaf), and a Maddison net (--depth/--filters,
           untrained) with go.leaf_value=playouts (4 per leaf) and none; beside
           GNU Go level 10's and Pachi 5,000 playouts' seconds per move when installed
           (/usr/games/gnugo, tools/pachi/pachi from scripts/build_pachi.sh).
  precision  Go training updates of `experiment=kgs_cpu_resnet`'s net (3 residual
           blocks x 64, value head; `--blocks 6` for `experiment=kgs_resnet6x64_pieces`;
           `--batch-size` positions, default 128) in float32
           and under bfloat16 autocast, side by side on the same batch and `--threads`
           torch threads (`--device cuda` for a GPU): seconds per update of each and
           their ratio, beside whether the CPU has AVX-512 BF16 or AMX (without them,
           bfloat16 on a CPU is emulated and can be slower). What
           `trainer.precision=bf16-mixed` buys on this machine.
  vit      the belief ViT of `experiment=kgs_belief_vit_pieces` (4 layers x 64): a no-grad
           forward of `--batch-size` positions (default 256) and a training update of 128,
           the encoder in one call through PyTorch's fused attention (as before 2026-12-05)
           beside in slices of `ENCODER_CHUNK` positions (what it does now), on `--threads`
           torch threads: seconds of each and their ratio.
  update   seconds per AlphaZero update (the default net, 512 positions, 5 passes)
           on one torch thread and on `--threads`, side by side: how many threads
           training should get on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from stonelab.games import registry
from stonelab.utils.precision import cpu_bf16_flags

# conf/ of a source checkout (bench --game reads conf/game/<name>.yaml)
CONF_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "conf")


def _random_position(game, moves: int, seed: int):
    """A reproducible batch of one position, ``moves`` uniformly random legal moves from the
    start of ``game`` (a `SearchGame`); a game that ends sooner is drawn again."""
    from stonelab.search import tree as T
    from stonelab.search.game import ONGOING

    rng = np.random.default_rng(seed)
    legal = np.empty(game.num_actions, dtype=np.bool_)
    while True:
        positions = game.new_positions(1)
        for _ in range(moves):
            T.legal_at_root(game.spec, positions, 0, legal)
            if T.play_position(game.spec, positions, 0, int(rng.choice(np.flatnonzero(legal)))) != ONGOING:
                break
        else:
            return positions


def _timed(fn, min_seconds: float) -> tuple[int, float]:
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return calls, elapsed


def bench_pure(game, playouts: int, seconds: float) -> dict:
    """Pure-MCTS playouts/s (`stonelab.search.pure_mcts`) from the start and after 16 random legal moves."""
    from stonelab.search.pure_mcts import pure_mcts_at

    out = {}
    for label, moves in (("empty", 0), ("16_stones", 16)):
        positions = _random_position(game, moves, seed=7)
        pure_mcts_at(game.spec, positions, 0, 10, 5.0, 1)  # compile
        calls, elapsed = _timed(lambda p=positions: pure_mcts_at(game.spec, p, 0, playouts, 5.0, 1), seconds)
        out[f"pure_playouts_per_s_{label}"] = calls * playouts / elapsed
    out["pure_playouts_per_s"] = min(out["pure_playouts_per_s_empty"], out["pure_playouts_per_s_16_stones"])
    return out


def untrained_net(game):
    """The default policy-value net, untrained (seed torch first), sized by what ``game`` (a
    `SearchGame`) says: its planes, its board's rows and columns, its actions."""
    from stonelab.models.nets.policy_value import PolicyValueNet

    height, width = game.board_shape
    return PolicyValueNet(height, in_planes=game.num_planes, num_actions=game.num_actions, board_width=width)


def bench_neural(rules, games: int, parallel: int, playouts: int, threads: int, *, device: str = "cpu",
                 precision: str = "32", forward_batches: tuple[int, ...] = (), seconds: float = 3.0) -> dict:
    """Steady-state self-play; ``rules`` is `GomokuRules` or a `SearchGame` (Go)."""
    import torch

    from stonelab.models.alphazero import net_evaluator
    from stonelab.search.mcts import MCTSConfig
    from stonelab.search.selfplay import SelfPlaySlots

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    game = rules if hasattr(rules, "spec") else rules.search_game()
    (height, width), num_planes = game.board_shape, game.num_planes
    evaluate = net_evaluator(untrained_net(game), device, precision=precision)
    forward_seconds = [0.0]

    def timed_evaluate(planes):
        start = time.perf_counter()
        out = evaluate(planes)
        forward_seconds[0] += time.perf_counter() - start
        return out

    # Steady state, as the SelfPlay callback runs it: `parallel` slots that never
    # drain (games carry over between calls). The warm-up call compiles the
    # kernels and fills every slot with a game in progress.
    slots = SelfPlaySlots(rules, parallel, MCTSConfig(playouts=playouts), temperature_moves=8)
    rng = np.random.default_rng(0)
    slots.play(evaluate, parallel, rng)
    start = time.perf_counter()
    result = slots.play(timed_evaluate, games, rng)
    elapsed = time.perf_counter() - start
    forward = _forward_rate(evaluate, parallel, num_planes, (height, width), seconds)
    neural = result.simulations / elapsed
    tree_seconds = result.search_seconds - forward_seconds[0]
    return {
        "neural_playouts_per_s": neural,
        "forward_states_per_s": forward,
        "neural_over_forward": neural / forward,
        "network_share_of_selfplay_time": forward_seconds[0] / elapsed,
        # The rest of the search (select, expand, backup, one tree thread): what is left when the net is fast.
        "tree_share_of_selfplay_time": tree_seconds / elapsed,
        "other_share_of_selfplay_time": 1.0 - result.search_seconds / elapsed,  # move choice, records
        "playouts_per_s_without_network": result.simulations / (elapsed - forward_seconds[0]),
        "terminal_leaf_share": 1.0 - result.evaluations / max(result.simulations, 1),
        "selfplay_games_per_hour": len(result.lengths) / elapsed * 3600.0,
        "selfplay_mean_game_length": float(result.lengths.mean()),
        "selfplay_games": len(result.lengths),
        "selfplay_parallel_games": parallel,
        **{f"forward_states_per_s_batch_{b}": _forward_rate(evaluate, b, num_planes, (height, width), seconds)
           for b in forward_batches},
    }


def _forward_rate(evaluate, batch: int, num_planes: int, board: int | tuple[int, int],
                  seconds: float = 3.0) -> float:
    """States/s of ``evaluate`` on random planes [batch, num_planes, H, W] (``board``: (H, W),
    or n for n x n; numpy in and out, so a GPU's time includes both copies), after one untimed call."""
    shape = (board, board) if isinstance(board, int) else board
    planes = np.random.default_rng(1).integers(0, 2, (batch, num_planes, *shape)).astype(np.float32)
    evaluate(planes)
    calls, elapsed = _timed(lambda: evaluate(planes), seconds)
    return calls * batch / elapsed


def bench_device(name: str) -> str:
    """``--device``: cpu, cuda (cuda:N) or auto; a one-line error where there is no CUDA device."""
    import torch

    from stonelab.errors import StonelabError
    from stonelab.utils.device import resolve_device

    device = resolve_device(name)
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise StonelabError(f"--device {name}: no CUDA device here (torch.cuda.is_available() is False)")
    if not (device == "cpu" or device.startswith("cuda")):
        raise StonelabError(f"--device {name!r}: use cpu, cuda, cuda:N or auto")
    return device


def device_fields(device: str, precision: str) -> dict:
    """What the numbers ran on: the device (and a GPU's name) and the precision."""
    import torch

    out = {"device": device, "precision": precision}
    if device.startswith("cuda"):
        out["device_name"] = torch.cuda.get_device_name(torch.device(device))
    return out


def null_evaluator(num_actions: int):
    """Uniform priors (the game keeps its candidate moves and renormalises), value 0: no network.

    The answers are views of arrays made once, so the evaluator itself costs next to nothing.
    """
    priors = np.full((0, num_actions), 1.0 / num_actions, np.float32)
    values = np.zeros(0, np.float32)

    def evaluate(planes):
        nonlocal priors, values
        b = planes.shape[0]
        if b > len(values):
            priors = np.full((b, num_actions), 1.0 / num_actions, np.float32)
            values = np.zeros(b, np.float32)
        return priors[:b], values[:b]

    return evaluate


def bench_tree(rules, games: int, parallel: int, playouts: int, threads: int) -> dict:
    """Self-play playouts/s of the tree alone (`null_evaluator`) on 1 and on ``threads`` tree
    threads (``search.threads``), side by side: the same games replayed from the same steady
    state and seed, so both counts do the same work (and must give the same games)."""
    import copy
    from dataclasses import replace

    from stonelab.search.mcts import MCTSConfig
    from stonelab.search.selfplay import SelfPlaySlots

    game = rules if hasattr(rules, "spec") else rules.search_game()
    evaluate = null_evaluator(game.num_actions)
    config = MCTSConfig(playouts=playouts)
    slots = SelfPlaySlots(rules, parallel, config, temperature_moves=8)
    slots.play(evaluate, parallel, np.random.default_rng(0))  # compile, and fill every slot
    start_state = copy.deepcopy((slots.moves, slots.records))
    out, results = {}, {}
    for count in sorted({1, threads}):
        slots.moves, slots.records = copy.deepcopy(start_state)
        slots.config = replace(config, threads=count)
        start, cpu = time.perf_counter(), time.process_time()
        results[count] = slots.play(evaluate, games, np.random.default_rng(2))
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        label = f"{count}_thread{'s' if count > 1 else ''}"
        out[f"tree_playouts_per_s_{label}"] = results[count].simulations / elapsed
        # Per second of CPU used by the process: on a busy machine the share of the cores a
        # process gets caps its wall-clock speed-up; this shows the threads' own overhead.
        out[f"tree_playouts_per_cpu_s_{label}"] = results[count].simulations / cpu
    one = out["tree_playouts_per_s_1_thread"]
    many = out[f"tree_playouts_per_s_{threads}_thread{'s' if threads > 1 else ''}"]
    out["tree_threads"] = threads
    out["tree_threads_speedup"] = many / one
    out["tree_threads_identical_games"] = bool(
        np.array_equal(results[1].policies, results[threads].policies)
        and np.array_equal(results[1].lengths, results[threads].lengths))
    out["tree_games"] = len(results[1].lengths)
    out["tree_parallel_games"] = parallel
    return out


NULL_PARALLEL = 1024  # games searched at once by `mcts --evaluator null` (one GPU-sized batch of leaves)


def bench_rules(args):
    """The rules ``--game`` names: a conf/game/ file (gomoku_8x8_c5, go_9, othello_8, ...),
    with ``--board-size`` and ``--win-length`` replacing that file's values when given."""
    from hydra.utils import get_class
    from omegaconf import OmegaConf

    from stonelab.errors import ConfigError

    path = os.path.join(CONF_DIR, "game", f"{args.game}.yaml")
    if not os.path.isfile(path):
        choices = sorted(f[:-5] for f in os.listdir(os.path.join(CONF_DIR, "game")) if f.endswith(".yaml"))
        raise ConfigError(f"--game {args.game!r}: use one of conf/game/: {', '.join(choices)}")
    game = OmegaConf.load(path)
    for key, value in (("board_size", args.board_size), ("win_length", args.win_length)):
        if value is not None:
            if key not in game:
                raise ConfigError(f"--{key.replace('_', '-')}: conf/game/{args.game}.yaml has no {key} "
                                  f"(its settings: {', '.join(k for k in game if not k.startswith('_'))})")
            game[key] = value
    settings = {k: v for k, v in OmegaConf.to_container(game).items() if k != "_target_"}
    return get_class(game._target_)(**settings)  # called directly: a bad value raises its own one-line error


def default_threads(args) -> int:
    """``--threads`` when not given. The search suites run small batches on one torch thread, as
    self-play does: torch's spinning workers beside busy processes made a batch-64 forward wait on
    a worker without a core, and ``bench mcts`` on 2 threads did not finish in 10 minutes at load
    ~10 (2026-12-04) where one thread took 61 s. The tree's own threads (``--evaluator null``) wait
    on a queue, not a spin: 2 are timed beside 1. The training suites' large batches use every core."""
    if args.suite in ("mcts", "pruning", "engine"):
        return 2 if getattr(args, "evaluator", "net") == "null" else 1
    return os.cpu_count() or 1


def suite_mcts(args) -> dict:
    from stonelab.errors import ConfigError

    rules = bench_rules(args)
    spec = registry.of(rules)
    playouts = args.playouts or spec.bench_playouts
    # The tree alone stands for the GPU case, where one network call takes hundreds of leaves:
    # it searches GPU-sized batches by default (how its scaling depends on the batch: docs/benchmarks.md "Tree threads").
    null = args.evaluator == "null"
    games = args.games or args.parallel or (NULL_PARALLEL if null else spec.bench_games)
    parallel = min(args.parallel or (NULL_PARALLEL if null else spec.bench_parallel), games)
    if args.evaluator not in ("net", "null"):
        raise ConfigError(f"--evaluator {args.evaluator!r}: use net or null")
    name = rules.name
    rules = rules.search_game()  # as AlphaZero's self-play searches it (Go: no own-eye filling)
    if args.evaluator == "null":
        out = {"game": name, "evaluator": "null", "playouts": playouts, "cpu_count": os.cpu_count(),
               "load_average_1min": os.getloadavg()[0]}
        out.update(bench_tree(rules, games, parallel, playouts, args.threads))
        return out
    device = bench_device(args.device)
    out = {"game": name, "playouts": playouts, "torch_threads": args.threads,
           "cpu_count": os.cpu_count(), **device_fields(device, args.precision)}
    out.update(bench_pure(rules, args.pure_playouts, args.seconds))
    out.update(bench_neural(rules, games, parallel, playouts, args.threads, device=device,
                            precision=args.precision, forward_batches=tuple(args.forward_batches or ()),
                            seconds=args.seconds))
    return out


def pruning_variants():
    """Seed 000's Figure 3 variants plus its future work, by name."""
    from stonelab.games.gomoku.candidates import PruningConfig

    return {
        "none": PruningConfig(),
        "local6": PruningConfig(window=6),
        "local6_threat": PruningConfig(window=6, threat_aware=True),
        "local5_threat": PruningConfig(window=5, threat_aware=True),
        "local4_threat": PruningConfig(window=4, threat_aware=True),
        "local4_top8": PruningConfig(window=4, threat_aware=True, top_k=8),
        "local4_top8_within": PruningConfig(window=4, threat_aware=True, top_k=8, top_k_mode="within"),
        "local6_threat_space": PruningConfig(window=6, threat_space=True),
        "local6_adaptive": PruningConfig(window=6, threat_aware=True, adaptive=True),
    }


def fixed_positions(rules, count: int, seed: int = 11) -> list[list[int]]:
    """Move lists of reproducible mid-game positions: stones scattered near the centre, no win."""
    from stonelab.games.gomoku.rules import line_length

    rng = np.random.default_rng(seed)
    n, positions = rules.n, []
    while len(positions) < count:
        board, moves = rules.new_board(), []
        stones = int(rng.integers(4, 2 * n))
        while len(moves) < stones:
            r, c = np.clip(np.round(rng.normal((n - 1) / 2, n / 5, 2)), 0, n - 1).astype(int)
            point = int(r * n + c)
            if board[point] == 0:
                board[point] = 1 if len(moves) % 2 == 0 else -1
                moves.append(point)
                if line_length(board, n, point) >= rules.k:
                    break
        else:
            positions.append(moves)
    return positions


def suite_pruning(args) -> dict:
    import torch

    from stonelab.games.gomoku.rules import GomokuRules
    from stonelab.models.alphazero import net_evaluator
    from stonelab.search.mcts import BatchedMCTS, MCTSConfig

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rules = GomokuRules(args.board_size or 8, args.win_length or 5)  # seed 000's pruning is Gomoku's
    evaluate = net_evaluator(untrained_net(rules.search_game()))
    playouts = args.playouts or 400
    positions = fixed_positions(rules, args.parallel or 64)
    config = MCTSConfig(playouts=playouts)
    out = {"game": rules.name, "playouts": playouts, "positions": len(positions)}
    for name, pruning in pruning_variants().items():
        mcts = BatchedMCTS(rules, len(positions), config, settings=pruning)
        for g, moves in enumerate(positions):
            for move in moves:
                mcts.play(g, move)
        mcts.search(evaluate)  # compile and warm up, then time a fresh search
        mcts = BatchedMCTS(rules, len(positions), config, settings=pruning)
        for g, moves in enumerate(positions):
            for move in moves:
                mcts.play(g, move)
        start = time.perf_counter()
        mcts.search(evaluate)
        elapsed = time.perf_counter() - start
        out[f"{name}_candidates_per_node"] = mcts.candidates_mean
        out[f"{name}_candidate_reduction"] = mcts.candidate_reduction
        out[f"{name}_playouts_per_s"] = mcts.simulations / elapsed
    base = out["none_playouts_per_s"]
    for name in pruning_variants():
        out[f"{name}_speedup"] = out[f"{name}_playouts_per_s"] / base
    return out


def suite_kgs(args) -> dict:
    """SGF parse + replay, the cache build with 1 and with N workers, then each encoder
    over the cached games, one thread."""
    import tempfile
    from pathlib import Path

    from stonelab.data.kgs import GameCache, all_cores
    from stonelab.data.sgf import SkipCounts, iter_files
    from stonelab.features import ENCODERS, encode_game
    from stonelab.games.go.ownership import game_ownership

    workers = all_cores() if args.cache_workers is None else args.cache_workers
    sources = [Path(p) for p in args.sources]
    next(iter_files(sources, board_size=19))  # load the replay kernels before timing
    game_ownership(19, (), (), [0], 1, playouts=1)  # and the playouts' (forked workers inherit them)
    counts, start = SkipCounts(), time.perf_counter()
    for result in iter_files(sources, board_size=19):
        counts.add(result)
    parse_seconds = time.perf_counter() - start
    out = {"sources": [str(p) for p in sources], "games": counts.games,
           "sgf_positions_per_s": counts.moves / parse_seconds}
    with tempfile.TemporaryDirectory() as tmp:
        folders = _timed_cache_builds(sources, Path(tmp), workers, out)
        cache = GameCache.load(folders[0], 19)
        longest = int(cache.game_lengths().max())
        for name, encoder in ENCODERS.items():
            planes = np.zeros((longest, encoder.num_planes, 19, 19), dtype=np.uint8)
            targets = np.zeros(longest, dtype=np.int16)

            def encode_all(games=range(cache.num_games), enc=encoder, planes=planes, targets=targets):
                for g in games:
                    black, white, moves = cache.game(g)
                    encode_game(19, black, white, moves, int(cache.first_player[g]),
                                int(cache.rank_black[g]), int(cache.rank_white[g]), enc.encoder_id,
                                planes[:len(moves)], targets[:len(moves)])

            encode_all(range(2))  # compile / load the numba cache
            start = time.perf_counter()
            encode_all()
            out[f"{name}_positions_per_s_per_core"] = out["positions"] / (time.perf_counter() - start)
    full_kgs = 29.4e6  # seed 002's positions
    out["maddison_full_kgs_minutes_on_this_machine"] = (
        full_kgs / (out["maddison_positions_per_s_per_core"] * (os.cpu_count() or 1)) / 60)
    return out


def _timed_cache_builds(sources, tmp, workers: int, out: dict) -> list:
    """The game cache built with 1 worker, then with ``workers``, timed side by side, with
    the machine's load (busy cores are what more workers cannot have); their folders."""
    from stonelab.data.kgs import GameCache, build_cache

    out["cache_workers"] = workers
    out["load_average_1min"] = os.getloadavg()[0]
    folders = []
    for count, label in ((1, "1_worker"), (workers, "all_workers")):
        folders.append(tmp / f"cache_{label}")
        start = time.perf_counter()
        summary = build_cache(sources, folders[-1], 19, workers=count, progress=False)
        out[f"cache_build_positions_per_s_{label}"] = summary["positions"] / (time.perf_counter() - start)
    out["cache_build_speedup"] = (out["cache_build_positions_per_s_all_workers"]
                                  / out["cache_build_positions_per_s_1_worker"])
    out["cache_builds_identical"] = all(
        (folders[0] / f"{name}.npy").read_bytes() == (folders[1] / f"{name}.npy").read_bytes()
        for name in GameCache.ARRAYS)
    out["positions"] = summary["positions"]
    out["cache_bytes_per_position"] = summary["cache_bytes_per_position"]
    return folders


class _StepTimes:
    """A Lightning callback: when each training step started and ended (on a GPU, ended
    = its kernels finished: CUDA runs them asynchronously, so the clock waits for them)."""

    def __init__(self, device: str = "cpu"):
        import lightning as L

        class Recorder(L.Callback):
            def __init__(self, outer):
                self.outer = outer

            def on_train_batch_start(self, trainer, module, batch, batch_idx):
                self.outer.starts.append(time.perf_counter())

            def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
                _synchronize(device)
                self.outer.ends.append(time.perf_counter())

        self.starts: list[float] = []
        self.ends: list[float] = []
        self.callback = Recorder(self)

    def samples_per_s(self, batch_size: int, warmup: int) -> float:
        return batch_size * (len(self.ends) - 1 - warmup) / (self.ends[-1] - self.ends[warmup])

    def data_wait_fraction(self, warmup: int) -> float:
        """Share of the time between steps spent outside the step (waiting for the next batch)."""
        waits = [self.starts[i] - self.ends[i - 1] for i in range(warmup + 1, len(self.starts))]
        total = self.ends[-1] - self.ends[warmup]
        return sum(waits) / total


def _synchronize(device: str) -> None:
    """Wait for a CUDA device's queued work (a no-op on CPU), so that a clock read after it is honest."""
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize(torch.device(device))


TRAINER_PRECISION = {"32": "32-true", "bf16": "bf16-mixed"}


def suite_train(args) -> dict:
    """maddison_cnn training: Lightning loop vs a plain PyTorch loop on the same batches,
    then a real Lightning run on the KGS stream to measure the time spent waiting for data."""
    args.batch_size = args.batch_size or 128
    import contextlib
    import tempfile
    import warnings

    import lightning as L
    import torch
    from torch.utils.data import DataLoader

    from stonelab.data.kgs import KGSDataModule
    from stonelab.games.go.rules import GoRules
    from stonelab.models.move_prediction import MovePredictionModule
    from stonelab.models.nets.maddison import MaddisonNet

    warnings.filterwarnings("ignore")
    torch.set_num_threads(args.threads)
    device, bf16 = bench_device(args.device), args.precision == "bf16"
    rules, steps, warmup = GoRules(19), args.steps, 2
    with tempfile.TemporaryDirectory() as tmp:
        data = KGSDataModule(args.sources, game=rules, encoder="maddison", batch_size=args.batch_size,
                             num_workers=args.workers, val_games=1, test_games=0, cache_dir=args.cache_dir or tmp)
        data.prepare_data()
        data.setup()
        batches = []
        for batch in data.dataset("train"):
            batches.append(batch)
            if len(batches) == steps:
                break

        def module():
            torch.manual_seed(0)
            net = MaddisonNet(36, 19, depth=args.depth, filters=args.filters)
            return MovePredictionModule(net, rules, encoder="maddison", batch_size=args.batch_size)

        # Plain PyTorch: the same net, loss and optimizer, no Lightning.
        plain = module().to(device)
        opt = plain.configure_optimizers()
        autocast = (torch.autocast(torch.device(device).type, dtype=torch.bfloat16) if bf16
                    else contextlib.nullcontext())
        ends = []
        for batch in batches:
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            opt.zero_grad()
            with autocast:
                logits = plain(batch["planes"], batch["to_play"]).policy_logits
                keep = batch["target"] < 361
                loss = torch.nn.functional.cross_entropy(logits[keep], batch["target"][keep])
            loss.backward()
            opt.step()
            _synchronize(device)
            ends.append(time.perf_counter())
        plain_rate = args.batch_size * (len(ends) - 1 - warmup) / (ends[-1] - ends[warmup])

        def fit(loader, max_steps):
            times = _StepTimes(device)
            trainer = L.Trainer(max_steps=max_steps, accelerator="gpu" if device.startswith("cuda") else "cpu",
                                devices=[torch.device(device).index or 0] if device.startswith("cuda") else 1,
                                precision=TRAINER_PRECISION[args.precision], logger=False, enable_checkpointing=False,
                                enable_progress_bar=False, enable_model_summary=False, limit_val_batches=0,
                                callbacks=[times.callback], default_root_dir=tmp)
            trainer.fit(module(), train_dataloaders=loader)
            return times

        lightning = fit(DataLoader(batches, batch_size=None), steps)
        streamed = fit(data.train_dataloader(), steps)
    return {
        "model": f"maddison_cnn depth {args.depth} filters {args.filters}", "batch_size": args.batch_size,
        **device_fields(device, args.precision), "steps_timed": steps - 1 - warmup, "torch_threads": args.threads, "num_workers": args.workers,
        "plain_samples_per_s": plain_rate,
        "lightning_samples_per_s": lightning.samples_per_s(args.batch_size, warmup),
        "lightning_overhead": 1 - lightning.samples_per_s(args.batch_size, warmup) / plain_rate,
        "streamed_samples_per_s": streamed.samples_per_s(args.batch_size, warmup),
        "data_wait_fraction": streamed.data_wait_fraction(warmup),
    }


def _mean_seconds(fn, repeats: int) -> float:
    """Seconds per call of ``fn`` over ``repeats`` calls, after one warm-up call (oneDNN picks
    its kernels on the first)."""
    fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def _update_seconds(net, batch, passes: int, threads: int, repeats: int) -> float:
    """Seconds per AlphaZero update on ``threads`` torch threads: what `AlphaZeroModule.training_step`
    computes (a no-grad forward, then per pass forward + loss + backward + AdamW + the KL forward)."""
    import torch

    states, policies, values = batch
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        def update():
            with torch.no_grad():
                net(states)
            for _ in range(passes):
                log_p, v = net(states)
                loss = torch.mean((values - v) ** 2) - torch.mean(torch.sum(policies * log_p, dim=1))
                opt.zero_grad()
                loss.backward()
                opt.step()
                with torch.no_grad():
                    net(states)

        return _mean_seconds(update, repeats)
    finally:
        torch.set_num_threads(before)


def _resnet_update_seconds(batch_size: int, device: str, bf16: bool, repeats: int, blocks: int) -> float:
    """Seconds per training update (forward, policy + value loss, backward, AdamW) of the
    CPU recipe's residual net on a seeded random batch, float32 or under bf16 autocast."""
    import contextlib

    import torch
    import torch.nn.functional as F

    from stonelab.models.nets.resnet import ResidualNet

    torch.manual_seed(0)
    net = ResidualNet(36, 19, blocks=blocks, filters=64, value_head=True).to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    planes = (torch.rand(batch_size, 36, 19, 19, device=device) < 0.2).float()
    to_play = torch.ones(batch_size, device=device)
    target = torch.randint(0, 361, (batch_size,), device=device)
    result = torch.randint(0, 2, (batch_size,), device=device).float()
    autocast = torch.autocast(torch.device(device).type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()

    def update():
        with autocast:
            out = net(planes, to_play)
        loss = (F.cross_entropy(out.policy_logits.float(), target)
                + F.binary_cross_entropy_with_logits(out.value_logit.float(), result))
        opt.zero_grad()
        loss.backward()
        opt.step()
        _synchronize(device)

    return _mean_seconds(update, repeats)


def suite_precision(args) -> dict:
    """float32 against bf16 autocast for Go training updates, side by side (see the module doc)."""
    import torch

    torch.set_num_threads(args.threads)
    device, batch_size, repeats = bench_device(args.device), args.batch_size or 128, args.steps
    fp32 = _resnet_update_seconds(batch_size, device, False, repeats, args.blocks)
    bf16 = _resnet_update_seconds(batch_size, device, True, repeats, args.blocks)
    return {"net": f"resnet {args.blocks} blocks x 64, value head", "batch_size": batch_size, "device": device,
            "torch_threads": args.threads, "updates_timed": repeats, "cpu_bf16_flags": cpu_bf16_flags(),
            "seconds_per_update_fp32": fp32, "seconds_per_update_bf16": bf16, "bf16_speedup": fp32 / bf16}


def _vit_seconds(sliced: bool, batch_size: int, training: bool, repeats: int) -> float:
    """Seconds per no-grad forward (or training update) of the pieces' belief ViT, its encoder
    in slices (as it runs) or in one fused call (as before 2026-12-05)."""
    import torch

    from stonelab.models.nets import belief_vit as vit

    torch.manual_seed(0)
    net = vit.BeliefViT(36, 19, embed_dim=64, heads=4, layers=4, ff_dim=256, belief_hidden=128,
                        stem_kernel=3).train(training)
    if not sliced:
        net.encoder_slice = None
    planes, to_play = (torch.rand(batch_size, 36, 19, 19) < 0.2).float(), torch.ones(batch_size)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4)

    def step():
        if not training:
            with torch.no_grad():
                net(planes, to_play)
            return
        out = net(planes, to_play)
        loss = out.policy_logits.logsumexp(1).mean() + out.value_logit.mean() + out.confidence_logit.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    return _mean_seconds(step, repeats)


def suite_vit(args) -> dict:
    """The belief ViT's encoder whole (fused attention) beside in slices, side by side."""
    import torch

    from stonelab.models.nets.belief_vit import ENCODER_CHUNK

    torch.set_num_threads(args.threads)
    out = {"net": "belief_vit 4 layers x 64, 36 planes, 3x3 stem", "torch_threads": args.threads,
           "encoder_slice": ENCODER_CHUNK, "repeats": args.steps}
    for mode, batch_size in (("forward", args.batch_size or 256), ("update", 128)):
        whole = _vit_seconds(False, batch_size, mode == "update", args.steps)
        sliced = _vit_seconds(True, batch_size, mode == "update", args.steps)
        out.update({f"{mode}_batch": batch_size, f"{mode}_seconds_whole": whole,
                    f"{mode}_seconds_sliced": sliced, f"{mode}_speedup": whole / sliced})
    return out


def suite_update(args) -> dict:
    """AlphaZero update time on 1 torch thread and on ``--threads``, side by side (default net,
    ``--batch-size`` positions, default 512 as data.batch_size, 5 passes as model.epochs_per_step)."""
    import torch

    from stonelab.games.gomoku.rules import GomokuRules

    rules = GomokuRules(args.board_size or 8, args.win_length or 5)
    game = rules.search_game()
    batch_size = args.batch_size or 512
    torch.manual_seed(0)
    net = untrained_net(game)
    batch = (torch.randint(0, 2, (batch_size, game.num_planes, *game.board_shape)).float(),
             torch.softmax(torch.randn(batch_size, game.num_actions), dim=1), torch.rand(batch_size) * 2 - 1)
    one = _update_seconds(net, batch, 5, 1, args.steps)
    many = _update_seconds(net, batch, 5, args.threads, args.steps)
    return {"game": rules.name, "batch_size": batch_size, "passes": 5, "updates_timed": args.steps,
            "seconds_per_update_1_thread": one, f"seconds_per_update_{args.threads}_threads": many,
            "speedup_of_threads": one / many}


def engine_positions(rules, count: int = 3, stones: int = 30, seed: int = 5) -> list:
    """Reproducible positions of a Go game: the empty board and ``count - 1`` random
    openings of ``stones`` legal moves (no own-eye fills)."""
    rng = np.random.default_rng(seed)
    positions = [rules.new_state()]
    for _ in range(count - 1):
        state = rules.new_state()
        for _ in range(stones):
            legal = np.flatnonzero(state.legal_mask()[:-1])
            state.play(int(rng.choice(legal)))
        positions.append(state)
    return positions


def _engine_rate(player, positions, playouts: int) -> float:
    """Playouts per second of ``player`` searching each position afresh (after a warm-up)."""
    player.sync(positions[0])
    player.search(playouts=8)  # compiles
    done, elapsed = 0, 0.0
    for state in positions:
        player.mcts.set_position(0, player.game.position(state))
        player.root_key = None
        start = time.perf_counter()
        before = player.mcts.simulations
        player.search(playouts=playouts)
        elapsed += time.perf_counter() - start
        done += player.mcts.simulations - before
    return done / elapsed


def _gtp_move_seconds(command: list[str], rules, moves: int) -> float:
    """Mean seconds per ``genmove`` of a GTP program from the empty board (alternating colours)."""
    from stonelab.protocols.gtp_client import GTPClient

    with GTPClient(" ".join(command), timeout=300) as engine:
        engine.boardsize(rules.n)
        engine.clear_board()
        engine.komi(rules.komi)
        start = time.perf_counter()
        for i in range(moves):
            engine.send(f"genmove {'b' if i % 2 == 0 else 'w'}")
        return (time.perf_counter() - start) / moves


def suite_engine(args) -> dict:
    """The Go engine's search speed (one thread), pure and with a Maddison net, beside GNU Go
    and Pachi's seconds per move when they are installed."""
    import shutil

    import torch

    from stonelab.games.go.evaluator import GoNetEvaluator
    from stonelab.games.go.players import GoSearchPlayer, pure_mcts_player
    from stonelab.games.go.rules import GoRules
    from stonelab.games.go.search import GoSearch
    from stonelab.games.go.settings import GoSettings
    from stonelab.models.inference import MovePredictor
    from stonelab.models.nets.maddison import MaddisonNet
    from stonelab.search.mcts import MCTSConfig

    torch.set_num_threads(1)
    playouts = args.playouts or 200
    out = {"playouts": playouts, "torch_threads": 1, "net": f"maddison {args.depth}x{args.filters}, untrained"}
    for n in (9, 19):
        rules = GoRules(n)
        positions = engine_positions(rules, stones=n * n // 10)
        pure = pure_mcts_player(rules, {"playouts": playouts, "leaves_per_game": 8}, leaf_playouts=1)
        out[f"go{n}_pure_playouts_per_s"] = _engine_rate(pure, positions, playouts)
        torch.manual_seed(0)
        predictor = MovePredictor(MaddisonNet(36, n, depth=args.depth, filters=args.filters), rules, "maddison")
        for value in ("playouts", "none"):
            config = MCTSConfig(playouts=playouts, leaves_per_game=8)
            game = GoSearch(rules, max_moves=3 * rules.num_points)
            player = GoSearchPlayer(rules, GoNetEvaluator(predictor, game, value, GoSettings().leaf_playouts), config)
            out[f"go{n}_net_{value}_playouts_per_s"] = _engine_rate(player, positions, playouts)
        gnugo = shutil.which("gnugo") or ("/usr/games/gnugo" if os.path.exists("/usr/games/gnugo") else None)
        if gnugo:
            out[f"go{n}_gnugo_level10_seconds_per_move"] = _gtp_move_seconds(
                [gnugo, "--mode", "gtp", "--level", "10", "--chinese-rules"], rules, 10)
        pachi = "tools/pachi/pachi"
        if os.path.exists(pachi):
            out[f"go{n}_pachi_5000_seconds_per_move"] = _gtp_move_seconds(
                [pachi, "-t", "=5000", "threads=1,pondering=0"], rules, 10)
    return out


SUITES = {"mcts": suite_mcts, "pruning": suite_pruning, "kgs": suite_kgs, "train": suite_train,
          "update": suite_update, "engine": suite_engine, "precision": suite_precision, "vit": suite_vit}


def _counted(least: int):
    """An argparse type for a whole number >= least, refused with the number it got."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, got {value}")
        return value
    return parse


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stonelab.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", choices=sorted(SUITES))
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--game", default="gomoku_8x8_c5",
                        help="mcts: a conf/game/ file (gomoku_8x8_c5, go_9, othello_8, connect4, ...)")
    parser.add_argument("--board-size", type=_counted(1), default=None,
                        help="replaces the game file's board_size (pruning, update: Gomoku's, default 8)")
    parser.add_argument("--win-length", type=_counted(1), default=None,
                        help="replaces the game file's win_length (pruning, update: default 5)")
    parser.add_argument("--playouts", type=_counted(1), default=None,
                        help="neural MCTS playouts per move (default 400; go: 64)")
    parser.add_argument("--pure-playouts", type=_counted(1), default=1000, help="pure MCTS playouts per move")
    parser.add_argument("--games", type=_counted(1), default=None,
                        help="self-play games (mcts; default 192, go: 8); positions (pruning)")
    parser.add_argument("--parallel", type=_counted(1), default=None,
                        help="self-play games searched at once; finished slots start the next game "
                             "(default 64, go: 8, --evaluator null: 1024)")
    parser.add_argument("--threads", type=_counted(1), default=None,
                        help="torch threads (default: 1 for mcts, as self-play searches; all cores for the "
                             "training suites); mcts --evaluator null: tree threads (search.threads, default 2), "
                             "timed beside 1")
    parser.add_argument("--evaluator", default="net",
                        help="mcts: net (an untrained net) or null (uniform priors, value 0: the tree alone)")
    parser.add_argument("--seconds", type=_positive_seconds, default=3.0,
                        help="minimum time per pure-MCTS timing and per forward-ceiling timing (mcts)")
    parser.add_argument("--sources", nargs="+", default=["data/kgs"],
                        help="SGF files, folders or archives (kgs, train)")
    parser.add_argument("--steps", type=_counted(1), default=20, help="training steps per loop (train); updates timed (update, precision, vit)")
    parser.add_argument("--batch-size", type=_counted(1), default=None, help="train and precision (default 128), update (default 512), vit's forward (default 256)")
    parser.add_argument("--depth", type=_counted(1), default=12, help="maddison_cnn layers (train)")
    parser.add_argument("--blocks", type=_counted(1), default=3,
                        help="residual blocks of the net (precision; 6 for experiment=kgs_resnet6x64_pieces)")
    parser.add_argument("--filters", type=_counted(1), default=128, help="maddison_cnn filters (train)")
    parser.add_argument("--workers", type=_counted(0), default=1, help="DataLoader workers (train)")
    parser.add_argument("--cache-workers", type=_counted(1), default=None,
                        help="kgs: game cache build processes timed beside 1 (default: all cores)")
    parser.add_argument("--device", default="cpu",
                        help="mcts, train: where the net runs: cpu (default), cuda, cuda:N or auto")
    parser.add_argument("--precision", choices=["32", "bf16"], default="32",
                        help="mcts: the search forward's; train: 32-true or bf16-mixed (default 32)")
    parser.add_argument("--forward-batches", type=_counted(1), nargs="+", default=None, metavar="N",
                        help="mcts: also the forward ceiling at these batch sizes (e.g. 256 1024)")
    parser.add_argument("--cache-dir", default=None,
                        help="train: keep the KGS game cache here for the next run (default: a temporary folder)")
    args = parser.parse_args(argv)
    if args.threads is None:
        args.threads = default_threads(args)
    from stonelab.errors import StonelabError

    try:
        out = SUITES[args.suite](args)
    except StonelabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(out))
    else:
        width = max(len(k) for k in out)
        for key, value in out.items():
            text = f"{value:,.3f}" if isinstance(value, float) else str(value)
            print(f"{key:<{width}}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
