"""The GTP engine: protocol framing, rules through the protocol, bad lines, and src/play.py."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

from stonelab.games.go.rules import GoRules
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


# -- hardening: each case below once ended the process or answered nonsense

def first_legal(states, histories):
    """A chooser with no network: the lowest legal point (pass when none is left)."""
    return [int(np.flatnonzero(state.legal_mask())[0]) for state in states]


def quick(n: int = 9) -> GTPEngine:
    return GTPEngine(n, first_legal)


def replies(eng: GTPEngine, script: str) -> list[str]:
    return talk(eng, script).split("\n\n")[:-1]


def test_numbers_and_ids_are_ascii_digits_only():
    out = replies(quick(), "boardsize ²\nboardsize ٩\n١٢ name\n12 name\n007 boardsize 009\nboardsize "
                           + "9" * 5000 + "\n")
    assert out[0] == r"? board size must be a whole number in ASCII digits, got '\xb2'"
    assert out[1].startswith("? board size must be a whole number in ASCII digits")
    assert out[2:5] == ["? unknown command", "=12 stonelab", "=007"]  # "١٢" is no id: it is read as the command
    assert out[5] == "? board size too large (5000 digits)"


def test_komi_must_be_a_finite_number():
    eng = quick()
    out = replies(eng, "komi nan\nkomi inf\nkomi -1e999\nkomi 6.5 7\nkomi ٣\nkomi\nkomi -0.5\nfinal_score\n")
    assert all(r.startswith("? komi needs one finite number") for r in out[:6]), out
    assert out[6:] == ["=", "= B+0.5"] and eng.komi == -0.5


def test_a_handicap_that_fills_the_board_is_refused_and_the_board_stays_empty():
    eng = quick()
    every_point = " ".join(move_name(p, 9) for p in range(81))
    out = replies(eng, f"set_free_handicap {every_point}\nset_free_handicap {every_point.rsplit(' ', 1)[0]}\n")
    assert out[0] == "? bad vertex list: 2..80 distinct points, no pass"
    assert out[1] == "=" and eng.state.board.sum() == 80 and eng.state.to_play == -1


def test_the_capturer_of_a_ko_may_play_again_on_the_ko_point():
    eng = quick()
    setup = "play b B9\nplay w C9\nplay b A8\nplay w D8\nplay b B7\nplay w C7\nplay w B8\nplay b C8\n"
    assert replies(eng, setup + "play w B8\nplay b B8\n")[-2:] == ["? illegal move (ko)", "="]


def test_play_goes_on_after_two_passes():
    eng = quick()
    out = replies(eng, "play b pass\nplay w pass\nplay b E5\ngenmove w\nplay b pass\nplay w pass\ngenmove b\n")
    assert out[:3] == ["=", "=", "="] and out[3] == "= A9"
    assert out[4:6] == ["=", "="] and out[6].startswith("= ") and out[6] != "= pass"


def test_a_failing_chooser_or_an_overlong_line_is_a_failure_not_an_exit():
    def broken(states, histories):
        raise RuntimeError("out of memory\nsecond line")

    out = replies(GTPEngine(9, broken), "3 genmove b\nplay b " + "x" * 1_000_001 + "\n4 name\n")
    assert out == [r"?3 internal error on 'genmove': RuntimeError 'out of memory\nsecond line'",
                   "? line too long (over 1000000 characters)", "=4 stonelab"]


# -- game management

def test_fixed_handicap_places_the_standard_points():
    eng = quick(19)
    out = replies(eng, "1 fixed_handicap 9\n2 fixed_handicap 2\nclear_board\nfixed_handicap 1\nfixed_handicap 10\n"
                       "fixed_handicap ²\nfixed_handicap\nfixed_handicap 3\nplay w K10\n")
    assert out[0] == "=1 D4 Q16 D16 Q4 D10 Q10 K4 K16 K10" and out[1] == "?2 board not empty"
    assert out[3:5] == ["? invalid number of stones: 19x19 takes 2..9"] * 2
    assert out[5].startswith("? number of stones must be a whole number") and out[6].startswith("? fixed_handicap needs")
    assert out[7:] == ["= D4 Q16 D16", "="] and eng.state.board.sum() == 3 - 1
    assert replies(quick(9), "fixed_handicap 5\n") == ["= C3 G7 C7 G3 E5"]  # 3-3 points below 13x13
    assert replies(quick(13), "fixed_handicap 4\n") == ["= D4 K10 D10 K4"]
    assert replies(quick(10), "fixed_handicap 5\nfixed_handicap 4\n") == [
        "? invalid number of stones: 10x10 takes 2..4", "= C3 H8 C8 H3"]  # no middle on an even board


def test_place_free_handicap_chooses_the_standard_points():
    eng = quick()
    out = replies(eng, "7 place_free_handicap 1\nplace_free_handicap 81\nplace_free_handicap x\n"
                       "place_free_handicap 3\nplace_free_handicap 3\n")
    assert out[0] == "?7 invalid number of stones: 2..80" and out[1] == out[0][2:].join(["?", ""])
    assert out[2].startswith("? number of stones must be") and out[3:] == ["= C3 G7 C7", "? board not empty"]
    assert eng.state.to_play == -1
    assert replies(quick(), "place_free_handicap 40\n") == ["= C3 G7 C7 G3 C5 G5 E3 E7 E5"]  # fewer, as GTP allows


GAME = "(;GM[1]FF[4]SZ[9]KM[5.5]HA[2]AB[cg][gc];W[ee];B[ef];W[];B[fe])"


def test_loadsgf_loads_the_position_before_a_move_and_the_komi(tmp_path):
    (tmp_path / "game.sgf").write_text(GAME)
    (tmp_path / "big.sgf").write_text("(;SZ[19];B[aa])")
    (tmp_path / "bad.sgf").write_text("(;SZ[9];B[aa")
    (tmp_path / "illegal.sgf").write_text("(;SZ[9];B[aa];W[aa])")
    eng = quick()
    game = tmp_path / "game.sgf"
    out = replies(eng, f"1 loadsgf {game} 3\nshowboard\n2 loadsgf {game}\nloadsgf {game} 99\n"
                       f"loadsgf {tmp_path}/missing.sgf\nloadsgf {tmp_path}/big.sgf\nloadsgf {tmp_path}/bad.sgf\n"
                       f"loadsgf {tmp_path}/illegal.sgf\nloadsgf {game} 0\nloadsgf {game} ٣\nloadsgf\n"
                       f"loadsgf {game} 1 2\nloadsgf {game} 1\n")
    assert out[0] == "=1" and eng.komi == 5.5
    assert out[1].count("X") == 3 and out[1].count("O") == 1  # AB C3 G7, W E5, B E4 (move 3 not yet)
    assert out[2:4] == ["=2", "="]
    assert out[4] == f"? cannot load file {ascii(str(tmp_path / 'missing.sgf'))} (No such file or directory)"
    assert out[5].endswith("(SZ[19]: this model plays 9x9)") and "(parse_error" in out[6]
    assert out[7].endswith("(move 2 is illegal: occupied)")
    assert out[8].startswith("? move number must be 1 or more") and out[9].startswith("? move number must be a whole")
    assert out[10].startswith("? loadsgf needs") and out[11].startswith("? loadsgf needs")
    assert out[12] == "=" and len(eng.positions) == 1 and eng.state.board.sum() == 2  # the handicap alone
    whole = quick()
    assert replies(whole, f"loadsgf {game}\n") == ["="] and len(whole.positions) == 5
    assert whole.state.board.sum() == 4 - 1 and whole.state.to_play == -1  # black moved last


def test_printsgf_writes_the_game_that_loadsgf_reads_back(tmp_path):
    eng = quick()
    out = replies(eng, "komi 0.5\nfixed_handicap 2\nplay w E5\nplay b pass\nplay b D4\n5 printsgf\n")
    assert out[-1] == "=5 (;GM[1]FF[4]CA[UTF-8]AP[stonelab:]SZ[9]KM[0.5]HA[2]AB[gc][cg]\n;W[ee];B[];B[df])"
    path = tmp_path / "out.sgf"
    assert replies(eng, f"printsgf {path}\nprintsgf {tmp_path}\nprintsgf a b\n") == [
        "=", f"? cannot write {ascii(str(tmp_path))} (not a regular file: a directory)",
        "? printsgf takes at most a file name"]
    again = quick()
    assert replies(again, f"loadsgf {path}\nprintsgf\n")[1] == out[-1].replace("=5", "=")
    assert [p.board.tolist() for p in again.positions] == [p.board.tolist() for p in eng.positions]


def test_final_status_list_finds_the_dead_stones(tmp_path):
    # black walls off the left, white the right; one white stone (B7) lies in black's area
    # and one black stone (H4) in white's: both are dead, the walls are alive
    rows = ["...X.O..."] * 9
    rows[2], rows[5] = ".O.X.O...", "...X.O.X."
    black = "".join(f"[{chr(97 + c)}{chr(97 + r)}]" for r in range(9) for c in range(9) if rows[r][c] == "X")
    white = "".join(f"[{chr(97 + c)}{chr(97 + r)}]" for r in range(9) for c in range(9) if rows[r][c] == "O")
    (tmp_path / "end.sgf").write_text(f"(;SZ[9]KM[7.5]AB{black}AW{white};B[];W[])")
    eng = quick()
    out = replies(eng, f"loadsgf {tmp_path / 'end.sgf'}\n1 final_status_list dead\n2 final_status_list alive\n"
                       "3 final_status_list seki\nfinal_status_list\nfinal_status_list black_territory\n")
    assert out[1] == "=1 B7\nH4"
    assert out[2] == "=2 D9 D8 D7 D6 D5 D4 D3 D2 D1\nF9 F8 F7 F6 F5 F4 F3 F2 F1"
    assert out[3] == "=3" and out[4] == out[5] == "? final_status_list needs alive, dead or seki"


def test_loadsgf_refuses_setup_stones_without_liberties(tmp_path):
    (tmp_path / "setup.sgf").write_text("(;SZ[9]AB[ba][ab]AW[aa];B[ee])")
    eng = quick()
    assert replies(eng, f"play b E5\nloadsgf {tmp_path / 'setup.sgf'}\n") == [
        "=", "? cannot load file (illegal setup stones: suicide)"]
    assert len(eng.positions) == 2  # the game before stays


def answered_within(eng: GTPEngine, line: str, seconds: float = 60.0) -> str:
    """The engine's answer to ``line``, failing the test (not hanging it) if it blocks."""
    answer = []
    worker = threading.Thread(target=lambda: answer.append(eng.respond(line)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert answer, f"{line!r} blocked the engine"
    return answer[0].strip()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_loadsgf_and_printsgf_refuse_what_is_not_a_regular_file(tmp_path):
    """A FIFO blocked loadsgf for ever (open waits for a writer) and /dev/zero never ends."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    eng = quick()
    assert answered_within(eng, f"loadsgf {fifo}") == f"? cannot load file {ascii(str(fifo))} (not a regular file: a FIFO)"
    assert answered_within(eng, f"printsgf {fifo}") == f"? cannot write {ascii(str(fifo))} (not a regular file: a FIFO)"
    assert answered_within(eng, f"loadsgf {tmp_path}") == (
        f"? cannot load file {ascii(str(tmp_path))} (not a regular file: a directory)")
    if os.path.exists("/dev/zero"):
        assert answered_within(eng, "loadsgf /dev/zero") == (
            "? cannot load file '/dev/zero' (not a regular file: a character device)")
    (tmp_path / "game.sgf").write_text("(;SZ[9];B[ee])")
    link = tmp_path / "link.sgf"
    link.symlink_to(tmp_path / "game.sgf")  # a link to a regular file is one
    assert answered_within(eng, f"loadsgf {link}") == "=" and len(eng.positions) == 2


def test_play_py_says_on_stderr_that_it_compiles_and_quits_at_once_meanwhile(tmp_path, repo_root,
                                                                               tiny_maddison_checkpoint):
    """A fresh clone compiles numba's kernels for a minute: one line on stderr says so at the
    start (not the protocol's stdout), and a quit meanwhile ends the engine cleanly, though
    a thread is still compiling."""
    from stonelab.play import COMPILING

    path = tiny_maddison_checkpoint(tmp_path / "tiny.ckpt")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "empty_numba_cache")}  # nothing cached: all compiles
    proc = subprocess.run([sys.executable, "src/play.py", f"ckpt_path={path}"], cwd=repo_root, env=env, text=True,
                          input="1 name\n2 protocol_version\nquit\n", capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "=1 stonelab\n\n=2 2\n\n=\n\n"
    assert proc.stderr.count(COMPILING["gtp"]) == 1 and proc.stderr.startswith(COMPILING["gtp"])
    assert "terminate called" not in proc.stderr and "Traceback" not in proc.stderr



def test_final_score_takes_the_dead_stones_off(tmp_path):
    """Black owns A-D (36 points), white F-J (36), column E is dame; a dead white stone
    lies on B7. Counted as alive it spoiled black's area: W+35.5 (9 - 37 - 7.5). The 9 dame
    are filled in turn from black, who is to move: 5 to 4, so W+6.5, GNU Go 3.8's answer."""
    rows = ["...X.O..."] * 9
    rows[2] = ".O.X.O..."
    black = "".join(f"[{chr(97 + c)}{chr(97 + r)}]" for r in range(9) for c in range(9) if rows[r][c] == "X")
    white = "".join(f"[{chr(97 + c)}{chr(97 + r)}]" for r in range(9) for c in range(9) if rows[r][c] == "O")
    (tmp_path / "end.sgf").write_text(f"(;SZ[9]KM[7.5]AB{black}AW{white};B[];W[])")
    out = replies(quick(), f"loadsgf {tmp_path / 'end.sgf'}\n1 final_status_list dead\n2 final_score\n")
    assert out[1:] == ["=1 B7", "=2 W+6.5"]


# White's corner group (D9 A8 B8 C8 D8) has only A9 and C9 left, around black's stone on B9:
# dead by reading (black's A9 or C9 kills it), yet both of those moves are self-atari, which
# random playouts never play, so the playouts leave it standing. Black walls off A-E, white
# G-J; column F is dame. White moves first after the game (";W[];B[]").
NAKADE = [".X.OX.O..", "OOOOX.O..", "XXXXX.O..", *["....X.O.."] * 6]


class Ownership:
    """A net's ``estimates`` with a fixed ownership (side to move's view); counts its calls."""

    def __init__(self, black_view: np.ndarray | None, to_play: int):
        self.ownership = None if black_view is None else black_view * to_play
        self.calls = 0

    def __call__(self, states):
        from stonelab.models.inference import BoardEstimate

        self.calls += 1
        return [BoardEstimate(None, None, None, self.ownership) for _ in states]


def test_a_nets_ownership_finds_a_dead_group_the_playouts_miss(tmp_path):
    """With a net's ownership blended in (``net_weight``), the group its ownership gives to
    black is dead, in final_status_list and in final_score alike: GNU Go 3.8's D9 A8 B8 C8
    D8 and B+9.5 (black 45, white 27 + 1 of the 9 dame, komi 7.5). The playouts alone call
    it alive (W+2.5: A9 and C9 are no dame, self-atari for both) and never ask the net; a
    net without an ownership head changes nothing."""
    (tmp_path / "end.sgf").write_text(f"(;SZ[9]KM[7.5]AB{sgf_points(NAKADE, 'X')}AW{sgf_points(NAKADE, 'O')};W[];B[])")
    black_view = np.where(np.arange(81) % 9 < 5, 1.0, np.where(np.arange(81) % 9 > 5, -1.0, 0.0))
    script = f"loadsgf {tmp_path / 'end.sgf'}\n1 final_status_list dead\n2 final_score\n3 final_status_list alive\n"
    net = Ownership(black_view, to_play=-1)  # white is to move: the net answers in white's view
    alone = GTPEngine(9, first_legal, estimates=net)
    assert replies(alone, script)[1:3] == ["=1", "=2 W+2.5"] and net.calls == 0
    blended = GTPEngine(9, first_legal, estimates=net)
    blended.net_weight = 0.75
    out = replies(blended, script)
    assert out[1:3] == ["=1 D9 A8 B8 C8 D8", "=2 B+9.5"]
    assert "D9" not in out[3] and "B9" in out[3] and net.calls == 1  # one judgement for the position
    headless = GTPEngine(9, first_legal, estimates=Ownership(None, to_play=-1))
    headless.net_weight = 0.75
    assert replies(headless, script)[1:3] == ["=1", "=2 W+2.5"]


def sgf_points(rows: list[str], stone: str) -> str:
    return "".join(f"[{chr(97 + c)}{chr(97 + r)}]" for r, row in enumerate(rows) for c, s in enumerate(row) if s == stone)


def test_version_passes_lizzies_leela_zero_check():
    """Lizzie takes the number between the first two dots as Leela Zero's minor version
    (Integer.parseInt: digits only) and wants 15 or more."""
    for version in ("", "0.3.1", "0+unknown"):
        eng = GTPEngine(9, None, version=version)
        answer = replies(eng, "version\n")[0][2:]
        assert int(answer.split(".")[1]) >= 15, answer
        assert version in answer


def test_score_check_compares_with_the_opponents_final_score(tmp_path):
    from stonelab.protocols.score_check import check

    rows = ["...X.O..."] * 9
    rows[2] = ".O.X.O..."
    black = "".join(f"[{chr(97 + c)}{chr(97 + r)}]" for r in range(9) for c in range(9) if rows[r][c] == "X")
    white = "".join(f"[{chr(97 + c)}{chr(97 + r)}]" for r in range(9) for c in range(9) if rows[r][c] == "O")
    (tmp_path / "sgf").mkdir()
    (tmp_path / "sgf" / "game_0000.sgf").write_text(
        f"(;SZ[9]KM[7.5]PB[GNU Go 3.8]PW[stonelab]C[two_passes; final_score black W+7.5, white W+35.5]"
        f"AB{black}AW{white};B[];W[])")
    (tmp_path / "sgf" / "game_0001.sgf").write_text("(;SZ[9]KM[7.5]C[resign; GNU Go 3.8 resigned];B[ee])")
    stats, results = check(tmp_path)
    assert stats["games"] == 1 and stats["same_winner"] == 1.0 and stats["mean_abs_error"] == 1.0
    assert results[0].ours == -6.5 and results[0].theirs == -7.5 and results[0].plain == -35.5


@pytest.mark.slow  # ~40 s: 1,056 recorded games replayed and scored
def test_final_score_agrees_with_gnu_go_and_pachi_on_the_recorded_matches(repo_root):
    from stonelab.protocols.score_check import check

    stats, _ = check(repo_root / "docs" / "matches")
    assert stats["games"] > 1000 and stats["same_winner"] >= 0.95 and stats["median_abs_error"] <= 1.0
