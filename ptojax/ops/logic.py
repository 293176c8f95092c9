"""Comparisons, bit logic (and, or, not, xor, shifts, population_count, clz), ``is_finite`` and
``select``, with every fact.

Comparisons and ``is_finite`` return bool masks; their derivative is zero. ``select`` is linear
in its two branches.
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError
from ptojax.eval.leaves import check_arraylike
from ptojax.eval import numpy_fast
from ptojax.ir import pto
from ptojax.ir.types import TensorType
from ptojax.ops import references as ref, tile_forms
from ptojax.ops.broadcast import fit_shape, instantiate, unbroadcast, zeros_like
from ptojax.ops.checks import broadcast_scalars, require_same_dtype
from ptojax.ops.elementwise import elementwise, lax_function, operands
from ptojax.ops.tangents import Zero, is_undefined, is_zero, zero_jvp
from ptojax.source_info import user_frame
from ptojax.trace import Unsupported
from ptojax.public import add_examples as _add_examples

NO_SHIFT_TILES = Unsupported("shifts and xor have no tile form yet (PTO has TSHL/TSHR/TXOR; "
                             "the host build does not implement them)")


def _comparison(name, ufunc, cmp, cpp, commutative=False, kind="ordered"):
    """A comparison; complex values compare only for (in)equality, as in JAX."""
    prim = elementwise(name, ufunc, kind, dtypes.bool_, nargs=2,
                       tile=tile_forms.TileForm("elementwise", arith=True, scalar_operand=True,
                                                commutative=commutative),
                       pto=pto.compare(cmp), host=cpp, reference=ref.lax_op(name))
    prim.define(jvp=zero_jvp(prim))
    return prim


eq_p = _comparison("eq", np.equal, "EQ", "({0} == {1})", commutative=True, kind="any")
ne_p = _comparison("ne", np.not_equal, "NE", "({0} != {1})", commutative=True, kind="any")
lt_p = _comparison("lt", np.less, "LT", "({0} < {1})")
le_p = _comparison("le", np.less_equal, "LE", "({0} <= {1})")
gt_p = _comparison("gt", np.greater, "GT", "({0} > {1})")
ge_p = _comparison("ge", np.greater_equal, "GE", "({0} >= {1})")
eq, ne, lt, le, gt, ge = map(lax_function, (eq_p, ne_p, lt_p, le_p, gt_p, ge_p))


# bit logic -------------------------------------------------------------------------------------
def _not_recipe(eqn):
    x, out = eqn.inputs[0], eqn.outputs[0]
    if out.type.dtype == dtypes.bool_:     # masks are 0/1 bytes: not is mask == 0
        return [pto.Instr("TCMPS", pto.vec(out), (pto.vec(x), pto.lit(0, out.type.dtype)),
                          {"cmp": "EQ"})]
    return pto.unary("TNOT")(eqn)


def _shift_right_logical(x, y):
    bits = x.dtype.itemsize * 8
    u = x if x.dtype.kind == "u" else numpy_fast.bits(x)
    if np.ndim(y) == 0 and np.ndim(x) > 0 and 0 <= int(y) < bits:   # by a constant (random bits)
        out = np.right_shift(u, u.dtype.type(y))
        return out if u is x else out.view(x.dtype)
    out = np.right_shift(u, y.astype(u.dtype))
    return np.where(y >= bits, 0, out).astype(u.dtype).view(x.dtype)


def _logic(name, impl, kind, nargs, lax_name, tile=NO_SHIFT_TILES, **facts):
    prim = elementwise(name, impl, kind, nargs=nargs, tile=tile,
                       reference=ref.lax_op(lax_name), **facts)
    prim.define(jvp=zero_jvp(prim))
    return prim


and_p = _logic("and", np.bitwise_and, "int_or_bool", 2, "bitwise_and",
               tile_forms.TileForm("elementwise", commutative=True), pto=pto.nary("TAND"),
               host="({0} & {1})")
or_p = _logic("or", np.bitwise_or, "int_or_bool", 2, "bitwise_or",
              tile_forms.TileForm("elementwise", commutative=True), pto=pto.nary("TOR"),
              host="({0} | {1})")
not_p = _logic("not", np.invert, "int_or_bool", 1, "bitwise_not", tile_forms.LOGIC,
               pto=_not_recipe, host="op_not({0})")
xor_p = _logic("xor", np.bitwise_xor, "int_or_bool", 2, "bitwise_xor")
shift_left_p = _logic("shift_left", np.left_shift, "int", 2, "shift_left")
shift_right_logical_p = _logic("shift_right_logical", _shift_right_logical, "int", 2,
                               "shift_right_logical")
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = map(lax_function,
                                                        (and_p, or_p, xor_p, not_p))
shift_left, shift_right_logical = map(lax_function, (shift_left_p, shift_right_logical_p))


# arithmetic shift, bit counts -----------------------------------------------------------------
def _signed_view(x):
    return x.view(np.dtype(f"i{x.dtype.itemsize}"))


def _shift_right_arithmetic(x, y):
    """x >> y filling with the top bit; amounts outside [0, bits) shift everything out."""
    bits = x.dtype.itemsize * 8
    y = np.asarray(y)
    amount = np.where((y < 0) | (y >= bits), bits - 1, y).astype(np.int64)
    signed = _signed_view(np.asarray(x, order="C"))
    return np.right_shift(signed, amount.astype(signed.dtype)).astype(signed.dtype).view(
        x.dtype)


def _unsigned_view(x):
    return np.asarray(x, order="C").view(np.dtype(f"u{x.dtype.itemsize}"))


def _population_count(x):
    """Set bits of the two's complement (np.bitwise_count counts those of |x|)."""
    return np.bitwise_count(_unsigned_view(x)).astype(x.dtype)


def _clz(x):
    """Leading zero bits: the width minus the set bits of x with every bit below its top bit
    set."""
    bits = x.dtype.itemsize * 8
    u = _unsigned_view(x).copy()
    shift = 1
    while shift < bits:
        u |= u >> u.dtype.type(shift)
        shift *= 2
    return (bits - np.bitwise_count(u).astype(np.int64)).astype(x.dtype)


shift_right_arithmetic_p = _logic("shift_right_arithmetic", _shift_right_arithmetic, "int", 2,
                                  "shift_right_arithmetic")
_NO_BIT_COUNT_TILES = Unsupported("bit counts have no tile form (PTO has no population-count "
                                  "instruction)")
population_count_p = _logic("population_count", _population_count, "int", 1,
                            "population_count", _NO_BIT_COUNT_TILES)
clz_p = _logic("clz", _clz, "int", 1, "clz", _NO_BIT_COUNT_TILES)
shift_right_arithmetic, population_count, clz = map(lax_function, (
    shift_right_arithmetic_p, population_count_p, clz_p))


# is_finite -------------------------------------------------------------------------------------
def _is_finite_recipe(eqn):
    """|x| < inf (in a scratch tile), as a mask."""
    x, d = pto.vec(eqn.inputs[0]), pto.vec(eqn.outputs[0])
    scratch = pto.Scratch(eqn)
    return [pto.Instr("TABS", scratch, (x,)),
            pto.Instr("TCMPS", d, (scratch, pto.lit(math.inf, eqn.inputs[0].type.dtype)),
                      {"cmp": "LT"})]


is_finite_p = elementwise("is_finite", np.isfinite, "float", dtypes.bool_, nargs=1,
                          tile=tile_forms.TileForm("elementwise", arith=True, scratch=True),
                          pto=_is_finite_recipe, host="is_finite_f32({0})",
                          reference=ref.lax_op("is_finite"))
is_finite_p.define(jvp=zero_jvp(is_finite_p))
is_finite = lax_function(is_finite_p)


# select ----------------------------------------------------------------------------------------
def _select_abstract(pred, on_true, on_false):
    if pred.dtype != dtypes.bool_:
        raise DtypeError(f"select: the predicate must be bool, got {pred}")
    require_same_dtype("select", (on_true, on_false))
    shape = broadcast_scalars("select", (pred, on_true, on_false))
    return TensorType(shape, on_true.dtype, on_true.weak_type and on_false.weak_type)


def _select_jvp(primals, tangents):
    (pred, a, b), (_, ta, tb) = primals, tangents
    out = select_p.bind(pred, a, b)
    if is_zero(ta) and is_zero(tb):
        return out, Zero(out.aval)
    ta = fit_shape(instantiate(ta), out.shape)
    tb = fit_shape(instantiate(tb), out.shape)
    return out, select_p.bind(pred, ta, tb)


def _select_transpose(ct, pred, a, b):
    zero = zeros_like(ct)
    return [None,
            unbroadcast(select_p.bind(pred, ct, zero), a.aval) if is_undefined(a) else None,
            unbroadcast(select_p.bind(pred, zero, ct), b.aval) if is_undefined(b) else None]


select_p = elementwise("select", numpy_fast.select, abstract_eval=_select_abstract, linear=True,
                       shard_linear="select", jvp=_select_jvp, transpose=_select_transpose,
                       tile=tile_forms.TileForm("elementwise"), pto=pto.nary("TSEL"),
                       host="({0} ? {1} : {2})", reference=ref.lax_op("select"))


def select(pred, on_true, on_false):
    on_true, on_false = operands(on_true, on_false)
    return select_p.bind(pred, on_true, on_false)


def select_n(which, *cases):
    """``cases[which]`` elementwise: ``which`` is bool (two cases: False picks the first) or
    an integer in ``[0, len(cases))``; written as a tree of ``select``s."""
    check_arraylike("select_n", which, *cases)
    if not cases:
        raise ValueError("select_n: needs at least one case")
    if len(cases) == 1:
        return operands(*cases)[0]
    if which.dtype == dtypes.bool_:
        if len(cases) != 2:
            raise DtypeError(f"select_n: a bool selector picks between two cases, got "
                             f"{len(cases)}", user_frame())
        return select(which, cases[1], cases[0])
    if not dtypes.is_integer(which.dtype):
        raise DtypeError(f"select_n: the selector must be bool or an integer, got "
                         f"{which.dtype}", user_frame())
    return _select_from(which, cases, 0)


def _select_from(which, cases, first):
    """``cases[which - first]``, for ``which`` in ``[first, first + len(cases))``."""
    if len(cases) == 1:
        return cases[0]
    mid = len(cases) // 2
    return select(lt(which, first + mid), _select_from(which, cases[:mid], first),
                  _select_from(which, cases[mid:], first + mid))


_add_examples(globals(), """
bitwise_and: Bitwise AND, elementwise (logical for bools).
    >>> pto.lax.bitwise_and(pnp.array([12, 10, 7]), 6)
    Array([4, 2, 6], dtype=int32)
bitwise_not: Bitwise NOT ``~x``, elementwise.
    >>> pto.lax.bitwise_not(pnp.array([12, 10, 7]))
    Array([-13, -11,  -8], dtype=int32)
bitwise_or: Bitwise OR, elementwise.
    >>> pto.lax.bitwise_or(pnp.array([12, 10, 7]), 6)
    Array([14, 14,  7], dtype=int32)
bitwise_xor: Bitwise exclusive OR, elementwise.
    >>> pto.lax.bitwise_xor(pnp.array([12, 10, 7]), 6)
    Array([10, 12,  1], dtype=int32)
clz: The number of leading zero bits of each integer.
    >>> pto.lax.clz(pnp.array([1, 256, -1]))
    Array([31, 23,  0], dtype=int32)
eq: Whether ``x == y``, elementwise.
    >>> pto.lax.eq(pnp.array([1, 2]), 2)
    Array([False,  True], dtype=bool)
ge: Whether ``x >= y``, elementwise.
    >>> pto.lax.ge(pnp.array([1, 2, 3]), 2)
    Array([False,  True,  True], dtype=bool)
gt: Whether ``x > y``, elementwise.
    >>> pto.lax.gt(pnp.array([1, 2, 3]), 2)
    Array([False, False,  True], dtype=bool)
is_finite: Whether each element is finite (floats only).
    >>> pto.lax.is_finite(pnp.array([1.0, pnp.inf, pnp.nan]))
    Array([ True, False, False], dtype=bool)
le: Whether ``x <= y``, elementwise.
    >>> pto.lax.le(pnp.array([1, 2, 3]), 2)
    Array([ True,  True, False], dtype=bool)
lt: Whether ``x < y``, elementwise.
    >>> pto.lax.lt(pnp.array([1, 2, 3]), 2)
    Array([ True, False, False], dtype=bool)
ne: Whether ``x != y``, elementwise.
    >>> pto.lax.ne(pnp.array([1, 2]), 2)
    Array([ True, False], dtype=bool)
population_count: The number of set bits of each integer.
    >>> pto.lax.population_count(pnp.array([12, 10, 7]))
    Array([2, 2, 3], dtype=int32)
shift_left: ``x`` shifted left by ``y`` bits, elementwise (0 when ``y`` >= the bit width).
    >>> pto.lax.shift_left(pnp.array([1, 3]), pnp.array([2, 2]))
    Array([ 4, 12], dtype=int32)
shift_right_arithmetic: ``x`` shifted right by ``y`` bits, copying the sign bit, elementwise.
    >>> pto.lax.shift_right_arithmetic(pnp.array([-16, 16]), pnp.array([2, 2]))
    Array([-4,  4], dtype=int32)
shift_right_logical: ``x`` shifted right by ``y`` bits, filling with zeros, elementwise.
    >>> pto.lax.shift_right_logical(pnp.array([-16, 16]), pnp.array([28, 2]))
    Array([15,  4], dtype=int32)
select: ``on_true`` where the bool ``pred`` holds, else ``on_false`` (all of one shape).
    >>> pto.lax.select(pnp.array([True, False]), pnp.array([1, 2]), pnp.array([10, 20]))
    Array([ 1, 20], dtype=int32)
select_n:
    >>> ones, twos, threes = pnp.array([1, 1, 1]), pnp.array([2, 2, 2]), pnp.array([3, 3, 3])
    >>> pto.lax.select_n(pnp.array([0, 1, 2]), ones, twos, threes)
    Array([1, 2, 3], dtype=int32)
""")
