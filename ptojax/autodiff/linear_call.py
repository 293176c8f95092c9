"""``linear_call``: a function linear in some arguments, with its transpose given by the user
(JAX's ``custom_derivatives.linear_call``). ``lax.custom_linear_solve`` uses it for its tangent
solve, so that forward mode evaluates the solver and reverse mode the transposed solver.

``linear_call_p(residuals..., linear...)`` has params ``body`` (residuals + linear -> outputs),
``transpose_body`` (residuals + output cotangents -> linear cotangents; None when there is no
transpose) and ``num_res``. Both bodies are closed and const-free (their consts are leading
residuals). Facts:
- JVP: linear in the linear operands, so the tangent is the same call on their tangents; the
  residuals must not carry tangents (as in JAX).
- transpose: the call with the two bodies swapped, on the output cotangents.
- vmap: linear operands are batched (broadcast if needed) at 0 and both bodies vmapped with
  outputs at 0, so that each stays the other's transpose.
- host and pto.shard: the body is inlined (the transpose is only read by autodiff).
"""
from __future__ import annotations

from ptojax.batching.vmap import vmap_ir
from ptojax.errors import GradError
from ptojax.eval import axis_env
from ptojax.eval.interpreter import eval_ir
from ptojax.eval.leaves import leaf_type
from ptojax.ir.core import consts_as_args
from ptojax.ops import sharding_rules as sr
from ptojax.ops.broadcast import broadcast_in_dim, instantiate, to_front
from ptojax.ops.shape import move_axis
from ptojax.public import add_examples as _add_examples
from ptojax.ops.tangents import Zero, is_undefined, is_zero
from ptojax.source_info import user_frame
from ptojax.trace import Primitive, trace_flat
from ptojax.pytree import tree_flatten, tree_unflatten
from ptojax.autodiff.calls import (BODY_NOT_TILED, _call_abstract, _call_cost, _call_impl,
                                   _call_reference, _inline_local)

linear_call_p = Primitive("linear_call", _call_abstract, _call_impl, multiple_results=True,
                          call_like=True, linear=True)


def linear_call(fun, fun_transpose, residual_args, linear_args):
    """``fun(residual_args, linear_args)``, where ``fun`` is linear in ``linear_args`` and
    ``fun_transpose(residual_args, out_cotangent)`` is its transpose (None: reverse mode is an
    error, forward mode works)."""
    res, res_tree = tree_flatten(residual_args)
    lin, lin_tree = tree_flatten(linear_args)
    res_types = [leaf_type(x) for x in res]
    n_res = len(res)
    out_tree = []

    def flat_fun(*args):
        out = fun(tree_unflatten(res_tree, args[:n_res]), tree_unflatten(lin_tree, args[n_res:]))
        leaves, tree = tree_flatten(out)
        out_tree[:] = [tree]
        return leaves

    body, body_consts = consts_as_args(
        trace_flat(flat_fun, [*res_types, *(leaf_type(x) for x in lin)], "linear_call"))

    def flat_transpose(*args):
        cts = fun_transpose(tree_unflatten(res_tree, args[:n_res]),
                            tree_unflatten(out_tree[0], args[n_res:]))
        leaves, tree = tree_flatten(cts)
        if tree != lin_tree:
            raise GradError(f"linear_call: the transpose must return cotangents structured as "
                            f"the linear arguments ({lin_tree}), got {tree}", user_frame())
        return leaves

    if fun_transpose is None:
        t_body, t_consts = None, ()
    else:
        out_types = [t.strip_weak() for t in body.out_types]
        t_body, t_consts = consts_as_args(
            trace_flat(flat_transpose, [*res_types, *out_types], "linear_call transpose"))
    body, t_body, consts = _joined(body, body_consts, t_body, t_consts)
    outs = linear_call_p.bind(*consts, *res, *lin, body=body, transpose_body=t_body,
                              num_res=len(consts) + n_res)
    return tree_unflatten(out_tree[0], outs)


def _joined(body, body_consts, t_body, t_consts):
    """Both bodies over one list of leading consts (``body_consts + t_consts``): (body,
    transpose body, consts)."""
    if t_consts:
        body = _ignoring(body, len(body_consts), [leaf_type(c) for c in t_consts])
    if t_body is not None and body_consts:
        t_body = _ignoring(t_body, 0, [leaf_type(c) for c in body_consts])
    return body, t_body, (*body_consts, *t_consts)


def _ignoring(closed, at, types):
    """``closed`` taking extra operands of ``types`` at position ``at``, unused."""
    in_types = [*closed.in_types[:at], *types, *closed.in_types[at:]]

    def run(*args):
        return eval_ir(closed, [*args[:at], *args[at + len(types):]])
    return consts_as_args(trace_flat(run, in_types, "linear_call"))[0]


def _jvp(primals, tangents, *, body, transpose_body, num_res):
    if any(not is_zero(t) for t in tangents[:num_res]):
        raise GradError("linear_call: differentiating with respect to a residual argument is "
                        "not supported (the function is linear in its linear arguments only). "
                        "For custom_linear_solve: second derivatives with respect to values "
                        "the solve closes over (e.g. the matrix) are not available",
                        user_frame())
    outs = linear_call_p.bind(*primals, body=body, transpose_body=transpose_body,
                              num_res=num_res)
    lin_tangents = [instantiate(t, p_type) for t, p_type in
                    zip(tangents[num_res:], body.in_types[num_res:])]
    if all(type(t) is Zero for t in tangents[num_res:]):
        return outs, [Zero(t) for t in body.out_types]
    touts = linear_call_p.bind(*primals[:num_res], *lin_tangents, body=body,
                               transpose_body=transpose_body, num_res=num_res)
    return outs, touts


def _transpose(cts, *args, body, transpose_body, num_res):
    if transpose_body is None:
        raise GradError("transpose_solve required for backwards mode automatic "
                        "differentiation of custom_linear_solve (or a transpose for "
                        "linear_call)", user_frame())
    if any(is_undefined(a) for a in args[:num_res]):
        raise GradError("linear_call: a residual argument is being transposed; only the "
                        "linear arguments may be", user_frame())
    cts = [instantiate(c, t) for c, t in zip(cts, body.out_types)]
    lin_cts = linear_call_p.bind(*args[:num_res], *cts, body=transpose_body,
                                 transpose_body=body, num_res=num_res)
    return [None] * num_res + list(lin_cts)


def _batch(args, dims, *, body, transpose_body, num_res):
    size = axis_env.batch_axis_size()
    args = [a if d is None else move_axis(a, d, 0) for a, d in zip(args, dims)]
    res_dims = [None if d is None else 0 for d in dims[:num_res]]
    lin = [a if d is not None else broadcast_in_dim(a, (size, *a.shape),
                                                    tuple(range(1, a.ndim + 1)))
           for a, d in zip(args[num_res:], dims[num_res:])]
    body_b, consts = _batched(body, [*res_dims, *[0] * len(lin)])
    t_body_b, t_consts = (None, ()) if transpose_body is None else _batched(
        transpose_body, [*res_dims, *[0] * len(body.out_types)])
    body_b, t_body_b, consts = _joined(body_b, consts, t_body_b, t_consts)
    outs = linear_call_p.bind(*consts, *args[:num_res], *lin, body=body_b,
                              transpose_body=t_body_b, num_res=len(consts) + num_res)
    return outs, [0] * len(outs)


def _batched(closed, dims):
    """``closed`` vmapped at ``dims``, every output at 0: (const-free body, the consts it
    takes as leading operands)."""
    batched, out_dims = vmap_ir(closed, dims, axis_env.batch_axis_size(),
                                axis_env.batch_axis_name())

    def front(*args):
        return [to_front(o, d) for o, d in zip(eval_ir(batched, args), out_dims)]

    return consts_as_args(trace_flat(front, batched.in_types, "vmap"))


linear_call_p.define(
    jvp=_jvp, transpose=_transpose, batch=_batch,
    shard=sr.ShardRule(None, local=_inline_local), tile=BODY_NOT_TILED, cost=_call_cost,
    reference=_call_reference)


_add_examples(globals(), """
linear_call:
    >>> def scale(x):     # 2 * x, with its transpose given
    ...     return pto.custom_derivatives.linear_call(
    ...         lambda r, l: r * l, lambda r, ct: r * ct, 2.0, x)
    >>> scale(3.0), pto.grad(scale)(3.0)
    (Array(6., dtype=float32, weak_type=True), Array(2., dtype=float32, weak_type=True))
""")
