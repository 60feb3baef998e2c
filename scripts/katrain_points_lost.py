"""KaTrain's own points lost for the players' moves of held-out games, with our engine behind it.

    pip install -e .[katrain]
    python scripts/katrain_points_lost.py [--ckpt models/go19_resnet3x64_kgs_aux.ckpt]
        [--games-dir ../shared/data/kgs] [--games 10] [--moves 60] [--visits 50]

Drives KaTrain's engine class (``katrain.core.engine.KataGoEngine``, custom backend: our
``src/play.py protocol=analysis``) and its game tree (``katrain.core.game_node.GameNode``)
as the KaTrain app does: each of the first ``--moves`` moves of the first ``--games`` even
19x19 games of ``--games-dir`` is a node, each node is analysed with ``--visits`` visits,
and KaTrain's ``GameNode.points_lost`` (the mistake size it colours every move by) is read
for each move. Prints its median and mean and the share of moves KaTrain calls a mistake of
2 points or more. The 2015 KGS games in ../shared/data/kgs were never trained on;
docs/analysis_engine.md has the numbers.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
import time

import numpy as np

from stonelab.data.sgf import even_games
from stonelab.protocols.gtp import move_name

os.environ.setdefault("KIVY_NO_ARGS", "1")  # Kivy reads sys.argv and logs to the console unless told
os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
os.environ.setdefault("KIVY_NO_FILELOG", "1")
os.environ.setdefault("KIVY_HOME", tempfile.mkdtemp(prefix="kivy-home-"))


class Host:
    """What KataGoEngine calls on KaTrain's app: a log (kept) and popups (ignored)."""

    def __init__(self):
        self.logged: list[tuple[str, int]] = []

    def log(self, message, level=0):
        self.logged.append((str(message), level))

    def __call__(self, *args, **kwargs):
        pass

    def update_state(self):
        pass


def game_nodes(game, moves: int):
    """KaTrain's nodes of the game's first ``moves`` moves, root first."""
    from katrain.core.game_node import GameNode
    from pysgf import Move

    root = GameNode(properties={"SZ": "19", "KM": str(game.komi), "RU": "japanese"})
    nodes = [root]
    for colour, point in game.moves[:moves]:
        nodes.append(nodes[-1].play(Move.from_gtp(move_name(point, 19), player="B" if colour == 1 else "W")))
    return nodes


def analysed(engine, nodes, host: Host, timeout: float = 3600) -> None:
    for node in nodes:
        node.analyze(engine)
    deadline = time.monotonic() + timeout
    while not all(node.analysis_complete for node in nodes):
        if not engine.check_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the engine stopped answering: {host.logged[-5:]}")
        time.sleep(0.2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ckpt", default="models/go19_resnet3x64_kgs_aux.ckpt")
    parser.add_argument("--games-dir", default="../shared/data/kgs")
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--moves", type=int, default=60)
    parser.add_argument("--visits", type=int, default=50)
    args = parser.parse_args(argv)
    try:
        from katrain.core.engine import KataGoEngine
    except ImportError:
        print("error: KaTrain is not installed here (pip install -e .[katrain])", file=sys.stderr)
        return 2
    games = even_games([args.games_dir], 19, args.moves)[:args.games]
    if not games or not os.path.isfile(args.ckpt):
        print(f"error: no even 19x19 game of {args.moves} moves in {args.games_dir}, or no file {args.ckpt}",
              file=sys.stderr)
        return 2
    play = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "play.py")
    command = "exec " + shlex.join([sys.executable, play, "protocol=analysis", f"ckpt_path={args.ckpt}",
                                    "torch_threads=1"])
    host = Host()
    config = {"backend": "custom", "altcommand": command, "allow_recovery": False, "max_visits": args.visits,
              "fast_visits": args.visits, "_enable_ownership": True, "wide_root_noise": 0.0, "max_time": 600.0}
    engine = KataGoEngine(host, config)
    lost = []
    try:
        for game in games:
            nodes = game_nodes(game, args.moves)
            analysed(engine, nodes, host)
            lost += [node.points_lost for node in nodes[1:] if node.points_lost is not None]
    finally:
        engine.shutdown(finish=False)
    lost = np.array(lost)
    print(f"{len(games)} games x {args.moves} moves, {args.visits} visits, KaTrain {KataGoEngine.__module__}: "
          f"points lost median {np.median(lost):.2f}, mean {np.mean(lost):.2f}; "
          f"{np.mean(lost >= 2):.2f} of the moves lose 2 points or more by KaTrain's count")
    return 0


if __name__ == "__main__":
    sys.exit(main())
