"""ptojax's environment variables, each validated where it is read.

A value ptojax cannot use raises ``ConfigError`` naming the variable, the value and what is
accepted — never a bare "could not convert" from deep inside, nor a silently ignored
setting. An unset or empty variable means its default.
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Optional

from ptojax.errors import ConfigError

FLAGS = {"1": True, "true": True, "yes": True, "on": True,
         "0": False, "false": False, "no": False, "off": False}


def _raw(name: str) -> Optional[str]:
    value = os.environ.get(name)
    return value if value is not None and value.strip() else None


def _bad(name: str, value: str, accepted: str) -> ConfigError:
    return ConfigError(f"environment variable {name}={value!r} is not valid: {accepted}")


def env_int(name: str, default: int, minimum: int = 1) -> int:
    """An integer >= ``minimum``."""
    value = _raw(name)
    if value is None:
        return default
    try:
        number = int(value.strip())
    except ValueError:
        raise _bad(name, value, f"expected an integer >= {minimum}") from None
    if number < minimum:
        raise _bad(name, value, f"expected an integer >= {minimum}")
    return number


def env_seconds(name: str, default: float, zero: bool = False) -> float:
    """A positive (``zero``: or zero), finite number of seconds."""
    value = _raw(name)
    if value is None:
        return default
    try:
        seconds = float(value.strip())
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and (seconds > 0 or zero and seconds == 0)):
        raise _bad(name, value, f"expected a {'non-negative' if zero else 'positive'} number "
                                f"of seconds, e.g. {'0, ' if zero else ''}60 or 2.5")
    return seconds


def positive_seconds(value, what: str) -> float:
    """``value`` as a positive finite float (a timeout), or a ConfigError naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{what} must be a positive number of seconds, got {value!r}")
    return float(value)


def env_flag(name: str, default: bool) -> bool:
    """A boolean: 1/0, true/false, yes/no, on/off (any case)."""
    value = _raw(name)
    if value is None:
        return default
    flag = FLAGS.get(value.strip().lower())
    if flag is None:
        raise _bad(name, value, "expected 1 or 0 (also true/false, yes/no, on/off)")
    return flag


def env_path(name: str) -> Optional[Path]:
    """An absolute path (``~`` expanded; a relative path is taken from the current
    directory), or None when unset."""
    value = _raw(name)
    if value is None:
        return None
    if "\0" in value:
        raise _bad(name, value, "expected a file system path")
    return Path(os.path.abspath(os.path.expanduser(value)))
