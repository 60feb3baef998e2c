"""model=belief_vit (seed 001): shapes, positional encoding, gradient detachment, the
gate, a Hydra run, checkpoints (refusing another model's), and task=inspect."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest
import torch

from stonelab.games.go.rules import GoRules
from stonelab.models.belief_vit import BeliefViTModule
from stonelab.models.gate import gate_moves
from stonelab.models.nets.belief_vit import ENCODER_CHUNK, BeliefViT, Fixed2DPositionalEncoding

TINY = dict(embed_dim=16, heads=2, layers=1, ff_dim=32, belief_hidden=16)
TINY_OVERRIDES = ["model.net.embed_dim=16", "model.net.heads=2", "model.net.layers=1", "model.net.ff_dim=32",
                  "model.net.belief_hidden=16"]


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def random_batch(size: int, n: int = 19, seed: int = 0) -> dict:
    """simple4-like planes of random positions, with every belief target present."""
    g = torch.Generator().manual_seed(seed)
    board = torch.randint(-1, 2, (size, n * n), generator=g)
    planes = torch.stack([board == 1, board == -1, board == 0, torch.zeros_like(board, dtype=torch.bool)], 1)
    return {"planes": planes.view(size, 4, n, n).to(torch.uint8),
            "to_play": torch.tensor([1, -1] * (size // 2) + [1] * (size % 2)),
            "target": torch.randint(0, n * n + 1, (size,), generator=g),
            "value": torch.tensor([1.0, -1.0, 0.0, 1.0] * (size // 4) + [1.0] * (size % 4)),
            "ownership": torch.randint(-1, 2, (size, n, n), generator=g).float()}


def tiny_module(n: int = 19, **kw) -> BeliefViTModule:
    torch.manual_seed(0)
    return BeliefViTModule(BeliefViT(4, n, **TINY), GoRules(n), **kw)


def test_output_shapes():
    net = BeliefViT(4, 19, **TINY)
    out = net(torch.rand(3, 4, 19, 19), torch.tensor([1, -1, 1]))
    assert out.policy_logits.shape == (3, 362)  # 361 points + pass
    assert out.ownership_logits.shape == (3, 19, 19)  # the belief map
    assert out.confidence_logit.shape == (3,) and out.value_logit.shape == (3,)
    small = BeliefViT(4, 9, **TINY)(torch.rand(2, 4, 9, 9))
    assert small.policy_logits.shape == (2, 82) and small.ownership_logits.shape == (2, 9, 9)
    pooled = BeliefViT(4, 19, ownership_head="pooled", **TINY)  # the map from the pooled vector only
    assert "ownership_tokens" not in pooled.belief
    assert pooled(torch.rand(2, 4, 19, 19)).ownership_logits.shape == (2, 19, 19)


def test_a_batch_in_encoder_slices_gives_each_position_its_own_outputs():
    """Batches wider than the encoder's slice (and not a multiple of it) give every position
    what it gets alone, in eval and in training mode, and leave PyTorch's fused-attention
    switch as it was."""
    torch.manual_seed(0)
    net = BeliefViT(4, 9, **TINY)
    size = 2 * ENCODER_CHUNK + 3
    planes, to_play = torch.rand(size, 4, 9, 9), torch.tensor([1, -1] * (size // 2) + [1])
    before = torch.backends.mha.get_fastpath_enabled()
    for training in (False, True):
        net.train(training)
        with torch.no_grad():
            whole = net(planes, to_play)
            alone = [net(planes[i:i + 1], to_play[i:i + 1]) for i in (0, ENCODER_CHUNK, size - 1)]
        for i, one in zip((0, ENCODER_CHUNK, size - 1), alone, strict=True):
            assert torch.allclose(whole.policy_logits[i], one.policy_logits[0], atol=1e-5)
            assert torch.allclose(whole.ownership_logits[i], one.ownership_logits[0], atol=1e-5)
            assert torch.allclose(whole.value_logit[i], one.value_logit[0], atol=1e-5)
    assert torch.backends.mha.get_fastpath_enabled() == before


def test_seed_defaults_build():
    net = BeliefViT()  # the seed's embedding 128, 4 heads, 4 layers
    assert (net.config["embed_dim"], net.config["heads"], net.config["layers"]) == (128, 4, 4)
    assert len(net.encoder.layers) == 4 and net.encoder.layers[0].self_attn.num_heads == 4


def test_positional_encoding_has_no_parameters_and_is_translation_consistent():
    pe = Fixed2DPositionalEncoding(16, 19)
    assert list(pe.parameters()) == [] and pe.state_dict() == {}
    net = BeliefViT(4, 19, **TINY)
    assert not any("positions" in name for name, _ in net.named_parameters())
    assert not any("positions" in key for key in net.state_dict())
    table = pe.pe.double().view(19, 19, 16)
    # The similarity of two points depends only on their offset ...
    rng = np.random.default_rng(0)
    for _ in range(200):
        r1, c1, r2, c2 = rng.integers(0, 12, size=4)
        a, b = rng.integers(0, 7, size=2)
        same = table[r1, c1] @ table[r2, c2]
        moved = table[r1 + a, c1 + b] @ table[r2 + a, c2 + b]
        assert torch.isclose(same, moved, atol=1e-9)
    # ... and every point is told apart from every other.
    flat = table.view(361, 16)
    assert torch.cdist(flat, flat).add(torch.eye(361, dtype=flat.dtype)).min() > 1e-3
    # It is added, not learned: the tokens change by exactly the table.
    x = torch.zeros(2, 361, 16)
    assert torch.equal(pe(x)[1], pe.pe)


def test_policy_loss_never_reaches_the_belief_head():
    module = tiny_module()
    batch = random_batch(8)
    losses, _, _ = module._losses(batch)
    losses["policy_loss"].backward()
    belief = list(module.net.belief_parameters())
    assert belief and all(p.grad is None or not p.grad.any() for p in belief)
    assert module.net.embed.weight.grad.abs().sum() > 0  # the shared trunk learns from the policy
    assert module.net.policy.weight.grad.abs().sum() > 0

    module.zero_grad(set_to_none=True)
    losses, _, _ = module._losses(batch)
    (losses["confidence_loss"] + losses["value_loss"] + losses["ownership_loss"]).backward()
    for name, p in module.net.belief.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name
    assert module.net.embed.weight.grad.abs().sum() > 0  # ... and from the belief
    # The belief losses do not move the policy head either (its input advice is detached).
    policy = list(module.net.policy_parameters())
    assert all(p.grad is None or not p.grad.any() for p in policy)
    # Each belief target on its own reaches its own output layer.
    for target in ("confidence", "value", "ownership"):
        module.zero_grad(set_to_none=True)
        losses, _, _ = module._losses(batch)
        losses[f"{target}_loss"].backward()
        assert module.net.belief[target].weight.grad.abs().sum() > 0


def test_the_advice_enters_the_policy_detached():
    module = tiny_module()
    batch = random_batch(4)
    out = module(batch["planes"], batch["to_play"])
    # The policy depends on the belief (advice) ...
    with torch.no_grad():
        module.net.belief["ownership"].bias += 3.0
    changed = module(batch["planes"], batch["to_play"])
    assert not torch.allclose(out.policy_logits, changed.policy_logits)
    # ... but through no gradient path: the policy's graph holds no belief parameter.
    grads = torch.autograd.grad(changed.policy_logits.sum(), list(module.net.belief_parameters()),
                                allow_unused=True)
    assert all(g is None for g in grads)


def test_gate_function_reranks_by_the_belief():
    # Top move A (0.5); B (0.2) on a settled point; C (0.15) on an undecided point.
    probs = torch.zeros(2, 10)
    probs[:, [0, 1, 2]] = torch.tensor([0.5, 0.2, 0.15])
    probs[:, 9] = 0.15  # pass
    belief = torch.zeros(2, 9)
    belief[:, 1] = 1.0  # B: ours for sure
    belief[:, 2] = 0.0  # C: contested
    conf = torch.tensor([0.1, 0.3])
    move, gated, top = gate_moves(probs, conf, belief, threshold=0.2, top_k=4, contested_weight=1.0)
    assert top.tolist() == [0, 0]
    assert gated.tolist() == [True, False]
    assert move.tolist() == [2, 0]  # log .15 + 1 > log .2 + 0 > log .15 + 0 (pass)
    move, _, _ = gate_moves(probs, conf, belief, threshold=0.2, top_k=4, contested_weight=0.0)
    assert move.tolist() == [1, 0]  # no belief tilt: the runner-up
    move, gated, _ = gate_moves(probs, conf, belief, threshold=0.2, top_k=4, enabled=False)
    assert move.tolist() == [0, 0] and not gated.any()


def test_gate_changes_the_move_exactly_when_confidence_is_below_threshold():
    module = tiny_module().eval()
    with torch.no_grad():  # spread the untrained confidences out
        module.net.belief["confidence"].weight.mul_(200.0)
    batch = random_batch(40, seed=3)
    conf = module.gated_moves(batch["planes"], batch["to_play"])["confidence"]
    threshold = float(conf.median())
    below = conf < threshold
    assert 0 < int(below.sum()) < len(conf)
    out = module.gated_moves(batch["planes"], batch["to_play"], threshold=threshold)
    assert torch.equal(out["move"] != out["top"], below)
    assert torch.equal(out["gated"], below)
    assert torch.equal(out["top"], out["probs"].argmax(1))
    # With legal moves given, the gated move is legal too.
    legal = batch["planes"][:, 2].flatten(1).bool()
    legal = torch.cat([legal, torch.ones(40, 1, dtype=torch.bool)], 1)
    out = module.gated_moves(batch["planes"], batch["to_play"], legal=legal, threshold=threshold)
    assert legal.gather(1, out["move"][:, None]).all()
    assert torch.equal(out["move"] != out["top"], out["confidence"] < threshold)
    off = module.gated_moves(batch["planes"], batch["to_play"], threshold=threshold, enabled=False)
    assert torch.equal(off["move"], off["top"])


def test_tiny_batch_is_learned():
    module = tiny_module(9, lr=3e-3)
    batch = random_batch(8, n=9, seed=5)
    opt = module.configure_optimizers()
    first = None
    for _ in range(150):
        opt.zero_grad()
        loss = module._losses(batch)[0]["loss"]
        first = first if first is not None else float(loss.detach())
        loss.backward()
        opt.step()
    out = module(batch["planes"], batch["to_play"])
    assert (out.policy_logits.argmax(1) == batch["target"]).float().mean() >= 0.75
    assert float(module._losses(batch)[0]["loss"].detach()) < first


def test_bad_settings_are_named():
    from stonelab.errors import ConfigError

    with pytest.raises(ConfigError, match="model.gate.threshold"):
        tiny_module(gate={"threshold": 1.5})
    with pytest.raises(ConfigError, match="model.net.in_planes=4 but data.encoder='maddison'"):
        tiny_module(encoder="maddison")
    with pytest.raises(ConfigError, match="model.net.heads"):
        BeliefViT(4, 19, embed_dim=16, heads=3)
    with pytest.raises(ConfigError, match="model.optimizer"):
        tiny_module(optimizer="sgd")
    with pytest.raises(ConfigError, match=r"model.net.stem_kernel=2 must be an odd int"):
        BeliefViT(4, 19, stem_kernel=2, **TINY)
    with pytest.raises(ConfigError, match=r"model.net.memory_kind='lstm': choose gru or transformer"):
        BeliefViT(4, 19, memory=2, memory_kind="lstm", **TINY)
    with pytest.raises(ConfigError, match="model.warmup_steps=-1"):
        tiny_module(warmup_steps=-1)


def test_a_3x3_stem_lets_each_token_start_from_its_neighbours():
    """With the seed's 1x1 embedding a point's token before attention reads that point alone;
    a 3x3 stem reads its eight neighbours too (and no further)."""
    for kernel, reach in ((1, {(4, 4)}), (3, {(r, c) for r in (3, 4, 5) for c in (3, 4, 5)})):
        torch.manual_seed(0)
        net = BeliefViT(4, 9, stem_kernel=kernel, **TINY)
        planes = torch.zeros(1, 4, 9, 9, requires_grad=True)
        net.embed(planes)[0, :, 4, 4].sum().backward()
        touched = {tuple(int(i) for i in rc) for rc in torch.nonzero(planes.grad[0].abs().sum(0))}
        assert touched == reach
    assert BeliefViT(36, 19, stem_kernel=3, **TINY)(torch.rand(2, 36, 19, 19)).policy_logits.shape == (2, 362)


def test_the_rate_warms_up_then_falls_along_a_cosine():
    module = tiny_module(optimizer="adamw", lr=1e-3, warmup_steps=10, cosine_steps=100, final_lr_fraction=0.1)
    config = module.configure_optimizers()
    opt, schedule = config["optimizer"], config["lr_scheduler"]["scheduler"]
    rates = []
    for _ in range(120):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        schedule.step()
    assert rates[0] == pytest.approx(1e-4) and rates[9] == pytest.approx(1e-3)
    assert rates[60] == pytest.approx(1e-4 + 0.9e-3 * 0.5 * (1 + np.cos(np.pi * 0.5)))
    assert rates[115] == pytest.approx(1e-4)
    assert isinstance(tiny_module().configure_optimizers(), torch.optim.Optimizer)  # no schedule: constant


def test_fast_dev_run(tmp_path, compose_go):
    from stonelab.pipeline import train

    cfg = compose_go("belief_vit", [*TINY_OVERRIDES, "+trainer.fast_dev_run=true"], tmp_path)
    assert cfg.game.board_size == 19 and cfg.data.encoder == "simple4"
    assert cfg.model.lr == 1e-3 and cfg.model.optimizer == "adamw"  # the CPU-sized default (the seed's: an experiment)
    assert cfg.callbacks.model_checkpoint.monitor == "val/top1"
    result = train(cfg)
    metrics = result["metrics"]  # after trainer.test: the test split's metrics
    for key in ("test/top1", "test/top5", "test/f1_macro", "test/belief_error", "test/ece", "test/ece_softmax",
                "test/brier", "test/value_acc", "test/ownership_acc", "test/aurc", "test/aurc_softmax",
                "test/aurc_gated", "test/gate_rate", "test/gate_top1"):
        assert key in metrics, key
    assert 0 <= metrics["test/top1"] <= metrics["test/top5"] <= 1
    history = json.loads((tmp_path / "out" / "figures" / "history.json").read_text())
    assert len(history["val"]) == 1  # validation ran and was recorded


@pytest.fixture(scope="module")
def trained(tmp_path_factory, compose_go):
    """A seconds-long belief_vit run: (tmp folder, its last checkpoint)."""
    from stonelab.pipeline import train

    tmp = tmp_path_factory.mktemp("belief")
    cfg = compose_go("belief_vit", [*TINY_OVERRIDES, "trainer.limit_train_batches=2", "trainer.log_every_n_steps=1",
                                    "trainer.limit_val_batches=1", "trainer.limit_test_batches=1"], tmp)
    result = train(cfg)
    return tmp, tmp / "out" / "checkpoints" / "last.ckpt", result


def test_training_logs_every_metric(trained):
    import csv

    tmp, _, _ = trained
    with open(tmp / "out" / "csv" / "metrics.csv") as f:
        columns = set(next(csv.reader(f)))
    for key in ("train/loss", "train/policy_loss", "train/confidence_loss", "train/value_loss",
                "train/ownership_loss", "train/top1", "train/top5", "train/belief_error", "val/top1", "val/top5",
                "val/top10", "val/f1_macro", "val/belief_error", "val/ece", "val/ece_softmax", "val/brier",
                "val/aurc", "val/aurc_softmax", "val/aurc_gated", "val/gate_rate", "val/gate_top1",
                "val/value_acc", "val/ownership_acc", "test/top1", "test/aurc"):
        assert key in columns, key


def test_checkpoint_and_move_predictor(trained):
    from stonelab.models.identity import CHECKPOINT_KEY
    from stonelab.models.inference import MovePredictor

    _, last, result = trained
    assert last.exists() and result["best_checkpoint"]
    state = torch.load(last, map_location="cpu", weights_only=True)[CHECKPOINT_KEY]
    assert state["identity"] == {"model": "belief_vit", "game": "go", "board_size": 19, "encoder": "simple4"}
    assert state["net_target"] == "stonelab.models.nets.belief_vit.BeliefViT"
    assert state["net_config"]["embed_dim"] == 16 and state["gate"]["threshold"] == 0.2
    predictor = MovePredictor.from_checkpoint(str(last))
    rules = GoRules(19)
    busy = rules.new_state()
    for move in (72, 288, 60, 300):
        busy.play(move)
    probs = predictor.probabilities([rules.new_state(), busy])
    assert probs.shape == (2, 362)
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
    assert (probs[1][~busy.legal_mask()] == 0).all()
    # play_moves: the policy's best legal move, unless the checkpoint's gate replaces it.
    assert predictor.gate == state["gate"]
    states = [rules.new_state(), busy]
    top = predictor.best_moves(states)[:, 0]
    predictor.gate = {**state["gate"], "enabled": False}
    np.testing.assert_array_equal(predictor.play_moves(states), top)
    predictor.gate = {**state["gate"], "threshold": 1.0}  # every position is distrusted
    gated = predictor.play_moves(states)
    assert (gated != top).all() and all(s.legal_mask()[m] for s, m in zip(states, gated, strict=True))


def test_the_gate_is_set_at_the_entry_point_on_or_off_with_its_threshold(trained, tiny_maddison_checkpoint):
    """play.py's and task=gtp_match's ``gate.*``: over the checkpoint's gate; a GTP game's
    genmove then follows it (threshold 1: every move gated, never the policy's top one)."""
    from stonelab.errors import ConfigError
    from stonelab.models.alphazero_go import go_model_from_checkpoint
    from stonelab.protocols.gtp_search import search_gtp_engine

    tmp, last, _ = trained
    assert go_model_from_checkpoint(str(last)).gate["enabled"] is True
    off = go_model_from_checkpoint(str(last), gate={"enabled": False})
    always = go_model_from_checkpoint(str(last), gate={"threshold": 1.0})
    assert off.gate["enabled"] is False and always.gate == {**off.gate, "enabled": True, "threshold": 1.0}
    state = GoRules(19).new_state()
    top = int(off.best_moves([state])[0, 0])
    for predictor, gated in ((off, False), (always, True)):
        engine = search_gtp_engine(predictor, {"playouts": 0})
        move = engine.respond("genmove b").strip("= \n")
        assert (move == engine_vertex(top)) is not gated, (move, gated)
    for bad, words in (({"threshold": 2}, "gate.threshold=2 must be a number in [0, 1]"),
                       ({"enabled": "no"}, "gate.enabled='no' must be true or false"),
                       ({"top": 3}, "gate.top: unknown gate setting")):
        with pytest.raises(ConfigError, match=re.escape(words)):
            go_model_from_checkpoint(str(last), gate=bad)
    cnn = str(tiny_maddison_checkpoint(tmp / "cnn.ckpt"))
    with pytest.raises(ConfigError, match="gate.enabled is for belief_vit checkpoints"):
        go_model_from_checkpoint(cnn, gate={"enabled": False})


def engine_vertex(point: int) -> str:
    from stonelab.protocols.gtp import move_name

    return move_name(point, 19)


def test_task_predict_scores_the_belief_and_the_gate(trained, run_eval):
    tmp, last, _ = trained
    out = run_eval(["task=predict", f"ckpt_path={last}", f"data.sources=[{tmp / 'sgf'}]",
                    f"data.cache_dir={tmp / 'cache'}", f"paths.output_dir={tmp / 'predict'}"])
    for key in ("top1", "top5", "ece_softmax", "aurc_softmax", "ece", "aurc", "gate_rate", "gate_top1", "aurc_gated"):
        assert 0.0 <= out[key] <= 1.0, key
    # The same positions through the net averaged over the 8 symmetries (pass, belief heads and all).
    averaged = run_eval(["task=predict", f"ckpt_path={last}", f"data.sources=[{tmp / 'sgf'}]", "symmetries=8",
                         f"data.cache_dir={tmp / 'cache'}", f"paths.output_dir={tmp / 'predict8'}"])
    assert averaged["symmetries"] == 8 and out["symmetries"] == 1
    assert averaged["positions_scored"] == out["positions_scored"] and 0.0 <= averaged["gate_top1"] <= 1.0


def test_checkpoint_of_another_model_is_refused(tmp_path, trained, compose_go):
    from stonelab.models.identity import CheckpointMismatchError
    from stonelab.models.move_prediction import MovePredictionModule
    from stonelab.models.nets.maddison import MaddisonNet
    from stonelab.pipeline import train

    # A maddison_cnn checkpoint handed to a belief_vit run ...
    maddison = MovePredictionModule(MaddisonNet(36, 19, depth=2, filters=4), GoRules(19))
    path = tmp_path / "maddison.ckpt"
    torch.save({"stonelab": {"identity": maddison.identity()}, "state_dict": maddison.state_dict()}, path)
    cfg = compose_go("belief_vit", [*TINY_OVERRIDES, f"ckpt_path={path}"], tmp_path)
    with pytest.raises(CheckpointMismatchError) as err:
        train(cfg)
    message = str(err.value)
    assert "model: checkpoint has 'maddison_cnn', this run has 'belief_vit'" in message
    assert "encoder: checkpoint has 'maddison', this run has 'simple4'" in message
    assert not (tmp_path / "out" / "checkpoints" / "last.ckpt").exists()  # refused before any training
    # ... and the module itself refuses one when Lightning loads it.
    with pytest.raises(CheckpointMismatchError, match="maddison_cnn"):
        tiny_module().on_load_checkpoint(torch.load(path, weights_only=True))
    # A belief_vit checkpoint of another board is named too.
    _, last, _ = trained
    nine = BeliefViTModule(BeliefViT(4, 9, **TINY), GoRules(9))
    with pytest.raises(CheckpointMismatchError, match="board_size: checkpoint has 19, this run has 9"):
        nine.on_load_checkpoint(torch.load(last, weights_only=True))


@pytest.fixture
def run_eval(compose_config):
    """``run_eval(overrides)``: an eval task run in this process; returns what it writes."""
    from stonelab.eval_tasks import run

    return lambda overrides: run(compose_config("eval", overrides))


def test_inspect_writes_a_png(trained, tmp_path, run_eval, repo_root):
    from stonelab.errors import ConfigError

    _, last, _ = trained
    sgf = tmp_path / "game.sgf"
    shutil.copy(sorted((repo_root / "data" / "kgs").glob("*.sgf"))[0], sgf)
    out = run_eval(["task=inspect", f"ckpt_path={last}", f"sgf={sgf}", "move=40",
                    f"paths.output_dir={tmp_path / 'eval'}"])
    png = tmp_path / "eval" / "inspect_game_move40.png"
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out["png"] == str(png) and len(out["top5"]) == 5
    assert 0.0 <= out["confidence"] <= 1.0 and -1.0 <= out["value"] <= 1.0
    assert json.loads((tmp_path / "eval" / "inspect_game_move40.json").read_text())["move"] == 40
    start = run_eval(["task=inspect", f"ckpt_path={last}", f"sgf={sgf}", "move=0",
                      f"paths.output_dir={tmp_path / 'eval'}"])
    assert start["played"] is not None and (tmp_path / "eval" / "inspect_game_move0.png").exists()
    with pytest.raises(ConfigError, match="the game has"):
        run_eval(["task=inspect", f"ckpt_path={last}", f"sgf={sgf}", "move=100000",
                  f"paths.output_dir={tmp_path / 'eval'}"])
    with pytest.raises(ConfigError, match="sgf=FILE is required"):
        run_eval(["task=inspect", f"ckpt_path={last}", "move=3", f"paths.output_dir={tmp_path / 'eval'}"])


@pytest.mark.parametrize("kind", ["gru", "transformer"])
def test_memory_reads_the_past_positions(kind):
    from stonelab.errors import ConfigError
    from stonelab.models.belief_vit import BeliefViTModule

    torch.manual_seed(0)
    net = BeliefViT(4, 9, embed_dim=16, heads=2, layers=1, ff_dim=32, belief_hidden=16, memory=3, memory_kind=kind)
    planes = (torch.rand(2, 4, 9, 9) > 0.5).float()
    past = (torch.rand(2, 3, 4, 9, 9) > 0.5).to(torch.uint8)
    out = net(planes, None, past)
    assert not torch.allclose(out.policy_logits, net(planes, None, torch.zeros_like(past)).policy_logits)
    assert torch.allclose(net(planes, None, None).policy_logits,
                          net(planes, None, torch.zeros_like(past)).policy_logits)
    # Which past position is which counts: the same positions in another order read differently.
    assert not torch.allclose(out.policy_logits, net(planes, None, past.flip(1)).policy_logits)
    out.policy_logits.sum().backward()
    reader = net.memory_gru.weight_ih_l0 if kind == "gru" else net.memory_age
    assert reader.grad.abs().sum() > 0   # the policy learns through the memory
    with pytest.raises(ValueError, match="model.net.memory=3"):
        net(planes, None, past[:, :2])
    # A memory net trained on batches without past positions is refused, by name.
    module = BeliefViTModule(net, GoRules(9))
    batch = {"planes": planes, "to_play": torch.ones(2, dtype=torch.long), "target": torch.tensor([0, 1]),
             "value": torch.zeros(2), "ownership": torch.zeros(2, 9, 9)}
    with pytest.raises(ConfigError, match="data.history=3"):
        module.training_step(batch, 0)


def test_fast_dev_run_with_memory(tmp_path, compose_go):
    from stonelab.pipeline import train

    cfg = compose_go("belief_vit", [*TINY_OVERRIDES, "model.net.memory=2", "model.net.memory_kind=transformer",
                                    "+trainer.fast_dev_run=true", "logger=none"], tmp_path)
    assert cfg.data.history == 2
    assert "train/loss" in train(cfg)["metrics"]


def test_move_predictor_feeds_the_memory_the_game_so_far():
    from stonelab.models.inference import MovePredictor

    torch.manual_seed(0)
    net = BeliefViT(4, 9, embed_dim=16, heads=2, layers=1, ff_dim=32, belief_hidden=16, memory=2)
    predictor = MovePredictor(net, GoRules(9), "simple4")
    rules = GoRules(9)
    states = [rules.new_state()]
    for move in (40, 20, 30):
        states.append(states[-1].copy())
        states[-1].play(move)
    now = states[-1]
    with_past = predictor.outputs([now], histories=[states[:-1]]).policy_logits
    assert not torch.allclose(with_past, predictor.outputs([now]).policy_logits)
    # Only the last `memory` positions are read.
    assert torch.allclose(with_past, predictor.outputs([now], histories=[states[1:-1]]).policy_logits)


# -- trainer.precision=bf16-mixed


def test_module_outputs_are_float32_under_bf16_autocast(cpu_bf16):
    """Every head is bfloat16 under autocast: the module hands losses and metrics float32."""
    module, batch = tiny_module(9), random_batch(4, n=9)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = module(batch["planes"], batch["to_play"])
    for name in ("policy_logits", "value_logit", "confidence_logit", "ownership_logits"):
        assert getattr(out, name).dtype == torch.float32, name


def test_bf16_mixed_fast_dev_run(tmp_path, compose_go, cpu_bf16):
    from stonelab.pipeline import train

    cfg = compose_go("belief_vit", [*TINY_OVERRIDES, "+trainer.fast_dev_run=true", "trainer.precision=bf16-mixed"],
                     tmp_path)
    metrics = train(cfg)["metrics"]
    for key in ("train/loss", "train/belief_error", "test/ece", "test/value_brier", "test/aurc"):
        assert np.isfinite(metrics[key]), key


def test_score_head_moves_with_komi_and_learns_from_counted_games():
    torch.manual_seed(0)
    net = BeliefViT(4, 9, score_head=True, **TINY).eval()
    planes = (torch.rand(2, 4, 9, 9) < 0.3).float()
    to_play = torch.tensor([1, -1])
    with torch.no_grad():
        net.komi_slope.fill_(0.1)
        low = net(planes, to_play, komi=torch.tensor([0.5, 0.5]))
        high = net(planes, to_play, komi=torch.tensor([10.5, 10.5]))
    # Ten more points of komi: black (row 0) 10 points and some win rate worse, white better.
    torch.testing.assert_close(high.score_lead - low.score_lead, torch.tensor([-10.0, 10.0]))
    assert high.value[0] < low.value[0] and high.value[1] > low.value[1]
    assert (low.score_stdev > 0).all()
    with pytest.raises(ValueError, match="needs to_play"):
        net(planes)
    module = BeliefViTModule(BeliefViT(4, 9, score_head=True, **TINY), GoRules(9))
    batch = {**random_batch(8, n=9), "komi": torch.full((8,), 6.5),
             "score": torch.tensor([5.0, -5.0, float("nan"), float("nan")] * 2)}
    losses = module._losses(batch)[0]
    losses["loss"].backward()
    assert torch.isfinite(losses["score_loss"]) and module.net.belief["score"].weight.grad.abs().sum() > 0
    assert "score_loss" not in tiny_module(9)._losses(batch)[0]  # the seed's net: no score, no score loss


def test_a_run_with_a_score_head_gives_analysis_a_score(tmp_path, compose_go):
    from stonelab.models.inference import MovePredictor
    from stonelab.pipeline import train

    cfg = compose_go("belief_vit", [*TINY_OVERRIDES, "model.net.score_head=true", "trainer.limit_train_batches=2",
                                    "trainer.limit_val_batches=1", "trainer.limit_test_batches=1"], tmp_path)
    assert "train/score_loss" in train(cfg)["metrics"]
    predictor = MovePredictor.from_checkpoint(str(tmp_path / "out" / "checkpoints" / "last.ckpt"))
    low, high = (predictor.estimates([GoRules(19, komi=komi).new_state()])[0] for komi in (0.5, 20.5))
    assert high.score_lead == pytest.approx(low.score_lead - 20.0, abs=1e-3)  # black to move gives 20 more
    assert low.ownership.shape == (361,) and 0 <= low.winrate <= 1
