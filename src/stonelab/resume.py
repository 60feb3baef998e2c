"""``src/train.py ckpt_path=<run>/checkpoints/last.ckpt``: resume a run as it was configured.

A checkpoint alone does not say how its run was set up (slots, playouts, budget, the
experiment file). Hydra keeps the command-line overrides of every run in
``<run>/.hydra/overrides.yaml``: resuming re-applies them, lets the overrides given now
win, and continues in the same run folder, so checkpoints, evaluations.jsonl,
metrics.csv and train.log hold the whole run. A checkpoint that is not inside a run
folder (no ``.hydra`` beside its ``checkpoints/``) resumes with the command line alone.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

# Overrides that belong to one invocation, never carried into the next.
_NOT_CARRIED = ("ckpt_path", "hydra.run.dir")


def override_key(override: str) -> str:
    """``+trainer.max_steps=5`` -> ``trainer.max_steps`` (``~key`` deletions too)."""
    return override.split("=", 1)[0].lstrip("+~")


def run_folder_of(ckpt_path: str) -> Path | None:
    """The run folder a checkpoint was written in (its ``.hydra`` beside ``checkpoints/``)."""
    folder = Path(ckpt_path).resolve().parent.parent
    return folder if (folder / ".hydra" / "overrides.yaml").is_file() else None


def carried_overrides(folder: Path) -> list[str]:
    """The overrides of the run in ``folder`` that a resume (or a new start) applies again;
    raises OSError or yaml.YAMLError when its overrides.yaml cannot be read."""
    earlier = yaml.safe_load((folder / ".hydra" / "overrides.yaml").read_text()) or []
    return [o for o in earlier if override_key(o) not in _NOT_CARRIED]


def resume_argv(argv: list[str]) -> tuple[list[str], str | None]:
    """The command line of a resume, and one line saying what it restored.

    ``argv`` is ``sys.argv[1:]``; flags (``-m``, ``--cfg job``) pass through untouched.
    """
    overrides = [a for a in argv if "=" in a and not a.startswith("-")]
    ckpt = next((a.split("=", 1)[1] for a in overrides if override_key(a) == "ckpt_path"), None)
    if not ckpt or "-m" in argv or "--multirun" in argv:
        return argv, None
    ckpt = ckpt.strip("'\"")
    if not Path(ckpt).is_file():
        return argv, None  # training refuses it with a clear line
    folder = run_folder_of(ckpt)
    if folder is None:
        return argv, None  # a lone checkpoint: the settings given now apply (the pipeline says so)
    try:
        earlier = carried_overrides(folder)
    except (OSError, yaml.YAMLError) as exc:
        return argv, f"resuming from {ckpt}: could not read {folder}/.hydra/overrides.yaml ({exc}); " \
                     f"only the settings given now apply"
    given = {override_key(a): a for a in overrides if override_key(a) not in _NOT_CARRIED}
    earlier_keys = {override_key(o): o for o in earlier}
    kept = [o for k, o in earlier_keys.items() if k not in given]
    changed = [f"{o} -> {given[k].split('=', 1)[1]}" for k, o in earlier_keys.items() if k in given and given[k] != o]
    added = [a for k, a in given.items() if k not in earlier_keys]
    message = f"resuming {folder} with its settings ({' '.join(kept) or 'the defaults'})"
    if changed:
        message += f"; changed now: {', '.join(changed)}"
    if added:
        message += f"; added now: {' '.join(added)}"
    extra = [] if any(override_key(a) == "hydra.run.dir" for a in overrides) else [f"hydra.run.dir={_quoted(folder)}"]
    flags = [a for a in argv if a not in overrides]
    return [*flags, *kept, *overrides, *extra], message


def launched_rank() -> int:
    """This process's global rank as its launcher announced it before torch.distributed starts:
    torchrun's RANK, LOCAL_RANK of the processes Lightning starts itself, SLURM_PROCID under
    srun (Lightning reads them in this order); 0 without a launcher."""
    for key in ("RANK", "LOCAL_RANK", "SLURM_PROCID"):
        if os.environ.get(key, "").isdigit():
            return int(os.environ[key])
    return 0


def _quoted(path: Path) -> str:
    text = str(path)
    return f"'{text}'" if any(c in text for c in " ,=[]{}()'\"") else text
