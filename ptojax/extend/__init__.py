"""``pto.extend``: JAX's ``jax.extend`` for programs that read IR: ``extend.core`` names
ptojax's IR classes with JAX's names (``ClosedJaxpr``, ``Jaxpr``, ``Literal``, ...)."""
from ptojax.extend import core  # noqa: F401  (pto.extend.core)
from ptojax.public import dir_function as _dir_function

__all__ = ["core"]
__dir__ = _dir_function(__all__)
