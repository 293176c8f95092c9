"""Arithmetic primitives — add sub mul div rem mulhi neg abs sign floor ceil round integer_pow
max min nextafter clamp — with every fact, and the jvp rule shapes the other elementwise
families use.

Conventions where JAX defines one: max/min split the tangent equally among tied arguments;
``abs`` has derivative 1 at 0; clamp's bounds get the tangent only strictly outside. Where JAX
defines none: ``nextafter`` differentiates as ``x``.
"""
from __future__ import annotations

import enum

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError
from ptojax.eval.leaves import check_arraylike
from ptojax.ir import pto
from ptojax.ir.types import TensorType
from ptojax.ops import references as ref, tile_forms
from ptojax.ops.broadcast import broadcast_in_dim, fit_shape, unbroadcast, zeros_like
from ptojax.ops.checks import fmt_types, require_kind, require_same_dtype
from ptojax.ops.complex_parts import conj, real
from ptojax.ops.convert import convert_element_type
from ptojax.ops.elementwise import (align_elementwise, elementwise, elementwise_dim,
                                    lax_function, operands, scalar)
from ptojax.ops.broadcast import broadcast_at
from ptojax.ops.logic import bitwise_and, eq, ge, gt, lt, select
from ptojax.ops.tangents import Zero, is_undefined, is_zero, linear_in_first_jvp, zero_jvp
from ptojax.trace import Unsupported
from ptojax.errors import UnsupportedError
from ptojax.public import add_examples as _add_examples

NOT_TILED = Unsupported("no tile form yet: kept as a tensor op between kernels")


# jvp rule shapes -------------------------------------------------------------------------------
def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return add(a, b)


def bilinear_jvp(prim):
    """A primitive linear in each of its two operands (products, convolutions): the tangent is
    ``prim(t_lhs, rhs) + prim(lhs, t_rhs)``, skipping zero tangents."""
    def rule(primals, tangents, **params):
        (lhs, rhs), (t_lhs, t_rhs) = primals, tangents
        out = prim.bind(lhs, rhs, **params)
        tout = Zero(out.aval)
        if not is_zero(t_lhs):
            tout = prim.bind(t_lhs, rhs, **params)
        if not is_zero(t_rhs):
            tout = add_tangents(tout, prim.bind(lhs, t_rhs, **params))
        return out, tout
    return rule


def scale(t, factor):
    """``t * factor`` for a tangent ``t`` (Zero stays Zero)."""
    return t if is_zero(t) else mul(t, factor)


def unary_jvp(prim, derivative):
    """Elementwise f(x) with tangent ``t * derivative(x, out)``."""
    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, **params)
        return out, scale(t, derivative(x, out))
    return rule


def unary_divided_jvp(prim, divisor):
    """Elementwise f(x) with tangent ``t / divisor(x, out)``."""
    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, **params)
        return out, t if is_zero(t) else div(t, divisor(x, out))
    return rule


def binary_jvp(prim, tangent_x, tangent_y):
    """Elementwise f(x, y) with tangent ``tangent_x(tx, x, y, out) + tangent_y(ty, x, y,
    out)``; each is linear in its first argument and only called for a nonzero tangent."""
    def rule(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = prim.bind(x, y)
        a = Zero(out.aval) if is_zero(tx) else tangent_x(tx, x, y, out)
        b = Zero(out.aval) if is_zero(ty) else tangent_y(ty, x, y, out)
        return out, add_tangents(fit_shape(a, out.shape), fit_shape(b, out.shape))
    return rule


def same(t, x, y, out):
    return t


def times(factor):
    """The tangent ``t * factor(x, y, out)``."""
    def tangent(t, x, y, out):
        return mul(t, factor(x, y, out))
    return tangent


def ones_like(x):
    return broadcast_in_dim(convert_element_type(1, x.dtype), x.shape, ())


def _binary(name, impl, kind, stem=None, commutative=False, cpp=None, **facts):
    """A two-operand arithmetic primitive; with ``stem`` it has a vector tile form."""
    tiled = dict(tile=tile_forms.binary_arith(commutative),
                 pto=pto.binary(stem, commutative), host=cpp) if stem else dict(tile=NOT_TILED)
    return elementwise(name, impl, kind, nargs=2, reference=ref.lax_op(name),
                       **{**tiled, **facts})


def _unary(name, impl, kind, instr=None, cpp=None, **facts):
    tiled = dict(tile=tile_forms.ARITH, pto=pto.unary(instr), host=cpp) if instr else \
        dict(tile=NOT_TILED)
    return elementwise(name, impl, kind, nargs=1, reference=ref.lax_op(name),
                       **{**tiled, **facts})


# add, sub, mul, div, rem -----------------------------------------------------------------------
def _int_div(x, y):
    """``lax.div``: integers round toward zero, and a zero divisor gives -1 (all bits set:
    the largest unsigned value), as XLA divides."""
    if dtypes.is_integer(x.dtype):
        safe = np.where(y == 0, np.ones((), x.dtype), y)
        with np.errstate(all="ignore"):      # (INT_MIN // -1 wraps to INT_MIN, as in XLA)
            q = np.floor_divide(x, safe)
            if not dtypes.is_unsigned(x.dtype):   # floor -> toward zero (no abs: INT_MIN)
                q = q + ((np.remainder(x, safe) != 0) & ((x < 0) != (safe < 0)))
        return np.where(y == 0, np.asarray(-1).astype(x.dtype), q).astype(x.dtype)
    return np.true_divide(x, y)


def _rem(x, y):
    """``lax.rem``: C's ``fmod``; an integer's zero divisor gives the dividend, as XLA."""
    if dtypes.is_integer(np.result_type(x)):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(y == 0, x, np.fmod(x, y)).astype(np.result_type(x))
    return np.fmod(x, y)


def _add_transpose(ct, x, y):
    return [unbroadcast(ct, x.aval) if is_undefined(x) else None,
            unbroadcast(ct, y.aval) if is_undefined(y) else None]


def _sub_transpose(ct, x, y):
    return [unbroadcast(ct, x.aval) if is_undefined(x) else None,
            unbroadcast(neg(ct), y.aval) if is_undefined(y) else None]


def _mul_transpose(ct, x, y):
    if is_undefined(x) and is_undefined(y):
        raise UnsupportedError("transpose of mul with both operands linear (not linear)")
    if is_undefined(x):
        return [unbroadcast(mul(ct, y), x.aval), None]
    return [None, unbroadcast(mul(x, ct), y.aval)]


def _div_transpose(ct, x, y):
    if is_undefined(y):
        raise UnsupportedError("transpose of div with a linear divisor (not linear)")
    return [unbroadcast(div(ct, y), x.aval), None]


add_p = _binary("add", np.add, "any", "ADD", True, "op_add({0}, {1})", linear=True,
                shard_linear="all", transpose=_add_transpose)
sub_p = _binary("sub", np.subtract, "num", "SUB", False, "op_sub({0}, {1})", linear=True,
                shard_linear="all", transpose=_sub_transpose)
mul_p = _binary("mul", np.multiply, "any", "MUL", True, "op_mul({0}, {1})", linear=True,
                shard_linear="one", transpose=_mul_transpose)
div_p = _binary("div", _int_div, "num", "DIV", False, "op_div({0}, {1})", linear=True,
                shard_linear="unary", transpose=_div_transpose)
rem_p = _binary("rem", _rem, "real_num")
add, sub, div, rem = map(lax_function, (add_p, sub_p, div_p, rem_p))
_mul = lax_function(mul_p)


def mul(x, y, *, out_dtype=None):
    """Elementwise product; with ``out_dtype`` both operands are converted to it first (so
    they may differ in dtype, and narrow integers multiply without wrapping), as in JAX."""
    if out_dtype is None:
        return _mul(x, y)
    dtype = dtypes.canonicalize(out_dtype)
    return _mul(convert_element_type(x, dtype), convert_element_type(y, dtype))


# mulhi: the high half of the double-width product -------------------------------------------
def _mulhi(x, y):
    bits = x.dtype.itemsize * 8
    if bits < 64:
        wide = np.int64 if dtypes.is_integer(x.dtype) and not dtypes.is_unsigned(x.dtype) \
            else np.uint64
        return (x.astype(wide) * y.astype(wide) >> wide(bits)).astype(x.dtype)
    unsigned = _mulhi_u64(x.view(np.uint64), y.view(np.uint64))
    if dtypes.is_unsigned(x.dtype):
        return unsigned
    # signed high half = unsigned high half - (x < 0) * y - (y < 0) * x  (mod 2^64)
    fix = np.where(x < 0, y.view(np.uint64), 0) + np.where(y < 0, x.view(np.uint64), 0)
    return (unsigned - fix.astype(np.uint64)).view(np.int64)


def _mulhi_u64(x, y):
    """High 64 bits of x * y from 32-bit halves."""
    low, s32 = np.uint64(0xFFFFFFFF), np.uint64(32)
    x0, x1, y0, y1 = x & low, x >> s32, y & low, y >> s32
    cross = x1 * y0 + ((x0 * y0) >> s32)
    cross2 = x0 * y1 + (cross & low)
    return x1 * y1 + (cross >> s32) + (cross2 >> s32)


mulhi_p = _binary("mulhi", lambda x, y: _mulhi(np.asarray(x), np.asarray(y)), "int")
mulhi_p.define(jvp=zero_jvp(mulhi_p))
mulhi = lax_function(mulhi_p)


def _negated(t, x, y, out):
    return neg(t)


def _trunc(x):
    return mul(sign(x), floor(abs(x)))


add_p.define(jvp=binary_jvp(add_p, same, same))
sub_p.define(jvp=binary_jvp(sub_p, same, _negated))
mul_p.define(jvp=binary_jvp(mul_p, times(lambda x, y, o: y), times(lambda x, y, o: x)))
div_p.define(jvp=binary_jvp(div_p, lambda t, x, y, o: div(t, y),
                            times(lambda x, y, o: neg(div(o, y)))))
rem_p.define(jvp=binary_jvp(rem_p, same, times(lambda x, y, o: neg(_trunc(div(x, y))))))


# neg, abs, sign, floor, ceil, round ------------------------------------------------------------
def _abs_abstract(x):
    """The magnitude of a complex value is real."""
    require_kind("abs", x, "num")
    return TensorType(x.shape, dtypes.real_dtype(x.dtype), x.weak_type)


def _abs_jvp(primals, tangents):
    """t where x >= 0, else -t (as JAX: the derivative at 0 is 1); for complex x,
    real(t * conj(x) / |x|) with |x| = 0 read as 1 (as JAX)."""
    (x,), (t,) = primals, tangents
    out = abs_p.bind(x)
    if is_zero(t):
        return out, Zero(out.aval)
    if dtypes.is_complex(x.dtype):
        magnitude = select(eq(out, 0), ones_like(out), out)
        return out, real(mul(t, div(conj(x), convert_element_type(magnitude, x.dtype))))
    return out, select(ge(x, convert_element_type(0, x.dtype)), t, neg(t))


neg_p = elementwise("neg", np.negative, "num", nargs=1, linear=True, shard_linear="unary",
                    transpose=lambda ct, x: [neg(ct)],
                    tile=tile_forms.TileForm("elementwise", arith=True, scalar_unit=True),
                    pto=pto.unary("TNEG"), host="op_neg({0})", reference=ref.lax_op("neg"))
neg_p.define(jvp=linear_in_first_jvp(neg_p))
abs_p = _unary("abs", np.abs, "num", "TABS", "op_abs({0})", abstract_eval=_abs_abstract,
               jvp=_abs_jvp)


def _sign(x):
    """np.sign; for complex x, x / |x| part by part (0 at 0), as XLA."""
    if not dtypes.is_complex(x.dtype):
        return np.sign(x)
    magnitude = np.abs(x)
    nonzero = magnitude != 0
    safe = np.where(nonzero, magnitude, 1)
    out = np.empty_like(x)
    out.real = np.where(nonzero, x.real / safe, 0)
    out.imag = np.where(nonzero, x.imag / safe, 0)
    return out


sign_p = _unary("sign", _sign, "num")
floor_p = _unary("floor", np.floor, "float")
ceil_p = _unary("ceil", np.ceil, "float")
neg, abs, sign, floor, ceil = map(lax_function, (neg_p, abs_p, sign_p, floor_p, ceil_p))
for _prim in (sign_p, floor_p, ceil_p):
    _prim.define(jvp=zero_jvp(_prim))


def _round_half_away(x):
    whole = np.trunc(x)
    fraction = x - whole  # exact in floating point
    return np.where(np.abs(fraction) >= 0.5, whole + np.sign(x), whole).astype(x.dtype)


def _round(x, method="half_even"):
    return np.round(x) if method == "half_even" else _round_half_away(np.asarray(x))


def _round_abstract(x, method):
    require_kind("round", x, "float")
    if method not in ("half_even", "half_away"):
        raise ValueError(f"round: method must be 'half_even' or 'half_away', got {method!r}")
    return x


def _round_reference(jnp, lax):
    def run(x, method):
        away = lax.RoundingMethod.AWAY_FROM_ZERO
        return lax.round(x, away if method == "half_away" else
                         lax.RoundingMethod.TO_NEAREST_EVEN)
    return run


round_p = elementwise("round", _round, abstract_eval=_round_abstract, tile=NOT_TILED,
                      reference=_round_reference)
round_p.define(jvp=zero_jvp(round_p))


class RoundingMethod(enum.IntEnum):
    """How ``lax.round`` rounds halves (JAX's ``lax.RoundingMethod``)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


_ROUNDING_METHODS = {RoundingMethod.AWAY_FROM_ZERO: "half_away",
                     RoundingMethod.TO_NEAREST_EVEN: "half_even"}


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    if not isinstance(rounding_method, str):   # ptojax's own callers name the method
        try:
            rounding_method = _ROUNDING_METHODS[RoundingMethod(rounding_method)]
        except ValueError:
            raise ValueError(f"round: rounding_method must be a lax.RoundingMethod, got "
                             f"{rounding_method!r}") from None
    return round_p.bind(x, method=rounding_method)


# integer_pow -----------------------------------------------------------------------------------
TILE_EXPONENTS = frozenset({-2, -1, 1, 2, 3, 4})


def _integer_pow(x, y):
    if y < 0:
        return np.reciprocal(_integer_pow(x, -y))
    if x.dtype.kind not in "iub":
        return np.power(x, x.dtype.type(y))
    out, base = np.ones_like(x), x  # integers: repeated squaring, wrapping as XLA's
    while y:
        if y & 1:
            out = out * base
        base, y = base * base, y >> 1
    return out


def _integer_pow_abstract(x, y):
    require_kind("integer_pow", x, "num")
    if not isinstance(y, int):
        raise DtypeError(f"integer_pow: exponent must be a Python int, got {y!r}")
    if y < 0 and not dtypes.is_inexact(x.dtype):
        raise DtypeError(f"integer_pow: negative exponent {y} for an integer base {x}; "
                         f"convert the base to a float dtype first")
    return x


def _integer_pow_jvp(primals, tangents, y):
    (x,), (t,) = primals, tangents
    out = integer_pow_p.bind(x, y=y)
    if y == 0 or is_zero(t):
        return out, Zero(out.aval)
    if y == 1:
        return out, t
    power = x if y == 2 else integer_pow(x, y - 1)
    return out, mul(t, mul(power, float(y)))


def _integer_pow_tile_check(eqn):
    y = eqn.params["y"]
    if y not in TILE_EXPONENTS:
        return f"integer_pow with exponent {y} has no tile form (supported: " \
               f"{sorted(TILE_EXPONENTS)})"
    return None


def _integer_pow_recipe(eqn):
    """Repeated TMUL (and TRECIP) in place on the destination."""
    y, dtype = eqn.params["y"], eqn.outputs[0].type.dtype
    x, d = pto.vec(eqn.inputs[0]), pto.vec(eqn.outputs[0])
    if y == 1:
        return [pto.Instr("TMULS", d, (x, pto.lit(1, dtype)))]
    if y == -1:
        return [pto.Instr("TRECIP", d, (x,))]
    seq = [pto.Instr("TMUL", d, (x, x))]
    if y == 3:
        seq.append(pto.Instr("TMUL", d, (d, x)))
    if y == 4:
        seq.append(pto.Instr("TMUL", d, (d, d)))
    if y == -2:
        seq.append(pto.Instr("TRECIP", d, (d,)))
    return seq


def _integer_pow_cpp(x, *, y):
    """x**y in a fused host kernel: the multiplications of the PTO recipe."""
    square = f"op_mul({x}, {x})"
    power = {1: x, 2: square, 3: f"op_mul({square}, {x})",
             4: f"op_mul({square}, {square})"}[-y if y < 0 else y]
    return f"op_recip({power})" if y < 0 else power


integer_pow_p = elementwise(
    "integer_pow", _integer_pow, abstract_eval=_integer_pow_abstract, jvp=_integer_pow_jvp,
    # y = 3 and y = -2 re-read their operand after writing the destination
    tile=tile_forms.TileForm("elementwise", arith=True, check=_integer_pow_tile_check,
                             inplace=lambda params: params.get("y") not in (3, -2)),
    pto=_integer_pow_recipe, host=_integer_pow_cpp,
    reference=lambda jnp, lax: lambda x, y: lax.integer_pow(x, y))


def integer_pow(x, y: int):
    check_arraylike("integer_pow", x)
    return integer_pow_p.bind(x, y=int(y))


def square(x):
    return integer_pow(x, 2)


def reciprocal(x):
    check_arraylike("reciprocal", x)
    return div(scalar(1, x.dtype), x)


# max, min, nextafter ---------------------------------------------------------------------------
def _balanced_eq(x, out, y):
    """1 where x alone attains the extremum, 1/2 where x and y tie, 0 elsewhere (as JAX)."""
    hit = convert_element_type(eq(x, out), out.dtype)
    tie = convert_element_type(eq(y, out), out.dtype)
    return div(hit, add(tie, 1))


max_p = _binary("max", np.maximum, "any", "MAX", True, "op_max({0}, {1})")
min_p = _binary("min", np.minimum, "any", "MIN", True, "op_min({0}, {1})")
nextafter_p = _binary("nextafter", np.nextafter, "float")
max, min, nextafter = map(lax_function, (max_p, min_p, nextafter_p))
for _prim in (max_p, min_p):
    _prim.define(jvp=binary_jvp(_prim, times(lambda x, y, o: _balanced_eq(x, o, y)),
                                times(lambda x, y, o: _balanced_eq(y, o, x))))
# nextafter(x, y) moves x by one ulp: its derivative is x's (JAX defines none)
nextafter_p.define(jvp=binary_jvp(nextafter_p, same, lambda t, x, y, o: Zero(o.aval)))


# clamp -----------------------------------------------------------------------------------------
def _clamp_abstract(lo, x, hi):
    require_same_dtype("clamp", (lo, x, hi))
    for bound in (lo, hi):
        if bound.shape not in ((), x.shape):
            raise ShapeError(f"clamp: bounds must be scalars or shaped like the operand "
                             f"({fmt_types((lo, x, hi))})")
    return x


def _clamp(lo, x, hi):
    return np.minimum(np.maximum(x, lo), hi)


def _clamp_jvp(primals, tangents):
    """As JAX: x's tangent where lo < x < hi, lo's where lo > x (and lo < hi), hi's where
    hi < x."""
    (lo, x, hi), (tlo, tx, thi) = primals, tangents
    out = clamp_p.bind(lo, x, hi)
    zero = zeros_like(out)
    chosen = [(tx, lambda: bitwise_and(gt(x, lo), lt(x, hi))),
              (tlo, lambda: bitwise_and(gt(lo, x), lt(lo, hi))),
              (thi, lambda: lt(hi, x))]
    tout = Zero(out.aval)
    for t, where in chosen:
        if not is_zero(t):
            tout = add_tangents(tout, select(where(), fit_shape(t, out.shape), zero))
    return out, tout


def _clamp_batch(args, dims):
    """Like an elementwise op, except that the operand (not a bound) sets the shape."""
    (lo, x, hi), (ld, xd, hd) = args, dims
    if xd is None:
        x, xd = broadcast_at(x, 0), 0
    args, dims = [lo, x, hi], [ld, xd, hd]
    return clamp_p.bind(*align_elementwise(args, dims)), elementwise_dim(args, dims)


clamp_p = elementwise("clamp", _clamp, abstract_eval=_clamp_abstract, jvp=_clamp_jvp,
                      batch=_clamp_batch, tile=NOT_TILED, reference=ref.lax_op("clamp"))


def clamp(min, x, max):
    min, x, max = operands(min, x, max)
    return clamp_p.bind(min, x, max)


_add_examples(globals(), """
abs: ``|x|``, elementwise (the magnitude for complex ``x``).
    >>> pto.lax.abs(pnp.array([-1.5, 0.0, 2.5]))
    Array([1.5, 0. , 2.5], dtype=float32)
add: ``x + y``, elementwise; operands share a dtype (a Python scalar takes the other's).
    >>> pto.lax.add(pnp.array([1, 2]), 3)
    Array([4, 5], dtype=int32)
ceil: Smallest integer-valued float not below ``x``, elementwise (floats only).
    >>> pto.lax.ceil(pnp.array([-1.5, 0.0, 2.5]))
    Array([-1.,  0.,  3.], dtype=float32)
div: ``x / y``, elementwise; integer division rounds toward zero (C semantics, unlike ``//``).
    >>> pto.lax.div(pnp.array([7, -7]), 2)
    Array([ 3, -3], dtype=int32)
floor: Largest integer-valued float not above ``x``, elementwise (floats only).
    >>> pto.lax.floor(pnp.array([-1.5, 0.0, 2.5]))
    Array([-2.,  0.,  2.], dtype=float32)
max: Elementwise maximum (NaN if either is NaN).
    >>> pto.lax.max(pnp.array([1, 5]), pnp.array([4, 2]))
    Array([4, 5], dtype=int32)
min: Elementwise minimum (NaN if either is NaN).
    >>> pto.lax.min(pnp.array([1, 5]), pnp.array([4, 2]))
    Array([1, 2], dtype=int32)
mul: ``x * y``, elementwise.
    >>> pto.lax.mul(pnp.array([1, 2]), 3)
    Array([3, 6], dtype=int32)
mulhi: The high half of the double-width product of two integers, elementwise.
    >>> pto.lax.mulhi(pnp.array([2**30, -3], dtype=pnp.int32), pnp.array([8, 5], dtype=pnp.int32))
    Array([ 2, -1], dtype=int32)
neg: ``-x``, elementwise.
    >>> pto.lax.neg(pnp.array([12, 10, 7]))
    Array([-12, -10,  -7], dtype=int32)
nextafter: The next float after ``x1`` toward ``x2``, elementwise.
    >>> pto.lax.nextafter(pnp.array([0.0]), pnp.array([1.0]))
    Array([1.e-45], dtype=float32)
rem: Remainder of ``x / y`` with the sign of ``x`` (C ``fmod``), elementwise.
    >>> pto.lax.rem(pnp.array([7, -7]), 3)
    Array([ 1, -1], dtype=int32)
sign: -1, 0 or 1 by the sign of ``x``, elementwise.
    >>> pto.lax.sign(pnp.array([-1.5, 0.0, 2.5]))
    Array([-1.,  0.,  1.], dtype=float32)
sub: ``x - y``, elementwise.
    >>> pto.lax.sub(pnp.array([1, 2]), 3)
    Array([-2, -1], dtype=int32)
clamp: ``x`` limited to [``min``, ``max``] elementwise (note the argument order: ``min, x,
    max``).
    >>> pto.lax.clamp(0, pnp.array([-2, 3, 9]), 5)
    Array([0, 3, 5], dtype=int32)
integer_pow: ``x ** y`` for a Python integer ``y``, by repeated multiplication.
    >>> pto.lax.integer_pow(pnp.array([2.0, -3.0]), 3)
    Array([  8., -27.], dtype=float32)
reciprocal: ``1 / x``, elementwise.
    >>> pto.lax.reciprocal(pnp.array([1.0, 2.0, 4.0]))
    Array([1.  , 0.5 , 0.25], dtype=float32)
round: ``x`` rounded to the nearest integer-valued float, halves away from zero (the default
    ``rounding_method``).
    >>> pto.lax.round(pnp.array([0.5, 1.5, -2.5]))
    Array([ 1.,  2., -3.], dtype=float32)
RoundingMethod:
    >>> pto.lax.round(pnp.array([0.5, 1.5, -2.5]), pto.lax.RoundingMethod.TO_NEAREST_EVEN)
    Array([ 0.,  2., -2.], dtype=float32)
square: ``x * x``, elementwise.
    >>> pto.lax.square(pnp.array([-2, 3]))
    Array([4, 9], dtype=int32)
""")
