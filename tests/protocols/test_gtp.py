"""The GTP engine: protocol framing, rules through the protocol, bad lines, and src/play.py."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
import torch

from stonelab.games.go import GoRules
from stonelab.models.inference import MovePredictor
from stonelab.models.nets.maddison import MaddisonNet
from stonelab.protocols.gtp import GTPEngine, GTPError, move_name, parse_vertex


def tiny_predictor(n: int = 9) -> MovePredictor:
    torch.manual_seed(0)
    return MovePredictor(MaddisonNet(36, n, depth=3, filters=8), GoRules(n), "maddison")


def engine(n: int = 9) -> GTPEngine:
    predictor = tiny_predictor(n)
    return GTPEngine(n, lambda states, histories: predictor.play_moves(states, histories=histories))


def talk(eng: GTPEngine, script: str) -> str:
    out = io.StringIO()
    eng.run(io.StringIO(script), out)
    return out.getvalue()


def test_vertices_follow_gtp():
    assert parse_vertex("A9", 9) == 0 and parse_vertex("j1", 9) == 80 and parse_vertex("PASS", 9) == 81
    assert move_name(0, 9) == "A9" and move_name(80, 9) == "J1" and move_name(81, 9) == "pass"
    assert all(parse_vertex(move_name(p, 19), 19) == p for p in range(362))
    for bad in ("I5", "K1", "A10", "A0", "5A", ""):
        with pytest.raises(GTPError, match="invalid vertex"):
            parse_vertex(bad, 9)


def test_framing_ids_comments_and_unknown_commands():
    out = talk(engine(), "1 protocol_version\n# a comment\n\n2 name # trailing comment\n"
                         "\tknown_command\tgenmove\nfrobnicate\n3 known_command frobnicate\nquit\nname\n")
    assert out == "=1 2\n\n=2 stonelab\n\n= true\n\n? unknown command\n\n=3 false\n\n=\n\n"  # quit ends it


def test_a_game_through_the_protocol():
    eng = engine()
    out = talk(eng, "boardsize 9\nclear_board\nkomi 6.5\nplay b E5\nplay w e5\ngenmove b\nundo\nundo\n"
                    "undo\nfinal_score\nboardsize 19\nplay x E5\nplay b Z1\nplay b\nquit\n")
    replies = out.split("\n\n")[:-1]
    assert replies[:4] == ["=", "=", "=", "="]
    assert replies[4] == "? illegal move (occupied)"
    move = replies[5][2:]
    assert replies[5].startswith("= ") and parse_vertex(move, 9) != parse_vertex("E5", 9)
    assert replies[6:9] == ["=", "=", "? cannot undo"]    # genmove undone, then E5, then nothing left
    assert replies[9] == "= W+6.5"                         # the undos emptied the board: komi only
    assert replies[10] == "? unacceptable size"            # the model knows one board size
    assert replies[11].startswith("? invalid color") and replies[12].startswith("? invalid vertex")
    assert replies[13] == "? play needs a color and a vertex"


def test_genmove_plays_legal_moves_for_either_colour_and_showboard_draws_them():
    eng = engine()
    for colour in ("b", "w", "w", "b", "black", "white"):
        reply = eng.respond(f"genmove {colour}\n")
        assert reply.startswith("= ") and reply.endswith("\n\n")
    board = eng.respond("showboard\n")
    assert board.count("X") == 3 and board.count("O") == 3 and "A B C D E F G H J" in board


def test_free_handicap_then_white_moves():
    eng = engine()
    assert eng.respond("set_free_handicap C3 G7\n") == "=\n\n"
    assert eng.state.to_play == -1 and eng.state.board[parse_vertex("C3", 9)] == 1
    assert eng.respond("set_free_handicap D4 F6\n") == "? board not empty\n\n"


def test_play_py_speaks_only_gtp_on_stdout(tmp_path, repo_root, tiny_maddison_checkpoint):
    path = tiny_maddison_checkpoint(tmp_path / "tiny.ckpt")
    proc = subprocess.run([sys.executable, "src/play.py", f"ckpt_path={path}"], cwd=repo_root, text=True,
                          input="1 name\n2 genmove b\nplay w garbage\nquit\n", capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    replies = proc.stdout.split("\n\n")
    assert replies[0] == "=1 stonelab" and replies[1].startswith("=2 ") and replies[2].startswith("? invalid vertex")
    assert replies[3] == "=" and not (tmp_path / "outputs").exists()
    missing = subprocess.run([sys.executable, "src/play.py"], cwd=repo_root, text=True, capture_output=True,
                             timeout=300)
    assert missing.returncode == 2 and "ckpt_path=... is required" in missing.stderr
    assert "Traceback" not in missing.stderr
