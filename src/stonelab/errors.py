"""User errors: wrong config values, bad input files, checkpoints for another run.

Entry points print these as one clear line (no traceback) and exit with code 2.
"""


class StonelabError(ValueError):
    """A problem with what the user asked for, not a bug in stonelab."""


class ConfigError(StonelabError):
    """A configuration value outside its valid range."""
