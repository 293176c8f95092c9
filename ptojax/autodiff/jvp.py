"""Forward-mode autodiff as an IR → IR rewrite.

``jvp_ir(closed, nonzeros)`` returns an IR computing ``(primal outs..., tangent outs...)`` from
``(primals..., nonzero tangents...)``. Tangents are symbolic ``Zero``s until something real
flows in, so unused paths cost nothing. Each primitive's rule lives in ``jvp_rules``:

    rule(primals, tangents, **params) -> (primal_out, tangent_out)

Rules bind ordinary primitives. Nonlinear factors are computed from primals only and the
tangent enters through linear primitives (mul by a primal-derived value, add, dot_general,
...), which is what lets ``partial_eval`` split the result into a forward IR and a linear IR
that ``transpose`` turns into the backward pass.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax, source_info
from ptojax.errors import CustomRuleError, UnsupportedError
from ptojax.ir.core import ClosedIR, Literal, Var, consts_as_args
from ptojax.ops import elementwise as ew, linalg, random_bits, reductions as red
from ptojax.ops import shape as sh
from ptojax.trace import bind, trace_flat
from ptojax.ops.tangents import (Zero, add_tangents, as_value, fit_shape, instantiate,
                                       is_zero, tangent_aval, zeros_like)

jvp_rules: dict = {}


# ---------------------------------------------------------------------------------------------
def jvp_eval(closed: ClosedIR, primals, tangents):
    """Evaluate ``closed`` on primals and tangents (values or ``Zero``): (outs, tangent outs)."""
    ir = closed.ir
    primal_env, tangent_env = {}, {}
    for v, c in zip(ir.constvars, closed.consts):
        primal_env[v] = c
    primal_env.update(zip(ir.invars, primals))
    tangent_env.update(zip(ir.invars, tangents))

    def tangent_of(a):
        if type(a) is Literal:
            return Zero(a.type)
        t = tangent_env.get(a)
        return Zero(a.type) if t is None else t

    previous = source_info.set_current(None)
    try:
        for eqn in ir.eqns:
            ins = [primal_env[a] if type(a) is Var else a for a in eqn.inputs]
            tans = [tangent_of(a) for a in eqn.inputs]
            source_info.set_current(eqn.source or previous)
            if all(type(t) is Zero for t in tans):
                outs = bind(eqn.prim, ins, eqn.params)
                outs = outs if eqn.prim.multiple_results else [outs]
                primal_env.update(zip(eqn.outputs, outs))
                continue
            rule = jvp_rules.get(eqn.prim)
            if rule is None:
                raise UnsupportedError(f"differentiation of `{eqn.prim.name}` is not "
                                       f"supported", eqn.source)
            out, tout = rule([as_value(a) for a in ins], tans, **eqn.params)
            if eqn.prim.multiple_results:
                primal_env.update(zip(eqn.outputs, out))
                tangent_env.update((v, _checked(t, v)) for v, t in zip(eqn.outputs, tout))
            else:
                primal_env[eqn.outputs[0]] = out
                tangent_env[eqn.outputs[0]] = _checked(tout, eqn.outputs[0])
    finally:
        source_info.set_current(previous)
    outs = [primal_env[v] if type(v) is Var else v for v in ir.outvars]
    touts = [tangent_of(v) for v in ir.outvars]
    return outs, touts


def _checked(t, var):
    """Zero tangents for non-float outputs; rank-0 tangents broadcast to the output's shape."""
    if type(t) is Zero or not dtypes.is_float(var.type.dtype):
        return Zero(var.type)
    return fit_shape(t, var.type.shape)


def jvp_ir(closed: ClosedIR, nonzeros) -> tuple:
    """IR of ``(primals, tangents for the True entries of nonzeros) -> (outs, tangent outs)``.

    Returns (ClosedIR, out_nonzeros): tangent outputs that are symbolically zero are left out
    of the IR and marked False."""
    in_types = closed.in_types
    tangent_types = [tangent_aval(t) for t, nz in zip(in_types, nonzeros) if nz]
    out_nonzeros = []

    def fn(*args):
        primals, rest = args[:len(in_types)], list(args[len(in_types):])
        tangents = [rest.pop(0) if nz else Zero(t) for t, nz in zip(in_types, nonzeros)]
        outs, touts = jvp_eval(closed, primals, tangents)
        out_nonzeros[:] = [not is_zero(t) for t in touts]
        return [*outs, *[t for t in touts if not is_zero(t)]]

    jvp_closed = trace_flat(fn, [*in_types, *tangent_types], "jvp")
    return jvp_closed, out_nonzeros


# rule helpers --------------------------------------------------------------------------------
def _linear(prim):
    """A primitive linear in all its inputs: the tangent is the primitive of the tangents."""
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        tans = [instantiate(t) if is_zero(t) else t for t in tangents]
        return out, prim.bind(*tans, **params)
    return rule


def _linear_in_first(prim):
    """A primitive linear in its first operand, the others being indices or shapes."""
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if is_zero(tangents[0]):
            return out, Zero(out.aval)
        return out, prim.bind(tangents[0], *primals[1:], **params)
    return rule


def _zero_tangent(prim):
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if prim.multiple_results:
            return out, [Zero(o.aval) for o in out]
        return out, Zero(out.aval)
    return rule


def _scale(t, factor):
    """``t * factor`` for a tangent ``t`` (Zero stays Zero)."""
    return t if is_zero(t) else lax.mul(t, factor)


def _unary(prim, derivative):
    """Elementwise f(x) with tangent ``t * derivative(x, out)``."""
    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, **params)
        return out, _scale(t, derivative(x, out))
    return rule


def _unary_divided(prim, divisor):
    """Elementwise f(x) with tangent ``t / divisor(x, out)``."""
    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, **params)
        return out, t if is_zero(t) else lax.div(t, divisor(x, out))
    return rule


def _binary(prim, tangent_x, tangent_y):
    """Elementwise f(x, y) with tangent ``tangent_x(tx, x, y, out) + tangent_y(ty, x, y,
    out)``; each is linear in its first argument and only called for a nonzero tangent."""
    def rule(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = prim.bind(x, y)
        a = Zero(out.aval) if is_zero(tx) else tangent_x(tx, x, y, out)
        b = Zero(out.aval) if is_zero(ty) else tangent_y(ty, x, y, out)
        return out, add_tangents(fit_shape(a, out.shape), fit_shape(b, out.shape))
    return rule


def _same(t, x, y, out):
    return t


def _negated(t, x, y, out):
    return lax.neg(t)


def _times_factor(factor):
    """The tangent ``t * factor(x, y, out)``."""
    def tangent(t, x, y, out):
        return lax.mul(t, factor(x, y, out))
    return tangent


def _trunc(x):
    return lax.mul(lax.sign(x), lax.floor(lax.abs(x)))


def _ones_like(x):
    return lax.broadcast_in_dim(lax.convert_element_type(1, x.dtype), x.shape, ())


def _balanced_eq(x, out, y):
    """1 where x alone attains the extremum, 1/2 where x and y tie, 0 elsewhere (as JAX)."""
    hit = lax.convert_element_type(lax.eq(x, out), out.dtype)
    tie = lax.convert_element_type(lax.eq(y, out), out.dtype)
    return lax.div(hit, lax.add(tie, 1))


_SQRT_PI = float(np.sqrt(np.pi))

# elementwise ---------------------------------------------------------------------------------
jvp_rules[ew.neg_p] = _linear(ew.neg_p)
jvp_rules[ew.copy_p] = _linear(ew.copy_p)
jvp_rules[ew.add_p] = _binary(ew.add_p, _same, _same)
jvp_rules[ew.sub_p] = _binary(ew.sub_p, _same, _negated)
jvp_rules[ew.mul_p] = _binary(ew.mul_p, _times_factor(lambda x, y, o: y),
                              _times_factor(lambda x, y, o: x))
jvp_rules[ew.div_p] = _binary(ew.div_p, lambda t, x, y, o: lax.div(t, y),
                              _times_factor(lambda x, y, o: lax.neg(lax.div(o, y))))
jvp_rules[ew.rem_p] = _binary(ew.rem_p, _same,
                              _times_factor(lambda x, y, o: lax.neg(_trunc(lax.div(x, y)))))
jvp_rules[ew.max_p] = _binary(ew.max_p, _times_factor(lambda x, y, o: _balanced_eq(x, o, y)),
                              _times_factor(lambda x, y, o: _balanced_eq(y, o, x)))
jvp_rules[ew.min_p] = _binary(ew.min_p, _times_factor(lambda x, y, o: _balanced_eq(x, o, y)),
                              _times_factor(lambda x, y, o: _balanced_eq(y, o, x)))


def _atan2_factor(numerator):
    def factor(x, y, out):
        return lax.div(numerator(x, y), lax.add(lax.mul(x, x), lax.mul(y, y)))
    return factor


jvp_rules[ew.atan2_p] = _binary(ew.atan2_p, _times_factor(_atan2_factor(lambda x, y: y)),
                                _times_factor(_atan2_factor(lambda x, y: lax.neg(x))))


def _replace_zero(x):
    """``x`` with its zeros replaced by ones (a safe argument for log)."""
    return lax.select(lax.eq(x, 0), _ones_like(x), x)


def _pow_dx(x, y, out):
    # y * x**(y-1), as JAX for floating-point y (so d/dx at x = y = 0 is NaN there too)
    return lax.mul(y, lax.pow(x, lax.sub(y, 1)))


def _pow_dy(x, y, out):
    # log(x) * x**y, with log(0) read as log(1) = 0 (as JAX)
    return lax.mul(lax.log(_replace_zero(x)), out)


jvp_rules[ew.pow_p] = _binary(ew.pow_p, _times_factor(_pow_dx), _times_factor(_pow_dy))


def _abs_rule(primals, tangents):
    """t where x >= 0, else -t (as JAX: the derivative at 0 is 1)."""
    (x,), (t,) = primals, tangents
    out = ew.abs_p.bind(x)
    if is_zero(t):
        return out, Zero(out.aval)
    return out, lax.select(lax.ge(x, lax.convert_element_type(0, x.dtype)), t, lax.neg(t))


jvp_rules[ew.abs_p] = _abs_rule
jvp_rules[ew.exp_p] = _unary(ew.exp_p, lambda x, o: o)
jvp_rules[ew.exp2_p] = _unary(ew.exp2_p, lambda x, o: lax.mul(o, float(np.log(2))))
jvp_rules[ew.log_p] = _unary_divided(ew.log_p, lambda x, o: x)
jvp_rules[ew.log1p_p] = _unary_divided(ew.log1p_p, lambda x, o: lax.add(x, 1))
jvp_rules[ew.expm1_p] = _unary(ew.expm1_p, lambda x, o: lax.add(o, 1))
jvp_rules[ew.sqrt_p] = _unary(ew.sqrt_p, lambda x, o: lax.div(0.5, o))
jvp_rules[ew.rsqrt_p] = _unary(ew.rsqrt_p, lambda x, o: lax.mul(lax.div(o, x), -0.5))
jvp_rules[ew.cbrt_p] = _unary(ew.cbrt_p, lambda x, o: lax.div(1 / 3, lax.mul(o, o)))
jvp_rules[ew.tanh_p] = _unary(ew.tanh_p, lambda x, o: lax.sub(1, lax.mul(o, o)))
jvp_rules[ew.logistic_p] = _unary(ew.logistic_p, lambda x, o: lax.mul(o, lax.sub(1, o)))
jvp_rules[ew.sin_p] = _unary(ew.sin_p, lambda x, o: lax.cos(x))
jvp_rules[ew.cos_p] = _unary(ew.cos_p, lambda x, o: lax.neg(lax.sin(x)))
jvp_rules[ew.tan_p] = _unary(ew.tan_p, lambda x, o: lax.add(1, lax.mul(o, o)))
jvp_rules[ew.asin_p] = _unary(ew.asin_p, lambda x, o: lax.rsqrt(lax.sub(1, lax.mul(x, x))))
jvp_rules[ew.acos_p] = _unary(ew.acos_p,
                              lambda x, o: lax.neg(lax.rsqrt(lax.sub(1, lax.mul(x, x)))))
jvp_rules[ew.atan_p] = _unary(ew.atan_p, lambda x, o: lax.div(1, lax.add(1, lax.mul(x, x))))
jvp_rules[ew.sinh_p] = _unary(ew.sinh_p, lambda x, o: lax.cosh(x))
jvp_rules[ew.cosh_p] = _unary(ew.cosh_p, lambda x, o: lax.sinh(x))
jvp_rules[ew.asinh_p] = _unary(ew.asinh_p, lambda x, o: lax.rsqrt(lax.add(lax.mul(x, x), 1)))
jvp_rules[ew.acosh_p] = _unary(
    ew.acosh_p, lambda x, o: lax.rsqrt(lax.mul(lax.sub(x, 1), lax.add(x, 1))))
jvp_rules[ew.atanh_p] = _unary(ew.atanh_p, lambda x, o: lax.div(1, lax.sub(1, lax.mul(x, x))))
jvp_rules[ew.erf_p] = _unary(
    ew.erf_p, lambda x, o: lax.mul(lax.exp(lax.neg(lax.mul(x, x))), 2 / _SQRT_PI))
jvp_rules[ew.erf_inv_p] = _unary(
    ew.erf_inv_p, lambda x, o: lax.mul(lax.exp(lax.mul(o, o)), _SQRT_PI / 2))


def _integer_pow_rule(primals, tangents, y):
    (x,), (t,) = primals, tangents
    out = ew.integer_pow_p.bind(x, y=y)
    if y == 0 or is_zero(t):
        return out, Zero(out.aval)
    if y == 1:
        return out, t
    power = x if y == 2 else lax.integer_pow(x, y - 1)
    return out, lax.mul(t, lax.mul(power, float(y)))


jvp_rules[ew.integer_pow_p] = _integer_pow_rule

# nextafter(x, y) moves x by one ulp: its derivative is x's (JAX defines none)
jvp_rules[ew.nextafter_p] = _binary(ew.nextafter_p, _same, lambda t, x, y, o: Zero(o.aval))

for _p in (ew.sign_p, ew.floor_p, ew.ceil_p, ew.round_p, ew.is_finite_p,
           ew.eq_p, ew.ne_p, ew.lt_p, ew.le_p, ew.gt_p, ew.ge_p, ew.and_p, ew.or_p,
           ew.xor_p, ew.not_p, ew.shift_left_p, ew.shift_right_logical_p, ew.stop_gradient_p,
           red.argmax_p, red.argmin_p, red.reduce_and_p, red.reduce_or_p, sh.iota_p,
           random_bits.threefry2x32_p):
    jvp_rules[_p] = _zero_tangent(_p)


def _select_rule(primals, tangents):
    (pred, a, b), (_, ta, tb) = primals, tangents
    out = ew.select_p.bind(pred, a, b)
    if is_zero(ta) and is_zero(tb):
        return out, Zero(out.aval)
    ta = fit_shape(instantiate(ta), out.shape)
    tb = fit_shape(instantiate(tb), out.shape)
    return out, ew.select_p.bind(pred, ta, tb)


jvp_rules[ew.select_p] = _select_rule


def _clamp_rule(primals, tangents):
    """As JAX: x's tangent where lo < x < hi, lo's where lo > x (and lo < hi), hi's where
    hi < x."""
    (lo, x, hi), (tlo, tx, thi) = primals, tangents
    out = ew.clamp_p.bind(lo, x, hi)
    zero = zeros_like(out)
    chosen = [(tx, lambda: lax.bitwise_and(lax.gt(x, lo), lax.lt(x, hi))),
              (tlo, lambda: lax.bitwise_and(lax.gt(lo, x), lax.lt(lo, hi))),
              (thi, lambda: lax.lt(hi, x))]
    tout = Zero(out.aval)
    for t, where in chosen:
        if not is_zero(t):
            tout = add_tangents(tout, lax.select(where(), fit_shape(t, out.shape), zero))
    return out, tout


jvp_rules[ew.clamp_p] = _clamp_rule


def _convert_rule(primals, tangents, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    out = ew.convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if is_zero(t) or not dtypes.is_float(new_dtype):
        return out, Zero(out.aval)
    return out, ew.convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=False)


jvp_rules[ew.convert_element_type_p] = _convert_rule

# reductions ----------------------------------------------------------------------------------
jvp_rules[red.reduce_sum_p] = _linear(red.reduce_sum_p)


def _kept_dims(ndim, axes):
    return tuple(d for d in range(ndim) if d not in axes)


def _extremum_rule(prim):
    def rule(primals, tangents, axes):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes)
        if is_zero(t):
            return out, Zero(out.aval)
        kept = _kept_dims(x.ndim, axes)
        hit = lax.convert_element_type(
            lax.eq(x, lax.broadcast_in_dim(out, x.shape, kept)), x.dtype)
        count = lax.reduce_sum(hit, axes)
        return out, lax.div(lax.reduce_sum(lax.mul(t, hit), axes), count)
    return rule


jvp_rules[red.reduce_max_p] = _extremum_rule(red.reduce_max_p)
jvp_rules[red.reduce_min_p] = _extremum_rule(red.reduce_min_p)


def _reduce_prod_rule(primals, tangents, axes):
    """d prod = sum_j t_j * prod_{k != j} x_k, with the exclusive products computed by
    forward and reverse cumulative products (exact even where some x_k == 0)."""
    (x,), (t,) = primals, tangents
    out = red.reduce_prod_p.bind(x, axes=axes)
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    if is_zero(t) or n == 0:  # an empty product is the constant 1
        return out, Zero(out.aval)
    kept = _kept_dims(x.ndim, axes)
    perm = kept + tuple(axes)
    flat = lax.reshape(lax.transpose(x, perm), tuple(x.shape[d] for d in kept) + (n,))
    tflat = lax.reshape(lax.transpose(t, perm), tuple(x.shape[d] for d in kept) + (n,))
    last = flat.ndim - 1
    ones = _ones_like(lax.slice_in_dim(flat, 0, 1, 1, last))
    before = lax.concatenate([ones, lax.slice_in_dim(lax.cumprod(flat, last), 0, n - 1, 1,
                                                     last)], last)
    after = lax.concatenate([lax.slice_in_dim(lax.cumprod(flat, last, reverse=True), 1, n,
                                              1, last), ones], last)
    others = lax.mul(before, after)
    return out, lax.reduce_sum(lax.mul(tflat, others), (last,))


jvp_rules[red.reduce_prod_p] = _reduce_prod_rule


def _cumulative_rule(prim, combine):
    """Cumulative ops: differentiate their log-depth associative-scan decomposition."""
    def rule(primals, tangents, axis, reverse=False):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axis=axis, reverse=reverse)
        if is_zero(t):
            return out, Zero(out.aval)
        from ptojax.autodiff.api import jvp_of
        _, tout = jvp_of(lambda v: associative_scan(combine, v, axis, reverse), [x], [t])
        return out, tout[0]
    return rule


def associative_scan(fn, x, axis: int, reverse: bool = False):
    """Inclusive scan of associative ``fn`` along ``axis`` in O(log n) steps of slices,
    elementwise ``fn`` and pads (Hillis–Steele doubling)."""
    if reverse:
        x = lax.rev(x, (axis,))
    n = x.shape[axis]
    shift = 1
    while shift < n:
        head = lax.slice_in_dim(x, 0, shift, 1, axis)
        combined = fn(lax.slice_in_dim(x, 0, n - shift, 1, axis),
                      lax.slice_in_dim(x, shift, n, 1, axis))
        x = lax.concatenate([head, combined], axis)
        shift *= 2
    return lax.rev(x, (axis,)) if reverse else x


jvp_rules[red.cumsum_p] = _linear(red.cumsum_p)
jvp_rules[red.cumprod_p] = _cumulative_rule(red.cumprod_p, lax.mul)
jvp_rules[red.cummax_p] = _cumulative_rule(red.cummax_p, lax.max)
jvp_rules[red.cummin_p] = _cumulative_rule(red.cummin_p, lax.min)


def _logaddexp(a, b):
    m = lax.max(a, b)
    return lax.add(m, lax.log1p(lax.exp(lax.neg(lax.abs(lax.sub(a, b))))))


jvp_rules[red.cumlogsumexp_p] = _cumulative_rule(red.cumlogsumexp_p, _logaddexp)

# shapes --------------------------------------------------------------------------------------
for _p in (sh.broadcast_in_dim_p, sh.reshape_p, sh.transpose_p, sh.squeeze_p,
           sh.expand_dims_p, sh.rev_p, sh.slice_p, sh.concatenate_p, sh.pad_p):
    jvp_rules[_p] = _linear(_p)
def _dot_general_rule(primals, tangents, dimension_numbers, preferred_element_type=None):
    (lhs, rhs), (tl, tr) = primals, tangents
    kw = dict(dimension_numbers=dimension_numbers,
              preferred_element_type=preferred_element_type)
    out = linalg.dot_general_p.bind(lhs, rhs, **kw)
    tout = Zero(out.aval)
    if not is_zero(tl):
        tout = linalg.dot_general_p.bind(tl, rhs, **kw)
    if not is_zero(tr):
        tout = add_tangents(tout, linalg.dot_general_p.bind(lhs, tr, **kw))
    return out, tout


jvp_rules[linalg.dot_general_p] = _dot_general_rule


# indexing and sorting rows live in jvp_indexing.py
from ptojax.autodiff import jvp_indexing  # noqa: E402,F401

# calls ---------------------------------------------------------------------------------------
from ptojax.autodiff import calls  # noqa: E402  (the call primitives are defined after the tables)


def _checkpoint_rule(primals, tangents, body, prevent_cse=True):
    nonzeros = [not is_zero(t) for t in tangents]
    jbody, out_nz = jvp_ir(body, nonzeros)
    jbody, consts = consts_as_args(jbody)
    outs = calls.checkpoint_p.bind(*consts, *primals, *[t for t in tangents if not is_zero(t)],
                                   body=jbody, prevent_cse=prevent_cse)
    n = len(body.ir.outvars)
    touts = iter(outs[n:])
    return outs[:n], [next(touts) if nz else Zero(v.type)
                      for v, nz in zip(body.ir.outvars, out_nz)]


def _require_no_closure_tangents(kind, tangents, num_consts):
    """A custom rule gives derivatives for the function's arguments only (as in JAX)."""
    if any(not is_zero(t) for t in tangents[:num_consts]):
        raise CustomRuleError(f"a {kind} function is differentiated with respect to a value "
                              f"it closes over (or takes as a nondiff argument), but its "
                              f"custom rule only gives derivatives for its differentiable "
                              f"arguments; pass that value as one of them instead",
                              source_info.user_frame())


def _custom_jvp_rule(primals, tangents, body, jvp, num_consts):
    _require_no_closure_tangents("custom_jvp", tangents, num_consts)
    args = primals[num_consts:]
    tans = [instantiate(t) for t in tangents[num_consts:]]
    result = jvp(primals[:num_consts], args, tans)
    n = len(body.ir.outvars)
    return result[:n], result[n:]


def _custom_vjp_rule(primals, tangents, body, fwd, bwd, num_consts, out_types):
    _require_no_closure_tangents("custom_vjp", tangents, num_consts)
    result = fwd(primals[:num_consts], primals[num_consts:])
    n = len(out_types)
    outs, residuals = result[:n], result[n:]
    tans = [instantiate(t) for t in tangents[num_consts:]]
    touts = calls.custom_lin_p.bind(*residuals, *tans, num_res=len(residuals), bwd=bwd,
                                    out_types=tuple(t.strip_weak() for t in out_types))
    return outs, touts


jvp_rules[calls.checkpoint_p] = _checkpoint_rule
jvp_rules[calls.custom_jvp_call_p] = _custom_jvp_rule
jvp_rules[calls.custom_vjp_call_p] = _custom_vjp_rule
