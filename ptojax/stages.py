"""``ptojax.stages``: the classes of the ahead-of-time stages of a ``jit`` function, where
JAX's ``jax.stages`` lists them. They are the very classes ``pto.jit`` returns (defined in
``ptojax/jit.py`` and ``ptojax/aot_signature.py``), so ``isinstance`` checks hold:

    jit(f)                      Wrapped   (a protocol: callable, ``.trace``, ``.lower``)
    jit(f).trace(*args)         Traced    (``.jaxpr``: ptojax's IR, ``.out_info``, ``.lower()``)
    jit(f).lower(*args)         Lowered   (``.as_text()``, ``.cost_analysis()``, ``.compile()``)
    jit(f).lower(*args).compile()   Compiled  (call it with the lowered argument types)

``args_info`` of each stage is a pytree of ``ArgInfo`` (``shape``, ``dtype``, ``donated``);
``CompilerOptions`` is the type of the compiler options JAX's ``compile`` takes (ptojax's
``compile`` takes none).
"""
from __future__ import annotations

from typing import Protocol, Union, runtime_checkable

from ptojax.aot_signature import ArgInfo
from ptojax.jit import Compiled, Lowered, Traced
from ptojax.public import dir_function

CompilerOptions = dict[str, Union[str, bool]]


@runtime_checkable
class Wrapped(Protocol):
    """A function ready to be traced, lowered and compiled: what ``pto.jit`` returns.

    Example:
      >>> isinstance(pto.jit(pnp.sin), pto.stages.Wrapped)
      True
    """

    def __call__(self, *args, **kwargs):
        """Run the function, tracing and compiling it for these arguments if needed."""

    def trace(self, *args, **kwargs) -> Traced:
        """Trace the function for these arguments (a ``Traced``)."""

    def lower(self, *args, **kwargs) -> Lowered:
        """Trace and lower it for these arguments (a ``Lowered``)."""


__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]
__dir__ = dir_function(__all__)
