"""``closure_convert`` and ``custom_gradient``: functions whose closed-over traced values are
made explicit arguments, so a rule that closes over values of one trace can be run in another
(as ``custom_vjp`` residuals, for instance)."""
from __future__ import annotations

import functools

from ptojax import dtypes
from ptojax.errors import CustomRuleError
from ptojax.eval.interpreter import eval_ir
from ptojax.eval.leaves import ShapeDtypeStruct
from ptojax.autodiff.api import trace_pytree_fn
from ptojax.autodiff.custom_derivatives import custom_vjp
from ptojax.source_info import user_frame
from ptojax.trace import Tracer
from ptojax.pytree import register_pytree_node_class, tree_flatten, tree_unflatten
from ptojax.public import add_examples as _add_examples


def _converted(fun, example_args, hoist):
    """(``fun`` taking ``*args, *hoisted``, the hoisted consts): ``fun`` traced on the types
    of ``example_args``; the values it closes over that ``hoist`` selects become arguments."""
    flat, in_tree = tree_flatten(tuple(example_args))
    closed, out_tree, _ = trace_pytree_fn(fun, flat, in_tree,
                                          name=getattr(fun, "__name__", "fn"))
    consts = list(closed.consts)
    hoisted = [i for i, c in enumerate(consts) if hoist(c)]

    def converted(*args_and_consts):
        n = len(args_and_consts) - len(hoisted)
        values = list(consts)
        for i, c in zip(hoisted, args_and_consts[n:]):
            values[i] = c
        leaves, tree = tree_flatten(tuple(args_and_consts[:n]))
        if tree != in_tree:
            raise TypeError(f"closure_convert: the converted function takes arguments of the "
                            f"structure {in_tree}, got {tree}")
        return tree_unflatten(out_tree, eval_ir(closed.ir, leaves, values))
    converted.__name__ = getattr(fun, "__name__", "converted")
    return converted, [consts[i] for i in hoisted]


def closure_convert(fun, *example_args):
    """``(converted, consts)``: ``converted(*args, *consts)`` computes ``fun(*args)``, the
    floating-point traced values ``fun`` closes over (those a transform may differentiate)
    passed as the explicit ``consts``; for use in ``custom_vjp``/``custom_jvp`` rules, as
    JAX's ``jax.closure_convert``. ``fun`` is traced on the shapes and dtypes of
    ``example_args``."""
    return _converted(fun, example_args,
                      lambda c: isinstance(c, Tracer) and dtypes.is_inexact(c.dtype))


def custom_gradient(fun):
    """``fun(*args) -> (out, vjp)`` as a function with that VJP, as JAX's
    ``jax.custom_gradient``: ``vjp(ct_out)`` returns the input cotangents (a tuple, or one
    value for a one-argument function) and may close over ``fun``'s intermediates."""
    @custom_vjp
    def wrapped(*args):
        return _pair(fun(*args))[0]

    def fwd(*args):
        out, rule = _pair(fun(*args))
        leaves, tree = tree_flatten(out)
        cts = tree_unflatten(tree, [ShapeDtypeStruct(x.shape, x.dtype) for x in leaves])
        converted, consts = _converted(rule, (cts,), lambda c: isinstance(c, Tracer))
        return out, _Rule(converted, consts)

    def bwd(rule, ct):
        in_cts = rule.converted(ct, *rule.consts)
        return in_cts if isinstance(in_cts, tuple) else (in_cts,)

    wrapped.defvjp(fwd, bwd)
    functools.update_wrapper(wrapped, fun)
    return wrapped


@register_pytree_node_class
class _Rule:
    """A closure-converted VJP rule as custom_vjp residuals: its consts are the leaves, the
    converted function is static."""

    def __init__(self, converted, consts):
        self.converted, self.consts = converted, list(consts)

    def tree_flatten(self):
        return self.consts, self.converted

    @classmethod
    def tree_unflatten(cls, converted, consts):
        return cls(converted, consts)


def _pair(result):
    if not (isinstance(result, (tuple, list)) and len(result) == 2 and callable(result[1])):
        raise CustomRuleError("a custom_gradient function must return a pair (output, vjp "
                              "function)", user_frame(3))
    return result


_add_examples(globals(), """
closure_convert:
    >>> def f(x):
    ...     g, consts = pto.closure_convert(lambda y: y * x, 1.0)
    ...     return g(2.0, *consts)
    >>> pto.grad(f)(3.0)
    Array(2., dtype=float32, weak_type=True)
custom_gradient:
    >>> @pto.custom_gradient
    ... def clipped_log(x):
    ...     return pnp.log(x), lambda g: g * pnp.minimum(1.0 / x, 10.0)
    >>> pto.grad(clipped_log)(0.01)
    Array(10., dtype=float32, weak_type=True)
""")
