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


def test_rate_progress_logs_the_rate_and_time_left_every_interval(caplog):
    """RateProgress (task=predict): a line with the rate and ETA once per interval, then the total."""
    import logging

    from stonelab.arena.progress import RateProgress

    now = [0.0]
    with caplog.at_level(logging.INFO, logger="stonelab.arena.progress"):
        progress = RateProgress(1000, "positions", label="predict", bar=False, every=10.0, clock=lambda: now[0])
        now[0] = 5.0
        assert progress.update(100) is None  # within the first interval: no line yet
        now[0] = 10.0
        line = progress.update(100)  # 200 in 10 s: 20/s, 800 left
        assert line == "predict: 200/1,000 positions (20%), 20 positions/s, ETA 00:40"
        now[0] = 15.0
        assert progress.update(300) is None
        now[0] = 20.0
        progress.update(500)
        final = progress.close()
        now[0] = 99.0
        assert progress.close() is None and progress.seconds == 20.0  # closed: the time stays the work's
    assert final == "predict: 1,000 positions in 20.0 s (50 positions/s)"
    assert [r.message for r in caplog.records] == [line, "predict: 1,000/1,000 positions (100%), 50 positions/s, "
                                                          "ETA 00:00", final]


def test_rate_progress_draws_a_bar_on_a_terminal(capsys):
    from stonelab.arena.progress import RateProgress

    with RateProgress(512, "positions", label="predict", bar=True) as progress:
        progress.update(256)
    assert "256/512" in capsys.readouterr().err  # tqdm's bar, with its own rate and ETA
