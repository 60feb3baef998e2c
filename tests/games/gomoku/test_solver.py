"""The exact solver of small freestyle boards, checked against a plain minimax written from the
rules (every move, no shortcut) on late positions, and as a match opponent."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from stonelab.arena.players import play_match, pure_mcts_player
from stonelab.errors import ConfigError, StonelabError
from stonelab.games.gomoku.rules import EMPTY, GomokuRules, would_win
from stonelab.games.gomoku.solver import Solver, SolverPlayer, audit, audit_match, main


def reference_value(board: tuple, n: int, k: int) -> int:
    """The side to move's result with perfect play, by trying every move to the end."""

    @functools.cache
    def value(cells: tuple) -> int:
        b = np.array(cells, dtype=np.int8)
        colour = 1 if (b == 1).sum() == (b == -1).sum() else -1
        best = -1
        empties = np.flatnonzero(b == EMPTY)
        if len(empties) == 0:
            return 0
        for p in empties:
            if would_win(b, n, k, int(p), colour):
                return 1
            b[p] = colour
            v = 0 if len(empties) == 1 else -value(tuple(b))
            b[p] = EMPTY
            best = max(best, v)
        return best

    return value(board)


def late_positions(n: int, k: int, empties: int, count: int, seed: int) -> list[np.ndarray]:
    """Random positions with ``empties`` empty points and no line of k yet."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        board = np.zeros(n * n, dtype=np.int8)
        colour, alive = 1, True
        for p in rng.permutation(n * n)[: n * n - empties]:
            if would_win(board, n, k, int(p), colour):
                alive = False
                break
            board[p] = colour
            colour = -colour
        if alive:
            out.append(board)
    return out


@pytest.mark.parametrize("n, k", [(5, 4), (6, 4)])
def test_values_and_move_values_match_a_plain_minimax_on_late_positions(n, k):
    rules = GomokuRules(n, k)
    solver = Solver(rules, table_bits=16)
    seen = set()
    for board in late_positions(n, k, empties=9, count=25, seed=n * 10 + k):
        expected = reference_value(tuple(board), n, k)
        seen.add(expected)
        assert solver.value(board) == expected
        values = solver.move_values(board)
        assert values.max() == expected
        for p in np.flatnonzero(board == EMPTY)[:3]:  # a move's value is minus the reply side's
            colour = 1 if (board == 1).sum() == (board == -1).sum() else -1
            if not would_win(board, n, k, int(p), colour) and (board == EMPTY).sum() > 1:
                after = board.copy()
                after[p] = colour
                assert values[p] == -reference_value(tuple(after), n, k)
    assert len(seen) >= 2  # the positions were not all of one value


def test_known_small_boards():
    # five points in a row of three: the first player wins from any point (m,n,3 with m >= 4)
    empty = np.zeros(25, dtype=np.int8)
    solver = Solver(GomokuRules(5, 3), table_bits=16)
    assert solver.value(empty) == 1
    assert (solver.move_values(empty) == 1).all()


@pytest.mark.slow
def test_five_by_five_four_in_a_row_is_a_draw_and_six_by_six_a_first_player_win():
    assert Solver(GomokuRules(5, 4)).value(np.zeros(25, dtype=np.int8)) == 0
    assert Solver(GomokuRules(6, 4)).value(np.zeros(36, dtype=np.int8)) == 1


def test_a_move_that_gives_value_away_is_marked_and_values_chain_from_move_to_move():
    rules = GomokuRules(5, 3)  # five in a row of three: the audit from the empty board is quick
    solver = Solver(rules, table_bits=16)
    for board in late_positions(5, 3, empties=21, count=40, seed=7):
        values = solver.move_values(board)
        if values.max() >= 0 and (values == -1).any():
            break
    else:
        pytest.fail("no position with a losing move among 40")
    black, white = np.flatnonzero(board == 1), np.flatnonzero(board == -1)
    moves = [int(p) for pair in zip(black, white, strict=False) for p in pair] + [int(p) for p in black[len(white):]]
    blunder = int(np.flatnonzero(values == -1)[0])
    steps = audit(rules, moves + [blunder], solver)
    assert steps[-1]["move"] == blunder
    assert steps[-1]["before"] == values.max() and steps[-1]["after"] == -1
    for a, b in zip(steps, steps[1:], strict=False):  # the next mover's value is minus the last move's
        assert b["before"] == -a["after"]


def test_the_solver_as_black_wins_every_game_and_as_white_loses_none_it_need_not():
    rules = GomokuRules(5, 3)
    records: list[dict] = []
    result = play_match(rules, SolverPlayer(rules, seed=1, table_bits=16), pure_mcts_player(rules, 50, seed=2),
                        num_games=6, games_out=records)
    black = [g for g in records if g["player_colour"] == 1]
    assert all(g["result"] == 1 for g in black)
    summary = audit_match(rules, records, Solver(rules, table_bits=16))
    assert summary["player_errors"] == 0
    assert summary["games"] == 6 and len(summary["per_game"]) == 6
    assert result.wins >= 3


def test_boards_beyond_reach_and_other_rules_are_refused_by_name():
    with pytest.raises(ConfigError, match="at most 36 points"):
        Solver(GomokuRules(7, 4))
    with pytest.raises(ConfigError, match="freestyle rules only"):
        Solver(GomokuRules(5, 5, "standard"))
    with pytest.raises(ConfigError, match="table_bits=40 must be 10..28"):
        Solver(GomokuRules(5, 4), table_bits=40)
    won = np.zeros(25, dtype=np.int8)
    won[[0, 1, 2, 3]], won[[20, 21, 22]] = 1, -1
    with pytest.raises(StonelabError, match="already won"):
        Solver(GomokuRules(5, 4), table_bits=16).value(won)
    with pytest.raises(StonelabError, match=r"move 3 \(0\) is not an empty point of the 5x5 board"):
        audit(GomokuRules(5, 3), [0, 1, 0], Solver(GomokuRules(5, 3), table_bits=16))


def test_the_command_prints_the_value_and_the_first_moves(capsys):
    assert main(["5", "3", "--first-moves"]) == 0
    out = capsys.readouterr().out
    assert "the first player's win with perfect play" in out
    assert "first moves that win: (0,0)" in out
    assert main(["5", "3"]) == 0
    assert "a first move that keeps it: (" in capsys.readouterr().out
    assert main(["7", "4"]) == 2
    assert "at most 36 points" in capsys.readouterr().err


def test_the_audit_of_a_file_without_games_says_so(tmp_path, capsys):
    (tmp_path / "result.json").write_text('{"wins": 3}')
    (tmp_path / "broken.json").write_text('{"game_records": [')
    assert main(["5", "3", "--audit", str(tmp_path / "result.json")]) == 2
    assert "result.json: no game_records (a task=match result's match.json holds them)" in capsys.readouterr().err
    assert main(["5", "3", "--audit", str(tmp_path / "broken.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err


def test_task_match_plays_the_solver_and_refuses_it_beyond_its_boards(tmp_path, compose_train, repo_root):
    import json
    import subprocess
    import sys

    from stonelab.pipeline import train

    small = ["game.board_size=5", "game.win_length=3", "logger=none", "callbacks.evaluation.at_train_end=false",
             "trainer.max_epochs=1"]
    train(compose_train(small, tmp_path / "run"))
    ckpt = tmp_path / "run" / "checkpoints" / "last.ckpt"
    proc = subprocess.run([sys.executable, str(repo_root / "src" / "eval.py"), "task=match", f"ckpt_path={ckpt}",
                           "opponent=solver", "games=4", "opening_moves=0", "search.playouts=8",
                           f"paths.output_dir={tmp_path}"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "match.json").read_text())
    assert result["opponent"] == "solver" and result["games"] == 4
    assert "vs solver (its own search)" in proc.stdout
    assert result["white"]["wins"] == 0  # five in a row of three: the perfect first player always wins
    summary = audit_match(GomokuRules(5, 3), result["game_records"], Solver(GomokuRules(5, 3), table_bits=16))
    assert summary["opponent_errors"] == 0 and summary["games_opponent_perfect"]["white"] == 2

    train(compose_train(["game=gomoku_8x8_c4", *small[2:]], tmp_path / "big"))
    proc = subprocess.run([sys.executable, str(repo_root / "src" / "eval.py"), "task=match",
                           f"ckpt_path={tmp_path / 'big' / 'checkpoints' / 'last.ckpt'}", "opponent=solver",
                           "games=2", f"paths.output_dir={tmp_path}"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "the solver reaches boards of at most 36 points (6x6); this one is 8x8" in proc.stderr
