"""GTP with search, clocks and live analysis: the engine GUIs load.

    python src/play.py ckpt_path=<go checkpoint> search.playouts=800 [search.seconds=5]

`SearchGTPEngine` adds to `stonelab.protocols.gtp.GTPEngine`:

- ``genmove`` searched by `stonelab.games.go.players.GoSearchPlayer` (the tree is kept
  between moves), within ``search.playouts`` and the time the clock allows
  (``time_settings``, ``kgs-time_settings``, ``time_left``; `stonelab.protocols.gtp_clock`);
  ``resign`` once the best move's win rate has stayed below ``resign_below`` for
  ``resign_moves`` moves in a row (off unless set).
- ``kgs-genmove_cleanup``: as genmove, but the engine does not pass while an open
  point (`stonelab.games.go.ownership.open_points`: one Tromp-Taylor gives to nobody,
  such as dame or the region around dead stones, room to invade, a chain to save) can
  still be played, so dead stones get captured before the game is scored.
- No engine passes while an open point is left: the search leaves the pass out of its
  candidates until then (`stonelab.games.go.ownership.may_pass`), and without search the
  net's move never is a pass while another move is legal.
- ``lz-analyze`` / ``kata-analyze`` ``[colour] [interval] [key value ...]`` (KataGo's GTP
  extensions; ``interval`` in centiseconds; keys ``interval``, ``maxmoves``, ``minmoves``,
  ``ownership``, ``movesOwnership``, ``ownershipStdev``, ``movesOwnershipStdev``,
  ``pvVisits``, ``pvEdgeVisits``, ``rootInfo``, ``avoid`` / ``allow COLOUR V,V.. DEPTH``):
  ``=`` and then one line of ``info move ...`` entries per interval, in Leela Zero's format
  (x 10000 integers) or KataGo's (floats, with ``edgeVisits``, ``scoreLead`` / ``scoreMean`` /
  ``scoreStdev`` / ``utility`` where the net has a score head, the lists asked after the
  PV, then ``rootInfo`` (with ``lcb``, ``thisHash``, ``symHash``), ``ownership`` and
  ``ownershipStdev`` when asked; the fields are the JSON engine's,
  `stonelab.protocols.analysis`), until the next command (``stop`` is one) or a blank line
  arrives, which ends the response with an empty line. The search goes on past
  ``search.playouts`` for as long as that takes (a full tree is pruned,
  `GoSearchPlayer.prune`); a line lists at most 20 moves, each with at least 1% of the
  best one's visits (`shown_moves`).
- ``lz-genmove_analyze`` / ``kata-genmove_analyze`` ``[colour] ...``: genmove (the side to
  move when no colour is given) that streams the same lines while it thinks and ends with
  ``play <vertex>``.

A model run without search (``search.playouts=0``) answers the analysis commands with its
priors (visits 0), so GUIs still draw its heatmap.

In `src/play.py` the numba kernels compile (a fresh clone) or load from numba's cache on a
thread (`warm_up`). While they compile, the engine answers from the moment the checkpoint
is loaded and plays and analyses as without search, with the net alone, until the search
is ready (stderr says when it starts compiling and when it is done); the search takes
over at the next command. Loading from the cache takes a second or two, which the first
command waits for: a warm start searches from its first move.
"""

from __future__ import annotations

import copy
import math
import queue
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TextIO

import numpy as np

from stonelab.errors import ConfigError, StonelabError
from stonelab.games.go.ownership import open_points
from stonelab.games.go.players import GoSearchPlayer, MoveInfo, combined_lcb
from stonelab.games.go.rules import GoState
from stonelab.models.inference import BoardEstimate
from stonelab.protocols.gtp import (
    GTPEngine,
    GTPError,
    move_name,
    number_argument,
    parse_colour,
    parse_vertex,
    position_for,
)
from stonelab.protocols.gtp_clock import GTPClock, expected_moves_left
from stonelab.protocols.katago_fields import ownership_spread, position_hashes
from stonelab.protocols.streams import MAX_LINE, input_lines, is_ascii_number, protocol_streams, shown
from stonelab.protocols.warmup import Background, CompileNotice
from stonelab.search.game import ONGOING
from stonelab.search.mcts import MCTSConfig

ANALYZE_COMMANDS = ("lz-analyze", "kata-analyze")
GENMOVE_ANALYZE_COMMANDS = ("lz-genmove_analyze", "kata-genmove_analyze")
SEARCH_STEP = 16  # playouts between looks at the clock and the input while analysing
NO_ESTIMATE = BoardEstimate(None, None, None, None)  # a net without value, score or ownership heads
TOO_LONG = object()  # what the reader queues for a line over MAX_LINE characters


@dataclass
class ResignRule:
    """Resign once the best move's win rate is below ``below`` for ``moves`` moves in a row."""

    below: float | None = None
    moves: int = 3
    min_visits: int = 50  # a win rate from fewer visits is not trusted to resign on

    def __post_init__(self):
        if self.below is not None and not 0.0 <= self.below < 1.0:
            raise ValueError(f"resign_below={self.below!r} must be in [0, 1)")
        if self.moves < 1:
            raise ValueError(f"resign_moves={self.moves!r} must be >= 1")


@dataclass(frozen=True)
class MoveRule:
    """An ``avoid`` or ``allow`` clause: ``colour`` may not play (avoid) or may play only
    (allow) ``points`` for the first ``until_depth`` plies of the search."""

    allow: bool
    colour: int
    points: frozenset[int]
    until_depth: int


@dataclass
class AnalyzeRequest:
    """The arguments of an analysis command."""

    colour: int | None
    interval: float  # seconds between info lines
    max_moves: int | None = None  # None: the default cuts of `shown_moves`
    min_moves: int = 0
    ownership: bool = False
    moves_ownership: bool = False
    root_info: bool = False
    ownership_stdev: bool = False
    moves_ownership_stdev: bool = False
    pv_visits: bool = False
    pv_edge_visits: bool = False
    rules: tuple[MoveRule, ...] = ()


BOOLEAN_KEYS = {"ownership": "ownership", "movesownership": "moves_ownership", "rootinfo": "root_info",
                "ownershipstdev": "ownership_stdev", "movesownershipstdev": "moves_ownership_stdev",
                "pvvisits": "pv_visits", "pvedgevisits": "pv_edge_visits"}


def parse_analyze_args(args: list[str], n: int = 19) -> AnalyzeRequest:
    """``[colour] [interval] [key value ...]`` as Leela Zero and KataGo take them
    (``avoid`` / ``allow`` take three values: colour, vertices joined by commas, depth)."""
    words = list(args)
    colour = None
    if words and words[0].lower() in COLOUR_WORDS:
        colour = parse_colour(words.pop(0))
    request = AnalyzeRequest(colour=colour, interval=1.0)
    if words and is_ascii_number(words[0]):  # digits capped: int / 100 of 309+ digits overflows a float
        request.interval = number_argument(words.pop(0), "interval") / 100
    rules = []
    while words:
        key = words.pop(0).lower()
        if key in ("avoid", "allow"):
            rules.append(_move_rule(key, words, n))
            continue
        if not words:
            raise GTPError(f"analyze: {key!r} needs a value")
        value = words.pop(0)
        if key == "interval":
            request.interval = number_argument(value, key) / 100
        elif key == "maxmoves":
            request.max_moves = number_argument(value, key)
        elif key == "minmoves":
            request.min_moves = number_argument(value, key)
        elif key in BOOLEAN_KEYS:
            setattr(request, BOOLEAN_KEYS[key], _boolean(key, value))
        else:
            raise GTPError(f"analyze: unknown key {shown(key)}")
    request.rules = tuple(rules)
    request.interval = max(request.interval, 0.05)
    return request


COLOUR_WORDS = ("b", "w", "black", "white")


def _boolean(key: str, value: str) -> bool:
    if value.lower() not in ("true", "false"):
        raise GTPError(f"analyze: {key} takes true or false, got {shown(value)}")
    return value.lower() == "true"


def _move_rule(key: str, words: list[str], n: int) -> MoveRule:
    """``avoid|allow COLOUR V1,V2,... UNTILDEPTH`` (the key already taken from ``words``)."""
    if len(words) < 3:
        raise GTPError(f"analyze: {key} needs a color, vertices joined by commas and a depth")
    colour, vertices, depth = parse_colour(words.pop(0)), words.pop(0), words.pop(0)
    points = frozenset(parse_vertex(v, n) for v in vertices.split(",") if v)
    if not points:
        raise GTPError(f"analyze: {key} needs at least one vertex")
    return MoveRule(key == "allow", colour, points, number_argument(depth, f"{key} depth"))


def root_allowed(rules: tuple[MoveRule, ...], colour: int, num_actions: int) -> np.ndarray | None:
    """bool [A]: the moves ``colour`` may play at the root under ``rules`` (None: all).
    Only the root is restricted: rules for deeper plies do not reach the tree below it."""
    active = [rule for rule in rules if rule.colour == colour and rule.until_depth >= 1]
    if not active:
        return None
    allowed = np.ones(num_actions, dtype=bool)
    for rule in active:
        points = np.fromiter(rule.points, dtype=np.int64)
        if rule.allow:
            only = np.zeros(num_actions, dtype=bool)
            only[points] = True
            allowed &= only
        else:
            allowed[points] = False
    return allowed


class SearchGTPEngine(GTPEngine):
    """`GTPEngine` whose moves and analysis come from a `GoSearchPlayer` (or priors only)."""

    def __init__(self, board_size: int, choose, player, *, priors, playouts: int, seconds: float | None = None,
                 resign: ResignRule | None = None, estimates=None, boards=None, rollouts=None,
                 count_settled: bool = False, **kwargs):
        """``choose``: the search-free move choice of `GTPEngine`; ``player``: a
        `GoSearchPlayer`, or None to play by ``choose`` and analyse by ``priors`` alone.
        ``priors(state) -> [A]`` move probabilities (pass last); ``estimates(states) ->
        [BoardEstimate]`` (`MovePredictor.estimates`) the net's win rate, score and
        ownership for kata-analyze (None: no such heads). ``boards(n) -> (choose, priors,
        estimates, make_player)`` the same on an n x n board (None: this board only; a
        `StonelabError` from it: a board the net cannot play). ``rollouts(state) -> ends``
        (`stonelab.models.rollouts.policy_rollouts` of the board's net; None: none): the
        kata-analyze rootInfo's win rate and score are then mixed with them, as the JSON
        engine's with ``analysis.rollouts``. ``count_settled``: that rootInfo also mixes in the
        count of the settled board, as the JSON engine's with ``analysis.count_settled``."""
        super().__init__(board_size, choose, **kwargs)
        self.player = player
        self.komi_changed()  # the search counts the engine's komi, not its checkpoint's
        self.priors = priors
        self.playouts = playouts
        self.seconds = seconds
        self.resign = resign or ResignRule()
        self.estimates = estimates or (lambda states: [NO_ESTIMATE] * len(states))
        self.rollouts = rollouts
        self.count_settled = count_settled
        self.estimate_cache: dict = {}  # the net's estimates around the analysed position
        self.root_rule: np.ndarray | None = None  # the root moves a genmove_analyze may search
        self.clock = GTPClock()
        self.low_winrate_moves = 0
        self.inbox: queue.Queue[str | None] = queue.Queue()
        self.stdout: TextIO = sys.stdout
        self.stream: tuple[str, list[str]] | None = None  # an analysis command being answered
        self.commands.update({
            "genmove": self.genmove,
            "kgs-genmove_cleanup": self.genmove_cleanup,
            "time_settings": self.time_settings,
            "kgs-time_settings": self.kgs_time_settings,
            "time_left": self.time_left,
            "stop": lambda args: "",  # an analysis ends when any line arrives: this one only answers
            **{name: self._streamed(name) for name in (*ANALYZE_COMMANDS, *GENMOVE_ANALYZE_COMMANDS)},
        })
        self.boards = boards
        self.pending_player: Background | None = None  # the search, still warming up
        self.compiling: Callable[[], bool] = lambda: False

    def clear_board(self) -> str:
        self.low_winrate_moves = 0  # a new game: the resign count starts over
        return super().clear_board()

    def komi_changed(self) -> None:
        if getattr(self, "player", None) is not None:
            self.player.set_komi(self.komi)
        self.estimate_cache = {}

    # -- a search that compiles while the engine already plays
    def search_when_ready(self, pending: Background, compiling: Callable[[], bool]) -> None:
        """Take the searched player from ``pending`` (a thread warming the engine's kernels
        up, returning ``make_player() -> GoSearchPlayer``, or None for an engine without
        search) once it is done. Until then, while ``compiling()`` (numba compiles: a first
        start, a minute) commands are answered at once and moves and analysis come from the
        net alone; otherwise (numba loads from its cache: a second or two) a command waits
        for the search, so a warm start searches from its first move, as it always did."""
        self.pending_player, self.compiling = pending, compiling

    def respond(self, line: str) -> str | None:
        self._await_search()
        return super().respond(line)

    def _await_search(self) -> None:
        """Adopt the searched player if its warm-up is done (or only loads from the cache).
        Built here, on the engine's thread, so the engine's own player never crosses threads.
        A failed warm-up (a setting the checkpoint cannot search with) ends the engine, as
        it would have ended at the start."""
        pending = self.pending_player
        if pending is None:
            return
        while not pending.wait(0.05) and not self.compiling():
            pass
        if not pending.done():
            return
        self.pending_player = None
        make_player = pending.result()
        if make_player is not None:
            if self.boards is not None:  # a boardsize while it warmed up: the search of that board
                make_player = self.boards(self.board_size)[3]
            self.player = make_player()
            self.komi_changed()

    def change_board(self, n: int) -> None:
        """boardsize n: the net moved to n x n (`MovePredictor.for_board`, once per size) and
        a search of that board; ``unacceptable size`` for a board the net cannot play."""
        if self.boards is None:
            return super().change_board(n)
        try:
            choose, priors, estimates, make_player = self.boards(n)
        except StonelabError:
            raise GTPError("unacceptable size") from None
        self.board_size, self.choose, self.priors, self.estimates = n, choose, priors, estimates
        if self.player is not None and self.pending_player is None:
            self.player = make_player()
        self.komi_changed()

    # -- moves
    def _legal_priors(self, state: GoState) -> np.ndarray:
        probs = np.asarray(self.priors(state), dtype=np.float64)
        return np.where(state.legal_mask(), probs, -1.0)

    def _position_for(self, colour: int) -> GoState:
        return position_for(self.state, colour)

    def think(self, colour: int, on_progress=None) -> None:
        """Search the position with ``colour`` to move within the playouts and the clock."""
        state = self._position_for(colour)
        self.player.sync(state)
        if self.root_rule is not None:
            self.player.restrict_root(self.root_rule)
        budget = self.clock.move_budget(colour, expected_moves_left(self.board_size ** 2, state.move_number))
        if self.seconds is not None:
            budget = self.seconds if budget is None else min(budget, self.seconds)
        deadline = None if budget is None else time.monotonic() + budget
        done = 0
        while done < self.playouts and not self.player.tree_full:
            if deadline is not None and time.monotonic() >= deadline:
                break
            step = self.playouts - done if on_progress is None else min(SEARCH_STEP, self.playouts - done)
            before = self.player.mcts.simulations
            self.player.search(playouts=step, deadline=deadline)
            done += max(self.player.mcts.simulations - before, 1)
            if on_progress is not None:
                on_progress()

    def choose_move(self, colour: int, cleanup: bool = False, on_progress=None) -> int | None:
        """The move to play (None: resign)."""
        if self.player is None:
            state = self._position_for(colour)
            # After the opponent's pass only open points are worth a stone (dame, areas its
            # dead stones still touch, room to invade); with none left, pass and end the game,
            # rather than fill one's own area move after move while the opponent passes (area
            # scoring: those moves change nothing).
            if cleanup or state.last_move == self.board_size ** 2:
                return cleanup_move(state, self._legal_priors(state))
            return int(self.choose([state], [self.positions[:-1]])[0])
        self.think(colour, on_progress)
        infos = self.player.analysis()
        if not infos:
            return self.board_size ** 2
        if self._should_resign(infos[0]) and not cleanup:
            return None
        state = self._position_for(colour)
        if cleanup or state.last_move == self.board_size ** 2:
            # as without search: after the opponent's pass only the open points are worth a stone
            visits = np.zeros(self.board_size ** 2 + 1)
            for info in infos:
                visits[info.move] = info.visits + info.prior  # unvisited moves ordered by prior
            return cleanup_move(state, visits)
        return infos[0].move

    def _should_resign(self, best) -> bool:
        rule = self.resign
        if rule.below is None or best.visits < rule.min_visits:
            return False
        self.low_winrate_moves = self.low_winrate_moves + 1 if best.winrate < rule.below else 0
        return self.low_winrate_moves >= rule.moves

    def _genmove(self, args: list[str], cleanup: bool, on_progress=None) -> str:
        if len(args) != 1:
            raise GTPError("genmove needs a color")
        colour = parse_colour(args[0])
        move = self.choose_move(colour, cleanup, on_progress)
        if move is None:
            return "resign"
        self._move(colour, move)
        if self.player is not None:
            self.player.sync(self.state)  # keep the subtree under the move just played
        return move_name(move, self.board_size)

    def genmove(self, args: list[str]) -> str:
        return self._genmove(args, cleanup=False)

    def genmove_cleanup(self, args: list[str]) -> str:
        return self._genmove(args, cleanup=True)

    # -- clocks
    def time_settings(self, args: list[str]) -> str:
        main, period, stones = _numbers(args, 3, "time_settings main_time byo_yomi_time byo_yomi_stones")
        self.clock.time_settings(main, period, int(stones))
        return ""

    def kgs_time_settings(self, args: list[str]) -> str:
        if not args:
            raise GTPError("kgs-time_settings needs a time system")
        values = _numbers(args[1:], len(args) - 1, "kgs-time_settings")
        try:
            self.clock.kgs_time_settings(args[0].lower(), values)
        except ValueError as exc:
            raise GTPError(str(exc)) from None
        return ""

    def time_left(self, args: list[str]) -> str:
        if len(args) != 3:
            raise GTPError("time_left needs a color, seconds and stones")
        colour = parse_colour(args[0])
        seconds, stones = _numbers(args[1:], 2, "time_left")
        self.clock.time_left(colour, seconds, int(stones))
        return ""

    # -- analysis
    def _streamed(self, name: str):
        def handler(args: list[str]) -> str:
            parse_analyze_args(args, self.board_size)  # bad arguments fail now, before the "=" line
            self.stream = (name, args)
            return ""
        return handler

    def info_lines(self, request: AnalyzeRequest, kata: bool, colour: int) -> str:
        """One line of ``info`` entries for the current analysis, then (kata-analyze, when
        asked) ``rootInfo`` and ``ownership``."""
        state = self._position_for(colour)
        allowed = root_allowed(request.rules, colour, self.board_size ** 2 + 1)
        everything = self._infos(colour)
        kept = [info for info in everything if allowed is None or allowed[info.move]] or everything
        infos = shown_moves(kept, request)  # a rule that leaves no move restricts nothing
        if not kata:
            return " ".join(lz_info(info, order, self.board_size) for order, info in enumerate(infos))
        root, children = self._estimates(state, [info.move for info in infos], request)
        spreads = self._move_spreads(state, infos) if request.moves_ownership_stdev else {}
        parts = [kata_info(info, order, self.board_size, children.get(info.move), request, spreads.get(info.move))
                 for order, info in enumerate(infos)]
        searched = [info for info in kept if info.visits > 0]
        if request.root_info:
            parts.append(self._root_info(state, root, searched_lead(infos, children), searched))
        if request.ownership and root.ownership is not None:
            parts.append("ownership " + numbers(root.ownership))
        if request.ownership_stdev and root.ownership is not None:
            parts.append("ownershipStdev " + numbers(self._spread(state, None, [(i.move, i.visits) for i in searched])))
        return " ".join(parts)

    def _root_info(self, state: GoState, root: BoardEstimate, lead: float | None, moves: list) -> str:
        """KataGo's ``rootInfo``: the search's visits, win rate, the `combined_lcb` of its
        searched ``moves`` and score of the position (the score as the JSON engine's,
        `searched_lead`), the net's own as ``rawWinrate`` and ``rawLead``, and the
        position's hashes (`position_hashes`)."""
        visits = self.player.root_visit_total if self.player is not None else 0
        winrate = self.player.root_winrate() if self.player is not None else None
        if winrate is None:
            winrate = root.winrate if root.winrate is not None else 0.5
        searched = root if lead is None else replace(root, score_lead=lead)
        lcb = combined_lcb(moves)
        if self.count_settled:
            winrate, searched, lcb = self._with_count(state, winrate, searched, lcb)
        if self.rollouts is not None:
            winrate, searched, lcb = self._with_rollouts(state, winrate, searched, lcb)
        fields = {"visits": visits, **value_fields(winrate, searched, self.board_size)}
        fields["lcb"] = number(winrate if lcb is None else lcb)
        fields["currentPlayer"] = "B" if state.to_play == 1 else "W"
        if root.winrate is not None:
            fields["rawWinrate"] = number(root.winrate)
        if root.score_lead is not None:
            fields["rawLead"] = number(root.score_lead)
        fields["thisHash"], fields["symHash"] = position_hashes(state)
        return "rootInfo " + " ".join(f"{key} {value}" for key, value in fields.items())

    def _with_count(self, state: GoState, winrate: float, searched: BoardEstimate,
                    lcb: float | None) -> tuple[float, BoardEstimate, float | None]:
        """The root's win rate, estimate and win rate's lower bound mixed with the count of the
        settled board (counted once per position: kept beside the net's estimates),
        `stonelab.models.board_count.with_count`."""
        from stonelab.models.board_count import late_count, with_count

        root = self._line_estimates(state, [None])[None]  # the cache now holds this position
        if "count" not in self.estimate_cache:
            owned = None if root.ownership is None else np.asarray(root.ownership, dtype=np.float64) * state.to_play
            self.estimate_cache["count"] = late_count(state, owned)
        lead = searched.score_lead
        mixed, winrate, lcb = with_count(0.0 if lead is None else lead, winrate, lcb, self.estimate_cache["count"],
                                         state.to_play)
        return winrate, searched if lead is None else replace(searched, score_lead=mixed), lcb

    def _with_rollouts(self, state: GoState, winrate: float, searched: BoardEstimate,
                       lcb: float | None) -> tuple[float, BoardEstimate, float | None]:
        """The root's win rate, estimate and win rate's lower bound mixed with its policy
        rollouts (played once per position: kept beside the net's estimates), `stonelab.models.rollouts.blend`."""
        from stonelab.models.rollouts import blend

        self._line_estimates(state, [None])  # the cache now holds this position
        if "rollouts" not in self.estimate_cache:
            self.estimate_cache["rollouts"] = self.rollouts(state)
        lead = searched.score_lead
        mixed, winrate, lcb = blend(0.0 if lead is None else lead, winrate, self.estimate_cache["rollouts"],
                                    state.to_play, lcb)
        return winrate, searched if lead is None else replace(searched, score_lead=mixed), lcb

    def _spread(self, state: GoState, base: int | None, lines: list[tuple]) -> np.ndarray:
        """``ownershipStdev`` of the position after ``base`` (None: ``state`` itself): the
        per-point standard deviation of the net's ownership over its own evaluation (weight
        1) and the position after each searched move of ``lines`` [(move or (move, reply),
        visits)] (weight: its visits), all in the side to move's view (`ownership_spread`)."""
        owners = self._line_estimates(state, [base, *[line for line, _ in lines]])
        return ownership_spread([(1.0, owners[base].ownership),
                                 *[(visits, owners[line].ownership) for line, visits in lines]])

    def _move_spreads(self, state: GoState, infos: list) -> dict[int, np.ndarray]:
        """Each shown move's ``movesOwnershipStdev``: `_spread` below the position after it,
        over the searched replies to it (none without search: 0 everywhere)."""
        after = self._line_estimates(state, [info.move for info in infos])
        out = {}
        for info in infos:
            if after[info.move].ownership is not None:
                replies = self.player.replies(info.move) if self.player is not None else []
                out[info.move] = self._spread(state, info.move, [((info.move, r), v) for r, v in replies])
        return out

    def _estimates(self, state: GoState, moves: list[int], request: AnalyzeRequest):
        """The net's `BoardEstimate` of ``state`` and, where the line reports a score or
        per-move ownership, of the position after each of ``moves`` (turned to the view of
        the side to move in ``state``). Cached per position: each is one evaluation."""
        root = self._line_estimates(state, [None])[None]
        if root.score_lead is None and not (request.moves_ownership and root.ownership is not None):
            return root, {}
        return root, self._line_estimates(state, moves)

    def _line_estimates(self, state: GoState, lines: list) -> dict:
        """The net's estimate of ``state`` (line None) and of the position after each line (a
        move, or a tuple of moves played in turn), all from ``state``'s side to move's view
        (`mover_view` after an odd number of moves). Cached per position: each is one
        evaluation."""
        key = GoSearchPlayer.key(state.arrays)
        if self.estimate_cache.get("position") != key:
            self.estimate_cache = {"position": key, None: self.estimates([state])[0]}
        missing = list(dict.fromkeys(line for line in lines if line not in self.estimate_cache))
        if missing:
            after = [state.copy() for _ in missing]
            for child, line in zip(after, missing, strict=True):
                for move in line if isinstance(line, tuple) else (line,):
                    child.play(move)
            for line, estimate in zip(missing, self.estimates(after), strict=True):
                odd = not isinstance(line, tuple) or len(line) % 2 == 1
                self.estimate_cache[line] = mover_view(estimate) if odd else estimate
        return {line: self.estimate_cache[line] for line in lines}

    def _infos(self, colour: int):
        if self.player is not None:
            return self.player.analysis()
        state = self._position_for(colour)
        probs = self._legal_priors(state)
        order = [int(m) for m in np.argsort(-probs, kind="stable") if probs[m] > 0]
        return [MoveInfo(m, 0, 0.5, float(probs[m]), 0.0, (m,), (0,)) for m in order]

    def answer_stream(self, ident: str) -> None:
        """Answer the analysis command in ``self.stream`` (its ``=`` line already decided)."""
        name, args = self.stream
        self.stream = None
        request = parse_analyze_args(args, self.board_size)
        kata = name.startswith("kata")
        colour = request.colour if request.colour is not None else self.state.to_play
        allowed = root_allowed(request.rules, colour, self.board_size ** 2 + 1)
        self._write(f"={ident}\n")
        last = [0.0]

        def report(force: bool = False) -> None:
            if force or time.monotonic() - last[0] >= request.interval:
                last[0] = time.monotonic()
                line = self.info_lines(request, kata, colour)
                if line:
                    self._write(line + "\n")

        try:
            if name in GENMOVE_ANALYZE_COMMANDS:
                self._write(f"play {self._genmove_analyze(colour, report, allowed)}\n\n")
                return
            self._analyse_until_input(colour, report, allowed)
            self._write("\n")
        finally:
            if allowed is not None and self.player is not None:
                self.player.forget()  # its root lacks the avoided moves: not the game's tree

    def _genmove_analyze(self, colour: int, report, allowed: np.ndarray | None) -> str:
        """The move of a genmove_analyze (streaming ``report`` while it thinks), played."""
        self.root_rule = allowed
        try:
            move = self.choose_move(colour, on_progress=report)
        finally:
            self.root_rule = None
        report(force=True)
        if move is None:
            return "resign"
        self._move(colour, move)
        if self.player is not None:
            self.player.sync(self.state)
        return move_name(move, self.board_size)

    def _analyse_until_input(self, colour: int, report, allowed: np.ndarray | None) -> None:
        """Search and report until a line arrives (it is kept for the main loop), for as
        long as it takes: a full tree is pruned (`GoSearchPlayer.prune`) and the search
        goes on."""
        if self.player is not None:
            self.player.sync(self._position_for(colour))
            if allowed is not None:
                self.player.restrict_root(allowed)
        report(force=True)
        while self.inbox.empty():
            if self.player is None or self.player.mcts.outcomes[0] != ONGOING:  # nothing to search
                time.sleep(0.05)
            else:
                if self.player.tree_full:
                    self.player.prune()
                self.player.search(playouts=SEARCH_STEP, deadline=time.monotonic() + 0.05)
            report()

    # -- the protocol loop: a reader thread, so analysis notices the next command
    def _write(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def _read(self, stdin) -> None:
        for line in input_lines(stdin):
            self.inbox.put(line if line is not None else TOO_LONG)
        self.inbox.put(None)

    def run(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        """Answer stdin's lines until quit or EOF; a reader thread queues them, so that a
        streaming analysis sees the next command arrive."""
        stdin, self.stdout = protocol_streams(stdin, stdout)
        if stdin is None:  # started with fd 0 closed: nothing will come
            return
        threading.Thread(target=self._read, args=(stdin,), daemon=True).start()
        while (line := self.inbox.get()) is not None:
            if line is TOO_LONG:
                self._write(f"? line too long (over {MAX_LINE} characters)\n\n")
                continue
            response = self.respond(line)
            if self.stream is not None:
                self.answer_stream(response.split()[0][1:])  # "=id": the id
                continue
            if response is None:
                continue
            self._write(response)
            if self.finished:
                return


DEFAULT_MAX_MOVES = 20   # moves per line unless maxmoves says otherwise (a GUI draws a handful)
MIN_VISIT_SHARE = 0.01   # a visited move with fewer visits than this share of the best one's is left out


def shown_moves(infos: list, request: AnalyzeRequest, unvisited: int = 10) -> list:
    """The moves an analysis line reports, best first: the visited ones with at least
    ``MIN_VISIT_SHARE`` of the best move's visits, padded (with the next visited, then the
    best unvisited priors) up to ``minmoves``, or up to ``unvisited`` when nothing has a
    visit yet (a search-free model); cut at ``maxmoves`` (default ``DEFAULT_MAX_MOVES``,
    or ``minmoves`` if larger). Without the cuts a long search lists every legal move."""
    visited = [info for info in infos if info.visits > 0]
    floor = max(1.0, MIN_VISIT_SHARE * visited[0].visits) if visited else 1.0
    strong = [info for info in visited if info.visits >= floor]
    wanted = max(request.min_moves, 0 if visited else unvisited)
    shown = strong + infos[len(strong):][:max(wanted - len(strong), 0)]
    limit = request.max_moves if request.max_moves is not None else max(DEFAULT_MAX_MOVES, request.min_moves)
    return shown[:limit]


def number(x: float) -> str:
    """A float as KataGo writes one (six significant digits), always with a decimal point
    and never in exponent form: Sabaki reads a kata-analyze win rate without a point as
    Leela Zero's x 10000 integer."""
    return np.format_float_positional(float(x), precision=6, unique=False, fractional=False, trim="0")


def numbers(values) -> str:
    return " ".join(number(v) for v in np.asarray(values, dtype=np.float64))


SCORE_UTILITY = 0.1  # KataGo's default staticScoreUtilityFactor


def utility(winrate: float, score_lead: float, n: int) -> float:
    """KataGo's utility: the win/loss utility 2w - 1 plus a score utility of at most
    ``SCORE_UTILITY``, (2/pi) atan(lead / 2n) of it (a lead of a board's width is worth
    about 60% of it)."""
    return 2.0 * winrate - 1.0 + SCORE_UTILITY * (2.0 / math.pi) * math.atan(score_lead / (2.0 * n))


def searched_lead(infos, children: dict) -> float | None:
    """The search's score of the root, as KataGo reports it and the JSON engine does: the
    visit-weighted mean of the net's score after each searched move (``children``: the
    estimates after each move, from the root mover's view); None before any visit or
    without a score head."""
    weighted = [(info.visits, children[info.move].score_lead) for info in infos
                if info.visits > 0 and info.move in children and children[info.move].score_lead is not None]
    total = sum(visits for visits, _ in weighted)
    return sum(visits * lead for visits, lead in weighted) / total if total else None


def value_fields(winrate: float, estimate: BoardEstimate | None, n: int) -> dict[str, str]:
    """``utility`` (with a score), ``winrate`` and the score fields, in KataGo's order."""
    score = None if estimate is None else estimate.score_lead
    fields = {}
    if score is not None:
        fields["utility"] = number(utility(winrate, score, n))
    fields["winrate"] = number(winrate)
    if score is not None:
        fields["scoreMean"] = number(score)
        if estimate.score_stdev is not None:
            fields["scoreStdev"] = number(estimate.score_stdev)
        fields["scoreLead"] = number(score)
    return fields


def kata_info(info, order: int, n: int, after: BoardEstimate | None, request: AnalyzeRequest,
              spread: np.ndarray | None = None) -> str:
    """One ``info move ...`` entry of kata-analyze. ``after``: the net's estimate of the
    position after the move, from the mover's view (its score is the move's scoreLead);
    ``spread``: its ``movesOwnershipStdev``. ``edgeVisits`` is ``visits`` (a tree: no
    transpositions), and so are ``pvEdgeVisits`` and ``pvVisits``, after the PV, when asked."""
    winrate = info.winrate
    if info.visits == 0 and after is not None and after.winrate is not None:
        winrate = after.winrate  # no search behind the move: the net's judgement of it
    fields = {"move": move_name(info.move, n), "visits": str(info.visits), "edgeVisits": str(info.visits),
              **value_fields(winrate, after, n), "prior": number(info.prior), "lcb": number(info.lcb),
              "order": str(order)}
    text = "info " + " ".join(f"{key} {value}" for key, value in fields.items())
    text += " pv " + " ".join(move_name(m, n) for m in info.pv)
    for key, wanted in (("pvVisits", request.pv_visits), ("pvEdgeVisits", request.pv_edge_visits)):
        if wanted:
            text += f" {key} " + " ".join(str(v) for v in info.pv_visits)
    if request.moves_ownership and after is not None and after.ownership is not None:
        text += " movesOwnership " + numbers(after.ownership)
    if request.moves_ownership_stdev and spread is not None:
        text += " movesOwnershipStdev " + numbers(spread)
    return text


def lz_info(info, order: int, n: int) -> str:
    """One ``info move ...`` entry of lz-analyze, as Leela Zero writes it (x 10000 integers)."""
    pv = " ".join(move_name(m, n) for m in info.pv)
    return (f"info move {move_name(info.move, n)} visits {info.visits} winrate {round(info.winrate * 10000)} "
            f"prior {round(info.prior * 10000)} lcb {round(info.lcb * 10000)} order {order} pv {pv}")


def mover_view(estimate: BoardEstimate) -> BoardEstimate:
    """An estimate of the position after a move (the opponent to move) from the mover's view."""
    return BoardEstimate(
        winrate=None if estimate.winrate is None else 1.0 - estimate.winrate,
        score_lead=None if estimate.score_lead is None else -estimate.score_lead,
        score_stdev=estimate.score_stdev,
        ownership=None if estimate.ownership is None else -np.asarray(estimate.ownership),
    )


def _numbers(args: list[str], count: int, usage: str) -> list[float]:
    """``count`` non-negative finite numbers (ASCII digits and a point) or a GTP error."""
    if len(args) != count:
        raise GTPError(f"{usage}: expected {count} numbers")
    values = []
    for text in args:
        if not text.isascii() or len(text) > 12:
            raise GTPError(f"{usage}: {text[:20]!r} is not a number")
        try:
            value = float(text)
        except ValueError:
            raise GTPError(f"{usage}: {text[:20]!r} is not a number") from None
        if not np.isfinite(value) or value < 0:
            raise GTPError(f"{usage}: {text!r} must be a non-negative number")
        values.append(value)
    return values


def cleanup_move(state: GoState, scores: np.ndarray) -> int:
    """The best-scored open point (`stonelab.games.go.ownership.open_points`: a neutral point,
    room to invade, a chain to save), else pass.

    Playing the open points captures dead stones left on the board and fills dame, so a
    Tromp-Taylor count afterwards is the true result (``kgs-genmove_cleanup``), and an
    engine never passes while points can still be won or lost.
    """
    n_points = state.n * state.n
    playable = open_points(state)
    if not playable.any():
        return n_points
    board_scores = np.where(playable, np.asarray(scores[:n_points], dtype=np.float64), -np.inf)
    return int(np.argmax(board_scores))


ENGINE_TREE_NODES = 20_000  # room for analysis to grow (19x19: ~170 MB of edges)


def search_gtp_engine(predictor, search, *, resign: ResignRule | None = None, name: str = "stonelab",
                      version: str = "", background: CompileNotice | None = None, rollouts: int = 0,
                      count_settled: bool = True) -> SearchGTPEngine:
    """A Go move predictor as a GTP engine; ``search`` (the search settings, Go's own under
    ``"go"``: `stonelab.games.go.settings.search_settings`; or None) with ``playouts: 0`` or
    None plays the net's move without search.

    ``background`` (`src/play.py`), the `CompileNotice` of a first start: the kernels
    compile or load on a thread (`warm_up`), the net's move first, then the search, which
    takes over when ready (`SearchGTPEngine.search_when_ready`); the notice says when.
    Without it the search is built before this returns (compiling on first use).

    ``rollouts`` > 0: kata-analyze's rootInfo mixes that many policy rollouts into its win
    rate and score (`SearchGTPEngine`), a move predictor's only; ``count_settled`` mixes in the
    count of the settled board there (`stonelab.models.board_count`)."""
    from stonelab.games.go.players import go_search_player
    from stonelab.games.go.settings import split_settings
    from stonelab.models.board_count import check_count_settled
    from stonelab.models.rollouts import check_rollouts, policy_rollouts

    settings = dict(search or {"playouts": 0})
    playouts = settings.get("playouts", 0)
    if not isinstance(playouts, int) or playouts < 0:
        raise ConfigError(f"search.playouts={playouts!r} must be an integer >= 0 (0: no search)")
    if playouts > 0:
        MCTSConfig(**split_settings(settings)[0])  # a bad setting is refused now, not by a thread later
        settings.setdefault("max_nodes", None)
        settings["max_nodes"] = settings["max_nodes"] or max(2 * (playouts + 2) + 8, ENGINE_TREE_NODES)

    check_rollouts(rollouts, predictor)
    check_count_settled(count_settled)
    nets = {predictor.rules.n: predictor}
    rolled = (lambda state: policy_rollouts(nets[state.n], state, rollouts=rollouts)) if rollouts else None

    def boards(n):  # boardsize n: the net resized once per size, a search of that board
        if n not in nets:
            if not hasattr(predictor, "for_board"):
                raise StonelabError(f"this model plays {predictor.rules.n}x{predictor.rules.n} only")
            nets[n] = predictor.for_board(n)
        net = nets[n]
        return (*net_functions(net), (lambda: go_search_player(net, settings)) if playouts else None)

    def engine(player, playouts, predictor=predictor):
        choose, priors, estimates = net_functions(predictor)
        return SearchGTPEngine(predictor.rules.n, choose, player, priors=priors, estimates=estimates,
                               playouts=playouts, seconds=settings.get("seconds"), resign=resign, name=name,
                               version=version, boards=boards, rollouts=rolled, count_settled=count_settled)

    if background is None:
        return engine(go_search_player(predictor, settings) if playouts else None, playouts)
    twin = copy.deepcopy(predictor)  # the thread's own net: it shares no buffer with the engine's

    def warmed():
        warm_up(lambda player, playouts: engine(player, playouts, twin), twin, settings if playouts else None)
        background.ready()
        return (lambda: go_search_player(predictor, settings)) if playouts else None

    ours = engine(None, playouts)
    ours.search_when_ready(Background(warmed), compiling=lambda: background.said)
    return ours


def net_functions(predictor) -> tuple[Callable, Callable, Callable]:
    """(choose, priors, estimates) of a Go model, as `SearchGTPEngine` takes them."""
    def choose(states, histories):  # without search: the net's move (a belief_vit's gate applies)
        return predictor.play_moves(states, histories=histories)

    def estimates(states):  # win rate, score and ownership, each where the net has the head
        if hasattr(predictor, "estimates"):
            return predictor.estimates(states)
        belief = predictor.outputs(states).belief_map  # an alphazero net: its ownership head only
        return [BoardEstimate(None, None, None, None if belief is None else belief[i].flatten().cpu().numpy())
                for i in range(len(states))]

    return choose, lambda state: predictor.probabilities([state])[0], estimates


WARM_UP_PLAYOUTS = 8
WARM_UP_NODES = 64  # a throwaway tree that fills up: the search compacts it too


def warm_up(engine, predictor, settings: dict | None) -> None:
    """Compile (or load) what the engine's moves run, on a scratch game: first the net's
    move, which the engine plays until the search is ready, then (``settings``, the
    search's) searched moves with and without a clock, and a reply to a pass (the
    cleanup that looks for open points). ``engine(player, playouts)`` builds a scratch
    engine; ``predictor`` is the thread's own."""
    from stonelab.games.go.players import go_search_player

    engine(None, 0).genmove(["b"])
    if settings is None:
        return
    player = go_search_player(predictor, {**settings, "max_nodes": WARM_UP_NODES})
    scratch = engine(player, WARM_UP_PLAYOUTS)
    scratch.genmove(["b"])
    scratch.genmove(["w"])                              # one move on: the tree is kept
    scratch.time_settings(["600", "0", "0"])            # a clock: the search runs to a deadline
    scratch.play(["w", "pass"])
    scratch.genmove(["b"])
    player.prune()                                      # what a long analysis does to a full tree
