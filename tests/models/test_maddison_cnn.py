"""model=maddison_cnn: the net's shapes and symmetries, its heads (the optional value head
too), training, checkpoints."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from stonelab.errors import ConfigError
from stonelab.games.go.rules import GoRules
from stonelab.games.symmetry import transform_planes
from stonelab.models.nets.maddison import MaddisonNet


def test_output_shape_and_parameter_count():
    net = MaddisonNet(36, 19, depth=12, filters=128)
    logits = net(torch.rand(3, 36, 19, 19), torch.tensor([1, -1, 1])).policy_logits
    assert logits.shape == (3, 361)
    # A position-dependent bias map on every layer: 11 x 128 maps + the 2-filter output's.
    bias_params = sum(b.numel() for b in net.biases)
    assert bias_params == (11 * 128 + 2) * 361
    kernels = [w.shape[-1] for w in net.kernels]
    assert kernels == [5] + [3] * 11
    assert sum(p.numel() for p in net.parameters()) == bias_params + 36 * 128 * 25 + 10 * 128 * 128 * 9 + 128 * 2 * 9


def test_each_colour_has_its_own_head():
    torch.manual_seed(0)
    net = MaddisonNet(4, 9, depth=3, filters=8)
    x = torch.rand(1, 4, 9, 9)
    black, white = net(x, torch.tensor([1])).policy_logits, net(x, torch.tensor([-1])).policy_logits
    assert not torch.allclose(black, white)
    with torch.no_grad():  # only the white output's bias moves white's logits
        net.biases[-1][1] += 1.0
    assert torch.allclose(net(x, torch.tensor([1])).policy_logits, black)
    assert torch.allclose(net(x, torch.tensor([-1])).policy_logits, white + 1.0, atol=1e-5)


@pytest.mark.parametrize("symmetric", [True, False])
def test_weight_symmetry_makes_outputs_turn_with_the_board(symmetric):
    torch.manual_seed(1)
    net = MaddisonNet(5, 9, depth=4, filters=6, symmetric=symmetric)
    x = torch.rand(1, 5, 9, 9)
    out = net(x, torch.tensor([1])).policy_logits.detach().numpy().reshape(1, 9, 9)
    same = []
    for sym in range(8):
        turned = torch.from_numpy(transform_planes(x.numpy(), sym).copy())
        out_t = net(turned, torch.tensor([1])).policy_logits.detach().numpy().reshape(1, 9, 9)
        same.append(torch.allclose(torch.from_numpy(out_t), torch.from_numpy(transform_planes(out, sym)), atol=1e-5))
    assert all(same) == symmetric


def test_tiny_batch_is_overfit():
    from stonelab.games.go.rules import GoRules
    from stonelab.models.move_prediction import MovePredictionModule

    torch.manual_seed(0)
    module = MovePredictionModule(MaddisonNet(36, 9, depth=3, filters=16), GoRules(9), encoder="maddison",
                                  optimizer="adamw", lr=3e-3)
    batch = {"planes": (torch.rand(8, 36, 9, 9) > 0.5).to(torch.uint8), "to_play": torch.tensor([1, -1] * 4),
             "target": torch.randint(0, 81, (8,))}
    opt = module.configure_optimizers()
    for _ in range(200):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(module(batch["planes"], batch["to_play"]).policy_logits, batch["target"])
        loss.backward()
        opt.step()
    predicted = module(batch["planes"], batch["to_play"]).policy_logits.argmax(1)
    assert (predicted == batch["target"]).all()


def test_fast_dev_run_and_result(tmp_path, compose_go):
    from stonelab.pipeline import train

    cfg = compose_go("maddison_cnn", ["model.net.depth=3", "model.net.filters=8", "+trainer.fast_dev_run=true",
                                      "logger=none"], tmp_path)
    assert cfg.game.board_size == 19 and cfg.data.encoder == "maddison"
    result = train(cfg)
    assert result["parameters"] > 0
    assert "train/loss" in result["metrics"]
    # The published net has no value: no value numbers anywhere.
    assert "value" not in result and not any("value" in k for k in result["metrics"])


def test_train_validate_test_and_predict(tmp_path, compose_go, compose_config):
    from stonelab.eval_tasks import run as run_eval
    from stonelab.pipeline import train

    cfg = compose_go("maddison_cnn", ["model.net.depth=3", "model.net.filters=8"], tmp_path)
    result = train(cfg)
    for split in ("val", "test"):
        for k in (1, 5, 10):
            assert 0.0 <= result["metrics"][f"{split}/top{k}"] <= 1.0
        assert result["metrics"][f"{split}/top1"] <= result["metrics"][f"{split}/top10"]
    last = tmp_path / "out" / "checkpoints" / "last.ckpt"
    assert last.exists()
    ecfg = compose_config("eval", ["task=predict", f"ckpt_path={last}", f"data.sources=[{tmp_path / 'sgf'}]",
                                   f"data.cache_dir={tmp_path / 'cache'}",
                                   f"paths.output_dir={tmp_path / 'eval'}"])
    out = run_eval(ecfg)
    assert out["games"] == 12 and out["positions_scored"] > 1000
    assert json.loads((tmp_path / "eval" / "predict.json").read_text())["top1"] == out["top1"]
    assert 0.0 <= out["ece_softmax"] <= 1.0 and 0.0 <= out["aurc_softmax"] <= 1.0
    # The held-out games of the run, named by the run's own split settings.
    split = [f"data.{k}={cfg.data[k]}" for k in ("val_games", "test_games", "split_seed")]
    tcfg = compose_config("eval", ["task=predict", f"ckpt_path={last}", "data.split=test", *split,
                                   f"data.sources=[{tmp_path / 'sgf'}]",
                                   f"data.cache_dir={tmp_path / 'cache'}",
                                   f"paths.output_dir={tmp_path / 'eval_test'}"])
    held_out = run_eval(tcfg)
    assert held_out["games"] == cfg.data.test_games and held_out["split"] == "test"
    assert held_out["positions_scored"] < out["positions_scored"]


@pytest.mark.slow  # a run and two processes; test_belief_vit.py, test_train.py refuse other boards
def test_checkpoint_of_another_board_or_model_is_refused(tmp_path, compose_go, repo_root):
    cfg = compose_go("maddison_cnn", ["model.net.depth=2", "model.net.filters=4", "trainer.limit_train_batches=1",
                                      "trainer.limit_val_batches=1", "data.test_games=0"], tmp_path)
    from stonelab.pipeline import train

    train(cfg)
    last = tmp_path / "out" / "checkpoints" / "last.ckpt"
    sgf = tmp_path / "sgf"
    cmd = [sys.executable, str(repo_root / "src" / "train.py"), "model=maddison_cnn", "data=kgs",
           f"data.sources=[{sgf}]",
           f"data.cache_dir={tmp_path / 'cache'}", "game=go_9", f"ckpt_path={last}", "logger=none",
           f"paths.output_dir={tmp_path / 'again'}"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "board_size: checkpoint has 19, this run has 9" in proc.stderr
    assert "Traceback" not in proc.stderr
    # A Go move predictor given to the match task (alphazero checkpoints) is named as such, and
    # leaves no run folder.
    match = [sys.executable, str(repo_root / "src" / "eval.py"), "task=match", f"ckpt_path={last}",
             f"paths.output_dir={tmp_path / 'm'}"]
    proc = subprocess.run(match, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert f"task=match plays alphazero checkpoints; {last} holds a maddison_cnn Go model (19x19)" in proc.stderr
    assert not (tmp_path / "logs").exists() and not (tmp_path / "m").exists()


def test_model_with_selfplay_data_is_refused(tmp_path, repo_root):
    proc = subprocess.run([sys.executable, str(repo_root / "src" / "train.py"), "model=maddison_cnn",
                           "data=selfplay",
                           f"paths.output_dir={tmp_path}"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "use data=kgs" in proc.stderr


# -- the value head (model.net.value_head=true; not in the paper)


def test_value_head_adds_a_value_and_leaves_the_trunk_and_policy_alone():
    x, to_play = torch.rand(3, 36, 9, 9), torch.tensor([1, -1, 1])
    torch.manual_seed(0)
    plain = MaddisonNet(36, 9, depth=3, filters=8)
    torch.manual_seed(0)
    with_value = MaddisonNet(36, 9, depth=3, filters=8, value_head=True)
    out = with_value(x, to_play)
    assert plain(x, to_play).value_logit is None
    assert out.value_logit.shape == (3,) and ((out.value > -1) & (out.value < 1)).all()
    # Same seed, same trunk: the head is extra parameters, nothing else.
    assert torch.equal(plain(x, to_play).policy_logits, out.policy_logits)
    extra = sum(p.numel() for p in with_value.parameters()) - sum(p.numel() for p in plain.parameters())
    assert extra == (8 * 8 + 8) + (9 * 64 + 64) + (64 + 1)  # 1x1 conv, MLP 9 -> 64 -> 1
    # Komi makes colour matter: the side to move is an input of the value.
    same_planes = with_value(x[:1].expand(2, -1, -1, -1), torch.tensor([1, -1])).value_logit
    assert same_planes[0] != same_planes[1]


def test_value_of_a_symmetric_net_is_the_same_under_the_8_symmetries():
    torch.manual_seed(2)
    net = MaddisonNet(5, 9, depth=3, filters=6, symmetric=True, value_head=True)
    x = torch.rand(1, 5, 9, 9)
    values = [net(torch.from_numpy(transform_planes(x.numpy(), sym).copy()), torch.tensor([1])).value_logit
              for sym in range(8)]
    assert all(torch.allclose(v, values[0], atol=1e-5) for v in values)


def test_value_head_learns_the_results_of_a_tiny_batch():
    from stonelab.models.move_prediction import MovePredictionModule
    from stonelab.models.value import value_loss

    torch.manual_seed(0)
    module = MovePredictionModule(MaddisonNet(36, 9, depth=3, filters=16, value_head=True), GoRules(9),
                                  optimizer="adamw", lr=3e-3)
    planes = (torch.rand(8, 36, 9, 9) > 0.5).to(torch.uint8)
    to_play, result = torch.tensor([1, -1] * 4), torch.tensor([1.0, -1.0, -1.0, 1.0, 1.0, 1.0, -1.0, -1.0])
    opt = module.configure_optimizers()
    for _ in range(150):
        opt.zero_grad()
        value_loss(module(planes, to_play).value_logit, result).backward()
        opt.step()
    assert torch.equal(torch.sign(module(planes, to_play).value), result)


def test_negative_value_weight_is_refused():
    from stonelab.models.move_prediction import MovePredictionModule

    with pytest.raises(ConfigError, match=r"model.value_weight=-0.5 must be >= 0"):
        MovePredictionModule(MaddisonNet(36, 9, depth=2, filters=4, value_head=True), GoRules(9), value_weight=-0.5)
    with pytest.raises(ConfigError, match=r"model.net.value_head='yes' must be true or false"):
        MaddisonNet(36, 9, depth=2, filters=4, value_head="yes")


def test_search_uses_the_value_head_of_a_checkpoint(tmp_path, save_checkpoint, tiny_maddison_checkpoint):
    from stonelab.games.go.evaluator import GoNetEvaluator
    from stonelab.games.go.search import GoSearch
    from stonelab.models.inference import MovePredictor
    from stonelab.models.move_prediction import MovePredictionModule

    rules = GoRules(9)
    torch.manual_seed(0)
    module = MovePredictionModule(MaddisonNet(36, 9, depth=3, filters=8, value_head=True), rules)
    predictor = MovePredictor.from_checkpoint(str(save_checkpoint(module, tmp_path / "value.ckpt")))
    search = GoSearch(rules)
    evaluator = GoNetEvaluator(predictor, search)
    assert evaluator.value == "net"
    positions = search.new_positions(1)
    _, values = evaluator.evaluate_positions(positions, 1)
    state = rules.new_state()
    assert values[0] == pytest.approx(float(predictor.outputs([state]).value[0]), abs=1e-6) and values[0] != 0
    without = MovePredictor.from_checkpoint(str(tiny_maddison_checkpoint(tmp_path / "plain.ckpt")))
    assert GoNetEvaluator(without, search).value == "playouts"


def test_a_mixed_leaf_value_is_the_mean_of_the_net_and_the_playouts(tmp_path, save_checkpoint,
                                                                     tiny_maddison_checkpoint):
    from stonelab.errors import ConfigError
    from stonelab.games.go.evaluator import GoNetEvaluator
    from stonelab.games.go.search import GoSearch
    from stonelab.models.inference import MovePredictor
    from stonelab.models.move_prediction import MovePredictionModule
    from stonelab.search import tree as T

    rules = GoRules(9)
    torch.manual_seed(0)
    module = MovePredictionModule(MaddisonNet(36, 9, depth=3, filters=8, value_head=True), rules)
    predictor = MovePredictor.from_checkpoint(str(save_checkpoint(module, tmp_path / "value.ckpt")))
    search = GoSearch(rules)
    # 63 black stones against two empty columns: black wins these (seeded) playouts.
    state = rules.new_state().setup([r * 9 + c for r in range(9) for c in range(7)], [])
    state.play(rules.pass_move)  # white to move: the playouts are lost for white
    positions = search.new_positions(1)
    for field, value in zip(positions, search.position(state), strict=True):
        field[0] = value
    net = GoNetEvaluator(predictor, search, value="net").evaluate_positions(positions, 1)[1][0]
    T.seed_numba(0)
    playouts = GoNetEvaluator(predictor, search, value="playouts").evaluate_positions(positions, 1)[1][0]
    T.seed_numba(0)
    mixed = GoNetEvaluator(predictor, search, value="mixed").evaluate_positions(positions, 1)[1][0]
    assert playouts == -1.0 and mixed == pytest.approx(0.5 * net - 0.5, abs=1e-6)
    plain = MovePredictor.from_checkpoint(str(tiny_maddison_checkpoint(tmp_path / "plain.ckpt")))
    with pytest.raises(ConfigError, match="go.leaf_value=mixed: this checkpoint's net has no value output"):
        GoNetEvaluator(plain, search, value="mixed")


def test_checkpoint_from_before_the_value_head_loads_unchanged(tmp_path, tiny_maddison_checkpoint):
    from stonelab.models.inference import MovePredictor

    path = tiny_maddison_checkpoint(tmp_path / "now.ckpt")
    ckpt = torch.load(path, weights_only=True)
    for key in ("value_head", "value_channels", "value_hidden"):  # what an older checkpoint lacks
        del ckpt["stonelab"]["net_config"][key]
    torch.save(ckpt, tmp_path / "old.ckpt")
    old = MovePredictor.from_checkpoint(str(tmp_path / "old.ckpt"))
    now = MovePredictor.from_checkpoint(str(path))
    state = GoRules(9).new_state()
    assert old.outputs([state]).value_logit is None
    assert torch.equal(old.outputs([state]).policy_logits, now.outputs([state]).policy_logits)


def test_run_reports_value_accuracy_by_game_phase(tmp_path, compose_go, compose_config):
    from stonelab.eval_tasks import run as run_eval
    from stonelab.models.inference import MovePredictor
    from stonelab.pipeline import train

    cfg = compose_go("maddison_cnn", ["model.net.depth=3", "model.net.filters=8", "model.net.value_head=true",
                                      "logger=none"], tmp_path)
    result = train(cfg)
    for split in ("val", "test"):
        table = result["value"][split]
        phases = [name for name in ("moves_0_50", "moves_50_150", "moves_150_up") if name in table]
        assert phases and sum(table[name]["positions"] for name in phases) == table["all"]["positions"]
        for row in table.values():
            assert 0.0 <= row["acc"] <= 1.0 and 0.0 <= row["brier"] <= 1.0
        assert result["metrics"][f"{split}/value_acc"] == pytest.approx(table["all"]["acc"])
        assert f"{split}/value_loss" in result["metrics"]
    assert "train/value_loss" in result["metrics"]
    last = MovePredictor.from_checkpoint(str(tmp_path / "out" / "checkpoints" / "last.ckpt"))
    assert last.outputs([GoRules(19).new_state()]).value_logit.shape == (1,)
    # task=predict reports the same table on the run's held-out games.
    split = [f"data.{k}={cfg.data[k]}" for k in ("val_games", "test_games", "split_seed")]
    held_out = run_eval(compose_config("eval", [
        "task=predict", f"ckpt_path={tmp_path / 'out' / 'checkpoints' / 'last.ckpt'}", "data.split=test", *split,
        f"data.sources=[{tmp_path / 'sgf'}]", f"data.cache_dir={tmp_path / 'cache'}",
        f"paths.output_dir={tmp_path / 'eval'}"]))
    assert held_out["value"]["all"]["positions"] > 0
    assert sum(held_out["value"][p]["positions"] for p in held_out["value"] if p != "all") == \
        held_out["value"]["all"]["positions"]


def test_negative_value_weight_is_one_line_from_the_command_line(tmp_path, repo_root):
    proc = subprocess.run([sys.executable, str(repo_root / "src" / "train.py"), "model=maddison_cnn",
                           "model.value_weight=-1", f"paths.output_dir={tmp_path}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "model.value_weight=-1 must be >= 0" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- trainer.precision=bf16-mixed


def test_module_outputs_are_float32_under_bf16_autocast(cpu_bf16):
    """The value MLP comes out bfloat16 under autocast: the module hands losses and metrics float32."""
    from stonelab.models.move_prediction import MovePredictionModule

    torch.manual_seed(0)
    module = MovePredictionModule(MaddisonNet(36, 9, depth=3, filters=8, value_head=True), GoRules(9))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = module(torch.rand(4, 36, 9, 9), torch.tensor([1, -1, 1, -1]))
    assert out.policy_logits.dtype == out.value_logit.dtype == torch.float32


def test_bf16_mixed_fast_dev_run(tmp_path, compose_go, cpu_bf16):
    from stonelab.pipeline import train

    cfg = compose_go("maddison_cnn", ["model.net.depth=3", "model.net.filters=8", "model.net.value_head=true",
                                      "+trainer.fast_dev_run=true", "trainer.precision=bf16-mixed",
                                      "logger=none"], tmp_path)
    metrics = train(cfg)["metrics"]
    for key in ("train/loss", "train/policy_loss", "train/value_loss", "test/loss", "test/top1"):
        assert torch.isfinite(torch.tensor(metrics[key])), key
