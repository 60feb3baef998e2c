"""stonelab.utils.distributed: sums after uneven work stay apart from what signal handlers send.

Lightning 2.6's SIGTERM handler broadcasts on the default group from inside the handler.
Two gloo processes stand in for two DDP ranks: rank 0 waits in a sum while rank 1 still
works, both get a signal whose handler broadcasts like Lightning's, and both go on.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

from stonelab.utils.distributed import by_rank, share_of

RANK = r"""
import datetime, json, os, signal, sys, time, types
import torch, torch.distributed as dist
from stonelab.utils.distributed import sum_over_ranks

rank = int(sys.argv[1])
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[2], rank=rank, world_size=2,
                        timeout=datetime.timedelta(seconds=30))
trainer = types.SimpleNamespace(world_size=2, global_rank=rank, strategy=types.SimpleNamespace())
sum_over_ranks(trainer, [0])  # the side group exists before the signal
received = []

def like_lightning(signum, frame):  # lightning.pytorch.trainer.connectors.signal_connector
    flag = torch.tensor([1 if rank == 0 else 0])
    dist.broadcast(flag, src=0)
    received.append(int(flag.item()))

signal.signal(signal.SIGUSR1, like_lightning)
print("ready", flush=True)
if rank == 1:
    time.sleep(2.0)  # still at work (a round) while rank 0 waits in the sum below
votes = sum_over_ranks(trainer, [len(received) > 0, 1])
print(json.dumps({"votes": votes, "received": received}), flush=True)
# Leave without tearing gloo down: what is checked is printed, and a teardown race in
# torch's gloo threads at interpreter exit (std::terminate, SIGABRT) once failed this test.
os._exit(0)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_rank_waiting_in_a_sum_still_runs_a_signal_handler_that_broadcasts(repo_root):
    env = {**os.environ, "PYTHONPATH": str(repo_root / "src")}
    port = str(_free_port())
    ranks = [subprocess.Popen([sys.executable, "-c", RANK, str(rank), port], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for rank in (0, 1)]
    try:
        for proc in ranks:
            assert proc.stdout.readline().strip() == "ready", proc.stderr.read()[-3000:]
        time.sleep(0.5)  # rank 0 is now waiting in the sum, rank 1 asleep in its work
        for proc in ranks:
            os.kill(proc.pid, signal.SIGUSR1)
        outputs = [proc.communicate(timeout=60) for proc in ranks]
    finally:
        for proc in ranks:
            proc.kill()
    for proc, (out, err) in zip(ranks, outputs, strict=True):
        assert proc.returncode == 0, err[-3000:]
        # The handlers' broadcasts paired with each other; rank 0 voted before the signal came,
        # rank 1 after, and the sum holds both votes.
        assert json.loads(out.splitlines()[-1]) == {"votes": [1.0, 2.0], "received": [1]}


def test_per_rank_state_keeps_the_single_process_layout_and_finds_each_ranks_share():
    assert by_rank(None, "buffer", {"size": 3}) == {"buffer": {"size": 3}}  # one process: as always
    state = {"buffer": "rank 0's", "other_ranks": ["rank 1's"]}
    assert [share_of(state, "buffer", rank) for rank in (0, 1, 2)] == ["rank 0's", "rank 1's", None]
    assert share_of({"buffer": "old"}, "buffer", 1) is None  # a checkpoint of one process, resumed by two
