"""``pto.config``: ptojax's options, under JAX's flag names where ptojax behaves as JAX does.

    pto.config.update("jax_disable_jit", True)
    pto.config.jax_enable_x64          # False unless JAX_ENABLE_X64 was set at import

Four kinds of option:

- **Fixed** JAX flags: ptojax has exactly one behaviour, the one JAX has at the value listed.
  Reading gives that value; updating to it is accepted; any other value raises
  ``ConfigError`` saying what ptojax does instead.
- **Flags**: ``jax_disable_jit`` (``pto.jit`` runs functions op by op; results are the same
  up to the last bits of fused host kernels) and ``jax_enable_x64`` (x64 mode: Python
  scalars and default dtypes are 64-bit, promotion is JAX's x64 lattice; kept in
  ``dtypes.py``, also set by ``JAX_ENABLE_X64`` at import and per thread by
  ``pto.enable_x64(True)`` as a context manager). Without x64, 64-bit numpy inputs and
  ``dtype=`` arguments are 32-bit, as JAX (the latter with JAX's warning; ``dtypes.py``).
- **Config states** kept in ``scoped_options.py`` (read below this layer), each also a context
  manager setting it in one thread, as JAX's: ``jax_debug_nans``/``jax_debug_infs``
  (``pto.debug_nans``...), ``jax_numpy_dtype_promotion``, ``jax_numpy_rank_promotion``,
  ``jax_log_compiles``, ``jax_explain_cache_misses``, ``jax_default_matmul_precision``,
  ``jax_enable_checks``, ``jax_check_tracer_leaks`` (``pto.checking_leaks()``),
  ``jax_no_tracing``, ``jax_transfer_guard`` and its ``_host_to_device``/``_device_to_host``/
  ``_device_to_device`` forms (``eval/transfers.py``), ``jax_default_device`` (where new
  arrays land: ``eval/array.py``).
- **Environment options**: ``ptojax_num_devices`` (alias ``jax_num_cpu_devices``; only before
  the devices are first used), ``ptojax_collective_timeout``, ``ptojax_cache_dir`` and
  ``ptojax_build_after`` (seconds of numpy-tier calls before a program whose kernels are not
  cached builds them: ``lower/host/hotness.py``; read as each program is created) and
  ``ptojax_one_thread_pool`` (products on the kernels' OpenMP threads: ``lower/host/
  team_gemm.py``; only before the first kernel library loads); updating one sets its
  ``PTOJAX_*`` environment variable, which the runtime reads.

An unknown name raises ``ConfigError`` (an ``AttributeError`` on attribute reads) listing the
options.
"""
from __future__ import annotations

import contextlib
import functools
import os
from typing import Any, Callable

from ptojax import devices, dtypes
from ptojax.env import env_path
from ptojax.eval import blas
from ptojax.errors import ConfigError
from ptojax.lower.host import hotness
from ptojax import scoped_options
from ptojax.scoped_options import ScopedOption
from ptojax.shard.runtime.in_process import configured_timeout
from ptojax.source_info import user_frame


class Fixed:
    """A JAX flag ptojax supports at one value only."""

    def __init__(self, value, why: str, accepted=()):
        self.value = value
        self.why = why
        self.accepted = (value, *accepted)

    def get(self):
        return self.value

    def set(self, name, value):
        if value not in self.accepted:
            raise ConfigError(f"config option {name!r} cannot be {value!r} in ptojax: "
                              f"{self.why}", user_frame(3))


class Flag:
    """A boolean held by this module."""

    def __init__(self, value: bool, doc: str):
        self.value = value
        self.doc = doc

    def get(self):
        return self.value

    def set(self, name, value):
        if not isinstance(value, bool):
            raise ConfigError(f"config option {name!r} must be a bool, got {value!r}",
                              user_frame(3))
        self.value = value


class X64Flag:
    """``jax_enable_x64``: its value lives in ``dtypes`` (the one place promotion and the
    default dtypes read it)."""

    def get(self):
        return dtypes.x64_enabled()

    def set(self, name, value):
        if not isinstance(value, bool):
            raise ConfigError(f"config option {name!r} must be a bool, got {value!r}",
                              user_frame(3))
        dtypes.set_x64_globally(value)


class Scoped:
    """A JAX config state kept in ``scoped_options`` (read below this layer), also set per
    thread by its context manager (``pto.debug_nans(True)``, ...)."""

    def __init__(self, option: ScopedOption):
        self.option = option

    def get(self):
        return self.option.get()

    def set(self, name, value):
        try:
            self.option.set_global(value)
        except ConfigError as e:
            raise e.with_source(user_frame(3)) from None


class Environment:
    """An option stored in an environment variable, validated by the same reader (``env.py``)
    the runtime uses when it needs the value."""

    def __init__(self, variable: str, read: Callable, check=None):
        self.variable = variable
        self.read = read
        self.check = check

    def get(self):
        return self.read()

    def set(self, name, value):
        previous = os.environ.get(self.variable)
        os.environ[self.variable] = str(value)
        try:
            parsed = self.read()
            if self.check is not None:
                self.check(name, parsed)
        except ConfigError as e:
            _restore(self.variable, previous)
            raise ConfigError(f"config option {name!r}: {e.message}", user_frame(3)) from None


def _restore(variable: str, previous) -> None:
    if previous is None:
        os.environ.pop(variable, None)
    else:
        os.environ[variable] = previous


def _device_count(name, value):
    if devices.topology_known() and value != devices.topology().local_count:
        raise ConfigError(f"it must be set before the devices are first used (this process "
                          f"already has {devices.topology().local_count} devices); set it at "
                          f"the start of the program or set PTOJAX_NUM_DEVICES")


_OPTIONS: dict = {
    "jax_enable_x64": X64Flag(),
    "jax_platforms": Fixed("cpu", "ptojax executes on the host CPU (Ascend code is emitted, "
                           "not run)", accepted=(None, "")),
    "jax_platform_name": Fixed("cpu", "ptojax executes on the host CPU", accepted=(None, "")),
    "jax_threefry_partitionable": Fixed(True, "pto.random always uses JAX's partitionable "
                                        "Threefry scheme"),
    "jax_default_prng_impl": Fixed("threefry2x32", "pto.random implements Threefry-2x32 "
                                   "only"),
    "jax_numpy_rank_promotion": Scoped(scoped_options.NUMPY_RANK_PROMOTION),
    "jax_numpy_dtype_promotion": Scoped(scoped_options.NUMPY_DTYPE_PROMOTION),
    "jax_default_matmul_precision": Scoped(scoped_options.DEFAULT_MATMUL_PRECISION),
    "jax_debug_nans": Scoped(scoped_options.DEBUG_NANS),
    "jax_debug_infs": Scoped(scoped_options.DEBUG_INFS),
    "jax_enable_checks": Scoped(scoped_options.ENABLE_CHECKS),
    "jax_check_tracer_leaks": Scoped(scoped_options.CHECK_TRACER_LEAKS),
    "jax_no_tracing": Scoped(scoped_options.NO_TRACING),
    "jax_transfer_guard": Scoped(scoped_options.TRANSFER_GUARD),
    "jax_transfer_guard_host_to_device": Scoped(scoped_options.TRANSFER_GUARD_HOST_TO_DEVICE),
    "jax_transfer_guard_device_to_host": Scoped(scoped_options.TRANSFER_GUARD_DEVICE_TO_HOST),
    "jax_transfer_guard_device_to_device": Scoped(
        scoped_options.TRANSFER_GUARD_DEVICE_TO_DEVICE),
    "jax_default_device": Scoped(scoped_options.DEFAULT_DEVICE),
    "jax_log_compiles": Scoped(scoped_options.LOG_COMPILES),
    "jax_explain_cache_misses": Scoped(scoped_options.EXPLAIN_CACHE_MISSES),
    "jax_disable_jit": Flag(False, "pto.jit runs functions op by op"),
    "ptojax_num_devices": Environment("PTOJAX_NUM_DEVICES", devices.configured_local_count,
                                      _device_count),
    "ptojax_collective_timeout": Environment("PTOJAX_COLLECTIVE_TIMEOUT",
                                             configured_timeout),
    "ptojax_cache_dir": Environment("PTOJAX_CACHE_DIR",
                                    lambda: env_path("PTOJAX_CACHE_DIR")),
    "ptojax_build_after": Environment(hotness.ENV, hotness.build_after),
    "ptojax_one_thread_pool": Environment(blas.ONE_POOL_ENV, blas.one_pool_wanted,
                                          blas.check_one_pool_setting),
}
_ALIASES = {"jax_num_cpu_devices": "ptojax_num_devices"}


def _option(name: str):
    option = _OPTIONS.get(_ALIASES.get(name, name))
    if option is None:
        raise ConfigError(f"unknown config option {name!r}; ptojax's options are "
                          f"{sorted([*_OPTIONS, *_ALIASES])}", user_frame(3))
    return option


class Config:
    """ptojax's options: read them as attributes, change them with ``update``."""

    def update(self, name: str, value: Any) -> None:
        """Set option ``name`` to ``value``.

        Args:
          name: an option name (JAX's flag name where ptojax has the same behaviour).
          value: the new value.

        Raises:
          ConfigError: for an unknown option, or a value ptojax does not support.

        Example:
          >>> pto.config.update("jax_disable_jit", False)
          >>> pto.config.jax_disable_jit
          False
        """
        _option(name).set(name, value)

    def config_with_absl(self) -> None:
        """Register an absl boolean flag for each of ptojax's boolean options
        (``--jax_enable_x64``, ``--jax_disable_jit``), as ``jax.config.config_with_absl``;
        flags given on the command line are applied when ``absl.app.run`` starts.

        Raises:
          ConfigError: when absl (``pip install absl-py``) is not installed.

        Example:
          >>> pto.config.config_with_absl()   # doctest: +SKIP
          >>> absl.app.run(main)              # doctest: +SKIP
        """
        try:
            from absl import app, flags  # optional: absl-py, only for this call
        except ImportError:
            raise ConfigError("config_with_absl needs absl (pip install absl-py)",
                              user_frame()) from None
        names = [n for n, o in _OPTIONS.items() if isinstance(o, (Flag, X64Flag)) or (
            isinstance(o, Scoped) and isinstance(o.get(), bool))]
        for name in names:
            if name not in flags.FLAGS:
                flags.DEFINE_bool(name, _OPTIONS[name].get(), f"ptojax option {name}")

        def apply_present_flags():
            for name in names:
                if flags.FLAGS[name].present:
                    self.update(name, flags.FLAGS[name].value)
        app.call_after_init(apply_present_flags)

    def read(self, name: str) -> Any:
        """The value of option ``name`` (as ``getattr(config, name)``)."""
        return _option(name).get()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return _option(name).get()
        except ConfigError as e:
            raise AttributeError(e.message) from None

    def __setattr__(self, name, value):
        raise AttributeError(f"use pto.config.update({name!r}, {value!r}) to change an option")

    def __dir__(self):
        return sorted([*_OPTIONS, *_ALIASES, "update", "read", "config_with_absl"])

    def __repr__(self):
        return "Config(" + ", ".join(f"{n}={o.get()!r}" for n, o in _OPTIONS.items()) + ")"


config = Config()


def jit_disabled() -> bool:
    """Whether ``jax_disable_jit`` is set (read by ``pto.jit`` on every call)."""
    return _OPTIONS["jax_disable_jit"].value


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """A context in which ``pto.jit`` functions run op by op (``jax_disable_jit``).

    Args:
      disable: whether to disable jit inside the context (default True).

    Example:
      >>> with pto.disable_jit():
      ...     pto.jit(lambda x: pnp.sin(x) + 1)(pnp.zeros(2))
      Array([1., 1.], dtype=float32)
    """
    flag = _OPTIONS["jax_disable_jit"]
    previous = flag.value
    flag.set("jax_disable_jit", bool(disable))
    try:
        yield
    finally:
        flag.value = previous


class _ContextOption:
    """A JAX config state usable as a context manager, as ``jax.enable_x64``:
    ``with pto.enable_x64(True): ...`` sets the option in this thread for the block;
    ``.value`` reads it."""

    def __init__(self, name: str, scope: Callable, read: Callable):
        self.name = name
        self._scope = scope
        self._read = read

    def __call__(self, value: bool = True):
        if not isinstance(value, bool):
            raise ConfigError(f"{self.name}(value): value must be a bool, got {value!r}",
                              user_frame())
        return self._scope(value)

    @property
    def value(self):
        return self._read()

    def __repr__(self):
        return f"{self.name}(value={self.value!r})"


enable_x64 = _ContextOption("enable_x64", dtypes.x64_scope, dtypes.x64_enabled)
enable_x64.__doc__ = """x64 mode (``jax_enable_x64``) in this thread inside a ``with`` block, as
``jax.enable_x64``.

Args:
  value: True for 64-bit defaults (float64/int64/complex128), False for 32-bit ones.

Example:
  >>> with pto.enable_x64(True):
  ...     pnp.array([1.0]).dtype
  dtype('float64')
"""


class _State:
    """A JAX config state as ``jax.debug_nans`` & co: ``with pto.debug_nans(True): ...`` sets
    it in this thread for the block (a boolean state's value defaults to True); ``.value``
    reads it; ``pto.config.update`` sets it for the process."""

    def __init__(self, name: str, option: ScopedOption, doc: str):
        self.name = name
        self._option = option
        self.__doc__ = doc

    def __call__(self, new_val=None):
        if new_val is None and isinstance(self._option.default, bool):
            new_val = True
        try:
            self._option.validate(new_val)
        except ConfigError as e:
            raise ConfigError(f"{self.name}({new_val!r}): {e.message}", user_frame()) from None
        return self._option.scope(new_val)

    @property
    def value(self):
        return self._option.get()

    def __repr__(self):
        return f"{self.name}(value={self.value!r})"


debug_nans = _State("debug_nans", scoped_options.DEBUG_NANS, """NaN checking
(``jax_debug_nans``) in this thread inside a ``with`` block, as ``jax.debug_nans``: an eager
operation whose floating-point result holds a NaN raises ``FloatingPointError`` naming it
("invalid value (nan) encountered in log"); a ``jit`` function whose output holds one is run
again op by op to name the operation (ptojax logs a warning on ``ptojax.jit`` where JAX prints).

Example:
  >>> with pto.debug_nans(True):
  ...     try:
  ...         pnp.log(pnp.array(-1.0))
  ...     except FloatingPointError as e:
  ...         print(str(e).splitlines()[0])
  invalid value (nan) encountered in log
""")
debug_infs = _State("debug_infs", scoped_options.DEBUG_INFS, """Infinity checking
(``jax_debug_infs``) in this thread inside a ``with`` block, as ``jax.debug_infs``: as
``debug_nans``, for infinities ("invalid value (inf) encountered in log").

Example:
  >>> with pto.debug_infs(True):
  ...     try:
  ...         pnp.log(pnp.array(0.0))
  ...     except FloatingPointError as e:
  ...         print(str(e).splitlines()[0])
  invalid value (inf) encountered in log
""")
numpy_dtype_promotion = _State(
    "numpy_dtype_promotion", scoped_options.NUMPY_DTYPE_PROMOTION, """The type promotion
mode (``jax_numpy_dtype_promotion``) in this thread inside a ``with`` block, as
``jax.numpy_dtype_promotion``: ``'standard'`` (JAX's lattice) or ``'strict'`` (operands of
different dtypes raise ``TypePromotionError``; only weakly typed Python scalars join a
dtype of their kind or a wider kind).

Example:
  >>> with pto.numpy_dtype_promotion("strict"):
  ...     print((pnp.ones(2) + 1.0).dtype)
  ...     try:
  ...         pnp.ones(2) + pnp.ones(2, pnp.int32)
  ...     except ValueError as e:
  ...         print(type(e).__name__)
  float32
  TypePromotionError
""")
numpy_rank_promotion = _State(
    "numpy_rank_promotion", scoped_options.NUMPY_RANK_PROMOTION, """Implicit rank promotion
(``jax_numpy_rank_promotion``) in ``ptojax.numpy`` in this thread inside a ``with`` block, as
``jax.numpy_rank_promotion``: ``'allow'`` (NumPy broadcasting), ``'warn'`` (a
``UserWarning`` when operands of different nonzero ranks are broadcast) or ``'raise'`` (a
``ValueError``).

Example:
  >>> with pto.numpy_rank_promotion("raise"):
  ...     try:
  ...         pnp.ones(3) + pnp.ones((2, 3))
  ...     except ValueError as e:
  ...         print(str(e)[:54])
  Operands could not be broadcast together for add on sh
""")
log_compiles = _State("log_compiles", scoped_options.LOG_COMPILES, """Compile logging
(``jax_log_compiles``) in this thread inside a ``with`` block, as ``jax.log_compiles``: each
``jit`` compile is logged at WARNING level on the ``ptojax.jit`` logger (at INFO otherwise).

Example:
  >>> with pto.log_compiles(True):
  ...     pto.jit(lambda x: x + 1)(pnp.ones(2))   # logs "compiled <lambda> for f32[2] ..."
  Array([2., 2.], dtype=float32)
""")
explain_cache_misses = _State(
    "explain_cache_misses", scoped_options.EXPLAIN_CACHE_MISSES, """Cache-miss explanations
(``jax_explain_cache_misses``) in this thread inside a ``with`` block, as
``jax.explain_cache_misses``: each ``jit`` retrace is logged at WARNING level on the
``ptojax.jit`` logger with what changed in the signature (at INFO otherwise).

Example:
  >>> with pto.explain_cache_misses(True):
  ...     pto.explain_cache_misses.value
  True
""")
default_matmul_precision = _State(
    "default_matmul_precision", scoped_options.DEFAULT_MATMUL_PRECISION, """The default
precision of float32 products and convolutions (``jax_default_matmul_precision``) in this
thread inside a ``with`` block, as ``jax.default_matmul_precision``. ptojax computes them in
full float32 whatever the value, as JAX does on CPU for the values it accepts: None, 'default',
'high', 'highest', 'bfloat16', 'tensorfloat32', 'float32', 'BF16_BF16_F32',
'BF16_BF16_F32_X3', 'BF16_BF16_F32_X6', 'F32_F32_F32'; the other algorithm presets (which
JAX's CPU backend computes otherwise or rejects at the product) raise ``ConfigError`` here.

Example:
  >>> with pto.default_matmul_precision("bfloat16"):
  ...     pnp.dot(pnp.ones(3), pnp.ones(3))    # full float32, as JAX on CPU
  Array(3., dtype=float32)
""")
enable_checks = _State("enable_checks", scoped_options.ENABLE_CHECKS, """Internal checks
(``jax_enable_checks``) in this thread inside a ``with`` block, as ``jax.enable_checks``:
``jit`` verifies each traced and optimized IR (``ir.verify``: types re-inferred, single
assignment, definitions before uses) before compiling it.

Example:
  >>> with pto.enable_checks(True):
  ...     pto.jit(lambda x: pnp.sin(x) * 0)(pnp.ones(2))
  Array([0., 0.], dtype=float32)
""")
check_tracer_leaks = _State(
    "check_tracer_leaks", scoped_options.CHECK_TRACER_LEAKS, """Tracer leak checking
(``jax_check_tracer_leaks``) in this thread inside a ``with`` block, as
``jax.check_tracer_leaks``: when an abstract trace (``jit``, ``make_jaxpr``, control-flow
bodies) ends while one of its tracers is still referenced (stored in a global, a closure, an
outer list), it raises ``LeakedTracerError`` naming the tracers and what holds them. (JAX
also checks ``vmap``; ptojax's eager ``vmap`` and ``grad`` traces are not checked.)

Example:
  >>> with pto.check_tracer_leaks(True):
  ...     pto.jit(lambda x: x * 2)(pnp.ones(2))     # nothing kept: no error
  Array([2., 2.], dtype=float32)
""")
no_tracing = _State("no_tracing", scoped_options.NO_TRACING, """No ``jit`` tracing
(``jax_no_tracing``) in this thread inside a ``with`` block, as ``jax.no_tracing``: a ``jit``
function that would trace (a new signature) raises ``RuntimeError``; compiled ones run.
(JAX's eager operations compile too, so there a new eager signature raises as well.)

Example:
  >>> f = pto.jit(lambda x: x * 3)
  >>> f(pnp.ones(2))
  Array([3., 3.], dtype=float32)
  >>> with pto.no_tracing(True):
  ...     f(pnp.ones(2))
  Array([3., 3.], dtype=float32)
""")
_TRANSFER_DOC = """The transfer guard for {what} transfers (``jax_transfer_guard_{kind}``) in
this thread inside a ``with`` block, as ``jax.transfer_guard_{kind}``: ``'allow'``,
``'log'``/``'disallow'`` (a warning on the ``ptojax.transfer_guard`` logger / JAX's
``JaxRuntimeError`` for implicit transfers), ``'log_explicit'``/``'disallow_explicit'`` (for
explicit ones, ``device_put``, too). Which conversions are transfers: ``eval/transfers.py``.{more}
"""
transfer_guard_host_to_device = _State(
    "transfer_guard_host_to_device", scoped_options.TRANSFER_GUARD_HOST_TO_DEVICE,
    _TRANSFER_DOC.format(what="host-to-device", kind="host_to_device", more="""

Example:
  >>> x = pnp.ones(2)
  >>> with pto.transfer_guard_host_to_device("disallow"):
  ...     y = x * x                       # arrays only: no transfer
  ...     try:
  ...         x * np.ones(2)              # a numpy operand is an implicit transfer
  ...     except pto.errors.JaxRuntimeError as e:
  ...         print(str(e).split(",")[0])
  INVALID_ARGUMENT: Disallowed host-to-device transfer: aval=f32[2]"""))
transfer_guard_device_to_host = _State(
    "transfer_guard_device_to_host", scoped_options.TRANSFER_GUARD_DEVICE_TO_HOST,
    _TRANSFER_DOC.format(what="device-to-host", kind="device_to_host", more="""
As JAX on CPU, ptojax never guards these: its arrays are already in host memory.

Example:
  >>> with pto.transfer_guard_device_to_host("disallow"):
  ...     float(pnp.ones(()))
  1.0"""))
transfer_guard_device_to_device = _State(
    "transfer_guard_device_to_device", scoped_options.TRANSFER_GUARD_DEVICE_TO_DEVICE,
    _TRANSFER_DOC.format(what="device-to-device", kind="device_to_device", more="""

Example:
  >>> with pto.transfer_guard_device_to_device("disallow_explicit"):
  ...     try:
  ...         pto.device_put(pnp.ones(2), pto.devices()[1])
  ...     except pto.errors.JaxRuntimeError as e:
  ...         print(str(e)[:54])
  INVALID_ARGUMENT: Disallowed device-to-device transfer"""))


@contextlib.contextmanager
def transfer_guard(new_val: str):
    """All transfer guards (``jax_transfer_guard``: host-to-device, device-to-host and
    device-to-device) set to ``new_val`` in this thread for the block, as
    ``jax.transfer_guard``: ``'allow'``, ``'log'``, ``'disallow'``, ``'log_explicit'`` or
    ``'disallow_explicit'`` (see ``transfer_guard_host_to_device``).

    Example:
      >>> with pto.transfer_guard("disallow"):
      ...     y = pto.device_put(np.ones(2))   # explicit: allowed
      ...     try:
      ...         pnp.asarray(np.ones(2))      # implicit
      ...     except pto.errors.JaxRuntimeError:
      ...         print("refused")
      refused
    """
    options = (scoped_options.TRANSFER_GUARD, scoped_options.TRANSFER_GUARD_HOST_TO_DEVICE,
               scoped_options.TRANSFER_GUARD_DEVICE_TO_HOST,
               scoped_options.TRANSFER_GUARD_DEVICE_TO_DEVICE)
    try:
        options[0].validate(new_val)
    except ConfigError as e:
        raise ConfigError(f"transfer_guard({new_val!r}): {e.message}", user_frame(3)) from None
    with contextlib.ExitStack() as stack:
        for option in options:
            stack.enter_context(option.scope(new_val))
        yield


default_device = _State("default_device", scoped_options.DEFAULT_DEVICE, """The device new
arrays land on (``jax_default_device``) in this thread inside a ``with`` block, as
``jax.default_device``: a ``Device`` (``pto.devices()[i]``), the platform name ``'cpu'`` (the
first device) or None. Arrays made there without a device (``pnp`` functions, operations on
them, ``jit`` results, ``device_put`` without a device) are on it; ``device_put(x, device)``
puts ``x`` on ``device`` whatever the default. (Unlike JAX, an operation on arrays
``device_put`` onto another device gives its result on the default device, not theirs.)

Example:
  >>> with pto.default_device(pto.devices()[1]):
  ...     pnp.ones(2).devices()
  {VirtualDevice(id=1, process=0)}
""")
checking_leaks = functools.partial(check_tracer_leaks, True)
checking_leaks.__doc__ = """``check_tracer_leaks(True)``: a context checking for tracer leaks, as
``jax.checking_leaks``.

Example:
  >>> with pto.checking_leaks():
  ...     pto.check_tracer_leaks.value
  True
"""


class _FixedState:
    """A JAX config state ptojax supports at one value only (a ``Fixed`` option), usable as
    JAX's: ``with pto.threefry_partitionable(True): ...`` is accepted; any other value raises
    ``ConfigError`` saying what ptojax does."""

    def __init__(self, name: str, option_name: str, doc: str):
        self.name = name
        self._option_name = option_name
        self.__doc__ = doc

    def __call__(self, new_val=True):
        _OPTIONS[self._option_name].set(self._option_name, new_val)
        return contextlib.nullcontext()

    @property
    def value(self):
        return _OPTIONS[self._option_name].get()

    def __repr__(self):
        return f"{self.name}(value={self.value!r})"


threefry_partitionable = _FixedState(
    "threefry_partitionable", "jax_threefry_partitionable", """The Threefry scheme
(``jax_threefry_partitionable``), as ``jax.threefry_partitionable``: ``pto.random`` always uses
JAX's partitionable scheme (JAX's default), so only True is accepted.

Example:
  >>> with pto.threefry_partitionable(True):
  ...     pto.threefry_partitionable.value
  True
""")
default_prng_impl = _FixedState(
    "default_prng_impl", "jax_default_prng_impl", """The default PRNG implementation
(``jax_default_prng_impl``), as ``jax.default_prng_impl``: ``pto.random`` implements
'threefry2x32' (JAX's default) only.

Example:
  >>> pto.default_prng_impl.value
  'threefry2x32'
""")
