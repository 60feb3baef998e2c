"""User errors: wrong config values, bad input files, checkpoints for another run.

Entry points print these as one clear line (no traceback) and exit with code 2.
"""


class StonelabError(ValueError):
    """A problem with what the user asked for, not a bug in stonelab."""


class ConfigError(StonelabError):
    """A configuration value outside its valid range."""


class GameConfigError(ConfigError):
    """A game configuration that cannot describe a playable game."""


def check(checks: list[tuple[object, str]], error: type[ConfigError] = ConfigError) -> None:
    """Raise ``error(message)`` for the first failing (condition, message) pair.

    A condition that cannot even be evaluated (a string where a number belongs)
    fails with its message too, instead of a TypeError traceback.
    """
    for condition, message in checks:
        try:
            ok = bool(condition() if callable(condition) else condition)
        except TypeError:
            ok = False
        if not ok:
            raise error(message)
