"""The GTP referee: endings, forfeits, scoring, alternating colours, SGF, and task=gtp_match."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys

import pytest
import torch

from stonelab.arena.gtp_match import REASONS, game_sgf, gtp_match, model_player, play_gtp_game, write_sgf
from stonelab.data.sgf import read_games
from stonelab.errors import StonelabError
from stonelab.games.go import GoRules
from stonelab.models.inference import MovePredictor
from stonelab.models.nets.maddison import MaddisonNet
from stonelab.protocols.gtp import parse_vertex
from stonelab.protocols.gtp_client import GTPClient, GTPCommands, GTPFailure

RULES = GoRules(9, komi=7.5)
GNUGO = shutil.which("gnugo") or ("/usr/games/gnugo" if os.path.exists("/usr/games/gnugo") else None)


class Scripted(GTPCommands):
    """An in-process side that answers genmove from a list (then passes) and records what it is told."""

    def __init__(self, label: str, moves=(), *, refuse_play: bool = False, score: str | None = None):
        self.label, self.moves, self.refuse_play, self.score = label, list(moves), refuse_play, score
        self.sent: list[str] = []

    def send(self, command: str) -> str:
        self.sent.append(command)
        word = command.split()[0]
        if word == "genmove":
            return self.moves.pop(0) if self.moves else "pass"
        if word == "play" and self.refuse_play:
            raise GTPFailure(self.label, command, "illegal move")
        if word == "final_score":
            return self.score
        return ""


def tiny_predictor(n: int = 9) -> MovePredictor:
    torch.manual_seed(0)
    return MovePredictor(MaddisonNet(36, n, depth=3, filters=8), GoRules(n), "maddison")


@pytest.fixture(scope="module")
def tiny_ckpt(tmp_path_factory, tiny_maddison_checkpoint):
    """A 9x9 maddison_cnn checkpoint, as training writes one."""
    return tiny_maddison_checkpoint(tmp_path_factory.mktemp("gtp") / "tiny.ckpt")


@pytest.fixture
def play_command(repo_root):
    """``play_command(ckpt)``: the command line of src/play.py, our own GTP engine, on ``ckpt``."""
    return lambda ckpt: [sys.executable, str(repo_root / "src" / "play.py"), f"ckpt_path={ckpt}"]


def test_two_passes_end_the_game_and_our_area_score_decides():
    black, white = Scripted("b", ["E5", "pass"]), Scripted("w")
    game = play_gtp_game(black, white, RULES, max_moves=50)
    assert game.reason == "two_passes" and game.winner == 1
    assert game.moves == [(1, 40), (-1, 81), (1, 81)]
    assert (game.score, game.scored_by, game.result) == ("B+73.5", "area_score", "B+73.5")  # 81 points - komi
    assert black.sent[:3] == ["boardsize 9", "clear_board", "komi 7.5"]
    assert black.sent[3:] == ["genmove b", "play w pass", "genmove b"]
    assert white.sent[3:] == ["play b E5", "genmove w"]  # the game-ending pass needs no telling


def test_the_scorers_final_score_decides_and_the_area_score_is_kept():
    black, white = Scripted("b", ["E5", "pass"]), Scripted("w", score="W+12.5")
    game = play_gtp_game(black, white, RULES, max_moves=50, scorer=white)
    assert (game.winner, game.score, game.scored_by, game.area_score) == (-1, "W+12.5", "w final_score", "B+73.5")
    nonsense = play_gtp_game(Scripted("b", ["E5", "pass"]), white, RULES, 50, scorer=Scripted("s", score="?"))
    assert nonsense.scored_by == "area_score" and nonsense.winner == 1 and "names no winner" in nonsense.detail


@pytest.mark.parametrize("white_moves,reason,detail", [
    (["E5"], "illegal_move", "w played E5 as white: occupied"),
    (["Z99"], "bad_move", "w answered genmove with 'Z99'"),
    (["resign"], "resign", "w resigned as white"),
])
def test_a_bad_or_resigning_engine_loses(white_moves, reason, detail):
    game = play_gtp_game(Scripted("b", ["E5"]), Scripted("w", white_moves), RULES, max_moves=50)
    assert (game.winner, game.reason, game.moves) == (1, reason, [(1, 40)])  # the bad move is not recorded
    assert detail in game.detail and game.result == ("B+R" if reason == "resign" else "B+F")
    assert game.score is None


def test_a_move_the_opponent_refuses_makes_the_game_void():
    game = play_gtp_game(Scripted("b", ["E5"]), Scripted("w", refuse_play=True), RULES, max_moves=50)
    assert game.void and game.winner == 0 and game.result == "Void"
    assert game.detail == "w refused 'play b E5': illegal move"


def test_max_moves_ends_and_scores_the_game():
    game = play_gtp_game(Scripted("b", ["A9", "B9", "C9"]), Scripted("w", ["J1", "H1", "G1"]), RULES, max_moves=5)
    assert game.reason == "max_moves" and len(game.moves) == 5 and game.scored_by == "area_score"
    assert game.score == "W+6.5"  # 3 stones to 2, the rest neutral: 3 - 2 - 7.5 < 0 -> white


def test_colours_alternate_and_sgf_reads_back(tmp_path):
    model, passer = model_player(tiny_predictor()), Scripted("passer")
    seen = []
    result, games = gtp_match(model, passer, RULES, games=3, max_moves=6, sgf_dir=tmp_path,
                              on_game=lambda i, g: seen.append(i))
    assert [(g.black, g.white) for g in games] == [("stonelab", "passer"), ("passer", "stonelab"),
                                                    ("stonelab", "passer")]
    assert seen == [0, 1, 2] and (result.wins, result.draws, result.losses) == (3, 0, 0)  # only the model has stones
    assert [g.winner for g in games] == [1, -1, 1]
    for index, game in enumerate(games):
        (record,) = read_games((tmp_path / f"game_{index:04d}.sgf").read_bytes(), "g.sgf", board_size=9).games
        assert record.moves == tuple(game.moves) and record.komi == 7.5
        assert record.result == game.result and record.winner == game.winner
        assert (record.black_player, record.white_player) == (game.black, game.white)


def test_sgf_escapes_text_and_writes_passes_as_empty_values(tmp_path):
    game = play_gtp_game(Scripted("odd]name\\", ["A9", "pass"]), Scripted("w"), RULES, max_moves=10)
    text = game_sgf(game)
    assert "PB[odd\\]name\\\\]" in text and text.endswith(";B[aa];W[];B[])\n")
    (record,) = read_games(write_sgf(game, tmp_path / "x" / "g.sgf").read_bytes(), "g.sgf").games
    assert record.black_player == "odd]name\\" and record.moves[-1] == (1, 81)


def test_a_short_game_against_our_own_engine_subprocess(tiny_ckpt, tmp_path, play_command):
    with GTPClient(play_command(tiny_ckpt), timeout=120) as engine, model_player(tiny_predictor()) as model:
        assert engine.known_command("final_score")
        result, (game,) = gtp_match(engine, model, RULES, games=1, max_moves=30, scorer=engine, sgf_dir=tmp_path)
    assert game.reason in REASONS and game.winner in (1, -1, 0) and result.games == 1
    assert len(game.moves) == 30 and game.reason == "max_moves"  # neither tiny net passes nor blunders
    assert game.scored_by.endswith("final_score") and game.score == game.area_score  # same Tromp-Taylor count
    (record,) = read_games((tmp_path / "game_0000.sgf").read_bytes(), "g.sgf", board_size=9).games  # replays legally
    assert len(record.moves) == 30


@pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed (apt-get install -y gnugo)")
def test_a_short_game_against_gnu_go():
    with GTPClient([GNUGO, "--mode", "gtp", "--level", "0", "--chinese-rules"], timeout=60) as gnugo, \
            model_player(tiny_predictor()) as model:
        assert gnugo.name() == "GNU Go"
        result, (game,) = gtp_match(model, gnugo, RULES, games=1, max_moves=20, scorer=gnugo)
    assert game.reason in ("max_moves", "two_passes", "resign") and result.games == 1
    assert game.reason == "resign" or game.scored_by.endswith("final_score")
    assert all(0 <= parse_vertex(m, 9) <= 81 for m in game.to_json()["moves"])


# -- task=gtp_match

@pytest.fixture
def eval_cfg(compose_config):
    """``eval_cfg(tmp_path, *overrides)``: the `eval` config of task=gtp_match, writing under ``tmp_path``."""

    def eval_cfg(tmp_path, *overrides):
        return compose_config("eval", ["task=gtp_match", "torch_threads=1", "device=cpu",
                                       f"paths.output_dir={tmp_path}", *overrides])

    return eval_cfg


def test_task_writes_the_match_and_its_games(tiny_ckpt, tmp_path, play_command, eval_cfg):
    from stonelab.eval_tasks import run

    command = shlex.join(play_command(tiny_ckpt))
    out = run(eval_cfg(tmp_path, f"ckpt_path={tiny_ckpt}", f"opponent_command='{command}'", "games=2",
                       "max_moves=8", f"sgf_dir={tmp_path / 'sgf'}"))
    saved = json.loads((tmp_path / "gtp_match.json").read_text())
    assert saved == json.loads(json.dumps(out)) and saved["opponent"].startswith("stonelab")
    assert saved["games"] == 2 and saved["wins"] + saved["draws"] + saved["losses"] == 2 and saved["void"] == 0
    assert [r["model"] for r in saved["records"]] == ["black", "white"]
    assert all(len(r["moves"]) == 8 and r["scored_by"].endswith("final_score") for r in saved["records"])
    assert sorted(p.name for p in (tmp_path / "sgf").iterdir()) == ["game_0000.sgf", "game_0001.sgf"]


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
    (["ckpt_path={ckpt}", "komi=lots"], "komi=lots must be a number"),
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
