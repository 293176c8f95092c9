"""``pto.scipy.cluster``: JAX's ``jax.scipy.cluster`` (the ``vq`` module)."""
from ptojax.scipy.cluster import vq  # noqa: F401
from ptojax.public import dir_function

__all__ = ["vq"]
__dir__ = dir_function(__all__)
