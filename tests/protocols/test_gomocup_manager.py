"""The GomocupJudge-style manager: its game flow, pausing, time and memory limits, and the
real brain passing its default limits."""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

from stonelab.games.gomoku.rules import GomokuRules
from stonelab.protocols.gomocup_manager import MIB, Limits, main, play_game, process_memory

# A brain in a few lines: the lowest empty point; it logs what it is sent and, on each
# move, whether it was ever seen stopped (the manager pauses brains between moves).
FAKE_BRAIN = textwrap.dedent('''
    import sys, time
    n, taken, log = 8, set(), open(sys.argv[1], "a")
    behaviour = sys.argv[2]
    def reply():
        if behaviour == "slow":
            time.sleep(10)
        if behaviour == "error":
            print("ERROR something went wrong", flush=True); return
        if behaviour == "occupied" and taken:
            point = min(taken)
        else:
            point = min(set(range(n * n)) - taken)
        taken.add(point)
        print(f"{point % n},{point // n}", flush=True)
    collecting = False
    for line in sys.stdin:
        line = line.strip()
        log.write(line + "\\n"); log.flush()
        word = line.split(" ")[0]
        if word == "START":
            n = int(line.split()[1]); print("OK", flush=True)
        elif word == "BOARD":
            collecting = True
        elif collecting and word != "DONE":
            x, y, _ = line.split(","); taken.add(int(y) * n + int(x))
        elif word == "DONE":
            collecting = False; reply()
        elif word == "TURN":
            x, y = line.split()[1].split(","); taken.add(int(y) * n + int(x)); reply()
        elif word == "END":
            break
''')


@pytest.fixture
def fake(tmp_path):
    script = tmp_path / "brain.py"
    script.write_text(FAKE_BRAIN)

    def command(name: str, behaviour: str = "plain") -> str:
        return f"{sys.executable} {script} {tmp_path / name}.log {behaviour}"

    return command


def test_memory_of_this_process_is_read_from_proc():
    uss, rss = process_memory(os.getpid())
    assert 10 * MIB < uss <= rss


def test_a_game_goes_board_first_then_turns_to_a_refereed_five(tmp_path, fake):
    record = play_game((fake("a"), fake("b")), GomokuRules(8, 5), [27], Limits(), str(tmp_path), None)
    # the opening stone (3,3) is black's, so brain 1 (white) moves first, each asked first with
    # BOARD (1: its own stones, 2: the other's), then with TURN; the referee ends the game
    assert record["reason"] in ("five", "draw") and record["opening"] == 1
    first_b = (tmp_path / "b.log").read_text().splitlines()
    assert first_b[:7] == ["START 8", "INFO timeout_turn 2000", "INFO timeout_match 180000",
                           f"INFO max_memory {350 * MIB}", "INFO game_type 1", "INFO rule 0",
                           f"INFO folder {tmp_path}"]
    assert first_b[7:11] == ["INFO time_left 180000", "BOARD", "3,3,2", "DONE"]
    a = (tmp_path / "a.log").read_text().splitlines()
    assert a[8:12] == ["BOARD", "3,3,1", "0,0,2", "DONE"] and a[12].startswith("INFO time_left")
    assert a[13] == "TURN 2,0"
    assert all(len(b["move_ms"]) >= 1 and b["peak_rss"] >= b["peak_uss"] > 0 for b in record["brains"])


@pytest.mark.parametrize("behaviour, reason", [("slow", "TLE"), ("error", "protocol"), ("occupied", "illegal")])
def test_a_brain_loses_on_time_protocol_or_an_illegal_move(tmp_path, fake, behaviour, reason):
    limits = Limits(timeout_turn=300, tolerance=200)
    record = play_game((fake("a"), fake("b", behaviour)), GomokuRules(8, 5), [], limits, str(tmp_path), None)
    assert (record["winner"], record["reason"]) == (0, reason), record["loser_detail"]


def test_a_brain_over_the_memory_limit_loses(tmp_path, fake):
    record = play_game((fake("a"), fake("b")), GomokuRules(8, 5), [], Limits(max_memory=1 * MIB, memory="uss"),
                       str(tmp_path), None)
    assert (record["winner"], record["reason"]) == (1, "MLE") and "USS" in record["loser_detail"]


def test_the_lean_brain_plays_15x15_within_gomocupjudges_default_limits(tmp_path, repo_root, tiny_alphazero_checkpoint,
                                                                       monkeypatch):
    """A 9x9-trained fully convolutional net, exported as .npz, against itself on 15x15 under
    the default limits (2,000 ms + 1,000 ms per move, 350 MiB RSS), paused between moves:
    no game lost on time, memory or protocol."""
    from stonelab.models.export import export

    brain = export(str(tiny_alphazero_checkpoint(tmp_path / "nine.ckpt", 9, 5, fully_conv=True)),
                   str(tmp_path / "nine.npz"))["out"]
    command = f"{sys.executable} src/play.py protocol=gomocup ckpt_path={brain} search.playouts=200"
    monkeypatch.chdir(repo_root)
    out = tmp_path / "judge.json"
    assert main(["--brain", command, "--brain", command, "--size", "15", "--games", "2",
                 "--folder", str(tmp_path / "folder"), "--out", str(out)]) == 0
    summary = json.loads(out.read_text())
    assert summary["faults"] == 0 and sum(summary["score"]) == 2
    for game in summary["games"]:
        assert game["reason"] in ("five", "draw")
        assert all(b["peak_rss"] < 350 * MIB and max(b["move_ms"]) < 3000 for b in game["brains"])


def test_cli_needs_two_brains(capsys):
    assert main(["--brain", "x"]) == 2
    assert "needs two" in capsys.readouterr().err
