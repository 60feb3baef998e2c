"""The SelfPlay callback: plays games with the current network between updates."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import time
from collections.abc import Mapping
from functools import partial

import lightning as L
import numpy as np
from lightning.pytorch.utilities import rank_zero_warn

from stonelab.callbacks.logging import log_metrics
from stonelab.callbacks.stop import StopRequested, stop_checking, stop_signal
from stonelab.errors import ConfigError, check
from stonelab.games import registry
from stonelab.models.evaluator import check_search_precision, search_precision
from stonelab.search.mcts import MCTSConfig
from stonelab.search.selfplay import SelfPlaySlots
from stonelab.utils.distributed import by_rank, gather_to_rank_zero, share_of, sum_over_ranks
from stonelab.utils.threads import check_threads, torch_threads

log = logging.getLogger(__name__)


class SelfPlay(L.Callback):
    """Every ``steps_per_round`` updates, finish ``games_per_round`` games.

    ``parallel_games`` slots (default ``games_per_round``) are searched
    together and never drain: a finished game's slot starts the next game at
    once, and games still going at the end of a round continue in the next
    one (with the updated network), so every search step evaluates a full
    batch. Games in progress are saved in the checkpoint. Games run in eval and inference mode on the module's device (the GPU when
    there is one) and go into the DataModule's replay buffer before the next
    step samples it. Before training starts the buffer is filled to at least
    one batch. Randomness is seeded by (seed, rank, round), so a resumed run
    plays the same games it would have played.

    A run that plays several board sizes (``data.board_sizes``) keeps one group of slots per
    size (``parallel_games`` split between them) and plays each round's games in equal shares
    (a remainder goes to the sizes in turn, round by round); every position goes to its
    size's buffer.

    ``precision`` ("32", "bf16", None: follow ``trainer.precision``) is the search
    forward's (`stonelab.models.evaluator`). One evaluator serves the whole fit: the
    net is not moved per round and the leaves' host buffer is reused.
    """

    def __init__(self, search: dict | MCTSConfig, *, games_per_round: int = 1,
                 steps_per_round: int = 1, temperature_moves: int = 8, seed: int = 0,
                 torch_threads: int | None = 1, pruning: Mapping | object | None = None,
                 parallel_games: int | None = None, precision: str | None = None,
                 resign_below: float | None = None, resign_playthrough: float = 0.1,
                 fast_playouts: int | None = None, full_search_share: float = 0.25,
                 opening_moves: int = 0, opening_share: float = 0.5):
        check([
            (lambda: games_per_round >= 1, f"callbacks.selfplay.games_per_round={games_per_round!r} must be >= 1"),
            (lambda: steps_per_round >= 1, f"callbacks.selfplay.steps_per_round={steps_per_round!r} must be >= 1"),
            (lambda: parallel_games is None or parallel_games >= 1,
             f"callbacks.selfplay.parallel_games={parallel_games!r} must be >= 1 (or null: all)"),
            (lambda: temperature_moves >= 0,
             f"callbacks.selfplay.temperature_moves={temperature_moves!r} must be >= 0"),
            (lambda: resign_below is None or -1.0 <= resign_below < 1.0,
             f"callbacks.selfplay.resign_below={resign_below!r} must be a value in [-1, 1) (or null: never resign)"),
            (lambda: 0.0 <= resign_playthrough <= 1.0,
             f"callbacks.selfplay.resign_playthrough={resign_playthrough!r} must be a share in [0, 1]"),
            (lambda: fast_playouts is None or (isinstance(fast_playouts, int) and fast_playouts >= 1),
             f"callbacks.selfplay.fast_playouts={fast_playouts!r} must be a whole number >= 1 (or null: off)"),
            (lambda: 0.0 < full_search_share <= 1.0,
             f"callbacks.selfplay.full_search_share={full_search_share!r} must be a share in (0, 1]"),
            (lambda: isinstance(opening_moves, int) and not isinstance(opening_moves, bool) and opening_moves >= 0,
             f"callbacks.selfplay.opening_moves={opening_moves!r} must be a whole number >= 0 (0: off)"),
            (lambda: 0.0 <= opening_share <= 1.0,
             f"callbacks.selfplay.opening_share={opening_share!r} must be a share in [0, 1]"),
        ])
        self.opening_moves = opening_moves
        self.opening_share = opening_share
        self.fast_playouts = fast_playouts
        self.full_search_share = full_search_share
        self.resign_below = resign_below
        self.resign_playthrough = resign_playthrough
        check_threads(torch_threads, "callbacks.selfplay.torch_threads")
        self.precision = check_search_precision(precision, "callbacks.selfplay.precision")
        self.search = search if isinstance(search, MCTSConfig) else MCTSConfig(**search)
        self.game_settings = pruning  # the pruning group's values; the game's own settings from `setup` on
        self.games_per_round = games_per_round
        self.steps_per_round = steps_per_round
        self.temperature_moves = temperature_moves
        self.seed = seed
        self.torch_threads = torch_threads
        self.parallel_games = parallel_games
        self.last_stats: dict = {}  # the latest round's metrics, for result.json
        self.games_finished = 0  # by this rank since this process started, with a digest of them
        self.games_seen = hashlib.blake2b(digest_size=8)
        self.sessions: dict[int, SelfPlaySlots] | None = None  # board size -> its slots; built on first use
        self._evaluator = None  # built on first use, on the module's device
        self._loaded: dict = {}  # the checkpoint's games in progress, every rank's
        self._trainer = None
        self._game = None  # the module's game, known from `setup`

    def on_train_start(self, trainer, pl_module) -> None:
        # Epoch 0's first batch is drawn inside the first step; fill the buffer first.
        # Under DDP every rank plays rounds until all buffers hold a batch: game lengths
        # differ between ranks, and a rank one round ahead would reach Evaluation's
        # every_n_rounds match (a collective) alone and hang both ranks. A stop signal on
        # any rank ends the fill on all (StopOnSignal then stops the run).
        # No update ends before the buffer holds a batch, so the budget (checked after each
        # update) is checked here too: a tiny max_time or max_rounds ends the fill.
        data = trainer.datamodule
        budgets = [cb for cb in trainer.callbacks if hasattr(cb, "stop_if_reached")]
        while True:
            if any([budget.stop_if_reached(trainer, pl_module) for budget in budgets]):  # a collective: no short cut
                return
            stopping, short = sum_over_ranks(trainer, [stop_signal(trainer) is not None,
                                                       len(data.buffer) < data.batch_size])
            if stopping or not short:
                return
            self.play_round(trainer, pl_module)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        if pl_module.train_steps % self.steps_per_round == 0:
            self.play_round(trainer, pl_module)

    def play_round(self, trainer, module) -> bool:
        """One round of self-play; False if a stop signal cut it short (then nothing of it is kept)."""
        start = time.perf_counter()
        rng = np.random.default_rng([self.seed, trainer.global_rank, module.rounds])
        sessions = self._sessions(trainer, module)
        before = {size: slots.state_dict() for size, slots in sessions.items()}  # as the round found them
        evaluate = stop_checking(self._evaluator_of(trainer, module), partial(stop_signal, trainer))
        shares = round_shares(self.games_per_round, list(sessions), module.rounds)
        try:
            with module.evaluation_mode(), torch_threads(self.torch_threads):
                games = [sessions[size].play(evaluate, share, rng) for size, share in shares.items() if share]
        except StopRequested:
            # Back to the round's start: the checkpoint then holds the state this round began
            # from, and the resumed run plays it again with the same seed, so it plays the
            # games the uninterrupted run would have played.
            for size, slots in sessions.items():
                slots.load_state_dict(before[size])
            if trainer.is_global_zero:
                log.info("%s: self-play round %d cut short after %.1f s; a resumed run plays it again",
                         stop_signal(trainer), module.rounds + 1, time.perf_counter() - start)
            return False
        self._record(trainer, module, games, list(sessions.values()), time.perf_counter() - start)
        return True

    def _record(self, trainer, module, games: list, sessions: list[SelfPlaySlots], elapsed: float) -> None:
        """Put a round's finished games (one `SelfPlayGames` per board size played) into the
        buffer, count them, log the round's metrics."""
        added = 0
        for played in games:
            aux = None if played.ownership is None else (played.ownership, played.scores, played.aux_weights)
            added += trainer.datamodule.add_games(played.planes, played.policies, played.values, aux)
            self.games_seen.update(played.planes.tobytes())
            self.games_seen.update(played.winners.tobytes())
        lengths = np.concatenate([played.lengths for played in games])
        winners = np.concatenate([played.winners for played in games])
        evaluations = sum(played.evaluations for played in games)
        finished = len(lengths)
        module.rounds += 1
        module.games_played += finished
        stats = {
            "selfplay/game_length": float(lengths.mean()),
            **({f"selfplay/game_length_{played.planes.shape[-1]}": float(played.lengths.mean()) for played in games}
               if len(sessions) > 1 else {}),
            "selfplay/buffer_size": float(len(trainer.datamodule.buffer)),
            "selfplay/games_per_hour": finished / elapsed * 3600.0,
            "selfplay/carried_games": float(sum(slots.carried_games for slots in sessions)),
            "selfplay/positions_added": float(added),
            "selfplay/black_win_share": float((winners == 1).mean()),
            "selfplay/draw_share": float((winners == 0).mean()),
            "search/playouts_per_s": sum(played.simulations for played in games) / elapsed,
            # per expanded node: each size's mean weighted by its network evaluations (one per expansion)
            "search/candidates_mean": sum(p.candidates_mean * p.evaluations for p in games) / max(evaluations, 1),
            "search/candidate_reduction": sum(p.candidate_reduction * p.evaluations for p in games)
                                          / max(evaluations, 1),
            **resign_metrics(sessions),
            "selfplay/rounds": float(module.rounds),
            "selfplay/games": float(module.games_played),
        }
        self.last_stats = stats
        self.games_finished += finished
        log_metrics(trainer, stats, step=module.train_steps)

    def result_fields(self, trainer) -> dict:
        """This callback's part of result.json: the latest round's speed, the search's candidate
        restriction, and what each DDP rank played since this process started (its games
        and a digest of them: ranks that play their own games have distinct digests)."""
        mine = {"rank": trainer.global_rank, "games": self.games_finished, "games_digest": self.games_seen.hexdigest()}
        group = registry.of(self._game).settings_group if self._game is not None else None
        fields = {**({group: dataclasses.asdict(self.game_settings)} if group else {}), "selfplay": self.last_stats}
        ranks = gather_to_rank_zero(trainer, mine)
        return {**fields, "selfplay_by_rank": ranks} if ranks is not None else fields

    def progress_text(self) -> str:
        """Self-play speed of the latest round, for the per-round progress line."""
        if not self.last_stats:
            return ""
        return (f"{self.last_stats['search/playouts_per_s']:,.0f} playouts/s, "
                f"{self.last_stats['selfplay/games_per_hour']:,.0f} games/h")

    def _evaluator_of(self, trainer, module):
        """The module's evaluator, built once (again only if the module changed device or net)."""
        cached = self._evaluator
        if cached is None or cached.device != module.device or cached.net is not module.net:
            self._evaluator = module.evaluator(search_precision(self.precision, trainer.precision),
                                               score_utility=self.search.score_utility)
        return self._evaluator

    def _sessions(self, trainer, module) -> dict[int, SelfPlaySlots]:
        if self.sessions is None:
            boards = board_games(trainer, module)
            slots = max(1, (self.parallel_games or self.games_per_round) // len(boards))
            for rules in boards.values():
                longest = registry.of(rules).max_opening(rules)
                if self.opening_moves > longest:
                    raise ConfigError(f"callbacks.selfplay.opening_moves={self.opening_moves}: at most {longest} "
                                      f"random moves open a game of {rules.name}")
            self.sessions = {size: SelfPlaySlots(rules, slots, self.search, temperature_moves=self.temperature_moves,
                                                 settings=self.game_settings, resign_below=self.resign_below,
                                                 resign_playthrough=self.resign_playthrough,
                                                 fast_playouts=self.fast_playouts,
                                                 full_search_share=self.full_search_share,
                                                 opening_moves=self.opening_moves,
                                                 opening_share=self.opening_share)
                             for size, rules in boards.items()}
            # Checkpoints hold every rank's games in progress; a rank the checkpoint has none
            # for (a resume with more ranks) starts afresh rather than replay copies of them.
            loaded = share_of(self._loaded, "slots", trainer.global_rank)
            if loaded is not None:
                self._restore(loaded)
        return self.sessions

    def _restore(self, loaded: dict) -> None:
        """Games in progress from a checkpoint: one size's state, or ``by_size`` for a mixed run."""
        if "by_size" in loaded:
            by_size = loaded["by_size"]
        else:  # a one-board run's games
            by_size = {str(size): loaded for size in self.sessions} if len(self.sessions) == 1 else {}
        if sorted(by_size) != sorted(str(size) for size in self.sessions):
            rank_zero_warn(f"callbacks.selfplay: the checkpoint's games in progress are not on this run's "
                           f"boards ({sorted(self.sessions)}); every game starts afresh")
            return
        for size, session in self.sessions.items():
            state = by_size[str(size)]
            dropped = session.load_state_dict(state)
            if dropped:
                rank_zero_warn(f"callbacks.selfplay: the checkpoint holds {dropped} games in progress "
                               f"for {len(state['moves'])} slots, this run has "
                               f"{session.slots}; those games start afresh")

    def setup(self, trainer, pl_module, stage: str) -> None:
        self._trainer = trainer  # state_dict gathers every rank's games in progress
        self._game = pl_module.game
        self.game_settings = own_search_settings(pl_module.game, self.game_settings)
        boards = board_games(trainer, pl_module)
        if len(boards) > 1 and not getattr(pl_module.net, "size_free", False):
            raise ConfigError(f"data.board_sizes={sorted(boards)} plays several boards, but model.net is "
                              f"built for one ({type(pl_module.net).__name__}): use model/net=fully_conv")

    def state_dict(self) -> dict:
        if self.sessions is None:
            mine = None
        elif len(self.sessions) == 1:  # one board: the format of runs before mixed sizes
            mine = next(iter(self.sessions.values())).state_dict()
        else:
            mine = {"by_size": {str(size): slots.state_dict() for size, slots in self.sessions.items()}}
        return by_rank(self._trainer, "slots", mine)

    def load_state_dict(self, state_dict: dict) -> None:
        self._loaded = state_dict


def resign_metrics(sessions: list[SelfPlaySlots]) -> dict:
    """Resignation so far, over every board's slots (none without ``resign_below``): games
    resigned, and the share of playthrough games in which the side that would have resigned
    went on to win."""
    if sessions[0].resign_below is None:
        return {}
    stats = {key: sum(slots.resign_stats[key] for slots in sessions) for key in sessions[0].resign_stats}
    calls = stats["playthrough_calls"]
    return {"selfplay/resigned_games": float(stats["resigned"]),
            "selfplay/resign_playthrough_calls": float(calls),
            "selfplay/resign_false_positive_rate": stats["false_positives"] / calls if calls else 0.0}


def board_games(trainer, module) -> dict[int, object]:
    """Board size -> the rules self-play plays there: the datamodule's ``games``
    (``data.board_sizes``), or the module's own game alone."""
    games = getattr(getattr(trainer, "datamodule", None), "games", None)
    return games if games else {0: module.game}


def round_shares(games_per_round: int, sizes: list[int], round_index: int) -> dict[int, int]:
    """How many of a round's games each board size finishes: equal shares, the remainder
    going to the sizes in turn (starting one further each round), so that over rounds every
    size plays as many games."""
    base, rest = divmod(games_per_round, len(sizes))
    return {size: base + int((i - round_index) % len(sizes) < rest) for i, size in enumerate(sizes)}


def own_search_settings(game, pruning: Mapping | object | None):
    """The game's own search settings (`stonelab.games.registry.own_settings`) for self-play and
    in-run matches: built from the ``pruning`` group's values (Gomoku's candidate restriction;
    another game refuses one that is set), or ``pruning`` itself when already built."""
    if pruning is not None and not isinstance(pruning, Mapping):
        return pruning
    return registry.own_settings(registry.of(game), {"pruning": pruning})
