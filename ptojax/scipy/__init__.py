"""``pto.scipy``: JAX's ``jax.scipy`` subpackages."""
from ptojax.scipy import linalg, special, stats  # noqa: F401
from ptojax.public import dir_function

__all__ = ["linalg", "special", "stats"]
__dir__ = dir_function(__all__)
