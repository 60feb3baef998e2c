"""What `src/play.py` runs: a trained model as an engine on stdin/stdout.

``protocol=gtp``: a Go model (maddison_cnn, belief_vit, alphazero on Go) over GTP.
``protocol=gomocup``: an AlphaZero Gomoku checkpoint as a Gomocup brain, with search.
"""

from __future__ import annotations

from omegaconf import DictConfig

from stonelab import __version__
from stonelab.errors import ConfigError
from stonelab.utils.device import resolve_device
from stonelab.utils.threads import set_threads

PROTOCOLS = ("gtp", "gomocup")


def gtp_engine(cfg: DictConfig):
    """A Go checkpoint over GTP: searched unless ``search.playouts=0``."""
    from stonelab.models.alphazero_go import go_model_from_checkpoint
    from stonelab.protocols.gtp_search import ResignRule, search_gtp_engine

    predictor = go_model_from_checkpoint(cfg.ckpt_path, device=resolve_device(cfg.device), symmetries=cfg.symmetries)
    try:
        resign = ResignRule(cfg.resign_below, cfg.resign_moves)
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc)) from None
    return search_gtp_engine(predictor, cfg.search, resign=resign, name=cfg.name, version=__version__)


def gomocup_engine(cfg: DictConfig):
    """The brain, ready to move at once: model loaded, search compiled, tree allocated. The
    protocol times each move but not START, so all of that happens before START is read;
    nothing here imports Lightning (4-5 s)."""
    from stonelab.arena.players import NeuralMCTSPlayer
    from stonelab.games.gomoku_candidates import PruningConfig
    from stonelab.models import checkpoints
    from stonelab.models.evaluator import net_evaluator
    from stonelab.protocols.gomocup import GomocupEngine, search_chooser
    from stonelab.search.mcts import MCTSConfig

    search, pruning = MCTSConfig(**cfg.search), PruningConfig(**cfg.pruning)  # bad values: refused before loading
    loaded = checkpoints.load(cfg.ckpt_path, game="gomoku")  # a Go checkpoint is refused by name
    game = loaded.game
    player = NeuralMCTSPlayer(game, net_evaluator(loaded.net, resolve_device(cfg.device)), search, pruning=pruning)
    player.warm_up()
    about = {"name": cfg.name, "version": __version__, "author": "stonelab",
             "country": "", "www": "", "email": ""}
    return GomocupEngine(game, search_chooser(player), about=about)


def run(cfg: DictConfig) -> None:
    if cfg.protocol not in PROTOCOLS:
        raise ConfigError(f"protocol={cfg.protocol!r}: choose gtp (Go models) or gomocup (alphazero Gomoku)")
    if not cfg.get("ckpt_path"):
        raise ConfigError("ckpt_path=... is required: a Go checkpoint (protocol=gtp) "
                          "or an alphazero one (protocol=gomocup)")
    set_threads(cfg.torch_threads)
    engine = gtp_engine(cfg) if cfg.protocol == "gtp" else gomocup_engine(cfg)
    engine.run()
