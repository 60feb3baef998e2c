"""KataGo's auxiliary targets on the Go nets: ownership and score heads, the komi input."""

from __future__ import annotations

import math

import pytest
import torch

from stonelab.errors import ConfigError
from stonelab.games.go.rules import GoRules
from stonelab.models import checkpoints
from stonelab.models.auxiliary import AuxMetrics, ownership_loss, score_loss
from stonelab.models.identity import CheckpointMismatchError
from stonelab.models.inference import MovePredictor
from stonelab.models.move_prediction import MovePredictionModule
from stonelab.models.nets.maddison import MaddisonNet
from stonelab.models.nets.resnet import ResidualNet
from stonelab.models.nets.symmetry_average import SymmetryAverage


def resnet(**kw) -> ResidualNet:
    torch.manual_seed(0)
    return ResidualNet(36, 9, blocks=1, filters=32, value_head=True, **kw)


def test_ownership_loss_is_smallest_at_the_right_owner():
    owners = torch.tensor([[[1.0, -1.0], [0.0, 1.0]]])
    right = ownership_loss(owners * 10, owners)
    wrong = ownership_loss(-owners * 10, owners)
    unsure = ownership_loss(torch.zeros_like(owners), owners)
    assert right < unsure < wrong


def test_score_loss_reads_counted_games_only_and_keeps_the_graph():
    lead = torch.tensor([3.0, 0.0], requires_grad=True)
    stdev = torch.tensor([5.0, 5.0])
    nan = float("nan")
    exact = score_loss(lead, stdev, torch.tensor([3.0, nan]))
    off = score_loss(lead, stdev, torch.tensor([13.0, nan]))
    assert torch.isfinite(exact) and off > exact
    nothing = score_loss(lead, stdev, torch.tensor([nan, nan]))
    assert nothing.item() == 0.0
    nothing.backward()  # a batch of resignations still trains the rest
    assert lead.grad is not None


def test_aux_metrics_count_decided_points_and_counted_games():
    metric = AuxMetrics()
    logits = torch.tensor([[[2.0, -1.0], [3.0, 0.5]]])
    owners = torch.tensor([[[1.0, 1.0], [0.0, 1.0]]])  # 3 decided points, 2 called right
    metric.update(logits, owners, torch.tensor([4.0]), torch.tensor([2.0]), torch.tensor([1.0]))
    metric.update(logits, owners, torch.tensor([4.0]), torch.tensor([2.0]), torch.tensor([float("nan")]))
    table = metric.compute()
    assert table["ownership_acc"] == pytest.approx(4 / 6) and table["ownership_points"] == 6
    assert table["score_mae"] == pytest.approx(3.0) and table["score_positions"] == 1


@pytest.mark.parametrize("make", [lambda: resnet(aux_heads=True),
                                  lambda: MaddisonNet(36, 9, depth=3, filters=8, value_head=True, aux_heads=True)])
def test_the_score_moves_point_for_point_with_komi(make):
    net = make().eval()
    planes = (torch.rand(2, 36, 9, 9) < 0.2).float()
    to_play = torch.tensor([1, -1])
    with torch.no_grad():
        low = net(planes, to_play, komi=torch.tensor([0.5, 0.5]))
        high = net(planes, to_play, komi=torch.tensor([10.5, 10.5]))
    assert low.ownership_logits.shape == (2, 9, 9) and (low.score_stdev > 0).all()
    # Ten more points of komi: black (to move in row 0) is 10 points worse, white 10 better.
    torch.testing.assert_close(high.score_lead - low.score_lead, torch.tensor([-10.0, 10.0]))


def test_the_value_moves_with_komi_by_its_learned_slope():
    net = resnet(aux_heads=True).eval()
    planes = torch.zeros(2, 36, 9, 9)
    to_play = torch.tensor([-1, -1])  # white to move
    with torch.no_grad():
        assert net.value_head.komi_slope.item() == 0.0  # starts neutral: a grown head calls as before
        net.value_head.komi_slope.fill_(0.1)
        out = net(planes, to_play, komi=torch.tensor([0.5, 20.5]))
    assert out.value[1] > out.value[0]  # more komi: white's win rate rises


@pytest.mark.parametrize("make", [lambda: resnet(aux_heads=True),
                                  lambda: MaddisonNet(36, 9, depth=3, filters=8, value_head=True, aux_heads=True)])
def test_blacks_edge_moves_blacks_score_and_value_up_and_whites_down_exactly(make):
    net = make().eval()
    planes = (torch.rand(2, 36, 9, 9) < 0.2).float()
    to_play, komi = torch.tensor([1, -1]), torch.tensor([6.5, 6.5])
    with torch.no_grad():
        before = net(planes, to_play, komi=komi)
        net.aux_heads.black_edge.edge.fill_(3.0)
        net.value_head.black_edge.edge.fill_(0.25)
        after = net(planes, to_play, komi=komi)
    torch.testing.assert_close(after.score_lead - before.score_lead, torch.tensor([3.0, -3.0]))
    torch.testing.assert_close(after.value_logit - before.value_logit, torch.tensor([0.25, -0.25]))
    assert not any("edge" in name for name, _ in net.named_parameters())  # measured, never trained


def test_a_file_from_before_blacks_edge_loads_with_none():
    net = resnet(aux_heads=True)
    old = {k: v for k, v in net.state_dict().items() if "black_edge" not in k}
    fresh = resnet(aux_heads=True)
    fresh.aux_heads.black_edge.edge.fill_(5.0)
    fresh.load_state_dict(old)  # strict: the missing edges are the file's 0, not an error
    assert fresh.aux_heads.black_edge.edge.item() == 0.0 and fresh.value_head.black_edge.edge.item() == 0.0


def test_a_net_without_aux_heads_ignores_komi_and_has_no_score():
    net = resnet().eval()
    planes = torch.rand(1, 36, 9, 9)
    with torch.no_grad():
        a = net(planes, torch.tensor([1]), komi=torch.tensor([0.5]))
        b = net(planes, torch.tensor([1]), komi=torch.tensor([30.5]))
    assert a.score_lead is None and a.ownership_logits is None
    torch.testing.assert_close(a.value_logit, b.value_logit)


def test_the_symmetry_average_keeps_score_and_ownership():
    net = SymmetryAverage(resnet(aux_heads=True)).eval()
    with torch.no_grad():
        out = net(torch.rand(3, 36, 9, 9), torch.tensor([1, -1, 1]), komi=torch.tensor([7.5, 7.5, 0.5]))
    assert out.score_lead.shape == (3,) and out.score_stdev.shape == (3,) and out.ownership_logits.shape == (3, 9, 9)


def aux_batch() -> dict:
    """A batch with every target: two counted games' scores, two without, two komis."""
    torch.manual_seed(1)
    return {"planes": (torch.rand(8, 36, 9, 9) < 0.3).to(torch.uint8), "target": torch.randint(0, 81, (8,)),
            "value": torch.tensor([1.0, -1.0] * 4), "to_play": torch.tensor([1, -1] * 4),
            "ownership": torch.randint(-1, 2, (8, 9, 9)).float(), "komi": torch.tensor([0.5, 7.5, 7.5, 0.5] * 2),
            "score": torch.tensor([5.0, -5.0, float("nan"), float("nan")] * 2)}


def test_training_learns_every_head_from_a_batch():
    module = MovePredictionModule(resnet(aux_heads=True), GoRules(9), encoder="maddison")
    module.log = module.log_dict = lambda *a, **k: None
    loss = module.training_step(aux_batch(), 0)
    loss.backward()
    heads = module.net.aux_heads
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in heads.parameters())
    assert math.isfinite(loss.item())


def test_trainable_heads_learn_on_a_trunk_that_stays_as_it_was(caplog):
    with caplog.at_level("INFO", logger="stonelab.models.move_prediction"):
        module = MovePredictionModule(resnet(aux_heads=True), GoRules(9), encoder="maddison", optimizer="adamw",
                                      lr=1e-2, trainable=["aux_heads", "value_head.komi_slope"])
    trained = sum(p.numel() for p in module.net.parameters() if p.requires_grad)
    assert f": {trained} of {sum(p.numel() for p in module.net.parameters())} weights train" in caplog.text
    before = {name: t.clone() for name, t in module.net.state_dict().items()}
    module.log = module.log_dict = lambda *a, **k: None
    opt = module.configure_optimizers()  # no schedule: the optimizer alone
    module.train()
    for _ in range(3):
        opt.zero_grad()
        module.training_step(aux_batch(), 0).backward()
        opt.step()
    after = module.net.state_dict()
    changed = {name for name in before if not torch.equal(before[name], after[name])}
    # The heads and the komi slope moved; every trunk weight and batch-norm statistic did not.
    assert changed and all(n.startswith("aux_heads.") or n == "value_head.komi_slope" for n in changed)
    assert "value_head.komi_slope" in changed
    assert not module.net.blocks[0].norm1.training  # a frozen norm normalises as in play
    assert module.net.aux_heads.training


def test_a_frozen_trunk_stays_as_it_was_through_a_lightning_fit_with_validation():
    import lightning as L

    module = MovePredictionModule(resnet(aux_heads=True), GoRules(9), encoder="maddison", optimizer="adamw",
                                  lr=1e-2, trainable=["aux_heads"])
    before = {name: t.clone() for name, t in module.net.state_dict().items()}
    batches = torch.utils.data.DataLoader([aux_batch() for _ in range(4)], batch_size=None)  # each item a batch
    trainer = L.Trainer(max_steps=4, limit_val_batches=2, val_check_interval=2, num_sanity_val_steps=1,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(module, train_dataloaders=batches, val_dataloaders=batches)
    after = module.net.state_dict()
    changed = {name for name in before if not torch.equal(before[name], after[name])}
    assert changed and all(name.startswith("aux_heads.") for name in changed)


def test_a_trainable_prefix_that_names_nothing_is_refused_with_the_parts():
    with pytest.raises(ConfigError, match=r"'aux_head' names no parameter of this net; its parts are .*aux_heads"):
        MovePredictionModule(resnet(aux_heads=True), GoRules(9), encoder="maddison", trainable=["aux_head"])
    with pytest.raises(ConfigError, match=r"model.trainable='aux_heads' must be null .* or a non-empty list"):
        MovePredictionModule(resnet(aux_heads=True), GoRules(9), encoder="maddison", trainable="aux_heads")
    with pytest.raises(ConfigError, match=r"model.trainable=\[\] must be null"):
        MovePredictionModule(resnet(aux_heads=True), GoRules(9), encoder="maddison", trainable=[])


def test_init_from_grows_new_heads_on_a_trained_trunk(tmp_path, tiny_maddison_checkpoint):
    path = tiny_maddison_checkpoint(tmp_path / "plain.ckpt")
    grown = MovePredictionModule(MaddisonNet(36, 9, depth=3, filters=8, value_head=False, aux_heads=True),
                                 GoRules(9), encoder="maddison")
    source = checkpoints.warm_start(grown, str(path))
    assert source["fresh"] and all(k.startswith("aux_heads.") for k in source["fresh"])
    plain = checkpoints.load(str(path), game="go", move_predictor=True).net
    torch.testing.assert_close(grown.net.kernels[0], plain.kernels[0])  # the trunk came over


def test_init_from_still_refuses_a_trunk_of_another_shape_or_a_file_with_more(tmp_path, tiny_maddison_checkpoint):
    path = tiny_maddison_checkpoint(tmp_path / "plain.ckpt")
    deeper = MovePredictionModule(MaddisonNet(36, 9, depth=4, filters=8, aux_heads=True), GoRules(9),
                                  encoder="maddison")
    with pytest.raises(CheckpointMismatchError, match="does not fit"):
        checkpoints.warm_start(deeper, str(path))
    rich = tiny_maddison_checkpoint(tmp_path / "aux.ckpt", aux_heads=True)
    poorer = MovePredictionModule(MaddisonNet(36, 9, depth=3, filters=8, value_head=True), GoRules(9),
                                  encoder="maddison")
    with pytest.raises(CheckpointMismatchError, match="does not fit"):
        checkpoints.warm_start(poorer, str(rich))


def test_estimates_give_score_and_ownership_that_follow_the_komi(tmp_path, tiny_maddison_checkpoint):
    predictor = MovePredictor.from_checkpoint(str(tiny_maddison_checkpoint(tmp_path / "aux.ckpt", aux_heads=True)))
    low = predictor.estimates([GoRules(9, komi=0.5).new_state()])[0]
    high = predictor.estimates([GoRules(9, komi=20.5).new_state()])[0]  # black to move: 20 points worse
    assert high.score_lead == pytest.approx(low.score_lead - 20.0, abs=1e-4)
    assert 0 <= low.winrate <= 1 and low.score_stdev > 0
    assert low.ownership.shape == (81,) and (abs(low.ownership) <= 1).all()
    plain = MovePredictor.from_checkpoint(str(tiny_maddison_checkpoint(tmp_path / "plain.ckpt")))
    none = plain.estimates([GoRules(9).new_state()])[0]
    assert none.winrate is None and none.score_lead is None and none.ownership is None
