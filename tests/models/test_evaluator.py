"""stonelab.models.evaluator: search inference in float32 or bf16, the net moved once, one host buffer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from stonelab.errors import ConfigError
from stonelab.models.evaluator import HostStaging, NetEvaluator, check_search_precision, search_precision
from stonelab.models.nets.policy_value import PolicyValueNet


def _planes(batch: int, n: int = 8, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2, (batch, 4, n, n)).astype(np.float32)


def _net(n: int = 8) -> PolicyValueNet:
    torch.manual_seed(0)
    return PolicyValueNet(n)


def test_bf16_priors_are_close_to_float32_and_come_back_as_float32_numpy(one_thread):
    planes = _planes(32)
    net = _net()
    p32, v32 = NetEvaluator(net, precision="32")(planes)
    p16, v16 = NetEvaluator(net, precision="bf16")(planes)
    for array in (p32, v32, p16, v16):
        assert isinstance(array, np.ndarray) and array.dtype == np.float32
    assert p16.shape == (32, 64) and v16.shape == (32,)
    np.testing.assert_allclose(p16.sum(axis=1), 1.0, atol=1e-5)  # normalised in float32
    # bf16 keeps 8 bits of mantissa: priors near 1/64 agree to a few percent of themselves.
    np.testing.assert_allclose(p16, p32, rtol=0.05, atol=2e-3)
    np.testing.assert_allclose(v16, v32, atol=2e-2)
    assert not np.array_equal(p16, p32)  # the bf16 path really ran in bf16


def test_the_net_is_moved_once_not_per_call(one_thread, monkeypatch):
    net = _net()
    moves = []
    original = net.to
    monkeypatch.setattr(net, "to", lambda *a, **k: moves.append(a) or original(*a, **k))
    pointers = [p.data_ptr() for p in net.parameters()]
    evaluate = NetEvaluator(net, "cpu", precision="bf16")
    for batch in (8, 8, 3, 16):
        evaluate(_planes(batch))
    assert len(moves) == 1
    assert [p.data_ptr() for p in net.parameters()] == pointers


def test_host_staging_reuses_one_buffer_and_grows_it_only_for_a_larger_batch():
    staging = HostStaging("cpu", pin=False)  # the GPU path's buffer logic, without pinned memory
    first = _planes(8)
    assert torch.equal(staging.upload(first), torch.from_numpy(first))
    pointer = staging.buffer.data_ptr()
    smaller = _planes(3, seed=2)
    assert torch.equal(staging.upload(smaller), torch.from_numpy(smaller))
    assert staging.allocations == 1 and staging.buffer.data_ptr() == pointer
    larger = _planes(20, seed=3)
    assert torch.equal(staging.upload(larger), torch.from_numpy(larger))
    assert staging.allocations == 2
    planes_u8 = _planes(4).astype(np.uint8)  # another dtype gets its own buffer
    assert staging.upload(planes_u8).dtype == torch.uint8 and staging.allocations == 3


def test_on_cpu_the_leaves_are_not_copied_at_all():
    staging = HostStaging("cpu")
    planes = _planes(4)
    uploaded = staging.upload(planes)
    assert staging.buffer is None and uploaded.data_ptr() == planes.ctypes.data


def test_search_precision_follows_the_trainer_unless_set():
    assert search_precision(None, "bf16-mixed") == "bf16"
    assert search_precision(None, "bf16-true") == "bf16"
    assert search_precision(None, "32-true") == "32"
    assert search_precision(None, "16-mixed") == "32"  # no float16 search path
    assert search_precision("32", "bf16-mixed") == "32"
    assert search_precision("bf16", "32-true") == "bf16"
    assert check_search_precision(32, "k") == "32" and check_search_precision("bf16", "k") == "bf16"
    assert check_search_precision(None, "k") is None


@pytest.mark.parametrize("value", ["fp8", "16", "bf16-mixed", True, 64])
def test_a_bad_search_precision_is_named(value):
    with pytest.raises(ConfigError, match=r"^callbacks\.selfplay\.precision=.*: choose 32, bf16 or null"):
        check_search_precision(value, "callbacks.selfplay.precision")


def test_score_utility_mixes_the_predicted_margin_into_the_value(one_thread):
    from stonelab.models.evaluator import score_utility_values

    torch.manual_seed(0)
    net = PolicyValueNet(9, in_planes=10, channels=(8,), num_actions=82, ownership_head=True, score_head=True)
    planes = torch.randint(0, 2, (3, 10, 9, 9)).float()
    with torch.no_grad():
        out = net.eval().heads(planes)
    assert out["ownership"].shape == (3, 81) and out["score"].shape == (3,) and out["ownership"].abs().max() <= 1
    _, plain = NetEvaluator(net)(planes.numpy())
    _, mixed = NetEvaluator(net, score_utility=0.25)(planes.numpy())
    np.testing.assert_allclose(plain, out["value"].numpy(), atol=1e-6)
    np.testing.assert_allclose(mixed, 0.75 * plain + 0.25 * (2 / np.pi) * np.arctan(out["score"].numpy()), atol=1e-6)
    # a lost value still ranks by the margin: losing by 5 points beats losing by 50
    lost = np.full(2, -1.0, np.float32)
    better, worse = score_utility_values(lost, np.array([-5 / 9, -50 / 9]), 0.25)
    assert better > worse and -1 <= worse


def test_score_utility_needs_a_score_head():
    with pytest.raises(ConfigError, match="score_utility=0.25 needs a net with a score head"):
        NetEvaluator(PolicyValueNet(6), score_utility=0.25)
