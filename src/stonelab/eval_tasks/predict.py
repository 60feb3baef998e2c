"""``task=predict``: scores of a Go move predictor (`stonelab.models.prediction_scores`) on SGF games.

``data.sources`` defaults to the committed sample that training reads by default.
``data.split``: ``all`` scores every game of ``data.sources``; ``train``/``val``/``test``
score that split of a training run's games (give the run's data.val_games,
data.test_games and data.split_seed), so two models can be compared on their
held-out games; ``auto`` (the default) is ``test`` for the committed sample, so a
model trained on it is never scored on its own training games, and ``all`` for any
other sources. The games come through `stonelab.data.kgs.KGSDataModule`: the same
cache and the same split as training.
"""

from __future__ import annotations

from pathlib import Path

import torch
from omegaconf import DictConfig

from stonelab.errors import ConfigError
from stonelab.eval_tasks import require_checkpoint, write_result
from stonelab.models.nets.symmetry_average import with_symmetries
from stonelab.utils.device import resolve_device
from stonelab.utils.threads import set_threads

SPLITS = ("auto", "all", "train", "val", "test")
SPLIT_WORDS = {"train": "training", "val": "validation", "test": "test"}
SAMPLE = "data/kgs"  # under paths.root_dir: the games conf/data/kgs.yaml trains on by default


def run(cfg: DictConfig) -> dict:
    from stonelab.data.kgs import KGSDataModule, resolve_sources
    from stonelab.models import checkpoints

    path = require_checkpoint(cfg)
    data = cfg.data
    sources = _sources(data)
    split = data.get("split", "auto")
    if split not in SPLITS:
        raise ConfigError(f"data.split={split!r}: choose auto, all, train, val or test")
    if split == "auto":
        split = "test" if is_training_sample(sources, cfg.paths.root_dir) else "all"
    set_threads(cfg.torch_threads)
    device = resolve_device(cfg.device)
    loaded = checkpoints.load(path, game="go", move_predictor=True)
    net = with_symmetries(loaded.net, cfg.symmetries).to(device)
    memory = getattr(net, "memory", 0)  # a belief_vit with a memory reads past positions too
    games = KGSDataModule(sources, game=loaded.game, encoder=loaded.encoder,
                          batch_size=data.batch_size, num_workers=0, val_games=data.val_games,
                          test_games=data.test_games, split_seed=data.split_seed, augment=False,
                          cache_dir=data.cache_dir, download_dir=data.download_dir, history=memory,
                          cache_workers=data.get("cache_workers"))
    ids = _game_ids(games, split)
    positions = games.dataset(split, train=False)
    _announce(path, split, len(ids), positions.positions, games.load_cache().num_games, data, sources,
              cfg.paths.root_dir)
    scores, value_table, aux_table, seconds = _score(net, positions, loaded, device, memory)
    values = scores.compute()
    out = {"checkpoint": path, "model": loaded.model, "symmetries": cfg.symmetries,
           "sources": [str(p) for p in resolve_sources(games.sources, games.download_dir)],
           "split": split, **_split_settings(split, data), "games": len(ids),
           "positions_scored": positions.positions - scores.passes_not_scored,
           "passes_not_scored": scores.passes_not_scored, **values,
           **({"value": value_table} if value_table else {}),
           **({"auxiliary": aux_table} if aux_table else {}),
           "seconds": round(seconds, 1), "positions_per_second": round(positions.positions / max(seconds, 1e-9))}
    _print_scores(path, out, values, value_table, aux_table)
    write_result(cfg, "predict.json", out)
    return out


def _sources(data: DictConfig) -> list[str]:
    if not data.get("sources"):
        raise ConfigError("data.sources=[...] is required: the SGF files, folders or archives to score "
                          f"(the default is the committed sample, [{SAMPLE}])")
    sources = data.sources
    return [str(sources)] if isinstance(sources, str) else [str(s) for s in sources]


def is_training_sample(sources: list[str], root_dir: str) -> bool:
    """True when ``sources`` are exactly the games training reads by default (conf/data/kgs.yaml)."""
    return [Path(s).resolve() for s in sources] == [(Path(root_dir) / SAMPLE).resolve()]


def _game_ids(games, split: str):
    """The games of ``split``; one line naming the way out when the sources cannot be split so."""
    try:
        ids = games.game_ids(split)
    except ConfigError as exc:
        if split == "all":
            raise
        raise ConfigError(f"{exc} (data.split={split}); data.split=all scores every game") from exc
    if not len(ids):
        raise ConfigError(f"data.{split}_games=0: there is no {split} split to score; "
                          "data.split=all scores every game")
    return ids


def _announce(path: str, split: str, count: int, positions: int, total: int, data: DictConfig,
              sources: list[str], root_dir: str) -> None:
    """Which games are scored: the split, of which sources, chosen how (and how to score them all)."""
    which = f"all {count}" if split == "all" else f"the {count} {SPLIT_WORDS[split]}"
    print(f"scoring {path} on {which} games of {', '.join(sources)}: {positions:,} positions", flush=True)
    if split != "all":
        whose = "the committed sample's" if is_training_sample(sources, root_dir) else "the"
        chosen = "the rest of" if split == "train" else "held out of"
        print(f"  {chosen} {whose} {total} games as training splits them (data.val_games={data.val_games} "
              f"data.test_games={data.test_games} data.split_seed={data.split_seed}); "
              f"data.split=all scores all {total}", flush=True)


def _split_settings(split: str, data: DictConfig) -> dict:
    """The settings that chose the split's games, so a result names exactly what it scored."""
    if split == "all":
        return {}
    return {k: data[k] for k in ("val_games", "test_games", "split_seed")}


def _score(net, positions, loaded, device, memory: int):
    """Every position of ``positions`` through ``net``; returns (scores, value table or None,
    auxiliary table (ownership and score) or None, seconds)."""
    from stonelab.arena.progress import RateProgress
    from stonelab.models.auxiliary import AuxMetrics
    from stonelab.models.prediction_scores import PredictionScores
    from stonelab.models.value import ValueMetrics

    scores = PredictionScores(loaded.game.num_points, gate=loaded.gate)
    value_scores = ValueMetrics()  # used when the net has a value output
    aux_scores = AuxMetrics()  # used when it has ownership and score outputs
    # Thousands of games take minutes on a CPU: the rate and time left every 10 s.
    with RateProgress(positions.positions, "positions", label="predict") as progress, torch.inference_mode():
        for batch in positions:
            extra = {"history": batch["history"].to(device)} if memory else {"komi": batch["komi"].to(device)}
            out = net(batch["planes"].to(device).float(), batch["to_play"].to(device), **extra)
            scores.update(out, batch["target"])
            if out.value_logit is not None:
                value_scores.update(out.value_logit.cpu(), batch["value"], batch.get("move_number"))
            if out.score_lead is not None:
                aux_scores.update(out.ownership_logits.cpu(), batch["ownership"], out.score_lead.cpu(),
                                  out.score_stdev.cpu(), batch["score"])
            progress.update(len(batch["target"]))
    value_table = value_scores.compute() if value_scores.update_called else None
    aux_table = aux_scores.compute() if aux_scores.update_called else None
    return scores, value_table, aux_table, progress.seconds


def _print_scores(path: str, out: dict, values: dict, value_table: dict | None, aux_table: dict | None) -> None:
    print(f"{path} on {out['games']} games ({out['positions_scored']:,} positions, "
          f"{out['seconds']} s, {out['positions_per_second']:,} positions/s): "
          + ", ".join(f"{k} {v:.4f}" for k, v in values.items() if k != "gate_sweep"))
    if "gate_sweep" in values:  # what the gate's threshold would do: the table it is calibrated from
        print("gate by threshold (fires on / top-1 of the moves played): " + ", ".join(
            f"{t} {row['rate']:.3f}/{row['top1']:.4f}" for t, row in values["gate_sweep"].items()))
    if value_table:  # the value output's accuracy by game phase: games decided late are easier to call
        print("value accuracy: " + ", ".join(f"{phase} {row['acc']:.3f} ({row['positions']:,} positions)"
                                            for phase, row in value_table.items()))
    if aux_table:
        print(f"ownership accuracy {aux_table['ownership_acc']:.3f} ({aux_table['ownership_points']:,} decided points); "
              f"score error {aux_table['score_mae']:.1f} points mean absolute "
              f"({aux_table['score_positions']:,} positions of counted games)")
