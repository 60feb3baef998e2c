"""stonelab.callbacks.progress: a line per round a person can read, a bar of the budget on a terminal."""

from __future__ import annotations

import logging
import re

from stonelab.pipeline import train


def test_one_line_per_round_with_counters_speed_evaluation_and_budget(tmp_path, caplog, compose_train):
    caplog.set_level(logging.INFO, logger="stonelab")
    result = train(compose_train(["trainer.max_epochs=2", "logger=none"], tmp_path))
    lines = [r.getMessage() for r in caplog.records if r.name == "stonelab.callbacks.progress"]
    assert len(lines) == result["rounds"]
    assert lines[0].startswith("round 1 | ")
    last = lines[-1]
    assert last.startswith(f"round {result['rounds']} | {result['games_played']} games | ")
    assert "playouts/s" in last and "games/h" in last and " of 10:00" in last
    # the latest evaluation, against pure MCTS at whatever strength the ladder has reached
    assert re.search(r"\| eval \d\.\d\d \[\d\.\d\d, \d\.\d\d\] vs pure_mcts_\d+ \(round \d+\) \|", last), last
    report = [r.getMessage() for r in caplog.records if r.name == "stonelab.pipeline"]
    assert any(line.startswith("done in ") for line in report)
    assert any(line.startswith("last evaluation (round ") for line in report)


def test_bar_of_the_budget_when_asked(tmp_path, capsys, compose_train):
    train(compose_train(["callbacks.progress_bar.bar=true", "logger=none",
                         "callbacks.evaluation.at_train_end=false"], tmp_path))
    err = capsys.readouterr().err
    assert "updates" in err and "/600 s" in err  # round and updates, seconds of the 10-minute budget
