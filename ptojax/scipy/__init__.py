"""``pto.scipy``: JAX's ``jax.scipy`` subpackages."""
from ptojax.scipy import fft, linalg, signal, special, stats  # noqa: F401
from ptojax.public import dir_function

__all__ = ["fft", "linalg", "signal", "special", "stats"]
__dir__ = dir_function(__all__)
