"""Self-play: many games at once, one batched network call per search step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stonelab.search import tree as T
from stonelab.search.game import MOVER_LOSES, MOVER_WINS, ONGOING
from stonelab.search.mcts import BatchedMCTS, Evaluator, MCTSConfig, visits_to_policy


@dataclass
class SelfPlayGames:
    """Positions of finished games, in play order.

    planes [P, C, n, n] uint8, policies [P, A] float32 (root visit shares),
    values [P] float32 (+1 if the player to move there won, -1 lost, 0 draw),
    lengths [games] positions searched per game (its moves, a random opening's
    excepted, and the position of a resignation), winners [games] (+1 black, -1 white, 0 draw).
    With playout cap randomization only the fully searched positions are kept, so P
    can be smaller than the sum of the lengths.

    Games whose search scores a final board (Go: ``final_ownership``) also give KataGo's
    auxiliary targets, from the view of the player to move at each position:
    ownership int8 [P, N] (+1 own, -1 opponent's, 0 neutral at the end), scores [P] (final
    area margin with komi) and aux_weights [P] (0 for positions of a resigned game, whose
    last board is no end of the game). None for Gomoku.
    """

    planes: np.ndarray
    policies: np.ndarray
    values: np.ndarray
    lengths: np.ndarray
    winners: np.ndarray
    simulations: int
    evaluations: int
    candidates_mean: float  # moves expanded per node
    candidate_reduction: float  # fraction of legal moves pruned at expansion
    search_seconds: float = 0.0  # wall time inside `BatchedMCTS.search`, network calls included
    ownership: np.ndarray | None = None
    scores: np.ndarray | None = None
    aux_weights: np.ndarray | None = None


class SelfPlaySlots:
    """``slots`` games searched together; games outlive a call to `play`.

    A call plays until ``num_games`` games have finished; a slot whose game
    ends starts a new one at once, and games still going when the call
    returns carry on in the next call. Batches therefore stay full: no call
    ends by draining its last games one by one.

    Each call builds fresh search trees for the carried games (their moves
    are replayed): the network changed since their last search, and a run
    resumed from a checkpoint (which stores only moves and records) then
    plays exactly the games the uninterrupted run would have.

    Resignation (``resign_below``: a value in [-1, 1], None: off): a side whose most
    visited move's value is below it resigns, except in a ``resign_playthrough`` share of
    games (drawn when a game starts), which play on to the end so that resignations
    proven wrong are counted (`resign_stats`): AlphaZero's check on its resignation
    threshold. Without resignation no random number is drawn for it, so games are those
    of a session without the option.

    Random openings (``opening_moves`` > 0): an ``opening_share`` of games, drawn when a game
    starts, begin with that many uniformly random stones (`random_opening`, the openings
    task=match and task=ladder play from), which are not training positions: a net's own
    openings rarely put an early stone by the edge, and such openings often do.
    """

    def __init__(self, rules, slots: int, config: MCTSConfig, *,
                 temperature_moves: int, settings=None, resign_below: float | None = None,
                 resign_playthrough: float = 0.1, fast_playouts: int | None = None,
                 full_search_share: float = 0.25, opening_moves: int = 0, opening_share: float = 0.5):
        self.rules = rules
        self.opening_moves = opening_moves
        self.opening_share = opening_share
        self.fast_playouts = fast_playouts
        self.full_search_share = full_search_share
        self.slots = slots
        self.config = config
        self.temperature_moves = temperature_moves
        self.settings = settings  # the game's own search settings (`BatchedMCTS`)
        self.resign_below = resign_below
        self.resign_playthrough = resign_playthrough
        self.moves: list[list[int]] = [[] for _ in range(slots)]
        # per slot, per move: (planes uint8 [C, n, n], visit shares [A], mover)
        self.records: list[list[tuple[np.ndarray, np.ndarray, int]]] = [[] for _ in range(slots)]
        self.opened = [0] * slots  # random opening moves of each slot's game (not searched)
        self.playthrough = [False] * slots  # this game may not resign
        self.would_resign = [0] * slots  # playthrough games: the colour that would have resigned first
        # games resigned; playthrough games in which a side would have resigned; of those, won by that side
        self.resign_stats = {"resigned": 0, "playthrough_calls": 0, "false_positives": 0}

    @property
    def carried_games(self) -> int:
        """Games with at least one move played and not finished."""
        return sum(1 for moves in self.moves if moves)

    def play(self, evaluate: Evaluator, num_games: int, rng: np.random.Generator,
             *, new_games: int | None = None) -> SelfPlayGames:
        """Play until ``num_games`` games finish (a few more if they end in the same step).

        ``new_games`` caps how many games may start in finished slots during
        this call (None: no cap); a slot that may not start one falls idle.
        """
        T.seed_numba(int(rng.integers(2**31 - 1)))
        mcts = BatchedMCTS(self.rules, self.slots, self.config, settings=self.settings)
        for g, moves in enumerate(self.moves):
            for move in moves:
                mcts.play(g, move)
        active = np.ones(self.slots, dtype=bool)
        may_start = np.inf if new_games is None else new_games
        finished: list[tuple] = []  # (records, winner, positions, final board's score or None) per finished game
        while len(finished) < num_games and active.any():
            for g in np.flatnonzero(active):
                if not self.moves[g]:
                    self._start_game(mcts, g, rng)
            full = self._full_searches(rng)
            playouts = np.where(full, self.config.playouts, self.fast_playouts or self.config.playouts)
            visits = mcts.search(evaluate, np.flatnonzero(active), add_noise=full, playouts=playouts)
            for g in np.flatnonzero(active):
                resigning = self._resigns(mcts, g, rng)
                if resigning:
                    if full[g]:
                        self._record(mcts, g, visits[g])  # the searched position is a position of the game
                    winner = -resigning
                    self.resign_stats["resigned"] += 1
                else:
                    outcome, to_play = self._move(mcts, g, visits[g], rng, record=bool(full[g]))
                    if outcome == ONGOING:
                        continue
                    winner = to_play if outcome == MOVER_WINS else -to_play if outcome == MOVER_LOSES else 0
                    if self.would_resign[g]:
                        self.resign_stats["playthrough_calls"] += 1
                        self.resign_stats["false_positives"] += int(winner == self.would_resign[g])
                # positions searched: the moves, and the position a side resigned in
                final = None if resigning else self._final_ownership(mcts, g)
                searched = len(self.moves[g]) - self.opened[g] + int(bool(resigning))
                finished.append((self.records[g], winner, searched, final))
                self.moves[g], self.records[g], self.opened[g] = [], [], 0
                self.would_resign[g] = 0
                mcts.reset(g)
                active[g] = may_start > 0
                may_start -= 1
        return _collect(finished, mcts)

    def _resigns(self, mcts: BatchedMCTS, g: int, rng: np.random.Generator) -> int:
        """The colour that resigns game ``g`` now (0: none). A playthrough game notes the
        first side that would have resigned and plays on."""
        if self.resign_below is None:
            return 0
        value = mcts.best_value(g)
        if value is None or value >= self.resign_below:
            return 0
        colour = mcts.to_play(g)
        if not self.playthrough[g]:
            return colour
        self.would_resign[g] = self.would_resign[g] or colour
        return 0

    def _start_game(self, mcts: BatchedMCTS, g: int, rng: np.random.Generator) -> None:
        """A new game in slot ``g``: may it resign (drawn only with resignation on), and its
        random opening, if it gets one (drawn only with ``opening_moves``)."""
        if self.resign_below is not None:
            self.playthrough[g] = bool(rng.random() < self.resign_playthrough)
        if self.opening_moves and rng.random() < self.opening_share:
            for move in random_opening(mcts.game, rng, self.opening_moves):
                self.moves[g].append(move)
                mcts.play(g, move)
            self.opened[g] = self.opening_moves

    @staticmethod
    def _final_ownership(mcts: BatchedMCTS, g: int):
        """(owner [N] black's view, margin) of game ``g``'s final board, or None for a game
        without one (Gomoku)."""
        score = getattr(mcts.game, "final_ownership", None)
        return None if score is None else score(mcts.roots, g)

    def _full_searches(self, rng: np.random.Generator) -> np.ndarray:
        """Which slots search this move fully (bool ``[slots]``): all of them, or with playout cap
        randomization (``fast_playouts``) a ``full_search_share`` drawn at random. Only full
        searches carry root noise and become training targets; the cheap ones only pick moves,
        so games get longer and more numerous for the same network calls (KataGo's method)."""
        if self.fast_playouts is None:
            return np.ones(self.slots, dtype=bool)
        return rng.random(self.slots) < self.full_search_share

    def _move(self, mcts: BatchedMCTS, g: int, visits: np.ndarray,
              rng: np.random.Generator, record: bool = True) -> tuple[int, int]:
        """Record the searched position of slot ``g`` (a full search) and play a move from its visits."""
        to_play = self._record(mcts, g, visits) if record else mcts.to_play(g)
        temperature = 1.0 if len(self.moves[g]) - self.opened[g] < self.temperature_moves else 0.0
        move = int(rng.choice(self.rules.num_actions, p=visits_to_policy(visits, temperature)))
        self.moves[g].append(move)
        return mcts.play(g, move), to_play

    def _record(self, mcts: BatchedMCTS, g: int, visits: np.ndarray) -> int:
        """Keep slot ``g``'s searched root (planes, visit shares, mover); returns the mover."""
        to_play = int(mcts.to_play(g))
        self.records[g].append((mcts.root_planes(g).astype(np.uint8), visits / visits.sum(), to_play))
        return to_play

    def state_dict(self) -> dict:
        """Games in progress as lists and tensors (checkpoint-safe with weights_only)."""
        import torch

        return {"moves": [list(m) for m in self.moves],
                "planes": [torch.from_numpy(np.stack([r[0] for r in rs])) if rs else None
                           for rs in self.records],
                "policies": [torch.from_numpy(np.stack([r[1] for r in rs])) if rs else None
                             for rs in self.records],
                "movers": [[r[2] for r in rs] for rs in self.records],
                "playthrough": list(self.playthrough), "would_resign": list(self.would_resign),
                "resign_stats": dict(self.resign_stats), "opened": list(self.opened)}

    def load_state_dict(self, state: dict) -> int:
        """Restore games in progress; returns how many were dropped (0 unless the slot count differs)."""
        if len(state["moves"]) != self.slots:
            self.moves = [[] for _ in range(self.slots)]
            self.records = [[] for _ in range(self.slots)]
            return sum(1 for m in state["moves"] if m)
        self.moves = [list(m) for m in state["moves"]]
        # checkpoints written before resignation existed hold none of it
        self.playthrough = [bool(x) for x in state.get("playthrough", [False] * self.slots)]
        self.would_resign = [int(x) for x in state.get("would_resign", [0] * self.slots)]
        self.resign_stats = dict(state.get("resign_stats", self.resign_stats))
        self.opened = [int(x) for x in state.get("opened", [0] * self.slots)]  # none before random openings
        self.records = [
            [] if planes is None else
            [(p, pi, int(mv)) for p, pi, mv in zip(planes.numpy(), policies.numpy(), movers, strict=True)]
            for planes, policies, movers in zip(state["planes"], state["policies"], state["movers"], strict=True)]
        return 0


def _collect(finished: list[tuple], mcts: BatchedMCTS) -> SelfPlayGames:
    planes, policies, values, movers = [], [], [], []
    for records, winner, _, _ in finished:
        for p, pi, mover in records:
            planes.append(p)
            policies.append(pi)
            values.append(float(winner * mover))
            movers.append(mover)
    game = mcts.game
    aux = _aux_targets(finished, np.array(movers, dtype=np.int8), game)
    if planes:
        planes, policies = np.stack(planes), np.stack(policies).astype(np.float32)
    else:  # every search of these games was a cheap one (playout cap randomization)
        planes = np.zeros((0, game.num_planes, *game.board_shape), dtype=np.uint8)
        policies = np.zeros((0, game.num_actions), dtype=np.float32)
    return SelfPlayGames(
        planes=planes, policies=policies,
        values=np.array(values, dtype=np.float32),
        lengths=np.array([moves for _, _, moves, _ in finished]),
        winners=np.array([w for _, w, _, _ in finished], dtype=np.int8),
        simulations=mcts.simulations, evaluations=mcts.evaluations,
        candidates_mean=mcts.candidates_mean, candidate_reduction=mcts.candidate_reduction,
        search_seconds=mcts.search_seconds, **aux)


def _aux_targets(finished: list[tuple], movers: np.ndarray, game) -> dict:
    """Ownership, score and weight of every recorded position (see `SelfPlayGames`), or {} for
    a game whose search scores no final board."""
    if not hasattr(game, "final_ownership"):
        return {}
    points = int(np.prod(game.board_shape))
    owners, margins, weights = [], [], []
    for records, _, _, final in finished:
        owner, margin = final if final is not None else (np.zeros(points, dtype=np.int8), 0.0)
        owners += [owner] * len(records)
        margins += [margin] * len(records)
        weights += [0.0 if final is None else 1.0] * len(records)
    if not owners:
        return {"ownership": np.zeros((0, points), dtype=np.int8), "scores": np.zeros(0, dtype=np.float32),
                "aux_weights": np.zeros(0, dtype=np.float32)}
    # black's view -> the view of the player to move at each position (mover +1 black, -1 white)
    return {"ownership": (np.stack(owners) * movers[:, None]).astype(np.int8),
            "scores": (np.array(margins) * movers).astype(np.float32),
            "aux_weights": np.array(weights, dtype=np.float32)}


def play_games(rules, evaluate: Evaluator, num_games: int, config: MCTSConfig,
               *, temperature_moves: int, rng: np.random.Generator,
               settings=None, parallel: int | None = None) -> SelfPlayGames:
    """Play exactly ``num_games`` self-play games from the empty board to the end.

    At most ``parallel`` games (default: all) are searched together; a slot
    whose game ends starts the next game until ``num_games`` have started, then
    the last games drain. The first ``temperature_moves`` moves of a game are
    sampled in proportion to visits (temperature 1), later ones are the most
    visited move. Games are returned in the order they finished.
    """
    slots = min(parallel or num_games, num_games)
    session = SelfPlaySlots(rules, slots, config, temperature_moves=temperature_moves, settings=settings)
    return session.play(evaluate, num_games, rng, new_games=num_games - slots)


def random_opening(game, rng: np.random.Generator, plies: int) -> list[int]:
    """``plies`` uniformly random distinct moves (points; Connect Four's columns), played in
    turn. Where a drawn one is not legal (Othello's discs must flip), that ply is drawn again
    among the legal moves."""
    rows, columns = game.action_shape
    points = rng.choice(rows * columns, size=plies, replace=False)
    positions = game.new_positions(1)
    legal = np.empty(game.num_actions, dtype=np.bool_)
    opening = []
    for point in points:
        move = int(point)
        if game.illegal_reason(positions, 0, move) is not None:
            T.legal_at_root(game.spec, positions, 0, legal)
            move = int(rng.choice(np.flatnonzero(legal)))
        T.play_position(game.spec, positions, 0, move)
        opening.append(move)
    return opening
