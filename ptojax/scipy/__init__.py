"""``pto.scipy``: JAX's ``jax.scipy`` subpackages (those ``import jax.scipy`` imports;
``optimize`` is imported by name, as JAX's)."""
from ptojax.scipy import (cluster, fft, integrate, interpolate, linalg, ndimage,  # noqa: F401
                          signal, special, stats)
from ptojax.public import dir_function

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "signal",
           "special", "stats"]
__dir__ = dir_function(__all__)
