"""What the entry points print: every line once, and no advertising.

Lightning adds its own console handler to the ``lightning`` logger ("INFO: ...")
while Hydra's handler on the root logger prints the same record again in its
format; Lightning also prints a LitLogger tip at every start and a line about
``weights_only`` at every checkpoint save.
"""

from __future__ import annotations

import logging

_NOISE = ("litlogger", "`weights_only` was not set")


class _DropNoise(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(text in message for text in _NOISE)


def quiet_lightning() -> None:
    """Lightning's records go through the root logger's handlers only, without its noise."""
    import lightning  # noqa: F401  (its import installs the handler removed here)

    root_has_handlers = logging.getLogger().hasHandlers()
    for name in ("lightning", "lightning.pytorch", "lightning.fabric"):
        logger = logging.getLogger(name)
        if root_has_handlers:  # Hydra's (or the user's) handlers print them; without any, keep Lightning's
            for handler in list(logger.handlers):
                if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
                    logger.removeHandler(handler)
            logger.propagate = True
    for name in ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero",
                 "lightning.pytorch.trainer.connectors.checkpoint_connector",
                 "lightning.pytorch.trainer.connectors.logger_connector.logger_connector"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropNoise) for f in logger.filters):
            logger.addFilter(_DropNoise())
