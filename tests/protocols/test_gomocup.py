"""The Gomocup brain: protocol lines, the game it tracks, bad input, search, and src/play.py."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import torch

from conftest import ROOT, save_checkpoint, tiny_maddison_checkpoint
from stonelab.arena.players import NeuralMCTSPlayer
from stonelab.games.gomoku import GomokuRules
from stonelab.models.alphazero import AlphaZeroModule, net_evaluator
from stonelab.models.nets.policy_value import PolicyValueNet
from stonelab.protocols.gomocup import GomocupEngine, search_chooser
from stonelab.search.mcts import MCTSConfig


def first_empty(moves: list[int]) -> int:
    """A chooser that plays the lowest empty point: fully predictable answers."""
    return min(set(range(64)) - set(moves))


def engine(k: int = 5) -> GomocupEngine:
    return GomocupEngine(GomokuRules(8, k), first_empty, about={"name": "t", "version": "1"})


def talk(eng: GomocupEngine, script: str) -> list[str]:
    out = io.StringIO()
    eng.run(io.StringIO(script), out)
    return out.getvalue().splitlines()


def test_start_about_sizes_and_unknown_commands():
    assert talk(engine(), "ABOUT\nSTART 15\nRECTSTART 8,9\nstart 8\nRECTSTART 8,8\nFROB 1\nSTART x\n") == [
        'name="t", version="1"',
        "ERROR unsupported size 15x15: this model plays only 8x8",
        "ERROR unsupported size 8x9: this model plays only 8x8",
        "OK", "OK", "UNKNOWN command 'FROB'", "ERROR START needs a board size, got 'x'"]
    assert talk(engine(k=4), "START 8\n") == ["OK", "MESSAGE this model was trained for 4 in a row, not 5"]
    assert talk(engine(), "BEGIN\n") == ["ERROR send START 8 first"]
    # INFO is never answered, except to warn that a rule is not what the model plays
    assert talk(engine(), "INFO rule 0\nINFO rule 1\nINFO max_memory 83886080\n") == [
        "MESSAGE this model plays free-style 5 in a row; rule 1 is ignored"]


def test_a_game_through_the_protocol_with_x_then_y_coordinates():
    eng = engine()
    lines = talk(eng, "START 8\nTURN 3,1\nTURN 1,0\nTURN 9,9\nTURN 1,0\nTURN a,b\nTAKEBACK 3,1\n"
                      "TAKEBACK 2,0\nINFO timeout_turn 5000\nEND\nTURN 5,5\n")
    # X is the column, Y the row: 3,1 is point 1*8+3; the brain answers the lowest empty point
    assert lines[:3] == ["OK", "0,0", "2,0"]
    assert lines[3] == "ERROR 9,9 is off the 8x8 board"
    assert lines[4] == "ERROR 1,0 is occupied"
    assert lines[5] == "ERROR expected X,Y but got 'a,b'"
    assert lines[6] == "ERROR 3,1 is not the last move"
    assert lines[7] == "OK" and eng.moves == [11, 0, 1]      # the brain's 2,0 taken back
    assert len(lines) == 8 and eng.info == {"timeout_turn": "5000"} and eng.finished  # INFO silent, END ends


def test_board_block_rebuilds_the_position_whoever_began():
    eng = engine()
    lines = talk(eng, "START 8\nBOARD\n4,4,2\n3,3,1\n5,5,2\nDONE\n")
    assert lines == ["OK", "0,0"]                             # opponent began: brain is white
    assert eng.moves == [36, 27, 45, 0]
    eng = engine()
    assert talk(eng, "START 8\nBOARD\n4,4,1\n3,3,2\nDONE\n") == ["OK", "0,0"] and eng.moves == [36, 27, 0]


def test_board_block_errors_keep_the_old_game():
    eng = engine()
    lines = talk(eng, "START 8\nTURN 7,7\nBOARD\n1,1,1\n2,2,1\nDONE\nBOARD\n1,1,3\nDONE\n"
                      "BOARD\n1,1,2\n1,1,1\nDONE\nDONE\n")
    assert lines[:2] == ["OK", "0,0"]
    assert lines[2] == ("ERROR BOARD has 2 own and 0 opponent stones: with the brain to move the "
                        "opponent must have as many or one more")
    assert lines[3].startswith("ERROR bad BOARD line '1,1,3'") and "continuous" in lines[3]
    assert lines[4] == "ERROR 1,1 is occupied"
    assert lines[5] == "ERROR DONE without BOARD"
    assert eng.moves == [63, 0]                               # still the TURN game


def test_finished_games_are_refused():
    eng = engine()
    talk(eng, "START 8\nBOARD\n0,1,2\n1,1,2\n2,1,2\n3,1,2\n0,7,1\n1,7,1\n2,7,1\n3,7,1\nDONE\n")
    # the brain (own stones on row 7) had four in a row, played 0,0: no win; the opponent completes five
    assert eng.respond("TURN 4,1") == "ERROR the game is over: no move to make"
    assert eng.respond("TURN 5,5") == "ERROR the game is over (a line is complete)"
    assert eng.respond("RESTART") == "OK" and eng.moves == []


def test_search_chooser_replays_only_what_changed():
    calls = []

    class Recorder:
        mcts = None

        def reset(self, num_games):
            calls.append("reset")
            self.mcts = object()

        def observe(self, g, move):
            calls.append(move)

        def choose(self, games):
            return np.array([7])

    choose = search_chooser(Recorder())
    assert choose([3]) == 7 and calls == ["reset", 3]
    choose([3, 7, 5])                                          # the game went on: two new moves
    assert calls == ["reset", 3, 7, 5]
    choose([3, 9])                                             # another line (TAKEBACK / BOARD)
    assert calls == ["reset", 3, 7, 5, "reset", 3, 9]


def test_the_search_takes_an_immediate_win():
    torch.manual_seed(0)
    rules = GomokuRules(8, 5)
    player = NeuralMCTSPlayer(rules, net_evaluator(PolicyValueNet(8)), MCTSConfig(playouts=200))
    eng = GomocupEngine(rules, search_chooser(player))
    # own stones at 1..4,3 (open four), the opponent scattered: 0,3 or 5,3 wins at once
    lines = talk(eng, "START 8\nBOARD\n1,3,1\n2,3,1\n3,3,1\n4,3,1\n0,0,2\n7,0,2\n0,7,2\n7,7,2\nDONE\n")
    assert lines[1] in ("0,3", "5,3")


def _checkpoint(tmp_path, n=6, k=4):
    return save_checkpoint(AlphaZeroModule(PolicyValueNet(n), GomokuRules(n, k)), tmp_path / "az.ckpt")


def test_play_py_is_a_gomocup_brain_with_only_protocol_on_stdout(tmp_path):
    path = _checkpoint(tmp_path)
    proc = subprocess.run([sys.executable, "src/play.py", "protocol=gomocup", f"ckpt_path={path}",
                           "search.playouts=16"], cwd=ROOT, text=True, capture_output=True, timeout=300,
                          input="START 6\nBEGIN\nTURN 0,0\nTURN garbage\nEND\n")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:2] == ["OK", "MESSAGE this model was trained for 4 in a row, not 5"]
    assert all(len(line.split(",")) == 2 for line in lines[2:4])
    assert lines[4] == "ERROR expected X,Y but got 'garbage'" and len(lines) == 5


def test_play_py_refuses_a_go_checkpoint_and_an_unknown_protocol(tmp_path):
    go = tiny_maddison_checkpoint(tmp_path / "go.ckpt")
    for args, message in ((["protocol=gomocup", f"ckpt_path={go}"], "not a stonelab alphazero checkpoint"),
                          (["protocol=gtp", f"ckpt_path={_checkpoint(tmp_path)}"], "not a Go move predictor"),
                          (["protocol=ugi", f"ckpt_path={go}"], "choose gtp (Go models) or gomocup")):
        proc = subprocess.run([sys.executable, "src/play.py", *args], cwd=ROOT, text=True,
                              capture_output=True, timeout=300, input="")
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
