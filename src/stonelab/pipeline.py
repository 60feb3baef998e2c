"""What `src/train.py` runs: build everything from the Hydra config, then fit."""

from __future__ import annotations

import json
import logging
import os
import time
import warnings

import lightning as L
import torch
from hydra.utils import instantiate
from lightning.pytorch.utilities.exceptions import SIGTERMException
from omegaconf import DictConfig, OmegaConf

from stonelab.callbacks.budget import Budget, format_duration, max_time_text, parse_duration
from stonelab.callbacks.checkpoint import CheckedCheckpointIO
from stonelab.callbacks.held_out import refresh_after_test
from stonelab.callbacks.stop import StopOnSignal, StoppedBySignal
from stonelab.errors import ConfigError
from stonelab.games import registry
from stonelab.models import checkpoints
from stonelab.resume import launched_rank, run_folder_of
from stonelab.run_folder import (
    check_writable,
    disk_trouble,
    refused_in_one_line,
    remove_litter_of_failed_run,
    remove_partial_checkpoints,
)
from stonelab.utils.checkpoint_io import replace_atomically
from stonelab.utils.console import quiet_lightning
from stonelab.utils.distributed import gather_to_rank_zero
from stonelab.utils.precision import emulated_bf16_warning
from stonelab.utils.threads import set_threads

# AlphaZeroModule.training_step(dataloader_iter) is deliberate (see its comment).
warnings.filterwarnings("ignore", message=".*dataloader_iter.*")
warnings.filterwarnings("ignore", message=".*LeafSpec.*")
# A resumed run continues in its own checkpoint folder on purpose (stonelab.resume).
warnings.filterwarnings("ignore", message=r"Checkpoint directory .* exists and is not empty")
# A resume mid-epoch: RandomState says in one line what happens to the game stream instead.
warnings.filterwarnings("ignore", message=r".*dataloader is not resumable.*")
# Lightning's own all_gather (summarize, DDP only) calls an API torch marks deprecated.
warnings.filterwarnings("ignore", message=r".*all_gather is deprecated.*")

log = logging.getLogger(__name__)


def build(cfg: DictConfig):
    """Instantiate (game, datamodule, model, callbacks, loggers, trainer) from ``cfg``."""
    game = instantiate(cfg.game)
    datamodule = instantiate(cfg.data, game=game, _convert_="object")
    model = instantiate(cfg.model, game=game, _convert_="object")
    if cfg.get("init_from") and not cfg.get("ckpt_path"):  # a resume brings its own weights
        source = checkpoints.warm_start(model, cfg.init_from)
        log.info("net weights from %s (its step %d); optimizer and schedule start fresh%s",
                 source["path"], source["global_step"],
                 f"; new, as initialised: {', '.join(source['fresh'])}" if source["fresh"] else "")
    # A callback's factory may return None: the feature is off (callbacks.weight_average.decay=null).
    callbacks = [cb for c in (cfg.get("callbacks") or {}).values() if c and "_target_" in c
                 if (cb := instantiate(c)) is not None]
    loggers = [instantiate(c) for c in (cfg.get("logger") or {}).values() if c and "_target_" in c]
    drop_deprecated_wandb_setting(loggers)
    if not loggers:  # LearningRateMonitor refuses to run without a logger; logger=none is valid
        from lightning.pytorch.callbacks import LearningRateMonitor

        callbacks = [c for c in callbacks if not isinstance(c, LearningRateMonitor)]
    # The game's own search settings (Gomoku's pruning): bad values, another game's, or pruning
    # the board cannot use are refused before any self-play.
    if any(hasattr(cb, "game_settings") for cb in callbacks):
        game.search_game(registry.own_settings(registry.of(game), cfg))
    check_budget(cfg, model, callbacks)
    if slow := emulated_bf16_warning(cfg.trainer.get("precision"), str(cfg.trainer.get("accelerator", "auto"))):
        log.warning(slow)
    # Its safe points follow the work of the others' hooks (the round in on_train_batch_start).
    callbacks.sort(key=lambda c: isinstance(c, StopOnSignal))
    # The Budget callback owns max_time where there is one (the whole job, not just the fit loop).
    timer = {"max_time": None} if any(isinstance(c, Budget) for c in callbacks) else {}
    # Checkpoints are written atomically (a failed save is one line, the previous file whole),
    # beside the config's own plugins (a SLURMEnvironment with auto_requeue=false or another
    # requeue signal): the keyword would replace those.
    plugins = [CheckedCheckpointIO(), *(instantiate(p) for p in cfg.trainer.get("plugins") or [])]
    trainer = instantiate(cfg.trainer, callbacks=callbacks, logger=loggers or False, plugins=plugins, **timer)
    return game, datamodule, model, callbacks, loggers, trainer


def drop_deprecated_wandb_setting(loggers) -> None:
    """Lightning 2.6's WandbLogger always hands wandb.init ``anonymous=None``, and wandb 0.2x warns
    on every run that the setting is deprecated and has no effect: it is left out instead."""
    for lg in loggers:
        init = getattr(lg, "_wandb_init", None)  # read when the W&B run starts, at the first log
        if isinstance(init, dict) and init.get("anonymous") is None:
            init.pop("anonymous", None)


def train(cfg: DictConfig) -> dict:
    """Fit the configured model; returns (and writes to result.json) the final metrics."""
    quiet_lightning()
    start = time.perf_counter()
    try:
        return _train(cfg, start)
    except StoppedBySignal:
        raise  # a clean stop: the run folder holds its last.ckpt
    except BaseException as exc:
        # A run that failed before writing anything of its own leaves no empty run folder.
        remove_litter_of_failed_run(cfg.paths.output_dir, cfg.paths.get("log_dir"))
        trouble = disk_trouble(exc, cfg.paths.output_dir)
        if trouble is not None and trouble is not exc:
            raise trouble from exc  # one line (a full disk), not the traceback of what failed after it
        raise


def _train(cfg: DictConfig, start: float) -> dict:
    check_model_data(cfg)
    check_model_game(cfg)
    check_seed(cfg)
    if launched_rank() == 0:  # the rank that writes; ranks probing at once would take each other's folder away
        check_writable(cfg.paths.output_dir)  # one line now, not a traceback at the first save
    set_threads(cfg.get("torch_threads"))  # training updates; search sets its own
    remove_partial_checkpoints(cfg.paths.output_dir)
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    game, datamodule, model, callbacks, loggers, trainer = build(cfg)
    for cb in callbacks:  # the clocks that count the whole job (Budget, WallClock)
        if hasattr(cb, "start_clock"):
            cb.start_clock()
    if cfg.get("ckpt_path"):
        # Fail before any self-play if the checkpoint belongs to another run.
        checkpoints.check_file(cfg.ckpt_path, model.identity())
        if run_folder_of(cfg.ckpt_path) is None:
            log.info("resuming from %s: no run folder beside it, so only the settings given now apply",
                     cfg.ckpt_path)
    for lg in loggers:
        lg.log_hyperparams(OmegaConf.to_container(cfg, resolve=True))
    stopped = fit_or_stop(trainer, model, datamodule, cfg.get("ckpt_path"))
    if stopped is not None and not stopped.agreed and trainer.world_size > 1:
        # Lightning stopped this rank alone: the others may be elsewhere, so no collective
        # (summarize gathers from every rank) and no result.json.
        log.warning("stopped by SIGTERM between two safe points: last.ckpt is the one written at the latest "
                    "save, and there is no result.json")
        raise stopped
    fit_metrics = dict(trainer.callback_metrics)  # trainer.test replaces them with test/*
    if stopped is None and hasattr(datamodule, "test_dataloader") and getattr(datamodule, "test_games", 0):
        # Held-out games, scored with the best checkpoint on val (the last if none was kept).
        best = trainer.checkpoint_callback.best_model_path if trainer.checkpoint_callback else ""
        bound_the_test(trainer, callbacks)
        trainer.test(model, datamodule=datamodule, ckpt_path=best or None, verbose=False)
        if trainer.is_global_zero and trainer.checkpoint_callback:  # a resume counts the test's time too
            refresh_after_test(trainer.checkpoint_callback.last_model_path, callbacks, checkpoint_writer(trainer))
    result = summarize(cfg, model, callbacks, trainer, time.perf_counter() - start, fit_metrics)
    if any(k.startswith("test/") for k in result["metrics"]):
        result.update(test_extent(trainer))
    result["stopped_by_signal"] = stopped.signal_name if stopped else None
    if trainer.is_global_zero:
        path = os.path.join(cfg.paths.output_dir, "result.json")
        with refused_in_one_line(path, "the result file"):  # one line, and never half a result.json
            replace_atomically(path, json.dumps(result, indent=2))
        report(result, trainer, path, cfg.trainer.get("max_time"))
    if stopped is not None:
        raise stopped  # its exit status says the run did not finish (StoppedBySignal)
    return result


def bound_the_test(trainer, callbacks) -> None:
    """Read at most the held-out batches that fit the budget's test share (WallClock.max_test_share)."""
    limit = next((cb.test_batch_limit() for cb in callbacks if hasattr(cb, "test_batch_limit")), None)
    given = trainer.limit_test_batches  # trainer.limit_test_batches: a count (int) or a share (float)
    if limit is not None and not (isinstance(given, int) and given <= limit):
        trainer.limit_test_batches = limit


def test_extent(trainer) -> dict:
    """How much of the held-out games the test read: batches read, and of how many."""
    read = int(sum(trainer.num_test_batches))
    loaders = trainer.test_dataloaders
    loaders = loaders if isinstance(loaders, list | tuple) else [loaders]  # one loader is not a list of them
    try:
        every = sum(len(loader) for loader in loaders if loader is not None)
    except TypeError:  # a loader without a length
        every = None
    return {"test_batches": read, "test_batches_all": every}


def checkpoint_writer(trainer) -> CheckedCheckpointIO:
    """The run's checkpoint writer (atomic; a full disk is one line), as `build` gave it to the trainer."""
    io = trainer.strategy.checkpoint_io
    return io if isinstance(io, CheckedCheckpointIO) else CheckedCheckpointIO()


def fit_or_stop(trainer, model, datamodule, ckpt_path) -> StoppedBySignal | None:
    """``trainer.fit``; the stop if SIGTERM or SIGINT ended it early (StopOnSignal), else None."""
    try:
        trainer.fit(model, datamodule=datamodule, ckpt_path=ckpt_path)
    except StoppedBySignal as stop:
        return stop
    except SIGTERMException:  # Lightning's own, raised after a batch when SIGTERM came between safe points
        return StoppedBySignal("SIGTERM", trainer.global_rank, agreed=False)
    return None


def summarize(cfg: DictConfig, model, callbacks, trainer, seconds: float, fit_metrics: dict | None = None) -> dict:
    """The run's final numbers, as written to result.json (sweeps collect these).

    The model adds its own part through ``result_fields(trainer)`` (alphazero: its
    self-play counters), callbacks theirs through ``result_fields(trainer)``.
    """
    from hydra.core.hydra_config import HydraConfig

    result = {
        "task_name": cfg.task_name, "model": getattr(model, "MODEL_NAME", type(model).__name__),
        "game": model.game.name, "seconds": round(seconds, 1),
        "protocols": list(registry.of(model.game).protocols),  # what src/play.py can serve it over
        "overrides": list(HydraConfig.get().overrides.task) if HydraConfig.initialized() else [],
        "world_size": trainer.world_size, "global_step": trainer.global_step,
        "epochs": trainer.current_epoch,
    }
    result["parameters"] = sum(p.numel() for p in model.parameters())
    if hasattr(model, "result_fields"):
        result.update(model.result_fields(trainer))
    if trainer.checkpoint_callback:
        if trainer.checkpoint_callback.monitor:  # without a monitor "best" is just the latest
            result["best_checkpoint"] = trainer.checkpoint_callback.best_model_path or None
        result["last_checkpoint"] = trainer.checkpoint_callback.last_model_path or None
    if trainer.world_size > 1:
        # DDP must keep every rank's weights identical; say so if it did not.
        flat = torch.cat([p.detach().flatten() for p in model.parameters()])
        gathered = trainer.strategy.all_gather(flat)
        result["ddp_weights_max_abs_diff"] = float((gathered - gathered[0]).abs().max())
        check_one_run_folder(cfg, trainer)
    merged = {**(fit_metrics or {}), **trainer.callback_metrics}
    result["metrics"] = {k: float(v) for k, v in merged.items() if v.numel() == 1}
    for cb in callbacks:
        if hasattr(cb, "result_fields"):
            result.update(cb.result_fields(trainer))
    return result


def check_one_run_folder(cfg: DictConfig, trainer) -> None:
    """Warn when ranks started by torchrun or srun made run folders of their own.

    Each process composes its own config, and the default run folder is named after the
    second it starts in. Rank 0 writes checkpoints, metrics and result.json, so training
    is unharmed; the other folders hold only another rank's .hydra and train.log.
    """
    folders = gather_to_rank_zero(trainer, os.path.abspath(cfg.paths.output_dir))
    if folders and len(set(folders)) > 1:
        log.warning("the ranks wrote into %d run folders (%s): give every rank the same hydra.run.dir=... "
                    "(docs/gpu_and_clusters.md: More than one process or machine); rank 0's holds the run",
                    len(set(folders)), ", ".join(sorted(set(folders))))


def report(result: dict, trainer, result_path: str, max_time: str | None = None) -> None:
    """The end of a run in a few lines: how long, how far, how strong, where the model is."""
    took = format_duration(result["seconds"])
    if result.get("job_seconds", 0) > result["seconds"] + 1:  # a resumed run
        took += f" (the whole run, resumes included: {format_duration(result['job_seconds'])})"
    lines = [f"done in {took}" + (f": stopped at {result['stop_reason']}" if result.get("stop_reason") else "")]
    if result.get("stopped_by_signal"):
        resume = (f": resume with python src/train.py ckpt_path={result['last_checkpoint']}"
                  if result.get("last_checkpoint") else "")
        lines = [f"stopped by {result['stopped_by_signal']} after {took}{resume}"]
    if "rounds" in result:
        lines.append(f"{result['rounds']} rounds, {result['games_played']} games, {result['train_steps']} updates")
    if result.get("evaluations"):
        last = result["evaluations"][-1]
        lines.append(f"last evaluation (round {last['round']}): {last['wins']}W {last['draws']}D "
                     f"{last['losses']}L vs {last['opponent']}, win ratio {last['win_ratio']:.2f} "
                     f"[95% CI {last['ci_low']:.2f}, {last['ci_high']:.2f}]")
    lines += held_out_lines(result)
    for key, name in [("best_evaluation_checkpoint", "best model (best evaluation)"),
                      ("best_checkpoint", "best model (best validation)"),
                      ("last_checkpoint", "last checkpoint")]:
        if result.get(key):
            lines.append(f"{name}: {result[key]}")
    lines.append(f"result: {result_path}")
    if not result.get("stopped_by_signal"):
        lines += [f"next: {command}" for command in next_commands(result, max_time)]
    for line in lines:
        log.info(line)


def held_out_lines(result: dict) -> list[str]:
    """The held-out scores (this piece's test, else the latest earlier one's), and a plain word when
    the model is near chance."""
    test = {k: v for k, v in result["metrics"].items() if k.startswith("test/")}
    where = "held-out games"
    if not test and result.get("held_out"):
        test, where = result["held_out"]["metrics"], f"held-out games (the latest test, of {result['held_out']['checkpoint']})"
    if not test:
        return []
    shown = [k for k in HELD_OUT_HEADLINE if f"test/{k}" in test]
    rest = " (the rest in result.json)" if len(test) > len(shown) else ""
    read, every = result.get("test_batches"), result.get("test_batches_all")
    if read and every and read < every:  # callbacks.wall_clock.max_test_share or trainer.limit_test_batches
        where += f" (a subsample: the first {read} of {every} batches)"
    lines = [f"{where}: " + ", ".join(f"{k} {test['test/' + k]:.4f}" for k in shown) + rest]
    top1 = test.get("test/top1")
    if top1 is not None and top1 < NEAR_CHANCE_TOP1:
        minutes = result.get("job_seconds", result["seconds"]) / 60
        lines.append(f"that is near chance (a random legal move scores ~0.003, a net that learned the basics "
                     f"0.20 and more): {result['global_step']} updates in {minutes:.0f} minutes were too few. "
                     f"Train it longer (the 'train it longer' command below) or on a machine with free cores"
                     + ("" if result.get("model") == "maddison_cnn" else
                        ", or try model=maddison_cnn, which learns fastest on a CPU"))
    return lines


# Held-out top-1 below this is "near chance" in the end summary: a move predictor that learned
# anything scores several times more (the CPU-sized nets: 0.11-0.34 after 10 minutes).
NEAR_CHANCE_TOP1 = 0.05

# The held-out figures of the end line, in this order, where the model has them: move
# prediction, the value output, and the belief ViT's belief (its confidence's calibration,
# the ownership map, the gate).
HELD_OUT_HEADLINE = ["top1", "top5", "top10", "value_acc", "value_acc_moves_150_up", "ece", "belief_error",
                     "ownership_acc", "gate_rate", "gate_top1"]


def next_commands(result: dict, max_time: str | None) -> list[str]:
    """What a person does with a finished run: play its model, score it, train it longer."""
    model = result.get("best_evaluation_checkpoint") or result.get("best_checkpoint") or result.get("last_checkpoint")
    if not model:
        return []
    protocol = (result.get("protocols") or [None])[0]
    commands = []
    if protocol:
        chosen = "" if protocol == DEFAULT_PROTOCOL else f"protocol={protocol} "
        commands.append(f"python src/play.py {chosen}ckpt_path={model}"
                        f"    # play it ({PROTOCOL_WORDS.get(protocol, protocol)})")
    if "rounds" in result:  # AlphaZero: a match; a move predictor: its held-out accuracy
        commands.append(f"python src/eval.py task=match ckpt_path={model} games=50    # score it")
    else:
        commands.append(f"python src/eval.py task=predict ckpt_path={model}    # score it on held-out games")
    seconds = parse_duration(max_time) if max_time else None
    if result.get("last_checkpoint") and seconds:
        longer = max_time_text(2 * seconds)
        commands.append(f"python src/train.py ckpt_path={result['last_checkpoint']} trainer.max_time={longer}"
                        f"    # train it longer (the time is the whole run's)")
    return commands


DEFAULT_PROTOCOL = "gtp"  # conf/play.yaml's protocol: the command need not say it
PROTOCOL_WORDS = {"gtp": "GTP: a GUI, GNU Go", "gomocup": "Gomocup brain"}
DATA_WORDS = {"selfplay": "its own self-play games", "kgs": "expert games"}


def check_model_data(cfg: DictConfig) -> None:
    """Each model config chooses its data (conf/model/*.yaml); one forced onto the other is refused.

    The model class names the data it learns from (``DATA``), the datamodule class the
    data it is (``DATA``); checked before either is built (a Gomoku board is no KGS board).
    """
    model_cls, data_cls = _target_class(cfg.get("model")), _target_class(cfg.get("data"))
    needs, gives = getattr(model_cls, "DATA", None), getattr(data_cls, "DATA", None)
    if needs and gives and needs != gives:
        name = getattr(model_cls, "MODEL_NAME", model_cls.__name__)
        raise ConfigError(f"model={name} learns from {DATA_WORDS.get(needs, needs)}, not data={gives}: "
                          f"use data={needs} (or leave data unset: model={name} chooses it)")


def check_model_game(cfg: DictConfig) -> None:
    """A model config forced onto a game it does not play is refused in one line, and a game
    config whose rules are no registered game's is refused naming the registered ones."""
    model_cls, game_cls = _target_class(cfg.get("model")), _target_class(cfg.get("game"))
    if game_cls is None:
        return  # no game, or a bad target: reported when it is built
    spec = registry.of_class(game_cls)
    if spec is None:
        raise ConfigError(f"game._target_={game_cls.__module__}.{game_cls.__qualname__} is not the rules of a "
                          f"registered game ({', '.join(registry.names())}): choose game=<one of conf/game/>")
    plays = getattr(model_cls, "GAME", None)  # None: every game
    if plays and spec.name != plays:
        name = getattr(model_cls, "MODEL_NAME", model_cls.__name__)
        raise ConfigError(f"model={name} plays {registry.get(plays).title}, not {spec.title}: "
                          f"{spec.title} is learned by {spec.learned_by}")


def _target_class(node):
    """The class a config node builds, or None (a bad target is reported when it is built)."""
    from hydra.utils import get_class

    try:
        return get_class(str(node.get("_target_"))) if node is not None and node.get("_target_") else None
    except Exception:
        return None


def check_seed(cfg: DictConfig) -> None:
    seed = cfg.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**32:
        raise ConfigError(f"seed={seed!r} must be a whole number in [0, 2**32)")


def check_budget(cfg: DictConfig, model, callbacks) -> None:
    """A readable max_time, and the model's own say on the trainer's limits."""
    parse_duration(cfg.trainer.get("max_time"))
    budget = next((cb for cb in callbacks if isinstance(cb, Budget)), None)
    if budget is not None and budget.counts_self_play() and not hasattr(model, "train_steps"):
        raise ConfigError("callbacks.budget.max_updates / max_rounds / max_games count self-play (model=alphazero); "
                          "bound this model with trainer.max_steps, trainer.max_epochs or trainer.max_time")
    if hasattr(model, "check_trainer_config"):  # a model that counts its own training (alphazero's updates)
        model.check_trainer_config(cfg.trainer)
