"""A Go tactics suite generated from the rules: positions whose right answers are a known set.

Four kinds, each decided by the rules kernels (`stonelab.games.go.rules`, `go_ownership`), never
by a net:

  capture      an opponent chain of at least `BIG_CHAIN` stones is in atari and none of
               the mover's is; right: every move that captures at least `BIG_CHAIN` stones.
  escape       one of the mover's chains of at least `BIG_CHAIN` stones is in atari and no
               opponent chain is; right: every move after which that chain stands with
               at least three liberties (extending, or capturing a neighbour), so that no
               ladder or second atari takes it at once.
  no_eye_fill  the mover has a single-point eye (`go_ownership.is_own_eye`) and points to
               play for; right: every legal board move but its own eyes.
  no_pass      the game is far along (at least half the board filled or played) and the mover
               still has open points (`go_ownership.open_points`); right: every legal
               board move. The pass, which gives away what is still open, is the one
               wrong answer: this kind catches a net that passes too early (a raw policy
               that learned to pass), and it is trivial for anything else.

Positions come from seeded random games (uniformly random legal moves that fill no own
eye), deduplicated, at most one of each kind from a game; each kind keeps positions whose
answer set is a proper subset of the legal moves (the pass included), so a random mover does
not score 100%.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stonelab.games.go.ownership import diagonal_table, is_own_eye, open_points
from stonelab.games.go.rules import BLACK, GoRules, GoState

KINDS = ("capture", "escape", "no_eye_fill", "no_pass")
BIG_CHAIN = 3  # stones: chains this large are worth capturing or saving in nearly every position
SAFE_LIBERTIES = 3


@dataclass(frozen=True)
class GoTactic:
    """One position (a `GoState`, its side to move to answer), its kind and its right
    answers (sorted moves; the pass is ``n*n``)."""

    kind: str
    state: GoState
    answers: tuple[int, ...]

    @property
    def legal_moves(self) -> int:
        """How many moves the mover has, the pass included (a random mover's odds are
        ``len(answers) / legal_moves``)."""
        return int(self.state.legal_mask().sum())


def _chains_in_atari(state: GoState, colour: int) -> list[int]:
    """One stone of each ``colour`` chain of at least `BIG_CHAIN` stones in atari."""
    seen, found = set(), []
    for p in np.flatnonzero(state.board == colour):
        p = int(p)
        if p in seen:
            continue
        chain = state.chain(p)
        seen.update(chain)
        if len(chain) >= BIG_CHAIN and state.liberties(p) == 1:
            found.append(p)
    return found


def _legal_board_moves(state: GoState) -> np.ndarray:
    return np.flatnonzero(state.legal_mask()[:-1])


def captured_stones(state: GoState, move: int) -> int:
    """How many stones the side to move captures by playing ``move``."""
    after = state.copy().play(move)
    return sum(after.captures) - sum(state.captures)


def _saves(state: GoState, move: int, stone: int) -> bool:
    after = state.copy().play(move)
    return bool(after.board[stone] == state.to_play and after.liberties(stone) >= SAFE_LIBERTIES)


def classify(state: GoState, diag: np.ndarray, late: int) -> tuple[str, tuple[int, ...]] | None:
    """The kind of ``state`` (its side to move to answer) and its right answers, or None.
    ``late``: the moves from which a position counts as far along (for ``no_pass``)."""
    mover = state.to_play
    legal = _legal_board_moves(state)
    mine, theirs = _chains_in_atari(state, mover), _chains_in_atari(state, -mover)
    found = None
    if theirs and not mine:
        found = ("capture", [int(m) for m in legal if captured_stones(state, int(m)) >= BIG_CHAIN])
    elif len(mine) == 1 and not theirs:
        found = ("escape", [int(m) for m in legal if _saves(state, int(m), mine[0])])
    elif not mine and not theirs and open_points(state).any():
        nbr = state.arrays.neighbours
        eyes = {int(p) for p in legal if is_own_eye(state.board, nbr, diag, int(p), mover)}
        if eyes:
            found = ("no_eye_fill", [int(m) for m in legal if int(m) not in eyes])
        elif state.move_number >= late:
            found = ("no_pass", [int(m) for m in legal])
    if found is None or not 0 < len(found[1]) < int(state.legal_mask().sum()):
        return None
    return found[0], tuple(sorted(found[1]))


def generate(rules: GoRules, per_kind: int = 20, seed: int = 0, max_games: int = 2_000) -> list[GoTactic]:
    """Up to ``per_kind`` positions of each kind from seeded random games, deduplicated."""
    rng = np.random.default_rng(seed)
    found: dict[str, list[GoTactic]] = {kind: [] for kind in KINDS}
    seen: set[tuple[bytes, int]] = set()
    diag = diagonal_table(rules.n)
    late = rules.num_points // 2
    for _ in range(max_games):
        if all(len(v) >= per_kind for v in found.values()):
            break
        state = rules.new_state()
        taken: set[str] = set()  # one position of a kind per game: the suite spans many games
        for _ in range(2 * rules.num_points):
            key = (state.board.tobytes(), state.to_play)
            if key not in seen:
                seen.add(key)
                kind = classify(state, diag, late)
                if kind is not None and kind[0] not in taken and len(found[kind[0]]) < per_kind:
                    found[kind[0]].append(GoTactic(kind[0], state.copy(), kind[1]))
                    taken.add(kind[0])
            move = _random_move(state, diag, rng)
            if move is None:
                break
            state.play(move)
    return [t for kind in KINDS for t in found[kind]]


def _random_move(state: GoState, diag: np.ndarray, rng: np.random.Generator) -> int | None:
    """A uniformly random legal board move that fills no own eye; None when there is none."""
    nbr = state.arrays.neighbours
    for p in rng.permutation(_legal_board_moves(state)):
        if not is_own_eye(state.board, nbr, diag, int(p), state.to_play):
            return int(p)
    return None


def describe(tactic: GoTactic) -> str:
    """The position as text, its kind and answers (for a failing test or a curious user)."""
    from stonelab.games.go.rules import to_text

    colour = "black" if tactic.state.to_play == BLACK else "white"
    return f"{tactic.kind}, {colour} to move, answers {tactic.answers}\n{to_text(tactic.state)}"


# --- answering and scoring (task=tactics) ------------------------------------------------------------


def policy_answers(predictor, tactics: list[GoTactic]) -> np.ndarray:
    """A Go model's most likely legal move (the pass included) in each position, one batched call."""
    return np.argmax(predictor.probabilities([t.state for t in tactics]), axis=1)


def search_answers(predictor, tactics: list[GoTactic], search: dict) -> np.ndarray:
    """The most visited move of a Go model's search (``search``: the search settings, its
    playouts included) in each position, a fresh tree for each."""
    from stonelab.games.go.players import go_search_player

    player = go_search_player(predictor, search)
    answers = []
    for t in tactics:
        player.sync(t.state)
        player.search()
        answers.append(player.best_move())
    return np.array(answers)


def run_suite(cfg, path: str, playouts: list[int]) -> dict:
    """``task=tactics`` on a Go checkpoint (any model): the raw policy and the search at each
    of ``playouts`` (0: the raw policy)."""
    from stonelab.arena import tactics as scoring
    from stonelab.games.go.settings import entry_point_settings, resolved_search
    from stonelab.models.alphazero_go import AlphaZeroGoModel, go_model_from_checkpoint
    from stonelab.search.mcts import MCTSConfig
    from stonelab.utils.device import resolve_device

    settings = entry_point_settings(cfg)  # another game's settings refused here
    MCTSConfig(**cfg.search)  # a bad search setting is named before any search
    predictor = go_model_from_checkpoint(path, device=resolve_device(cfg.device))
    tactics = generate(predictor.rules, per_kind=cfg.per_kind, seed=cfg.suite_seed)
    rows = {"random move": scoring.random_baseline(tactics)}
    for p in playouts:
        answers = (policy_answers(predictor, tactics) if p == 0
                   else search_answers(predictor, tactics, {**settings, "playouts": p}))
        rows["raw policy" if p == 0 else f"search {p}"] = scoring.score(tactics, answers)
    return {"checkpoint": path, "net": f"checkpoint:{path}", "game": predictor.rules.name,
            "positions": scoring.counts(tactics), "suite_seed": cfg.suite_seed,
            "c_puct": resolved_search(settings, isinstance(predictor, AlphaZeroGoModel))["c_puct"],
            "leaf_value": settings["go"]["leaf_value"], "scores": rows}
