"""The torch-free .npz format and its numpy forward pass: the torch net's outputs, any board,
loaded like any checkpoint elsewhere, and bad files refused in one line."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from stonelab.errors import StonelabError
from stonelab.models import checkpoints, numpy_net
from stonelab.models.export import export
from stonelab.models.nets.fully_conv import FullyConvNet
from stonelab.models.nets.policy_value import PolicyValueNet


def with_batch_statistics(net: torch.nn.Module) -> torch.nn.Module:
    """``net`` in eval mode with batch norm statistics and affine weights far from the identity."""
    torch.manual_seed(1)
    for module in net.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
            module.weight.data.uniform_(0.5, 1.5)
            module.bias.data.uniform_(-0.3, 0.3)
    return net.eval()


def saved(tmp_path, net: torch.nn.Module) -> str:
    path = str(tmp_path / "net.npz")
    target = f"{type(net).__module__}.{type(net).__qualname__}"
    numpy_net.save(path, {k: v.float().numpy() for k, v in net.state_dict().items()},
                   {"stonelab": {"net_target": target, "net_config": net.config, "identity": {}}})
    return path


@pytest.mark.parametrize("net, sizes", [
    (FullyConvNet(9, filters=16, blocks=3, pool_every=2, pool_channels=4), [9, 15, 20]),
    (FullyConvNet(9, filters=16, blocks=2, pool_every=1, pool_channels=4, num_actions=82), [9]),
    (PolicyValueNet(8, res_blocks=2), [8]),
], ids=["fully_conv", "fully_conv_with_pass", "policy_value"])
def test_the_numpy_forward_gives_the_torch_nets_outputs(tmp_path, net, sizes):
    torch.manual_seed(0)
    net = with_batch_statistics(net)
    lean = numpy_net.NumpyNet(saved(tmp_path, net))
    for size in sizes:
        planes = (torch.rand(5, 4, size, size) < 0.3).float()
        with torch.no_grad():
            log_policy, value = net(planes)
        priors, values = lean(planes.numpy())
        assert priors.dtype == values.dtype == np.float32
        np.testing.assert_allclose(priors, log_policy.exp().numpy(), atol=1e-6)
        np.testing.assert_allclose(values, value.numpy(), atol=1e-6)


def test_export_to_npz_plays_without_torch_and_loads_with_it(tmp_path, tiny_alphazero_checkpoint, repo_root):
    source = tiny_alphazero_checkpoint(tmp_path / "run.ckpt", 9, 5, rule="renju", fully_conv=True)
    summary = export(str(source), str(tmp_path / "brain.npz"))
    assert summary["out"].endswith(".npz")
    torch_side, lean = checkpoints.load(str(source)), checkpoints.load(str(tmp_path / "brain.npz"))
    assert lean.identity == torch_side.identity and lean.game == torch_side.game
    for name, weight in torch_side.net.state_dict().items():
        assert torch.equal(weight, lean.net.state_dict()[name].to(weight.dtype))
    code = ("import sys; from stonelab.models.numpy_net import NumpyNet; import numpy as np; "
            f"net = NumpyNet({str(tmp_path / 'brain.npz')!r}); p, v = net(np.zeros((2, 4, 15, 15), np.float32)); "
            "print(net.game().name, p.shape, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=repo_root, capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["gomoku_9x9_c5_renju", "(2,", "225)", "False"], out.stderr


def test_nets_without_a_numpy_forward_are_refused_before_writing(tmp_path, tiny_maddison_checkpoint):
    go = tiny_maddison_checkpoint(tmp_path / "go.ckpt")
    with pytest.raises(StonelabError, match="holds a MaddisonNet: the torch-free .npz format holds FullyConvNet or "
                                            "PolicyValueNet nets"):
        export(str(go), str(tmp_path / "go.npz"))
    assert not (tmp_path / "go.npz").exists()


def test_bad_npz_files_are_refused_saying_what_they_are(tmp_path):
    np.savez(tmp_path / "plain.npz", weights=np.zeros(3))
    (tmp_path / "text.npz").write_text("hello")
    with pytest.raises(StonelabError, match="numpy archive without stonelab's record"):
        numpy_net.NumpyNet(str(tmp_path / "plain.npz"))
    with pytest.raises(StonelabError, match="is not a readable .npz weights file"):
        numpy_net.NumpyNet(str(tmp_path / "text.npz"))
    with pytest.raises(StonelabError, match="is not a readable .npz weights file"):
        checkpoints.load(str(tmp_path / "text.npz"))
    path = saved(tmp_path, FullyConvNet(9, filters=8, blocks=1, pool_channels=4))
    weights, record = numpy_net.read(path)
    del weights["stem.weight"]
    numpy_net.save(path, weights, record)
    with pytest.raises(StonelabError, match="its weights lack 'stem.weight'"):
        numpy_net.NumpyNet(path)
