"""The games stonelab plays: one registry, filled by the games' own packages.

Each game is one package under ``stonelab/games/`` (``gomoku/``, ``go/``, ``othello/``)
whose ``__init__`` calls `register` with its `GameSpec`. Everything else that depends on
the game looks it up here: a checkpoint's identity and the rules rebuilt from it, the
search adapter, the pure-MCTS opponent, the replay symmetries, the protocols that can
serve a trained model, the tactics suite. No other module chooses by a game's name or
rules type, and nothing falls back to another game: an unknown one is refused naming the
registered ones.

Games are discovered: every package in ``stonelab/games/`` that registers a spec is a
game, so adding one is adding its folder and a ``conf/game/*.yaml`` (docs/adding_a_game.md).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from stonelab.errors import ConfigError
from stonelab.games import symmetry


@dataclass(frozen=True)
class GameSpec:
    """What the rest of stonelab needs to know about one game.

    name: the game's word in checkpoints' identities and messages' keys ("gomoku").
    title: the game in sentences ("Gomoku").
    rules: the rules class ``conf/game/*.yaml`` builds (its ``_target_``); an instance has
      ``name`` (e.g. "gomoku_8x8_c5"), ``num_actions`` and ``search_game(settings=None)``,
      which returns ``registry.of(self).search(self, settings)``; board and action shapes
      come from that search game (``board_shape``, ``action_shape``), so a board need not
      be square (Connect Four's 6x7 with 7 column actions).
    identity: ``(rules, model) -> dict``: the rules' fields a checkpoint of ``model`` stores
      beside ``model`` and ``game`` (board size, line length, komi ...).
    from_identity: ``identity -> rules``: the rules a checkpoint's model plays.
    describe: ``identity -> str``: the board in words for messages ("6x6, 4 in a row").
    search: ``(rules, settings=None) -> SearchGame`` (`stonelab.search.game`): the game as
      self-play, matches and engines search it, with the game's own search settings
      (``settings_group``); seed 000's candidate restriction (Gomoku's ``pruning``) is
      refused by games that have none.
    pure_mcts: ``(rules, playouts, c_puct, seed) -> player``: the uniform-prior, random-
      rollout opponent of matches and in-run evaluation (`stonelab.arena.players`).
    symmetries: the board symmetries the rules keep, by name (`stonelab.games.symmetry.NAMES`:
      "identity", "rot90", "rot180", "rot270", "mirror_lr", "transpose", "mirror_ud",
      "antitranspose"), or one of its groups: ``SQUARE`` (all 8), ``RECTANGLE``,
      ``LEFT_RIGHT`` (Connect Four: gravity gives the board a "down"), ``HALF_TURN`` (Hex),
      ``IDENTITY_ONLY``. Self-play stores every position in each of them. `register` refuses
      an unknown name, a set without "identity" or one not closed under composition; a board
      that is not square refuses quarter turns and diagonal mirrors where it meets them
      (`stonelab.games.symmetry.group_on`); tests/games/test_game_symmetries.py plays the
      rules through each declared one.
    protocols: the engine protocols ``src/play.py`` can serve a trained model over
      ("gtp", "gomocup"); empty: none yet.
    tactics: ``(cfg, path, playouts) -> dict`` running ``task=tactics``, or None.
    opponents: search-free players of the game by name, ``name -> (rules, seed) -> player``,
      that ``task=match opponent=<name>`` plays (Othello's "positional").
    learned_by: in words, which models learn it (for the message refusing another model).
    max_opening: ``rules -> int``: the most random opening moves a match may start from
      (``task=match opening_moves``) without deciding the game (default: a quarter of a
      square board's ``n * n`` points; other boards give their own).
    bench_playouts, bench_games, bench_parallel: ``python -m stonelab.bench mcts`` defaults
      (playouts per move, games, games searched at once), sized so that a run takes about two
      minutes on one idle core (8x8 connect-5 at 400 playouts: 105 s) and finishes beside busy processes.
    settings_group: the config group of the game's own search settings, beside the generic
      ``search`` (Gomoku: ``pruning``, seed 000's candidate restriction; Go: ``go``, the leaf
      value of a move predictor's search); None: the game has none.
    settings: ``values -> settings``: that group's values (None: its defaults) as the game's
      settings object (a frozen dataclass, so equal settings compare equal); bad values are
      refused there (`own_settings`).
    """

    name: str
    title: str
    rules: type
    identity: Callable[..., dict]
    from_identity: Callable[[dict], object]
    describe: Callable[[dict], str]
    search: Callable[..., object]
    pure_mcts: Callable[..., object]
    symmetries: tuple[str, ...] = symmetry.SQUARE
    protocols: tuple[str, ...] = ()
    tactics: Callable[..., dict] | None = None
    opponents: Mapping[str, Callable[..., object]] = field(default_factory=dict)
    learned_by: str = "model=alphazero"
    max_opening: Callable[[object], int] = lambda rules: rules.n * rules.n // 4
    bench_playouts: int = 400
    bench_games: int = 32
    bench_parallel: int = 32
    settings_group: str | None = None
    settings: Callable[[Mapping | None], object] | None = None


_GAMES: dict[str, GameSpec] = {}
_discovered = False


def register(spec: GameSpec) -> GameSpec:
    """Add ``spec`` to the registry (a game package's ``__init__`` calls this once)."""
    known = _GAMES.get(spec.name)
    if known is not None and known.rules is not spec.rules:
        raise RuntimeError(f"two games registered as {spec.name!r}: {known.rules} and {spec.rules}")
    if (spec.settings_group is None) != (spec.settings is None):
        raise RuntimeError(f"game {spec.name!r}: settings_group and settings come together")
    try:
        symmetry.group(spec.symmetries)
    except ValueError as exc:
        raise RuntimeError(f"game {spec.name!r}: {exc}") from None
    _GAMES[spec.name] = spec
    return spec


def _discover() -> None:
    """Import every game package under stonelab/games/ once (each registers itself)."""
    global _discovered
    if _discovered:
        return
    import stonelab.games as package

    for module in pkgutil.iter_modules(package.__path__):
        if module.ispkg:
            importlib.import_module(f"{package.__name__}.{module.name}")
    _discovered = True


def names() -> tuple[str, ...]:
    """The registered games' names, sorted."""
    _discover()
    return tuple(sorted(_GAMES))


def get(name: str, *, key: str = "game") -> GameSpec:
    """The spec of game ``name``; an unknown one is refused naming the registered games."""
    _discover()
    spec = _GAMES.get(name)
    if spec is None:
        raise ConfigError(f"{key}={name!r} is not a game stonelab knows; the registered games are "
                          f"{', '.join(names())} (docs/adding_a_game.md adds one)")
    return spec


def of(rules) -> GameSpec:
    """The spec of the game ``rules`` belong to (by the rules' class)."""
    _discover()
    for spec in _GAMES.values():
        if type(rules) is spec.rules:
            return spec
    raise ConfigError(f"{type(rules).__name__} are not the rules of a registered game "
                      f"({', '.join(names())}): game._target_ must be one of "
                      f"{', '.join(f'{s.rules.__module__}.{s.rules.__qualname__}' for s in _GAMES.values())}")


def of_class(rules_class: type | None) -> GameSpec | None:
    """The spec whose rules class is ``rules_class`` (None when it is no game's)."""
    _discover()
    return next((spec for spec in _GAMES.values() if spec.rules is rules_class), None)


def identity(rules, model: str) -> dict:
    """The identity a checkpoint of ``model`` playing ``rules`` carries."""
    spec = of(rules)
    return {"model": model, "game": spec.name, **spec.identity(rules, model)}


def rules_from_identity(identity: dict):
    """The rules a checkpoint's model plays, rebuilt from its identity."""
    return get(identity["game"]).from_identity(identity)


def board_symmetries(rules) -> tuple[int, ...]:
    """The symmetry indices (`stonelab.games.symmetry`) ``rules``' game declares, checked
    against its board and action grid: a quarter turn of a board that is not square is
    refused naming the game."""
    spec, search = of(rules), rules.search_game()
    try:
        return symmetry.group_on(spec.symmetries, search.board_shape, search.action_shape)
    except ValueError as exc:
        raise RuntimeError(f"game {spec.name!r} ({rules.name}): {exc}") from None


def on_board(rules, size: int):
    """``rules`` on a ``size`` x ``size`` board, every other rule kept (line length, rule set,
    komi): the boards of a mixed-size run (``data.board_sizes``). A game whose identity has no
    ``board_size`` (Connect Four's rows and columns), or a size its rules refuse, is refused."""
    spec = of(rules)
    identity = spec.identity(rules, "")
    if "board_size" not in identity:
        raise ConfigError(f"{spec.title} has no single board size to change (its board is "
                          f"{spec.describe(identity)}): data.board_sizes is for square boards")
    if identity["board_size"] == size:
        return rules
    try:
        return spec.from_identity({**identity, "board_size": size})
    except (ValueError, ConfigError) as exc:
        raise ConfigError(f"{spec.title} on a {size}x{size} board: {exc}") from None


def own_settings(spec: GameSpec, cfg: Mapping):
    """The search settings of ``spec``'s game from its own group in ``cfg`` (None when it has
    none). Another game's group set away from that game's defaults is refused, naming the
    changed keys: its settings would otherwise be ignored without a word."""
    _discover()
    for other in _GAMES.values():
        group = other.settings_group
        if other is spec or group is None or group == spec.settings_group or cfg.get(group) is None:
            continue
        given, default = other.settings(cfg[group]), other.settings(None)
        if given != default:
            changed = [f"{group}.{k}={v}" for k, v in vars(given).items() if getattr(default, k) != v]
            raise ConfigError(f"{', '.join(changed)}: {group}.* are {other.title}'s search settings and this "
                              f"plays {spec.title}: drop the override")
    if spec.settings_group is None:
        return None
    return spec.settings(cfg.get(spec.settings_group))
