"""KataGo's analysis fields and actions, each against a reference: edgeVisits, pvVisits,
playSelectionValue, lcb, ownershipStdev, thisHash / symHash, query_version, query_models;
and the input KataGo takes that this engine refused or changed: empty lines, bytes that
are no UTF-8, a query of a megabyte; reports on the interval asked."""

import copy
import importlib.metadata
import io
import json
import math
import re
import time

import numpy as np
import pytest
import torch
from test_analysis import answers, query  # the same queries and reader as the protocol's own tests

import stonelab
from stonelab.games.go.players import combined_lcb, edge_squares, value_lcb
from stonelab.games.go.rules import GoRules
from stonelab.models.inference import BoardEstimate, MovePredictor
from stonelab.models.nets.maddison import MaddisonNet
from stonelab.protocols import analysis
from stonelab.protocols.analysis import AnalysisEngine, ReportClock, next_beat
from stonelab.protocols.gtp import gtp_version, parse_vertex
from stonelab.protocols.gtp_search import search_gtp_engine
from stonelab.protocols.katago_fields import model_facts, position_hashes

# Leaf values from one random playout each: every value the search backs up is +1 or -1
# (komi 7.5: no draw), so a move's values have the spread of a coin: sqrt(1 - mean^2).
SEARCH = {"leaves_per_game": 4, "go": {"leaf_value": "playouts", "leaf_playouts": 1}}


@pytest.fixture(scope="module")
def predictor(one_thread):
    torch.manual_seed(0)
    return MovePredictor(MaddisonNet(36, 9, depth=2, filters=8), GoRules(9), "maddison")


@pytest.fixture(scope="module")
def engine(predictor):
    eng = AnalysisEngine(predictor, SEARCH, max_visits=20, score_playouts=8)
    eng.warm_up()
    return eng


def stone_owners(states):
    """A fake net: each stone owns its point (+1 for the side to move's), empty points nobody."""
    return [BoardEstimate(0.5, 0.5, 1.0, (s.board * s.to_play).astype(np.float32)) for s in states]


@pytest.fixture(scope="module")
def owner_engine(predictor):
    """An engine whose net has an ownership head (`stone_owners`)."""
    owned = copy.copy(predictor)
    owned.estimates = stone_owners
    return AnalysisEngine(owned, SEARCH, max_visits=40)


def byte_answers(engine, lines: list[bytes]):
    """The responses to byte ``lines``, read as the real stdin is (bytes, `sys.stdin.buffer`)."""
    out = io.StringIO()
    engine.closed = False
    engine.run(io.BytesIO(b"".join(line + b"\n" for line in lines)), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def one_result(engine, **fields):
    (result,) = [r for r in answers(engine, [query(**fields)]) if "rootInfo" in r]
    return result


# -- moveInfos ----------------------------------------------------------------------------------------

def test_edge_visits_and_play_selection_value_are_the_visits(engine):
    """A tree has one edge into each child, and the most visited move is the one played."""
    moves = one_result(engine, maxVisits=40)["moveInfos"]
    assert all(m["edgeVisits"] == m["visits"] == m["playSelectionValue"] for m in moves)
    values = [m["playSelectionValue"] for m in moves]
    assert values == sorted(values, reverse=True) and [m["order"] for m in moves] == list(range(len(moves)))
    assert not any("isSymmetryOf" in m for m in moves)  # no symmetric moves merged: KataGo leaves it out too
    assert not any("pvVisits" in m for m in moves)  # only when asked


def test_pv_visits_follow_the_pv_from_the_moves_visits_down(engine):
    moves = one_result(engine, maxVisits=60, includePVVisits=True)["moveInfos"]
    for m in moves:
        assert len(m["pvVisits"]) == len(m["pv"]) and m["pvVisits"][0] == m["visits"]
        assert all(a >= b >= 1 for a, b in zip(m["pvVisits"], m["pvVisits"][1:], strict=False))  # never more below
        assert m["pvEdgeVisits"] == m["pvVisits"]  # a tree: the position's visits are its edge's
    assert any(len(m["pv"]) > 1 for m in moves)


def test_lcb_is_the_win_rate_less_1_96_standard_errors_of_the_values_searched(engine):
    """Playout values are +-1: a move's values spread as sqrt(N (1 - mean^2) / (N - 1));
    one visit counts as the widest spread, 0.5 in win-rate units."""
    result = one_result(engine, maxVisits=60, overrideSettings={"reportAnalysisWinratesAs": "SIDETOMOVE"})

    def expected(visits, winrate):
        mean = 2 * winrate - 1
        spread = 0.5 if visits == 1 else 0.5 * math.sqrt(visits * (1 - mean * mean) / (visits - 1))
        return winrate - 1.96 * spread / math.sqrt(visits)

    for m in result["moveInfos"]:
        assert m["lcb"] == pytest.approx(expected(m["visits"], m["winrate"]), abs=1e-4) and m["lcb"] <= m["winrate"]
    root = result["rootInfo"]  # the root's visits count its own evaluation, which backs up no value here
    assert root["lcb"] == pytest.approx(expected(root["visits"] - 1, root["winrate"]), abs=1e-4)


def test_lcb_turns_with_the_win_rate_for_the_other_side(engine):
    """Reported for black with white to move, the bound of white's win rate becomes 1 - it, above black's."""
    result = one_result(engine, moves=[["B", "E5"]], maxVisits=30)
    assert all(m["lcb"] >= m["winrate"] for m in [*result["moveInfos"], result["rootInfo"]])


def test_the_tree_gives_back_the_square_of_every_value_backed_up(engine):
    """With +-1 values each square is 1: an edge's sum of squares is its visits, at every depth."""
    one_result(engine, maxVisits=80)
    tree = next(reversed(engine.players.values())).mcts.tree
    used = int(tree.num_edges[0])
    assert np.array_equal(edge_squares(tree)[:used], tree.visits[0, :used].astype(np.float64))


def test_value_lcb_by_hand():
    assert value_lcb(0, 0.7, 0.0) == 0.0
    assert value_lcb(1, 0.7, 0.16) == pytest.approx(0.7 - 1.96 * 0.5)  # one visit: the widest spread
    assert value_lcb(50, 0.8, 50 * 0.36) == pytest.approx(0.8)  # every value 0.6: no spread, no margin
    assert value_lcb(4, 0.5, 4.0) == pytest.approx(0.5 - 1.96 * 0.5 * math.sqrt(4 / 3) / 2)  # two wins, two losses
    assert combined_lcb([]) is None


# -- ownershipStdev -------------------------------------------------------------------------------------

def test_ownership_stdev_is_the_spread_over_the_searched_moves(owner_engine):
    """With stones owning their points the maps differ only where a searched move put a stone:
    there, a share q of the weight (its visits of the root's) owns it, so the spread is
    sqrt(q (1 - q)); everywhere else every map agrees and the spread is 0."""
    result = one_result(owner_engine, maxVisits=40, includeOwnership=True, includeOwnershipStdev=True)
    total = result["rootInfo"]["visits"]  # the root's own evaluation (weight 1) and each move's visits
    expected = np.zeros(81)
    for m in result["moveInfos"]:
        if m["move"] != "pass":
            q = m["visits"] / total
            expected[parse_vertex(m["move"], 9)] = math.sqrt(q * (1 - q))
    assert result["ownershipStdev"] == pytest.approx(expected.tolist(), abs=2e-6)


def test_each_moves_ownership_stdev_is_the_spread_over_its_replies(owner_engine):
    result = one_result(owner_engine, maxVisits=60, includeMovesOwnershipStdev=True, includePVVisits=True)
    for m in result["moveInfos"]:
        spread = np.array(m["ownershipStdev"])
        assert len(spread) == 81 and (spread >= 0).all()
        if m["move"] != "pass":
            assert spread[parse_vertex(m["move"], 9)] == 0  # the move's own stone: every map has it
        if m["visits"] == 1:
            assert not spread.any()  # searched once: only its own map
        elif m["pv"][1] != "pass":
            q = m["pvVisits"][1] / m["pvVisits"][0]  # the best reply's share of the move's visits
            assert spread[parse_vertex(m["pv"][1], 9)] == pytest.approx(math.sqrt(q * (1 - q)), abs=2e-6)
    assert "ownershipStdev" not in result  # the root's only when asked


def test_ownership_stdev_of_a_net_without_ownership_is_left_out_with_a_warning(engine):
    responses = answers(engine, [query(includeOwnershipStdev=True, includeMovesOwnershipStdev=True, maxVisits=4)])
    assert {r["field"] for r in responses if "warning" in r} == {"includeOwnershipStdev", "includeMovesOwnershipStdev"}
    (result,) = [r for r in responses if "rootInfo" in r]
    assert "ownershipStdev" not in result and not any("ownershipStdev" in m for m in result["moveInfos"])


# -- rootInfo ----------------------------------------------------------------------------------------

def test_sym_hash_is_shared_by_mirrored_positions_and_this_hash_is_not(engine):
    def hashes(moves):
        root = one_result(engine, moves=moves, maxVisits=2)["rootInfo"]
        assert root["currentPlayer"] in ("B", "W")
        return root["thisHash"], root["symHash"]

    c3, g3, g7 = hashes([["B", "C3"]]), hashes([["B", "G3"]]), hashes([["B", "G7"]])  # mirrored; turned half
    assert all(re.fullmatch("[0-9A-F]{32}", h) for h in (*c3, *g3))  # 128 bits, as KataGo prints them
    assert c3[1] == g3[1] == g7[1] and len({c3[0], g3[0], g7[0]}) == 3
    other_side = hashes([["B", "C3"], ["W", "pass"]])  # the same stones, black to move
    assert other_side[0] != c3[0] and other_side[1] != c3[1]


def test_this_hash_counts_the_ko_ban():
    state = GoRules(9).new_state()
    for vertex in ("B1", "C1", "A2", "B2", "C2", "A1"):  # white A1 takes black B1: a ko at B1
        state.play(parse_vertex(vertex, 9))
    assert state.ko_point == parse_vertex("B1", 9)
    same_stones = GoRules(9).new_state()
    same_stones.setup(np.flatnonzero(state.board == 1), np.flatnonzero(state.board == -1))
    same_stones.to_play = state.to_play
    assert position_hashes(state)[0] != position_hashes(same_stones)[0]


# -- actions -----------------------------------------------------------------------------------------

def test_query_version_answers_katagos_shape_with_the_version_gtp_gives(engine, predictor):
    (answer,) = answers(engine, ['{"id":"v","action":"query_version"}'])
    assert set(answer) == {"id", "action", "version", "git_hash"} and answer["id"] == "v"
    assert answer["version"] == gtp_version(importlib.metadata.version("stonelab"))
    gtp = search_gtp_engine(predictor, None, version=stonelab.__version__)
    assert gtp.respond("version") == f"= {answer['version']}\n\n"
    assert answer["git_hash"] == "<omitted>" or re.fullmatch("[0-9a-f]{40}(-dirty)?", answer["git_hash"])


def test_query_models_gives_the_loaded_nets_facts(engine, predictor):
    (answer,) = answers(engine, ['{"id":"m","action":"query_models"}'])
    assert answer["id"] == "m" and answer["action"] == "query_models"
    (model,) = answer["models"]
    assert model == {"name": "MaddisonNet", "internalName": "MaddisonNet-maddison-9x9",
                     "maxBatchSize": SEARCH["leaves_per_game"], "usesHumanSLProfile": False, "version": 1,
                     "usingFP16": "false"}
    named = AnalysisEngine(predictor, SEARCH, model_path="/models/go9_tiny.ckpt")
    assert answers(named, ['{"id":"m","action":"query_models"}'])[0]["models"][0]["name"] == "go9_tiny.ckpt"
    half = MovePredictor(MaddisonNet(36, 9, depth=2, filters=4).half(), GoRules(9), "maddison")
    assert model_facts(half, "", 8)["usingFP16"] == "true"


# -- input -------------------------------------------------------------------------------------------

def test_an_empty_line_gets_an_error_not_silence(engine):
    responses = answers(engine, ["", "   ", query(maxVisits=2)])
    assert responses[:2] == [{"error": "Empty request line: each line must hold one JSON query object"}] * 2
    assert responses[2]["id"] == "q" and "rootInfo" in responses[2]


def test_a_line_that_is_no_utf8_is_refused_whole_never_changed(engine):
    rest = b'"moves":[],"rules":"chinese","komi":7.5,"boardXSize":9,"boardYSize":9,"maxVisits":2}'
    bad_id = b'{"id":"caf\xe9",' + rest  # a Latin-1 e-acute: no UTF-8
    bad_rules = b'{"id":"intact",' + rest.replace(b"chinese", b"chinese\xff")
    good = '{"id":"caf\u00e9",'.encode() + rest  # the same id in UTF-8
    refused_id, refused_rules, result = byte_answers(engine, [bad_id, bad_rules, good])
    assert set(refused_id) == {"error"} and "not valid UTF-8 (byte 0xE9 at offset 10)" in refused_id["error"]
    assert refused_rules["id"] == "intact" and "byte 0xFF" in refused_rules["error"]  # its id is intact
    assert result["id"] == "caf\u00e9" and "rootInfo" in result  # echoed exactly


def test_a_query_of_a_megabyte_is_answered(engine):
    """KataGo reads a line of any length; 1,000,000 characters were the limit here."""
    ident = "x" * 1_100_000
    game = [["B", "E5"], ["W", "C3"], ["B", "G7"], ["W", "C7"], ["B", "G3"], ["W", "E3"]]
    (result,) = [r for r in byte_answers(engine, [query(ident, moves=game, maxVisits=2).encode()]) if "rootInfo" in r]
    assert result["id"] == ident and result["turnNumber"] == len(game)


def test_a_line_past_the_bound_is_refused_and_the_next_answered(engine, monkeypatch):
    monkeypatch.setattr(analysis, "MAX_QUERY_LINE", 1000)
    too_long, result = byte_answers(engine, [query("y" * 2000).encode(), query(maxVisits=2).encode()])
    assert too_long == {"error": "Request line too long (over 1000 bytes)"} and result["id"] == "q"


# -- reports during the search -------------------------------------------------------------------------

def test_the_next_report_keeps_the_beat_unless_one_came_late():
    assert next_beat(1.0, 0.2, 1.03) == pytest.approx(1.2)  # written a step late: the beat holds
    assert next_beat(1.0, 0.2, 1.3) == pytest.approx(1.5)  # written late (a slow report): 0.2 after it
    assert next_beat(1.0, None, 1.0) == math.inf  # only firstReportDuringSearchAfter: no more reports


def test_reports_slower_than_a_step_still_come_on_the_interval():
    """Each report takes 0.08 s and a search step 0.01 s: written on a 0.2 s beat, not 0.28 s
    apart (the report made ahead of its beat while the search goes on)."""
    clock = ReportClock(time.monotonic(), 0.2, 0.2)
    written: list[float] = []

    def make():
        time.sleep(0.08)
        return {}

    while len(written) < 6:
        time.sleep(max(0.0, min(clock.wake() - time.monotonic(), 0.01)))  # a search step, to the wake-up at most
        clock.tick(make, lambda report: written.append(time.monotonic()))
    gaps = np.diff(written)[1:]  # the first report's cost is not known yet: it comes late, the beat restarts
    assert ((gaps > 0.17) & (gaps < 0.25)).all(), gaps


def test_after_the_warm_up_no_query_compiles(engine, compiled_signatures):
    """What the warm-up runs is what queries run: after the "compiled" line on stderr
    nothing compiles, whatever a query asks (setup stones, passes, a clock, reports)."""
    before = compiled_signatures()
    answers(engine, [query(initialStones=[["W", "A1"]], moves=[["B", "E5"], ["W", "pass"], ["B", "pass"]],
                           maxVisits=30, reportDuringSearchEvery=0.01, includePVVisits=True, includePolicy=True,
                           overrideSettings={"maxTime": 30}),
                     query("plain", maxVisits=8)])
    assert compiled_signatures() == before
