"""The registry of games: every game found, looked up by name or rules, unknown ones refused."""

from __future__ import annotations

import pytest

from stonelab.errors import ConfigError
from stonelab.games import registry
from stonelab.games.go.rules import GoRules
from stonelab.games.gomoku.rules import GomokuRules


def test_games_are_discovered():
    assert {"go", "gomoku"} <= set(registry.names())


def test_lookup_by_name_and_by_rules():
    assert registry.get("gomoku").rules is GomokuRules
    assert registry.of(GoRules(9)).name == "go"
    assert registry.of_class(GomokuRules).title == "Gomoku"
    assert registry.of_class(dict) is None


def test_an_unknown_game_is_refused_naming_the_registered_ones():
    with pytest.raises(ConfigError, match=r"game='chess' is not a game stonelab knows; the registered games are "
                                          r".*go.*gomoku"):
        registry.get("chess")
    with pytest.raises(ConfigError, match="dict are not the rules of a registered game"):
        registry.of({})


@pytest.mark.parametrize("rules, model", [(GomokuRules(6, 4), "alphazero"), (GoRules(9, komi=5.5), "alphazero"),
                                          (GoRules(19), "maddison_cnn")])
def test_identity_round_trip(rules, model):
    identity = registry.identity(rules, model)
    assert identity["model"] == model and identity["game"] == registry.of(rules).name
    assert registry.rules_from_identity(identity) == rules


def test_go_move_predictors_store_no_komi():
    assert "komi" not in registry.identity(GoRules(19), "maddison_cnn")
    assert registry.identity(GoRules(9, komi=7.0), "alphazero")["komi"] == 7.0


def test_a_second_game_under_a_taken_name_is_refused():
    spec = registry.get("gomoku")
    with pytest.raises(RuntimeError, match="two games registered as 'gomoku'"):
        registry.register(registry.GameSpec(**{**spec.__dict__, "rules": GoRules}))


def test_each_spec_builds_its_search_and_pure_mcts():
    for name in registry.names():
        spec = registry.get(name)
        assert spec.symmetries in (1, 2, 4, 8) and spec.title
    assert registry.get("gomoku").search(GomokuRules(6, 4)).num_actions == 36
    assert registry.get("go").search(GoRules(9)).num_actions == 82
