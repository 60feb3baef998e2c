"""Every registered game's declared symmetries (its spec's ``symmetries``), checked against its
rules: self-play stores each position in each of them, so each must map a game to a game.

Seeded random games are played through the search interface (`stonelab.search.game`) on the
smallest board of the game's ``conf/game/*.yaml``; for each declared symmetry the transformed
move sequence is replayed from the transformed start position, and at every ply the network
planes and the legal moves must be the transformed ones and the outcome the same. A new game
is checked here as soon as it registers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hydra.utils import get_class
from omegaconf import OmegaConf

from stonelab.games import registry, symmetry
from stonelab.games.connect4.rules import Connect4Rules
from stonelab.games.symmetry import NAMES, transform_planes, transform_points
from stonelab.search import tree as T
from stonelab.search.game import ONGOING

CONF_GAME = Path(__file__).resolve().parents[2] / "conf" / "game"
RANDOM_GAMES = 3


def conf_boards() -> dict[str, list]:
    """The rules of every ``conf/game/*.yaml``, by the name of the game they belong to."""
    boards: dict[str, list] = {}
    for path in sorted(CONF_GAME.glob("*.yaml")):
        cfg = OmegaConf.to_container(OmegaConf.load(path))
        rules = get_class(cfg.pop("_target_"))(**cfg)
        boards.setdefault(registry.of(rules).name, []).append(rules)
    return boards


def smallest_board(name: str):
    """The game ``name`` on the board of its configs with the fewest actions (the fastest games)."""
    boards = conf_boards()
    assert name in boards, f"game {name!r} has no conf/game/*.yaml (docs/adding_a_game.md)"
    return min(boards[name], key=lambda rules: rules.num_actions)


def random_games(game, count: int, seed: int) -> list[list[int]]:
    """``count`` games of uniformly random legal moves, to the end."""
    rng = np.random.default_rng(seed)
    legal = np.empty(game.num_actions, dtype=np.bool_)
    games = []
    for _ in range(count):
        positions, moves, outcome = game.new_positions(1), [], ONGOING
        while outcome == ONGOING:
            T.legal_at_root(game.spec, positions, 0, legal)
            moves.append(int(rng.choice(np.flatnonzero(legal))))
            outcome = T.play_position(game.spec, positions, 0, moves[-1])
        games.append(moves)
    return games


def planes_of(game, positions) -> np.ndarray:
    out = np.zeros((game.num_planes, *game.board_shape), dtype=np.float32)
    T.encode_root(game.spec, positions, 0, out)
    return out


def replay(game, positions, moves: list[int]) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """(planes, legal moves) before each move of ``moves`` and the outcome after it."""
    plies = []
    for move in moves:
        legal = np.zeros(game.num_actions, dtype=np.bool_)
        T.legal_at_root(game.spec, positions, 0, legal)
        planes = planes_of(game, positions)
        plies.append((planes, legal, int(T.play_position(game.spec, positions, 0, move))))
    return plies


def transformed_start(game, sym: int):
    """The start position under ``sym``: the start itself when its planes do not change (an
    empty board), else the start with its ``board`` points moved (Othello's centre discs, which
    a mirror swaps in colour); None when neither gives the transformed planes."""
    start = game.new_positions(1)
    wanted = transform_planes(planes_of(game, start), sym)
    if np.array_equal(planes_of(game, start), wanted):
        return start
    if hasattr(start, "board") and start.board.shape[-1] == np.prod(game.board_shape):
        start.board[0] = transform_points(start.board[0], game.board_shape, sym)
        if np.array_equal(planes_of(game, start), wanted):
            return start
    return None


def symmetry_violation(rules, names, games: int = RANDOM_GAMES, seed: int = 0) -> str | None:
    """Where the symmetries ``names`` fail to map ``rules``' games to games (None: nowhere)."""
    game = rules.search_game()
    indices = symmetry.group_on(names, game.board_shape, game.action_shape)
    for g, moves in enumerate(random_games(game, games, seed)):
        played = replay(game, game.new_positions(1), moves)
        for sym in indices:
            start = transformed_start(game, sym)
            if start is None:
                return f"{NAMES[sym]}: the start position cannot be turned (no `board` of points to move)"
            # where each action goes under sym (extras such as a pass stay)
            moved = np.argsort(transform_points(np.arange(game.num_actions), game.action_shape, sym))
            turned = replay(game, start, [int(moved[m]) for m in moves])
            for ply, ((planes, legal, outcome), (t_planes, t_legal, t_outcome)) in enumerate(zip(played, turned, strict=True)):
                where = f"{NAMES[sym]}: random game {g}, ply {ply}"
                if not np.array_equal(t_planes, transform_planes(planes, sym)):
                    return f"{where}: the planes are not the transformed planes"
                if not np.array_equal(t_legal, transform_points(legal, game.action_shape, sym)):
                    return f"{where}: the legal moves are not the transformed legal moves"
                if t_outcome != outcome:
                    return f"{where}: outcome {t_outcome}, not {outcome}"
    return None


@pytest.mark.parametrize("name", registry.names())
def test_declared_symmetries_keep_the_rules(name):
    rules = smallest_board(name)
    assert symmetry_violation(rules, registry.get(name).symmetries) is None


def test_a_wrong_declaration_is_caught():
    # Gravity pulls discs down: a half turn or an up-down mirror does not map Connect Four to itself.
    message = symmetry_violation(Connect4Rules(), symmetry.RECTANGLE)
    assert message is not None and message.startswith(("rot180", "mirror_ud")), message


@pytest.mark.parametrize("rules", [Connect4Rules(), Connect4Rules(7, 7, 4)])
def test_a_quarter_turn_of_connect_four_is_refused(rules):
    # 6x7 is no square; on 7x7 the 7 column actions (a 1x7 grid) still are not
    with pytest.raises(ValueError, match=r"rot90, rot270 turn the (6x7 board|1x7 action grid) on its side"):
        symmetry_violation(rules, ("identity", "rot90", "rot180", "rot270"))
