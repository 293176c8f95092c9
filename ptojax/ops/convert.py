"""``convert_element_type`` and the identities ``copy`` and ``stop_gradient``, with every fact.

float -> int conversion truncates toward zero, saturates and maps NaN to 0 (as XLA).
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.eval.array import Array
from ptojax.ir import pto
from ptojax.ir.types import TensorType
from ptojax.ops import references as ref, tile_forms
from ptojax.ops.costs import no_flops
from ptojax.ops.elementwise import elementwise, python_scalar_value
from ptojax.ops.tangents import Zero, is_zero, linear_in_first_jvp, zero_jvp
from ptojax.tree_util import tree_map

IDENTITY = tile_forms.TileForm("elementwise", identity=True)


def _convert_abstract(x, new_dtype, weak_type=False):
    return TensorType(x.shape, dtypes.canonicalize(new_dtype), weak_type)


def convert_impl(x, new_dtype, weak_type=False):
    x = np.asarray(x)
    if dtypes.is_float(x.dtype) and dtypes.is_integer(new_dtype):
        return _float_to_int(x, new_dtype)
    return x.astype(new_dtype)


def _float_to_int(x, new_dtype):
    """Truncate toward zero, saturate at the integer range and send NaN to 0, as XLA does."""
    info = np.iinfo(new_dtype)
    wide = x.astype(np.float64)
    # float64 cannot hold the bounds of 64-bit integers exactly: saturate by comparison
    too_big, too_small = wide >= float(info.max), wide <= float(info.min)
    safe = np.where(too_big | too_small | np.isnan(wide), 0, np.trunc(wide))
    out = safe.astype(new_dtype)
    return np.where(too_big, info.max, np.where(too_small, info.min, out)).astype(new_dtype)


def _convert_jvp(primals, tangents, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if is_zero(t) or not dtypes.is_float(new_dtype):
        return out, Zero(out.aval)
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=False)


def _convert_transpose(ct, x, new_dtype, weak_type=False):
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype, weak_type=False)]


def _convert_linear(eqn):
    """Converting between float types is linear; rounding to integers is not."""
    return "unary" if dtypes.is_float(eqn.params["new_dtype"]) else None


def _convert_recipe(eqn):
    src, dst = eqn.inputs[0].type.dtype, eqn.outputs[0].type.dtype
    mode = "CAST_TRUNC" if dtypes.is_float(src) and dtypes.is_integer(dst) else "CAST_RINT"
    return [pto.Instr("TCVT", pto.vec(eqn.outputs[0]), (pto.vec(eqn.inputs[0]),),
                      {"round": mode})]


convert_element_type_p = elementwise(
    "convert_element_type", convert_impl, abstract_eval=_convert_abstract, linear=True,
    shard_linear=_convert_linear, jvp=_convert_jvp, transpose=_convert_transpose,
    tile=tile_forms.TileForm("elementwise", scalar_unit=True), pto=_convert_recipe,
    host="convert", reference=lambda jnp, lax: lambda x, new_dtype, weak_type=False:
        lax.convert_element_type(x, new_dtype))


def convert_element_type(x, new_dtype, weak_type: bool = False):
    new_dtype = dtypes.canonicalize(new_dtype)
    if type(x) in (int, float, bool):  # an int wraps around, as JAX's
        return Array(python_scalar_value(x, new_dtype, wrap=True), weak_type)
    if x.dtype == new_dtype and getattr(x, "weak_type", False) == weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)


def python_float_view(carrier):
    """A Python float traced at full precision (``carrier``, a weak float64 tracer: a jit
    argument, or Python arithmetic on one) as user code sees it: a weak float32, as eagerly.
    Promotion converts from the carrier (``trace.full_precision``), so next to float64 it
    keeps every bit, as eagerly."""
    view = convert_element_type(carrier, dtypes.float32, weak_type=True)
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

stop_gradient_p = elementwise("stop_gradient", lambda x: x, abstract_eval=_identity_abstract,
                              shard_linear="unary", tile=IDENTITY, pto=pto.unary("TMOV"),
                              host="{0}", cost=no_flops, reference=ref.identity)
stop_gradient_p.define(jvp=zero_jvp(stop_gradient_p))


def stop_gradient(x):
    """``x`` (a pytree) with zero derivative: no gradient flows through it."""
    return tree_map(lambda v: stop_gradient_p.bind(v), x)
