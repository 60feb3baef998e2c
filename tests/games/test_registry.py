"""The registry of games: every game found, looked up by name or rules, unknown ones refused."""

from __future__ import annotations

import re

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
        assert "identity" in spec.symmetries and spec.title
    assert registry.get("gomoku").search(GomokuRules(6, 4)).num_actions == 36
    assert registry.get("go").search(GoRules(9)).num_actions == 82


def test_a_game_gets_its_own_search_settings_from_its_own_group():
    from stonelab.games.go.settings import GoSettings
    from stonelab.games.gomoku.candidates import PruningConfig

    cfg = {"pruning": {"window": 6, "threat_aware": True}, "go": {"leaf_value": "auto"}}
    # Keys not given keep the game's default search (forced moves where the rules have them, a
    # root proof where it is cheap, a search for fours at the root where it is not).
    assert registry.own_settings(registry.get("gomoku"), cfg) == PruningConfig(
        window=6, threat_aware=True, forced="auto", root_proof="auto", vcf="auto")
    assert registry.own_settings(registry.get("go"), {"go": {"leaf_value": "mixed"}}) == GoSettings("mixed")
    assert registry.own_settings(registry.get("go"), {}) == GoSettings()  # no group given: its defaults
    assert registry.own_settings(registry.get("othello"), {"pruning": None}) is None  # a game without any


@pytest.mark.parametrize("game, cfg, message", [
    ("go", {"pruning": {"window": 6, "threat_aware": True}},
     "pruning.window=6, pruning.threat_aware=True: pruning.* are Gomoku's search settings and this plays Go"),
    ("gomoku", {"go": {"leaf_value": "mixed"}},
     "go.leaf_value=mixed: go.* are Go's search settings and this plays Gomoku"),
    ("othello", {"go": {"leaf_playouts": 8}}, "go.leaf_playouts=8: go.* are Go's search settings and this plays Othello"),
    ("go", {"go": {"leaf_value": "rollouts"}}, "go.leaf_value='rollouts': choose one of auto, net, playouts, mixed, none"),
    ("go", {"go": {"leaf_playouts": 0}}, "go.leaf_playouts=0 must be an integer >= 1"),
    ("go", {"go": {"leaf_valeu": "net"}}, "go.leaf_valeu is not a Go search setting (known: go.leaf_value, go.leaf_playouts)"),
])
def test_another_games_settings_or_bad_values_are_refused(game, cfg, message):
    with pytest.raises(ConfigError) as info:
        registry.own_settings(registry.get(game), cfg)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("symmetries, message", [
    (("identity", "flip_lr"), "'flip_lr' not known; the names are identity, rot90, rot180, rot270, mirror_lr"),
    (("rot180",), "must hold 'identity'"),
    (("identity", "rot90"), "not closed under composition: rot90 then rot90 is rot180, not declared"),
    (("identity", "mirror_lr", "mirror_ud"), "mirror_lr then mirror_ud is rot180, not declared"),
    (2, "give a tuple of names"),
    ("identity", "give a tuple of names"),
])
def test_symmetries_are_named_and_checked_at_register(symmetries, message):
    spec = registry.get("othello")
    with pytest.raises(RuntimeError, match=r"game 'othello': .*" + re.escape(message)):
        registry.register(registry.GameSpec(**{**spec.__dict__, "symmetries": symmetries}))


def test_a_board_that_is_not_square_refuses_quarter_turns():
    from stonelab.games.connect4.rules import Connect4Rules

    assert registry.board_symmetries(Connect4Rules()) == (0, 4)  # identity, mirror_lr
    spec = registry.get("connect4")
    turned = registry.GameSpec(**{**spec.__dict__, "symmetries": ("identity", "rot90", "rot180", "rot270")})
    registry.register(turned)  # a closed set of names: the board is not known yet
    try:
        with pytest.raises(RuntimeError, match=r"game 'connect4' \(connect4_6x7\): symmetries rot90, rot270 "
                                               r"turn the 6x7 board on its side"):
            registry.board_symmetries(Connect4Rules())
    finally:
        registry.register(spec)


def test_a_settings_group_comes_with_its_builder():
    spec = registry.get("othello")
    with pytest.raises(RuntimeError, match="settings_group and settings come together"):
        registry.register(registry.GameSpec(**{**spec.__dict__, "settings_group": "othello"}))
