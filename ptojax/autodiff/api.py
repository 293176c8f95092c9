"""Public autodiff API: ``jvp``, ``linearize``, ``vjp``, ``grad``, ``value_and_grad``,
``jacfwd``, ``jacrev``, ``hessian``.

Each is a thin pytree wrapper around the flat IR → IR core: trace the function to IR, rewrite
it (``jvp_ir``; for reverse mode then ``partial_eval`` and ``transpose_ir``), evaluate the
result — eagerly, or into the enclosing trace, so ``make_ir(grad(f))`` shows one plain IR with
forward and backward equations that can be jitted, vmapped and differentiated again.

Called outside jit on concrete arguments, the function is traced eagerly (``trace.trace_flat``
with the arguments' values): Python control flow on primal values works, as in JAX, and the
IR is specialized to the path taken. Nothing here caches a traced IR, so every call traces
its own path.
"""
from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np

from ptojax import dtypes
from ptojax.errors import GradError
from ptojax.ir.core import IR, ClosedIR
from ptojax.eval.leaves import leaf_type
from ptojax.autodiff import calls
from ptojax.eval.array import Array
from ptojax.eval.key_array import PRNGKeyArray
from ptojax.eval.interpreter import eval_ir
from ptojax.source_info import user_frame
from ptojax.trace import Tracer, arg_states, trace_flat, tracing
from ptojax.eval import transfers
from ptojax.batching.api import vmap
from ptojax.ops.complex_parts import real
from ptojax.ops.convert import convert_element_type
from ptojax.ops.shape import reshape, transpose
from ptojax.ops.slicing import slice_in_dim
from ptojax.ops.broadcast import zeros
from ptojax.ops.tangents import Zero, differentiable
from ptojax.autodiff.jvp import jvp_eval, jvp_ir
from ptojax.optimize import dce
from ptojax.autodiff.partial_eval import partial_eval
from ptojax.autodiff.transpose import transpose_ir
from ptojax.pytree import tree_flatten, tree_structure
from ptojax.public import add_examples as _add_examples


# flat core -----------------------------------------------------------------------------------
def trace_pytree_fn(fn, flat_args, in_tree, has_aux=False, name=None, differentiated=None):
    """Trace ``fn(*in_tree.unflatten(flat_args))``: (ClosedIR, out_tree, aux_tree).

    With ``has_aux`` the function returns ``(out, aux)``; the IR's outputs are out's leaves
    followed by aux's leaves. ``differentiated`` (a flag per leaf: does the transform
    differentiate it) makes the trace eager: outside jit, Python may use the leaves' values
    (``trace.trace_flat``)."""
    trees = {}

    def flat_fn(*leaves):
        result = fn(*in_tree.unflatten(leaves))
        if has_aux:
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise GradError("with has_aux=True the function must return a pair "
                                "(output, auxiliary data)", user_frame(3))
            result, aux = result
            aux_leaves, trees["aux"] = tree_flatten(aux)
        else:
            aux_leaves = []
        out_leaves, trees["out"] = tree_flatten(result)
        return [*out_leaves, *aux_leaves]

    if transfers.guarded() and not tracing():   # jax_transfer_guard: host arguments
        transfers.check_host_leaves(flat_args)
    types = [leaf_type(x) for x in flat_args]
    sources = states = None
    if differentiated is not None:
        sources, states = flat_args, arg_states(flat_args, differentiated)
    closed = trace_flat(flat_fn, types, name or getattr(fn, "__name__", "fn"), sources, states)
    return closed, trees["out"], trees.get("aux")


def jvp_of(fn, primals, tangents):
    """Evaluate ``fn``'s JVP on flat lists (tangents may be ``Zero``): (outs, tangent outs).
    Used by rules that differentiate a decomposition of their primitive."""
    closed = trace_flat(lambda *xs: [fn(*xs)], [leaf_type(x) for x in primals])
    return jvp_eval(closed, list(primals), list(tangents))


def vjp_flat(closed: ClosedIR, primals, n_diff_outs=None):
    """(differentiated output values, other output values, backward function) of ``closed``
    at ``primals``.

    Only the first ``n_diff_outs`` outputs are differentiated (the others, e.g. auxiliary
    data, are just computed). The backward function maps their cotangents (None or ``Zero``
    for a zero cotangent) to the cotangents of every input (zeros for inputs with nothing to
    differentiate)."""
    in_types = closed.in_types
    n_outs = len(closed.outvars)
    n_diff_outs = n_outs if n_diff_outs is None else n_diff_outs
    nonzeros = [differentiable(t) for t in in_types]
    jvp_closed, out_nz = _jvp_of_first_outputs(closed, nonzeros, n_diff_outs, primals)
    n_tangents = sum(nonzeros)
    known, linear, n_res, out_unknown = partial_eval(
        jvp_closed, [False] * len(in_types) + [True] * n_tangents)
    values = eval_ir(known, primals)
    outs, residuals = values[:n_outs], values[len(values) - n_res:]
    # which outputs feed the linear IR: nonzero tangent outputs that depend on a tangent
    tangent_unknown = iter(out_unknown[n_outs:])
    feeds = [nz and next(tangent_unknown) for nz in out_nz]
    transposed, ct_nonzeros = transpose_ir(linear, [False] * n_res + [True] * n_tangents,
                                           args=residuals)
    transposed = ClosedIR(dce(transposed.ir), transposed.consts)
    diff_types = closed.out_types[:n_diff_outs]

    def backward(cts):
        linear_cts = [c if c is not None and not isinstance(c, Zero)
                      else zeros(t.strip_weak()) for c, t, f in zip(cts, diff_types, feeds) if f]
        results = iter(eval_ir(transposed, [*residuals, *linear_cts]))
        tangent_cts = iter([next(results) if nz else None for nz in ct_nonzeros])
        out = []
        for t, nz in zip(in_types, nonzeros):
            ct = next(tangent_cts) if nz else None
            out.append(_weak_like(ct, t, real_outputs) if ct is not None
                       else _zero_cotangent(t))
        return out

    real_outputs = any(not dtypes.is_complex(t.dtype) for t, f in zip(diff_types, feeds) if f)

    return outs[:n_diff_outs], outs[n_diff_outs:], backward


def residuals_of(closed: ClosedIR, primals):
    """(the known IR ``vjp`` evaluates on the forward pass, the residual variables among its
    outputs: the values the backward pass reads), for ``ad_checkpoint.saved_residuals``."""
    nonzeros = [differentiable(t) for t in closed.in_types]
    jvp_closed, _ = _jvp_of_first_outputs(closed, nonzeros, len(closed.outvars), primals)
    known, _, n_res, _ = partial_eval(jvp_closed, [False] * len(nonzeros) + [True] * sum(nonzeros))
    outvars = known.ir.outvars
    return known, list(outvars[len(outvars) - n_res:])


def _jvp_of_first_outputs(closed, nonzeros, n_diff_outs, primals):
    """``jvp_ir`` keeping every primal output but only the tangents of the first
    ``n_diff_outs`` outputs (so auxiliary outputs are never transposed)."""
    jvp_closed, out_nz = jvp_ir(closed, nonzeros, primals)
    n_outs = len(closed.outvars)
    n_kept = sum(out_nz[:n_diff_outs])
    ir = jvp_closed.ir
    pruned = dce(IR(ir.constvars, ir.invars, ir.eqns, ir.outvars[:n_outs + n_kept]))
    return ClosedIR(pruned, jvp_closed.consts), out_nz[:n_diff_outs]


def _weak_like(ct, aval, real_outputs=False):
    """A cotangent is weakly typed when its primal is (as in JAX: ``grad(f)(3.0)`` stays a
    weak float), except the cotangent of a complex primal when some differentiated output is
    real: it reaches the primal through the transpose of ``real``/``imag``/``abs``, which
    JAX builds with a strong zero (``grad(abs)(1 + 2j)`` is a strong complex64)."""
    if not aval.weak_type or (real_outputs and dtypes.is_complex(aval.dtype)):
        return ct
    return convert_element_type(ct, aval.dtype, weak_type=True)


def _zero_cotangent(aval):
    if differentiable(aval):
        return _weak_like(zeros(aval.strip_weak()), aval)
    return np.zeros(aval.shape, dtypes.float0)


# public API ----------------------------------------------------------------------------------
def jvp(fn: Callable, primals, tangents, has_aux: bool = False):
    """``(fn(*primals), J·tangents)``; with ``has_aux``, ``(out, tangent_out, aux)``."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise GradError("jvp takes primals and tangents as tuples (or lists) of arguments",
                        user_frame(2))
    flat_p, in_tree = tree_flatten(tuple(primals))
    flat_t, t_tree = tree_flatten(tuple(tangents))
    if in_tree != t_tree:
        raise GradError(f"jvp: tangents have structure {t_tree} but primals have {in_tree}",
                        user_frame(2))
    for i, (p, t) in enumerate(zip(flat_p, flat_t)):
        _check_tangent(p, t, i)
    nonzeros = _differentiable(flat_p)
    closed, out_tree, aux_tree = trace_pytree_fn(fn, flat_p, in_tree, has_aux,
                                                 differentiated=nonzeros)
    jvp_closed, out_nz = jvp_ir(closed, nonzeros, flat_p)
    _forbid_custom_vjp(jvp_closed)
    results = eval_ir(jvp_closed, [*flat_p, *[t for t, nz in zip(flat_t, nonzeros) if nz]])
    n = len(closed.outvars)
    outs, touts = results[:n], iter(results[n:])
    tangent_outs = [next(touts) if nz else _zero_cotangent(v.type)
                    for v, nz in zip(closed.outvars, out_nz)]
    n_main = out_tree.num_leaves
    out = out_tree.unflatten(outs[:n_main])
    tout = out_tree.unflatten(tangent_outs[:n_main])
    if has_aux:
        return out, tout, aux_tree.unflatten(outs[n_main:])
    return out, tout


def _forbid_custom_vjp(jvp_closed):
    """Forward mode cannot go through a custom_vjp function (it defines reverse mode only):
    say so at the user's call of that function."""
    for eqn in jvp_closed.eqns:
        if eqn.prim is calls.custom_lin_p:
            raise GradError("forward-mode differentiation (jvp, jacfwd, hessian) of a "
                                   "custom_vjp function is not supported: it defines only "
                                   "reverse mode. Use custom_jvp, or reverse mode (grad, vjp, "
                                   "jacrev)", eqn.source)


def _shape_and_dtype(x):
    """(shape, dtype) of a tangent or cotangent, which may be a float0 numpy array."""
    if getattr(x, "dtype", None) == dtypes.float0:
        return tuple(np.shape(x)), dtypes.float0
    t = leaf_type(x)
    return tuple(t.shape), t.dtype


def _check_tangent(p, t, i):
    """A tangent matches its primal's shape and dtype; integer and bool primals take float0
    tangents (as in JAX)."""
    pt = leaf_type(p)
    t_shape, t_dtype = _shape_and_dtype(t)
    if tuple(pt.shape) != t_shape:
        raise GradError(f"jvp: tangent {i} has shape {t_shape} but its primal has shape "
                        f"{tuple(pt.shape)}", user_frame(3))
    if differentiable(pt) and t_dtype != pt.dtype:
        raise GradError(f"jvp: tangent {i} has dtype {t_dtype} but its primal has dtype "
                        f"{pt.dtype}; tangents must match their primal's dtype",
                        user_frame(3))
    if not differentiable(pt) and t_dtype != dtypes.float0:
        raise GradError(f"jvp: tangent {i} has dtype {t_dtype} but its primal is {pt}: "
                        f"integer and bool primals take float0 tangents "
                        f"(np.zeros(shape, pto.dtypes.float0))", user_frame(3))


def linearize(fn: Callable, *primals):
    """``(fn(*primals), f_jvp)`` where ``f_jvp(*tangents)`` evaluates the linearized function
    without recomputing the primal (only the linear IR runs)."""
    flat_p, in_tree = tree_flatten(tuple(primals))
    nonzeros = _differentiable(flat_p)
    closed, out_tree, _ = trace_pytree_fn(fn, flat_p, in_tree, differentiated=nonzeros)
    jvp_closed, out_nz = jvp_ir(closed, nonzeros, flat_p)
    known, linear, n_res, out_unknown = partial_eval(
        jvp_closed, [False] * len(flat_p) + [True] * sum(nonzeros))
    values = eval_ir(known, flat_p)
    n = len(closed.outvars)
    outs, residuals = values[:n], values[len(values) - n_res:]

    def f_jvp(*tangents):
        flat_t, t_tree = tree_flatten(tuple(tangents))
        if t_tree != in_tree:
            raise GradError(f"linearized function: tangents have structure {t_tree}, "
                            f"expected {in_tree}", user_frame(2))
        lin = iter(eval_ir(linear, [*residuals,
                                    *[t for t, nz in zip(flat_t, nonzeros) if nz]]))
        unknown = iter(out_unknown[n:])
        touts = []
        for v, nz in zip(closed.outvars, out_nz):
            touts.append(next(lin) if nz and next(unknown) else _zero_cotangent(v.type))
        return out_tree.unflatten(touts)

    return out_tree.unflatten(outs), f_jvp


def vjp(fn: Callable, *primals, has_aux: bool = False):
    """``(fn(*primals), vjp_fn)`` (plus ``aux`` with ``has_aux``); ``vjp_fn(ct)`` returns a
    tuple with one cotangent per primal."""
    flat_p, in_tree = tree_flatten(primals)
    closed, out_tree, aux_tree = trace_pytree_fn(fn, flat_p, in_tree, has_aux,
                                                 differentiated=_differentiable(flat_p))
    n_main = out_tree.num_leaves
    outs, aux, backward = vjp_flat(closed, flat_p, n_main)
    out_types = closed.out_types[:n_main]

    def vjp_fn(ct):
        flat_ct, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise GradError(f"vjp function: cotangent has structure {ct_tree} but the output "
                            f"has {out_tree}", user_frame(2))
        for i, (c, t) in enumerate(zip(flat_ct, out_types)):
            shape = _shape_and_dtype(c)[0]
            if shape != tuple(t.shape):
                raise GradError(f"vjp function: cotangent {i} has shape {shape} but the "
                                f"output has shape {tuple(t.shape)}", user_frame(2))
        cts = [_as_ct(c, t) for c, t in zip(flat_ct, out_types)]
        return in_tree.unflatten(backward(cts))

    out = out_tree.unflatten(outs)
    if has_aux:
        return out, vjp_fn, aux_tree.unflatten(aux)
    return out, vjp_fn


def _differentiable(leaves) -> list:
    return [differentiable(leaf_type(x)) for x in leaves]


def _as_ct(c, out_type):
    if not differentiable(out_type):
        return None
    if type(c) is not Array and type(c) is not Tracer:
        c = Array(np.asarray(c, out_type.dtype))
    return convert_element_type(c, out_type.dtype)


def _argnums_tuple(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def value_and_grad(fn: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False):
    """A function returning ``(fn(*args), gradient of fn w.r.t. args[argnums])``.

    ``fn`` returns a real scalar; a real function of complex inputs gets the conjugate of the
    gradient used for descent, as in JAX. With ``holomorphic=True``, ``fn`` maps complex
    inputs to a complex scalar and the result is its complex derivative."""
    single = isinstance(argnums, int)
    nums = _argnums_tuple(argnums)

    @functools.wraps(fn)
    def value_and_grad_fn(*args, **kwargs):
        if max(nums) >= len(args):
            raise GradError(f"grad: argnums {argnums} refers past the {len(args)} positional "
                            f"arguments given", user_frame(2))
        diff = tuple(args[i] for i in nums)
        _check_inputs(diff, nums, allow_int, holomorphic)

        def partial_fn(*d):
            full = list(args)
            for i, v in zip(nums, d):
                full[i] = v
            return fn(*full, **kwargs)

        flat_p, in_tree = tree_flatten(diff)
        closed, out_tree, aux_tree = trace_pytree_fn(partial_fn, flat_p, in_tree, has_aux,
                                                     getattr(fn, "__name__", "fn"),
                                                     _differentiable(flat_p))
        _check_scalar_output(closed, out_tree, getattr(fn, "__name__", "fn"), holomorphic)
        out_type = closed.out_types[0]
        outs, aux, backward = vjp_flat(closed, flat_p, 1)
        one = Array(np.ones((), out_type.dtype))
        grads = in_tree.unflatten(backward([one]))
        grads = grads[0] if single else grads
        value = out_tree.unflatten(outs)
        if has_aux:
            return (value, aux_tree.unflatten(aux)), grads
        return value, grads

    return value_and_grad_fn


def _check_scalar_output(closed, out_tree, name, holomorphic=False):
    """grad needs one real scalar output (complex with ``holomorphic``); otherwise say what
    came out and what to use."""
    if out_tree.num_leaves != 1:
        raise GradError(f"grad requires `{name}` to return a single scalar, but it returned a "
                        f"pytree with {out_tree.num_leaves} leaves ({out_tree}); use pto.vjp "
                        f"for several outputs, or has_aux=True to return extra data",
                        user_frame(3))
    t = closed.out_types[0]
    if t.shape != ():
        raise GradError(f"grad requires `{name}` to return a scalar, but its output has shape "
                        f"{tuple(t.shape)} (dtype {t.dtype}); use pto.vjp for the gradient of "
                        f"a weighted sum of the outputs, or pto.jacrev for the Jacobian",
                        user_frame(3))
    if holomorphic and not dtypes.is_complex(t.dtype):
        raise GradError(f"grad with holomorphic=True requires `{name}` to return a complex "
                        f"scalar, but its output has dtype {t.dtype}", user_frame(3))
    if dtypes.is_complex(t.dtype) and not holomorphic:
        raise GradError(f"grad requires `{name}` to return a real-valued scalar, but its "
                        f"output has dtype {t.dtype}; for holomorphic differentiation pass "
                        f"holomorphic=True, else differentiate a real part (pnp.real, "
                        f"pnp.abs)", user_frame(3))
    if not dtypes.is_inexact(t.dtype):
        raise GradError(f"grad requires `{name}` to return a floating-point scalar, but its "
                        f"output has dtype {t.dtype}", user_frame(3))


def _check_inputs(diff, nums, allow_int, holomorphic=False):
    for argnum, arg in zip(nums, diff):
        for leaf in tree_flatten(arg, lambda x: type(x) is PRNGKeyArray)[0]:
            if type(leaf) is PRNGKeyArray:
                if allow_int:
                    continue
                raise GradError(
                    f"grad requires real- or complex-valued inputs, but argument {argnum} has "
                    f"a key of dtype {leaf.dtype}; leave it out of argnums, or pass "
                    f"allow_int=True to get a float0 zero gradient", user_frame(4))
            t = leaf_type(leaf)
            if holomorphic and not dtypes.is_complex(t.dtype):
                raise GradError(f"grad with holomorphic=True requires complex inputs, but "
                                f"argument {argnum} has a leaf of type {t}; convert it with "
                                f".astype(pnp.complex64)", user_frame(4))
            if not dtypes.is_inexact(t.dtype) and not allow_int:
                raise GradError(
                    f"grad requires floating-point inputs, but argument {argnum} has a leaf "
                    f"of type {t}; convert it with .astype(pnp.float32), leave it out of "
                    f"argnums, or pass allow_int=True to get float0 zero gradients",
                    user_frame(4))


def grad(fn: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False):
    """The gradient of scalar-valued ``fn`` w.r.t. ``args[argnums]`` (same structure); see
    ``value_and_grad`` for complex inputs and ``holomorphic``."""
    vg = value_and_grad(fn, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fn)
    def grad_fn(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return grad_fn


# Jacobians, on top of vmap -------------------------------------------------------------------
def _std_basis(types):
    """One batch of tangents per leaf: the rows of the identity over all leaves' elements."""
    sizes = [math.prod(t.shape) for t in types]
    total = sum(sizes)
    basis, start = [], 0
    for t, n in zip(types, sizes):
        rows = np.zeros((total, n), t.dtype)
        rows[start:start + n] = np.eye(n, dtype=t.dtype)
        basis.append(Array(rows.reshape((total, *t.shape))))
        start += n
    return basis, sizes


def _split_jacobian(stacked, sizes, row_types, col_shape):
    """Split a (sum(sizes), *col_shape) batch into one (*row_shape, *col_shape) per row leaf,
    with the row dimensions last (JAX's layout: output dims then input dims)."""
    out, start = [], 0
    for n, t in zip(sizes, row_types):
        block = slice_in_dim(stacked, start, start + n, 1, 0)
        block = reshape(block, (*t.shape, *col_shape))
        out.append(block)
        start += n
    return out


def _kind_check(who, what, t, holomorphic, real_only):
    """The dtype rule of JAX's Jacobians for one input or output leaf: complex with
    ``holomorphic``, else floating-point (or complex, unless ``real_only``)."""
    if holomorphic and not dtypes.is_complex(t.dtype):
        return f"{who} with holomorphic=True requires complex {what}s, but got {t}"
    if holomorphic or dtypes.is_float(t.dtype):
        return None
    if dtypes.is_complex(t.dtype) and not real_only:
        return None
    kind = "real-valued" if real_only else "floating-point or complex"
    return f"{who} requires {kind} {what}s, but got {t}" + (
        "; for holomorphic differentiation pass holomorphic=True" if
        dtypes.is_complex(t.dtype) else "")


def _check_outputs(who, types, holomorphic, real_only):
    for t in types:
        reason = _kind_check(who, "output", t, holomorphic, real_only)
        if reason:
            raise GradError(reason, user_frame(3))


def _diff_args(fn, args, argnums, who, holomorphic=False, real_only=False):
    nums = _argnums_tuple(argnums)
    diff = tuple(args[i] for i in nums)
    for argnum, arg in zip(nums, diff):
        for leaf in tree_flatten(arg)[0]:
            reason = _kind_check(who, "input", leaf_type(leaf), holomorphic, real_only)
            if reason:
                raise GradError(f"{reason} (argument {argnum})", user_frame(3))

    def partial_fn(*d):
        full = list(args)
        for i, v in zip(nums, d):
            full[i] = v
        return fn(*full)
    return partial_fn, diff


def _like(block, example):
    """A Jacobian block with the dtype and weak type of its ``example`` leaf (the input for
    ``jacrev``, the output for ``jacfwd``), as JAX's: a complex block of a real leaf keeps
    its real part."""
    if dtypes.is_complex(block.dtype) and not dtypes.is_complex(example.dtype):
        block = real(block)
    if block.dtype == example.dtype and block.weak_type == example.weak_type:
        return block
    return convert_element_type(block, example.dtype, weak_type=example.weak_type)


def _transpose_leading(block, n_lead, n_rest):
    """Move the first ``n_lead`` dims after the following ``n_rest`` dims."""
    return transpose(block, (*range(n_lead, n_lead + n_rest), *range(n_lead)))


def jacfwd(fn: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Jacobian of ``fn`` by forward mode: one batched JVP (vmap over the input basis).
    Inputs are real, or complex with ``holomorphic=True`` (as JAX)."""
    single = isinstance(argnums, int)

    @functools.wraps(fn)
    def jac_fn(*args):
        partial_fn, diff = _diff_args(fn, args, argnums, "jacfwd", holomorphic,
                                      real_only=True)
        flat_in, in_tree = tree_flatten(diff)
        in_types = [leaf_type(x) for x in flat_in]
        basis, sizes = _std_basis(in_types)

        def push(*tangents):
            return jvp(lambda *d: partial_fn(*in_tree.unflatten(d)), flat_in, tangents,
                       has_aux=has_aux)

        result = vmap(push, out_axes=(None, 0, None) if has_aux else (None, 0))(*basis)
        out, tout = result[0], result[1]
        flat_out, out_tree = tree_flatten(out)
        _check_outputs("jacfwd", [leaf_type(o) for o in flat_out], holomorphic, False)
        flat_t = tree_flatten(tout)[0]
        jac = []
        for o, t in zip(flat_out, flat_t):
            blocks = _split_jacobian(t, sizes, in_types, tuple(o.shape))
            per_in = [_like(_transpose_leading(b, len(it.shape), len(o.shape)), leaf_type(o))
                      for b, it in zip(blocks, in_types)]
            tree = in_tree.unflatten(per_in)
            jac.append(tree[0] if single else tree)
        jac = out_tree.unflatten(jac)
        return (jac, result[2]) if has_aux else jac

    return jac_fn


def jacrev(fn: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Jacobian of ``fn`` by reverse mode: one batched VJP (vmap over the output basis).
    Outputs are real, or complex with ``holomorphic=True`` (as JAX)."""
    single = isinstance(argnums, int)

    @functools.wraps(fn)
    def jac_fn(*args):
        partial_fn, diff = _diff_args(fn, args, argnums, "jacrev", holomorphic)
        flat_in, in_tree = tree_flatten(diff)
        closed, out_tree, aux_tree = trace_pytree_fn(
            lambda *d: partial_fn(*in_tree.unflatten(d)), flat_in, _flat_tree(flat_in),
            has_aux, differentiated=_differentiable(flat_in))
        n_main = out_tree.num_leaves
        _check_outputs("jacrev", closed.out_types[:n_main], holomorphic, real_only=True)
        outs, aux, backward = vjp_flat(closed, flat_in, n_main)
        out_types = [t for t in closed.out_types[:n_main]]
        basis, sizes = _std_basis([t.strip_weak() for t in out_types])
        cts = vmap(lambda *c: backward(list(c)))(*basis)
        in_types = [leaf_type(x) for x in flat_in]
        per_out = [[] for _ in out_types]
        for ct, it in zip(cts, in_types):
            for k, block in enumerate(_split_jacobian(ct, sizes, out_types, tuple(it.shape))):
                per_out[k].append(_like(block, it))
        jac = []
        for blocks in per_out:
            tree = in_tree.unflatten(blocks)
            jac.append(tree[0] if single else tree)
        jac = out_tree.unflatten(jac)
        return (jac, aux_tree.unflatten(aux)) if has_aux else jac

    return jac_fn


def _flat_tree(leaves):
    return tree_structure(tuple(leaves))


def hessian(fn: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """``jacfwd(jacrev(fn))``: forward-over-reverse second derivatives."""
    return jacfwd(jacrev(fn, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


_add_examples(globals(), """
grad:
    >>> pto.grad(lambda x: x ** 3)(2.0)
    Array(12., dtype=float32, weak_type=True)
    >>> pto.grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 5.0)
    (Array(5., dtype=float32, weak_type=True), Array(2., dtype=float32, weak_type=True))
value_and_grad:
    >>> pto.value_and_grad(lambda x: pnp.sum(x ** 2))(pnp.array([1.0, 2.0]))
    (Array(5., dtype=float32), Array([2., 4.], dtype=float32))
jvp:
    >>> pto.jvp(pnp.sin, (0.0,), (2.0,))
    (Array(0., dtype=float32, weak_type=True), Array(2., dtype=float32))
vjp:
    >>> y, f_vjp = pto.vjp(lambda x: x ** 2, 3.0)
    >>> f_vjp(1.0)
    (Array(6., dtype=float32, weak_type=True),)
linearize:
    >>> y, f_jvp = pto.linearize(pnp.exp, 0.0)
    >>> f_jvp(3.0)
    Array(3., dtype=float32)
jacfwd:
    >>> pto.jacfwd(lambda x: x ** 2)(pnp.array([1.0, 2.0]))
    Array([[2., 0.],
           [0., 4.]], dtype=float32)
jacrev:
    >>> pto.jacrev(lambda x: pnp.sum(x) * x)(pnp.array([1.0, 2.0]))
    Array([[4., 1.],
           [2., 5.]], dtype=float32)
hessian:
    >>> pto.hessian(lambda x: pnp.sum(x ** 3))(pnp.array([1.0, 2.0]))
    Array([[ 6.,  0.],
           [ 0., 12.]], dtype=float32)
""")
