"""Transposition of linear IR: the backward pass of reverse-mode autodiff, as IR → IR.

``transpose_ir(linear, linear_mask)`` takes an IR that is linear in the inputs marked True and
returns an IR from ``(the other inputs..., output cotangents...)`` to the cotangents of the
linear inputs. Equations that do not depend on a linear input (recomputation inside a
checkpointed region) are evaluated forward first; the linear ones are then walked in reverse,
each through its rule in ``transpose_rules``:

    rule(cts_out, *inputs, **params) -> cotangent per input (None for non-linear inputs)

where a linear input arrives as ``UndefinedPrimal(aval)``. Cotangents are symbolic ``Zero``s
until something real flows back.
"""
from __future__ import annotations

import numpy as np

from ptojax import lax, source_info
from ptojax.errors import UnsupportedError
from ptojax.ir.core import IR, Var
from ptojax.ops import elementwise as ew, indexing as ix, linalg, reductions as red
from ptojax.ops import shape as sh
from ptojax.trace import bind, trace_flat
from ptojax.ops.tangents import (UndefinedPrimal, Zero, add_tangents, as_value,
                                       instantiate, is_undefined, is_zero, unbroadcast, zeros,
                                       zeros_like)

transpose_rules: dict = {}


def backward_pass(ir: IR, consts, args, linear_mask, cts_out):
    """Cotangents of the linear inputs of ``ir`` given the other inputs and ``cts_out``."""
    linear = {v for v, m in zip(ir.invars, linear_mask) if m}
    env = dict(zip(ir.constvars, consts))
    env.update((v, a) for v, a, m in zip(ir.invars, args, linear_mask) if not m)
    linear_eqns = []
    previous = source_info.set_current(None)
    try:
        for eqn in ir.eqns:  # forward: everything that does not depend on a linear input
            if any(type(a) is Var and a in linear for a in eqn.inputs):
                linear.update(eqn.outputs)
                linear_eqns.append(eqn)
                continue
            source_info.set_current(eqn.source or previous)
            outs = bind(eqn.prim, [env[a] if type(a) is Var else a for a in eqn.inputs],
                        eqn.params)
            env.update(zip(eqn.outputs, outs if eqn.prim.multiple_results else [outs]))
        cts = {}
        for v, ct in zip(ir.outvars, cts_out):
            if type(v) is Var and v in linear and not is_zero(ct):
                cts[v] = add_tangents(cts.get(v, Zero(v.type)), ct)
        for eqn in reversed(linear_eqns):
            outs_ct = [cts.pop(v, Zero(v.type)) for v in eqn.outputs]
            if all(is_zero(c) for c in outs_ct):
                continue
            source_info.set_current(eqn.source or previous)
            rule = transpose_rules.get(eqn.prim)
            if rule is None:
                raise UnsupportedError(f"reverse-mode differentiation of `{eqn.prim.name}` is "
                                       f"not supported (it has no transpose rule)", eqn.source)
            invals = [UndefinedPrimal(a.type) if type(a) is Var and a in linear
                      else (env[a] if type(a) is Var else as_value(a)) for a in eqn.inputs]
            in_cts = rule(outs_ct if eqn.prim.multiple_results else outs_ct[0], *invals,
                          **eqn.params)
            for a, ct in zip(eqn.inputs, in_cts):
                if type(a) is Var and a in linear and ct is not None and not is_zero(ct):
                    cts[a] = add_tangents(cts.get(a, Zero(a.type)), ct)
    finally:
        source_info.set_current(previous)
    return [cts.get(v, Zero(v.type)) if m else None for v, m in zip(ir.invars, linear_mask)]


def transpose_ir(linear: IR, linear_mask, consts=()) -> tuple:
    """IR of ``(non-linear inputs..., output cotangents...) -> linear-input cotangents``.

    Returns (ClosedIR, ct_nonzeros): cotangents that are symbolically zero are omitted."""
    args_types = [v.type for v, m in zip(linear.invars, linear_mask) if not m]
    ct_types = [v.type.strip_weak() for v in linear.outvars]
    nonzeros = []

    def fn(*vals):
        args, cts = vals[:len(args_types)], vals[len(args_types):]
        full_args, it = [], iter(args)
        for m in linear_mask:
            full_args.append(None if m else next(it))
        out = backward_pass(linear, consts, full_args, linear_mask, cts)
        out = [c for c, m in zip(out, linear_mask) if m]
        nonzeros[:] = [not is_zero(c) for c in out]
        return [c for c in out if not is_zero(c)]

    return trace_flat(fn, [*args_types, *ct_types], "transpose"), nonzeros


# rules ---------------------------------------------------------------------------------------
def _add_rule(ct, x, y):
    return [unbroadcast(ct, x.aval) if is_undefined(x) else None,
            unbroadcast(ct, y.aval) if is_undefined(y) else None]


def _sub_rule(ct, x, y):
    return [unbroadcast(ct, x.aval) if is_undefined(x) else None,
            unbroadcast(lax.neg(ct), y.aval) if is_undefined(y) else None]


def _mul_rule(ct, x, y):
    if is_undefined(x) and is_undefined(y):
        raise UnsupportedError("transpose of mul with both operands linear (not linear)")
    if is_undefined(x):
        return [unbroadcast(lax.mul(ct, y), x.aval), None]
    return [None, unbroadcast(lax.mul(x, ct), y.aval)]


def _div_rule(ct, x, y):
    if is_undefined(y):
        raise UnsupportedError("transpose of div with a linear divisor (not linear)")
    return [unbroadcast(lax.div(ct, y), x.aval), None]


transpose_rules[ew.add_p] = _add_rule
transpose_rules[ew.sub_p] = _sub_rule
transpose_rules[ew.mul_p] = _mul_rule
transpose_rules[ew.div_p] = _div_rule
transpose_rules[ew.neg_p] = lambda ct, x: [lax.neg(ct)]
transpose_rules[ew.copy_p] = lambda ct, x: [ct]


def _convert_rule(ct, x, new_dtype, weak_type=False):
    return [ew.convert_element_type_p.bind(ct, new_dtype=x.aval.dtype, weak_type=False)]


transpose_rules[ew.convert_element_type_p] = _convert_rule


def _select_rule(ct, pred, a, b):
    zero = zeros_like(ct)
    return [None,
            unbroadcast(ew.select_p.bind(pred, ct, zero), a.aval) if is_undefined(a) else None,
            unbroadcast(ew.select_p.bind(pred, zero, ct), b.aval) if is_undefined(b) else None]


transpose_rules[ew.select_p] = _select_rule


def _reduce_sum_rule(ct, x, axes):
    kept = tuple(d for d in range(len(x.aval.shape)) if d not in axes)
    return [lax.broadcast_in_dim(ct, x.aval.shape, kept)]


transpose_rules[red.reduce_sum_p] = _reduce_sum_rule


def _cumsum_rule(ct, x, axis, reverse=False):
    return [red.cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


transpose_rules[red.cumsum_p] = _cumsum_rule


def _broadcast_in_dim_rule(ct, x, shape, broadcast_dimensions):
    in_shape = x.aval.shape
    new_dims = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    stretched = tuple(d for i, d in enumerate(broadcast_dimensions)
                      if in_shape[i] == 1 and shape[d] != 1)
    summed = lax.reduce_sum(ct, tuple(sorted(new_dims + stretched)))
    return [lax.reshape(summed, in_shape)]


transpose_rules[sh.broadcast_in_dim_p] = _broadcast_in_dim_rule
transpose_rules[sh.reshape_p] = lambda ct, x, new_sizes: [lax.reshape(ct, x.aval.shape)]
transpose_rules[sh.transpose_p] = lambda ct, x, permutation: [
    lax.transpose(ct, tuple(np.argsort(permutation)))]
transpose_rules[sh.squeeze_p] = lambda ct, x, dimensions: [lax.reshape(ct, x.aval.shape)]
transpose_rules[sh.expand_dims_p] = lambda ct, x, dimensions: [lax.reshape(ct, x.aval.shape)]
transpose_rules[sh.rev_p] = lambda ct, x, dimensions: [lax.rev(ct, dimensions)]


def _zero_scalar(dtype):
    from ptojax.eval.array import Array
    return Array(np.zeros((), dtype))


def _slice_rule(ct, x, start_indices, limit_indices, strides=None):
    shape = x.aval.shape
    if not ct.size:
        return [zeros(x.aval)]
    strides = strides or (1,) * len(shape)
    config = [(lo, n - (lo + (m - 1) * st + 1), st - 1)
              for n, lo, st, m in zip(shape, start_indices, strides, ct.shape)]
    return [lax.pad(ct, _zero_scalar(ct.dtype), config)]


transpose_rules[sh.slice_p] = _slice_rule


def _concatenate_rule(ct, *xs, dimension):
    out, start = [], 0
    for x in xs:
        n = x.aval.shape[dimension]
        out.append(lax.slice_in_dim(ct, start, start + n, 1, dimension)
                   if is_undefined(x) else None)
        start += n
    return out


transpose_rules[sh.concatenate_p] = _concatenate_rule


def _pad_rule(ct, x, padding_value, padding_config):
    ct_x = None
    if is_undefined(x):
        cropped = lax.pad(ct, _zero_scalar(ct.dtype), [(-lo, -hi, 0) for lo, hi, _ in padding_config])
        ct_x = lax.slice(cropped, [0] * cropped.ndim, cropped.shape,
                         [it + 1 for _, _, it in padding_config])
    ct_pv = None
    if is_undefined(padding_value):
        total = lax.reduce_sum(ct, tuple(range(ct.ndim)))
        inner = lax.reduce_sum(ct_x, tuple(range(ct_x.ndim))) if ct_x is not None else None
        ct_pv = total if inner is None else lax.sub(total, inner)
    return [ct_x, ct_pv]


transpose_rules[sh.pad_p] = _pad_rule


def _dynamic_slice_rule(ct, x, *starts, slice_sizes):
    return [ix.dynamic_update_slice_p.bind(zeros(x.aval), ct, *starts)] + [None] * len(starts)


def _dynamic_update_slice_rule(ct, x, update, *starts):
    ct_x = ct_u = None
    if is_undefined(x):
        ct_x = ix.dynamic_update_slice_p.bind(ct, zeros(update.aval), *starts)
    if is_undefined(update):
        ct_u = ix.dynamic_slice_p.bind(ct, *starts, slice_sizes=tuple(update.aval.shape))
    return [ct_x, ct_u] + [None] * len(starts)


transpose_rules[ix.dynamic_slice_p] = _dynamic_slice_rule
transpose_rules[ix.dynamic_update_slice_p] = _dynamic_update_slice_rule


def _gather_rule(ct, x, indices, axes, nbatch=0, mode="clip", fill_value=None):
    if mode == "clip":  # the read positions were clamped: send the cotangent there
        o_shape = x.aval.shape[nbatch:]
        bounds = [o_shape[a] - 1 for a in axes]
        hi = lax.broadcast_in_dim(_int_array(bounds, indices.dtype), indices.shape,
                                  (indices.ndim - 1,))
        indices = lax.clamp(0, indices, hi)
    out = ix.scatter_p.bind(zeros(x.aval), indices, ct, axes=axes, nbatch=nbatch, mode="add")
    return [out, None]


def _int_array(values, dtype):
    from ptojax.eval.array import Array
    return Array(np.asarray(values, dtype))


def _scatter_rule(ct, x, indices, updates, axes, nbatch=0, mode="add"):
    """add/set are linear in (operand, updates); mul is linear in the operand alone (the JVP
    only emits it that way)."""
    params = dict(axes=axes, nbatch=nbatch)
    if mode not in ("add", "set", "mul") or (mode == "mul" and is_undefined(updates)):
        raise UnsupportedError(f"transpose of scatter with mode {mode!r} in its updates: "
                               f"not linear")
    ct_x = ct_u = None
    if is_undefined(x):
        if mode == "add":
            ct_x = ct
        elif mode == "set":
            ct_x = ix.scatter_p.bind(ct, indices, zeros(updates.aval), mode="set", **params)
        else:
            ct_x = ix.scatter_p.bind(ct, indices, updates, mode="mul", **params)
    if is_undefined(updates):
        ct_u = ix.gather_p.bind(ct, indices, mode="fill", fill_value=0, **params)
    return [ct_x, None, ct_u]


transpose_rules[ix.gather_p] = _gather_rule
transpose_rules[ix.scatter_p] = _scatter_rule


def _ranges_like(*groups):
    start = 0
    for g in groups:
        yield tuple(range(start, start + len(g)))
        start += len(g)


def _dot_transpose_lhs(ct, x_aval, y, dimension_numbers, swap_ans=False):
    """The cotangent of ``x`` in ``dot_general(x, y)`` (or of ``dot_general(y, x)`` with
    ``swap_ans``): a dot_general of ``ct`` with ``y`` contracting y's free dimensions. The
    operands are ordered so the result comes out in x's layout when either order allows it,
    so no transpose follows the matmul."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = [d for d in range(len(x_aval.shape)) if d not in x_contract and d not in x_batch]
    y_kept = [d for d in range(y.ndim) if d not in y_contract and d not in y_batch]
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    x_contract_by_y = [x_contract[i] for i in np.argsort(y_contract)]
    ct_first = list(x_batch) + x_kept + x_contract_by_y
    y_first = list(x_batch) + x_contract_by_y + x_kept
    if y.dtype != ct.dtype:  # mixed precision: multiply at the cotangent's precision
        y = lax.convert_element_type(y, ct.dtype)
    if y_first == sorted(y_first) and ct_first != sorted(ct_first):
        out = linalg.dot_general_p.bind(
            y, ct, dimension_numbers=((tuple(y_kept), ans_y), (tuple(y_batch), ans_batch)),
            preferred_element_type=None)
    else:
        out = linalg.dot_general_p.bind(
            ct, y, dimension_numbers=((ans_y, tuple(y_kept)), (ans_batch, tuple(y_batch))),
            preferred_element_type=None)
        out = lax.transpose(out, tuple(int(a) for a in np.argsort(ct_first)))
    if out.dtype != x_aval.dtype:
        out = lax.convert_element_type(out, x_aval.dtype)
    return out


def _dot_general_rule(ct, lhs, rhs, dimension_numbers, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    ct_l = ct_r = None
    if is_undefined(lhs):
        ct_l = _dot_transpose_lhs(ct, lhs.aval, rhs, dimension_numbers)
    if is_undefined(rhs):
        ct_r = _dot_transpose_lhs(ct, rhs.aval, lhs, ((rc, lc), (rb, lb)), swap_ans=True)
    return [ct_l, ct_r]


transpose_rules[linalg.dot_general_p] = _dot_general_rule


# calls ---------------------------------------------------------------------------------------
from ptojax.autodiff import calls  # noqa: E402
from ptojax.ir.core import consts_as_args  # noqa: E402


def _custom_lin_rule(cts, *args, num_res, bwd, out_types):
    cts = [instantiate(c, t) for c, t in zip(cts, out_types)]
    return [None] * num_res + list(bwd(args[:num_res], cts))


def _checkpoint_rule(cts, *args, body, prevent_cse=True):
    mask = [is_undefined(a) for a in args]
    tbody, nonzeros = transpose_ir(body.ir, mask, body.consts)
    tbody, consts = consts_as_args(tbody)
    cts = [instantiate(c, v.type) for c, v in zip(cts, body.ir.outvars)]
    outs = iter(calls.checkpoint_p.bind(*consts, *[a for a in args if not is_undefined(a)],
                                        *cts, body=tbody, prevent_cse=prevent_cse))
    linear_cts = [next(outs) if nz else None for nz in nonzeros]
    it = iter(linear_cts)
    return [next(it) if m else None for m in mask]


transpose_rules[calls.custom_lin_p] = _custom_lin_rule
transpose_rules[calls.checkpoint_p] = _checkpoint_rule
