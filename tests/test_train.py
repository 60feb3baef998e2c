"""src/train.py and stonelab.pipeline: whole runs, resume, and user errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from stonelab.pipeline import build, train

GAMES = ["gomoku_6x6_c4", "gomoku_8x8_c4", "gomoku_8x8_c5", "gomoku_15x15_c5", "go_9"]


@pytest.mark.parametrize("game", GAMES)
def test_fast_dev_run_every_game(game, tmp_path, compose_train):
    cfg = compose_train([f"game={game}", "+trainer.fast_dev_run=true", "logger=none"], tmp_path)
    result = train(cfg)
    assert result["train_steps"] == 1
    assert result["game"] == game.replace("go_9", "go_9x9")  # the rules' own name
    assert result["rounds"] >= 1


def test_run_writes_checkpoints_metrics_and_result(tmp_path, compose_train):
    cfg = compose_train(["trainer.max_epochs=2"], tmp_path)
    result = train(cfg)
    assert (tmp_path / "checkpoints" / "last.ckpt").is_file()
    assert (tmp_path / "checkpoints" / "best.ckpt").is_file()
    # No epoch=N-step=M.ckpt copy of last.ckpt beside them.
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == [
        "best.ckpt", "evaluations.jsonl", "last.ckpt"]
    evals = [json.loads(line) for line in (tmp_path / "checkpoints" / "evaluations.jsonl").read_text().splitlines()]
    assert [e["round"] for e in evals][:2] == [2, 4]
    assert all(0.0 <= e["ci_low"] <= e["win_ratio"] <= e["ci_high"] <= 1.0 for e in evals)
    header = (tmp_path / "csv" / "metrics.csv").read_text().splitlines()[0].split(",")
    for key in ["train/loss", "train/policy_entropy", "train/kl", "train/lr_multiplier",
                "selfplay/game_length", "selfplay/buffer_size", "selfplay/games_per_hour",
                "search/playouts_per_s", "eval/win_ratio"]:
        assert key in header, key
    saved = json.loads((tmp_path / "result.json").read_text())
    assert saved["train_steps"] == result["train_steps"] == 4
    assert saved["final_win_ratio"] == evals[-1]["win_ratio"]


def _state(path):
    return torch.load(path, map_location="cpu", weights_only=True)


def test_resume_continues_exactly(tmp_path, compose_train):
    """2 epochs straight == 1 epoch, then resume for the second: same weights, buffer, counters."""
    extra = ["callbacks.evaluation.at_train_end=false"]
    straight = compose_train(["trainer.max_epochs=2", "logger=none", *extra], tmp_path / "a")
    train(straight)
    first = compose_train(["trainer.max_epochs=1", "logger=none", *extra], tmp_path / "b")
    train(first)
    resumed = compose_train(["trainer.max_epochs=2", "logger=none",
                             f"ckpt_path={tmp_path / 'b' / 'checkpoints' / 'last.ckpt'}", *extra],
                            tmp_path / "c")
    train(resumed)
    a = _state(tmp_path / "a" / "checkpoints" / "last.ckpt")
    c = _state(tmp_path / "c" / "checkpoints" / "last.ckpt")
    assert a["stonelab"]["rounds"] == c["stonelab"]["rounds"]
    assert a["stonelab"]["train_steps"] == c["stonelab"]["train_steps"] == 4
    assert a["stonelab"]["lr_multiplier"] == c["stonelab"]["lr_multiplier"]
    dm_a = a["SelfPlayDataModule"]["buffer"]
    dm_c = c["SelfPlayDataModule"]["buffer"]
    assert dm_a["positions_added"] == dm_c["positions_added"]
    assert dm_a["batches_drawn"] == dm_c["batches_drawn"]
    assert torch.equal(dm_a["states_bcnn"], dm_c["states_bcnn"])
    for key, value in a["state_dict"].items():
        assert torch.equal(value, c["state_dict"][key]), key


def test_alphazero_on_go_resumes_exactly(straight_and_resumed):
    """AlphaZero on 9x9 Go with KataGo's ownership and score targets and score utility: 2 epochs
    straight == 1 epoch then a resume; the checkpoint is Go's."""
    a, c, result = straight_and_resumed([
        "game=go_9", "model.net.channels=[8,16]", "logger=none", "callbacks.evaluation.at_train_end=false",
        "model.net.ownership_head=true", "model.net.score_head=true", "search.score_utility=0.25"])
    assert c["stonelab"]["identity"] == {"model": "alphazero", "game": "go", "board_size": 9, "komi": 7.0}
    assert a["stonelab"]["train_steps"] == c["stonelab"]["train_steps"] == result["train_steps"] == 4
    buffer = c["SelfPlayDataModule"]["buffer"]
    assert buffer["states_bcnn"].shape[1:] == (10, 9, 9) and buffer["policies_ba"].shape[1] == 82
    for column in ("states_bcnn", "ownership_bn", "scores_b"):
        assert torch.equal(a["SelfPlayDataModule"]["buffer"][column], buffer[column]), column
    assert "net.ownership_conv.weight" in c["state_dict"] and "net.score_fc.weight" in c["state_dict"]
    for key, value in a["state_dict"].items():
        assert torch.equal(value, c["state_dict"][key]), key


def test_bad_values_give_one_line_errors(tmp_path, compose_train):
    for override, words in [
        (["game.win_length=9"], "game.win_length=9"),
        (["game.board_size=4"], "game.board_size=4"),
        (["search.playouts=0"], "search.playouts=0"),
        (["search.playouts=abc"], "search.playouts='abc'"),
        (["model.lr=-1"], "model.lr=-1"),
        (["callbacks.selfplay.games_per_round=0"], "callbacks.selfplay.games_per_round=0"),
        (["callbacks.evaluation.games=x"], "callbacks.evaluation.games='x'"),
        (["pruning.window=-2"], "pruning.window=-2"),
        (["pruning=local", "pruning.window=9", "pruning.fallback=false", "game=gomoku_8x8_c5"],
         "pruning.window=9 is larger than the 8x8 board"),
        (["data.num_workers=2"], "data.num_workers"),
        (["model.net.ownership_head=true"], "model.net.ownership_head=true is for Go"),
        (["search.score_utility=2"], "search.score_utility=2 must be a weight in [0, 1]"),
    ]:
        cfg = compose_train([*override, "logger=none"], tmp_path)
        with pytest.raises(Exception) as info:
            build(cfg)
        from stonelab.cli import user_error

        assert user_error(info.value) is not None, override
        assert words in str(user_error(info.value))


@pytest.fixture
def run_cli(repo_root, tiny_overrides):
    """``run_cli(args, cwd)``: a tiny src/train.py run in a subprocess."""

    def run_cli(args, cwd):
        return subprocess.run([sys.executable, str(repo_root / "src" / "train.py"), *tiny_overrides, *args],
                              cwd=cwd, capture_output=True, text=True, timeout=600)

    return run_cli


@pytest.mark.parametrize("override, message", [
    ("data.batch_size=abc", "data.batch_size='abc' must be a whole number >= 1"),
    ("trainer.max_time=banana", "trainer.max_time='banana' is not a duration: write DD:HH:MM:SS"),
    ("seed=abc", "seed='abc' must be a whole number"),
    ("trainer.max_steps=1985", "trainer.max_steps=1985 counts Lightning optimizer steps"),
    ("callbacks.selfplay.torch_threads=0", "callbacks.selfplay.torch_threads=0 must be a whole number >= 1"),
    ("trainer.limit_train_batches=abc", "trainer (lightning.pytorch.trainer.trainer.Trainer) could not be built"),
    ("model.net.res_blocks=abc", "model.net (stonelab.models.nets.policy_value.PolicyValueNet) could not be built"),
    ("callbacks.selfplay.precision=fp8", "callbacks.selfplay.precision='fp8': choose 32, bf16 or null"),
    ("callbacks.evaluation.precision=16", "callbacks.evaluation.precision=16: choose 32, bf16 or null"),
    ("trainer.precision=bf17", "trainer (lightning.pytorch.trainer.trainer.Trainer) could not be built"),
])
def test_bad_values_answer_one_line(override, message, tmp_path, capsys, compose_train):
    from stonelab.cli import run_or_explain

    with pytest.raises(SystemExit) as info:
        run_or_explain(train, compose_train([override, "logger=none"], tmp_path / "run"))
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert err.startswith(f"error: {message}") and err.count("\n") == 1, err
    assert not (tmp_path / "run").exists()


def _bad_checkpoints(folder):
    import pickle
    from collections import OrderedDict

    folder.mkdir()
    files = {
        "tensor": "holds a Tensor, not a checkpoint", "list": "holds a list, not a checkpoint",
        "weights": "was not written by stonelab's alphazero model",
        "pickle": "is a pickle of Python objects that no checkpoint holds",
        "random": "is not a checkpoint: neither a PyTorch zip archive nor a pickle",
        "empty": "is empty (0 bytes), not a checkpoint", "text": "is a text file, not a checkpoint",
    }
    torch.save(torch.zeros(3), folder / "tensor.ckpt")
    torch.save([1, 2], folder / "list.ckpt")
    torch.save(OrderedDict(w=torch.zeros(2)), folder / "weights.ckpt")  # a bare state_dict
    (folder / "pickle.ckpt").write_bytes(pickle.dumps(ValueError("a pickled object"), protocol=4))
    (folder / "random.ckpt").write_bytes(bytes(range(7, 256)) * 4)
    (folder / "empty.ckpt").write_bytes(b"")
    (folder / "text.ckpt").write_text("hello\n")
    return {folder / f"{name}.ckpt": words for name, words in files.items()}


def test_files_that_are_not_checkpoints_answer_one_line(tmp_path, capsys, compose_train):
    from stonelab.cli import run_or_explain

    for path, words in _bad_checkpoints(tmp_path / "bad").items():
        with pytest.raises(SystemExit):
            run_or_explain(train, compose_train([f"ckpt_path={path}", "logger=none"], tmp_path / "run"))
        err = capsys.readouterr().err
        assert words in err and err.count("\n") == 1, (path.name, err)


@pytest.mark.slow  # test_cli_go_checkpoint_given_to_alphazero_is_refused checks the same exit 2
def test_cli_reports_user_errors_without_traceback(tmp_path, run_cli):
    proc = run_cli(["game=gomoku_6x6_c4", "game.win_length=7", f"paths.output_dir={tmp_path}"], tmp_path)
    assert proc.returncode == 2
    assert "error: game.win_length=7" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_unknown_key_is_refused(tmp_path, run_cli):
    proc = run_cli(["trainer.max_epochz=3", f"paths.output_dir={tmp_path}"], tmp_path)
    assert proc.returncode != 0
    assert "max_epochz" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_checkpoint_of_other_board_is_refused(tmp_path, run_cli, compose_train):
    six = tmp_path / "six"
    train(compose_train(["logger=none"], six))
    proc = run_cli(["game=gomoku_8x8_c5", f"ckpt_path={six / 'checkpoints' / 'last.ckpt'}",
                    f"paths.output_dir={tmp_path / 'eight'}"], tmp_path)
    assert proc.returncode == 2
    assert "board_size: checkpoint has 6, this run has 8" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "eight" / "checkpoints").exists()  # refused before training


def test_each_model_chooses_its_data_and_a_forced_wrong_pair_is_refused(compose_config):
    from stonelab.errors import ConfigError
    from stonelab.pipeline import check_model_data

    def composed(*overrides):
        return compose_config("train", overrides)

    assert composed().data._target_.endswith("SelfPlayDataModule")
    for model in ("maddison_cnn", "belief_vit"):
        assert composed(f"model={model}").data._target_.endswith("KGSDataModule"), model
        with pytest.raises(ConfigError, match=f"model={model} learns from expert games, not data=selfplay: "
                                              "use data=kgs"):
            check_model_data(composed(f"model={model}", "data=selfplay"))
    with pytest.raises(ConfigError, match="model=alphazero learns from its own self-play games, not data=kgs: "
                                          "use data=selfplay"):
        check_model_data(composed("model=alphazero", "data=kgs"))


def test_cli_go_checkpoint_given_to_alphazero_is_refused(tmp_path, run_cli, tiny_maddison_checkpoint):
    go = tiny_maddison_checkpoint(tmp_path / "go.ckpt")
    proc = run_cli([f"ckpt_path={go}", f"paths.output_dir={tmp_path / 'run'}"], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        f"error: {go} does not fit this run: it holds a maddison_cnn Go model (9x9), "
        f"this run has an alphazero Gomoku model (6x6, 4 in a row)"), proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "run").exists()  # refused before training, no run folder left


def test_tiny_end_to_end_cli_run(tmp_path, run_cli):
    proc = run_cli([f"hydra.run.dir={tmp_path}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["train_steps"] == 2
    assert "final_win_ratio" in result
    out = proc.stdout + proc.stderr
    # Every line once, no advertising, no note at every save.
    assert out.count("GPU available") == 1
    assert "litlogger" not in out and "weights_only" not in out and "Epoch 0/" not in out
    # One line per round, then where the model is and what it achieved.
    rounds = [line for line in out.splitlines() if "] round " in line]
    assert len(rounds) == result["rounds"]
    assert all(" games | " in line and " updates" in line and "playouts/s" in line for line in rounds)
    assert f"last evaluation (round {result['rounds']})" in out
    assert f"best model (best evaluation): {tmp_path}/checkpoints/best.ckpt" in out
    assert f"last checkpoint: {tmp_path}/checkpoints/last.ckpt" in out


@pytest.mark.parametrize("logger", ["tensorboard", "wandb"])
def test_other_loggers_write_beside_the_csv_metrics(logger, tmp_path, monkeypatch, capfd, compose_train):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    cfg = compose_train([f"logger={logger}", "callbacks.evaluation.at_train_end=false"], tmp_path)
    train(cfg)
    written = [p.name for p in tmp_path.rglob("*") if p.is_file()]
    marker = "events.out.tfevents" if logger == "tensorboard" else ".wandb"
    assert any(marker in name for name in written), written
    # The CSV metrics stay (python -m stonelab.reporting curve reads them) ...
    header = (tmp_path / "csv" / "metrics.csv").read_text().splitlines()[0].split(",")
    assert "train/loss" in header
    # ... and W&B says nothing about a setting stonelab never asked for.
    out = capfd.readouterr()
    assert "anonymous" not in out.out + out.err


def test_logger_none_is_no_logger_at_all(compose_config):
    assert not compose_config("train", ["logger=none"]).get("logger")
    assert list(compose_config("train", ["logger=wandb"]).logger) == ["csv", "wandb"]


def test_a_model_forced_onto_the_other_game_is_refused(compose_config):
    from stonelab.errors import ConfigError
    from stonelab.pipeline import check_model_game

    def composed(*overrides):
        return compose_config("train", overrides)

    check_model_game(composed())  # alphazero on Gomoku
    check_model_game(composed("game=go_9"))  # and on Go (self-play)
    check_model_game(composed("model=maddison_cnn"))  # on Go 19x19
    for model in ("maddison_cnn", "belief_vit"):
        with pytest.raises(ConfigError, match=f"model={model} plays Go, not Gomoku"):
            check_model_game(composed(f"model={model}", "game=gomoku_8x8_c5"))


def test_init_from_starts_a_new_run_with_those_weights(tmp_path, compose_go):
    from stonelab.models import checkpoints
    from stonelab.models.export import export

    tiny = ["model.net.depth=2", "model.net.filters=4", "logger=none"]
    train(compose_go("maddison_cnn", tiny, tmp_path / "a"))
    shipped = tmp_path / "shipped.ckpt"
    export(str(tmp_path / "a" / "out" / "checkpoints" / "last.ckpt"), str(shipped))
    warm = compose_go("maddison_cnn", [*tiny, f"init_from={shipped}"], tmp_path / "b")
    model = build(warm)[2]
    trained = checkpoints.load(str(shipped), game="go").net.state_dict()
    assert all(torch.equal(v, trained[k]) for k, v in model.net.state_dict().items())
    assert train(warm)["global_step"] == 3  # its own steps: the counter starts fresh
    # A resume of the warm-started run takes its own weights, with init_from still in its settings.
    last = tmp_path / "b" / "out" / "checkpoints" / "last.ckpt"
    again = compose_go("maddison_cnn", [*tiny, f"init_from={shipped}", f"ckpt_path={last}",
                                        "trainer.max_epochs=2"], tmp_path / "b")
    assert train(again)["global_step"] == 6


def test_init_from_another_net_is_refused_before_training(tmp_path, compose_go, tiny_maddison_checkpoint):
    from stonelab.errors import StonelabError

    other = tiny_maddison_checkpoint(tmp_path / "other.ckpt")  # 9x9: this run's sample games are 19x19
    cfg = compose_go("maddison_cnn", ["model.net.depth=2", "model.net.filters=4", "logger=none",
                                      f"init_from={other}"], tmp_path)
    with pytest.raises(StonelabError, match="board_size: checkpoint has 9, this run has 19"):
        train(cfg)
    assert not (tmp_path / "out" / "checkpoints").exists()


MIXED = ["game=gomoku_9x9_c5", "model/net=fully_conv", "model.net.filters=8", "model.net.blocks=2", "model.net.pool_channels=4",
         "data.board_sizes=[6,9]", "callbacks.selfplay.games_per_round=3", "logger=none",
         "callbacks.evaluation.at_train_end=false"]


def test_mixed_board_sizes_train_on_each_board_and_resume_exactly(straight_and_resumed):
    """data.board_sizes=[6,9]: self-play fills a buffer per board, minibatches come from both,
    and 2 epochs straight == 1 epoch then a resume (both boards' games in progress included)."""
    a, c, result = straight_and_resumed(MIXED)
    assert c["stonelab"]["identity"]["board_size"] == 9  # the game's own board names the checkpoint
    buffers = c["SelfPlayDataModule"]["buffer"]["by_size"]
    assert buffers["6"]["states_bcnn"].shape[2:] == (6, 6) and buffers["9"]["states_bcnn"].shape[2:] == (9, 9)
    assert len(buffers["6"]["values_b"]) > 0 and len(buffers["9"]["values_b"]) > 0
    for size in ("6", "9"):
        assert torch.equal(a["SelfPlayDataModule"]["buffer"]["by_size"][size]["states_bcnn"],
                           buffers[size]["states_bcnn"]), size
    assert a["SelfPlayDataModule"]["buffer"]["batches_drawn"] == c["SelfPlayDataModule"]["buffer"]["batches_drawn"]
    slots = next(v for k, v in c["callbacks"].items() if k.startswith("SelfPlay"))
    assert sorted(slots["slots"]["by_size"]) == ["6", "9"]
    for key, value in a["state_dict"].items():
        assert torch.equal(value, c["state_dict"][key]), key
    assert result["train_steps"] == 4


def test_mixed_board_sizes_need_a_size_free_net(tmp_path, compose_train):
    cfg = compose_train(["game=gomoku_9x9_c5", "data.board_sizes=[6,9]", "+trainer.fast_dev_run=true"], tmp_path)
    with pytest.raises(Exception, match=r"board_sizes=\[6, 9\].*model/net=fully_conv"):
        train(cfg)
