"""``linear_transpose``: the transpose of a linear function, found by tracing it once on
abstract inputs and running the backward pass of reverse mode over its IR (every equation is
linear, so nothing is evaluated at a point; a non-linear operation has no transpose rule and
raises)."""
from __future__ import annotations

from ptojax import dtypes
from ptojax.errors import GradError
from ptojax.eval.interpreter import eval_ir
from ptojax.eval.leaves import leaf_type
from ptojax.ops.broadcast import zeros
from ptojax.autodiff.api import trace_pytree_fn
from ptojax.autodiff.transpose import transpose_ir
from ptojax.source_info import user_frame
from ptojax.pytree import tree_flatten
from ptojax.public import add_examples as _add_examples


def _check_inexact(types, what):
    bad = [str(t) for t in types if not dtypes.is_inexact(t.dtype)]
    if bad:
        raise TypeError(f"linear_transpose only supports [float or complex] -> [float or "
                        f"complex], and integer -> integer functions, but got {what} of "
                        f"types {bad}")


def linear_transpose(fun, *primals, reduce_axes=()):
    """``transpose_fun(out_cotangent) -> tuple of input cotangents`` for the linear ``fun``,
    as JAX's ``jax.linear_transpose``: ``primals`` (arrays or ``ShapeDtypeStruct``) give only
    the input shapes and dtypes."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    flat, in_tree = tree_flatten(primals)
    in_types = [leaf_type(x) for x in flat]
    _check_inexact(in_types, "inputs")
    closed, out_tree, _ = trace_pytree_fn(fun, flat, in_tree,
                                          name=getattr(fun, "__name__", "fn"))
    _check_inexact(closed.out_types, "outputs")
    transposed, nonzeros = transpose_ir(closed.ir, [True] * len(flat), consts=closed.consts)
    out_types = [t.strip_weak() for t in closed.out_types]

    def transpose_fun(out_cotangent):
        cts, tree = tree_flatten(out_cotangent)
        if tree != out_tree:
            raise TypeError(f"cotangent tree does not match function output, expected "
                            f"{out_tree} but got {tree}")
        for c, t in zip(cts, out_types):
            got = leaf_type(c)
            if tuple(got.shape) != tuple(t.shape) or got.dtype != t.dtype:
                raise GradError(f"linear_transpose: cotangent of type {got} for an output "
                                f"of type {t}", user_frame(2))
        results = iter(eval_ir(transposed, cts))
        in_cts = [next(results) if nz else zeros(t.strip_weak())
                  for nz, t in zip(nonzeros, in_types)]
        return tuple(in_tree.unflatten(in_cts))
    return transpose_fun


_add_examples(globals(), """
linear_transpose:
    >>> f_t = pto.linear_transpose(lambda x: 2.0 * x[::-1], pto.ShapeDtypeStruct((3,), "float32"))
    >>> f_t(pnp.array([1.0, 2.0, 3.0]))
    (Array([6., 4., 2.], dtype=float32),)
""")
