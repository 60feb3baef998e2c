"""From a checkpoint file to its game and network: the one loader of stonelab.

    loaded = checkpoints.load("logs/.../last.ckpt", game="go")
    loaded.game, loaded.net, loaded.identity, loaded.encoder, loaded.gate

`load` reads the file with `stonelab.models.identity.load_checkpoint_file` (which
names what a file that is not a checkpoint is), refuses a checkpoint of another
game or model with one line naming the file, then rebuilds the game from the
identity and the net from the constructor arguments the checkpoint stores
(`build_net`: the one function that rebuilds a model). Eval, play, the arena and
the training-time opponent all load through here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from torch import nn

from stonelab.games import registry
from stonelab.models.identity import (
    CHECKPOINT_KEY,
    EXPORT_KEY,
    CheckpointMismatchError,
    check_identity,
    describe,
    load_checkpoint_file,
    net_fit,
)

# The models a checkpoint can hold: the game each plays (None: alphazero, whose identity
# names its game, any registered one), and the net class of checkpoints that do not name
# theirs (alphazero's store only the net's arguments).
MODELS = {
    "alphazero": (None, "stonelab.models.nets.policy_value.PolicyValueNet"),
    "maddison_cnn": ("go", "stonelab.models.nets.maddison.MaddisonNet"),
    "belief_vit": ("go", "stonelab.models.nets.belief_vit.BeliefViT"),
}
GO_MODELS = tuple(m for m, (g, _) in MODELS.items() if g is not None)  # the move predictors: KGS Go


@dataclass(frozen=True)
class LoadedCheckpoint:
    """A checkpoint file's model, ready to play: the net is on the CPU, in eval mode."""

    path: str
    identity: dict
    game: object  # the rules of a registered game, as the identity says
    net: nn.Module
    state: dict = field(repr=False)  # checkpoint["stonelab"]: net_config, gate, training counters
    hparams: dict = field(default_factory=dict, repr=False)  # the module's saved hyperparameters

    @property
    def model(self) -> str:
        return self.identity["model"]

    @property
    def encoder(self) -> str | None:
        """The input planes of a Go move predictor (None for alphazero)."""
        return self.identity.get("encoder")

    @property
    def gate(self) -> dict | None:
        """A belief_vit's inference gate (None for the other models)."""
        return self.state.get("gate")


def load(path: str, *, game: str | None = None, expect: dict | None = None,
         move_predictor: bool = False) -> LoadedCheckpoint:
    """The game and trained net of checkpoint file ``path``.

    game: a registered game's name ("gomoku", "go", ...): refuse a checkpoint of another
    game (or of no stonelab model) in one line naming the file. expect: identity fields the checkpoint must
    have (a board size, a win length), refused naming each difference.
    move_predictor: refuse anything but a Go move predictor (`GO_MODELS`), AlphaZero
    on Go included.
    """
    checkpoint = load_checkpoint_file(path)
    if move_predictor:
        predicted = MODELS[GO_MODELS[0]][0]  # the game the move predictors learn (Go, from KGS)
        identity = identity_of(checkpoint, path, game=predicted)
        if identity["model"] not in GO_MODELS:
            raise CheckpointMismatchError(_other_game(path, identity, predicted))
    return from_dict(checkpoint, path, game=game, expect=expect)


def game_of(identity: dict) -> str | None:
    """The game a checkpoint's model plays: alphazero's identity names it, the others' model does."""
    model = identity.get("model")
    if model not in MODELS:
        return None
    game = identity.get("game") if MODELS[model][0] is None else MODELS[model][0]
    return game if game in registry.names() else None


def from_dict(checkpoint: dict, path: str, *, game: str | None = None,
              expect: dict | None = None) -> LoadedCheckpoint:
    """`load` for a checkpoint already read (by `load_checkpoint_file` or Lightning)."""
    identity = identity_of(checkpoint, path, game=game)
    if expect:
        check_identity(checkpoint, expect, source=path)
    state = checkpoint[CHECKPOINT_KEY]
    return LoadedCheckpoint(path=path, identity=dict(identity), game=build_game(identity, path),
                            net=build_net(checkpoint, path), state=dict(state),
                            hparams=dict(checkpoint.get("hyper_parameters") or {}))


def identity_of(checkpoint: dict, path: str, *, game: str | None = None) -> dict:
    """The checkpoint's identity, refused when it is no stonelab model's or not of ``game``."""
    state = checkpoint.get(CHECKPOINT_KEY)
    identity = state.get("identity") if isinstance(state, dict) else None
    model = identity.get("model") if isinstance(identity, dict) else None
    if game is not None and (model not in MODELS or game_of(identity) != game):
        raise CheckpointMismatchError(_other_game(path, identity if model else None, game))
    if model not in MODELS:
        found = f"model {model!r}" if model else "no stonelab model"
        raise CheckpointMismatchError(f"{path} holds {found}: not a stonelab checkpoint "
                                      f"({', '.join(MODELS)})")
    return identity


def _other_game(path: str, identity: dict | None, game: str) -> str:
    found = describe(identity) if identity else "no stonelab model"
    model = identity["model"] if identity else "no stonelab model"
    if game not in {MODELS[m][0] for m in GO_MODELS}:  # only alphazero plays it
        return f"{path} is not a stonelab alphazero checkpoint of {registry.get(game).title}: it holds {found}"
    if identity and game_of(identity) == game:
        return f"{path} holds {model!r} on Go, not a Go move predictor ({', '.join(GO_MODELS)}): it is {found}"
    return f"{path} holds {model!r}, not a Go move predictor ({', '.join(GO_MODELS)}): it is {found}"


def build_game(identity: dict, path: str = "checkpoint"):
    """The rules a checkpoint's model plays, from its identity."""
    game = game_of(identity)
    if game is None:
        raise CheckpointMismatchError(f"{path}: its stonelab identity names no game stonelab knows "
                                      f"({identity}; registered: {', '.join(registry.names())})")
    try:
        return registry.get(game).from_identity(identity)
    except KeyError as exc:
        raise CheckpointMismatchError(f"{path}: its stonelab identity lacks {exc} ({identity})") from None


def build_net(checkpoint: dict, path: str = "checkpoint") -> nn.Module:
    """The one place a trained net is rebuilt: its class and constructor arguments as the
    checkpoint stores them, then its weights (the ``net.`` entries of ``state_dict``)."""
    state = checkpoint[CHECKPOINT_KEY]
    target = state.get("net_target") or MODELS[state["identity"]["model"]][1]
    module_name, _, class_name = target.rpartition(".")
    if not module_name.startswith("stonelab.models.nets."):  # never import what a file names
        raise CheckpointMismatchError(f"{path}: net_target={target!r} is not one of stonelab's nets")
    cls = getattr(importlib.import_module(module_name), class_name)
    try:
        net = cls(**state.get("net_config", {}))
        net.load_state_dict({k[len("net."):]: v for k, v in checkpoint.get("state_dict", {}).items()
                             if k.startswith("net.")})
    except (TypeError, RuntimeError) as exc:
        first = " ".join(str(exc).split())[:300]
        raise CheckpointMismatchError(f"{path}: its weights do not fit {class_name}"
                                      f"({state.get('net_config', {})}): {first}") from None
    return net.eval()


def check_file(path: str, expect: dict) -> dict:
    """Read ``path`` and refuse it unless its identity matches ``expect`` (a resume's check);
    the checkpoint is returned, its net not built."""
    checkpoint = load_checkpoint_file(path)
    check_identity(checkpoint, expect, source=path)
    exported = checkpoint[CHECKPOINT_KEY].get(EXPORT_KEY)
    if exported:
        raise CheckpointMismatchError(
            f"{path} holds shipped weights only (exported from {exported.get('source')} at step "
            f"{exported.get('global_step')}), no optimizer or loop state: it cannot resume a run. "
            f"Play it (src/play.py ckpt_path={path}) or evaluate it (src/eval.py); "
            f"to resume, give the run's own checkpoints/last.ckpt")
    return checkpoint


# Parameters init_from may leave as initialised: the score/ownership heads and komi slopes
# grown on a net trained without them (resnet/maddison aux_heads, belief_vit score_head).
GROWN_HEADS = ("aux_heads.", "value_head.komi_slope", "belief.score.", "komi_slope")


def warm_start(model, path: str) -> dict:
    """Copy the net weights of checkpoint ``path`` into ``model.net`` (``init_from=``).

    Only the weights: the caller's optimizer, schedule and step counter start fresh. A
    file of another model, game, board or encoder is refused by `check_identity`, a net of
    another shape naming both configurations; a net of another rule set of the same game
    and board is not (`stonelab.models.identity.net_fit`: a freestyle net starts renju
    self-play). A deeper residual net than the file's (more ``model.net.blocks``) takes the
    file's blocks first and starts the rest as the identity, so it begins as the file's net.
    Returns where the weights came from and the modules that start as initialised
    (``fresh``: e.g. ``aux_heads.ownership``, ``blocks.3``).
    """
    checkpoint = load_checkpoint_file(path)
    check_identity(checkpoint, net_fit(model.identity()), source=path)
    weights = {k[len("net."):]: v for k, v in checkpoint.get("state_dict", {}).items() if k.startswith("net.")}
    if not weights:
        raise CheckpointMismatchError(f"init_from={path} holds no network weights (no state_dict entries 'net.*')")
    state = checkpoint[CHECKPOINT_KEY]
    # A net grown by heads the file lacks (aux_heads on a net trained without them) starts
    # from the file's trunk and heads, the new ones as initialised; every weight the file
    # has must still fit, and a file with weights this net lacks is refused.
    fresh = [k for k in model.net.state_dict() if k not in weights and k.startswith(GROWN_HEADS)]
    first_new_block = _first_grown_block(model.net, weights)
    if first_new_block is not None:
        fresh += [k for k in model.net.state_dict() if k.startswith("blocks.") and k not in weights
                  and int(k.split(".")[1]) >= first_new_block]
    try:
        missing, unused = model.net.load_state_dict(weights, strict=not fresh)
        if unused:
            raise RuntimeError(f"unexpected keys {sorted(unused)[:5]}")
        if not_grown := sorted(set(missing) - set(fresh)):
            raise RuntimeError(f"missing keys {not_grown[:5]}")
    except RuntimeError as exc:
        first = " ".join(str(exc).split())[:300]
        raise CheckpointMismatchError(
            f"init_from={path}: its net ({state.get('net_config', {})}) does not fit this run's "
            f"({dict(getattr(model.net, 'config', {}))}): {first}") from None
    if first_new_block is not None:
        model.net.start_as_identity(first_new_block)
    exported = state.get(EXPORT_KEY) or {}
    return {"path": path, "global_step": int(exported.get("global_step", checkpoint.get("global_step", 0))),
            "fresh": list(dict.fromkeys(".".join(k.split(".")[:2]) for k in fresh))}  # by module: blocks.3


def _first_grown_block(net, weights: dict) -> int | None:
    """The first residual block of ``net`` that ``weights`` (a shallower net's) lack, where
    ``net`` can start such blocks as the identity (`ResidualNet.start_as_identity`); None
    where nothing is grown. The file's blocks must still fit the first ones exactly."""
    if not hasattr(net, "start_as_identity"):
        return None
    have = {int(k.split(".")[1]) for k in weights if k.startswith("blocks.")}
    if not have or max(have) + 1 >= len(net.blocks):
        return None
    return max(have) + 1


def load_opponent(path: str, expect: dict) -> tuple[nn.Module, str]:
    """The net of an opponent file for a model of identity ``expect``, and the opponent's label.

    A stonelab checkpoint must match ``expect`` (game, board, ...; any rule set); a weights file that
    AlphaZero_Gomoku publishes (`stonelab.models.nets.alphazero_gomoku`) must be of the same
    Gomoku board (its file does not say the line length: its name does). Both come back on
    the CPU in eval mode.
    """
    from stonelab.models.nets import alphazero_gomoku

    if not alphazero_gomoku.looks_like(path):
        # Its net plays under this match's rules, whichever rule set it was trained under.
        return load(path, game=expect.get("game"), expect=net_fit(expect)).net, f"checkpoint:{path}"
    net, n, label = alphazero_gomoku.load(path)
    if expect.get("game") != alphazero_gomoku.GAME or expect.get("board_size") != n:
        raise CheckpointMismatchError(f"{path} is AlphaZero_Gomoku's net for {n}x{n} Gomoku; "
                                      f"this one plays {describe(expect)}")
    return net, label
