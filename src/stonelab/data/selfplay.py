"""data=selfplay: the DataModule that owns the replay buffer."""

from __future__ import annotations

import lightning as L
import numpy as np
from torch.utils.data import DataLoader

from stonelab.data.replay import MixedSizeReplay, ReplayBatches, ReplayBuffer
from stonelab.errors import ConfigError, check
from stonelab.games import registry
from stonelab.games.symmetry import all_symmetries, transform_points
from stonelab.utils.distributed import by_rank, share_of


class SelfPlayDataModule(L.LightningDataModule):
    """Replay buffer of ``buffer_size`` positions served as ``batch_size`` minibatches.

    With ``augment`` every position enters the buffer in each symmetry its game keeps (the
    registry's ``symmetries``: all 8 on a square board, as seed 000 does; a pass stays the
    pass). Each DDP rank owns its own buffer, filled by its own self-play, and draws the
    same number of batches; checkpoints hold every rank's.

    ``board_sizes`` (None: the game's board only): the square boards self-play plays, in equal
    shares of games, for a net with no layer tied to the board (``model/net=fully_conv``).
    The list must hold the game's own board (evaluation and the checkpoint's identity are
    that board's). Each size gets its own buffer (`MixedSizeReplay`) of ``buffer_size``
    split in proportion to its points, so each holds about as many games; a minibatch is
    one size's.
    """

    DATA = "selfplay"  # the data config that builds it (models name the one they learn from)

    def __init__(self, game, *, buffer_size: int = 10_000, batch_size: int = 512,
                 augment: bool = True, seed: int = 0, num_workers: int = 0,
                 board_sizes: list[int] | None = None):
        super().__init__()
        check([(lambda: isinstance(batch_size, int) and batch_size >= 1,
                f"data.batch_size={batch_size!r} must be a whole number >= 1"),
               (lambda: isinstance(buffer_size, int) and buffer_size >= 1,
                f"data.buffer_size={buffer_size!r} must be a whole number >= 1 (positions)")])
        if num_workers != 0:
            raise ConfigError("data.num_workers must be 0 for self-play: worker processes would "
                             "sample a frozen copy of the replay buffer")
        self.game = game
        self.batch_size = batch_size
        self.augment = augment
        self.seed = seed
        self.symmetries = registry.of(game).symmetries  # by name, as the game declares them
        self.games = boards_of(game, board_sizes)  # board size -> the rules self-play plays there
        searches = {size: rules.search_game() for size, rules in self.games.items()}  # planes and actions
        search = game.search_game()
        # Go's games end on a scored board: its ownership and margin are training targets too.
        aux_targets = hasattr(search, "final_ownership")
        self.action_shapes = {s.board_shape: s.action_shape for s in searches.values()}
        # board shape -> symmetry indices: a board that is not square refuses quarter turns here
        self.symmetry_indices = {searches[size].board_shape: registry.board_symmetries(rules)
                                 for size, rules in self.games.items()}
        if len(self.games) == 1:
            self.buffer = ReplayBuffer(buffer_size, search.num_planes, search.board_shape, search.num_actions,
                                       aux_targets=aux_targets)
        else:
            points = {size: size * size for size in self.games}
            capacities = {size: max(1, buffer_size * p // sum(points.values())) for size, p in points.items()}
            self.buffer = MixedSizeReplay(capacities, search.num_planes,
                                          {size: s.num_actions for size, s in searches.items()}, aux_targets)

    def add_games(self, planes: np.ndarray, policies: np.ndarray, values: np.ndarray,
                  aux: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> int:
        """Add positions (and their symmetries); returns how many entered the buffer.
        ``aux``: Go's (ownership [P, H*W], scores [P], weights [P]), see `ReplayBuffer`."""
        if self.augment:
            board_shape = tuple(planes.shape[2:])
            symmetries = self.symmetry_indices[board_shape]
            if aux is not None:  # ownership is a board map: it turns with the planes
                ownership = np.concatenate([transform_points(aux[0], board_shape, s) for s in symmetries])
                aux = (ownership, np.tile(aux[1], len(symmetries)), np.tile(aux[2], len(symmetries)))
            planes, policies = all_symmetries(planes, policies, symmetries, self.action_shapes[board_shape])
            values = np.tile(values, len(symmetries))
        self.buffer.add(planes, policies, values, aux)
        return len(values)

    def train_dataloader(self) -> DataLoader:
        rank = self.trainer.global_rank if self.trainer is not None else 0
        dataset = ReplayBatches(self.buffer, self.batch_size, self.seed, rank)
        return DataLoader(dataset, batch_size=None, num_workers=0)

    def state_dict(self) -> dict:
        # Every rank's own buffer goes into the one checkpoint, so each resumes with its own games.
        return by_rank(self.trainer, "buffer", self.buffer.state_dict())

    def load_state_dict(self, state: dict) -> None:
        rank = self.trainer.global_rank if self.trainer is not None else 0
        # A rank the checkpoint has no buffer for (more ranks now) starts from rank 0's:
        # copies at first, but training can begin at once.
        self.buffer.load_state_dict(share_of(state, "buffer", rank) or state["buffer"])


def boards_of(game, board_sizes: list[int] | None) -> dict[int, object]:
    """``data.board_sizes`` as {size: rules}: ``game`` on each board (`registry.on_board`)."""
    if board_sizes is None:
        return {game.search_game().board_shape[-1]: game}
    given = f"data.board_sizes={list(board_sizes)!r}"
    check([(lambda: len(board_sizes) >= 1 and all(isinstance(n, int) and not isinstance(n, bool)
                                                  for n in board_sizes),
            f"{given} must be a list of whole numbers (board sizes), or null: the game's board only"),
           (lambda: len(set(board_sizes)) == len(board_sizes), f"{given} names a size twice")])
    try:
        games = {size: registry.on_board(game, size) for size in sorted(board_sizes)}
    except ConfigError as exc:
        raise ConfigError(f"{given}: {exc}") from None
    if not any(rules is game for rules in games.values()):
        raise ConfigError(f"{given} must hold the game's own board, {game.n} (evaluation and the checkpoint "
                          f"are that board's): add it, or choose another game=")
    return games
