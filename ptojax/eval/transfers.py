"""Transfer guards (JAX's ``jax_transfer_guard*`` options): what a transfer of a value
between the host and a device does -- nothing (``'allow'``), a warning on the
``ptojax.transfer_guard`` logger (``'log'``) or JAX's ``JaxRuntimeError`` (``'disallow'``).
``'log'``/``'disallow'`` apply to implicit transfers only; ``'log_explicit'``/
``'disallow_explicit'`` to explicit ones (``device_put``) too.

ptojax's devices are the host's memory, so which conversions count as transfers follows
what JAX on CPU counts (found by experiment against JAX 0.10.2):

- host-to-device, implicit: a numpy array, numpy scalar or Python scalar (or list) becoming
  an array outside a trace: ``pnp.asarray``/``pnp.array`` of it, an eager operation's
  operand (``x + 1.0``, ``x + np.ones(3)``), an argument of a ``jit``, ``vmap`` or
  ``grad``/``jvp``/... function. (JAX also counts the Python scalars its own functions
  convert internally: an index in ``x[1:]``, the fill of ``zeros_like``; ptojax, which
  does not make arrays of those, does not.) Not inside a
  trace (a constant of the traced program, as in JAX once the program is compiled).
- host-to-device, explicit: ``device_put`` of a host value.
- device-to-device, explicit: ``device_put`` of an array onto another device.
- device-to-host: never (JAX on CPU does not guard ``np.asarray(x)``, ``float(x)``, printing:
  a CPU array is already in host memory); the option is accepted and has no effect.
"""
from __future__ import annotations

import logging

import numpy as np

from ptojax import dtypes
from ptojax.errors import JaxRuntimeError
from ptojax.eval.array import default_device_sharding
from ptojax.ir.types import TensorType
from ptojax.scoped_options import (TRANSFER_GUARD, TRANSFER_GUARD_DEVICE_TO_DEVICE,
                                   TRANSFER_GUARD_HOST_TO_DEVICE)
from ptojax.sharding import single_device_sharding
from ptojax.source_info import user_frame

log = logging.getLogger("ptojax.transfer_guard")


def guarded() -> bool:
    """Whether some transfer guard may be set in some thread (the callers' cheap test)."""
    return TRANSFER_GUARD.changed or TRANSFER_GUARD_HOST_TO_DEVICE.changed or \
        TRANSFER_GUARD_DEVICE_TO_DEVICE.changed


def host_to_device(what, destination, explicit: bool = False) -> None:
    """Check a host-to-device transfer of a value of type ``what`` (its shape and dtype,
    printed) onto ``destination`` (a sharding) against the guard of this thread."""
    _check("host-to-device", TRANSFER_GUARD_HOST_TO_DEVICE, explicit, what, destination)


def implicit_host_value(x) -> None:
    """Check the implicit transfer of the host value ``x`` (a numpy array or scalar, a Python
    scalar) as it becomes an array operand outside a trace (the caller knows it is not
    tracing)."""
    if type(x) in dtypes.PYTHON_SCALARS:
        what = TensorType((), dtypes.python_scalar_dtype(x), dtypes.python_scalar_is_weak(x))
    else:
        x = np.asarray(x)
        what = TensorType(x.shape, dtypes.canonical_dtype(x.dtype))
    host_to_device(what, default_device_sharding() or single_device_sharding())


def check_host_leaves(leaves) -> None:
    """Check each host value (numpy array or scalar, Python scalar) among ``leaves`` (a
    transform's flat arguments, outside a trace) as an implicit transfer."""
    for x in leaves:
        if isinstance(x, (np.ndarray, np.generic, *dtypes.PYTHON_SCALARS)):
            implicit_host_value(x)


def device_to_device(what, destination, explicit: bool = True) -> None:
    """Check a device-to-device transfer (``device_put`` onto another device)."""
    _check("device-to-device", TRANSFER_GUARD_DEVICE_TO_DEVICE, explicit, what, destination)


def _level(option) -> str:
    return option.get() or TRANSFER_GUARD.get() or "allow"


def _check(kind, option, explicit, what, destination) -> None:
    level = _level(option)
    if level == "allow" or (explicit and level in ("log", "disallow")):
        return
    text = f"{kind} transfer: aval={what}, dst_sharding={destination}"
    if level.startswith("log"):
        log.warning(text)
        return
    raise JaxRuntimeError(f"INVALID_ARGUMENT: Disallowed {text}. The transfer guard "
                          f"({option.name}={level!r}) forbids it: make the value an array "
                          f"first (outside the guarded block), or allow the transfer",
                          user_frame())
