"""``pto.extend.core``: ptojax's IR under JAX's ``jax.extend.core`` names, so that a jaxpr
interpreter written for JAX (``make_jaxpr``, then ``eqn.primitive.bind(*invals,
**eqn.params)`` over ``jaxpr.eqns``, ``type(v) is core.Literal`` and ``v.val``) runs on
ptojax's IR. A ``Jaxpr`` is a ptojax ``IR``, a ``ClosedJaxpr`` a ``ClosedIR``."""
from ptojax.ir.core import IR as Jaxpr
from ptojax.ir.core import ClosedIR as ClosedJaxpr
from ptojax.ir.core import Eqn as JaxprEqn
from ptojax.ir.core import Literal, Var
from ptojax.public import add_examples as _add_examples
from ptojax.public import dir_function as _dir_function
from ptojax.trace import Primitive


def jaxpr_as_fun(closed_jaxpr):
    """``closed_jaxpr`` as a function of its inputs returning the list of its outputs (JAX's
    ``jax.extend.core.jaxpr_as_fun``)."""
    if not isinstance(closed_jaxpr, ClosedJaxpr):
        raise TypeError(f"jaxpr_as_fun: expected a ClosedJaxpr (from make_jaxpr), got "
                        f"{type(closed_jaxpr).__name__}")

    def fun(*args):
        return list(closed_jaxpr(*args))
    return fun


__all__ = ["ClosedJaxpr", "Jaxpr", "JaxprEqn", "Literal", "Primitive", "Var", "jaxpr_as_fun"]
__dir__ = _dir_function(__all__)

_add_examples(globals(), """
Var:
    >>> closed = pto.make_jaxpr(lambda x: x * 2.0)(pnp.arange(3.0))
    >>> closed.jaxpr.invars[0].aval
    ShapedArray(float32[3])
Literal:
    >>> eqn = pto.make_jaxpr(lambda x: x * 2.0)(pnp.arange(3.0)).jaxpr.eqns[0]
    >>> [v.val for v in eqn.invars if type(v) is pto.extend.core.Literal]
    [np.float32(2.0)]
JaxprEqn:
    >>> eqn = pto.make_jaxpr(lambda x: x * 2.0)(pnp.arange(3.0)).jaxpr.eqns[0]
    >>> eqn.primitive is pto.lax.mul_p, dict(eqn.params)
    (True, {})
Primitive:
    >>> pto.lax.exp_p.bind(pnp.zeros(2)), pto.lax.exp_p.multiple_results
    (Array([1., 1.], dtype=float32), False)
jaxpr_as_fun:
    >>> closed = pto.make_jaxpr(lambda x: x * 2.0)(pnp.arange(3.0))
    >>> pto.extend.core.jaxpr_as_fun(closed)(pnp.ones(3))
    [Array([2., 2., 2.], dtype=float32)]
""")
