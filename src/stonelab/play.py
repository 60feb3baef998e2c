"""What `src/play.py` runs: a trained model as an engine on stdin/stdout.

``protocol=gtp``: a Go model (maddison_cnn, belief_vit, alphazero on Go) over GTP.
``protocol=gomocup``: an AlphaZero Gomoku checkpoint as a Gomocup brain, with search.
``protocol=analysis``: a Go model behind KataGo's JSON analysis engine protocol (KaTrain).
"""

from __future__ import annotations

import os
import sys

from omegaconf import DictConfig

from stonelab import __version__
from stonelab.errors import ConfigError
from stonelab.models.numpy_net import SUFFIX as NUMPY_SUFFIX  # torch-free, as this module must stay
from stonelab.protocols.warmup import CompileNotice

PROTOCOLS = ("gtp", "gomocup", "analysis")
# On stderr once numba first compiles (a fresh clone), so that nobody takes the engine for
# hung. The times: scripts/first_move_latency.py --cold on 2 cores, idle to busy.
COMPILING = {
    "gtp": "stonelab: compiling the search for this machine (first start only, ~20-90 s; "
           "python -m stonelab.compile does it ahead); until it is ready, moves come from the net alone",
    "gomocup": "stonelab: compiling the search for this machine (first start only, ~15-60 s; "
               "python -m stonelab.compile does it ahead) before START",
    "analysis": "stonelab: compiling the search for this machine (first start only, ~20-90 s; "
                "python -m stonelab.compile does it ahead); queries are read meanwhile and answered after",
}


def gtp_engine(cfg: DictConfig, notice: CompileNotice):
    """A Go checkpoint over GTP: searched unless ``search.playouts=0``. The kernels compile
    (first start) or load from numba's cache on a thread; while they compile, the engine
    answers from the moment the checkpoint is loaded and moves come from the net alone
    until the search is ready (`stonelab.protocols.gtp_search.SearchGTPEngine.search_when_ready`)."""
    from stonelab.games.go.settings import entry_point_settings
    from stonelab.models.alphazero_go import go_model_from_checkpoint
    from stonelab.protocols.gtp_search import ResignRule, search_gtp_engine
    from stonelab.utils.device import resolve_device

    settings = entry_point_settings(cfg)  # bad or foreign settings: refused before loading
    analysis = cfg.get("analysis") or {}
    predictor = go_model_from_checkpoint(cfg.ckpt_path, device=resolve_device(cfg.device), symmetries=cfg.symmetries,
                                         gate=cfg.get("gate"))
    try:
        resign = ResignRule(cfg.resign_below, cfg.resign_moves)
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc)) from None
    return search_gtp_engine(predictor, settings, resign=resign, name=cfg.name, version=__version__,
                             background=notice, rollouts=analysis.get("rollouts", 0),
                             count_settled=analysis.get("count_settled", True))


def gomocup_engine(cfg: DictConfig, notice: CompileNotice):
    """The brain, ready to move at once: model loaded, search compiled, tree allocated. The
    protocol times each move but not START, so all of that happens before START is read;
    nothing here imports Lightning (4-5 s), and a ``.npz`` file (`stonelab.models.numpy_net`)
    imports no torch either: the lean brain a tournament's memory limit allows. A first start
    says on stderr that it compiles (`CompileNotice`). (Compiling on a thread during torch's
    import, with a stand-in net, gained nothing measurable on 2 cores: both hold the GIL
    most of the time.)"""
    from stonelab.arena.players import NeuralMCTSPlayer
    from stonelab.games import registry
    from stonelab.games.gomoku.rules import MAX_BOARD, MIN_BOARD
    from stonelab.protocols.gomocup import GomocupEngine, search_chooser
    from stonelab.search.mcts import MCTSConfig

    search = MCTSConfig(**cfg.search)  # bad values: refused before loading
    game, evaluate, size_free = gomocup_model(cfg)
    pruning = registry.own_settings(registry.of(game), cfg)  # the game's own; another game's (go.*) refused
    player = NeuralMCTSPlayer(game, evaluate, search, settings=pruning)
    player.warm_up()
    notice.ready("the search is compiled")
    about = {"name": cfg.name, "version": __version__, "author": "stonelab",
             "country": "", "www": "", "email": ""}

    def chooser_for(rules):  # INFO rule, START n: the candidate restriction is freestyle's, so other rules search all
        other = NeuralMCTSPlayer(rules, evaluate, search, settings=pruning if rules.rule == game.rule else None)
        return search_chooser(other)

    return GomocupEngine(game, search_chooser(player), about=about, chooser_for=chooser_for,
                         board_sizes=(MIN_BOARD, MAX_BOARD) if size_free else None,
                         startup_seconds=seconds_since_launch())


def gomocup_model(cfg: DictConfig):
    """The checkpoint's rules, its net as the search's evaluator, and whether it plays any board size."""
    path = str(cfg.ckpt_path)
    if path.endswith(NUMPY_SUFFIX):
        from stonelab.models.numpy_net import NumpyNet

        net = NumpyNet(path)
        return net.game(), net, net.size_free
    from stonelab.models import checkpoints
    from stonelab.models.evaluator import net_evaluator
    from stonelab.utils.device import resolve_device

    loaded = checkpoints.load(path)  # its game speaks this protocol: check_protocol
    return loaded.game, net_evaluator(loaded.net, resolve_device(cfg.device)), getattr(loaded.net, "size_free", False)


def seconds_since_launch() -> float:
    """Seconds since this process started (Linux's /proc; elsewhere 0: nothing to charge)."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))  # field 22: starttime
    except (OSError, ValueError, IndexError):
        return 0.0


def analysis_engine(cfg: DictConfig, notice: CompileNotice):
    """A Go checkpoint behind KataGo's analysis protocol (`stonelab.protocols.analysis`):
    model loaded and search compiled before the first query is read (a query sent
    meanwhile waits in the pipe, as KataGo's own wait while it loads its net)."""
    from stonelab.games.go.settings import entry_point_settings
    from stonelab.models.alphazero_go import go_model_from_checkpoint
    from stonelab.protocols import analysis
    from stonelab.utils.device import resolve_device

    search = entry_point_settings(cfg)  # bad or foreign settings: refused before loading
    settings = cfg.get("analysis") or {}
    predictor = go_model_from_checkpoint(cfg.ckpt_path, device=resolve_device(cfg.device), symmetries=cfg.symmetries,
                                         gate=cfg.get("gate"))
    engine = analysis.analysis_engine(predictor, search, name=cfg.name, version=__version__,
                                      model_path=str(cfg.ckpt_path), **{key: settings[key] for key in settings})
    notice.ready("the search is compiled")
    return engine


ENGINES = {"gtp": gtp_engine, "gomocup": gomocup_engine, "analysis": analysis_engine}


def run(cfg: DictConfig) -> None:
    if cfg.protocol not in PROTOCOLS:
        raise ConfigError(f"protocol={cfg.protocol!r}: choose gtp (Go models) or gomocup (alphazero Gomoku), "
                          "or analysis (Go models, KataGo's JSON analysis protocol)")
    if not cfg.get("ckpt_path"):
        raise ConfigError("ckpt_path=... is required: a Go checkpoint (protocol=gtp or analysis) "
                          "or an alphazero one (protocol=gomocup)")
    check_protocol(str(cfg.ckpt_path), cfg.protocol)
    if not str(cfg.ckpt_path).endswith(NUMPY_SUFFIX):  # a .npz brain runs without torch
        from stonelab.utils.threads import set_threads

        set_threads(cfg.torch_threads)
    with CompileNotice(COMPILING[cfg.protocol]) as notice:
        engine = ENGINES[cfg.protocol](cfg, notice)
        engine.run()
    leave_if_warming(engine)


def check_protocol(path: str, protocol: str) -> None:
    """Refuse, in one line, a checkpoint whose game ``protocol`` does not serve (the game's
    registry entry lists its protocols)."""
    from stonelab.games import registry

    if path.endswith(NUMPY_SUFFIX):  # read without torch
        from stonelab.models.numpy_net import read

        identity = dict(read(path)[1]["stonelab"].get("identity") or {})
        game = identity.get("game") if identity.get("model") == "alphazero" else None
        describe = f"{identity.get('model')} on {game}"
    else:
        from stonelab.models import checkpoints
        from stonelab.models.identity import load_checkpoint_file

        identity = checkpoints.identity_of(load_checkpoint_file(path), path)
        game = checkpoints.game_of(identity)
        describe = checkpoints.describe(identity)
    spec = registry.get(game) if game else None
    if spec is not None and protocol not in spec.protocols:
        served = (f"serve it with protocol={spec.protocols[0]}" if spec.protocols
                  else f"no engine protocol serves {spec.title} yet")
        raise ConfigError(f"protocol={protocol} does not serve {path}: it holds {describe}; {served}")


def leave_if_warming(engine) -> None:
    """End the process now if the engine's warm-up thread is still at work (quit during a
    first start's compiling): a thread inside numba's compiler or a torch call cannot be
    stopped, and the interpreter's normal exit under it aborts ("terminate called without
    an active exception", exit code 134). numba writes its cache files whole or not at all."""
    pending = getattr(engine, "pending_player", None)
    if pending is not None and not pending.done():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
