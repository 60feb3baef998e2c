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


def test_auto_c_puct_and_fpu_are_the_searching_players_own():
    from stonelab.games.go.settings import PREDICTOR_C_PUCT, PREDICTOR_FPU_REDUCTION, resolved_search
    from stonelab.search.mcts import ALPHAZERO_C_PUCT, MCTSConfig

    auto = {"playouts": 64, "c_puct": "auto", "fpu_reduction": "auto", "go": {"leaf_value": "net"}}
    predictor = resolved_search(auto, alphazero=False)
    assert (predictor["c_puct"], predictor["fpu_reduction"]) == (PREDICTOR_C_PUCT, PREDICTOR_FPU_REDUCTION) == (1.0, 0.2)
    assert predictor["go"] == {"leaf_value": "net"} and auto["c_puct"] == "auto"  # a copy
    assert resolved_search({"playouts": 8}, alphazero=False)["c_puct"] == 1.0  # absent counts as auto
    alphazero = resolved_search(auto, alphazero=True)
    assert (alphazero["c_puct"], alphazero["fpu_reduction"]) == (ALPHAZERO_C_PUCT, None) == (5.0, None)
    given = resolved_search({**auto, "c_puct": 2.5, "fpu_reduction": None}, alphazero=False)
    assert (given["c_puct"], given["fpu_reduction"]) == (2.5, None)  # a value given is kept
    # the generic search (self-play, Gomoku's engines) reads auto as AlphaZero's
    config = MCTSConfig(c_puct="auto", fpu_reduction="auto")
    assert (config.c_puct, config.fpu_reduction) == (5.0, None)
    with pytest.raises(ConfigError, match="search.c_puct='lots' must be > 0 or auto"):
        MCTSConfig(c_puct="lots")


def test_a_move_predictors_search_and_an_alphazero_nets_resolve_auto_apart(tmp_path, repo_root,
                                                                           tiny_maddison_checkpoint):
    from stonelab.games.go.players import go_search_player
    from stonelab.models.alphazero_go import go_model_from_checkpoint

    settings = search_settings({"playouts": 8, "c_puct": "auto", "fpu_reduction": "auto"}, GoSettings())
    predictor = go_model_from_checkpoint(tiny_maddison_checkpoint(tmp_path / "tiny.ckpt"))
    assert (go_search_player(predictor, settings).config.c_puct,
            go_search_player(predictor, settings).config.fpu_reduction) == (1.0, 0.2)
    alphazero = go_model_from_checkpoint(repo_root / "models" / "go9_alphazero_1h.ckpt")  # a Path too
    config = go_search_player(alphazero, settings).config
    assert (config.c_puct, config.fpu_reduction) == (5.0, None)  # as its self-play searched
