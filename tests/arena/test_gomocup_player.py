"""An external Gomocup brain as a match opponent (stonelab.arena.gomocup_player) and the ladder of
its node budgets (stonelab.arena.ladder): against a fake brain whose strength is known, and a
few moves against the real Rapfi where it is built."""

from __future__ import annotations

import math
import os
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

from stonelab.arena.gomocup_player import GomocupOpponent, GomocupPlayer, OpponentFailed
from stonelab.arena.ladder import Rung, climb, even_budget
from stonelab.arena.players import play_match
from stonelab.arena.ratings import MatchResult
from stonelab.errors import ConfigError
from stonelab.games.gomoku.rules import GomokuRules

FAKE_BRAIN = Path(__file__).with_name("fake_gomocup_brain.py")
RAPFI = os.environ.get("STONELAB_RAPFI", "/work/rapfi/pbrain-rapfi")


class TopLeftFiller:
    """Our side in these tests: the lowest empty point, every move (a row of five from the
    top-left corner unless it is blocked). The fake brain beats it at or over its threshold."""

    name = "top_left_filler"

    def reset(self, num_games: int) -> None:
        self.taken = [set() for _ in range(num_games)]

    def choose(self, games: np.ndarray) -> np.ndarray:
        return np.array([min(set(range(15 * 15)) - self.taken[g]) for g in games], dtype=np.int64)

    def observe(self, g: int, move: int) -> None:
        self.taken[g].add(move)


def fake(threshold: int = 10, fault: str | None = None) -> str:
    return shlex.join([sys.executable, str(FAKE_BRAIN), str(threshold), *([fault] if fault else [])])


def brain(max_node: int | None = 1, **settings) -> GomocupOpponent:
    return GomocupOpponent.from_config({"command": fake(), "name": "fake", "max_node": max_node, **settings})


def match(opponent: GomocupOpponent, folder: Path, games: int = 4) -> MatchResult:
    with GomocupPlayer(GomokuRules(15, 5), opponent, str(folder)) as player:
        return play_match(GomokuRules(15, 5), TopLeftFiller(), player, games, opening_moves=2, seed=3)


def test_the_brain_plays_both_colours_and_hears_max_node(tmp_path):
    weak = match(brain(max_node=3), tmp_path)
    assert (weak.wins, weak.losses) == (4, 0)  # below its threshold the brain never blocks
    strong = match(brain(max_node=10), tmp_path)
    assert (strong.wins, strong.losses) == (0, 4)
    sent = (tmp_path / "gomocup_brain.stderr").read_text().splitlines()
    assert {"INFO max_node 3", "INFO max_node 10"} <= set(sent)
    assert "INFO timeout_turn 60000" in sent and f"INFO max_memory {64 * 1024 * 1024}" in sent
    assert sent.count("START 15") == 8 and sent.count("BOARD") == 8  # a process a game, asked first with BOARD


def test_the_ladder_finds_the_budget_the_fake_brain_is_built_with(tmp_path):
    lines = []
    rungs = climb([1, 3, 10, 30, 100], lambda budget: match(brain(budget), tmp_path, games=2), log=lines.append)
    assert [r.budget for r in rungs] == [1, 3, 10]  # a rung scoring 0 ends the climb
    assert [r.result.win_ratio for r in rungs] == [1.0, 1.0, 0.0]
    even = even_budget(rungs)
    assert even["budget"] == pytest.approx(math.sqrt(3 * 10))  # halfway between 3 and 10 in log nodes
    assert even["above"]["budget"] == 3 and even["below"]["budget"] == 10 and even["below"]["ci_high"] > 0
    assert lines[0].startswith("max_node 1: 2W 0D 0L of 2: win ratio 1.000 [95% CI ")
    assert even["text"].startswith("50% at max_node 5.48 ")


def rungs_of(*scores: tuple[int, float]) -> list[Rung]:
    return [Rung(budget, MatchResult(round(score * 10), 0, 10 - round(score * 10))) for budget, score in scores]


def test_the_even_budget_is_log_interpolated_between_the_rungs_around_50_percent():
    even = even_budget(rungs_of((1, 1.0), (10, 0.7), (100, 0.3), (1000, 0.0)))
    assert even["budget"] == pytest.approx(10 ** 1.5)  # 0.7 -> 0.3: half way from 10 to 100
    assert even_budget(rungs_of((1, 0.8), (4, 0.5), (16, 0.2)))["budget"] == pytest.approx(4)
    assert even_budget(rungs_of((1, 0.9), (8, 0.6), (64, 0.4)))["budget"] == pytest.approx(8 * 64 ** 0.5 / 8 ** 0.5)
    # 50% not bracketed: over the top rung, or under the bottom one
    top = even_budget(rungs_of((1, 1.0), (3, 0.6)))
    assert top["budget"] is None and "up to max_node 3" in top["text"]
    bottom = even_budget(rungs_of((1, 0.2), (3, 0.0)))
    assert bottom["budget"] is None and bottom["text"].startswith("under max_node 1")


@pytest.mark.parametrize("settings, message", [
    ({"max_node": 0}, "gomocup.max_node=0 must be a whole number >= 1"),
    ({"max_node": "lots"}, "gomocup.max_node='lots' must be a whole number >= 1"),
    ({"max_node": True}, "gomocup.max_node=True must be"),
    ({"timeout_turn": -5}, "gomocup.timeout_turn=-5 must be"),
    ({"command": "/nonexistent/pbrain-rapfi"}, "'/nonexistent/pbrain-rapfi' does not exist"),
    ({"command": str(FAKE_BRAIN)}, "is not executable"),  # a script without the x bit
    ({"command": ""}, "gomocup.command=... is required"),
    ({"command": "'unclosed"}, "cannot be read"),
    ({"info": {"max_node": 5}}, "gomocup.info.max_node: set gomocup.max_node instead"),
    ({"info": {"rule": 4}}, "the manager sends INFO rule itself"),
    ({"info": {"max depth": 5}}, "cannot be an INFO line"),
    ({"max_nodes": 5}, "gomocup.max_nodes is not a setting of a Gomocup opponent"),
])
def test_bad_settings_are_refused_in_one_line(settings, message):
    with pytest.raises(ConfigError, match=None) as refused:
        GomocupOpponent.from_config({"command": fake(), **settings})
    assert message in str(refused.value)


def test_a_game_other_than_five_in_a_row_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="a Gomocup brain plays Gomoku, five in a row; this match is gomoku_6x6_c4"):
        GomocupPlayer(GomokuRules(6, 4), brain(), str(tmp_path))


@pytest.mark.parametrize("fault, message", [
    ("crash", "protocol: the brain exited (code 3); its stderr ends 'fake brain: crashing on purpose'"),
    ("garbage", "protocol: answered 'hello there'"),
    ("occupied", "is occupied"),
    ("slow", "TLE: no move within 1200 ms"),
])
def test_a_faulty_brain_stops_the_match_naming_what_it_did(tmp_path, fault, message):
    opponent = GomocupOpponent.from_config({"command": fake(fault=fault), "max_node": 1, "timeout_turn": 200})
    player = GomocupPlayer(GomokuRules(15, 5), opponent, str(tmp_path))
    with pytest.raises(OpponentFailed) as failed:
        play_match(GomokuRules(15, 5), TopLeftFiller(), player, 2, opening_moves=2, seed=1)
    assert message in str(failed.value) and "failed in game 1 at move 4" in str(failed.value)
    assert all(b is None for b in player.brains)  # every brain was ended with the match


@pytest.mark.skipif(not os.access(RAPFI, os.X_OK), reason=f"Rapfi is not built at {RAPFI} (STONELAB_RAPFI)")
def test_the_real_rapfi_beats_the_top_left_filler(tmp_path):
    opponent = GomocupOpponent.from_config({"command": RAPFI, "name": "rapfi", "max_node": 10,
                                            "info": {"thread_num": 1}})
    result = match(opponent, tmp_path, games=2)
    assert (result.wins, result.draws, result.losses) == (0, 0, 2)
