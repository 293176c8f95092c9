"""``pto.scipy``: JAX's ``jax.scipy`` subpackages."""
from ptojax.scipy import special, stats
