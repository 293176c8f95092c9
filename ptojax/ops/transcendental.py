"""Transcendental primitives — exp exp2 log log1p expm1 sqrt rsqrt cbrt tanh logistic pow, the
trigonometric and hyperbolic functions and their inverses, atan2 — with every fact.

``pow``'s ``d/dx`` is ``y * x**(y-1)`` (NaN at 0**0) and its ``d/dy`` reads log(0) as 0, as JAX.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.ir import pto
from ptojax.ops import references as ref, tile_forms
from ptojax.ops.arithmetic import (NOT_TILED, add, binary_jvp, div, mul, neg, ones_like,
                                   times, unary_divided_jvp, unary_jvp, sub)
from ptojax.ops.accuracy import with_accuracy
from ptojax.ops.elementwise import elementwise, lax_function
from ptojax.ops.logic import eq, select
from ptojax.public import add_examples as _add_examples

LOG2 = float(np.log(2))


def _logistic(x):
    if dtypes.is_complex(x.dtype):
        return (1 / (1 + np.exp(-x))).astype(x.dtype)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


def _atan2(x, y):
    """np.arctan2; for complex operands -i log((y + ix) / sqrt(x^2 + y^2)), as StableHLO."""
    if not dtypes.is_complex(np.result_type(x)):
        return np.arctan2(x, y)
    return (-1j * np.log((y + 1j * x) / np.sqrt(x * x + y * y))).astype(np.result_type(x))


def _rsqrt(x):
    return np.reciprocal(np.sqrt(x))


def _transcendental(name, impl, nargs=1, pto_recipe=None, cpp=None, kind="inexact", **facts):
    """A floating-point (and, unless ``kind`` says "float", complex) primitive; with a PTO
    recipe it has a vector tile form."""
    tiled = dict(tile=tile_forms.ARITH, pto=pto_recipe, host=cpp) if pto_recipe else \
        dict(tile=NOT_TILED)
    return elementwise(name, impl, kind, nargs=nargs, reference=ref.lax_op(name),
                       **{**tiled, **facts})


# tanh(x) = 1 - 2/(exp(2x) + 1) and logistic(x) = 1/(1 + exp(-x)): PTO has no single
# instruction for them, so they are short in-place sequences on the destination.
TANH = pto.sequence(("TMULS", pto.X, 2), ("TEXP", pto.DST), ("TADDS", pto.DST, 1),
                    ("TRECIP", pto.DST), ("TMULS", pto.DST, -2), ("TADDS", pto.DST, 1))
LOGISTIC = pto.sequence(("TMULS", pto.X, -1), ("TEXP", pto.DST), ("TADDS", pto.DST, 1),
                        ("TRECIP", pto.DST))



def _log1p_recipe(eqn):
    """log1p(x) = log(u) + c/u with u = 1 + x rounded and c = x - (u - 1) its rounding error
    (exact: Fast2Sum), as the host's log1p_f32: accurate near 0, where log(u) alone is not.
    The correction is computed (in the scratch tile) from x clamped to [-0.5, max/4], so it
    stays finite at x = -1 and inf: below -0.5 u is exact (c = 0 either way), above max/4
    c/u is far below an ulp of log(u). The destination is written before x is last read, so
    it may not overwrite x. log1p(-0) comes out +0 here (the fused host form gives -0)."""
    x, d, s = pto.vec(eqn.inputs[0]), pto.vec(eqn.outputs[0]), pto.Scratch(eqn)
    dtype = eqn.outputs[0].type.dtype

    def k(value):
        return pto.lit(value, dtype)
    big = float(dtypes.finfo(dtype).max) / 4
    return [pto.Instr("TMAXS", s, (x, k(-0.5))), pto.Instr("TMINS", s, (s, k(big))),
            pto.Instr("TADDS", d, (s, k(1))), pto.Instr("TADDS", d, (d, k(-1))),
            pto.Instr("TSUB", s, (s, d)), pto.Instr("TADDS", d, (d, k(1))),
            pto.Instr("TDIV", s, (s, d)), pto.Instr("TADDS", d, (x, k(1))),
            pto.Instr("TLOG", d, (d,)), pto.Instr("TADD", d, (d, s))]


LOG1P = tile_forms.TileForm("elementwise", arith=True, inplace=False, scratch=True)

exp_p = _transcendental("exp", np.exp, pto_recipe=pto.unary("TEXP"), cpp="exp_f32({0})")
exp2_p = _transcendental("exp2", np.exp2)
log_p = _transcendental("log", np.log, pto_recipe=pto.unary("TLOG"), cpp="log_f32({0})")
log1p_p = _transcendental("log1p", np.log1p, pto_recipe=_log1p_recipe, cpp="log1p_f32({0})",
                          tile=LOG1P)
expm1_p = _transcendental("expm1", np.expm1)
sqrt_p = _transcendental("sqrt", np.sqrt, pto_recipe=pto.unary("TSQRT"), cpp="sqrt_f32({0})")
rsqrt_p = _transcendental("rsqrt", _rsqrt, pto_recipe=pto.unary("TRSQRT"),
                          cpp="rsqrt_f32({0})")
cbrt_p = _transcendental("cbrt", np.cbrt, kind="float")
tanh_p = _transcendental("tanh", np.tanh, pto_recipe=TANH, cpp="tanh_f32({0})")
logistic_p = _transcendental("logistic", _logistic, pto_recipe=LOGISTIC,
                             cpp="logistic_f32({0})")
sin_p = _transcendental("sin", np.sin)
cos_p = _transcendental("cos", np.cos)
tan_p = _transcendental("tan", np.tan)
asin_p = _transcendental("asin", np.arcsin)
acos_p = _transcendental("acos", np.arccos)
atan_p = _transcendental("atan", np.arctan)
sinh_p = _transcendental("sinh", np.sinh)
cosh_p = _transcendental("cosh", np.cosh)
asinh_p = _transcendental("asinh", np.arcsinh)
acosh_p = _transcendental("acosh", np.arccosh)
atanh_p = _transcendental("atanh", np.arctanh)
pow_p = _transcendental("pow", np.power, nargs=2)
atan2_p = _transcendental("atan2", _atan2, nargs=2)

exp, exp2, log, log1p, expm1 = map(lax_function, (exp_p, exp2_p, log_p, log1p_p, expm1_p))
sqrt, rsqrt, cbrt, tanh, logistic = map(lax_function, (sqrt_p, rsqrt_p, cbrt_p, tanh_p,
                                                       logistic_p))
sin, cos, tan, asin, acos, atan = map(lax_function, (sin_p, cos_p, tan_p, asin_p, acos_p,
                                                     atan_p))
sinh, cosh, asinh, acosh, atanh = map(lax_function, (sinh_p, cosh_p, asinh_p, acosh_p,
                                                     atanh_p))
pow, atan2 = lax_function(pow_p), lax_function(atan2_p)
# the functions JAX gives an ``accuracy=`` keyword
exp, exp2, log, log1p, expm1, sqrt, rsqrt, cbrt, tanh, logistic, sin, cos, tan = map(
    with_accuracy, (exp, exp2, log, log1p, expm1, sqrt, rsqrt, cbrt, tanh, logistic, sin, cos,
                    tan))

exp_p.define(jvp=unary_jvp(exp_p, lambda x, o: o))
exp2_p.define(jvp=unary_jvp(exp2_p, lambda x, o: mul(o, LOG2)))
log_p.define(jvp=unary_divided_jvp(log_p, lambda x, o: x))
log1p_p.define(jvp=unary_divided_jvp(log1p_p, lambda x, o: add(x, 1)))
expm1_p.define(jvp=unary_jvp(expm1_p, lambda x, o: add(o, 1)))
sqrt_p.define(jvp=unary_jvp(sqrt_p, lambda x, o: div(0.5, o)))
rsqrt_p.define(jvp=unary_jvp(rsqrt_p, lambda x, o: mul(div(o, x), -0.5)))
cbrt_p.define(jvp=unary_jvp(cbrt_p, lambda x, o: div(1 / 3, mul(o, o))))
tanh_p.define(jvp=unary_jvp(tanh_p, lambda x, o: sub(1, mul(o, o))))
logistic_p.define(jvp=unary_jvp(logistic_p, lambda x, o: mul(o, sub(1, o))))
sin_p.define(jvp=unary_jvp(sin_p, lambda x, o: cos(x)))
cos_p.define(jvp=unary_jvp(cos_p, lambda x, o: neg(sin(x))))
tan_p.define(jvp=unary_jvp(tan_p, lambda x, o: add(1, mul(o, o))))
asin_p.define(jvp=unary_jvp(asin_p, lambda x, o: rsqrt(sub(1, mul(x, x)))))
acos_p.define(jvp=unary_jvp(acos_p, lambda x, o: neg(rsqrt(sub(1, mul(x, x))))))
atan_p.define(jvp=unary_jvp(atan_p, lambda x, o: div(1, add(1, mul(x, x)))))
sinh_p.define(jvp=unary_jvp(sinh_p, lambda x, o: cosh(x)))
cosh_p.define(jvp=unary_jvp(cosh_p, lambda x, o: sinh(x)))
asinh_p.define(jvp=unary_jvp(asinh_p, lambda x, o: rsqrt(add(mul(x, x), 1))))
acosh_p.define(jvp=unary_jvp(acosh_p, lambda x, o: rsqrt(mul(sub(x, 1), add(x, 1)))))
atanh_p.define(jvp=unary_jvp(atanh_p, lambda x, o: div(1, sub(1, mul(x, x)))))


def _atan2_factor(numerator):
    def factor(x, y, out):
        return div(numerator(x, y), add(mul(x, x), mul(y, y)))
    return factor


atan2_p.define(jvp=binary_jvp(atan2_p, times(_atan2_factor(lambda x, y: y)),
                              times(_atan2_factor(lambda x, y: neg(x)))))


def _replace_zero(x):
    """``x`` with its zeros replaced by ones (a safe argument for log)."""
    return select(eq(x, 0), ones_like(x), x)


def _pow_dx(x, y, out):
    # y * x**(y-1), as JAX for floating-point y (so d/dx at x = y = 0 is NaN there too)
    return mul(y, pow(x, sub(y, 1)))


def _pow_dy(x, y, out):
    # log(x) * x**y, with log(0) read as log(1) = 0 (as JAX)
    return mul(log(_replace_zero(x)), out)


pow_p.define(jvp=binary_jvp(pow_p, times(_pow_dx), times(_pow_dy)))


_add_examples(globals(), """
acos: Inverse cosine, elementwise.
    >>> pto.lax.acos(pnp.array([0.0, 0.5, 1.0]))
    Array([1.5707964, 1.0471976, 0.       ], dtype=float32)
acosh: Inverse hyperbolic cosine, elementwise.
    >>> pto.lax.acosh(pnp.array([1.0, 2.0]))
    Array([0.      , 1.316958], dtype=float32)
asin: Inverse sine, elementwise.
    >>> pto.lax.asin(pnp.array([0.0, 0.5, 1.0]))
    Array([0.       , 0.5235988, 1.5707964], dtype=float32)
asinh: Inverse hyperbolic sine, elementwise.
    >>> pto.lax.asinh(pnp.array([-1.5, 0.0, 2.5]))
    Array([-1.1947632,  0.       ,  1.6472311], dtype=float32)
atan: Inverse tangent, elementwise.
    >>> pto.lax.atan(pnp.array([-1.5, 0.0, 2.5]))
    Array([-0.98279375,  0.        ,  1.19029   ], dtype=float32)
atan2: The angle of (``y``, ``x``) = ``atan(x / y)`` in its quadrant, elementwise.
    >>> pto.lax.atan2(pnp.array([1.0, -1.0]), pnp.array([-1.0, -1.0]))
    Array([ 2.3561945, -2.3561945], dtype=float32)
atanh: Inverse hyperbolic tangent, elementwise.
    >>> pto.lax.atanh(pnp.array([-0.5, 0.0, 0.5]))
    Array([-0.54930615,  0.        ,  0.54930615], dtype=float32)
cbrt: Real cube root, elementwise.
    >>> pto.lax.cbrt(pnp.array([-8.0, 27.0]))
    Array([-2.       ,  2.9999998], dtype=float32)
cos: Cosine, elementwise.
    >>> pto.lax.cos(pnp.array([0.0, 0.5, 1.0]))
    Array([1.        , 0.87758255, 0.5403023 ], dtype=float32)
cosh: Hyperbolic cosine, elementwise.
    >>> pto.lax.cosh(pnp.array([-1.5, 0.0, 2.5]))
    Array([2.3524096, 1.       , 6.13229  ], dtype=float32)
exp: ``e**x``, elementwise.
    >>> pto.lax.exp(pnp.array([0.0, 0.5, 1.0]))
    Array([1.       , 1.6487212, 2.718282 ], dtype=float32)
exp2: ``2**x``, elementwise.
    >>> pto.lax.exp2(pnp.array([-1.0, 3.0]))
    Array([0.5, 8. ], dtype=float32)
expm1: ``exp(x) - 1``, accurate near 0, elementwise.
    >>> pto.lax.expm1(pnp.array([0.0, 0.5, 1.0]))
    Array([0.       , 0.6487213, 1.7182819], dtype=float32)
log: Natural logarithm, elementwise.
    >>> pto.lax.log(pnp.array([1.0, 2.0]))
    Array([0.       , 0.6931472], dtype=float32)
log1p: ``log(1 + x)``, accurate near 0, elementwise.
    >>> pto.lax.log1p(pnp.array([0.0, 0.5, 1.0]))
    Array([0.        , 0.40546513, 0.6931472 ], dtype=float32)
logistic: The logistic sigmoid ``1 / (1 + exp(-x))``, elementwise.
    >>> pto.lax.logistic(pnp.array([-1.5, 0.0, 2.5]))
    Array([0.18242553, 0.5       , 0.9241418 ], dtype=float32)
pow: ``x ** y``, elementwise (an integer ``y`` array is allowed with a float ``x``).
    >>> pto.lax.pow(pnp.array([2.0, 3.0]), pnp.array([3.0, 0.5]))
    Array([8.       , 1.7320509], dtype=float32)
rsqrt: ``1 / sqrt(x)``, elementwise.
    >>> pto.lax.rsqrt(pnp.array([1.0, 4.0]))
    Array([1. , 0.5], dtype=float32)
sin: Sine, elementwise.
    >>> pto.lax.sin(pnp.array([0.0, 0.5, 1.0]))
    Array([0.        , 0.47942555, 0.841471  ], dtype=float32)
sinh: Hyperbolic sine, elementwise.
    >>> pto.lax.sinh(pnp.array([-1.5, 0.0, 2.5]))
    Array([-2.1292794,  0.       ,  6.0502043], dtype=float32)
sqrt: Square root, elementwise.
    >>> pto.lax.sqrt(pnp.array([4.0, 2.0]))
    Array([2.       , 1.4142135], dtype=float32)
tan: Tangent, elementwise.
    >>> pto.lax.tan(pnp.array([0.0, 0.5, 1.0]))
    Array([0.       , 0.5463025, 1.5574077], dtype=float32)
tanh: Hyperbolic tangent, elementwise.
    >>> pto.lax.tanh(pnp.array([-1.5, 0.0, 2.5]))
    Array([-0.9051482,  0.       ,  0.9866143], dtype=float32)
""")
