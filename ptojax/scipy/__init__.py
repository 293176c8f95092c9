"""``pto.scipy``: JAX's ``jax.scipy`` subpackages."""
from ptojax.scipy import linalg, special, stats  # noqa: F401
