"""The runtime as JAX's top level shows it: ``live_arrays``, ``process_indices``,
``copy_to_host_async``, ``effects_barrier``, ``print_environment_info``."""
from __future__ import annotations

import gc
import platform as _platform
import sys

import ml_dtypes
import numpy as np

from ptojax.devices import device_count, local_device_count, process_count
from ptojax.errors import ConfigError
from ptojax.eval.array import Array
from ptojax.lower.host.compiler import compiler_or_none
from ptojax.pytree import tree_map
from ptojax.source_info import user_frame

VERSION = "0.1.0"


def _check_platform(platform, what: str) -> None:
    if platform not in (None, "cpu"):
        raise ConfigError(f"{what}: ptojax's only platform is 'cpu', got {platform!r}",
                          user_frame(3))


def live_arrays(platform=None) -> list:
    """Every ptojax ``Array`` still alive in this process (found by the garbage collector, so
    this walks the heap: a debugging aid, as in JAX).

    Args:
      platform: None or ``"cpu"`` (ptojax's one platform).

    Example:
      >>> x = pnp.ones(2)
      >>> any(a is x for a in pto.live_arrays())
      True
    """
    _check_platform(platform, "live_arrays")
    return [x for x in gc.get_objects() if isinstance(x, Array)]


def process_indices(backend=None) -> list:
    """The indices of the processes of this job: ``list(range(pto.process_count()))``.

    Example:
      >>> pto.process_indices()
      [0]
    """
    _check_platform(backend, "process_indices")
    return list(range(process_count()))


def copy_to_host_async(x):
    """Start copying each array leaf of the pytree ``x`` to host memory and return ``x``.
    ptojax's arrays already live in host memory, so this returns ``x`` at once.

    Example:
      >>> pto.copy_to_host_async({"w": pnp.ones(2)})
      {'w': Array([1., 1.], dtype=float32)}
    """
    tree_map(lambda leaf: leaf.copy_to_host_async() if isinstance(leaf, Array) else None, x)
    return x


def effects_barrier() -> None:
    """Wait until the side effects (callbacks, prints) of functions already called have run.
    ptojax runs them during the call that causes them, so none is ever pending.

    Example:
      >>> pto.effects_barrier()
    """


def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or with ``return_string=True`` return) the versions of ptojax and its
    dependencies, Python, the devices and the platform, as ``jax.print_environment_info``
    (ptojax lists numpy, ml_dtypes and the C++ compiler its host kernels use).

    Example:
      >>> "numpy:" in pto.print_environment_info(return_string=True)
      True
    """
    compiler, why_none = compiler_or_none()
    compiler_text = compiler.identity.split("\n")[0] if compiler is not None \
        else f"none ({why_none})"
    text = "\n".join([
        f"ptojax:    {VERSION}",
        f"numpy:     {np.__version__}",
        f"ml_dtypes: {ml_dtypes.__version__}",
        f"python:    {sys.version}",
        f"compiler:  {compiler_text}",
        f"device info: cpu-{device_count()}, {local_device_count()} local "
        f"devices",
        f"process_count: {process_count()}",
        f"platform: {_platform.uname()}",
    ]) + "\n"
    if return_string:
        return text
    print(text)
    return None
