"""The GTP referee: endings, forfeits, how a game is counted, alternating colours, SGF, and task=gtp_match."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys

import pytest
import torch

from stonelab.arena.gtp_match import (
    REASONS,
    SCORED_BY,
    GTPGame,
    game_sgf,
    gtp_match,
    model_player,
    play_gtp_game,
    write_sgf,
)
from stonelab.data.sgf import read_games
from stonelab.errors import StonelabError
from stonelab.games.go.rules import BLACK, WHITE, GoRules
from stonelab.models.inference import MovePredictor
from stonelab.models.nets.maddison import MaddisonNet
from stonelab.protocols.gtp import parse_vertex
from stonelab.protocols.gtp_client import GTPClient, GTPCommands, GTPFailure

RULES = GoRules(9, komi=7.5)
GNUGO = shutil.which("gnugo") or ("/usr/games/gnugo" if os.path.exists("/usr/games/gnugo") else None)

# A 9x9 game that ends with a dead white stone on the board: black walls off columns A-E, white
# F-J, white plays B5 inside black's area and both pass. Plain count: black's area touches B5, so
# only stones count there: 9 - 37 - 7.5 = W+35.5. With B5 off the board: 45 - 36 - 7.5 = B+1.5.
WALLS_BLACK = [f"E{row}" for row in range(9, 0, -1)] + ["pass", "pass"]
WALLS_WHITE = [f"F{row}" for row in range(9, 0, -1)] + ["B5", "pass"]
CAPTURE_B5 = ["A5", "C5", "B4", "B6"]  # black's cleanup moves: the last one takes B5


class Scripted(GTPCommands):
    """An in-process side that answers genmove from a list (then passes) and records what it is told.

    knows: the optional commands it lists (final_status_list, kgs-genmove_cleanup, final_score);
    dead: its final_status_list answer; stops_after_passes: it refuses every move and genmove once
    two passes in a row have been played (an engine that cannot play on).
    """

    def __init__(self, label: str, moves=(), *, refuse_play: bool = False, score: str | None = None,
                 knows=(), dead: str = "", cleanup=(), stops_after_passes: bool = False):
        self.label, self.moves, self.refuse_play, self.score = label, list(moves), refuse_play, score
        self.knows, self.dead, self.cleanup = set(knows) | ({"final_score"} if score else set()), dead, list(cleanup)
        self.stops_after_passes, self.passes = stops_after_passes, 0
        self.sent: list[str] = []

    def send(self, command: str) -> str:
        self.sent.append(command)
        word = command.split()[0]
        if word in ("play", "genmove", "kgs-genmove_cleanup") and self.stops_after_passes and self.passes >= 2:
            raise GTPFailure(self.label, command, "game is over")
        if word == "known_command":
            return str(command.split()[1] in self.knows).lower()
        if word in ("genmove", "kgs-genmove_cleanup"):
            queue = self.cleanup if word == "kgs-genmove_cleanup" else self.moves
            return self._count_passes(queue.pop(0) if queue else "pass")
        if word == "play" and self.refuse_play:
            raise GTPFailure(self.label, command, "illegal move")
        if word == "play":
            self._count_passes(command.split()[2])
        return {"final_score": self.score, "final_status_list": self.dead}.get(word, "")

    def _count_passes(self, move: str) -> str:
        self.passes = self.passes + 1 if move == "pass" else 0
        return move


# A scripted GTP engine run as a subprocess: ``fake_engine.py '<json>'`` with "moves" (genmove
# answers, then pass), "cleanup" (kgs-genmove_cleanup answers, then pass), "dead" (its
# final_status_list dead answer), "knows" (the optional commands it lists), "log" (a file it
# appends every command to) and "die_at" (it exits at that genmove; with "once", a file it then
# writes, only the first process dies). It never checks a move: the referee must.
FAKE_ENGINE = r"""
import json, os, sys
cfg = json.loads(sys.argv[1])
moves, cleanup = cfg.get("moves", []), cfg.get("cleanup", [])
genmoves = 0
known = ["name", "version", "known_command", "list_commands", "quit", "boardsize", "clear_board",
         "komi", "play", "genmove", *cfg.get("knows", [])]
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    ident = words.pop(0) if words[0].isdigit() else ""
    command, args = words[0], words[1:]
    with open(cfg["log"], "a") as log:
        log.write(" ".join(words) + "\n")
    text = ""
    if command == "name":
        text = "fake"
    elif command == "known_command":
        text = str(args[0] in known).lower()
    elif command == "list_commands":
        text = "\n".join(known)
    elif command == "genmove":
        genmoves += 1
        if genmoves == cfg.get("die_at") and not os.path.exists(cfg.get("once", "")):
            if cfg.get("once"):  # dies in this process only, not after a restart
                open(cfg["once"], "w").close()
            sys.exit(3)
        text = moves.pop(0) if moves else "pass"
    elif command == "kgs-genmove_cleanup" and command in known:
        text = cleanup.pop(0) if cleanup else "pass"
    elif command == "final_status_list" and command in known:
        text = cfg.get("dead", "")
    elif command not in known:
        print(f"?{ident} unknown command\n", flush=True)
        continue
    print(f"={ident} {text}".rstrip() + "\n", flush=True)
    if command == "quit":
        break
"""


@pytest.fixture
def fake_engine(tmp_path):
    """``fake_engine(label, **cfg) -> (GTPClient, log path)``; every engine is closed at the end."""
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    clients = []

    def start(label: str, **cfg):
        log = tmp_path / f"{label}.log"
        clients.append(GTPClient([sys.executable, str(script), json.dumps({"log": str(log), **cfg})], label=label))
        return clients[-1], log

    yield start
    for client in clients:
        client.close()


def commands(log) -> list[str]:
    return log.read_text().splitlines()


def tiny_predictor(n: int = 9) -> MovePredictor:
    torch.manual_seed(0)
    return MovePredictor(MaddisonNet(36, n, depth=3, filters=8), GoRules(n), "maddison")


@pytest.fixture(scope="module")
def tiny_ckpt(tmp_path_factory, tiny_maddison_checkpoint):
    """A 9x9 maddison_cnn checkpoint, as training writes one."""
    return tiny_maddison_checkpoint(tmp_path_factory.mktemp("gtp") / "tiny.ckpt")


@pytest.fixture(scope="module")
def passer_command(tmp_path_factory):
    """A GTP engine (a Python script) that passes every move and knows no other command."""
    script = tmp_path_factory.mktemp("passer") / "passer.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    w = line.split()\n    if not w:\n        continue\n"
                      "    r = {'name': 'passer', 'version': '1', 'genmove': 'pass', 'known_command': 'false'}"
                      ".get(w[0], '')\n    print('= ' + r + '\\n', flush=True)\n    if w[0] == 'quit':\n        break\n")
    return shlex.join([sys.executable, str(script)])


@pytest.fixture
def play_command(repo_root):
    """``play_command(ckpt)``: the command line of src/play.py, our own GTP engine, on ``ckpt``."""
    return lambda ckpt: [sys.executable, str(repo_root / "src" / "play.py"), f"ckpt_path={ckpt}"]


def test_two_passes_end_the_game_and_every_move_is_told():
    black, white = Scripted("b", ["E5", "pass"]), Scripted("w")
    game = play_gtp_game(black, white, RULES, max_moves=50, cleanup_moves=0)
    assert game.reason == "two_passes" and game.winner == 1
    assert game.moves == [(1, 40), (-1, 81), (1, 81)]
    assert black.sent[:3] == ["boardsize 9", "clear_board", "komi 7.5"]
    assert black.sent[3:6] == ["genmove b", "play w pass", "genmove b"]
    assert white.sent[3:6] == ["play b E5", "genmove w", "play b pass"]  # the last pass too: both hold the end


def test_dead_stones_an_engine_lists_come_off_before_the_count(fake_engine):
    black, black_log = fake_engine("black", moves=WALLS_BLACK, knows=["final_status_list"], dead="B5")
    white, white_log = fake_engine("white", moves=WALLS_WHITE)  # lists nothing: black alone judges
    game = play_gtp_game(black, white, RULES, max_moves=100)
    assert game.reason == "two_passes" and len(game.moves) == 22 and game.cleanup_from is None
    assert (game.score, game.winner, game.area_score) == ("B+1.5", 1, "W+35.5")  # the plain count: a loss
    assert (game.scored_by, game.judged_by, game.dead) == ("final_status_list", "black", [4 * 9 + 1])
    assert "final_status_list dead" in commands(black_log) and "play w pass" in commands(black_log)
    record = game.to_json()
    assert (record["scored_by"], record["dead"], record["result"]) == ("final_status_list", ["B5"], "B+1.5")
    assert "RE[B+1.5]" in game_sgf(game) and "scored_by: final_status_list of black; dead: B5" in game_sgf(game)


def test_without_final_status_list_both_sides_play_on_until_two_passes(fake_engine):
    black, black_log = fake_engine("black", moves=WALLS_BLACK, knows=["kgs-genmove_cleanup"], cleanup=CAPTURE_B5)
    white, white_log = fake_engine("white", moves=WALLS_WHITE)
    game = play_gtp_game(black, white, RULES, max_moves=100)
    assert (game.scored_by, game.score, game.area_score, game.cleanup_from) == ("cleanup", "B+1.5", "W+35.5", 22)
    assert [move for _, move in game.moves[22:]] == [36, 81, 38, 81, 46, 81, 28, 81, 81]  # A5 C5 B4 B6: B5 taken
    assert commands(black_log).count("kgs-genmove_cleanup b") == 5  # the engine that lists it is asked with it
    assert "genmove w" in commands(white_log)[-6:] and "kgs-genmove_cleanup w" not in commands(white_log)
    assert "cleanup from move 23" in game_sgf(game) and game.to_json()["cleanup_from"] == 22


def test_players_who_disagree_on_dead_stones_play_it_out():
    black = Scripted("b", WALLS_BLACK, knows=["final_status_list", "kgs-genmove_cleanup"], dead="B5",
                     cleanup=CAPTURE_B5)
    white = Scripted("w", WALLS_WHITE, knows=["final_status_list"], dead="")  # "nothing is dead"
    game = play_gtp_game(black, white, RULES, max_moves=100)
    assert (game.scored_by, game.judged_by, game.score) == ("cleanup", None, "B+1.5")
    assert "the players' dead stones differ (black [B5] vs white []): play decides" in game.detail


def test_players_who_agree_judge_together_and_final_scores_are_kept():
    black = Scripted("b", WALLS_BLACK, knows=["final_status_list"], dead="B5", score="B+1.5")
    white = Scripted("w", WALLS_WHITE, knows=["final_status_list"], dead="B5", score="W+99")
    game = play_gtp_game(black, white, RULES, max_moves=100)
    assert (game.scored_by, game.judged_by, game.score) == ("final_status_list", "both", "B+1.5")
    assert game.final_scores == {"black": "B+1.5", "white": "W+99"}  # recorded, never deciding


def test_a_judge_replays_the_game_and_its_list_decides():
    black = Scripted("b", WALLS_BLACK, knows=["final_status_list"], dead="")  # the loser says nothing is dead
    white = Scripted("w", WALLS_WHITE, knows=["final_status_list"], dead="")
    judge = Scripted("judge", knows=["final_status_list", "final_score"], dead="B5", score="B+1.5")
    game = play_gtp_game(black, white, RULES, max_moves=100, judge=judge)
    assert (game.scored_by, game.judged_by, game.score, game.winner) == ("final_status_list", "judge", "B+1.5", 1)
    replayed = [c for c in judge.sent if c.startswith("play")]
    assert len(replayed) == 22 and replayed[-1] == "play w pass" and judge.sent[:3] == ["boardsize 9", "clear_board",
                                                                                         "komi 7.5"]
    assert game.final_scores["judge"] == "B+1.5" and "final_status_list dead" not in black.sent


@pytest.mark.parametrize("dead,note", [("C3", "black's dead stones name empty points (C3): another position"),
                                       ("Z99", "black's dead stones are unusable: b answered 'final_status_list dead' with 'Z99'")])
def test_a_dead_list_that_fits_no_stone_is_not_used(dead, note):
    black = Scripted("b", WALLS_BLACK, knows=["final_status_list", "kgs-genmove_cleanup"], dead=dead,
                     cleanup=CAPTURE_B5)
    game = play_gtp_game(black, Scripted("w", WALLS_WHITE), RULES, max_moves=100)
    assert game.scored_by == "cleanup" and game.score == "B+1.5" and note in game.detail


def test_plain_count_is_the_flagged_last_resort():
    stops = Scripted("b", WALLS_BLACK, stops_after_passes=True)  # cannot play on after two passes
    game = play_gtp_game(stops, Scripted("w", WALLS_WHITE), RULES, max_moves=100)
    assert (game.scored_by, game.score, game.winner) == ("tromp_taylor", "W+35.5", -1)
    assert "plain Tromp-Taylor count, dead stones may count as alive (the cleanup phase stopped: b refused" \
        in game.detail
    endless = Scripted("b", WALLS_BLACK, knows=["kgs-genmove_cleanup"], cleanup=["A1", "A2", "A3"])
    game = play_gtp_game(endless, Scripted("w", WALLS_WHITE), RULES, max_moves=100, cleanup_moves=3)
    assert game.scored_by == "tromp_taylor" and len(game.moves) == 25
    assert "the cleanup phase reached 3 moves without two passes" in game.detail


def test_a_resignation_in_the_cleanup_phase_decides_the_game():
    black = Scripted("b", WALLS_BLACK, knows=["kgs-genmove_cleanup"], cleanup=["resign"])
    game = play_gtp_game(black, Scripted("w", WALLS_WHITE), RULES, max_moves=100)
    assert (game.reason, game.winner, game.result, game.scored_by) == ("resign", -1, "W+R", None)
    assert game.detail == "b resigned as black (in the cleanup phase)" and game.cleanup_from == 22


@pytest.mark.parametrize("white_moves,reason,detail", [
    (["E5"], "illegal_move", "w played E5 as white: occupied"),
    (["Z99"], "bad_move", "w answered genmove with 'Z99'"),
    (["resign"], "resign", "w resigned as white"),
])
def test_a_bad_or_resigning_engine_loses(white_moves, reason, detail):
    game = play_gtp_game(Scripted("b", ["E5"]), Scripted("w", white_moves), RULES, max_moves=50)
    assert (game.winner, game.reason, game.moves) == (1, reason, [(1, 40)])  # the bad move is not recorded
    assert detail in game.detail and game.result == ("B+R" if reason == "resign" else "B+F")
    assert game.score is None and game.scored_by is None


def test_a_move_the_opponent_refuses_makes_the_game_void():
    game = play_gtp_game(Scripted("b", ["E5"]), Scripted("w", refuse_play=True), RULES, max_moves=50)
    assert game.void and game.winner == 0 and game.result == "Void"
    assert game.detail == "w refused 'play b E5': illegal move"


def test_an_engine_that_dies_voids_its_game_and_the_match_restarts_it(fake_engine, tmp_path):
    """GNU Go 3.8 segfaults in rare positions: that game is void (its moves kept), the engine
    is restarted, and the next game is played and counted."""
    engine, log = fake_engine("crashy", moves=["A9", "B9"], die_at=2, once=str(tmp_path / "died"))
    model = model_player(tiny_predictor())
    result, games = gtp_match(model, engine, RULES, games=2, max_moves=6)
    assert games[0].void and games[0].reason == "engine_died" and games[0].result == "Void"
    assert games[0].detail.startswith("crashy exited (code 3) before answering 'genmove w'")
    # the model's move, the engine's first answer (A9), the model's move; then it died
    assert len(games[0].moves) == 3 and games[0].moves[1] == (WHITE, parse_vertex("A9", 9))
    assert games[0].to_json()["winner"] == "void"
    assert not games[1].void and result.games == 1  # the restarted engine played the second game
    assert commands(log).count("boardsize 9") == 2 and (tmp_path / "died").exists()


def test_an_engine_that_dies_twice_in_a_row_stops_the_match(fake_engine):
    engine, _ = fake_engine("broken", die_at=1)
    recorded = []
    words = ("broken exited (code 3) before answering 'genmove b'; nothing on its stderr, and in the game "
             "before: the match stops (2 games recorded, the last two void)")
    with pytest.raises(StonelabError, match=re.escape(words)):
        gtp_match(model_player(tiny_predictor()), engine, RULES, games=4, max_moves=6,
                  on_game=lambda i, g, so_far: recorded.append(g.reason))
    assert recorded == ["engine_died", "engine_died"]  # both journalled before the stop


def test_a_game_cut_at_max_moves_is_not_played_on():
    black = Scripted("b", ["A9", "B9", "C9"], knows=["kgs-genmove_cleanup"], cleanup=["D9"])
    game = play_gtp_game(black, Scripted("w", ["J1", "H1", "G1"]), RULES, max_moves=5)
    assert game.reason == "max_moves" and len(game.moves) == 5 and game.cleanup_from is None
    assert game.scored_by == "tromp_taylor" and "(no cleanup phase)" in game.detail
    assert game.score == "W+6.5"  # 3 stones to 2, the rest neutral: 3 - 2 - 7.5 < 0 -> white


def test_colours_alternate_and_sgf_reads_back(tmp_path):
    model, passer = model_player(tiny_predictor()), Scripted("passer")
    seen = []
    result, games = gtp_match(model, passer, RULES, games=3, max_moves=6, sgf_dir=tmp_path,
                              on_game=lambda i, g, so_far: seen.append((i, so_far.games)))
    assert [(g.black, g.white) for g in games] == [("stonelab", "passer"), ("passer", "stonelab"),
                                                    ("stonelab", "passer")]
    assert seen == [(0, 1), (1, 2), (2, 3)] and (result.wins, result.draws, result.losses) == (3, 0, 0)
    assert [g.winner for g in games] == [1, -1, 1]  # only the model has stones
    for index, game in enumerate(games):
        (record,) = read_games((tmp_path / f"game_{index:04d}.sgf").read_bytes(), "g.sgf", board_size=9).games
        assert record.moves == tuple(game.moves) and record.komi == 7.5
        assert record.result == game.result and record.winner == game.winner
        assert (record.black_player, record.white_player) == (game.black, game.white)


def test_sgf_escapes_text_and_writes_passes_as_empty_values(tmp_path):
    game = play_gtp_game(Scripted("odd]name\\", ["A9", "pass"]), Scripted("w"), RULES, max_moves=10,
                         cleanup_moves=0)
    text = game_sgf(game)
    assert "PB[odd\\]name\\\\]" in text and text.endswith(";B[aa];W[];B[])\n")
    (record,) = read_games(write_sgf(game, tmp_path / "x" / "g.sgf").read_bytes(), "g.sgf").games
    assert record.black_player == "odd]name\\" and record.moves[-1] == (1, 81)


def test_a_short_game_against_our_own_engine_subprocess(tiny_ckpt, tmp_path, play_command):
    with GTPClient(play_command(tiny_ckpt), timeout=120) as engine, model_player(tiny_predictor()) as model:
        result, (game,) = gtp_match(engine, model, RULES, games=1, max_moves=30, sgf_dir=tmp_path)
    assert game.reason in REASONS and game.winner in (1, -1, 0) and result.games == 1
    assert len(game.moves) == 30 and game.reason == "max_moves"  # neither tiny net passes nor blunders
    assert game.scored_by in SCORED_BY and "black" in game.final_scores  # the subprocess knows final_score
    (record,) = read_games((tmp_path / "game_0000.sgf").read_bytes(), "g.sgf", board_size=9).games  # replays legally
    assert len(record.moves) == 30


def gnugo(level: int = 1, seed: int = 1) -> GTPClient:
    command = [GNUGO, "--mode", "gtp", "--chinese-rules", "--level", str(level), "--seed", str(seed)]
    return GTPClient(command, timeout=60, label=f"GNU Go level {level}")


@pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed (apt-get update && apt-get install -y gnugo)")
def test_gnu_go_against_itself_is_counted_as_gnu_go_counts():
    with gnugo(seed=1) as black, gnugo(seed=2) as white:
        game = play_gtp_game(black, white, RULES, max_moves=2 * 81)
    assert game.reason == "two_passes" and game.scored_by == "final_status_list" and game.judged_by == "both"
    assert game.score == game.final_scores["black"] == game.final_scores["white"]  # GNU Go's own area count
    assert game.dead and game.area_score != game.score  # the plain count would have been wrong


@pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed (apt-get update && apt-get install -y gnugo)")
def test_gnu_go_cleans_up_when_nobody_lists_dead_stones():
    class Unlisted(GTPClient):
        """GNU Go that hides final_status_list: the referee must fall back on the cleanup phase."""

        def known_command(self, command: str) -> bool:
            return command != "final_status_list" and super().known_command(command)

    command = [GNUGO, "--mode", "gtp", "--chinese-rules", "--level", "1"]
    with Unlisted([*command, "--seed", "1"]) as black, Unlisted([*command, "--seed", "2"]) as white:
        game = play_gtp_game(black, white, RULES, max_moves=2 * 81)
    assert game.scored_by == "cleanup" and game.cleanup_from is not None and len(game.moves) > game.cleanup_from
    assert game.score == game.final_scores["black"]  # GNU Go's count of the cleaned-up board agrees


@pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed (apt-get update && apt-get install -y gnugo)")
def test_a_short_game_against_gnu_go():
    with gnugo(level=0) as engine, model_player(tiny_predictor()) as model:
        assert engine.name() == "GNU Go"
        result, (game,) = gtp_match(model, engine, RULES, games=1, max_moves=20)
    assert game.reason in ("max_moves", "two_passes", "resign") and result.games == 1
    assert game.reason == "resign" or game.scored_by == "final_status_list" or "differ" in game.detail
    assert all(0 <= parse_vertex(m, 9) <= 81 for m in game.to_json()["moves"])


@pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed (apt-get update && apt-get install -y gnugo)")
def test_a_short_9x9_game_with_search_against_gnu_go_level_1():
    search = {"playouts": 24, "leaves_per_game": 8, "go": {"leaf_value": "playouts", "leaf_playouts": 1}}
    with gnugo(level=1) as engine, model_player(tiny_predictor(), search) as model:
        result, (game,) = gtp_match(model, engine, RULES, games=1, max_moves=40)
        assert model.engine.player is not None and model.engine.player.mcts.simulations >= 24
    assert result.games == 1 and game.reason in ("max_moves", "two_passes", "resign")
    assert all(0 <= parse_vertex(m, 9) <= 81 for m in game.to_json()["moves"])


def test_our_engine_resigns_in_a_match_when_told_to():
    from stonelab.protocols.gtp_search import ResignRule

    search = {"playouts": 60, "leaves_per_game": 8, "go": {"leaf_value": "playouts", "leaf_playouts": 1}}
    never = ResignRule(below=1e-9, moves=1, min_visits=1)  # no win rate is below this: plays on
    always = ResignRule(below=0.999, moves=1, min_visits=1)  # every win rate is: resigns at once
    with model_player(tiny_predictor(), search, resign=always) as model:
        _, (game,) = gtp_match(model, Scripted("passer"), RULES, games=1, max_moves=12, opening_moves=0)
    assert game.reason == "resign" and game.winner == -1 and len(game.moves) == 0  # black (ours) resigned
    with model_player(tiny_predictor(), search, resign=never) as model:
        _, (game,) = gtp_match(model, Scripted("passer"), RULES, games=1, max_moves=12, opening_moves=0)
    assert game.reason != "resign"


def test_our_pure_mcts_plays_as_a_gtp_side():
    from stonelab.arena.gtp_match import pure_mcts_side

    with pure_mcts_side(RULES, {"playouts": 40}, "pure_mcts_40") as pure, \
            model_player(tiny_predictor()) as model:
        result, (game,) = gtp_match(model, pure, RULES, games=1, max_moves=16)
    assert result.games == 1 and len(game.moves) == 16 and game.white == "pure_mcts_40"


# -- task=gtp_match

@pytest.fixture
def eval_cfg(compose_config):
    """``eval_cfg(tmp_path, *overrides)``: the `eval` config of task=gtp_match, writing under ``tmp_path``."""

    def eval_cfg(tmp_path, *overrides):
        return compose_config("eval", ["task=gtp_match", "torch_threads=1", "device=cpu",
                                       f"paths.output_dir={tmp_path}", *overrides])

    return eval_cfg


def test_task_writes_the_match_its_games_and_a_line_per_game(tiny_ckpt, tmp_path, capsys, play_command, eval_cfg):
    from stonelab.eval_tasks import run

    command = shlex.join(play_command(tiny_ckpt))
    out = run(eval_cfg(tmp_path, f"ckpt_path={tiny_ckpt}", f"opponent_command='{command}'", "games=2",
                       "max_moves=8"))
    saved = json.loads((tmp_path / "gtp_match.json").read_text())
    assert saved == json.loads(json.dumps(out)) and saved["opponent"].startswith("stonelab")
    assert saved["games"] == 2 and saved["wins"] + saved["draws"] + saved["losses"] == 2 and saved["void"] == 0
    assert [r["model"] for r in saved["records"]] == ["black", "white"] and saved["judge"] is None
    assert all(len(r["moves"]) == 8 and r["scored_by"] in SCORED_BY for r in saved["records"])
    assert list(saved["scored_by"]) == list(SCORED_BY) and sum(saved["scored_by"].values()) == 2
    assert saved["sgf_dir"] == str(tmp_path / "sgf")  # the run folder, by default
    assert sorted(p.name for p in (tmp_path / "sgf").iterdir()) == ["game_0000.sgf", "game_0001.sgf"]
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("game ")]
    assert [line.split(":")[0] for line in lines] == ["game 1/2", "game 2/2"]
    assert all("after 8 moves (max_moves, " in line and "95% CI" in line for line in lines)
    assert "of 1: win ratio" in lines[0] and "of 2: win ratio" in lines[1]  # the running score


@pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed (apt-get update && apt-get install -y gnugo)")
def test_task_with_a_gnu_go_judge(tiny_ckpt, tmp_path, eval_cfg):
    from stonelab.eval_tasks import run

    judge = f"{GNUGO} --mode gtp --chinese-rules --level 0"
    out = run(eval_cfg(tmp_path, f"ckpt_path={tiny_ckpt}", f"opponent_command='{judge}'", f"judge_command='{judge}'",
                       "games=1", "max_moves=12", "sgf_dir=null"))
    (record,) = out["records"]
    assert out["judge"] == "GNU Go 3.8 (judge)" and out["sgf_dir"] is None and not (tmp_path / "sgf").exists()
    assert record["reason"] == "resign" or (record["scored_by"], record["judged_by"]) == ("final_status_list", "judge")


@pytest.fixture
def refuses_every_board(tmp_path):
    script = tmp_path / "small.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    i, c = line.split()[:2]\n"
                      "    ok = c != 'boardsize'\n"
                      "    print(('=' if ok else '?') + i + (' x' if ok else ' unacceptable size') + '\\n', flush=True)\n"
                      "    if c == 'quit':\n        break\n")
    return shlex.join([sys.executable, str(script)])


@pytest.mark.parametrize("overrides,message", [
    ([], "ckpt_path=... is required"),
    (["ckpt_path={ckpt}", "opponent_command=null"], 'opponent_command="..." is required'),
    (["ckpt_path={ckpt}", "games=0"], "games=0 must be >= 1"),
    (["ckpt_path={ckpt}", "opening_moves=-1"], "opening_moves=-1 must be an int in 0..20"),
    (["ckpt_path={ckpt}", "komi=lots"], "komi=lots must be a number"),
    (["ckpt_path={ckpt}", "resign_below=0.05"], "resign_below=0.05 needs search.playouts > 0"),
    (["ckpt_path={ckpt}", "resign_below=2", "search.playouts=50"], "resign_below=2.0 must be in [0, 1)"),
    (["ckpt_path={ckpt}", "cleanup_moves=-1"], "cleanup_moves=-1 must be >= 0 (0: no cleanup phase"),
    (["ckpt_path={ckpt}", "bar=maybe"], "bar=maybe must be true, false or null"),
    (["ckpt_path={ckpt}", "judge_command='/nonexistent/gnugo'"],
     "judge_command='/nonexistent/gnugo': engine command not found: /nonexistent/gnugo"),
    (["ckpt_path={ckpt}", "opponent_command='/nonexistent/gnugo --mode gtp'"],
     "opponent_command='/nonexistent/gnugo --mode gtp': engine command not found: /nonexistent/gnugo (GNU Go: apt-get"),
    (["ckpt_path={ckpt}", "opponent_command='{refuser}'"],
     "refused 'boardsize 9': unacceptable size (it refuses a 9x9 board)"),
    (["ckpt_path={alphazero}"], "holds 'alphazero', not a Go move predictor"),
])
def test_task_user_errors(overrides, message, tiny_ckpt, refuses_every_board, tmp_path, eval_cfg):
    from stonelab.eval_tasks import run
    from stonelab.models.identity import CHECKPOINT_KEY

    alphazero = tmp_path / "az.ckpt"
    torch.save({CHECKPOINT_KEY: {"identity": {"model": "alphazero"}}, "state_dict": {}}, alphazero)
    values = {"ckpt": tiny_ckpt, "alphazero": alphazero, "refuser": refuses_every_board}
    with pytest.raises(StonelabError) as info:
        run(eval_cfg(tmp_path, *(o.format(**values) for o in overrides)))
    assert message in str(info.value)


def test_each_pair_of_games_starts_from_its_own_random_opening(tmp_path):
    from stonelab.arena.gtp_match import random_opening

    model, passer = model_player(tiny_predictor()), Scripted("passer")
    _, games = gtp_match(model, passer, RULES, games=4, max_moves=12, opening_moves=2, seed=3)
    openings = [tuple(g.moves[:2]) for g in games]
    assert openings[0] == openings[1] and openings[2] == openings[3] and openings[0] != openings[2]
    assert [colour for colour, _ in openings[0]] == [1, -1]  # black first
    for _, point in openings[0]:
        assert min(point // 9, point % 9, 8 - point // 9, 8 - point % 9) >= 2  # off the first two lines
    assert random_opening(RULES, 2, 7) == random_opening(RULES, 2, 7)


def test_a_match_run_again_in_its_folder_plays_on_and_another_match_is_refused(tiny_ckpt, tmp_path, eval_cfg,
                                                                                  passer_command):
    import json

    from stonelab.eval_tasks import run

    base = [f"ckpt_path={tiny_ckpt}", f"opponent_command='{passer_command}'", "max_moves=12"]
    first = run(eval_cfg(tmp_path, *base, "games=2"))
    journal = tmp_path / "games.jsonl"
    assert first["games"] == 2 and len(journal.read_text().splitlines()) == 3  # settings + 2 games
    whole = run(eval_cfg(tmp_path, *base, "games=3"))
    assert whole["games_continued"] == 2 and whole["games"] == 3
    assert whole["records"][:2] == first["records"]  # read back as they were written
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert len(lines) == 4 and lines[3]["moves"][:2] == whole["records"][2]["moves"][:2]
    with pytest.raises(StonelabError, match="holds 3 games of another match .*differs in komi"):
        run(eval_cfg(tmp_path, *base, "games=3", "komi=5.5"))


def test_a_journal_names_the_search_that_plays_and_a_search_free_one_ignores_its_knobs(tiny_ckpt, tmp_path,
                                                                                     eval_cfg, passer_command):
    """auto c_puct is written as the move predictor's 1.0; a search-free match journalled before
    the auto defaults (c_puct 5.0 written out) continues, a searched one is another match."""
    import json

    from stonelab.eval_tasks import run

    base = [f"ckpt_path={tiny_ckpt}", f"opponent_command='{passer_command}'", "max_moves=12", "games=1"]
    searched = tmp_path / "searched"
    run(eval_cfg(searched, *base, "search.playouts=4"))
    header = json.loads((searched / "games.jsonl").read_text().splitlines()[0])["settings"]["search"]
    assert (header["c_puct"], header["fpu_reduction"]) == (1.0, 0.2)
    old = {**header, "c_puct": 5.0, "fpu_reduction": None}  # as journalled before the auto defaults
    for folder, playouts in (("free", 0), ("searched_old", 4)):
        run(eval_cfg(tmp_path / folder, *base, f"search.playouts={playouts}"))
        journal = tmp_path / folder / "games.jsonl"
        lines = journal.read_text().splitlines()
        first = json.loads(lines[0])
        first["settings"]["search"] = {**old, "playouts": playouts}
        journal.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    assert run(eval_cfg(tmp_path / "free", *base[:-1], "games=2", "search.playouts=0"))["games_continued"] == 1
    with pytest.raises(StonelabError, match="holds 1 games of another match .*differs in search"):
        run(eval_cfg(tmp_path / "searched_old", *base, "search.playouts=4"))


def test_a_pass_with_points_still_open_is_counted_against_the_side_that_made_it():
    game = GTPGame("a", "b", 9, 7.0)
    game.moves = [(BLACK, 40), (WHITE, 81), (BLACK, 81)]  # white passes with the board open
    assert game.passes_with_open_points(WHITE) == 1
    assert game.passes_with_open_points(BLACK) == 0  # black's own area: nothing left to take
    game.moves += [(WHITE, 80), (BLACK, 81)]  # the cleanup phase: now white has a stone, black must answer
    assert game.passes_with_open_points(BLACK) == 1


def test_a_belief_gate_is_part_of_the_match(tiny_ckpt, tmp_path, eval_cfg):
    """Gate on and gate off are two matches: a journal of one is not continued as the other."""
    from stonelab.eval_tasks.gtp_match import MatchJournal, match_settings

    cfg = eval_cfg(tmp_path, f"ckpt_path={tiny_ckpt}", "opponent_command='engine --gtp'")
    on = match_settings(cfg, {}, RULES, 12, gate={"enabled": True, "threshold": 0.2})
    assert "gate" not in match_settings(cfg, {}, RULES, 12)  # a net without a gate: as before
    MatchJournal(tmp_path / "games.jsonl", on).played()
    off = match_settings(cfg, {}, RULES, 12, gate={"enabled": False, "threshold": 0.2})
    with pytest.raises(StonelabError, match="holds 0 games of another match .*differs in gate"):
        MatchJournal(tmp_path / "games.jsonl", off).played()
