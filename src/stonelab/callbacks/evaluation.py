"""The Evaluation callback: the arena beside the trainer."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from functools import partial

import lightning as L
import numpy as np

from stonelab.arena.gomocup_player import GomocupOpponent, GomocupPlayer, refuse_other_games, whole_number
from stonelab.arena.players import NeuralMCTSPlayer, PureMCTSPlayer, play_match, pure_mcts_player
from stonelab.arena.ratings import MatchResult
from stonelab.callbacks.logging import log_metrics
from stonelab.callbacks.selfplay import own_search_settings
from stonelab.callbacks.stop import StopRequested, stop_checking, stop_signal
from stonelab.errors import ConfigError, check
from stonelab.games import registry
from stonelab.models import checkpoints
from stonelab.models.evaluator import NetEvaluator, check_search_precision, search_precision
from stonelab.run_folder import refused_in_one_line
from stonelab.search.mcts import MCTSConfig
from stonelab.utils.checkpoint_io import append_whole
from stonelab.utils.distributed import sum_over_ranks
from stonelab.utils.threads import check_threads, torch_threads

log = logging.getLogger(__name__)


class Evaluation(L.Callback):
    """Every ``every_n_rounds`` self-play rounds (and at the end) play ``games`` games.

    Colours alternate. The opponent is pure MCTS with ``pure_playouts``, raised by
    ``playouts_step`` after a perfect score up to ``max_pure_playouts`` (as
    AlphaZero_Gomoku does), or the network of ``opponent_checkpoint`` (then each pair
    of games, one per colour, starts from a random 2-stone opening: two networks
    searching without noise would replay the same two games). That file may also be a net
    that AlphaZero_Gomoku publishes (`stonelab.models.nets.alphazero_gomoku`); a net
    opponent searches ``opponent_playouts`` (None: the player's playouts). On Go,
    ``opponent_command`` is a GTP engine; on Gomoku (five in a row), ``gomocup`` is an external
    Gomocup brain such as Rapfi (``conf/gomocup/rapfi.yaml``'s settings, e.g. ``{command:
    /path/pbrain-rapfi, max_node: 10}``), from the same random 2-stone openings, its max_node
    raised to the next of ``gomocup_ladder`` after a perfect score. Logs eval/win_ratio with
    its 95% Wilson interval, keeps ``best.ckpt`` (best win ratio against the current
    opponent) and appends every match to
    ``evaluations.jsonl`` in the checkpoint folder. With DDP each rank plays its
    share of the games and the results are summed.

    ``precision`` ("32", "bf16", None: follow ``trainer.precision``) is the search
    forward's, for the player and a checkpoint opponent alike. Their evaluators are
    built once per fit: no net is moved to the device again for each match.
    """

    def __init__(self, search: dict | MCTSConfig, *, every_n_rounds: int = 50, games: int = 10,
                 pure_playouts: int = 1000, playouts_step: int = 1000, max_pure_playouts: int = 5000,
                 opponent_checkpoint: str | None = None, opponent_command: str | None = None,
                 seed: int = 0, dirpath: str | None = None,
                 at_train_end: bool = True, pruning=None, torch_threads: int | None = 1,
                 precision: str | None = None, opponent_playouts: int | None = None, gomocup: dict | None = None,
                 gomocup_ladder: list[int] | None = None):
        check([
            (lambda: every_n_rounds >= 1, f"callbacks.evaluation.every_n_rounds={every_n_rounds!r} must be >= 1"),
            (lambda: games >= 1, f"callbacks.evaluation.games={games!r} must be >= 1"),
            (lambda: isinstance(pure_playouts, int) and pure_playouts >= 1,
             f"callbacks.evaluation.pure_playouts={pure_playouts!r} must be a whole number >= 1"),
            (lambda: isinstance(playouts_step, int) and playouts_step >= 0,
             f"callbacks.evaluation.playouts_step={playouts_step!r} must be a whole number >= 0"),
            (lambda: isinstance(max_pure_playouts, int) and max_pure_playouts >= 1,
             f"callbacks.evaluation.max_pure_playouts={max_pure_playouts!r} must be a whole number >= 1"),
            (lambda: opponent_playouts is None or (isinstance(opponent_playouts, int) and opponent_playouts >= 1),
             f"callbacks.evaluation.opponent_playouts={opponent_playouts!r} must be a whole number >= 1 "
             f"(or null: search.playouts)"),
        ])
        self.opponent_playouts = opponent_playouts
        check_threads(torch_threads, "callbacks.evaluation.torch_threads")
        self.precision = check_search_precision(precision, "callbacks.evaluation.precision")
        if opponent_checkpoint and not os.path.isfile(opponent_checkpoint):
            raise ConfigError(f"callbacks.evaluation.opponent_checkpoint={opponent_checkpoint}: no such file")
        if sum(map(bool, (opponent_checkpoint, opponent_command, gomocup))) > 1:
            raise ConfigError("callbacks.evaluation: give one of opponent_checkpoint, opponent_command "
                              "and gomocup, not several")
        self.opponent_command = opponent_command
        self.gomocup = GomocupOpponent.from_config(gomocup, "callbacks.evaluation.gomocup") if gomocup else None
        self.gomocup_ladder = self._checked_ladder(gomocup_ladder)
        self._gomocup_folder: str | None = None  # the brains' INFO folder and stderr, made on first use
        self.search = search if isinstance(search, MCTSConfig) else MCTSConfig(**search)
        self.game_settings = pruning  # the player under test searches like self-play (`own_search_settings`)
        self.every_n_rounds = every_n_rounds
        self.games = games
        self.playouts_step = playouts_step
        self.max_pure_playouts = max_pure_playouts
        self.opponent_checkpoint = opponent_checkpoint
        self.seed = seed
        self.dirpath = dirpath
        self.at_train_end = at_train_end
        self.torch_threads = torch_threads
        # State kept in checkpoints.
        self.pure_playouts = pure_playouts
        self.best_win_ratio = -1.0
        self.last_eval_round = 0
        self.history: list[dict] = []
        self.elapsed_before = 0.0  # training seconds of earlier sessions of a resumed run
        self.cpu_before = 0.0  # and the CPU seconds this process used in them
        self._fit_start: float | None = None
        self._fit_cpu_start: float | None = None
        self._evaluators: dict[str, NetEvaluator] = {}  # "player" / "opponent", built on first use
        self._opponent_net, self._opponent_label = None, None  # loaded in on_fit_start

    def _checked_ladder(self, ladder) -> list[int]:
        """``gomocup_ladder``'s max_node rungs, checked to rise ([]: the brain's max_node stays)."""
        rungs = list(ladder or [])
        where = f"callbacks.evaluation.gomocup_ladder={rungs}"
        if rungs and (self.gomocup is None or self.gomocup.max_node is None):
            raise ConfigError(f"{where} raises a Gomocup brain's max_node: it needs callbacks.evaluation.gomocup "
                              f"with a max_node to start from")
        if any(not whole_number(n) or n < 1 for n in rungs) or rungs != sorted(set(rungs)):
            raise ConfigError(f"{where} must be rising whole numbers >= 1 (the max_node of each rung)")
        return rungs

    def state_dict(self) -> dict:
        return {"pure_playouts": self.pure_playouts, "gomocup_max_node": self.gomocup and self.gomocup.max_node,
                "best_win_ratio": self.best_win_ratio,
                "last_eval_round": self.last_eval_round, "history": json.dumps(self.history),
                "elapsed_s": self.elapsed(), "cpu_s": self.cpu_elapsed()}

    def load_state_dict(self, state: dict) -> None:
        self.pure_playouts = int(state["pure_playouts"])
        if self.gomocup and state.get("gomocup_max_node"):  # the rung the run had climbed to
            self.gomocup = dataclasses.replace(self.gomocup, max_node=int(state["gomocup_max_node"]))
        self.best_win_ratio = float(state["best_win_ratio"])
        self.last_eval_round = int(state["last_eval_round"])
        self.history = json.loads(state["history"])
        self.elapsed_before = float(state.get("elapsed_s", 0.0))
        self.cpu_before = float(state.get("cpu_s", 0.0))

    def elapsed(self) -> float:
        """Wall seconds of training so far, across resumes (for time-to-strength)."""
        now = time.perf_counter() - self._fit_start if self._fit_start is not None else 0.0
        return self.elapsed_before + now

    def cpu_elapsed(self) -> float:
        """CPU seconds of this process (all its threads) over the same span: time to strength at
        equal CPU, which wall seconds are not when runs share a machine."""
        now = time.process_time() - self._fit_cpu_start if self._fit_cpu_start is not None else 0.0
        return self.cpu_before + now

    def on_fit_start(self, trainer, pl_module) -> None:
        self._fit_start, self._fit_cpu_start = time.perf_counter(), time.process_time()
        spec = registry.of(pl_module.game)
        if self.opponent_command and "gtp" not in spec.protocols:
            raise ConfigError(f"callbacks.evaluation.opponent_command: a GTP engine plays Go; "
                              f"this run plays {spec.name}")
        if self.gomocup:
            refuse_other_games(pl_module.game)
        # Refuse an opponent of another game before any self-play, and load it once.
        # A stonelab checkpoint of the same game and board, or AlphaZero_Gomoku's published net.
        self._opponent_net, self._opponent_label = (
            checkpoints.load_opponent(self.opponent_checkpoint, pl_module.identity())
            if self.opponent_checkpoint else (None, None))

    def opponent_name(self) -> str:
        if self.gomocup:
            return f"gomocup:{self.gomocup.label}"
        if self.opponent_command:
            return f"gtp:{self.opponent_command}"
        if self.opponent_checkpoint:
            return self._opponent_label or f"checkpoint:{self.opponent_checkpoint}"
        return f"pure_mcts_{self.pure_playouts}"

    def opponent_search(self) -> MCTSConfig:
        """A net opponent's search: the player's, at ``opponent_playouts`` if given; AlphaZero_Gomoku's
        net searches as its own player does (c_puct 5, a fresh tree every move)."""
        search = dataclasses.replace(self.search, playouts=self.opponent_playouts or self.search.playouts)
        if self.opponent_name().startswith("alphazero_gomoku:"):
            search = dataclasses.replace(search, c_puct=5.0, reuse_tree=False)
        return search

    @property
    def against_pure_mcts(self) -> bool:
        return not (self.opponent_checkpoint or self.opponent_command or self.gomocup)

    def on_train_start(self, trainer, pl_module) -> None:
        # A match due when a stop signal ended the run (cut short, or not yet begun) is
        # played now, in the resumed run. A fresh run's buffer fill has made no update
        # yet: its first match comes after one, as before.
        if pl_module.train_steps > 0 and self._due(pl_module.rounds):
            self.evaluate(trainer, pl_module)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if self._due(pl_module.rounds):
            self.evaluate(trainer, pl_module)

    def _due(self, rounds: int) -> bool:
        return rounds % self.every_n_rounds == 0 and rounds != self.last_eval_round

    def on_train_end(self, trainer, pl_module) -> None:
        if self.at_train_end and pl_module.rounds != self.last_eval_round:
            self.evaluate(trainer, pl_module)

    def evaluate(self, trainer, module) -> MatchResult | None:
        """Play and record a match; None if a stop signal cut it short (nothing is recorded)."""
        start, elapsed, cpu = time.perf_counter(), self.elapsed(), self.cpu_elapsed()  # the strength reached by now
        result = self._play_share(trainer, module)
        if result is None:
            if trainer.is_global_zero:
                log.info("%s: evaluation at round %d cut short after %.1f s; a resumed run plays it again",
                         stop_signal(trainer), module.rounds, time.perf_counter() - start)
            return None
        record = {
            "round": module.rounds, "train_step": module.train_steps, "games_played": module.games_played,
            "elapsed_s": round(elapsed, 1), "cpu_s": round(cpu, 1),
            "opponent": self.opponent_name(), "wins": result.wins, "draws": result.draws,
            "losses": result.losses, "win_ratio": result.win_ratio,
            "ci_low": result.interval[0], "ci_high": result.interval[1],
            "opponent_playouts": self.pure_playouts if self.against_pure_mcts else None,
            "seconds": time.perf_counter() - start,
        }
        self.history.append(record)
        self.last_eval_round = module.rounds
        metrics = {"eval/win_ratio": result.win_ratio, "eval/win_ratio_ci_low": result.interval[0],
                   "eval/win_ratio_ci_high": result.interval[1], "eval/opponent_playouts": float(self.pure_playouts)}
        log_metrics(trainer, metrics, step=module.train_steps)
        improved = result.win_ratio > self.best_win_ratio
        if improved:
            self.best_win_ratio = result.win_ratio
        if improved and self.dirpath:
            trainer.save_checkpoint(os.path.join(self.dirpath, "best.ckpt"))
        if trainer.is_global_zero:
            log.info("evaluation at round %d vs %s: %s (%.0f s)", module.rounds, record["opponent"], result,
                     record["seconds"])
            if self.dirpath:
                path = os.path.join(self.dirpath, "evaluations.jsonl")
                with refused_in_one_line(path, "the evaluation record"):  # one line, and never half a record
                    os.makedirs(self.dirpath, exist_ok=True)
                    append_whole(path, json.dumps(record) + "\n")
        self.harder_after_perfect(result.win_ratio)
        return result

    def harder_after_perfect(self, win_ratio: float) -> None:
        """A perfect score says little more: face a stronger opponent (pure MCTS's next
        ``playouts_step``, the Gomocup brain's next ``gomocup_ladder`` rung); best restarts."""
        if win_ratio < 1.0:
            return
        if self.against_pure_mcts and self.pure_playouts < self.max_pure_playouts:
            self.pure_playouts = min(self.pure_playouts + self.playouts_step, self.max_pure_playouts)
        elif self.gomocup and (higher := [n for n in self.gomocup_ladder if n > self.gomocup.max_node]):
            self.gomocup = dataclasses.replace(self.gomocup, max_node=higher[0])
        else:
            return
        self.best_win_ratio = -1.0

    def progress_text(self) -> str:
        """The latest evaluation, for the per-round progress line."""
        if not self.history:
            return ""
        h = self.history[-1]
        return (f"eval {h['win_ratio']:.2f} [{h['ci_low']:.2f}, {h['ci_high']:.2f}] vs {h['opponent']} "
                f"(round {h['round']})")

    def result_fields(self, trainer) -> dict:
        """This callback's part of result.json."""
        if not self.history:
            return {}
        ratios = [h["win_ratio"] for h in self.history]
        best = os.path.join(self.dirpath, "best.ckpt") if self.dirpath else None
        return {"evaluations": self.history, "final_win_ratio": ratios[-1], "best_win_ratio": max(ratios),
                "best_evaluation_checkpoint": best if best and os.path.isfile(best) else None}

    def seconds_after_training(self) -> float:
        """How long the final evaluation may take: the longest match of this run so far,
        scaled to today's opponent (pure MCTS time grows with its playouts). The Budget
        callback keeps this much of ``max_time`` free; 0 before the first evaluation."""
        if not self.at_train_end:
            return 0.0
        estimates = [h["seconds"] * (self.pure_playouts / h["opponent_playouts"] if h.get("opponent_playouts") else 1.0)
                     for h in self.history]
        return max(estimates, default=0.0)

    def _play_share(self, trainer, module) -> MatchResult | None:
        """This rank's share of the games, summed over ranks; None if a stop signal cut any share short."""
        rank, world = trainer.global_rank, trainer.world_size
        games = self.games // world + (1 if rank < self.games % world else 0)
        wins = draws = losses = cut = 0
        stop = partial(stop_signal, trainer)  # checked before every search step
        if games > 0 and self.opponent_command:
            try:
                with module.evaluation_mode(), torch_threads(self.torch_threads):
                    result = self._gtp_match(module, games, stop)
                wins, draws, losses = result.wins, result.draws, result.losses
            except StopRequested:
                cut = 1
        elif games > 0:
            try:
                with module.evaluation_mode(), torch_threads(self.torch_threads):
                    player = NeuralMCTSPlayer(module.game, stop_checking(self._evaluator(trainer, module, "player"), stop),
                                              self.search, settings=own_search_settings(module.game, self.game_settings))
                    opponent = self._opponent(trainer, module, stop)
                    # Two deterministic searchers (networks, Rapfi): random 2-stone openings vary the games.
                    opening = 2 if self.opponent_checkpoint or self.gomocup else 0
                    try:
                        result = play_match(module.game, player, opponent, games, opening_moves=opening,
                                            seed=(self.seed * 7919 + module.rounds) * 64 + module.global_rank)
                    finally:
                        if self.gomocup:
                            opponent.close()  # the brains of unfinished games (a stop signal, a fault)
                    wins, draws, losses = result.wins, result.draws, result.losses
            except StopRequested:
                cut = 1
        # Shares take each rank its own time: summed on the side group (stonelab.utils.distributed).
        wins, draws, losses, cut = sum_over_ranks(trainer, [wins, draws, losses, cut])
        return None if cut else MatchResult(int(wins), int(draws), int(losses))

    def _gtp_match(self, module, games: int, stop) -> MatchResult:
        """``games`` Go games of the module's net with search against the GTP engine of
        ``opponent_command``, refereed and counted as ``task=gtp_match`` does (dead stones
        taken off by a cleanup phase or the engine's final_status_list)."""
        from stonelab.arena.gtp_match import LocalEngine, gtp_match, start_game
        from stonelab.models.alphazero_go import AlphaZeroGoModel
        from stonelab.protocols.gtp_client import GTPClient, GTPEngineError
        from stonelab.protocols.gtp_search import search_gtp_engine

        def between_games(index, record, so_far):
            if stop():
                raise StopRequested

        search = {**dataclasses.asdict(self.search), "max_nodes": None}
        model = AlphaZeroGoModel(module.net, module.game, module.device)
        try:
            engine = GTPClient(str(self.opponent_command), timeout=120.0)
        except GTPEngineError as exc:
            raise ConfigError(f"callbacks.evaluation.opponent_command={self.opponent_command!r}: {exc}") from None
        with engine, LocalEngine(search_gtp_engine(model, search), label="stonelab") as ours:
            engine.label = engine.identity()
            start_game(engine, module.game)
            result, _ = gtp_match(ours, engine, module.game, games, 2 * module.game.num_points,
                                  opening_moves=2, seed=self.seed * 7919 + module.rounds, on_game=between_games)
        return result

    def _evaluator(self, trainer, module, which: str) -> NetEvaluator:
        """The player's (the module's net) or the checkpoint opponent's evaluator, built once
        on the module's device (again only if the module changed device or net)."""
        cached = self._evaluators.get(which)
        net = module.net if which == "player" else self._opponent_net
        if cached is None or cached.device != module.device or cached.net is not net:
            precision = search_precision(self.precision, trainer.precision)
            cached = (module.evaluator(precision, score_utility=self.search.score_utility) if which == "player"
                      else NetEvaluator(self._opponent_net, module.device, precision=precision))
            self._evaluators[which] = cached
        return cached

    def _brain_folder(self, trainer) -> str:
        """The Gomocup brain's INFO folder and stderr: inside the run, beside its checkpoints,
        so that what the brain said stays with the run that heard it."""
        root = os.path.dirname(self.dirpath) if self.dirpath else trainer.default_root_dir
        folder = os.path.join(root, "gomocup_brain")
        os.makedirs(folder, exist_ok=True)
        return folder

    def _opponent(self, trainer, module, stop):
        seed = self.seed * 7919 + module.rounds
        if self.opponent_checkpoint:
            evaluate = stop_checking(self._evaluator(trainer, module, "opponent"), stop)
            return NeuralMCTSPlayer(module.game, evaluate, self.opponent_search(), name="opponent")
        if self.gomocup:
            if self._gomocup_folder is None:
                self._gomocup_folder = self._brain_folder(trainer)
            return _StopBetweenGames(GomocupPlayer(module.game, self.gomocup, self._gomocup_folder), stop)
        pure = pure_mcts_player(module.game, self.pure_playouts, self.search.c_puct, seed=seed)
        # Gomoku's pure MCTS searches one game at a time; Go's is the batched search over all games
        return _StopBetweenGames(pure, stop) if isinstance(pure, PureMCTSPlayer) else _StopBeforeSearch(pure, stop)


class _StopBetweenGames:
    """A player that searches one game at a time (pure MCTS), asked game by game so that a
    stop signal is seen between two searches rather than after a move in every game."""

    def __init__(self, player, stop):
        self.player, self.stop = player, stop

    def __getattr__(self, name):  # name, reset, observe: the player's own
        return getattr(self.player, name)

    def choose(self, games: np.ndarray) -> np.ndarray:
        moves = []
        for g in games:
            if self.stop():
                raise StopRequested
            moves.append(self.player.choose(np.array([g]))[0])
        return np.array(moves, dtype=np.int64)


class _StopBeforeSearch:
    """A batched player asked to look at the stop signal before each search of all its games."""

    def __init__(self, player, stop):
        self.player, self.stop = player, stop

    def __getattr__(self, name):  # name, reset, observe: the player's own
        return getattr(self.player, name)

    def choose(self, games: np.ndarray) -> np.ndarray:
        if self.stop():
            raise StopRequested
        return self.player.choose(games)
