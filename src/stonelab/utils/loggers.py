"""Logger factories with behaviour Hydra configs cannot express on their own."""

from __future__ import annotations

import netrc
import os


def wandb_logged_in() -> bool:
    """An API key in the environment or in ~/.netrc (where `wandb login` puts it)."""
    if os.environ.get("WANDB_API_KEY"):
        return True
    try:
        return netrc.netrc().authenticators("api.wandb.ai") is not None
    except (FileNotFoundError, netrc.NetrcParseError):
        return False


def wandb_logger(**kwargs):
    """A WandbLogger that runs offline unless the user is logged in (or WANDB_MODE says so)."""
    from lightning.pytorch.loggers import WandbLogger

    if "offline" not in kwargs or kwargs["offline"] is None:
        kwargs["offline"] = os.environ.get("WANDB_MODE") == "offline" or not wandb_logged_in()
    return WandbLogger(**kwargs)
