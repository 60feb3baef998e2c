"""stonelab.callbacks.budget: what ends a self-play run, counted in the units users count."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import torch

from stonelab.callbacks.budget import Budget, format_duration, parse_duration
from stonelab.errors import ConfigError
from stonelab.pipeline import train


def test_parse_duration_reads_dd_hh_mm_ss_and_refuses_words():
    assert parse_duration("00:00:10:00") == 600
    assert parse_duration("01:02:03:04") == 86400 + 2 * 3600 + 3 * 60 + 4
    assert parse_duration(None) is None
    with pytest.raises(ConfigError, match="trainer.max_time='banana' is not a duration: write DD:HH:MM:SS"):
        parse_duration("banana")
    assert format_duration(75) == "1:15" and format_duration(3725) == "1:02:05"


@pytest.mark.parametrize("name", ["max_updates", "max_rounds", "max_games"])
def test_counts_must_be_whole_numbers(name):
    with pytest.raises(ConfigError, match=f"callbacks.budget.{name}='x' must be a whole number"):
        Budget(**{name: "x"})


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def _module(rounds=0, games=0, steps=0):
    return SimpleNamespace(rounds=rounds, games_played=games, train_steps=steps)


def _trainer(*callbacks):
    strategy = SimpleNamespace(broadcast=lambda obj: obj)
    return SimpleNamespace(callbacks=list(callbacks), strategy=strategy, should_stop=False)


def test_time_covers_the_whole_job_and_keeps_room_for_the_final_evaluation(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr("stonelab.callbacks.wall_clock.time.monotonic", clock)
    budget = Budget(max_time="00:00:10:00")
    budget.start_clock()
    final_match = SimpleNamespace(seconds_after_training=lambda: 90.0)
    trainer = _trainer(budget, final_match)
    clock.now += 500  # buffer fill and training so far: 8:20
    budget.on_train_batch_end(trainer, _module(), None, None, 0)
    assert not trainer.should_stop
    clock.now += 15  # 8:35 + 1:30 for the final match > 10:00
    budget.on_train_batch_end(trainer, _module(), None, None, 0)
    assert trainer.should_stop
    assert "1:30 kept for what comes after training" in budget.stop_reason


def test_time_adds_up_across_resumes(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr("stonelab.callbacks.wall_clock.time.monotonic", clock)
    first = Budget(max_time="00:00:01:00")
    first.start_clock()
    clock.now += 45
    resumed = Budget(max_time="00:00:01:00")
    resumed.load_state_dict(first.state_dict())
    resumed.start_clock()
    trainer = _trainer(resumed)
    clock.now += 10
    resumed.on_train_batch_end(trainer, _module(), None, None, 0)
    assert not trainer.should_stop
    clock.now += 6
    resumed.on_train_batch_end(trainer, _module(), None, None, 0)
    assert trainer.should_stop and resumed.elapsed() == pytest.approx(61)


def test_rounds_and_games_are_checked_only_where_a_round_would_start():
    budget = Budget(max_rounds=3, steps_per_round=4)
    trainer = _trainer(budget)
    budget.on_train_batch_end(trainer, _module(rounds=3, steps=6), None, None, 0)
    assert not trainer.should_stop  # round 3 still gets its 4 updates
    budget.on_train_batch_end(trainer, _module(rounds=3, steps=8), None, None, 0)
    assert trainer.should_stop and budget.stop_reason.startswith("3 rounds")


@pytest.mark.parametrize("limit, counter", [("max_updates=5", "train_steps"), ("max_rounds=3", "rounds"),
                                            ("max_games=5", "games_played")])
def test_runs_stop_at_exactly_the_counter_asked_for(limit, counter, tmp_path, compose_train):
    cfg = compose_train([f"callbacks.budget.{limit}", "trainer.max_epochs=100", "trainer.max_time=null",
                         "logger=none", "callbacks.evaluation.at_train_end=false"], tmp_path)
    result = train(cfg)
    wanted = int(limit.split("=")[1])
    if counter == "games_played":  # a round finishes games_per_round=2 games (a few more if they end together)
        assert wanted <= result["games_played"] < wanted + 4
    else:
        assert result[counter] == wanted
    assert result["stop_reason"].startswith(f"{result[counter]} ")


def test_a_budget_reached_while_the_buffer_fills_ends_the_run_there(tmp_path, compose_train):
    # 2 games a round cannot fill a batch of 1,500 positions in 2 rounds: no update is made.
    cfg = compose_train(["callbacks.budget.max_rounds=2", "data.batch_size=1500", "trainer.max_epochs=100",
                         "trainer.max_time=null", "logger=none", "callbacks.evaluation.at_train_end=false"], tmp_path)
    result = train(cfg)
    assert (result["rounds"], result["train_steps"]) == (2, 0)
    assert result["stop_reason"].startswith("2 rounds")


def test_trainer_max_steps_is_refused_for_alphazero_with_the_right_knob(tmp_path, compose_train):
    from stonelab.pipeline import build

    with pytest.raises(ConfigError, match="callbacks.budget.max_updates=N"):
        build(compose_train(["trainer.max_steps=1985", "logger=none"], tmp_path))


def test_a_resumed_run_past_its_budget_trains_no_further(tmp_path, compose_train):
    first = compose_train(["callbacks.budget.max_updates=2", "trainer.max_epochs=100", "logger=none",
                           "callbacks.evaluation.at_train_end=false"], tmp_path / "a")
    train(first)
    last = tmp_path / "a" / "checkpoints" / "last.ckpt"
    again = compose_train(["callbacks.budget.max_updates=2", "trainer.max_epochs=100", "logger=none",
                           "callbacks.evaluation.at_train_end=false", f"ckpt_path={last}"], tmp_path / "b")
    result = train(again)
    assert result["train_steps"] == 2
    saved = torch.load(tmp_path / "b" / "checkpoints" / "last.ckpt", weights_only=True)
    assert saved["stonelab"]["train_steps"] == 2
    assert json.loads((tmp_path / "b" / "result.json").read_text())["stop_reason"].startswith("2 updates")


# -- supervised Go runs: the same whole-job budget, validation by time, the end summary


def test_a_supervised_budget_counts_time_only_and_refuses_self_play_units(tmp_path, compose_go):
    budget = Budget(max_time="00:00:00:10")
    assert not budget.counts_self_play()
    assert budget.reached(SimpleNamespace(), SimpleNamespace(callbacks=[])) is None  # no train_steps needed
    cfg = compose_go("maddison_cnn", ["model.net.depth=2", "model.net.filters=4", "+callbacks.budget.max_rounds=3"],
                     tmp_path)
    with pytest.raises(ConfigError, match="max_rounds / max_games count self-play .* trainer.max_steps"):
        train(cfg)


def test_a_supervised_run_keeps_room_for_its_last_validation_and_test():
    from stonelab.callbacks.wall_clock import WallClock

    clock = WallClock()
    assert clock.seconds_after_training() == 0.0  # nothing measured yet
    clock.on_fit_start(SimpleNamespace(datamodule=SimpleNamespace(val_games=10, test_games=30), callbacks=[]), None)
    clock.validation_seconds = 4.0
    assert clock.seconds_after_training() == 4.0 * (1 + 3)  # one more validation, then 3x its games
    clock.validation_batches, clock.all_validation_batches = 10, 40  # validation read a quarter of its games
    assert clock.seconds_after_training() == 0.4 * (10 + 40 * 3)  # the test reads all of its own


def test_the_held_out_test_takes_at_most_its_share_of_the_budget():
    from stonelab.callbacks.wall_clock import WallClock

    clock = WallClock(max_test_share=0.1)
    assert clock.test_batch_limit() is None  # no validation timed yet
    trainer = SimpleNamespace(datamodule=SimpleNamespace(val_games=10, test_games=30),
                              callbacks=[clock, Budget(max_time="00:00:10:00")])
    clock.on_fit_start(trainer, None)
    clock.validation_seconds, clock.validation_batches, clock.all_validation_batches = 4.0, 10, 40
    assert clock.test_batch_limit() == 150  # 60 s of 0.4 s batches: the whole test (120) fits
    assert clock.seconds_after_training() == pytest.approx(0.4 * (10 + 120))
    clock.validation_seconds = 40.0  # a busy machine: 4 s a batch
    assert clock.test_batch_limit() == 15
    assert clock.seconds_after_training() == pytest.approx(4.0 * (10 + 15))
    assert WallClock(max_test_share=None).test_batch_limit() is None


@pytest.mark.parametrize("share", [0, 1.5, -0.1, True, "half"])
def test_the_test_share_must_be_a_share(share):
    from stonelab.callbacks.wall_clock import WallClock

    with pytest.raises(ConfigError, match=f"max_test_share={share!r} must be a share of the budget in"):
        WallClock(max_test_share=share)


def test_the_default_supervised_job_is_a_budget_with_validation_by_time(compose_config):
    for model in ("maddison_cnn", "belief_vit"):
        cfg = compose_config("train", [f"model={model}"])
        assert cfg.trainer.max_time == "00:00:10:00" and cfg.callbacks.budget.max_time == "00:00:10:00"
        assert cfg.trainer.val_check_interval == "00:00:03:00"
    cnn = compose_config("train", ["model=maddison_cnn"]).model
    assert (cnn.net.depth, cnn.net.filters, cnn.optimizer) == (6, 64, "adamw")
    paper = compose_config("train", ["experiment=maddison_cnn_paper"])
    assert (paper.model.net.depth, paper.model.net.filters, paper.model.optimizer, paper.model.lr) == (12, 128, "sgd", 0.128)
    assert paper.trainer.max_time is None and paper.trainer.max_epochs == 5
    vit = compose_config("train", ["experiment=belief_vit_paper"])
    assert (vit.model.net.embed_dim, vit.model.batch_size, vit.model.optimizer, vit.model.lr) == (128, 64, "adam", 1e-4)


def test_a_short_supervised_run_validates_at_its_end_and_says_what_to_do_next(tmp_path, compose_go, caplog):
    # Validation by time (every 3 minutes) would never come in a 3-step run: it validates at
    # the end of its pass over the games, keeps a best checkpoint, and the end line says next steps.
    cfg = compose_go("maddison_cnn", ["model.net.depth=2", "model.net.filters=4", "logger=csv"], tmp_path)
    assert cfg.trainer.val_check_interval == "00:00:03:00"
    with caplog.at_level("INFO", logger="stonelab.pipeline"):
        result = train(cfg)
    assert "val/top1" in result["metrics"] and result["best_checkpoint"]
    lines = [r.getMessage() for r in caplog.records if r.name == "stonelab.pipeline"]
    held_out = next(line for line in lines if line.startswith("held-out games"))
    assert held_out.index("top1") < held_out.index("top5") < held_out.index("top10")
    nexts = [line for line in lines if line.startswith("next: ")]
    assert nexts[0].startswith(f"next: python src/play.py ckpt_path={result['best_checkpoint']}")
    assert nexts[1].startswith(f"next: python src/eval.py task=predict ckpt_path={result['best_checkpoint']}")
    assert nexts[2].startswith(f"next: python src/train.py ckpt_path={result['last_checkpoint']} "
                               f"trainer.max_time=00:00:20:00")
