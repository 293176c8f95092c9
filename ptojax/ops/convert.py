"""``convert_element_type``, ``bitcast_convert_type``, ``reduce_precision`` and the identities
``copy`` and ``stop_gradient``, with every fact.

float -> int conversion truncates toward zero, saturates and maps NaN to 0; complex -> real
keeps the real part (as XLA).
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError, UnsupportedError
from ptojax.eval.leaves import check_arraylike
from ptojax.eval.array import Array
from ptojax.eval.numpy_fast import widened
from ptojax.ir import pto
from ptojax.ir.types import TensorType
from ptojax.ops import references as ref, sharding_rules as sr, tile_forms
from ptojax.ops.checks import require_kind
from ptojax.ops.costs import no_flops
from ptojax.ops.elementwise import elementwise, python_scalar_value
from ptojax.ops.shape import move_axis
from ptojax.ops.tangents import Zero, is_zero, linear_in_first_jvp, zero_jvp
from ptojax.trace import Primitive, Unsupported
from ptojax.pytree import tree_map
from ptojax.public import add_examples as _add_examples

IDENTITY = tile_forms.TileForm("elementwise", identity=True)


def _convert_abstract(x, new_dtype, weak_type=False):
    return TensorType(x.shape, dtypes.canonicalize(new_dtype), weak_type)


_ML_FLOATS = dtypes.NARROW_FLOATS | {dtypes.bfloat16}


def convert_impl(x, new_dtype, weak_type=False):
    x = np.asarray(x)
    if x.dtype in dtypes.NARROW_INTS:   # int4 & co as int32 (exact): ml_dtypes lacks casts
        x = widened(x, np.int32)
    if x.dtype.kind in "biu":   # from bool or an integer: numpy's cast is XLA's
        if new_dtype in dtypes.NARROW_FLOATS:   # no direct cast to some: via float64, exact
            return x.astype(np.float64).astype(new_dtype)
        return x.astype(new_dtype)
    if x.dtype in dtypes.NARROW_FLOATS and x.dtype != new_dtype:
        x = widened(x, np.float32)   # exact (ml_dtypes lacks some direct casts between them)
        if new_dtype == dtypes.float32:
            return x
    elif x.dtype in _ML_FLOATS and new_dtype in _ML_FLOATS and x.dtype != new_dtype:
        x = x.astype(np.float32)     # bfloat16 to a narrow float: exact
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        if new_dtype == dtypes.bool_:
            return x != 0
        x = x.real   # complex -> real keeps the real part, as XLA
    if dtypes.is_float(x.dtype) and dtypes.is_integer(new_dtype):
        return _float_to_int(x, new_dtype)
    return x.astype(new_dtype)


def _float_to_int(x, new_dtype):
    """Truncate toward zero, saturate at the integer range and send NaN to 0, as XLA does."""
    info = dtypes.iinfo(new_dtype)
    wide = x.astype(np.float64)
    # float64 cannot hold the bounds of 64-bit integers exactly: saturate by comparison
    too_big, too_small = wide >= float(info.max), wide <= float(info.min)
    safe = np.where(too_big | too_small | np.isnan(wide), 0, np.trunc(wide))
    out = safe.astype(new_dtype)
    return np.where(too_big, info.max, np.where(too_small, info.min, out)).astype(new_dtype)


def _convert_jvp(primals, tangents, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if is_zero(t) or not dtypes.is_inexact(new_dtype):
        return out, Zero(out.aval)
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=False)


def _convert_transpose(ct, x, new_dtype, weak_type=False):
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype, weak_type=False)]


def _convert_linear(eqn):
    """Converting between float and complex types is linear; rounding to integers is not."""
    return "unary" if dtypes.is_inexact(eqn.params["new_dtype"]) else None


def _convert_recipe(eqn):
    src, dst = eqn.inputs[0].type.dtype, eqn.outputs[0].type.dtype
    if dst == dtypes.bool_ and src != dtypes.bool_:    # a mask is x != 0 (TCVT would round)
        return [pto.Instr("TCMPS", pto.vec(eqn.outputs[0]),
                          (pto.vec(eqn.inputs[0]), pto.lit(0, src)), {"cmp": "NE"})]
    mode = "CAST_TRUNC" if dtypes.is_float(src) and dtypes.is_integer(dst) else "CAST_RINT"
    return [pto.Instr("TCVT", pto.vec(eqn.outputs[0]), (pto.vec(eqn.inputs[0]),),
                      {"round": mode})]


def _convert_cpp(x, *, new_dtype, weak_type=False):
    """The element converted, in a fused host kernel (``convert_to`` of pto_host_fused.h:
    float -> int truncates, saturates and sends NaN to 0, as the impl)."""
    return f"convert_to<{np.dtype(new_dtype).name}_t>({x})"


convert_element_type_p = elementwise(
    "convert_element_type", convert_impl, abstract_eval=_convert_abstract, linear=True,
    shard_linear=_convert_linear, jvp=_convert_jvp, transpose=_convert_transpose,
    tile=tile_forms.TileForm("elementwise", scalar_unit=True), pto=_convert_recipe,
    host=_convert_cpp, reference=lambda jnp, lax: lambda x, new_dtype, weak_type=False:
        lax.convert_element_type(x, new_dtype))


def lax_convert_element_type(x, new_dtype, weak_type: bool = False):
    """``lax.convert_element_type``: ``x`` converted to ``new_dtype``; without x64 a 64-bit
    ``new_dtype`` is narrowed to 32 bits with JAX's warning (``dtypes.user_dtype``)."""
    check_arraylike("convert_element_type", x)
    return convert_element_type(x, dtypes.user_dtype(new_dtype, "convert_element_type"),
                                weak_type)


def convert_element_type(x, new_dtype, weak_type: bool = False):
    """``x`` converted to exactly ``new_dtype`` in any x64 mode: ptojax's own conversions
    (promotion, float64 evaluation of special functions); users' dtype arguments go through
    ``lax_convert_element_type``."""
    new_dtype = dtypes.canonicalize(new_dtype)
    if type(x) in dtypes.PYTHON_SCALARS:  # an int wraps around, as JAX's
        return Array(python_scalar_value(x, new_dtype, wrap=True), weak_type)
    if x.dtype == new_dtype and getattr(x, "weak_type", False) == weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)


def python_float_view(carrier):
    """A Python float traced at full precision (``carrier``, a weak float64 tracer: a jit
    argument, or Python arithmetic on one) as user code sees it: a weak float32, as eagerly.
    Promotion converts from the carrier (``trace.full_precision``), so next to float64 it
    keeps every bit, as eagerly. In x64 mode the function sees the carrier itself."""
    if dtypes.default_float() == carrier.dtype:
        return carrier
    view = convert_element_type(carrier, dtypes.default_float(), weak_type=True)
    carrier._trace.full_precision[view.ir_var] = carrier
    return view


# identities ------------------------------------------------------------------------------------
def _identity_abstract(x):
    return x


copy_p = elementwise("copy", np.copy, abstract_eval=_identity_abstract, linear=True,
                     shard_linear="unary", transpose=lambda ct, x: [ct], tile=IDENTITY,
                     pto=pto.unary("TMOV"), host="{0}", cost=no_flops,
                     reference=ref.identity)
copy_p.define(jvp=linear_in_first_jvp(copy_p))

# ``name[name=...]``: the identity marking a value for ``checkpoint`` policies that save values
# by name (``ptojax.ad_checkpoint.checkpoint_name``); its tangent and cotangent carry the same
# name, and the optimizer drops it (optimize._identity_of) once the transformations are done.
name_p = elementwise("name", lambda x, name: x, abstract_eval=lambda x, name: x, linear=True,
                     shard_linear="unary", transpose=lambda ct, x, name: [ct], tile=IDENTITY,
                     pto=pto.unary("TMOV"), host="{0}", cost=no_flops,
                     reference=ref.identity)
name_p.define(jvp=linear_in_first_jvp(name_p))

stop_gradient_p = elementwise("stop_gradient", lambda x: x, abstract_eval=_identity_abstract,
                              shard_linear="unary", tile=IDENTITY, pto=pto.unary("TMOV"),
                              host="{0}", cost=no_flops, reference=ref.identity)
stop_gradient_p.define(jvp=zero_jvp(stop_gradient_p))


def stop_gradient(x):
    """``x`` (a pytree) with zero derivative: no gradient flows through it."""
    return tree_map(lambda v: stop_gradient_p.bind(v), x)


# bitcast_convert_type ------------------------------------------------------------------------
def _bitcast_shape(x, new_dtype):
    """JAX's rule: equal widths keep the shape; a narrower type adds a trailing dimension of
    the width ratio; a wider one consumes a trailing dimension of that size."""
    old, new = x.dtype.itemsize, new_dtype.itemsize
    if old == new:
        return tuple(x.shape)
    if old > new:
        return (*x.shape, old // new)
    if not x.shape or x.shape[-1] * old != new:
        raise ShapeError(f"bitcast_convert_type: {x} to {dtypes.short_name(new_dtype)} needs a "
                         f"last dimension of {new // old} (elements of {old} bytes make one "
                         f"of {new})")
    return tuple(x.shape[:-1])


def _bitcast_abstract(x, new_dtype):
    for d in (x.dtype, new_dtype):
        if d == dtypes.bool_ or dtypes.is_complex(d):
            raise DtypeError(f"bitcast_convert_type: {dtypes.short_name(d)} values have no "
                             f"bit pattern to reinterpret (use integer or float dtypes)")
        if d in dtypes.SUB_BYTE:   # JAX packs them by bit width; numpy stores one per byte
            raise UnsupportedError(f"bitcast_convert_type of {d.name} (values narrower than "
                                   f"a byte) is not supported by ptojax; convert the values "
                                   f"with .astype(...) instead")
    return TensorType(_bitcast_shape(x, new_dtype), new_dtype)


def _bitcast(x, new_dtype):
    x = np.asarray(x, order="C")
    return x.reshape(-1).view(new_dtype).reshape(_bitcast_shape(x, np.dtype(new_dtype)))


def _bitcast_batch(args, dims, new_dtype):
    (x,), (d,) = args, dims
    if x.dtype.itemsize != new_dtype.itemsize:   # a trailing dimension changes: batch first
        x, d = move_axis(x, d, 0), 0
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


def _bitcast_factors(eqn) -> sr.OpRule:
    """Leading dimensions pass; a trailing dimension that appears or goes stays whole."""
    f = sr.Factors()
    x, out = sr.shape_of(eqn.inputs[0]), sr.shape_of(eqn.outputs[0])
    common = [f.new(n) for n in (x if len(x) <= len(out) else out)]
    extra = [()] * abs(len(x) - len(out))
    return f.rule([common + extra if len(x) > len(out) else common],
                  [common + extra if len(out) > len(x) else common])


bitcast_convert_type_p = Primitive("bitcast_convert_type", _bitcast_abstract, _bitcast)
bitcast_convert_type_p.define(
    jvp=zero_jvp(bitcast_convert_type_p), batch=_bitcast_batch,
    shard=sr.ShardRule(_bitcast_factors), cost=no_flops,
    tile=Unsupported("bitcasts have no tile rule"),
    reference=lambda jnp, lax: lambda x, new_dtype: lax.bitcast_convert_type(x, new_dtype))


def bitcast_convert_type(operand, new_dtype):
    """``operand``'s bits read as ``new_dtype`` (see ``_bitcast_shape`` for the shape)."""
    return bitcast_convert_type_p.bind(operand, new_dtype=dtypes.canonicalize(new_dtype))


# reduce_precision ----------------------------------------------------------------------------
def _reduce_precision_abstract(x, exponent_bits, mantissa_bits):
    require_kind("reduce_precision", x, "float")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"reduce_precision: needs exponent_bits >= 1 and mantissa_bits >= 0, "
                         f"got {exponent_bits} and {mantissa_bits}")
    return x


def _reduce_precision(x, exponent_bits, mantissa_bits):
    """Round to ``mantissa_bits`` (to nearest, ties to even) and to the exponent range of
    ``exponent_bits`` (overflow to inf, below the smallest normal to zero; NaN stays), as
    XLA."""
    x = np.asarray(x)
    info = dtypes.finfo(x.dtype)
    exp_bits, mant_bits = int(info.nexp), int(info.nmant)
    utype = np.dtype(f"u{x.dtype.itemsize}")
    one = utype.type(1)
    bits = np.asarray(x, order="C").view(utype).copy()
    if mantissa_bits < mant_bits:
        drop = utype.type(mant_bits - mantissa_bits)
        last = one << drop
        bias = ((bits & last) >> drop) + ((last >> one) - one)
        bits = (bits + bias) & ~(last - one)
    if exponent_bits < exp_bits:
        exponent_mask = ((one << utype.type(exp_bits)) - one) << utype.type(mant_bits)
        sign = bits & (one << utype.type(exp_bits + mant_bits))
        src_bias = (1 << (exp_bits - 1)) - 1
        dst_bias = (1 << (exponent_bits - 1)) - 1
        exponent = bits & exponent_mask
        overflow = exponent > utype.type(src_bias + dst_bias) << utype.type(mant_bits)
        underflow = exponent <= utype.type(src_bias - dst_bias) << utype.type(mant_bits)
        bits = np.where(overflow, sign | exponent_mask, np.where(underflow, sign, bits))
    return np.where(np.isnan(x), x, bits.astype(utype).view(x.dtype))


reduce_precision_p = elementwise(
    "reduce_precision", _reduce_precision, abstract_eval=_reduce_precision_abstract,
    linear=True, shard_linear="unary",
    transpose=lambda ct, x, exponent_bits, mantissa_bits: [reduce_precision_p.bind(
        ct, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits)],
    tile=Unsupported("reduce_precision has no tile form yet: kept as a tensor op"),
    reference=lambda jnp, lax: lambda x, exponent_bits, mantissa_bits: lax.reduce_precision(
        x, exponent_bits, mantissa_bits))
# treated as linear, as JAX does (the tangent is rounded the same way)
reduce_precision_p.define(jvp=linear_in_first_jvp(reduce_precision_p))


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    return reduce_precision_p.bind(operand, exponent_bits=int(exponent_bits),
                                   mantissa_bits=int(mantissa_bits))


_add_examples(globals(), """
lax_convert_element_type: ``operand`` converted to ``new_dtype`` (floats to integers round
    toward zero); without x64 a 64-bit ``new_dtype`` is 32-bit, with JAX's warning.
    >>> pto.lax.convert_element_type(pnp.array([1.7, -2.7]), pnp.int32)
    Array([ 1, -2], dtype=int32)
reduce_precision: ``operand`` rounded to a float format with ``exponent_bits`` and
    ``mantissa_bits``, kept in its dtype.
    >>> pto.lax.reduce_precision(pnp.array([1.0001, 3.14159]), exponent_bits=5, mantissa_bits=10)
    Array([1.      , 3.140625], dtype=float32)
bitcast_convert_type:
    >>> pto.lax.bitcast_convert_type(pnp.array([1.0]), pnp.int32)
    Array([1065353216], dtype=int32)
stop_gradient:
    >>> pto.grad(lambda x: x * pto.lax.stop_gradient(x))(3.0)
    Array(3., dtype=float32, weak_type=True)
""")
