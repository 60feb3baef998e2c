"""The GTP client: response framing, helpers, and every way an engine subprocess can fail."""

from __future__ import annotations

import shlex
import sys
import time

import pytest

from stonelab.protocols.gtp_client import (
    RESIGN,
    GTPBadAnswer,
    GTPBadMove,
    GTPClient,
    GTPEngineError,
    GTPFailure,
    GTPResponse,
    LocalEngine,
    parse_response,
)

# A fake GTP engine: ``fake.py MODE [GENMOVE_REPLY]``. Modes: ok, noid (answers without ids),
# crlf (\r\n line ends), die (exits on genmove, saying why on stderr), hang (never answers
# genmove), garbage (prints a non-GTP line), wrongid. "fail" always fails; boardsize accepts 9 only.
# final_status_list answers GENMOVE_REPLY with its commas as line ends; kgs-genmove_cleanup answers A9.
FAKE = r'''
import sys, time
mode = sys.argv[1]
move = sys.argv[2] if len(sys.argv) > 2 else "pass"
known = ["name", "version", "boardsize", "genmove", "final_score", "list_commands", "quit"]
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    ident = words.pop(0) if words[0].isdigit() else ""
    command, args = words[0], words[1:]
    print(f"got {line.strip()}", file=sys.stderr, flush=True)
    if mode == "die" and command == "genmove":
        print("boom: out of cheese", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "hang" and command == "genmove":
        time.sleep(60)
    if mode == "garbage":
        print("Beginning ASCII mode game.", flush=True)
    ident = {"noid": "", "wrongid": "99"}.get(mode, ident)
    ok, text = True, ""
    if command == "name":
        text = "fake"
    elif command == "version":
        text = "1.0"
    elif command == "list_commands":
        text = "\n".join(known)
    elif command == "known_command":
        text = str(args[0] in known).lower()
    elif command == "genmove":
        text = move
    elif command == "final_score":
        text = "W+12.5"
    elif command == "final_status_list":
        text = move.replace(",", "\n")
    elif command == "kgs-genmove_cleanup":
        text = "A9"
    elif command == "fail":
        ok, text = False, "failed on purpose"
    elif command == "boardsize" and args != ["9"]:
        ok, text = False, "unacceptable size"
    end = "\r\n" if mode == "crlf" else "\n"
    sys.stdout.write(f"{'=' if ok else '?'}{ident} {text}".rstrip(" ").replace("\n", end) + end + end)
    sys.stdout.flush()
    if command == "quit":
        break
'''


@pytest.fixture
def fake(tmp_path):
    """``fake(mode, move="pass", timeout=10) -> GTPClient`` of the fake engine; all closed at the end."""
    script = tmp_path / "fake.py"
    script.write_text(FAKE)
    clients = []

    def start(mode: str, move: str = "pass", timeout: float = 10) -> GTPClient:
        clients.append(GTPClient(shlex.join([sys.executable, str(script), mode, move]), timeout=timeout))
        return clients[-1]

    yield start
    for client in clients:
        client.close()


def test_parse_response_ids_text_and_multiple_lines():
    assert parse_response(["=12 D4"]) == GTPResponse(True, 12, "D4")
    assert parse_response(["="]) == GTPResponse(True, None, "")
    assert parse_response(["=3 "]) == GTPResponse(True, 3, "")  # GNU Go's empty answer
    assert parse_response(["?7 illegal move"]) == GTPResponse(False, 7, "illegal move")
    assert parse_response(["= name", "genmove", "quit"]).text == "name\ngenmove\nquit"
    assert parse_response(["=", "   A B C", " 3 . . ."]).text == "   A B C\n 3 . . ."  # showboard
    for bad in ([], ["hello"], ["=x1 D4"]):
        with pytest.raises(ValueError, match="not a GTP response"):
            parse_response(bad)


@pytest.mark.parametrize("mode", ["ok", "noid", "crlf"])
def test_client_commands_and_helpers(fake, mode):
    engine = fake(mode, "D4")
    assert engine.name() == "fake" and engine.identity() == "fake 1.0"
    assert engine.send("list_commands").split("\n") == ["name", "version", "boardsize", "genmove",
                                                        "final_score", "list_commands", "quit"]
    assert engine.known_command("final_score") and not engine.known_command("frobnicate")
    engine.boardsize(9)
    engine.clear_board()
    engine.komi(7.5)
    engine.play(1, 0)
    assert engine.genmove(-1) == 5 * 9 + 3  # D4 on 9x9: row 5 from the top, column D
    assert engine.final_score() == "W+12.5"
    engine.close()
    assert engine.process.returncode == 0 and engine.closed  # quit answered, then it exited


def test_an_engines_label_drops_the_greeting_after_its_version():
    from stonelab.protocols.gtp_client import engine_label

    pachi = "11.99 (Genjo-devel): If you believe you have won but I am still playing, please help me"
    assert engine_label("Pachi UCT", pachi) == "Pachi UCT 11.99 (Genjo-devel)"
    assert engine_label("GNU Go", "3.8") == "GNU Go 3.8"
    assert engine_label("x", "") == "x"


def test_failure_carries_the_engines_message_and_the_client_goes_on(fake):
    engine = fake("ok")
    with pytest.raises(GTPFailure, match="fake.py ok pass refused 'fail': failed on purpose$") as info:
        engine.send("fail")
    assert info.value.message == "failed on purpose" and info.value.command == "fail"
    with pytest.raises(GTPFailure, match=r"unacceptable size \(it refuses a 19x19 board\)"):
        engine.boardsize(19)
    assert engine.name() == "fake"


@pytest.mark.parametrize("reply,expected", [("pass", 81), ("PASS", 81), ("resign", RESIGN), ("j1", 80)])
def test_genmove_answers(fake, reply, expected):
    engine = fake("ok", reply)
    engine.boardsize(9)
    assert engine.genmove(1) == expected


def test_genmove_answer_that_is_no_vertex(fake):
    engine = fake("ok", "Z99")
    engine.boardsize(9)
    with pytest.raises(GTPBadMove, match="answered genmove with 'Z99'"):
        engine.genmove(1)


def test_cleanup_genmove_asks_kgs_genmove_cleanup(fake):
    engine = fake("ok", "D4")
    engine.boardsize(9)
    assert engine.genmove(1, cleanup=True) == 0 and engine.genmove(1) == 5 * 9 + 3  # A9, then D4


@pytest.mark.parametrize("reply,expected", [("D4 E4,A9", [48, 49, 0]), ("", [])])
def test_final_status_list_reads_every_vertex_of_every_line(fake, reply, expected):
    engine = fake("ok", reply)
    engine.boardsize(9)
    assert engine.final_status_list("dead") == expected


@pytest.mark.parametrize("reply,message", [("D4 Z99", "answered 'final_status_list dead' with 'Z99'"),
                                           ("pass", "with a pass, not a stone")])
def test_final_status_list_that_names_no_stone(fake, reply, message):
    engine = fake("ok", reply)
    engine.boardsize(9)
    with pytest.raises(GTPBadAnswer, match=message):
        engine.final_status_list("dead")


def test_missing_or_empty_command():
    with pytest.raises(GTPEngineError, match="engine command not found: /nonexistent/gtp-engine$"):
        GTPClient("/nonexistent/gtp-engine --mode gtp")
    with pytest.raises(GTPEngineError, match="empty engine command"):
        GTPClient("  ")


def test_engine_that_dies_is_reported_with_its_exit_code_and_stderr(fake):
    engine = fake("die")
    engine.boardsize(9)
    with pytest.raises(GTPEngineError, match=r"exited \(code 3\) before answering 'genmove b'.*boom: out of cheese"):
        engine.genmove(1)
    with pytest.raises(GTPEngineError, match="sent after the engine was closed"):
        engine.name()


def test_engine_that_stops_answering_times_out_and_is_killed(fake):
    engine = fake("hang", timeout=0.5)
    assert engine.name() == "fake"
    start = time.monotonic()
    with pytest.raises(GTPEngineError, match=r"no answer to 'genmove w' within 0.5 s \(engine stopped\).*got 2 genmove w"):
        engine.genmove(-1)
    assert time.monotonic() - start < 3 and engine.process.returncode is not None


@pytest.mark.parametrize("mode,message", [("garbage", "the answer to 'name' is not a GTP response: "
                                                      "'Beginning ASCII mode game.'"),
                                          ("wrongid", "the answer to 'name' has id 99, not 1")])
def test_output_that_breaks_the_protocol_stops_the_engine(fake, mode, message):
    engine = fake(mode)
    with pytest.raises(GTPEngineError, match=message):
        engine.name()
    assert engine.closed and engine.process.returncode is not None


def test_local_engine_speaks_like_a_client():
    from test_gtp import engine as tiny_engine

    with LocalEngine(tiny_engine(9), label="tiny") as local:
        assert local.name() == "stonelab" and local.known_command("final_score")
        local.boardsize(9)
        local.play(1, 40)
        move = local.genmove(-1)
        assert 0 <= move <= 81 and move != 40
        with pytest.raises(GTPFailure, match="tiny refused 'boardsize 19'.*refuses a 19x19 board"):
            local.boardsize(19)
        assert local.final_score().startswith(("B+", "W+"))
