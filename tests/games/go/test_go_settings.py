"""Go's own search settings (the ``go`` group): the leaf value of a move predictor's search."""

from __future__ import annotations

import pytest

from stonelab.errors import ConfigError
from stonelab.games.go.settings import GoSettings, entry_point_settings, search_settings, split_settings


def test_settings_travel_beside_the_generic_search_and_come_back_apart():
    settings = search_settings({"playouts": 64, "c_puct": 5.0}, GoSettings("mixed", 8))
    assert settings == {"playouts": 64, "c_puct": 5.0, "go": {"leaf_value": "mixed", "leaf_playouts": 8}}
    assert split_settings(settings) == ({"playouts": 64, "c_puct": 5.0}, GoSettings("mixed", 8))
    assert split_settings({"playouts": 8}) == ({"playouts": 8}, GoSettings())  # none given: the defaults


def test_an_entry_point_refuses_gomokus_pruning_on_a_go_engine():
    cfg = {"search": {"playouts": 8}, "go": {"leaf_value": "none"}, "pruning": {"window": 0}}
    assert entry_point_settings(cfg)["go"]["leaf_value"] == "none"
    with pytest.raises(ConfigError, match="pruning.window=4: pruning.. are Gomoku's search settings"):
        entry_point_settings({**cfg, "pruning": {"window": 4}})


def test_the_generic_search_knows_nothing_of_go():
    from stonelab.search.mcts import MCTSConfig

    with pytest.raises(TypeError):
        MCTSConfig(go_value="mixed")
