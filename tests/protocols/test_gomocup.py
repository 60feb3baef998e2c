"""The Gomocup brain: protocol lines, the game it tracks, bad input, search, and src/play.py."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import numpy as np
import torch

from stonelab.arena.players import NeuralMCTSPlayer
from stonelab.games.gomoku import GomokuRules
from stonelab.models.alphazero import net_evaluator
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


def test_numbers_are_short_ascii_digits_everywhere():
    huge = "9" * 5000                                          # int() refuses 4,300+ digits
    eng = engine()
    lines = [eng.respond(line) for line in (
        f"START {huge}", f"RECTSTART {huge},8", "START ²", "RECTSTART ٨,8", "START -8", "START 8",
        f"TURN {huge},1", f"TURN 1,-{huge}", "TURN ٣,1", "TURN ５,1", "TURN 1,2,3", "TURN -1,0",
        f"TAKEBACK 1,{huge}", "TAKEBACK ²,1", f"INFO max_memory {huge}", "INFO rule ²",
        "INFO timeout_turn ５", "INFO time_left -5", "INFO", "INFO rule 0003")]
    assert lines == [
        "ERROR board size too large (5000 digits)", "ERROR board width too large (5000 digits)",
        r"ERROR START needs a board size, got '\xb2'", r"ERROR RECTSTART needs WIDTH,HEIGHT, got '\u0668,8'",
        "ERROR START needs a board size, got '-8'", "OK",
        "ERROR coordinate too large (5000 digits)", "ERROR coordinate too large (5000 digits)",
        r"ERROR expected X,Y but got '\u0663,1'", r"ERROR expected X,Y but got '\uff15,1'",
        "ERROR expected X,Y but got '1,2,3'", "ERROR -1,0 is off the 8x8 board",
        "ERROR coordinate too large (5000 digits)", r"ERROR expected X,Y but got '\xb2,1'",
        "ERROR INFO max_memory too large (5000 digits)", r"ERROR INFO rule needs a number, got '\xb2'",
        r"ERROR INFO timeout_turn needs a number, got '\uff15'", None, "ERROR INFO needs a KEY and a VALUE",
        "MESSAGE this model plays free-style 5 in a row; rule 3 is ignored"]
    assert eng.info == {"time_left": "-5", "rule": "0003"} and eng.moves == []  # refused values not stored
    assert talk(eng, f"BOARD\n{huge},1,1\nDONE\nBOARD\n٣,1,2\nDONE\nBOARD\n1,1,²\nDONE\nTURN 0008,0\nTURN 00001,1\n") == [
        "ERROR coordinate too large (5000 digits)", r"ERROR expected X,Y but got '\u0663,1'",
        r"ERROR bad BOARD line '1,1,\xb2': expected X,Y,1 (own) or X,Y,2 (opponent)",
        "ERROR 8,0 is off the 8x8 board", "0,0"]                # leading zeros are still numbers


def test_echoed_input_is_short_ascii_and_blank_lines_are_silent():
    eng = engine()
    lines = talk(eng, "X" * 100_000 + "\n\n   \n\t\n\x00\x01\n" + "\U0001F600" * 50 + "\nSTART 8\nTURN a"
                 + "b" * 100_000 + "\n\x00TU\x00RN\t3,\x001\x00\r\nturn   4,1  \nFR\x85OB\n")
    assert lines == ["UNKNOWN command 'XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX...",
                     r"UNKNOWN command '\U0001f600\U0001f600\U0001f600\U0001f600...", "OK",
                     "ERROR expected X,Y but got 'abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb...",
                     "0,0", "1,0", r"UNKNOWN command 'FR\x85OB'"]  # control characters (NUL, CR) are ignored
    assert eng.moves == [11, 0, 12, 1]


def test_a_line_over_a_million_characters_is_refused_whole():
    eng = engine()
    too_long = "TURN 1," + "1" * 1_000_000                     # not read into memory at once, nor parsed
    assert talk(eng, f"START 8\n{too_long}\nBEGIN\nBOARD\n{too_long}\n1,1,2\nDONE\n") == [
        "OK", "ERROR line too long (over 1000000 characters)", "0,0",
        "ERROR bad BOARD line '(a line too long)': expected X,Y,1 (own) or X,Y,2 (opponent)"]
    assert talk(engine(), too_long) == ["ERROR line too long (over 1000000 characters)"]  # and at EOF


def test_board_block_without_done():
    eng = engine()
    # a command inside the block drops it and is not run (one reply for its line); INFO is applied
    assert talk(eng, "START 8\nBOARD\n4,4,2\nTURN 1,1\nBEGIN\n") == [
        "OK", "ERROR TURN before DONE of a BOARD block: the block and the TURN are dropped", "0,0"]
    assert eng.moves == [0]
    eng = engine()
    assert talk(eng, "START 8\nBOARD\n4,4,2\nINFO timeout_turn 900\nBOARD\n5,5,2\nDONE\n") == [
        "OK", "ERROR BOARD before DONE: the earlier block is dropped, collecting the new one", "0,0"]
    assert eng.moves == [45, 0] and eng.info == {"timeout_turn": "900"}
    eng = engine()                                              # END still ends the brain
    assert talk(eng, "START 8\nBOARD\n4,4,2\nEND\nBEGIN\n") == ["OK"] and eng.finished
    eng = engine()                                              # EOF inside the block: run() just returns
    assert talk(eng, "START 8\nBOARD\n4,4,2\n") == ["OK"] and eng.board_lines == ["4,4,2"]
    eng = engine()                                              # no end of lines without DONE: capped
    stones = "".join(f"{i % 8},{i // 8 % 8},2\n" for i in range(5000))
    assert talk(eng, f"START 8\nBOARD\n{stones}") == ["OK"] and len(eng.board_lines) == 65
    assert eng.respond("DONE") == "ERROR BOARD block has more than 64 lines" and eng.respond("BEGIN") == "0,0"


def test_a_failing_chooser_is_an_error_line_not_a_crash():
    def broken(moves):
        raise RuntimeError("out of memory\nsecond line")

    eng = GomocupEngine(GomokuRules(8, 5), broken)
    assert talk(eng, "START 8\nBEGIN\nABOUT\n") == [
        "OK", r"ERROR internal error on 'BEGIN': RuntimeError 'out of memory\nsecond line'", 'name="stonelab"']


BRAIN = """
from stonelab.games.gomoku import GomokuRules
from stonelab.protocols.gomocup import GomocupEngine
GomocupEngine(GomokuRules(8, 5), lambda moves: min(set(range(64)) - set(moves)),
              about={"name": "bad \\udcff name"}).run()
"""
STRICT_UTF8 = {"LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8:strict"}


def test_the_real_stdin_takes_any_byte_under_a_strict_utf8_locale(repo_root):
    proc = subprocess.run([sys.executable, "-c", BRAIN], cwd=repo_root, capture_output=True, timeout=60,
                          env={**os.environ, **STRICT_UTF8},
                          input=b"START 8\n\xff\nTURN \xff,1\r\nBOARD\n1,1,2\n\x00\xc3\n")
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr.decode(errors="replace")
    assert proc.stdout.decode().splitlines() == [
        "OK", r"UNKNOWN command '\ufffd'", r"ERROR expected X,Y but got '\ufffd,1'"]  # EOF in BOARD: exit 0
    proc = subprocess.run([sys.executable, "-c", BRAIN], cwd=repo_root, capture_output=True, timeout=60,
                          env={**os.environ, **STRICT_UTF8}, input=b"ABOUT\nEND\n")
    assert proc.returncode == 0 and proc.stdout == b'name="bad ? name"\n', proc.stderr  # unencodable: '?'


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


def test_play_py_is_a_gomocup_brain_with_only_protocol_on_stdout(tmp_path, repo_root,
                                                                  tiny_alphazero_checkpoint):
    path = tiny_alphazero_checkpoint(tmp_path / "az.ckpt")
    proc = subprocess.run([sys.executable, "src/play.py", "protocol=gomocup", f"ckpt_path={path}",
                           "search.playouts=16"], cwd=repo_root, capture_output=True, timeout=300,
                          env={**os.environ, **STRICT_UTF8},
                          input=b"START 6\nBEGIN\nTURN 0,0\nTURN garbage\n\xff\xfe\nEND\n")
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    lines = proc.stdout.decode().splitlines()
    assert lines[:2] == ["OK", "MESSAGE this model was trained for 4 in a row, not 5"]
    assert all(len(line.split(",")) == 2 for line in lines[2:4])
    assert lines[4] == "ERROR expected X,Y but got 'garbage'"
    assert lines[5] == r"UNKNOWN command '\ufffd\ufffd'" and len(lines) == 6


def test_play_py_refuses_a_go_checkpoint_and_an_unknown_protocol(tmp_path, repo_root, tiny_maddison_checkpoint,
                                                                 tiny_alphazero_checkpoint):
    go = tiny_maddison_checkpoint(tmp_path / "go.ckpt")
    az = tiny_alphazero_checkpoint(tmp_path / "az.ckpt")
    for args, message in ((["protocol=gomocup", f"ckpt_path={go}"], "not a stonelab alphazero checkpoint"),
                          (["protocol=gtp", f"ckpt_path={az}"], "not a Go move predictor"),
                          (["protocol=ugi", f"ckpt_path={go}"], "choose gtp (Go models) or gomocup")):
        proc = subprocess.run([sys.executable, "src/play.py", *args], cwd=repo_root, text=True,
                              capture_output=True, timeout=300, input="")
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
