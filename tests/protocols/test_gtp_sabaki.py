"""The engine's analysis through Sabaki's GTP module (npm @sabaki/gtp), read with the
field rules of Sabaki's parseAnalysis. Skipped where node, npm or the package is missing
(the package is installed once into a cache folder; the install needs the network)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "stonelab" / "npm-sabaki-gtp"

# A 9x9 engine with a tiny net, whose estimates count stones (a score for each move)
ENGINE = """
import torch
from stonelab.games.go.rules import GoRules
from stonelab.models.inference import BoardEstimate, MovePredictor
from stonelab.models.nets.maddison import MaddisonNet
from stonelab.protocols.gtp_search import search_gtp_engine
torch.manual_seed(0)
torch.set_num_threads(1)
net = MovePredictor(MaddisonNet(36, 9, depth=2, filters=8), GoRules(9), "maddison")
net.estimates = lambda states: [BoardEstimate(0.6, float((s.board * s.to_play).sum()) + 0.5, 12.0, None)
                                for s in states]
search_gtp_engine(net, {"playouts": 16, "leaves_per_game": 4, "go": {"leaf_value": "playouts",
                        "leaf_playouts": 1}}).run()
"""


@pytest.fixture(scope="module")
def sabaki_gtp() -> Path:
    """The node_modules folder holding @sabaki/gtp (installed on first use)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed")
    modules = CACHE / "node_modules"
    if not (modules / "@sabaki" / "gtp").is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run(["npm", "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", "@sabaki/gtp@3"],
                           capture_output=True, timeout=180, check=True)
        except (subprocess.SubprocessError, OSError) as exc:
            pytest.skip(f"npm install @sabaki/gtp failed: {exc}")
    return modules


def test_sabaki_reads_every_analysis_entry(sabaki_gtp):
    env = {**os.environ, "NODE_PATH": str(sabaki_gtp),
           "PYTHONPATH": os.pathsep.join([str(HERE.parents[1] / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(["node", str(HERE / "sabaki_analysis.js"), sys.executable, ENGINE], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["name"] == "stonelab"
    for mode in ("kata", "lz"):
        run = result[mode]
        assert run["lines"] >= 3 and not run["stopError"]  # stop ended the stream, then answered "="
        assert [len(entries) for entries in run["parsed"]] == run["entries"]  # Sabaki drops none
        for entry in run["parsed"][-1]:
            assert entry["pvKey"] == "pv" and entry["pv"][0] == entry["move"]
            assert entry["visits"] >= 0 and 0 <= entry["winrate"] <= 100
            # white to move after black E5: each white move leaves black 1 - 1 + 0.5 stones ahead
            assert entry["scoreLead"] == (-0.5 if mode == "kata" else None)
    assert any(entry["visits"] > 0 for entry in result["kata"]["parsed"][-1])
