"""What `src/play.py` runs: a trained model as an engine on stdin/stdout.

``protocol=gtp``: a Go move predictor (maddison_cnn, belief_vit) over GTP.
``protocol=gomocup``: an AlphaZero Gomoku checkpoint as a Gomocup brain, with search.
"""

from __future__ import annotations

from omegaconf import DictConfig

from stonelab import __version__
from stonelab.errors import ConfigError
from stonelab.utils.device import resolve_device
from stonelab.utils.threads import set_threads

PROTOCOLS = ("gtp", "gomocup")
ENGINE_TREE_NODES = 20_000  # room for analysis to grow (19x19: ~170 MB of edges)


def gtp_engine(cfg: DictConfig):
    """A Go checkpoint over GTP: searched unless ``search.playouts=0``."""
    from stonelab.models.inference import MovePredictor
    from stonelab.protocols.gtp_search import ResignRule, SearchGTPEngine

    predictor = MovePredictor.from_checkpoint(cfg.ckpt_path, device=resolve_device(cfg.device))
    playouts = cfg.search.playouts
    if not isinstance(playouts, int) or playouts < 0:
        raise ConfigError(f"search.playouts={playouts!r} must be an integer >= 0 (0: no search)")
    try:
        resign = ResignRule(cfg.resign_below, cfg.resign_moves)
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc)) from None
    player = go_search_player(predictor, cfg.search) if playouts > 0 else None
    def choose(states, histories):  # without search: the net's move (a belief_vit's gate applies)
        return predictor.play_moves(states, histories=histories)

    return SearchGTPEngine(predictor.rules.n, choose, player, priors=lambda state: predictor.probabilities([state])[0],
                           ownership=ownership_map(predictor), playouts=playouts,
                           seconds=cfg.search.seconds, resign=resign, name=cfg.name, version=__version__)


def go_search_player(predictor, search_cfg):
    """The `GoSearchPlayer` of a Go move predictor with the ``search`` settings."""
    from stonelab.arena.go_players import GoSearchPlayer
    from stonelab.games.go_search import GoSearch
    from stonelab.models.go_evaluator import GoNetEvaluator
    from stonelab.search.mcts import MCTSConfig

    config = MCTSConfig(**search_cfg)
    rules = predictor.rules
    search = GoSearch(rules, max_moves=3 * rules.num_points)  # a whole game, then playouts to its end
    evaluator = GoNetEvaluator(predictor, search, value=config.go_value, rollouts=config.go_value_playouts)
    max_nodes = config.max_nodes or max(2 * (config.playouts + 2) + 8, ENGINE_TREE_NODES)
    return GoSearchPlayer(rules, evaluator, config, max_nodes=max_nodes)


def ownership_map(predictor):
    """``state -> [n*n]`` end-of-game owner from the side to move's view (a belief_vit), or None."""
    def ownership(state):
        out = predictor.outputs([state])
        return None if out.belief_map is None else out.belief_map[0].flatten().cpu().numpy()
    return ownership


def gomocup_engine(cfg: DictConfig):
    from stonelab.arena.players import NeuralMCTSPlayer
    from stonelab.games.gomoku_candidates import PruningConfig
    from stonelab.models import checkpoints
    from stonelab.models.alphazero import net_evaluator
    from stonelab.protocols.gomocup import GomocupEngine, search_chooser
    from stonelab.search.mcts import MCTSConfig

    loaded = checkpoints.load(cfg.ckpt_path, game="gomoku")  # a Go checkpoint is refused by name
    game = loaded.game
    player = NeuralMCTSPlayer(game, net_evaluator(loaded.net, resolve_device(cfg.device)), MCTSConfig(**cfg.search),
                              pruning=PruningConfig(**cfg.pruning))
    about = {"name": cfg.name, "version": __version__, "author": "stonelab",
             "country": "", "www": "", "email": ""}
    return GomocupEngine(game, search_chooser(player), about=about)


def run(cfg: DictConfig) -> None:
    if cfg.protocol not in PROTOCOLS:
        raise ConfigError(f"protocol={cfg.protocol!r}: choose gtp (Go models) or gomocup (alphazero Gomoku)")
    if not cfg.get("ckpt_path"):
        raise ConfigError("ckpt_path=... is required: a maddison_cnn or belief_vit checkpoint (protocol=gtp) "
                          "or an alphazero one (protocol=gomocup)")
    set_threads(cfg.torch_threads)
    engine = gtp_engine(cfg) if cfg.protocol == "gtp" else gomocup_engine(cfg)
    engine.run()
