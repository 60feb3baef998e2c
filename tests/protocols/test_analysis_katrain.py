"""src/play.py protocol=analysis as KaTrain drives it: the query KaTrain builds, over a pipe,
and (where ``pip install stonelab[katrain]`` put it here) KaTrain's own engine class."""

import json
import math
import os
import queue
import shlex
import subprocess
import sys
import tempfile
import threading
import time

import pytest

BOARD = 9
VISITS = 24


def katrain_query(ident: str, moves: list, ownership: bool = True) -> dict:
    """The query of katrain.core.engine.KataGoEngine.request_analysis (KaTrain 1.20), field
    for field, for a 9x9 game from the empty board with its default settings."""
    return {
        "id": ident,
        "rules": "japanese",  # KaTrain's default ruleset
        "priority": 1000,  # base_priority + PRIORITY_DEFAULT
        "analyzeTurns": [len(moves)],
        "maxVisits": VISITS,
        "komi": 6.5,
        "boardXSize": BOARD,
        "boardYSize": BOARD,
        "includeOwnership": ownership,
        "includeMovesOwnership": ownership,
        "includePolicy": True,
        "initialStones": [],
        "initialPlayer": "B",
        "moves": moves,
        "overrideSettings": {"reportAnalysisWinratesAs": "BLACK", "wideRootNoise": 0.04, "maxTime": 60.0},
        "reportDuringSearchEvery": 1,  # REPORT_DT
    }


def engine_command(repo_root, checkpoint) -> list[str]:
    return [sys.executable, str(repo_root / "src" / "play.py"), "protocol=analysis", f"ckpt_path={checkpoint}",
            "go.leaf_value=playouts", "go.leaf_playouts=1", "analysis.score_playouts=8"]


class Client:
    """A KaTrain-like client: writes queries, a thread reads the response lines."""

    def __init__(self, command):
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def send(self, query: dict):
        self.proc.stdin.write(json.dumps(query) + "\n")
        self.proc.stdin.flush()

    def final(self, ident: str, timeout: float = 600) -> tuple[dict, list]:
        """The final response to ``ident`` and every other line seen until then."""
        seen = []
        deadline = time.monotonic() + timeout
        while True:
            response = self.lines.get(timeout=max(deadline - time.monotonic(), 1))
            if response.get("id") == ident and "rootInfo" in response and not response["isDuringSearch"]:
                return response, seen
            seen.append(response)


def points_lost(parent: dict, child: dict, player: str) -> float:
    """KaTrain's GameNode.points_lost: the mover's sign times the drop in black's score lead."""
    return {"B": 1, "W": -1}[player] * (parent["rootInfo"]["scoreLead"] - child["rootInfo"]["scoreLead"])


def test_the_query_katrain_sends_gets_what_katrain_reads(tmp_path, repo_root, tiny_maddison_checkpoint):
    client = Client(engine_command(repo_root, tiny_maddison_checkpoint(tmp_path / "tiny.ckpt")))
    try:
        client.send(katrain_query("QUERY:1", []))
        client.send(katrain_query("QUERY:2", [["B", "E5"]]))
        root, seen = client.final("QUERY:1")
        child, more = client.final("QUERY:2")
        client.send({"action": "terminate", "terminateId": "QUERY:2", "id": "QUERY:3"})  # as KaTrain ends a query
        assert client.lines.get(timeout=60) == {"action": "terminate", "terminateId": "QUERY:2", "id": "QUERY:3"}
        client.proc.stdin.close()
        assert client.proc.wait(timeout=60) == 0
    finally:
        client.proc.kill()
    warnings = [r for r in seen + more if "warning" in r]
    assert warnings and not [r for r in seen + more if "error" in r]  # japanese rules, ownership: warned only
    for response in (root, child):
        info = response["rootInfo"]
        assert 1 <= info["visits"] <= VISITS and 0 <= info["winrate"] <= 1 and math.isfinite(info["scoreLead"])
        assert len(response["policy"]) == BOARD * BOARD + 1
        for move in response["moveInfos"]:  # candidate_moves: pointsLost from each move's scoreLead
            assert {"move", "visits", "winrate", "scoreLead", "order", "pv", "prior"} <= move.keys()
            assert math.isfinite(info["scoreLead"] - move["scoreLead"])
    assert child["rootInfo"]["currentPlayer"] == "W"
    assert math.isfinite(points_lost(root, child, "B"))


def test_stdin_is_read_as_bytes_and_a_warm_start_says_nothing_of_compiling(tmp_path, repo_root,
                                                                          tiny_maddison_checkpoint):
    """Through the real stdin: a line that is no UTF-8 is refused naming its byte (never
    changed), an empty line gets an error, a query of a megabyte is answered. The second
    start finds numba's cache the first filled, and says nothing of compiling: that line on
    stderr is for a real compile only."""
    command = engine_command(repo_root, tiny_maddison_checkpoint(tmp_path / "tiny.ckpt"))
    ident = "x" * 1_100_000
    lines = [b'{"id":"caf\xe9","action":"query_version"}', b"", json.dumps(katrain_query(ident, [])).encode()]
    for _ in range(2):
        done = subprocess.run(command, input=b"".join(line + b"\n" for line in lines), capture_output=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
    responses = [json.loads(line) for line in done.stdout.splitlines()]
    assert "not valid UTF-8 (byte 0xE9" in responses[0]["error"] and "Empty request line" in responses[1]["error"]
    assert [r["id"] for r in responses if "rootInfo" in r and not r["isDuringSearch"]] == [ident]
    assert b"compiling" not in done.stderr, done.stderr[-2000:]


# -- KaTrain's own engine class -------------------------------------------------------------------------

os.environ.setdefault("KIVY_NO_ARGS", "1")        # kivy must not read pytest's arguments
os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
os.environ.setdefault("KIVY_NO_FILELOG", "1")
if "KIVY_HOME" not in os.environ:                 # kivy writes its config here: a folder removed at exit
    _kivy_home = tempfile.TemporaryDirectory(prefix="kivy-home-")
    os.environ["KIVY_HOME"] = _kivy_home.name


class FakeKaTrain:
    """What KataGoEngine calls on KaTrain's app: log and popups (collected)."""

    def __init__(self):
        self.logged: list[tuple[str, int]] = []
        self.calls: list[tuple] = []

    def log(self, message, level=0):
        self.logged.append((str(message), level))

    def __call__(self, *args, **kwargs):
        self.calls.append(args)

    def update_state(self):
        pass


def test_katrain_engine_class_analyses_with_our_engine(tmp_path, repo_root, tiny_maddison_checkpoint):
    engine_module = pytest.importorskip("katrain.core.engine")
    from katrain.core.constants import OUTPUT_ERROR
    from katrain.core.game_node import GameNode
    from pysgf import Move

    # KaTrain runs a custom command through a shell: exec makes the engine that shell's process,
    # so that KaTrain's terminate() reaches it (else the engine outlives the shell and
    # KaTrain's reader threads wait on its pipes for ever)
    command = "exec " + " ".join(shlex.quote(word) for word in engine_command(repo_root, tiny_maddison_checkpoint(
        tmp_path / "tiny.ckpt")))
    katrain = FakeKaTrain()
    config = {"backend": "custom", "altcommand": command, "allow_recovery": False, "max_visits": VISITS,
              "fast_visits": 8, "_enable_ownership": True, "wide_root_noise": 0.04, "max_time": 60.0}
    engine = engine_module.KataGoEngine(katrain, config)
    try:
        root = GameNode(properties={"SZ": str(BOARD), "KM": "6.5", "RU": "japanese"})
        child = root.play(Move.from_gtp("E5", player="B"))
        root.analyze(engine)
        child.analyze(engine)
        deadline = time.monotonic() + 600
        while not (root.analysis_complete and child.analysis_complete) and time.monotonic() < deadline:
            assert engine.check_alive(), katrain.logged[-5:]
            time.sleep(0.2)
    finally:
        engine.shutdown(finish=False)
    assert root.analysis_complete and child.analysis_complete, katrain.logged[-10:]
    assert not [m for m, level in katrain.logged if level == OUTPUT_ERROR], katrain.logged
    assert math.isfinite(root.score) and math.isfinite(child.score)  # KaTrain's score lead shown (B+x / W+x)
    assert root.format_score().startswith(("B+", "W+"))
    assert math.isfinite(child.points_lost)  # the mistake size KaTrain shows for B E5
    candidates = root.candidate_moves
    assert candidates and all(math.isfinite(c["pointsLost"]) for c in candidates)
    assert 0 <= root.winrate <= 1 and root.root_visits <= VISITS
