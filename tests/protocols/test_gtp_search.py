"""GTP with search: genmove on a clock, analysis streaming, cleanup, search-free analysis."""

import threading
import time

import numpy as np
import pytest
import torch

from stonelab.errors import ConfigError
from stonelab.games.go.evaluator import GoNetEvaluator
from stonelab.games.go.players import GoSearchPlayer
from stonelab.games.go.rules import GoRules
from stonelab.games.go.search import GoSearch
from stonelab.models.inference import BoardEstimate, MovePredictor
from stonelab.models.nets.maddison import MaddisonNet
from stonelab.protocols.gtp import move_name, parse_vertex
from stonelab.protocols.gtp_search import (
    ResignRule,
    SearchGTPEngine,
    cleanup_move,
    search_gtp_engine,
)
from stonelab.protocols.katago_fields import position_hashes
from stonelab.protocols.warmup import Background, CompileNotice
from stonelab.search.mcts import MCTSConfig

RULES = GoRules(9)


@pytest.fixture(scope="module")
def predictor(one_thread):
    torch.manual_seed(0)
    return MovePredictor(MaddisonNet(36, 9, depth=2, filters=8), RULES, "maddison")


def engine(predictor, playouts=40, max_nodes=4000, **kwargs):
    player = None
    if playouts:
        config = MCTSConfig(playouts=playouts, leaves_per_game=4)
        search = GoSearch(RULES, max_moves=3 * RULES.num_points)
        player = GoSearchPlayer(RULES, GoNetEvaluator(predictor, search, "playouts", 1), config,
                                max_nodes=max_nodes)
    return SearchGTPEngine(9, lambda states, histories: predictor.play_moves(states, histories=histories),
                           player, priors=lambda s: predictor.probabilities([s])[0], playouts=playouts,
                           **kwargs)


def run_lines(eng, lines, pause_after=None, pause=0.0):
    """The engine's whole output for ``lines``, waiting ``pause`` seconds after line ``pause_after``."""
    import io

    class SlowStdin:
        """Lines as a controller sends them: a pause after line ``pause_after``."""

        def __init__(self):
            self.lines = iter(enumerate(lines))

        def readline(self, limit=-1):
            i, line = next(self.lines, (None, ""))
            if i is not None and i - 1 == pause_after:
                time.sleep(pause)
            return line + "\n" if i is not None else ""

    out = io.StringIO()
    eng.run(stdin=SlowStdin(), stdout=out)
    return out.getvalue()


def test_genmove_plays_a_legal_searched_move_and_keeps_the_tree(predictor):
    eng = engine(predictor)
    assert eng.respond("1 genmove b").startswith("=1 ")
    assert eng.player.root_visit_total > 0  # the subtree under the move played is kept
    eng.respond("play w E5")
    assert eng.player.sync(eng.state)
    assert eng.respond("undo") == "=\n\n"
    assert not eng.player.sync(eng.state)  # a position that is not one move on: a fresh tree


def test_root_moves_are_the_legal_board_moves_while_points_are_open(predictor):
    eng = engine(predictor, playouts=200)
    # A ko: white just captured at E5; black may not retake at D5 at once.
    for colour, vertex in [("b", "D6"), ("b", "C5"), ("b", "D4"), ("w", "E6"), ("w", "F5"), ("w", "E4"),
                           ("b", "E5"), ("w", "D5")]:
        assert eng.respond(f"play {colour} {vertex}") == "=\n\n", vertex
    state = eng._position_for(1)
    eng.think(1)
    moves = {info.move for info in eng.player.analysis()}
    legal = set(np.flatnonzero(state.legal_mask()))
    assert moves == legal - {81}  # no pass: most of the board is still to be played for
    assert parse_vertex("E5", 9) not in moves


def test_genmove_never_runs_past_the_clock(predictor):
    eng = engine(predictor, playouts=100_000, max_nodes=20_000)
    eng.respond("time_settings 10 0 0")
    eng.respond("genmove b")  # compiles and warms up, within 10 s / 20 moves
    eng.respond("time_left w 2 0")
    start = time.monotonic()
    assert eng.respond("genmove w").startswith("= ")
    assert time.monotonic() - start < 2.0 - 0.5  # 2 s left, 0.5 s margin: the search took ~0.1 s
    assert eng.player.root_visit_total < 100_000


def test_seconds_limit_stops_the_search(predictor):
    eng = engine(predictor, playouts=100_000, max_nodes=20_000, seconds=0.2)
    eng.respond("genmove b")
    start = time.monotonic()
    eng.respond("genmove w")
    assert time.monotonic() - start < 1.5


def test_clock_commands_reject_garbage(predictor):
    eng = engine(predictor, playouts=0)
    for line in ["time_settings 1 2", "time_settings a b c", "time_settings 1 2 inf", "time_left b -3 0",
                 "time_left x 3 0", "kgs-time_settings hourglass 3", "kgs-time_settings byoyomi 1",
                 "time_settings ١ 2 3"]:
        assert eng.respond(line).startswith("? "), line
    assert eng.respond("kgs-time_settings canadian 600 30 10") == "=\n\n"


def test_lz_analyze_streams_until_the_next_command(predictor):
    eng = engine(predictor)
    out = run_lines(eng, ["7 lz-analyze b 10", "8 name"], pause_after=0, pause=0.5)
    head, rest = out.split("\n", 1)
    assert head == "=7"
    analysis, after = rest.split("\n\n", 1)
    lines = analysis.splitlines()
    assert len(lines) >= 2  # one line per 0.1 s interval
    assert all(line.startswith("info move ") for line in lines)
    fields = lines[-1].split(" info ")[0].split()
    assert fields[fields.index("visits") + 1].isdigit() and 0 <= int(fields[fields.index("winrate") + 1]) <= 10000
    assert {"prior", "lcb", "order", "pv"} <= set(fields)
    assert after == "=8 stonelab\n\n"


def test_kata_analyze_uses_floats_and_reports_ownership(predictor):
    eng = engine(predictor, estimates=lambda states: [BoardEstimate(None, None, None, np.linspace(-1, 1, 81))
                                                      for _ in states])
    out = run_lines(eng, ["kata-analyze w interval 10 maxmoves 2 ownership true", ""], pause_after=0, pause=0.3)
    line = out.split("\n")[1]
    assert line.count("info move") <= 2
    winrate = float(line.split("winrate ")[1].split()[0])
    assert 0.0 <= winrate <= 1.0
    assert len(line.split(" ownership ")[1].split()) == 81
    assert out.endswith("\n\n")


def test_genmove_analyze_ends_with_the_move_played(predictor):
    eng = engine(predictor)
    out = run_lines(eng, ["3 lz-genmove_analyze b 5"])
    assert out.startswith("=3\n")
    last = out.rstrip("\n").splitlines()[-1]
    assert last.startswith("play ")
    assert eng.state.board.any()


def test_a_search_free_model_answers_analysis_with_its_priors(predictor):
    eng = engine(predictor, playouts=0)
    out = run_lines(eng, ["lz-analyze 10", "name"], pause_after=0, pause=0.15)
    line = out.split("\n")[1]
    assert line.startswith("info move ") and " visits 0 " in line
    priors = [int(x) for x in line.split(" prior ")[1:] for x in [x.split()[0]]]
    assert priors == sorted(priors, reverse=True) and priors[0] > 0


def test_bad_analysis_arguments_fail_before_streaming(predictor):
    eng = engine(predictor)
    for line in ["lz-analyze b x", "kata-analyze interval", "lz-analyze avoid b D4", "kata-analyze maxmoves -1",
                 "kata-analyze avoid x D4 1", "kata-analyze avoid b Z9 1", "kata-analyze allow b D4 -1",
                 "kata-analyze ownership maybe", "lz-genmove_analyze b avoid b , 1"]:
        assert eng.respond(line).startswith("? "), line
        assert eng.stream is None


def test_resign_when_the_win_rate_stays_low(predictor):
    eng = engine(predictor, playouts=60, resign=ResignRule(below=0.999, moves=2, min_visits=1))
    answers = [eng.respond(f"genmove {c}") for c in "bw"]
    assert answers[0] != "= resign\n\n" and answers[1] == "= resign\n\n"


def settled_stones(open_f1: bool = False) -> tuple[list[int], list[int]]:
    """A finished 9x9 game: black's wall on column E owns the open left side; white fills
    F-J but for single-point eyes on column J (F1 left open with ``open_f1``)."""
    black = [r * 9 + 4 for r in range(9)]
    white = [r * 9 + c for r in range(9) for c in range(5, 9) if not (c == 8 and r % 2 == 0)]
    if open_f1:
        white.remove(8 * 9 + 5)
    return black, white


def test_cleanup_captures_dead_stones_before_passing():
    black, white = settled_stones()
    state = RULES.new_state()
    state.setup(black, white + [parse_vertex("B5", 9)])  # a lone white stone in black's area
    move = cleanup_move(state, np.ones(82))
    # The only open region is black's left side around the dead stone (it touches both
    # colours); white's eyes are too small to invade.
    assert move != 81 and state.board[move] == 0 and move % 9 < 4
    settled = RULES.new_state()
    settled.setup(black, white)
    assert cleanup_move(settled, np.ones(82)) == 81  # nothing open left: pass


def test_without_search_it_answers_a_pass_with_a_pass_once_no_point_is_open(predictor):
    eng = engine(predictor, playouts=0)
    black, white = settled_stones()
    eng.respond("clear_board")
    eng.state.setup(black, white)
    assert eng.respond("genmove b") != "= pass\n\n"  # no pass to answer: it plays on (inside its own area)
    eng.respond("clear_board")
    eng.state.setup(black, white)
    eng.respond("play w pass")
    assert eng.respond("genmove b") == "= pass\n\n"  # white passed, nothing open: the game ends
    eng.respond("clear_board")
    eng.state.setup(*settled_stones(open_f1=True))  # F1 touches both colours: a neutral point
    eng.respond("play w pass")
    assert eng.respond("genmove b") == "= F1\n\n"


def test_a_belief_vit_searches_with_its_value_and_reports_its_ownership(one_thread):
    from stonelab.models.nets.belief_vit import BeliefViT

    torch.manual_seed(0)
    vit = MovePredictor(BeliefViT(4, 9, embed_dim=16, heads=2, layers=1, ff_dim=32, belief_hidden=16),
                        RULES, "simple4")
    eng = search_gtp_engine(vit, {"playouts": 16, "leaves_per_game": 4})
    assert eng.player.evaluator.value == "net"  # auto: the model has a value output
    out = run_lines(eng, ["kata-analyze b interval 5 ownership true", "name"], pause_after=0, pause=0.2)
    line = out.split("\n")[1]
    owner = [float(v) for v in line.split(" ownership ")[1].split()]
    assert len(owner) == 81 and all(-1 <= v <= 1 for v in owner) and len(set(owner)) > 1


def test_absurd_numbers_are_refused_or_harmless_never_an_internal_error(predictor):
    """``lz-analyze b <400 nines>`` answered "? internal error ... OverflowError": int / 100
    of 309+ digits overflows a float."""
    nines = "9" * 400
    eng = engine(predictor, playouts=16)
    for command in ("lz-analyze", "kata-analyze", "lz-genmove_analyze", "kata-genmove_analyze"):
        assert eng.respond(f"{command} b {nines}") == "? interval too large (400 digits)\n\n"
        assert eng.respond(f"{command} b interval {nines}") == "? interval too large (400 digits)\n\n"
        assert eng.respond(f"{command} b maxmoves {nines}") == "? maxmoves too large (400 digits)\n\n"
    assert eng.respond(f"lz-analyze {nines}") == "? interval too large (400 digits)\n\n"
    assert eng.stream is None  # nothing left to stream
    for line in (f"time_settings {nines} 1 1", f"time_left b 1 {nines}", f"kgs-time_settings absolute {nines}"):
        assert eng.respond(line).startswith("? ") and "is not a number" in eng.respond(line), line
    # the largest numbers the clock takes are harmless: the moves still come, searched
    for line in ("time_settings 1e308 1e308 1e308", "time_left b 1e308 1e308",
                 "kgs-time_settings byoyomi 1e308 1e308 1e308", "kgs-time_settings canadian 1 1 1e308",
                 "time_left w 1e-300 1e308"):
        assert eng.respond(line) == "=\n\n", line
        assert eng.respond("genmove b").startswith("= ") and eng.respond("genmove w").startswith("= "), line


def test_while_the_search_compiles_moves_come_from_the_net_alone(predictor):
    eng = engine(predictor, playouts=0)
    eng.playouts = 40
    searched = engine(predictor, playouts=40).player
    release = threading.Event()
    eng.search_when_ready(Background(lambda: release.wait(60) and (lambda: searched)), compiling=lambda: True)
    net_move = predictor.play_moves([RULES.new_state()])[0]
    assert eng.respond("genmove b") == f"= {move_name(net_move, 9)}\n\n" and eng.player is None
    assert eng.respond("name") == "= stonelab\n\n"  # the protocol is answered all along
    release.set()
    eng.pending_player.wait(60)
    assert eng.respond("genmove w").startswith("= ") and eng.player is searched
    assert searched.root_visit_total > 0 and eng.pending_player is None


def test_while_the_search_loads_from_the_cache_a_move_waits_for_it(predictor):
    """A warm start (numba's cache) takes a second or two: the first move is searched, as
    it was when the engine loaded everything before answering."""
    eng = engine(predictor, playouts=0)
    eng.playouts = 40
    searched = engine(predictor, playouts=40).player
    eng.search_when_ready(Background(lambda: time.sleep(0.3) or (lambda: searched)), compiling=lambda: False)
    assert eng.respond("genmove b").startswith("= ") and eng.player is searched
    assert searched.root_visit_total > 0


def test_a_failed_warm_up_ends_the_engine_as_a_failed_start_would(predictor):
    def refused():
        raise ConfigError("go.leaf_value=net: this checkpoint's net has no value output")

    eng = engine(predictor, playouts=0)
    eng.search_when_ready(Background(refused), compiling=lambda: True)
    eng.pending_player.wait(60)
    with pytest.raises(ConfigError, match="no value output"):
        eng.respond("genmove b")


def test_the_background_warm_up_compiles_what_the_searched_game_runs(predictor, compiled_signatures):
    """What the thread warms is what the engine then runs (same kernels, same types): nothing
    compiles in a move afterwards, with or without a clock, after a pass, or analysing."""
    eng = search_gtp_engine(predictor, {"playouts": 16, "leaves_per_game": 4, "go": {"leaf_playouts": 1}},
                            background=CompileNotice("not installed: says nothing"))
    assert eng.player is None and eng.pending_player is not None
    assert eng.pending_player.wait(600)
    before = compiled_signatures()
    for line in ("genmove b", "genmove w", "time_settings 60 0 0", "genmove b", "play w pass", "genmove b",
                 "kgs-genmove_cleanup w"):
        assert eng.respond(line).startswith("="), line
    assert eng.player is not None and eng.player.root_visit_total > 0
    out = run_lines(eng, ["lz-analyze b 5", "name"], pause_after=0, pause=0.2)
    assert "info move" in out
    assert compiled_signatures() == before


def test_search_free_engines_warm_up_too(predictor):
    eng = search_gtp_engine(predictor, {"playouts": 0}, background=CompileNotice("not installed"))
    assert eng.pending_player.wait(600)
    assert eng.respond("genmove b").startswith("= ") and eng.player is None and eng.pending_player is None



# -- analysis as GUIs read it (KataGo's GTP extensions)
LISTS = ("pv", "pvVisits", "pvEdgeVisits", "movesOwnership", "movesOwnershipStdev")  # in an info entry
TOP_LISTS = ("ownership", "ownershipStdev")  # after the entries


def parse_kata(line: str) -> tuple[list[dict], dict | None, list[float] | None]:
    """A kata-analyze line back into its ``info`` entries (``LISTS`` as lists), its
    ``rootInfo`` fields and its ``ownership`` values (`top_list` reads the others)."""
    tokens, infos, root, owner, current, i = line.split(), [], None, None, None, 0
    while i < len(tokens):
        word = tokens[i]
        if word in ("info", "rootInfo"):
            current = {}
            infos.append(current) if word == "info" else None
            root = current if word == "rootInfo" else root
            i += 1
        elif word in (*LISTS, *TOP_LISTS):
            j = i + 1
            while j < len(tokens) and tokens[j] not in ("info", "rootInfo", *LISTS, *TOP_LISTS):
                j += 1
            if word == "ownership":
                owner = [float(v) for v in tokens[i + 1:j]]
            elif word in LISTS:
                current[word] = tokens[i + 1:j]
            i = j
        else:
            current[word], i = tokens[i + 1], i + 2
    return infos, root, owner


def top_list(line: str, key: str) -> list[float] | None:
    """The numbers after ``key`` (one of ``TOP_LISTS``) on a kata-analyze line, None without it."""
    tokens = line.split()
    if key not in tokens:
        return None
    rest = tokens[tokens.index(key) + 1:]
    return [float(v) for v in rest[:next((k for k, v in enumerate(rest) if v in TOP_LISTS), len(rest))]]


def analysis_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("info ")]


def stone_counting(states):
    """A fake net with every head: the side to move's stones count +1, the other's -1."""
    return [BoardEstimate(0.6, float((s.board * s.to_play).sum()) + 0.5, 12.0,
                          (s.board * s.to_play).astype(np.float32)) for s in states]


def test_kata_analyze_reports_scores_root_info_and_ownership_as_katago(predictor):
    eng = engine(predictor, estimates=stone_counting)
    out = run_lines(eng, ["play b A9", "kata-analyze w 5 ownership true movesOwnership true rootInfo true",
                          "stop"], pause_after=1, pause=0.4)
    assert out.startswith("=\n\n=\n") and out.endswith("\n\n=\n\n")  # stop ends the stream, then answers
    infos, root, owner = parse_kata(analysis_lines(out)[-1])
    assert infos and [int(i["order"]) for i in infos] == list(range(len(infos)))
    for info in infos:
        assert "." in info["winrate"] and 0 <= float(info["winrate"]) <= 1
        # white's move: black then leads by 1 - 1 + 0.5 stones, -0.5 from white's view
        assert info["scoreLead"] == info["scoreMean"] == "-0.5" and info["scoreStdev"] == "12.0"
        assert -1.1 < float(info["utility"]) < 1.1 and float(info["lcb"]) <= float(info["winrate"])
        assert info["pv"][0] == info["move"] and all(parse_vertex(m, 9) < 82 for m in info["pv"])
        after = [float(v) for v in info["movesOwnership"]]
        assert len(after) == 81 and after[0] == -1.0 and after[parse_vertex(info["move"], 9)] == 1.0
    assert len(owner) == 81 and all(-1 <= v <= 1 for v in owner)
    assert owner[0] == -1.0 and not any(owner[1:])  # row by row from A9: black's A9, white's view
    assert int(root["visits"]) > 0 and root["scoreLead"] == "-0.5" and root["currentPlayer"] == "W"


def test_kata_analyze_reports_edge_and_pv_visits_and_the_roots_lcb_and_hashes(predictor):
    eng = engine(predictor, estimates=stone_counting)
    out = run_lines(eng, ["play b C3", "kata-analyze w 5 pvVisits true pvEdgeVisits true rootInfo true", "stop"],
                    pause_after=1, pause=0.4)
    infos, root, _ = parse_kata(analysis_lines(out)[-1])
    for info in infos:
        visits = [int(v) for v in info["pvVisits"]]
        assert info["edgeVisits"] == info["visits"]  # a tree: one edge into each child
        assert len(visits) == len(info["pv"]) and visits[0] == int(info["visits"]) and visits == sorted(visits)[::-1]
        assert info["pvEdgeVisits"] == info["pvVisits"]
    assert any(len(info["pv"]) > 1 for info in infos)
    assert float(root["lcb"]) <= float(root["winrate"])  # GTP reports for the side to move
    assert (root["thisHash"], root["symHash"]) == position_hashes(eng._position_for(-1))
    mirrored = RULES.new_state().setup([parse_vertex("G3", 9)], [])
    mirrored.to_play = -1
    assert position_hashes(mirrored)[1] == root["symHash"] and position_hashes(mirrored)[0] != root["thisHash"]


def test_kata_analyze_ownership_stdev_is_the_spread_over_the_search(predictor):
    """With stones owning their points (`stone_counting`) maps differ only where a searched
    move puts a stone: a share q of the weight (1 for the position itself, each move its
    visits) owns it there, a spread of sqrt(q (1 - q)); a move's own spread is over its
    replies, q the best reply's share of the move's visits."""
    eng = engine(predictor, max_nodes=20_000, estimates=stone_counting)
    out = run_lines(eng, ["play b A9", "kata-analyze w 5 minmoves 81 ownership true ownershipStdev true "
                          "movesOwnershipStdev true pvVisits true", "stop"], pause_after=1, pause=0.3)
    line = analysis_lines(out)[-1]
    searched = [info for info in parse_kata(line)[0] if int(info["visits"]) > 0]
    total = 1 + sum(int(info["visits"]) for info in searched)
    expected = np.zeros(81)
    for info in searched:
        q = int(info["visits"]) / total
        expected[parse_vertex(info["move"], 9)] = np.sqrt(q * (1 - q))
    assert top_list(line, "ownershipStdev") == pytest.approx(expected, abs=1e-5)
    for info in searched:
        spread = np.array([float(v) for v in info["movesOwnershipStdev"]])
        assert spread[parse_vertex(info["move"], 9)] == 0 and spread[0] == 0  # its stone, black's A9: all agree
        if len(info["pv"]) > 1:
            q = int(info["pvVisits"][1]) / int(info["pvVisits"][0])
            assert spread[parse_vertex(info["pv"][1], 9)] == pytest.approx(np.sqrt(q * (1 - q)), abs=1e-5)
        else:
            assert not spread.any()


def corner_counting(states):
    """A fake net whose score depends on where the stones are: the side to move's stones
    in the left half count +1 each, its opponent's -2 each (raw root: 0.25 a stone)."""
    out = []
    for s in states:
        left = (s.board.reshape(9, 9)[:, :4] * s.to_play)
        score = float(left[left > 0].sum() + 2 * left[left < 0].sum()) + 0.25
        out.append(BoardEstimate(0.6, score, 3.0, None))
    return out


def test_root_info_reports_the_search_score_and_the_raw_one_beside_it(predictor):
    """rootInfo's scoreLead is the searched moves' score weighted by their visits, as the JSON
    engine's; rawLead and rawWinrate are the net's own for the root."""
    eng = engine(predictor, estimates=corner_counting)
    out = run_lines(eng, ["kata-analyze b 5 rootInfo true minmoves 81", "name"], pause_after=0, pause=0.4)
    infos, root, _ = parse_kata(analysis_lines(out)[-1])
    searched = [(int(i["visits"]), float(i["scoreLead"])) for i in infos if int(i["visits"]) > 0]
    expected = sum(v * lead for v, lead in searched) / sum(v for v, _ in searched)
    assert float(root["scoreLead"]) == pytest.approx(expected, abs=0.01)
    assert root["rawLead"] == "0.25" and root["rawWinrate"] == "0.6"
    assert {lead for _, lead in searched} != {0.25}  # the moves' scores differ from the raw one


def test_root_info_mixes_in_the_rollouts_of_the_position_once(predictor):
    """With rollouts (analysis.rollouts > 0), rootInfo's scoreLead is the searched moves'
    score mixed with the mean of the position's rollout ends (the mover's view, at
    ROLLOUT_SHARE), the rollouts played once however many lines are reported; rawLead stays."""
    from stonelab.models.rollouts import ROLLOUT_SHARE

    played = []

    def rollouts(state):  # Black's margins: White (to move) wins both by 20
        played.append(state.hash)
        return np.array([-20.0, -20.0])

    eng = engine(predictor, estimates=corner_counting, rollouts=rollouts)
    out = run_lines(eng, ["play b E5", "kata-analyze w 5 rootInfo true minmoves 81", "name"], pause_after=1, pause=0.4)
    lines = analysis_lines(out)
    infos, root, _ = parse_kata(lines[-1])
    searched = [(int(i["visits"]), float(i["scoreLead"])) for i in infos if int(i["visits"]) > 0]
    expected = sum(v * lead for v, lead in searched) / sum(v for v, _ in searched)
    assert float(root["scoreLead"]) == pytest.approx((1 - ROLLOUT_SHARE) * expected + ROLLOUT_SHARE * 20.0, abs=0.01)
    assert float(root["winrate"]) >= ROLLOUT_SHARE and root["rawLead"] == "0.25"
    assert ROLLOUT_SHARE <= float(root["lcb"]) <= float(root["winrate"])  # the bound moves with the win rate
    assert len(lines) > 1 and len(played) == 1


def test_root_info_mixes_in_the_count_of_a_settled_board(predictor):
    """With count_settled, kata-analyze's rootInfo on a finished board (Black fills columns B-C,
    White D-E, a dead white stone on Black's column A) is the searched moves' score mixed with the
    board's count (Black 27, White 54, komi 7.5) in the mover's view; rawLead stays the net's."""
    from stonelab.models.board_count import settled_count

    black = [r * 9 + c for r in range(9) for c in (1, 2)]
    white = [r * 9 + c for r in range(9) for c in (3, 4)] + [4 * 9]
    plays = [f"play b {move_name(p, 9)}" for p in black] + [f"play w {move_name(p, 9)}" for p in white]
    eng = engine(predictor, estimates=corner_counting, count_settled=True)
    out = run_lines(eng, [*plays, "kata-analyze w 5 rootInfo true minmoves 81", "name"],
                    pause_after=len(plays), pause=0.4)
    infos, root, _ = parse_kata(analysis_lines(out)[-1])
    searched = [(int(i["visits"]), float(i["scoreLead"])) for i in infos if int(i["visits"]) > 0]
    expected = sum(v * lead for v, lead in searched) / sum(v for v, _ in searched)
    state = RULES.new_state().setup(black, white)
    state.to_play = -1
    count = settled_count(state)
    assert count.margin == pytest.approx(27 - 54 - 7.5) and count.weight > 0
    assert float(root["scoreLead"]) == pytest.approx((1 - count.weight) * expected + count.weight * 34.5, abs=0.01)
    assert float(root["rawLead"]) == pytest.approx(corner_counting([state])[0].score_lead)
    assert float(root["lcb"]) <= float(root["winrate"])


def test_fields_a_net_does_not_have_are_left_out(predictor):
    eng = engine(predictor, estimates=predictor.estimates)  # maddison_cnn: a policy and nothing else
    out = run_lines(eng, ["kata-analyze 5 ownership true movesOwnership true rootInfo true", "name"],
                    pause_after=0, pause=0.3)
    line = analysis_lines(out)[-1]
    infos, root, owner = parse_kata(line)
    assert infos and root is not None and owner is None
    assert not {"scoreLead", "scoreMean", "utility", "movesOwnership"} & {k for i in [*infos, root] for k in i}
    assert 0 <= float(root["winrate"]) <= 1 and root["currentPlayer"] == "B"


def test_avoided_moves_never_appear_and_allow_keeps_only_its_moves(predictor):
    eng = engine(predictor)
    avoided = {"E5", "D5", "E4", "C3", "G7"}
    out = run_lines(eng, [f"kata-analyze b 5 avoid b {','.join(avoided).lower()} 1 avoid w A1 1 minmoves 80",
                          "name"], pause_after=0, pause=0.4)
    shown = {info["move"] for line in analysis_lines(out) for info in parse_kata(line)[0]}
    assert len(shown) > 50 and not shown & avoided and "A1" in shown  # white's rule is not black's
    assert eng.player.root_key is None  # the restricted tree is not the game's: the next move starts afresh
    out = run_lines(eng, ["lz-analyze b 5 allow b E5,D4 1", "name"], pause_after=0, pause=0.3)
    assert {info["move"] for line in analysis_lines(out) for info in parse_kata(line)[0]} == {"E5", "D4"}
    assert eng.respond("genmove b").startswith("= ")


def test_analysis_searches_on_past_the_playouts_until_the_next_command(predictor):
    """search.playouts=8 and a tree of 64 nodes: the analysis prunes the tree and goes on."""
    eng = engine(predictor, playouts=8, max_nodes=64)
    out = run_lines(eng, ["kata-analyze b 5 rootInfo true", "name"], pause_after=0, pause=2.0)
    lines = analysis_lines(out)
    visits = [int(parse_kata(line)[1]["visits"]) for line in lines]
    assert visits == sorted(visits) and visits[-1] > 10 * 64
    infos = parse_kata(lines[-1])[0]
    assert len(infos) <= 20  # the default cuts: not every move the search touched
    assert all(int(i["visits"]) >= 0.01 * int(infos[0]["visits"]) for i in infos)


def test_minmoves_and_maxmoves_override_the_default_cuts(predictor):
    eng = engine(predictor)
    out = run_lines(eng, ["kata-analyze b 5 minmoves 30", "kata-analyze b 5 maxmoves 3", "name"],
                    pause_after=0, pause=0.3)
    first, second = out.split("\n\n")[:2]
    assert {len(parse_kata(line)[0]) for line in analysis_lines(first)} == {30}
    assert max(len(parse_kata(line)[0]) for line in analysis_lines(second)) <= 3


def test_genmove_analyze_plays_for_the_side_to_move_without_a_colour(predictor):
    eng = engine(predictor)
    out = run_lines(eng, ["kata-genmove_analyze 5", "lz-genmove_analyze interval 5"])
    plays = [line.split()[1] for line in out.splitlines() if line.startswith("play ")]
    assert len(plays) == 2
    assert eng.state.board[parse_vertex(plays[0], 9)] == 1 and eng.state.board[parse_vertex(plays[1], 9)] == -1


@pytest.mark.parametrize("aux_heads", [False, True])
def test_a_real_alphazero_checkpoint_reports_what_its_heads_give(tmp_path, tiny_alphazero_go_checkpoint, aux_heads,
                                                                  one_thread):
    from stonelab.models.alphazero_go import go_model_from_checkpoint

    model = go_model_from_checkpoint(str(tiny_alphazero_go_checkpoint(tmp_path / "az.ckpt", aux_heads=aux_heads)))
    eng = search_gtp_engine(model, {"playouts": 16, "leaves_per_game": 4})
    out = run_lines(eng, ["kata-analyze b 5 ownership true rootInfo true", "name"], pause_after=0, pause=0.3)
    infos, root, owner = parse_kata(analysis_lines(out)[-1])
    assert infos and int(root["visits"]) > 0
    assert (owner is not None) == aux_heads and (owner is None or len(owner) == 81)
    has_score = getattr(model, "estimates", None) is not None and aux_heads
    assert ("scoreLead" in infos[0]) == has_score


def test_gtp_komi_reaches_the_nets_score_and_the_search(tmp_path, tiny_maddison_checkpoint, one_thread):
    aux = MovePredictor.from_checkpoint(str(tiny_maddison_checkpoint(tmp_path / "aux.ckpt", aux_heads=True)))
    eng = search_gtp_engine(aux, {"playouts": 16, "leaves_per_game": 4})
    assert eng.respond("komi 0.5").startswith("=")
    low = aux.estimates([eng.state])[0]
    assert eng.respond("komi 20.5").startswith("=")
    high = aux.estimates([eng.state])[0]
    assert eng.state.rules.komi == 20.5 and eng.player.game.spec.komi == 20.5
    assert high.score_lead == pytest.approx(low.score_lead - 20.0, abs=1e-3)  # black to move gives the komi
    assert eng.respond("genmove b").startswith("= ")  # the search goes on with the new komi
    assert eng.respond("clear_board").startswith("=") and eng.state.rules.komi == 20.5


@pytest.mark.parametrize("playouts", [0, 16])
def test_boardsize_moves_a_convolutional_net_to_every_board_from_9_to_19(predictor, playouts, tmp_path):
    """Sabaki's and Lizzie's board sizes: one 9x9 net plays 13x13 and 19x19 (resized once per
    size), analyses there, comes back to 9x9, and refuses a board Go's rules do not take."""
    eng = search_gtp_engine(predictor, {"playouts": playouts, "leaves_per_game": 4, "go": {"leaf_playouts": 1}})
    for n in (13, 19, 9):
        assert eng.respond(f"boardsize {n}").startswith("=") and eng.respond("clear_board").startswith("=")
        move = eng.respond("genmove b").strip("= \n")
        assert parse_vertex(move, n) < n * n, (n, move)
        assert eng.state.n == n and eng.respond("showboard").count("\n") >= n
        if playouts:
            assert eng.player.rules.n == n
    assert eng.respond("boardsize 7").startswith("? unacceptable size")
    assert eng.respond("boardsize 25").startswith("? unacceptable size") and eng.state.n == 9
    sgf = tmp_path / "thirteen.sgf"
    sgf.write_text("(;GM[1]FF[4]SZ[13]KM[6.5];B[dd];W[jj])")
    assert eng.respond(f"loadsgf {sgf}").startswith("=") and eng.state.n == 13 and eng.state.move_number == 2


def test_boardsize_of_a_net_tied_to_its_board_is_unacceptable(one_thread):
    from stonelab.models.nets.belief_vit import BeliefViT

    torch.manual_seed(0)
    vit = MovePredictor(BeliefViT(4, 9, embed_dim=16, heads=2, layers=1, ff_dim=32, belief_hidden=16),
                        RULES, "simple4")
    eng = search_gtp_engine(vit, {"playouts": 0})
    assert eng.respond("boardsize 13").startswith("? unacceptable size") and eng.state.n == 9
    assert eng.respond("boardsize 9").startswith("=")
