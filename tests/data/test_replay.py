"""stonelab.data.replay and stonelab.data.selfplay: buffer, augmentation, sampling."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from stonelab.data.replay import ReplayBatches, ReplayBuffer, ReplayBufferError
from stonelab.data.selfplay import SelfPlayDataModule
from stonelab.errors import ConfigError
from stonelab.games.gomoku.rules import GomokuRules
from stonelab.games.symmetry import transform_planes, transform_points


def _positions(count, n=6, start=0):
    planes = np.zeros((count, 4, n, n), dtype=np.uint8)
    policies = np.zeros((count, n * n), dtype=np.float32)
    for i in range(count):
        planes[i, 0].flat[(start + i) % (n * n)] = 1
        policies[i, (start + i) % (n * n)] = 1.0
    values = np.where(np.arange(count) % 2 == 0, 1.0, -1.0).astype(np.float32)
    return planes, policies, values


def test_ring_buffer_keeps_the_newest():
    buf = ReplayBuffer(capacity=5, planes=4, board_shape=6)
    buf.add(*_positions(3))
    assert len(buf) == 3
    buf.add(*_positions(4, start=3))
    assert len(buf) == 5 and buf.positions_added == 7
    kept = sorted(int(torch.argmax(p)) for p in buf.policies_ba)
    assert kept == [2, 3, 4, 5, 6]  # positions 0 and 1 were overwritten


def test_sample_shapes_and_dtypes():
    buf = ReplayBuffer(capacity=100, planes=4, board_shape=6)
    buf.add(*_positions(50))
    states, policies, values = buf.sample(16, np.random.default_rng(0))
    assert states.shape == (16, 4, 6, 6) and states.dtype == torch.float32
    assert policies.shape == (16, 36) and values.shape == (16,)
    # every sampled state still carries its own policy target
    for s, p in zip(states, policies, strict=True):
        assert int(torch.argmax(s[0].flatten())) == int(torch.argmax(p))


def test_empty_buffer_sampling_is_a_clear_error():
    with pytest.raises(ReplayBufferError, match="empty replay buffer"):
        ReplayBuffer(10, 4, 6).sample(4, np.random.default_rng(0))


def test_state_dict_round_trip_and_shape_check():
    buf = ReplayBuffer(capacity=20, planes=4, board_shape=6)
    buf.add(*_positions(7))
    buf.batches_drawn = 3
    other = ReplayBuffer(capacity=20, planes=4, board_shape=6)
    other.load_state_dict(buf.state_dict())
    assert len(other) == 7 and other.batches_drawn == 3 and other.next_slot == 7
    assert torch.equal(other.states_bcnn[:7], buf.states_bcnn[:7])
    with pytest.raises(ReplayBufferError, match="another board size"):
        ReplayBuffer(capacity=20, planes=4, board_shape=8).load_state_dict(buf.state_dict())
    with pytest.raises(ReplayBufferError, match="data.buffer_size"):
        ReplayBuffer(capacity=5, planes=4, board_shape=6).load_state_dict(buf.state_dict())


def test_batches_stream_is_reproducible_from_the_draw_counter():
    buf = ReplayBuffer(capacity=100, planes=4, board_shape=6)
    buf.add(*_positions(60))
    stream = iter(ReplayBatches(buf, 8, seed=3))
    first = [next(stream)[2].clone() for _ in range(3)]
    buf.batches_drawn = 1
    again = next(iter(ReplayBatches(buf, 8, seed=3)))[2]
    assert torch.equal(first[1], again)
    assert not torch.equal(first[0], first[1])


def test_datamodule_adds_all_eight_symmetries():
    dm = SelfPlayDataModule(GomokuRules(6, 4), buffer_size=1000, batch_size=8, augment=True)
    planes, policies, values = _positions(3)
    assert dm.add_games(planes, policies, values) == 24
    stored_planes = dm.buffer.states_bcnn[:24].numpy()
    stored_policies = dm.buffer.policies_ba[:24].numpy()
    for sym in range(8):
        block = slice(sym * 3, sym * 3 + 3)
        np.testing.assert_array_equal(stored_planes[block], transform_planes(planes, sym))
        np.testing.assert_array_equal(stored_policies[block], transform_points(policies, 6, sym))
    np.testing.assert_array_equal(dm.buffer.values_b[:24].numpy(), np.tile(values, 8))


def test_datamodule_refuses_workers():
    with pytest.raises(ConfigError, match="num_workers"):
        SelfPlayDataModule(GomokuRules(6, 4), num_workers=2)


def test_go_buffer_turns_ownership_with_the_planes_and_keeps_it_through_a_checkpoint():
    from stonelab.games.go.rules import GoRules

    dm = SelfPlayDataModule(GoRules(9), buffer_size=64, batch_size=4)
    rng = np.random.default_rng(0)
    planes = (rng.random((2, 10, 9, 9)) < 0.3).astype(np.uint8)
    policies = np.full((2, 82), 1 / 82, np.float32)
    ownership = planes[:, 0].reshape(2, 81).astype(np.int8)  # a map that must turn as plane 0 does
    assert dm.add_games(planes, policies, np.array([1.0, -1.0], np.float32),
                        (ownership, np.array([3.0, -3.0], np.float32), np.ones(2, np.float32))) == 16
    buf = dm.buffer
    np.testing.assert_array_equal(buf.ownership_bn[:16].numpy(), buf.states_bcnn[:16, 0].reshape(16, 81).numpy())
    np.testing.assert_array_equal(buf.scores_b[:16].numpy(), np.tile([3.0, -3.0], 8))
    assert len(buf.sample(4, rng)) == 6
    copy = ReplayBuffer(64, 10, 9, 82, aux_targets=True)
    copy.load_state_dict(buf.state_dict())
    assert torch.equal(copy.ownership_bn[:16], buf.ownership_bn[:16])


def test_a_go_buffer_saved_without_ownership_is_refused_with_the_way_out():
    old = ReplayBuffer(8, 10, 9, 82)
    old.add(np.zeros((2, 10, 9, 9), np.uint8), np.zeros((2, 82), np.float32), np.zeros(2, np.float32))
    with pytest.raises(ReplayBufferError, match="init_from"):
        ReplayBuffer(8, 10, 9, 82, aux_targets=True).load_state_dict(old.state_dict())
    with pytest.raises(ReplayBufferError, match="give them"):
        ReplayBuffer(8, 10, 9, 82, aux_targets=True).add(np.zeros((1, 10, 9, 9)), np.zeros((1, 82)), np.zeros(1))


def test_mixed_sizes_route_by_board_and_each_batch_is_one_size():
    dm = SelfPlayDataModule(GomokuRules(9, 5), buffer_size=1000, batch_size=8, augment=True, board_sizes=[9, 6])
    assert sorted(dm.games) == [6, 9] and dm.games[9].n == 9 and dm.games[6].n == 6 and dm.games[6].k == 5
    buffers = dm.buffer.buffers
    assert buffers[6].capacity + buffers[9].capacity <= 1000 and buffers[9].capacity > buffers[6].capacity
    assert dm.add_games(*_positions(3, n=6)) == 24 and dm.add_games(*_positions(1, n=9)) == 8
    assert (len(buffers[6]), len(buffers[9]), len(dm.buffer), dm.buffer.positions_added) == (24, 8, 32, 32)
    rng = np.random.default_rng(0)
    shapes = [tuple(dm.buffer.sample(8, rng)[0].shape[2:]) for _ in range(200)]
    assert set(shapes) == {(6, 6), (9, 9)}
    assert 0.6 < shapes.count((6, 6)) / len(shapes) < 0.9  # 24 of 32 positions are 6x6
    with pytest.raises(ReplayBufferError, match="7x7 board"):
        dm.buffer.add(*_positions(1, n=7))


def test_mixed_buffer_round_trip_and_foreign_states_are_refused():
    dm = SelfPlayDataModule(GomokuRules(9, 5), buffer_size=500, batch_size=4, board_sizes=[6, 9])
    dm.add_games(*_positions(2, n=6))
    dm.buffer.batches_drawn = 7
    copy = SelfPlayDataModule(GomokuRules(9, 5), buffer_size=500, batch_size=4, board_sizes=[6, 9]).buffer
    copy.load_state_dict(dm.buffer.state_dict())
    assert torch.equal(copy.buffers[6].states_bcnn[:16], dm.buffer.buffers[6].states_bcnn[:16])
    assert (len(copy), copy.batches_drawn) == (16, 7)
    other = SelfPlayDataModule(GomokuRules(9, 5), buffer_size=500, batch_size=4, board_sizes=[7, 9]).buffer
    with pytest.raises(ReplayBufferError, match=r"holds the sizes \[6, 9\].*board_sizes=\[7, 9\].*init_from"):
        other.load_state_dict(dm.buffer.state_dict())
    single = SelfPlayDataModule(GomokuRules(9, 5), buffer_size=500, batch_size=4).buffer
    with pytest.raises(ReplayBufferError, match="mixes board sizes"):
        single.load_state_dict(dm.buffer.state_dict())
    with pytest.raises(ReplayBufferError, match="one board size"):
        copy.load_state_dict(single.state_dict())


@pytest.mark.parametrize(("sizes", "message"), [
    ([6, 7], r"must hold the game's own board, 9"),
    ([9, 9], "names a size twice"),
    (["nine"], "list of whole numbers"),
    ([9, 4], r"data.board_sizes=\[9, 4\]: Gomoku on a 4x4 board"),
])
def test_bad_board_sizes_are_refused_in_one_line(sizes, message):
    with pytest.raises(ConfigError, match=message):
        SelfPlayDataModule(GomokuRules(9, 5), board_sizes=sizes)


def test_board_sizes_need_a_square_board():
    from stonelab.games.connect4.rules import Connect4Rules

    with pytest.raises(ConfigError, match="square boards"):
        SelfPlayDataModule(Connect4Rules(6, 7, 4), board_sizes=[7])
