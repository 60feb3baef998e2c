"""stonelab: learning stone games (Go, Gomoku) with PyTorch Lightning and Hydra."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("stonelab")
except PackageNotFoundError:  # run from a source tree without installing
    __version__ = "0+unknown"

# ${fast_precision:} in conf/trainer/default.yaml: registered before any config is composed.
from stonelab.utils.precision import register_resolver as _register_resolver  # noqa: E402

_register_resolver()
