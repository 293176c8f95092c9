"""``pto.core``: the names JAX's ``jax.core`` still exports that ptojax has the same thing for:
the abstract value class (``ShapedArray``), the class of every traced value (``Tracer``: one
class for jit, grad and vmap, so ``isinstance(x, pto.core.Tracer)`` tells a traced value from
a concrete one as in JAX), ``ensure_compile_time_eval`` and ``eval_jaxpr``. Loaded with
``import ptojax`` (as ``jax.core`` with ``import jax``)."""
from ptojax.eval.interpreter import eval_ir
from ptojax.ir.core import IR
from ptojax.ir.types import ShapedArray
from ptojax.public import add_examples as _add_examples
from ptojax.public import dir_function as _dir_function
from ptojax.trace import Tracer, ensure_compile_time_eval


def eval_jaxpr(jaxpr, consts, *args, propagate_source_info=True) -> list:
    """The outputs of ``jaxpr`` (a ``make_jaxpr(...).jaxpr``) applied to ``args``, its
    constvars bound to ``consts``: a list, as JAX's ``jax.core.eval_jaxpr``. Under a trace
    its equations are traced into it. Each equation keeps its own source line either way
    (``propagate_source_info`` is accepted for JAX's signature: ptojax always does)."""
    del propagate_source_info
    if not isinstance(jaxpr, IR):
        raise TypeError(f"eval_jaxpr: expected a Jaxpr (make_jaxpr(f)(...).jaxpr), got "
                        f"{type(jaxpr).__name__}; a ClosedJaxpr is called directly or "
                        f"passed as (closed.jaxpr, closed.consts)")
    if len(consts) != len(jaxpr.constvars):
        raise TypeError(f"eval_jaxpr: the jaxpr has {len(jaxpr.constvars)} constvars, got "
                        f"{len(consts)} consts")
    return eval_ir(jaxpr, args, tuple(consts))


__all__ = ["ShapedArray", "Tracer", "ensure_compile_time_eval", "eval_jaxpr"]
__dir__ = _dir_function(__all__)

_add_examples(globals(), """
ShapedArray:
    >>> pto.make_jaxpr(lambda x: x.sum())(pnp.ones((2, 3))).in_avals
    [ShapedArray(float32[2,3])]
Tracer:
    >>> pto.jit(lambda x: isinstance(x, pto.core.Tracer))(1.0)
    Array(True, dtype=bool)
eval_jaxpr:
    >>> closed = pto.make_jaxpr(lambda x: pnp.sin(x) * 2.0)(pnp.zeros(2))
    >>> pto.core.eval_jaxpr(closed.jaxpr, closed.consts, pnp.ones(2))
    [Array([1.682942, 1.682942], dtype=float32)]
""")
