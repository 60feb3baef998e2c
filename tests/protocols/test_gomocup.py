"""The Gomocup brain: protocol lines, the game it tracks, bad input, search, and src/play.py."""

from __future__ import annotations

import io
import os
import queue
import re
import subprocess
import sys
import threading
import time
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from stonelab.arena.players import NeuralMCTSPlayer
from stonelab.games.gomoku.rules import GomokuRules
from stonelab.models.alphazero import net_evaluator
from stonelab.models.nets.policy_value import PolicyValueNet
from stonelab.protocols import gomocup
from stonelab.protocols.gomocup import (
    MEMORY_MARGIN,
    MIN_BUDGET_S,
    GomocupClock,
    GomocupEngine,
    search_chooser,
)
from stonelab.search.mcts import MCTSConfig


def first_empty(moves: list[int], deadline: float | None = None) -> int:
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
    # INFO is never answered, except to warn that a rule is not what the model plays (or that
    # the brain already holds more memory than max_memory allows: 0 is no limit)
    assert talk(engine(), "INFO rule 0\nINFO rule 1\nINFO max_memory 0\n") == [
        "MESSAGE this model plays freestyle 5 in a row; rule 1 is ignored"]


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
        "MESSAGE this model plays freestyle 5 in a row; rule 3 is ignored"]
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
    def broken(moves, deadline):
        raise RuntimeError("out of memory\nsecond line")

    eng = GomocupEngine(GomokuRules(8, 5), broken)
    assert talk(eng, "START 8\nBEGIN\nABOUT\n") == [
        "OK", r"ERROR internal error on 'BEGIN': RuntimeError 'out of memory\nsecond line'", 'name="stonelab"']


BRAIN = """
from stonelab.games.gomoku.rules import GomokuRules
from stonelab.protocols.gomocup import GomocupEngine
GomocupEngine(GomokuRules(8, 5), lambda moves, deadline: min(set(range(64)) - set(moves)),
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


def test_clock_budget_from_the_turn_limit_the_match_time_or_both():
    assert GomocupClock().budget(225) is None                           # no limit: the playouts decide
    turn = GomocupClock(timeout_turn=1000)
    assert turn.budget(225) == pytest.approx(0.8) == turn.budget(3)    # 1 s - 0.1 s - 10 %
    assert GomocupClock(timeout_turn=0).budget(225) == MIN_BUDGET_S    # "as fast as possible"
    # the match time left is shared over the own moves expected: half the empty points, at most 30
    left = GomocupClock(time_left=60_000)
    assert left.budget(225) == pytest.approx(2 - 0.1 - 0.2)            # 60 s / 30
    assert left.budget(10) == pytest.approx(12 - 0.1 - 1.2)            # 60 s / 5
    assert left.budget(1) == pytest.approx(60 - 0.1 - 6)               # the last move may take it all
    assert GomocupClock(time_left=-500).budget(100) == MIN_BUDGET_S    # overrun: as fast as possible
    # timeout_match stands in for time_left until the manager sends it
    assert GomocupClock(timeout_match=300_000).budget(225) == pytest.approx(10 - 0.1 - 1)
    assert GomocupClock(timeout_match=300_000, time_left=30_000).budget(225) == pytest.approx(1 - 0.1 - 0.1)
    # both limits: the tighter one
    assert GomocupClock(timeout_turn=5000, time_left=30_000).budget(225) == pytest.approx(0.8)
    assert GomocupClock(timeout_turn=1000, time_left=600_000).budget(225) == pytest.approx(0.8)
    # zero match time and the protocol's "unlimited" time_left are no limit
    assert GomocupClock(timeout_match=0).budget(225) is None
    assert GomocupClock(timeout_match=300_000, time_left=2147483647).budget(225) is None
    assert GomocupClock(timeout_turn=2000, timeout_match=0, time_left=2147483647).budget(9) == pytest.approx(1.7)


def test_time_infos_set_the_clock_and_garbage_is_refused_keeping_the_old_value():
    eng = engine()
    lines = [eng.respond(line) for line in (
        "START 8", "INFO timeout_turn 1000", "INFO timeout_turn abc", "INFO timeout_turn -5",
        "INFO timeout_match -1", "INFO timeout_match 300000", "INFO time_left 1.5", "INFO time_left -20",
        "INFO timeout_turn", "BEGIN")]
    assert lines == [
        "OK", None, "ERROR INFO timeout_turn needs a number, got 'abc'",
        "ERROR INFO timeout_turn must be >= 0 milliseconds, got -5",
        "ERROR INFO timeout_match must be >= 0 milliseconds, got -1", None,
        "ERROR INFO time_left needs a number, got '1.5'", None,             # an overrun match: negative
        "ERROR INFO timeout_turn needs a number, got ''", "0,0"]
    assert eng.clock == GomocupClock(timeout_turn=1000, timeout_match=300_000, time_left=-20)


def test_each_move_gets_its_deadline_from_the_command_that_asked_for_it(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(gomocup, "time", SimpleNamespace(monotonic=lambda: now[0]))
    deadlines = []

    def recorder(moves, deadline):
        deadlines.append(deadline)
        return first_empty(moves)

    eng = GomocupEngine(GomokuRules(8, 5), recorder)
    talk(eng, "START 8\nBEGIN\nINFO timeout_turn 1000\nTURN 5,5\n")
    assert deadlines == [None, pytest.approx(100.8)]                     # no limit until INFO says one
    now[0] = 200.0
    eng.respond("BOARD")                                                 # the move's time runs from here
    now[0] = 203.0
    talk(eng, "4,4,2\nINFO time_left 6000\nDONE\n")                      # INFO inside the block counts
    assert deadlines[-1] == pytest.approx(200 + 0.2 - 0.1 - 0.02)        # 6 s / 30 moves = 0.2 s


def test_search_chooser_replays_only_what_changed_and_passes_the_deadline():
    calls = []

    class Recorder:
        def reset(self, num_games):
            calls.append("allocate")

        def reset_game(self, g):
            calls.append("new game")

        def observe(self, g, move):
            calls.append(move)

        def choose(self, games, *, deadline):
            calls.append(("search", deadline))
            return np.array([7])

    choose = search_chooser(Recorder())
    assert calls == ["allocate"]                               # the tree is allocated before any move
    assert choose([3], None) == 7 and calls[1:] == [3, ("search", None)]
    choose([3, 7, 5], 12.5)                                    # the game went on: two new moves
    assert calls[3:] == [7, 5, ("search", 12.5)]
    choose([3, 9], None)                                       # another line (TAKEBACK / BOARD): same tree
    assert calls[6:] == ["new game", 3, 9, ("search", None)]


def test_the_search_takes_an_immediate_win():
    torch.manual_seed(0)
    rules = GomokuRules(8, 5)
    player = NeuralMCTSPlayer(rules, net_evaluator(PolicyValueNet(8)), MCTSConfig(playouts=200))
    eng = GomocupEngine(rules, search_chooser(player))
    # own stones at 1..4,3 (open four), the opponent scattered: 0,3 or 5,3 wins at once
    lines = talk(eng, "START 8\nBOARD\n1,3,1\n2,3,1\n3,3,1\n4,3,1\n0,0,2\n7,0,2\n0,7,2\n7,7,2\nDONE\n")
    assert lines[1] in ("0,3", "5,3")


def test_max_memory_shrinks_the_search_tree_to_fit_and_the_brain_still_plays():
    torch.manual_seed(0)
    rules = GomokuRules(15, 5)
    player = NeuralMCTSPlayer(rules, net_evaluator(PolicyValueNet(15)), MCTSConfig(playouts=100_000))
    eng = GomocupEngine(rules, search_chooser(player))
    big = player.mcts.tree_bytes()
    assert big > 500 * 2**20  # 100,000 playouts on 15x15: a tree of over 500 MiB
    limit = eng.resident_bytes() + 64 * 2**20
    lines = talk(eng, f"INFO max_memory {limit}\nSTART 15\nINFO timeout_turn 300\nBEGIN\n")
    assert lines[0].startswith("MESSAGE search capped at ") and lines[0].endswith(f"max_memory {limit / 2**20:.0f} MiB")
    playouts = int(lines[0].split()[4])
    assert 16 <= playouts < 100_000 and player.config.playouts == playouts
    assert player.mcts.tree_bytes() <= 64 * 2**20 - MEMORY_MARGIN
    assert lines[1] == "OK" and len(lines[2].split(",")) == 2 and len(lines) == 3  # the first move, searched
    assert eng.resident_bytes() <= limit
    # a limit the tree already fits says nothing; 0 is no limit
    assert talk(eng, f"INFO max_memory {limit}\nINFO max_memory 0\n") == []


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
    for args, message in ((["protocol=gomocup", f"ckpt_path={go}"],
                           f"protocol=gomocup does not serve {go}: it holds a maddison_cnn Go model (9x9); "
                           "serve it with protocol=gtp"),
                          (["protocol=gtp", f"ckpt_path={az}"],
                           f"protocol=gtp does not serve {az}: it holds an alphazero Gomoku model "
                           "(6x6, 4 in a row); serve it with protocol=gomocup"),
                          (["protocol=ugi", f"ckpt_path={go}"],
                           "protocol=ugi: no such option of group protocol (choose analysis, gomocup, gtp)")):
        proc = subprocess.run([sys.executable, "src/play.py", *args], cwd=repo_root, text=True,
                              capture_output=True, timeout=300, input="")
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


class Manager:
    """A Gomocup manager in a test: starts ``python src/play.py protocol=gomocup`` (under
    ``-X importtime``, into ``stderr_path``), sends lines and times each reply from the
    moment its command is written."""

    def __init__(self, args: list[str], stderr_path, root, env: dict[str, str] | None = None):
        self.stderr = open(stderr_path, "w")  # noqa: SIM115  (closed in end())
        self.spawned = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-X", "importtime", "src/play.py", "protocol=gomocup", *args],
                                     cwd=root, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env={**os.environ, **(env or {})})
        self.replies: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.replies.put(line.strip())

    def send(self, line: str) -> float:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return time.monotonic()

    def ask(self, line: str, replies: int = 1) -> tuple[list[str], float]:
        """The reply lines to ``line`` and the seconds until the last came (a hung brain fails
        the test after 5 minutes rather than hang it)."""
        sent = self.send(line)
        answer = [self.replies.get(timeout=300) for _ in range(replies)]
        return answer, time.monotonic() - sent

    def end(self) -> int:
        self.send("END")
        code = self.proc.wait(timeout=60)
        self.stderr.close()
        return code


def test_play_py_answers_start_loaded_and_every_timed_move_within_its_second(tmp_path, repo_root,
                                                                            tiny_alphazero_checkpoint):
    # 100,000 playouts take minutes here: only the clock can end these searches in a second
    ckpt = tiny_alphazero_checkpoint(tmp_path / "az.ckpt")
    brain = Manager([f"ckpt_path={ckpt}", "search.playouts=100000"], tmp_path / "stderr", repo_root)
    start, _ = brain.ask("START 6", replies=2)
    start_s = time.monotonic() - brain.spawned                 # 5 s here at load 7 (7.3 s with Lightning)
    assert start[0] == "OK" and start_s < 120
    brain.send("INFO timeout_turn 1000")
    taken: set[str] = set()
    moves = []                                                 # (command, seconds to the reply, budget)

    def free() -> str:
        point = next(f"{x},{y}" for y in range(6) for x in range(6) if f"{x},{y}" not in taken)
        taken.add(point)
        return point

    def move(command: str, clock: GomocupClock) -> None:
        [reply], seconds = brain.ask(command)
        assert re.fullmatch(r"[0-5],[0-5]", reply) and reply not in taken, (command, reply)
        moves.append((command, seconds, clock.budget(36 - len(taken))))
        taken.add(reply)

    turn = GomocupClock(timeout_turn=1000)
    move("BEGIN", turn)
    move(f"TURN {free()}", turn)
    move(f"TURN {free()}", turn)
    assert brain.ask("RESTART")[0] == ["OK"]
    taken.clear()
    brain.send("BOARD")
    for owner in (2, 1, 2):                                    # 2: the manager's stones, 1: the brain's
        brain.send(f"{free()},{owner}")
    move("DONE", turn)
    brain.send("INFO time_left 12000")                         # 12 s over 16 moves: tighter than the turn limit
    move(f"TURN {free()}", replace(turn, time_left=12000))
    assert brain.end() == 0
    # the searches (which cannot finish their playouts) replied within the second; the time
    # a reply takes is not checked against its budget from below: on a busy machine the
    # manager's clock and the brain's start a few milliseconds apart
    assert moves[-1][2] < moves[0][2] == pytest.approx(0.8)
    assert all(seconds < 1.0 for _, seconds, _ in moves), moves
    imported = {line.split("|")[-1].strip() for line in (tmp_path / "stderr").read_text().splitlines()
                if line.startswith("import time:")}
    assert "torch" in imported and "lightning" not in imported  # Lightning would add 4-5 s before START


@pytest.mark.slow
def test_a_fresh_install_compiles_before_start_not_in_the_first_timed_move(tmp_path, repo_root,
                                                                          tiny_alphazero_checkpoint):
    # an empty numba cache: every search kernel compiles (50 s here at load 8) before START's OK
    ckpt = tiny_alphazero_checkpoint(tmp_path / "az.ckpt")
    brain = Manager([f"ckpt_path={ckpt}", "search.playouts=100000"], tmp_path / "stderr", repo_root,
                    env={"NUMBA_CACHE_DIR": str(tmp_path / "numba_cache")})
    assert brain.ask("START 6", replies=2)[0][0] == "OK"
    brain.send("INFO timeout_turn 1000")
    [reply], seconds = brain.ask("BEGIN")
    assert re.fullmatch(r"[0-5],[0-5]", reply) and seconds < 1.0
    assert brain.end() == 0


def test_a_refused_start_leaves_a_board_block_one_error():
    """START 20 refused (an 8x8 model): the BOARD block after it is still read as a block, its
    stone lines are not unknown commands, and DONE answers one ERROR; START 8 then works."""
    assert talk(engine(), "START 20\nBOARD\n1,1,1\n2,2,2\nDONE\nSTART 8\nBEGIN\n") == [
        "ERROR unsupported size 20x20: this model plays only 8x8", "ERROR send START 8 first", "OK", "0,0"]


def test_info_rule_switches_the_referee_and_the_search_rules():
    """INFO rule 4 makes the brain referee renju (a forbidden point for black is refused) and
    rebuild its chooser for renju; caro is refused with a MESSAGE and the rules stay."""
    built = []

    def chooser_for(rules):
        built.append(rules)
        return lambda moves, deadline: min(set(range(225)) - set(moves))

    eng = GomocupEngine(GomokuRules(15, 5), chooser_for(GomokuRules(15, 5)), chooser_for=chooser_for)
    assert talk(eng, "INFO rule 4\n") == ["MESSAGE playing renju (rule 4) with a model trained on freestyle"]
    assert eng.rules == GomokuRules(15, 5, "renju") and built[-1] == eng.rules
    assert talk(eng, "INFO rule 8\n") == ["MESSAGE caro (rule 8) is not supported; playing renju"]
    # the opponent, black, playing (7,7) would make a double three: refused, the game as it was
    assert talk(eng, "START 15\n") == ["OK"]
    black, white = [(7, 5), (7, 6), (5, 7), (6, 7)], [(0, 0), (0, 1), (0, 2), (14, 14)]
    eng.replay([r * 15 + c for pair in zip(black, white, strict=True) for r, c in pair])
    assert talk(eng, "TURN 7,7\n") == ["ERROR 7,7 is forbidden to black (renju)"] and len(eng.moves) == 8
    assert talk(eng, "INFO rule 1\n") == ["MESSAGE playing standard (rule 1) with a model trained on freestyle"]
    assert talk(eng, "INFO rule 0\n") == [] and eng.rules == GomokuRules(15, 5)


def test_the_first_move_pays_back_the_start_up_time():
    """With 0.5 s of start-up and a 1 s turn limit (0.8 s after the margin), the first move
    gets 0.3 s and later ones 0.8 s."""
    budgets = []

    def timed(moves, deadline):
        budgets.append(deadline - time.monotonic())
        return first_empty(moves)

    eng = GomocupEngine(GomokuRules(8, 5), timed, startup_seconds=0.5)
    talk(eng, "INFO timeout_turn 1000\nSTART 8\nBEGIN\nTURN 7,7\n")
    assert budgets[0] == pytest.approx(0.3, abs=0.05) and budgets[1] == pytest.approx(0.8, abs=0.05)


def test_a_model_of_any_size_opens_any_square_board_and_refuses_the_rest():
    built = []

    def chooser_for(rules):
        built.append(rules)
        return lambda moves, deadline: min(set(range(rules.n ** 2)) - set(moves))

    eng = GomocupEngine(GomokuRules(9, 5), chooser_for(GomokuRules(9, 5)), chooser_for=chooser_for,
                        board_sizes=(5, 25))
    assert talk(eng, "START 20\nBEGIN\n") == ["OK", "0,0"] and eng.rules == GomokuRules(20, 5)
    assert talk(eng, "TURN 19,19\n") == ["1,0"] and eng.moves == [0, 399, 1]
    assert talk(eng, "RECTSTART 15,15\nINFO rule 4\n") == [
        "OK", "MESSAGE playing renju (rule 4) with a model trained on freestyle"]
    assert eng.rules == GomokuRules(15, 5, "renju") and built[-1] == eng.rules
    assert talk(eng, "START 26\nRECTSTART 20,15\nSTART 4\n") == [
        "ERROR unsupported size 26x26: this model plays square boards 5x5 to 25x25",
        "ERROR unsupported size 20x15: this model plays square boards 5x5 to 25x25",
        "ERROR unsupported size 4x4: this model plays square boards 5x5 to 25x25"]
    assert eng.rules.n == 15 and len(built) == 4  # the first chooser, 20x20, 15x15, renju
    talk(eng, "START 15\n")
    assert len(built) == 4  # the same board again: nothing rebuilt


def test_play_py_plays_a_9x9_trained_fully_convolutional_net_to_a_legal_win_on_20x20(
        tmp_path, repo_root, tiny_alphazero_checkpoint):
    """One file, another board: a net trained for 9x9, exported as the torch-free .npz, opens
    20x20 and plays until a line of five ends the game, every move legal, against a seeded
    random opponent the test referees; the brain never imports torch."""
    from stonelab.models.export import export

    ckpt = export(str(tiny_alphazero_checkpoint(tmp_path / "nine.ckpt", 9, 5, fully_conv=True)),
                  str(tmp_path / "nine.npz"))["out"]
    brain = Manager([f"ckpt_path={ckpt}", "search.playouts=64"], tmp_path / "stderr", repo_root)
    assert brain.ask("START 20")[0] == ["OK"]
    rules, rng = GomokuRules(20, 5), np.random.default_rng(0)
    board, outcome, command, moves = rules.new_board(), None, "BEGIN", 0
    while outcome is None:
        [reply], _ = brain.ask(command)
        x, y = (int(v) for v in reply.split(","))
        assert 0 <= x < 20 and 0 <= y < 20 and board[y * 20 + x] == 0, reply
        outcome = play_and_judge(rules, board, y * 20 + x, brain_stone=True)
        moves += 1
        if outcome is None:
            point = int(rng.choice(np.flatnonzero(board == 0)))
            outcome = play_and_judge(rules, board, point, brain_stone=False)
            command = f"TURN {point % 20},{point // 20}"
    assert brain.end() == 0
    assert outcome == "brain" and moves >= 5  # a random opponent never stops a line of five
    imported = {line.split("|")[-1].strip() for line in (tmp_path / "stderr").read_text().splitlines()
                if line.startswith("import time:")}
    assert "numba" in imported and "torch" not in imported


def play_and_judge(rules: GomokuRules, board: np.ndarray, point: int, brain_stone: bool) -> str | None:
    """Place a stone (the brain plays black) and say who has won, if anyone, by the rules' own referee."""
    from stonelab.games.gomoku import renju
    from stonelab.games.gomoku.rules import MOVER_WINS

    board[point] = 1 if brain_stone else -1
    stones = int(np.count_nonzero(board))
    result = renju.outcome_after(board, rules.n, rules.k, rules.rule, point, stones)
    if result == MOVER_WINS:
        return "brain" if brain_stone else "opponent"
    return "draw" if stones == board.size else None


def test_info_max_memory_warns_when_the_brain_already_holds_more(monkeypatch):
    eng = engine()
    monkeypatch.setattr(GomocupEngine, "resident_bytes", staticmethod(lambda: 382 * 2**20))
    assert talk(eng, "INFO max_memory 367001600\nINFO max_memory 0\nINFO max_memory 1073741824\n") == [
        "MESSAGE this brain already uses 382 MiB, over max_memory 350 MiB; a .npz export of the model "
        "(python -m stonelab.models.export) plays without torch"]
