"""MatchProgress: a line per game with the running score; on a terminal, a bar under the lines."""

from __future__ import annotations

from stonelab.arena.progress import MatchProgress
from stonelab.arena.ratings import MatchResult


def test_one_line_per_game_with_the_running_score(capsys):
    with MatchProgress(3, bar=False) as progress:
        progress.update(0, "a (B) vs b (W): B+3.5", MatchResult(1, 0, 0))
        progress.update(1, "b (B) vs a (W): B+R", MatchResult(1, 0, 1))
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        "game 1/3: a (B) vs b (W): B+3.5 | 1W 0D 0L of 1: win ratio 1.000 [95% CI 0.207, 1.000]",
        "game 2/3: b (B) vs a (W): B+R | 1W 0D 1L of 2: win ratio 0.500 [95% CI 0.095, 0.905]",
    ]
    assert captured.err == ""


def test_a_bar_keeps_the_lines_and_counts_the_games(capsys):
    with MatchProgress(2, bar=True) as progress:
        progress.update(0, "a (B) vs b (W): W+0.5", MatchResult(0, 0, 1))
    captured = capsys.readouterr()
    assert "game 1/2: a (B) vs b (W): W+0.5 | 0W 0D 1L of 1" in captured.out  # tqdm.write: above the bar
    assert "1/2" in captured.err and "0W 0D 1L 0.00 [0.00, 0.79]" in captured.err  # the bar and its score
