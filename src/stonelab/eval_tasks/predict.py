"""``task=predict``: scores of a Go move predictor (`stonelab.models.prediction_scores`) on SGF games.

``data.split``: ``all`` scores every game of ``data.sources``; ``train``/``val``/``test``
score that split of a training run's games (give the run's data.val_games,
data.test_games and data.split_seed), so two models can be compared on their
held-out games. The games come through `stonelab.data.kgs.KGSDataModule`: the same
cache and the same split as training.
"""

from __future__ import annotations

import time

import torch
from omegaconf import DictConfig

from stonelab.errors import ConfigError
from stonelab.eval_tasks import require_checkpoint, write_result
from stonelab.models.nets.symmetry_average import with_symmetries
from stonelab.utils.device import resolve_device
from stonelab.utils.threads import set_threads

SPLITS = ("all", "train", "val", "test")


def run(cfg: DictConfig) -> dict:
    from stonelab.data.kgs import KGSDataModule, resolve_sources
    from stonelab.models import checkpoints
    from stonelab.models.prediction_scores import PredictionScores
    from stonelab.models.value import ValueMetrics

    path = require_checkpoint(cfg)
    data = cfg.data
    if not data.get("sources"):
        raise ConfigError("data.sources=[...] is required: the SGF files, folders or archives to score")
    split = data.get("split", "all")
    if split not in SPLITS:
        raise ConfigError(f"data.split={split!r}: choose all, train, val or test")
    set_threads(cfg.torch_threads)
    device = resolve_device(cfg.device)
    loaded = checkpoints.load(path, game="go", move_predictor=True)
    net = with_symmetries(loaded.net, cfg.symmetries).to(device)
    memory = getattr(net, "memory", 0)  # a belief_vit with a memory reads past positions too
    games = KGSDataModule(list(data.sources), game=loaded.game, encoder=loaded.encoder,
                          batch_size=data.batch_size, num_workers=0, val_games=data.val_games,
                          test_games=data.test_games, split_seed=data.split_seed, augment=False,
                          cache_dir=data.cache_dir, download_dir=data.download_dir, history=memory,
                          cache_workers=data.get("cache_workers"))
    ids = games.game_ids(split)
    positions = games.dataset(split, train=False)
    scores = PredictionScores(loaded.game.num_points, gate=loaded.gate)
    value_scores = ValueMetrics()  # used when the net has a value output
    start = time.perf_counter()
    with torch.inference_mode():
        for batch in positions:
            past = {"history": batch["history"].to(device)} if memory else {}
            out = net(batch["planes"].to(device).float(), batch["to_play"].to(device), **past)
            scores.update(out, batch["target"])
            if out.value_logit is not None:
                value_scores.update(out.value_logit.cpu(), batch["value"], batch.get("move_number"))
    values = scores.compute()
    value_table = value_scores.compute() if value_scores.update_called else None
    sources = resolve_sources(games.sources, games.download_dir)
    out = {"checkpoint": path, "model": loaded.model, "symmetries": cfg.symmetries, "sources": [str(p) for p in sources],
           "split": split, "games": len(ids), "positions_scored": positions.positions - scores.passes_not_scored,
           "passes_not_scored": scores.passes_not_scored, **values,
           **({"value": value_table} if value_table else {}),
           "seconds": round(time.perf_counter() - start, 1)}
    print(f"{path} on {len(ids)} games ({out['positions_scored']} positions): "
          + ", ".join(f"{k} {v:.4f}" for k, v in values.items()))
    if value_table:  # the value output's accuracy by game phase: games decided late are easier to call
        print("value accuracy: " + ", ".join(f"{phase} {row['acc']:.3f} ({row['positions']:,} positions)"
                                            for phase, row in value_table.items()))
    write_result(cfg, "predict.json", out)
    return out
