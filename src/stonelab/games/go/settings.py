"""Go's own search settings (the ``go`` config group, conf/go/default.yaml).

The generic tree search (`stonelab.search.mcts.MCTSConfig`, conf/search/) knows nothing
of Go; what only a Go search needs lives here: the leaf value of a move predictor's
search (`stonelab.games.go.evaluator`). Entry points hand a Go player one settings dict,
the generic search's fields with Go's own under the key ``"go"`` (`search_settings`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from stonelab.errors import ConfigError, check

LEAF_VALUES = ("auto", "net", "playouts", "mixed", "none")
# A move predictor's search where search.c_puct / search.fpu_reduction are auto. At AlphaZero's
# c_puct 5 with unvisited moves at Q = 0 the 45% KGS net's search kept its own top move in 95-100%
# of positions at 64-200 playouts, and did not beat it; at 1.0 with KataGo's reduction 0.2 it
# left it in 28% at 200 playouts and won 19 of 20 games against it (2026-12-05,
# scripts/search_divergence.py; docs/results_maddison_go_cnn.md).
PREDICTOR_C_PUCT, PREDICTOR_FPU_REDUCTION = 1.0, 0.2


@dataclass(frozen=True)
class GoSettings:
    """leaf_value: net | playouts | mixed | none | auto (`stonelab.games.go.evaluator`).
    leaf_playouts: random playouts per leaf with leaf_value=playouts or mixed."""

    leaf_value: str = "auto"
    leaf_playouts: int = 4

    def __post_init__(self):
        check([
            (lambda: self.leaf_value in LEAF_VALUES,
             f"go.leaf_value={self.leaf_value!r}: choose one of {', '.join(LEAF_VALUES)}"),
            (lambda: isinstance(self.leaf_playouts, int) and not isinstance(self.leaf_playouts, bool)
             and self.leaf_playouts >= 1, f"go.leaf_playouts={self.leaf_playouts!r} must be an integer >= 1"),
        ])

    @classmethod
    def of(cls, values: Mapping | None) -> GoSettings:
        """From the ``go`` group's values; an unknown key is refused naming the known ones."""
        values = dict(values or {})
        unknown = sorted(set(values) - set(cls.__dataclass_fields__))
        if unknown:
            raise ConfigError(f"go.{unknown[0]} is not a Go search setting (known: "
                              f"{', '.join(f'go.{k}' for k in cls.__dataclass_fields__)})")
        return cls(**values)


def search_settings(search: Mapping, go: GoSettings | Mapping | None = None) -> dict:
    """The settings a Go player takes: the generic search's, Go's own under ``"go"``."""
    return {**dict(search), "go": asdict(go) if isinstance(go, GoSettings) else dict(go or {})}


def entry_point_settings(cfg: Mapping) -> dict:
    """`search_settings` of an entry point's config (``search`` and the ``go`` group); a setting
    of another game's group (``pruning=...`` on a Go engine) is refused (`registry.own_settings`)."""
    from stonelab.games import registry

    return search_settings(cfg["search"], registry.own_settings(registry.get("go"), cfg))


def resolved_search(settings: Mapping, alphazero: bool) -> dict:
    """``settings`` (`search_settings`) with ``auto`` c_puct and fpu_reduction made the
    searching player's own: a move predictor's (above), or AlphaZero's for an AlphaZero net."""
    from stonelab.search.mcts import ALPHAZERO_C_PUCT, AUTO

    own = (ALPHAZERO_C_PUCT, None) if alphazero else (PREDICTOR_C_PUCT, PREDICTOR_FPU_REDUCTION)
    settings = dict(settings)
    for key, value in zip(("c_puct", "fpu_reduction"), own, strict=True):
        if settings.get(key, AUTO) == AUTO:
            settings[key] = value
    return settings


def split_settings(settings: Mapping) -> tuple[dict, GoSettings]:
    """``search_settings``'s dict back into the generic search's fields and `GoSettings`."""
    settings = dict(settings)
    return settings, GoSettings.of(settings.pop("go", None))
