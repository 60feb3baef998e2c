"""stonelab: learning stone games (Go, Gomoku) with PyTorch Lightning and Hydra."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("stonelab")
except PackageNotFoundError:  # run from a source tree without installing
    __version__ = "0+unknown"
