"""One Go net answers analysis queries on every board size (the net resized per size)."""

import io
import json

import pytest
import torch

from stonelab.games.go.rules import GoRules
from stonelab.models.inference import MovePredictor
from stonelab.models.nets.belief_vit import BeliefViT
from stonelab.models.nets.resnet import ResidualNet
from stonelab.protocols.analysis import AnalysisEngine, board_sizes, parse_query

SEARCH = {"leaves_per_game": 4, "go": {"leaf_value": "playouts", "leaf_playouts": 1}}


@pytest.fixture(scope="module")
def engine(one_thread):
    torch.manual_seed(0)
    net = ResidualNet(36, 19, blocks=1, filters=8, pool_channels=4, value_head=True, aux_heads=True)
    return AnalysisEngine(MovePredictor(net, GoRules(19), "maddison"), SEARCH, max_visits=8)


def ask(engine, **fields):
    query = {"id": "q", "moves": [["B", "D4"]], "rules": "chinese", "komi": 7, "includeOwnership": True,
             "includePolicy": True, **fields}
    out = io.StringIO()
    engine.closed = False
    engine.run(io.StringIO(json.dumps(query) + "\n"), out)
    (answer,) = [json.loads(line) for line in out.getvalue().splitlines()]
    return answer


@pytest.mark.parametrize("n", [9, 13, 19])
def test_a_19x19_net_answers_every_board_size_with_ownership(engine, n):
    answer = ask(engine, boardXSize=n, boardYSize=n)
    assert len(answer["ownership"]) == n * n and len(answer["policy"]) == n * n + 1
    assert answer["policy"][n * (n - 4) + 3] == -1  # D4, occupied: illegal, as KataGo writes it
    assert all(-1 <= v <= 1 for v in answer["ownership"])
    moves = {m["move"] for m in answer["moveInfos"]}
    letters = "ABCDEFGHJKLMNOPQRST"[:n]
    assert moves and all(m[0] in letters and 1 <= int(m[1:]) <= n for m in moves), moves


def test_the_resized_net_is_made_once_per_size(engine):
    ask(engine, boardXSize=13, boardYSize=13)
    thirteen = engine.predictor_for(13)
    ask(engine, boardXSize=13, boardYSize=13)
    assert engine.predictor_for(13) is thirteen and thirteen.rules.n == 13
    assert engine.predictor_for(19) is engine.predictor


@pytest.mark.parametrize("x, y, field, words", [
    (7, 7, "boardXSize", "square boards from 9 to 19, not 7x7"),
    (9, 13, "boardYSize", "square boards from 9 to 19, not 9x13"),
    (25, 25, "boardXSize", "from 2 to 19"),
])
def test_boards_the_net_cannot_play_are_refused_by_name(engine, x, y, field, words):
    answer = ask(engine, boardXSize=x, boardYSize=y)
    assert answer["field"] == field and words in answer["error"], answer


def test_a_net_tied_to_its_board_plays_that_board_only():
    vit = BeliefViT(in_planes=36, board_size=9, embed_dim=16, heads=2, layers=1, ff_dim=16, belief_hidden=8)
    predictor = MovePredictor(vit, GoRules(9), "maddison")
    assert board_sizes(predictor) == (9,)
    query = {"id": "q", "moves": [], "rules": "chinese", "boardXSize": 13, "boardYSize": 13}
    with pytest.raises(Exception, match="plays 9x9 only, not 13x13"):
        parse_query(query, board_sizes(predictor), {"max_visits": 4, "perspective": "BLACK", "pv_len": 5}, False)
