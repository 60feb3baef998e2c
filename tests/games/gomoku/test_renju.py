"""Gomocup's rule sets: standard's exact five and renju's forbidden points for black, against a
table of positions checked by hand and a plain-Python reference written from the definitions."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.arena.players import play_match, pure_mcts_player
from stonelab.errors import ConfigError, GameConfigError
from stonelab.games.gomoku.renju import forbidden, forbidden_mask, wins
from stonelab.games.gomoku.rules import BLACK, EXACT_FIVE, FREESTYLE, RENJU, WHITE, GomokuRules
from stonelab.games.gomoku.search import TO_PLAY
from stonelab.search import tree as T
from stonelab.search.game import MOVER_WINS

N = 15
DIRS = ((0, 1), (1, 0), (1, 1), (1, -1))


def board_of(black=(), white=()) -> np.ndarray:
    board = np.zeros(N * N, dtype=np.int8)
    for r, c in black:
        board[r * N + c] = BLACK
    for r, c in white:
        board[r * N + c] = WHITE
    return board


# --- the table: (black stones, white stones, the point black would play, forbidden?, why) ---------
# Each drawn and checked by hand from the definitions (module doc of stonelab.games.gomoku.renju).
TABLE = [
    # two open threes crossing at (7, 7): across (7,5)(7,6)+, down (5,7)(6,7)+
    ([(7, 5), (7, 6), (5, 7), (6, 7)], [], (7, 7), True, "double three"),
    # the same with a gap: X.X across and X.X down still make two threes
    ([(7, 4), (7, 6), (4, 7), (6, 7)], [], (7, 7), True, "double three, split threes"),
    # one three closed by white at (7, 8): XXX then O is no three; the vertical one alone is allowed
    ([(7, 5), (7, 6), (5, 7), (6, 7)], [(7, 8)], (7, 7), False, "three and a closed three"),
    # a three against the edge: (0,1)(0,2)+(0,3) has no room for a straight four on the left
    ([(0, 1), (0, 2), (1, 3), (2, 3)], [], (0, 3), False, "an edge three is no three"),
    # two fours crossing: across (7,4)(7,5)(7,6)+, down (4,7)(5,7)(6,7)+
    ([(7, 4), (7, 5), (7, 6), (4, 7), (5, 7), (6, 7)], [], (7, 7), True, "double four"),
    # two fours in one line: X.XXX.X with the middle stone played
    ([(7, 3), (7, 5), (7, 7), (7, 9)], [], (7, 6), True, "double four in one line"),
    # four and three (4-3): allowed
    ([(7, 4), (7, 5), (7, 6), (5, 7), (6, 7)], [], (7, 7), False, "four and three"),
    # six in a row: overline
    ([(7, 2), (7, 3), (7, 4), (7, 6), (7, 7)], [], (7, 5), True, "overline"),
    # a five beside a would-be double three: the five wins, nothing is forbidden
    ([(7, 3), (7, 4), (7, 6), (7, 7), (5, 5), (6, 5), (4, 3), (5, 4)], [], (7, 5), False, "a five wins"),
    # a false three: across, the straight four's only point (7, 8) is an overline point down
    # column 8 (rows 3-6 and 8 black), and (7, 4) makes no straight four (its end at (7, 3) would
    # give six with (7, 2)); so across is no true three, down is one: allowed
    ([(7, 2), (7, 5), (7, 6), (5, 7), (6, 7), (3, 8), (4, 8), (5, 8), (6, 8), (8, 8)], [], (7, 7), False,
     "false three (its four point is forbidden)"),
    # the same without the column-8 stones: two true threes
    ([(7, 2), (7, 5), (7, 6), (5, 7), (6, 7)], [], (7, 7), True, "the same, now a true double three"),
]


@pytest.mark.parametrize("black, white, point, expected, why", TABLE, ids=[row[4] for row in TABLE])
def test_forbidden_points_table(black, white, point, expected, why):
    board = board_of(black, white)
    move = point[0] * N + point[1]
    assert forbidden(board, N, move, 0) == expected, why
    assert ref_forbidden(board, move) == expected, why  # the reference agrees with the hand check
    assert board[move] == 0  # the kernel leaves the board as it found it


# --- a plain-Python reference, written from the definitions ---------------------------------------


def ref_run(board, p, colour, dr, dc) -> list[int]:
    """The points of the unbroken run of ``colour`` through ``p`` along (dr, dc)."""
    r0, c0 = divmod(p, N)
    run = [p]
    for sign in (1, -1):
        r, c = r0 + sign * dr, c0 + sign * dc
        while 0 <= r < N and 0 <= c < N and board[r * N + c] == colour:
            run.append(r * N + c)
            r, c = r + sign * dr, c + sign * dc
    return run


def ref_line(p, dr, dc) -> list[int]:
    r0, c0 = divmod(p, N)
    return [(r0 + i * dr) * N + c0 + i * dc for i in range(-5, 6)
            if 0 <= r0 + i * dr < N and 0 <= c0 + i * dc < N]


def ref_four_sets(board, p, dr, dc) -> set[frozenset]:
    """The sets of four black stones through ``p`` that one more stone makes an exact five."""
    sets = set()
    for q in ref_line(p, dr, dc):
        if board[q] == 0:
            board[q] = BLACK
            run = ref_run(board, q, BLACK, dr, dc)
            board[q] = 0
            if len(run) == 5 and p in run:
                sets.add(frozenset(run) - {q})
    return sets


def ref_forbidden(board, p, depth=0) -> bool:
    board = board.copy()
    board[p] = BLACK
    runs = [ref_run(board, p, BLACK, dr, dc) for dr, dc in DIRS]
    if any(len(run) == 5 for run in runs):
        return False
    if any(len(run) >= 6 for run in runs):
        return True
    if sum(len(ref_four_sets(board, p, dr, dc)) for dr, dc in DIRS) >= 2:
        return True
    if depth >= 6:
        return False
    threes = 0
    for dr, dc in DIRS:
        if ref_four_sets(board, p, dr, dc):
            continue
        for q in ref_line(p, dr, dc):
            if board[q] != 0 or abs(q - p) == 0:
                continue
            board[q] = BLACK
            # a straight four through p and q: one four set with two ways to an exact five
            fours = [s for s in ref_four_sets(board, p, dr, dc) if q in s]
            straight = any(sum(1 for x in ref_line(p, dr, dc) if board[x] == 0 and _completes(board, x, s, dr, dc))
                           == 2 for s in fours)
            board[q] = 0
            if straight and not ref_forbidden(board, q, depth + 1):
                threes += 1
                break
    return threes >= 2


def _completes(board, x, four: frozenset, dr, dc) -> bool:
    board[x] = BLACK
    run = ref_run(board, x, BLACK, dr, dc)
    board[x] = 0
    return len(run) == 5 and four <= set(run)


def test_the_kernel_agrees_with_the_reference_on_crowded_random_positions():
    rng = np.random.default_rng(7)
    checked = forbidden_found = 0
    for _ in range(40):
        board = np.zeros(N * N, dtype=np.int8)
        centre = [r * N + c for r in range(3, 12) for c in range(3, 12)]
        stones = rng.choice(centre, size=30, replace=False)
        board[stones[:18]] = BLACK
        board[stones[18:]] = WHITE
        if any(wins(board, N, 5, FREESTYLE, int(p)) for p in stones):
            continue  # a finished game: nothing to play
        mask = np.zeros(N * N, dtype=np.bool_)
        forbidden_mask(board, N, BLACK, RENJU, mask)
        for p in centre:
            if board[p] == 0:
                assert mask[p] == ref_forbidden(board, p), (board.reshape(N, N), divmod(p, N))
                checked += 1
        forbidden_found += int(mask.sum())
    assert checked > 1000 and forbidden_found > 20  # the positions did exercise the rules


# --- the rule sets in the game ----------------------------------------------------------------------


def test_exact_five_rules_and_names():
    six = board_of(black=[(7, 2), (7, 3), (7, 4), (7, 5), (7, 6), (7, 7)])
    five = board_of(black=[(7, 3), (7, 4), (7, 5), (7, 6), (7, 7)])
    move = 7 * N + 5
    assert wins(six, N, 5, FREESTYLE, move) and not wins(six, N, 5, EXACT_FIVE, move)
    assert not wins(six, N, 5, RENJU, move) and wins(-six, N, 5, RENJU, move)  # white's overline wins
    assert all(wins(five, N, 5, rule, move) for rule in (FREESTYLE, EXACT_FIVE, RENJU))
    assert GomokuRules(15, 5, "renju") == GomokuRules(15, 5, 4) and GomokuRules(15, 5, 4).rule == RENJU
    assert GomokuRules(15, 5, "standard").name == "gomoku_15x15_c5_standard"
    assert GomokuRules(15, 5).name == "gomoku_15x15_c5"
    with pytest.raises(GameConfigError, match="game.rule='caro'"):
        GomokuRules(15, 5, "caro")
    with pytest.raises(GameConfigError, match="game.win_length=4 must be 5"):
        GomokuRules(8, 4, "renju")
    from stonelab.games.gomoku.candidates import PruningConfig

    with pytest.raises(ConfigError, match="use pruning=none"):
        GomokuRules(15, 5, "renju").search_game(PruningConfig(window=4))
    # Forced moves are freestyle's: asked for outright they are refused, as the default (auto) dropped.
    with pytest.raises(ConfigError, match="use pruning=none"):
        GomokuRules(15, 5, "renju").search_game(PruningConfig(forced=True))
    assert GomokuRules(15, 5, "standard").search_game(PruningConfig(forced="auto")).pruning == PruningConfig()
    assert GomokuRules(15, 5).search_game(PruningConfig(forced="auto")).pruning == PruningConfig(forced=True)
    with pytest.raises(ConfigError, match="pruning.forced='yes' must be true, false or auto"):
        PruningConfig(forced="yes")


def test_renju_search_refuses_and_never_plays_a_forbidden_point():
    rules = GomokuRules(15, 5, "renju")
    search = rules.search_game()
    black, white, point, _, _ = TABLE[0]
    position = search.position(board_of(black, white + [(0, 0)]), BLACK, 0)
    positions = type(position)(position.board[None], position.info[None])
    move = point[0] * N + point[1]
    assert "forbidden to black" in search.illegal_reason(positions, 0, move)
    legal = np.zeros(N * N, dtype=np.bool_)
    T.legal_at_root(search.spec, positions, 0, legal)
    assert not legal[move] and legal.sum() == N * N - 6
    positions.info[0, TO_PLAY] = WHITE  # white may play there
    assert search.illegal_reason(positions, 0, move) is None


def test_random_renju_games_never_play_a_forbidden_point():
    """Random playouts of the search's legal moves (the fuzz of the rules): black never
    plays a point the reference calls forbidden, and every game ends legally."""
    rules = GomokuRules(15, 5, "renju")
    search = rules.search_game()
    rng = np.random.default_rng(3)
    legal = np.zeros(N * N, dtype=np.bool_)
    games = blocked = 0
    for _ in range(30):
        positions = search.new_positions(1)
        while True:
            count = T.legal_at_root(search.spec, positions, 0, legal)
            if count == 0:
                break
            colour = int(positions.info[0, TO_PLAY])
            if colour == BLACK:
                board = positions.board[0]
                candidates = rng.choice(np.flatnonzero(board == 0), size=12, replace=False)
                for p in candidates:
                    assert legal[p] != ref_forbidden(board, int(p))
                blocked += int((board == 0).sum() - count)
            move = int(rng.choice(np.flatnonzero(legal)))
            if T.play_position(search.spec, positions, 0, move) != 0:
                break
        games += 1
    assert games == 30 and blocked > 0


def test_pure_mcts_plays_whole_games_under_each_rule():
    for rule in ("standard", "renju"):
        rules = GomokuRules(9, 5, rule)
        result = play_match(rules, pure_mcts_player(rules, 100), pure_mcts_player(rules, 100, seed=1), 2)
        assert result.wins + result.draws + result.losses == 2
    assert MOVER_WINS == 1


@pytest.mark.slow
def test_ten_thousand_searched_renju_games_never_play_a_forbidden_point():
    """The issue's fuzz: 10,000 games of pure MCTS (2 playouts a move, random 4-stone openings)
    on 15x15 renju, every move refereed by `illegal_reason` (play_match raises on a forbidden
    point); and the games did meet forbidden points (black to move with some on the board)."""
    rules = GomokuRules(15, 5, "renju")
    search = rules.search_game()
    mask = np.zeros(N * N, dtype=np.bool_)
    met = 0
    for batch in range(20):
        games: list[dict] = []
        play_match(rules, pure_mcts_player(rules, 2, seed=batch), pure_mcts_player(rules, 2, seed=batch + 100),
                   500, opening_moves=4, seed=batch, games_out=games)
        for record in games[:10]:  # how often black met a forbidden point, on a sample
            positions = search.new_positions(1)
            for move in record["moves"]:
                if positions.info[0, TO_PLAY] == BLACK:
                    met += forbidden_mask(positions.board[0], N, BLACK, RENJU, mask) > 0
                T.play_position(search.spec, positions, 0, move)
    assert met > 0


def test_renju_self_play_trains_and_its_checkpoint_says_renju(tmp_path, compose_train, repo_root):
    import json
    import subprocess
    import sys

    import torch

    from stonelab.pipeline import train

    result = train(compose_train(["game=gomoku_8x8_c5", "game.rule=renju", "trainer.max_epochs=1", "logger=none",
                                  "callbacks.evaluation.at_train_end=false"], tmp_path / "run"))
    assert result["game"] == "gomoku_8x8_c5_renju"
    ckpt = tmp_path / "run" / "checkpoints" / "last.ckpt"
    state = torch.load(ckpt, map_location="cpu", weights_only=True)
    assert state["stonelab"]["identity"]["rule"] == "renju"
    proc = subprocess.run([sys.executable, str(repo_root / "src" / "eval.py"), "task=match", f"ckpt_path={ckpt}",
                           "search.playouts=8", "opponent_playouts=20", "games=2", f"paths.output_dir={tmp_path}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads((tmp_path / "match.json").read_text())["game"] == "gomoku_8x8_c5_renju"
