"""KataGo's JSON analysis engine protocol, engine side: a Go checkpoint behind KaTrain.

    python src/play.py protocol=analysis ckpt_path=models/go19_resnet3x64_kgs_22k.ckpt

reads one JSON query per line on stdin and writes one JSON response per line on stdout,
as KataGo's ``katago analysis`` does (its docs/Analysis_Engine.md): a query names a game
(``moves``, ``initialStones``, ``rules``, ``komi``, board size) and the turns to analyse
(``analyzeTurns``); each turn gets one response with ``rootInfo`` and ``moveInfos``
(after ``isDuringSearch`` reports if ``reportDuringSearchEvery`` asks for them). Each
turn is a fresh MCTS of `stonelab.games.go.players.GoSearchPlayer` up to ``maxVisits``
(and ``overrideSettings.maxTime``), as KataGo clears its search between queries.

Queries wait in one queue, highest ``priority`` first, ties in arrival order; a reader
thread parses them while the search runs, so ``terminate`` stops the search it names.
Special actions: ``query_version`` (the package's version, from importlib.metadata, in
the form GTP's ``version`` gives it, `stonelab.protocols.gtp.gtp_version`: one source, so
the two protocols never disagree, and KataGo's form, as clients compare KataGo versions
to know what an engine speaks; ``git_hash`` the checkout's commit), ``query_models``
(`stonelab.protocols.katago_fields.model_facts`), ``clear_cache`` (nothing is cached:
echoed), ``terminate`` (with ``turnNumbers``), ``terminate_all``.

What the numbers are (docs/analysis_engine.md says more):

- ``winrate``: the search's mean value (the net's value head, or random playouts where
  the net has none); ``lcb`` the mean less 1.96 standard errors of the values the
  search backed up (their spread kept from the tree: `stonelab.games.go.players.value_lcb`).
- ``visits`` = ``edgeVisits`` = ``playSelectionValue``: the search is a tree, so a child
  is reached only through its edge (KataGo's differ under graph search), and the engines
  play the most visited move. ``pvVisits`` = ``pvEdgeVisits`` likewise, per PV move.
- ``isSymmetryOf`` never comes: KataGo sets it on a move it did not search because a
  symmetric one was (``rootSymmetryPruning``); this search tries every move itself.
- ``ownershipStdev``: the spread of the net's ownership over one ply of the search (the
  position's own map and each searched move's, weighted by visits); a move's, over its
  replies. KataGo's is over the whole tree below; here only one ply is judged.
- ``thisHash`` / ``symHash``: 128-bit digests of the stones, side to move and ko ban, the
  latter the same for the 8 symmetric positions (`stonelab.protocols.katago_fields.position_hashes`).
- ``scoreLead``: the net's score head where it has one; otherwise a FALLBACK, the mean
  Tromp-Taylor area margin of ``score_playouts`` light random playouts from the position
  (`stonelab.games.go.ownership.random_playout`). A move's is that of the position after
  it; the root's is the visit-weighted mean over its searched moves. Random playouts are
  a rough guide to the score, and blind to life and death that needs reading.
- With ``count_settled`` (on by default), the root's ``winrate`` and ``scoreLead`` late in a
  game mix in the count of the board (`stonelab.models.board_count`: dead stones judged by
  random playouts and taken off, settled points counted, the open ones the net's ownership),
  with a weight that grows with the share of the empty points already settled: 0 until a
  fifth of them are (the opening and middle game), 0.75 from three quarters on.
- With ``rollouts`` N > 0 (off by default: ~10 s a turn on a CPU core for 8 with a 6-block
  net), the root's ``winrate`` and ``scoreLead`` mix the search's with N policy rollouts
  from the position (`stonelab.models.rollouts`: the net plays the game out against itself,
  the ends are counted) at `stonelab.models.rollouts.ROLLOUT_SHARE`: they read the life and
  death a score head misses. ``rawWinrate``/``rawLead`` stay the net's, ``moveInfos`` the
  search's. Move predictors (maddison_cnn, resnet, belief_vit nets) only.
- ``ownership``: the net's ownership map where it has one; without, it is left out (and
  a warning says so).
- Rules: every rule set KataGo names is accepted; the count is always area (stones plus
  surrounded points, Tromp-Taylor) with the query's komi, suicide is illegal, and ko is
  simple or positional superko as the rule set says. Territory rules get a warning.
- Perspective: ``reportAnalysisWinratesAs`` (the engine's ``report_as``, or the query's
  ``overrideSettings``): BLACK (KataGo's example config, and what KaTrain forces),
  WHITE or SIDETOMOVE.

Bad input never stops the engine: each bad line gets exactly one
``{"id":...,"field":...,"error":...}`` (``{"error":...}`` without a string id), warnings
for what is ignored come as ``{"id":...,"field":...,"warning":...}`` before the results.
An empty line is an error too; stdin is read as bytes, and a line that is no UTF-8 is
refused whole (its id kept where intact), never changed by a guess; a line may hold up to
`MAX_QUERY_LINE` bytes.
"""

from __future__ import annotations

import copy
import heapq
import itertools
import json
import math
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np

from stonelab import __version__
from stonelab.games.go.players import combined_lcb
from stonelab.games.go.rules import BLACK, MAX_BOARD, MIN_BOARD, WHITE, GoRules, GoState, IllegalMove
from stonelab.protocols.gtp import GTPError, gtp_version, move_name, parse_vertex
from stonelab.protocols.gtp_search import utility
from stonelab.protocols.katago_fields import git_hash, model_facts, ownership_spread, position_hashes
from stonelab.protocols.streams import input_lines, protocol_streams, shown
from stonelab.search.mcts import MCTSConfig

PERSPECTIVES = ("BLACK", "WHITE", "SIDETOMOVE")
SEARCH_STEP = 16           # playouts between looks at the clock, a terminate and the report timer
MAX_PRIORITY = 2 ** 62     # KataGo's bound on priority
MAX_VISITS = 2 ** 50       # KataGo's bound on maxVisits
MAX_KOMI = 150.0
DEFAULT_PV_LEN = 15        # KataGo's analysisPVLen
PLAYERS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}
_XY = re.compile(r"\(\s*([0-9]{1,2})\s*,\s*([0-9]{1,2})\s*\)")

# KataGo's rule names (Rules::tryParseRules and KaTrain's short names) -> (positional
# superko, territory scoring). Situational superko is played as positional: the rules
# kernels know only that one.
RULES = {
    "tromp-taylor": (True, False), "tromp_taylor": (True, False), "tromptaylor": (True, False), "tt": (True, False),
    "chinese": (False, False), "cn": (False, False), "chinese-ogs": (True, False), "chinese_ogs": (True, False),
    "chinese-kgs": (True, False), "chinese_kgs": (True, False),
    "japanese": (False, True), "jp": (False, True), "korean": (False, True), "ko": (False, True),
    "stone-scoring": (False, False), "stone_scoring": (False, False),
    "aga": (True, False), "bga": (True, False), "french": (True, False), "aga-button": (True, False),
    "new-zealand": (True, False), "new zealand": (True, False), "new_zealand": (True, False), "nz": (True, False),
}
KO_RULES = {"SIMPLE": False, "POSITIONAL": True, "SITUATIONAL": True}
RULE_KEYS = ("ko", "scoring", "tax", "suicide", "hasButton", "whiteHandicapBonus", "friendlyPassOk")

# Query fields: those used, and KataGo's that are accepted but have no effect here.
FIELDS = ("id", "moves", "initialStones", "initialPlayer", "rules", "komi", "boardXSize", "boardYSize",
          "analyzeTurns", "maxVisits", "includeOwnership", "includeMovesOwnership", "includePolicy",
          "includePVVisits", "includeOwnershipStdev", "includeMovesOwnershipStdev",
          "overrideSettings", "reportDuringSearchEvery", "firstReportDuringSearchAfter", "priority",
          "priorities", "avoidMoves", "allowMoves", "analysisPVLen", "action")
IGNORED_FIELDS = ("whiteHandicapBonus", "rootPolicyTemperature", "rootFpuReductionMax")
FLAGS = {"includeOwnership": "ownership", "includeMovesOwnership": "moves_ownership",  # query flag -> `Turn` field
         "includeOwnershipStdev": "ownership_stdev", "includeMovesOwnershipStdev": "moves_ownership_stdev",
         "includePolicy": "policy", "includePVVisits": "pv_visits"}
OWNERSHIP_FLAGS = ("includeOwnership", "includeMovesOwnership", "includeOwnershipStdev", "includeMovesOwnershipStdev")
# Bytes in one query line: KataGo reads lines of any length; this bound only keeps a stream
# without newlines from filling the memory. A whole 19x19 game with every turn asked is ~20 kB.
MAX_QUERY_LINE = 64 * 2 ** 20
SETTINGS = ("reportAnalysisWinratesAs", "maxVisits", "maxPlayouts", "maxTime", "analysisPVLen")


class QueryError(Exception):
    """A query that cannot be analysed: ``field`` names the query field at fault."""

    def __init__(self, field_name: str, message: str):
        super().__init__(message)
        self.field = field_name


@dataclass
class Turn:
    """One position of a query to analyse: what the worker needs, and its place in the queue."""

    id: str
    turn: int
    state: GoState                 # the position, its side to move set
    max_visits: int
    perspective: str
    priority: int = 0
    max_time: float | None = None
    report_every: float | None = None
    first_report: float | None = None
    pv_len: int = DEFAULT_PV_LEN
    ownership: bool = False
    moves_ownership: bool = False
    ownership_stdev: bool = False
    moves_ownership_stdev: bool = False
    policy: bool = False
    pv_visits: bool = False
    allowed: np.ndarray | None = None  # bool [A]: the root moves the search may try (None: all)
    stopped: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class Judgement:
    """A position's score and owners, side to move's view; None where unknown."""

    winrate: float | None
    score: float
    stdev: float
    ownership: np.ndarray | None


# -- reading a query --------------------------------------------------------------------------------

def _integer(query: dict, key: str, low: int, high: int, message: str) -> int:
    value = query[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise QueryError(key, message)
    return value


def _number(query: dict, key: str, low: float, high: float, message: str) -> float:
    value = query[key]
    # compared before float(): float() of a 400-digit int raises; NaN fails the comparison, and json reads 1e999 as inf
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise QueryError(key, message)
    return float(value)


def _boolean(query: dict, key: str) -> bool:
    if not isinstance(query.get(key, False), bool):
        raise QueryError(key, "Must be a boolean")
    return bool(query.get(key, False))


def _player(value, key: str) -> int:
    if not isinstance(value, str) or value.strip().lower() not in PLAYERS:
        raise QueryError(key, f"Must be \"B\" or \"W\", got {shown(str(value), 20)}")
    return PLAYERS[value.strip().lower()]


def parse_location(text, n: int, key: str, allow_pass: bool = True) -> int:
    """A point (row * n + col, row 0 at the top) from a GTP vertex, ``pass`` or KataGo's ``(x,y)``."""
    if not isinstance(text, str):
        raise QueryError(key, f"Could not parse board location: {shown(str(text), 20)}")
    match = _XY.fullmatch(text.strip())
    if match and int(match[1]) < n and int(match[2]) < n:
        return int(match[2]) * n + int(match[1])  # KataGo's (x,y): x from the left, y from the top
    try:
        point = parse_vertex(text, n)
    except GTPError:
        raise QueryError(key, f"Could not parse board location: {shown(text, 20)}") from None
    if point == n * n and not allow_pass:
        raise QueryError(key, "pass is no stone")
    return point


def _pairs(query: dict, key: str, n: int, allow_pass: bool) -> list[tuple[int, int]]:
    value = query.get(key, [])
    usage = "Must be an array of pairs of the form: [\"B\" or \"W\", GTP board vertex]"
    if not isinstance(value, list):
        raise QueryError(key, usage)
    pairs = []
    for item in value:
        if not isinstance(item, list) or len(item) != 2:
            raise QueryError(key, usage)
        pairs.append((_player(item[0], key), parse_location(item[1], n, key, allow_pass)))
    return pairs


def parse_rules(value, warnings: list) -> tuple[bool, float | None]:
    """(positional superko, default komi or None) of a query's ``rules``: a name or an object."""
    if isinstance(value, str):
        name = value.strip().lower()
        if name not in RULES:
            raise QueryError("rules", f"Could not parse rules: {shown(value, 30)}")
        superko, territory = RULES[name]
        if territory:
            warnings.append(("rules", f"Rules {name} are scored here by area (Tromp-Taylor count) with the "
                                      "query's komi; the search knows no territory scoring"))
        return superko, 6.5 if territory else None
    if isinstance(value, dict):
        unknown = [k for k in value if k not in RULE_KEYS]
        ko = value.get("ko", "SIMPLE")
        if unknown or not isinstance(ko, str) or ko.upper() not in KO_RULES:
            raise QueryError("rules", f"Could not parse rules: {shown(json.dumps(value), 60)}")
        if str(value.get("scoring", "AREA")).upper() != "AREA" or value.get("suicide") or value.get("hasButton"):
            warnings.append(("rules", "Only area scoring without suicide or button is played here: "
                                      "scoring, suicide and hasButton are ignored"))
        return KO_RULES[ko.upper()], None
    raise QueryError("rules", "Must specify rules string, such as \"chinese\" or \"tromp-taylor\", "
                              "or a JSON object with detailed rules parameters.")


def replay(n: int, komi: float, superko: bool, stones, moves, first: int, turns: set[int]) -> dict[int, GoState]:
    """The positions at ``turns`` of the game: setup ``stones``, then ``moves``. As KataGo, a
    colour may move twice in a row and play goes on after two passes."""
    state = GoRules(n, komi, superko).new_state()
    black = [p for c, p in stones if c == BLACK]
    white = [p for c, p in stones if c == WHITE]
    if set(black) & set(white) or len(set(black)) < len(black) or len(set(white)) < len(white):
        raise QueryError("initialStones", "Two stones on one point")
    try:
        state.setup(black, white)
    except IllegalMove as exc:
        raise QueryError("initialStones", f"Invalid setup stones ({exc.reason})") from None
    state.to_play = first
    positions = {}
    for i, (colour, point) in enumerate(moves):
        if i in turns:
            positions[i] = _snapshot(state)
        state.to_play = colour
        if state.is_over:
            state.resume_play()
        try:
            state.play(point)
        except IllegalMove as exc:
            raise QueryError("moves", f"Illegal move {i}: {move_name(point, n)} ({exc.reason})") from None
    if len(moves) in turns:
        positions[len(moves)] = _snapshot(state)
    return positions


def _snapshot(state: GoState) -> GoState:
    """A copy to analyse: after two passes play resumes, as in KataGo's analysis (no cleanup phase)."""
    now = state.copy()
    return now.resume_play() if now.is_over else now


def _turns(query: dict, count: int) -> list[int]:
    if "analyzeTurns" not in query:
        return [count]
    value = query["analyzeTurns"]
    if not isinstance(value, list) or any(isinstance(t, bool) or not isinstance(t, int) for t in value):
        raise QueryError("analyzeTurns", "Must specify an array of integers indicating turns to analyze")
    for t in value:
        if not 0 <= t <= count:
            raise QueryError("analyzeTurns", f"Invalid turn number: {_plain(str(t), 20)}")
    return sorted(set(value))


def _priorities(query: dict, turns: list[int]) -> dict[int, int]:
    if "priorities" in query:
        if "priority" in query:
            raise QueryError("priority", "Cannot specify both priority and priorities")
        value = query["priorities"]
        if ("analyzeTurns" not in query or not isinstance(value, list) or not isinstance(query["analyzeTurns"], list)
                or len(value) != len(query["analyzeTurns"])):
            raise QueryError("priorities", "Must be an array of integers of the length of analyzeTurns")
        for p in value:
            if isinstance(p, bool) or not isinstance(p, int) or abs(p) > MAX_PRIORITY:
                raise QueryError("priorities", f"Invalid priority: {_plain(str(p), 20)}")
        return dict(zip(query["analyzeTurns"], value, strict=True))
    priority = 0
    if "priority" in query:
        priority = _integer(query, "priority", -MAX_PRIORITY, MAX_PRIORITY, "Must be a number between -2^62 and 2^62")
    return dict.fromkeys(turns, priority)


def _settings(query: dict, defaults: dict, warnings: list) -> dict:
    """The search settings after ``overrideSettings``: perspective, visits, time, PV length."""
    settings = dict(defaults)
    override = query.get("overrideSettings", {})
    if not isinstance(override, dict):
        raise QueryError("overrideSettings", "Must be an object")
    ignored = [key for key in override if key not in SETTINGS]
    if ignored:
        warnings.append(("overrideSettings", "Unknown config params (ignored by this engine): "
                         + _plain(",".join(ignored))))
    if "reportAnalysisWinratesAs" in override:
        value = override["reportAnalysisWinratesAs"]
        if not isinstance(value, str) or value.strip().upper() not in PERSPECTIVES:
            raise QueryError("overrideSettings", "Could not set settings: reportAnalysisWinratesAs must be "
                                                 "BLACK, WHITE or SIDETOMOVE")
        settings["perspective"] = value.strip().upper()
    for key in ("maxVisits", "maxPlayouts"):
        if key in override:
            settings["max_visits"] = _integer(override, key, 1, MAX_VISITS, f"Could not set settings: {key} "
                                              "must be an integer from 1 to 2^50")
    if "maxTime" in override:
        settings["max_time"] = _number(override, "maxTime", 0.0, 1e6, "Could not set settings: maxTime must be "
                                       "a number of seconds from 0 to 1e6") or None
    if "analysisPVLen" in override:
        settings["pv_len"] = _integer(override, "analysisPVLen", 1, 1000, "Must be an integer from 1 to 1000")
    return settings


def _move_filter(query: dict, n: int) -> tuple[list[tuple[int, list[int], int]], bool] | None:
    """``avoidMoves`` / ``allowMoves`` as ([(player, points, untilDepth)], allow), or None."""
    keys = [k for k in ("avoidMoves", "allowMoves") if k in query]
    if not keys:
        return None
    if len(keys) == 2:
        raise QueryError("allowMoves", "Cannot specify both allowMoves and avoidMoves")
    key = keys[0]
    entries = query[key]
    usage = "Must be a list of dicts with subfields 'player', 'moves', 'untilDepth'"
    if not isinstance(entries, list) or not all(isinstance(e, dict) and {"player", "moves", "untilDepth"} <= e.keys()
                                                for e in entries):
        raise QueryError(key, usage)
    if key == "allowMoves" and len(entries) > 1:
        raise QueryError(key, "Currently allowMoves only allows one entry")
    parsed = []
    for entry in entries:
        if not isinstance(entry["moves"], list):
            raise QueryError(key, "Must be an array of GTP board vertices")
        points = [parse_location(m, n, key) for m in entry["moves"]]
        depth = _integer(entry, "untilDepth", 1, 10**9, "Must be a positive integer")
        parsed.append((_player(entry["player"], key), points, depth))
    return parsed, key == "allowMoves"


def root_allowed(filters, state: GoState) -> np.ndarray | None:
    """bool [A]: the root moves a query's avoid/allow lists leave the side to move (None: all).
    Only the root is restricted: an untilDepth over 1 reaches no deeper here."""
    if filters is None:
        return None
    entries, allow = filters
    num_actions = state.n * state.n + 1
    mine = [points for colour, points, _ in entries if colour == state.to_play]
    if not mine:
        return None
    allowed = np.zeros(num_actions, dtype=bool) if allow else np.ones(num_actions, dtype=bool)
    for points in mine:
        allowed[points] = allow
    return allowed


def board_of(query: dict, sizes: Sequence[int]) -> int:
    """The query's board side, one of ``sizes`` (the boards this engine's net plays)."""
    plays = f"{sizes[0]}x{sizes[0]}" if len(sizes) == 1 else f"square boards from {sizes[0]} to {sizes[-1]}"
    for key in ("boardXSize", "boardYSize"):
        if key not in query:
            raise QueryError(key, f"Must provide an integer: this engine's net plays {plays}")
        _integer(query, key, 2, 19, "Must provide an integer from 2 to 19")
    n = query["boardXSize"]
    if query["boardYSize"] != n or n not in sizes:
        only = " only" if len(sizes) == 1 else ""
        raise QueryError("boardXSize" if n not in sizes else "boardYSize",
                         f"This engine's net plays {plays}{only}, not {n}x{query['boardYSize']}")
    return n


def parse_query(query: dict, sizes: Sequence[int], defaults: dict, has_ownership: bool) -> tuple[list[Turn], list]:
    """The turns a query asks for and its warnings [(field, message)]; raises `QueryError`."""
    ident = query["id"]
    warnings: list[tuple[str, str]] = []
    n = board_of(query, sizes)
    stones = _pairs(query, "initialStones", n, allow_pass=False)
    if "moves" not in query:
        raise QueryError("moves", "Must specify an array of [player,location] pairs")
    moves = _pairs(query, "moves", n, allow_pass=True)
    if "rules" not in query:
        raise QueryError("rules", "Must specify rules string, such as \"chinese\" or \"tromp-taylor\", "
                                  "or a JSON object with detailed rules parameters.")
    superko, default_komi = parse_rules(query["rules"], warnings)
    komi = default_komi if default_komi is not None else 7.5
    if "komi" in query:
        komi = _number(query, "komi", -MAX_KOMI, MAX_KOMI, "Must be a integer or half-integer from -150.0 to 150.0")
        if komi * 2 != int(komi * 2):
            raise QueryError("komi", "Must be a integer or half-integer from -150.0 to 150.0")
    first = _first_player(query, stones, moves)
    turns = _turns(query, len(moves))
    priorities = _priorities(query, turns)
    settings = _settings(query, defaults, warnings)
    options = _options(query, settings, has_ownership, warnings)
    filters = _move_filter(query, n)
    warnings += [(key, "Not supported by this engine, ignored") for key in query
                 if key in IGNORED_FIELDS]
    warnings += [(_plain(key, 40), "Unknown field, ignored") for key in query
                 if key not in FIELDS and key not in IGNORED_FIELDS]
    positions = replay(n, komi, superko, stones, moves, first, set(turns))
    return [Turn(ident, t, positions[t], priority=priorities[t], allowed=root_allowed(filters, positions[t]),
                 **options) for t in turns], warnings


def _first_player(query: dict, stones, moves) -> int:
    if "initialPlayer" in query:
        return _player(query["initialPlayer"], "initialPlayer")
    if moves:
        return moves[0][0]
    handicap = sum(c == BLACK for c, _ in stones) >= 2 and not any(c == WHITE for c, _ in stones)
    return WHITE if handicap else BLACK  # KataGo: white moves first after handicap stones


def _options(query: dict, settings: dict, has_ownership: bool, warnings: list) -> dict:
    """The per-turn options of a query (everything of `Turn` but the position and priority)."""
    if "maxVisits" in query:
        settings["max_visits"] = _integer(query, "maxVisits", 1, MAX_VISITS, "Must be an integer from 1 to 2^50")
    if "analysisPVLen" in query:
        settings["pv_len"] = _integer(query, "analysisPVLen", 1, 1000, "Must be an integer from 1 to 1000")
    every = first = None
    if "reportDuringSearchEvery" in query:
        every = first = _number(query, "reportDuringSearchEvery", 0.001, 1e6,
                                "Must be number of seconds from 0.001 to 1000000.0")
    if "firstReportDuringSearchAfter" in query:
        first = _number(query, "firstReportDuringSearchAfter", 0.001, 1e6,
                        "Must be number of seconds from 0.001 to 1000000.0")
    flags = {FLAGS[key]: _boolean(query, key) for key in FLAGS}
    for key in OWNERSHIP_FLAGS:
        if flags[FLAGS[key]] and not has_ownership:
            warnings.append((key, "This engine's net has no ownership head: no ownership is reported"))
            flags[FLAGS[key]] = False
    return dict(max_visits=settings["max_visits"], perspective=settings["perspective"],
                max_time=settings.get("max_time"), pv_len=settings["pv_len"], report_every=every,
                first_report=first, **flags)


# -- judging positions ------------------------------------------------------------------------------

def playout_score(state: GoState, playouts: int, seed: int = 0) -> tuple[float, float]:
    """(mean, standard deviation) of the Tromp-Taylor area margin, side to move's view, over
    ``playouts`` light random playouts from ``state`` (`random_playout`): the scoreLead of a
    net without a score head. Seeded, so one position always gets one estimate."""
    from stonelab.models.rollouts import area_margin
    from stonelab.search.tree import seed_numba

    seed_numba(seed)
    scores = np.array([area_margin(state) for _ in range(playouts)] or [0.0])
    sign = 1.0 if state.to_play == BLACK else -1.0
    return sign * float(scores.mean()), float(scores.std())


class Judge:
    """Scores and owners of positions: the net's heads where it has them (`MovePredictor.estimates`),
    else random playouts for the score (`playout_score`) and no ownership."""

    def __init__(self, predictor, score_playouts: int):
        self.predictor = predictor
        self.score_playouts = score_playouts
        estimates = getattr(predictor, "estimates", None)
        self.estimates = estimates
        probe = estimates([predictor.rules.new_state()])[0] if estimates else None
        self.has_ownership = probe is not None and probe.ownership is not None

    def __call__(self, states: list[GoState]) -> list[Judgement]:
        if not states:
            return []
        estimates = self.estimates(states) if self.estimates else [None] * len(states)
        out = []
        for state, est in zip(states, estimates, strict=True):
            if est is not None and est.score_lead is not None:
                score, stdev = est.score_lead, est.score_stdev if est.score_stdev is not None else 0.0
            else:
                score, stdev = playout_score(state, self.score_playouts)
            out.append(Judgement(None if est is None else est.winrate, float(score), float(stdev),
                                 None if est is None else est.ownership))
        return out


# -- the engine -------------------------------------------------------------------------------------

def with_rules(predictor, rules: GoRules):
    """A view of ``predictor`` that searches under ``rules`` (a query's komi and ko rule): the
    same net; an alphazero model also gets a search of those rules (its planes show komi)."""
    if predictor.rules == rules:
        return predictor
    twin = copy.copy(predictor)
    twin.rules = rules
    if hasattr(predictor, "search"):
        from stonelab.games.go.search import GoSearch

        twin.search = GoSearch(rules, max_moves=3 * rules.num_points, fill_own_eyes=False)
    return twin


class AnalysisEngine:
    """KataGo's analysis protocol over a Go model: a reader thread queues the turns, the
    calling thread searches them by priority and writes the responses."""

    PLAYERS_KEPT = 2  # searches kept for (komi, superko) pairs: each holds a whole tree

    def __init__(self, predictor, search: dict, *, max_visits: int = 200, report_as: str = "BLACK",
                 score_playouts: int = 32, max_nodes: int = 20_000, name: str = "stonelab",
                 version: str = __version__, model_path: str = "", rollouts: int = 0, count_settled: bool = True):
        from stonelab.errors import ConfigError
        from stonelab.models.board_count import check_count_settled
        from stonelab.models.rollouts import check_rollouts

        if str(report_as).upper() not in PERSPECTIVES:
            raise ConfigError(f"report_as={report_as!r}: choose BLACK, WHITE or SIDETOMOVE")
        check_rollouts(rollouts, predictor)
        check_count_settled(count_settled)
        self.rollouts = rollouts
        self.count_settled = count_settled
        self.predictor = predictor
        self.n = predictor.rules.n  # the net's own board; others are served resized (`sizes`)
        self.sizes = board_sizes(predictor)
        self.predictors = {self.n: predictor}
        self.search_settings = {**dict(search or {}), "playouts": SEARCH_STEP, "max_nodes": max_nodes}
        self.defaults = {"max_visits": max_visits, "perspective": str(report_as).upper(), "pv_len": DEFAULT_PV_LEN}
        self.judge = Judge(predictor, score_playouts)
        self.judges = {self.n: self.judge}
        self.name, self.version, self.model_path = name, version, model_path
        self.players: OrderedDict[tuple, object] = OrderedDict()
        self.queue: list[tuple] = []
        self.cond = threading.Condition()
        self.order = itertools.count()
        self.closed = False
        self.running: Turn | None = None
        self.write_lock = threading.Lock()
        self.stdout: TextIO | None = None

    # -- output
    def emit(self, obj: dict) -> None:
        text = json.dumps(obj, separators=(",", ":"), allow_nan=False)
        with self.write_lock:
            self.stdout.write(text + "\n")
            self.stdout.flush()

    def error(self, message: str, ident=None, field_name: str | None = None) -> None:
        if isinstance(ident, str):
            self.emit({"id": ident, **({"field": field_name} if field_name else {}), "error": message})
        else:
            self.emit({"error": message})

    # -- input (the reader thread)
    def handle_line(self, line: str | bytes | None) -> None:
        """One input line (bytes from stdin, text from a test): an error, an action's echo, or
        turns queued. Never raises."""
        if line is None:
            return self.error(f"Request line too long (over {MAX_QUERY_LINE} bytes)")
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                return self._not_utf8(line, exc.start)
        if not line.strip():
            return self.error("Empty request line: each line must hold one JSON query object")
        try:
            query = json.loads(line)
        except (ValueError, RecursionError) as exc:  # RecursionError: [[[[...]]]] nested past Python's stack
            return self.error(f"Could not parse input line as json request: {_plain(str(exc))}")
        try:
            self._handle(query)
        except QueryError as exc:
            self.error(str(exc), query.get("id"), exc.field)
        except Exception as exc:  # a bug must not stop the engine: one error line for the query
            ident = query.get("id") if isinstance(query, dict) else None
            self.error(f"internal error: {type(exc).__name__} {_plain(str(exc))}", ident)

    def _not_utf8(self, raw: bytes, at: int) -> None:
        """A line with bytes that are no UTF-8 is refused whole, as KataGo's JSON parser refuses
        it: replacing them would change an id or a move without a word. The error carries the
        id where the id itself is intact, so the client still knows which query failed."""
        try:
            query = json.loads(raw.decode("utf-8", "surrogateescape"))
        except (ValueError, RecursionError):
            query = None
        ident = query.get("id") if isinstance(query, dict) else None
        if isinstance(ident, str) and not _is_utf8(ident):
            ident = None
        self.error(f"Request line is not valid UTF-8 (byte 0x{raw[at]:02X} at offset {at}): refused whole, "
                   "no byte of it is guessed", ident)

    def _handle(self, query) -> None:
        if not isinstance(query, dict):
            return self.error("Request line was valid json but was not an object")
        if not isinstance(query.get("id"), str):
            return self.error("Request must have a string \"id\" field")
        if "action" in query:
            return self._action(query)
        turns, warnings = parse_query(query, self.sizes, self.defaults, self.judge.has_ownership)
        for field_name, message in warnings:
            self.emit({"id": query["id"], "field": field_name, "warning": message})
        with self.cond:
            for turn in turns:
                heapq.heappush(self.queue, (-turn.priority, next(self.order), turn))
            self.cond.notify()

    def _action(self, query: dict) -> None:
        action = query["action"]
        if action == "query_version":  # the version GTP's `version` gives too (`gtp_version`)
            return self.emit({**query, "version": gtp_version(self.version), "git_hash": git_hash()})
        if action == "query_models":
            batch = self.search_settings.get("leaves_per_game", MCTSConfig.leaves_per_game)
            return self.emit({**query, "models": [model_facts(self.predictor, self.model_path, batch)]})
        if action == "clear_cache":
            return self.emit(query)  # nothing is cached between queries: each turn searches afresh
        if action not in ("terminate", "terminate_all"):
            raise QueryError("action", "'action' field must be 'query_version', 'query_models', 'clear_cache', "
                                       "'terminate' or 'terminate_all'")
        target = query.get("terminateId")
        if action == "terminate" and not isinstance(target, str):
            raise QueryError("terminateId", "Requests for a terminate action must have a string \"terminateId\" field")
        numbers = query.get("turnNumbers")
        if numbers is not None and (not isinstance(numbers, list)
                                    or any(isinstance(t, bool) or not isinstance(t, int) for t in numbers)):
            raise QueryError("turnNumbers", "If provided, must be an array of integers indicating turns to terminate")
        self._terminate(target if action == "terminate" else None, numbers)
        self.emit(query)

    def _terminate(self, target: str | None, numbers: list | None) -> None:
        """Stop the turns of ``target`` (None: all): a queued one answers noResults now, the
        running one stops its search and reports what it has."""
        def hit(turn: Turn) -> bool:
            return (target is None or turn.id == target) and (numbers is None or turn.turn in numbers)

        with self.cond:
            dropped = [item[2] for item in self.queue if hit(item[2])]
            self.queue = [item for item in self.queue if not hit(item[2])]
            heapq.heapify(self.queue)
            if self.running is not None and hit(self.running):
                self.running.stopped.set()
        for turn in dropped:
            self.emit({"id": turn.id, "turnNumber": turn.turn, "isDuringSearch": False, "noResults": True})

    def _read(self, stdin) -> None:
        try:
            for line in input_lines(stdin, MAX_QUERY_LINE):
                self.handle_line(line)
        finally:
            with self.cond:
                self.closed = True
                self.cond.notify()

    # -- the worker (the calling thread)
    def run(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        """Answer queries until stdin ends and every queued turn is answered (as KataGo does).
        The real stdin is read as bytes (`handle_line` decodes each line, refusing bad UTF-8)."""
        if stdin is None and sys.stdin is not None:
            stdin = getattr(sys.stdin, "buffer", sys.stdin)
        stdin, self.stdout = protocol_streams(stdin, stdout)
        if stdin is None:
            return
        threading.Thread(target=self._read, args=(stdin,), name="analysis-reader", daemon=True).start()
        self.work()

    def work(self) -> None:
        """Analyse queued turns, highest priority first, until the input is closed and none is left."""
        while (turn := self._next()) is not None:
            try:
                self.analyse(turn)
            except Exception as exc:  # a bug in one turn: an error for it, and the engine goes on
                self.error(f"internal error: {type(exc).__name__} {_plain(str(exc))}", turn.id)
            finally:
                with self.cond:
                    self.running = None

    def _next(self) -> Turn | None:
        with self.cond:
            while not self.queue and not self.closed:
                self.cond.wait()
            if not self.queue:
                return None
            self.running = heapq.heappop(self.queue)[2]
            return self.running

    def player(self, state: GoState):
        """The search of ``state``'s rules (komi, superko), built on first use."""
        from stonelab.games.go.players import go_search_player

        key = (state.n, float(state.rules.komi), bool(state.rules.superko))
        if key not in self.players:
            if len(self.players) >= self.PLAYERS_KEPT:
                self.players.popitem(last=False)
            self.players[key] = go_search_player(with_rules(self.predictor_for(state.n), state.rules),
                                                 self.search_settings)
        self.players.move_to_end(key)
        return self.players[key]

    def predictor_for(self, n: int):
        """The net on an ``n``-line board, resized on first use (`MovePredictor.for_board`)."""
        if n not in self.predictors:
            self.predictors[n] = self.predictor.for_board(n)
            self.judges[n] = Judge(self.predictors[n], self.judge.score_playouts)
        return self.predictors[n]

    def analyse(self, turn: Turn) -> None:
        """Search ``turn`` afresh up to its visits and time, reporting during the search if asked."""
        player = self.player(turn.state)
        player.root_key = None  # a fresh tree: KataGo clears its search between queries
        player.sync(turn.state)
        if turn.allowed is not None:
            restrict_root(player, turn.allowed)
        start = time.monotonic()
        deadline = None if turn.max_time is None else start + turn.max_time
        reports = ReportClock(start, turn.first_report, turn.report_every)
        cache: dict = {}
        done = player.root_visit_total + 1  # the root's own evaluation counts as a visit, as in KataGo
        while not turn.stopped.is_set() and not player.tree_full and done < turn.max_visits:
            if deadline is not None and time.monotonic() >= deadline:
                break
            # a step also ends when the next report is due, so the report is not a step late
            until = min((t for t in (deadline, reports.wake()) if t is not None), default=None)
            player.search(playouts=min(SEARCH_STEP, turn.max_visits - done), deadline=until)
            before, done = done, player.root_visit_total + 1
            reports.tick(lambda: self.response(turn, player, cache, during=True), self.emit)
            if done == before:  # nothing left to search (a root without candidates)
                break
        self.emit(self.response(turn, player, cache, during=False))

    # -- responses
    def response(self, turn: Turn, player, cache: dict, during: bool) -> dict:
        state = turn.state
        infos = [i for i in player.analysis(pv_length=turn.pv_len) if turn.allowed is None or turn.allowed[i.move]]
        shown_infos = [i for i in infos if i.visits > 0] or infos[:1]  # before any visit: the best prior
        judged = self._judged(state, [i.move for i in shown_infos], cache)
        root = judged[None]
        sign = perspective_sign(turn.perspective, state.to_play)
        visits = sum(i.visits for i in shown_infos)
        winrate = (sum(i.visits * i.winrate for i in shown_infos) / visits if visits
                   else root.winrate if root.winrate is not None else 0.5)
        lead = sum(i.visits * -judged[i.move].score for i in shown_infos) / visits if visits else root.score
        lcb = combined_lcb(shown_infos)
        if self.count_settled:
            winrate, lead, lcb = self._with_count(state, winrate, lead, lcb, root, cache)
        if self.rollouts:
            winrate, lead, lcb = self._with_rollouts(state, winrate, lead, lcb, cache)
        moves = [self._move_info(order, info, judged[info.move], winrate, sign, turn)
                 for order, info in enumerate(shown_infos)]
        this_hash, sym_hash = position_hashes(state)
        out = {"id": turn.id, "turnNumber": turn.turn, "isDuringSearch": during, "moveInfos": moves,
               "rootInfo": {"winrate": _rate(winrate, sign), "scoreLead": _f(sign * lead),
                            "scoreSelfplay": _f(sign * lead), "scoreStdev": _f(root.stdev),
                            "utility": _f(utility(_rate(winrate, sign), sign * lead, state.n)), "visits": visits + 1,
                            "lcb": _rate(winrate if lcb is None else lcb, sign),
                            "currentPlayer": "B" if state.to_play == BLACK else "W",
                            **_raw_fields(root, sign), "symHash": sym_hash, "thisHash": this_hash}}
        if turn.ownership and root.ownership is not None:
            out["ownership"] = [_f(sign * v) for v in root.ownership]
        if turn.ownership_stdev and root.ownership is not None:
            searched = [(i.move, i.visits) for i in shown_infos]
            out["ownershipStdev"] = [_f(v) for v in self._spread(state, None, searched, cache)]
        if turn.moves_ownership_stdev:
            self._moves_spread(turn, player, shown_infos, moves, cache)
        if turn.policy:
            out["policy"] = self._policy(state)
        return out

    def _with_count(self, state: GoState, winrate: float, lead: float, lcb: float | None, root: Judgement,
                    cache: dict) -> tuple[float, float, float | None]:
        """(win rate, score lead, win rate's lower bound) of the side to move: the search's mixed
        with the count of the settled board (`stonelab.models.board_count.with_count`), counted once per turn."""
        from stonelab.models.board_count import late_count, with_count

        if "count" not in cache:
            owned = None if root.ownership is None else np.asarray(root.ownership, dtype=np.float64) * state.to_play
            cache["count"] = late_count(state, owned)
        lead, winrate, lcb = with_count(lead, winrate, lcb, cache["count"], state.to_play)
        return winrate, lead, lcb

    def _with_rollouts(self, state: GoState, winrate: float, lead: float, lcb: float | None,
                       cache: dict) -> tuple[float, float, float | None]:
        """(win rate, score lead, win rate's lower bound) of the side to move: the search's
        mixed with the turn's policy rollouts (`stonelab.models.rollouts.blend`), played once per turn."""
        from stonelab.models.rollouts import blend, policy_rollouts

        if "rollouts" not in cache:
            cache["rollouts"] = policy_rollouts(self.predictor_for(state.n), state, rollouts=self.rollouts)
        lead, winrate, lcb = blend(lead, winrate, cache["rollouts"], state.to_play, lcb)
        return winrate, lead, lcb

    def _judged(self, state: GoState, moves: list[int], cache: dict) -> dict:
        """Judgements of the root (key None) and of the position after each move, cached per turn."""
        todo = [m for m in [None, *moves] if m not in cache]
        positions = [state if m is None else _after(state, m) for m in todo]  # m: a move, or a tuple of moves
        self.predictor_for(state.n)
        cache.update(zip(todo, self.judges[state.n](positions), strict=True))
        return cache

    def _move_info(self, order: int, info, judged: Judgement, root_winrate: float, sign: int, turn: Turn) -> dict:
        """One ``moveInfos`` entry. ``edgeVisits`` is ``visits``: the search is a tree, not
        KataGo's graph, so the only way into a child is its edge from the root (no
        transpositions, and no weightless human-SL visits either). ``playSelectionValue``
        is ``visits`` too: the engines play the most visited move (ties to the higher
        prior, as ``order`` ranks them; `GoSearchPlayer.best_move`)."""
        winrate = info.winrate if info.visits else root_winrate
        lead = sign * -judged.score  # the position after the move is judged for the opponent
        entry = {"move": move_name(info.move, turn.state.n), "visits": info.visits, "edgeVisits": info.visits,
                 "winrate": _rate(winrate, sign), "scoreLead": _f(lead), "scoreMean": _f(lead),
                 "scoreSelfplay": _f(lead), "scoreStdev": _f(judged.stdev), "prior": _f(info.prior),
                 "utility": _f(utility(_rate(winrate, sign), lead, turn.state.n)), "lcb": _rate(info.lcb, sign),
                 "utilityLcb": _f(utility(_rate(info.lcb, sign), lead, turn.state.n)), "order": order,
                 "playSelectionValue": float(info.visits), "pv": [move_name(m, turn.state.n) for m in info.pv]}
        if turn.pv_visits:  # a tree: the visits of the position after each PV move are its edge's
            entry["pvVisits"] = entry["pvEdgeVisits"] = list(info.pv_visits)
        if turn.moves_ownership and judged.ownership is not None:
            entry["ownership"] = [_f(-sign * v) for v in judged.ownership]
        return entry

    def _spread(self, state: GoState, base: int | None, lines: list[tuple], cache: dict) -> np.ndarray:
        """``ownershipStdev``: the per-point standard deviation of the net's ownership over one
        ply of the search below a position (the root, ``base`` None, or the position after
        root move ``base``): its own judgement (weight 1, its evaluation's visit) and that of
        the position after each searched move of ``lines`` [(move or (move, reply), visits)],
        weighted by its visits, all in black's view (`ownership_spread`)."""
        judged = self._judged(state, [line for line, _ in lines], cache)
        samples = [(1.0, _black_view(judged[base], state.to_play, base))]
        samples += [(visits, _black_view(judged[line], state.to_play, line)) for line, visits in lines]
        return ownership_spread(samples)

    def _moves_spread(self, turn: Turn, player, infos: list, moves: list[dict], cache: dict) -> None:
        """Each move's ``ownershipStdev``: `_spread` below the position after it, over the
        searched replies to it (a move searched once has only itself: 0 everywhere)."""
        judged = self._judged(turn.state, [i.move for i in infos], cache)
        for info, entry in zip(infos, moves, strict=True):
            if judged[info.move].ownership is not None:
                replies = [((info.move, reply), visits) for reply, visits in player.replies(info.move)]
                entry["ownershipStdev"] = [_f(v) for v in self._spread(turn.state, info.move, replies, cache)]

    def _policy(self, state: GoState) -> list[float]:
        """The net's move probabilities, -1 on illegal moves (KataGo's), pass last."""
        probs = np.asarray(self.predictor_for(state.n).probabilities([state])[0], dtype=np.float64)
        return [_f(p) if legal else -1.0 for p, legal in zip(probs, state.legal_mask(), strict=True)]

    # -- first start
    def warm_up(self) -> None:
        """Compile (or load from numba's cache) what a query runs, so that none compiles after
        the "compiled" line: a query's replay (a setup stone, two passes, play resumed after
        them), a search without a clock, and one with a time limit and reports (a search with
        a deadline runs other kernels), every field asked."""
        rules = self.predictor.rules
        query = {"id": "warm-up", "initialStones": [["B", "A1"]], "moves": [["W", "pass"], ["B", "pass"]],
                 "rules": "tromp-taylor" if rules.superko else "chinese", "komi": float(rules.komi),
                 "boardXSize": rules.n, "boardYSize": rules.n, "maxVisits": SEARCH_STEP, "includePolicy": True}
        (plain,), _ = parse_query(query, self.sizes, self.defaults, self.judge.has_ownership)
        every = {name: True for name in FLAGS.values()}
        timed = Turn("warm-up", plain.turn, plain.state, max_visits=2 * SEARCH_STEP, perspective="BLACK",
                     max_time=600.0, report_every=1e-6, first_report=1e-6, **every)
        out, self.stdout = self.stdout, _Discard()
        try:
            self.analyse(plain)
            self.analyse(timed)
        finally:
            self.stdout = out


class _Discard:
    def write(self, text: str) -> None:
        pass

    def flush(self) -> None:
        pass


def restrict_root(player, allowed: np.ndarray) -> None:
    """Leave only the ``allowed`` moves among the expanded root's edges (priors renormalised):
    the root's children are one run of edges, so the kept ones move to its front and the
    count shrinks. Nothing is restricted where no allowed move is among the candidates."""
    player.analysis(max_moves=1)  # expands the root
    tree = player.mcts.tree
    root = int(tree.root[0])
    start, count = int(tree.first_edge[0, root]), int(tree.num_children[0, root])
    edges = np.arange(start, start + count)
    keep = edges[allowed[tree.move[0, edges]]]
    if count <= 0 or len(keep) == 0:
        return
    order = np.concatenate([keep, edges[~allowed[tree.move[0, edges]]]])
    for name in ("move", "visits", "child", "vloss", "prior", "value_sum"):
        values = getattr(tree, name)
        values[0, start:start + count] = values[0, order]
    tree.num_children[0, root] = len(keep)
    kept = tree.prior[0, start:start + len(keep)]
    kept /= max(float(kept.sum()), 1e-12)


def board_sizes(predictor) -> tuple[int, ...]:
    """The board sides a query may ask for: every side Go's rules take (9 to 19) when the net is a
    convolutional move predictor that `MovePredictor.for_board` moves, else its own."""
    from stonelab.models.resize import RESIZABLE_NETS

    net = getattr(predictor, "net", None)
    inner = getattr(net, "net", net)
    target = f"{type(inner).__module__}.{type(inner).__qualname__}"
    if hasattr(predictor, "for_board") and target in RESIZABLE_NETS:
        return tuple(range(MIN_BOARD, MAX_BOARD + 1))
    return (predictor.rules.n,)


def perspective_sign(perspective: str, to_play: int) -> int:
    """+1 where values are reported for the side to move, -1 where for its opponent."""
    if perspective == "SIDETOMOVE":
        return 1
    return 1 if (BLACK if perspective == "BLACK" else WHITE) == to_play else -1


def _after(state: GoState, move) -> GoState:
    """The position after ``move``, or after each move of a tuple of them in turn."""
    after = state.copy()
    for m in move if isinstance(move, tuple) else (move,):
        after.play(int(m))
    return after


def _black_view(judged: Judgement, to_play: int, line: tuple | int | None) -> np.ndarray:
    """The ownership of the position after ``line`` (a move or a tuple of moves from a
    position with ``to_play`` to move; None: that position) in black's view: a judgement
    is its side to move's."""
    plies = len(line) if isinstance(line, tuple) else 0 if line is None else 1
    mover = to_play if plies % 2 == 0 else -to_play
    return mover * np.asarray(judged.ownership, dtype=np.float64)


class ReportClock:
    """The reports during a search: written ``first`` seconds after ``start``, then every
    ``every`` seconds on a fixed beat (`next_beat`).

    A report takes time of its own (the net judges the moves it shows for the first time:
    0.05-0.2 s on 19x19 on one CPU core), which once came on top of every interval (0.35 s
    apart for 0.2). So a report is made ahead of its beat, by about what the last ones took
    (``lag``), the search goes on meanwhile, and it is written on the beat: its numbers are
    then up to ``lag`` old. A report due when the search ends is dropped: the final
    response follows at once. The floor: one net evaluation (a step stops there, not
    sooner) and a report's own time when it takes longer than the interval."""

    def __init__(self, start: float, first: float | None, every: float | None):
        self.beat = math.inf if first is None else start + first
        self.every = every
        self.lag = 0.0
        self.pending: dict | None = None

    def wake(self) -> float | None:
        """When the search should stop for the next `tick` (None: no report is coming)."""
        if math.isinf(self.beat):
            return None
        return self.beat if self.pending is not None else self.beat - self.lag

    def tick(self, make, write) -> None:
        """Make the next report (``make()``) once it is due, and ``write`` it once its beat comes."""
        now = time.monotonic()
        if self.pending is None and now >= self.beat - self.lag:
            self.pending = make()
            took = time.monotonic() - now
            # room for a slower one; a spike is remembered a while
            self.lag = min(max(1.5 * took, 0.75 * self.lag), self.every or 0.0)
            now = time.monotonic()
        if self.pending is not None and now >= self.beat:
            write(self.pending)
            self.pending = None
            self.beat = next_beat(self.beat, self.every, now)


def next_beat(scheduled: float, every: float | None, now: float) -> float:
    """When the report after one due at ``scheduled`` and written at ``now`` is due: on a
    fixed beat of ``every`` seconds (a step's overshoot is not added to each interval);
    after a report written late by more than a quarter of the interval (the first one,
    whose cost is not known yet; one slower than usual), ``every`` after it, so no two
    reports come close together and the search gets its time between them. Without
    ``every`` (only ``firstReportDuringSearchAfter``) no other report comes."""
    if every is None:
        return math.inf
    return scheduled + every if now - scheduled <= every / 4 else now + every


def _is_utf8(text: str) -> bool:
    """Whether ``text`` holds no byte that `surrogateescape` kept from a line that is no UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _raw_fields(root: Judgement, sign: int) -> dict:
    """KataGo's ``rawWinrate`` and ``rawLead``: the net's own judgement of the root, beside
    the search's (``winrate``, ``scoreLead``), in the response's view."""
    raw = {"rawLead": _f(sign * root.score)}
    if root.winrate is not None:
        raw = {"rawWinrate": _rate(root.winrate, sign), **raw}
    return raw


def _rate(winrate: float, sign: int) -> float:
    return _f(winrate if sign > 0 else 1.0 - winrate)


def _plain(text: str, limit: int = 80) -> str:
    """``text`` ASCII-escaped and cut, to echo inside a message."""
    escaped = ascii(text)[1:-1]
    return escaped if len(escaped) <= limit else escaped[:limit] + "..."


def _f(value: float) -> float:
    """A JSON-safe float (no NaN or infinity), rounded to what a GUI shows."""
    value = float(value)
    return round(value, 6) if math.isfinite(value) else 0.0


def analysis_engine(predictor, search: dict | None, **settings) -> AnalysisEngine:
    """The engine of a Go model (`src/play.py protocol=analysis`), warmed up."""
    engine = AnalysisEngine(predictor, search or {}, **settings)
    engine.warm_up()
    return engine


def turn_roots(engine: AnalysisEngine, moves: Sequence[tuple[str, str]], komi: float, n: int = 19,
               first: int = 0, turns: Sequence[int] | None = None) -> list[dict]:
    """The rootInfo of every turn of one game from turn ``first`` (0: the empty board) to after
    the last of ``moves`` (("B" or "W", vertex) pairs), or of the listed ``turns`` only, from one
    query through ``engine``: what the measurement scripts read. An answer with an error raises
    ValueError naming it."""
    import io

    analyse = list(range(first, len(moves) + 1)) if turns is None else list(turns)
    query = {"id": "turns", "rules": "chinese", "komi": komi, "boardXSize": n, "boardYSize": n,
             "moves": [list(move) for move in moves], "analyzeTurns": analyse}
    out = io.StringIO()
    engine.closed = False
    engine.run(io.StringIO(json.dumps(query) + "\n"), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    failed = [a["error"] for a in answers if "error" in a]
    if failed:
        raise ValueError(f"the analysis engine refused the game: {failed[0]}")
    return [a["rootInfo"] for a in sorted((a for a in answers if "rootInfo" in a), key=lambda a: a["turnNumber"])]
