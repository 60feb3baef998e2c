"""1,000 bad analysis queries: each gets exactly one error object, and good queries are
still answered after them."""

import io
import json
import random

import pytest
import torch

from stonelab.games.go.rules import GoRules
from stonelab.models.inference import MovePredictor
from stonelab.models.nets.maddison import MaddisonNet
from stonelab.protocols.analysis import AnalysisEngine

GOOD = {"id": "good", "moves": [["B", "E5"], ["W", "C3"]], "rules": "chinese", "komi": 7.5,
        "boardXSize": 9, "boardYSize": 9, "maxVisits": 4}
JUNK = [None, True, False, -1, 0, 3.7, 1e308, "", "x" * 300, "²", [], [[]], {}, {"a": {"b": [1]}}, [None] * 5,
        "\u202e\ufffd", 2 ** 62 + 1, -(2 ** 63)]
# Values each field refuses, beside JUNK entries of the wrong type.
BAD = {
    "moves": [[["B"]], [["B", "E5", "x"]], [["G", "E5"]], [["B", "E5"], ["W", "E5"]], [["B", "T19"]],
              [["B", "I5"]], [["B", "E10"]], [["B", 5]], [[None, "E5"]], "E5", {"B": "E5"}],
    "initialStones": [[["B", "pass"]], [["B", "A1"], ["W", "A1"]], [["B", "A1"], ["B", "A1"]], [["B"]], "A1"],
    "initialPlayer": ["X", "", 1, None, ["B"]],
    "rules": ["gomoku", "", 3, None, [], {"ko": "ROUND"}, {"scoring": "AREA", "colour": 1}],
    "komi": [7.3, 151, -151, "7.5", None, [], 1e308],
    "boardXSize": [19, 13, 0, -1, 9.0, "9", None, 10 ** 30],
    "boardYSize": [19, 13, 1, 2 ** 40, "nine"],
    "analyzeTurns": [[3], [-1], [0, 99], "0", [True], [0.5], 2],
    "maxVisits": [0, -1, 2 ** 51, 1.5, "10", True, None],
    "includeOwnership": [1, "true", None], "includeMovesOwnership": [0, "yes"], "includePolicy": ["", []],
    "overrideSettings": [[], "x", 1, {"reportAnalysisWinratesAs": "GREEN"}, {"maxTime": -2}, {"maxVisits": 0}],
    "reportDuringSearchEvery": [0, -1, 1e7, "1", None], "priority": [2 ** 63, 1.5, "1", True],
    "priorities": [[1], 5, ["a"]],
    "avoidMoves": [[{"player": "B", "moves": ["D4"]}], [{"player": "Q", "moves": [], "untilDepth": 1}],
                   [{"player": "B", "moves": ["Z99"], "untilDepth": 1}], [{"player": "B", "moves": [], "untilDepth": 0}],
                   "D4", [3]],
    "allowMoves": [[{"player": "B", "moves": ["D4"], "untilDepth": 1}] * 2, {}],
}


def garbage(rng: random.Random) -> str:
    raw = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60))).decode("utf-8", "replace")
    return "#" + raw.replace("\n", " ").replace("\r", " ")  # '#': never blank, never JSON


def wrong_field(rng: random.Random) -> str:
    field = rng.choice(sorted(BAD))
    query = {**GOOD, field: rng.choice(BAD[field])}
    if field == "allowMoves" and isinstance(query[field], dict):
        query["avoidMoves"] = []  # both given
    return json.dumps(query)


def wrong_type(rng: random.Random) -> str:
    """A JUNK value in a field that refuses every one of them (booleans only where no flag)."""
    field = rng.choice(["boardXSize", "boardYSize", "initialPlayer", "maxVisits", "analysisPVLen", "includePolicy"])
    return json.dumps({**GOOD, field: rng.choice([j for j in JUNK if field != "includePolicy"
                                                  or not isinstance(j, bool)])})


def missing_field(rng: random.Random) -> str:
    query = dict(GOOD)
    del query[rng.choice(["id", "moves", "rules", "boardXSize", "boardYSize"])]
    return json.dumps(query)


def bad_id(rng: random.Random) -> str:
    return json.dumps({**GOOD, "id": rng.choice([j for j in JUNK if not isinstance(j, str)])})


def nested(rng: random.Random) -> str:
    depth = rng.choice([50, 500, 5000, 50000])
    junk = "[" * depth + "]" * depth
    return rng.choice([junk, '{"id":"n","moves":' + junk + "}",
                       '{"id":"n","rules":{"ko":' + junk + '},"moves":[],"boardXSize":9,"boardYSize":9}'])


def huge_number(rng: random.Random) -> str:
    digits = "9" * rng.choice([20, 400, 5000])
    field = rng.choice(["maxVisits", "komi", "boardXSize", "priority", "analyzeTurns"])
    value = f"[{digits}]" if field == "analyzeTurns" else rng.choice([digits, "-" + digits, digits + ".5", "1e999"])
    return json.dumps(GOOD)[:-1] + f',"{field}":{value}}}'


def illegal_move(rng: random.Random) -> str:
    games = [
        [["B", "E5"], ["W", "E5"]],                                        # occupied
        [["B", "A2"], ["B", "B1"], ["W", "A1"]],                           # suicide
        [["B", "E5"], ["W", "pass"], ["B", "E5"]],                         # occupied after a pass
        [["B", "B1"], ["W", "C1"], ["B", "A2"], ["W", "B2"], ["B", "C2"], ["W", "A1"], ["B", "A3"],
         ["W", "B3"], ["B", "B1"], ["W", "A1"]],                          # a ko retaken at once
    ]
    return json.dumps({**GOOD, "moves": rng.choice(games)})


def bad_action(rng: random.Random) -> str:
    return json.dumps(rng.choice([{"id": "a", "action": "fly"}, {"id": "a", "action": "terminate"},
                                  {"id": "a", "action": "terminate", "terminateId": 5},
                                  {"id": "a", "action": "terminate_all", "turnNumbers": "1"},
                                  {"id": "a", "action": None}]))


def bad_lines(count: int = 1000, seed: int = 2026) -> list[str]:
    rng = random.Random(seed)
    makers = [garbage, wrong_field, wrong_type, missing_field, bad_id, nested, huge_number, illegal_move, bad_action]
    return [rng.choice(makers)(rng) for _ in range(count)]


@pytest.fixture(scope="module")
def engine(one_thread):
    torch.manual_seed(0)
    predictor = MovePredictor(MaddisonNet(36, 9, depth=2, filters=8), GoRules(9), "maddison")
    eng = AnalysisEngine(predictor, {"leaves_per_game": 4, "go": {"leaf_value": "playouts", "leaf_playouts": 1}},
                         max_visits=8, score_playouts=4)
    eng.warm_up()
    return eng


def test_each_bad_line_gets_exactly_one_error(engine):
    out = io.StringIO()
    engine.stdout = out
    for number, line in enumerate(bad_lines()):
        before = out.getvalue().count("\n")
        engine.handle_line(line)
        new = out.getvalue().splitlines()[before:]
        assert len(new) == 1, (number, line[:200], new)
        response = json.loads(new[0])
        assert "error" in response and "rootInfo" not in response and "warning" not in response, (line[:200], new)
        assert "internal error" not in response["error"], (line[:200], response)
    assert not engine.queue  # nothing was queued for analysis


def test_good_queries_are_answered_after_the_bad_ones(engine):
    lines = bad_lines(200, seed=7) + [json.dumps(GOOD), json.dumps({**GOOD, "id": "second"})]
    out = io.StringIO()
    engine.closed = False
    engine.run(io.StringIO("".join(line + "\n" for line in lines)), out)
    responses = [json.loads(line) for line in out.getvalue().splitlines()]
    assert sum("error" in r for r in responses) == 200
    assert [r["id"] for r in responses if "rootInfo" in r] == ["good", "second"]
