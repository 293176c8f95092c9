"""JAX's config states that are read below the ``api`` layer: each has a process-wide value
(``pto.config.update``) that a ``with`` block overrides in its own thread (``pto.debug_nans``,
``pto.numpy_rank_promotion``, ... as context managers, built in ``config.py``). The readers
(``eval/nonfinite.py``, ``dtypes.py``, ``numpy/_promote.py``, ``jit.py``) call ``get()``;
``active`` says cheaply whether a boolean option may be on in any thread (the hot paths' test).
"""
from __future__ import annotations

import contextlib
import os
import threading
from typing import Any, Callable

from ptojax.devices import Device
from ptojax.env import env_flag
from ptojax.errors import ConfigError


class ScopedOption:
    """One config state: a global value and this thread's ``scope`` overrides."""

    def __init__(self, name: str, default: Any, validate: Callable[[str, Any], Any],
                 initial: Any = None):
        self.name = name
        self.default = default          # JAX's default
        self._validate = validate
        self._global = default if initial is None else initial
        self._local = threading.local()
        self._open = 0                  # scopes open in any thread
        self._open_truthy = 0           # of which set a true value
        self._lock = threading.Lock()
        self.active = self.changed = False
        self._update_active()   # active: may be true in some thread (never a false negative);
        # changed: may differ from the default in some thread

    def validate(self, value):
        """``value`` as the option holds it (raises ``ConfigError`` for a bad value)."""
        return self._validate(self.name, value)

    def get(self):
        """The value in this thread."""
        if not self._open:
            return self._global
        stack = getattr(self._local, "stack", ())
        return stack[-1] if stack else self._global

    def set_global(self, value) -> None:
        """Set the process-wide value (a thread inside a ``scope`` keeps its own)."""
        value = self.validate(value)
        with self._lock:
            self._global = value
            self._update_active()

    @contextlib.contextmanager
    def scope(self, value):
        """The option set to ``value`` in this thread for the duration of the block."""
        value = self.validate(value)
        outer = getattr(self._local, "stack", ())
        self._local.stack = (*outer, value)
        self._count(1, value)
        try:
            yield
        finally:
            self._local.stack = outer
            self._count(-1, value)

    def _count(self, step: int, value) -> None:
        with self._lock:
            self._open += step
            self._open_truthy += step if value else 0
            self._update_active()

    def _update_active(self) -> None:
        self.active = bool(self._global) or self._open_truthy > 0
        self.changed = self._global != self.default or self._open > 0


def boolean(name: str, value) -> bool:
    if not isinstance(value, (bool, int)) or value not in (0, 1):
        raise ConfigError(f"config option {name!r} must be a bool, got {value!r}")
    return bool(value)


def one_of(*choices, allow_none: bool = False) -> Callable:
    """A validator accepting ``choices`` (and None, read as the default, if ``allow_none``)."""
    def validate(name: str, value):
        if value is None and allow_none:
            return None
        if value not in choices:
            raise ConfigError(f"config option {name!r} must be one of {list(choices)}"
                              f"{' or None' if allow_none else ''}, got {value!r}")
        return value
    return validate


def _from_environment(name: str, default, validate):
    """The option's initial value: its ``JAX_*`` environment variable if set (read once, at
    import, as JAX), else ``default``."""
    variable = name.upper()
    if validate is boolean:
        return env_flag(variable, default)
    value = os.environ.get(variable, "").strip()
    return validate(variable, value) if value else default


def _option(name: str, default, validate) -> ScopedOption:
    return ScopedOption(name, default, validate, _from_environment(name, default, validate))


# -- the options ------------------------------------------------------------------------------
DEBUG_NANS = _option("jax_debug_nans", False, boolean)
DEBUG_INFS = _option("jax_debug_infs", False, boolean)
NUMPY_DTYPE_PROMOTION = _option("jax_numpy_dtype_promotion", "standard",
                                one_of("standard", "strict"))
NUMPY_RANK_PROMOTION = _option("jax_numpy_rank_promotion", "allow",
                               one_of("allow", "warn", "raise"))
LOG_COMPILES = _option("jax_log_compiles", False, boolean)
EXPLAIN_CACHE_MISSES = _option("jax_explain_cache_misses", False, boolean)
ENABLE_CHECKS = _option("jax_enable_checks", False, boolean)
NO_TRACING = _option("jax_no_tracing", False, boolean)
CHECK_TRACER_LEAKS = _option("jax_check_tracer_leaks", False, boolean)

# jax_default_matmul_precision: JAX's values. ptojax computes float32 products and
# convolutions in full float32 whatever the value, as JAX does on CPU for the values accepted
# here; the algorithm presets that JAX's CPU backend computes otherwise (F16_F16_F16,
# F64_F64_F64) or rejects are refused when set.
MATMUL_PRECISIONS_AS_FLOAT32 = (
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "F32_F32_F32")
MATMUL_PRECISIONS_OTHER = (
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
    "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3", "F64_F64_F64")


def _matmul_precision(name: str, value):
    if value is None or value in MATMUL_PRECISIONS_AS_FLOAT32:
        return value
    if value in MATMUL_PRECISIONS_OTHER:
        raise ConfigError(f"config option {name!r}: ptojax computes float32 products in full "
                          f"float32 (as JAX on CPU for {list(MATMUL_PRECISIONS_AS_FLOAT32)}); "
                          f"the algorithm preset {value!r} is not supported")
    raise ConfigError(f"config option {name!r} must be None or one of "
                      f"{[*MATMUL_PRECISIONS_AS_FLOAT32, *MATMUL_PRECISIONS_OTHER]}, got "
                      f"{value!r}")


DEFAULT_MATMUL_PRECISION = _option("jax_default_matmul_precision", None, _matmul_precision)


# jax_transfer_guard*: what a transfer between host and devices does (eval/transfers.py reads
# them): None (the general option's level, else 'allow'), 'allow', 'log'/'disallow' (implicit
# transfers), 'log_explicit'/'disallow_explicit' (every transfer)
TRANSFER_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
TRANSFER_GUARD = _option("jax_transfer_guard", None, one_of(*TRANSFER_LEVELS, allow_none=True))
TRANSFER_GUARD_HOST_TO_DEVICE = _option("jax_transfer_guard_host_to_device", None,
                                        one_of(*TRANSFER_LEVELS, allow_none=True))
TRANSFER_GUARD_DEVICE_TO_HOST = _option("jax_transfer_guard_device_to_host", None,
                                        one_of(*TRANSFER_LEVELS, allow_none=True))
TRANSFER_GUARD_DEVICE_TO_DEVICE = _option("jax_transfer_guard_device_to_device", None,
                                          one_of(*TRANSFER_LEVELS, allow_none=True))


def _device_or_platform(name: str, value):
    """None, a ``Device`` or the platform name ``'cpu'`` (ptojax's one platform)."""
    if value is None or isinstance(value, Device):
        return value
    if isinstance(value, str):
        if value.lower() == "cpu":
            return "cpu"
        raise ConfigError(f"config option {name!r}: unknown platform {value!r}; ptojax's "
                          f"devices are on platform 'cpu'")
    raise ConfigError(f"config option {name!r} must be a Device object (e.g. "
                      f"pto.devices()[0]) or a platform name string like 'cpu', got {value!r}")


# jax_default_device: where arrays made without a device land (eval/array.py reads it)
DEFAULT_DEVICE = ScopedOption("jax_default_device", None, _device_or_platform)
