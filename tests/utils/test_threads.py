"""stonelab.utils.threads: search runs on the thread count asked for, training keeps its own."""

from __future__ import annotations

import torch

from stonelab.callbacks.evaluation import Evaluation
from stonelab.callbacks.selfplay import SelfPlay
from stonelab.search.mcts import MCTSConfig
from stonelab.utils.threads import torch_threads


def test_threads_are_set_for_the_block_and_restored():
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before


def test_search_defaults_to_one_thread():
    assert SelfPlay(MCTSConfig()).torch_threads == 1
    assert Evaluation(MCTSConfig()).torch_threads == 1


def test_self_play_round_runs_on_one_thread(tmp_path, monkeypatch, compose_train):
    from stonelab.pipeline import train
    from stonelab.search.selfplay import SelfPlaySlots

    seen = []
    play = SelfPlaySlots.play

    def spy(self, *args, **kwargs):
        seen.append(torch.get_num_threads())
        return play(self, *args, **kwargs)

    monkeypatch.setattr(SelfPlaySlots, "play", spy)
    try:
        # Training on two threads (the default is one): search still runs on one.
        train(compose_train(["logger=none", "callbacks.evaluation.at_train_end=false", "torch_threads=2"], tmp_path))
        assert seen and set(seen) == {1}
        assert torch.get_num_threads() == 2  # training keeps the threads it was given
    finally:
        torch.set_num_threads(1)


def test_a_thread_count_that_is_not_a_whole_number_is_refused_by_name():
    import pytest

    from stonelab.errors import ConfigError
    from stonelab.utils.threads import set_threads

    for bad in ["abc", 0, 1.5, True]:
        with pytest.raises(ConfigError, match=r"torch_threads=.* must be a whole number >= 1"):
            set_threads(bad)
