"""KataGo's JSON analysis protocol: queries, responses, errors, priorities, terminate, perspective."""

import io
import json
import os
import queue
import threading
import time

import numpy as np
import pytest
import torch

from stonelab.games.go.rules import BLACK, WHITE, GoRules
from stonelab.models.inference import MovePredictor
from stonelab.models.nets.maddison import MaddisonNet
from stonelab.protocols.analysis import (
    AnalysisEngine,
    QueryError,
    parse_query,
    perspective_sign,
    playout_score,
    turn_roots,
)

SEARCH = {"leaves_per_game": 4, "go": {"leaf_value": "playouts", "leaf_playouts": 1}}
DEFAULTS = {"max_visits": 20, "perspective": "BLACK", "pv_len": 15}


@pytest.fixture(scope="module")
def predictor(one_thread):
    torch.manual_seed(0)
    return MovePredictor(MaddisonNet(36, 9, depth=2, filters=8), GoRules(9), "maddison")


@pytest.fixture(scope="module")
def engine(predictor):
    """A warmed-up engine; each test gives it fresh streams."""
    eng = AnalysisEngine(predictor, SEARCH, max_visits=20, score_playouts=8)
    eng.warm_up()
    return eng


def query(ident="q", **fields):
    base = {"id": ident, "moves": [["B", "E5"], ["W", "C3"]], "rules": "chinese", "komi": 7.5,
            "boardXSize": 9, "boardYSize": 9}
    return json.dumps({**base, **fields})


def answers(engine, lines):
    """The engine's responses to ``lines`` (one JSON object each), read to the end of input."""
    out = io.StringIO()
    engine.closed = False
    engine.run(io.StringIO("".join(line + "\n" for line in lines)), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def queued_then_worked(engine, lines):
    """All ``lines`` read before any is analysed (the order priorities decide), then the answers."""
    out = io.StringIO()
    engine.stdout, engine.closed = out, False
    for line in lines:
        engine.handle_line(line)
    engine.closed = True
    engine.work()
    return [json.loads(line) for line in out.getvalue().splitlines()]


def results(responses):
    return [r for r in responses if "rootInfo" in r]


def test_one_response_per_turn_with_katago_fields(engine):
    out = results(answers(engine, [query(analyzeTurns=[0, 1, 2], maxVisits=12, includePolicy=True)]))
    assert [r["turnNumber"] for r in out] == [0, 1, 2]
    for r in out:
        assert r["id"] == "q" and r["isDuringSearch"] is False
        root = r["rootInfo"]
        assert {"winrate", "scoreLead", "scoreSelfplay", "utility", "visits", "currentPlayer"} <= root.keys()
        assert 1 <= root["visits"] <= 12 and 0 <= root["winrate"] <= 1
        assert r["moveInfos"] and [m["order"] for m in r["moveInfos"]] == list(range(len(r["moveInfos"])))
        for m in r["moveInfos"]:
            assert {"move", "visits", "winrate", "scoreLead", "scoreMean", "scoreStdev", "prior", "utility",
                    "lcb", "order", "pv"} <= m.keys()
            assert m["pv"][0] == m["move"]
        assert len(r["policy"]) == 82 and abs(sum(p for p in r["policy"] if p >= 0) - 1) < 1e-3
    assert [r["rootInfo"]["currentPlayer"] for r in out] == ["B", "W", "B"]
    e5 = 4 * 9 + 4  # E5 is row 4 from the top on 9x9
    assert out[1]["policy"][e5] == -1 and out[2]["policy"][e5] == -1  # occupied: illegal


def test_root_info_gives_the_search_score_and_the_raw_one_beside_it(engine):
    """scoreLead is the searched moves' score weighted by their visits (as GTP's rootInfo);
    rawLead is the root's own estimate, in the same view."""
    for r in results(answers(engine, [query(analyzeTurns=[1, 2], maxVisits=24)])):
        root, moves = r["rootInfo"], [m for m in r["moveInfos"] if m["visits"] > 0]
        weighted = sum(m["visits"] * m["scoreLead"] for m in moves) / sum(m["visits"] for m in moves)
        assert root["scoreLead"] == pytest.approx(weighted, abs=1e-3)
        assert isinstance(root["rawLead"], float)
        assert "rawWinrate" not in root or 0 <= root["rawWinrate"] <= 1


def test_rollouts_mix_the_turns_policy_rollouts_into_the_root_and_leave_the_rest(predictor):
    """analysis.rollouts=3: rootInfo's scoreLead is the searched moves' score mixed with the
    mean end of 3 policy rollouts from the position (Black's view, at ROLLOUT_SHARE); the raw
    numbers and the moves' stay the net's and the search's."""
    from stonelab.models.rollouts import ROLLOUT_SHARE, policy_rollouts
    from stonelab.protocols.analysis import parse_location

    engine = AnalysisEngine(predictor, SEARCH, max_visits=20, score_playouts=8, rollouts=3)
    plain = AnalysisEngine(predictor, SEARCH, max_visits=20, score_playouts=8)
    (r,) = results(answers(engine, [query(maxVisits=24)]))
    (p,) = results(answers(plain, [query(maxVisits=24)]))
    moves = [m for m in r["moveInfos"] if m["visits"] > 0]
    searched = sum(m["visits"] * m["scoreLead"] for m in moves) / sum(m["visits"] for m in moves)
    state = GoRules(9, komi=7.5).new_state().play(parse_location("E5", 9, "m")).play(parse_location("C3", 9, "m"))
    ends = policy_rollouts(predictor, state, rollouts=3)
    assert r["rootInfo"]["scoreLead"] == pytest.approx((1 - ROLLOUT_SHARE) * searched + ROLLOUT_SHARE * ends.mean(), abs=1e-3)
    assert r["rootInfo"]["rawLead"] == p["rootInfo"]["rawLead"]
    assert r["rootInfo"]["lcb"] <= r["rootInfo"]["winrate"]


def test_a_settled_board_mixes_its_count_into_the_root_and_an_open_one_does_not(predictor):
    """count_settled (the default): on a finished 9x9 board (Black fills columns B-C, White D-E,
    a dead white stone on Black's column A) rootInfo's scoreLead is the searched moves' score mixed
    with the board's count (-34.5, Black's view) at the count's weight; rawLead stays the
    net's. In the opening, the searched moves' score alone."""
    from stonelab.models.board_count import settled_count
    from stonelab.protocols.gtp import move_name

    black = [r * 9 + c for r in range(9) for c in (1, 2)]
    white = [r * 9 + c for r in range(9) for c in (3, 4)] + [4 * 9]
    stones = [["B", move_name(p, 9)] for p in black] + [["W", move_name(p, 9)] for p in white]
    counted = AnalysisEngine(predictor, SEARCH, max_visits=20, score_playouts=8)
    plain = AnalysisEngine(predictor, SEARCH, max_visits=20, score_playouts=8, count_settled=False)
    late = query(moves=[], initialStones=stones, initialPlayer="B", maxVisits=16)
    (r,) = results(answers(counted, [late]))
    (p,) = results(answers(plain, [late]))
    count = settled_count(GoRules(9, komi=7.5).new_state().setup(black, white))
    assert count.margin == pytest.approx(-34.5) and count.weight > 0
    moves = [m for m in r["moveInfos"] if m["visits"] > 0]
    searched = sum(m["visits"] * m["scoreLead"] for m in moves) / sum(m["visits"] for m in moves)
    assert r["rootInfo"]["scoreLead"] == pytest.approx((1 - count.weight) * searched + count.weight * -34.5, abs=1e-3)
    assert r["rootInfo"]["rawLead"] == p["rootInfo"]["rawLead"] and r["rootInfo"]["winrate"] < p["rootInfo"]["winrate"]
    (early,) = results(answers(counted, [query(maxVisits=16)]))  # E5, C3: nothing settled
    moves = [m for m in early["moveInfos"] if m["visits"] > 0]
    searched = sum(m["visits"] * m["scoreLead"] for m in moves) / sum(m["visits"] for m in moves)
    assert early["rootInfo"]["scoreLead"] == pytest.approx(searched, abs=1e-3)


@pytest.mark.parametrize("value", ["yes", 1])
def test_a_count_setting_that_is_not_true_or_false_is_refused(predictor, value):
    from stonelab.errors import ConfigError

    with pytest.raises(ConfigError, match="analysis.count_settled"):
        AnalysisEngine(predictor, SEARCH, count_settled=value)


@pytest.mark.parametrize("rollouts", [-1, 2.5, True])
def test_bad_rollouts_are_refused_by_name(predictor, rollouts):
    from stonelab.errors import ConfigError

    with pytest.raises(ConfigError, match="analysis.rollouts"):
        AnalysisEngine(predictor, SEARCH, rollouts=rollouts)


def test_rollouts_need_a_policy_net():
    from stonelab.errors import ConfigError

    class NoPolicy:  # an alphazero Go model's place: a search, no move predictor
        rules = GoRules(9)

    with pytest.raises(ConfigError, match="move predictor"):
        AnalysisEngine(NoPolicy(), SEARCH, rollouts=2)


def test_default_turn_is_the_last_and_moves_may_be_empty(engine):
    out = results(answers(engine, [query(), query("empty", moves=[])]))
    assert [(r["id"], r["turnNumber"]) for r in out] == [("q", 2), ("empty", 0)]


def test_ownership_is_left_out_with_a_warning_when_the_net_has_no_head(engine):
    responses = answers(engine, [query(includeOwnership=True, includeMovesOwnership=True)])
    warnings = [r for r in responses if "warning" in r]
    assert {w["field"] for w in warnings} == {"includeOwnership", "includeMovesOwnership"}
    (result,) = results(responses)
    assert "ownership" not in result and all("ownership" not in m for m in result["moveInfos"])


def test_territory_rules_and_ignored_settings_warn_but_are_answered(engine):
    responses = answers(engine, [query(rules="japanese", overrideSettings={"wideRootNoise": 0.0, "maxTime": 5})])
    assert [r.get("field") for r in responses if "warning" in r] == ["rules", "overrideSettings"]
    assert "wideRootNoise" in [r for r in responses if r.get("field") == "overrideSettings"][0]["warning"]
    assert len(results(responses)) == 1


@pytest.mark.parametrize("fields, field, words", [
    ({"boardXSize": 7, "boardYSize": 7}, "boardXSize", "square boards from 9 to 19, not 7x7"),
    ({"boardYSize": 13}, "boardYSize", "square boards from 9 to 19, not 9x13"),
    ({"moves": [["B", "E5"], ["W", "E5"]]}, "moves", "Illegal move 1: E5"),
    ({"moves": [["B", "Z5"]]}, "moves", "Could not parse board location"),
    ({"moves": [["X", "E5"]]}, "moves", "Must be \"B\" or \"W\""),
    ({"moves": "E5"}, "moves", "Must be an array of pairs"),
    ({"initialStones": [["B", "pass"]]}, "initialStones", "pass is no stone"),
    ({"initialStones": [["B", "A1"], ["W", "A1"]]}, "initialStones", "Two stones on one point"),
    ({"rules": "go-moku"}, "rules", "Could not parse rules"),
    ({"rules": 3}, "rules", "Must specify rules string"),
    ({"komi": 7.3}, "komi", "half-integer"),
    ({"komi": 1e300}, "komi", "half-integer"),
    ({"analyzeTurns": [3]}, "analyzeTurns", "Invalid turn number: 3"),
    ({"analyzeTurns": [True]}, "analyzeTurns", "array of integers"),
    ({"maxVisits": 0}, "maxVisits", "from 1 to 2^50"),
    ({"maxVisits": 2 ** 60}, "maxVisits", "from 1 to 2^50"),
    ({"includePolicy": "yes"}, "includePolicy", "boolean"),
    ({"priority": 2 ** 63}, "priority", "2^62"),
    ({"overrideSettings": []}, "overrideSettings", "object"),
    ({"overrideSettings": {"reportAnalysisWinratesAs": "GREEN"}}, "overrideSettings", "SIDETOMOVE"),
    ({"reportDuringSearchEvery": -1}, "reportDuringSearchEvery", "seconds"),
    ({"avoidMoves": [{"player": "B", "moves": ["D4"]}]}, "avoidMoves", "untilDepth"),
    ({"avoidMoves": [], "allowMoves": []}, "allowMoves", "both"),
])
def test_a_bad_field_gets_one_error_naming_it(engine, fields, field, words):
    responses = answers(engine, [query("bad", **fields)])
    assert len(responses) == 1, responses
    assert responses[0]["id"] == "bad" and responses[0]["field"] == field
    assert words in responses[0]["error"]


@pytest.mark.parametrize("missing", ["moves", "rules", "boardXSize", "boardYSize"])
def test_required_fields(engine, missing):
    fields = json.loads(query())
    del fields[missing]
    (response,) = answers(engine, [json.dumps(fields)])
    assert response["field"] == missing and "error" in response


@pytest.mark.parametrize("line, words", [
    ("not json", "Could not parse input line as json"),
    ("[1, 2]", "not an object"),
    ('{"moves": []}', "string \"id\""),
    ('{"id": 7, "moves": []}', "string \"id\""),
    ("[" * 100_000, "Could not parse input line as json"),
])
def test_lines_without_a_usable_id_get_an_error_without_id(engine, line, words):
    (response,) = answers(engine, [line])
    assert set(response) == {"error"} and words in response["error"]


def test_actions_are_echoed(engine):
    version, cache, unknown = answers(engine, ['{"id":"v","action":"query_version"}',
                                               '{"id":"c","action":"clear_cache"}', '{"id":"u","action":"fly"}'])
    assert version["id"] == "v" and version["action"] == "query_version" and "version" in version
    assert cache == {"id": "c", "action": "clear_cache"}
    assert unknown["id"] == "u" and unknown["field"] == "action" and "error" in unknown


def test_higher_priority_first_ties_in_arrival_order(engine):
    lines = [query("low", priority=-5, maxVisits=2), query("a", maxVisits=2), query("high", priority=9, maxVisits=2),
             query("b", maxVisits=2), query("turns", analyzeTurns=[0, 1], priorities=[1, 20], maxVisits=2)]
    order = [(r["id"], r["turnNumber"]) for r in results(queued_then_worked(engine, lines))]
    assert order == [("turns", 1), ("high", 2), ("turns", 0), ("a", 2), ("b", 2), ("low", 2)]


def test_terminating_a_queued_query_answers_no_results(engine):
    lines = [query("keep", maxVisits=2), query("drop", analyzeTurns=[0, 2], maxVisits=2),
             '{"id":"t","action":"terminate","terminateId":"drop","turnNumbers":[2]}']
    responses = queued_then_worked(engine, lines)
    assert {"id": "drop", "turnNumber": 2, "isDuringSearch": False, "noResults": True} in responses
    assert {"id": "t", "action": "terminate", "terminateId": "drop", "turnNumbers": [2]} in responses
    assert [(r["id"], r["turnNumber"]) for r in results(responses)] == [("keep", 2), ("drop", 0)]


class LineSink:
    """A stdout whose lines a test can wait for, while the engine writes them."""

    def __init__(self):
        self.lines: queue.Queue = queue.Queue()

    def write(self, text):
        for line in text.splitlines():
            self.lines.put(json.loads(line))

    def flush(self):
        pass

    def next(self, timeout=60.0):
        return self.lines.get(timeout=timeout)


def test_terminate_stops_the_running_search_which_reports_what_it_has(engine):
    read_fd, write_fd = os.pipe()
    stdin, feed = os.fdopen(read_fd, "r"), os.fdopen(write_fd, "w")
    sink = LineSink()
    engine.closed = False
    worker = threading.Thread(target=engine.run, args=(stdin, sink), daemon=True)
    worker.start()
    feed.write(query("long", maxVisits=10**9, reportDuringSearchEvery=0.05) + "\n")
    feed.flush()
    first = sink.next()
    assert first["id"] == "long" and first["isDuringSearch"] is True
    feed.write('{"id":"stop","action":"terminate","terminateId":"long"}\n')
    feed.close()
    seen = [sink.next()]
    while not (seen[-1].get("id") == "long" and seen[-1].get("isDuringSearch") is False):
        seen.append(sink.next())
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert {"id": "stop", "action": "terminate", "terminateId": "long"} in seen
    final = seen[-1]
    assert final["rootInfo"]["visits"] >= first["rootInfo"]["visits"] and final["moveInfos"]


def test_during_search_reports_then_one_final_response(engine):
    out = [r for r in answers(engine, [query(maxVisits=200, reportDuringSearchEvery=0.001)]) if "rootInfo" in r]
    assert out[-1]["isDuringSearch"] is False and all(r["isDuringSearch"] for r in out[:-1])
    assert len(out) >= 2


def test_avoid_and_allow_moves_restrict_the_root(engine):
    avoid = ["D4", "E4", "F4", "D6", "E6", "F6", "C5", "G5"]
    (avoided,) = results(answers(engine, [query(moves=[], maxVisits=40, avoidMoves=[
        {"player": "B", "moves": avoid, "untilDepth": 1}])]))
    assert not {m["move"] for m in avoided["moveInfos"]} & set(avoid)
    (allowed,) = results(answers(engine, [query(moves=[], maxVisits=40, allowMoves=[
        {"player": "B", "moves": ["A1", "J9"], "untilDepth": 1}])]))
    assert {m["move"] for m in allowed["moveInfos"]} <= {"A1", "J9"}
    (other,) = results(answers(engine, [query(moves=[], maxVisits=40, allowMoves=[
        {"player": "W", "moves": ["A1"], "untilDepth": 1}])]))  # white's list: black at the root is free
    assert {m["move"] for m in other["moveInfos"]} - {"A1"}


def test_perspective_black_flips_white_to_move_values(engine):
    """White to move: BLACK reports 1 - winrate and -scoreLead of SIDETOMOVE (numba's random
    playouts seeded alike, so the three searches and scores are the same)."""
    from stonelab.search.tree import seed_numba

    def root(perspective):
        seed_numba(1)
        (r,) = results(answers(engine, [query(moves=[["B", "E5"]], maxVisits=30,
                                              overrideSettings={"reportAnalysisWinratesAs": perspective})]))
        return r["rootInfo"]

    black, mover, white = root("BLACK"), root("SIDETOMOVE"), root("WHITE")
    assert black["currentPlayer"] == "W"
    assert black["scoreLead"] == pytest.approx(-mover["scoreLead"]) and white["scoreLead"] == mover["scoreLead"]
    assert black["winrate"] == pytest.approx(1 - mover["winrate"])
    assert perspective_sign("BLACK", WHITE) == -1 and perspective_sign("BLACK", BLACK) == 1
    assert perspective_sign("SIDETOMOVE", WHITE) == 1 and perspective_sign("WHITE", WHITE) == 1


def test_the_shipped_score_net_reports_one_view_whichever_side_is_to_move(repo_root, one_thread):
    """The aux net's scoreLead (BLACK) of black K10 and of K10 with a white pass (the same
    stones, black to move): the pass never helps White and costs White at most a tempo (on
    an open 19x19 board a move is worth about twice the fair komi, ~14 points), and 20
    points of komi either way make a clear position whose win rate and scoreLead favour the
    same side. Rank-0 planes made the scoreLead of these two positions 46 points apart."""
    engine = AnalysisEngine(MovePredictor.from_checkpoint(str(repo_root / "models" / "go19_resnet3x64_kgs_aux.ckpt")),
                            {"leaves_per_game": 4}, max_visits=16)

    def root(moves, komi):
        (r,) = results(answers(engine, [query(moves=moves, komi=komi, boardXSize=19, boardYSize=19)]))
        return r["rootInfo"]

    for komi in (-19.5, 7.5, 19.5):
        white, black = root([["B", "K10"]], komi), root([["B", "K10"], ["W", "pass"]], komi)
        assert 0.0 <= black["scoreLead"] - white["scoreLead"] < 14.0, (komi, white, black)
    for komi, ahead in ((-19.5, 1), (19.5, -1)):  # 1: black ahead
        for moves in ([], [["B", "K10"]]):
            r = root(moves, komi)
            assert ahead * (r["winrate"] - 0.5) > 0 and ahead * r["scoreLead"] > 0, (komi, moves, r)


def test_parse_query_turns_players_and_komi():
    turns, warnings = parse_query(json.loads(query(initialStones=[["B", "C7"], ["B", "G3"]], moves=[],
                                                   rules={"ko": "POSITIONAL", "scoring": "AREA"}, komi=0.5)),
                                  (9,), DEFAULTS, has_ownership=False)
    (turn,) = turns
    assert not warnings
    assert turn.state.to_play == WHITE  # handicap stones: white moves first, as KataGo guesses
    assert turn.state.rules.komi == 0.5 and turn.state.rules.superko
    with pytest.raises(QueryError, match="Illegal move 2"):
        parse_query(json.loads(query(moves=[["B", "E5"], ["W", "pass"], ["W", "E5"]])), (9,), DEFAULTS, False)
    same_colour_twice, _ = parse_query(json.loads(query(moves=[["B", "E5"], ["B", "E6"]])), (9,), DEFAULTS, False)
    assert same_colour_twice[0].state.to_play == WHITE


def test_two_passes_do_not_end_the_analysis(engine):
    (r,) = results(answers(engine, [query(moves=[["B", "E5"], ["W", "pass"], ["B", "pass"]], maxVisits=8)]))
    assert r["rootInfo"]["currentPlayer"] == "W" and r["moveInfos"]


def test_playout_score_is_the_side_to_moves_and_seeded():
    from stonelab.games.go.rules import state_from_rows

    settled = ["XXXXXXXXX", "X.XX.XX.X", "XXXXXXXXX"] * 3  # black everywhere, nine one-point eyes
    assert playout_score(state_from_rows(settled, BLACK, komi=7.5), 8) == (73.5, 0.0)
    assert playout_score(state_from_rows(settled, WHITE, komi=7.5), 8) == (-73.5, 0.0)
    empty = GoRules(9, komi=7.5).new_state()
    lead, spread = playout_score(empty, 16)
    assert playout_score(empty, 16) == (lead, spread) and spread > 0 and np.isfinite(lead)


def test_turn_roots_gives_every_turn_from_the_first_asked(engine):
    moves = [("B", "E5"), ("W", "C3"), ("B", "G7"), ("W", "pass")]
    every = turn_roots(engine, moves, 7.5, n=9)
    late = turn_roots(engine, moves, 7.5, n=9, first=2)
    assert len(every) == 5 and len(late) == 3
    assert [r["currentPlayer"] for r in late] == ["B", "W", "B"]
    picked = turn_roots(engine, moves, 7.5, n=9, turns=[4, 1])  # listed turns only, in turn order
    assert [r["currentPlayer"] for r in picked] == ["W", "B"]
    with pytest.raises(ValueError, match="refused the game"):
        turn_roots(engine, [("B", "E5"), ("W", "E5")], 7.5, n=9)


def test_eof_ends_the_engine_after_the_queued_turns(engine):
    start = time.monotonic()
    out = results(answers(engine, [query("x", maxVisits=4), query("y", maxVisits=4)]))
    assert [r["id"] for r in out] == ["x", "y"] and time.monotonic() - start < 60
